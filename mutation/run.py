"""Each mutant tried against the project's checks, cheapest first, and how it died: by an assertion, or by a
changed transcript alone.

1. ``replay``: every scenario of ``scenarios/`` replayed in process (well under a second). A scenario that
   passes unmutated and fails mutated (its own expectations: the replay's verdict) kills by an assertion;
   a JSON line that differs from the unmutated one while every verdict holds is only a changed snapshot,
   and the mutant goes on to the next checks, which may still assert;
2. ``fuzz``: a short run of the fuzzer at a fixed seed (its invariants and its model of the spec);
3. ``tests``: the test files that import the mutant's module, ``pytest -x --assert=plain`` (pytest's
   assertion rewriting would import the mod's modules itself, ahead of the mutant: the distribution
   that ships a pytest plugin has all its modules rewritten). Exit status 1 (tests failed) kills
   only through a failing test that passes on the unmutated tree (run once per test per run): one that
   fails unmutated too is a flaky killer, set aside and reported, and the tests are run again without it.
   A run that breaks before its tests say anything (exit 2, 3 or 4: a plugin's hook raised, a file no
   longer collects) kills when the same files pass unmutated; "no tests collected" (5) never does.

1 and 2 run in a worker forked from a server that has the third-party modules loaded but none of the
project's, so a mutant costs the replay and the project's imports, not an interpreter's start; 3 runs
pytest in a process of its own. A mutant that outlasts a step's time limit (an endless loop, a wait
that never ends) counts as killed, by ``timeout``: a mod that hangs is a mod that fails.

A mutant of the judge (the scenario expectations, the pytest plugin, the conformance comparator, the
writers) does not change what the mod does, so a changed transcript says nothing of it: its replay counts
only a verdict that turns, and the fuzzer (which judges with the mod, not with the judge) is not run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import multiprocessing
import multiprocessing.connection
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from agent_cards.record import Value
from agent_cards_mutation.operators import Mutant, module_name, mutants
from agent_cards_mutation.planted import PREFIX, module_path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agent_cards"
SCENARIOS = ROOT / "scenarios"
TESTS = ROOT / "tests"
FUZZ_SEED = 14

#: The judge: the modules that decide whether the mod passes (the scenario expectations and the pytest
#: plugin that reads their verdict, the conformance comparator and the real side's extraction) and the
#: writers whose files become checks (``report``, ``import``, the fuzzer's written failure).
JUDGE = ("agent_cards_simulator.scenario.expect", "agent_cards_simulator.scenario.pytest_plugin",
         "agent_cards_conformance.compare", "agent_cards_conformance.extract", "agent_cards_conformance.real",
         "agent_cards_conformance.report",
         "agent_cards_simulator.scenario.importer", "agent_cards_simulator.fuzz.writer")

#: Modules the fork server loads once, so that no worker pays for them (the project's are dropped in
#: each worker before the mutant is planted).
#: This module too: each worker then runs the code the run started with, whatever is edited meanwhile.
PRELOAD = ["yaml", "asyncio", "json", "hypothesis", "hypothesis.strategies", "agent_cards_mutation.run"]

Kind = Literal["assertion", "snapshot", "timeout", "survived"]


class Outcome(Value):
    mutant: Mutant
    #: The check that killed it: replay, fuzz, tests or import (each an assertion), timeout, or snapshot (a
    #: changed transcript whose every expectation still holds, and nothing else failed); None: it survived.
    killed_by: str | None
    detail: str = ""
    #: Tests that failed with the mutant and fail unmutated too: no kill of theirs counted.
    flaky: tuple[str, ...] = ()

    @property
    def kind(self) -> Kind:
        if self.killed_by is None:
            return "survived"
        if self.killed_by in ("timeout", "snapshot"):
            return "timeout" if self.killed_by == "timeout" else "snapshot"
        return "assertion"

    @property
    def asserted(self) -> bool:
        """Killed by a check that says red: an assertion, or a time limit (a mod that hangs fails)."""
        return self.kind in ("assertion", "timeout")


class Limits(Value):
    in_process_s: float = 120.0  # replay and fuzz together
    tests_s: float = 600.0
    fuzz_cases: int = 40


#: How long past its limit an in-process worker lets itself run before it ends (the command kills it at the limit).
WORKER_GRACE_S = 10
#: How many flaky killers a mutant's tests step sets aside before it gives up on them.
FLAKY_RETRIES = 3
#: pytest's exit statuses for a run that broke before its tests could say anything; the mutant's doing
#: when the same files pass unmutated (5, "no tests collected", is never a kill).
BROKEN_RUN = {2: "interrupted, or a file that does not collect", 3: "pytest's own error", 4: "a usage error"}


class NothingToKillWith(Exception):
    """A module chosen whose mutants no check could kill: no scenario loads it, no fuzz, no test file."""


def all_modules() -> list[str]:
    """Every module of the mod's package (``__main__`` has nothing but the call of the bridge's main)."""
    return sorted(module_name(path, ROOT) for path in PACKAGE.rglob("*.py") if path.name != "__main__.py")


def judge_modules() -> list[str]:
    """The modules of :data:`JUDGE` this tree holds (an installed copy may lack the bench's folders)."""
    return [module for module in JUDGE if module_path(module, ROOT).is_file()]


def is_judge(module: str) -> bool:
    return module.split(".", maxsplit=1)[0] != PREFIX


def population(modules: Iterable[str]) -> list[Mutant]:
    found: list[Mutant] = []
    for module in modules:
        found += mutants(module, module_path(module, ROOT).read_text(encoding="utf-8"))
    return found


# -- in a forked worker --------------------------------------------------------------------------------------


def _replayed(folder: Path = SCENARIOS) -> list[str]:
    """Every scenario's JSON line, replayed in this process by whatever mod it imports now."""
    if not folder.is_dir():
        return []
    from agent_cards_simulator.scenario import render
    from agent_cards_simulator.scenario.files import load_all, scenario_files
    from agent_cards_simulator.scenario.replay import Replay, replay

    scenarios, problems = load_all(scenario_files([folder]))
    lines = list(problems)
    for scenario in scenarios:
        try:
            result = replay(scenario)
        except Exception as error:  # the replay itself failing is a difference too
            result = Replay(scenario.file, scenario.title, scenario.clauses, [], [f"{type(error).__name__}: {error}"])
        lines.append(render.to_json_line(result))
    return lines


def passed(line: str) -> bool:
    """The verdict of one replayed line: a scenario's JSON whose ``passed`` is true (a load problem never)."""
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("passed") is True


def compared(lines: list[str], clean: list[str], judge: bool) -> tuple[str, str]:
    """``("replay", why)`` when a scenario that passes unmutated fails (or goes missing), ``("snapshot", line)``
    when only a transcript changed, ``("", "")`` when nothing did. A judge mutant's changed line is not
    counted: only a turned verdict is."""
    for index, expected in enumerate(clean):
        line = lines[index] if index < len(lines) else ""
        if passed(expected) and not passed(line):
            return "replay", (line or f"{len(lines)} lines, {len(clean)} unmutated")[:200]
    if judge:
        return "", ""
    for line, expected in zip(lines, clean, strict=False):
        if line != expected:
            return "snapshot", line[:200]
    if len(lines) != len(clean):
        return "snapshot", f"{len(lines)} lines, {len(clean)} unmutated"
    return "", ""


def _fuzzed(cases: int) -> str | None:
    from hypothesis.configuration import set_hypothesis_home_dir

    from agent_cards_simulator.fuzz.storage import hypothesis_folder

    set_hypothesis_home_dir(str(hypothesis_folder()))
    from agent_cards_simulator.fuzz.engine import Fuzz

    found = Fuzz(FUZZ_SEED, progress=False, shrink=False, examples=False).run(cases)
    return f"{found.violation.kind}: {found.violation.message}" if found else None


def _loaded() -> list[str]:
    return sorted(name for name in sys.modules if name.split(".")[0].startswith(PREFIX))


def _in_worker(conn: multiprocessing.connection.Connection, mutant_id: str | None, module: str,
               clean: list[str] | None, fuzz_cases: int, limit: float, scenarios: Path = SCENARIOS) -> None:
    """Send back ``(killer, detail)``: the first check the mutant fails by an assertion (``import``, ``replay``,
    ``fuzz``), else ``snapshot`` with the first changed line, else ``""``. Unmutated (``clean`` None), send
    ``("", lines)`` and then ``(fuzz violation or "", modules the replay loaded, modules the fuzz loaded)``.

    The worker ends itself a little after its limit (SIGALRM's own action): the command kills it then, but a
    command killed itself leaves no one to, and a mutant that loops for ever would run on."""
    import contextlib
    import io
    import math
    import signal

    signal.alarm(math.ceil(limit) + WORKER_GRACE_S)

    from agent_cards_mutation.planted import plant

    judge = is_judge(module)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            if mutant_id is not None:
                plant(mutant_id, module, ROOT)
            __import__(module)
        except BaseException as error:  # the mutated module does not even import
            conn.send(("import", f"{type(error).__name__}: {error}"))
            return
        try:
            lines = _replayed(scenarios)
        except BaseException as error:
            conn.send(("replay", f"{type(error).__name__}: {error}"))
            return
        if clean is None:
            conn.send(("", "\n".join(lines)))
            by_replay = _loaded()
            found = ""
            if fuzz_cases:
                try:
                    found = _fuzzed(fuzz_cases) or ""
                except BaseException as error:
                    found = f"the fuzzer itself failed: {type(error).__name__}: {error}"
            conn.send((found, by_replay, _loaded()))
            return
        killer, detail = compared(lines, clean, judge)
        if killer == "replay":
            conn.send((killer, detail))
            return
        if fuzz_cases and not judge:
            violation: str | None
            try:
                violation = _fuzzed(fuzz_cases)
            except BaseException as error:
                violation = f"the fuzzer itself failed: {type(error).__name__}: {error}"
            if violation is not None:
                conn.send(("fuzz", violation[:200]))
                return
        conn.send((killer, detail))


DEFAULT_LIMITS = Limits()

PYTEST_OPTIONS = ("-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=",
                  "--assert=plain")


class Trial:
    """The fork server, the unmutated transcript and what each check can kill; :meth:`outcome` tries one mutant."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, scenarios: Path = SCENARIOS, tests: Path = TESTS) -> None:
        self.limits, self.scenarios, self.tests_folder = limits, scenarios, tests
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        self.fuzz_cases = limits.fuzz_cases if importlib.util.find_spec("hypothesis") is not None else 0
        self.clean, self.by_replay, self.by_fuzz, violation = self._unmutated()
        if violation:  # a fuzzer that fails unmutated would kill every mutant: it kills none
            print(f"agent-cards mutate: the fuzz step is left out, it fails unmutated: {violation[:200]}",
                  file=sys.stderr)
            self.fuzz_cases, self.by_fuzz = 0, frozenset()
        self.tests = tests_by_module(tests)
        self.unmutated = UnmutatedTests(limits.tests_s)

    def _unmutated(self) -> tuple[list[str], frozenset[str], frozenset[str], str]:
        here, there = self.context.Pipe(duplex=False)
        limit = self.limits.in_process_s
        worker = self.context.Process(target=_in_worker, daemon=True,
                                      args=(there, None, PREFIX, None, self.fuzz_cases, limit, self.scenarios))
        worker.start()
        there.close()
        try:
            if not here.poll(limit):
                raise RuntimeError(f"the unmutated mod's replay took over {limit:.0f} s")
            killer, text = here.recv()
            if killer:
                raise RuntimeError(f"the unmutated mod fails its own replay: {killer}: {text}")
            if not here.poll(limit):
                raise RuntimeError(f"the unmutated mod's fuzz run took over {limit:.0f} s")
            violation, by_replay, by_fuzz = here.recv()
        except EOFError as error:
            raise RuntimeError(f"the unmutated replay ended with exit status {worker.exitcode}") from error
        finally:
            here.close()
            if worker.is_alive():
                worker.kill()
            worker.join()
        lines = str(text).split("\n") if text else []
        failing = [line for line in lines if not passed(line)]
        if failing:  # a scenario that fails unmutated kills nothing (compared reads only a verdict that turns)
            print(f"agent-cards mutate: {len(failing)} scenarios fail unmutated and kill nothing: "
                  f"{failing[0][:200]}", file=sys.stderr)
        return lines, frozenset(by_replay if lines else ()), frozenset(by_fuzz) - frozenset(by_replay), str(violation)

    def killers(self, module: str) -> list[str]:
        """The checks that can kill a mutant of ``module`` here (empty: its score would mean nothing)."""
        found = []
        if self.clean and module in self.by_replay:
            found.append(f"{len(self.clean)} scenarios")
        if self.fuzz_cases and not is_judge(module) and module in self.by_replay | self.by_fuzz:
            found.append(f"the fuzzer ({self.fuzz_cases} cases)")
        if self.test_files(module):
            found.append(f"{len(self.test_files(module))} test files")
        return found

    def test_files(self, module: str) -> list[str]:
        dropped = NOT_KILLERS_OF_THE_JUDGE if is_judge(module) else NOT_KILLERS
        return sorted((f for f in self.tests.get(module, []) if Path(f).name not in dropped and (ROOT / f).exists()),
                      key=lambda f: Path(f).name in SLOW_LAST)

    def _in_process(self, mutant_id: str | None, module: str, clean: list[str] | None, fuzz_cases: int,
                    limit: float) -> tuple[str, str]:
        here, there = self.context.Pipe(duplex=False)
        worker = self.context.Process(target=_in_worker, daemon=True,
                                      args=(there, mutant_id, module, clean, fuzz_cases, limit, self.scenarios))
        worker.start()
        there.close()
        try:
            if not here.poll(limit):
                return "timeout", f"replay and fuzz took over {limit:.0f} s"
            killer, detail = here.recv()
            return str(killer), str(detail)
        except EOFError:
            return "import", f"the worker ended with exit status {worker.exitcode}"
        finally:
            here.close()
            if worker.is_alive():
                worker.kill()
            worker.join()

    def outcome(self, mutant: Mutant) -> Outcome:
        killer, detail = self._in_process(mutant.id, mutant.module, self.clean, self.fuzz_cases,
                                          self.limits.in_process_s)
        if killer not in ("", "snapshot"):
            return Outcome(mutant, killer, detail)
        files = self.test_files(mutant.module)
        if not files:
            return Outcome(mutant, killer or None, detail or "no test file imports its module")
        tested = by_the_tests(mutant, files, self.limits.tests_s, self.unmutated.passes)
        if tested.killed_by is not None:
            return tested
        return Outcome(mutant, killer or None, detail or tested.detail, tested.flaky)


def planted_pytest(mutant: Mutant, argv: list[str], limit: float) -> tuple[int, list[str]]:
    """pytest run with ``argv`` and ``mutant`` planted, in a process of its own: its exit status and the ids of the
    tests (or files) that failed. Raises :class:`subprocess.TimeoutExpired` past ``limit``."""
    with tempfile.TemporaryDirectory(prefix="agent-cards-mutate-") as folder:
        failed_to = Path(folder) / "failed"
        command = [sys.executable, "-m", "agent_cards_mutation.planted", mutant.id, mutant.module, str(ROOT),
                   "--failed-to", str(failed_to), "--", *argv]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False,
                              env={**os.environ, "AGENT_CARDS_E2E": "0"}, timeout=limit)
        failed = json.loads(failed_to.read_text(encoding="utf-8")) if failed_to.exists() else []
        return done.returncode, [str(id_) for id_ in failed]


def by_the_tests(mutant: Mutant, files: list[str], limit: float, passes_unmutated: Callable[[str], bool],
               pytest_run: Callable[[Mutant, list[str], float], tuple[int, list[str]]] = planted_pytest) -> Outcome:
    """The tests step: a kill by a failing test that passes unmutated, else a survivor with the flaky killers met
    (failing tests that fail unmutated too: set aside, and the files run again without them)."""
    flaky: list[str] = []
    for _ in range(FLAKY_RETRIES + 1):
        argv = ["-x", *PYTEST_OPTIONS, *(f"--deselect={id_}" for id_ in flaky), *files]
        try:
            status, failed = pytest_run(mutant, argv, limit)
        except subprocess.TimeoutExpired:
            return Outcome(mutant, "timeout", f"its tests took over {limit:.0f} s", tuple(flaky))
        if status == 0:
            return Outcome(mutant, None, "", tuple(flaky))
        if status in BROKEN_RUN and all(passes_unmutated(file) for file in files):
            # The mutant broke pytest itself (a plugin whose hook raises, a test file that no longer collects):
            # whoever runs these files sees the run go red, and unmutated they pass.
            return Outcome(mutant, "tests", f"pytest exit status {status} ({BROKEN_RUN[status]}), green unmutated",
                           tuple(flaky))
        if status != 1:
            # 5: no test collected, which is no red check; or a broken run whose files fail unmutated too.
            return Outcome(mutant, None, f"pytest exit status {status}, not a kill", tuple(flaky))
        sound = [id_ for id_ in failed if passes_unmutated(id_)]
        if sound:
            return Outcome(mutant, "tests", f"FAILED {sound[0]}"[:200], tuple(flaky))
        if not failed:
            return Outcome(mutant, None, "pytest exit status 1 with no failed test named", tuple(flaky))
        flaky += failed
    return Outcome(mutant, None, f"{len(flaky)} flaky killers set aside", tuple(flaky))


class UnmutatedTests:
    """Whether a test passes on the unmutated tree: each asked once per run, whichever mutant asks first."""

    def __init__(self, limit: float, check: Callable[[str, float], bool] | None = None) -> None:
        self.limit = limit
        self.check = check or unmutated_passes
        self.known: dict[str, bool] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def passes(self, test_id: str) -> bool:
        with self._lock:
            lock = self._locks.setdefault(test_id, threading.Lock())
        with lock:
            if test_id not in self.known:
                self.known[test_id] = self.check(test_id, self.limit)
            return self.known[test_id]


def unmutated_passes(test_id: str, limit: float) -> bool:
    """pytest runs ``test_id`` (a test, or a file that failed to collect) on the tree as it is, and it passes; or
    the tree as it is has no such test: the mutant made it (a plugin mutant that collects a file it should
    leave alone), so it cannot fail without the mutant, and pytest went red only because of it."""
    argv = [sys.executable, "-m", "pytest", *PYTEST_OPTIONS, test_id]
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                              env={**os.environ, "AGENT_CARDS_E2E": "0"}, timeout=limit)
    except subprocess.TimeoutExpired:
        return False
    # pytest names a test it cannot find without its parameters: a case whose value only the mutant makes (a
    # constant of the module it mutates, read by the test's parametrize) is not found under its whole id
    named = test_id.split("[", 1)[0]
    not_found = done.returncode == 4 and f"ERROR: not found: {ROOT / named}\n" in done.stdout + done.stderr + "\n"
    return done.returncode == 0 or not_found


#: Test files the ``tests`` step does not run: the fuzzer's (its step runs the fuzzer itself), the command
#: line's conventions (each case runs ``agent-cards`` as a process of its own, which imports the unmutated
#: mod), the fake host's boundedness (the scenarios replayed again and again, as the replay step does) and
#: this tool's own.
NOT_KILLERS = frozenset({"test_fuzz.py", "test_cli_conventions.py", "test_bounded.py", "test_mutation.py"})
#: Of the judge, the fuzzer's tests are killers (the fuzz step is not run for it: they test the writer).
NOT_KILLERS_OF_THE_JUDGE = NOT_KILLERS - {"test_fuzz.py"}


#: Test files that drive the mod through the replay of scenarios written in them, without importing the
#: module they test: run for every module the in-process replay loads.
THROUGH_THE_REPLAY = ("tests/test_mod_poll.py", "tests/test_modes.py")
REPLAYED = frozenset({"agent_cards.mod", "agent_cards.taken", "agent_cards.delivery", "agent_cards.lich_calls",
                      "agent_cards.rules", "agent_cards.state", "agent_cards.branch", "agent_cards.texts"})
#: The judge's modules read through the replay: the expectations judge every scenario a test replays,
#: and these files replay scenarios that must fail.
#: The pytest plugin is the one that collects ``scenarios/`` in the planted pytest (its own test file runs
#: pytest in processes of their own, which load it unmutated).
JUDGED_THROUGH_THE_REPLAY = {"agent_cards_simulator.scenario.expect": ("tests/test_no_silent_expectation.py",),
                             "agent_cards_simulator.scenario.pytest_plugin": ("scenarios",)}


#: Test files that take tens of seconds (real processes, a real session host; test_modes replays every
#: scenario again with real processes and runs the command line twice over): run after the others, so
#: that ``-x`` stops at a quicker test's failure first.
SLOW_LAST = frozenset({"test_hook.py", "test_bridge.py", "test_report.py", "test_modes.py"})

#: The project's packages, as imported: a test file that imports a name from one is a killer of it.
PACKAGES = (PREFIX, "agent_cards_simulator", "agent_cards_conformance", "agent_cards_claude_driver")


def tests_by_module(folder: Path = TESTS) -> dict[str, list[str]]:
    """Each module of the mod and of the bench: the test files (relative to the root) that import it or a
    name from it."""
    found: dict[str, list[str]] = {name: list(THROUGH_THE_REPLAY) for name in REPLAYED}
    for name, files in JUDGED_THROUGH_THE_REPLAY.items():
        found[name] = list(files)
    for path in sorted(folder.glob("test_*.py")) if folder.is_dir() else []:
        imported: set[str] = set()
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported |= {f"{node.module}.{alias.name}" for alias in node.names}
        if PREFIX in imported and ("agent_cards.register(" in text or "agent_cards.AgentCards" in text):
            imported.add(f"{PREFIX}.mod")  # the package's own register and AgentCards are the mod's
        for name in imported:
            if name.split(".")[0] in PACKAGES:
                found.setdefault(name, [])
                shown = _named(path)
                if shown not in found[name]:
                    found[name].append(shown)
    return found


def _named(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_all(chosen: list[Mutant], jobs: int, limits: Limits = DEFAULT_LIMITS,
            done: Callable[[Outcome], None] = lambda outcome: None, trial: Trial | None = None) -> list[Outcome]:
    """Every mutant of ``chosen`` tried, ``jobs`` at a time; the outcomes in the order given. Raises
    :class:`NothingToKillWith` before trying any when a chosen module has no check that could kill its mutants."""
    trial = trial or Trial(limits)
    for module in dict.fromkeys(m.module for m in chosen):
        if not trial.killers(module):
            raise NothingToKillWith(
                f"nothing here can kill a mutant of {module}: no scenario replayed from {trial.scenarios} loads "
                f"it, no fuzz run does{'' if trial.fuzz_cases else ' (none is run)'}, and no test file in "
                f"{trial.tests_folder} imports it")

    def one(mutant: Mutant) -> Outcome:
        outcome = trial.outcome(mutant)
        done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, chosen))


def timed(call: Callable[[], list[Outcome]]) -> tuple[list[Outcome], float]:
    started = time.monotonic()
    return call(), time.monotonic() - started
