"""The simulator runs on virtual time only: with the wall clock frozen, a scenario still covers an hour.

If anything in a replay waited on real time (a real ``asyncio.sleep``, a loop reading the monotonic
clock), a frozen clock would hang it; and a real ``time.sleep`` is refused outright here.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from freezegun import freeze_time

from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import replay

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
