"""The conformance comparator at its edges, one helper at a time: each tolerance to the millisecond, each
normalisation both ways, each difference's wording, lane and key, and every event kind a lane reads or
leaves aside, so that a comparator changed anywhere says so here."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_cards_conformance import compare as cmp
from agent_cards_conformance.compare import (
    ABSENT,
    CHECKS,
    CONTEXT_PREFIX,
    HANDBACK,
    LAUNCHED,
    TOLERANCES,
    Comparison,
    Difference,
    allowed,
    by_order,
    compare,
    native_ids,
    task_of,
    turning_points,
    wrapped,
)

Event = dict[str, Any]


def call(name: str = "c1", t: int = 0, **more: Any) -> Event:
    return {"t": t, "kind": "call", "call": name, "tool": "Agent", **more}


def answer(name: str = "c1", t: int = 800, **more: Any) -> Event:
    return {"t": t, "kind": "answer", "call": name, **more}


def run(*argv: str, t: int = 100, ms: int = 10, **more: Any) -> Event:
    return {"t": t, "kind": "run", "argv": ["lich", *argv], "exit": 0, "stdout": "", "stderr": "", "error": None,
            "ms": ms, **more}


def poll(t: int, stdout: str = "[]", exit_: int = 0) -> Event:
    return {"t": t, "kind": "run", "argv": ["lich", "sessions", "--json"], "exit": exit_, "stdout": stdout,
            "stderr": "", "error": None, "ms": 5}


def footer(t: int, line: str | None) -> Event:
    return {"t": t, "kind": "footer", "line": line}


def differences(fake: list[Event], real: list[Event], **options: Any) -> list[Difference]:
    """The comparison's differences, each named by a check of :data:`CHECKS` of its own lane."""
    out = compare(fake, real, **options).differences
    assert [(d.check, d.lane) for d in out] == [(d.check, CHECKS.get(d.check, ("?",))[0]) for d in out]
    return out


def found(fake: list[Event], real: list[Event], **options: Any) -> list[tuple[str, str, Any, Any, str, str]]:
    return [(d.lane, d.key, d.fake, d.real, d.why, d.check) for d in differences(fake, real, **options)]


def checks(fake: list[Event], real: list[Event], **options: Any) -> list[str]:
    return [d.check for d in differences(fake, real, **options)]


# -- the records ----------------------------------------------------------------------------------------


def test_a_difference_names_its_check_in_json_only_when_it_has_one() -> None:
    assert Difference("run", "#1", 1, 2, "w", "run.ms").to_json() == {
        "lane": "run", "key": "#1", "fake": 1, "real": 2, "why": "w", "check": "run.ms"}
    assert Difference("run", "#1", 1, 2, "w").to_json() == {"lane": "run", "key": "#1", "fake": 1, "real": 2,
                                                            "why": "w"}
    assert Comparison().conforms and not Comparison([Difference("a", "b", 1, 2, "w")]).conforms


# -- tolerances ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("row", "fake_ms", "expected"), [
    ("run", 0, 750), ("run", 10_000, 750), ("footer", 5_000, 2000), ("note", 5_000, 2000),
    ("event", 0, 3000), ("event", 1000, 3050), ("event", -1000, 3050), ("reaction", 2000, 6100),
])
def test_each_row_allows_its_milliseconds_and_its_share_of_the_fakes_own(row: str, fake_ms: int,
                                                                          expected: float) -> None:
    assert allowed(row, fake_ms) == pytest.approx(expected)


def test_the_published_allowances_are_named_in_one_sentence() -> None:
    assert cmp.TOLERANCE_TEXT == (
        "a run's ms within ±750 ms; a footer's ms after its cause within ±2000 ms; a note's within ±2000 ms; "
        "each other event's ms after its cause within ±(3000 ms + 5%), ±(6000 ms + 5%) for the engine's reaction "
        "to a call, a reload or a spawn (its own agent's, and that agent's first request); polls before a footer "
        "the polls drew within 10%, none late")
    assert {row: t.share for row, t in TOLERANCES.items()} == {"run": 0.0, "footer": 0.0, "event": 0.05,
                                                               "note": 0.0, "reaction": 0.05}


@pytest.mark.parametrize("slower", [750, 751])
def test_a_run_is_allowed_750_ms_either_way_and_not_one_more(slower: int) -> None:
    for fake_ms, real_ms in ((10, 10 + slower), (10 + slower, 10)):
        got = found([run("open", ms=fake_ms)], [run("open", ms=real_ms)])
        if slower == 750:
            assert got == []
        else:
            assert got == [("run", "#1 open", {"ms": fake_ms}, {"ms": real_ms},
                            "took another time than the tolerance allows", "run.ms")]


def test_a_run_without_a_whole_ms_on_either_side_is_not_timed() -> None:
    assert found([run("open", ms=10)], [{**run("open"), "ms": None}]) == []
    assert found([{**run("open"), "ms": 1.5}], [run("open", ms=5000)]) == []


@pytest.mark.parametrize(("reaction", "edge"), [(False, 3000 + 40), (True, 6000 + 40)])
def test_an_answer_is_allowed_the_event_or_the_reaction_row_to_the_millisecond(reaction: bool, edge: int) -> None:
    """An answer counts from its permission (the event row) or, with no permission, from its call (the engine's
    reaction to the model's reply)."""
    def timed(after: int) -> list[Event]:
        check = [] if reaction else [{"t": 0, "kind": "permission", "call": "c1", "outcome": "allow",
                                      "via": "rule"}]
        return [call(), *check, answer(t=800 + after, result="ok")]
    assert checks(timed(0), timed(edge)) == []
    assert checks(timed(0), timed(edge + 1)) == ["time.answer"]
    assert found(timed(0), timed(edge + 1))[0][1:5] == (
        "answer c1", {"ms after its cause": 800}, {"ms after its cause": 800 + edge + 1},
        "came at another time than the tolerance allows")


# -- fake-lich's order -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("id 9f0a and 9fff", "id <id> and <id>"), ("x9f0a 9f0ab 9f0g", "x9f0a 9f0ab 9f0g"),
    ("ticket a1b2c3d4", "ticket <ticket>"), ("a1b2c3d4e", "a1b2c3d4e"), ("cmd 7c1f", "cmd <command>"),
    ("Session 12 ends", "Session <n> ends"), ("session-3-9f00", "session-<n>-<id>"),
    ('{"nextSeq":42}', '{"nextSeq":<n>}'),
])
def test_what_fake_lich_numbers_by_order_reads_as_a_placeholder(text: str, expected: str) -> None:
    assert by_order(text) == expected


def test_placeholders_reach_inside_mappings_and_lists_and_leave_other_values() -> None:
    assert by_order({"a": ["9f00", {"b": "7c00"}], "n": 3, "none": None}) == {
        "a": ["<id>", {"b": "<command>"}], "n": 3, "none": None}


def test_calls_raised_side_by_side_compare_what_lich_numbers_as_placeholders() -> None:
    fake, real = [run("open", stdout="9f01")], [run("open", stdout="9f02")]
    assert checks(fake, real) == ["run"]
    assert checks(fake, real, side_by_side=True) == []


# -- sequences --------------------------------------------------------------------------------------------


def test_a_sequence_says_which_side_has_an_item_the_other_lacks() -> None:
    out: list[Difference] = []
    cmp._sequence("keys", ["esc", "x"], ["reload"], out)
    cmp._sequence("keys", [], ["esc"], out, label="@", check="k")
    assert [(d.lane, d.key, d.fake, d.real, d.why, d.check) for d in out] == [
        ("keys", "#1", "esc", "reload", "they differ", "keys"),
        ("keys", "#2", "x", ABSENT, "only the fake host has it", "keys"),
        ("keys", "@1", ABSENT, "esc", "only the real engine has it", "k")]


@pytest.mark.parametrize(("length", "limit", "shown"), [(400, 400, "x" * 400), (401, 400, "x" * 400 + "…"),
                                                        (121, 120, "x" * 120 + "…")])
def test_a_long_text_is_shown_cut_at_its_limit(length: int, limit: int, shown: str) -> None:
    assert cmp._short("x" * length, limit) == shown
    assert cmp._short(["x" * 1000]) == ["x" * 1000]


def test_a_long_value_in_a_difference_is_cut_at_400_characters() -> None:
    fake, real = [{"t": 0, "kind": "report", "text": "a" * 500}], [{"t": 0, "kind": "report", "text": "b"}]
    assert found(fake, real) == [("report", "#1", "a" * 400 + "…", "b", "they differ", "report")]


# -- the lanes that compare in order -----------------------------------------------------------------------


@pytest.mark.parametrize(("fake", "real", "check"), [
    ([{"kind": "session.start", "interactive": True}], [{"kind": "session.start", "interactive": False}],
     "session.start"),
    ([call(input={"a": 1})], [call(input={"a": 2})], "call"),
    ([call(tool="TaskStop")], [call()], "call"),
    ([call("c1")], [call("c2")], "call"),
    ([{"kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"}],
     [{"kind": "permission", "call": "c1", "outcome": "allow", "via": "dialog"}], "permission"),
    ([{"kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"}],
     [{"kind": "permission", "call": "c1", "outcome": "deny", "via": "rule"}], "permission"),
    ([{"kind": "spawn", "call": "c1", "answer": "deny"}], [{"kind": "spawn", "call": "c1", "answer": None}],
     "spawn"),
    ([{"kind": "spawn", "call": "c1", "answer": {"deny": "x"}}], [{"kind": "spawn", "call": "c1", "answer": {}}],
     "spawn"),
    ([{"kind": "note", "text": "a"}], [{"kind": "note", "text": "b"}], "note"),
    ([{"kind": "note", "text": "a", "notifications": ["n"]}], [{"kind": "note", "text": "a"}], "note"),
    ([{"kind": "note", "text": "a", "context": ["c"]}], [{"kind": "note", "text": "a"}], "note"),
    ([{"kind": "prompt", "text": "a"}], [{"kind": "prompt", "text": "b"}], "prompt"),
    ([{"kind": "prompt", "text": "a", "notifications": ["n"]}], [{"kind": "prompt", "text": "a"}], "prompt"),
    ([{"kind": "prompt", "text": "a", "context": ["c"]}], [{"kind": "prompt", "text": "a"}], "prompt"),
    ([{"kind": "esc"}], [{"kind": "reload"}], "keys"),
    ([{"kind": "mode", "mode": "plan"}], [{"kind": "mode", "mode": "default"}], "keys"),
    ([{"kind": "rewind", "open": True}], [{"kind": "rewind", "open": False}], "rewind"),
    ([{"kind": "resume", "how": "continue"}], [{"kind": "resume", "how": "resume"}], "lifecycle"),
    ([{"kind": "host.dies"}], [{"kind": "host.start"}], "lifecycle"),
    ([{"kind": "native", "call": "c1", "input": {"prompt": "p"}}],
     [{"kind": "native", "call": "c1", "input": {"prompt": "p"}, "task": "q"}], "native"),
])
def test_each_lane_in_order_sees_its_field_differ(fake: list[Event], real: list[Event], check: str) -> None:
    fake, real = [{"t": 0, **e} for e in fake], [{"t": 0, **e} for e in real]
    assert checks(fake, real) == [check]
    assert checks(fake, fake) == []


def test_a_spawns_arm_is_its_answer_word_a_deny_or_the_engines_own() -> None:
    assert [cmp._spawn_arm(e) for e in ({"answer": "async"}, {"answer": {"deny": "x"}}, {"answer": {"deny": 1}},
                                        {"answer": None}, {})] == ["async", "deny", "native", "native", "native"]


def test_a_permission_and_a_spawn_are_compared_per_call_in_any_order() -> None:
    def checked(*calls: str) -> list[Event]:
        return [e for c in calls for e in ({"t": 0, "kind": "permission", "call": c, "outcome": "allow",
                                            "via": "rule"}, {"t": 0, "kind": "spawn", "call": c, "answer": "async"})]
    assert checks(checked("c1", "c2"), checked("c2", "c1")) == []


def test_only_agent_calls_of_the_engines_own_are_in_the_native_lane_and_its_task_reads_as_the_prompt() -> None:
    fake = [{"t": 0, "kind": "native", "call": "c2", "input": {"prompt": "p"}},
            {"t": 0, "kind": "native", "call": "c1", "input": {"prompt": "q"}},
            {"t": 0, "kind": "native", "call": "c3", "tool": "Bash", "input": {"x": 1}}]
    real = [{"t": 0, "kind": "native", "call": "c1", "input": {"prompt": "ignored"},
             "task": "<system-reminder>r</system-reminder>\n q"},
            {"t": 0, "kind": "native", "call": "c2", "input": {"prompt": "p"}}]
    assert checks(fake, real) == []
    assert checks(fake, real[:1]) == ["native"]


@pytest.mark.parametrize(("text", "task"), [
    ("<system-reminder>a</system-reminder>\n<system-reminder>b\nc</system-reminder>\n  do it", "do it"),
    ("  do <system-reminder>x</system-reminder>", "do <system-reminder>x</system-reminder>"),
    ("do it\n", "do it\n"),
])
def test_a_native_agents_task_is_read_after_the_engines_reminders(text: str, task: str) -> None:
    assert task_of(text) == task


def test_the_keys_lane_reads_escs_reloads_and_modes_with_their_mode() -> None:
    fake = [{"t": 0, "kind": "esc"}, {"t": 0, "kind": "reload"}, {"t": 0, "kind": "mode", "mode": "plan"},
            {"t": 0, "kind": "toast", "text": "x"}]
    assert found(fake, fake[:2]) == [("toast", "#1", "x", ABSENT, "only the fake host has it", "toast"),
                                     ("keys", "#3", "mode plan", ABSENT, "only the fake host has it", "keys")]


# -- answers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "inner"), [
    ("<tool_use_error>no</tool_use_error>", "no"), ("<tool_use_error>a\nb</tool_use_error>", "a\nb"),
    ("x<tool_use_error>no</tool_use_error>", None), ("<tool_use_error>no</tool_use_error>\n", None),
    ("<tool_use_error>no", None),
])
def test_an_error_wrapped_for_the_model_is_read_inside_its_wrapper(text: str, inner: str | None) -> None:
    assert wrapped(text) == inner


@pytest.mark.parametrize(("fake", "real", "why"), [
    ({"deny": "no"}, {"error": "no"}, "the fake host gives a <tool_use_error>; the real engine gave a plain error"),
    ({"error": "no"}, {"result": "no"}, "the fake host gives a plain error; the real engine gave a result"),
    ({"result": "no"}, {"deny": "no"}, "the fake host gives a result; the real engine gave a <tool_use_error>"),
])
def test_an_answer_in_another_arm_names_both(fake: Event, real: Event, why: str) -> None:
    got = found([answer(**fake)], [answer(**real)])
    assert got == [("answer", "c1", fake, real, why, "answer.arm")]


def test_a_deny_is_an_error_the_engine_wrapped_and_an_error_so_wrapped_is_a_deny() -> None:
    assert found([answer(deny="no")], [answer(error="<tool_use_error>no</tool_use_error>")]) == []
    assert found([answer(error="<tool_use_error>no</tool_use_error>")], [answer(deny="no")]) == []
    assert found([answer(error="plain")], [answer(error="plain")]) == []
    assert found([answer(deny="no")], [answer(deny="No")]) == [
        ("answer", "c1", {"deny": "no"}, {"deny": "No"}, "the model read another text", "answer.text")]
    assert checks([answer(error="a")], [answer(error="b")]) == ["answer.text"]


def test_the_fake_side_of_an_answers_difference_shows_what_the_model_reads_cut() -> None:
    fake = answer(result="a" * 500, context=["c"], t=5, extra=1)
    real = answer(result="b", read="b\n" + CONTEXT_PREFIX + "c", extra=2)
    [got] = found([fake], [real])
    assert got == ("answer", "c1", {"result": "a" * 400 + "…", "context": ["c"]}, {"result": "b"},
                   "the model read another result", "answer.result")


def test_an_answer_on_one_side_only_says_which() -> None:
    assert found([answer(result="x", context=["c"])], []) == [
        ("answer", "c1", {"result": "x", "context": ["c"]}, None, "the model never read an answer",
         "answer.presence")]
    assert found([], [answer(result="x", read="x", t=9)]) == [
        ("answer", "c1", None, {"t": 9, "kind": "answer", "call": "c1", "result": "x"},
         "only the real engine answered it", "answer.presence")]


def test_a_context_line_the_model_never_read_is_named_cut_at_120() -> None:
    line = "L" * 130
    [got] = found([answer(result="ok", context=[line])], [answer(result="ok", read="ok")])
    assert got[4:] == (f"the model never read the context line {'L' * 120 + '…'!r}", "answer.context")


def test_a_context_line_read_that_the_fake_never_gives_is_named_once() -> None:
    read = "ok\n" + CONTEXT_PREFIX + "extra\n" + CONTEXT_PREFIX + "extra"
    got = found([answer(result="ok"), answer("c2", result="ok")],
                [answer(result="ok", read=read), answer("c2", result="ok", read=read)])
    assert got == [("answer", "context", None, "extra", "the fake host never gives the context line 'extra'",
                    "answer.context.real")]
    given = found([answer(result="ok"), answer("c2", result="ok", context=["extra"])],
                  [answer(result="ok", read=read), answer("c2", result="ok", read=read)])
    assert given == []


def test_a_source_that_kept_the_hooks_lines_is_read_as_those_lines() -> None:
    fake = [answer(result="ok", context=["a"])]
    assert found(fake, [answer(result="ok", context=["a"])]) == []
    assert checks(fake, [answer(result="ok", context=["b"])]) == ["answer.context", "answer.context.real"]
    assert checks(fake, [answer(result="ok", context=["b"], read="ok\n" + CONTEXT_PREFIX + "a")]) == []
    assert checks([answer(result="ok")], [answer(result="ok", context=None)]) == []


def launch(agent: str = "a1", extra: str = "") -> str:
    return f"{LAUNCHED}. (…)\nagentId: {agent} (internal ID …){extra}"


@pytest.mark.parametrize(("fake", "text", "expected"), [
    ({"agentId": "a1"}, launch(), None),
    ({"agentId": "a1"}, "Async agent launched", ("answer.launch", "not a launch")),
    ({"agentId": "a1"}, launch("a2"), ("answer.agentId", "another agentId")),
    ({"agentId": "a1"}, f"{LAUNCHED}.", ("answer.agentId", "another agentId")),
    ({"agentId": "a1", "resolvedModel": "m"}, launch("zz"), None),
    ({"agentId": "a1", "resolvedModel": "m", "outputFile": "f"}, launch("zz", "\noutput_file: f"), None),
    ({"resolvedModel": "m", "outputFile": "f"}, launch("zz", "\noutput_file: f"),
     ("answer.launch.fields", "the launch's text shows other fields: agentId (shown)")),
    ({"agentId": "a1", "resolvedModel": "m", "outputFile": "f"}, f"{LAUNCHED}.",
     ("answer.launch.fields", "the launch's text shows other fields: agentId (not shown), outputFile (not shown)")),
    ({"agentId": "a1", "outputFile": ""}, launch(extra="\noutput_file: f"),
     ("answer.launch.fields", "the launch's text shows other fields: outputFile (shown)")),
])
def test_a_launch_reads_as_the_engines_launch_text(fake: Event, text: str,
                                                   expected: tuple[str, str] | None) -> None:
    got = cmp._result_problem({"status": "async_launched", **fake}, text)
    assert got == expected


def completed(report: str, agent: str = "a1", **more: Any) -> Event:
    return {"status": "completed", "agentId": agent, "content": [{"type": "text", "text": report}], **more}


@pytest.mark.parametrize(("fake", "text", "expected"), [
    (completed("one\n\ntwo"), "agentId: a1 (x)\none\ntwo", None),
    (completed("one\ntwo"), "agentId: a1 (x)\none", ("answer.report", "the model never read the report's line 'two'")),
    (completed("one"), "agentId: a1 (x)\n one", ("answer.report", "the model never read the report's line 'one'")),
    (completed("one"), "agentId: a2 (x)\none", ("answer.agentId", "another agentId")),
    (completed("one"), "one", ("answer.agentId", "another agentId")),
    (completed("one", resolvedModel="m"), "agentId: zz (x)\none", None),
    (completed("one"), f"{HANDBACK}\nagentId: a1 (x)\n  one", None),
    (completed("one"), f"x{HANDBACK}\nagentId: a1 (x)\n  one",
     ("answer.report", "the model never read the report's line 'one'")),
    (completed("  one"), f"{HANDBACK}\nagentId: a1 (x)\n    one", None),
    ({"status": "completed", "agentId": "a1", "content": ["one", {"text": "two"}]}, "agentId: a1 (x)\ntwo", None),
    ({"status": "completed", "agentId": "a1"}, "agentId: a1 (x)", None),
    (completed("w" * 130), "agentId: a1 (x)",
     ("answer.report", f"the model never read the report's line {'w' * 120 + '…'!r}")),
])
def test_a_completed_report_is_read_line_by_line(fake: Event, text: str, expected: tuple[str, str] | None) -> None:
    assert cmp._result_problem(fake, text) == expected


@pytest.mark.parametrize(("fake", "real", "expected"), [
    ({"a": 1}, {"a": 1}, None),
    ({"a": 1, "b": 2, "c": 3}, {"a": 9, "c": 3, "d": 4},
     ("answer.fields", "other fields: a, b (missing), d (only the engine's)")),
    ({"a": 1}, "{\"a\": 1}", ("answer.shape", "the model read text where the fake host gives fields")),
    ("é", "é", None), ("x", "y", ("answer.result", "the model read another result")),
    ('["é"]', ["é"], None), (3, "3", None),
])
def test_a_mapping_or_a_text_result_is_read_whole(fake: Any, real: Any, expected: tuple[str, str] | None) -> None:
    assert cmp._result_problem(fake, real) == expected


# -- runs -----------------------------------------------------------------------------------------------


def test_a_run_matches_the_first_unmatched_of_its_argv_and_each_field_is_compared() -> None:
    fake = [run("open", "--x", "y", stdout="a"), run("open", "--x", "y", stdout="b")]
    real = [run("open", "--x", "y", stdout="b"), run("open", "--x", "y", stdout="a")]
    assert found(fake, real) == [
        ("run", "#1 open --x", {"argv": ["lich", "open", "--x", "y"], "stdout": "a"},
         {"argv": ["lich", "open", "--x", "y"], "stdout": "b"}, "differs in stdout", "run"),
        ("run", "#2 open --x", {"argv": ["lich", "open", "--x", "y"], "stdout": "b"},
         {"argv": ["lich", "open", "--x", "y"], "stdout": "a"}, "differs in stdout", "run")]


@pytest.mark.parametrize(("field", "value"), [("exit", 1), ("stderr", "e"), ("error", "boom")])
def test_each_field_of_a_run_is_compared(field: str, value: Any) -> None:
    shown = "failed" if field == "error" else field
    [got] = found([run("open")], [run("open", **{field: value})])
    assert got[4:] == (f"differs in {shown}", "run")


def test_a_runs_timeout_is_compared_only_when_both_sides_know_it() -> None:
    assert checks([run("open", timeout_ms=5)], [run("open")]) == []
    assert checks([run("open")], [run("open", timeout_ms=5)]) == []
    assert found([run("open", timeout_ms=5)], [run("open", timeout_ms=6)]) == [
        ("run", "#1 open", {"argv": ["lich", "open"], "timeout_ms": 5}, {"argv": ["lich", "open"], "timeout_ms": 6},
         "differs in timeout_ms", "run")]


def test_a_run_on_one_side_only_says_which() -> None:
    assert found([run("open", "x")], []) == [
        ("run", "#1 open x", {"argv": ["lich", "open", "x"], "exit": 0, "stdout": "", "stderr": "", "failed": False},
         None, "only the fake host ran it", "run")]
    assert found([], [run("close", "x", "y")]) == [
        ("run", "close x", None, {"argv": ["lich", "close", "x", "y"], "exit": 0, "stdout": "", "stderr": "",
                                  "failed": False}, "only the real engine ran it", "run")]
    assert found([], [{"t": 0, "kind": "run"}]) == [
        ("run", "", None, {"argv": [], "exit": None, "stdout": None, "stderr": None, "failed": False},
         "only the real engine ran it", "run")]


def test_polls_are_left_out_of_the_run_lane_and_a_short_argv_is_no_poll() -> None:
    assert checks([poll(0)], []) == []
    assert cmp._is_poll({"kind": "run", "argv": ["sessions"]}) is False
    assert cmp._is_poll({"kind": "run", "argv": ["lich", "sessions"]}) is True
    assert cmp._is_poll({"kind": "footer", "argv": ["lich", "sessions"]}) is False
    assert cmp._is_poll({"kind": "run", "argv": None}) is False


def test_runs_of_a_missing_program_or_with_a_nul_are_left_out_and_counted() -> None:
    fake = [run("open"), {**run("open"), "argv": ["git", "status"]}, {**run("open"), "argv": ["git", "log"]},
            run("open", "a\0b"), {"t": 0, "kind": "check"}, {"t": 0, "kind": "check"}]
    comparison = compare(fake, [run("open")], missing_programs=["git"])
    assert comparison.conforms
    assert comparison.unseen == {"run of a missing program": 2, "run with a NUL in its argv": 1, "check": 2}
    assert compare([run("open")], [run("open")], missing_programs=["git"]).unseen == {}
    assert compare([{"t": 0, "kind": "run", "argv": None}], []).unseen == {}


def test_a_comparison_limited_to_lanes_keeps_only_theirs() -> None:
    fake, real = [run("open", exit=1), {"t": 0, "kind": "esc"}], [run("open")]
    assert checks(fake, real) == ["run", "keys"]
    assert checks(fake, real, lanes=["keys"]) == ["keys"]
    assert checks(fake, real, lanes=[]) == []


# -- footer turns ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lines", "turns"), [
    ([None, "lich: 1", "lich: 1", None], ["lich: 1", None]),
    (["lich: 1", "lich: 2", "lich: 3"], ["lich: 3"]),
    (["lich: 3", "lich: 2", "lich: 1"], ["lich: 3", "lich: 1"]),
    (["lich: 1", "lich: 2", "lich: 1", "lich: 2"], ["lich: 2", "lich: 1", "lich: 2"]),
    (["lich: 1", "lich: 3", "lich: 2", "lich: 0"], ["lich: 3", "lich: 0"]),
    (["lich: 2", "lich: 2 (x)", "lich: 3"], ["lich: 2", "lich: 2 (x)", "lich: 3"]),
    (["lich: 1", None, "lich: 1"], ["lich: 1", None, "lich: 1"]),
    (["lich: 10", "lich: 9 9"], ["lich: 10", "lich: 9 9"]),
])
def test_a_count_that_climbs_or_falls_step_by_step_turns_where_it_stops(lines: list[str | None],
                                                                        turns: list[str | None]) -> None:
    assert turning_points(lines) == turns


def test_a_lich_line_without_a_count_counts_as_none() -> None:
    assert cmp._count(None) == 0 and cmp._count("lich") == 0 and cmp._count("lich: 12 of 3") == 12


def test_a_turn_keeps_the_index_of_the_event_that_drew_it() -> None:
    events = [call(), footer(1, "lich: 1"), answer(), footer(2, "lich: 2"), footer(3, "lich: 2"), footer(4, None)]
    assert cmp._turns(events) == [(3, "lich: 2"), (5, None)]


@pytest.mark.parametrize(("brief", "unseen"), [(199, True), (200, False)])
def test_a_state_drawn_for_less_than_a_screen_read_may_be_missing_from_the_real(brief: int, unseen: bool) -> None:
    fake = [footer(0, "lich: 2"), footer(brief, "lich: 0"), footer(brief + 1000, None)]
    real = [footer(0, "lich: 0"), footer(1000, None)]
    lane = [d for d in differences(fake, real) if d.lane == "footer"]
    assert (lane == []) is unseen
    assert cmp._seen_turns(fake, real) == ([(1, "lich: 0"), (2, None)] if unseen else cmp._turns(fake))


def test_a_brief_state_the_real_screen_shows_too_is_kept() -> None:
    fake = [footer(0, "lich: 2"), footer(50, "lich: 0"), footer(1000, None)]
    assert cmp._seen_turns(fake, fake) == cmp._turns(fake)
    dropped_to_none = [footer(0, "lich: 2"), footer(50, None), footer(1000, "lich: 1")]
    assert cmp._seen_turns(dropped_to_none, [footer(0, "lich: 1")]) == [(2, "lich: 1")]
    again = [footer(0, "lich: 1"), footer(1000, "lich: 1 (x)"), footer(1050, "lich: 1"), footer(2000, None)]
    assert cmp._seen_turns(again, [footer(0, "lich: 1"), footer(900, None)]) == [(0, "lich: 1"), (3, None)]


def test_every_render_logged_holds_the_fake_hosts_brief_states_too() -> None:
    fake = [footer(0, "lich: 2"), footer(50, "lich: 0"), footer(1000, None)]
    real = [footer(0, "lich: 0"), footer(1000, None)]
    assert checks(fake, real) == []
    assert "footer" in checks(fake, real, every_render=True)


# -- polls ---------------------------------------------------------------------------------------------------


def polled(*outputs: str, line: str = "lich: 1", gap: int = 5000, after: int = 1) -> list[Event]:
    """Polls every ``gap`` ms with ``outputs``, the footer drawn ``after`` ms after the last."""
    events = [poll(n * gap, out) for n, out in enumerate(outputs)]
    return [*events, footer((len(outputs) - 1) * gap + after, line)]


def test_the_polls_before_a_footer_a_poll_drew_are_counted_within_a_tenth() -> None:
    ten = polled(*["[]"] * 9, "[1]")
    assert checks(ten, polled(*["[]"] * 10, "[1]")) == []  # one poll more is a tenth of ten
    assert checks(ten, polled(*["[]"] * 8, "[1]")) == []
    assert checks(ten, polled(*["[]"] * 11, "[1]")) == ["polls"]
    assert checks(ten, polled(*["[]"] * 7, "[1]")) == ["polls"]
    [d] = differences(polled("[]", "[1]"), polled("[]", "[]", "[1]"))
    assert (d.lane, d.key, d.fake, d.real, d.why) == (
        "polls", "before lich: 1 (#1)", {"polls": 2, "after the change": 0}, {"polls": 3, "after the change": 0},
        "the footer turned after other polls")


def test_a_footer_drawn_a_poll_late_differs_even_with_the_count_allowed() -> None:
    fake = polled(*["[]"] * 10, "[1]")
    late = [*polled(*["[]"] * 10, "[1]")[:-1], poll(55_000, "[1]"), footer(55_001, "lich: 1")]
    [d] = differences(fake, late)
    assert (d.check, d.fake, d.real) == ("polls", {"polls": 11, "after the change": 0},
                                         {"polls": 12, "after the change": 1})


def test_a_polls_output_changes_by_its_stdout_or_its_exit() -> None:
    assert cmp._first_change([poll(0, "a"), poll(1, "a"), poll(2, "b")], None) == 2
    assert cmp._first_change([poll(0, "a"), poll(1, "a", 1)], None) == 1
    assert cmp._first_change([poll(0, "a")], poll(0, "b")) == 0
    assert cmp._first_change([poll(0, "a")], None) is None
    assert cmp._first_change([poll(0, "a"), poll(1, "a")], poll(0, "a")) is None


def test_a_poll_window_says_its_line_count_lateness_cause_and_restart() -> None:
    events = [poll(0, "[]"), poll(5000, "[1]"), footer(5001, "lich: 1"), answer(t=6000), footer(6001, None),
              {"t": 7000, "kind": "host.dies"}, poll(8000, "[]"), poll(9000, "[2]"), footer(9001, "lich: 2")]
    windows = cmp._poll_windows(events, cmp._turns(events))
    assert windows == [("lich: 1", 2, 0, True, False), (None, 0, None, False, False), ("lich: 2", 2, 1, True, True)]


def test_a_poll_window_after_a_new_processs_own_screen_starts_afresh_too() -> None:
    events = [{"t": 0, "kind": "resume", "how": "continue"}, footer(1, "lich: 2"), poll(2, "[]"), poll(3, "[1]"),
              footer(4, "lich: 1"), poll(5, "[]"), footer(6, "lich: 2")]
    assert cmp._poll_windows(events, cmp._turns(events)) == [("lich: 2", 0, None, False, True),
                                                             ("lich: 1", 2, 0, True, True),
                                                             ("lich: 2", 1, 0, True, False)]


@pytest.mark.parametrize("restart", ["host.dies", "host.start", "resume"])
def test_polls_across_a_restart_are_held_to_none_late(restart: str) -> None:
    def with_restart(polls: int) -> list[Event]:
        return [{"t": 0, "kind": restart}, *polled(*["[]"] * polls, "[1]")]
    assert "polls" not in checks(with_restart(2), with_restart(8))
    assert "polls" in checks(polled(*["[]"] * 2, "[1]"), polled(*["[]"] * 8, "[1]"))


def test_polls_are_not_compared_past_a_footer_that_differs() -> None:
    fake = [*polled("[]", "[1]", line="lich: 1"), *[poll(20_000 + n, "[1]") for n in range(5)], poll(30_000, "[]"),
            footer(30_001, None)]
    real = [*polled("[]", "[1]", line="lich: 9"), poll(30_000, "[]"), footer(30_001, None)]
    assert checks(fake, real) == ["footer"]


# -- order ---------------------------------------------------------------------------------------------------


def test_cause_and_effect_in_another_order_names_both_orders() -> None:
    def chain(*kinds: str) -> list[Event]:
        made: dict[str, Event] = {"permission": {"kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"},
                "spawn": {"kind": "spawn", "call": "c1", "answer": "async"},
                "answer": {"kind": "answer", "call": "c1", "result": {"a": 1}}}
        return [call(), *({"t": 0, **made[k]} for k in kinds)]
    got = found(chain("permission", "spawn", "answer"), chain("spawn", "answer", "permission"))
    assert got == [
        ("order", "c1 permission/spawn", "permission before spawn", "spawn before permission",
         "cause and effect in another order", "order.permission/spawn"),
        ("order", "c1 permission/answer", "permission before answer", "answer before permission",
         "cause and effect in another order", "order.permission/answer")]
    assert checks(chain("permission", "spawn", "answer"), chain("permission", "answer", "spawn")) == [
        "order.spawn/answer"]
    denied = [call(), {"t": 0, "kind": "spawn", "call": "c1", "answer": "deny"}, answer(t=0, deny="no")]
    assert checks(denied, [call(), answer(t=0, deny="no"), {"t": 0, "kind": "spawn", "call": "c1",
                                                             "answer": "deny"}]) == []
    assert checks(chain("spawn", "answer"), chain("answer")) == ["spawn"]


def toast(t: int, text: str = "x") -> Event:
    return {"t": t, "kind": "toast", "text": text}


@pytest.mark.parametrize(("real_at", "conforms"), [(799, True), (800, True), (801, False)])
def test_a_toast_before_an_answer_may_share_its_logged_instant(real_at: int, conforms: bool) -> None:
    fake = [call(), toast(100), answer(result="ok")]
    real = [call(), answer(result="ok"), toast(real_at)]
    real.sort(key=lambda e: e["t"])
    got = found(fake, real)
    assert got == ([] if conforms else [("toast", "#1", {"answers before it": 0}, {"answers before it": 1},
                                         "the toast came on another side of an answer", "toast.order")])


def test_a_note_after_the_answers_is_on_their_side_too() -> None:
    note = {"t": 900, "kind": "note", "text": "n"}
    assert checks([call(), answer(result="ok"), note], [call(), {**note, "t": 100}, answer(result="ok")]) == [
        "note.order"]


def test_toasts_of_calls_side_by_side_are_a_set_and_not_held_to_the_answers() -> None:
    fake = [call(), toast(1, "a"), toast(2, "b"), answer(result="ok")]
    real = [call(), answer(t=1, result="ok"), toast(2, "b"), toast(3, "a")]
    assert checks(fake, real) == ["toast", "toast", "toast.order", "toast.order"]
    assert checks(fake, real, side_by_side=True) == []


def interrupted_by(stop: Event) -> list[Event]:
    return [call(), {"t": 10, **stop}, answer(t=20, result="ok"), call("c2", t=30), answer("c2", t=40, result="ok")]


@pytest.mark.parametrize(("stop", "skipped"), [
    ({"kind": "esc"}, {"c1"}),
    ({"kind": "permission", "call": "c1", "via": "dialog", "outcome": "deny"}, {"c1"}),
    ({"kind": "permission", "call": "c1", "via": "rule", "outcome": "deny"}, set()),
    ({"kind": "permission", "call": "c1", "via": "dialog", "outcome": "allow"}, set()),
])
def test_a_call_answered_after_an_esc_or_a_no_at_its_dialog_is_interrupted(stop: Event, skipped: set[str]) -> None:
    assert cmp._interrupted(interrupted_by(stop)) == skipped


def test_an_interrupted_calls_answer_is_neither_timed_nor_counted_before_a_toast() -> None:
    fake = [call(), {"t": 10, "kind": "esc"}, answer(t=20, error="x"), toast(30)]
    real = [call(), {"t": 10, "kind": "esc"}, toast(15), answer(t=9000, error="x")]
    assert checks(fake, real) == []
    assert checks([call(), answer(t=20, error="x"), toast(30)], [call(), toast(15), answer(t=9000, error="x")]) == [
        "toast.order", "time.answer"]


# -- time ------------------------------------------------------------------------------------------------------


def test_a_cause_is_the_latest_event_of_its_kind_before() -> None:
    events = [call(), call("c2", t=5), toast(9)]
    assert cmp._cause(events, 2, lambda e: e["kind"] == "call") is events[1]
    assert cmp._cause(events, 0, lambda e: True) is None


@pytest.mark.parametrize(("candidate", "same"), [
    (call(), True), (call("c2"), False), (answer(), False),
    (run("open", "x"), True), (run("close"), False), (poll(0), False),
])
def test_the_same_cause_on_the_other_side_is_its_kind_call_command_and_poll(candidate: Event, same: bool) -> None:
    cause = candidate if candidate["kind"] != "run" else run("open", "y")
    if candidate["kind"] == "call":
        cause = call()
    if candidate["kind"] == "answer":
        cause = call()
    assert cmp._same_cause(candidate, cause) is same


def test_a_delay_counts_from_the_cause_found_on_the_other_side_where_this_side_has_it() -> None:
    events = [call(), call("c2", t=300), toast(1000)]
    assert cmp._delay(events, 2) == (700, True, events[1])
    assert cmp._delay(events, 2, like=call()) == (1000, True, events[0])
    assert cmp._delay(events, 2, like=call("c9")) == (700, True, events[1])
    assert cmp._delay([toast(5)], 0) is None


def test_a_footer_a_new_process_drew_is_not_timed_and_one_with_no_cause_neither() -> None:
    events = [{"t": 0, "kind": "resume"}, footer(9000, "lich: 1")]
    assert cmp._own_delay(events, 1) is None
    assert cmp._own_delay([footer(9000, "lich: 1")], 0) is None
    assert cmp._own_delay([{"t": 0, "kind": "esc"}, footer(40, None)], 1) == (40, False, {"t": 0, "kind": "esc"})


def test_a_native_agent_counts_from_its_spawn_or_else_its_permission_as_the_engines_reaction() -> None:
    spawn = {"t": 100, "kind": "spawn", "call": "c1", "answer": None}
    permission = {"t": 50, "kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"}
    native = {"t": 400, "kind": "native", "call": "c1"}
    assert cmp._own_delay([call(), permission, spawn, native], 3) == (300, True, spawn)
    assert cmp._own_delay([call(), permission, native, {**spawn, "t": 500}], 2) == (350, True, permission)
    assert cmp._own_delay([call(), native], 1) == (400, True, call())


def test_a_spawn_counts_from_its_calls_chain_but_not_its_answer_and_its_own_agent_is_a_reaction() -> None:
    permission = {"t": 50, "kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"}
    rejected = answer(t=60, error="x")
    own = {"t": 90, "kind": "spawn", "call": "c1", "answer": None}
    taken = {"t": 90, "kind": "spawn", "call": "c1", "answer": "async"}
    assert cmp._own_delay([call(), permission, rejected, own], 3) == (40, True, permission)
    assert cmp._own_delay([call(), permission, rejected, taken], 3) == (40, False, permission)
    assert cmp._own_delay([call(), call("c2", t=70), taken], 2) == (90, True, call())


def test_a_run_or_a_toast_counts_from_the_latest_event_of_any_call() -> None:
    events = [call(), {"t": 30, "kind": "permission", "call": "c2", "outcome": "allow", "via": "rule"}, toast(100)]
    assert cmp._own_delay(events, 2) == (70, False, events[1])


def test_a_note_counts_from_the_open_holding_its_ticket_else_the_last_call() -> None:
    opened = run("open", t=200, stdout='{"ticket":"ab12"}')
    other = run("open", t=300, stdout='{"ticket":"cd34"}')
    note = {"t": 900, "kind": "note", "text": "[lich] done (ticket ab12)"}
    assert cmp._own_delay([call(), opened, other, note], 3) == (700, False, opened)
    plain = {"t": 900, "kind": "note", "text": "[lich] done"}
    assert cmp._own_delay([call(), opened, call("c2", t=400), plain], 3) == (500, False, call("c2", t=400))
    assert cmp._own_delay([plain], 0) is None
    unknown = {"t": 900, "kind": "note", "text": "(ticket ffff)"}
    assert cmp._own_delay([call(), opened, unknown], 2) == (900, False, call())
    closed = run("close", t=250, stdout='{"ticket":"ab12"}')
    assert cmp._own_delay([call(), closed, note], 2) == (900, False, call())


def test_a_note_held_for_a_free_prompt_counts_from_the_hold_that_ended_at_its_ms() -> None:
    note = {"t": 900, "kind": "note", "text": "[lich] done"}
    ended = answer(t=900, result="ok")
    assert cmp._own_delay([call(), ended, note], 2) == (0, False, ended)
    assert cmp._own_delay([call(), answer(t=899, result="ok"), note], 2) == (900, False, call())
    panel = {"t": 900, "kind": "rewind", "open": False}
    assert cmp._own_delay([call(), panel, note], 2) == (0, False, panel)
    opened_panel = {"t": 900, "kind": "rewind", "open": True}
    assert cmp._own_delay([call(), opened_panel, note], 2) == (900, False, call())
    at_the_call = [call(t=900), answer(t=900, result="ok"), note]
    assert cmp._own_delay(at_the_call, 2) == (0, False, call(t=900))
    esc = [call(), {"t": 10, "kind": "esc"}, answer(t=900, error="x"), note]
    assert cmp._own_delay(esc, 3) == (900, False, call())


@pytest.mark.parametrize(("kind", "row_ms"), [("footer", 2000), ("note", 2000)])
def test_a_footer_and_a_note_have_rows_of_their_own(kind: str, row_ms: int) -> None:
    event = footer(0, "lich: 1") if kind == "footer" else {"kind": "note", "text": "n"}

    def at(after: int) -> list[Event]:
        return [call(), answer(result="ok"), {**event, "t": 800 + after}]
    assert "time." + kind not in checks(at(0), at(row_ms))
    assert "time." + kind in checks(at(0), at(row_ms + 1))


@pytest.mark.parametrize(("at", "label"), [(1, "permission c1"), (2, "spawn c1"), (3, "native c1"),
                                           (4, "answer c1"), (5, "run #1 open x"), (6, "toast #1"), (7, "note #1"),
                                           (8, "footer #1")])
def test_each_event_kind_is_timed_under_its_own_label(at: int, label: str) -> None:
    fake = [call(), {"t": 10, "kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"},
            {"t": 20, "kind": "spawn", "call": "c1", "answer": None}, {"t": 30, "kind": "native", "call": "c1"},
            answer(t=40, result="ok"), run("open", "x", t=50), toast(60), {"t": 70, "kind": "note", "text": "n"},
            footer(80, "lich: 1")]
    late = [{**e, "t": e["t"] + 60_000} if n >= at else e for n, e in enumerate(fake)]
    assert label in [d.key for d in differences(fake, late) if d.lane == "time"]
    assert label not in [d.key for d in differences(fake, fake)]


def test_toasts_side_by_side_are_timed_against_the_real_one_of_their_text() -> None:
    fake = [call(), toast(10, "a"), toast(20, "b")]
    real = [call(), toast(20, "b"), toast(10, "a")]
    assert checks(fake, real, side_by_side=True) == []
    far = [call(), toast(9000, "b"), toast(10, "a")]
    assert checks(fake, far, side_by_side=True) == ["time.toast"]


# -- native ids -----------------------------------------------------------------------------------------------


def test_a_native_agents_id_the_engine_chose_is_read_as_the_fake_hosts() -> None:
    fake = [answer(result={"status": "async_launched", "agentId": "f1", "resolvedModel": "m"})]
    real = [answer(result=launch("r9")), {"t": 0, "kind": "call", "call": "c2", "input": {"task_id": "r9"}}]
    assert native_ids(fake, real)[1]["input"] == {"task_id": "f1"}
    assert native_ids(fake, real)[0]["result"] == launch("f1")
    mod = [answer(result={"status": "async_launched", "agentId": "f1"})]
    assert native_ids(mod, real) == real and native_ids(mod, real) is not real
    assert native_ids(fake, [answer(result=launch(""))]) == [answer(result=launch(""))]
    assert native_ids(fake, [answer("c2", result=launch("r9"))]) == [answer("c2", result=launch("r9"))]
    assert native_ids(fake, [answer(result=launch("f1"))]) == [answer(result=launch("f1"))]
    numbered = [answer(result={"status": "async_launched", "agentId": 7, "resolvedModel": "m"})]
    assert native_ids(numbered, real) == real


# -- paths in toasts ---------------------------------------------------------------------------------------


def test_a_toast_cut_within_a_real_path_reads_as_the_fake_hosts_up_to_its_cut() -> None:
    cut = {"cut_path": True}
    assert cmp._cut_alike("lich at /v/bin/lich failed", "lich at /v/b…", cut) == "lich at /v/bin/lich failed"
    assert cmp._cut_alike("lich at /w/bin/lich failed", "lich at /v/b…", cut) == "lich at /v/b…"
    assert cmp._cut_alike("lich at /v/bin/lich failed", "lich at /v/b", cut) == "lich at /v/b"
    assert cmp._cut_alike("lich at /v/bin/lich failed", "lich at /v/b…", {}) == "lich at /v/b…"
    fake = [toast(0, "lich at /v/bin/lich failed"), toast(1, "second")]
    real = [{**toast(0, "lich at /v/b…"), "cut_path": True}]
    assert found(fake, real) == [("toast", "#2", "second", ABSENT, "only the fake host has it", "toast")]


# -- the edges each lane turns on --------------------------------------------------------------------------


def test_a_state_brief_before_the_last_turn_may_go_unseen_too() -> None:
    fake = [footer(0, "lich: 1 a"), footer(1000, "lich: 1 b"), footer(1050, "lich: 1 c")]
    real = [footer(0, "lich: 1 a"), footer(1000, "lich: 1 c")]
    assert cmp._seen_turns(fake, real) == [(0, "lich: 1 a"), (2, "lich: 1 c")]
    assert checks(fake, real) == []


def test_a_long_context_line_the_fake_never_gives_is_shown_cut_at_120() -> None:
    line = "L" * 130
    got = found([answer(result="ok")], [answer(result="ok", read="ok\n" + CONTEXT_PREFIX + line)])
    assert got == [("answer", "context", None, "L" * 120 + "…",
                    f"the fake host never gives the context line {'L' * 120 + '…'!r}", "answer.context.real")]


def test_a_reports_text_blocks_are_read_as_lines_of_their_own() -> None:
    fake = {"status": "completed", "agentId": "a1", "content": [{"text": "one"}, {"text": "two"}]}
    assert cmp._result_problem(fake, "agentId: a1 (x)\none\ntwo") is None
    assert cmp._result_problem(fake, "agentId: a1 (x)\nonetwo") == (
        "answer.report", "the model never read the report's line 'one'")


@pytest.mark.parametrize(("real", "why"), [
    ({"a": 2, "b": 2}, "other fields: a"), ({"a": 1}, "other fields: b (missing)"),
    ({"a": 1, "b": 2, "c": 3}, "other fields: c (only the engine's)"),
])
def test_each_kind_of_field_difference_alone_differs(real: Event, why: str) -> None:
    assert cmp._result_problem({"a": 1, "b": 2}, real) == ("answer.fields", why)
    assert checks([answer(result={"a": 1, "b": 2})], [answer(result=real)]) == ["answer.fields"]


@pytest.mark.parametrize(("fake", "text", "check"), [
    ({"status": "async_launched", "agentId": "a1"}, "Launched", "answer.launch"),
    ({"status": "async_launched", "agentId": "a1"}, launch("a2"), "answer.agentId"),
    ({"status": "async_launched", "agentId": "a1", "outputFile": "f"}, launch(), "answer.launch.fields"),
    (completed("one"), "agentId: a1 (x)", "answer.report"),
    ({"a": 1}, "a", "answer.shape"),
    ("a", "b", "answer.result"),
])
def test_each_answer_check_reaches_the_comparison_in_its_lane(fake: Any, text: str, check: str) -> None:
    assert checks([answer(result=fake)], [answer(result=text, read=text)]) == [check]


def test_a_run_differing_in_several_fields_names_each() -> None:
    [got] = found([run("open")], [run("open", exit=2, stdout="x")])
    assert got[4] == "differs in exit, stdout"


def test_a_footer_an_answer_drew_after_polls_is_not_poll_drawn() -> None:
    events = [poll(0, "[]"), poll(5000, "[1]"), answer(t=5001), footer(5002, "lich: 1")]
    assert cmp._poll_windows(events, cmp._turns(events)) == [("lich: 1", 2, 0, False, False)]


def test_polls_compare_as_far_as_both_sides_have_turns() -> None:
    fake = [*polled("[]", "[1]"), poll(20_000, "[]"), footer(20_001, None)]
    assert checks(fake, polled("[]", "[1]")) == ["footer"]
    assert checks(polled("[]", "[1]"), fake) == ["footer"]


def test_a_restart_on_one_side_only_holds_the_polls_to_none_late() -> None:
    restarted = [{"t": 0, "kind": "host.start"}, *polled(*["[]"] * 2, "[1]")]
    assert checks(restarted, polled(*["[]"] * 8, "[1]")) == ["lifecycle"]
    assert checks(polled(*["[]"] * 8, "[1]"), restarted) == ["lifecycle"]


@pytest.mark.parametrize("changed_on", ["fake", "real"])
def test_a_window_where_one_side_saw_no_change_is_held_to_its_count_alone(changed_on: str) -> None:
    same = [poll(0, "[1]"), footer(1, "lich: 1"), poll(5000, "[1]"), footer(5001, "lich: 2")]
    changed = [poll(0, "[1]"), footer(1, "lich: 1"), poll(5000, "[2]"), footer(5001, "lich: 2")]
    fake, real = (changed, same) if changed_on == "fake" else (same, changed)
    assert checks(fake, real) == []


def test_polls_before_a_clearing_footer_name_it_so() -> None:
    def cleared(*outputs: str) -> list[Event]:
        return [*polled("[]", "[1]"), *(poll(10_000 + 5000 * n, out) for n, out in enumerate(outputs)),
                footer(10_001 + 5000 * (len(outputs) - 1), None)]
    [d] = differences(cleared("[1]", "[]"), cleared("[1]", "[1]", "[]"))
    assert (d.lane, d.key) == ("polls", "before clearing (#2)")


def test_each_answer_read_counts_before_a_toast() -> None:
    events = [call(), answer(t=10, result="ok"), call("c2", t=20), answer("c2", t=30, result="ok"), toast(40)]
    assert checks(events, events) == []
    assert checks(events, [*events[:4], toast(25)]) == ["toast.order"]


def test_an_interrupted_answer_before_a_toast_on_both_sides_is_not_counted() -> None:
    events = [call(), {"t": 10, "kind": "esc"}, answer(t=20, error="x"), toast(30)]
    assert checks(events, events) == []


def test_a_toast_after_an_answer_may_share_its_logged_instant() -> None:
    fake = [call(), answer(t=800, result="ok"), toast(900)]
    assert checks(fake, [call(), toast(800), answer(t=800, result="ok")]) == []
    assert checks(fake, [call(), toast(799), answer(t=800, result="ok")]) == ["toast.order"]


def test_an_esc_after_the_answer_does_not_interrupt_the_call() -> None:
    assert cmp._interrupted([call(), answer(t=10, result="ok"), {"t": 20, "kind": "esc"}]) == set()
    assert cmp._interrupted([call(), {"t": 5, "kind": "esc"}, answer(t=10, result="ok")]) == {"c1"}


def test_a_toast_after_the_engines_own_agent_counts_from_that_agent() -> None:
    events = [call(), {"t": 100, "kind": "native", "call": "c1"}, toast(150)]
    assert cmp._own_delay(events, 2) == (50, False, events[1])


def test_an_answer_counts_from_its_own_calls_chain_only() -> None:
    events = [call(), call("c2", t=300), answer(t=800, result="ok")]
    assert cmp._own_delay(events, 2) == (800, True, call())


def test_a_native_agent_logged_before_its_spawn_counts_from_that_spawn_if_it_came_first() -> None:
    permission = {"t": 50, "kind": "permission", "call": "c1", "outcome": "allow", "via": "rule"}
    native = {"t": 400, "kind": "native", "call": "c1"}
    for spawned_at in (390, 400):
        spawn = {"t": spawned_at, "kind": "spawn", "call": "c1", "answer": None}
        assert cmp._own_delay([call(), permission, native, spawn], 2) == (400 - spawned_at, True, spawn)
    assert cmp._own_delay([call(), call("c2", t=100), native], 2) == (400, True, call())


def test_an_answer_after_the_engines_own_agent_counts_from_the_spawn_not_the_agent() -> None:
    spawn = {"t": 100, "kind": "spawn", "call": "c1", "answer": None}
    events = [call(), spawn, {"t": 200, "kind": "native", "call": "c1"}, answer(t=300, result="ok")]
    assert cmp._own_delay(events, 3) == (200, False, spawn)


@pytest.mark.parametrize("stdout", ['{"ticket":"ab12ff"}', '{"other":"ab12"}'])
def test_a_note_counts_from_the_open_whose_ticket_is_its_own_exactly(stdout: str) -> None:
    note = {"t": 900, "kind": "note", "text": "[lich] done (ticket ab12)"}
    assert cmp._own_delay([call(), run("open", t=200, stdout=stdout), note], 2) == (900, False, call())


def test_a_note_counts_from_an_open_only_not_a_run_naming_open_later() -> None:
    note = {"t": 900, "kind": "note", "text": "[lich] done (ticket ab12)"}
    other = run("send", "open", t=200, stdout='{"ticket":"ab12"}')
    assert cmp._own_delay([call(), other, note], 2) == (900, False, call())


def test_a_run_is_timed_under_its_command_and_first_argument() -> None:
    fake = [call(), run("open", "--x", "y", t=100)]
    late = [call(), run("open", "--x", "y", t=9000)]
    assert [d.key for d in differences(fake, late)] == ["run #1 open --x"]


def test_toasts_in_turn_are_paired_by_their_order_each_once() -> None:
    fake = [call(), toast(10, "a"), toast(9000, "b")]
    assert checks(fake, [call(), toast(10, "b"), toast(9000, "a")]) == ["toast", "toast"]
    twice = [call(), toast(10), toast(9000)]
    assert checks(twice, twice) == []


def test_toasts_side_by_side_are_timed_by_their_text_under_their_own_number() -> None:
    fake = [call(), toast(10, "a"), toast(20, "b")]
    far = [call(), toast(9000, "b"), toast(10, "a")]
    assert [d.key for d in differences(fake, far, side_by_side=True)] == ["toast #2"]


def test_an_event_with_a_cause_on_one_side_only_is_not_timed() -> None:
    assert checks([call(), toast(10)], [toast(10)]) == ["call"]
    assert checks([toast(10)], [call(), toast(10)]) == ["call"]


def test_permissions_are_compared_per_call() -> None:
    def checked(first: str, second: str) -> list[Event]:
        return [{"t": 0, "kind": "permission", "call": "c1", "outcome": first, "via": "rule"},
                {"t": 0, "kind": "permission", "call": "c2", "outcome": second, "via": "rule"}]
    assert checks(checked("allow", "deny"), checked("deny", "allow")) == ["permission", "permission"]


@pytest.mark.parametrize("kind", ["host.dies", "host.start", "resume"])
def test_a_turn_of_the_session_on_one_side_only_differs(kind: str) -> None:
    assert found([{"t": 0, "kind": kind}], []) == [
        ("lifecycle", "#1", (kind, None), ABSENT, "only the fake host has it", "lifecycle")]


def test_every_native_id_the_engine_chose_is_read_as_the_fake_hosts() -> None:
    native = {"status": "async_launched", "resolvedModel": "m"}
    fake = [answer(result={**native, "agentId": "f1"}), answer("c2", result={**native, "agentId": "f2"})]
    real = [answer(result=launch("r1")), answer("c2", result=launch("ré2"))]
    assert [e["result"] for e in native_ids(fake, real)] == [launch("f1"), launch("f2")]


def test_a_cut_toast_is_read_whole_only_when_the_fake_one_reads_the_same_up_to_its_cut() -> None:
    assert cmp._cut_alike("lich at /v/xyz", "lich at /v/b…", {"cut_path": True}) == "lich at /v/b…"


def test_every_normalisation_is_named_where_it_is_applied_and_only_those() -> None:
    from pathlib import Path

    import agent_cards_conformance

    folder = Path(agent_cards_conformance.__file__).parent
    named = {name for path in folder.glob("*.py")
             for name in re.findall(r"normalisation ``([^`]+)``", path.read_text(encoding="utf-8"))}
    assert named == set(cmp.NORMALISATIONS)


def test_a_missing_state_reads_as_no_such_state() -> None:
    assert ABSENT == "(no such state)"


def test_the_conformance_doc_says_what_is_read_alike_as_the_comparison_has_it() -> None:
    from pathlib import Path

    from agent_cards_conformance.command import COMPARED, READ_ALIKE, markdown_text, table

    doc = (Path(__file__).resolve().parents[1] / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert READ_ALIKE in doc and READ_ALIKE in table([])
    for name, what in cmp.NORMALISATIONS.items():
        assert f"- **{name}**: {markdown_text(what)}\n" in READ_ALIKE + "\n"
    assert markdown_text("a <tag>") == "a \\<tag>"
    assert COMPARED in doc and COMPARED in table([])
    assert "- `time.toast` (time): a toast's ms after its cause within TOLERANCES\n" in COMPARED
    assert "- `answer.fields` (answer): a mapping result: the same keys, each equal\n" in COMPARED


@pytest.mark.parametrize("redraw", ["answer", "esc", "reload"])
def test_a_footer_counts_from_what_redrew_it_last(redraw: str) -> None:
    drawn = {"t": 1000, "kind": redraw, "call": "c1"}
    events = [call(), poll(500), drawn, footer(1500, "lich: 1")]
    delay = cmp._own_delay(events, 3)
    assert delay is not None and (delay[0], delay[2]) == (500, drawn)  # a footer's row is its own: no reaction
    assert cmp._poll_windows(events, cmp._turns(events))[0][3] is False
