"""Each mutant tried against the project's checks, cheapest first, until one fails.

1. ``replay``: every scenario of ``scenarios/`` replayed in process (well under a second), each JSON line
   compared with the unmutated mod's;
2. ``fuzz``: a short run of the fuzzer at a fixed seed (its invariants and its model of the spec);
3. ``tests``: the test files that import the mutant's module, ``pytest -x --assert=plain`` (pytest's
   assertion rewriting would import the mod's modules itself, ahead of the mutant: the distribution
   that ships a pytest plugin has all its modules rewritten).

1 and 2 run in a worker forked from a server that has the third-party modules loaded but none of the
project's, so a mutant costs the replay and the project's imports, not an interpreter's start; 3 runs
pytest in a process of its own. A mutant that outlasts a step's time limit (an endless loop, a wait
that never ends) counts as killed, by ``timeout``: a mod that hangs is a mod that fails.
"""

from __future__ import annotations

import ast
import multiprocessing
import multiprocessing.connection
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agent_cards.record import Value
from agent_cards_mutation.operators import Mutant, module_name, mutants
from agent_cards_mutation.planted import PREFIX, module_path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agent_cards"
FUZZ_SEED = 14

#: Modules the fork server loads once, so that no worker pays for them (the project's are dropped in
#: each worker before the mutant is planted).
#: This module too: each worker then runs the code the run started with, whatever is edited meanwhile.
PRELOAD = ["yaml", "asyncio", "json", "hypothesis", "hypothesis.strategies", "agent_cards_mutation.run"]


class Outcome(Value):
    mutant: Mutant
    killed_by: str | None  # replay, fuzz, tests, timeout, import; None: it survived
    detail: str = ""


class Limits(Value):
    in_process_s: float = 120.0  # replay and fuzz together
    tests_s: float = 600.0
    fuzz_cases: int = 40


#: How long past its limit an in-process worker lets itself run before it ends (the command kills it at the limit).
WORKER_GRACE_S = 10


def all_modules() -> list[str]:
    """Every module of the mod's package (``__main__`` has nothing but the call of the bridge's main)."""
    return sorted(module_name(path, ROOT) for path in PACKAGE.rglob("*.py") if path.name != "__main__.py")


def population(modules: Iterable[str]) -> list[Mutant]:
    found: list[Mutant] = []
    for module in modules:
        found += mutants(module, module_path(module, ROOT).read_text(encoding="utf-8"))
    return found


# -- in a forked worker --------------------------------------------------------------------------------------


def _replayed() -> list[str]:
    """Every scenario's JSON line, replayed in this process by whatever mod it imports now."""
    from agent_cards_simulator.scenario import render
    from agent_cards_simulator.scenario.files import load_all, scenario_files
    from agent_cards_simulator.scenario.replay import Replay, replay

    scenarios, problems = load_all(scenario_files([ROOT / "scenarios"]))
    lines = list(problems)
    for scenario in scenarios:
        try:
            result = replay(scenario)
        except Exception as error:  # the replay itself failing is a difference too
            result = Replay(scenario.file, scenario.title, scenario.clauses, [], [f"{type(error).__name__}: {error}"])
        lines.append(render.to_json_line(result))
    return lines


def _fuzzed(cases: int) -> str | None:
    from hypothesis.configuration import set_hypothesis_home_dir

    from agent_cards_simulator.fuzz.storage import hypothesis_folder

    set_hypothesis_home_dir(str(hypothesis_folder()))
    from agent_cards_simulator.fuzz.engine import Fuzz

    found = Fuzz(FUZZ_SEED, progress=False, shrink=False, examples=False).run(cases)
    return f"{found.violation.kind}: {found.violation.message}" if found else None


def _in_worker(conn: multiprocessing.connection.Connection, mutant_id: str | None, module: str,
               clean: list[str] | None, fuzz_cases: int, limit: float) -> None:
    """Send back ``(killer, detail)``: the first in-process check the mutant fails, or ``("", lines)``.

    The worker ends itself a little after its limit (SIGALRM's own action): the command kills it then, but a
    command killed itself leaves no one to, and a mutant that loops for ever would run on."""
    import contextlib
    import io
    import math
    import signal

    signal.alarm(math.ceil(limit) + WORKER_GRACE_S)

    from agent_cards_mutation.planted import plant

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
            lines = _replayed()
        except BaseException as error:
            conn.send(("replay", f"{type(error).__name__}: {error}"))
            return
        if clean is None:
            conn.send(("", "\n".join(lines)))
            return
        for line, expected in zip(lines, clean, strict=False):
            if line != expected:
                conn.send(("replay", line[:200]))
                return
        if len(lines) != len(clean):
            conn.send(("replay", f"{len(lines)} lines, {len(clean)} unmutated"))
            return
        if fuzz_cases:
            try:
                violation = _fuzzed(fuzz_cases)
            except BaseException as error:
                violation = f"the fuzzer itself failed: {type(error).__name__}: {error}"
            if violation is not None:
                conn.send(("fuzz", violation[:200]))
                return
        conn.send(("", ""))


DEFAULT_LIMITS = Limits()


class Trial:
    """The fork server and the unmutated transcript; :meth:`outcome` tries one mutant."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        killer, text = self._in_process(None, "agent_cards", None, 0, limits.in_process_s)
        if killer:
            raise RuntimeError(f"the unmutated mod fails its own replay: {killer}: {text}")
        self.clean = text.split("\n")
        self.tests = tests_by_module()

    def _in_process(self, mutant_id: str | None, module: str, clean: list[str] | None, fuzz_cases: int,
                    limit: float) -> tuple[str, str]:
        here, there = self.context.Pipe(duplex=False)
        worker = self.context.Process(target=_in_worker, args=(there, mutant_id, module, clean, fuzz_cases, limit),
                                      daemon=True)
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
        killer, detail = self._in_process(mutant.id, mutant.module, self.clean, self.limits.fuzz_cases,
                                          self.limits.in_process_s)
        if killer:
            return Outcome(mutant, killer, detail)
        files = sorted((f for f in self.tests.get(mutant.module, []) if Path(f).name not in NOT_KILLERS),
                       key=lambda f: Path(f).name in SLOW_LAST)
        if not files:
            return Outcome(mutant, None, "no test file imports its module")
        argv = [sys.executable, "-m", "agent_cards_mutation.planted", mutant.id, mutant.module, str(ROOT), "--",
                "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=",
                "--assert=plain",
                *files]
        env = {**os.environ, "AGENT_CARDS_E2E": "0"}
        try:
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, env=env,
                                  timeout=self.limits.tests_s)
        except subprocess.TimeoutExpired:
            return Outcome(mutant, "timeout", f"its tests took over {self.limits.tests_s:.0f} s")
        if done.returncode != 0:
            failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
            return Outcome(mutant, "tests", (failed or [f"pytest exit status {done.returncode}"])[0][:200])
        return Outcome(mutant, None, "")


#: Test files the ``tests`` step does not run: the fuzzer's (its step runs the fuzzer itself), the command
#: line's conventions (each case runs ``agent-cards`` as a process of its own, which imports the unmutated
#: mod), the fake host's boundedness (the scenarios replayed again and again, as the replay step does) and
#: this tool's own.
NOT_KILLERS = frozenset({"test_fuzz.py", "test_cli_conventions.py", "test_bounded.py", "test_mutation.py"})


#: Test files that drive the mod through the replay of scenarios written in them, without importing the
#: module they test: run for every module the in-process replay loads.
THROUGH_THE_REPLAY = ("tests/test_mod_poll.py", "tests/test_modes.py")
REPLAYED = frozenset({"agent_cards.mod", "agent_cards.taken", "agent_cards.delivery", "agent_cards.lich_calls",
                      "agent_cards.rules", "agent_cards.state", "agent_cards.branch", "agent_cards.texts"})


#: Test files that take tens of seconds (real processes, a real session host; test_modes replays every
#: scenario again with real processes and runs the command line twice over): run after the others, so
#: that ``-x`` stops at a quicker test's failure first.
SLOW_LAST = frozenset({"test_hook.py", "test_bridge.py", "test_report.py", "test_modes.py"})


def tests_by_module() -> dict[str, list[str]]:
    """Each module of the mod: the test files (relative to the root) that import it or a name from it."""
    found: dict[str, list[str]] = {name: list(THROUGH_THE_REPLAY) for name in REPLAYED}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
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
            if name.split(".")[0] == PREFIX:
                found.setdefault(name, [])
                if str(path.relative_to(ROOT)) not in found[name]:
                    found[name].append(str(path.relative_to(ROOT)))
    return found


def run_all(chosen: list[Mutant], jobs: int, limits: Limits = DEFAULT_LIMITS,
            done: Callable[[Outcome], None] = lambda outcome: None) -> list[Outcome]:
    """Every mutant of ``chosen`` tried, ``jobs`` at a time; the outcomes in the order given."""
    trial = Trial(limits)

    def one(mutant: Mutant) -> Outcome:
        outcome = trial.outcome(mutant)
        done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, chosen))


def timed(call: Callable[[], list[Outcome]]) -> tuple[list[Outcome], float]:
    started = time.monotonic()
    return call(), time.monotonic() - started
