"""How fast the in-process bench replays scenarios, as medians of wall time.

    python bench/replay_speed.py [RUNS]      (default 200 runs of each measure)

Printed:
- per shipped scenario, the median time to parse + replay + build the transcript (goal ≤ 5 ms for an
  ordinary scenario), and the median over all of them;
- a scenario spanning one hour of virtual time with a worker polled every 5 s (goal < 100 ms);
- eight parallel Agent calls whose opens each take one second: the virtual time by which all eight
  are answered (goal ≤ 1200 ms) and the wall time of the replay;
- polling: how many ``sessions --json`` reads one minute of virtual time costs with 0, 1, 10 and 50
  workers (expected: none with zero, one per 5 s tick otherwise, whatever the number of workers).

Figures are medians; nothing here asserts them (tests check behaviour, this file measures speed).
"""

from __future__ import annotations

import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from simulator.scenario.files import known_clauses, scenario_files
from simulator.scenario.reader import Scenario, read
from simulator.scenario.replay import Replay, replay

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def parse_and_replay(path: Path, text: str, clauses: set[str]) -> Replay:
    return replay(read(path, text, clauses))


def from_text(text: str) -> Scenario:
    return read("bench.yaml", text)


def hour_scenario() -> str:
    return """
title: one worker polled for an hour of virtual time
clauses: [FOOTER-POLL]
lich:
  open: {report: {after: 3590000, text: Done after an hour.}}
steps:
  - call: {description: Long job, prompt: Run the long job}
  - until: 3600000
"""


def parallel_scenario(workers: int, open_ms: int, until_ms: int | None = None) -> str:
    calls = "\n".join(
        f"      - call: {{description: Task {i}, prompt: Do task {i}}}" for i in range(1, workers + 1)
    )
    tail = f"\n  - until: {until_ms}" if until_ms is not None else ""
    return f"""
title: {workers} parallel calls
clauses: [BG-PARALLEL]
lich:
  open: {{ms: {open_ms}}}
steps:
  - parallel:
{calls}{tail}
"""


def polling_reads(workers: int) -> int:
    if workers == 0:
        text = "title: no worker\nclauses: [FOOTER-POLL]\nsteps:\n  - until: 60000\n"
    else:
        text = parallel_scenario(workers, 800, 60800)
    events = replay(from_text(text)).events
    return sum(1 for e in events if e["kind"] == "run" and "sessions" in e["argv"])


def main(argv: list[str]) -> int:
    runs = int(argv[1]) if len(argv) > 1 else 200
    files = scenario_files([SCENARIOS])
    clauses = set(known_clauses(SCENARIOS))
    print(f"replay in process: parse + replay + transcript, median of {runs} runs (goal ≤ 5 ms each)")
    medians = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        ms = median_ms(functools.partial(parse_and_replay, path, text, clauses), runs)
        medians.append((ms, path.relative_to(ROOT)))
    medians.sort(reverse=True)
    for ms, name in medians[:5]:
        print(f"  {ms:7.2f} ms  {name}")
    print(f"  … {len(medians)} scenarios: median {statistics.median(m for m, _ in medians):.2f} ms, "
          f"slowest {medians[0][0]:.2f} ms")

    hour = hour_scenario()
    result = replay(from_text(hour))
    reads = sum(1 for e in result.events if e["kind"] == "run" and "sessions" in e["argv"])
    ms = median_ms(lambda: replay(from_text(hour)), max(20, runs // 10))
    print(f"one hour of virtual time ({reads} sessions reads, {len(result.events)} events): "
          f"median {ms:.2f} ms (goal < 100 ms)")

    eight = parallel_scenario(8, 1000)
    result = replay(from_text(eight))
    answered = [e["t"] for e in result.events if e["kind"] == "answer"]
    ms = median_ms(lambda: replay(from_text(eight)), runs)
    print(f"eight parallel calls, opens of 1000 ms: all {len(answered)} answered by t={max(answered)} ms "
          f"(goal ≤ 1200), replay median {ms:.2f} ms")

    print("polling, one minute of virtual time after the opens: sessions --json reads")
    for workers in (0, 1, 10, 50):
        print(f"  {workers:3d} workers: {polling_reads(workers)} reads (one per 5 s tick when any runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
