"""The real side proves itself: the evidence kept from real runs is made into their saved transcripts again by
the code a real run uses, and an extraction blind to any kind of event it reads fails the self-test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_cards_conformance import selftest
from agent_cards_conformance.extract import MACHINE_PATH, Evidence, Extractor, Request, kept
from agent_cards_conformance.selftest import EVIDENCE, FIXTURE, extraction_problem, load_evidence, load_fixture

KEPT = load_evidence()
SAVED = load_fixture()
#: Every kind of event the saved real transcripts hold: each must be read from the evidence.
KINDS = sorted({e["kind"] for file in KEPT for e in SAVED[file]})


def _scenario(file: str) -> Any:
    [scenario] = selftest._units(file)
    return scenario


def test_the_kept_evidence_makes_each_saved_transcript_again() -> None:
    assert KEPT and KEPT.keys() == SAVED.keys()
    for file, evidence in KEPT.items():
        assert extraction_problem(_scenario(file), evidence, SAVED[file]) == "", file


@pytest.fixture
def blind(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """The extraction as it is, but blind to the kinds of event put in the set."""
    unseen: set[str] = set()
    events = Extractor.events

    def seen(self: Extractor) -> list[dict[str, Any]]:
        return [e for e in events(self) if e["kind"] not in unseen]

    monkeypatch.setattr(Extractor, "events", seen)
    yield unseen


@pytest.mark.parametrize("kind", KINDS)
def test_an_extraction_blind_to_any_kind_of_event_fails_the_self_test(kind: str, blind: set[str]) -> None:
    blind.add(kind)
    problems = {file: extraction_problem(_scenario(file), evidence, SAVED[file]) for file, evidence in KEPT.items()}
    assert any(problems.values())


def test_the_self_test_fails_when_the_extraction_is_blind(blind: set[str]) -> None:
    blind.add("permission")
    test = selftest.self_test(kit=[])
    assert not test.passed and any(test.extracted.values())


def test_a_permission_read_from_the_plan_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """An extraction that took each check's outcome from elsewhere than what was pressed and what the model got
    (here: every check allowed by the mode) makes other transcripts than the real runs did."""
    monkeypatch.setattr(Extractor, "checked", lambda self, call_id, passed, refusal: ("allow", "mode", passed))
    problems = [extraction_problem(_scenario(f), e, SAVED[f]) for f, e in KEPT.items()]
    assert any("permission" in p for p in problems)


def test_a_note_taken_from_what_lich_typed_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """An extraction that took each note as typed (its text alone, the moment the model was next asked),
    rather than as the model read it in the request that holds it, makes other transcripts than the real runs."""
    def as_typed(self: Extractor) -> list[dict[str, Any]]:
        ev = self.evidence
        return [{"t": ev.ms(ev.main[asked].time) if asked < len(ev.main) else 0, "kind": "note", "text": text}
                for text, asked in ev.notes]

    monkeypatch.setattr(Extractor, "notes", as_typed)
    problems = [extraction_problem(_scenario(f), e, SAVED[f]) for f, e in KEPT.items()]
    assert any(problems)


def test_a_note_the_model_never_read_is_no_event() -> None:
    """Typed, but no request after it holds it (the run ended first): no note; one that came with the next
    request is read from there, with what came beside it."""
    note = '[lich] Session "Session 2" finished the task you handed it (ticket a1b2c301). Its report:\n\nDone.'
    beside = "<system-reminder>\nprompt.submit hook additional context: it still runs\n</system-reminder>\n"
    read = {"messages": [{"role": "user", "content": [{"type": "text", "text": beside},
                                                      {"type": "text", "text": note}]}]}
    scenario = _scenario("scenarios/report-note.yaml")
    unread = Evidence(10.0, main=[], notes=[(note, 0)])
    assert Extractor(scenario, unread).notes() == []
    came = Evidence(10.0, main=[Request(12.5, read)], notes=[(note, 0)])
    assert Extractor(scenario, came).notes() == [{"t": 2500, "kind": "note", "text": note,
                                                  "context": ["it still runs"]}]
    other = Evidence(10.0, main=[Request(12.5, {"messages": [{"role": "user", "content": "Go on."}]})],
                     notes=[(note, 0)])
    assert Extractor(scenario, other).notes() == []


def test_kept_evidence_names_no_folder_of_the_machine() -> None:
    text = EVIDENCE.read_text(encoding="utf-8") + FIXTURE.read_text(encoding="utf-8")
    assert "/tmp/" not in text and "conform-" not in text


def test_evidence_is_kept_with_its_run_folder_named_and_reads_back_the_same() -> None:
    evidence = Evidence(10.0, paths=[("/srv/runs/r1/lich/bin/lich", "/opt/lich/bin/lich")],
                        bridge=[{"t": 11.0, "effects": [{"toast": "see /srv/runs/r1/x and /tmp/claude-0/y"}]}])
    data = kept(evidence, "/srv/runs/r1")
    assert data["paths"] == [["<run>/lich/bin/lich", "/opt/lich/bin/lich"]]
    assert data["bridge"][0]["effects"][0]["toast"] == "see <run>/x and <folder>"
    again = Evidence.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data
    assert MACHINE_PATH.sub("<folder>", "at <run>/x") == "at <folder>"


def test_every_field_of_the_evidence_survives_its_keeping() -> None:
    """Kept and read back, evidence is the same, field by field (a field lost on the way would blind the
    extraction of every run kept after it)."""
    from agent_cards.record import plain
    from agent_cards_conformance.extract import Request, RunRecord

    every = Evidence(
        10.0, paths=[("/r/lich", "/opt/lich")], main=[Request(11.0, {"messages": [{"role": "user", "content": "x"}]})],
        subagent=[Request(12.0, {"messages": []})], served={1: 10.5}, sent={1: [{"call": "c1", "tool": "Agent"}]},
        footers=[(13.0, "lich: 1 worker"), (14.0, None)], panels=[(15.0, True)], marks=[{"at": 16.0, "kind": "esc"}],
        dialogs={"c1": (17.0, False)}, prompts=[("Go on.", 1)], plugin_answers={"c2": (18.0, {"value": 1})},
        boots=[(19.0, {"events": []})], runs=[RunRecord("git", 20, ["status"], "o", "e", 21, (0, 22))],
        bridge=[{"t": 23.0}], notes=[("[lich] done", 1)])
    data = every.to_json()
    assert all(value not in (None, [], {}, 0.0) for value in data.values()), data
    assert plain(Evidence.from_json(json.loads(json.dumps(data)))) == plain(every)
