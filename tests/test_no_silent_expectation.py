"""A scenario writer's slip is named where it is: an unknown field, operator or step key is a ``FILE:LINE``
error with the nearest known name, a failed expectation names the closest event and the field that
differed, a TaskStop written with a call's id points to ``{worker: …}``, and the timeline prints every
field of a result."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cards_simulator.scenario.files import scenario_files
from agent_cards_simulator.scenario.reader import ScenarioError, read
from agent_cards_simulator.scenario.render import to_text
from agent_cards_simulator.scenario.replay import replay

ROOT = Path(__file__).resolve().parents[1]
HEAD = "title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - call: {description: Fix the login bug, prompt: Fix it}\n"


def problems(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as raised:
        read("scenarios/x.yaml", text=text)
    return raised.value.lines()


@pytest.mark.parametrize(("expect", "line"), [
    ("  - no run: {arg: {contains: open}}",
     "scenarios/x.yaml:6: expect[0].no run: unknown field 'arg' in an expectation (did you mean 'argv'?)"),
    ("  - answer: {call: toolu_0001, reslt: {status: completed}}",
     "scenarios/x.yaml:6: expect[0].answer: unknown field 'reslt' in an expectation (did you mean 'result'?)"),
    ("  - no run: {argv: {contain: open}}",
     "scenarios/x.yaml:6: expect[0].no run.argv: unknown operator 'contain' (did you mean 'contains'?)"),
])
def test_an_unknown_field_or_operator_in_an_expectation_is_an_error_with_the_nearest_name(
        expect: str, line: str) -> None:
    assert problems(HEAD + "expect:\n" + expect + "\n") == [line]


def test_an_unknown_key_of_a_step_or_a_setting_is_an_error_with_the_nearest_name() -> None:
    step = problems(HEAD.replace("prompt: Fix it}", "prompt: Fix it}\n    lihc: {}"))
    assert step == ["scenarios/x.yaml:5: steps[0]: unknown key 'lihc' (did you mean 'lich'?)"]
    setting = problems(HEAD + "session:\n  interactve: false\n")
    assert setting == ["scenarios/x.yaml:6: session: unknown key 'interactve' (did you mean 'interactive'?)"]


def test_an_object_field_still_matches_any_of_its_own_keys() -> None:
    read("x.yaml", text=HEAD + "expect:\n  - answer: {result: {anyKeyOfTheResult: 1}}\n")


def test_every_shipped_scenario_still_reads() -> None:
    for file in scenario_files([ROOT / "scenarios"]):
        read(file)


def test_a_taskstop_given_a_call_id_points_to_worker() -> None:
    (line,) = problems(HEAD + "  - taskstop: toolu_0001\n")
    assert line.startswith("scenarios/x.yaml:5: steps[1].taskstop: 'toolu_0001' is a call's id, not a task id")
    assert line.endswith("write taskstop: {worker: toolu_0001}")
    read("x.yaml", text=HEAD + "  - taskstop: {worker: toolu_0001}\n")  # the form it points to reads


def test_a_failed_expectation_names_the_closest_event_and_the_field_that_differed() -> None:
    scenario = read("x.yaml", text=HEAD + "expect:\n  - answer: {call: toolu_0001, result: {status: completed}}\n"
                    "  - run: {argv: {contains: close}}\n  - note\n")
    wrong_status, wrong_argv, no_note = replay(scenario).failures
    assert wrong_status.endswith('found 0; the closest, the answer at t=800, differs in result.status: expected '
                                 '"completed", got "async_launched"')
    assert ('; the closest, the run at t=0, differs in argv: expected {"contains": "close"}, got '
            '["/opt/lich/bin/lich", "open", ') in wrong_argv
    assert no_note.endswith("found 0; no note event at all")


def test_the_timeline_prints_every_field_of_a_result_whole() -> None:
    result = replay(read(ROOT / "scenarios" / "take" / "remote.yaml"))
    answer = next(e for e in result.events if e["kind"] == "answer")["result"]
    line = next(line for line in to_text(result).splitlines() if " answer " in line)
    for key, value in answer.items():
        if key not in ("content", "prompt"):  # shown whole on lines of their own, and on the call's line
            assert f'"{key}": ' in line and (str(value).lower() if isinstance(value, bool) else str(value)) in line
