"""What testers mean, in the format: variants, a worker named by its call, ordered argv,
``valid_branch`` and ``distinct``, the ``native`` input, ``check``, opens by order, ``sessions`` by its
n-th read, git by argv, and ``at:`` for actions at any virtual time."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_cards_simulator.scenario.expect import failures, matches, valid_branch
from agent_cards_simulator.scenario.model import Expectation
from agent_cards_simulator.scenario.reader import ScenarioError, read
from agent_cards_simulator.scenario.render import HEADER, to_text
from agent_cards_simulator.scenario.replay import Replay, replay
from agent_cards_simulator.scenario.snapshot import snapshot_value


def play(text: str, tmp_path: Path) -> Replay:
    file = tmp_path / "s.yaml"
    file.write_text(textwrap.dedent(text), encoding="utf-8")
    return replay(read(file))


def kinds(result: Replay, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["kind"] == kind]


ARGV = ["/opt/lich/bin/lich", "open", "--kind", "claude", "--subagent", "--model", "opus", "--prompt", "x", "--json"]


@pytest.mark.parametrize(("matcher", "holds"), [
    ({"right_after": ["--subagent", "--model"]}, True),
    ({"right_after": ["--kind", "--model"]}, False),
    ({"right_after": ["--model", {"startswith": "op"}]}, True),
    ({"after": ["--kind", "--model", "--json"]}, True),
    ({"after": ["--model", "--kind"]}, False),
    ({"at": [1, "open"]}, True),
    ({"at": [-1, "--json"]}, True),
    ({"at": [99, "x"]}, False),
])
def test_ordered_argv_matchers(matcher: dict[str, Any], holds: bool) -> None:
    assert matches(matcher, ARGV) is holds


@pytest.mark.parametrize(("name", "valid"), [
    ("subagent/fix-the-login-bug-7788", True), ("subagent/ü-ß-1234", True), ("main", True),
    ("a..b", False), ("x.lock", False), ("-x", False), ("a b", False), ("a/.b", False), ("a/", False),
    ("a//b", False), ("@", False), ("a@{b", False), ("a~b", False), ("a:b", False), ("a\\b", False), ("", False),
])
def test_valid_branch_is_gits_own_rule(name: str, valid: bool) -> None:
    assert valid_branch(name) is valid
    assert matches({"valid_branch": True}, name) is valid


def test_distinct_holds_across_the_events_an_expectation_matches() -> None:
    events = [{"t": 0, "kind": "answer", "call": c, "result": {"agentId": a}}
              for c, a in (("1", "x"), ("2", "y"), ("3", "x"))]
    wanted = Expectation("answer", {"result": {"agentId": {"distinct": True}}}, None, 7)
    assert failures([wanted], events[:2], "f") == []
    assert failures([wanted], events, "f") == [
        "f:7: expected the answer events' result.agentId to be all different, found one twice"]


BRANCH = {"right_after": ["--worktree", {"valid_branch": True, "distinct": True}]}
OPENED = [["lich", "open", "--worktree", "subagent/fix-the-cache-abcd"],
          ["lich", "open", "--worktree", "subagent/fix-the-cache-ef01"]]


@pytest.mark.parametrize("matcher", [
    BRANCH,
    {"at": [-1, {"distinct": True}]},
    {"contains": {"startswith": "subagent/", "distinct": True}},
    {"after": ["open", {"startswith": "subagent/", "distinct": True}]},
    {"contains": ["open", {"startswith": "subagent/", "distinct": True}]},
])
def test_distinct_inside_an_operator_stands_on_the_item_matched_there(matcher: dict[str, Any]) -> None:
    """Two isolated opens on one branch fail "each worker on a branch of its own", whichever operator the
    ``distinct`` stands in; two branches pass it."""
    runs = [{"t": 0, "kind": "run", "argv": argv} for argv in OPENED]
    twice = [{"t": 0, "kind": "run", "argv": OPENED[0]}] * 2
    wanted = Expectation("run", {"argv": matcher}, 2, 9)
    assert failures([wanted], runs, "f") == []
    (failure,) = failures([wanted], twice, "f")
    assert failure.startswith("f:9: expected the run events' argv.") and failure.endswith(
        " to be all different, found one twice")


@pytest.mark.parametrize(("matcher", "problem"), [
    ("{not: {distinct: true}}", "expect[0].no run.argv.not.distinct: inside not there is no value for it to stand on"),
    ("{contains: {startswith: x, size: 3}}", "expect[0].no run.argv.contains: mixes operators (startswith) with "
     "fields (size); a mapping is either operators or fields to match"),
    ("{right_after: [--worktree, {distinct: false}]}", "expect[0].no run.argv.right_after[1].distinct takes only true"),
    ("{at: [first, open]}", "expect[0].no run.argv.at takes [N, matcher], N a whole number"),
    ("{right_after: []}", "expect[0].no run.argv.right_after takes a list of one or more matchers"),
    ("{contains: {startswith: 3}}", "expect[0].no run.argv.contains.startswith takes a text"),
    ("{at: [0, {matches: '('}]}", "expect[0].no run.argv.at[1].matches is no regular expression Python reads "
     "(missing ), unterminated subpattern at position 0)"),
])
def test_a_matcher_form_the_replay_would_not_honour_is_an_error_at_its_line(matcher: str, problem: str,
                                                                             tmp_path: Path) -> None:
    text = ("title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - call: {description: Fix it, prompt: p}\nexpect:\n"
            f"  - no run: {{argv: {matcher}}}\n")
    with pytest.raises(ScenarioError) as error:
        read("x.yaml", text=text)
    assert error.value.lines() == [f"x.yaml:6: {problem}"]


def test_variants_replay_each_named_in_output_and_snapshot(tmp_path: Path) -> None:
    result = play("""\
        title: Variants
        clauses: [OPEN-MODEL]
        steps:
          - call: {description: Fix the login bug, prompt: Fix it, model: opus}
        expect:
          - answer: {call: toolu_0001}
        variants:
          - name: opus
            expect: [{run: {argv: {right_after: [--model, opus]}}}]
          - name: sonnet
            set:
              steps[0].call.model: sonnet
            expect: [{run: {argv: {right_after: [--model, sonnet]}}}]
          - name: not interactive
            session: {interactive: false}
            expect: [native, {native: {input: {model: opus}}}]
        """, tmp_path)
    assert result.passed, result.to_json()["failures"]
    assert [v.variant for v in result.variants] == ["opus", "sonnet", "not interactive"]
    assert "[variant: sonnet]" in to_text(result)
    assert [v["name"] for v in snapshot_value(result)["variants"]] == ["opus", "sonnet", "not interactive"]
    assert [v["name"] for v in result.to_json()["variants"]] == ["opus", "sonnet", "not interactive"]


def test_a_failing_variant_is_named_and_a_bad_one_reported_at_its_line(tmp_path: Path) -> None:
    result = play("""\
        title: Variants
        clauses: [OPEN-MODEL]
        steps:
          - call: {description: Fix the login bug, prompt: Fix it}
        variants:
          - name: wrong
            expect: [native]
        """, tmp_path)
    assert not result.passed
    assert result.to_json()["failures"][0].startswith("[wrong] ")
    with pytest.raises(ScenarioError) as error:
        play("""\
            title: Variants
            clauses: [OPEN-MODEL]
            steps: []
            variants:
              - name: bad
                session: {git: 3}
            """, tmp_path)
    assert error.value.lines() == [f"{tmp_path / 's.yaml'}:6: variant 'bad': session.git: expected a mapping, "
                                   "got 3"]


def test_a_worker_named_by_its_call_check_and_at(tmp_path: Path) -> None:
    result = play("""\
        title: Worker by call
        clauses: [STOP-SHARED]
        steps:
          - call: {description: Fix the login bug, prompt: Fix it}
          - {at: 3000, check: {count: 1, footer: "lich: 1 worker"}}
          - {at: 4000, errands: "2 errands"}
          - until: 4500
          - taskstop: {worker: toolu_0001}
          - check: {count: 0}
        """, tmp_path)
    assert result.passed, result.failures
    assert kinds(result, "call")[1]["input"] == {"task_id": "session-2-9f81"}
    assert [(e["t"], e["count"], e["footer"]) for e in kinds(result, "check")] == [
        (3000, 1, "lich: 1 worker"), (4530, 0, "lich: 2 errands")]
    assert {"t": 4000, "kind": "footer", "line": "lich: 2 errands", "modes": ["lich: 2 errands"]} in result.events


def test_check_fails_there_and_a_worker_not_yet_answered_is_a_step_problem(tmp_path: Path) -> None:
    result = play("""\
        title: check
        clauses: [FOOTER-COUNT]
        steps:
          - call: {description: Fix the login bug, prompt: Fix it}
          - check: {count: 2}
        """, tmp_path)
    file = tmp_path / "s.yaml"
    assert result.failures == [f"{file}:5: steps[1]: check: the mod counts 1 workers, not 2"]
    result = play("""\
        title: early
        clauses: [STOP-SHARED]
        steps:
          - taskstop: {worker: toolu_0009}
        """, tmp_path)
    assert result.failures[0].startswith(f"{file}:4: steps[0]: taskstop: the call 'toolu_0009' has not answered")


def test_a_check_at_a_virtual_time_fails_the_replay_at_its_line(tmp_path: Path) -> None:
    """An ``at:`` step runs while later steps go on; what it finds wrong still fails the replay, named by its
    line (it was once dropped: a timed ``check`` held whatever it read)."""
    result = play("""\
        title: check at
        clauses: [FOOTER-COUNT]
        steps:
          - call: {description: Fix the login bug, prompt: Fix it}
          - {at: 3000, check: {count: 2, footer: "lich: 2 workers"}}
          - until: 4000
        """, tmp_path)
    assert result.failures == [
        f"{tmp_path / 's.yaml'}:5: steps[1]: at: 3000: check: the mod counts 1 workers, not 2; the footer's lich line "
        "is 'lich: 1 worker', not 'lich: 2 workers'"]
    assert [e["t"] for e in kinds(result, "check")] == [3000]


def test_esc_at_a_virtual_time_during_a_call(tmp_path: Path) -> None:
    result = play("""\
        title: Esc at
        clauses: [FALL-ESC-OPEN]
        lich: {open: {ms: 3000}}
        steps:
          - {at: 1200, esc: }
          - call: {description: Fix the login bug, prompt: Fix it}
        """, tmp_path)
    assert kinds(result, "esc") == [{"t": 1200, "kind": "esc"}]
    answer = kinds(result, "answer")[0]
    assert answer["t"] == 1200 and answer["error"].startswith("The user doesn't want to proceed")  # the engine's


def test_opens_by_order_sessions_by_read_and_git_by_argv(tmp_path: Path) -> None:
    result = play("""\
        title: scripted by order
        clauses: [FOOTER-LIST-FAIL]
        session:
          git:
            branch: feature/login
            runs: [{argv: [git, branch, --show-current], stdout: "from-runs\\n"}]
        lich:
          opens: [{delivery: pending}, {delivery: unread}]
          lists: [{read: 2, stdout: "", exit: 1, stderr: "lich: busy\\n"}]
        steps:
          - call: {description: First one, prompt: One, isolation: worktree}
          - call: {description: Second one, prompt: Two}
          - until: 16000
        """, tmp_path)
    answers = kinds(result, "answer")
    assert answers[0]["result"]["status"] == "async_launched" and "deny" in answers[1]
    assert kinds(result, "run")[0]["stdout"] == "from-runs\n"  # the scripted argv wins over branch
    assert "from-runs" in kinds(result, "run")[1]["argv"]
    reads = [e for e in kinds(result, "run") if e["argv"][1] == "sessions"]
    assert [r["exit"] for r in reads] == [0, 1, 0]


def test_the_timeline_has_a_header_and_keeps_what_the_model_reads(tmp_path: Path) -> None:
    result = play("""\
        title: header
        clauses: [DELIV-UNKNOWN]
        lich: {open: {delivery: parked}}
        steps:
          - call: {description: Fix the login bug, prompt: Fix it, isolation: worktree}
        """, tmp_path)
    text = to_text(result)
    assert text.splitlines()[1] == HEADER and "virtual ms" in HEADER
    assert "delivery parked" in text  # what lich printed, on the run's line
    assert "(parked). Do not start this work again here: ask the user to open that card." in text  # the deny whole
    assert "denied by the mod, its own step" in text
