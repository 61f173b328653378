"""The session host's life as a process: its private folder, the stale folders it prunes, its parent, its exit.

The socket lives in a fresh folder of mode 0700, named after this process (``agent-cards-<pid>-…``) in the
user's runtime folder (else the temp folder). Every exit removes it; a host that was killed leaves it
behind, and the next host to start removes the folders of hosts that no longer run. The host serves
until its parent (the Claude Code that spawned it) is gone.

:func:`alive` is also how the simulator's fake lich tells whether a process it started still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping

FOLDER_PREFIX = "agent-cards-"
PARENT_POLL_S = 1.0  # how often the host looks whether its parent is still there

_FOLDERS: list[str] = []  # this process's folders, removed at every exit


def runtime_root(env: Mapping[str, str]) -> str:
    """Where the private folder goes: the user's runtime folder when there is one, else the temp folder."""
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK | os.X_OK):
        return runtime
    return tempfile.gettempdir()


def make_folder(root: str) -> str:
    """A fresh folder of mode 0700 named after this process; stale ones of dead hosts are removed first. A root
    that takes no folder (full, read-only) gives way to the temp folder, so the session keeps its host."""
    fallback = tempfile.gettempdir()
    for where in dict.fromkeys((root, fallback)):
        prune(where)
        try:
            folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir=where)
        except OSError as error:
            if where == fallback:
                raise
            log(f"no private folder in {where} ({error.strerror or error}); using {fallback}")
            continue
        os.chmod(folder, 0o700)
        return folder
    raise OSError(f"no private folder in {root}")  # not reached: the fallback raised


def parent_is_gone(parent: int, env: Mapping[str, str]) -> bool:
    """Whether the Claude Code this host was started by is already gone: its parent no longer runs (or this
    host was adopted by init), or the Claude Code the engine named (``CLAUDE_PID``) no longer runs."""
    named = env.get("CLAUDE_PID") or ""
    if named.isdigit() and not alive(int(named)):
        return True
    return parent <= 1 or not alive(parent)


def prune(root: str) -> None:
    """Remove the folders under ``root`` of this user's hosts that no longer run."""
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
            if not pid.isdigit() or os.lstat(path).st_uid != os.getuid() or alive(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that still runs. A zombie (ended, not yet reaped by its parent) does not;
    another user's process does. Where there is no ``/proc``, whether the process exists at all."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            status = fh.read()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):  # a /proc that lists every process: this one is gone
            return False
    except OSError:
        pass
    else:
        fields = status.rpartition(b")")[2].split()  # the state follows the command's name, in parentheses
        if fields:
            return fields[0] not in (b"Z", b"X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def parent_gone(parent: int) -> None:
    """Return once ``parent`` is no longer this process's parent (it ended: another process adopted this one)."""
    while os.getppid() == parent:
        await asyncio.sleep(PARENT_POLL_S)


def remove_at_exit(folder: str) -> None:
    _FOLDERS.append(folder)


def cleanup() -> None:
    """Remove this process's folders (every exit calls this)."""
    for folder in _FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)
    _FOLDERS.clear()


def exit_now(code: int = 0) -> None:
    """End at once (stdout is gone: nobody reads this host any more), the folders removed."""
    cleanup()
    os._exit(code)


def log(line: str) -> None:
    """What went wrong outside any dispatch (a timer, the mod's resume), as a line on stderr."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"agent-cards bridge: {line}\n")
        sys.stderr.flush()


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
