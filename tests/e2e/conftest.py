"""End-to-end tier: the real Claude Code CLI, offline, against a scripted fake API.

Skipped when ``AGENT_CARDS_E2E=0``, or when npm is missing and the CLI is not cached. The build is the
pinned one unless ``AGENT_CARDS_CLAUDE`` names a version, a dist-tag or a path.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from agent_cards_claude_driver.install import check_choice, choice, ensure_claude, is_available  # noqa: E402
from agent_cards_claude_driver.model_api import Reply, ScriptedModel  # noqa: E402
from agent_cards_claude_driver.sandbox import Sandbox  # noqa: E402

_HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end tests driving the real Claude Code CLI offline")


def _skip_reason() -> str | None:
    if os.environ.get("AGENT_CARDS_E2E") == "0":
        return "e2e tier disabled (AGENT_CARDS_E2E=0)"
    problem = check_choice(choice())
    if problem:
        return problem
    if shutil.which("npm") is None and not is_available():
        return f"npm not found and Claude Code {choice()} is not cached: cannot install the CLI"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _skip_reason()
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


# -- fixtures -------------------------------------------------------------------


@pytest.fixture(scope="session")
def claude() -> Path:
    """Path of the chosen CLI binary (the pinned one by default), installed into the cache on first use."""
    return ensure_claude()


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """A scratch HOME (seeded for the TUI) and a project dir that is a git repo."""
    box = Sandbox.create(tmp_path / "sandbox")
    try:
        yield box
    finally:
        box.cleanup()


ModelFactory = Callable[..., ScriptedModel]


@pytest.fixture
def fake_api(tmp_path: Path) -> Iterator[ModelFactory]:
    """Factory: ``fake_api(replies, subagent_replies=...)`` returns a started fake API."""
    started: list[ScriptedModel] = []

    def make(replies: Sequence[Reply] = (), *, subagent_replies: Sequence[Reply] = ()) -> ScriptedModel:
        log = tmp_path / f"api-{len(started)}.jsonl"
        model = ScriptedModel(replies, subagent_replies=subagent_replies, log_path=log, lifetime=300).start()
        started.append(model)
        return model

    try:
        yield make
    finally:
        for model in started:
            model.close()


def build_command_hook_plugin(folder: Path) -> Path:
    """The command hook as a plugin of its own, as a person would make one: a copy of this repository's
    ``.claude-plugin/plugin.json``, ``agent_cards/`` and ``hooks/agent-cards-hook``, with
    ``hooks/command-hooks.json`` as its ``hooks/hooks.json`` (the repository's own hooks file installs the
    module). A plugin, not the settings' hooks: the hook keeps its state under ``CLAUDE_PLUGIN_DATA``, which
    Claude Code sets only for a plugin's hooks. Same name as the repository's plugin, so the same data folder.
    """
    (folder / "hooks").mkdir(parents=True)
    shutil.copytree(_ROOT / ".claude-plugin", folder / ".claude-plugin",
                    ignore=shutil.ignore_patterns("types"))
    shutil.copytree(_ROOT / "agent_cards", folder / "agent_cards", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_ROOT / "hooks" / "agent-cards-hook", folder / "hooks" / "agent-cards-hook")
    shutil.copy(_ROOT / "hooks" / "command-hooks.json", folder / "hooks" / "hooks.json")
    return folder


@pytest.fixture
def command_hook_plugin(tmp_path: Path) -> Path:
    """A fresh plugin folder holding the command hook (:func:`build_command_hook_plugin`)."""
    return build_command_hook_plugin(tmp_path / "command-hook-plugin")


@dataclass(frozen=True)
class ProbePlugin:
    """A throwaway plugin whose PreToolUse(Agent) hook logs what it saw."""

    dir: Path
    log: Path
    name: str

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]


PROBE_ENV = ("CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PLUGIN_DATA")


def write_probe(root: Path, output: dict[str, Any], name: str = "e2e-probe") -> ProbePlugin:
    plugin = root / name
    (plugin / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (plugin / "hooks").mkdir(exist_ok=True)
    log = root / f"{name}.log.jsonl"
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "0.0.1", "description": "e2e probe plugin"}),
        encoding="utf-8",
    )
    hook = {
        "type": "command",
        "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/probe.py"',
        "timeout": 30,
    }
    (plugin / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Agent", "hooks": [hook]}]}}),
        encoding="utf-8",
    )
    script = f"""\
        import json, os, sys
        raw = sys.stdin.read()
        try:
            stdin = json.loads(raw)
        except ValueError:
            stdin = raw
        env = {{k: os.environ.get(k) for k in {PROBE_ENV!r}}}
        with open({str(log)!r}, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({{"stdin": stdin, "env": env}}) + "\\n")
        print(json.dumps({output!r}))
        """
    (plugin / "hooks" / "probe.py").write_text(textwrap.dedent(script), encoding="utf-8")
    return ProbePlugin(plugin, log, name)


def deny_output(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


@pytest.fixture
def probe_plugin(tmp_path: Path) -> Callable[..., ProbePlugin]:
    """Factory: ``probe_plugin(deny="reason")`` denies every Agent call; ``probe_plugin()``
    prints ``{}`` (no decision)."""

    def make(deny: str | None = None, name: str = "e2e-probe") -> ProbePlugin:
        output = deny_output(deny) if deny is not None else {}
        return write_probe(tmp_path / "plugins", output, name)

    return make


@pytest.fixture
def timings(capsys: pytest.CaptureFixture[str]) -> Iterator[list[str]]:
    """Wall times a test appends, printed past pytest's capture so that every run reports them."""
    lines: list[str] = []
    yield lines
    with capsys.disabled():
        for line in lines:
            print(f"\n[e2e timing] {line}")
