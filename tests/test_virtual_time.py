"""The simulator runs on virtual time only: with the wall clock frozen, a scenario still covers an hour.

If anything in a replay waited on real time (a real ``asyncio.sleep``, a loop reading the monotonic
clock), a frozen clock would hang it; and a real ``time.sleep`` is refused outright here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import time
from typing import Any

import pytest
from freezegun import freeze_time

from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import _end_tasks, replay

HOUR = """
title: one worker, one hour
clauses: [FOOTER-POLL]
lich:
  open: {report: {after: 3000000, text: Done.}}
steps:
  - call: {description: Long job, prompt: Run the long job}
  - until: 3600000
"""


def _no_real_sleep(seconds: float) -> None:
    raise AssertionError(f"a real sleep of {seconds} s in the simulator")


def test_an_hour_of_virtual_time_under_a_frozen_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "sleep", _no_real_sleep)
    with freeze_time("2026-01-01 00:00:00"):
        first = replay(read("hour.yaml", HOUR))
    with freeze_time("2031-06-15 12:34:56"):
        second = replay(read("hour.yaml", HOUR))
    assert first.passed, first.failures
    assert first.events == second.events  # nothing depends on the date or the wall clock
    assert first.events[-1]["t"] >= 3_000_000
    reads = [e["t"] for e in first.events if e["kind"] == "run" and "sessions" in e["argv"]]
    assert reads[:3] == [5_800, 10_800, 15_800]
    assert all(b - a == 5_000 for a, b in itertools.pairwise(reads))


async def test_timers_due_at_the_same_instant_run_in_the_order_set() -> None:
    """First in, first out among equal deadlines, whatever other timers are set in between."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)  # tests/conftest.py
    fired: list[object] = []
    for n in range(8):
        loop.call_later(1.0, fired.append, n)
        loop.call_later(0.5 + n / 100, lambda: None)  # others in between reshape the heap
        loop.call_later(2.0, fired.append, f"late {n}")
    await asyncio.sleep(3)
    assert fired == [*range(8), *(f"late {n}" for n in range(8))]


async def test_instant_over_waits_for_every_turn_due_now_and_moves_no_clock() -> None:
    """A chain of tasks that takes many turns at one instant has run whole when ``instant_over`` returns;
    a timer due later has not fired, and the clock stands where it was."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)
    done: list[str] = []

    async def many_turns(depth: int) -> None:
        for _ in range(50):
            await asyncio.sleep(0)
        if depth:
            await loop.create_task(many_turns(depth - 1))
        done.append(f"chain {depth}")

    loop.call_later(0.001, done.append, "later")
    chain = loop.create_task(many_turns(3))
    before = loop.now_ms()
    await loop.instant_over()
    assert chain.done()
    assert done == ["chain 0", "chain 1", "chain 2", "chain 3"]
    assert loop.now_ms() == before
    await asyncio.sleep(0.001)
    assert done[-1] == "later"


ENDS_AS_THE_OPEN_ENDS = """
title: the last step ends at the very instant the open ends
clauses: [FALL-ESC-OPEN]
lich:
  open: {ms: 1663}
steps:
  - {call: {description: Fix auth, prompt: Fix the auth flow}, esc_after: 31}
  - wait: 1632
"""


def test_a_run_ending_as_the_scenario_ends_still_counts_its_worker() -> None:
    """The open answered at the instant the last wait ends: its worker is counted and drawn before the
    replay stops, as in the real session the scenario was reported from."""
    replayed = replay(read("ends.yaml", ENDS_AS_THE_OPEN_ENDS))
    assert replayed.passed, replayed.failures
    run = next(e for e in replayed.events if e["kind"] == "run" and "open" in e["argv"])
    footers = [e for e in replayed.events if e["kind"] == "footer"]
    assert run["t"] + run["ms"] == replayed.events[-1]["t"] == 1663
    assert footers[-1]["line"] == "lich: 1 worker"


def test_an_interrupted_replay_ends_its_tasks_and_leaves_the_one_that_cannot_end_unreported(
        caplog: pytest.LogCaptureFixture) -> None:
    # What a Ctrl-C leaves: a task that unwinds when cancelled, and one that never will (as a task whose
    # wake-up the interrupt took off the loop's ready queue before it ran).
    loop = VirtualEventLoop()

    async def unwinds() -> None:
        await asyncio.sleep(60)

    async def never_ends() -> None:
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await loop.create_future()

    ends, stays = loop.create_task(unwinds()), loop.create_task(never_ends())
    loop.run_until_complete(asyncio.sleep(0))
    _end_tasks(loop)
    assert ends.cancelled() and not stays.done()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        loop.close()
        del ends, stays
        gc.collect()
    assert caplog.records == []


def test_a_ctrl_c_as_the_replay_makes_its_own_task_leaves_no_report(caplog: pytest.LogCaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The interrupt lands in the loop's call_soon as run_until_complete makes the replay's task: that task is
    # never scheduled nor among the loop's tasks, and its coroutine is closed unstarted.
    original = VirtualEventLoop.call_soon

    def interrupted(self: VirtualEventLoop, *args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(VirtualEventLoop, "call_soon", original)
        raise KeyboardInterrupt

    monkeypatch.setattr(VirtualEventLoop, "call_soon", interrupted)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with pytest.raises(KeyboardInterrupt):
            replay(read("ends.yaml", ENDS_AS_THE_OPEN_ENDS))
        gc.collect()
    assert caplog.records == []


def test_a_loop_still_reports_a_task_nobody_interrupted(caplog: pytest.LogCaptureFixture) -> None:
    loop = VirtualEventLoop()
    _end_tasks(loop)

    async def waits() -> None:
        await loop.create_future()

    task = loop.create_task(waits())
    loop.run_until_complete(asyncio.sleep(0))
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        loop.close()
        del task
        gc.collect()
    assert [r.getMessage().splitlines()[0] for r in caplog.records] == ["Task was destroyed but it is pending!"]
