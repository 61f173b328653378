"""The fuzz loop: hypothesis draws scenarios, each is replayed and checked; the first violation is shrunk
(to scenarios that break the same invariant) and written out.

Every replay is checked after each of its steps (the transcript up to the step's end), so a violation
names the step where it first held; every run counts the states of :mod:`.reached` it reached. Failures
found are kept in hypothesis's example database, outside the working folder (:func:`example_folder`),
and tried first on the next run.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import pkgutil
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as seeded
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

import agent_cards
from agent_cards.record import Record, replace
from agent_cards_simulator.fuzz import example_folder, generate, invariants, reached
from agent_cards_simulator.fuzz.invariants import Violation
from agent_cards_simulator.fuzz.writer import scenario_of, write
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.reader import ScenarioError, read
from agent_cards_simulator.scenario.replay import Play, replay
from agent_cards_simulator.scenario.writer import to_yaml


class Found(Record):
    data: dict[str, Any]
    violation: Violation


class _Violated(Exception):
    pass


class _Marked:
    """A scenario's step that notes, once it ran, how many events the transcript holds: the replay's
    transcript cut at each step's end is what the invariants are checked on, step by step."""

    def __init__(self, step: Any, marks: list[int]) -> None:
        self.step = step
        self.marks = marks

    async def run(self, play: Play) -> str | None:
        problem: str | None = await self.step.run(play)
        await play.host.settle()
        self.marks.append(len(play.host.transcript.events))
        return problem


class Checked(Record):
    violation: Violation | None
    reached: frozenset[str] = frozenset()


def check(data: dict[str, Any]) -> Violation | None:
    """Replay ``data`` and check its transcript (a file the reader refuses is the writer's violation)."""
    return examine(data).violation


def examine(data: dict[str, Any]) -> Checked:
    """Replay ``data``: the first invariant it broke (at the first step where it held false) and the
    states it reached."""
    try:
        scenario = scenario_of(data)
    except ScenarioError as error:
        return Checked(Violation("writer", f"the written scenario is not valid: {error.lines()[0]}"))
    marks: list[int] = []
    marked = replace(scenario, steps=tuple(_Marked(step, marks) for step in scenario.steps))
    try:
        result = replay(marked)
    except Exception as error:  # the bench itself failed
        return Checked(Violation("replay-failed", f"{type(error).__name__}: {error}"))
    violation, model = invariants.examine(scenario, result)
    states = frozenset(reached.reached(model, result.events)) if model is not None else frozenset()
    if violation is not None and model is not None:
        violation = _located(scenario, result.events, marks, violation)
    return Checked(violation, states)


def _located(scenario: Scenario, events: list[dict[str, Any]], marks: list[int], violation: Violation) -> Violation:
    """``violation`` named by the first step after which the transcript so far already breaks it."""
    for index, mark in enumerate(marks):
        early, _ = invariants.on_events(scenario, events[:mark])
        if early is not None and early.kind == violation.kind:
            return replace(early, message=f"steps[{index}]: {early.message}")
    return violation


@contextlib.contextmanager
def same_constants() -> Iterator[None]:
    """hypothesis mixes into its draws the literals of every module of the working tree the process has
    imported, so one seed drew other cases under pytest (its test modules loaded, in whatever order) than
    from the command line. While the fuzzer runs, those literals are the mod's own modules', always the
    same: a seed draws the same cases in any process. They are read from the source each time: hypothesis's
    own cache of them (a file per module in its folder) reads back other constants than the source gives,
    so the first process of a fresh folder drew other cases than the next. (hypothesis has no setting for
    this; the hook it reads is private, so a hypothesis without it leaves the draws as they are.)"""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants, _constants_from_source
        from hypothesis.internal.floats import float_to_int
        from sortedcontainers import SortedSet  # type: ignore[import-untyped]  # hypothesis depends on it
    except ImportError:
        yield
        return
    if not callable(getattr(providers, "_get_local_constants", None)):
        yield
        return
    found = Constants()
    for info in sorted(pkgutil.walk_packages(agent_cards.__path__, "agent_cards."), key=lambda m: m.name):
        if not info.ispkg and not info.name.endswith("__main__"):
            source = Path(str(importlib.import_module(info.name).__file__)).read_bytes()
            found |= _constants_from_source(source, limit=True)
    # Kept in sorted sets, as hypothesis keeps its own: a plain set of texts iterates in the order of the
    # process's string hashes, and the draws would differ from one process to the next.
    fixed = Constants(integers=SortedSet(found.integers), floats=SortedSet(found.floats, key=float_to_int),
                      bytes=SortedSet(found.bytes), strings=SortedSet(found.strings))
    saved = providers._get_local_constants
    providers._get_local_constants = lambda: fixed
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


def example_database() -> ExampleDatabase:
    return DirectoryBasedExampleDatabase(str(example_folder()))


#: Cases between two full collections. Each replay freezes what the process holds (``gc.freeze``, so
#: that its own collections walk only its objects) and thaws it after: thawed objects land in the oldest
#: generation, which the collector's own schedule then almost never walks, so the cycles each case leaves
#: outside its replay (hypothesis's data) pile up. One collection frees them; every 100 cases it costs
#: well under a per cent of the run. (The replay's own cycles, which hold its transcript, are collected
#: at its end, by the replay itself.)
COLLECT_EVERY = 100

#: Cases one hypothesis run draws. A run keeps every example it drew (its tree of choices, a cache of
#: results) until it ends, about 0.09 MB a case: a long fuzz is drawn as a row of fresh runs, so that what
#: is held stays that of one run, whatever the case count.
CHUNK = 500


def chunk_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th run of a fuzz seeded ``seed``: the seed itself for the first (a short
    fuzz draws as one run did), then one drawn from both, the same in any process."""
    if index == 0:
        return seed
    digest = hashlib.sha256(f"agent-cards fuzz {seed} {index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class Fuzz:
    def __init__(self, seed: int, progress: bool = True, shrink: bool = True, examples: bool = True) -> None:
        self.seed = seed
        self.progress = progress
        self.shrink = shrink
        self.examples = examples  # the failures of earlier runs tried first, and this run's kept
        self.cases = 0
        self.found: Found | None = None
        self.first_at: int | None = None  # the case that first broke an invariant (the rest: shrinking)
        self.reached: Counter[str] = Counter()
        self._last_note = time.monotonic()
        self._started = time.monotonic()

    def run(self, cases: int, chunk: int = CHUNK) -> Found | None:
        """Draw ``cases`` scenarios, ``chunk`` to a hypothesis run (:data:`CHUNK`); the first violation is
        shrunk within its run, and ends the fuzz."""
        done = 0
        index = 0
        with same_constants():
            while done < cases and self.found is None:
                size = min(chunk, cases - done)
                self._run_once(size, chunk_seed(self.seed, index), cases, reuse=self.examples and index == 0)
                done += size
                index += 1
                gc.collect()  # the finished run's examples
        if self.progress and self.cases >= 50 and self._live:
            print(file=sys.stderr)
        return self.found

    def _run_once(self, size: int, seed: int, total: int, reuse: bool) -> None:
        """One hypothesis run of ``size`` cases at ``seed``; ``reuse``: the example database's failures first."""
        phases = [Phase.reuse] if reuse else []
        phases += [Phase.generate, *([Phase.shrink] if self.shrink else [])]

        @settings(max_examples=size, database=None, deadline=None, derandomize=False, print_blob=False,
                  suppress_health_check=list(HealthCheck), phases=phases, report_multiple_bugs=False)
        @given(generate.scenarios())
        def case(data: dict[str, Any]) -> None:
            self.cases += 1
            if self.cases % COLLECT_EVERY == 0:
                gc.collect()
            self._note(total)
            checked = examine(data)
            if self.found is None:
                self.reached.update(checked.reached)
            violation = checked.violation
            if violation is None:
                return
            if self.found is not None and violation.kind != self.found.violation.kind:
                return  # while shrinking: keep to the invariant first broken
            if self.first_at is None:
                self.first_at = self.cases
            self.found = Found(data, violation)
            raise _Violated(violation.message)

        case = seeded(seed)(case)
        if self.examples:  # a seed drops the database: put it back (kept to, and read back only when reuse)
            case._hypothesis_internal_use_settings = settings(  # type: ignore[attr-defined]
                case._hypothesis_internal_use_settings, database=example_database())  # type: ignore[attr-defined]
        with contextlib.suppress(_Violated):
            case()

    @property
    def never_reached(self) -> list[str]:
        return [name for name in reached.STATES if not self.reached[name]]

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
        except Exception:  # the bench itself fails on it, as the run found: `agent-cards replay` says how
            return path
        if again.passed:  # cannot happen for a deterministic replay; say so rather than pretend
            print(f"  note: {path} passes when replayed: the violation did not reproduce", file=sys.stderr)
        return path
