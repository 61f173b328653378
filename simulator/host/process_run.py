"""``process.run`` in the fake host: the engine's host checks and timeouts, then an executor.

The executor is the seam between the host and the lich side of a replay (``agent_cards_simulator.runners``): the
in-process runner answers from the fake lich's model and a scripted git on virtual time; the
real-process runner runs real programs. Both answer with a :class:`ProcessResult` or raise
:class:`ProcessError` with the engine's wording.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Protocol

from agent_cards.engine import MAX_TIMEOUT_MS, ProcessError, ProcessResult
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.lich.output import Note

OUTPUT_CAP = 4 * 1024 * 1024  # 4 MiB per stream, measured
_SURELY_UNDER = OUTPUT_CAP // 4  # characters: UTF-8 spends at most 4 bytes on one


def host_check(argv: object, timeout_ms: object) -> None:
    """The engine's host checks on ``process.run`` (measured wording)."""
    if not isinstance(argv, (list, tuple)) or not argv or not _all_text(argv) or not argv[0]:
        raise ProcessError(
            "process.run: takes argv, a non-empty list of strings naming the command first (host check)", "host"
        )
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ProcessError("process.run: init.timeoutMs is a whole number of ms, 1 to 600000 (host check)", "host")


def _all_text(argv: Sequence[object]) -> bool:
    for a in argv:  # noqa: SIM110 (a loop, not all() over a generator: every run passes here; issue 15)
        if not isinstance(a, str):
            return False
    return True


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
    if len(stdout) <= _SURELY_UNDER and len(stderr) <= _SURELY_UNDER:  # no encoding needed (issue 15)
        return ProcessResult(exit_code, stdout, stderr)
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


class Executor(Protocol):
    """The lich side of a replay: it answers the host's process runs, and says when lich types a note
    (from the fake lich's world, or from its state on disk in ``--processes``)."""

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult: ...

    def next_note_at(self) -> int | None:
        """When lich types its next note at this session's prompt (virtual ms), or None."""
        ...

    def notes_due(self, until_ms: int) -> list[Note]:
        """The notes due by ``until_ms``, each handed out once."""
        ...
