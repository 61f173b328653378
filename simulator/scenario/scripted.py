"""Runs a scenario answers by their argv or by their order, before the lich side sees them.

``session.git.runs`` answers a git command line by its argv; ``lich.lists`` items with ``read: N``
answer the n-th ``lich sessions`` read. Both are the scenario's own script, so they are answered here,
in front of any executor (the in-process one or ``--processes``), on the virtual clock; every other run
goes on to that executor unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_cards.engine import ProcessResult
from agent_cards.host_contract import interrupted, not_found, timed_out
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.host.process_run import (
    Executor,
    RunOutputs,
    wait_unless_aborted,
)
from agent_cards_simulator.lich.output import CALL_MS, Note
from agent_cards_simulator.lich.scripts import ListScript
from agent_cards_simulator.runners.scripted_git import GIT_MS, GitRun
from agent_cards_simulator.scenario.model import Scenario


class ScriptedRuns:
    """An :class:`~..host.process_run.Executor` that answers the scenario's own scripted runs first."""

    def __init__(self, inner: Executor, git_runs: tuple[GitRun, ...], reads: Mapping[int, ListScript],
                 git_missing: bool = False) -> None:
        self.inner = inner
        self.git_runs = git_runs
        self.reads = dict(reads)
        self.git_missing = git_missing
        self.sessions_read = 0
        self._outputs = RunOutputs()

    def next_note_at(self) -> int | None:
        return self.inner.next_note_at()

    def notes_due(self, until_ms: int) -> list[Note]:
        return self.inner.notes_due(until_ms)

    def _answer(self, argv: list[str], env: Mapping[str, str]) -> tuple[int, str, str, int] | None:
        if argv and argv[0] == "git":
            if self.git_missing:
                raise not_found(argv)
            for run in self.git_runs:
                if list(run.argv) == argv:
                    return run.exit, run.stdout, run.stderr, GIT_MS
        elif argv and argv[0] == env.get("LICH_BIN") and argv[1:2] == ["sessions"]:
            self.sessions_read += 1
            window = self.reads.get(self.sessions_read)
            if window is not None:
                return window.exit, window.stdout, window.stderr, CALL_MS
        return None

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult:
        answer = self._answer(argv, env)
        if answer is None:
            return await self.inner.execute(argv, env, timeout_ms, signal)
        exit_code, stdout, stderr, ms = answer
        await wait_unless_aborted(min(ms, timeout_ms), signal)
        if signal.aborted:
            raise interrupted(argv)
        if ms > timeout_ms:
            raise timed_out(argv, timeout_ms)
        return self._outputs.result(stdout, stderr, exit_code)


def scripted(scenario: Scenario, inner: Executor) -> Executor:
    """``inner``, or ``inner`` behind the scenario's own scripted runs when it has any."""
    reads = {w.read: w for w in scenario.lich.lists if w.read is not None}
    runs = scenario.session.git.runs
    if not reads and not runs:
        return inner
    return ScriptedRuns(inner, runs, reads, scenario.session.git.missing)
