"""The mod's state in a file, shared by the hook processes of one Claude Code session.

A command hook lives for one event, so what the mod remembers (that the session is interactive, the
workers it opened) is kept in ``<data dir>/sessions/<session id>.json``. Claude Code runs the hooks of
parallel tool calls at once, so every change is one read-modify-write under an exclusive ``fcntl``
lock on a lock file beside it, and every write goes to a temporary file that ``os.replace`` puts in
place: a reader never sees half a file and needs no lock. A file that cannot be read (corrupt, or
missing when it should exist) is read as the empty state, with one line on stderr; it never fails
the call.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator

from agent_cards.state import ModState

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
        return self._read()

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        with self._locked():
            state = change(self._read())
            self._write(state)
            self.expect_file = True
            return state

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _read(self) -> ModState:
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            if self.expect_file:
                self.report(f"no state file at {self.path}; starting from an empty state")
            return ModState()
        except OSError as error:
            self.report(f"cannot read the state file {self.path} ({error.strerror}); starting from an empty state")
            return ModState()
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self.report(f"the state file {self.path} is not a JSON object; starting from an empty state")
            return ModState()
        return ModState.from_json(data)  # tolerant: what it cannot read becomes the empty state

    def _write(self, state: ModState) -> None:
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(temp, "w", encoding="utf-8") as fh:
                json.dump(state.to_json(), fh, separators=(",", ":"))
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise


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
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.is_file():
                    sessions.setdefault(entry.name.split(".json")[0], []).append((entry.path, entry.stat().st_mtime))
    for stem, files in sessions.items():
        if stem != keep_stem and max(mtime for _, mtime in files) < cutoff:
            for path, _ in files:
                with contextlib.suppress(OSError):
                    os.unlink(path)
