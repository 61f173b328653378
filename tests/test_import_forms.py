"""``agent-cards import``, one form of log at a time: small logs built line by line (each kind of answer a
call can get, the session's directory and git, the timing, the lines that cannot be used), each made into
a scenario whose fields are checked whole, and the command's exit statuses and its one-line reports."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_cards.rules import PROMPT_LIMIT_BYTES
from agent_cards.texts import AGENT, PERSON
from agent_cards_simulator.scenario import importer
from agent_cards_simulator.scenario.importer import Imported, import_session, main
from agent_cards_simulator.scenario.writer import Repeat

HOOK_ERROR = "PreToolUse:Agent hook error: "  # how Claude Code begins a PreToolUse hook's deny
USER_REJECTED = "The user doesn't want to proceed"  # how it begins the answer to a call the person refused
START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CWD = "/home/dev/app"
LONG_ABOUT = ("Made by `agent-cards import` from the session log {name}: each call's steps and expectations say "
              "how it was answered then, replayed against today's mod. Name the clauses the report is about and "
              "say here what went wrong.")
CONTEXT = AGENT["context.shared"].format(label="Session 2", path=CWD)
REJECTED = (f"{USER_REJECTED} with this tool use. The tool use was rejected (eg. if it was a file edit, the "
            "new_string was NOT written to the file).")


# -- building a log ---------------------------------------------------------------------------------


def stamp(ms: int) -> str:
    """The log's timestamp ``ms`` after the session's start, as Claude Code writes it (UTC, ``Z``)."""
    return (START + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def line(kind: str, ms: int | None, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"type": kind, "isSidechain": False, "entrypoint": "cli", "cwd": CWD, "gitBranch": "main"}
    if ms is not None:
        made["timestamp"] = stamp(ms)
    return {**made, **fields}


def use(call_id: str, tool: str = "Agent", **tool_input: Any) -> dict[str, Any]:
    """A ``tool_use`` block; an Agent call's description and prompt by default."""
    if tool == "Agent":
        tool_input = {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth.", **tool_input}
    return {"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}


def said(ms: int, *blocks: Any, message: str | None = None, **fields: Any) -> dict[str, Any]:
    """The model's message holding ``blocks`` (one message: one step)."""
    return line("assistant", ms, message={"id": message or f"msg_{ms}", "role": "assistant",
                                          "content": list(blocks)}, **fields)


def agent(call_id: str, ms: int, **tool_input: Any) -> dict[str, Any]:
    return said(ms, use(call_id, **tool_input))


def stop(call_id: str, ms: int, task_id: Any) -> dict[str, Any]:
    return said(ms, use(call_id, "TaskStop", task_id=task_id))


def answered(call_id: str, ms: int, content: Any = "", *, is_error: bool = False, **fields: Any) -> dict[str, Any]:
    """The ``tool_result`` of ``call_id`` (``fields``: the line's own, such as ``toolUseResult``)."""
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
    return line("user", ms, message={"role": "user", "content": [block]}, **fields)


def launched(call_id: str, ms: int, name: str = "session-2-9f81") -> dict[str, Any]:
    """lich's answer to a call it took: async_launched with an empty outputFile."""
    return answered(call_id, ms, "Async agent launched successfully.",
                    toolUseResult={"status": "async_launched", "agentId": name, "outputFile": ""})


def attached(ms: int, **attachment: Any) -> dict[str, Any]:
    return line("attachment", ms, attachment=attachment)


def context(call_id: str, ms: int, *texts: Any, kind: str = "hook_additional_context") -> dict[str, Any]:
    return attached(ms, type=kind, content=list(texts), toolUseID=f"{call_id}-context")


def write(tmp_path: Path, *lines: dict[str, Any] | str, name: str = "s.jsonl") -> Path:
    log = tmp_path / name
    log.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return log


def imported(tmp_path: Path, *lines: dict[str, Any] | str) -> Imported:
    return import_session(write(tmp_path, *lines))


class _Loader(yaml.SafeLoader):
    """YAML with the scenario's ``!repeat`` read as the mapping it holds, tagged."""


_Loader.add_constructor("!repeat", lambda loader, node: {"!repeat": loader.construct_mapping(node)})  # type: ignore[arg-type]


def scenario(made: Imported) -> dict[str, Any]:
    assert made.refusal is None, made.refusal
    loaded: dict[str, Any] = yaml.load(made.yaml, Loader=_Loader)  # a safe loader, one tag added
    return loaded


def made_of(tmp_path: Path, *lines: dict[str, Any] | str) -> dict[str, Any]:
    return scenario(imported(tmp_path, *lines))


def about(name: str = "s.jsonl") -> str:
    return LONG_ABOUT.format(name=name)


NO_OPEN = {"no run": {"argv": {"contains": "open"}}}
SESSION = {"cwd": CWD, "git": "main"}


# -- each kind of answer, the scenario it makes, whole ------------------------------------------------


def test_a_card_lich_opened_scripts_its_open_and_expects_the_whole_answer(tmp_path: Path) -> None:
    made = made_of(tmp_path, attached(0, type="environment", snapshot={"isGitRepo": True}),
                   agent("toolu_1", 100), launched("toolu_1", 1100), context("toolu_1", 1101, CONTEXT))
    assert made == {
        "title": "Imported from s.jsonl: 1 call(s) of the main loop",
        "clauses": ["DELIV-PENDING", "RESULT-CONTEXT"],
        "about": about(),
        "session": SESSION,
        "lich": {"checkout": CWD},
        "steps": [{"wait": 100},
                  {"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                   "id": "toolu_1", "lich": {"name": "session-2-9f81", "ms": 1000, "label": "Session 2"}}],
        "expect": [{"answer": {"call": "toolu_1", "result": {"status": "async_launched", "agentId": "session-2-9f81"},
                               "context": {"contains": CONTEXT}}}],
    }


def _pattern_of(template: str, **slots: str) -> str:
    """The pattern a text of ``template`` is expected by: the syntax escaped, the worktree's path any."""
    for char in ".()[]":
        template = template.replace(char, "\\" + char)
    for name, value in slots.items():
        template = template.replace("{" + name + "}", value)
    return "^" + template.replace("{path}", ".+?") + "$"


ISOLATED = AGENT["context.isolated"].format(label="Session 2.1", branch="subagent/fix-8c34", path="/wt/fix-8c34")


def test_an_isolated_card_expects_its_branch_with_the_worktree_anywhere(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0, isolation="worktree"), launched("toolu_1", 500),
                   context("toolu_1", 501, ISOLATED))
    pattern = _pattern_of(AGENT["context.isolated"], label="Session 2\\.1", branch="subagent/fix-8c34")
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "async_launched", "agentId": "session-2-9f81"}, "context": {"contains": {"matches": pattern}}}}]
    assert made["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT", "BRANCH-SUFFIX"]
    assert made["steps"][0]["lich"] == {"name": "session-2-9f81", "ms": 500, "label": "Session 2.1"}
    assert "lich" not in made  # an isolated card names no checkout of the session's


def test_a_card_whose_context_line_is_not_the_mods_expects_no_context(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 500),
                   context("toolu_1", 501, "Something else.", 7, CONTEXT.replace("same files", "files")))
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "async_launched", "agentId": "session-2-9f81"}}}]
    assert made["clauses"] == ["DELIV-PENDING"]
    assert made["steps"][0]["lich"] == {"name": "session-2-9f81", "ms": 500}
    assert "lich" not in made


def test_the_first_context_line_the_mod_words_is_the_one_read(tmp_path: Path) -> None:
    other = AGENT["context.shared"].format(label="Session 3", path="/elsewhere")
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 500),
                   context("toolu_1", 501, "Not the mod's.", CONTEXT, other))
    assert made["expect"][0]["answer"]["context"] == {"contains": CONTEXT}
    assert made["lich"] == {"checkout": CWD}


def test_a_system_message_is_no_context_line(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 500),
                   context("toolu_1", 501, CONTEXT, kind="hook_system_message"))
    assert made["clauses"] == ["DELIV-PENDING"]


REPORT = AGENT["completed.shared"].format(answer="Fixed the cookie.", label="Session 2", path=CWD)


def completed(call_id: str, ms: int, report: str, name: str = "session-2-9f81", **result: Any) -> dict[str, Any]:
    return answered(call_id, ms, report, toolUseResult={
        "status": "completed", "agentId": name, "content": [{"type": "text", "text": report}], **result})


def test_a_completed_answer_scripts_an_answered_delivery_and_expects_the_report_whole(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), completed("toolu_1", 300, REPORT))
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1", "lich": {"delivery": "answered", "answer": "Fixed the cookie.",
                                                        "label": "Session 2", "name": "session-2-9f81", "ms": 300}}]
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "completed", "agentId": "session-2-9f81", "content": [{"type": "text", "text": REPORT}]}}}]
    assert made["clauses"] == ["DELIV-ANSWERED", "RESULT-COMPLETED"]
    assert made["lich"] == {"checkout": CWD}


def test_an_isolated_completed_answer_expects_its_report_with_the_worktree_anywhere(tmp_path: Path) -> None:
    report = AGENT["completed.isolated"].format(answer="Done (mostly).", label="Session 2",
                                                branch="subagent/fix-8c34", path="/wt/x")
    made = made_of(tmp_path, agent("toolu_1", 0), completed("toolu_1", 300, report))
    pattern = _pattern_of(AGENT["completed.isolated"], answer="Done \\(mostly\\)\\.", label="Session 2",
                          branch="subagent/fix-8c34")
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "completed", "agentId": "session-2-9f81", "content": [{"type": "text", "text": {
            "matches": pattern}}]}}}]
    assert made["steps"][0]["lich"]["answer"] == "Done (mostly)."
    assert "lich" not in made


NATIVE_RESULT = {"status": "async_launched", "agentId": "a1b2c3", "outputFile": "/home/dev/.claude/tasks/a1b2c3.output"}


@pytest.mark.parametrize(("given", "result"), [
    (NATIVE_RESULT, {"status": "async_launched"}),
    ({"status": "completed", "agentId": "a1b2c3", "content": [{"type": "text", "text": "Not the mod's."}]},
     {"status": "completed"}),
    ({"status": "completed", "agentId": "a1b2c3", "outputFile": "", "content": [{"type": "text", "text": REPORT}]},
     {"status": "completed"}),
    ({"status": "async_launched", "agentId": 5, "outputFile": ""}, {"status": "async_launched"}),
    ({"status": 7, "agentId": "a1b2c3"}, {}),
])
def test_a_native_agent_is_expected_native_and_lich_opened_nothing(tmp_path: Path, given: dict[str, Any],
                                                                   result: dict[str, Any]) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 300, "Launched.", toolUseResult=given))
    assert made["expect"] == [{"native": {"call": "toolu_1"}}, {"answer": {"call": "toolu_1", "result": result}},
                              NO_OPEN]
    assert made["clauses"] == ["TAKE-UNTOUCHED"]
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1"}]


def native(tmp_path: Path, *extra: dict[str, Any], **tool_input: Any) -> dict[str, Any]:
    """The scenario of one Agent call Claude Code ran itself, with ``extra`` lines after its answer."""
    return made_of(tmp_path, agent("toolu_1", 0, **tool_input),
                   answered("toolu_1", 300, "Launched.", toolUseResult=NATIVE_RESULT), *extra)


LIMIT = PROMPT_LIMIT_BYTES


@pytest.mark.parametrize(("tool_input", "clause"), [
    ({"subagent_type": "Explore"}, "TAKE-TYPE"),
    ({"subagent_type": "Plan"}, "TAKE-TYPE"),
    ({"subagent_type": "claude-code-guide"}, "TAKE-TYPE"),
    ({"subagent_type": "statusline-setup"}, "TAKE-TYPE"),
    ({"subagent_type": ""}, "TAKE-UNTOUCHED"),
    ({"subagent_type": "general-purpose"}, "TAKE-UNTOUCHED"),
    ({"prompt": "y" * LIMIT}, "TAKE-UNTOUCHED"),
    ({"prompt": "y" * (LIMIT + 1)}, "FALL-OVERSIZE"),
    ({"prompt": "é" * (LIMIT // 2 + 1)}, "FALL-OVERSIZE"),  # counted in UTF-8 bytes, not characters
    ({"prompt": "y" * (LIMIT + 1), "subagent_type": "Explore"}, "FALL-OVERSIZE"),
])
def test_why_a_native_agent_ran_is_its_clause(tmp_path: Path, tool_input: dict[str, Any], clause: str) -> None:
    made = native(tmp_path, **tool_input)
    assert made["clauses"] == [clause]
    assert made["expect"][-1] == NO_OPEN


OPEN_FAILED = PERSON["toast.open_failed"].format(description="Fix the auth flow", reason="lich: no lich is running")


@pytest.mark.parametrize(("reason", "fail"), [
    ("lich: no lich is running", "no lich is running"),
    ("the socket is gone", "the socket is gone"),
    ("lich: ", ""),
])
def test_the_command_hooks_failed_open_toast_scripts_that_failure(tmp_path: Path, reason: str, fail: str) -> None:
    toast = PERSON["toast.open_failed"].format(description="Fix the auth flow", reason=reason)
    made = native(tmp_path, context("toolu_1", 301, toast, kind="hook_system_message"))
    assert made["steps"][0]["lich"] == {"fail": fail}
    assert made["expect"] == [{"native": {"call": "toolu_1"}},
                              {"answer": {"call": "toolu_1", "result": {"status": "async_launched"}}},
                              {"toast": {"text": toast}}, {"run": {"argv": {"contains": "open"}, "exit": 1}}]
    assert made["clauses"] == ["FALL-OPEN-FAILED"]


def test_another_toast_is_expected_and_the_clause_is_still_why_it_ran(tmp_path: Path) -> None:
    oversize = PERSON["toast.oversize"].format(bytes=9000, limit=LIMIT, description="Fix the auth flow")
    made = native(tmp_path, context("toolu_1", 301, "Not a toast.", oversize, OPEN_FAILED,
                                    kind="hook_system_message"), prompt="y" * 9000)
    assert made["expect"][2:] == [{"toast": {"text": oversize}}, {"toast": {"text": OPEN_FAILED}},
                                  {"run": {"argv": {"contains": "open"}, "exit": 1}}]
    assert made["clauses"] == ["FALL-OPEN-FAILED"]
    made = native(tmp_path, context("toolu_1", 301, oversize, kind="hook_system_message"), prompt="y" * 9000)
    assert made["expect"][2:] == [{"toast": {"text": oversize}}, NO_OPEN]
    assert made["clauses"] == ["FALL-OVERSIZE"]
    assert "lich" not in made["steps"][0]


@pytest.mark.parametrize(("limit", "read"), [(len(OPEN_FAILED), True), (len(OPEN_FAILED) - 1, False)])
def test_a_toast_as_long_as_the_reading_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int,
                                                      read: bool) -> None:
    monkeypatch.setattr(importer, "MAX_READ_CHARS", limit)
    made = native(tmp_path, context("toolu_1", 301, OPEN_FAILED, kind="hook_system_message"))
    assert made["clauses"] == (["FALL-OPEN-FAILED"] if read else ["TAKE-UNTOUCHED"])


@pytest.mark.parametrize(("limit", "read"), [(len(CONTEXT), True), (len(CONTEXT) - 1, False)])
def test_a_context_line_as_long_as_the_reading_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             limit: int, read: bool) -> None:
    monkeypatch.setattr(importer, "MAX_READ_CHARS", limit)
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 500), context("toolu_1", 501, CONTEXT))
    assert made["clauses"] == (["DELIV-PENDING", "RESULT-CONTEXT"] if read else ["DELIV-PENDING"])


def test_a_message_of_the_mod_that_is_no_toast_is_not_expected_as_one(tmp_path: Path) -> None:
    message = PERSON["bridge.failed"].format(reason="it stopped")
    made = native(tmp_path, context("toolu_1", 301, message, PERSON["footer.workers.one"], kind="hook_system_message"))
    assert made["expect"][2:] == [NO_OPEN]


def test_a_toast_of_additional_context_is_no_toast(tmp_path: Path) -> None:
    made = native(tmp_path, context("toolu_1", 301, OPEN_FAILED))
    assert made["expect"][2:] == [NO_OPEN]


@pytest.mark.parametrize("text", [OPEN_FAILED + "x" * (1 << 20), CONTEXT + "x" * (1 << 20)])
def test_a_text_over_the_reading_limit_is_not_read_as_the_mods(tmp_path: Path, text: str) -> None:
    made = native(tmp_path, context("toolu_1", 301, text, kind="hook_system_message"))
    assert made["clauses"] == ["TAKE-UNTOUCHED"]
    assert made["expect"][2:] == [NO_OPEN]


def rejected(call_id: str, ms: int, *, before_run: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"toolUseResult": "User rejected tool use", "toolDenialKind": "user-rejected"}
    if before_run:
        fields["toolDenialBeforeRun"] = True
    return answered(call_id, ms, REJECTED, is_error=True, **fields)


@pytest.mark.parametrize(("answered_at", "after", "ms"), [(752, 752, 1752), (200_000, 200_000, 110_000),
                                                          (108_999, 108_999, 109_999), (109_001, 109_001, 110_000)])
def test_an_esc_while_the_call_ran_is_an_esc_step(tmp_path: Path, answered_at: int, after: int, ms: int) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), rejected("toolu_1", answered_at, before_run=False))
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1", "esc_after": after, "lich": {"ms": ms}}]
    assert made["expect"] == [{"esc": None}, {"answer": {"call": "toolu_1", "error": {"startswith": USER_REJECTED}}},
                              {"no native": {"call": "toolu_1"}}]
    assert made["clauses"] == ["FALL-ESC-OPEN"]


@pytest.mark.parametrize("marked", [True, 1, "true"])
def test_a_no_at_the_dialog_is_that_permission_only_when_the_log_says_before_the_run(tmp_path: Path,
                                                                                    marked: Any) -> None:
    line_ = rejected("toolu_1", 500, before_run=False)
    line_["toolDenialBeforeRun"] = marked
    made = made_of(tmp_path, agent("toolu_1", 0), line_)
    if marked is not True:  # only a JSON true says the call never ran
        assert made["clauses"] == ["FALL-ESC-OPEN"]
        return
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1", "permission": {"ask": False}}]
    assert made["expect"] == [{"permission": {"call": "toolu_1", "outcome": "deny", "via": "dialog"}},
                              {"answer": {"call": "toolu_1", "error": {"startswith": USER_REJECTED}}}, NO_OPEN]
    assert made["clauses"] == ["PERM-REFUSED"]


def hook_denied(call_id: str, ms: int, reason: str, wrapped: bool = False) -> dict[str, Any]:
    text = HOOK_ERROR + reason
    return answered(call_id, ms, f"<tool_use_error>{text}</tool_use_error>" if wrapped else text, is_error=True,
                    toolUseResult=f"Error: {text}", toolDenialKind="permission-rule",
                    permissionDecision={"decision": "reject", "source": "hook"})


@pytest.mark.parametrize("wrapped", [False, True])
def test_another_hooks_refusal_is_that_permission(tmp_path: Path, wrapped: bool) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 40, "Agents are off here.", wrapped))
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1", "permission": {"hook-deny": "Agents are off here."}}]
    assert made["expect"] == [{"permission": {"call": "toolu_1", "outcome": "deny", "via": "hook"}},
                              {"answer": {"call": "toolu_1", "error": {"startswith": HOOK_ERROR}}}, NO_OPEN]
    assert made["clauses"] == ["PERM-REFUSED"]


def took(name: str = "session-2-9f81", isolated: bool = False) -> str:
    return AGENT["hook.launched.isolated" if isolated else "hook.launched.shared"].format(name=name)


def test_the_command_hooks_deny_of_a_card_is_read_as_the_modules_answer(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 900, f"{took()} {CONTEXT}"))
    assert made["steps"] == [{"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."},
                              "id": "toolu_1", "lich": {"name": "session-2-9f81", "ms": 900, "label": "Session 2"}}]
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "async_launched", "agentId": "session-2-9f81"}, "context": {"contains": CONTEXT}}}]
    assert made["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT"]
    assert made["lich"] == {"checkout": CWD}


def test_the_command_hooks_deny_of_an_isolated_card_is_read_too(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 900, f"{took('w-1', True)} {ISOLATED}"))
    assert made["steps"][0]["lich"] == {"name": "w-1", "ms": 900, "label": "Session 2.1"}
    assert made["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT", "BRANCH-SUFFIX"]


def test_the_command_hooks_deny_of_an_answered_card_is_read_as_the_modules_answer(tmp_path: Path) -> None:
    reason = AGENT["hook.completed"].format(name="w-1") + "\n\n" + REPORT
    made = made_of(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 900, reason))
    assert made["steps"][0]["lich"] == {"delivery": "answered", "answer": "Fixed the cookie.", "label": "Session 2",
                                        "name": "w-1", "ms": 900}
    assert made["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "completed", "agentId": "w-1", "content": [{"type": "text", "text": REPORT}]}}}]


@pytest.mark.parametrize(("reason", "why"), [
    (took(), "names the worker session-2-9f81 but not where it works (no context line the mod words)"),
    (f"{took()} Its card is open.", "names the worker session-2-9f81 but not where it works (no context line "
                                    "the mod words)"),
    (AGENT["hook.completed"].format(name="w-1") + "\n\nDone.", "says its worker answered, but its report is not the "
                                                               "one the mod words"),
    (took().replace("The worker's agentId is", "Its id:"), "is not one this mod words (a hook of another version?): "
                                                           "it cannot be replayed as the module's"),
    (AGENT["hook.completed"][:24] + " and then some.", "is not one this mod words (a hook of another version?): it "
                                                       "cannot be replayed as the module's"),
])
def test_a_command_hook_answer_that_cannot_be_read_back_is_refused(tmp_path: Path, reason: str, why: str) -> None:
    log = write(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 900, reason))
    made = import_session(log)
    assert (made.yaml, made.problems, made.calls) == ("", [], 1)
    assert made.refusal == f"{log}:1: the command hook's answer to toolu_1 {why}"


def errored(call_id: str, ms: int, text: str, **fields: Any) -> dict[str, Any]:
    return answered(call_id, ms, [{"type": "text", "text": text}], is_error=True, **fields)


@pytest.mark.parametrize(("key", "slots", "clause"), [
    ("deny.never_reached", {"label": "Session 2", "status": "unread"}, "DELIV-NEVER"),
    ("deny.unknown", {"label": "Session 2", "status": "parked (odd)"}, "DELIV-UNKNOWN"),
    ("deny.unknown.isolated", {"label": "Session 2", "branch": "subagent/x", "status": "odd"}, "DELIV-UNKNOWN"),
])
def test_a_deny_the_mod_words_scripts_the_delivery_it_answers(tmp_path: Path, key: str, slots: dict[str, str],
                                                              clause: str) -> None:
    deny = AGENT[key].format(**slots)
    made = made_of(tmp_path, agent("toolu_1", 0), errored("toolu_1", 2500, f"<tool_use_error>{deny}</tool_use_error>"))
    assert made["steps"][0]["lich"] == {"delivery": slots["status"], "label": "Session 2", "ms": 2500}
    assert made["expect"] == [{"answer": {"call": "toolu_1", "deny": deny}}]
    assert made["clauses"] == [clause]


def test_a_bridge_that_stopped_mid_call_is_said_and_nothing_expected(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0),
                errored("toolu_1", 900, AGENT["bridge.unsure"].format(program="lich")))
    made = import_session(log)
    assert made.problems == [f"{log}:1: the answer to toolu_1 says the agent cards bridge stopped while it ran, "
                             "which the fake host does not model: nothing is expected of that call"]
    assert scenario(made)["expect"] == []
    assert scenario(made)["clauses"] == ["FALL-BEFORE-ONLY"]


@pytest.mark.parametrize(("text", "words"), [
    ("<tool_use_error>Agent type 'x' has been denied by permission rule 'Agent(x)'</tool_use_error>", "Agent type"),
    ("No task found with ID: toolu_secret", "No task found with"),
    ("Not found: toolu_secret", "Not found:"),
    ("Stopped, by the user in a hurry", "Stopped,"),
    ("It failed. Then more", "It failed."),
    ("one two three four five six seven eight nine ten", "one two three four five six seven eight"),
    ("sk-ant-0123 leaked", ""),
    ("", ""),
    ("Abcdefghijklmnopqrst long", "Abcdefghijklmnopqrst long"),
    ("Abcdefghijklmnopqrstu long", ""),
    ("Don't do that", "Don't do that"),
])
def test_another_error_is_expected_by_its_first_plain_words(tmp_path: Path, text: str, words: str) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), errored("toolu_1", 900, text))
    assert made["expect"] == [{"answer": {"call": "toolu_1", "error": {"contains": words} if words else
                                          {"absent": False}}}]
    assert made["clauses"] == ["TAKE-UNTOUCHED"]
    assert made["steps"][0] == {"call": {"description": "Fix the auth flow",
                                         "prompt": "Fix the auth flow in src/auth."}, "id": "toolu_1"}


def test_a_refusal_by_a_rule_is_that_permission(tmp_path: Path) -> None:
    text = "Permission to use Agent has been denied."
    made = made_of(tmp_path, agent("toolu_1", 0), errored("toolu_1", 900, text, toolDenialKind="permission-rule",
                                                          permissionDecision={"decision": "reject", "source": "rule"}))
    assert made["steps"][0]["permission"] == "deny"
    assert made["expect"] == [{"permission": {"call": "toolu_1", "outcome": "deny"}},
                              {"answer": {"call": "toolu_1", "error": {"contains": text}}}]
    assert made["clauses"] == ["PERM-REFUSED", "TAKE-UNTOUCHED"]


def test_an_answer_that_is_no_error_and_no_result_expects_the_answer_alone(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 900, "Done.", toolUseResult="Done."))
    assert made["expect"] == [{"answer": {"call": "toolu_1"}}]
    assert made["clauses"] == ["TAKE-UNTOUCHED"]


@pytest.mark.parametrize(("source", "asked"), [("user_temporary", True), ("user_permanent", True), ("hook", False),
                                               ("config", False), (None, False)])
def test_a_yes_at_the_dialog_is_that_permission(tmp_path: Path, source: str | None, asked: bool) -> None:
    decision = {"decision": "accept", "source": source}
    made = made_of(tmp_path, agent("toolu_1", 0), {**launched("toolu_1", 900), "permissionDecision": decision},
                   context("toolu_1", 901, CONTEXT))
    card = {"answer": {"call": "toolu_1", "result": {"status": "async_launched", "agentId": "session-2-9f81"},
                       "context": {"contains": CONTEXT}}}
    if asked:
        assert made["steps"][0]["permission"] == {"ask": True}
        assert made["expect"] == [{"permission": {"call": "toolu_1", "outcome": "allow", "via": "dialog"}}, card]
    else:
        assert "permission" not in made["steps"][0]
        assert made["expect"] == [card]


def test_a_yes_by_the_person_is_not_the_permission_of_a_no(tmp_path: Path) -> None:
    line_ = rejected("toolu_1", 500, before_run=True)
    line_["permissionDecision"] = {"decision": "accept", "source": "user_temporary"}
    made = made_of(tmp_path, agent("toolu_1", 0), line_)
    assert made["steps"][0]["permission"] == {"ask": False}
    assert made["expect"][0] == {"permission": {"call": "toolu_1", "outcome": "deny", "via": "dialog"}}


def test_a_rejection_that_is_no_yes_asks_nothing(tmp_path: Path) -> None:
    line_ = {**launched("toolu_1", 900), "permissionDecision": {"decision": "reject", "source": "user_temporary"}}
    made = made_of(tmp_path, agent("toolu_1", 0), line_)
    assert "permission" not in made["steps"][0]


# -- TaskStop -------------------------------------------------------------------------------------------


def stopped(call_id: str, ms: int, task_id: str, **result: Any) -> dict[str, Any]:
    return answered(call_id, ms, "Stopped.", toolUseResult={"task_id": task_id, **result})


def test_a_taskstop_of_a_card_names_the_call_that_opened_it(tmp_path: Path) -> None:
    message = "Successfully stopped task: session-2-9f81 (Fix the auth flow)"
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 1000), context("toolu_1", 1000, CONTEXT),
                   stop("toolu_2", 3000, "session-2-9f81"),
                   stopped("toolu_2", 3100, "session-2-9f81", message=message, task_type="local_agent"))
    assert made["steps"][-2:] == [{"wait": 2000}, {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}]
    assert made["expect"][-1] == {"answer": {"call": "toolu_2", "result": {"task_id": "session-2-9f81",
                                                                          "message": message}}}
    assert made["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT", "STOP-TAKEN", "STOP-SHARED"]
    assert made["title"] == "Imported from s.jsonl: 2 call(s) of the main loop"


def test_a_taskstop_of_an_isolated_card_says_so(tmp_path: Path) -> None:
    report = AGENT["completed.isolated"].format(answer="Done.", label="S", branch="b", path="/wt/b")
    made = made_of(tmp_path, agent("toolu_1", 0), completed("toolu_1", 1000, report, name="w-1"),
                   stop("toolu_2", 3000, "w-1"), stopped("toolu_2", 3100, "w-1", message=5))
    assert made["steps"][-1] == {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}
    assert made["expect"][-1] == {"answer": {"call": "toolu_2", "result": {"task_id": "w-1"}}}
    assert made["clauses"] == ["DELIV-ANSWERED", "RESULT-COMPLETED", "STOP-TAKEN", "STOP-ISOLATED"]


def test_a_taskstop_names_the_call_whose_worker_it_stops_not_an_earlier_one(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 100, "w-1"),
                   agent("toolu_2", 200, prompt="Another task."), launched("toolu_2", 300, "w-2"),
                   stop("toolu_3", 400, "w-2"), stopped("toolu_3", 500, "w-2"))
    assert made["steps"][-1] == {"taskstop": {"worker": "toolu_2"}, "id": "toolu_3"}


def test_a_taskstop_in_the_message_of_its_call_names_it(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), use("toolu_2", "TaskStop", task_id="w-1")),
                   launched("toolu_1", 100, "w-1"), stopped("toolu_2", 200, "w-1"))
    assert made["steps"] == [{"parallel": [
        {"call": {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth."}, "id": "toolu_1",
         "lich": {"name": "w-1", "ms": 100}},
        {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}]}]
    assert made["clauses"] == ["DELIV-PENDING", "STOP-TAKEN", "STOP-SHARED"]


def test_a_taskstop_made_before_the_call_of_its_worker_names_no_call(tmp_path: Path) -> None:
    made = made_of(tmp_path, stop("toolu_0", 0, "w-1"), stopped("toolu_0", 50, "w-1"),
                   agent("toolu_1", 100), launched("toolu_1", 200, "w-1"))
    assert made["steps"][0] == {"taskstop": "w-1", "id": "toolu_0"}
    assert made["clauses"] == ["STOP-OTHER", "DELIV-PENDING"]


def test_a_taskstop_of_a_native_agent_names_its_call_and_is_another_stop(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 300, "Launched.", toolUseResult=NATIVE_RESULT),
                   stop("toolu_2", 400, "a1b2c3"), errored("toolu_2", 500, "Task a1b2c3 is not running."))
    assert made["steps"][-1] == {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}
    assert made["expect"][-1] == {"answer": {"call": "toolu_2", "error": {"contains": "Task"}}}
    assert made["clauses"] == ["TAKE-UNTOUCHED", "STOP-OTHER"]


@pytest.mark.parametrize(("answer", "expected"), [
    (errored("toolu_2", 500, "No task found with ID: w-9"), {"error": {"contains": "No task found with"}}),
    (errored("toolu_2", 500, "<tool_use_error>toolu</tool_use_error>"), {"error": {"contains": "toolu"}}),
    (errored("toolu_2", 500, "w-9?"), {"error": {"absent": False}}),
    (answered("toolu_2", 500, "Stopped.", toolUseResult={"task_id": 9}), {}),
    (answered("toolu_2", 500, "Stopped.", toolUseResult="Stopped."), {}),
    (answered("toolu_2", 500, "Stopped.", is_error=True, toolUseResult={"task_id": "w-9"}), {"error": {
        "contains": "Stopped."}}),
])
def test_a_taskstop_of_no_worker_expects_its_answer(tmp_path: Path, answer: dict[str, Any],
                                                    expected: dict[str, Any]) -> None:
    made = made_of(tmp_path, stop("toolu_2", 0, "w-9"), answer)
    assert made["steps"] == [{"taskstop": "w-9", "id": "toolu_2"}]
    assert made["expect"] == [{"answer": {"call": "toolu_2", **expected}}]
    assert made["clauses"] == ["STOP-OTHER"]


def test_a_taskstop_with_no_answer_is_said_and_expects_nothing(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0), launched("toolu_1", 100, "w-1"), stop("toolu_2", 200, "w-1"))
    made = import_session(log)
    assert made.problems == [f"{log}:3: the call toolu_2 (TaskStop) has no answer in the log"]
    assert scenario(made)["steps"][-1] == {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}
    assert scenario(made)["expect"] == [{"answer": {"call": "toolu_1", "result": {
        "status": "async_launched", "agentId": "w-1"}}}]
    assert scenario(made)["clauses"] == ["DELIV-PENDING", "STOP-TAKEN", "STOP-SHARED"]


@pytest.mark.parametrize("tool_input", [{"task_id": "w-1", "reason": "x"}, {"task_id": 5}, {"shell_id": "w-1"}])
def test_a_taskstop_of_another_shape_is_a_call_step_of_its_tool(tmp_path: Path, tool_input: dict[str, Any]) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 100, "w-1"),
                   said(200, use("toolu_2", "TaskStop", **tool_input)), answered("toolu_2", 300, "Stopped."))
    assert made["steps"][-1] == {"call": tool_input, "id": "toolu_2", "tool": "TaskStop"}


def test_an_agent_call_with_no_answer_is_said_and_is_a_bare_step(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0))
    made = import_session(log)
    assert made.problems == [f"{log}:1: the call toolu_1 (Agent) has no answer in the log"]
    assert made.calls == 1
    assert scenario(made)["steps"] == [{"call": {"description": "Fix the auth flow",
                                                 "prompt": "Fix the auth flow in src/auth."}, "id": "toolu_1"}]
    assert scenario(made)["expect"] == []
    assert scenario(made)["clauses"] == ["TAKE-UNTOUCHED"]


# -- reading the file, bounded ----------------------------------------------------------------------


def refused(log: Path) -> str:
    with pytest.raises(importer.LogError) as raised:
        import_session(log)
    return str(raised.value)


def lowest_free_fd() -> int:
    """The descriptor the next open gets (the lowest free one): a descriptor left open shows as a higher one."""
    probe: int = os.open(os.devnull, os.O_RDONLY)
    os.close(probe)
    return probe


def test_a_missing_file_is_one_line_with_the_systems_reason(tmp_path: Path) -> None:
    assert refused(tmp_path / "missing.jsonl") == f"{tmp_path / 'missing.jsonl'}:1: cannot read the file: No such " \
                                                  "file or directory"


def test_a_log_over_the_size_limit_is_refused_whole_by_its_size(tmp_path: Path) -> None:
    log = tmp_path / "huge.jsonl"
    with log.open("wb") as file:
        file.truncate(1 << 30)  # sparse: no byte of it is written or read
    assert refused(log) == f"{log}:1: the log is 1073741824 bytes, over the limit of 268435456"


def test_a_log_of_exactly_the_size_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = write(tmp_path, agent("toolu_1", 0), answered("toolu_1", 100, "Done.", toolUseResult="Done."))
    monkeypatch.setattr(importer, "MAX_LOG_BYTES", log.stat().st_size)
    assert import_session(log).calls == 1
    monkeypatch.setattr(importer, "MAX_LOG_BYTES", log.stat().st_size - 1)
    assert refused(log) == f"{log}:1: the log is {log.stat().st_size} bytes, over the limit of " \
                           f"{log.stat().st_size - 1}"


def grown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, appended: bytes) -> list[Any]:
    """The lines read from a log of one short line that grows by ``appended`` once that line is read."""
    log = tmp_path / "growing.jsonl"
    log.write_bytes(b"{}\n")
    monkeypatch.setattr(importer, "MAX_LOG_BYTES", limit)
    lines = importer._lines(log)
    read: list[Any] = [next(lines)]
    with log.open("ab") as file:
        file.write(appended)
    try:
        for item in lines:
            read.append(item)
    except importer.LogError as error:
        read.append(str(error))
    return read


def test_a_log_that_grows_past_the_limit_while_read_is_refused_at_that_line(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "growing.jsonl"
    assert grown(tmp_path, monkeypatch, 6, b"{}\n") == [(1, b"{}\n"), (2, b"{}\n")]
    assert grown(tmp_path, monkeypatch, 6, b"{}\n{}\n") == [(1, b"{}\n"), (2, b"{}\n"),
                                                            f"{log}:3: the log grew past the limit of 6 bytes"]


def test_a_log_that_grows_past_the_limit_inside_a_long_line_is_refused(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every byte of a line over the limit counts, the last piece of its rest (its newline) too."""
    monkeypatch.setattr(importer, "MAX_LINE_BYTES", 10)
    log = tmp_path / "growing.jsonl"
    long = b"x" * (3 << 19) + b"\n"  # a line of one and a half reads of its rest
    assert grown(tmp_path, monkeypatch, 3 + len(long), long) == [(1, b"{}\n"), (2, None)]
    assert grown(tmp_path, monkeypatch, 3 + len(long) - 1, long) == [
        (1, b"{}\n"), f"{log}:2: the log grew past the limit of {3 + len(long) - 1} bytes"]
    assert grown(tmp_path, monkeypatch, 3 + len(long), long + b"{}\n") == [
        (1, b"{}\n"), (2, None), f"{log}:3: the log grew past the limit of {3 + len(long)} bytes"]


def test_a_read_that_fails_is_one_line_naming_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = write(tmp_path, agent("toolu_1", 0), agent("toolu_2", 10))
    opened = os.fdopen

    class Failing:
        def __init__(self, fd: int) -> None:
            self.handle: Any = opened(fd, "rb", closefd=False)
            self.read = 0

        def readline(self, size: int) -> bytes:
            self.read += 1
            if self.read == 2:
                raise OSError(5, "Input/output error")
            line_: bytes = self.handle.readline(size)
            return line_

    monkeypatch.setattr(os, "fdopen", lambda fd, mode, closefd: Failing(fd))
    free = lowest_free_fd()
    assert refused(log) == f"{log}:2: cannot read the file: Input/output error"
    assert lowest_free_fd() == free


def test_the_log_is_closed_once_read(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0), answered("toolu_1", 100, "Done.", toolUseResult="Done."))
    free = lowest_free_fd()
    import_session(log)
    assert lowest_free_fd() == free
    refused(tmp_path)
    assert lowest_free_fd() == free


def test_a_line_over_the_limit_is_skipped_by_its_number_and_the_next_is_read(tmp_path: Path) -> None:
    log = tmp_path / "long.jsonl"
    with log.open("wb") as file:
        file.write(json.dumps(agent("toolu_1", 0)).encode() + b"\n")
        file.write(b"[" + b" " * (16 << 20) + b"]\n")
        file.write(json.dumps(answered("toolu_1", 100, "Done.", toolUseResult="Done.")).encode() + b"\n")
    made = import_session(log)
    assert made.problems == [f"{log}:2: a line over 16777216 bytes; skipped"]
    assert scenario(made)["expect"] == [{"answer": {"call": "toolu_1"}}]


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    size = 400
    monkeypatch.setattr(importer, "MAX_LINE_BYTES", size)

    def padded(value: dict[str, Any], length: int) -> bytes:
        return json.dumps(value).encode().ljust(length)  # JSON may end in spaces

    log = tmp_path / "exact.jsonl"
    log.write_bytes(padded(agent("toolu_1", 0), size) + b"\n" + padded(launched("toolu_1", 100), size + 1) + b"\n"
                    + padded(agent("toolu_2", 200, prompt="Another task."), size))  # the last line has no newline
    made = import_session(log)
    assert made.problems == [f"{log}:2: a line over {size} bytes; skipped",
                             f"{log}:1: the call toolu_1 (Agent) has no answer in the log",
                             f"{log}:3: the call toolu_2 (Agent) has no answer in the log"]
    assert made.calls == 2


# -- timing: the log's pauses as waits, calls of one message at once ------------------------------------


def steps_of(made: dict[str, Any]) -> list[Any]:
    """The steps, each call by its id and its open's ms, a wait by its length."""
    def brief(step: dict[str, Any]) -> Any:
        if "wait" in step:
            return step["wait"]
        if "parallel" in step:
            return [brief(s) for s in step["parallel"]] + [step[k] for k in step if k != "parallel"]
        return (step["id"], step.get("lich", {}).get("ms"))
    return [brief(s) for s in made["steps"]]


def test_calls_of_one_message_are_one_step_raised_when_its_first_line_was(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), message="msg_a"),
                   said(50, use("toolu_2", prompt="Another task."), message="msg_a"),
                   launched("toolu_1", 1000, "w-1"), launched("toolu_2", 1200, "w-2"),
                   said(1500, use("toolu_3", prompt="A third task."), message="msg_b"),
                   launched("toolu_3", 1500, "w-3"))
    assert steps_of(made) == [[("toolu_1", 1000), ("toolu_2", 1200)], 300, ("toolu_3", 0)]
    assert made["clauses"] == ["DELIV-PENDING", "BG-PARALLEL"]


@pytest.mark.parametrize("uuids", [("u1", "u1"), ("u1", "u2")])
def test_a_message_without_an_id_is_told_by_its_lines_uuid(tmp_path: Path, uuids: tuple[str, str]) -> None:
    first, second = said(0, use("toolu_1")), said(0, use("toolu_2", prompt="Another task."))
    for made_line, uuid in zip((first, second), uuids, strict=True):
        made_line["message"]["id"] = None
        made_line["uuid"] = uuid
    made = made_of(tmp_path, first, second, launched("toolu_1", 10, "w-1"), launched("toolu_2", 20, "w-2"))
    together = uuids[0] == uuids[1]
    assert steps_of(made) == ([[("toolu_1", 10), ("toolu_2", 20)]] if together else
                              [("toolu_1", 10), ("toolu_2", 20)])
    assert made["clauses"] == (["DELIV-PENDING", "BG-PARALLEL"] if together else ["DELIV-PENDING"])


def test_two_cards_of_one_message_are_bg_parallel(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), use("toolu_2", prompt="Another task.")),
                   launched("toolu_1", 100, "w-1"), launched("toolu_2", 200, "w-2"))
    assert made["clauses"] == ["DELIV-PENDING", "BG-PARALLEL"]


def test_an_unanswered_call_of_a_parallel_step_is_in_it_and_taken_by_none(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), use("toolu_2", prompt="Another task."),
                                  use("toolu_3", prompt="A third task.")),
                   launched("toolu_1", 100, "w-1"), launched("toolu_3", 200, "w-3"))
    assert steps_of(made) == [[("toolu_1", 100), ("toolu_2", None), ("toolu_3", 200)]]
    assert made["clauses"] == ["DELIV-PENDING", "BG-PARALLEL"]


def test_parallel_calls_of_which_one_is_taken_are_no_bg_parallel(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), use("toolu_2", prompt="Another task.")),
                   launched("toolu_1", 100, "w-1"), answered("toolu_2", 200, "Done.", toolUseResult="Done."),
                   agent("toolu_3", 300, prompt="A third task."), launched("toolu_3", 400, "w-3"))
    assert made["clauses"] == ["DELIV-PENDING", "TAKE-UNTOUCHED"]


def test_an_esc_in_a_parallel_step_is_the_steps_first_esc(tmp_path: Path) -> None:
    made = made_of(tmp_path, said(0, use("toolu_1"), use("toolu_2", prompt="Another task."),
                                  use("toolu_3", prompt="A third task.")),
                   rejected("toolu_2", 900, before_run=False), rejected("toolu_3", 700, before_run=False),
                   launched("toolu_1", 950, "w-1"))
    [step] = made["steps"]
    assert step["esc_after"] == 700
    assert [("esc_after" in s) for s in step["parallel"]] == [False, False, False]


def test_a_pause_is_a_wait_from_the_last_answer_of_the_step_before(tmp_path: Path) -> None:
    made = made_of(tmp_path, attached(1000, type="environment", snapshot={"isGitRepo": True}),
                   agent("toolu_1", 1000), launched("toolu_1", 1100, "w-1"),
                   agent("toolu_2", 1150, prompt="Another task."), launched("toolu_2", 1160, "w-2"),
                   agent("toolu_3", 1160, prompt="A third task."), launched("toolu_3", 1170, "w-3"),
                   agent("toolu_4", 1171, prompt="A fourth task."))
    assert steps_of(made) == [("toolu_1", 100), 50, ("toolu_2", 10), ("toolu_3", 10), 1, ("toolu_4", None)]
    assert made["about"] == about()


def test_a_pause_over_ten_minutes_is_cut_to_ten_and_said(tmp_path: Path) -> None:
    made = made_of(tmp_path, attached(0, type="environment", snapshot={}), agent("toolu_1", 600_001),
                   answered("toolu_1", 600_002, "Done.", toolUseResult="Done."),
                   agent("toolu_2", 1_200_002, prompt="Another task."))
    assert steps_of(made) == [600_000, ("toolu_1", None), 600_000, ("toolu_2", None)]
    assert made["about"] == about() + " Pauses longer than 10 minutes in the log are cut to that."


def test_a_pause_of_exactly_ten_minutes_is_not_cut(tmp_path: Path) -> None:
    made = made_of(tmp_path, attached(0, type="environment", snapshot={}), agent("toolu_1", 600_000))
    assert steps_of(made) == [600_000, ("toolu_1", None)]
    assert made["about"] == about()


def test_the_waits_of_a_replay_stop_at_twenty_hours(tmp_path: Path) -> None:
    lines = [attached(0, type="environment", snapshot={})]
    for n in range(122):  # a call every ten minutes, no longer than a pause is kept
        lines.append(agent(f"toolu_{n}", (n + 1) * 600_000, prompt=f"Task {n}."))
    made = made_of(tmp_path, *lines)
    waits = [s for s in steps_of(made) if isinstance(s, int)]
    assert waits == [600_000] * 120
    assert len(made["steps"]) == 120 + 122
    assert made["about"].endswith(" Pauses longer than 10 minutes in the log are cut to that.")


def test_an_answer_logged_at_the_calls_own_time_took_no_time(tmp_path: Path) -> None:
    made = made_of(tmp_path, line("user", 0), agent("toolu_1", 500), launched("toolu_1", 500),
                   launched("toolu_1", 900))
    assert steps_of(made) == [500, ("toolu_1", 0)]


def test_an_answer_logged_before_its_call_took_no_time(tmp_path: Path) -> None:
    made = made_of(tmp_path, line("user", 0), agent("toolu_1", 500), launched("toolu_1", 400))
    assert steps_of(made) == [500, ("toolu_1", 0)]


def test_a_line_without_a_usable_timestamp_is_at_the_start(tmp_path: Path) -> None:
    first = agent("toolu_1", None)  # type: ignore[arg-type]
    made = made_of(tmp_path, first, launched("toolu_1", 100),
                   {**said(0, use("toolu_2", prompt="B."), message="m2"), "timestamp": 5},
                   {**launched("toolu_2", 0), "timestamp": "yesterday"},
                   {**said(0, use("toolu_3", prompt="C."), message="m3"), "timestamp": "99999-01-01T00:00:00Z"},
                   launched("toolu_3", 300))
    assert steps_of(made) == [("toolu_1", 0), ("toolu_2", 0), ("toolu_3", 200)]  # the clock starts at 100


def test_the_clock_starts_at_the_first_line_that_has_a_time(tmp_path: Path) -> None:
    made = made_of(tmp_path, line("user", None, message={"content": "hi"}), line("user", 1000),
                   agent("toolu_1", 1200), launched("toolu_1", 1300), agent("toolu_2", 800, prompt="Before."),
                   launched("toolu_2", 1300, "w-2"))
    assert steps_of(made) == [("toolu_2", 300), ("toolu_1", 100)]  # toolu_2 logged before the start: at it


def test_a_time_in_another_zone_is_the_same_instant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        made = made_of(tmp_path, agent("toolu_1", 0),
                       {**launched("toolu_1", 0), "timestamp": "2026-12-01T21:00:01+09:00"})
    finally:
        monkeypatch.undo()
        time.tzset()
    assert steps_of(made) == [("toolu_1", 1000)]


# -- the session: its directory, git, whether it was interactive, the mod's language --------------------


def session_of(tmp_path: Path, *lines: dict[str, Any]) -> dict[str, Any] | None:
    made = made_of(tmp_path, *lines, agent("toolu_1", 10), launched("toolu_1", 20), context("toolu_1", 20, CONTEXT))
    found: dict[str, Any] | None = made.get("session")
    return found


def environment(repo: Any) -> dict[str, Any]:
    return attached(0, type="environment", snapshot={"isGitRepo": repo})


@pytest.mark.parametrize(("branch", "repo", "git"), [
    ("main", True, "main"), ("HEAD", True, "detached"), ("HEAD", None, "detached"), ("main", False, {"exit": 128}),
    ("detached", True, {"branch": "detached"}), ("missing", True, {"branch": "missing"}), ("", True, None),
    (7, True, None),
])
def test_git_as_claude_code_saw_it(tmp_path: Path, branch: Any, repo: bool | None, git: Any) -> None:
    lines = [environment(repo)] if repo is not None else []
    lines.append({**line("user", 5), "gitBranch": branch})
    expected = {"cwd": CWD, **({"git": git} if git is not None else {})}
    assert session_of(tmp_path, *lines) == expected


def test_the_first_answer_of_the_logs_lines_is_the_sessions(tmp_path: Path) -> None:
    first = {**line("user", 5), "cwd": "/first", "gitBranch": "one", "entrypoint": "sdk-cli"}
    assert session_of(tmp_path, environment(False), environment(True), first) == {
        "interactive": False, "cwd": "/first", "git": {"exit": 128}}


def test_a_line_without_a_directory_does_not_say_the_session(tmp_path: Path) -> None:
    bare = line("user", 5)
    del bare["cwd"]
    bare["gitBranch"] = "never"
    bare["entrypoint"] = "sdk-cli"
    assert session_of(tmp_path, bare, environment("yes")) == SESSION


def test_an_environment_without_a_snapshot_says_nothing_of_git(tmp_path: Path) -> None:
    assert session_of(tmp_path, attached(0, type="environment", snapshot="none"), attached(1, type="environment"),
                      attached(2, type="other", snapshot={"isGitRepo": False}), environment(False)) == {
        "cwd": CWD, "git": {"exit": 128}}
    assert session_of(tmp_path, attached(0, type="other", snapshot={"isGitRepo": False})) == SESSION


def test_a_session_with_no_directory_or_git_has_no_session(tmp_path: Path) -> None:
    lines = [agent("toolu_1", 10), answered("toolu_1", 20, "Done.", toolUseResult="Done.")]
    for made_line in lines:
        del made_line["cwd"]
    assert "session" not in made_of(tmp_path, *lines)
    lines[0]["cwd"] = ""  # a directory, if an empty one: the line's git is read, the directory not written
    assert made_of(tmp_path, *lines)["session"] == {"git": "main"}


def test_the_mods_language_is_read_from_its_text_and_english_is_said_by_none(tmp_path: Path) -> None:
    from agent_cards.languages import TRANSLATIONS

    texts = {lang: TRANSLATIONS[lang]["context.shared"].format(label="S", path=CWD) for lang in ("ru", "es")}
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10, "w-1"), context("toolu_1", 10, texts["ru"]),
                   agent("toolu_2", 20, prompt="B."), launched("toolu_2", 30, "w-2"),
                   context("toolu_2", 30, texts["es"]), agent("toolu_3", 40, prompt="C."),
                   launched("toolu_3", 50, "w-3"), context("toolu_3", 50, CONTEXT))
    assert made["session"] == {**SESSION, "lang": "es"}  # two languages: the first by name
    assert made["lich"] == {"checkout": CWD}
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10, "w-1"), context("toolu_1", 10, CONTEXT))
    assert made["session"] == SESSION


# -- lines that cannot be used: one FILE:LINE: why each, the rest read ------------------------------------


def problems_of(tmp_path: Path, *lines: dict[str, Any] | str) -> tuple[list[str], list[str]]:
    """What was said of the log (its path written as ``LOG``) and the ids of the calls the scenario holds."""
    log = write(tmp_path, *lines)
    made = import_session(log)
    said_ = [p.replace(str(log), "LOG") for p in made.problems]
    steps = scenario(made)["steps"] if made.calls else []
    ids = [s["id"] for step in steps for s in step.get("parallel", [step]) if "id" in s]
    return said_, ids


def done(call_id: str, ms: int) -> dict[str, Any]:
    """An answer that is neither an error nor a result the importer reads."""
    return answered(call_id, ms, "Done.", toolUseResult="Done.")


def test_lines_that_are_not_json_objects_are_said_by_their_number(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b'{"type": "user"}\n\n   \n{not json\n[1, 2]\n"text"\n{"a": "\xff\xfe"}\n'
                    + json.dumps(agent("toolu_1", 0)).encode() + b"\n")
    assert import_session(log).problems == [
        f"{log}:4: not a JSON line (Expecting property name enclosed in double quotes); skipped",
        f"{log}:5: not a JSON object; skipped",
        f"{log}:6: not a JSON object; skipped",
        f"{log}:7: not UTF-8 text (byte 0xff at column 8); skipped",
        f"{log}:8: the call toolu_1 (Agent) has no answer in the log"]


@pytest.mark.parametrize(("call_id", "why"), [
    (None, "a Agent call without a usable tool_use id; skipped"),
    ("", "a Agent call without a usable tool_use id; skipped"),
    (7, "a Agent call without a usable tool_use id; skipped"),
    ("toolu_\ud800", "a Agent call without a usable tool_use id; skipped"),
])
def test_a_call_without_a_usable_id_is_skipped(tmp_path: Path, call_id: Any, why: str) -> None:
    block = use("toolu_x")
    block["id"] = call_id
    assert problems_of(tmp_path, said(0, block), agent("toolu_2", 10, prompt="B."), done("toolu_2", 20)) \
        == ([f"LOG:1: {why}"], ["toolu_2"])


@pytest.mark.parametrize(("tool", "tool_input", "why"), [
    ("Agent", ["not", "a", "mapping"], "the Agent call toolu_1 has no input mapping; skipped"),
    ("TaskStop", "w-1", "the TaskStop call toolu_1 has no input mapping; skipped"),
    ("Agent", {"description": "d"}, "the Agent call toolu_1 has no description or prompt; skipped"),
    ("Agent", {"prompt": "p"}, "the Agent call toolu_1 has no description or prompt; skipped"),
    ("Agent", {"description": "d", "prompt": 5}, "the Agent call toolu_1 has no description or prompt; skipped"),
    ("Agent", {"description": "d", "prompt": "p", "isolation": "local"},
     'the Agent call toolu_1 asks for isolation "local", which Claude Code does not take (worktree or remote); '
     "skipped"),
    ("Agent", {"description": "d", "prompt": "p", "isolation": "x" * 50},
     'the Agent call toolu_1 asks for isolation "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, which Claude Code does '
     "not take (worktree or remote); skipped"),
    ("Agent", {"description": "d", "prompt": "p", "isolation": None},
     "the Agent call toolu_1 asks for isolation null, which Claude Code does not take (worktree or remote); skipped"),
    ("Agent", {"description": "d", "prompt": "p", "isolation": False},
     "the Agent call toolu_1 asks for isolation false, which Claude Code does not take (worktree or remote); skipped"),
])
def test_a_call_whose_input_claude_code_would_refuse_is_skipped(tmp_path: Path, tool: str, tool_input: Any,
                                                                why: str) -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": tool, "input": tool_input}
    assert problems_of(tmp_path, said(0, block), agent("toolu_2", 10, prompt="B."), done("toolu_2", 20)) \
        == ([f"LOG:1: {why}"], ["toolu_2"])


@pytest.mark.parametrize("isolation", ["worktree", "remote"])
def test_an_isolation_claude_code_takes_is_taken(tmp_path: Path, isolation: str | None) -> None:
    assert problems_of(tmp_path, agent("toolu_1", 0, isolation=isolation), done("toolu_1", 20)) == (
        [], ["toolu_1"])


def nested(depth: int) -> Any:
    """A value ``depth`` deep: lists around a text, inside the input's own mapping (one level more)."""
    value: Any = "x"
    for _ in range(depth - 2):
        value = [value]
    return value


@pytest.mark.parametrize(("tool_input", "why"), [
    ({"n": nested(24)}, None),
    ({"n": nested(25)}, "nested 25 deep with 30 values"),
    ({"n": {"k": {"k": nested(23)}}}, "nested 25 deep with 32 values"),
    ({"n": ["v"] * (20_000 - 6)}, "nested 3 deep with 20001 values"),
])
def test_an_input_past_what_a_scenario_holds_is_skipped(tmp_path: Path, tool_input: dict[str, Any],
                                                        why: str | None) -> None:
    said_, ids = problems_of(tmp_path, agent("toolu_1", 0, **tool_input), done("toolu_1", 20),
                             agent("toolu_2", 30, prompt="B."), done("toolu_2", 40))
    if why is None:
        assert (said_, ids) == ([], ["toolu_1", "toolu_2"])
    else:
        assert (said_, ids) == ([f"LOG:1: the Agent call toolu_1 has an input {why}, over what a scenario holds "
                                 "(24 deep, 20000 values); skipped"], ["toolu_2"])


@pytest.mark.parametrize(("values", "taken"), [(50, True), (51, False)])
def test_an_input_of_as_many_values_as_a_scenario_holds_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 values: int, taken: bool) -> None:
    monkeypatch.setattr(importer, "MAX_INPUT_VALUES", 50)
    _, ids = problems_of(tmp_path, agent("toolu_1", 0, n=["v"] * (values - 7)), done("toolu_1", 20))
    assert ids == (["toolu_1"] if taken else [])


def test_a_taskstop_input_past_what_a_scenario_holds_is_skipped_too(tmp_path: Path) -> None:
    assert problems_of(tmp_path, said(0, use("toolu_1", "TaskStop", task_id=nested(25))),
                       agent("toolu_2", 30), done("toolu_2", 40)) == (
        ["LOG:1: the TaskStop call toolu_1 has an input nested 25 deep with 26 values, over what a scenario holds "
         "(24 deep, 20000 values); skipped"], ["toolu_2"])


def test_a_call_id_given_twice_is_skipped_the_second_time(tmp_path: Path) -> None:
    assert problems_of(tmp_path, agent("toolu_1", 0), said(5, use("toolu_1", "TaskStop", task_id="w")),
                       done("toolu_1", 20)) == (["LOG:2: the call id toolu_1 is given twice; skipped"],
                                                            ["toolu_1"])


@pytest.mark.parametrize("tool_input", [{"prompt": "Fix \ud800 it."}, {"meta": {"k\udc00": "v"}},
                                        {"meta": ["a", "\udfff"]}])
def test_a_lone_surrogate_in_an_input_is_written_as_a_replacement(tmp_path: Path, tool_input: dict[str, Any]) -> None:
    log = tmp_path / "s.jsonl"
    log.write_text(json.dumps(agent("toolu_1", 0, **tool_input)) + "\n" + json.dumps(done("toolu_1", 10))
                   + "\n", encoding="utf-8")
    made = import_session(log)
    assert made.problems == [f"{log}:1: the Agent call toolu_1 holds a lone surrogate, written as U+FFFD"]
    assert "\ufffd" in made.yaml and "\\ud" not in made.yaml.lower()


def test_an_input_of_every_json_kind_without_a_surrogate_is_taken_as_it_is(tmp_path: Path) -> None:
    tool_input = {"n": 1, "f": 1.5, "t": True, "z": None, "l": [1, "a", {"k": False}], "m": {"é": "ü"}}
    made = imported(tmp_path, agent("toolu_1", 0, **tool_input), done("toolu_1", 10))
    assert made.problems == []
    assert scenario(made)["steps"][0]["call"] == {"description": "Fix the auth flow",
                                                  "prompt": "Fix the auth flow in src/auth.", **tool_input}


def test_what_is_not_a_call_of_the_main_loop_is_skipped_silently(tmp_path: Path) -> None:
    sidechain = {**agent("toolu_s", 0), "isSidechain": True}
    by_user = line("user", 1, message={"content": [use("toolu_u")]})
    other_kind = line("system", 2, message={"content": [use("toolu_y")]})
    other_tool = said(3, use("toolu_b", "Bash", command="ls"))
    not_blocks = [said(4, "text"), line("assistant", 4, message={"content": "text"}),
                  line("assistant", 4, message="text"), line("assistant", 4)]
    result_by_model = said(5, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "no", "is_error": True})
    lines = (sidechain, by_user, other_kind, other_tool, *not_blocks, agent("toolu_1", 6), result_by_model,
             {**errored("toolu_1", 7, "no"), "isSidechain": True}, {**errored("toolu_1", 8, "no"), "type": "system"},
             done("toolu_1", 9))
    assert problems_of(tmp_path, *lines) == ([], ["toolu_1"])
    assert made_of(tmp_path, *lines)["expect"] == [{"answer": {"call": "toolu_1"}}]  # the main loop's own answer


def test_the_first_answer_of_a_call_is_the_one_read(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), done("toolu_9", 5), launched("toolu_1", 10),
                   rejected("toolu_1", 20, before_run=True))
    assert made["clauses"] == ["DELIV-PENDING"]


def test_an_attachment_that_is_no_mapping_or_names_no_call_is_skipped(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10), line("attachment", 11, attachment="x"),
                   attached(12, type="hook_additional_context", content=[CONTEXT]),
                   attached(12, type="hook_additional_context", content=[CONTEXT], toolUseID="toolu_9-context"),
                   attached(13, type="hook_additional_context", content=CONTEXT, toolUseID="toolu_1"))
    assert made["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT"]  # the last one, by the call's own id
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10),
                   attached(13, type="hook_additional_context", content={"t": CONTEXT}, toolUseID="toolu_1"))
    assert made["clauses"] == ["DELIV-PENDING"]


# -- the scenario checked before it is written ----------------------------------------------------------


def test_a_scenario_the_replay_would_not_read_is_refused_in_one_line(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10, "w-1"),
                agent("toolu_2", 20), launched("toolu_2", 30, "w-2"))
    made = import_session(log)
    assert (made.yaml, made.calls) == ("", 2)
    assert made.refusal == (f"{log}:1: the scenario made from this log is not one the replay reads (steps: two calls "
                            "with the prompt 'Fix the auth flow in src/auth.' are scripted differently; lich tells "
                            "opens apart by their prompt, so give them different prompts)")


def test_a_scenario_of_exactly_a_scenarios_size_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (agent("toolu_1", 0, prompt="é"), done("toolu_1", 10))
    size = len(imported(tmp_path, *lines).yaml.encode("utf-8"))  # counted in bytes: the é is two
    monkeypatch.setattr(importer, "SCENARIO_BYTES", size)
    assert imported(tmp_path, *lines).refusal is None
    monkeypatch.setattr(importer, "SCENARIO_BYTES", size - 1)
    assert imported(tmp_path, *lines).refusal == (f"{tmp_path / 's.jsonl'}:1: the scenario made from this log would "
                                                  f"be {size} bytes, over a scenario's limit of {size - 1}: cut the "
                                                  "log to the calls the report is about")


@pytest.mark.parametrize(("length", "piece"), [
    (4096 * 3, "abc"), (4097, "y"), (4096 * 2 + 2, "ab"), (64 * 70, "".join(chr(48 + n) for n in range(64))),
])
def test_a_long_text_of_one_repeated_piece_is_written_as_a_repeat(tmp_path: Path, length: int, piece: str) -> None:
    text = piece * (length // len(piece))
    made = made_of(tmp_path, agent("toolu_1", 0, prompt=text, meta={"notes": [text]}), done("toolu_1", 10))
    repeat = {"!repeat": {"text": piece, "times": len(text) // len(piece)}}
    assert made["steps"][0]["call"] == {"description": "Fix the auth flow", "prompt": repeat,
                                        "meta": {"notes": [repeat]}}


@pytest.mark.parametrize("text", ["y" * 4096, "ab" * 2048 + "a", "x" * 64 + "y" + "x" * 5000,
                                  "0123456789abcdef" * 4 + "0" + "0123456789abcdef" * 300,
                                  ("0123456789abcdef" * 4 + "!") * 70])
def test_a_text_that_is_short_or_of_no_short_repeated_piece_is_written_as_it_is(tmp_path: Path, text: str) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0, prompt=text), done("toolu_1", 10))
    assert made["steps"][0]["call"]["prompt"] == text


def test_a_repeat_is_of_the_shortest_piece(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0, prompt="ab" * 4096), done("toolu_1", 10))
    assert made["steps"][0]["call"]["prompt"] == {"!repeat": {"text": "ab", "times": 4096}}


def test_a_text_of_over_a_million_pieces_is_written_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "SCENARIO_BYTES", 4 << 20)  # room to write it as it is, not the reader's
    text = "y" * 1_000_001
    assert importer._compact(text) == text
    assert importer._compact("y" * 1_000_000) == Repeat("y", 1_000_000)
    assert importer._compact("yz" * 1_000_000) == Repeat("yz", 1_000_000)


def test_an_expectation_two_calls_share_is_written_once(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 300, "x", toolUseResult=NATIVE_RESULT),
                   agent("toolu_2", 400, prompt="B."), answered("toolu_2", 500, "x", toolUseResult=NATIVE_RESULT))
    assert made["expect"] == [{"native": {"call": "toolu_1"}},
                              {"answer": {"call": "toolu_1", "result": {"status": "async_launched"}}}, NO_OPEN,
                              {"native": {"call": "toolu_2"}},
                              {"answer": {"call": "toolu_2", "result": {"status": "async_launched"}}}]
    assert made["clauses"] == ["TAKE-UNTOUCHED"]


def test_the_sessions_printout_scripts_lichs_first_read(tmp_path: Path) -> None:
    lines = (agent("toolu_1", 0), done("toolu_1", 10))
    made = scenario(import_session(write(tmp_path, *lines), sessions="[]\n"))
    assert made["lich"] == {"lists": [{"read": 1, "stdout": "[]\n", "exit": 0}]}
    made = scenario(import_session(write(tmp_path, agent("toolu_1", 0), launched("toolu_1", 10),
                                         context("toolu_1", 10, CONTEXT)), sessions="[]\n"))
    assert made["lich"] == {"checkout": CWD, "lists": [{"read": 1, "stdout": "[]\n", "exit": 0}]}
    assert "lich" not in made_of(tmp_path, *lines)


def test_the_records_defaults() -> None:
    made = Imported("text")
    assert (made.yaml, made.problems, made.calls, made.refusal) == ("text", [], 0, None)


# -- the command -------------------------------------------------------------------------------------------


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err.splitlines()


def words(text: str) -> str:
    return " ".join(text.split())


def test_the_help_says_what_each_option_is(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["--help"], capsys)
    assert (status, err) == (0, [])
    assert out.startswith("usage: agent-cards import [-h] [--sessions FILE] [-o FILE [--force]] [--] SESSION.jsonl\n")
    for said_ in (importer.IMPORT_DESCRIPTION, importer.IMPORT_EXIT, "SESSION.jsonl the session log",
                  "--sessions FILE what `lich sessions --json` printed: lich's first sessions read answers with it",
                  "-o FILE write the scenario to FILE, which must not exist yet (default, or -: print it)",
                  "--force with -o: overwrite FILE if it exists"):
        assert words(said_) in words(out)
    assert "exit status:\n  0  the scenario was written" in out
    assert "Write a scenario from a Claude Code session log" in out


@pytest.mark.parametrize(("args", "why"), [
    (["--bogus"], "unrecognized arguments: --bogus"),
    ([], "name one session log"),
    (["a.jsonl", "b.jsonl"], "name one session log"),
    (["-"], "a session log and --sessions are read as files: - (standard input) is not one"),
    (["a.jsonl", "--sessions", "-"], "a session log and --sessions are read as files: - (standard input) is not one"),
])
def test_a_wrong_command_line_is_one_line(capsys: pytest.CaptureFixture[str], args: list[str], why: str) -> None:
    assert run(args, capsys) == (2, "", [f"agent-cards import: {why} (agent-cards import --help)"])


def test_the_scenario_is_printed_or_written_and_skipped_lines_said(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = write(tmp_path, agent("toolu_1", 0), "[]", done("toolu_1", 10))
    text = import_session(log).yaml
    assert run([str(log)], capsys) == (0, text, [f"{log}:2: not a JSON object; skipped"])
    assert run([str(log), "-o", "-"], capsys) == (0, text, [f"{log}:2: not a JSON object; skipped"])
    out = tmp_path / "out.yaml"
    assert run([str(log), "-o", str(out)], capsys) == (0, "", [f"{log}:2: not a JSON object; skipped"])
    assert out.read_text(encoding="utf-8") == text
    assert run([str(log), "-o", str(out)], capsys) == (2, "", [f"agent-cards import: {out} exists: give --force to "
                                                               "overwrite it"])
    out.write_text("old", encoding="utf-8")
    assert run([str(log), "-o", str(out), "--force"], capsys)[0] == 0
    assert out.read_text(encoding="utf-8") == text


def test_a_log_without_a_call_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write(tmp_path, line("user", 0, message={"content": "hi"}), "[]")
    assert run([str(log)], capsys) == (1, "", [f"{log}:2: not a JSON object; skipped",
                                               f"{log}:1: no Agent or TaskStop call of the main loop in this log"])


def test_a_log_that_cannot_be_made_a_scenario_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write(tmp_path, "[]", agent("toolu_1", 0), hook_denied("toolu_1", 10, took()))
    assert run([str(log), "-o", str(tmp_path / "out.yaml")], capsys) == (2, "", [
        f"{log}:1: not a JSON object; skipped",
        f"{log}:2: the command hook's answer to toolu_1 names the worker session-2-9f81 but not where it works (no "
        "context line the mod words)"])
    assert not (tmp_path / "out.yaml").exists()


def test_a_log_that_cannot_be_read_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(tmp_path)], capsys) == (2, "", [f"{tmp_path}:1: cannot read the file: it is a folder"])


def test_a_log_nested_past_every_bound_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def too_deep(path: Path, sessions: str | None = None) -> Imported:
        raise RecursionError

    monkeypatch.setattr(importer, "import_session", too_deep)
    assert run(["deep.jsonl"], capsys) == (2, "", ["deep.jsonl:1: the log is nested too deep to read"])


def test_the_sessions_file_is_read_whole_and_scripts_the_first_read(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log = write(tmp_path, agent("toolu_1", 0), done("toolu_1", 10))
    sessions = tmp_path / "sessions.json"
    sessions.write_text('[{"name": "w-1"}]\n', encoding="utf-8")
    status, out, err = run([str(log), "--sessions", str(sessions)], capsys)
    assert (status, err) == (0, [])
    assert out == import_session(log, '[{"name": "w-1"}]\n').yaml


@pytest.mark.parametrize(("size", "refusal"), [(1 << 19, None), ((1 << 19) + 1, "the file is 524289 bytes, over the "
                                                                                 "limit of 524288")])
def test_a_sessions_file_is_at_most_half_a_scenario(tmp_path: Path, size: int, refusal: str | None) -> None:
    sessions = tmp_path / "sessions.json"
    sessions.write_bytes(b" " * size)
    if refusal is None:
        assert importer.read_sessions(str(sessions)) == " " * size
    else:
        with pytest.raises(importer.LogError) as raised:
            importer.read_sessions(str(sessions))
        assert str(raised.value) == f"{sessions}:1: {refusal}"


# -- the mod's texts, read back as narrowly as lich's values allow -----------------------------------------


@pytest.mark.parametrize("text", [
    CONTEXT + " And more.",
    AGENT["context.shared"].format(label='Session "2"', path=CWD),
    AGENT["context.shared"].format(label="Session\n2", path=CWD),
    AGENT["context.shared"].format(label="Session 2", path="/home/dev\n/app"),
    AGENT["context.isolated"].format(label="Session 2", branch="sub agent/x", path="/wt"),
])
def test_a_context_line_the_mod_could_not_have_written_is_not_read_as_its_own(tmp_path: Path, text: str) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), launched("toolu_1", 500), context("toolu_1", 501, text))
    assert made["clauses"] == ["DELIV-PENDING"]


@pytest.mark.parametrize("name", ["w 1", "w-1 w-2"])
def test_a_worker_name_with_a_space_is_not_the_command_hooks(tmp_path: Path, name: str) -> None:
    made = imported(tmp_path, agent("toolu_1", 0), hook_denied("toolu_1", 900, f"{took(name)} {CONTEXT}"))
    assert made.refusal is not None and made.refusal.endswith("is not one this mod words (a hook of another "
                                                              "version?): it cannot be replayed as the module's")


def test_a_deny_whose_status_spans_lines_is_not_the_mods(tmp_path: Path) -> None:
    deny = AGENT["deny.never_reached"].format(label="Session 2", status="un\nread")
    made = made_of(tmp_path, agent("toolu_1", 0), errored("toolu_1", 900, deny))
    assert made["clauses"] == ["TAKE-UNTOUCHED"]
    assert made["expect"] == [{"answer": {"call": "toolu_1", "error": {"contains": "lich opened the card"}}}]


@pytest.mark.parametrize(("content", "words"), [
    ([{"type": "text", "text": "No task"}, "skipped", {"type": "image"}, {"type": "text", "text": "found here"}],
     "No task found here"),
    (None, ""), ({"text": "Not a list"}, ""),
])
def test_an_errors_text_is_its_text_blocks_one_a_line(tmp_path: Path, content: Any, words: str) -> None:
    made = made_of(tmp_path, stop("toolu_1", 0, "w-9"), answered("toolu_1", 10, content, is_error=True))
    assert made["expect"] == [{"answer": {"call": "toolu_1", "error": {"contains": words} if words else
                                          {"absent": False}}}]


def test_a_completed_result_without_content_is_a_native_agents(tmp_path: Path) -> None:
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 10, "Done.", toolUseResult={
        "status": "completed", "agentId": "w-1"}))
    assert made["expect"][0] == {"native": {"call": "toolu_1"}}


def test_the_logs_descriptor_is_closed_by_the_reader_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = os.fdopen
    asked: list[Any] = []

    def fdopen(fd: int, mode: str, closefd: bool = True) -> Any:
        asked.append((mode, closefd))
        return opened(fd, mode, closefd=closefd)

    monkeypatch.setattr(os, "fdopen", fdopen)
    free = lowest_free_fd()
    import_session(write(tmp_path, agent("toolu_1", 0), done("toolu_1", 10)))
    assert lowest_free_fd() == free
    assert asked == [("rb", False)]  # the handle leaves the descriptor to the reader's own close, which closes it once


def test_the_scenario_is_written_120_columns_wide(tmp_path: Path) -> None:
    log = write(tmp_path, agent("toolu_1", 0), done("toolu_1", 10), name="sssss.jsonl")
    assert import_session(log).yaml.splitlines()[2:4] == [
        "about: 'Made by `agent-cards import` from the session log sssss.jsonl: each call''s steps and expectations "
        "say how it was",
        "  answered then, replayed against today''s mod. Name the clauses the report is about and say here what went "
        "wrong.'"]


@pytest.mark.parametrize(("depth", "read"), [(24, True), (25, False)])
def test_a_result_nested_as_deep_as_a_scenario_holds_is_read(tmp_path: Path, depth: int, read: bool) -> None:
    result = {"status": "async_launched", "agentId": "w-1", "outputFile": "", "deep": nested(depth)}
    made = made_of(tmp_path, agent("toolu_1", 0), answered("toolu_1", 10, "Launched.", toolUseResult=result))
    assert made["clauses"] == (["DELIV-PENDING"] if read else ["TAKE-UNTOUCHED"])


def test_a_log_named_after_the_double_dash_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["--", "-o"], capsys) == (2, "", ["-o:1: cannot read the file: No such file or directory"])
