"""The conformance self-test proves each check of the comparison: with any one check blind it fails."""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from typing import Any

import pytest

from agent_cards_conformance import selftest
from agent_cards_conformance.compare import CHECKS, Comparison, compare
from agent_cards_conformance.selftest import KIT, UNPROVEN, Infidelity, Replays, self_test

#: A lane of several checks is blinded whole as well as one check at a time.
LANES = sorted({lane for lane, _ in CHECKS.values()} - set(CHECKS))


def _blind(monkeypatch: pytest.MonkeyPatch, checks: Collection[str]) -> None:
    """The comparison as it is, but ``checks`` report nothing."""
    def blind(*args: Any, **kwargs: Any) -> Comparison:
        seen = compare(*args, **kwargs)
        return Comparison([d for d in seen.differences if d.check not in checks], seen.unseen)

    monkeypatch.setattr(selftest, "compare", blind)


def test_every_check_has_a_plant_aimed_at_it_or_says_why_the_fixture_cannot_show_it() -> None:
    aimed = {p.aims for p in KIT}
    assert aimed <= CHECKS.keys(), aimed - CHECKS.keys()
    assert UNPROVEN.keys() <= CHECKS.keys()
    assert not aimed & UNPROVEN.keys()
    assert aimed | UNPROVEN.keys() == CHECKS.keys(), CHECKS.keys() - aimed - UNPROVEN.keys()


def test_every_difference_the_comparison_finds_names_its_check() -> None:
    fake = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"}, {"t": 1, "kind": "toast", "text": "a"},
            {"t": 2, "kind": "answer", "call": "c1", "result": "x", "context": ["more"]}]
    real = [fake[0], {"t": 2, "kind": "answer", "call": "c1", "result": "x", "read": "x"},
            {"t": 9000, "kind": "toast", "text": "b"}]
    differences = compare(fake, real).differences
    assert differences and all(d.check in CHECKS and CHECKS[d.check][0] == d.lane for d in differences)
    assert {"answer.context", "toast", "toast.order", "time.toast"} <= {d.check for d in differences}


@pytest.fixture(scope="module")
def replays() -> Replays:
    """The kit's replays, made once: blinding a check changes the comparison, never what the fake host does."""
    return {}


@pytest.mark.parametrize("blinded", sorted(CHECKS.keys() - UNPROVEN.keys()) + LANES)
def test_the_self_test_fails_when_a_check_of_the_comparison_is_blind(
        blinded: str, monkeypatch: pytest.MonkeyPatch, replays: Replays) -> None:
    checks = {name for name, (lane, _) in CHECKS.items() if blinded in (name, lane)}
    _blind(monkeypatch, checks)
    test = self_test(replays=replays)
    assert not test.passed
    assert not any(test.baseline.values())
    assert {p.plant.aims for p in test.plants if not p.proven} <= checks
    assert any(not p.proven for p in test.plants if p.plant.aims in checks)


def test_a_check_the_fixture_cannot_show_is_not_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each check UNPROVEN lists goes unnoticed when blind (nothing proves it, and UNPROVEN says so and why);
    today the fixture shows every check, and the list is empty."""
    for check in sorted(UNPROVEN):
        with monkeypatch.context() as patched:
            _blind(patched, {check})
            assert self_test().passed


def test_a_plant_caught_only_by_another_check_is_missed() -> None:
    [toast] = [p for p in KIT if p.aims == "toast"]
    elsewhere = Infidelity(toast.name, toast.kind, toast.what, "time.toast", toast.patch)
    test = self_test([elsewhere])
    [outcome] = test.plants
    assert not test.passed and outcome.missed and not outcome.caught


def test_a_plant_that_alters_nothing_proves_nothing() -> None:
    test = self_test([Infidelity("nothing", "lane", "changes nothing", "toast", contextlib.nullcontext)])
    assert not test.passed
    assert "nothing: alters no scenario of selftest-real.jsonl, so proves nothing" in test.problems


def test_a_plant_aimed_at_no_check_of_the_comparison_fails() -> None:
    [toast] = [p for p in KIT if p.aims == "toast"]
    test = self_test([Infidelity(toast.name, toast.kind, toast.what, "toast colour", toast.patch)])
    assert any("which the comparison does not make" in problem for problem in test.problems)


def test_every_difference_of_the_kit_is_in_the_lane_its_check_names(monkeypatch: pytest.MonkeyPatch,
                                                                    replays: Replays) -> None:
    """Over every plant on every saved run: each difference found sits in the lane its check's row names."""
    seen: list[Any] = []

    def recording(*args: Any, **kwargs: Any) -> Comparison:
        comparison = compare(*args, **kwargs)
        seen.extend(comparison.differences)
        return comparison

    monkeypatch.setattr(selftest, "compare", recording)
    assert self_test(replays=replays).passed
    assert {d.check for d in seen} == CHECKS.keys() - UNPROVEN.keys()
    assert not {(d.check, d.lane) for d in seen if CHECKS[d.check][0] != d.lane}


def test_every_check_tolerance_and_normalisation_says_what_it_is_to_a_person() -> None:
    from agent_cards_conformance.compare import NORMALISATIONS, TOLERANCES

    assert all(lane and len(what.split()) >= 3 for lane, what in CHECKS.values()), CHECKS
    assert all(len(t.why.split()) >= 5 for t in TOLERANCES.values()), TOLERANCES
    assert all(len(str(what).split()) >= 5 for what in NORMALISATIONS.values()), NORMALISATIONS
