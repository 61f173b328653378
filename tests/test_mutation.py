"""``agent-cards mutate``: its mutants are named stably and leave descriptions alone, an obvious one is
killed, a listed equivalent is left out, a stale list and a low score fail, and a wrong command line is
one line."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cards_mutation import command
from agent_cards_mutation.operators import Mutant, mutants, mutated_tree
from agent_cards_mutation.run import ROOT, Limits, Outcome, population

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
                           "--threshold", "0", "--id", mutant_id], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=900)
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
    assert "mutation score: 3 of 4 killed (75.0%)" in out
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

    def forever() -> list[str]:
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
