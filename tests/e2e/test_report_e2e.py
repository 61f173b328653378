"""The flight recorder in the real Claude Code: a call taken through the plugin and its worker stopped, then
``agent-cards report`` writes the scenario of that session, which replays in the fake host to a transcript
the conformance comparator accepts.

Offline, interactive, the fake Messages API and the logging fake lich as in ``test_bridge_e2e``; the
journal goes where the session host puts it by itself (the plugin's data folder, else the temp folder).
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from agent_cards.texts import person_text
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse, tool_results
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_conformance import report
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")]

ROOT = Path(__file__).resolve().parents[2]
TRIGGER = "E2E-TRIGGER: please delegate this to a subagent."
WORKER = "session-2-9f81"
ONE = person_text("footer.workers.one")


def _answered(call: ToolUse) -> Callable[[ScriptedModel], bool]:
    def has(model: ScriptedModel) -> bool:
        return any(r.get("tool_use_id") == call.id for q in model.main_requests for r in tool_results(q))

    return has


def test_a_real_session_is_reported_as_a_scenario_that_replays_as_it_went(
    claude: Path, sandbox: Sandbox, fake_api: Callable[..., ScriptedModel], tmp_path: Path, timings: list[str]
) -> None:
    try:
        lich = LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(sandbox.project)))
    except SetupError as error:
        pytest.skip(str(error))
    env = {"LICH_BIN": str(lich.bin), "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0",
           "LICH_PROMPT_LANG": "en", "FAKE_LICH_STATE": str(lich.state)}
    general = ToolUse("Agent", {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth.",
                                "subagent_type": "general-purpose"}, text="Delegating.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping that worker.")
    model = fake_api([general, "Launched.", stop, "Stopped."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=env, extra_args=["--permission-mode", "default"]) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(_answered(general), 60), tui.screen()
        tui.wait_for(re.escape(ONE), 30)
        tui.wait_idle(30)
        tui.type("Stop that worker now.")
        assert model.wait_until(_answered(stop), 60), tui.screen()
        deadline = time.monotonic() + 15
        while ONE in tui.screen() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert tui.exit() == 0
    timings.append(f"interactive session for the report: {time.monotonic() - start:.2f}s")
    assert [c[0] for c in lich.calls()] == ["open", "close"]

    in_data = sorted((sandbox.home / ".claude" / "plugins" / "data").glob("*/journals/*.jsonl"))
    elsewhere = sorted(sandbox.tmp.glob("agent-cards-journals-*/*.jsonl"))
    journals = in_data or elsewhere
    assert len(journals) == 1, (in_data, elsewhere)
    records = report.read_journal(journals[0])
    text = journals[0].read_text(encoding="utf-8")
    assert "Fix the auth flow in src/auth." not in text  # the prompt is kept as its hash

    reported = report.report_scenario(records, journals[0].name)
    scenario = yaml.safe_load(reported.yaml)
    lines = report.replay_and_compare(reported, "reported.yaml")
    print(reported.yaml, "\n".join(reported.notes), sep="\n")
    assert lines == [], lines
    taken = next(s for s in scenario["steps"] if s.get("id") == general.id)
    assert taken["lich"]["name"] == WORKER
    assert {"run": {"argv": [str(lich.bin), "close", WORKER], "exit": 0}} in scenario["expect"]
    out = tmp_path / "bug.yaml"
    assert report.main([str(journals[0]), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == reported.yaml
