"""What a scenario file says, as the reader returns it: plain frozen records, no runtime code.

The settings the lower layers play are their own records, which the format writes as they are: the
fake lich's scripts (:mod:`agent_cards_simulator.lich.scripts`), the host's permission verdict
(:mod:`agent_cards_simulator.host.permission`) and the scripted git
(:mod:`agent_cards_simulator.runners.scripted_git`); each of those modules is a plain record and imports
nothing of the host, the lich or the mod. The rest is the format's own, here. The step kinds' own
values are defined with their kinds in :mod:`agent_cards_simulator.scenario.steps`; the defaults are the
format's documented defaults (docs/scenarios.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agent_cards.record import Value, field
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.lich.scripts import LichScript
from agent_cards_simulator.runners.scripted_git import GitScript

DEFAULT_ENV: Mapping[str, str] = {
    "LICH_BIN": "/opt/lich/bin/lich",
    "LICH_SESSION_ID": "3c4d",
    "LICH_SUBAGENT_DEPTH": "0",
    "LICH_PORT": "47999",
    "LICH_TOKEN": "tok",
}


class ScenarioSession(Value):
    """The Claude Code session the mod runs in (``session:``)."""

    #: The environment: the defaults, then ``session.env``, then ``session.lang``. ``agent-cards replay
    #: --lang`` sets LICH_PROMPT_LANG in it after reading.
    env: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_ENV))
    interactive: bool = True
    start: bool = True
    cwd: str = "/home/dev/app"  # the cwd session.start reports; lich's own checkout is lich.checkout
    git: GitScript = GitScript()
    permission: PermissionVerdict = PermissionVerdict()
    permission_mode: str = "default"
    modes: tuple[str, ...] = ()
    agent_types: tuple[str, ...] = ()
    data: bool = True  # the plugin has a data folder and the session id: its state is kept across modules


class Step(Protocol):
    """One step; its kinds (what each reads, how it runs) are in :mod:`agent_cards_simulator.scenario.steps`."""

    async def run(self, play: Any, /) -> str | None:
        """Play the step on the replay's stage; a problem the scenario made comes back as a message."""
        ...


class Expectation(Value):
    kind: str
    fields: dict[str, Any]
    count: int | None  # None: at least one; 0: none
    line: int


class Scenario(Value):
    file: str
    title: str
    clauses: tuple[str, ...]
    session: ScenarioSession = field(default_factory=ScenarioSession)
    #: ``lich:`` as the fake lich plays it; its ``by_prompt`` holds each call's own ``lich:`` by the
    #: call's prompt (lich tells opens apart by their prompt).
    lich: LichScript = field(default_factory=LichScript)
    steps: tuple[Step, ...] = ()
    step_lines: tuple[int, ...] = ()  # the line of each step in the file, for a step's failure
    expect: tuple[Expectation, ...] = ()
    clause_lines: Mapping[str, int] = field(default_factory=dict)
    about: str | None = None
    #: The variants of a file with ``variants:``, each a whole scenario of its own (``variant`` its name);
    #: the file's own scenario is then only what they share, and is not replayed by itself.
    variants: tuple[Scenario, ...] = ()
    variant: str | None = None

    @property
    def env(self) -> dict[str, str]:
        return self.session.env
