"""The footer's ``sessions --json`` reads: one at a time, and every 5 s while they are quick (FOOTER-POLL)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

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
