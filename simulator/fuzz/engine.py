"""The fuzz loop: hypothesis draws scenarios, each is replayed and checked; the first violation is shrunk
(to scenarios that break the same invariant) and written out."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as seeded

from agent_cards.record import Record
from agent_cards_simulator.fuzz import generate, invariants
from agent_cards_simulator.fuzz.invariants import Violation
from agent_cards_simulator.fuzz.writer import scenario_of, to_yaml, write
from agent_cards_simulator.scenario.reader import ScenarioError, read
from agent_cards_simulator.scenario.replay import replay


class Found(Record):
    data: dict[str, Any]
    violation: Violation


class _Violated(Exception):
    pass


def check(data: dict[str, Any]) -> Violation | None:
    """Replay ``data`` and check its transcript (a file the reader refuses is the writer's violation)."""
    try:
        scenario = scenario_of(data)
    except ScenarioError as error:
        return Violation("writer", f"the written scenario is not valid: {error.lines()[0]}")
    try:
        result = replay(scenario)
    except Exception as error:  # the bench itself failed
        return Violation("replay-crashed", f"{type(error).__name__}: {error}")
    return invariants.check(scenario, result)


class Fuzz:
    def __init__(self, seed: int, progress: bool = True) -> None:
        self.seed = seed
        self.progress = progress
        self.cases = 0
        self.found: Found | None = None
        self.first_at: int | None = None  # the case that first broke an invariant (the rest: shrinking)
        self._last_note = time.monotonic()
        self._started = time.monotonic()

    def run(self, cases: int) -> Found | None:
        @seeded(self.seed)
        @settings(max_examples=cases, database=None, deadline=None, derandomize=False, print_blob=False,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                  report_multiple_bugs=False)
        @given(generate.scenarios())
        def case(data: dict[str, Any]) -> None:
            self.cases += 1
            self._note(cases)
            violation = check(data)
            if violation is None:
                return
            if self.found is not None and violation.kind != self.found.violation.kind:
                return  # while shrinking: keep to the invariant first broken
            if self.first_at is None:
                self.first_at = self.cases
            self.found = Found(data, violation)
            raise _Violated(violation.message)

        with contextlib.suppress(_Violated):
            case()
        if self.progress and self.cases >= 50 and self._live:
            print(file=sys.stderr)
        return self.found

    @property
    def _live(self) -> bool:
        """A person watches a terminal: one line redrawn in place; a log (CI) gets a whole line each time."""
        return sys.stderr.isatty()

    def _note(self, total: int) -> None:
        now = time.monotonic()
        live = self._live
        if self.progress and now - self._last_note >= (2 if live else 10):
            self._last_note = now
            rate = self.cases / max(now - self._started, 1e-9)
            state = f"shrinking a {self.found.violation.kind} violation" if self.found else "no violation yet"
            line = f"fuzz: {self.cases} cases ({total} to generate), {rate:.0f}/s, {state}"
            print(f"\r{line}" if live else line, end="" if live else "\n", file=sys.stderr, flush=True)

    def write(self, found: Found, out: Path) -> Path:
        """The shrunk scenario with the expectation its violation breaks; it replays and fails for that reason."""
        data = dict(found.data)
        data["title"] = f"fuzz (seed {self.seed}): {found.violation.kind}"
        data["about"] = found.violation.message
        if found.violation.expect:
            data["expect"] = list(found.violation.expect)
        path = write(data, out / f"fuzz-{self.seed}-{found.violation.kind}.yaml")
        try:
            again = replay(read(path, to_yaml(data)))
        except ScenarioError as error:  # the writer's own violation: the file is what the reader refuses
            print(f"  {error.lines()[0]}", file=sys.stderr)
            return path
        if again.passed:  # cannot happen for a deterministic replay; say so rather than pretend
            print(f"  note: {path} passes when replayed: the violation did not reproduce", file=sys.stderr)
        return path
