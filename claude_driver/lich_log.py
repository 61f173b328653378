"""``fake-lich`` behind a wrapper that logs every argv: the ``LICH_BIN`` of the command-hook tests and of
the real Claude Code runs, whose lich calls a test then reads back."""

from __future__ import annotations

from pathlib import Path

from agent_cards.record import Record
from agent_cards_simulator.lich.install import fake_lich_program
from agent_cards_simulator.lich.program import create_state
from agent_cards_simulator.lich.scripts import LichScript

# Logs every argv (fields end in US, a call in RS US), then hands the call to fake-lich.
_LOGGING_WRAPPER = """#!/bin/sh
rs=$(printf '\\036')
printf '%s\\037' "$@" "$rs" >> "{log}"
exec "{fake}" "$@"
"""


class LoggedLich(Record):
    """``fake-lich`` behind a wrapper that logs every argv it gets: a ``LICH_BIN`` for command hooks and the
    real Claude Code, whose lich calls a test then reads back with :meth:`calls`."""

    bin: Path
    state: Path
    log: Path

    @classmethod
    def install(cls, folder: Path, script: LichScript) -> LoggedLich:
        """Put the wrapper in ``folder/bin/lich`` and a lich running ``script`` in ``folder/state``."""
        log, wrapper = folder / "lich-calls.log", folder / "bin" / "lich"
        wrapper.parent.mkdir(parents=True)
        wrapper.write_text(_LOGGING_WRAPPER.format(log=log, fake=fake_lich_program()), encoding="utf-8")
        wrapper.chmod(0o755)
        lich = cls(wrapper, folder / "state", log)
        lich.restart(script)
        return lich

    def restart(self, script: LichScript) -> None:
        """A fresh lich running ``script`` (what it was asked so far stays in the log)."""
        create_state(self.state, script)

    def calls(self) -> list[list[str]]:
        """Every argv lich was given, in order, the footer's ``sessions --json`` reads included."""
        if not self.log.exists():
            return []
        records = self.log.read_text(encoding="utf-8").split("\x1e\x1f")
        return [record.split("\x1f")[:-1] for record in records[:-1]]

    def actions(self) -> list[list[str]]:
        """The argvs that act (open, close, control...), without the footer's reads: how many polls ran
        before the session ended depends on the machine's speed, what the mod asked lich to do does not."""
        return [argv for argv in self.calls() if argv[:1] != ["sessions"]]
