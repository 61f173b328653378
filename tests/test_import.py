"""``agent-cards import``: a session log the real Claude Code wrote, made into a scenario that replays.

The fixture ``tests/fixtures/sessions/print-agent-taskstop.jsonl`` is a log the pinned Claude Code
wrote in a ``-p`` run of the e2e tier (tests/e2e/test_import_e2e.py makes a fresh one each run), with
its machine paths replaced by virtual ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cards_simulator.scenario.importer import import_session, main
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import replay

LOG = Path(__file__).parent / "fixtures" / "sessions" / "print-agent-taskstop.jsonl"


def _replayed(text: str, tmp_path: Path) -> tuple[list[dict[str, object]], list[str]]:
    file = tmp_path / "imported.yaml"
    file.write_text(text, encoding="utf-8")
    result = replay(read(file))
    return result.events, result.failures


def test_a_real_log_becomes_a_scenario_that_replays_and_holds(tmp_path: Path) -> None:
    imported = import_session(LOG)
    assert imported.problems == []
    assert imported.calls == 2
    events, failures = _replayed(imported.yaml, tmp_path)
    assert failures == []
    calls = [(e["call"], e["tool"], e["input"]) for e in events if e["kind"] == "call"]
    assert calls == [
        ("toolu_fake_5c9d99afd11345ce85a5", "Agent", {
            "description": "Fix the login bug", "prompt": "Reply with the single word hello.",
            "subagent_type": "general-purpose"}),
        ("toolu_fake_d3b52358c695401d9a50", "TaskStop", {"task_id": "no-such-task"}),
    ]
    starts = [e["t"] for e in events if e["kind"] == "call"]
    assert starts == [109, 165]  # the log's own gaps between the calls
    scenario = read(tmp_path / "imported.yaml")
    assert scenario.session.cwd == "/home/dev/app"
    assert scenario.session.interactive is False  # a -p session logs as sdk-cli
    assert [e.kind for e in scenario.expect] == ["answer", "answer"]


def test_only_what_the_scenario_needs_leaves_the_log(tmp_path: Path) -> None:
    log = tmp_path / "secret.jsonl"
    lines = LOG.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[2])
    first["env"] = {"ANTHROPIC_API_KEY": "sk-ant-secret", "LICH_TOKEN": "tok-secret"}
    first["message"]["content"] = "my password is hunter2"
    lines[2] = json.dumps(first)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = import_session(log).yaml
    for secret in ("sk-ant-secret", "tok-secret", "hunter2", "requestId", "req_fake", "E2E-TRIGGER"):
        assert secret not in text


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
    _, failures = _replayed(imported.yaml, tmp_path)
    assert failures == []


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
