"""The expectation judge held to its words: every operator at its edges, every refusal of the reader as the
contributor reads it (FILE:LINE and the words), every failure's wording.

A contributor meets these as the only thing standing between a wrong transcript and a green check; each
case here is one a mutant of ``agent_cards_simulator.scenario.expect`` turned, and nothing else saw.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_cards_simulator.scenario.expect import ABSENT, failures, matches, valid_branch
from agent_cards_simulator.scenario.model import Expectation
from agent_cards_simulator.scenario.reader import ScenarioError, read

# -- operators at their edges ------------------------------------------------------------------------------


@pytest.mark.parametrize(("matcher", "value", "holds"), [
    ({"at": [-2, "a"]}, ["a", "b"], True),  # -len is the first item
    ({"at": [-3, "a"]}, ["a", "b"], False),
    ({"at": [2, "a"]}, ["a", "b"], False),  # len is past the last
    ({"at": [0, "a"]}, "abc", False),  # a text is no list, though it has a first character
    ({"after": ["a", "b"]}, ["a", "b"], True),  # from the first item
    ({"after": ["a", "b"]}, "ab", False),
    ({"right_after": ["a", "b"]}, "ab", False),
    ({"contains": 1}, 5, False),  # neither a text nor a list holds anything
    ({"le": 5}, 5, True), ({"le": 5}, 6, False),
    ({"ge": 5}, 5, True), ({"ge": 5}, 4, False),
    ({"lt": 5}, 5, False), ({"gt": 5}, 5, False),
    (["a", "b"], "ab", False), (["a"], ["a", "b"], False), (["a", "b"], ["a", "b"], True),
    (1, True, False), (True, 1, False), (1, 1.0, True), (1.0, 1, True), (0, False, False),
    ("x", ABSENT, False), ({"field": 1}, {}, False),
    ({"field": {"distinct": True}}, {}, False),  # an absent field has no value to be different
    ({"field": {"not": "x"}}, {}, True),  # not holds on an absent field
    ({"distinct": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),  # the same object, keys in another order
])
def test_an_operator_holds_exactly_where_its_words_say(matcher: Any, value: Any, holds: bool) -> None:
    assert matches(matcher, value) is holds


@pytest.mark.parametrize(("name", "valid"), [("HEAD", False), ("fix!", True), ('say-"hi"', True)])
def test_valid_branch_at_the_edge_of_git_s_forbidden_characters(name: str, valid: bool) -> None:
    assert valid_branch(name) is valid


# -- what the reader refuses, in the contributor's words ---------------------------------------------------

HEAD = "title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - call: {description: d, prompt: p}\n"


def refusals(expect: str) -> list[str]:
    """The reader's lines for a scenario whose ``expect:`` (from line 5) is ``expect``; [] when it reads."""
    try:
        read("s.yaml", HEAD + expect)
    except ScenarioError as error:
        return error.lines()
    return []


@pytest.mark.parametrize(("expect", "said"), [
    ("expect: {answer: {}}", ["s.yaml:5: expect: expected a list of expectations"]),
    ("expect:\n  - 5", ["s.yaml:6: expect[0]: expected '<kind>: {fields}' or 'no <kind>'"]),
    ("expect:\n  - answer: {}\n    count: -1", ["s.yaml:7: expect[0].count: expected a whole number"]),
    ("expect:\n  - answer: {}\n    count: two", ["s.yaml:7: expect[0].count: expected a whole number"]),
    ("expect:\n  - answer: {}\n    toast: {}",
     ["s.yaml:6: expect[0]: name exactly one event kind (got answer, toast)"]),
    ("expect:\n  - count: 2", ["s.yaml:6: expect[0]: name exactly one event kind (got none)"]),
    ("expect:\n  - no answer: {}\n    count: 1",
     ["s.yaml:7: expect[0]: 'no answer' already means count 0; drop count"]),
    ("expect:\n  - anwser: {}", ["s.yaml:6: expect[0]: no event kind 'anwser' (did you mean 'answer'?)"]),
    ("expect:\n  - answer: [1]", ["s.yaml:6: expect[0].answer: expected the fields to match as a mapping"]),
    ("expect:\n  - answer: {cal: x}",
     ["s.yaml:6: expect[0].answer: unknown field 'cal' in an expectation (did you mean 'call'?)"]),
    ("expect:\n  - run: {argv: {contain: x}}",
     ["s.yaml:6: expect[0].run.argv: unknown operator 'contain' (did you mean 'contains'?)"]),
    ("expect:\n  - run: {argv: {contains: x, contain: y}}",  # said once, not also as a mix of operators and fields
     ["s.yaml:6: expect[0].run.argv: unknown operator 'contain' (did you mean 'contains'?)"]),
    ("expect:\n  - run: {argv: {contain: x}, ms: {lt: '5'}}",  # every field's problem, not the first only
     ["s.yaml:6: expect[0].run.argv: unknown operator 'contain' (did you mean 'contains'?)",
      "s.yaml:6: expect[0].run.ms.lt takes a number"]),
    ("expect:\n  - answer: {result: {absent: 1}}", ["s.yaml:6: expect[0].answer.result.absent takes true or false"]),
    ("expect:\n  - run: {ms: {lt: '5'}}", ["s.yaml:6: expect[0].run.ms.lt takes a number"]),
    ("expect:\n  - run: {ms: {lt: true}}", ["s.yaml:6: expect[0].run.ms.lt takes a number"]),
    ("expect:\n  - toast: {text: {startswith: 5}}", ["s.yaml:6: expect[0].toast.text.startswith takes a text"]),
    ("expect:\n  - run: {argv: {at: [1, x, y]}}", ["s.yaml:6: expect[0].run.argv.at takes [N, matcher]"]),
    ("expect:\n  - run: {argv: {at: [x, y]}}",
     ["s.yaml:6: expect[0].run.argv.at takes [N, matcher], N a whole number"]),
    ("expect:\n  - run: {argv: {after: []}}",
     ["s.yaml:6: expect[0].run.argv.after takes a list of one or more matchers"]),
    ("expect:\n  - run: {argv: {distinct: 1}}", ["s.yaml:6: expect[0].run.argv.distinct takes only true"]),
    ("expect:\n  - run: {argv: {distinct: false}}", ["s.yaml:6: expect[0].run.argv.distinct takes only true"]),
    ("expect:\n  - answer: {result: {status: {contains: a, startswith: b, x: 1, y: 2}}}",
     ["s.yaml:6: expect[0].answer.result.status: mixes operators (contains, startswith) with fields (x, y); a mapping "
      "is either operators or fields to match"]),
    ("expect:\n  - run: {argv: {not: {distinct: true}}}",
     ["s.yaml:6: expect[0].run.argv.not.distinct: inside not there is no value for it to stand on"]),
    ("expect:\n  - run: {argv: {at: [0, {startswith: 1}]}}",
     ["s.yaml:6: expect[0].run.argv.at[1].startswith takes a text"]),
    ("expect:\n  - run: {argv: {contains: [x, {startswith: 1}]}}",
     ["s.yaml:6: expect[0].run.argv.contains[1].startswith takes a text"]),
    ("expect:\n  - run: {argv: [x, {startswith: 1}]}", ["s.yaml:6: expect[0].run.argv[1].startswith takes a text"]),
    ("expect:\n  - answer: {kind: answer, t: {ge: 0}}", []),  # every event has its kind and its time
    ("expect:\n  - run: {truncated: {stdout: true}}", []),  # an object field: a partial match, not operators
    ("expect:\n  - answer: {}\n    count: 0", []),
])
def test_the_reader_refuses_each_wrong_expectation_at_its_line_in_its_words(expect: str, said: list[str]) -> None:
    assert refusals(expect) == said


def test_a_regular_expression_python_cannot_read_is_refused_with_python_s_reason() -> None:
    [said] = refusals("expect:\n  - toast: {text: {matches: '('}}")
    assert said.startswith("s.yaml:6: expect[0].toast.text.matches is no regular expression Python reads (missing ),")


# -- a failed expectation, in words --------------------------------------------------------------------------

EVENTS = [
    {"t": 0, "kind": "answer", "call": "toolu_0001", "result": {"status": "async_launched", "agentId": "a"}},
    {"t": 5, "kind": "answer", "call": "toolu_0002", "result": {"status": "completed", "agentId": "a"}},
    {"t": 9, "kind": "toast", "text": "x" * 300},
    {"t": 12, "kind": "run", "argv": ["lich", "open", "--worktree", "b"]},
    {"t": 14, "kind": "run", "argv": ["lich", "open", "--worktree", "b"]},
]


def failed(fields: dict[str, Any], count: int | None = None, kind: str = "answer") -> list[str]:
    return failures([Expectation(kind, fields, count, 7)], EVENTS, "f.yaml")


@pytest.mark.parametrize(("fields", "count", "said"), [
    ({}, 0, 'expected no answer event matching (any), found 2 (first at t=0)'),
    ({}, 3, 'expected exactly 3 answer event matching (any), found 2'),
    ({"call": "toolu_0001"}, 0, 'expected no answer event matching {"call": "toolu_0001"}, found 1 (first at t=0)'),
    ({"result": {"status": "completed"}}, 2,
     'expected exactly 2 answer event matching {"result": {"status": "completed"}}, found 1'),
    ({"call": "toolu_0009"}, None, 'expected at least one answer event matching {"call": "toolu_0009"}, found 0; the '
     'closest, the answer at t=0, differs in call: expected "toolu_0009", got "toolu_0001"'),
    ({"call": "toolu_0009", "result": {"status": "x"}}, None, 'expected at least one answer event matching {"call": '
     '"toolu_0009", "result": {"status": "x"}}, found 0; the closest, the answer at t=0, differs in call: expected '
     '"toolu_0009", got "toolu_0001" (and 1 more field(s))'),
    ({"call": "é", "result": {"status": "x"}, "t": 1}, None, 'expected at least one answer event matching {"call": '
     '"é", "result": {"status": "x"}, "t": 1}, found 0; the closest, the answer at t=0, differs in call: expected '
     '"é", got "toolu_0001" (and 2 more field(s))'),
    ({"call": "toolu_0001", "result": {"status": "completed"}}, None, 'expected at least one answer event matching '
     '{"call": "toolu_0001", "result": {"status": "completed"}}, found 0; the closest, the answer at t=0, differs in '
     'result.status: expected "completed", got "async_launched"'),
    ({"call": "toolu_0001", "result": "done"}, None, 'expected at least one answer event matching {"call": '
     '"toolu_0001", "result": "done"}, found 0; the closest, the answer at t=0, differs in result: expected "done", '
     'got {"status": "async_launched", "agentId": "a"}'),
    ({"call": "toolu_0001", "result": {"absent": True}}, None, 'expected at least one answer event matching {"call": '
     '"toolu_0001", "result": {"absent": true}}, found 0; the closest, the answer at t=0, differs in result: expected '
     '{"absent": true}, got {"status": "async_launched", "agentId": "a"}'),
    ({"call": "toolu_0001", "context": ["z"]}, None, 'expected at least one answer event matching {"call": '
     '"toolu_0001", "context": ["z"]}, found 0; the closest, the answer at t=0, differs in context: expected ["z"], '
     'got absent'),
    ({"result": {"agentId": {"distinct": True}}}, None,
     "expected the answer events' result.agentId to be all different, found one twice"),
])
def test_a_failed_expectation_says_what_was_wanted_and_what_came_nearest(
        fields: dict[str, Any], count: int | None, said: str) -> None:
    assert failed(fields, count) == [f"f.yaml:7: {said}"]


@pytest.mark.parametrize(("argv", "site"), [
    ({"contains": ["open", {"startswith": "b", "distinct": True}]}, "argv.contains[1]"),
    (["lich", "open", "--worktree", {"distinct": True}], "argv[3]"),
    ({"right_after": ["--worktree", {"distinct": True}]}, "argv.right_after[1]"),
])
def test_a_distinct_that_fails_names_its_place(argv: Any, site: str) -> None:
    assert failed({"argv": argv}, kind="run") == [
        f"f.yaml:7: expected the run events' {site} to be all different, found one twice"]


def test_a_long_value_is_cut_to_200_characters_where_a_failure_shows_it() -> None:
    said = failed({"text": "y" * 198}, kind="toast")[0]
    wanted, got = said.split("expected ")[2].split(", got ")
    assert wanted == '"' + "y" * 198 + '"'  # 200 characters: shown whole
    assert got == '"' + "x" * 198 + "…"  # 302: cut to 199 and an ellipsis
    said = failed({"text": "y" * 199}, kind="toast")[0]
    assert said.split("expected ")[2].split(", got ")[0] == '"' + "y" * 198 + "…"  # 201: cut
