"""``agent-cards import`` on session logs the real Claude Code wrote, made into scenarios that replay.

The log is read where Claude Code keeps it (``~/.claude/projects/<slug>/<session>.jsonl`` under the
sandbox's scratch HOME), imported, and the scenario replayed in the fake host with today's mod: it must
pass, and it must say what the log showed (each test asserts the expectations it needs).

With ``AGENT_CARDS_KEEP_SESSION_LOG=DIR`` each log is copied to ``DIR/<case>.jsonl``, to refresh the
fixtures under ``tests/fixtures/sessions/`` (trimmed and scrubbed by ``tests/fixtures/sessions/trim.py``).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cards.texts import person_text
from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse
from agent_cards_claude_driver.runs import run_print
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_simulator.lich.scripts import LichScript, OpenScript

from .test_bridge_e2e import DEFAULT, ONE, ROOT, TRIGGER, WORKER, FakeLich, agent_call, answered, ask_rule
from .test_bridge_e2e import fake_lich as fake_lich  # noqa: PLC0414  (the fixture, shared)

pytestmark = pytest.mark.e2e

ModelFactory = Callable[..., ScriptedModel]
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")


def session_logs(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


def imported_replay(sandbox: Sandbox, tmp_path: Path, case: str) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """The session's log imported and replayed: the scenario's text, its mapping, and the replay's events."""
    import yaml

    from agent_cards_simulator.scenario.importer import import_session
    from agent_cards_simulator.scenario.reader import read
    from agent_cards_simulator.scenario.replay import replay

    logs = session_logs(sandbox.home)
    assert logs, "Claude Code wrote no session log"
    keep = os.environ.get("AGENT_CARDS_KEEP_SESSION_LOG")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(logs[-1], Path(keep) / f"{case}.jsonl")
    imported = import_session(logs[-1])
    assert imported.refusal is None, imported.refusal
    text = imported.yaml
    assert str(sandbox.home) not in text  # no machine path of the session's own HOME
    file = tmp_path / f"{case}.yaml"
    file.write_text(text, encoding="utf-8")
    result = replay(read(file))
    assert result.passed, (result.failures, text)
    return text, yaml.safe_load(text.replace("!repeat", "")), result.events  # a long prompt, as its mapping


def expected(scenario: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e[kind] for e in scenario.get("expect", []) if isinstance(e, dict) and kind in e]


def test_a_print_session_log_imports_and_replays(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, tmp_path: Path
) -> None:
    """No mod: Claude Code answers the Agent call and the TaskStop itself, as in a bug report's session."""
    agent = ToolUse("Agent", {"description": "Fix the login bug", "prompt": "Reply with the single word hello.",
                              "subagent_type": "general-purpose"}, text="Delegating.")
    stop = ToolUse("TaskStop", {"task_id": "no-such-task"}, text="Stopping it.")
    model = fake_api([agent, stop, "Done."], subagent_replies=["hello"])
    run = run_print(claude, sandbox, [], "E2E-TRIGGER: delegate this.", model, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    text, _, _ = imported_replay(sandbox, tmp_path, "print")
    assert "Fix the login bug" in text and "no-such-task" in text


def _interactive(claude: Path, sandbox: Sandbox, model: ScriptedModel, lich: FakeLich,
                 drive: Callable[[Tui], None], **env: str) -> None:
    with Tui(claude, sandbox, [ROOT], model, env_extra=lich.env(**env), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        drive(tui)
        assert tui.exit() == 0


@needs_tmux
def test_a_taken_call(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                      tmp_path: Path) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Launched."])

    def drive(tui: Tui) -> None:
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(re.escape(ONE), 30)

    _interactive(claude, sandbox, model, fake_lich, drive)
    _, scenario, _ = imported_replay(sandbox, tmp_path, "take")
    [answer] = expected(scenario, "answer")
    assert answer["result"]["status"] == "async_launched" and answer["result"]["agentId"] == WORKER
    assert answer["context"]["contains"].startswith('lich session "Session 2" took this task')
    assert scenario["session"]["git"] == "main"


@needs_tmux
def test_an_isolated_call(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                          tmp_path: Path) -> None:
    isolated = agent_call("Refactor the parser", "Refactor the parser module.", isolation="worktree")
    model = fake_api([isolated, "Launched."])

    def drive(tui: Tui) -> None:
        assert model.wait_until(answered(isolated), 60), tui.screen()

    _interactive(claude, sandbox, model, fake_lich, drive)
    _, scenario, events = imported_replay(sandbox, tmp_path, "isolated")
    [answer] = expected(scenario, "answer")
    assert answer["result"]["status"] == "async_launched"
    assert "on branch subagent/refactor-the-parser-" in answer["context"]["contains"]["matches"]
    assert any(e["kind"] == "run" and "--worktree" in e["argv"] for e in events)


@needs_tmux
def test_two_parallel_calls(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                            tmp_path: Path) -> None:
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=1500)))
    second = agent_call("Write the docs", "Write the docs for src/auth.")
    first = ToolUse("Agent", {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth.",
                              "subagent_type": "general-purpose"}, text="Two at once.", parallel=(second,))
    model = fake_api([first, "Both launched."])

    def drive(tui: Tui) -> None:
        assert model.wait_until(lambda m: answered(first)(m) and answered(second)(m), 60), tui.screen()
        tui.wait_for(re.escape(person_text("footer.workers.many", count=2)), 30)

    _interactive(claude, sandbox, model, fake_lich, drive, FAKE_LICH_REAL_SLEEP="1")
    _, scenario, events = imported_replay(sandbox, tmp_path, "parallel")
    [step] = [s for s in scenario["steps"] if "parallel" in s]
    assert [c["id"] for c in step["parallel"]] == [first.id, second.id]
    assert {a["call"] for a in expected(scenario, "answer")} == {first.id, second.id}
    assert len([e for e in events if e["kind"] == "run"]) == 2


@needs_tmux
def test_an_oversize_call(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                          tmp_path: Path) -> None:
    big = agent_call("Summarise the logs", "y" * 9000)
    model = fake_api([big, "Ran it natively."], subagent_replies=["Summary."])

    def drive(tui: Tui) -> None:
        assert model.wait_until(answered(big), 60), tui.screen()
        tui.wait_for(r'Agent "Summarise the logs" finished', 60)

    _interactive(claude, sandbox, model, fake_lich, drive)
    _, scenario, _ = imported_replay(sandbox, tmp_path, "oversize")
    assert {"argv": {"contains": "open"}} in expected(scenario, "no run")  # the module's toast is not logged
    assert expected(scenario, "native")[0]["call"] == big.id
    assert "FALL-OVERSIZE" in scenario["clauses"]


@needs_tmux
def test_a_taskstop_of_a_taken_worker(claude: Path, sandbox: Sandbox, fake_api: ModelFactory,
                                      fake_lich: FakeLich, tmp_path: Path) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping that worker.")
    model = fake_api([general, "Launched.", stop, "Stopped."])

    def drive(tui: Tui) -> None:
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_idle(30)
        tui.type("Stop that worker now.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        tui.wait_idle(30)

    _interactive(claude, sandbox, model, fake_lich, drive)
    _, scenario, events = imported_replay(sandbox, tmp_path, "taskstop")
    [step] = [s for s in scenario["steps"] if "taskstop" in s]
    assert step["taskstop"] == {"worker": general.id}
    stopped = [a for a in expected(scenario, "answer") if a["call"] == stop.id]
    assert stopped[0]["result"]["task_id"] == WORKER
    assert any(e["kind"] == "run" and e["argv"][1:] == ["close", WORKER] for e in events)
    assert "STOP-TAKEN" in scenario["clauses"]


@needs_tmux
def test_esc_while_lich_opens(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                              tmp_path: Path) -> None:
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=4000)))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Done."])

    def drive(tui: Tui) -> None:
        fake_lich.wait_calls(lambda calls: len(calls) == 1, 60)
        tui.key("Escape")
        tui.wait_for("Interrupted", 30)
        tui.wait_for(re.escape(ONE), 30)

    _interactive(claude, sandbox, model, fake_lich, drive, FAKE_LICH_REAL_SLEEP="1")
    _, scenario, events = imported_replay(sandbox, tmp_path, "esc")
    [step] = [s for s in scenario["steps"] if "call" in s]
    assert "esc_after" in step
    assert any(e["kind"] == "esc" for e in events)
    assert not [a for a in expected(scenario, "answer") if "result" in a]  # not a taken, answered call
    assert "FALL-ESC-OPEN" in scenario["clauses"]


@needs_tmux
def test_a_dialog_answered_no(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                              tmp_path: Path) -> None:
    ask_rule(sandbox)
    refused = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([refused, "Understood."])

    def drive(tui: Tui) -> None:
        tui.wait_for(r"Do you want to proceed\?", 60)
        tui.say_no()
        tui.wait_for(r"Interrupted", 30)

    _interactive(claude, sandbox, model, fake_lich, drive)
    assert fake_lich.calls() == []
    _, scenario, events = imported_replay(sandbox, tmp_path, "dialog-no")
    [step] = [s for s in scenario["steps"] if "call" in s]
    assert step["permission"] == {"ask": False}
    assert [e["outcome"] for e in events if e["kind"] == "permission"] == ["deny"]
    assert expected(scenario, "no run") or any("no run" in e for e in scenario["expect"])


@needs_tmux
def test_a_command_hook_log_imports_as_the_module(claude: Path, sandbox: Sandbox, fake_api: ModelFactory,
                                                  fake_lich: FakeLich, command_hook_plugin: Path,
                                                  tmp_path: Path) -> None:
    """The command hook took the call (its deny opens with "This Agent call was not refused"): the import
    re-reads that answer as the module's own, an async_launched result with the same worker."""
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Launched."])
    with Tui(claude, sandbox, [command_hook_plugin], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_idle(30)
        assert tui.exit() == 0
    _, scenario, _ = imported_replay(sandbox, tmp_path, "hook-take")
    [answer] = expected(scenario, "answer")
    assert answer["result"]["status"] == "async_launched" and answer["result"]["agentId"] == WORKER


@needs_tmux
def test_a_dialog_answered_yes(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich,
                               tmp_path: Path) -> None:
    """A yes at the dialog is logged only for a call Claude Code answers itself (here an oversize one): the
    mod's own answer for a card replaces the engine's, and with it the permission decision."""
    ask_rule(sandbox)
    big = agent_call("Summarise the logs", "y" * 9000)
    model = fake_api([big, "Ran it natively."], subagent_replies=["Summary."])

    def drive(tui: Tui) -> None:
        tui.wait_for(r"Do you want to proceed\?", 60)
        tui.say_yes()
        assert model.wait_until(answered(big), 60), tui.screen()
        tui.wait_for(r'Agent "Summarise the logs" finished', 60)

    _interactive(claude, sandbox, model, fake_lich, drive)
    _, scenario, events = imported_replay(sandbox, tmp_path, "dialog-yes")
    [step] = [s for s in scenario["steps"] if "call" in s]
    assert step["permission"] == {"ask": True}
    assert [(e["outcome"], e["via"]) for e in events if e["kind"] == "permission"] == [("allow", "dialog")]


@needs_tmux
def test_a_command_hook_toast_is_expected(claude: Path, sandbox: Sandbox, fake_api: ModelFactory,
                                          fake_lich: FakeLich, command_hook_plugin: Path, tmp_path: Path) -> None:
    """lich could not open a card: the command hook's toast (its systemMessage) is in the log, and the
    failed open is scripted from it."""
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(fail="no lich is running")))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Done."], subagent_replies=["Fixed."])
    with Tui(claude, sandbox, [command_hook_plugin], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(lambda m: bool(m.subagent_requests) and m.remaining == 0, 60), tui.screen()
        tui.wait_idle(60)
        assert tui.exit() == 0
    _, scenario, _ = imported_replay(sandbox, tmp_path, "hook-open-failed")
    [toast] = expected(scenario, "toast")
    assert toast["text"] == person_text("toast.open_failed", description="Fix the auth flow",
                                        reason="lich: no lich is running")
    assert "FALL-OPEN-FAILED" in scenario["clauses"]
