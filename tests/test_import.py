"""``agent-cards import``: session logs the real Claude Code wrote, made into scenarios that replay.

The fixtures under ``tests/fixtures/sessions/`` are logs the pinned Claude Code wrote in the e2e tier
(``tests/e2e/test_import_e2e.py`` makes fresh ones each run), trimmed by ``trim.py`` there to what the
importer reads, with machine paths replaced by virtual ones. ``print-agent-taskstop.jsonl`` is a whole
``-p`` log with no mod; the others are interactive sessions with the module loaded and the fake lich.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_cards.texts import AGENT, PERSON
from agent_cards_simulator.scenario.importer import HOOK_ERROR, Imported, import_session, main
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import Replay, replay

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
LOG = SESSIONS / "print-agent-taskstop.jsonl"


def _replayed(text: str, tmp_path: Path) -> Replay:
    file = tmp_path / "imported.yaml"
    file.write_text(text, encoding="utf-8")
    return replay(read(file))


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SESSIONS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def _doctored(tmp_path: Path, name: str, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    lines = _lines(name)
    change(lines)
    log = tmp_path / f"{name}-doctored.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return log


def _answered(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(line for line in lines if "toolUseResult" in line)


def _expect(imported: Imported) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    scenario = yaml.safe_load(imported.yaml.replace("!repeat", ""))
    return scenario, scenario.get("expect", [])


def _steps(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for step in scenario["steps"]:
        out += step.get("parallel", [step])
    return [s for s in out if "wait" not in s]


# -- the kinds of log the real CLI writes, each imported and replayed ------------------------------


def test_a_taken_call_scripts_its_card_and_expects_the_whole_answer(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "take.jsonl")
    assert imported.problems == [] and imported.refusal is None
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    assert scenario["clauses"] == ["DELIV-PENDING", "RESULT-CONTEXT"]
    [answer] = [e["answer"] for e in expect]
    assert answer["result"] == {"status": "async_launched", "agentId": "session-2-9f81"}
    assert answer["context"]["contains"] == AGENT["context.shared"].format(label="Session 2", path="/home/dev/app")
    [step] = _steps(scenario)
    assert step["lich"]["name"] == "session-2-9f81" and step["lich"]["label"] == "Session 2"
    assert scenario["lich"]["checkout"] == "/home/dev/app" and scenario["session"]["git"] == "main"


def test_an_isolated_call_expects_its_branch_whatever_lich_calls_the_worktree(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "isolated.jsonl")
    assert _replayed(imported.yaml, tmp_path).failures == []
    scenario, expect = _expect(imported)
    pattern = expect[0]["answer"]["context"]["contains"]["matches"]
    assert 'on branch subagent/refactor-the-parser-8c34 in its own worktree \\(.+?\\)' in pattern
    assert "BRANCH-SUFFIX" in scenario["clauses"]


def test_parallel_calls_are_one_step_answered_in_the_logs_order(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "parallel.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, _ = _expect(imported)
    [group] = [s["parallel"] for s in scenario["steps"] if "parallel" in s]
    assert [c["lich"]["name"] for c in group] == ["session-2-9f81", "session-3-9f82"]
    answers = [e["result"]["agentId"] for e in result.events if e["kind"] == "answer"]
    assert answers == ["session-2-9f81", "session-3-9f82"]  # the order the log answered them in
    assert "BG-PARALLEL" in scenario["clauses"]


def test_an_oversize_call_is_expected_native_with_no_card(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "oversize.jsonl")
    assert _replayed(imported.yaml, tmp_path).failures == []
    scenario, expect = _expect(imported)
    assert scenario["clauses"] == ["FALL-OVERSIZE"]
    assert {"no run": {"argv": {"contains": "open"}}} in expect
    assert any("native" in e for e in expect)
    assert "!repeat {text: y, times: 9000}" in imported.yaml


def test_a_taskstop_names_the_call_that_opened_its_worker(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "taskstop.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    [call, stop] = _steps(scenario)
    assert stop["taskstop"] == {"worker": call["id"]}
    stopped = {"task_id": "session-2-9f81", "message": "Successfully stopped task: session-2-9f81 (Fix the auth flow)"}
    assert expect[-1]["answer"]["result"] == stopped
    assert scenario["clauses"][-2:] == ["STOP-TAKEN", "STOP-SHARED"]
    assert any(e["kind"] == "run" and e["argv"][1:] == ["close", "session-2-9f81"] for e in result.events)


def test_a_taskstop_of_a_native_agent_names_its_call(tmp_path: Path) -> None:
    def stop_it(lines: list[dict[str, Any]]) -> None:
        native = _answered(lines)["toolUseResult"]["agentId"]
        stop = {"type": "assistant", "timestamp": "2026-12-01T12:50:58.000Z", "cwd": "/home/dev/app",
                "message": {"id": "msg_stop", "content": [{"type": "tool_use", "id": "toolu_stop", "name": "TaskStop",
                                                           "input": {"task_id": native}}]}}
        lines.append(stop)

    imported = import_session(_doctored(tmp_path, "oversize", stop_it))
    scenario, _ = _expect(imported)
    assert _steps(scenario)[-1]["taskstop"] == {"worker": _steps(scenario)[0]["id"]}
    assert scenario["clauses"][-1] == "STOP-OTHER"
    events = _replayed(imported.yaml, tmp_path).events
    stopped = [e for e in events if e["kind"] == "native" and e["tool"] == "TaskStop"]
    spawned = [e for e in events if e["kind"] == "spawn"]
    assert stopped[0]["input"] == {"task_id": spawned[0]["answer"]["agentId"]}  # the replay's own native agent


def test_esc_is_an_esc_step_not_a_taken_worker(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "esc.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    [step] = _steps(scenario)
    assert step["esc_after"] == 752 and step["lich"]["ms"] > 752  # lich was still opening when Esc came
    assert scenario["clauses"] == ["FALL-ESC-OPEN"]
    assert not any("result" in e.get("answer", {}) for e in expect)
    assert [e["kind"] for e in result.events].count("esc") == 1


def test_no_at_the_dialog_is_that_permission(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "dialog-no.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    assert _steps(scenario)[0]["permission"] == {"ask": False}
    assert scenario["clauses"] == ["PERM-REFUSED"]
    assert {"permission": {"call": _steps(scenario)[0]["id"], "outcome": "deny", "via": "dialog"}} in expect


def test_a_command_hook_log_is_read_as_the_modules_answer(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "hook-take.jsonl")
    assert imported.refusal is None
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    _, expect = _expect(imported)
    [answer] = [e["answer"] for e in expect]
    assert answer["result"] == {"status": "async_launched", "agentId": "session-2-9f81"}
    assert "hook error" not in imported.yaml


def test_a_yes_at_the_dialog_is_that_permission(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "dialog-yes.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    [step] = _steps(scenario)
    assert step["permission"] == {"ask": True}
    assert expect[0] == {"permission": {"call": step["id"], "outcome": "allow", "via": "dialog"}}


def test_the_command_hooks_toast_scripts_the_failed_open(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "hook-open-failed.jsonl")
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    scenario, expect = _expect(imported)
    assert _steps(scenario)[0]["lich"] == {"fail": "no lich is running"}
    assert {"toast": {"text": PERSON["toast.open_failed"].format(
        description="Fix the auth flow", reason="lich: no lich is running")}} in expect
    assert scenario["clauses"] == ["FALL-OPEN-FAILED"]


def test_the_command_hooks_completed_answer_is_the_modules(tmp_path: Path) -> None:
    report = AGENT["completed.shared"].format(answer="Fixed.", label="Session 2", path="/home/dev/app")

    def completed(lines: list[dict[str, Any]]) -> None:
        block = _answered(lines)["message"]["content"][0]
        block["content"] = HOOK_ERROR + AGENT["hook.completed"].format(name="session-2-9f81") + "\n\n" + report

    imported = import_session(_doctored(tmp_path, "hook-take", completed))
    assert imported.refusal is None
    _, expect = _expect(imported)
    assert expect[0]["answer"]["result"]["status"] == "completed"
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_a_deny_the_mod_words_scripts_its_delivery(tmp_path: Path) -> None:
    imported = import_session(SESSIONS / "never-reached.jsonl")
    assert _replayed(imported.yaml, tmp_path).failures == []
    scenario, expect = _expect(imported)
    assert _steps(scenario)[0]["lich"]["delivery"] == "unread"
    assert expect == [{"answer": {"call": _steps(scenario)[0]["id"], "deny": AGENT["deny.never_reached"].format(
        label="Session 2", status="unread")}}]
    assert scenario["clauses"] == ["DELIV-NEVER"]


def test_another_hooks_refusal_is_that_permission(tmp_path: Path) -> None:
    def other_hook(lines: list[dict[str, Any]]) -> None:
        _answered(lines)["message"]["content"][0]["content"] = HOOK_ERROR + "Agents are off in this repository."

    imported = import_session(_doctored(tmp_path, "hook-take", other_hook))
    scenario, expect = _expect(imported)
    assert _steps(scenario)[0]["permission"] == {"hook-deny": "Agents are off in this repository."}
    assert {"permission": {"call": _steps(scenario)[0]["id"], "outcome": "deny", "via": "hook"}} in expect
    assert scenario["clauses"] == ["PERM-REFUSED"]
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_a_bridge_that_stopped_mid_call_is_said(tmp_path: Path) -> None:
    def unsure(lines: list[dict[str, Any]]) -> None:
        block = _answered(lines)["message"]["content"][0]
        block["content"] = "<tool_use_error>" + AGENT["bridge.unsure"].format(program="lich") + "</tool_use_error>"

    imported = import_session(_doctored(tmp_path, "never-reached", unsure))
    assert imported.problems[-1].endswith("which the fake host does not model: nothing is expected of that call")
    assert _expect(imported)[1] == []


def test_a_command_hook_answer_it_cannot_read_back_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reworded(lines: list[dict[str, Any]]) -> None:
        block = _answered(lines)["message"]["content"][0]
        block["content"] = block["content"].replace("The worker's agentId is", "Its id:")

    log = _doctored(tmp_path, "hook-take", reworded)
    assert main([str(log)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{log}:") and "command hook's answer" in err[0]


def test_a_completed_answer_scripts_an_answered_delivery(tmp_path: Path) -> None:
    report = AGENT["completed.shared"].format(answer="Fixed the cookie.", label="Session 2", path="/home/dev/app")

    def completed(lines: list[dict[str, Any]]) -> None:
        line = _answered(lines)
        line["toolUseResult"] = {"status": "completed", "agentId": "session-2-9f81",
                                 "content": [{"type": "text", "text": report}], "totalDurationMs": 900}
        lines[:] = [x for x in lines if x.get("attachment", {}).get("type") != "hook_additional_context"]

    imported = import_session(_doctored(tmp_path, "take", completed))
    scenario, expect = _expect(imported)
    assert _steps(scenario)[0]["lich"]["delivery"] == "answered"
    assert _steps(scenario)[0]["lich"]["answer"] == "Fixed the cookie."
    assert expect[0]["answer"]["result"]["content"] == [{"type": "text", "text": report}]
    assert scenario["clauses"] == ["DELIV-ANSWERED", "RESULT-COMPLETED"]
    assert _replayed(imported.yaml, tmp_path).failures == []


@pytest.mark.parametrize(("branch", "repo", "git"), [("HEAD", False, {"exit": 128}), ("HEAD", True, "detached"),
                                                     ("feature/x", True, "feature/x")])
def test_git_as_the_log_saw_it(tmp_path: Path, branch: str, repo: bool, git: object) -> None:
    def state(lines: list[dict[str, Any]]) -> None:
        for line in lines:
            line["gitBranch"] = branch
            if line.get("attachment", {}).get("type") == "environment":
                line["attachment"]["snapshot"]["isGitRepo"] = repo

    imported = import_session(_doctored(tmp_path, "take", state))
    scenario, _ = _expect(imported)
    assert scenario["session"]["git"] == git
    assert _replayed(imported.yaml, tmp_path).failures == []


# -- a log in which the mod behaved otherwise makes a scenario that fails, naming the difference -------


def test_a_log_of_another_behaviour_fails_on_what_differs(tmp_path: Path) -> None:
    def explore(lines: list[dict[str, Any]]) -> None:  # as if a mod had taken an Explore call
        lines[1]["message"]["content"][0]["input"]["subagent_type"] = "Explore"

    result = _replayed(import_session(_doctored(tmp_path, "take", explore)).yaml, tmp_path)
    assert not result.passed
    assert any('"agentId": "session-2-9f81"' in f for f in result.failures), result.failures

    def small(lines: list[dict[str, Any]]) -> None:  # as if a mod had left a small task native
        lines[1]["message"]["content"][0]["input"]["prompt"] = "Summarise the logs."

    result = _replayed(import_session(_doctored(tmp_path, "oversize", small)).yaml, tmp_path)
    assert not result.passed
    assert any("native event" in f for f in result.failures) and any("no run" in f or "expected no" in f
                                                                     for f in result.failures), result.failures

    def other_label(lines: list[dict[str, Any]]) -> None:  # as if a mod had worded its context otherwise
        for line in lines:
            if line.get("attachment", {}).get("type") == "hook_additional_context":
                text = line["attachment"]["content"][0]
                line["attachment"]["content"] = [text.replace("editing the same files you are", "as you do")]

    doctored = import_session(_doctored(tmp_path, "take", other_label))
    assert "context" not in _expect(doctored)[1][0]["answer"]  # not the mod's wording: not expected as its own


# -- the print log, and what never leaves a log ---------------------------------------------------------


def test_a_print_log_becomes_a_scenario_that_replays_and_holds(tmp_path: Path) -> None:
    imported = import_session(LOG)
    assert imported.problems == []
    assert imported.calls == 2
    result = _replayed(imported.yaml, tmp_path)
    assert result.failures == []
    calls = [(e["call"], e["tool"], e["input"]) for e in result.events if e["kind"] == "call"]
    assert calls == [
        ("toolu_fake_5c9d99afd11345ce85a5", "Agent", {
            "description": "Fix the login bug", "prompt": "Reply with the single word hello.",
            "subagent_type": "general-purpose"}),
        ("toolu_fake_d3b52358c695401d9a50", "TaskStop", {"task_id": "no-such-task"}),
    ]
    assert [e["t"] for e in result.events if e["kind"] == "call"] == [109, 165]  # the log's own gaps
    scenario = read(tmp_path / "imported.yaml")
    assert scenario.session.cwd == "/home/dev/app"
    assert scenario.session.interactive is False  # a -p session logs as sdk-cli


def test_only_what_the_scenario_needs_leaves_the_log(tmp_path: Path) -> None:
    log = tmp_path / "secret.jsonl"
    lines = LOG.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[2])
    first["env"] = {"ANTHROPIC_API_KEY": "sk-ant-secret", "LICH_TOKEN": "tok-secret"}
    first["message"]["content"] = "my password is hunter2"
    lines[2] = json.dumps(first)
    stop_answer = next(i for i, line in enumerate(lines) if "No task found" in line)
    lines[stop_answer] = lines[stop_answer].replace("No task found with ID: no-such-task",
                                                    "No task found with ID: no-such-task (key sk-ant-leaked)")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = import_session(log)
    for secret in ("sk-ant-secret", "tok-secret", "hunter2", "requestId", "req_fake", "E2E-TRIGGER", "sk-ant-leaked"):
        assert secret not in imported.yaml
    assert "error: {contains: No task found with}" in imported.yaml


def test_a_line_it_cannot_use_is_reported_by_its_line_and_skipped(tmp_path: Path) -> None:
    lines = LOG.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[19])  # the Agent call
    broken["message"]["content"][0]["input"] = {"description": "no prompt"}
    lines[19] = json.dumps(broken)
    lines.insert(3, "{not json")
    log = tmp_path / "broken.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = import_session(log)
    reason = "Expecting property name enclosed in double quotes"
    assert imported.problems[0] == f"{log}:4: not a JSON line ({reason}); skipped"
    assert imported.problems[1].startswith(f"{log}:21: the Agent call toolu_fake_5c9d99afd11345ce85a5 has no ")
    assert imported.calls == 1
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_the_sessions_printout_scripts_the_first_read(tmp_path: Path) -> None:
    text = import_session(LOG, sessions='[{"name": "session-2-9f81", "state": "busy"}]\n').yaml
    file = tmp_path / "s.yaml"
    file.write_text(text, encoding="utf-8")
    (window,) = read(file).lich.lists
    assert (window.read, window.exit, window.stdout) == (1, 0, '[{"name": "session-2-9f81", "state": "busy"}]\n')


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.yaml"
    assert main([str(LOG), "-o", str(out)]) == 0
    assert "toolu_fake_d3b52358c695401d9a50" in out.read_text(encoding="utf-8")
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl:1: cannot read the file" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"type": "user", "message": {"content": "hi"}}\n', encoding="utf-8")
    assert main([str(empty)]) == 1
    assert main(["--bogus"]) == 2
    assert main(["--help"]) == 0


# -- hostile logs: one FILE:LINE line, or a scenario its own replay accepts -------------------------------


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_fifo_or_a_device_is_refused_before_a_byte_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    assert main([str(fifo)]) == 2
    refused = "cannot read the file: it is not a regular file (a pipe, a device or a socket)"
    assert _one_line(capsys) == f"{fifo}:1: {refused}"
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    assert main([str(zero)]) == 2
    assert _one_line(capsys).startswith(f"{zero}:1: cannot read the file: it is not a regular file")
    assert main([str(tmp_path)]) == 2
    assert _one_line(capsys).endswith("it is a folder")


def test_deep_lines_and_deep_inputs_are_skipped_by_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def deep(lines: list[dict[str, Any]]) -> None:
        nested: Any = "x"
        for _ in range(800):
            nested = {"k": nested}
        extra = json.loads(json.dumps(lines[1]))
        extra["message"]["id"] = "msg_deep"
        extra["message"]["content"][0].update(id="toolu_deep", input={"description": "d", "prompt": "p", "n": nested})
        lines.insert(2, extra)

    log = _doctored(tmp_path, "take", deep)
    with log.open("a", encoding="utf-8") as file:
        file.write("[" * 100_000 + "]" * 100_000 + "\n")
    out = tmp_path / "out.yaml"
    assert main([str(log), "-o", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"{log}:3: the Agent call toolu_deep has an input nested 802 deep")
    assert err[1] == f"{log}:6: nested too deep to read; skipped"
    assert _replayed(out.read_text(encoding="utf-8"), tmp_path).failures == []


def test_a_sessions_file_that_is_not_utf8_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "sessions.json"
    bad.write_bytes(b'[{"name": "\xff"}]\n')
    assert main([str(LOG), "--sessions", str(bad)]) == 2
    assert _one_line(capsys).startswith(f"{bad}:1: ")


def test_a_missing_output_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "no" / "such" / "out.yaml"
    assert main([str(LOG), "-o", str(out)]) == 2
    assert _one_line(capsys) == f"agent-cards import: no folder {out.parent} to write out.yaml in"


def test_a_session_resumed_the_next_day_replays(tmp_path: Path) -> None:
    def next_day(lines: list[dict[str, Any]]) -> None:
        for line in lines[4:]:  # from the TaskStop on
            line["timestamp"] = line["timestamp"].replace("2026-12-01", "2026-12-02")

    imported = import_session(_doctored(tmp_path, "taskstop", next_day))
    waits = [s["wait"] for s in yaml.safe_load(imported.yaml)["steps"] if "wait" in s]
    assert max(waits) == 600_000
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_a_lone_surrogate_is_written_as_a_replacement(tmp_path: Path) -> None:
    log = tmp_path / "surrogate.jsonl"
    text = (SESSIONS / "take.jsonl").read_text(encoding="utf-8")
    log.write_text(text.replace("Fix the auth flow in src/auth.", "Fix the auth flow \\ud800 in src/auth."),
                   encoding="utf-8")
    imported = import_session(log)
    assert imported.problems == [f"{log}:2: the Agent call toolu_fake_7d0b90134ff641598b17 holds a lone surrogate, "
                                 "written as U+FFFD"]
    assert "\ufffd" in imported.yaml
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_an_isolation_claude_code_does_not_take_is_skipped(tmp_path: Path) -> None:
    def local(lines: list[dict[str, Any]]) -> None:
        next(x for x in lines if x["type"] == "assistant")["message"]["content"][0]["input"]["isolation"] = "local"

    log = _doctored(tmp_path, "parallel", local)
    imported = import_session(log)
    assert imported.problems[0].endswith('asks for isolation "local", which Claude Code does not take '
                                         "(worktree or remote); skipped")
    assert imported.calls == 1
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_a_log_over_a_mib_makes_a_scenario_within_one(tmp_path: Path) -> None:
    def huge(lines: list[dict[str, Any]]) -> None:
        big = "y" * (2 << 20)
        for line in lines:
            for block in line.get("message", {}).get("content", []):
                if block.get("type") == "tool_use":
                    block["input"]["prompt"] = big
            if isinstance(line.get("toolUseResult"), dict):
                line["toolUseResult"]["prompt"] = big

    log = _doctored(tmp_path, "oversize", huge)
    assert log.stat().st_size > 4 << 20
    imported = import_session(log)
    assert imported.refusal is None and len(imported.yaml) < 4096
    assert _replayed(imported.yaml, tmp_path).failures == []


def test_a_deep_result_and_a_hostile_context_are_read_in_bounded_time(tmp_path: Path) -> None:
    separator = 'lich session "Session 2" took this task in a card of its own and works in this same checkout ('

    def hostile(lines: list[dict[str, Any]]) -> None:
        nested: Any = "x"
        for _ in range(900):
            nested = [nested]
        _answered(lines)["toolUseResult"] = {"status": "async_launched", "agentId": "session-2-9f81",
                                             "outputFile": "", "deep": nested}
        for line in lines:
            if line.get("attachment", {}).get("type") == "hook_additional_context":
                line["attachment"]["content"] = [separator * 8000]

    imported = import_session(_doctored(tmp_path, "take", hostile))
    assert imported.refusal is None
    _, expect = _expect(imported)
    assert expect[0]["answer"] == {"call": "toolu_fake_7d0b90134ff641598b17"}  # the result is too deep to read


def test_the_mods_language_is_read_from_its_text(tmp_path: Path) -> None:
    from agent_cards.languages import TRANSLATIONS

    context = TRANSLATIONS["pt-BR"]["context.shared"].format(label="Session 2", path="/home/dev/app")

    def portuguese(lines: list[dict[str, Any]]) -> None:
        for line in lines:
            if line.get("attachment", {}).get("type") == "hook_additional_context":
                line["attachment"]["content"] = [context]

    imported = import_session(_doctored(tmp_path, "take", portuguese))
    scenario, expect = _expect(imported)
    assert scenario["session"]["lang"] == "pt-BR"
    assert expect[0]["answer"]["context"] == {"contains": context}
    assert _replayed(imported.yaml, tmp_path).failures == []
