"""The fake lich (simulator/lich: its world, commands and records) and its Go-style flag parser (goflags)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cards.record import Record, Value, plain
from agent_cards_simulator.lich.commands import COMMANDS
from agent_cards_simulator.lich.goflags import FlagError, HelpRequested, Kind, go_quote, parse
from agent_cards_simulator.lich.output import CALL_MS, LichRun, Note, json_line
from agent_cards_simulator.lich.scripts import LichScript, ListScript, OpenScript, ReportScript, StopScript
from agent_cards_simulator.lich.world import LichSession, LichWorld, slug

BIN = "/opt/lich/bin/lich"
ENV = {"LICH_SESSION_ID": "3c4d", "LICH_BIN": BIN, "LICH_PORT": "47999", "LICH_TOKEN": "tok"}
NO_LICH = "lich: no lich is running — open lich, or run this inside one of its sessions\n"
SHARED = ("open", "--kind", "claude", "--subagent", "--prompt", "Fix the auth flow", "--json")
BRANCH = "subagent/fix-the-auth-flow-ab12"
ISOLATED = ("open", "--kind", "claude", "--subagent", "--worktree", BRANCH, "--base", "feat/login",
            "--prompt", "Fix the auth flow", "--json")


def world(**script: Any) -> LichWorld:
    return LichWorld(LichScript(**script))


def lich(w: LichWorld, *args: str, now: int = 0, env: dict[str, str] | None = None) -> LichRun:
    return w.run([BIN, *args], ENV if env is None else env, now)


def out(run: LichRun) -> Any:
    assert run.stdout.endswith("\n") and run.stdout.count("\n") == 1, run
    return json.loads(run.stdout)


def failed(run: LichRun, line: str) -> None:
    """A failure: exactly one `lich: ` line on stderr, nothing on stdout, exit 1."""
    assert (run.stdout, run.stderr, run.exit_code) == ("", f"lich: {line}\n", 1)


def names(w: LichWorld, now: int) -> list[str]:
    return [row["name"] for row in w.roster(now)]


# --- goflags ---------------------------------------------------------------------------------------------

SPEC: dict[str, Kind] = {"json": "bool", "prompt": "string", "worktree": "string", "timeout": "int"}


@pytest.mark.parametrize("argv", [
    ["--prompt", "v", "rest"], ["--prompt=v", "rest"], ["-prompt", "v", "rest"], ["-prompt=v", "rest"],
])
def test_goflags_value_forms_are_equivalent(argv: list[str]) -> None:
    parsed = parse(argv, SPEC)
    assert parsed.flags == {"prompt": "v"} and parsed.args == ["rest"]


@given(st.sampled_from(["prompt", "worktree"]), st.text(), st.booleans(), st.lists(st.text(max_size=4), max_size=3))
def test_goflags_separate_value_equals_joined_value(name: str, value: str, one_dash: bool, tail: list[str]) -> None:
    dash = "-" if one_dash else "--"
    rest = ["stop", *tail]
    apart = parse([f"{dash}{name}", value, *rest], SPEC)
    joined = parse([f"{dash}{name}={value}", *rest], SPEC)
    assert apart == joined
    assert apart.text(name) == value and apart.args == rest


def test_goflags_bool_flags_take_no_value() -> None:
    parsed = parse(["--json", "true"], SPEC)
    assert parsed.on("json") and parsed.args == ["true"]
    assert parse(["--json=true"], SPEC).on("json")
    assert parse(["-json=1"], SPEC).on("json")
    assert not parse(["--json=false"], SPEC).on("json")
    with pytest.raises(FlagError, match=r'^invalid boolean value "maybe" for -json: parse error$'):
        parse(["--json=maybe"], SPEC)


def test_goflags_value_flag_takes_a_dash_argument() -> None:
    parsed = parse(["--prompt", "--json", "x"], SPEC)
    assert parsed.text("prompt") == "--json" and not parsed.on("json") and parsed.args == ["x"]


def test_goflags_stop_at_first_non_flag_and_at_double_dash() -> None:
    assert parse(["a", "--json"], SPEC).args == ["a", "--json"]
    parsed = parse(["--json", "--", "--prompt", "x"], SPEC)
    assert parsed.on("json") and parsed.args == ["--prompt", "x"]
    assert parse(["-", "--json"], SPEC).args == ["-", "--json"]
    assert parse([], SPEC).args == []


@pytest.mark.parametrize(("argv", "message"), [
    (["--subagent"], "flag provided but not defined: -subagent"),
    (["-nope=1"], "flag provided but not defined: -nope"),
    (["--prompt"], "flag needs an argument: -prompt"),
    (["--json", "-worktree"], "flag needs an argument: -worktree"),
    (["---x"], "bad flag syntax: ---x"),
    (["-=x"], "bad flag syntax: -=x"),
    (["--timeout", "soon"], 'invalid value "soon" for flag -timeout: parse error'),
])
def test_goflags_errors_use_gos_wording(argv: list[str], message: str) -> None:
    with pytest.raises(FlagError) as caught:
        parse(argv, SPEC)
    assert str(caught.value) == message


def test_goflags_ints_and_help() -> None:
    assert parse(["--timeout", "540"], SPEC).number("timeout") == 540
    assert parse(["--timeout=0x10"], SPEC).number("timeout") == 16
    assert parse(["--timeout=010"], SPEC).number("timeout") == 8
    for flag in ("-h", "--help", "-help"):
        with pytest.raises(HelpRequested):
            parse([flag], SPEC)
    assert parse(["--help"], {"help": "bool"}).on("help")


@pytest.mark.parametrize(("text", "quoted"), [
    ("auth-fix", '"auth-fix"'),
    ('say "hi" \\ bye', '"say \\"hi\\" \\\\ bye"'),
    ("a\nb\tc\x01\x7f", '"a\\nb\\tc\\x01\\x7f"'),
    ("é漢🙂", '"é漢🙂"'),
    ("\u00a0\u200b\U000f0000", '"\\u00a0\\u200b\\U000f0000"'),
])
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_go_quote_reads_back(text: str) -> None:
    quoted = go_quote(text)
    assert "\n" not in quoted
    assert ast.literal_eval(quoted) == text  # Go's escapes mean the same in a Python literal


# --- open ------------------------------------------------------------------------------------------------


def test_open_shared_subagent_json() -> None:
    w = world()
    run = lich(w, *SHARED, now=1000)
    assert (run.stderr, run.exit_code, run.ms, run.hang) == ("", 0, 800, False)
    body = out(run)
    assert list(body) == ["id", "projectId", "project", "label", "name", "kind", "path", "nextSeq",
                          "originSessionId", "originLabel", "confined", "folder", "run", "delivery"]
    assert body["id"] == "9f81" and body["label"] == "Session 2" and body["name"] == "session-2-9f81"
    assert body["path"] == "/home/dev/app" and body["project"] == "app" and body["kind"] == "claude"
    assert (body["originSessionId"], body["originLabel"], body["folder"]) == ("3c4d", "planner", "planner")
    assert body["delivery"] == {"ticket": "a1b2c301", "target": "Session 2", "status": "pending", "answer": ""}
    assert w.roster(1000) == [{"label": "Session 2", "name": "session-2-9f81", "project": "app",
                               "kind": "claude", "state": "busy", "id": "9f81"}]


def test_open_isolated_subagent_json() -> None:
    w = world(worktrees="/data/wt")
    body = out(lich(w, *ISOLATED))
    assert body["label"] == BRANCH and body["name"] == "subagent-fix-the-auth-flow-ab12-9f81"
    assert body["path"] == f"/data/wt/{BRANCH}" and body["delivery"]["target"] == BRANCH
    second = out(lich(w, *SHARED))
    assert (second["id"], second["label"], second["name"]) == ("9f82", "Session 2", "session-2-9f82")
    assert second["delivery"]["ticket"] == "a1b2c302"
    third = out(lich(w, *SHARED))
    assert (third["label"], third["nextSeq"]) == ("Session 3", 4)


def test_open_prose_and_without_prompt() -> None:
    w = world()
    run = lich(w, "open", "--worktree", "feat/x")
    assert run.exit_code == 0 and run.stderr == ""
    first, second = run.stdout.splitlines()
    assert first == 'Opened session "feat/x" (claude) in project "app", in worktree /lich/worktrees/feat/x.'
    assert second.startswith('It answers to "feat/x" and to "feat-x-9f81".')
    assert w.roster(0)[0]["state"] == ""
    assert "delivery" not in out(lich(w, "open", "--json"))
    shared = lich(w, "open", "--prompt", "go")
    lines = shared.stdout.splitlines()
    assert lines[0] == 'Opened session "Session 3" (claude) in project "app".' and len(lines) == 3
    assert "a1b2c301" in lines[2] and shared.exit_code == 0


@pytest.mark.parametrize(("args", "env", "line"), [
    (("open", "--subagent", "--json"), ENV, "--subagent needs --prompt"),
    (("open", "--subagent", "--prompt", "x"), {"LICH_BIN": BIN}, "--subagent needs LICH_SESSION_ID"),
    (("open", "--subagent", "--prompt", "x"), {"LICH_SESSION_ID": ""}, "--subagent needs LICH_SESSION_ID"),
    (("open", "--subagent", "--project", "app", "--prompt", "x"), ENV, "--subagent does not take --project"),
    (("open", "--subagent", "--folder", "f", "--prompt", "x"), ENV, "--subagent does not take --folder"),
    (("open", "--subagent", "--private", "--prompt", "x"), ENV, "--subagent does not take --private"),
    (("open", "--private"), ENV, "--private needs --prompt"),
    (("open", "--worktree", "b", "--base", ""), ENV, '"" is not a branch'),
    (("open", "--kind", "emacs"), ENV, 'unknown kind "emacs"'),
    (("open", "--prompt", "x"), {}, "outside a session, name the project with --project"),
    (("open", "--project", "other"), ENV, 'no open project named "other"'),
    (("open", "extra"), ENV, "usage: lich open [--project"),
])
def test_open_refusals_open_nothing(args: tuple[str, ...], env: dict[str, str], line: str) -> None:
    w = world(opens=[OpenScript(label="scripted")])
    run = lich(w, *args, env=env)
    assert run.stdout == "" and run.exit_code == 1 and run.stderr.startswith(f"lich: {line}")
    assert run.stderr.count("\n") == 1 and run.stderr.endswith("\n")
    assert w.roster(0) == []
    assert out(lich(w, *SHARED))["label"] == "scripted"  # the refused open consumed no script


def test_open_flag_errors() -> None:
    w = world()
    failed(lich(w, "open", "--kind"), "flag needs an argument: -kind")
    failed(lich(w, "open", "--json=maybe"), 'invalid boolean value "maybe" for -json: parse error')
    failed(lich(w, "open", "--nope"), "flag provided but not defined: -nope")
    assert w.roster(0) == []


def test_open_project_outside_a_session_and_by_path() -> None:
    w = world()
    body = out(lich(w, "open", "--project", "/home/dev/app", "--prompt", "hi", "--json", env={}))
    assert (body["project"], body["originSessionId"], body["originLabel"]) == ("app", "", "")


def test_prompt_over_8192_bytes_opens_an_empty_card() -> None:
    w = world()
    run = lich(w, "open", "--kind", "claude", "--subagent", "--prompt", "x" * 8193, "--json")
    assert run.exit_code == 1
    assert run.stderr == ("lich: the session is open, but the task did not reach it: prompt is 8193 bytes, over "
                          "the 8192 limit: name the paths to read instead of pasting their contents\n")
    body = out(run)
    assert "delivery" not in body and body["name"] == "session-2-9f81"
    assert w.roster(0)[0]["state"] == "" and w.next_note_at() is None
    assert "delivery" in out(lich(w, "open", "--subagent", "--prompt", "x" * 8192, "--json"))
    multi = lich(w, "open", "--subagent", "--prompt", "é" * 4097, "--json")
    assert "prompt is 8194 bytes" in multi.stderr


def test_empty_prompt_and_scripted_handoff_error() -> None:
    w = world(opens=[OpenScript(), OpenScript(handoff_error="its terminal ended", report=ReportScript(10, "x"))])
    run = lich(w, "open", "--subagent", "--prompt", "", "--json")
    handoff = "lich: the session is open, but the task did not reach it: "
    assert run.stderr == handoff + "nothing to send: the prompt is empty\n"
    run = lich(w, *SHARED)
    assert run.stderr == handoff + "its terminal ended\n"
    assert run.exit_code == 1 and "delivery" not in out(run)
    assert [row["state"] for row in w.roster(10_000)] == ["", ""] and w.notes_due(10_000) == []
    prose = lich(w, "open", "--subagent", "--prompt", "")
    assert prose.stdout.startswith('Opened session "Session 4"') and prose.exit_code == 1


def test_scripted_open_failure_opens_nothing() -> None:
    w = world(opens=[OpenScript(fail="git could not create the worktree", ms=1500)])
    run = lich(w, *ISOLATED)
    assert run == LichRun("", "lich: git could not create the worktree\n", 1, 1500)
    assert w.roster(0) == []
    assert out(lich(w, *SHARED))["id"] == "9f81"


def test_hanging_open_still_opens_and_reports() -> None:
    w = world(opens=[OpenScript(hang=True, report=ReportScript(9000, "did it anyway"))])
    run = lich(w, *SHARED, now=100)
    assert run.hang and run.stdout == "" and run.stderr == ""
    assert names(w, 100) == ["session-2-9f81"]
    assert w.next_note_at() == 9100
    assert w.notes_due(9100)[0].text.endswith("Its report:\n\ndid it anyway")


def test_output_overrides_change_only_the_output() -> None:
    w = world(opens=[OpenScript(stdout="null\n", exit=3), OpenScript(stdout='{"id":', stderr="boom\n", exit=2),
                     OpenScript(label="auth-fix", name="auth-fix-9f8e")])
    run = lich(w, *SHARED)
    assert (run.stdout, run.stderr, run.exit_code) == ("null\n", "", 3)
    run = lich(w, *SHARED)
    assert (run.stdout, run.stderr, run.exit_code) == ('{"id":', "boom\n", 2)
    body = out(lich(w, *SHARED))
    assert (body["label"], body["name"], body["delivery"]["target"]) == ("auth-fix", "auth-fix-9f8e", "auth-fix")
    assert names(w, 0) == ["session-2-9f81", "session-3-9f82", "auth-fix-9f8e"]


def test_delivery_statuses() -> None:
    w = world(opens=[OpenScript(delivery="answered", answer="42 <b>", ms=3000), OpenScript(delivery="unread"),
                     OpenScript(delivery="unanswered", report=ReportScript(50_000, "late")),
                     OpenScript(delivery="bogus"), OpenScript(delivery=None)])
    run = lich(w, *SHARED, now=0)
    assert run.exit_code == 0 and "\\u003cb\\u003e" in run.stdout
    assert out(run)["delivery"] == {"ticket": "a1b2c301", "target": "Session 2", "status": "answered",
                                    "answer": "42 <b>"}
    assert w.roster(2999)[0]["state"] == "busy" and names(w, 3000) == []  # answered in the open, then closed
    assert out(lich(w, *SHARED))["delivery"]["status"] == "unread"
    assert out(lich(w, *SHARED))["delivery"]["status"] == "unanswered"
    bogus = lich(w, *SHARED)
    assert bogus.exit_code == 0 and out(bogus)["delivery"]["status"] == "bogus"
    none = lich(w, *SHARED)
    assert none.exit_code == 0 and "delivery" not in out(none)
    states = {row["label"]: row["state"] for row in w.roster(10_000)}
    assert states == {"Session 3": "", "Session 4": "done", "Session 5": "busy", "Session 6": "busy"}
    notes = w.notes_due(10**9)
    assert [n.at_ms for n in notes] == [50_000] and "ticket a1b2c303" in notes[0].text


def test_open_json_on_old_lich_and_old_lich_refusals() -> None:
    w = world(subagent=False)
    failed(lich(w, *SHARED), "flag provided but not defined: -subagent")
    assert w.roster(0) == []
    body = out(lich(w, "open", "--prompt", "hi", "--json"))
    assert set(body) == {"id", "projectId", "project", "label", "name", "kind", "path", "nextSeq",
                         "originSessionId", "originLabel", "delivery"}
    assert w.roster(0) == [{"label": "Session 2", "name": "session-2-9f81", "project": "app", "kind": "claude",
                            "state": "busy"}]
    run = lich(w, "control", "session-2-9f81", "abort")
    assert run.exit_code == 1 and run.stderr.startswith('lich: unknown command "control"')


# --- no lich, unknown commands, help ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [SHARED, ("sessions", "--json"), ("close", "x"), ("control", "x", "abort")])
def test_no_lich_running(args: tuple[str, ...]) -> None:
    w = world(running=False)
    run = lich(w, *args)
    assert (run.stdout, run.stderr, run.exit_code, run.ms) == ("", NO_LICH, 1, CALL_MS)
    assert w.roster(0) == []


def test_help_without_lich() -> None:
    w = world(running=False)
    assert lich(w, "help").exit_code == 0
    assert lich(w, "open", "--help").exit_code == 0


@pytest.mark.parametrize("word", ["send", "wait", "reply", "whoami", "version"])
def test_commands_nothing_runs_are_unknown(word: str) -> None:
    """lich has them, but nothing that uses this fake runs them (simulator/lich/__init__.py)."""
    run = lich(world(), word, "--json")
    assert run == LichRun("", f'lich: unknown command "{word}"\nRun `lich help` for the list.\n', 1, CALL_MS)
    assert word not in lich(world(), "help").stdout


@pytest.mark.parametrize(("word", "hint"), [
    ("sesions", ' — did you mean "sessions"?'), ("opne", ' — did you mean "open"?'),
    ("clse", ' — did you mean "close"?'), ("hepl", ' — did you mean "help"?'),
    ("xyzzy", ""), ("rename", ""),
])
def test_unknown_command(word: str, hint: str) -> None:
    run = lich(world(running=False), word, "--json")
    assert run == LichRun("", f'lich: unknown command "{word}"{hint}\nRun `lich help` for the list.\n', 1, CALL_MS)


def test_help() -> None:
    w = world()
    run = lich(w, "help")
    assert run.exit_code == 0 and run.stderr == ""
    for name in COMMANDS:
        assert f"  {name}" in run.stdout
    for name, command in COMMANDS.items():
        for flag in ("--help", "-h", "-help"):
            assert lich(w, name, flag) == LichRun(f"usage: {command.usage}\n\n{command.summary}\n", "", 0, CALL_MS)
    assert lich(w, "help", "close").stdout.startswith("usage: lich close ")
    assert lich(w, "help", "bogus").stderr.startswith('lich: unknown command "bogus"')
    assert "control" not in lich(world(subagent=False), "help").stdout


def test_bare_lich_and_leading_dash() -> None:
    w = world()
    assert lich(w, "--help").exit_code == 0
    for args in ((), ("--shell", "/bin/sh")):
        run = lich(w, *args)
        assert run.exit_code == 1 and run.stdout == "" and run.stderr.count("\n") == 1


# --- sessions ---------------------------------------------------------------------------------------------


def test_sessions_empty() -> None:
    w = world()
    assert lich(w, "sessions", "--json") == LichRun("[]\n", "", 0, CALL_MS)
    assert lich(w, "sessions").stdout == "No other live sessions.\n"
    failed(lich(w, "sessions", "extra"), "usage: lich sessions [--json]")


def test_sessions_lists_others_but_not_the_caller() -> None:
    w = world()
    lich(w, *SHARED)
    lich(w, *ISOLATED)
    rows = out(lich(w, "sessions", "--json"))
    assert [set(row) for row in rows] == [{"label", "name", "project", "kind", "state", "id"}] * 2
    as_worker = {**ENV, "LICH_SESSION_ID": "9f81"}
    assert [row["id"] for row in out(lich(w, "sessions", "--json", env=as_worker))] == ["9f82"]
    prose = lich(w, "sessions").stdout.splitlines()
    assert prose == ["session\tproject\tprovider\tname\tstate", "Session 2\tapp\tclaude\tsession-2-9f81\tbusy",
                     f"{BRANCH}\tapp\tclaude\tsubagent-fix-the-auth-flow-ab12-9f82\tbusy"]
    lich(w, "open")
    assert lich(w, "sessions").stdout.splitlines()[-1] == "Session 3\tapp\tclaude\tsession-3-9f83\t-"


def test_list_script_window() -> None:
    w = world(lists=[ListScript(5000, 10_000), ListScript(20_000, 21_000, stdout="garbage", stderr="", exit=0)])
    lich(w, *SHARED)
    assert len(out(lich(w, "sessions", "--json", now=4999))) == 1
    failed(lich(w, "sessions", "--json", now=5000), "the session list could not be read")
    assert lich(w, "sessions", now=9999).exit_code == 1
    assert lich(w, "sessions", "--json", now=10_000).exit_code == 0
    assert lich(w, "sessions", "--json", now=20_500) == LichRun("garbage", "", 0, CALL_MS)


def test_a_window_by_read_number_is_passed_over() -> None:
    """A window with ``read`` answers the n-th read in front of lich (the replay's scripted runs): lich
    itself never counts reads, so its time span, if any, does not answer either."""
    w = world(lists=[ListScript(0, 10_000, stdout="by read", exit=0, read=1)])
    lich(w, *SHARED)
    for now in (0, 5000):
        answer = lich(w, "sessions", "--json", now=now)
        assert answer.exit_code == 0 and len(out(answer)) == 1
    assert lich(w, "sessions", now=5000).stdout.startswith("session\t")


# --- the worker lifecycle -----------------------------------------------------------------------------------


def test_shared_worker_answers_then_is_closed() -> None:
    w = world(opens=[OpenScript(report=ReportScript(60_000, "All fixed."))])
    lich(w, *SHARED, now=1000)
    assert w.roster(60_999)[0]["state"] == "busy"
    assert w.next_note_at() == 61_000
    assert w.notes_due(60_999) == []
    assert w.notes_due(61_000) == [Note(61_000, '[lich] Session "Session 2" finished the task you handed it '
                                                "(ticket a1b2c301). Its report:\n\nAll fixed.")]
    assert w.notes_due(10**9) == [] and w.next_note_at() is None
    assert w.roster(61_000) == []


def test_the_kept_session_list_follows_answers_stops_and_closes() -> None:
    """sessions --json's line is kept between polls; every change shows at once all the same."""
    w = world(opens=[OpenScript(report=ReportScript(60_000, "All fixed.", background=True)), OpenScript()])
    lich(w, *SHARED, now=1000)

    def states(now: int) -> list[tuple[str, str]]:
        return [(row["name"], row["state"]) for row in out(lich(w, "sessions", "--json", now=now))]

    assert states(5000) == [("session-2-9f81", "busy")]
    assert lich(w, "sessions", "--json", now=6000).stdout is lich(w, "sessions", "--json", now=7000).stdout  # kept
    assert states(60_999) == [("session-2-9f81", "busy")]
    assert states(61_000) == [("session-2-9f81", "done")]  # the answer came due: the kept line turned
    lich(w, *SHARED, now=62_000)  # a command other than sessions: the kept line is dropped
    assert states(62_000) == [("session-2-9f81", "done"), ("session-3-9f82", "busy")]
    lich(w, "control", "session-3-9f82", "abort", now=63_000)
    assert states(63_000) == [("session-2-9f81", "done"), ("session-3-9f82", "done")]
    lich(w, "close", "session-2-9f81", now=64_000)
    assert states(64_000) == [("session-3-9f82", "done")]
    as_worker = {**ENV, "LICH_SESSION_ID": "9f82"}  # another caller: its own list
    assert out(lich(w, "sessions", "--json", now=64_000, env=as_worker)) == []


def test_background_and_isolated_workers_stay_listed_done() -> None:
    w = world(opens=[OpenScript(report=ReportScript(5000, "bg", background=True)),
                     OpenScript(report=ReportScript(3000, "iso")), OpenScript()])
    lich(w, *SHARED)
    lich(w, *ISOLATED, now=100)
    lich(w, *SHARED)
    assert [r["state"] for r in w.roster(10**9)] == ["done", "done", "busy"]
    notes = w.notes_due(10**9)
    assert [n.at_ms for n in notes] == [3100, 5000]
    assert notes[0].text == (f'[lich] Session "{BRANCH}" on branch {BRANCH} finished the task you handed it '
                             "(ticket a1b2c302). Its report:\n\niso")


def test_plain_errand_gets_a_nudge_not_a_report() -> None:
    w = world(opens=[OpenScript(report=ReportScript(100, "r"))])
    lich(w, "open", "--prompt", "task", "--json")
    [note] = w.notes_due(100)
    assert note.text.startswith('[lich] The task you sent "Session 2" has its result ready.')
    assert note.text.endswith(f'\n  "{BIN}" wait')
    assert w.roster(100)[0]["state"] == "done"  # not a subagent: lich does not close it


# --- close ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["session-2-9f81", "Session 2", "9f81"])
def test_close_is_silent(ref: str) -> None:
    w = world(opens=[OpenScript(report=ReportScript(30_000, "never seen"))])
    lich(w, *SHARED)
    assert lich(w, "close", ref, now=5000) == LichRun('Closed "Session 2".\n', "", 0, CALL_MS)
    assert w.roster(5000) == [] and w.notes_due(10**9) == [] and w.next_note_at() is None
    failed(lich(w, "close", ref, now=6000), f'no session named "{ref}"')


def test_close_refusals() -> None:
    w = world(stops={"session-3-9f82": StopScript(1, "it is pinned"),
                     "session-4-9f83": StopScript(1, "lich: already closing\n")})
    lich(w, *SHARED)
    lich(w, *SHARED)
    lich(w, *SHARED)
    failed(lich(w, "close", "nope"), 'no session named "nope"')
    for me in ("planner", "planner-3c4d", "3c4d"):
        failed(lich(w, "close", me), f'"{me}" is this session — closing it would take down the agent asking for it')
    failed(lich(w, "close", "session-2-9f81", env={**ENV, "LICH_SESSION_ID": "9f81"}),
           '"session-2-9f81" is this session — closing it would take down the agent asking for it')
    failed(lich(w, "close", "session-3-9f82"), "it is pinned")
    failed(lich(w, "close", "Session 4"), "already closing")
    failed(lich(w, "close"), "usage: lich close [--project <name-or-path>] [--worktree keep|remove] [--force] "
                             "[--json] <session>")
    assert len(w.roster(0)) == 3


def test_close_isolated_needs_a_worktree_decision() -> None:
    w = world()
    for _ in range(3):
        lich(w, "open", "--worktree", "feat/a")  # three sessions sharing one worktree
    lich(w, *ISOLATED)
    assert lich(w, "close", "9f81").stdout == 'Closed "feat/a".\n'
    assert lich(w, "close", "9f82").exit_code == 0
    failed(lich(w, "close", "9f83"), '"feat/a" is the last session in the worktree /lich/worktrees/feat/a, so '
           'closing it decides that checkout\'s fate: say "keep" to leave it on disk (the session is parked and '
           'can be resumed) or "remove" to delete it')
    failed(lich(w, "close", "--worktree", "burn", "9f83"),
           '"burn" is not something to do with a worktree — "keep" keeps the checkout, "remove" deletes it')
    assert lich(w, "close", "--worktree", "keep", "9f83").stdout.startswith(
        'Closed "feat/a". Its worktree /lich/worktrees/feat/a is still there')
    run = lich(w, "close", "--worktree", "remove", "--json", "9f84")
    assert out(run) == {"id": "9f84", "projectId": "p1", "project": "app", "label": BRANCH,
                        "worktree": f"/lich/worktrees/{BRANCH}", "kept": False, "removed": True}
    assert w.roster(0) == []


def test_name_resolution_order() -> None:
    w = world(opens=[OpenScript(label="9f82"), OpenScript(), OpenScript(label="dup"), OpenScript(label="dup")])
    for _ in range(4):
        lich(w, *SHARED)
    assert [r["label"] for r in w.roster(0)] == ["9f82", "Session 3", "dup", "dup"]
    assert lich(w, "close", "9f82").stdout == 'Closed "Session 3".\n'  # the id beats a label
    assert lich(w, "close", "9f82").stdout == 'Closed "9f82".\n'  # that id is gone: now the label names one
    w2 = world(opens=[OpenScript(), OpenScript(label="session-2-9f81")])
    lich(w2, *SHARED)
    lich(w2, *SHARED)
    assert lich(w2, "close", "session-2-9f81").stdout == 'Closed "session-2-9f81".\n'  # a label beats a name
    assert names(w2, 0) == ["session-2-9f81"]
    failed(lich(w, "close", "dup"), '"dup" names 2 sessions — narrow it with the project')


def test_labels_are_go_quoted_in_prose() -> None:
    w = world(opens=[OpenScript(label='say "hi" \\ now', report=ReportScript(5, "ok"))])
    lich(w, *SHARED)
    assert w.notes_due(5)[0].text.startswith('[lich] Session "say \\"hi\\" \\\\ now" finished')
    assert lich(w, "open", "--prompt", "x").stdout.startswith('Opened session "Session 3"')
    assert lich(w, "close", '"quoted"', now=10).stderr == 'lich: no session named "\\"quoted\\""\n'


# --- control ----------------------------------------------------------------------------------------------


def test_control_abort_keeps_the_card_without_a_note() -> None:
    w = world(opens=[OpenScript(report=ReportScript(20_000, "never"))])
    lich(w, *ISOLATED)
    run = lich(w, "control", "subagent-fix-the-auth-flow-ab12-9f81", "abort", now=1000)
    assert run == LichRun(f'"{BRANCH}" stopped its turn.\n', "", 0, CALL_MS)
    assert w.roster(10**9)[0]["state"] == "done" and w.notes_due(10**9) == []
    failed(lich(w, "control", "9f81", "abort", now=2000), f'"{BRANCH}" has no turn running to stop')


def test_control_abort_of_a_shared_worker_stops_lich_closing_it() -> None:
    w = world(opens=[OpenScript(report=ReportScript(20_000, "x"))])
    lich(w, *SHARED)
    assert lich(w, "control", "Session 2", "abort", now=10).exit_code == 0
    assert w.roster(10**9)[0]["state"] == "done"


def test_control_scripted_answers() -> None:
    w = world(stops={"w2-9f81": StopScript(2), "w3-9f82": StopScript(3), "w4-9f83": StopScript(1, "no mod")},
              opens=[OpenScript(label="w2"), OpenScript(label="w3"), OpenScript(label="w4")])
    for _ in range(3):
        lich(w, *SHARED)
    run = lich(w, "control", "w2", "abort")
    assert run == LichRun('"w2" took the command (abort, id 7c01) and has not confirmed it yet: a prompt or a slash '
                          "command runs only once the session is idle. It still goes through.\n", "", 2, CALL_MS)
    run = lich(w, "control", "--json", "w3", "abort")
    assert run.exit_code == 3 and run.stderr == ""
    assert out(run) == {"id": "9f82", "project": "app", "label": "w3", "action": "abort", "command_id": "7c02",
                        "state": "ended"}
    failed(lich(w, "control", "w4", "abort"), "no mod")
    assert [(r["label"], r["state"]) for r in w.roster(1)] == [("w2", "done"), ("w4", "busy")]
    w = world(stops={"w3-9f81": StopScript(3)}, opens=[OpenScript(label="w3")])
    lich(w, *SHARED)
    assert lich(w, "control", "w3", "abort").stdout == '"w3" ended before confirming the command (abort, id 7c01).\n'


def test_control_other_actions_and_errors() -> None:
    w = world()
    lich(w, *SHARED)
    lich(w, "open", "--kind", "codex")
    usage = "usage: lich control [--project <name-or-path>] [--json] <session> <action> [<value>] [<args>]"
    failed(lich(w, "control", "Session 2"), usage)
    failed(lich(w, "control", "Session 2", "command", "x", "y", "z"), usage)
    failed(lich(w, "control", "Session 2", "dance"), 'unknown action "dance": one of prompt, abort, model, effort, '
                                                    "command")
    failed(lich(w, "control", "planner", "abort"), '"planner" is this session — a session cannot control itself')
    assert lich(w, "control", "Session 3", "abort").stderr.startswith('lich: "Session 3" is not a Claude Code')
    model = lich(w, "control", "Session 2", "model", "haiku")
    assert model.stdout == '"Session 2" uses haiku from its next request on.\n'
    assert lich(w, "control", "Session 2", "model").stdout == '"Session 2" is back on its own model.\n'
    assert lich(w, "control", "Session 2", "effort", "max").exit_code == 0
    assert lich(w, "control", "Session 2", "command", "compact").stdout == '"Session 2" ran /compact.\n'
    body = out(lich(w, "control", "--json", "Session 2", "prompt", "go on"))
    assert body == {"id": "9f81", "project": "app", "label": "Session 2", "action": "prompt", "value": "go on",
                    "command_id": "7c05", "state": "done"}


# --- output discipline, durations, persistence -----------------------------------------------------------------

MENU: list[tuple[str, ...]] = [
    SHARED, ISOLATED, ("open", "--prompt", "p", "--json"), ("sessions", "--json"), ("sessions",),
    ("close", "session-2-9f81"), ("close", "9f82"), ("close", "--worktree", "keep", "9f82"), ("close", "planner"),
    ("control", "9f82", "abort"), ("control", "session-3-9f83", "abort"), ("control", "--json", "9f81", "model"),
    ("help",), ("help", "close"), ("bogus",), ("open", "--subagent"),
]

reports = st.one_of(st.none(), st.builds(ReportScript, st.integers(0, 20_000), st.text(max_size=8), st.booleans()))
open_scripts = st.builds(
    OpenScript,
    delivery=st.sampled_from(["pending", "pending", "answered", "unread", "unanswered", "weird", None]),
    answer=st.text(max_size=5), ms=st.integers(0, 3000), report=reports,
    fail=st.sampled_from([None, None, None, "no terminal"]), handoff_error=st.sampled_from([None, None, "gone"]),
    hang=st.booleans(), label=st.sampled_from([None, None, "x"]),
)
scripts = st.builds(
    LichScript, running=st.booleans(), subagent=st.booleans(), opens=st.lists(open_scripts, max_size=4),
    lists=st.lists(st.builds(ListScript, st.integers(0, 5000), st.integers(0, 9000)), max_size=2),
    stops=st.dictionaries(st.sampled_from(["session-2-9f81", "x-9f82"]),
                          st.builds(StopScript, st.sampled_from([0, 1, 2, 3]), st.text(max_size=3)), max_size=2),
)
steps = st.lists(st.tuples(st.integers(0, len(MENU) - 1), st.integers(0, 4000), st.booleans()), max_size=14)


def play(w: LichWorld, plan: list[tuple[int, int, bool]], reload: bool) -> list[object]:
    seen: list[object] = []
    now = 0
    for index, dt, as_worker in plan:
        now += dt
        if reload:
            w = LichWorld.from_json(json.loads(json.dumps(w.to_json())))
        env = {**ENV, "LICH_SESSION_ID": "9f81"} if as_worker else ENV
        seen += [lich(w, *MENU[index], now=now, env=env), w.notes_due(now), w.roster(now), w.next_note_at()]
    seen.append(w.to_json())
    return seen


@settings(max_examples=150, deadline=None)
@given(scripts, steps)
def test_json_round_trip_preserves_behaviour(script: LichScript, plan: list[tuple[int, int, bool]]) -> None:
    assert play(LichWorld(script), plan, reload=False) == play(LichWorld(script), plan, reload=True)
    assert LichWorld.from_json(LichWorld(script).to_json()).script == script


@settings(max_examples=150, deadline=None)
@given(scripts, steps)
def test_output_discipline(script: LichScript, plan: list[tuple[int, int, bool]]) -> None:
    w = LichWorld(script)
    now = 0
    for index, dt, _ in plan:
        now += dt
        args = MENU[index]
        run = lich(w, *args, now=now)
        if args[0] in ("open", "sessions"):
            continue  # they can carry scripted raw output
        if run.stderr.startswith("lich: unknown command "):
            assert run.stderr.endswith('"\nRun `lich help` for the list.\n') and run.stdout == ""
        elif run.exit_code == 1:
            assert run.stdout == "" and run.stderr.startswith("lich: ") and run.stderr.count("\n") == 1
        else:
            assert run.stderr == "" and run.exit_code in (0, 2, 3)
        assert run.ms == CALL_MS


def test_durations_and_determinism() -> None:
    script = LichScript(opens=(OpenScript(ms=1234, report=ReportScript(10, "r")),))
    a, b = LichWorld(script), LichWorld(script)
    for w in (a, b):
        assert lich(w, *SHARED).ms == 1234
        assert lich(w, "open", "--json").ms == 800
        assert lich(w, "sessions").ms == CALL_MS
    assert a.to_json() == b.to_json() and a.notes_due(50) == b.notes_due(50)
    json.dumps(a.to_json())


# --- the records -----------------------------------------------------------------------------------------------


def test_a_value_is_a_frozen_dataclass() -> None:
    report = ReportScript(5, "done")
    assert report == ReportScript(after_ms=5, text="done", background=False) and report != ReportScript(5, "done", True)
    assert hash(report) == hash(ReportScript(5, "done")) and report != ("ReportScript", 5, "done", False)
    assert repr(report) == "ReportScript(after_ms=5, text='done', background=False)"
    with pytest.raises(AttributeError, match="immutable"):
        report.text = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del report.text
    assert OpenScript().report is None and OpenScript(ms=5).delivery == "pending"


def test_a_record_is_mutable_and_compared_by_identity() -> None:
    fields: dict[str, Any] = {
        "id": "9f81", "label": "L", "name": "l-9f81", "kind": "claude", "project": "app", "path": "/p", "branch": "",
        "folder": "", "subagent": True, "origin_id": "", "origin_label": "", "opened_at": 0, "bin": "lich",
    }
    a, b = LichSession(**fields), LichSession(**fields)
    assert a != b and a in [a] and isinstance(a, Record) and not isinstance(a, Value)
    a.note_sent = True
    assert a.note_sent and not b.note_sent and "note_sent=True" in repr(a)
    assert plain(a) == {**fields, "ticket": "", "status": None, "first_state": "", "answer_at": None, "answer": "",
                        "close_on_answer": False, "closed_at": None, "aborted_at": None, "note_sent": True}


def test_record_constructor_errors_are_type_errors() -> None:
    build: Any = ReportScript
    with pytest.raises(TypeError, match="missing required argument 'text'"):
        build(5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'when'"):
        build(5, "x", when=1)
    with pytest.raises(TypeError, match="multiple values for argument 'after_ms'"):
        build(5, "x", after_ms=6)
    with pytest.raises(TypeError, match="takes 3 arguments but 4 were given"):
        build(5, "x", True, 1)


def test_lich_script_keeps_its_own_copies() -> None:
    opens, stops = [OpenScript()], {"w-9f81": StopScript(1)}
    script = LichScript(opens=opens, stops=stops)
    opens.append(OpenScript(ms=1))
    stops.clear()
    assert script.opens == (OpenScript(),) and dict(script.stops) == {"w-9f81": StopScript(1)}
    assert script == LichScript(opens=(OpenScript(),), stops={"w-9f81": StopScript(1)})
    assert plain(script)["opens"] == [plain(OpenScript())]


# --- names and JSON, written out without regular expressions ------------------------------------------------


@given(st.text(alphabet=st.sampled_from("aZ09-_ ./éİß漢\U0001f642"), max_size=12))
def test_slug_is_the_documented_scheme(label: str) -> None:
    assert slug(label) == (re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "session")


@given(st.text(alphabet=st.sampled_from("a<>&\u2028\u2029é\ud800\udc80\\\"\n"), max_size=8))
def test_json_line_is_gos_encoding(text: str) -> None:
    line = json_line({"k": [text]})
    assert line.endswith("\n") and "\n" not in line[:-1] and not {"<", ">", "&"} & set(line)
    expected = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    assert json.loads(line) == {"k": [expected]}
