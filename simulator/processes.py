"""``process.run`` in the fake host: the engine's host checks and timeouts, then an executor.

The executor is the seam between the two replay modes: :class:`VirtualExecutor` answers from the fake
lich's model and a scripted git on virtual time; a real-process executor runs real programs. Both
answer with a :class:`ProcessResult` or raise :class:`ProcessError` with the engine's wording.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_cards.engine import MAX_TIMEOUT_MS, ProcessError, ProcessResult
from simulator.chain import AbortSignal
from simulator.lich import LichWorld, Note

OUTPUT_CAP = 4 * 1024 * 1024  # 4 MiB per stream, measured
GIT_MS = 5
NOT_A_REPO = "fatal: not a git repository (or any of the parent directories): .git\n"


def host_check(argv: object, timeout_ms: object) -> None:
    """The engine's host checks on ``process.run`` (measured wording)."""
    if not isinstance(argv, list | tuple) or not argv or not all(isinstance(a, str) for a in argv) or not argv[0]:
        raise ProcessError(
            "process.run: takes argv, a non-empty list of strings naming the command first (host check)", "host"
        )
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ProcessError("process.run: init.timeoutMs is a whole number of ms, 1 to 600000 (host check)", "host")


def _name(argv: Sequence[str]) -> str:
    return os.path.basename(argv[0]) or argv[0]


def timed_out(argv: Sequence[str], timeout_ms: int) -> ProcessError:
    return ProcessError(f"$.process.run({_name(argv)}) aborted: still running after {timeout_ms}ms", "timeout")


def interrupted(argv: Sequence[str]) -> ProcessError:
    return ProcessError(f"$.process.run({_name(argv)}) aborted: the call it ran for was interrupted", "aborted")


def not_found(argv: Sequence[str]) -> ProcessError:
    return ProcessError(
        f'$.process.run({argv[0]}) failed to start: ENOENT: Executable not found in $PATH: "{argv[0]}"', "start"
    )


def capped(stdout: str, stderr: str, exit_code: int) -> ProcessResult:
    out, err = stdout.encode(), stderr.encode()
    return ProcessResult(
        exit_code=exit_code,
        stdout=out[:OUTPUT_CAP].decode(errors="ignore"),
        stderr=err[:OUTPUT_CAP].decode(errors="ignore"),
        stdout_truncated=len(out) > OUTPUT_CAP,
        stderr_truncated=len(err) > OUTPUT_CAP,
    )


async def wait_unless_aborted(ms: int, signal: AbortSignal) -> None:
    """Wait ``ms`` of (virtual) time, or less if ``signal`` is aborted first."""
    waiter = signal.wait()
    timer = asyncio.get_running_loop().call_later(ms / 1000, _resolve, waiter)
    try:
        await waiter
    finally:
        timer.cancel()
        signal.forget(waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class NoteSource(Protocol):
    """Where the host learns of lich's notes: the fake lich's world, or its state on disk (``--processes``)."""

    def next_note_at(self) -> int | None: ...

    def notes_due(self, until_ms: int) -> list[Note]: ...


class Executor(NoteSource, Protocol):
    """The lich side of a replay: it answers the host's process runs, and says when lich types a note."""

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult: ...


@dataclass(frozen=True)
class GitScript:
    """What ``git branch --show-current`` does in the session's directory."""

    branch: str | None = "main"  # None: a detached HEAD (exit 0, nothing printed)
    exit: int = 0
    stderr: str = ""
    missing: bool = False  # git is not on PATH: the run fails to start

    def run(self, argv: Sequence[str]) -> tuple[int, str, str]:
        if self.exit != 0:
            return self.exit, "", self.stderr or NOT_A_REPO
        if list(argv[1:]) == ["branch", "--show-current"]:
            return 0, f"{self.branch}\n" if self.branch else "", ""  # detached: git prints nothing
        return 1, "", f"git: '{' '.join(argv[1:])}' is not scripted in this scenario\n"


class VirtualExecutor:
    """Answers from the fake lich's model and the scripted git, taking their time on the virtual clock."""

    def __init__(self, world: LichWorld, git: GitScript, lich_installed: bool, now_ms: Callable[[], int]) -> None:
        self.world = world
        self.git = git
        self.lich_installed = lich_installed
        self._now = now_ms

    def next_note_at(self) -> int | None:
        return self.world.next_note_at()

    def notes_due(self, until_ms: int) -> list[Note]:
        return self.world.notes_due(until_ms)

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult:
        if argv[0] == "git" and not self.git.missing:
            exit_code, stdout, stderr = self.git.run(argv)
            ms: int | None = GIT_MS
        elif argv[0] == env.get("LICH_BIN") and self.lich_installed:
            run = self.world.run(argv, env, self._now())
            exit_code, stdout, stderr = run.exit_code, run.stdout, run.stderr
            ms = None if run.hang else run.ms
        else:
            raise not_found(argv)
        waited = timeout_ms if ms is None else min(ms, timeout_ms)
        await wait_unless_aborted(waited, signal)
        if signal.aborted:
            raise interrupted(argv)
        if ms is None or ms > timeout_ms:
            raise timed_out(argv, timeout_ms)
        return capped(stdout, stderr, exit_code)
