"""The CLI per scenario: ``agent-cards replay scenarios`` and pytest's scenario tier, start-up included once.

pytest's tier is judged against pytest itself: the same pytest, plugins and options over as many empty
tests is its floor, and the goal is a ratio to that floor taken within each round. The floor reads this
project's own pytest configuration (``-c pyproject.toml``: its addopts, asyncio mode and scenario folders),
so the two differ only in their tests.

Each is one command over every shipped scenario; the figure is its wall time over the number of
scenarios. ``replay`` spreads the scenarios over one worker per core (``--jobs``); the same with one
job, every scenario in one process, and the in-process cost of one replay (parse, replay, transcript)
are shown beside it. The CLI's floor is the same reading and replaying in this process, in the same
round, shared by as many workers: the work it cannot do without, before any start-up, fork or output.

The commands run as an installed package runs: with its bytecode cached (``pip install`` compiles
it; the unrecorded first round writes it here), even where the calling environment turns bytecode
writing off, which would otherwise time the compiling of every module on every run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from agent_cards_simulator.scenario.files import read_checked, scenario_files
from agent_cards_simulator.scenario.replay import replay
from agent_cards_simulator.workers import default_jobs
from bench.figures import Figure, command, interleaved, ratios

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


#: pytest's own floor: the same pytest, plugins and options, over as many tests that do nothing.
EMPTY_TESTS = """import pytest


@pytest.mark.parametrize("n", range({count}))
def test_nothing(n: int) -> None:
    pass
"""


def per_scenario(rounds: int) -> list[Figure]:
    files = scenario_files([SCENARIOS])
    count = len(files)
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["AGENT_CARDS_E2E"] = "0"
    pytest = [str(bindir / "pytest"), "-q", "-p", "no:cacheprovider"]
    with tempfile.TemporaryDirectory(prefix="agent-cards-bench-") as scratch:
        empty = Path(scratch) / "test_empty.py"
        empty.write_text(EMPTY_TESTS.format(count=count), encoding="utf-8")
        times = interleaved({
            "replay": command([str(bindir / "agent-cards"), "replay", str(SCENARIOS)], env),
            "replay, one job": command([str(bindir / "agent-cards"), "replay", "--jobs", "1", str(SCENARIOS)], env),
            "pytest": command([*pytest, str(SCENARIOS)], env),
            "floor": command([*pytest, "-c", str(ROOT / "pyproject.toml"), "--rootdir", scratch, str(empty)], env),
            "in process": lambda: [replay(read_checked(path)) for path in files],
        }, rounds)
    one = []
    for _ in range(max(5, rounds)):
        begun = time.perf_counter()
        for path in files:
            replay(read_checked(path))
        one.append((time.perf_counter() - begun) * 1000 / count)
    floor = [t * 1000 / count for t in times["floor"]]
    floor_ms = sorted(floor)[len(floor) // 2]
    jobs = default_jobs()
    shared = [t * 1000 / count / jobs for t in times["in process"]]
    return [
        Figure(f"CLI agent-cards replay scenarios, per scenario ({count})", [t * 1000 / count for t in times["replay"]],
               "ms", 2.0, note=f"--jobs {jobs}: one worker per core"),
        Figure("CLI its floor: the same replays in this process ÷ workers, per scenario", shared, "ms", None,
               note=f"read and replay alone, shared by {jobs} workers, no start-up"),
        Figure("CLI agent-cards replay scenarios ÷ its floor",
               [r * jobs for r in ratios(times, "replay", "in process")], "x", None, note="in the same round"),
        Figure("CLI the same with --jobs 1, per scenario", [t * 1000 / count for t in times["replay, one job"]], "ms",
               None, note="every scenario in one process"),
        Figure("CLI pytest scenarios ÷ pytest's floor", ratios(times, "pytest", "floor"), "x", 1.5,
               note="the same pytest over as many empty tests, in the same round"),
        Figure("CLI pytest scenarios, per scenario", [t * 1000 / count for t in times["pytest"]], "ms", None,
               note=f"pytest's own floor is {floor_ms:.2f} ms a test (next line)"),
        Figure(f"CLI pytest floor: {count} empty tests, per test", floor, "ms", None,
               note="start-up and per-item cost of pytest and its plugins alone"),
        Figure("CLI pytest scenarios above the floor, per scenario",
               [(a - b) * 1000 / count for a, b in zip(times["pytest"], times["floor"], strict=True)], "ms", None,
               note="the scenario tier's own cost: imports, reading, replay, snapshot"),
        Figure("CLI one replay in process (read, replay, transcript)", one, "ms", None),
    ]
