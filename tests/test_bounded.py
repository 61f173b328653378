"""The fake host leaves nothing behind: replaying the shipped scenarios again and again in one process
keeps the same number of the host's live objects, no shared signal gathers children, and a timer
that repeats for an hour of virtual time keeps one live handle, not one per tick."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent_cards.engine import Event, HookResult
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host.chain import AbortSignal, Invocation
from agent_cards_simulator.host.claude_code import FakeClaudeCode, Session
from agent_cards_simulator.lich.scripts import LichScript
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.scripted_git import GitScript
from agent_cards_simulator.runners.virtual import VirtualExecutor
from agent_cards_simulator.scenario.files import read_checked, scenario_files
from agent_cards_simulator.scenario.reader import DEFAULT_ENV, Scenario
from agent_cards_simulator.scenario.replay import replay

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
TRACKED: tuple[type, ...] = (AbortSignal, asyncio.TimerHandle, FakeClaudeCode, asyncio.Task, Invocation)
PASSES = 5


def live() -> Counter[str]:
    """How many objects of each tracked type are alive, after a full collection."""
    gc.collect()
    counts: Counter[str] = Counter({kind.__name__: 0 for kind in TRACKED})
    for obj in gc.get_objects():
        for kind in TRACKED:
            if isinstance(obj, kind):
                counts[kind.__name__] += 1
    return counts


def shared_signals() -> list[AbortSignal]:
    """Signals kept at module level anywhere in the simulator: they would outlive every replay."""
    return [
        value
        for name, module in list(sys.modules.items())
        if name == "agent_cards_simulator" or name.startswith("agent_cards_simulator.")
        for value in vars(module).values()
        if isinstance(value, AbortSignal)
    ]


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return [read_checked(file) for file in scenario_files([SCENARIOS])]


def test_replaying_every_scenario_five_times_leaves_nothing_behind(scenarios: list[Scenario]) -> None:
    assert scenarios
    after: list[Counter[str]] = []
    for _ in range(PASSES):
        for scenario in scenarios:
            replay(scenario)
        after.append(live())
    assert after[-1] == after[0], f"after pass 1: {dict(after[0])}; after pass {PASSES}: {dict(after[-1])}"
    # nothing of a replay outlives it: a signal still alive would be a shared one, and it holds no children
    assert after[-1]["AbortSignal"] == len(shared_signals())
    assert after[-1]["FakeClaudeCode"] == 0 and after[-1]["Invocation"] == 0


def test_a_signal_keeps_no_child_nobody_holds() -> None:
    """A turn lives through many hook runs: it keeps only the children still held, and still aborts them."""
    turn = AbortSignal()
    held = AbortSignal(turn)
    dropped = weakref.ref(AbortSignal(turn))
    gc.collect()
    assert dropped() is None
    turn.abort()
    assert held.aborted


async def test_a_timer_that_repeats_for_an_hour_keeps_only_its_live_handle() -> None:
    """``$.clock.every(5000)`` for an hour: 720 ticks, and at any time one handle held for it."""
    ticks: list[int] = []
    held: list[int] = []

    async def on_start(host: Any, e: Event, next: Any) -> HookResult:
        clock = host.clock

        async def tick() -> None:
            ticks.append(clock.now())

        clock.every(5000, tick)
        return dict(await next(e))

    def register(on: Any) -> None:
        on("session.start", on_start)

    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)  # tests/conftest.py: an hour costs nothing real
    world = LichWorld(LichScript())
    executor = VirtualExecutor(world, GitScript(), True, loop.now_ms)
    host = FakeClaudeCode(loop, Session(env=dict(DEFAULT_ENV)), executor, register)
    try:
        await host.start_session(True)
        for _ in range(60):
            await asyncio.sleep(60)
            held.append(live()["TimerHandle"])
        await asyncio.sleep(1)  # the tick due at the hour's last instant runs
    finally:
        await host.close()
    assert len(ticks) == 720 and ticks[-1] == 3_600_000
    assert max(held) <= 2, held  # the tick's next handle (and the sleep of this test)
