"""The cold-start measure the benches share: commands run in turn, interleaved, compared by median.

Interleaving makes a busy machine slow every command alike; the first round only warms the caches
(and writes bytecode) and is not counted.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    argv: Sequence[str]
    env: Mapping[str, str]
    stdin: bytes = b""
    silent: bool = False  # it must exit 0 and print nothing (a check that the command did what is timed)


def once(name: str, case: Case) -> float:
    started = time.perf_counter()
    done = subprocess.run(list(case.argv), input=case.stdin, env=dict(case.env), capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if case.silent and (done.returncode != 0 or done.stdout or done.stderr):
        raise SystemExit(f"{name}: answered {done.returncode} {done.stdout!r} {done.stderr!r}")
    return elapsed


def measure(cases: Mapping[str, Case], runs: int) -> dict[str, float]:
    """The median wall time, in seconds, of each case over ``runs`` interleaved rounds."""
    for name, case in cases.items():
        once(name, case)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, case in cases.items():
            times[name].append(once(name, case))
    return {name: statistics.median(values) for name, values in times.items()}


def report(python: str, runs: int, medians: Mapping[str, float], base: str) -> None:
    width = max(map(len, medians))
    print(f"interpreter: {python}; {runs} runs of each, interleaved")
    for name, median in medians.items():
        print(f"{name:<{width}} median {median * 1000:7.1f} ms   ratio {median / medians[base]:4.2f}x")
