"""The command hook in the real Claude Code, installed as a plugin of its own (``--plugin-dir``): a folder
built from this repository with ``hooks/command-hooks.json`` as its hooks file (``conftest.command_hook_plugin``),
since the repository's own hooks file installs the module.

The fake Messages API scripts the model's tool calls; the fake lich (``fake-lich``) stands behind
LICH_BIN, its state in FAKE_LICH_STATE. Each run prints its wall time (``[e2e timing]``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cards.texts import agent_text, person_text
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.model_api import RecordedRequest, ScriptedModel, ToolUse, text_of, tool_results
from agent_cards_claude_driver.runs import run_print, run_validate
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript, OpenScript

pytestmark = pytest.mark.e2e

ModelFactory = Callable[..., ScriptedModel]

TRIGGER = "E2E-TRIGGER: please delegate this to a subagent."
LAUNCHED = "Async agent launched successfully"
WORKER = "session-2-9f81"  # the fake lich's first worker: label "Session 2", id 9f81


@pytest.fixture
def plugin(command_hook_plugin: Path) -> Path:
    """The command hook's plugin folder (see the module's docstring)."""
    return command_hook_plugin


class LoggedHookLich(LoggedLich):
    def env(self) -> dict[str, str]:
        return {
            "LICH_BIN": str(self.bin),
            "LICH_SESSION_ID": "3c4d",
            "LICH_SUBAGENT_DEPTH": "0",
            "LICH_PROMPT_LANG": "en",
            "FAKE_LICH_STATE": str(self.state),
        }

    def sessions(self) -> list[dict[str, Any]]:
        world = json.loads((self.state / "world.json").read_text(encoding="utf-8"))
        return list(world["sessions"])


@pytest.fixture
def fake_lich(tmp_path: Path, sandbox: Sandbox) -> LoggedHookLich:
    try:
        logged = LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(sandbox.project)))
    except SetupError as error:
        pytest.skip(str(error))
    return LoggedHookLich(logged.bin, logged.state, logged.log)


def agent_call(subagent_type: str, description: str, prompt: str) -> ToolUse:
    return ToolUse(
        "Agent",
        {"description": description, "prompt": prompt, "subagent_type": subagent_type},
        text=f"Delegating: {description}.",
    )


def result_for(model: ScriptedModel, call: ToolUse) -> dict[str, Any]:
    """The tool_result the model read back for ``call`` (from the first main request that carries it)."""
    for request in model.main_requests:
        found = [r for r in tool_results(request) if r.get("tool_use_id") == call.id]
        if found:
            return found[0]
    raise AssertionError(f"no tool_result for {call.name} {call.id}")


def state_files(sandbox: Sandbox) -> list[dict[str, Any]]:
    folder = sandbox.home / ".claude" / "plugins" / "data" / "agent-cards-inline" / "sessions"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def first_user_text(request: RecordedRequest) -> str:
    return text_of(request.body["messages"][0]["content"])


def test_the_command_hook_validates_as_a_plugin(
    claude: Path, plugin: Path, tmp_path: Path, timings: list[str]
) -> None:
    run = run_validate(claude, plugin, tmp_path / "validate-home")
    timings.append(f"claude plugin validate: {run.elapsed:.2f}s")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Validation passed" in run.stdout, run.stdout
    for event in ("SessionStart", "PreToolUse Agent", "PreToolUse TaskStop"):
        assert f"hooks: {event} command" in run.stdout, run.stdout


def test_print_mode_keeps_the_agent_native(
    claude: Path, plugin: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: LoggedHookLich, timings: list[str]
) -> None:
    """-p: no person is at the session, so a general-purpose Agent call runs inside Claude Code."""
    call = agent_call("general-purpose", "print mode task", "Reply with the single word hello.")
    model = fake_api([call], subagent_replies=["hello"])
    run = run_print(claude, sandbox, [plugin], TRIGGER, model, env_extra=fake_lich.env(), timeout=120)
    timings.append(f"-p run (Agent stays native, subagent runs): {run.elapsed:.2f}s")
    assert run.returncode == 0, run.stdout + run.stderr

    assert fake_lich.calls() == []
    subs = model.subagent_requests
    assert subs, [(r.kind, r.path) for r in model.requests]
    assert "Reply with the single word hello." in first_user_text(subs[0])
    launched = result_for(model, call)
    assert text_of(launched["content"]).startswith(LAUNCHED)
    assert not launched.get("is_error")
    assert [s["interactive"] for s in state_files(sandbox)] == [False]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")
def test_interactive_screen_takes_the_agent_and_leaves_explore(
    claude: Path, plugin: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: LoggedHookLich, timings: list[str]
) -> None:
    """The TUI: general-purpose is taken (a card); TaskStop never reaches the hook, so the worker is
    stopped with the lich command the deny named; Explore stays native."""
    general = agent_call("general-purpose", "Fix the auth flow", "Fix the auth flow in src/auth.")
    task_stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping that worker.")
    close = ToolUse("Bash", {"command": f'"$LICH_BIN" close {WORKER}', "description": "Close the lich worker"},
                    text="Closing it through lich.")
    explore = agent_call("Explore", "Find the tests", "List the test files.")
    model = fake_api([general, task_stop, close, explore, "All calls are done."], subagent_replies=["Found none."])
    start = time.monotonic()
    with Tui(claude, sandbox, [plugin], model, env_extra=fake_lich.env(),
             extra_args=["--permission-mode", "default"]) as tui:
        ready = time.monotonic() - start
        tui.type(TRIGGER)
        tui.wait_for(r"Do you want to proceed\?", 60)  # the Bash call: the person says yes
        tui.say_yes()
        assert model.wait_until(lambda m: m.remaining == 0 and len(m.main_requests) >= 5, 90), tui.screen()
        assert model.wait_until(lambda m: bool(m.subagent_requests), 60), tui.screen()
        screen = tui.wait_idle(60)
        status = tui.exit()
    elapsed = time.monotonic() - start
    timings.append(f"interactive run (taken, closed through lich, Explore native): {elapsed:.2f}s "
                   f"(ready after {ready:.2f}s)")
    print(screen)
    assert status == 0

    # The fake lich opened one worker, as a subagent, with the call's prompt; the Bash call closed it.
    assert fake_lich.actions() == [
        ["open", "--kind", "claude", "--subagent", "--prompt", "Fix the auth flow in src/auth.", "--json"],
        ["close", WORKER],
    ]
    [worker] = fake_lich.sessions()
    assert (worker["name"], worker["label"], worker["subagent"], worker["status"]) == (
        WORKER, "Session 2", True, "pending")
    assert worker["closed_at"] is not None

    # The model read the deny reason: not a refusal, the worker's card and agentId, where it works.
    taken = result_for(model, general)
    assert taken.get("is_error") is True
    expected = (
        agent_text("en", "hook.launched.shared", name=WORKER) + " "
        + agent_text("en", "context.shared", label="Session 2", path=str(sandbox.project))
    )
    assert text_of(taken["content"]) == f"PreToolUse:Agent hook error: {expected}"
    assert "PreToolUse:Agent hook error: This Agent call was not refused" in screen

    # Ceiling (measured): TaskStop checks its id before any PreToolUse hook, so Claude Code answers it.
    stopped = result_for(model, task_stop)
    assert text_of(stopped["content"]) == f"<tool_use_error>No task found with ID: {WORKER}</tool_use_error>"
    assert text_of(result_for(model, close)["content"]).strip() == 'Closed "Session 2".'

    # Explore ran inside Claude Code: its subagent asked the model, and the call launched natively.
    assert any("List the test files." in first_user_text(r) for r in model.subagent_requests)
    assert text_of(result_for(model, explore)["content"]).startswith(LAUNCHED)
    assert not any("Fix the auth flow in src/auth." in first_user_text(r) for r in model.subagent_requests)

    [session] = state_files(sandbox)
    assert session["interactive"] is True
    assert [w["name"] for w in session["workers"]] == [WORKER]  # the hook never learns of the close


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")
def test_interactive_open_failure_runs_the_native_agent_and_says_why(
    claude: Path, plugin: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: LoggedHookLich, timings: list[str]
) -> None:
    """lich could not open a card: no decision, so Claude Code runs its own agent; the person is told."""
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(fail="no lich is running")))
    general = agent_call("general-purpose", "Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Done."], subagent_replies=["Fixed."])
    start = time.monotonic()
    with Tui(claude, sandbox, [plugin], model, env_extra=fake_lich.env(),
             extra_args=["--permission-mode", "default"]) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(lambda m: bool(m.subagent_requests) and m.remaining == 0, 60), tui.screen()
        screen = tui.wait_idle(60)
        status = tui.exit()
    timings.append(f"interactive run (open failed, native agent): {time.monotonic() - start:.2f}s")
    print(screen)
    assert status == 0
    assert [c[0] for c in fake_lich.actions()] == ["open"]
    assert any("Fix the auth flow in src/auth." in first_user_text(r) for r in model.subagent_requests)
    assert text_of(result_for(model, general)["content"]).startswith(LAUNCHED)
    # The mod's toast is the hook's systemMessage: the person reads it under the call, the model never does.
    assert "PreToolUse:Agent says: " + person_text(
        "toast.open_failed", description="Fix the auth flow", reason="lich: no lich is running"
    ) in " ".join(screen.split())
    assert "lich could not open a card" not in json.dumps([r.body for r in model.main_requests])
