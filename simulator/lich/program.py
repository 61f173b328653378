"""``fake-lich``: the fake lich of :mod:`.world` as a real program, its state kept in a directory.

Every invocation answers one lich command line by handing it to :meth:`LichWorld.run`, so flags,
usage errors and unknown commands behave exactly as :mod:`.commands` says (one ``lich: …`` line on stderr
and exit 1 for a refusal).

The environment it reads:

``FAKE_LICH_STATE``
    The state directory (see :func:`create_state`): ``script.json`` holds the scenario's
    :class:`LichScript` (as in ``LichWorld.to_json()["script"]``), ``world.json`` the world that
    successive calls change, ``lock`` the file every call locks while it reads and writes the world.
    Without it, or with no ``script.json`` there, no lich is running and every command answers so.
``FAKE_LICH_NOW_MS``
    The lich clock in ms, as the replay's virtual clock reads it. Without it: real ms since the
    state was created.
``FAKE_LICH_ARGV0``
    The command name the caller used (lich prints it back in its notes); default ``sys.argv[0]``.
``FAKE_LICH_REPORT_FD``
    A pipe the replay passes in: once the world is saved, one JSON object ``{"ms", "hang", "child"}``
    is written there and the pipe closed, so the caller learns how long the call takes on the
    virtual clock, and whether it never returns (``child``: the pid of the hung call's child).
``FAKE_LICH_TURN_FD``
    A pipe the replay passes in when it starts calls side by side: the call starts up, then waits
    until the replay closes the pipe's other end before it touches the state, so calls change the
    world in the order they were made, while their start-ups overlap.
``FAKE_LICH_REAL_SLEEP=1``
    The commands whose time the script sets (``open``: its ms; ``sessions``: ``sessions_ms``) really
    sleep it before they print (the state is saved and the report written first, so parallel opens
    sleep side by side): a real-time caller sees a slow lich as slow.
``FAKE_LICH_CALLS``
    A JSON file a real-time caller keeps: for each task (an open's ``--prompt``), ``ms``, the lich clock
    when the call that opens it was made, and ``turn``, how many opens come before it. Such an open
    waits (up to :data:`TURN_WAIT_S`) until that many opens were made, so ids, labels and tickets go by
    call and not by which open arrived first, and its worker's life (its report's ``after_ms``) counts
    from the call, as the scenario's steps do, not from the moment the engine got round to the open.

A call the script makes hang saves the world, forks a child (the work it is stuck on), reports,
prints what it has and sleeps until it is killed; the child leaves when its parent is gone.

This module is imported on every lich call: it imports only the standard library it needs and the
fake lich, never the replay machinery; ``json`` and ``fcntl`` only once a call has a state to read
(a call with no lich running needs neither, and they are most of its start-up).
"""

from __future__ import annotations

import os
import sys
import time

from agent_cards.record import Record
from agent_cards_simulator.lich import quick  # json and contextlib.suppress without what they import
from agent_cards_simulator.lich.output import CALL_MS, LichRun
from agent_cards_simulator.lich.scripts import LichScript
from agent_cards_simulator.lich.world import LichWorld

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of every call)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["STATE_ENV", "State", "StateError", "create_state", "main", "run_command", "transact"]

STATE_ENV = "FAKE_LICH_STATE"
NOW_ENV = "FAKE_LICH_NOW_MS"
ARGV0_ENV = "FAKE_LICH_ARGV0"
REPORT_ENV = "FAKE_LICH_REPORT_FD"
REAL_SLEEP_ENV = "FAKE_LICH_REAL_SLEEP"
#: The commands whose time the script sets, which ``FAKE_LICH_REAL_SLEEP`` makes take it in real time too.
SCRIPTED_TIME = ("open", "sessions")
TURN_ENV = "FAKE_LICH_TURN_FD"
CALLS_ENV = "FAKE_LICH_CALLS"
#: How long an open waits for its turn (``FAKE_LICH_CALLS``): an earlier call that never opens must not
#: hold the later ones for ever.
TURN_WAIT_S = 20.0
SCRIPT_FILE, WORLD_FILE, LOCK_FILE = "script.json", "world.json", "lock"


class StateError(Exception):
    """The state directory cannot be read or written; ``str()`` is one line."""


class State(Record):
    """What the state directory holds: the world, and when it was created (wall-clock ms)."""

    world: LichWorld
    created_ms: int


# --- the state directory ---------------------------------------------------------------------------


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _dump(value: object) -> str:
    return quick.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _world_body(state: State) -> str:
    return _dump({"created_ms": state.created_ms, **state.world.changes_to_json()})


def _write_atomic(path: str, text: str) -> None:
    """Write ``text`` beside ``path`` and move it into place, so a reader sees the old or the new file."""
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode("utf-8", "surrogatepass"))
    finally:
        os.close(fd)
    os.replace(temp, path)


def create_state(directory: str | os.PathLike[str], script: LichScript) -> str:
    """Make ``directory`` (if needed) the state of a fresh lich running ``script``; returns its path."""
    path = os.fspath(directory)
    os.makedirs(path, exist_ok=True)
    world = LichWorld(script)
    _write_atomic(os.path.join(path, SCRIPT_FILE), _dump(world.to_json()["script"]))
    _write_atomic(os.path.join(path, WORLD_FILE), _world_body(State(world, _wall_ms())))
    return path


def has_state(directory: str) -> bool:
    return bool(directory) and os.path.isfile(os.path.join(directory, SCRIPT_FILE))


MAX_STATE_BYTES = 64 << 20


def _read(path: str) -> str | None:
    """The file's text, None when it is missing; a pipe, a device, a folder or a huge file is a ``StateError``
    (opened without blocking: a pipe in its place is never waited for)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StateError(f"{path} is not a regular file")
        if info.st_size > MAX_STATE_BYTES:
            raise StateError(f"{path} is {info.st_size} bytes, over {MAX_STATE_BYTES}")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogatepass")


def _set_aside(path: str) -> str:
    """Rename a world file that cannot be used, so that a person can look at it; its new name."""
    aside = f"{path}.unusable-{time.time_ns()}"
    with quick.suppress(OSError):
        os.rename(path, aside)
        return aside
    return path


#: Why a lich refuses when its world is gone: the ids it gave out are not known any more, and a fresh
#: world would give them out again (a second "Session 2", a second ``9f81``).
_LOST = "the sessions and ids it gave out are lost, and a fresh world would give them out again; recreate the state"


def _load(directory: str) -> tuple[State, str | None]:
    script_path = os.path.join(directory, SCRIPT_FILE)
    world_path = os.path.join(directory, WORLD_FILE)
    script_text = _read(script_path)
    if script_text is None:
        raise StateError(f"no fake lich state in {directory}")
    try:
        world_text = _read(world_path)
    except StateError as error:
        raise StateError(f"{error}; set aside as {_set_aside(world_path)}: {_LOST}") from None
    if world_text is None:  # create_state always writes one: it was deleted
        raise StateError(f"the fake lich state in {directory} has no {WORLD_FILE}: {_LOST}")
    try:
        script = quick.loads(script_text)
    except (ValueError, RecursionError) as error:
        raise StateError(f"the fake lich script in {directory} is damaged: {type(error).__name__}") from None
    if not isinstance(script, dict):
        raise StateError(f"the fake lich script in {directory} is damaged: not a JSON object")
    try:
        saved: dict[str, Any] = quick.loads(world_text)
        created = saved.pop("created_ms", None)
        world = LichWorld.from_json({**saved, "script": script})
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise StateError(f"the fake lich world in {directory} is damaged ({type(error).__name__}); set aside as "
                         f"{_set_aside(world_path)}: {_LOST}") from None
    if not isinstance(created, int):
        created = os.stat(script_path).st_mtime_ns // 1_000_000
    return State(world, created), world_text


def transact(directory: str, work: Callable[[State], T]) -> T:
    """Run ``work`` on the state with the directory locked, and save the world if it changed."""
    import fcntl

    try:
        lock = os.open(os.path.join(directory, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise StateError(f"cannot lock the fake lich state in {directory}: {error.strerror}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state, text = _load(directory)
        result = work(state)
        changed = _world_body(state)
        if changed != text:
            _write_atomic(os.path.join(directory, WORLD_FILE), changed)
        return result
    except OSError as error:
        raise StateError(f"cannot use the fake lich state in {directory}: {error}") from None
    finally:
        os.close(lock)  # releases the lock


# --- one call ----------------------------------------------------------------------------------------


def _now(env: Mapping[str, str], created_ms: int) -> int:
    given = env.get(NOW_ENV)
    if given is None or given == "":
        return max(0, _wall_ms() - created_ms)
    try:
        return int(given)
    except ValueError:
        raise StateError(f"{NOW_ENV} is {given!r}, not a whole number of ms") from None


def run_command(argv: Sequence[str], env: Mapping[str, str]) -> LichRun:
    """Answer ``argv`` (argv[0] the command name) against the state ``env`` names, or as no lich running."""
    directory = env.get(STATE_ENV, "")
    if not has_state(directory):
        return LichWorld(LichScript(running=False)).run(argv, env, 0)
    called = _called(argv, env.get(CALLS_ENV))
    if called is not None:
        _wait_turn(directory, called[1])
    return transact(directory, lambda state: state.world.run(
        argv, env, called[0] if called is not None else _now(env, state.created_ms)))


def _called(argv: Sequence[str], path: str | None) -> tuple[int, int] | None:
    """An open's (ms, turn) from the ``FAKE_LICH_CALLS`` file, None when it names no such task."""
    if not path or argv[1:2] != ["open"] or "--prompt" not in argv[:-1]:
        return None
    prompt = argv[argv.index("--prompt") + 1]
    text = _read(path)
    entry = quick.loads(text).get(prompt) if text else None
    if not isinstance(entry, dict):
        return None
    return int(entry.get("ms", 0)), int(entry.get("turn", 0))


def _wait_turn(directory: str, turn: int) -> None:
    """Wait until ``turn`` opens were made (read without the lock: a later read under it decides)."""
    deadline = time.monotonic() + TURN_WAIT_S
    while time.monotonic() < deadline:
        text = _read(os.path.join(directory, WORLD_FILE))
        counters = quick.loads(text).get("counters") if text else None
        if not isinstance(counters, dict) or int(counters.get("open", 0)) >= turn:
            return
        time.sleep(0.02)


def _write_all(fd: int, text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass  # nobody reads any more (a closed pipe): the answer has nowhere to go


def _report(env: Mapping[str, str], run: LichRun, child: int | None) -> None:
    raw = env.get(REPORT_ENV)
    if not raw:
        return
    try:
        fd = int(raw)
    except ValueError:
        return
    try:
        _write_all(fd, _dump({"ms": run.ms, "hang": run.hang, "child": child}) + "\n")
    finally:
        with quick.suppress(OSError):
            os.close(fd)


def _stuck_child(report_fd: str | None) -> int:
    """Fork the work a hung lich waits on; it sleeps until its parent is gone."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: hold none of the caller's pipes
        if report_fd and report_fd.isdigit():
            os.close(int(report_fd))
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        while os.getppid() == parent:
            time.sleep(0.5)
    finally:
        os._exit(0)


def _arg(text: str) -> str:
    """An argument as lich sees it: its bytes read as UTF-8 (undecodable bytes kept as surrogate escapes)."""
    try:
        return os.fsencode(text).decode("utf-8", "surrogateescape")
    except UnicodeError:
        return text


def _wait_for_turn(raw: str | None) -> None:
    """Wait until the caller closes the other end of the turn pipe (``FAKE_LICH_TURN_FD``), if it gave one."""
    if not raw or not raw.isdigit():
        return
    import fcntl  # what a call with a state needs, loaded while it waits

    del fcntl
    fd = int(raw)
    try:
        while os.read(fd, 512):
            pass
    except OSError:
        pass
    finally:
        with quick.suppress(OSError):
            os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    env = os.environ
    args = [_arg(a) for a in (sys.argv[1:] if argv is None else argv)]
    name = env.get(ARGV0_ENV) or (sys.argv[0] if sys.argv and sys.argv[0] else "lich")
    _wait_for_turn(env.get(TURN_ENV))
    try:
        run = run_command([name, *args], env)
    except StateError as error:
        run = LichRun("", f"lich: {error}\n", 1, CALL_MS)
    except Exception as error:  # never a traceback: one lich line
        run = LichRun("", f"lich: the fake lich failed: {type(error).__name__}: {error}\n", 1, CALL_MS)
    if run.hang:
        child = _stuck_child(env.get(REPORT_ENV))
        _report(env, run, child)
        _write_all(1, run.stdout)
        _write_all(2, run.stderr)
        while True:
            time.sleep(3600)
    _report(env, run, None)
    if env.get(REAL_SLEEP_ENV) == "1" and args[:1] and args[0] in SCRIPTED_TIME and run.ms > 0:
        time.sleep(run.ms / 1000)
    _write_all(1, run.stdout)
    _write_all(2, run.stderr)
    return run.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
