"""The mod's state in a file, shared by the hook processes of one Claude Code session.

A command hook lives for one event, so what the mod remembers (that the session is interactive, the
workers it opened) is kept in ``<data dir>/sessions/<session id>.json``. Claude Code runs the hooks of
parallel tool calls at once, so every change is one read-modify-write under an exclusive ``fcntl``
lock on a lock file beside it, and every write goes to a temporary file that ``os.replace`` puts in
place: a reader never sees half a file and needs no lock. A file that cannot be read (missing when it
should exist) is read as the empty state, with one line on stderr; it never fails the call.

A file that is there but cannot be used (not JSON, not an object, nested too deep, over ``MAX_BYTES``,
or not a regular file at all: a pipe, a device, a folder) is set aside, renamed ``<file>.unusable-<ns>``
with one warning, and the state starts empty: the next write rebuilds it, so nothing fails for good.
It is opened without blocking (a pipe in its place is not waited for). A field of the wrong type is
warned about and read as its default.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from contextlib import suppress

from agent_cards import quick_json as json
from agent_cards.state import ModState

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 1 << 20  # the state of one session is a few hundred bytes per worker
STALE_SECONDS = 30 * 24 * 3600  # a session file untouched this long is dropped at a SessionStart
_UNSAFE = "/\\\0"


class FileStore:
    """A :class:`agent_cards.state.StateStore` in one JSON file.

    ``expect_file``: a missing file is worth a warning (it is not, before the session's first write).
    ``report`` shows a warning (the hook writes it on stderr).
    """

    def __init__(self, path: str, *, report: Callable[[str], None], expect_file: bool = True) -> None:
        self.path = path
        self.lock_path = path + ".lock"
        self.expect_file = expect_file
        self.report = report

    def get(self) -> ModState:
        state = self._read()
        if isinstance(state, Unusable):  # set aside under the lock, so a concurrent good write is never moved
            with self._locked():
                state = self._read()
                if isinstance(state, Unusable):
                    return self._set_aside(state.why)
        return state

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        with self._locked():
            read = self._read()
            state = change(self._set_aside(read.why) if isinstance(read, Unusable) else read)
            self._write(state)
            self.expect_file = True
            return state

    def _locked(self) -> _Locked:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        return _Locked(self._lock_fd())

    def _lock_fd(self) -> int:
        """The lock file, opened without blocking; anything but a regular file there is set aside first."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        for _ in range(2):
            try:
                fd = os.open(self.lock_path, flags, 0o600)
            except OSError as error:  # a folder, a symlink: moved aside, then made again
                why = error.strerror or str(error)
            else:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    return fd
                os.close(fd)
                why = "not a regular file"
            aside = f"{self.lock_path}.unusable-{time.time_ns()}"
            os.rename(self.lock_path, aside)
            self.report(f"the lock file {self.lock_path} could not be used ({why}); set aside as {aside}")
        return os.open(self.lock_path, flags, 0o600)

    def _read(self) -> ModState | Unusable:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            if self.expect_file:
                self.report(f"no state file at {self.path}; starting from an empty state")
            return ModState()
        except OSError as error:  # a symlink loop, no permission
            return Unusable(error.strerror or str(error))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return Unusable("not a regular file")
            if info.st_size > MAX_BYTES:
                return Unusable(f"{info.st_size} bytes, over {MAX_BYTES}")
            raw = os.read(fd, MAX_BYTES + 1)
        except OSError as error:
            return Unusable(error.strerror or str(error))
        finally:
            os.close(fd)
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            data = None
        if not isinstance(data, dict):
            return Unusable("not a JSON object")
        return ModState.from_json(data, lambda why: self.report(f"the state file {self.path}: {why}"))

    def _set_aside(self, why: str) -> ModState:
        """Move an unusable state file out of the way (one warning); the state starts empty."""
        aside = f"{self.path}.unusable-{time.time_ns()}"
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return ModState()  # another process set it aside meanwhile
        except OSError as error:
            self.report(f"the state file {self.path} cannot be used ({why}) nor set aside ({error.strerror}); "
                        "starting from an empty state")
            return ModState()
        self.report(f"the state file {self.path} could not be used ({why}); set aside as {aside}, starting from an "
                    "empty state")
        return ModState()

    def _write(self, state: ModState) -> None:
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(temp, "w", encoding="utf-8") as fh:
                json.dump(state.to_json(), fh, separators=(",", ":"))
            os.replace(temp, self.path)
        except BaseException:
            with suppress(OSError):
                os.unlink(temp)
            raise


class _Locked:
    """An exclusive ``flock`` on an open lock file, for one ``with``: closing the descriptor releases it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        os.close(self.fd)


class Unusable:
    """A state file that is there but cannot be used, and why."""

    def __init__(self, why: str) -> None:
        self.why = why


def session_file(data_dir: str, session_id: str) -> str | None:
    """The state file of one session, or None when the id cannot name a file."""
    if not session_id or session_id in (".", "..") or any(c in _UNSAFE for c in session_id) or len(session_id) > 200:
        return None
    return os.path.join(data_dir, "sessions", f"{session_id}.json")


def prune(data_dir: str, keep: str, now: float | None = None) -> None:
    """Drop the files of sessions none of whose files changed for ``STALE_SECONDS``; never ``keep``'s."""
    folder = os.path.join(data_dir, "sessions")
    cutoff = (time.time() if now is None else now) - STALE_SECONDS
    keep_stem = os.path.basename(keep).split(".json")[0]
    sessions: dict[str, list[tuple[str, float]]] = {}
    with suppress(OSError):
        for entry in os.scandir(folder):
            with suppress(OSError):
                if entry.is_file():
                    sessions.setdefault(entry.name.split(".json")[0], []).append((entry.path, entry.stat().st_mtime))
    for stem, files in sessions.items():
        if stem != keep_stem and max(mtime for _, mtime in files) < cutoff:
            for path, _ in files:
                with suppress(OSError):
                    os.unlink(path)
