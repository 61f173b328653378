"""Eight parallel Agent calls whose lich opens each really sleep one second, replayed with real processes.

    python bench/parallel_real.py [RUNS]      (default 5)

Each of the eight opens is a real ``fake-lich`` process that sleeps its scripted 1000 ms for real
(``FAKE_LICH_REAL_SLEEP``), so run one after another they would take eight seconds. The figure is the
wall time of the whole replay (scratch repository and lich state included), median of RUNS; the
goal is all eight answered within 1.5 s. The same replay without the real sleeps is timed too: the
difference is what the sleeps cost once they overlap.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence

from simulator.runners.processes import replay_processes
from simulator.scenario.reader import Scenario, read

CALLS = 8
OPEN_MS = 1000


def scenario() -> Scenario:
    calls = "\n".join(f"      - call: {{description: Task {n}, prompt: Do task {n}}}" for n in range(1, CALLS + 1))
    text = f"""title: Eight calls at once, each open sleeping one real second
clauses: [BENCH]
lich:
  open: {{ms: {OPEN_MS}}}
steps:
  - parallel:
{calls}
"""
    return read("parallel-real.yaml", text=text)


def check(events: list[dict[str, object]]) -> None:
    """The transcript of every run: all opens start at t=0 and all calls are answered at t=OPEN_MS."""
    runs = [e["t"] for e in events if e["kind"] == "run"]
    answers = [e["t"] for e in events if e["kind"] == "answer"]
    if runs != [0] * CALLS or answers != [OPEN_MS] * CALLS:
        raise SystemExit(f"parallel_real: unexpected transcript: runs at {runs}, answers at {answers}")


def timed(case: Scenario, real_sleep: bool) -> float:
    started = time.perf_counter()
    result = replay_processes(case, real_sleep=real_sleep)
    elapsed = time.perf_counter() - started
    if not result.passed:
        raise SystemExit(f"parallel_real: the replay failed: {result.failures}")
    check(result.events)
    return elapsed


def main(argv: Sequence[str]) -> int:
    runs = int(argv[0]) if argv else 5
    case = scenario()
    timed(case, real_sleep=False)  # warm the caches once
    slept = [timed(case, real_sleep=True) for _ in range(runs)]
    bare = [timed(case, real_sleep=False) for _ in range(runs)]
    print(f"{CALLS} parallel calls, opens of {OPEN_MS} ms each, {runs} runs")
    print(f"with real sleeps:    median {statistics.median(slept):.3f} s  (min {min(slept):.3f}, max {max(slept):.3f})")
    print(f"without real sleeps: median {statistics.median(bare):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
