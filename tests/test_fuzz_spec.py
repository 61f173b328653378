"""The fuzz against the spec: its own model of the spec (the oracle), liveness after the quiet tail, the
step a violation first held at, the states a run reaches, and the example database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cards_simulator.fuzz import command, example_folder, invariants, oracle, reached
from agent_cards_simulator.fuzz.engine import Fuzz, examine
from agent_cards_simulator.fuzz.generate import with_tail
from agent_cards_simulator.fuzz.plants import PLANTS, planted
from agent_cards_simulator.scenario.files import read_checked
from agent_cards_simulator.scenario.replay import replay

ROOT = Path(__file__).resolve().parents[1]
PLANT = {p.name: p for p in PLANTS}


@pytest.fixture(autouse=True)
def _own_example_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.mark.parametrize(("description", "slug"), [  # the spec's own table
    ("Investigate why the websocket reconnect loop never stops retrying", "investigate-why-the-websocket-reconnect"),
    ("a b c d e f g", "a-b-c-d-e"),
    ("Corrigir autenticação do usuário", "corrigir-autenticação-do-usuário"),
    ("x" * 50, "x" * 40),
    ("!!! ???", "agent"),
    ("", "agent"),
    ("Fix the auth flow", "fix-the-auth-flow"),
])
def test_the_oracle_slugs_as_the_spec_says(description: str, slug: str) -> None:
    assert oracle.slug(description) == slug
    assert oracle.branch("Fix the auth flow", "toolu_01XyZ_9Q") == "subagent/fix-the-auth-flow-yz9q"


def test_the_oracle_agrees_with_every_scenario_of_the_project() -> None:
    """Written from the spec, not the mod: the project's scenarios (each read against the spec by hand)
    are its first test."""
    checked = 0
    for path in sorted((ROOT / "scenarios").rglob("*.yaml")):
        if path.name == "clauses.yaml":
            continue
        scenario = read_checked(path)
        for one in scenario.variants or (scenario,):
            events = replay(one).events
            assert list(oracle.SpecModel(one, events).disagreements()) == [], path
            checked += 1
    assert checked > 80


def _worker_refused(exit_code: int) -> dict[str, Any]:
    return with_tail({"title": "t", "clauses": ["STOP-REFUSED"],
                      "lich": {"stops": {"session-2-9f81": {"exit": exit_code}}},
                      "steps": [{"call": {"description": "Fix the login bug", "prompt": "task 1"},
                                 "lich": {"report": {"after": 9_000}}},
                                {"taskstop": {"worker": "toolu_0001"}}, {"wait": 12_000}]})


def test_a_refused_stop_then_the_worker_finishes_is_a_reached_state() -> None:
    checked = examine(_worker_refused(1))
    assert checked.violation is None
    assert "stop-refused-then-finished" in checked.reached
    assert "stop-refused-then-finished" not in examine(_worker_refused(0)).reached


def test_a_violation_names_the_step_where_it_first_held() -> None:
    with planted(PLANT["stopped-still-counted"]):
        checked = examine(_worker_refused(0))
    assert checked.violation is not None
    # the wait whose poll read lich while no worker was left (the footer drawn as the stop returned may
    # show the count on that very ms), not the tail's end
    assert checked.violation.kind == "oracle-poll" and checked.violation.message.startswith("steps[2]: ")
    assert examine(_worker_refused(0)).violation is None


@pytest.mark.parametrize("name", ["refused-stop-ends-poll", "two-failed-reads-end-poll"])
def test_the_fuzz_finds_a_liveness_bug_shrinks_it_and_writes_it(name: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """At the CI seed: the fuzz's safety invariants alone passed both of these."""
    with planted(PLANT[name]):
        assert command.run(300, 14, tmp_path, progress=False) == 1
        out = capsys.readouterr().out
        assert "a violation (liveness-poll) at case" in out and "shrunk over the" in out
        [path] = tmp_path.glob("fuzz-14-liveness-poll.yaml")
        result = replay(read_checked(path))  # the written file fails for the same reason: no read in time
        assert not result.passed and any("sessions" in f for f in result.failures), result.failures
    assert replay(read_checked(path)).passed  # the bug gone, the same file passes


def test_a_failure_found_is_tried_first_on_the_next_run(tmp_path: Path) -> None:
    with planted(PLANT["refused-stop-ends-poll"]):
        first = Fuzz(14, progress=False)
        assert first.run(300) is not None
        assert any(example_folder().iterdir())
        again = Fuzz(4242, progress=False, shrink=False)  # another seed: only the database finds it at once
        found = again.run(300)
        assert found is not None and found.violation.kind == "liveness-poll" and again.first_at == 1


def _examined(path: Path) -> tuple[Any, set[str]]:
    scenario = read_checked(path)
    result = replay(scenario)
    violation, model = invariants.examine(scenario, result)
    assert model is not None
    return violation, reached.reached(model, result.events)


@pytest.mark.parametrize(("name", "states"), [
    ("continue", {"continue-worker-running", "continue-told-still-running", "stop-after-continue"}),
    ("continue-dropped", {"continue-worker-dropped"}),
    ("host-dies", {"host-restart-with-workers"}),
])
def test_what_a_session_outlives_is_a_reached_state(name: str, states: set[str]) -> None:
    violation, seen = _examined(ROOT / "scenarios" / "resume" / f"{name}.yaml")
    assert violation is None and states <= seen, (violation, seen)
    assert not states & _examined(ROOT / "scenarios" / "reload.yaml")[1]


def test_a_continue_read_back_with_a_name_of_the_wrong_type_is_examined() -> None:
    read = {"read": 1, "stdout": '[{"name": ["session-2-9f81"]}]', "exit": 0}
    checked = examine(with_tail({"title": "t", "clauses": ["TAKE-TYPE"], "lich": {"lists": [read]},
                                 "steps": [{"call": {"description": "Fix the login bug", "prompt": "task 1"}},
                                           "continue", {"wait": 6000}]}))
    assert checked.violation is None or checked.violation.kind != "replay-failed", checked.violation


def test_the_oracle_knows_a_note_before_any_prompt_tells_the_model_a_kept_worker_runs() -> None:
    """lich's note is submitted at the prompt: after a new process, when it comes first, the line is beside it
    (the model of the spec once looked only at the person's prompts, and the mod that was right failed it)."""
    scenario = read_checked(ROOT / "scenarios" / "resume" / "note-first.yaml")
    assert not list(oracle.SpecModel(scenario, replay(scenario).events).disagreements())
    with planted(PLANT["kept-worker-not-told"]):
        events = replay(scenario).events
    [told] = [d for d in oracle.SpecModel(scenario, events).disagreements() if d.kind == "oracle-resume"]
    assert "the note at t=6000" in told.message and list(told.expect) == ["note"]


def test_the_oracle_knows_the_model_is_told_a_kept_worker_runs() -> None:
    scenario = read_checked(ROOT / "scenarios" / "resume" / "continue.yaml")
    with planted(PLANT["kept-worker-not-told"]):
        events = replay(scenario).events
    kinds = [d.kind for d in oracle.SpecModel(scenario, events).disagreements()]
    assert "oracle-resume" in kinds
    assert not list(oracle.SpecModel(scenario, replay(scenario).events).disagreements())


def test_every_listed_state_has_a_name_and_a_line() -> None:
    assert set(reached.STATES).isdisjoint(reached.NOT_YET)
    assert "host-restart-with-workers" in reached.STATES
    assert all(state.doc for state in reached.STATES.values())


#: One process's draws for seed 7: a digest of the first cases, after importing the modules named in argv.
_DRAWS = """
import hashlib, importlib, json, sys
from agent_cards_simulator.fuzz import engine
for name in sys.argv[1:]:
    importlib.import_module(name)
drawn = []
examine = engine.examine
engine.examine = lambda data: (drawn.append(json.dumps(data, sort_keys=True, default=repr)), examine(data))[1]
engine.Fuzz(7, progress=False, examples=False, shrink=False).run(40)
print(len(drawn), hashlib.sha256("".join(drawn).encode()).hexdigest())
"""


def test_a_seed_draws_the_same_cases_whatever_the_process_imported(tmp_path: Path) -> None:
    """hypothesis mixes in the literals of the working tree's imported modules; under pytest other modules
    are loaded, in any order, than from the command line, and the same seed must still draw the same cases."""
    def draws(*modules: str) -> str:
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
        done = subprocess.run([sys.executable, "-c", _DRAWS, *modules], capture_output=True, text=True,
                              timeout=300, check=False, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    alone = draws()
    assert int(alone.split()[0]) > 0
    assert draws("agent_cards_conformance.command", "agent_cards_conformance.report",
                 "agent_cards_claude_driver.tui", "agent_cards_simulator.scenario.importer") == alone


def test_a_worker_lich_printed_a_label_but_no_name_for_is_stopped_by_that_label() -> None:
    """The roster name falls back to the label (then the id): a TaskStop of that label is the mod's, not
    Claude Code's, and the oracle holds the mod to it (found by a long fuzz run as a false alarm)."""
    checked = examine(with_tail({"title": "t", "clauses": ["TAKE-TYPE"], "steps": [
        {"call": {"description": "Fix the login bug", "prompt": "task 3"},
         "lich": {"stdout": '{"id": "9f81", "delivery": {"status": "pending"}, "label": "session-2-9f81"}',
                  "exit": 0}},
        {"taskstop": "session-2-9f81"}]}))
    assert checked.violation is None, checked.violation


def test_a_task_stop_the_persons_esc_gave_up_goes_nowhere() -> None:
    """Esc as two TaskStops are raised: the engine rejects both before its own TaskStop runs; the oracle
    asks no native TaskStop of them (found by a long fuzz run as a false alarm)."""
    checked = examine(with_tail({"title": "t", "clauses": ["TAKE-TYPE"], "steps": [
        {"parallel": [{"taskstop": "session-2-9f81"}, {"taskstop": "session-2-9f81"}], "esc_after": 0}]}))
    assert checked.violation is None, checked.violation
