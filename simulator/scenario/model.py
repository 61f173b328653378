"""What a scenario file says, as the reader returns it: plain frozen values of the format's own.

Nothing here knows the fake host, the fake lich or the mod; the replay
(:mod:`agent_cards_simulator.scenario.replay`) turns these values into theirs. The step kinds' own values are
defined with their kinds in :mod:`agent_cards_simulator.scenario.steps`; the defaults below are the format's
documented defaults (docs/scenarios.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agent_cards.record import Value, field

DEFAULT_ENV: Mapping[str, str] = {
    "LICH_BIN": "/opt/lich/bin/lich",
    "LICH_SESSION_ID": "3c4d",
    "LICH_SUBAGENT_DEPTH": "0",
    "LICH_PORT": "47999",
    "LICH_TOKEN": "tok",
}


class GitRun(Value):
    """How git answers one command line (``session.git.runs``)."""

    argv: tuple[str, ...]
    stdout: str = ""
    stderr: str = ""
    exit: int = 0


class Git(Value):
    """What ``git branch --show-current`` does (and, by ``runs``, any other git command line)."""

    branch: str | None = "main"  # None: a detached HEAD
    exit: int = 0
    stderr: str = ""
    missing: bool = False
    runs: tuple[GitRun, ...] = ()


class Permission(Value):
    """How the permission check answers: ``allow``, ``deny``, ``hook-deny`` or ``ask``."""

    decision: str = "allow"
    answer: bool | None = None  # for ask: yes, no, or None when nobody can answer
    reason: str = ""  # for deny and hook-deny; empty: Claude Code's own text


class Report(Value):
    after_ms: int
    text: str = "Done."
    background: bool = False


class Open(Value):
    """How lich answers an open (``lich.open``, or a call's own ``lich:``)."""

    delivery: str | None = "pending"
    answer: str = ""
    ms: int = 800
    fail: str | None = None
    handoff_error: str | None = None
    hang: bool = False
    stdout: str | None = None
    stderr: str | None = None
    exit: int | None = None
    label: str | None = None
    name: str | None = None
    report: Report | None = None


class ListWindow(Value):
    from_ms: int = 0
    until_ms: int = 0
    read: int | None = None  # the n-th `sessions` read (from 1) answers this, whatever its time
    stdout: str = ""
    stderr: str = "lich: the session list could not be read\n"
    exit: int = 1


class Stop(Value):
    exit: int = 1
    stderr: str = ""


class Lich(Value):
    installed: bool = True
    running: bool = True
    subagent: bool = True
    project: str = "app"
    checkout: str = "/home/dev/app"
    caller_label: str = "planner"
    lists: tuple[ListWindow, ...] = ()
    stops: Mapping[str, Stop] = field(default_factory=dict)
    open: Open | None = None  # None: lich's default open
    opens: tuple[Open, ...] = ()  # the n-th open (from 1) that no call's own script names gets opens[n-1]


class Session(Value):
    #: The environment: the defaults, then ``session.env``, then ``session.lang``. ``agent-cards replay
    #: --lang`` sets LICH_PROMPT_LANG in it after reading.
    env: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_ENV))
    interactive: bool = True
    start: bool = True
    cwd: str = "/home/dev/app"  # the cwd session.start reports; lich's own checkout is lich.checkout
    git: Git = Git()
    permission: Permission = Permission()
    modes: tuple[str, ...] = ()
    agent_types: tuple[str, ...] = ()


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
    session: Session = field(default_factory=Session)
    lich: Lich = field(default_factory=Lich)
    steps: tuple[Step, ...] = ()
    expect: tuple[Expectation, ...] = ()
    #: Each call's own ``lich:`` by the call's prompt (lich tells opens apart by their prompt).
    opens: Mapping[str, Open] = field(default_factory=dict)
    clause_lines: Mapping[str, int] = field(default_factory=dict)
    about: str | None = None
    #: The variants of a file with ``variants:``, each a whole scenario of its own (``variant`` its name);
    #: the file's own scenario is then only what they share, and is not replayed by itself.
    variants: tuple[Scenario, ...] = ()
    variant: str | None = None

    @property
    def env(self) -> dict[str, str]:
        return self.session.env
