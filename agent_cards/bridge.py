"""The session host: ``agent_cards.mod``, unchanged, inside the real Claude Code mod engine.

The engine runs JavaScript modules only, with no Node in them. The plugin's module (``hooks/agent-cards.js``,
generated from the mod's own ``register(on)`` by :func:`js_module`) starts this host once per session, at
``session.start``, with ``$.process.spawn``; every later event of the mod is carried to it over a Unix
socket with ``$.http.fetch``. Standard library only: the plugin runs it with ``python -I -S``.

Processes::

    Claude Code ──(module: hooks/agent-cards.js)── $.http.fetch over a Unix socket ──▶ this host
         ▲                                                                               │
         └──── its stdout, read piece by piece: hello, state, toasts, redraws ◀─────────┘

Protocol (one JSON object per ``POST /step``, ``authorization: Bearer <token>``):

- ``{"op": "event", "id", "hook", "e", "origin", "event", "cancel": [ids]}`` runs the mod's hook number
  ``hook`` (the order of ``register``) on ``e``;
- ``{"op": "resume", "id", "value"}`` or ``{"op": "resume", "id", "error"}`` hands back what ``next(e)``
  gave beneath;
- ``{"op": "poll", "id"}`` asks again after ``pending``;
- ``{"op": "stats"}``: Python's own CPU time so far (``cpuMs``) and the steps served (the bench).

With ``AGENT_CARDS_BRIDGE_LOG`` set, every step is appended to that file as one JSON line: its op, hook and
answer, ``waited`` (how long the event waited for a host, as the module measured it) and ``cpu`` (this
process's CPU time in ms after the step).

Every answer comes within :data:`STEP_WAIT_S`: ``{"kind": "done", "value"}``, ``{"kind": "next", "e"}``
(run ``next`` with this ``e`` and resume), ``{"kind": "failed", "error"}`` or ``{"kind": "pending",
"busy": [program, ...]}`` (still working; ``busy`` names the commands running for it), each with the
``effects`` (toasts) raised meanwhile. ``cancel`` lists dispatches the engine gave up on (Esc, a "no"):
their ``next`` raises and their signal reads aborted, but a command already running is left to finish,
so that what it did (a worker lich opened) is still known to the mod.

stdout, one JSON object a line: ``{"hello": 1, "socket", "token", "python", "version", "pid", "texts"}`` once
the mod is loaded and the socket listens (``texts``: the bridge's agent texts in the session's language);
``{"state": …}`` after each change of the mod's state (the module keeps the last one and hands it to a host
it starts again); ``{"toast": text}`` and ``{"invalidate": event}`` raised outside a dispatch (a timer).
``{"fatal": reason}`` when it cannot serve.

The mod's ``process.run`` runs here, in a session of its own, so that Esc (which cancels the module's
pending ``$`` calls) does not cut a ``lich open`` off. Timers run here too. The socket lives in a fresh
folder of mode 0700 that every exit removes; a random token, checked on every request, keeps any other
process of the same user from driving the mod. Nothing listens on TCP.

    python -m agent_cards.bridge --js       print the module this file generates
    python -m agent_cards.bridge --check F  exit 1 when F is not the module this file generates
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_cards.engine import (
    DEFAULT_TIMEOUT_MS,
    Event,
    HookResult,
    Origin,
    ProcessResult,
    Timer,
    error_reason,
)
from agent_cards.host_contract import (
    capped_bytes,
    exit_code,
    failed_to_start,
    host_check,
    matches,
    program_name,
    timed_out,
)
from agent_cards.state import MemoryStore, ModState
from agent_cards.texts import AGENT, PERSON, agent_text

if TYPE_CHECKING:
    from agent_cards.mod import AgentCards

MIN_PYTHON = (3, 11)
STEP_WAIT_S = 1.0  # an answer never waits longer than this: "pending" instead
MAX_BODY = 8 << 20
KILL_GRACE_S = 2.0  # SIGTERM, then SIGKILL, as the engine's process.run
FOLDER_PREFIX = "agent-cards-"

# The module's own limits (milliseconds), written into the generated JavaScript.
STEP_LIMIT_MS = 5_000  # no answer to one fetch within this: the host hangs (the engine's own limit is 30 s)
READY_LIMIT_MS = 10_000  # a host that has not said hello by then did not start
BUSY_LIMIT_MS = 150_000  # a dispatch pending this long: given up (the longest command the mod runs is 120 s)

# The bridge's own texts live in the catalog (agent_cards.texts): PERSON "bridge.*" (toasts, English), AGENT
# "bridge.unsure" (the model reads it, in the session's language: the host hands it over in its hello).
UNSURE = "bridge.unsure"


# -- the engine's Protocols, served here ------------------------------------------------------------


class EngineCancel(Exception):
    """The engine gave up on the dispatch (Esc, or the person's "no"): its ``next`` cannot answer."""


class SnapshotEnv:
    """``$.env.get`` as the module read it at start (only the names the mod reads), else this process's."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = {k: v for k, v in values.items() if isinstance(k, str)}

    def get(self, name: str, /) -> str | None:
        if name in self.values:
            value = self.values[name]
            return value if isinstance(value, str) else None
        return os.environ.get(name)


class Signal:
    def __init__(self) -> None:
        self.aborted = False


class BridgeStore(MemoryStore):
    """The mod's state, each change told to the module (which hands it to a host it starts again)."""

    def __init__(self, state: ModState, told: Callable[[ModState], None]) -> None:
        super().__init__(state)
        self._told = told

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        before = self.get()
        after = super().update(change)
        if after != before:
            self._told(after)
        return after


async def run_process(
    argv: Sequence[str], timeout_ms: int, busy: set[str] | None = None, started: Callable[[], None] | None = None
) -> ProcessResult:
    """``$.process.run``: argv (no shell), stdin closed, in a session of its own; the engine's checks, messages
    and output cap (agent_cards.host_contract), so a toast that quotes one reads the same in the real Claude
    Code as in the fake host."""
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
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            await asyncio.wait_for(proc.wait(), wait)
            return
        except TimeoutError:
            continue


@dataclass(eq=False)
class Dispatch:
    """One event the module is waiting on."""

    id: str
    event: str
    origin: Origin
    signal: Signal = field(default_factory=Signal)
    live: bool = True  # the module still reads this dispatch's answers (effects go there, not to stdout)
    out: dict[str, Any] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: asyncio.Future[HookResult] | None = None
    effects: list[dict[str, Any]] = field(default_factory=list)
    busy: set[str] = field(default_factory=set)
    called_next: bool = False
    task: asyncio.Task[None] | None = None

    def put(self, out: dict[str, Any]) -> None:
        self.out = out
        self.wake.set()


class BridgeNext:
    def __init__(self, dispatch: Dispatch, given: HookResult | None = None) -> None:
        self._d = dispatch
        self._given = given  # session.start: what core answered already (its value changes nothing)

    @property
    def origin(self) -> Origin:
        return self._d.origin

    @property
    def signal(self) -> Signal:
        return self._d.signal

    @property
    def event(self) -> str:
        return self._d.event

    async def __call__(self, e: Event, /) -> HookResult:
        d = self._d
        if self._given is not None:
            return self._given
        if d.signal.aborted or not d.live:
            raise EngineCancel("user-cancel: the engine no longer waits on this call")
        d.called_next = True
        d.waiting = asyncio.get_running_loop().create_future()
        d.put({"kind": "next", "e": e})
        try:
            return await d.waiting
        finally:
            d.waiting = None


class _Process:
    def __init__(self, d: Dispatch | None) -> None:
        self._d = d

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        d = self._d
        if d is None:
            return await run_process(argv, timeout_ms)
        return await run_process(argv, timeout_ms, d.busy, d.wake.set)


class _UI:
    def __init__(self, session: Session, d: Dispatch | None) -> None:
        self._session, self._d = session, d

    async def toast(self, text: str, /) -> None:
        if self._d is not None and self._d.live:
            self._d.effects.append({"toast": str(text)})
        else:
            self._session.emit({"toast": str(text)})

    def invalidate(self, event: str, /) -> None:
        self._session.emit({"invalidate": str(event)})


class _Clock:
    def __init__(self, session: Session) -> None:
        self._session = session

    def now(self) -> int:
        return time.time_ns() // 1_000_000

    def after(self, ms: int, fn: Timer, /) -> None:
        self._session.later(ms, fn, repeat=False)

    def every(self, ms: int, fn: Timer, /) -> None:
        self._session.later(ms, fn, repeat=True)


class BridgeHost:
    """``$`` for one dispatch: toasts go back with its answer while the module waits on it."""

    def __init__(self, session: Session, d: Dispatch | None) -> None:
        self.env = session.env
        self.process = _Process(d)
        self.ui = _UI(session, d)
        self.clock = session.clock


@dataclass(frozen=True)
class Registration:
    event: str
    matcher: Mapping[str, Any] | None
    hook: Callable[[Any, Event, Any], Awaitable[HookResult | None]]


def registrations(store: Any = None) -> tuple[list[Registration], AgentCards]:
    """The mod's hooks, in the order its ``register(on)`` made them, and what ``register`` returned."""
    from agent_cards import register

    found: list[Registration] = []

    def on(event: str, *args: Any) -> None:
        matcher, hook = (None, args[0]) if len(args) == 1 else (args[0], args[1])
        found.append(Registration(event, matcher, hook))

    mod = register(on, store)
    return found, mod


class Session:
    """The mod for one Claude Code session, served over the socket."""

    def __init__(self, env: Mapping[str, Any], state: object, write: Callable[[str], None]) -> None:
        self._write = write
        self.env = SnapshotEnv(env)
        self.clock = _Clock(self)
        self.store = BridgeStore(ModState.from_json(state), lambda s: self.emit({"state": s.to_json()}))
        self.hooks, self.mod = registrations(self.store)
        self.dispatches: dict[str, Dispatch] = {}
        self.timers: set[asyncio.Task[None]] = set()
        self.busy_ms = 0.0  # Python's own time serving steps (bench)
        self.log = os.environ.get("AGENT_CARDS_BRIDGE_LOG") or None
        self.steps = 0

    # -- output ------------------------------------------------------------------------------------

    def emit(self, message: Mapping[str, Any]) -> None:
        try:
            self._write(json.dumps(message, separators=(",", ":")) + "\n")
        except (OSError, ValueError):
            _exit_now()

    # -- timers ------------------------------------------------------------------------------------

    def later(self, ms: int, fn: Timer, *, repeat: bool) -> None:
        async def run() -> None:
            while True:
                await asyncio.sleep(max(0, ms) / 1000)
                try:
                    await fn()
                except Exception as error:
                    _log(f"a timer failed: {error_reason(error)}")
                if not repeat:
                    return

        task = asyncio.get_running_loop().create_task(run())
        self.timers.add(task)
        task.add_done_callback(self.timers.discard)

    # -- dispatches ----------------------------------------------------------------------------------

    def start_event(self, d: Dispatch, hook: int, e: Event, given: HookResult | None = None) -> None:
        registration = self.hooks[hook]

        async def run() -> None:
            try:
                result = await registration.hook(BridgeHost(self, d), e, BridgeNext(d, given))
            except Exception as error:
                d.put({"kind": "failed", "error": error_reason(error), "calledNext": d.called_next})
            else:
                if result is None:
                    d.put({"kind": "failed", "error": "the hook returned no result", "calledNext": d.called_next})
                else:
                    d.put({"kind": "done", "value": result})
            finally:
                if not d.live:
                    self.dispatches.pop(d.id, None)

        d.task = asyncio.get_running_loop().create_task(run())

    def boot_events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Events the module already answered before this host was up (``session.start``)."""
        for item in events:
            event, e = str(item.get("event") or ""), item.get("e")
            if not isinstance(e, dict):
                continue
            for index, registration in enumerate(self.hooks):
                if registration.event == event and (registration.matcher is None or matches(registration.matcher, e)):
                    d = Dispatch(f"boot-{index}", event, Origin("engine", "core"), live=False)
                    given = item.get("result") if isinstance(item.get("result"), dict) else {}
                    self.start_event(d, index, e, given)

    def resume(self) -> None:
        """A host started with the state of one before it: the mod re-arms what only lived in memory
        (its 5 s poll, when the state has workers)."""
        try:
            self.mod.resume(BridgeHost(self, None))
        except Exception as error:
            _log(f"resume failed: {error_reason(error)}")

    def cancel(self, ids: Sequence[Any]) -> None:
        for key in ids:
            d = self.dispatches.get(str(key))
            if d is None:
                continue
            d.signal.aborted = True
            d.live = False
            for effect in d.effects:  # shown as well, if late
                self.emit(effect)
            d.effects.clear()
            if d.waiting is not None and not d.waiting.done():
                d.waiting.set_exception(EngineCancel("user-cancel: the engine gave up on this call"))
            if d.task is None or d.task.done():
                self.dispatches.pop(d.id, None)

    async def step(self, request: Mapping[str, Any]) -> dict[str, Any]:
        answer = await self._step(request)
        if self.log is not None:  # AGENT_CARDS_BRIDGE_LOG: every step and its answer, one JSON line each
            record = {"t": time.time(), "op": request.get("op"), "id": request.get("id"),
                      "hook": request.get("hook"), "kind": answer.get("kind"), "effects": answer.get("effects"),
                      "waited": request.get("waited"), "cpu": time.process_time() * 1000}
            with contextlib.suppress(OSError), open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        return answer

    async def _step(self, request: Mapping[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        self.cancel(request.get("cancel") or [])
        op, key = request.get("op"), str(request.get("id") or "")
        if op == "stats":  # the bench: Python's own time so far
            return {"kind": "stats", "steps": self.steps, "cpuMs": time.process_time() * 1000}
        d = self.dispatches.get(key)
        if op == "event":
            hook = request.get("hook")
            e = request.get("e")
            if d is not None or not isinstance(hook, int) or not 0 <= hook < len(self.hooks) or not isinstance(e, dict):
                return {"kind": "failed", "error": "a malformed event", "calledNext": False}
            given = request.get("origin")
            origin: Mapping[str, Any] = given if isinstance(given, dict) else {}
            d = Dispatch(key, str(request.get("event") or self.hooks[hook].event),
                         Origin(str(origin.get("plugin") or ""), str(origin.get("tier") or "")))
            self.dispatches[key] = d
            self.start_event(d, hook, e)
        elif d is None:
            return {"kind": "failed", "error": "no such dispatch", "calledNext": False}
        elif op == "resume":
            if d.waiting is not None and not d.waiting.done():
                if "error" in request:
                    d.waiting.set_exception(EngineCancel(str(request.get("error"))))
                else:
                    value = request.get("value")
                    d.waiting.set_result(value if isinstance(value, dict) else {"value": value})
        elif op != "poll":
            return {"kind": "failed", "error": "an unknown op", "calledNext": d.called_next}
        self.busy_ms += (time.perf_counter() - started) * 1000
        return await self.answer(d)

    async def answer(self, d: Dispatch) -> dict[str, Any]:
        if d.out is None:
            d.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(d.wake.wait(), STEP_WAIT_S)
        out, d.out = d.out, None
        if out is None:
            out = {"kind": "pending", "busy": sorted(d.busy)}
        elif out["kind"] in ("done", "failed"):
            self.dispatches.pop(d.id, None)
            d.live = False
        out["effects"], d.effects = d.effects, []
        self.steps += 1
        return out


# -- the socket ---------------------------------------------------------------------------------------


class Server:
    def __init__(self, session: Session, token: str) -> None:
        self.session = session
        self._auth = f"Bearer {token}".encode()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                parts = line.decode("latin-1").split()
                headers: dict[str, str] = {}
                while True:
                    raw = await reader.readline()
                    if raw in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                if length < 0 or length > MAX_BODY:
                    await self._reply(writer, 413, {"error": "too large"})
                    return
                body = await reader.readexactly(length) if length else b""
                status, payload = await self.handle(parts, headers, body)
                await self._reply(writer, status, payload)
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def handle(self, parts: list[str], headers: Mapping[str, str], body: bytes) -> tuple[int, Any]:
        given = headers.get("authorization", "").encode("latin-1", "replace")
        if not hmac.compare_digest(given, self._auth):  # every request, before anything is read
            return 403, {"error": "forbidden"}
        if parts[:2] != ["POST", "/step"]:
            return 404, {"error": "not found"}
        try:
            request = json.loads(body)
        except ValueError:
            return 400, {"error": "not JSON"}
        if not isinstance(request, dict):
            return 400, {"error": "not an object"}
        return 200, await self.session.step(request)

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode()
        reason = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 413: "Too Large"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
        writer.write(head.encode() + data)
        await writer.drain()


# -- the socket's folder --------------------------------------------------------------------------------


def runtime_root(env: Mapping[str, str]) -> str:
    """Where the private folder goes: the user's runtime folder when there is one, else the temp folder."""
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK | os.X_OK):
        return runtime
    return tempfile.gettempdir()


def make_folder(root: str) -> str:
    """A fresh folder of mode 0700 named after this process; stale ones of dead hosts are removed first."""
    prune(root)
    folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir=root)
    os.chmod(folder, 0o700)
    return folder


def prune(root: str) -> None:
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if not name.startswith(FOLDER_PREFIX):
            continue
        pid = name[len(FOLDER_PREFIX):].split("-", 1)[0]
        path = os.path.join(root, name)
        try:
            if not pid.isdigit() or os.lstat(path).st_uid != os.getuid() or _alive(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- the process --------------------------------------------------------------------------------------

_FOLDER: list[str] = []


def _log(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"agent-cards bridge: {line}\n")
        sys.stderr.flush()


def _cleanup() -> None:
    for folder in _FOLDER:
        shutil.rmtree(folder, ignore_errors=True)
    _FOLDER.clear()


def _exit_now(code: int = 0) -> None:
    _cleanup()
    os._exit(code)


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


async def serve(boot: Mapping[str, Any], write: Callable[[str], None] = _write_stdout) -> None:
    """Listen, say hello, serve until the parent goes (or a signal ends it), then remove the folder."""
    given = boot.get("env")
    env: Mapping[str, Any] = given if isinstance(given, dict) else {}
    session = Session(env, boot.get("state"), write)
    folder = make_folder(runtime_root(os.environ))
    _FOLDER.append(folder)
    path = os.path.join(folder, "s")
    token = secrets.token_urlsafe(32)
    server = Server(session, token)
    old_umask = os.umask(0o077)
    try:
        listener = await asyncio.start_unix_server(server.connection, path=path)
    finally:
        os.umask(old_umask)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    def ending() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, ending)
    unsure = agent_text(session.env.get("LICH_PROMPT_LANG"), UNSURE, program="{program}")
    session.emit({
        "hello": 1, "socket": path, "token": token, "python": sys.executable,
        "version": list(sys.version_info[:3]), "pid": os.getpid(), "texts": {UNSURE: unsure},
    })
    events = boot.get("events")
    session.boot_events(events if isinstance(events, list) else [])
    session.resume()
    parent = os.getppid()

    async def watch_parent() -> None:
        while os.getppid() == parent:
            await asyncio.sleep(1.0)
        if not stop.done():
            stop.set_result(None)

    watcher = loop.create_task(watch_parent())
    try:
        await stop
    finally:
        watcher.cancel()
        listener.close()
        _cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--js"]:
        sys.stdout.write(js_module())
        return 0
    if args[:1] == ["--check"] and len(args) == 2:
        with open(args[1], encoding="utf-8") as fh:
            same = fh.read() == js_module()
        if not same:
            sys.stderr.write(f"{args[1]} is not the module agent_cards.bridge generates: regenerate it\n")
        return 0 if same else 1
    if args:
        sys.stderr.write("usage: python -m agent_cards.bridge [--js | --check FILE]  (no argument: serve)\n")
        return 2
    try:
        raw = sys.stdin.read() if sys.stdin is not None else ""
        boot = json.loads(raw) if raw.strip() else {}
        if not isinstance(boot, dict):
            boot = {}
        asyncio.run(serve(boot))
    except Exception as error:
        with contextlib.suppress(OSError, ValueError):
            _write_stdout(json.dumps({"fatal": error_reason(error)}) + "\n")
        _cleanup()
        return 1
    finally:
        _cleanup()
    return 0


# -- the module this host serves (generated) ------------------------------------------------------------

# Run by the module with ``python -I -S -c BOOT``: valid in any Python, so that an old one says how old it is.
_OLD_CHECK = "if sys.version_info < ({}, {}):\n".format(*MIN_PYTHON)
BOOT = (
    "import sys, os, json\n"
    + _OLD_CHECK
    + "    v = '%d.%d.%d' % tuple(sys.version_info[:3])\n"
    "    sys.stdout.write(json.dumps({'fatal': 'old', 'version': v}) + '\\n')\n"
    "    sys.exit(3)\n"
    "sys.path.insert(0, os.environ.get('CLAUDE_PLUGIN_ROOT') or '.')\n"
    "from agent_cards.bridge import main\n"
    "sys.exit(main([]))\n"
)


def env_names() -> list[str]:
    """Every name the mod reads with ``env.get("NAME")`` (its pure modules, read off their source)."""
    import ast
    import pathlib

    drivers = {"hook.py", "filestore.py", "cli.py", "bridge.py"}
    names: set[str] = set()
    for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        if path.name in drivers:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "env"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.add(node.args[0].value)
    return sorted(names)


def _js(value: Any) -> str:
    """A JavaScript literal for a matcher value (JSON, a pattern as a RegExp literal)."""
    if hasattr(value, "pattern") and hasattr(value, "search"):
        return "/" + str(value.pattern).replace("/", "\\/") + "/"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))}: {_js(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return json.dumps(value)


def js_module() -> str:
    """``hooks/agent-cards.js``: the mod's registrations and env reads as the loader needs them, nothing else."""
    import pathlib

    template = (pathlib.Path(__file__).parent / "bridge.js.in").read_text(encoding="utf-8")
    lines = []
    for index, registration in enumerate(registrations()[0]):
        if registration.event == "session.start":
            continue  # the module's own session.start starts the host and hands it the event
        matcher = "" if registration.matcher is None else f"{_js(registration.matcher)}, "
        lines.append(f"  on({json.dumps(registration.event)}, {matcher}($, e, next) => dispatch($, {index}, e, next))")
    reads = [f"        {json.dumps(name)}: await $.env.get({json.dumps(name)})," for name in env_names()]
    values = {
        "@ON@": "\n".join(lines),
        "@ENV@": "\n".join(reads),
        "@BOOT@": json.dumps(BOOT),
        "@PERSON@": json.dumps({k: v for k, v in PERSON.items() if k.startswith("bridge.")}, indent=2,
                               ensure_ascii=False),
        "@AGENT@": json.dumps({UNSURE: AGENT[UNSURE]}, indent=2, ensure_ascii=False),
        "@STEP_LIMIT_MS@": str(STEP_LIMIT_MS),
        "@READY_LIMIT_MS@": str(READY_LIMIT_MS),
        "@BUSY_LIMIT_MS@": str(BUSY_LIMIT_MS),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


if __name__ == "__main__":
    sys.exit(main())
