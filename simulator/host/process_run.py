"""``process.run`` in the fake host: the seam between the host and the lich side of a replay.

The host checks a call (:func:`agent_cards.host_contract.host_check`), then hands it to an executor
(``agent_cards_simulator.runners``): the in-process runner answers from the fake lich's model and a
scripted git on virtual time; the real-process runner runs real programs. Both answer with a
:class:`ProcessResult` or raise :class:`ProcessError` in the engine's words, which
:mod:`agent_cards.host_contract` writes for every host (the bridge in the real engine as well).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol

from agent_cards.engine import ProcessResult
from agent_cards.host_contract import OUTPUT_CAP, capped
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.lich.output import Note


async def wait_unless_aborted(ms: int, signal: AbortSignal) -> None:
    """Wait ``ms`` of (virtual) time, or less if ``signal`` is aborted first."""
    waiter = signal.wait()
    timer = asyncio.get_running_loop().call_later(ms / 1000, _resolve, waiter)
    try:
        await waiter
    finally:
        timer.cancel()
        signal.forget(waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class RunOutputs:
    """The host's cut of a run's output (:func:`~agent_cards.host_contract.capped`), made once per long
    text in a replay. The fake lich answers every read of a ``lists`` window with the same text, and
    the mod reads every 5 s while a worker is counted: cut anew each time, a 4 MiB output read 60 times
    was 60 copies of 4 MiB in the transcript (250 MB for one case); shared, it is one. A result is a
    value, so the runs that printed the same text share it as they are."""

    #: Texts up to this many characters are cut as they come: copies of short texts cost nothing.
    LONG = OUTPUT_CAP // 64
    #: The long texts remembered, the latest: a text the fake lich builds anew for each run is not kept.
    KEPT = 8

    def __init__(self) -> None:
        self._cut: dict[tuple[int, str, str], ProcessResult] = {}

    def result(self, stdout: str, stderr: str, exit_code: int) -> ProcessResult:
        if len(stdout) <= self.LONG and len(stderr) <= self.LONG:
            return capped(stdout, stderr, exit_code)
        key = (exit_code, stdout, stderr)
        cut = self._cut.get(key)
        if cut is None:
            if len(self._cut) >= self.KEPT:
                del self._cut[next(iter(self._cut))]
            cut = self._cut[key] = capped(stdout, stderr, exit_code)
        return cut


class Executor(Protocol):
    """The lich side of a replay: it answers the host's process runs, and says when lich types a note
    (from the fake lich's world, or from its state on disk in ``--processes``)."""

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult: ...

    def next_note_at(self) -> int | None:
        """When lich types its next note at this session's prompt (virtual ms), or None."""
        ...

    def notes_due(self, until_ms: int) -> list[Note]:
        """The notes due by ``until_ms``, each handed out once."""
        ...
