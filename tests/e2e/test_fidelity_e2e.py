"""Where the fake host was seen to differ from the real engine, run again in the real Claude Code.

Two Agent calls of one reply with a "no" at the first dialog, and with a "yes" then a "no" (two dialogs in a row
answered differently), a typed deny rule and the plain one go through
``agent-cards conform`` and must conform. A prompt with a NUL cannot be compared lane by lane (the run never
starts, so no wrapper sees it), so its real run is read directly: the native agent runs, after the mod's
toast, and lich opens nothing. A module changed while a turn runs is reloaded only once the turn ends, as the
fake host holds a reload asked for mid-turn: shown with a module of its own that marks each ``session.start``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse
from agent_cards_claude_driver.runs import module_plugin
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_claude_driver.waits import until
from agent_cards_conformance.command import conform_one, to_text
from agent_cards_conformance.plan import plan
from agent_cards_conformance.real import run_real
from agent_cards_simulator.scenario.files import load_all
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.replay import replay

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")]

ROOT = Path(__file__).resolve().parents[2]


def _scenario(name: str) -> Scenario:
    scenarios, problems = load_all([ROOT / "scenarios" / f"{name}.yaml"])
    assert not problems, problems
    return scenarios[0]


#: perm/parallel-yes-no: two dialogs in a row answered differently, each as the plan says for the call its
#: card names (a driver that took the second dialog for the first one redrawn pressed Yes on both).
@pytest.mark.parametrize("name", ["perm/parallel-no", "perm/parallel-yes-no", "perm/rule-deny", "perm/rule-deny-plain"])
def test_the_real_engine_ends_the_turn_and_words_its_rules_as_the_fake_host_does(name: str, claude: Path) -> None:
    result = conform_one(_scenario(name), claude, "")
    print(to_text(result))
    assert result.verdict == "conforms", to_text(result)


def test_a_nul_in_the_prompt_falls_back_to_the_native_agent_in_the_real_engine(claude: Path) -> None:
    scenario = _scenario("fall/nul-prompt")
    events = [dict(e) for e in replay(scenario).events]
    folder = Path(tempfile.mkdtemp(prefix="conform-"))
    try:
        real = run_real(plan(scenario, events), claude, folder).events
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    kinds = [e["kind"] for e in real]
    toasts = [str(e.get("text")) for e in real if e["kind"] == "toast"]
    assert toasts and toasts[0].startswith("lich failed: agent ran natively."), real
    assert [e.get("answer") for e in real if e["kind"] == "spawn"] == ["native"], real
    assert "native" in kinds and not [e for e in real if e["kind"] == "run" and "open" in (e.get("argv") or [])], real


#: A module that marks each session.start it gets with a file of its own (a reload raises it again).
_MARKING = """export function register(on) {
  on('session.start', async ($, e, next) => {
    const folder = await $.env.get('MARKS')
    await $.fs.write(folder + '/start-' + Date.now() + '-' + Math.random(), '')
    return next(e)
  })
}
"""


def test_a_module_changed_while_a_turn_runs_is_reloaded_once_the_turn_ends(
    claude: Path, sandbox: Sandbox, fake_api: Callable[..., ScriptedModel], tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    plugin = module_plugin(tmp_path / "marking", "marking", _MARKING, "marks session.start")
    module = plugin / "hooks" / "marking.js"
    bash = ToolUse("Bash", {"command": "sleep 20", "description": "Wait twenty seconds"}, text="Waiting.")
    model = fake_api([bash, "Done."])

    def starts() -> int:
        return len(list(marks.glob("start-*")))

    with Tui(claude, sandbox, [plugin], model, env_extra={"MARKS": str(marks)},
             extra_args=["--allowedTools", "Bash"]) as tui:
        until("one session.start at launch", lambda: starts() == 1, 30, shown=tui.screen)
        tui.type("Please wait a little.")
        tui.wait_for("sleep 20", 60)
        module.write_text(_MARKING + "// changed while the turn runs\n", encoding="utf-8")
        until("the Bash result at the model", lambda: len(model.main_requests) >= 2, 90, shown=tui.screen)
        held = starts()
        until("the changed module reloaded", lambda: starts() == 2, 60, shown=tui.screen)
        tui.exit()
    assert held == 1, "reloaded before the turn ended"
