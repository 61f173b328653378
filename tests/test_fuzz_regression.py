"""A fuzz failure's written file is a regression scenario: with the bug in, its replay fails on the expectation
the fuzz wrote (the field that was wrong, pinned to what the spec wants there); with the bug out, the same file
passes. Checked for every plant of the fuzzer's own list (``fuzz.plants.PLANTS``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cards_simulator.fuzz.engine import Found, Fuzz
from agent_cards_simulator.fuzz.invariants import Violation
from agent_cards_simulator.fuzz.plants import PLANTS, planted
from agent_cards_simulator.scenario.files import read_checked
from agent_cards_simulator.scenario.replay import Replay, replay

#: The seed at which the fuzz finds each plant soonest (within its first dozen cases but for size-limit-ge, the
#: rarest: a prompt of exactly the limit's size), so that with shrinking each takes a few seconds.
SEEDS: dict[str, int] = {
    "refused-stop-ends-poll": 8,
    "two-failed-reads-end-poll": 0,
    "unanswered-completed": 1,
    "unanswered-counted": 1,
    "undelivered-launched": 0,
    "no-base": 6,
    "model-first": 9,
    "six-word-slug": 0,
    "suffix-first-four": 6,
    "size-limit-ge": 3,
    "stopped-still-counted": 4,
    "list-fail-resets-count": 0,
    "close-control-swapped": 2,
    "errands-first-mode-only": 6,
    "isolated-done-ignored": 2,
    "shared-done-finished": 8,
    "poll-period-6s": 0,
    "poll-without-workers": 0,
    "open-timeout-60s": 0,
    "stop-result-without-command": 0,
    "refused-stop-read-as-stopped": 0,
    "answered-launched": 0,
    "kept-worker-not-told": 0,
}
#: Plants no fuzz finds, so no file is ever written for them, with why.
NOT_FOUND = {"stop-exits-swapped": "the spec gives a stop's exits 2 and 3 no meaning: the model widens the count"}
#: The fuzz stops at its first violation: a cap well past where each seed finds its plant.
CASES = 600


@pytest.fixture(autouse=True)
def _own_example_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The fuzz's example database in a folder of the test's own, never the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def test_every_plant_of_the_fuzzers_list_is_checked() -> None:
    assert set(SEEDS).isdisjoint(NOT_FOUND)
    assert set(SEEDS) | set(NOT_FOUND) == {plant.name for plant in PLANTS}


def written(name: str, out: Path) -> tuple[Path, Found]:
    """The file the fuzz writes for the plant ``name`` (found, shrunk and written with the plant in)."""
    plant = next(p for p in PLANTS if p.name == name)
    with planted(plant):
        fuzz = Fuzz(SEEDS[name], progress=False, examples=False)
        found = fuzz.run(CASES)
        assert found is not None, f"seed {SEEDS[name]} no longer finds {name} in {CASES} cases: pick another"
        return fuzz.write(found, out), found


def replayed(name: str, path: Path, *, plant_in: bool) -> Replay:
    if not plant_in:
        return replay(read_checked(path))
    with planted(next(p for p in PLANTS if p.name == name)):
        return replay(read_checked(path))


def expectation_failures(result: Replay) -> list[str]:
    """The failures of the written ``expect`` (those report what they expected), not of a step or a stall."""
    return [f for f in result.failures if ": expected " in f]


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_a_written_fuzz_failure_is_a_regression_scenario(name: str, tmp_path: Path) -> None:
    path, found = written(name, tmp_path)
    assert found.violation.expect, f"{found.violation.kind}: the file pins nothing"  # the oracle's kinds all can
    red = replayed(name, path, plant_in=True)
    assert not red.passed and expectation_failures(red) == red.failures, red.failures
    green = replayed(name, path, plant_in=False)  # the bug fixed: the same file, unchanged, passes
    assert green.passed, green.failures


def test_a_file_that_pins_only_when_and_which_call_is_caught(tmp_path: Path) -> None:
    """What the fuzz wrote before it pinned the wrong field: an answer ruled out by its time and call alone.
    With the bug out the answer still comes then, so the file stays red: the check above would say so."""
    name = "unanswered-completed"
    path, found = written(name, tmp_path)
    [pinned] = found.violation.expect
    call = pinned["answer"]["call"]
    answered_at = next(e["t"] for e in replayed(name, path, plant_in=False).events
                       if e["kind"] == "answer" and e["call"] == call)
    vague = Fuzz(SEEDS[name], progress=False).write(
        Found(found.data, Violation(found.violation.kind, found.violation.message,
                                    ({"no answer": {"t": answered_at, "call": call}},))), tmp_path / "vague")
    assert not replayed(name, vague, plant_in=True).passed
    assert not replayed(name, vague, plant_in=False).passed  # red on the right mod: no regression scenario
