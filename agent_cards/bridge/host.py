"""The engine's Protocols (:mod:`agent_cards.engine`) as the bridge serves them to the mod: ``$`` and ``next``.

``$`` is made for one dispatch (:class:`BridgeHost`): a toast raised while the module waits on that
dispatch goes back with its answer, and the commands it runs are named in its ``pending`` answers. A ``$``
of no dispatch (a timer, the mod's resume) writes its toasts to stdout instead.

The mod's ``process.run`` runs here, not in the engine, each command in a process session of its own, so
that Esc (which cancels the module's pending ``$`` calls) does not cut a ``lich open`` off. Its checks,
messages and output cap are the engine's (:mod:`agent_cards.host_contract`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_cards.bridge.dispatch import BridgeDispatch, BridgeSignal, DispatchCancelled
from agent_cards.bridge.lifetime import log
from agent_cards.engine import DEFAULT_TIMEOUT_MS, Event, HookResult, Origin, ProcessResult, Timer
from agent_cards.host_contract import (
    capped_bytes,
    exit_code,
    failed_to_start,
    host_check,
    program_name,
    timed_out,
)

KILL_GRACE_S = 2.0  # a command past its timeout gets SIGTERM, then SIGKILL this long after, as in the engine

#: What the host's messages go out by: one JSON object, written as a line of stdout.
Emit = Callable[[Mapping[str, Any]], None]
#: Runs a timer's function after ``ms`` (again every ``ms`` when ``repeat``).
Later = Callable[[int, Timer, bool], None]


class BridgeEnv:
    """``$.env.get`` as the module read it at start (only the names the mod reads), else this process's."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = {k: v for k, v in values.items() if isinstance(k, str)}

    def get(self, name: str, /) -> str | None:
        if name in self.values:
            value = self.values[name]
            return value if isinstance(value, str) else None
        return os.environ.get(name)


class BridgeNext:
    """``next`` of one dispatch: ``next(e)`` asks the module to run what is beneath, and waits for its result."""

    def __init__(self, dispatch: BridgeDispatch, given: HookResult | None = None) -> None:
        self._d = dispatch
        self._given = given  # session.start: what core answered already (its value changes nothing)

    @property
    def origin(self) -> Origin:
        return self._d.origin

    @property
    def signal(self) -> BridgeSignal:
        return self._d.signal

    @property
    def event(self) -> str:
        return self._d.event

    async def __call__(self, e: Event, /) -> HookResult:
        d = self._d
        if self._given is not None:
            return self._given
        if d.signal.aborted or not d.live:
            raise DispatchCancelled("user-cancel: the engine no longer waits on this call")
        d.called_next = True
        d.waiting = asyncio.get_running_loop().create_future()
        d.put({"kind": "next", "e": e})
        try:
            return await d.waiting
        finally:
            d.waiting = None


async def run_process(
    argv: Sequence[str], timeout_ms: int, busy: set[str] | None = None, started: Callable[[], None] | None = None
) -> ProcessResult:
    """``$.process.run``: argv (no shell), stdin closed, in a session of its own. ``busy`` holds the command's
    file name while it runs, and ``started`` is called once it runs."""
    host_check(argv, timeout_ms)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise failed_to_start(argv, error) from None
    label = program_name(argv)
    if busy is not None:
        busy.add(label)
    if started is not None:
        started()  # the module learns at once that a command runs for this call
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_ms / 1000)
    except TimeoutError:
        await _stop(proc)
        raise timed_out(argv, timeout_ms) from None
    finally:
        if busy is not None:
            busy.discard(label)
    return capped_bytes(out, err, exit_code(proc.returncode))


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """End a command past its timeout with its whole process group (it leads a session of its own), so
    that nothing a hung ``lich open`` started outlives it: SIGTERM to the group, then, once the command
    ended or its grace ran out, SIGKILL to whatever of the group is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):  # its pipes close once the group is gone (one that left it aside)
        await asyncio.wait_for(proc.communicate(), KILL_GRACE_S)


class BridgeProcess:
    """``$.process``: each run tells the dispatch it runs for (when there is one) that it runs."""

    def __init__(self, d: BridgeDispatch | None) -> None:
        self._d = d

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        d = self._d
        if d is None:
            return await run_process(argv, timeout_ms)
        return await run_process(argv, timeout_ms, d.busy, d.wake.set)


class BridgeUI:
    """``$.ui``: a toast goes back with the dispatch's answer while the module reads them, else to stdout."""

    def __init__(self, emit: Emit, d: BridgeDispatch | None) -> None:
        self._emit, self._d = emit, d

    async def toast(self, text: str, /) -> None:
        if self._d is not None and self._d.live:
            self._d.effects.append({"toast": str(text)})
        else:
            self._emit({"toast": str(text)})

    def invalidate(self, event: str, /) -> None:
        self._emit({"invalidate": str(event)})

    def log(self, text: str, /) -> None:
        """The plugin's log: a line on this host's stderr (the whole text of a toast the box had to cut)."""
        log(str(text))


class BridgeClock:
    """``$.clock``: the wall clock, and timers that run in this process."""

    def __init__(self, later: Later) -> None:
        self._later = later

    def now(self) -> int:
        return time.time_ns() // 1_000_000

    def after(self, ms: int, fn: Timer, /) -> None:
        self._later(ms, fn, False)

    def every(self, ms: int, fn: Timer, /) -> None:
        self._later(ms, fn, True)


class BridgeHost:
    """``$`` for one dispatch (or for none: a timer's, the mod's resume)."""

    def __init__(self, env: BridgeEnv, clock: BridgeClock, emit: Emit, d: BridgeDispatch | None) -> None:
        self.env = env
        self.process = BridgeProcess(d)
        self.ui = BridgeUI(emit, d)
        self.clock = clock


__all__ = [
    "KILL_GRACE_S", "BridgeClock", "BridgeEnv", "BridgeHost", "BridgeNext", "BridgeProcess", "BridgeUI",
    "DispatchCancelled", "Emit", "Later", "run_process",
]
