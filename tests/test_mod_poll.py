"""The footer's ``sessions --json`` reads: one at a time, and every 5 s while they are quick (FOOTER-POLL)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import pytest

from agent_cards.engine import ProcessResult
from agent_cards.mod import AgentCards
from agent_cards.state import MemoryStore, ModState, Worker
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import replay

SCENARIO = """
title: reads of a slow lich
clauses: [FOOTER-POLL]
lich:
  sessions_ms: {ms}
  open: {{report: {{after: 40000, text: Done.}}}}
steps:
  - call: {{description: Fix the login bug, prompt: Fix the login bug in auth}}
  - wait: 3000
  - call: {{description: Fix the logout bug, prompt: Fix the logout bug in auth}}
  - until: 90000
"""


def _reads(ms: int) -> list[dict[str, Any]]:
    result = replay(read("slow.yaml", SCENARIO.format(ms=ms)))
    assert result.passed, result.failures
    return [e for e in result.events if e["kind"] == "run" and "sessions" in e["argv"]]


@pytest.mark.parametrize("ms", [30, 4000, 4999, 5000, 12000, 30000])
def test_a_read_never_starts_while_another_runs(ms: int) -> None:
    reads = _reads(ms)
    assert len(reads) >= 2
    for before, after in pairwise(reads):
        assert before["ms"] == ms
        assert after["t"] >= before["t"] + before["ms"], (before, after)


@pytest.mark.parametrize("ms", [30, 4000, 4999])
def test_reads_quicker_than_the_period_keep_it(ms: int) -> None:
    starts = [e["t"] for e in _reads(ms)]
    assert starts[0] == 5800  # the first open's track, plus 5 s
    assert {b - a for a, b in pairwise(starts)} == {5000}


@pytest.mark.parametrize(("ms", "gap"), [(5000, 5000), (12000, 15000), (30000, 30000)])
def test_after_a_slow_read_the_next_starts_at_the_next_multiple_of_the_period(ms: int, gap: int) -> None:
    starts = [e["t"] for e in _reads(ms)]
    assert {b - a for a, b in pairwise(starts)} == {gap}


# -- the one watch, on a host whose timers fire by hand --------------------------------------------------------

WORKER = Worker(name="session-5-77aa", label="Session 5", description="Fix the login bug", shared=True)
OTHER = Worker(name="session-6-88bb", label="Session 6", description="Fix the logout bug", shared=True)


class HandHost:
    """Just enough of the engine's Host for the mod's watch: timers kept until :meth:`tick`, every run a
    ``sessions --json`` read that lists ``listed``."""

    def __init__(self, listed: list[str], fail_redraw: bool = False) -> None:
        self.listed = listed
        self.fail_redraw = fail_redraw
        self.timers: list[tuple[int, Callable[[], object]]] = []
        self.reads = 0

    @property
    def env(self) -> HandHost:
        return self

    process = clock = ui = env

    def get(self, name: str, /) -> str | None:
        return None

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = 30_000) -> ProcessResult:
        self.reads += 1
        return ProcessResult(0, json.dumps([{"name": n, "state": "working"} for n in self.listed]), "")

    def invalidate(self, event: str, /) -> None:
        if self.fail_redraw:
            raise RuntimeError("the footer could not be redrawn")

    def now(self) -> int:
        return 0

    def after(self, ms: int, fn: Callable[[], object], /) -> None:
        self.timers.append((ms, fn))

    async def tick(self) -> None:
        """Fire the one armed timer."""
        (_, fn), = self.timers
        self.timers.clear()
        fired = fn()
        if inspect.isawaitable(fired):
            await fired


def watched(*workers: Worker) -> AgentCards:
    return AgentCards(store=MemoryStore(ModState(lich_bin="/opt/lich/bin/lich", workers=workers)))


async def test_a_second_resume_while_the_first_read_is_due_arms_no_second_watch() -> None:
    mod, host = watched(WORKER), HandHost([WORKER.name])
    mod.resume(host)  # type: ignore[arg-type]
    mod.resume(host)  # type: ignore[arg-type]
    assert [ms for ms, _ in host.timers] == [0]


async def test_a_tick_that_finds_no_worker_leaves_the_next_worker_watched() -> None:
    """The worker was stopped between two reads: the tick reads nothing, and a worker counted later is
    read again every 5 s (the watch is not left marked armed)."""
    mod, host = watched(WORKER), HandHost([OTHER.name])
    mod.resume(host)  # type: ignore[arg-type]
    mod.store.update(lambda s: s.without({WORKER.name}))
    await host.tick()
    assert (host.reads, host.timers) == (0, [])
    mod.store.update(lambda s: s.with_worker(OTHER, "/opt/lich/bin/lich"))
    mod.resume(host)  # type: ignore[arg-type]
    await host.tick()
    assert host.reads == 1
    assert [ms for ms, _ in host.timers] == [5_000]


async def test_a_read_whose_redraw_fails_still_arms_the_next() -> None:
    """A fault of the mod's reaches the host's report, and the poll goes on for the worker still listed."""
    mod, host = watched(WORKER, OTHER), HandHost([OTHER.name], fail_redraw=True)
    mod.resume(host)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="redrawn"):
        await host.tick()
    assert mod.store.get().workers == (OTHER,)
    assert [ms for ms, _ in host.timers] == [5_000]
