"""A figure beside its goal: min, median and max of its samples, and whether the median holds.

Every sample of a ratio is taken within one round, its two sides run one after the other, so a busy
machine slows both alike; rounds are interleaved for the same reason.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

from agent_cards.record import Value


class Figure(Value):
    name: str
    samples: Sequence[float]
    unit: str  # "x", "ms", "s", "%", "MiB"
    limit: float | None  # the goal: the median at most this; None: shown for comparison only
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def verdict(self) -> str:
        if self.limit is None:
            return ""
        return "PASS" if self.median <= self.limit else "MISS"

    def line(self, width: int) -> str:
        def show(value: float) -> str:
            return f"{value:8.2f}" if abs(value) < 1000 else f"{value:8.0f}"

        goal = "" if self.limit is None else f"≤ {self.limit:g} {self.unit}"
        low, high = show(min(self.samples)).strip(), show(max(self.samples)).strip()
        numbers = f"{show(self.median)} {self.unit:<3} (min {low}, max {high})"
        note = f"  {self.note}" if self.note else ""
        return f"  {self.name:<{width}} {numbers:<38} {goal:<12} {self.verdict:<4}{note}"


def print_section(title: str, figures: Sequence[Figure]) -> None:
    print(title)
    width = max(len(f.name) for f in figures)
    for figure in figures:
        print(figure.line(width))


def timed(work: Callable[[], object]) -> float:
    """Wall seconds of one call of ``work``."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def interleaved(cases: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Wall seconds of each case in each round, the cases run in turn; one unrecorded round first."""
    for work in cases.values():
        work()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, work in cases.items():
            times[name].append(timed(work))
    return times


def ratios(times: Mapping[str, Sequence[float]], name: str, base: str) -> list[float]:
    return [a / b for a, b in zip(times[name], times[base], strict=True)]


def command(
    argv: Sequence[str], env: Mapping[str, str], stdin: bytes = b"", silent: bool = False
) -> Callable[[], None]:
    """A command to time; ``silent``: it must exit 0 and print nothing (a check that it did what is timed)."""

    def run() -> None:
        done = subprocess.run(list(argv), input=stdin, env=dict(env), capture_output=True, check=False)
        if silent and (done.returncode != 0 or done.stdout or done.stderr):
            raise SystemExit(f"{argv}: answered {done.returncode} {done.stdout!r} {done.stderr!r}")

    return run
