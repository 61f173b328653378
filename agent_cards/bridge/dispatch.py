"""One event the plugin's JavaScript module is waiting on: what the mod's hook has answered so far.

A dispatch lives from the module's ``event`` step to the answer that ends it (``done`` or ``failed``), or
until the engine gives up on it (Esc, the person's "no"): then it is no longer *live*, its ``next`` raises
and its signal reads aborted, but the hook runs on, so that a command already running ends and what it
did (a worker lich opened) is still known to the mod.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_cards.engine import HookResult, Origin
from agent_cards.record import Record, field


class DispatchCancelled(Exception):
    """The engine gave up on the dispatch (Esc, or the person's "no"): its ``next`` cannot answer."""


class BridgeSignal(Record):
    """``next.signal``: aborted once the engine gave up on the dispatch."""

    aborted: bool = False


class BridgeDispatch(Record):
    """One event the module is waiting on, and what goes back with the next answer to it."""

    id: str
    event: str
    origin: Origin
    signal: BridgeSignal = field(default_factory=BridgeSignal)
    live: bool = True  # the module still reads this dispatch's answers (effects go there, not to stdout)
    out: dict[str, Any] | None = None  # the answer ready for the module's next step
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set when ``out`` is put, or a command starts
    waiting: asyncio.Future[HookResult] | None = None  # the hook's ``next(e)``, until the module resumes it
    effects: list[dict[str, Any]] = field(default_factory=list)  # toasts raised meanwhile
    busy: set[str] = field(default_factory=set)  # the commands running for it, by file name
    called_next: bool = False
    task: asyncio.Task[None] | None = None  # the hook, running

    def put(self, out: dict[str, Any]) -> None:
        self.out = out
        self.wake.set()
