"""The in-process runner: the lich side of a replay answered from the fake lich's model and a scripted
git, each taking its time on the virtual clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agent_cards.engine import ProcessResult
from agent_cards.host_contract import interrupted, not_found, timed_out
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.host.process_run import RunOutputs, wait_unless_aborted
from agent_cards_simulator.lich.output import Note
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.scripted_git import GIT_MS, GitScript


class VirtualExecutor:
    """Answers from the fake lich's model and the scripted git, taking their time on the virtual clock.

    ``now_ms`` tells the virtual time in ms (:meth:`~agent_cards_simulator.clock.VirtualEventLoop.now_ms`).
    """

    def __init__(self, world: LichWorld, git: GitScript, lich_installed: bool, now_ms: Callable[[], int]) -> None:
        self.world = world
        self.git = git
        self.lich_installed = lich_installed
        self._now = now_ms
        self._outputs = RunOutputs()

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
        return self._outputs.result(stdout, stderr, exit_code)
