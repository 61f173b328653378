"""``process.run`` in the fake host: the seam between the host and the lich side of a replay.

The host checks a call (:func:`agent_cards.host_contract.host_check`), then hands it to an executor
(``agent_cards_simulator.runners``): the in-process runner answers from the fake lich's model and a
scripted git on virtual time; the real-process runner runs real programs. Both answer with a
:class:`ProcessResult` or raise :class:`ProcessError` in the engine's words, which
:mod:`agent_cards.host_contract` writes for every host (the bridge in the real engine as well).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol

from agent_cards.engine import ProcessResult
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.lich.output import Note


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
