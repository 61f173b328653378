"""``agent-cards mutate``: its mutants are named stably and leave descriptions alone, an obvious one is
killed, a listed equivalent is left out, a stale list and a low score fail, and a wrong command line is
one line. A kill is by an assertion or by a changed snapshot alone, and only the first counts; a test that
fails unmutated kills nothing, nor does pytest finding no test; where nothing could kill a module's
mutants the command refuses; the judge's modules are found through the package-dir map and mutated; the
chance that a weak tree passes a sample is counted exactly."""

from __future__ import annotations

import ast
import json
import math
import random
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cards_mutation import command, run
from agent_cards_mutation.operators import Mutant, mutants, mutated_tree
from agent_cards_mutation.planted import module_path
from agent_cards_mutation.run import ROOT, Limits, Outcome, by_the_tests, compared, population
from agent_cards_mutation.sampling import needed, pass_chance

SOURCE = '''"""A docstring."""
TYPE_CHECKING = False
LIMIT: int = 5
"""An attribute's docstring."""


def over(size: int, names: list[str]) -> bool:
    """Also a docstring."""
    assert size >= 0
    if size > LIMIT and "x" in names:
        print("over")
        return True
    return not names
Kind = Literal["on", "off"]
'''


def by_operator(found: list[Mutant]) -> dict[str, list[Mutant]]:
    kinds: dict[str, list[Mutant]] = {}
    for mutant in found:
        kinds.setdefault(mutant.operator, []).append(mutant)
    return kinds


def test_each_operator_plants_where_it_should_and_docstrings_annotations_types_asserts_are_left_alone() -> None:
    found = mutants("m", SOURCE)
    kinds = by_operator(found)
    assert [m.replacement for m in kinds["compare-flip"]] == ["size <= LIMIT", "'x' not in names"]
    assert [m.replacement for m in kinds["compare-boundary"]] == ["size >= LIMIT"]
    assert [m.original for m in kinds["string-emptied"]] == ["'x'", "'over'"]  # not the docstrings
    assert {m.operator for m in found} == {"number", "compare-flip", "compare-boundary", "and-or", "string-emptied",
                                           "call-deleted", "bool", "return-none", "not-removed"}
    # TYPE_CHECKING, the attribute's docstring, the assert, a Literal type's values
    assert all(m.line not in (2, 4, 9, 14) for m in found)
    assert len({m.id for m in found}) == len(found)


def test_an_id_does_not_move_when_lines_are_added_above() -> None:
    moved = mutants("m", "# a comment\n\n\n" + SOURCE)
    assert [m.id for m in moved] == [m.id for m in mutants("m", SOURCE)]
    assert moved[0].line == mutants("m", SOURCE)[0].line + 3


def test_a_mutated_tree_differs_by_exactly_the_named_change() -> None:
    flip = next(m for m in mutants("m", SOURCE) if m.operator == "compare-flip")
    changed = ast.unparse(mutated_tree(flip.id, SOURCE, "m"))
    assert changed == ast.unparse(ast.parse(SOURCE)).replace("size > LIMIT", "size <= LIMIT")
    with pytest.raises(KeyError):
        mutated_tree("m:over:compare-flip:nothing->such", SOURCE, "m")


def tried(mutant_id: str) -> str:
    """``agent-cards mutate --id`` run as a process of its own (its fork server goes with it), its output."""
    done = subprocess.run([sys.executable, "-m", "agent_cards.cli", "mutate", "--verbose", "--fuzz-cases", "0",
                           "--threshold", "0", "--jobs", "1", "--id", mutant_id], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_obvious_mutant_is_killed_by_the_replay_and_the_mod_is_put_back() -> None:
    poll = next(m for m in population(["agent_cards.mod"]) if m.id.startswith("agent_cards.mod:<module>:number:5000"))
    assert tried(poll.id).startswith(f"killed by replay: {poll.id}: ")
    assert (ROOT / "agent_cards" / "mod.py").read_text(encoding="utf-8").count("POLL_MS = 5_000") == 1


def listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    listed = tmp_path / "equivalent.yaml"
    listed.write_text(text, encoding="utf-8")
    monkeypatch.setattr(command, "EQUIVALENT_FILE", listed)


def test_a_listed_equivalent_is_not_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    first = population(["agent_cards.branch"])[0]
    listing(tmp_path, monkeypatch, f"- id: {first.id!r}\n  why: the test says so\n")
    assert command.main(["--list", "agent_cards.branch"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert first.id not in shown
    assert len(shown) == len(population(["agent_cards.branch"])) - 1


def test_a_listed_mutant_that_no_longer_exists_fails_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    listing(tmp_path, monkeypatch, "- id: 'agent_cards.branch:gone:bool:True->False'\n  why: it was\n")
    assert command.main(["--list", "agent_cards.branch"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no mutant agent_cards.branch:gone:bool:True->False any more" in err
    # A judge module this tree holds is checked alike (only a copy without the bench's folders skips them).
    listing(tmp_path, monkeypatch, "- id: 'agent_cards_conformance.extract:gone:bool:True->False'\n  why: it was\n")
    assert command.main(["--list", "agent_cards.branch"]) == 1
    assert "no mutant agent_cards_conformance.extract:gone:bool:True->False any more" in capsys.readouterr().err


def test_a_score_below_the_threshold_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    listing(tmp_path, monkeypatch, "[]\n")
    chosen = population(["agent_cards.branch"])[:4]

    def tried(mutants_: list[Mutant], jobs: int, limits: Limits, done: object) -> list[Outcome]:
        outcomes = [Outcome(m, "replay" if i else None) for i, m in enumerate(mutants_)]
        for outcome in outcomes:
            done(outcome)  # type: ignore[operator]
        return outcomes

    monkeypatch.setattr(command, "run_all", tried)
    ids = [m.id for m in chosen]
    monkeypatch.setattr(command, "population", lambda modules: [m for m in population(modules) if m.id in ids])
    assert command.main(["--threshold", "0.8", "agent_cards.branch"]) == 1
    out = capsys.readouterr().out
    assert f"survived: agent_cards/branch.py:{chosen[0].line}: {chosen[0].id}\n" in out
    assert "mutation score: 3 of 4 killed by an assertion (75.0%)" in out
    assert command.main(["--threshold", "0.75", "agent_cards.branch"]) == 0


@pytest.mark.parametrize(("args", "why"), [
    (["agent_cards.nothing"], "no module agent_cards.nothing in agent_cards"),
    (["--threshold", "1.5"], "--threshold is a share from 0 to 1"),
    (["--sample", "0"], "--sample"),
])
def test_a_wrong_command_line_is_one_line_and_exit_2(args: list[str], why: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err, err


def test_a_mutant_only_a_unit_test_sees_is_killed_by_the_tests_step() -> None:
    """No scenario and no fuzz case has a letter outside the BMP whose count decides the slug; the
    branch's unit tests do, and they see the mutant (pytest's assertion rewriting left out)."""
    out = tried("agent_cards.branch:_units:number:2->3")
    assert out.startswith("killed by tests: agent_cards.branch:_units:number:2->3: FAILED tests/test_branch.py::"), out


def test_a_worker_whose_mutant_never_ends_ends_itself_past_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command kills a worker at its limit; one the command cannot kill any more (the command itself was
    killed) ends by itself a grace after it, rather than looping for ever beside nobody."""
    import multiprocessing
    import signal
    import time

    from agent_cards_mutation import run

    def forever(*folder: Path) -> list[str]:
        while True:
            time.sleep(0.05)

    monkeypatch.setattr(run, "_replayed", forever)
    monkeypatch.setattr(run, "WORKER_GRACE_S", 0)
    context = multiprocessing.get_context("fork")  # the patched functions go with it
    here, there = context.Pipe(duplex=False)
    worker = context.Process(target=run._in_worker, args=(there, None, "agent_cards.record", [], 0, 0.5))
    worker.start()
    there.close()
    worker.join(30)
    here.close()
    ended_itself = worker.exitcode
    if worker.is_alive():  # it did not: end it here, so the failing test leaves nothing running
        worker.kill()
        worker.join()
    assert ended_itself == -signal.SIGALRM


# -- kills by an assertion apart from kills by a changed snapshot --------------------------------------------


def line(file: str, passed: bool, events: str = "[]") -> str:
    return json.dumps({"file": file, "passed": passed, "failures": [] if passed else ["x"],
                       "events": json.loads(events)})


CLEAN = [line("a.yaml", True), line("b.yaml", True, '[{"t": 1}]'), line("c.yaml", False)]


def test_a_scenario_whose_verdict_turns_kills_by_an_assertion_and_a_changed_transcript_alone_by_a_snapshot() -> None:
    assert compared(CLEAN, CLEAN, judge=False) == ("", "")
    assert compared([CLEAN[0], line("b.yaml", True, '[{"t": 2}]'), CLEAN[2]], CLEAN, judge=False)[0] == "snapshot"
    assert compared([CLEAN[0], line("b.yaml", False), CLEAN[2]], CLEAN, judge=False)[0] == "replay"
    # a verdict read after an earlier line that only changed its transcript
    assert compared([line("a.yaml", True, '[{"t": 9}]'), line("b.yaml", False), CLEAN[2]], CLEAN,
                    judge=False)[0] == "replay"
    assert compared(CLEAN[:2], CLEAN, judge=False)[0] == "snapshot"  # the missing one failed unmutated already
    assert compared(CLEAN[:1], CLEAN, judge=False)[0] == "replay"  # one that passed went missing
    assert compared(["scenarios/x.yaml:3: not a scenario", *CLEAN[1:]], CLEAN, judge=False)[0] == "replay"
    # a scenario failing unmutated that fails another way: no verdict turned
    assert compared([*CLEAN[:2], line("c.yaml", False, '[{"t": 3}]')], CLEAN, judge=False)[0] == "snapshot"


def test_a_judge_mutant_is_killed_by_a_turned_verdict_never_by_a_changed_transcript() -> None:
    assert compared([CLEAN[0], line("b.yaml", True, '[{"t": 2}]'), CLEAN[2]], CLEAN, judge=True) == ("", "")
    assert compared([CLEAN[0], line("b.yaml", False), CLEAN[2]], CLEAN, judge=True)[0] == "replay"


def outcome(killed_by: str | None, module: str = "agent_cards.branch", n: int = 0) -> Outcome:
    return Outcome(Mutant(f"{module}:f:bool:True->False#{n}", module, 1, "bool", "True", "False"), killed_by)


def test_the_threshold_is_judged_on_kills_by_an_assertion_and_a_timeout_counts_as_one() -> None:
    kinds = {k: outcome(k).kind for k in ("replay", "fuzz", "tests", "import", "timeout", "snapshot", None)}
    assert kinds == {"replay": "assertion", "fuzz": "assertion", "tests": "assertion", "import": "assertion",
                     "timeout": "timeout", "snapshot": "snapshot", None: "survived"}
    assert [outcome(k).asserted for k in ("timeout", "snapshot", None)] == [True, False, False]
    outcomes = [outcome("replay", n=0), outcome("timeout", n=1), outcome("snapshot", n=2), outcome(None, n=3),
                outcome("tests", "agent_cards_simulator.scenario.expect", n=4)]
    said: list[str] = []
    assert command.verdict(outcomes, 0, 0.6, "1 s", said.append) == 0  # 3 of 5
    assert command.verdict(outcomes, 0, 0.61, "1 s", said.append) == 1
    table = said[0].splitlines()
    assert table[0].split() == ["module", "mutants", "assertion", "snapshot", "only", "timeout", "survived"]
    assert table[1].split() == ["agent_cards.branch", "4", "1", "1", "1", "1"]
    assert table[2].split() == ["agent_cards_simulator.scenario.expect", "1", "1", "0", "0", "0"]
    assert table[3].split() == ["all", "5", "2", "1", "1", "1"]
    assert said[1].startswith("mutation score: 3 of 5 killed by an assertion (60.0%), 1 more by a changed snapshot "
                              "alone, 0 listed as equivalent, threshold 60%; 1 by timeout; 0 flaky killers")


def test_a_mutant_only_a_changed_snapshot_catches_is_shown_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    command._shown(outcome("snapshot"))
    command._shown(outcome("replay"))
    out = capsys.readouterr().out
    assert out == "snapshot only: agent_cards/branch.py:1: agent_cards.branch:f:bool:True->False#0\n"


# -- no flaky killer, and no "no tests" kill -----------------------------------------------------------------


def scripted(*runs: tuple[int, list[str]]) -> tuple[list[list[str]], object]:
    """A stand-in for pytest with the mutant planted: each call gives the next (status, failed ids)."""
    calls: list[list[str]] = []
    left = list(runs)

    def pytest_run(mutant: Mutant, argv: list[str], limit: float) -> tuple[int, list[str]]:
        calls.append(argv)
        return left.pop(0)
    return calls, pytest_run


def test_a_test_that_fails_unmutated_too_kills_nothing_and_the_tests_run_again_without_it() -> None:
    mutant = outcome(None).mutant
    calls, pytest_run = scripted((1, ["tests/t.py::flaky"]), (1, ["tests/t.py::sound"]))
    asked: list[str] = []

    def passes(test_id: str) -> bool:
        asked.append(test_id)
        return test_id.endswith("sound")
    done = by_the_tests(mutant, ["tests/t.py"], 60, passes, pytest_run)  # type: ignore[arg-type]
    assert (done.killed_by, done.detail, done.flaky) == ("tests", "FAILED tests/t.py::sound", ("tests/t.py::flaky",))
    assert "--deselect=tests/t.py::flaky" in calls[1] and "--deselect=tests/t.py::flaky" not in calls[0]
    assert asked == ["tests/t.py::flaky", "tests/t.py::sound"]
    calls, pytest_run = scripted((1, ["tests/t.py::flaky"]), (0, []))
    done = by_the_tests(mutant, ["tests/t.py"], 60, passes, pytest_run)  # type: ignore[arg-type]
    assert (done.killed_by, done.flaky) == (None, ("tests/t.py::flaky",))


@pytest.mark.parametrize("status", [2, 3, 4])
def test_a_run_the_mutant_breaks_kills_only_when_its_files_pass_unmutated(status: int) -> None:
    """A plugin whose hook raises ends pytest with 3 before any test runs: red for whoever runs the files."""
    asked: list[str] = []

    def passes(green: bool) -> Callable[[str], bool]:
        def check(test_id: str) -> bool:
            asked.append(test_id)
            return green
        return check
    _, pytest_run = scripted((status, []))
    done = by_the_tests(outcome(None).mutant, ["tests/t.py", "tests/u.py"], 60, passes(True), pytest_run)  # type: ignore[arg-type]
    assert done.killed_by == "tests" and done.detail.startswith(f"pytest exit status {status} (")
    assert asked == ["tests/t.py", "tests/u.py"]
    _, pytest_run = scripted((status, []))
    done = by_the_tests(outcome(None).mutant, ["tests/t.py"], 60, passes(False), pytest_run)  # type: ignore[arg-type]
    assert done.killed_by is None and done.detail == f"pytest exit status {status}, not a kill"


def test_no_test_collected_is_never_a_kill() -> None:
    _, pytest_run = scripted((5, []))
    done = by_the_tests(outcome(None).mutant, ["tests/t.py"], 60, lambda test_id: True, pytest_run)  # type: ignore[arg-type]
    assert done.killed_by is None and done.detail == "pytest exit status 5, not a kill"


def test_pytest_collecting_no_test_with_the_mutant_planted_kills_nothing(tmp_path: Path) -> None:
    """The real pytest, planted as the tests step runs it, over a file with no test in it: exit 5, no kill."""
    empty = tmp_path / "test_nothing.py"
    empty.write_text("NOTHING = 1\n", encoding="utf-8")
    mutant = population(["agent_cards.branch"])[0]
    status, failed = run.planted_pytest(mutant, [*run.PYTEST_OPTIONS, str(empty)], 120)
    assert (status, failed) == (5, [])
    done = by_the_tests(mutant, [str(empty)], 120, lambda test_id: True)
    assert done.killed_by is None, done


def test_a_test_is_run_unmutated_once_per_run_and_one_failing_there_does_not_pass(tmp_path: Path) -> None:
    tests = tmp_path / "test_two.py"
    tests.write_text("def test_good():\n    pass\n\n\ndef test_bad():\n    assert False\n", encoding="utf-8")
    assert run.unmutated_passes(f"{tests}::test_good", 120)
    assert not run.unmutated_passes(f"{tests}::test_bad", 120)
    # no such test on the tree as it is: only the mutant made it (a plugin mutant collecting a file it should
    # leave alone), so it cannot fail without the mutant; a file that is not there at all is no such case
    assert run.unmutated_passes(f"{tests}::test_none_such", 120)
    assert not run.unmutated_passes(f"{tmp_path / 'test_gone.py'}::test_good", 120)
    # a case of a parametrized test whose value only the mutant makes (a constant of the module it mutates):
    # pytest names the test it cannot find without its parameters
    cases = tmp_path / "test_cases.py"
    cases.write_text("import pytest\n\n\n@pytest.mark.parametrize('x', ['a[b]', ''])\ndef test_p(x):\n"
                     "    assert x\n", encoding="utf-8")
    assert run.unmutated_passes(f"{cases}::test_p[a[b]]", 120)
    assert not run.unmutated_passes(f"{cases}::test_p[]", 120)
    assert run.unmutated_passes(f"{cases}::test_p[zz]", 120)
    checked: list[str] = []

    def check(test_id: str, limit: float) -> bool:
        checked.append(test_id)
        return True
    cache = run.UnmutatedTests(60, check)
    threads = [threading.Thread(target=cache.passes, args=("tests/t.py::a",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.passes("tests/t.py::b") and checked == ["tests/t.py::a", "tests/t.py::b"]


def test_the_failing_tests_are_named_by_their_ids(tmp_path: Path) -> None:
    tests = tmp_path / "test_two.py"
    tests.write_text("def test_good():\n    pass\n\n\ndef test_bad():\n    assert False\n", encoding="utf-8")
    mutant = population(["agent_cards.branch"])[0]
    assert run.planted_pytest(mutant, [*run.PYTEST_OPTIONS, str(tests)], 120) == (1, [f"{tests}::test_bad"])
    spaced = tmp_path / "test_spaced.py"
    spaced.write_text("import pytest\n\n\n@pytest.mark.parametrize('x', ['a b'])\ndef test_it(x):\n    assert False\n",
                      encoding="utf-8")
    status, failed = run.planted_pytest(mutant, [*run.PYTEST_OPTIONS, str(spaced)], 120)
    assert (status, failed) == (1, [f"{spaced}::test_it[a b]"])
    assert not run.unmutated_passes(failed[0], 120) and run.unmutated_passes(f"{tests}::test_good", 120)


def test_where_nothing_can_kill_a_module_s_mutants_mutate_refuses_in_one_line(tmp_path: Path) -> None:
    """An installed copy without the test extra: the packages, no scenarios, no tests, no pyproject.toml, and
    no hypothesis for a fuzz run (hidden here). pytest would collect nothing: no score is printed."""
    for package, folder in (("agent_cards", "agent_cards"), ("agent_cards_simulator", "simulator"),
                            ("agent_cards_mutation", "mutation")):
        shutil.copytree(ROOT / folder, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['hypothesis'] = None; "
                           "from agent_cards_mutation.command import main; sys.exit(main(sys.argv[1:]))",
                           "--sample", "2", "agent_cards.branch"], cwd=tmp_path, capture_output=True, text=True,
                          check=False, timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("agent-cards mutate: nothing here can kill a mutant of agent_cards.branch:"), (
        done.stderr)
    assert "mutation score" not in done.stdout


# -- the judge -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("module", "path"), [
    ("agent_cards.taken", "agent_cards/taken.py"),
    ("agent_cards.bridge", "agent_cards/bridge/__init__.py"),
    ("agent_cards_simulator.scenario.expect", "simulator/scenario/expect.py"),
    ("agent_cards_conformance.compare", "conformance/compare.py"),
])
def test_a_module_is_found_through_the_package_dir_map(module: str, path: str, tmp_path: Path) -> None:
    assert module_path(module, ROOT) == ROOT / path
    # an installed copy has no pyproject.toml: its folders are its packages' names
    assert module_path("agent_cards_simulator.scenario.expect", tmp_path) == (
        tmp_path / "agent_cards_simulator" / "scenario" / "expect.py")


def test_every_module_of_the_judge_is_accepted_by_name_and_has_killers() -> None:
    assert run.judge_modules() == list(run.JUDGE)
    tests = run.tests_by_module()
    for module in run.JUDGE:
        assert population([module]), module
        files = [f for f in tests.get(module, []) if Path(f).name not in run.NOT_KILLERS_OF_THE_JUDGE]
        assert files, f"no test file kills a mutant of {module}"
    assert "tests/test_fuzz.py" in tests["agent_cards_simulator.fuzz.writer"]


def test_a_mutant_of_the_scenario_expectations_is_killed_by_an_assertion() -> None:
    """No expectation ever fails (its failure is never written down): every shipped scenario still passes
    and replays as before, and a test that replays a scenario that must fail says so."""
    blind = next(m for m in population(["agent_cards_simulator.scenario.expect"])
                 if m.id.startswith("agent_cards_simulator.scenario.expect:failures:call-deleted:out.append(message)"))
    out = tried(blind.id)
    assert out.startswith(f"killed by tests: {blind.id}: FAILED tests/"), out
    assert re.search(r"^agent_cards_simulator\.scenario\.expect +1 +1 +0 +0 +0$", out, re.MULTILINE), out


def test_a_mutant_of_the_pytest_plugin_that_passes_a_failing_scenario_is_killed_by_an_assertion() -> None:
    """The plugin's own test file runs pytest in processes of their own, blind to a mutant: the one that
    judges in process kills it, and names itself relative to the project (it changes the current folder)."""
    silent = next(m for m in population(["agent_cards_simulator.scenario.pytest_plugin"])
                  if m.id.startswith("agent_cards_simulator.scenario.pytest_plugin:_replay_scenario:call-deleted:"
                                     "pytest.fail('\\n'.join(result.failures)"))
    out = tried(silent.id)
    assert out.startswith(f"killed by tests: {silent.id}: FAILED tests/test_pytest_plugin_in_process.py::"), out


# -- the sample --------------------------------------------------------------------------------------------


def test_the_chance_a_weak_tree_passes_a_sample_is_counted_exactly() -> None:
    assert [needed(n, 0.9) for n in (8, 10, 40, 100)] == [8, 9, 36, 90]
    assert pass_chance(8, 0.9) == pytest.approx(0.8 ** 8)  # eight of eight must die: the old CI sample
    assert pass_chance(10, 0.9) == pytest.approx(0.8 ** 10 + 10 * 0.8 ** 9 * 0.2)
    # drawn without replacement: 8 killed of 10, a sample of 2 passes at 90% only with both killed
    assert pass_chance(2, 0.9, 0.8, 10) == pytest.approx(math.comb(8, 2) / math.comb(10, 2))
    assert pass_chance(3, 0.5, 0.8, 10) == pytest.approx(1 - math.comb(8, 1) * math.comb(2, 2) / math.comb(10, 3))
    assert pass_chance(5, 0.9, 1.0, 50) == 1.0
    assert pass_chance(100, 0.9) < pass_chance(40, 0.9) < pass_chance(8, 0.9)
    from agent_cards_mutation.command import chance_line

    assert chance_line(100, 903, 0.9).endswith("with probability 0.37%")
    assert chance_line(240, 5262, 0.9).endswith("with probability under 0.01%")  # never a bare 0.00%
    # a judge-sized population and sample: terms past any float, the chance still a probability
    assert 0.0 < pass_chance(240, 0.9, 0.8, 5260) < 1e-4 and 0.0 < pass_chance(2000, 0.9) < 1e-30
    with pytest.raises(ValueError, match="a sample of 11 from a population of 10"):
        pass_chance(11, 0.9, 0.8, 10)


def test_the_sample_is_seeded_by_the_commit_or_says_why_not(tmp_path: Path) -> None:
    seed, said = command.commit_seed(7, ROOT)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip()
    if head:
        assert seed == int(head, 16) % 2**32 and said == f"seed {seed}, from commit {head[:12]}"
    seed, said = command.commit_seed(7, tmp_path)
    assert seed == 7 and said.startswith("no commit to seed the sample from (") and said.endswith("): seed 7")


def ci_samples(text: str) -> list[list[str]]:
    """The words of each ``agent-cards mutate`` line of a CI script, a line's continuations joined to it."""
    return [line.split() for line in text.replace("\\\n", " ").splitlines()
            if line.startswith(".venv/bin/agent-cards mutate ")]


def test_ci_s_samples_are_drawn_by_the_commit_and_a_tree_at_80_percent_passes_each_under_1_percent() -> None:
    """Each sample ``.ci/run`` draws (the mod's, the judge's): whichever listed equivalents a draw happens to hold
    (dropped after the draw, up to a tenth of it), a tree where only 80% of the mutants of the modules it names
    die by an assertion passes it with a chance under 1%."""
    samples = ci_samples((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert len(samples) == 2
    listed = command.equivalents()
    for words in samples:
        assert "--seed-from-commit" in words and "--seed" not in words
        sample, threshold = int(words[words.index("--sample") + 1]), float(words[words.index("--threshold") + 1])
        named = [w for w in words[3:] if w.startswith("agent_cards")]
        assert "--judge" not in words, words  # --judge draws from real.py too, which is below the threshold
        modules = named or list(command.CORE)
        drawn = [m for m in population(modules) if m.id not in listed]
        for tried_ in range(sample - sample // 10, sample + 1):
            assert pass_chance(tried_, threshold, 0.8, len(drawn)) < 0.01, (words, tried_)
            assert pass_chance(tried_, threshold, 0.8) < 0.01, (words, tried_)  # and counted as independent draws


def test_ci_s_judge_sample_names_judge_modules_and_not_the_real_sides_driver() -> None:
    """The judge's sample draws from judge modules only, each named once, and not from the real side's driver,
    whose killers are the end-to-end tier's: a module below the threshold would turn CI red by chance."""
    [core, judge] = ci_samples((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert not [w for w in core[3:] if w.startswith("agent_cards")]
    named = [w for w in judge[3:] if w.startswith("agent_cards")]
    assert named and set(named) <= set(run.JUDGE) and len(set(named)) == len(named)
    assert "agent_cards_conformance.real" not in named


def test_a_ci_line_continued_is_read_whole() -> None:
    assert ci_samples("x\n.venv/bin/agent-cards mutate --sample 5 \\\n  a b\n") == [
        [".venv/bin/agent-cards", "mutate", "--sample", "5", "a", "b"]]


def test_a_sample_drawn_by_the_commit_says_its_seed_and_what_it_can_say(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    tried_ids: list[str] = []

    def all_killed(mutants_: list[Mutant], jobs: int, limits: Limits, done: object) -> list[Outcome]:
        tried_ids.extend(m.id for m in mutants_)
        return [Outcome(m, "replay") for m in mutants_]

    monkeypatch.setattr(command, "run_all", all_killed)
    monkeypatch.setattr(command, "commit_seed", lambda fallback: (123, "seed 123, from commit 0123456789ab"))
    branch = population(["agent_cards.branch"])
    assert command.main(["--sample", "5", "--seed-from-commit", "agent_cards.branch"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = command.equivalents()
    drawn = [m.id for m in random.Random(123).sample(branch, 5) if m.id not in listed]
    assert tried_ids == drawn
    assert out[0] == f"sample: 5 of {len(branch)} mutants, seed 123, from commit 0123456789ab"
    left = sum(m.id not in listed for m in branch)
    assert out[1] == (f"a tree whose true share killed by an assertion is 80% passes {len(drawn)} mutants drawn from "
                      f"{left} at 90% with probability {pass_chance(len(drawn), 0.9, 0.8, left):.2%}")
