"""Proves the e2e harness with a throwaway probe plugin (classic PreToolUse hook on Agent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse, text_of, tool_results
from agent_cards_claude_driver.runs import run_print, run_validate
from agent_cards_claude_driver.sandbox import Sandbox, parent_of, pids
from agent_cards_claude_driver.tui import Tui
from agent_cards_claude_driver.waits import until

ModelFactory = Callable[..., ScriptedModel]
ProbeFactory = Callable[..., Any]

pytestmark = pytest.mark.e2e

TRIGGER = "E2E-TRIGGER: please delegate this to a subagent."
DENY_REASON = "probe says no"
LAUNCHED = "Async agent launched successfully"


def agent_call() -> ToolUse:
    return ToolUse(
        "Agent",
        {
            "description": "probe task",
            "prompt": "Reply with the single word hello.",
            "subagent_type": "general-purpose",
        },
        text="Delegating to a subagent.",
    )


def test_probe_validates(claude: Path, probe_plugin: ProbeFactory, tmp_path: Path) -> None:
    probe = probe_plugin(deny=DENY_REASON)
    run = run_validate(claude, probe.dir, tmp_path / "validate-home")
    print(f"\n[validate] exit={run.returncode} {run.elapsed:.2f}s\n{run.stdout}{run.stderr}")
    assert run.returncode == 0, run.stdout + run.stderr


def test_print_classic_deny(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, probe_plugin: ProbeFactory) -> None:
    probe = probe_plugin(deny=DENY_REASON)
    call = agent_call()
    model = fake_api([call])
    run = run_print(claude, sandbox, [probe.dir], TRIGGER, model, timeout=90)
    print(f"\n[e2e timing] -p run (classic deny): {run.elapsed:.2f}s exit={run.returncode}")
    assert run.returncode == 0, run.stdout + run.stderr

    main = model.main_requests
    assert len(main) >= 2, [r.path for r in model.requests]
    assert TRIGGER in text_of(main[0].body["messages"][0]["content"])
    results = [r for r in tool_results(main[1]) if r.get("tool_use_id") == call.id]
    assert len(results) == 1, tool_results(main[1])
    assert text_of(results[0]["content"]) == f"PreToolUse:Agent hook error: {DENY_REASON}"
    assert results[0].get("is_error") is True
    assert not model.subagent_requests

    entries = probe.entries()
    assert len(entries) == 1
    assert entries[0]["stdin"]["tool_name"] == "Agent"
    assert entries[0]["stdin"]["tool_use_id"] == call.id
    assert entries[0]["env"]["CLAUDE_CODE_SESSION_ATTENDED"] == "0"
    assert entries[0]["env"]["CLAUDE_CODE_ENTRYPOINT"] == "sdk-cli"
    assert entries[0]["env"]["CLAUDE_PLUGIN_DATA"].endswith(f"{probe.name}-inline")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")
def test_tui_classic_deny(claude: Path, sandbox: Sandbox, fake_api: ModelFactory, probe_plugin: ProbeFactory) -> None:
    probe = probe_plugin(deny=DENY_REASON)
    call = agent_call()
    model = fake_api([call])
    start = time.monotonic()
    with Tui(claude, sandbox, [probe.dir], model, extra_args=["--permission-mode", "default"]) as tui:
        ready = time.monotonic() - start
        tui.type(TRIGGER)
        assert model.wait_until(lambda m: len(m.main_requests) >= 2, 60), tui.screen()
        screen = tui.wait_for(r"● done", 30)
        screen = tui.wait_idle(30)
        assert f"PreToolUse:Agent hook error: {DENY_REASON}" in screen, screen
        status = tui.exit()
    elapsed = time.monotonic() - start
    print(f"\n[e2e timing] TUI run (classic deny): {elapsed:.2f}s (ready after {ready:.2f}s)")
    print(screen)
    assert status == 0

    results = [r for r in tool_results(model.main_requests[1]) if r.get("tool_use_id") == call.id]
    assert len(results) == 1
    assert text_of(results[0]["content"]) == f"PreToolUse:Agent hook error: {DENY_REASON}"
    assert results[0].get("is_error") is True

    entries = probe.entries()
    assert len(entries) == 1
    assert entries[0]["stdin"]["permission_mode"] == "default"
    assert entries[0]["env"]["CLAUDE_CODE_SESSION_ATTENDED"] == "1"
    assert entries[0]["env"]["CLAUDE_CODE_ENTRYPOINT"] == "cli"


def test_print_no_decision_spawns_native_agent(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, probe_plugin: ProbeFactory
) -> None:
    probe = probe_plugin()
    call = agent_call()
    model = fake_api([call], subagent_replies=["hello"])
    run = run_print(claude, sandbox, [probe.dir], TRIGGER, model, timeout=90)
    print(f"\n[e2e timing] -p run (real spawn): {run.elapsed:.2f}s exit={run.returncode}")
    assert run.returncode == 0, run.stdout + run.stderr

    subs = model.subagent_requests
    assert subs, [(r.kind, r.path) for r in model.requests]
    agent_id = subs[0].agent_id
    assert agent_id
    assert "Reply with the single word hello." in text_of(subs[0].body["messages"][0]["content"])

    main = model.main_requests
    assert len(main) >= 2
    results = [r for r in tool_results(main[1]) if r.get("tool_use_id") == call.id]
    assert len(results) == 1
    launch = text_of(results[0]["content"])
    assert launch.startswith(LAUNCHED), launch
    assert f"agentId: {agent_id}" in launch
    assert not results[0].get("is_error")
    assert len(probe.entries()) == 1


def test_a_launchers_forked_shells_are_not_session_hosts(tmp_path: Path) -> None:
    """A launcher's ``$(…)`` shell has the host's command line for a moment: only the launcher counts."""
    box = Sandbox(root=tmp_path, home=tmp_path / "home", project=tmp_path / "project", tmp=tmp_path)
    # The subshell stays a shell, blocked on the builtin read, until stdin closes.
    script = 'x=$(read -r _; echo); printf "%s" "$x"'
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(box.home)}
    launcher = subprocess.Popen(["bash", "-c", script, "python3", "-m", "agent_cards.bridge"], env=env,
                                stdin=subprocess.PIPE)
    try:
        forked = until("the launcher's forked shell", lambda: [p for p in pids() if parent_of(p) == launcher.pid],
                       30, every=0.01)
        assert box.session_hosts() == [launcher.pid], forked
    finally:
        assert launcher.stdin is not None
        launcher.stdin.close()
        launcher.wait(30)
    assert box.session_hosts() == []

