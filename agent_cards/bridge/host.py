"""The engine's Protocols (:mod:`agent_cards.engine`) as the bridge serves them to the mod: ``$`` and ``next``.

``$`` is made for one dispatch (:class:`BridgeHost`): a toast raised while the module waits on that
dispatch goes back with its answer, and the commands it runs are named in its ``pending`` answers. A ``$``
of no dispatch (a timer, the mod's resume) writes its toasts to stdout instead.

The mod's ``process.run`` runs here, not in the engine, each command in a process session of its own, so
that Esc (which cancels the module's pending ``$`` calls) does not cut a ``lich open`` off. ``lich open``
runs through ``process.run_kept`` (:class:`KeptRuns`): its output goes to files the session keeps, so that
when this host dies mid-open the next host still reads it (``process.collect``). Its checks,
messages and output cap are the engine's (:mod:`agent_cards.host_contract`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from agent_cards.bridge.dispatch import BridgeDispatch, BridgeSignal, DispatchCancelled
from agent_cards.bridge.lifetime import log
from agent_cards.engine import DEFAULT_TIMEOUT_MS, Event, HookResult, Origin, ProcessResult, Timer
from agent_cards.host_contract import (
    OUTPUT_CAP,
    capped_bytes,
    exit_code,
    failed_to_start,
    host_check,
    left_nothing,
    program_name,
    timed_out,
)

KILL_GRACE_S = 2.0  # a command past its timeout gets SIGTERM, then SIGKILL this long after, as in the engine

#: What the host's messages go out by: one JSON object, written as a line of stdout.
Emit = Callable[[Mapping[str, Any]], None]
#: Runs a timer's function after ``ms`` (again every ``ms`` when ``repeat``).
Later = Callable[[int, Timer, bool], None]

T = TypeVar("T")


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
    out, err = await _watched(proc, proc.communicate(), argv, timeout_ms, busy, started)
    return capped_bytes(out, err, exit_code(proc.returncode))


async def _watched(proc: asyncio.subprocess.Process, ending: Awaitable[T], argv: Sequence[str], timeout_ms: int,
                   busy: set[str] | None, started: Callable[[], None] | None) -> T:
    """``ending`` (the command's end) awaited within ``timeout_ms``, the command's file name in ``busy``
    meanwhile; ``started`` is called first, so the module learns at once that a command runs for this call.
    Past its time the command's process group is ended."""
    label = program_name(argv)
    if busy is not None:
        busy.add(label)
    if started is not None:
        started()
    try:
        return await asyncio.wait_for(ending, timeout_ms / 1000)
    except TimeoutError:
        await _stop(proc)
        raise timed_out(argv, timeout_ms) from None
    finally:
        if busy is not None:
            busy.discard(label)


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


#: The exit code of a kept run that ended after its host died: no process was left to wait for it, so its exit
#: status is not known (what it printed is; a delivery in it means lich has the task, whatever the exit code).
UNKNOWN_EXIT = -1
COLLECT_POLL_S = 0.1  # how often a kept run a host that died left running is looked at, until it ends


class KeptRuns:
    """Runs whose output outlives this host: each ``lich open`` writes its stdout and stderr to files of mode
    0600 in ``folder`` (beside the session's kept state, mode 0700), named after the call's ``tool_use_id``,
    with ``<key>.run`` naming its process group. Its stdout file is locked (``flock``) before the command
    starts and the lock passes to the command with the file, so the lock is free exactly when no process of
    the open holds the file any more: a host started after this one died tells by that alone whether the
    open has ended, with no pid that could have been reused. The files go once the state no longer keeps
    the open (:meth:`forget`), so that a host killed between reading them and keeping the worker loses
    nothing."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def paths(self, key: str) -> tuple[str, str, str] | None:
        """The stdout, stderr and record files of ``key``, or None when the key cannot name a file."""
        if not key or key in (".", "..") or any(c in "/\\\0" for c in key) or len(key) > 200:
            return None
        base = os.path.join(self.folder, key)
        return f"{base}.out", f"{base}.err", f"{base}.run"

    async def run(self, argv: Sequence[str], key: str, timeout_ms: int, busy: set[str] | None = None,
                  started: Callable[[], None] | None = None) -> ProcessResult:
        """``run_process``, its output to the files of ``key``; a key that names no file runs as ``run_process``."""
        host_check(argv, timeout_ms)
        paths = self.paths(key)
        if paths is None:
            return await run_process(argv, timeout_ms, busy, started)
        out, err, record = paths
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        out_fd = os.open(out, flags, 0o600)
        try:
            err_fd = os.open(err, flags, 0o600)
        except OSError:
            os.close(out_fd)
            raise
        try:
            fcntl.flock(out_fd, fcntl.LOCK_EX)  # the command inherits it with the file: held while any of it runs
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=out_fd, stderr=err_fd, start_new_session=True
            )
        except OSError as error:
            self.forget(key)
            raise failed_to_start(argv, error) from None
        finally:
            os.close(out_fd)  # the command's own copies keep the files, and the lock, open
            os.close(err_fd)
        _write_private(record, json.dumps({"pid": proc.pid, "argv": list(argv)}))
        await _watched(proc, proc.wait(), argv, timeout_ms, busy, started)
        return _printed(out, err, exit_code(proc.returncode))

    async def collect(self, key: str, started_ms: int, timeout_ms: int) -> ProcessResult:
        """What the run ``key``, started by a host that died, printed, once none of it runs; past ``timeout_ms``
        from ``started_ms`` (wall-clock ms) its process group is ended (SIGTERM, then SIGKILL after the grace)."""
        paths = self.paths(key)
        if paths is None or not os.path.exists(paths[0]):
            raise left_nothing(key)
        out, err, record = paths
        try:
            with open(record, encoding="utf-8") as fh:
                kept = json.load(fh)
        except (OSError, ValueError):
            kept = {}  # its host died before it named the group: it is waited for, never signalled
        kept = kept if isinstance(kept, dict) else {}
        argv = [str(a) for a in kept.get("argv") or []] or ["lich"]
        pid = kept.get("pid") if type(kept.get("pid")) is int else None
        deadline = (started_ms + timeout_ms) / 1000
        while not _ended(out):
            if time.time() >= deadline:
                await _end_group(pid, out)
                raise timed_out(argv, timeout_ms)
            await asyncio.sleep(COLLECT_POLL_S)
        return _printed(out, err, UNKNOWN_EXIT)

    def forget(self, key: str) -> None:
        """The files of ``key`` go: the state no longer keeps its open."""
        for path in self.paths(key) or ():
            with contextlib.suppress(OSError):
                os.unlink(path)

    def prune(self, keep: Iterable[str]) -> None:
        """Remove the files of runs the state does not keep (``keep``: the keys it does), whose opens ended."""
        kept = set(keep)
        with contextlib.suppress(OSError):
            for name in os.listdir(self.folder):
                key, _, ext = name.rpartition(".")
                if ext in ("out", "err", "run") and key not in kept:
                    out = (self.paths(key) or ("",))[0]
                    if not os.path.exists(out) or _ended(out):
                        self.forget(key)


def _ended(out: str) -> bool:
    """Whether no process of the run holds its stdout file (and so its lock) any more."""
    try:
        fd = os.open(out, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        os.close(fd)
    return True


async def _end_group(pid: int | None, out: str) -> None:
    """End the process group ``pid`` leads (a kept run past its time): SIGTERM, SIGKILL after the grace. A pid
    that no longer leads a group (it ended, or was given to another process) is left alone."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        if pid is None or _ended(out):
            return
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, sig)
        waited = 0.0
        while waited < grace and not _ended(out):
            await asyncio.sleep(COLLECT_POLL_S)
            waited += COLLECT_POLL_S


def _printed(out: str, err: str, code: int) -> ProcessResult:
    return capped_bytes(_head(out), _head(err), code)


def _head(path: str) -> bytes:
    """The file's first bytes, one past the cap (so a longer output reads as cut), or none when it is gone."""
    try:
        with open(path, "rb") as fh:
            return fh.read(OUTPUT_CAP + 1)
    except OSError:
        return b""


def _write_private(path: str, text: str) -> None:
    """``text`` in a file of mode 0600, put in place whole."""
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(temp, path)


class BridgeProcess:
    """``$.process``: each run tells the dispatch it runs for (when there is one) that it runs. With the
    session's ``runs`` (a data folder to keep them in), it also offers the runs that outlive this host
    (:class:`agent_cards.engine.KeptProcess`)."""

    def __init__(self, d: BridgeDispatch | None, runs: KeptRuns | None = None) -> None:
        self._d = d
        self._runs = runs

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        d = self._d
        if d is None:
            return await run_process(argv, timeout_ms)
        return await run_process(argv, timeout_ms, d.busy, d.wake.set)

    async def run_kept(self, argv: Sequence[str], key: str, /, *, timeout_ms: int) -> ProcessResult:
        d = self._d
        if self._runs is None:  # no data folder: the output can go nowhere a next host reads
            return await self.run(argv, timeout_ms=timeout_ms)
        if d is None:
            return await self._runs.run(argv, key, timeout_ms)
        return await self._runs.run(argv, key, timeout_ms, d.busy, d.wake.set)

    async def collect(self, key: str, /, *, started_ms: int, timeout_ms: int) -> ProcessResult:
        if self._runs is None:
            raise left_nothing(key)
        return await self._runs.collect(key, started_ms, timeout_ms)


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

    def __init__(self, env: BridgeEnv, clock: BridgeClock, emit: Emit, d: BridgeDispatch | None,
                 runs: KeptRuns | None = None) -> None:
        self.env = env
        self.process = BridgeProcess(d, runs)
        self.ui = BridgeUI(emit, d)
        self.clock = clock


__all__ = [
    "KILL_GRACE_S", "UNKNOWN_EXIT", "BridgeClock", "BridgeEnv", "BridgeHost", "BridgeNext", "BridgeProcess",
    "BridgeUI", "DispatchCancelled", "Emit", "KeptRuns", "Later", "left_nothing", "run_process",
]
