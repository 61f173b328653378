"""The real side of conformance observes, never copies the plan: which call a permission dialog asks about is
read off its card, the answer given there is the one the plan has for that call, and a permission's outcome
and ``via`` come from what was pressed or what the engine sent the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cards_claude_driver.tui import dialog_on
from agent_cards_conformance.extract import Evidence, Extractor, refusal_of
from agent_cards_conformance.invariants import in_replay_terms
from agent_cards_conformance.plan import plan
from agent_cards_conformance.real import _asked_call
from agent_cards_simulator.host import results
from agent_cards_simulator.scenario.files import load_all
from agent_cards_simulator.scenario.replay import replay
from agent_cards_simulator.scenario.steps import ToolCall

ROOT = Path(__file__).resolve().parents[1]
RULE = "╌" * 60


def card(place: str, description: str) -> str:
    """The screen of Claude Code 2.1.328 with a permission dialog up (trimmed, as captured under tmux)."""
    return f"""
● Two at once.

● Running 2 agents…
   ├ Fix the login bug
   │ ⎿  Initializing…
   └ Fix the logout bug
     ⎿  Initializing…

{"─" * 80}
 Tool use                                                                        {place}
 │ Launch a new agent
{RULE}
 Agent({description})
{RULE}
 Rule Agent from project local settings says to ask.
 /permissions to update rules

 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and don't ask again for Agent commands in ~/project
   3. No

 Esc to cancel · Tab to amend
"""


def test_a_dialog_is_known_by_its_place_and_the_call_its_card_names() -> None:
    first, second = card("1 of 2", "Fix the login bug"), card("2 of 2", "Fix the logout bug")
    assert dialog_on(first) == ("1 of 2", "Fix the login bug")
    assert dialog_on(second) == ("2 of 2", "Fix the logout bug")
    assert dialog_on(first) != dialog_on(second)  # the next dialog is not the first one drawn again
    assert dialog_on(card("", "Fix it")) == ("", "Fix it")
    assert dialog_on(first.replace("Do you want to proceed?", "")) is None


CALLS = (ToolCall("Agent", {"description": "Fix the login bug", "prompt": "a"}, "toolu_0001"),
         ToolCall("Agent", {"description": "Fix the logout bug", "prompt": "b"}, "toolu_0002"))


@pytest.mark.parametrize(("named", "asks", "call"), [
    ("Fix the logout bug", {"toolu_0001": True, "toolu_0002": False}, "toolu_0002"),
    ("Fix the login bug", {"toolu_0001": True, "toolu_0002": False}, "toolu_0001"),
    ("Fix the log…", {"toolu_0002": False}, "toolu_0002"),  # a card that cut the description short
    ("", {"toolu_0001": True, "toolu_0002": False}, "toolu_0001"),  # a card that names none: in order
])
def test_each_dialog_is_answered_for_the_call_its_card_names(named: str, asks: dict[str, bool], call: str) -> None:
    assert _asked_call(named, CALLS, asks) == call


def _result(text: str, error: bool = True) -> dict[str, Any]:
    return {"is_error": error, "content": [{"type": "text", "text": text}]}


@pytest.mark.parametrize(("result", "via"), [
    (_result(results.rule_denied("general-purpose", "Agent(general-purpose)")), "rule"),
    (_result(f"<tool_use_error>{results.rule_denied('Explore', 'Agent(Explore)')}</tool_use_error>"), "rule"),
    (_result(results.hook_error("Blocked by policy")), "hook"),
    (_result(results.PERMISSION_DENIED_NOBODY), "dialog"),
    (_result(results.USER_REJECTED), None),  # a "no" or an Esc: known by the key pressed, not by the text
    (_result("Async agent launched successfully.", error=False), None),
    (_result("lich is not installed"), None),
])
def test_a_refusal_of_the_check_is_read_from_what_the_model_got(result: dict[str, Any], via: str | None) -> None:
    assert refusal_of(result) == via


def test_a_permission_is_what_was_pressed_for_that_call_whatever_the_plan_said() -> None:
    """The plan says yes then no; the runner saw the opposite pressed: the transcript says what was pressed
    (a lane filled from the plan could never disagree with it)."""
    [scenario], problems = load_all([ROOT / "scenarios" / "perm" / "parallel-yes-no.yaml"])
    assert not problems
    assert plan(scenario, replay(scenario).events).permission.answers == {"toolu_0001": True, "toolu_0002": False}
    extractor = Extractor(scenario, Evidence(0.0, dialogs={"toolu_0001": (5.0, False), "toolu_0002": (6.0, True)}))
    assert extractor.checked("toolu_0001", 4.0, None) == ("deny", "dialog", 5.0)
    assert extractor.checked("toolu_0002", 7.0, None) == ("allow", "dialog", 7.0)
    assert extractor.checked("toolu_0003", 4.0, "rule") == ("deny", "rule", 4.0)
    assert extractor.checked("toolu_0003", 4.0, None) == ("allow", "mode", 4.0)


def test_a_rejection_is_read_at_the_no_that_made_it_as_at_an_esc() -> None:
    """The model reads the rejection with its next request, seconds after the "no": read at the "no", a worker
    the allowed call's open still counts is one of the launched opens."""
    events = [
        {"t": 0, "kind": "call", "call": "toolu_0001", "tool": "Agent", "input": {}},
        {"t": 900, "kind": "permission", "call": "toolu_0002", "outcome": "deny", "via": "dialog"},
        {"t": 1400, "kind": "footer", "line": "lich: 1 worker"},
        {"t": 5200, "kind": "answer", "call": "toolu_0001", "error": results.USER_REJECTED},
    ]
    [answer] = [e for e in in_replay_terms(events) if e["kind"] == "answer"]
    assert answer["t"] == 900
