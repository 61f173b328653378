"""``agent-cards import`` on a session log the real Claude Code wrote (``-p``, offline, a scripted model).

No mod is installed: Claude Code answers the Agent call and the TaskStop itself, as in a bug report's
session. The log is read where Claude Code keeps it (``~/.claude/projects/<slug>/<session>.jsonl``
under the sandbox's scratch HOME), imported into a scenario, and that scenario replays at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse
from agent_cards_claude_driver.runs import run_print
from agent_cards_claude_driver.sandbox import Sandbox

pytestmark = pytest.mark.e2e

ModelFactory = Callable[..., ScriptedModel]


def session_logs(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


def test_a_real_session_log_imports_and_replays(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, tmp_path: Path
) -> None:
    agent = ToolUse("Agent", {"description": "Fix the login bug", "prompt": "Reply with the single word hello.",
                              "subagent_type": "general-purpose"}, text="Delegating.")
    stop = ToolUse("TaskStop", {"task_id": "no-such-task"}, text="Stopping it.")
    model = fake_api([agent, stop, "Done."], subagent_replies=["hello"])
    run = run_print(claude, sandbox, [], "E2E-TRIGGER: delegate this.", model, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    logs = session_logs(sandbox.home)
    assert logs, "Claude Code wrote no session log"
    keep = os.environ.get("AGENT_CARDS_KEEP_SESSION_LOG")
    if keep:  # to refresh the committed fixture (tests/fixtures/sessions/), then scrubbed by hand
        shutil.copy(logs[0], keep)

    from agent_cards_simulator.scenario.importer import import_session
    from agent_cards_simulator.scenario.reader import read
    from agent_cards_simulator.scenario.replay import replay

    imported = import_session(logs[0])
    assert not [p for p in imported.problems if "Agent" in p], imported.problems
    text = imported.yaml
    assert "Fix the login bug" in text and "no-such-task" in text
    assert str(sandbox.home) not in text  # no machine path of the session's own HOME
    scenario_file = tmp_path / "imported.yaml"
    scenario_file.write_text(text, encoding="utf-8")
    result = replay(read(scenario_file))
    assert result.passed, result.failures
