"""The conformance comparison and plan, without the real engine (``agent-cards conform`` runs them for real)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_cards_claude_driver.install import CLAUDE_VERSION
from agent_cards_conformance.compare import (
    CONTEXT_PREFIX,
    NORMALISATIONS,
    TOLERANCES,
    by_order,
    compare,
    turning_points,
)
from agent_cards_conformance.plan import MAX_SPAN_MS, why_not
from agent_cards_simulator.host.claude_code import ENGINE_VERSIONS
from agent_cards_simulator.scenario.files import load_all

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ("Async agent launched successfully. (…)\nagentId: session-2-9f81 (internal ID …)")
OWN_LAUNCH = LAUNCH + "\noutput_file: <folder>"  # Claude Code's own agent's launch names its output file


def test_the_fake_host_models_the_pinned_engine_and_the_published_tables() -> None:
    assert CLAUDE_VERSION in ENGINE_VERSIONS
    heading = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    [ran] = re.findall(r"against the real Claude Code (\S+?)\. ", heading)
    assert ran in ENGINE_VERSIONS


def test_a_table_of_a_build_the_fake_host_does_not_model_says_so() -> None:
    from agent_cards_conformance.command import table

    note = "The fake host models Claude Code 2.1.328, 2.1.332 and 2.1.337, not this build"
    assert note in table([], "2.1.999")
    assert "not this build" not in table([], ENGINE_VERSIONS[-1])


def test_a_launch_conforms_by_its_agent_id_and_context() -> None:
    fake = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 800, "kind": "answer", "call": "c1", "context": ["Look in lich."],
             "result": {"status": "async_launched", "agentId": "session-2-9f81"}},
            {"t": 800, "kind": "footer", "line": "lich: 1 worker"}]
    real = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 1900, "kind": "answer", "call": "c1", "result": LAUNCH,
             "read": LAUNCH + "\n" + CONTEXT_PREFIX + "Look in lich."},
            {"t": 1950, "kind": "footer", "line": None}, {"t": 2000, "kind": "footer", "line": "lich: 1 worker"}]
    assert compare(fake, real).conforms
    real[1]["read"] = LAUNCH  # the line is missing
    assert [(d.lane, d.key, d.check) for d in compare(fake, real).differences] == [("answer", "c1", "answer.context")]
    real[1]["read"] = LAUNCH + "\n" + CONTEXT_PREFIX + "Look in lich"  # shortened: missing, and one never given
    assert [(d.lane, d.key, d.check) for d in compare(fake, real).differences] == [
        ("answer", "c1", "answer.context"), ("answer", "context", "answer.context.real")]
    real[1]["read"] = LAUNCH + "\n" + CONTEXT_PREFIX + "Look in lich."
    real[1]["result"] = LAUNCH.replace("9f81", "9f82")
    assert [d.why for d in compare(fake, real).differences] == ["another agentId"]


def test_a_launch_text_shows_the_fields_the_fake_gives() -> None:
    """The agentId line (an empty id shows too) and the output file line: each shown exactly when the fake host's
    launch has it."""
    def launch(result: dict[str, Any], text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return _answer(result={"status": "async_launched", **result}), _answer(result=text, read=text)

    empty = "Async agent launched successfully.\nagentId:  (internal ID …)\nThe agent is working."
    assert compare(*launch({"agentId": "", "outputFile": ""}, empty)).conforms
    own = "Async agent launched successfully.\nagentId: a1 (internal ID …)\noutput_file: <folder>\nDo NOT Read it."
    native = {"agentId": "a1", "resolvedModel": "m", "outputFile": "/tmp/claude-0/tasks/a1.output"}
    assert compare(*launch(native, own)).conforms
    without = {k: v for k, v in native.items() if k != "outputFile"}
    assert [(d.check, d.why) for d in compare(*launch(without, own)).differences] == [
        ("answer.launch.fields", "the launch's text shows other fields: outputFile (shown)")]
    assert [d.check for d in compare(*launch({"agentId": "", "outputFile": "/x.output"}, empty)).differences] == [
        "answer.launch.fields"]


def _answer(**arm: Any) -> list[dict[str, Any]]:
    return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"}, {"t": 10, "kind": "answer", "call": "c1", **arm}]


def test_a_refusal_must_be_the_same_refusal_in_the_same_arm() -> None:
    """Normalisation ``tool_use_error``: a deny is read wrapped, its text exactly; a plain error is not a deny."""
    assert "tool_use_error" in NORMALISATIONS
    deny = "lich opened nothing."
    assert compare(_answer(deny=deny), _answer(deny=deny, read="")).conforms  # the harness unwraps it
    assert compare(_answer(error=f"<tool_use_error>{deny}</tool_use_error>"), _answer(deny=deny, read="")).conforms
    [arm] = compare(_answer(deny=deny), _answer(error=deny, read="")).differences
    assert arm.why == "the fake host gives a <tool_use_error>; the real engine gave a plain error"
    for other in (deny[:-1], deny.replace(" ", "\n", 1), "PreToolUse:Agent hook error: " + deny):
        [text] = compare(_answer(error=other), _answer(error=deny, read="")).differences
        assert text.why == "the model read another text"


def test_results_are_read_through_the_named_normalisations_only() -> None:
    native = {"status": "async_launched", "agentId": "a1", "resolvedModel": "m"}
    assert compare(_answer(result=native), _answer(result=LAUNCH.replace("session-2-9f81", "a9"), read="")).conforms
    assert not compare(_answer(result=native), _answer(result="Launched.", read="")).conforms
    stopped = {"message": "Successfully stopped task: x", "task_id": "x"}
    assert compare(_answer(result=stopped), _answer(result=dict(stopped), read="")).conforms
    assert not compare(_answer(result=stopped), _answer(result={**stopped, "more": 1}, read="")).conforms
    assert not compare(_answer(result=stopped), _answer(result={**stopped, "task_id": "y"}, read="")).conforms
    assert not compare(_answer(result="ok"), _answer(result="ok.", read="")).conforms


def test_a_report_under_the_hand_back_frame_is_read_line_by_line_without_its_indent() -> None:
    """Normalisation ``completed``: 2.1.332 indents every report line by two spaces under its frame."""
    report = "Renamed the module.\n\nlich session \"Session 2\" did this work."
    fake = {"status": "completed", "agentId": "session-2-9f81", "content": [{"type": "text", "text": report}]}
    framed = ("[Subagent hand-back] The text below is the final report of a subagent. The report follows:\n"
              "  Renamed the module.\n  \n  lich session \"Session 2\" did this work.\n"
              "agentId: session-2-9f81 (use SendMessage with to: 'session-2-9f81' to continue this agent)")
    assert compare(_answer(result=fake), _answer(result=framed, read="")).conforms
    shortened = framed.replace("did this work.", "did this.")
    [line] = compare(_answer(result=fake), _answer(result=shortened, read="")).differences
    assert line.why.startswith("the model never read the report's line")
    unframed = framed.removeprefix("[Subagent hand-back]")  # an indent is taken off only under the frame
    assert not compare(_answer(result=fake), _answer(result=unframed, read="")).conforms
    other = framed.replace("agentId: session-2-9f81", "agentId: session-2-9f82")
    assert [d.why for d in compare(_answer(result=fake), _answer(result=other, read="")).differences] == [
        "another agentId"]


def test_a_launch_with_an_empty_agent_id_is_read_as_empty() -> None:
    empty = LAUNCH.replace("agentId: session-2-9f81 (", "agentId:  (")
    launched = {"status": "async_launched", "agentId": ""}
    assert compare(_answer(result=launched), _answer(result=empty, read="")).conforms
    assert not compare(_answer(result={**launched, "agentId": "x"}), _answer(result=empty, read="")).conforms


def test_a_native_agents_id_named_again_is_read_as_the_fake_hosts() -> None:
    """Normalisation ``native id``: the engine picks its own agent's ID; a TaskStop naming it is the same call."""
    assert "native id" in NORMALISATIONS
    native = {"status": "async_launched", "agentId": "a173eb04", "resolvedModel": "m"}

    def events(agent_id: str, result: Any, stop_id: str) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent", "input": {"prompt": "p"}},
                {"t": 10, "kind": "answer", "call": "c1", "result": result, **({} if agent_id else {"read": ""})},
                {"t": 20, "kind": "call", "call": "c2", "tool": "TaskStop", "input": {"task_id": stop_id}}]

    fake = events("", native, "a173eb04")
    real = events("x", LAUNCH.replace("session-2-9f81", "a587fc32"), "a587fc32")
    assert compare(fake, real).conforms
    other = events("x", LAUNCH.replace("session-2-9f81", "a587fc32"), "a999")
    assert [(d.lane, d.key) for d in compare(fake, other).differences] == [("call", "#2")]


def test_the_engines_own_agent_may_take_seconds_to_spawn_but_a_taken_spawn_may_not() -> None:
    """Claude Code setting up its own agent is its reaction (seconds under load); a spawn the mod takes waits on
    lich's open, whose time is scripted."""
    def run(spawn_ms: int, answer: Any) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent", "input": {"prompt": "p"}},
                {"t": 100, "kind": "permission", "call": "c1", "outcome": "allow", "via": "mode"},
                {"t": 100 + spawn_ms, "kind": "spawn", "call": "c1", "answer": answer}]

    native = {"model": "m", "agentId": "a1"}
    assert compare(run(0, native), run(4500, "native")).conforms
    assert [d.key for d in compare(run(0, native), run(7000, "native")).differences] == ["spawn c1"]
    taken = {"deny": "lich runs this agent as the card \"Session 2\" instead."}
    assert [d.key for d in compare(run(0, taken), run(4500, "deny")).differences] == ["spawn c1"]


def _poll(t: int, stdout: str) -> dict[str, Any]:
    return {"t": t, "kind": "run", "argv": ["lich", "sessions", "--json"], "exit": 0, "stdout": stdout, "ms": 30}


def test_a_footer_that_never_clears_is_not_one_that_does() -> None:
    shown: list[dict[str, Any]] = [{"t": 0, "kind": "footer", "line": "lich: 1 worker"}, _poll(5000, "[busy]")]
    cleared = [*shown, _poll(10000, "[]"), {"t": 10030, "kind": "footer", "line": None}]
    [end] = [d for d in compare(shown, cleared).differences if d.lane == "footer"]
    assert (end.fake, end.real) == ("(no such state)", None)


def test_a_footer_drawn_a_poll_late_differs_in_its_polls() -> None:
    shown: list[dict[str, Any]] = [{"t": 0, "kind": "footer", "line": "lich: 1 worker"}, _poll(5000, "[busy]")]
    cleared = [*shown, _poll(10000, "[]"), {"t": 10030, "kind": "footer", "line": None}]
    late = [*shown, _poll(10000, "[]"), _poll(15000, "[]"), {"t": 15030, "kind": "footer", "line": None}]
    [polls] = compare(late, cleared).differences
    assert (polls.lane, polls.fake, polls.real) == ("polls", {"polls": 3, "after the change": 1},
                                                    {"polls": 2, "after the change": 0})
    drifted = [*shown[:1], *(_poll(5000 * n, "[busy]") for n in range(1, 11)), _poll(55000, "[]"),
               {"t": 55030, "kind": "footer", "line": None}]
    slower = [*shown[:1], *(_poll(5300 * n, "[busy]") for n in range(1, 10)), _poll(53000, "[]"),
              {"t": 53030, "kind": "footer", "line": None}]
    assert compare(drifted, slower).conforms  # one poll fewer in 11: the drift of real polls


def test_polls_are_not_counted_before_a_turn_an_answer_drew() -> None:
    """A TaskStop's close lowers the count: how many polls ran before it is the pace of the real turns."""
    shown: list[dict[str, Any]] = [{"t": 0, "kind": "footer", "line": "lich: 2 workers"},
                                   {"t": 1000, "kind": "call", "call": "c3", "tool": "TaskStop"}]
    closed = [{"t": 1030, "kind": "answer", "call": "c3", "result": "ok"}, {"t": 1030, "kind": "footer",
                                                                           "line": "lich: 1 worker"}]
    real = [*shown, _poll(5000, "[busy]"), {**closed[0], "t": 6000, "read": ""}, {**closed[1], "t": 6100}]
    assert compare([*shown, *closed], real).conforms


def test_cause_before_effect_and_each_event_in_time() -> None:
    fake: list[dict[str, Any]] = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 5, "kind": "permission", "call": "c1", "outcome": "allow", "via": "dialog"},
            {"t": 805, "kind": "spawn", "call": "c1", "answer": {"deny": "lich took it"}},
            {"t": 805, "kind": "answer", "call": "c1", "result": "ok"}]
    real = [{**e, "t": e["t"] + 1500} if e["kind"] != "call" else e for e in fake]
    real[2]["answer"] = "deny"
    assert compare(fake, real).conforms
    swapped = [fake[0], fake[2], fake[1], fake[3]]
    assert {d.lane for d in compare(swapped, real).differences} == {"order"}
    late = [*fake[:3], {**fake[3], "t": 805 + TOLERANCES["event"].ms + 1000}]
    assert [(d.lane, d.key) for d in compare(late, real).differences] == [("time", "answer c1")]


@pytest.mark.parametrize("ms", [50, 800, 2800, 9000, 60_000])
def test_a_run_a_fixed_amount_slower_is_seen_whatever_its_length(ms: int) -> None:
    """A run 1.2 s slower than the engine's differs however long it takes (a share of its length once let a run
    of 2.8 s or more pass); the start-up a real run pays is within the allowance."""
    def run(took: int) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "run", "argv": ["lich", "open"], "exit": 0, "stdout": "", "stderr": "",
                 "error": None, "ms": took}]
    assert compare(run(ms), run(ms + 250)).conforms
    slower = compare(run(ms + 1200), run(ms)).differences
    assert [(d.lane, d.check) for d in slower] == [("run", "run.ms")]


def test_a_footer_that_changes_seconds_late_is_seen() -> None:
    """A footer that changes 2.5 s after its cause where the engine's changed at once differs (the event
    allowance of 3 s let it pass); one a screen read late does not."""
    def cleared(after: int) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
                {"t": 800, "kind": "answer", "call": "c1", "result": "ok"},
                {"t": 800 + after, "kind": "footer", "line": "lich: 1 worker"}]
    assert compare(cleared(0), cleared(400)).conforms
    late = compare(cleared(2500), cleared(0)).differences
    assert [(d.lane, d.check) for d in late] == [("time", "time.footer")]


@pytest.mark.parametrize(("kind", "published"), [("footer", 2000), ("toast", 3000), ("note", 2000)])
def test_each_time_allowance_is_the_published_one_to_the_millisecond(kind: str, published: int) -> None:
    """A footer, a toast (any other event: 3000 ms plus 5% of its own delay) and a note: at the allowance it
    conforms, a millisecond past it differs (docs/conformance.md states each allowance)."""
    def drawn(after: int) -> list[dict[str, Any]]:
        event = {"footer": {"kind": "footer", "line": "lich: 1 worker"}, "toast": {"kind": "toast", "text": "x"},
                 "note": {"kind": "note", "text": "[lich] done"}}[kind]
        return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
                {"t": 800, "kind": "answer", "call": "c1", "result": "ok"}, {"t": 800 + after, **event}]
    share = round(TOLERANCES["event"].share * 1000) if kind == "toast" else 0  # 5% of the fake's 1000 ms
    edge = published + share
    assert TOLERANCES["event" if kind == "toast" else kind].ms == published
    assert not [d for d in compare(drawn(1000), drawn(1000 + edge)).differences if d.lane == "time"]
    assert [d.check for d in compare(drawn(1000), drawn(1000 + edge + 1)).differences if d.lane == "time"] == [
        f"time.{kind}"]


def test_a_note_is_timed_from_the_open_that_holds_its_ticket_or_the_hold_that_ended_at_its_ms() -> None:
    """lich's clock: the report of the first of two workers counts from the first open (its ticket), not the
    last call; a note the fake host held for the Rewind panel counts from the panel's closing."""
    def opened(t: int, ticket: str) -> dict[str, Any]:
        return {"t": t, "kind": "run", "argv": ["lich", "open", "--json"], "exit": 0, "ms": 800,
                "stdout": json.dumps({"delivery": {"ticket": ticket}}, separators=(",", ":"))}

    note = {"kind": "note", "text": "[lich] Session \"Session 2\" finished the task you handed it (ticket a1). Done."}
    fake = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"}, opened(0, "a1"),
            {"t": 3000, "kind": "call", "call": "c2", "tool": "Agent"}, opened(3000, "a2"), {"t": 9000, **note}]
    real = [{**fake[0]}, opened(100, "a1"), {**fake[2], "t": 6000}, opened(6100, "a2"), {"t": 9100, **note}]
    assert not [d for d in compare(fake, real).differences if d.lane == "time"]  # 9000 after its open, both
    late = [*real[:4], {"t": 12_200, **note}]  # as far from the last call as the fake's: 3 s late for its open
    assert [d.check for d in compare(fake, late).differences if d.lane == "time"] == ["time.note"]
    held = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"}, opened(0, "a1"),
            {"t": 2000, "kind": "rewind", "open": True}, {"t": 11_500, "kind": "rewind", "open": False},
            {"t": 11_500, **note}]
    shifted = [*held[:2], {**held[2], "t": 2900}, {**held[3], "t": 14_000}, {"t": 14_300, **note}]
    assert not [d for d in compare(held, shifted).differences if d.lane == "time" and d.check == "time.note"]


def test_a_spawn_is_timed_from_the_same_cause_on_both_sides() -> None:
    """Esc mid-open: the fake host records the rejection at the Esc, before the spawn ends; the real model reads
    it only with its next request. An answer is no cause of a spawn, so both sides time it from the check."""
    fake: list[dict[str, Any]] = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
                                  {"t": 5, "kind": "permission", "call": "c1", "outcome": "allow", "via": "mode"},
                                  {"t": 2900, "kind": "esc"},
                                  {"t": 2900, "kind": "answer", "call": "c1", "error": "rejected"},
                                  {"t": 3005, "kind": "spawn", "call": "c1", "answer": {"deny": "lich took it"}}]
    # timed from the rejection in the fake (105 ms) and from the check in the real (3300 ms), it once differed
    real = [{**fake[0]}, {**fake[1], "t": 300}, {**fake[2], "t": 3200}, {**fake[4], "t": 3600, "answer": "deny"},
            {**fake[3], "t": 9000}]
    assert not [d for d in compare(fake, real).differences if d.lane == "time"]
    late = [*real[:3], {**real[3], "t": 3600 + TOLERANCES["event"].ms + 500}, real[4]]
    assert [(d.lane, d.key) for d in compare(fake, late).differences if d.lane == "time"] == [("time", "spawn c1")]


def test_a_toast_is_on_the_side_of_the_answers_the_fake_host_has_it_a_logged_instant_either_way() -> None:
    """The fake host's order is its own; a log kept to the millisecond may list an answer of the toast's instant on
    either side of it (a session's journal), but a toast a moment after the answer is on its other side."""
    fake: list[dict[str, Any]] = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
                                  {"t": 5, "kind": "toast", "text": "lich failed"},
                                  {"t": 5, "kind": "answer", "call": "c1", "result": "ok"}]
    same_instant = [fake[0], fake[2], fake[1]]
    assert not [d for d in compare(fake, same_instant).differences if d.check == "toast.order"]
    after = [fake[0], fake[2], {**fake[1], "t": 40}]
    assert [(d.lane, d.check) for d in compare(fake, after).differences] == [("toast", "toast.order")]


def test_a_field_of_a_json_answer_on_one_side_only_differs_either_way() -> None:
    """A TaskStop's result is JSON on both sides: a field the fake host leaves out differs as one it adds does
    (only the fake host's keys were compared, so a fake host that dropped a field conformed)."""
    stopped = {"message": "Successfully stopped task: w (Fix it)", "task_id": "w", "task_type": "local_agent",
               "command": "Fix it"}
    real = _answer(result=stopped)
    assert compare(_answer(result=stopped), real).conforms
    for fewer in ({k: v for k, v in stopped.items() if k != "command"}, {**stopped, "extra": 1}):
        assert [(d.lane, d.check) for d in compare(_answer(result=fewer), real).differences] == [
            ("answer", "answer.fields")]


def test_every_lane_is_compared() -> None:
    """permission, spawn, native input, note, report, toast: each a difference of its own."""
    call: dict[str, Any] = {"t": 0, "kind": "call", "call": "c1", "tool": "Agent"}
    cases: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
        "permission": ({"kind": "permission", "call": "c1", "outcome": "allow", "via": "dialog"},
                       {"kind": "permission", "call": "c1", "outcome": "allow", "via": "mode"}),
        "spawn": ({"kind": "spawn", "call": "c1", "answer": {"deny": "lich"}}, {"kind": "spawn", "call": "c1",
                                                                               "answer": "native"}),
        "native": ({"kind": "native", "call": "c1", "tool": "Agent", "input": {"prompt": "Do it"}},
                   {"kind": "native", "call": "c1", "tool": "Agent", "input": {"prompt": "Do it"},
                    "task": "<system-reminder>\nx\n</system-reminder>\nDo it."}),
        "note": ({"kind": "note", "text": "[lich] done"}, {"kind": "note", "text": "[lich] done."}),
        "report": ({"kind": "report", "text": "a hook overran"}, None),
        "toast": ({"kind": "toast", "text": "Opened."}, {"kind": "toast", "text": "Opened"}),
        "prompt": ({"kind": "prompt", "text": "Go on.", "notifications": [], "context": ["it still runs"]},
                   {"kind": "prompt", "text": "Go on.", "notifications": [], "context": []}),
        "lifecycle": ({"kind": "host.start"}, None),
    }
    for lane, (fake_event, real_event) in cases.items():
        fake_side: list[dict[str, Any]] = [call, {"t": 1, **fake_event}]
        real = [call] + ([{"t": 1, **real_event}] if real_event else [])
        assert lane in {d.lane for d in compare(fake_side, real).differences}, lane
        assert compare(fake_side, fake_side).conforms
    task = {"kind": "native", "call": "c1", "tool": "Agent", "input": {"prompt": "Do it"},
            "task": "<system-reminder>\nx\n</system-reminder>\n\nDo it"}
    assert compare([call, {"t": 1, **cases["native"][0]}], [call, {"t": 1, **task}]).conforms  # ``task``


def test_runs_match_by_argv_and_polls_are_left_aside() -> None:
    run = {"kind": "run", "exit": 0, "stdout": "", "stderr": "", "error": None}
    fake = [{**run, "t": 0, "argv": ["lich", "open", "a"], "ms": 800}, {**run, "t": 0, "argv": ["lich", "open", "b"],
                                                                        "ms": 800}]
    real = [{**run, "t": 5, "argv": ["lich", "open", "b"], "ms": 900}, {**run, "t": 9, "argv": ["lich", "open", "a"],
                                                                        "ms": 1200},
            {**run, "t": 6000, "argv": ["lich", "sessions", "--json"], "ms": 30}]
    assert compare(fake, real).conforms
    real[1]["ms"] = 2000  # a fake host 1.2 s faster
    assert [d.why for d in compare(fake, real).differences] == ["took another time than the tolerance allows"]


def test_counts_that_climb_one_by_one_compare_where_they_turn() -> None:
    assert turning_points(["lich: 1 worker", "lich: 2 workers", "lich: 3 workers", None]) == ["lich: 3 workers", None]
    assert by_order('{"id":"9f82","label":"Session 3"}') == '{"id":"<id>","label":"Session <n>"}'


def test_a_fake_host_that_stretches_a_scenario_does_not_make_it_cannot_run() -> None:
    [scenario], _ = load_all([ROOT / "scenarios" / "taskstop.yaml"])
    stretched = [{"t": MAX_SPAN_MS + 60_000, "kind": "footer", "line": None}]
    assert why_not(scenario, stretched) is None


def test_a_difference_by_design_excuses_only_the_events_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cards_conformance.command import EXPLAINED, Result, judge

    monkeypatch.chdir(ROOT)  # the table names scenarios as the command line does
    [scenario], _ = load_all([Path("scenarios/stop/other-id.yaml")])
    (_, key), = EXPLAINED[scenario.file].excuses
    from agent_cards_simulator.scenario.replay import replay

    fake = [dict(e) for e in replay(scenario).events]
    real = [{**e, "read": ""} if e["kind"] == "answer" else e for e in fake if e["kind"] not in ("native",)]
    real += [{**e, "input": e["input"]} for e in fake if e["kind"] == "native" and e.get("tool") == "Agent"]
    real.sort(key=lambda e: e["t"])
    for e in real:
        if e["kind"] == "spawn":
            e["answer"] = "native"
        if e["kind"] == "answer" and isinstance(e.get("result"), dict) and "resolvedModel" in e["result"]:
            e["result"] = OWN_LAUNCH  # Claude Code's own Explore, as the model reads its launch
        if e["kind"] == "answer" and e["call"] == key:
            e["result"] = {"message": "Task is not running (status: completed)"}
            e.pop("error", None)
    excused = Result(scenario.file, None, scenario.title, "", fake=fake, real=real)
    judge(scenario, excused)
    assert excused.verdict == "by design", excused.comparison
    real[1] = {**real[1], "tool": "Bash"}  # and one more difference, not excused
    other = Result(scenario.file, None, scenario.title, "", fake=fake, real=real)
    judge(scenario, other)
    assert other.verdict == "differs"


def test_the_self_test_catches_every_plant_on_the_scenarios_it_alters() -> None:
    """The kit against the saved real transcripts: the fake host as it is conforms, each plant differs in the
    check it aims at wherever it alters the replay."""
    from agent_cards_conformance.selftest import KIT, self_test

    assert {p.kind for p in KIT} == {"timing", "order", "end state", "text", "lane"}
    test = self_test()
    assert test.baseline and not any(test.baseline.values()), test.baseline
    assert not test.problems, test.problems
    for outcome in test.plants:
        assert outcome.proven, (outcome.plant.name, outcome.missed)
        assert all(outcome.plant.aims in checks for checks in outcome.caught.values())
    assert test.passed


def test_conform_self_test_fails_when_a_plant_goes_unseen(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    from agent_cards_conformance import command, selftest

    blind = selftest.Infidelity("nothing at all", "lane", "changes nothing", "toast", contextlib.nullcontext)
    lines: list[str] = []
    assert command.main(["--self-test"], out=lines.append) == 0
    monkeypatch.setattr(selftest, "KIT", (*selftest.KIT, blind))
    assert command.main(["--self-test"], out=lines.append) == 1
    assert "✗ [lane] nothing at all → toast: caught on nothing" in lines[-1]
    assert "nothing at all: alters no scenario" in lines[-1]


def test_the_table_is_headed_with_the_self_tests_result() -> None:
    from agent_cards_conformance.command import proof, table

    kit = proof()
    assert kit.startswith("self-test: ") and "caught" in kit
    header = f"proves itself (`agent-cards conform --self-test`): {kit.removeprefix('self-test: ')}."
    assert header in table([], kit=kit)


def test_the_fixture_names_no_machine_folder() -> None:
    from agent_cards_conformance.selftest import FIXTURE

    text = FIXTURE.read_text(encoding="utf-8")
    assert "/tmp/" not in text and "conform-" not in text


def test_what_cannot_run_says_why() -> None:
    scenarios, problems = load_all([ROOT / "scenarios" / "workflow.yaml", ROOT / "scenarios" / "taskstop.yaml"])
    assert not problems
    reasons = {Path(s.file).name: why_not(s, []) for s in scenarios}
    assert reasons["taskstop.yaml"] is None
    assert "workflow" in str(reasons["workflow.yaml"])


def test_a_scenario_that_could_run_fails_when_the_engine_is_missing() -> None:
    """CI's conform step (AGENT_CARDS_CONFORM=1) must not pass having run nothing."""
    from agent_cards_conformance.command import conform_one
    from agent_cards_simulator.scenario.files import load_all

    root = Path(__file__).resolve().parents[1] / "scenarios"
    scenarios, problems = load_all([root / "reload.yaml", root / "workflow.yaml"])
    assert not problems
    runnable, workflow = (conform_one(s, None, "tmux not found") for s in scenarios)
    assert (runnable.verdict, runnable.why) == ("failed", "tmux not found")
    assert workflow.verdict == "cannot run"


KEPT_SCENARIO = "scenarios/perm/dialog-yes.yaml"  # one whose real run the fixture keeps


def _kept_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Any]) -> Any:
    """:data:`KEPT_SCENARIO` through ``conform_one`` with ``--keep tmp_path/kept``, the real run being ``run``."""
    from agent_cards_conformance import command, real
    from agent_cards_simulator.scenario.files import load_all

    monkeypatch.setattr(real, "run_real", run)
    (scenario,), _ = load_all([ROOT / KEPT_SCENARIO])
    (tmp_path / "kept").mkdir(parents=True)
    return command.conform_one(scenario, tmp_path / "claude", "", keep=tmp_path / "kept")


def test_keep_leaves_a_failed_or_differing_run_in_a_private_folder_and_a_conforming_one_nowhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cards_conformance.command import to_text
    from agent_cards_conformance.real import RealRun

    def fails(plan: Any, claude: Path, folder: Path) -> RealRun:
        (folder / "bridge.jsonl").write_text("{}\n", encoding="utf-8")
        raise RuntimeError("the session host never said hello")

    failed = _kept_run(tmp_path, monkeypatch, fails)
    kept = Path(failed.kept)
    assert failed.verdict == "failed" and kept.parent == tmp_path / "kept" and kept.name.startswith("perm-dialog-yes-")
    assert (kept / "bridge.jsonl").read_text(encoding="utf-8") == "{}\n"
    assert kept.stat().st_mode & 0o777 == 0o700
    assert f"  what the run left: {kept}" in to_text(failed).splitlines()
    assert failed.to_json()["kept"] == str(kept)

    def differs(plan: Any, claude: Path, folder: Path) -> RealRun:
        return RealRun([], screen="❯ the last screen")

    differing = _kept_run(tmp_path / "2", monkeypatch, differs)
    assert differing.verdict == "differs"
    assert (Path(differing.kept) / "screen.txt").read_text(encoding="utf-8") == "❯ the last screen"

    def conforms(plan: Any, claude: Path, folder: Path) -> RealRun:
        (folder / "bridge.jsonl").write_text("{}\n", encoding="utf-8")
        from agent_cards_conformance.selftest import load_fixture

        return RealRun(load_fixture()[KEPT_SCENARIO], screen="❯")

    same = _kept_run(tmp_path / "3", monkeypatch, conforms)
    assert (same.verdict, same.kept) == ("conforms", "") and "kept" not in same.to_json()
    assert list((tmp_path / "3" / "kept").iterdir()) == []


@pytest.mark.parametrize(("args", "why"), [
    (["--keep", "nowhere", "scenarios/reload.yaml"], "--keep nowhere: no such folder to keep runs in"),
    (["--from", "out.jsonl", "--keep", "."],
     "--from runs nothing: it takes no scenario files, no --claude, no --keep and no --evidence"),
    (["--from", "out.jsonl", "--evidence", "e.jsonl"],
     "--from runs nothing: it takes no scenario files, no --claude, no --keep and no --evidence"),
    (["--self-test", "--keep", "."], "--self-test takes nothing else"),
    (["--self-test", "--evidence", "e.jsonl"], "--self-test takes nothing else"),
])
def test_keep_needs_a_folder_and_a_real_run(args: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agent_cards_conformance import command

    assert command.main(args) == 2
    assert capsys.readouterr().err == f"agent-cards conform: {why} (agent-cards conform --help)\n"


def test_conform_without_the_plugins_files_says_what_it_needs_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Installed from a wheel, the package has no .claude-plugin/ or hooks/ beside it: one line says so."""
    from agent_cards_conformance import command, real

    monkeypatch.setattr(real, "ROOT", tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    assert command.main([str(ROOT / "scenarios" / "taskstop.yaml")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "needs the plugin's own files" in line and "clone of agent-cards" in line
    monkeypatch.chdir(ROOT)  # a clone's folder is the plugin's
    assert real.plugin_folder() == ROOT


def test_a_lich_not_installed_is_the_scenarios_own_path_where_nothing_is(tmp_path: Path) -> None:
    """So that a toast the mod cuts to fit names the same path as the fake host's, cut at the same place."""
    from agent_cards_conformance.plan import plan
    from agent_cards_conformance.real import RealRunner
    from agent_cards_simulator.scenario.replay import replay

    [scenario], _ = load_all([ROOT / "scenarios/deliver/not-installed.yaml"])
    runner = RealRunner(plan(scenario, replay(scenario).events), Path("claude"), tmp_path)
    wanted = scenario.env["LICH_BIN"]
    assert not Path(wanted).exists()
    assert runner._env(tmp_path)["LICH_BIN"] == wanted
    there = tmp_path / "lich-here"
    there.write_text("", encoding="utf-8")
    assert runner._missing_lich(str(there)) == str(tmp_path / "no-lich")  # something is there: not ours to use
    assert runner._missing_lich("lich") == str(tmp_path / "no-lich")  # a name PATH would look up


#: How much later the real engine's polls come than the fake host's (they count from an open the real engine
#: ends later: its hook latency, a slower open, a wrapper's start under load: up to 1.2 s measured on
#: 2.1.332), with a margin. Never earlier. (footer/list-deep, whose edge stood 2.5 s after its third poll,
#: was seen crossed once under load: its edge now stands 3.5 s after it.)
POLL_DRIFT_MS = 2000


def test_no_scripted_list_window_edge_lies_within_the_real_polls_drift() -> None:
    """A window's edge a few hundred ms after a poll holds in virtual time and is crossed in real time: the
    real poll lands after it and reads what the fake host's poll did not (a verdict that changes with the
    load). Edges sit well after a poll; one before a poll is never crossed, since a real poll only comes later."""
    from agent_cards_simulator.scenario.replay import replay

    scenarios, _ = load_all(sorted((ROOT / "scenarios").rglob("*.yaml")))
    close = []
    for scenario in scenarios:
        polls = [e["t"] for e in replay(scenario).events
                 if e["kind"] == "run" and (e.get("argv") or [None, None])[1:2] == ["sessions"]]
        edges = [t for w in scenario.lich.lists if w.read is None for t in (w.from_ms, w.until_ms) if t > 0]
        close += [(scenario.file, edge, poll) for edge in edges for poll in polls
                  if 0 <= edge - poll < POLL_DRIFT_MS]
    assert close == []


def test_outside_lich_what_only_the_session_hosts_log_shows_is_not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """No host starts outside lich: the real run cannot see the session's start, the permission or the spawn,
    and says so; the rest is judged as ever."""
    from agent_cards_conformance.command import Result, judge
    from agent_cards_simulator.scenario.replay import replay

    monkeypatch.chdir(ROOT)
    [scenario], _ = load_all([Path("scenarios/take/no-lich-bin.yaml")])
    fake = [dict(e) for e in replay(scenario).events]
    seen = [e if e["kind"] != "answer" else {**e, "result": OWN_LAUNCH, "read": ""}  # as the model read it
            for e in fake if e["kind"] not in ("session.start", "permission", "spawn")]
    result = Result(scenario.file, None, scenario.title, "", fake=fake, real=seen)
    judge(scenario, result)
    assert result.verdict == "conforms" and result.comparison is not None
    assert result.comparison.unseen["spawn outside lich (no session host logs it)"] == 1
    native = next(e for e in seen if e["kind"] == "native")
    wrong = [e if e is not native else {**e, "input": {**e["input"], "prompt": "another"}} for e in seen]
    result = Result(scenario.file, None, scenario.title, "", fake=fake, real=wrong)
    judge(scenario, result)
    assert result.verdict == "differs"


def test_an_open_lich_refuses_before_it_opens_takes_no_turn() -> None:
    """fake-lich numbers only the opens that pass its own checks; an open an old lich refuses for a flag it
    lacks must not make the next one wait for a turn that never comes."""
    from agent_cards_conformance.plan import plan
    from agent_cards_simulator.scenario.replay import replay

    [old], _ = load_all([ROOT / "scenarios/fall/old-lich.yaml"])
    assert dict(plan(old, replay(old).events).opens) == {}
    [two], _ = load_all([ROOT / "scenarios/taskstop.yaml"])
    assert dict(plan(two, replay(two).events).opens) == {"toolu_0001": 0, "toolu_01Pp7e0002": 1}


# -- the mod's invariants on the real transcripts -------------------------------------------------------


def _judged_report_note(real: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    from agent_cards_conformance.command import Result, judge
    from agent_cards_simulator.scenario.replay import replay

    monkeypatch.chdir(ROOT)
    [scenario], _ = load_all([Path("scenarios/report-note.yaml")])
    result = Result(scenario.file, None, scenario.title, "", fake=[dict(e) for e in replay(scenario).events],
                    real=real)
    judge(scenario, result)
    return result


def test_a_real_transcript_that_breaks_an_invariant_differs_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved real run conforms; planted into it, a break of the mod's invariants is a difference of its own,
    even where the comparison with the fake host lets it through."""
    from agent_cards_conformance.selftest import load_fixture

    real = load_fixture()["scenarios/report-note.yaml"]
    assert _judged_report_note(real, monkeypatch).verdict == "conforms"
    # liveness: the polls stop while the worker is surely counted (after the first one)
    polls = [e for e in real if e["kind"] == "run" and e["argv"][1:2] == ["sessions"]]
    quiet = _judged_report_note([e for e in real if e not in polls[1:]], monkeypatch)
    assert quiet.verdict == "differs"
    assert ("invariant", "liveness-poll") in {(d.lane, d.key) for d in quiet.comparison.differences}
    # robustness: Claude Code ran natively the call the mod gave to lich (and so its worker is counted
    # without a launched open)
    taken = next(e for e in real if e["kind"] == "spawn")
    native = {"t": taken["t"] + 10, "kind": "native", "call": taken["call"], "tool": "Agent", "input": {},
              "task": ""}
    both = _judged_report_note(sorted([*real, native], key=lambda e: e["t"]), monkeypatch)
    invariants = [d for d in both.comparison.differences if d.lane == "invariant"]
    assert [d.key for d in invariants] == ["native-after-lich", "count"]
    assert taken["call"] in str(invariants[0].real)


def test_the_saved_real_runs_keep_every_invariant() -> None:
    from agent_cards_conformance.invariants import real_violations
    from agent_cards_conformance.selftest import load_fixture

    for file, real in load_fixture().items():
        [scenario], _ = load_all([ROOT / file])
        assert real_violations(scenario, real) == [], file


def test_an_esc_rejection_the_model_reads_late_is_read_at_the_esc() -> None:
    """Esc while lich opens: the worker is counted when the open ends, seconds before the model reads the
    rejection with the next prompt; the count is of a launched open all the same (no false alarm)."""
    from agent_cards_conformance.invariants import in_replay_terms, real_violations
    from agent_cards_conformance.selftest import load_fixture

    real = load_fixture()["scenarios/fall/esc-isolated.yaml"]
    esc = next(e["t"] for e in real if e["kind"] == "esc")
    answer = next(e for e in real if e["kind"] == "answer")
    assert answer["t"] > esc + 1000  # as the real engine showed it
    counted = sorted([*real, {"t": esc + 500, "kind": "footer", "line": "lich: 1 worker"}], key=lambda e: e["t"])
    [scenario], _ = load_all([ROOT / "scenarios/fall/esc-isolated.yaml"])
    assert [v.kind for v in real_violations(scenario, counted)] == []
    assert next(e for e in in_replay_terms(counted) if e["kind"] == "answer")["t"] == esc
    early = [e for e in counted if e["kind"] != "esc"]  # no Esc seen: nothing moves, the count is too high
    assert "count" in [v.kind for v in real_violations(scenario, early)]


def test_launches_the_model_reads_together_are_read_at_their_spawns() -> None:
    """Calls raised side by side: the mod answers each at its spawn, the engine shows the model all the answers
    after the last spawn, and the footer may count the workers in between (no false alarm)."""
    from agent_cards_conformance.invariants import in_replay_terms, real_violations

    launch = LAUNCH.replace("session-2-9f81", "{}")
    real: list[dict[str, Any]] = [{"t": 0, "kind": "session.start", "interactive": True}]
    for n, call in enumerate(("c1", "c2")):
        real += [{"t": 0, "kind": "call", "call": call, "tool": "Agent", "input": {"prompt": f"q{n}"}},
                 {"t": 2000 + 500 * n, "kind": "spawn", "call": call, "answer": "deny"}]
    real.append({"t": 3200, "kind": "footer", "line": "lich: 2 workers"})
    real += [{"t": 3400, "kind": "answer", "call": call, "result": launch.format(f"w-{call}"), "read": ""}
             for call in ("c1", "c2")]
    [scenario], _ = load_all([ROOT / "scenarios/taskstop.yaml"])
    assert "count" not in [v.kind for v in real_violations(scenario, real)]
    assert [e["t"] for e in in_replay_terms(real) if e["kind"] == "answer"] == [2000, 2500]
    untaken = [e for e in real if e["kind"] != "spawn"]  # no spawn the mod took: the answers stay where they are
    assert "count" in [v.kind for v in real_violations(scenario, untaken)]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_worker_counted_after_its_host_was_lost_mid_open_is_no_false_alarm(lang: str) -> None:
    """The model was told lich may have the task (its host died while lich opened); the next host collects
    the open and counts its worker. Any other refusal followed by a count is one."""
    from agent_cards.texts import agent_text
    from agent_cards_conformance.invariants import real_violations

    [scenario], _ = load_all([ROOT / "scenarios/resume/host-dies-mid-open.yaml"])
    unsure = agent_text(lang, "bridge.unsure", program="/opt/lich/bin/lich")

    def run(answer: str) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "session.start", "interactive": True},
                {"t": 0, "kind": "call", "call": "c1", "tool": "Agent", "input": {"prompt": "p"}},
                {"t": 2000, "kind": "host.dies"},
                {"t": 3000, "kind": "answer", "call": "c1", "deny": answer, "read": ""},
                {"t": 8000, "kind": "host.start"}, {"t": 8100, "kind": "footer", "line": "lich: 1 worker"}]

    assert "count" not in [v.kind for v in real_violations(scenario, run(unsure))]
    assert "count" in [v.kind for v in real_violations(scenario, run("lich opened nothing."))]


def test_a_reloads_fresh_host_polls_from_its_own_start() -> None:
    """A reload ends the module's host; the fresh one starts seconds later under load, and its first read
    comes a period after its own start: no liveness alarm. A read that late from a host already there is one."""
    from agent_cards_conformance.invariants import real_violations

    [scenario], _ = load_all([ROOT / "scenarios/reload.yaml"])
    listed = '[{"name":"session-2-9f81","state":"busy"}]'

    def run(host_logged: int) -> list[dict[str, Any]]:
        task = "Do the first thing"
        open_argv = ["/opt/lich/bin/lich", "open", "--kind", "claude", "--subagent", "--prompt", task, "--json"]
        opened = '{"id":"9f81","label":"Session 2","name":"session-2-9f81","delivery":{"status":"pending"}}\n'
        return [{"t": 0, "kind": "session.start", "interactive": True},
                {"t": 0, "kind": "call", "call": "toolu_0001", "tool": "Agent",
                 "input": {"description": "First task", "prompt": task}},
                {"t": 300, "kind": "run", "argv": open_argv, "exit": 0, "stdout": opened, "ms": 800},
                {"t": 1200, "kind": "spawn", "call": "toolu_0001", "answer": "deny"},
                {"t": 1400, "kind": "answer", "call": "toolu_0001", "result": LAUNCH, "read": ""},
                {"t": 1500, "kind": "footer", "line": "lich: 1 worker"},
                {"t": 2000, "kind": "reload"},
                {"t": host_logged, "kind": "session.start", "interactive": True},
                {"t": 9500, "kind": "run", "argv": ["/opt/lich/bin/lich", "sessions", "--json"], "exit": 0,
                 "stdout": listed, "ms": 30}]

    assert "liveness-poll" not in [v.kind for v in real_violations(scenario, run(5000))]
    assert "liveness-poll" in [v.kind for v in real_violations(scenario, run(2100))]


def test_a_real_session_start_is_read_where_the_engine_raised_it() -> None:
    """The real log has it when the session host started, after the call it was queued before; a reload's
    fresh host is read as starting where it was logged."""
    from agent_cards_conformance.invariants import in_replay_terms

    real = [{"t": 0, "kind": "call", "call": "a"}, {"t": 500, "kind": "session.start", "interactive": True},
            {"t": 9000, "kind": "reload"}, {"t": 9400, "kind": "session.start", "interactive": True}]
    assert [(e["t"], e["kind"]) for e in in_replay_terms(real)] == [
        (0, "session.start"), (0, "call"), (9000, "reload"), (9000, "session.start"), (9400, "host.start")]


# -- what the harness makes real ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["fall/broken-hook", "branch/base-git-missing", "branch/base-git-refuses",
                                  "open/timeout"])
def test_what_the_harness_can_make_runs(name: str) -> None:
    [scenario], _ = load_all([ROOT / "scenarios" / f"{name}.yaml"])
    assert why_not(scenario, []) is None


def _runner(tmp_path: Path, name: str) -> Any:
    from agent_cards_conformance.plan import plan
    from agent_cards_conformance.real import RealRunner

    [scenario], _ = load_all([ROOT / "scenarios" / f"{name}.yaml"])
    return RealRunner(plan(scenario, []), Path("claude"), tmp_path)


def test_the_mods_git_refuses_as_scripted_and_claude_codes_own_git_is_the_real_one(tmp_path: Path) -> None:
    import os
    import subprocess

    runner = _runner(tmp_path, "branch/base-git-refuses")
    git = runner._wrappers() / "git"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    mods = subprocess.run([str(git), "branch", "--show-current"], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "CLAUDE_PLUGIN_ROOT": str(tmp_path)}, check=False)
    assert (mods.returncode, mods.stdout) == (128, "")
    assert mods.stderr == "fatal: detected dubious ownership in repository at '/home/dev/app'\n"
    assert [r.exit[0] for r in runner._run_records() if r.exit] == [128]  # logged as the mod's run
    own = subprocess.run([str(git), "--version"], capture_output=True, text=True, env=env, check=False)
    assert own.returncode == 0 and own.stdout.startswith("git version")
    assert len(runner._run_records()) == 1  # Claude Code's own runs are not the mod's


def test_gits_no_repository_in_other_words_is_a_project_in_none_whose_git_says_them(tmp_path: Path) -> None:
    """git stopping at a mount point still says "not a git repository": the real project is in no repository
    (so Claude Code's own walk finds none), and the mod's git answers the scenario's words."""
    import os
    import subprocess

    runner = _runner(tmp_path, "branch/base-not-a-repo-boundary")
    assert runner.plan.git.mode == "none" and runner.plan.git.exit == 128
    git = runner._wrappers() / "git"
    mods = subprocess.run([str(git), "branch", "--show-current"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(tmp_path)},
                          check=False)
    assert mods.returncode == 128 and mods.stderr.startswith("fatal: not a git repository (or any parent up to mount")


def test_a_session_in_plan_mode_starts_claude_code_in_plan_mode(tmp_path: Path) -> None:
    assert _runner(tmp_path, "perm/plan-mode").plan.permission_mode == "plan"
    assert _runner(tmp_path, "perm/dialog-yes").plan.permission_mode == "default"


def test_with_git_missing_the_session_host_finds_no_git(tmp_path: Path) -> None:
    import os
    import subprocess

    runner = _runner(tmp_path, "branch/base-git-missing")
    runner._wrappers()
    probe = "import shutil, sys; print(shutil.which('git'), sys.version_info >= (3, 11))"
    host = subprocess.run([str(tmp_path / "python"), "-I", "-S", "-c", probe], input="{}", capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"]}, check=False)
    assert host.stdout.split() == ["None", "True"], host.stderr
    lich = subprocess.run([str(runner.lich_bin), "--version"], capture_output=True, text=True,
                          env={"PATH": str(tmp_path / "no-git")}, check=False)
    assert "not found" not in lich.stderr  # lich's wrapper runs with the harness's PATH


def test_a_session_with_nobody_to_ask_or_not_interactive_runs_as_claude_p() -> None:
    from agent_cards_conformance.plan import plan

    for name in ("perm/nobody-to-ask", "take/not-interactive"):
        [scenario], _ = load_all([ROOT / "scenarios" / f"{name}.yaml"])
        assert why_not(scenario, []) is None
        assert plan(scenario, []).printed
    [dialog], _ = load_all([ROOT / "scenarios" / "perm" / "dialog-yes.yaml"])
    assert not plan(dialog, []).printed  # the person answers it on the screen


def test_claude_p_takes_one_prompt_and_no_keys(tmp_path: Path) -> None:
    source = (ROOT / "scenarios" / "take" / "not-interactive.yaml").read_text(encoding="utf-8")
    twice = tmp_path / "twice.yaml"
    twice.write_text(source.replace("expect:", "  - call: {description: Again, prompt: Once more}\nexpect:"),
                     encoding="utf-8")
    pressed = tmp_path / "pressed.yaml"
    pressed.write_text(source.replace("expect:", "  - esc\nexpect:"), encoding="utf-8")
    scenarios, problems = load_all([twice, pressed])
    assert not problems, problems
    assert [str(why_not(s, [])).split(":")[0] for s in scenarios] == [
        "2 call steps in a claude -p session", "a key or a command in a claude -p session"]


def test_other_footer_modes_and_errands_run() -> None:
    from agent_cards_conformance.plan import SWITCHED_MODE, plan

    [modes], _ = load_all([ROOT / "scenarios" / "footer" / "modes.yaml"])
    assert why_not(modes, []) is None and plan(modes, []).mode == SWITCHED_MODE
    [errands], _ = load_all([ROOT / "scenarios" / "footer" / "errands.yaml"])
    assert why_not(errands, []) is None and plan(errands, []).mode is None


def test_the_stand_in_status_module_runs_above_the_mod(tmp_path: Path) -> None:
    runner = _runner(tmp_path, "footer/errands")
    status = runner._status_plugin()
    module = (status / "hooks" / "status.js").read_text(encoding="utf-8")
    assert "AGENT_CARDS_CONFORM_ERRANDS" in module and "'lich: ' + errands" in module
    assert runner.errands.read_text(encoding="utf-8") == ""  # nothing drawn until an errands step
    assert runner._env(tmp_path)["AGENT_CARDS_CONFORM_ERRANDS"] == str(runner.errands)


def test_toasts_of_calls_raised_side_by_side_come_in_any_order() -> None:
    fake = [{"t": 0, "kind": "call", "call": "a"}, {"t": 0, "kind": "call", "call": "b"},
            {"t": 800, "kind": "toast", "text": "A failed"}, {"t": 800, "kind": "toast", "text": "B failed"}]
    real = [*fake[:2], {"t": 1900, "kind": "toast", "text": "B failed"},
            {"t": 1950, "kind": "toast", "text": "A failed"}]
    assert compare(fake, real, side_by_side=True).conforms
    assert not compare(fake, real).conforms  # one call at a time: in order
    real[3] = {**real[3], "text": "A failed again"}
    assert [d.lane for d in compare(fake, real, side_by_side=True).differences] == ["toast"]


def test_a_native_agent_counts_from_its_spawn_however_long_the_open_took() -> None:
    """The fake host logs the agent as it starts, before its spawn's end at the same moment; the real run sees
    it at its first request, after the spawn and the launch's answer."""
    call = {"t": 0, "kind": "call", "call": "a"}
    check = {"kind": "permission", "call": "a", "outcome": "allow", "via": "mode"}
    fake = [call, {**check, "t": 0}, {"t": 120_000, "kind": "native", "call": "a", "input": {}},
            {"t": 120_000, "kind": "spawn", "call": "a", "answer": "native"},
            {"t": 120_000, "kind": "answer", "call": "a", "result": "x"}]
    real = [call, {**check, "t": 3400}, {"t": 124_200, "kind": "spawn", "call": "a", "answer": "native"},
            {"t": 124_500, "kind": "answer", "call": "a", "result": "x"},
            {"t": 125_100, "kind": "native", "call": "a", "input": {}}]
    assert [d for d in compare(fake, real).differences if d.lane == "time"] == []
    late = [*real[:4], {**real[4], "t": 131_000}]  # the agent 6.8 s after its spawn
    assert [d.key for d in compare(fake, late).differences if d.lane == "time"] == ["native a"]


def test_a_step_the_real_run_cannot_drive_makes_the_scenario_cannot_run_naming_it() -> None:
    """A judge that skipped a step would judge another scenario: every step kind is driven or said not to be."""
    from agent_cards.record import Value, replace
    from agent_cards_conformance.plan import DRIVEN
    from agent_cards_simulator.scenario import steps

    class Unknown(Value):
        async def run(self, play: Any) -> str | None:
            return None

    [base], problems = load_all([ROOT / "scenarios" / "taskstop.yaml"])
    assert not problems and why_not(base, []) is None
    unknown = why_not(replace(base, steps=(*base.steps, Unknown())), [])
    assert unknown is not None and "Unknown" in unknown
    made = {key: kind.read_bare() for key, kind in steps.KINDS.items() if isinstance(kind, steps.Action) and kind.bare}
    made |= {"prompt": steps.Prompt("Go on."), "mode": steps.Mode("plan"), "errands": steps.Errands("tidy"),
             "wait": steps.Wait(10), "until": steps.Until(10 ** 4)}
    for key, step in made.items():
        reason = why_not(replace(base, steps=(*base.steps, step)), [])
        if isinstance(step, DRIVEN):
            assert reason is None, (key, reason)
        else:
            assert reason is not None, key
            assert f"`{key}`" in reason or key in reason, (key, reason)


def test_a_host_that_dies_at_t_mid_open_is_killed_that_far_into_the_real_open() -> None:
    """``at: T`` + ``host.dies`` is found again as T's moment of the next call's open; landing in no open, it
    cannot run (real turns take seconds: T alone would land elsewhere)."""
    from agent_cards.record import replace
    from agent_cards_conformance.plan import plan
    from agent_cards_simulator.scenario import steps
    from agent_cards_simulator.scenario.replay import replay

    [scenario], problems = load_all([ROOT / "scenarios" / "resume" / "host-dies-mid-open.yaml"])
    assert not problems
    events = [dict(e) for e in replay(scenario).events]
    assert why_not(scenario, events) is None
    assert plan(scenario, events).host_dies_in == {"toolu_0001": 1000}
    [kept], _ = load_all([ROOT / "scenarios" / "resume" / "continue.yaml"])
    assert plan(kept, [dict(e) for e in replay(kept).events]).resume_reads == (True,)  # the fresh host reads lich
    late = replace(scenario, steps=(steps.At(5000, steps.HostDies()), *scenario.steps[1:]))
    assert "lands in no open" in str(why_not(late, events))
    esc = replace(scenario, steps=(steps.At(1000, steps.Esc()), *scenario.steps[1:]))
    assert "at:" in str(why_not(esc, events))


def test_what_the_model_read_beside_a_prompt_is_taken_out_of_claude_codes_reminders() -> None:
    """As 2.1.328 sent it after --continue: the hook's context, Claude Code's failed notification, the prompt."""
    from agent_cards_conformance.extract import beside_prompt

    notification = ("<task-notification>\n<task-id>session-2-9f81</task-id>\n<status>failed</status>\n"
                    "<summary>Background agent \"Fix\" didn't finish</summary>\n</task-notification>")
    read = "\n".join([
        "<system-reminder>\nprompt.submit hook additional context: lich session \"Session 2\" still runs.\n"
        "</system-reminder>\n",
        "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event.\n\n"
        f"{notification}\n</system-reminder>\n",
        "Go on."])
    assert beside_prompt(read) == ([notification], ['lich session "Session 2" still runs.'])
    assert beside_prompt("Go on.") == ([], [])


def _planned(tmp_path: Path, name: str) -> Any:
    """The runner of a scenario planned with the fake host's own transcript (what ``conform`` plans with)."""
    from agent_cards_conformance.plan import plan
    from agent_cards_conformance.real import RealRunner
    from agent_cards_simulator.scenario.replay import replay

    [scenario], _ = load_all([ROOT / "scenarios" / f"{name}.yaml"])
    events = [dict(e) for e in replay(scenario).events]
    assert why_not(scenario, events) is None
    return RealRunner(plan(scenario, events), Path("claude"), tmp_path)


def test_a_switch_into_plan_mode_is_driven_and_only_the_plan_mode_call_asks(tmp_path: Path) -> None:
    """The call made in plan mode asks by the mode itself: no ask rule, which would make the default mode's
    calls ask too; only its dialog is answered, the other calls' checks pass by the mode."""
    from agent_cards_conformance.plan import call_modes

    runner = _planned(tmp_path, "perm/plan-mode-switch")
    permission = runner.plan.permission
    assert (permission.decision, permission.rule, dict(permission.answers)) == ("ask", False, {"toolu_0002": True})
    assert call_modes(runner.plan.scenario) == {"toolu_0001": "default", "toolu_0002": "plan", "toolu_0003": "default"}
    from agent_cards_simulator.scenario.files import load_all as load

    [plan_mode], _ = load([ROOT / "scenarios" / "perm" / "plan-mode.yaml"])
    from agent_cards_conformance.plan import plan

    assert plan(plan_mode, []).permission.rule  # every call asks: the rule stays as it was


def test_a_mode_no_key_reaches_cannot_run_naming_the_engine_fact() -> None:
    from agent_cards.record import replace
    from agent_cards_simulator.scenario import steps

    [base], _ = load_all([ROOT / "scenarios" / "taskstop.yaml"])
    reason = why_not(replace(base, steps=(steps.Mode("dontAsk"), *base.steps)), [])
    assert reason is not None and "Shift+Tab's cycle holds no dontAsk mode" in reason


def test_the_footer_names_the_mode_the_person_switched_to() -> None:
    from agent_cards_conformance.real import in_mode

    plan_footer = "  ⏸ plan mode on (shift+tab to cycle) · lich: 1 worker"
    default_footer = "  ? for shortcuts · lich: 1 worker"
    assert in_mode(plan_footer, "plan") and not in_mode(plan_footer, "default")
    assert in_mode(default_footer, "default") and not in_mode(default_footer, "plan")
    assert in_mode("  ⏵⏵ accept edits on (shift+tab to cycle)", "acceptEdits")
    assert not in_mode("  ⏵⏵ auto mode on (shift+tab to cycle)", "default")  # auto mode is not the default
    manual = "  ⏸ manual mode on · ? for shortcuts · ← for agents"  # 2.1.332 names the default mode
    assert in_mode(manual, "default") and not in_mode(manual, "plan")
    from agent_cards_conformance.real import mode_label

    assert [mode_label(f) for f in (plan_footer, manual, "  ? for shortcuts")] == ["plan mode on", "manual mode on",
                                                                                  None]


def test_the_keys_lane_compares_mode_switches_with_their_mode() -> None:
    fake = [{"t": 0, "kind": "mode", "mode": "plan"}, {"t": 1, "kind": "mode", "mode": "default"}]
    assert compare(fake, fake).conforms
    other = [{"t": 0, "kind": "mode", "mode": "plan"}]
    assert [(d.lane, d.fake) for d in compare(fake, other).differences] == [("keys", "mode default")]


def test_the_esc_within_the_mods_git_read_is_planned_in_that_read(tmp_path: Path) -> None:
    runner = _planned(tmp_path, "fall/esc-git-read")
    assert dict(runner.plan.esc_in_git) == {1: ("branch", "--show-current")}
    assert not _planned(tmp_path / "mid-open", "esc-mid-open").plan.esc_in_git  # its Esc lands in the open


def test_the_git_wrapper_holds_the_mods_read_until_released_and_its_ms_count_from_the_release(tmp_path: Path) -> None:
    import os
    import subprocess

    runner = _planned(tmp_path, "fall/esc-git-read")
    git = runner._wrappers() / "git"
    os.mkfifo(runner.git_release)
    runner.git_hold.touch()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(tmp_path)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "repo")], check=True, env=env)
    held = subprocess.Popen([str(git), "branch", "--show-current"], cwd=tmp_path / "repo", env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            held.wait(timeout=1)  # waits on the fifo: it never ends by itself
        assert runner._git_held(0) is not None  # the harness sees the held read begin
        assert not runner.git_hold.exists()  # the flag is taken: one read only
        runner._release_git()
        out, _ = held.communicate(timeout=30)
    finally:
        held.kill()
    assert (held.returncode, out) == (0, "main\n")
    from agent_cards_conformance.extract import Evidence, Extractor

    [run] = Extractor(runner.scenario, Evidence(0.0, runs=runner._run_records())).runs()
    assert run["held_ms"] >= 500 and run["ms"] < run["held_ms"]  # the hold (a second) is not git's time
    again = subprocess.run([str(git), "branch", "--show-current"], cwd=tmp_path / "repo", env=env,
                           capture_output=True, text=True, timeout=30, check=True)
    assert again.stdout == "main\n"  # no flag: the next read runs at once


def test_a_run_with_a_nul_in_its_argv_is_left_out_as_unstarted() -> None:
    fake = [{"t": 0, "kind": "run", "argv": ["/opt/lich/bin/lich", "open", "--prompt", "a\0b"], "exit": None,
             "error": "the argument at index 2 (zero-based) contains a null byte (\\0)"}]
    result = compare(fake, [])
    assert result.conforms and result.unseen == {"run with a NUL in its argv": 1}
    assert "unstarted" in NORMALISATIONS
    fake[0]["argv"] = ["/opt/lich/bin/lich", "open", "--prompt", "ab"]
    assert not compare(fake, []).conforms


def test_a_toast_cut_within_the_real_lich_path_reads_as_the_fake_hosts() -> None:
    from agent_cards_conformance.extract import cut_path

    pairs = [("/tmp/conform-x1/lich/bin/lich", "/opt/lich/bin/lich")]
    real = cut_path('lich failed: "Fix": $.process.run(/tmp/conform-x1/lic…', pairs)
    assert real == 'lich failed: "Fix": $.process.run(/opt/lich/bin/lich…'
    assert cut_path("lich failed: whole", pairs) is None
    fake_toast = 'lich failed: "Fix": $.process.run(/opt/lich/bin/lich) faile…'
    fake = [{"t": 0, "kind": "toast", "text": fake_toast}]
    assert compare(fake, [{"t": 0, "kind": "toast", "text": real, "cut_path": True}]).conforms
    assert not compare(fake, [{"t": 0, "kind": "toast", "text": real}]).conforms  # only a cut path is read so
    other = [{"t": 0, "kind": "toast", "text": 'lich failed: "Other": $.process.run(/opt/lich/bin/lich…',
              "cut_path": True}]
    assert not compare(fake, other).conforms


def test_a_plugins_call_and_a_subagents_call_are_planned_for_their_makers(tmp_path: Path) -> None:
    runner = _planned(tmp_path, "take/origin")
    assert dict(runner.plan.plugin_calls) == {1: "reviewer-plugin"}
    assert runner.plan.subagent_steps == (2,)
    plugin = runner._spawning_plugin("reviewer-plugin")
    manifest = (plugin / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8")
    assert '"name": "reviewer-plugin"' in manifest  # the engine names the call's origin after it
    module = (plugin / "hooks" / "spawn.js").read_text(encoding="utf-8")
    assert "$.agent.call({ tool: 'Agent'" in module and "AGENT_CARDS_CONFORM_SPAWN" in module


def test_a_subagents_call_with_no_agent_before_it_cannot_run() -> None:
    from agent_cards.record import replace

    [scenario], _ = load_all([ROOT / "scenarios" / "take" / "origin.yaml"])
    first, second, third = scenario.steps
    reordered = replace(scenario, steps=(second, first, third))
    from agent_cards_simulator.scenario.replay import replay

    events = [dict(e) for e in replay(reordered).events]
    assert "no native agent running before it" in str(why_not(reordered, events))


def test_the_scripted_model_makes_a_subagents_call_on_its_first_request_once() -> None:
    from agent_cards_claude_driver.model_api import ToolUse
    from agent_cards_conformance.model import ConformModel
    from agent_cards_simulator.scenario.steps import ToolCall

    call = ToolCall("Agent", {"description": "Nested search", "prompt": "Look"}, "toolu_0002")
    model = ConformModel({1: (), 2: (call,)}, subagent_turns=[2])
    first = {"messages": [{"role": "user", "content": "Review the diff"}]}
    reply = model._next_reply("subagent", first)
    assert isinstance(reply, ToolUse) and (reply.id, reply.input) == ("toolu_0002", call.input)
    assert 2 in model.served and model.sent[2][0]["call"] == "toolu_0002"
    assert not isinstance(model._next_reply("subagent", first), ToolUse)  # once
    main = {"messages": [{"role": "user", "content": "conform step 2: carry on with the task."}]}
    assert not isinstance(model._next_reply("main", main), ToolUse)  # never the main loop's


def test_what_a_plugins_spawn_resolved_to_is_its_answer() -> None:
    from agent_cards_conformance.extract import _spawned

    launched = {"value": {"result": {"status": "async_launched"}, "text": "Async agent launched successfully."}}
    assert _spawned(launched) == {"result": "Async agent launched successfully."}
    assert _spawned({"value": {"deny": "no"}}) == {"deny": "no"}
    assert _spawned({"error": "HooksError"}) == {"error": "HooksError"}


def test_a_native_agent_counts_from_its_spawn_with_the_engines_reaction_time() -> None:
    """The real run sees a native agent at its first request, which the engine sends once it built the agent's
    context: seconds after the spawn under load, as a reply takes seconds to reach the hooks."""
    def events(native_ms: int) -> list[dict[str, Any]]:
        return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
                {"t": 10, "kind": "spawn", "call": "c1", "answer": "native"},
                {"t": 10 + native_ms, "kind": "native", "call": "c1", "tool": "Agent", "input": {}}]
    assert compare(events(0), events(TOLERANCES["event"].ms + 500)).conforms
    late = compare(events(0), events(TOLERANCES["reaction"].ms + 500)).differences
    assert [(d.lane, d.key) for d in late] == [("time", "native c1")]


def _bridge_log(t0: float, lines: Sequence[tuple[float, str, str, int | None, str]]) -> list[dict[str, Any]]:
    """The bridge's log as the runner reads it: (seconds after ``t0``, op, id, hook, kind) a line."""
    return [{"t": t0 + at, "op": op, "id": d, "hook": hook, "kind": kind} for at, op, d, hook, kind in lines]


def _extractor(tmp_path: Path, name: str, **evidence: Any) -> Any:
    """The extraction of ``name``'s real run from evidence made here (the model's replies served at the times
    given, no results kept)."""
    from agent_cards_conformance.extract import Evidence, Extractor

    return Extractor(_planned(tmp_path, name).scenario, Evidence(1000.0, **evidence))


def test_a_spawn_belongs_to_the_step_it_began_in(tmp_path: Path) -> None:
    """An agent.spawn that began in an earlier step and ended late (the engine resuming a native agent whose
    own agent finished: no call of the later step raised it) is not the later call's spawn."""
    t0 = 1000.0
    lines = [(1.9, "event", "1", 1, "next"), (2.1, "event", "2", 3, "next"), (2.4, "resume", "2", None, "done"),
             (4.5, "event", "3", 1, "next"), (4.7, "event", "4", 3, "next"), (5.0, "resume", "4", None, "done"),
             (8.8, "event", "6", 3, "next"), (10.2, "resume", "6", None, "done"),
             (10.3, "event", "7", 1, "next"), (10.6, "event", "8", 3, "pending"), (11.5, "poll", "8", None, "done")]
    extractor = _extractor(tmp_path, "take/origin", bridge=_bridge_log(t0, lines),
                           served={1: t0, 2: t0 + 4.2, 3: t0 + 9.9})
    out = extractor.checks_and_spawns({"toolu_0001", "toolu_0002"})
    spawns = [(e["call"], e["answer"], e["t"]) for e in out if e["kind"] == "spawn"]
    assert spawns == [("toolu_0001", "native", 2400), ("toolu_0002", "native", 5000), ("toolu_0003", "deny", 11500)]


def test_a_dialogs_check_is_decided_when_the_person_answered(tmp_path: Path) -> None:
    """The mod passes the call on before the dialog shows; the check's outcome is the person's answer, and the
    spawn follows it: the harness's time to answer is not the engine's."""
    t0 = 1000.0
    lines = [(1.0, "event", "1", 1, "next"), (2.0, "event", "2", 1, "next"), (3.0, "event", "3", 1, "next")]
    extractor = _extractor(tmp_path, "perm/plan-mode-switch", bridge=_bridge_log(t0, lines),
                           served={1: t0 + 0.5, 2: t0 + 1.5, 3: t0 + 2.8},
                           dialogs={"toolu_0002": (t0 + 2.5, True)})  # the person's yes at the second call's dialog
    out = extractor.checks_and_spawns(set())
    assert [(e["call"], e["via"], e["t"]) for e in out] == [
        ("toolu_0001", "mode", 1000), ("toolu_0002", "dialog", 2500), ("toolu_0003", "mode", 3000)]
# -- a new process, a restarted poll, a brief state, a slow lich ------------------------------------------


def _worker_then(*after: dict[str, Any]) -> list[dict[str, Any]]:
    """A worker counted by a launch, then ``after``."""
    return [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 800, "kind": "answer", "call": "c1", "result": "ok"},
            {"t": 800, "kind": "footer", "line": "lich: 1 worker"}, *after]


def test_a_new_processs_screen_is_redrawn_by_the_resume_and_not_timed() -> None:
    """The new screen comes without the lich line once Claude Code has started again (seconds in real time):
    its redraw is the resume's, whatever the time, and a fake host that keeps the old line differs."""
    fake = _worker_then({"t": 1800, "kind": "resume", "how": "continue"},
                        {"t": 1800, "kind": "footer", "line": None}, _poll(1800, "[busy]"),
                        {"t": 1800, "kind": "footer", "line": "lich: 1 worker"})
    real = _worker_then({"t": 4600, "kind": "resume", "how": "continue"},
                        {"t": 10700, "kind": "footer", "line": None}, _poll(15100, "[busy]"),
                        {"t": 15400, "kind": "footer", "line": "lich: 1 worker"})
    assert compare(fake, real).conforms
    kept = [e for e in fake if not (e["kind"] == "footer" and e["t"] == 1800)]
    assert {d.lane for d in compare(kept, real).differences} == {"footer"}


def test_a_state_the_fake_host_drew_for_less_than_a_screen_read_may_go_unseen() -> None:
    """A fresh session host draws its kept count and drops it when its first read ends, 30 ms later in the fake
    host: the real screen (read every 0.2 s) may show it or not. A state that lasted longer must be seen."""
    def fake(hello: int, dropped: int) -> list[dict[str, Any]]:
        return _worker_then({"t": 5000, "kind": "resume", "how": "resume"},
                            {"t": 5000, "kind": "footer", "line": None}, _poll(hello, "[]"),
                            {"t": hello, "kind": "footer", "line": "lich: 1 worker"},
                            {"t": dropped, "kind": "footer", "line": None})
    unseen = _worker_then({"t": 5600, "kind": "resume", "how": "resume"},
                          {"t": 8500, "kind": "footer", "line": None}, _poll(9900, "[]"))
    seen = [*unseen, {"t": 9950, "kind": "footer", "line": "lich: 1 worker"},
            {"t": 10300, "kind": "footer", "line": None}]
    assert compare(fake(5000, 5030), unseen).conforms
    assert compare(fake(5000, 5030), seen).conforms
    assert {d.lane for d in compare(fake(5500, 6500), unseen).differences} == {"footer"}


def test_polls_across_a_restart_of_the_poll_are_held_to_none_late_alone() -> None:
    """A session host killed between calls: the real one restarts seconds later than the fake's (its turn ended
    later), so lich's change falls before its first read; how many polls came first is not compared, a footer
    drawn a poll late still is."""
    fake = _worker_then({"t": 1800, "kind": "host.dies"}, {"t": 6800, "kind": "host.start"},
                        _poll(6800, "[busy]"), _poll(11800, "[]"), {"t": 11830, "kind": "footer", "line": None})
    real = _worker_then({"t": 4700, "kind": "host.dies"}, {"t": 9800, "kind": "host.start"},
                        _poll(10500, "[]"), {"t": 10800, "kind": "footer", "line": None})
    assert compare(fake, real).conforms
    late = [*fake[:-1], _poll(16800, "[]"), {"t": 16830, "kind": "footer", "line": None}]
    [polls] = compare(late, fake).differences
    assert (polls.lane, polls.fake["after the change"], polls.real["after the change"]) == ("polls", 1, 0)


def test_a_new_process_owes_no_poll_until_its_session_host_starts() -> None:
    """Between /exit and the new process's session host no timer of the mod runs; the host's first read is due
    within 5 s of its start, not of the old process's last read."""
    from agent_cards_conformance.invariants import real_violations

    [scenario], _ = load_all([ROOT / "scenarios" / "resume" / "continue.yaml"])
    listed = ('[{"label":"Session 2","name":"session-2-9f81","project":"app","kind":"claude","state":"busy",'
              '"id":"9f81"}]\n')
    fake = replay_events(scenario)
    called, opened = (next(e for e in fake if e["kind"] == kind) for kind in ("call", "run"))
    real: list[dict[str, Any]] = [
        {"t": 0, "kind": "session.start", "interactive": True},
        {**called, "t": 0},
        {"t": 300, "kind": "permission", "call": "toolu_0001", "outcome": "allow", "via": "mode"},
        {**opened, "t": 600, "ms": 1000},
        {"t": 1600, "kind": "spawn", "call": "toolu_0001", "answer": "deny"},
        {"t": 2100, "kind": "answer", "call": "toolu_0001", "result": LAUNCH},
        {"t": 2400, "kind": "footer", "line": "lich: 1 worker"},
        {"t": 4600, "kind": "resume", "how": "continue"},
        {"t": 10700, "kind": "footer", "line": None},
        {"t": 13600, "kind": "session.start", "interactive": True},
        {**_poll(15100, listed), "argv": ["/opt/lich/bin/lich", "sessions", "--json"]},
        {"t": 15400, "kind": "footer", "line": "lich: 1 worker"},
    ]
    assert [v.kind for v in real_violations(scenario, real)] == []
    # the old process's poll, started as it exited and cut off with it, owes nothing either
    exiting = {**_poll(5000, ""), "argv": real[-2]["argv"], "exit": None, "error": "cut off before it exited"}
    exiting.pop("ms")
    assert [v.kind for v in real_violations(scenario, sorted([*real, exiting], key=lambda e: e["t"]))] == []
    late = [{**e, "t": 20000} if e["kind"] == "run" and e["argv"][1] == "sessions" else e for e in real]
    assert [v.kind for v in real_violations(scenario, late)] == ["liveness-poll"]


def replay_events(scenario: Any) -> list[dict[str, Any]]:
    from agent_cards_simulator.scenario.replay import replay

    return [dict(e) for e in replay(scenario).events]


def test_sessions_reads_of_a_whole_poll_period_cannot_run_in_real_time() -> None:
    """A read of exactly 5 s (or 30 s, the read's own timeout) ends on the dot only in virtual time."""
    [slow], _ = load_all([ROOT / "scenarios" / "footer" / "slow-list.yaml"])
    reasons = {v.variant: why_not(v, []) for v in slow.variants}
    assert reasons["4 s reads, every 5 s"] is None and reasons["12 s reads, one at a time"] is None
    assert "a whole multiple of the poll's 5 s" in str(reasons["30 s reads, one at a time"])
    assert "timeout" in str(reasons["30 s reads, one at a time"])


def test_a_worker_the_footer_shows_before_the_model_reads_its_launch_is_of_a_launched_open() -> None:
    """The mod counts its worker at the spawn it denied, and the screen shows it; the model reads the launch
    with its next request, seconds later under load: the count is of a launched open all the same."""
    from agent_cards_conformance.invariants import real_violations
    from agent_cards_conformance.selftest import load_fixture

    real = load_fixture()["scenarios/report-note.yaml"]
    shown = next(e["t"] for e in real if e["kind"] == "footer" and e.get("line"))
    late = sorted(({**e, "t": shown + 50} if e["kind"] == "answer" else e for e in real), key=lambda e: e["t"])
    [scenario], _ = load_all([ROOT / "scenarios/report-note.yaml"])
    assert real_violations(scenario, late) == []


def test_only_the_engines_own_refusal_of_an_input_marks_a_call_refused_as_invalid() -> None:
    from agent_cards_conformance.extract import refused_as_invalid

    refusal = ("<tool_use_error>InputValidationError: Agent failed due to the following issue:\n"
               "The parameter `prompt` type is expected as `string` but provided as `array`</tool_use_error>")
    blocks: dict[str, dict[str, Any]] = {
        "toolu_1": {"is_error": True, "content": refusal},
        "toolu_2": {"is_error": True, "content": [{"type": "text", "text": refusal}]},
        "toolu_3": {"content": "The worker's report quotes InputValidationError: from a log"},
        "toolu_4": {"is_error": True, "content": "<tool_use_error>lich said: InputValidationError: x</tool_use_error>"},
    }

    assert refused_as_invalid({key: (0.0, block, {}) for key, block in blocks.items()}) == {"toolu_1", "toolu_2"}
