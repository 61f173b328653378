"""The plugin installed the way Claude Code users install plugins: from this repository's marketplace.

A clone of the repository (its tracked files) is the marketplace; the real CLI adds it and installs
``agent-cards@agent-cards`` into a scratch HOME, then an interactive session with no ``--plugin-dir`` takes
an Agent call through the installed copy. The two install forms are the ones ``claude plugin --help``
prints in the pinned build: ``plugin marketplace add SOURCE`` then ``plugin install NAME@MARKETPLACE``, and
the one step ``plugin install NAME --marketplace SOURCE``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_cards.texts import person_text
from agent_cards_claude_driver.install import DEAD_PROXY, guard_env
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse, text_of, tool_results
from agent_cards_claude_driver.runs import CliRun, run_claude
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")]

ROOT = Path(__file__).resolve().parents[2]
MARKETPLACE = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
PLUGIN = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
INSTALLED = f"{PLUGIN['name']}@{MARKETPLACE['name']}"


def clone(folder: Path) -> Path:
    """The repository as a clone has it: its tracked files, none of this checkout's venv or caches."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file() and not source.is_symlink():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


def cli(claude: Path, home: Path, *args: str) -> CliRun:
    run = run_claude(claude, args, env=guard_env(home, DEAD_PROXY), cwd=home, timeout=120)
    assert run.returncode == 0, f"claude {' '.join(args)}:\n{run.stdout}{run.stderr}"
    return run


def test_the_marketplace_manifest_lists_this_plugin_from_the_repository_itself() -> None:
    (entry,) = MARKETPLACE["plugins"]
    assert entry["name"] == PLUGIN["name"] and entry["source"] == "./"


def test_the_one_step_install_from_a_folder_adds_the_marketplace(claude: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cli(claude, home, "plugin", "install", PLUGIN["name"], "--marketplace", str(clone(tmp_path / "repo")))
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["enabledPlugins"] == {INSTALLED: True}
    assert INSTALLED in cli(claude, home, "plugin", "list").stdout


def test_installed_from_the_marketplace_the_plugin_takes_an_agent_call(
    claude: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = clone(tmp_path / "repo")
    assert "Validation passed" in cli(claude, sandbox.home, "plugin", "validate", "--strict",
                                      str(repo / ".claude-plugin" / "marketplace.json")).stdout
    cli(claude, sandbox.home, "plugin", "marketplace", "add", str(repo))
    cli(claude, sandbox.home, "plugin", "install", INSTALLED)
    listed = cli(claude, sandbox.home, "plugin", "list").stdout
    assert INSTALLED in listed and "enabled" in listed, listed
    try:
        lich = LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(sandbox.project)))
    except SetupError as error:
        pytest.skip(str(error))
    call = ToolUse("Agent", {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth.",
                             "subagent_type": "general-purpose"}, text="Delegating.")
    model = ScriptedModel([call, "Launched."], log_path=tmp_path / "api.jsonl", lifetime=300).start()
    env = {"LICH_BIN": str(lich.bin), "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0",
           "LICH_PROMPT_LANG": "en", "FAKE_LICH_STATE": str(lich.state)}
    try:
        with Tui(claude, sandbox, [], model, env_extra=env, extra_args=["--permission-mode", "default"]) as tui:
            tui.type("E2E-TRIGGER: please delegate this to a subagent.")
            tui.wait_for(re.escape(person_text("footer.workers.one")), 60)
            assert tui.exit() == 0
    finally:
        model.close()
    assert lich.calls()[0] == ["open", "--kind", "claude", "--subagent", "--prompt",
                               "Fix the auth flow in src/auth.", "--json"]
    (result,) = [r for q in model.main_requests for r in tool_results(q) if r.get("tool_use_id") == call.id]
    assert "Async agent launched successfully" in text_of(result["content"]) and not model.subagent_requests
