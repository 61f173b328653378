"""P4: eight parallel Agent calls whose lich opens each sleep one real second, replayed with real processes.

Run one after another they would take eight seconds. The figure is the wall time of the whole replay
(scratch repository and lich state included); the goal: all eight answered within 1.1 s, which needs
their start-ups to overlap (tests/test_modes.py checks the overlap on the times the processes record).
"""

from __future__ import annotations

import time

from agent_cards_simulator.runners.processes import replay_processes
from bench.figures import Figure
from bench.in_process import parallel

CALLS, OPEN_MS = 8, 1000


def _timed(real_sleep: bool) -> float:
    case = parallel(CALLS, OPEN_MS)
    begun = time.perf_counter()
    result = replay_processes(case, real_sleep=real_sleep)
    elapsed = time.perf_counter() - begun
    answers = [e["t"] for e in result.events if e["kind"] == "answer"]
    if not result.passed or answers != [OPEN_MS] * CALLS:
        raise SystemExit(f"bench: the parallel replay went wrong: {result.failures} answers at {answers}")
    return elapsed


def parallel_opens(rounds: int) -> list[Figure]:
    _timed(real_sleep=False)  # warm the caches
    slept, bare = [], []
    for _ in range(rounds):
        slept.append(_timed(real_sleep=True))
        bare.append(_timed(real_sleep=False))
    return [
        Figure("P4 eight parallel 1 s opens, real processes", slept, "s", 1.1),
        Figure("P4 the same replay without the real sleeps", bare, "s", None),
        # what the sleeps add, round by round: 1 s when the eight overlap fully, 8 s run one after another
        Figure("P4 what the sleeps add: with them − without", [a - b for a, b in zip(slept, bare, strict=True)],
               "s", None, note="1 s when the eight sleeps overlap fully"),
    ]
