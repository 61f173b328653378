"""The command hook (agent_cards.hook): in process, and as the processes Claude Code starts."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from agent_cards import hook, lich_calls, rules, taken
from agent_cards.engine import ENGINE, Event, HookResult, Origin, ProcessError, ProcessResult
from agent_cards.filestore import STALE_SECONDS, FileStore, prune, session_file
from agent_cards.mod import AgentCards
from agent_cards.state import MemoryStore, ModState, Worker
from agent_cards.texts import AGENT, agent_text, person_text
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript, OpenScript, ReportScript, StopScript

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "hooks" / "agent-cards-hook"
SESSION = "5f0c2a1e-7d1b-4a8e-9c55-0c2f1b7e9d10"
LICH_SESSION = "3c4d"


# -- fixtures --------------------------------------------------------------------------------------


class HookLich(LoggedLich):
    """The fake lich behind LICH_BIN (``fake-lich``, state in FAKE_LICH_STATE), and what it was asked."""

    checkout: Path = Path()

    def script(self, **script: Any) -> None:
        """A fresh lich running this script (the asking session's checkout is the test's project)."""
        self.restart(LichScript(checkout=str(self.checkout), worktrees="/wt", **script))


@pytest.fixture
def lich(tmp_path: Path, project: Path) -> HookLich:
    try:
        logged = LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(project), worktrees="/wt"))
    except SetupError as error:
        pytest.skip(str(error))
    return HookLich(logged.bin, logged.state, logged.log, project)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "plugin-data"


@pytest.fixture
def env(tmp_path: Path, lich: HookLich, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The environment Claude Code gives a hook in the interactive screen, inside a lich session."""
    values = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CODE_SESSION_ATTENDED": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_PLUGIN_DATA": str(data_dir),
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "LICH_BIN": str(lich.bin),
        "LICH_SESSION_ID": LICH_SESSION,
        "LICH_SUBAGENT_DEPTH": "0",
        "FAKE_LICH_STATE": str(lich.state),
        "AGENT_CARDS_PYTHON": sys.executable,
    }
    for name in list(os.environ):
        if name.startswith(("CLAUDE", "LICH_", "FAKE_LICH", "AGENT_CARDS")):
            monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    yield values


def start_input(session: str = SESSION, cwd: Path | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": str(cwd or "/"),
        "hook_event_name": "SessionStart",
        "source": "startup",
        **extra,
    }


def tool_input(tool: str, inp: Mapping[str, Any], cwd: Path, *, call_id: str = "toolu_01QxW7zAB12",
               session: str = SESSION, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": dict(inp),
        "tool_use_id": call_id,
        **extra,
    }


def agent(cwd: Path, *, subagent_type: str | None = "general-purpose", **inp: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"description": "Fix the auth flow", "prompt": "Fix the auth flow.", **inp}
    if subagent_type is not None:
        body["subagent_type"] = subagent_type
    extra = {k: body.pop(k) for k in ("call_id", "agent_id", "permission_mode") if k in body}
    data = tool_input("Agent", body, cwd, **({"call_id": extra["call_id"]} if "call_id" in extra else {}))
    data.update({k: v for k, v in extra.items() if k != "call_id"})
    return data


def handle(data: Mapping[str, Any] | bytes, run: hook.Runner | None = None) -> dict[str, Any] | None:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return hook.handle(raw, os.environ) if run is None else hook.handle(raw, os.environ, run)


def reason(output: Mapping[str, Any] | None) -> str:
    assert output is not None
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    return str(specific["permissionDecisionReason"])


def state(data_dir: Path, session: str = SESSION) -> ModState:
    path = session_file(str(data_dir), session)
    assert path is not None
    return FileStore(path, report=print).get()


def started(project: Path) -> None:
    assert handle(start_input(cwd=project)) is None


# -- SessionStart: is a person at this session? ------------------------------------------------------


def test_session_start_records_an_attended_session(env: dict[str, str], project: Path, data_dir: Path) -> None:
    started(project)
    assert state(data_dir).interactive is True
    assert (data_dir / "sessions" / f"{SESSION}.json").is_file()


@pytest.mark.parametrize(
    ("attended", "entrypoint", "interactive"),
    [("0", "sdk-cli", False), ("0", "cli", False), ("1", "sdk-cli", True), ("", "cli", True), ("", "sdk-cli", False),
     ("2", "cli", False), ("true", "cli", False)],  # a value other than 1 is not a person at the screen
)
def test_session_start_reads_attended_then_the_entrypoint(
    env: dict[str, str], project: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
    attended: str, entrypoint: str, interactive: bool,
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ATTENDED", attended)
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", entrypoint)
    started(project)
    assert state(data_dir).interactive is interactive


def test_a_later_unattended_start_of_the_same_session_forgets_it_was_interactive(
    env: dict[str, str], project: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started(project)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ATTENDED", "0")  # claude -p --resume <the same session>
    assert handle(start_input(cwd=project, source="resume")) is None
    assert state(data_dir).interactive is False


def test_session_start_without_a_data_dir_or_session_id_keeps_nothing(
    env: dict[str, str], project: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert handle(start_input(session="../escape", cwd=project)) is None
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    assert handle(start_input(cwd=project)) is None
    assert not data_dir.exists()
    err = capsys.readouterr().err
    assert "session_id" in err and "CLAUDE_PLUGIN_DATA" in err


@pytest.mark.parametrize("junk", ["", "{", "[]", "7", '{"workers": 5}', '{"workers": [{"name": 3}, 1]}',
                                  '{"interactive": "yes", "lich_bin": 4}', "\x00\xff"])
def test_a_state_file_it_cannot_read_is_the_empty_state(tmp_path: Path, junk: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(junk, encoding="utf-8", errors="surrogateescape")
    lines: list[str] = []
    store = FileStore(str(path), report=lines.append)
    assert store.get().workers == () and store.get().interactive is False
    state = store.update(lambda s: s.with_worker(Worker("w-1", "W", "d", True), "/bin/lich"))
    assert FileStore(str(path), report=lines.append).get() == state
    assert lines and all("\n" not in line for line in lines)
    assert all("starting from an empty state" in line or " is not " in line for line in lines)


def test_prune_drops_long_untouched_sessions_only(tmp_path: Path) -> None:
    """Ages by the wall clock (frozen here): a session none of whose files changed for STALE_SECONDS goes."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    old, fresh, kept = folder / "old.json", folder / "fresh.json", folder / "kept.json"
    for path in (old, folder / "old.json.lock", fresh, folder / "fresh.json.lock", kept):
        path.write_text("{}")
    with freeze_time("2026-06-01 12:00:00"):
        now = time.time()
        for path in (old, folder / "old.json.lock", folder / "fresh.json.lock", kept):
            # a lock keeps its creation time; its session's file is what counts
            os.utime(path, (now - STALE_SECONDS - 1, now - STALE_SECONDS - 1))
        os.utime(fresh, (now - STALE_SECONDS + 1, now - STALE_SECONDS + 1))
        prune(str(tmp_path), str(kept))
    assert sorted(p.name for p in folder.iterdir()) == ["fresh.json", "fresh.json.lock", "kept.json"]


# -- PreToolUse: Agent, taken ----------------------------------------------------------------------


def test_a_general_purpose_call_is_taken_and_the_model_reads_where_it_runs(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    started(project)
    out = handle(agent(project))
    assert lich.calls() == [
        ["open", "--kind", "claude", "--subagent", "--prompt", "Fix the auth flow.", "--json"],
    ]
    text = reason(out)
    name = "session-2-9f81"
    assert text.startswith(agent_text(None, "hook.launched.shared", name=name))
    assert agent_text(None, "context.shared", label="Session 2", path=str(project)) in text
    assert state(data_dir).workers == (Worker(name, "Session 2", "Fix the auth flow", True),)
    assert state(data_dir).lich_bin == str(lich.bin)


def test_an_absent_subagent_type_is_general_purpose(env: dict[str, str], project: Path, lich: HookLich) -> None:
    started(project)
    text = reason(handle(agent(project, subagent_type=None)))
    assert text.startswith(agent_text(None, "hook.launched.shared", name="session-2-9f81"))
    assert len(lich.calls()) == 1


def test_an_isolated_call_reads_its_base_and_opens_a_worktree(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feat/login", str(project)], check=True)
    started(project)
    out = handle(agent(project, isolation="worktree", model="haiku"))
    branch = "subagent/fix-the-auth-flow-ab12"
    assert lich.calls() == [
        ["open", "--kind", "claude", "--subagent", "--worktree", branch, "--base", "feat/login",
         "--model", "haiku", "--prompt", "Fix the auth flow.", "--json"],
    ]
    text = reason(out)
    name = "subagent-fix-the-auth-flow-ab12-9f81"
    assert text.startswith(agent_text(None, "hook.launched.isolated", name=name) + " ")
    assert text.endswith(agent_text(None, "context.isolated", label=branch, branch=branch, path=f"/wt/{branch}"))
    assert state(data_dir).workers[0].shared is False


def test_an_isolated_call_outside_git_passes_no_base(env: dict[str, str], project: Path, lich: HookLich) -> None:
    started(project)
    reason(handle(agent(project, isolation="worktree")))
    assert lich.calls() == [
        ["open", "--kind", "claude", "--subagent", "--worktree", "subagent/fix-the-auth-flow-ab12",
         "--prompt", "Fix the auth flow.", "--json"],
    ]


def test_an_answered_open_gives_the_report_and_counts_no_worker(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    lich.script(default_open=OpenScript(delivery="answered", answer="The work is done."))
    started(project)
    text = reason(handle(agent(project)))
    assert text.startswith(agent_text(None, "hook.completed", name="session-2-9f81") + "\n\nThe work is done.\n\n")
    assert state(data_dir).workers == ()


@pytest.mark.parametrize(("status", "key"), [("unread", "deny.never_reached"), ("undelivered", "deny.never_reached"),
                                             ("stopped", "deny.unknown")])
def test_a_task_that_never_reached_the_card_is_denied(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich, status: str, key: str
) -> None:
    lich.script(default_open=OpenScript(delivery=status))
    started(project)
    assert reason(handle(agent(project))) == agent_text(None, key, label="Session 2", status=status)
    assert state(data_dir).workers == ()


def test_unanswered_is_launched_but_not_counted(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    lich.script(default_open=OpenScript(delivery="unanswered"))
    started(project)
    text = reason(handle(agent(project)))
    assert text.startswith(agent_text(None, "hook.launched.shared", name="session-2-9f81"))
    assert state(data_dir).workers == ()


def test_the_answer_follows_lich_prompt_lang(
    env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LICH_PROMPT_LANG", "pt-BR")
    started(project)
    text = reason(handle(agent(project)))
    assert agent_text("pt-BR", "context.shared", label="Session 2", path=str(project)) in text


# -- PreToolUse: Agent, left native ------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"subagent_type": "Explore"},
        {"subagent_type": "Plan"},
        {"subagent_type": "no-such-agent"},
        {"team_name": "red"},
        {"isolation": "remote"},
        {"agent_id": "a6309eb26840c8e82"},  # a subagent's own call (TAKE-ORIGIN)
    ],
)
def test_calls_that_are_not_the_mods_go_on_untouched(
    env: dict[str, str], project: Path, lich: HookLich, change: dict[str, Any]
) -> None:
    started(project)
    assert handle(agent(project, **change)) is None
    assert lich.calls() == []


@pytest.mark.parametrize(
    "unset",
    [{"CLAUDE_CODE_SESSION_ATTENDED": "0"}, {"LICH_BIN": ""}, {"LICH_SESSION_ID": ""}, {"LICH_SUBAGENT_CARDS": "off"}],
)
def test_outside_an_attended_lich_session_calls_stay_native(
    env: dict[str, str], project: Path, lich: HookLich, monkeypatch: pytest.MonkeyPatch, unset: dict[str, str]
) -> None:
    started(project)
    for name, value in unset.items():
        monkeypatch.setenv(name, value)
    assert handle(agent(project)) is None
    assert lich.calls() == []


def test_a_session_whose_start_was_never_seen_stays_native(
    env: dict[str, str], project: Path, lich: HookLich, capsys: pytest.CaptureFixture[str]
) -> None:
    assert handle(agent(project)) is None
    assert lich.calls() == []
    assert "no state file" in capsys.readouterr().err


def test_a_non_interactive_session_reads_no_state_at_all(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ATTENDED", "0")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
    assert handle(agent(project)) is None
    assert capsys.readouterr().err == ""
    assert lich.calls() == [] and not data_dir.exists()


def test_cards_off_in_a_worker_and_an_oversized_task_say_why(
    env: dict[str, str], project: Path, lich: HookLich, monkeypatch: pytest.MonkeyPatch
) -> None:
    started(project)
    big = "é" * 4097  # 8194 bytes
    assert handle(agent(project, prompt=big)) == {
        "systemMessage": person_text("toast.oversize", description="Fix the auth flow", bytes=8194, limit=8192)
    }
    monkeypatch.setenv("LICH_SUBAGENT_CARDS", "off")
    monkeypatch.setenv("LICH_SUBAGENT_DEPTH", "1")
    assert handle(agent(project)) == {"systemMessage": person_text("toast.cards_off", description="Fix the auth flow")}
    assert lich.calls() == []


def test_an_open_that_failed_runs_the_native_agent_with_a_message(
    env: dict[str, str], project: Path, lich: HookLich
) -> None:
    lich.script(default_open=OpenScript(fail="no lich is running"))
    started(project)
    assert handle(agent(project)) == {
        "systemMessage": person_text("toast.open_failed", description="Fix the auth flow",
                                     reason="lich: no lich is running")
    }


def test_a_missing_lich_binary_runs_the_native_agent(
    env: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LICH_BIN", str(tmp_path / "nowhere" / "lich"))
    started(project)
    out = handle(agent(project))
    assert out is not None and "lich failed to start" in out["systemMessage"]


def test_an_open_over_its_time_runs_natively_with_a_toast(env: dict[str, str], project: Path) -> None:
    started(project)

    def slow(argv: Sequence[str], cwd: str | None, timeout_ms: int) -> ProcessResult:
        assert timeout_ms == 120_000
        raise ProcessError("lich was still running after 120000 ms", "timeout")

    out = handle(agent(project), slow)  # an open that failed: the native agent runs (docs/decisions.md)
    assert out is not None and "hookSpecificOutput" not in out
    assert "lich timed out" in out["systemMessage"]


def test_plan_mode_leaves_the_call_to_claude_code(env: dict[str, str], project: Path, lich: HookLich) -> None:
    started(project)
    out = handle(agent(project, permission_mode="plan"))
    assert out == {"systemMessage": person_text("toast.plan_mode", description="Fix the auth flow")}
    assert lich.calls() == []


@pytest.mark.parametrize(
    ("where", "kind", "rule", "covers"),
    [
        ("project", "deny", "Agent", True),
        ("local", "ask", "Agent(general-purpose)", True),
        ("user", "ask", "Task", True),
        ("user", "deny", "Agent(*)", True),
        ("project", "deny", "Agent(Explore)", False),
        ("project", "allow", "Agent", False),
        ("project", "deny", "Bash(rm:*)", False),
    ],
)
def test_a_permission_rule_on_agent_leaves_the_call_to_claude_code(
    env: dict[str, str], project: Path, lich: HookLich, where: str, kind: str, rule: str, covers: bool
) -> None:
    folder = Path(env["HOME"]) / ".claude" if where == "user" else project / ".claude"
    folder.mkdir(parents=True)
    name = "settings.local.json" if where == "local" else "settings.json"
    (folder / name).write_text(json.dumps({"permissions": {kind: [rule]}}), encoding="utf-8")
    started(project)
    out = handle(agent(project))
    if covers:
        assert out == {"systemMessage": person_text("toast.hook_rule", description="Fix the auth flow", rule=rule)}
        assert lich.calls() == []
    else:
        reason(out)
        assert len(lich.calls()) == 1


def test_unreadable_settings_are_skipped(env: dict[str, str], project: Path, lich: HookLich) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{not json", encoding="utf-8")
    (project / ".claude" / "settings.local.json").write_text('{"permissions": ["Agent"]}', encoding="utf-8")
    started(project)
    reason(handle(agent(project)))


# -- PreToolUse: TaskStop --------------------------------------------------------------------------


def stop(cwd: Path, task_id: str, key: str = "task_id") -> dict[str, Any]:
    return tool_input("TaskStop", {key: task_id}, cwd, call_id="toolu_stop")


def test_taskstop_closes_a_shared_worker(env: dict[str, str], project: Path, data_dir: Path, lich: HookLich) -> None:
    started(project)
    reason(handle(agent(project)))
    name = state(data_dir).workers[0].name
    text = reason(handle(stop(project, name)))
    assert text == agent_text(None, "hook.stopped.shared", label="Session 2", name=name)
    assert lich.calls()[1:] == [["sessions", "--json"], ["close", name]]
    assert state(data_dir).workers == ()
    assert handle(stop(project, name)) is None  # no longer counted: Claude Code answers it


def test_taskstop_aborts_an_isolated_worker_by_its_deprecated_shell_id(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    started(project)
    reason(handle(agent(project, isolation="worktree")))
    name = state(data_dir).workers[0].name
    text = reason(handle(stop(project, name, key="shell_id")))
    assert text == agent_text(None, "hook.stopped.isolated", label="subagent/fix-the-auth-flow-ab12", name=name)
    assert lich.calls()[-1] == ["control", name, "abort"]


def test_a_refused_taskstop_keeps_the_worker(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    lich.script(stops={"session-2-9f81": StopScript(exit=1, stderr="lich: it is busy elsewhere")})
    started(project)
    reason(handle(agent(project)))
    name = state(data_dir).workers[0].name
    text = reason(handle(stop(project, name)))
    assert text == agent_text(None, "deny.stop_refused", label="Session 2", reason="lich: it is busy elsewhere")
    assert [w.name for w in state(data_dir).workers] == [name]


def test_taskstop_for_a_worker_lich_no_longer_lists_goes_to_claude_code(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    lich.script(default_open=OpenScript(report=ReportScript(after_ms=0, text="Done.")))  # answered and closed at once
    started(project)
    reason(handle(agent(project)))
    name = state(data_dir).workers[0].name
    assert handle(stop(project, name)) is None
    assert lich.calls()[-1] == ["sessions", "--json"]
    assert state(data_dir).workers == ()


def test_taskstop_for_other_ids_goes_to_claude_code(env: dict[str, str], project: Path, lich: HookLich) -> None:
    started(project)
    assert handle(stop(project, "a6309eb26840c8e82")) is None
    assert handle(tool_input("TaskStop", {}, project)) is None
    assert lich.calls() == []


# -- the same core as the mod engine's module ----------------------------------------------------------


class _Signal:
    aborted = False


class _Next:
    def __init__(self, below: Callable[[Event], Any]) -> None:
        self.below = below
        self.origin: Origin = ENGINE
        self.signal = _Signal()
        self.event = "tool.call"

    async def __call__(self, e: Event, /) -> HookResult:
        result = self.below(e)
        return dict(await result) if asyncio.iscoroutine(result) else dict(result)


class _Host:
    def __init__(self, values: Mapping[str, str], run: hook.Runner) -> None:
        self.values, self._run = values, run

    @property
    def env(self) -> _Host:
        return self

    @property
    def process(self) -> _Host:
        return self

    @property
    def ui(self) -> _Host:
        return self

    @property
    def clock(self) -> _Host:
        return self

    def get(self, name: str, /) -> str | None:
        return self.values.get(name)

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = 30_000) -> ProcessResult:
        return self._run(argv, None, timeout_ms)

    async def toast(self, text: str, /) -> None:
        return None

    def invalidate(self, event: str, /) -> None:
        return None

    def now(self) -> int:
        return 0

    def after(self, ms: int, fn: Any, /) -> None:
        return None

    def every(self, ms: int, fn: Any, /) -> None:
        return None


def _scripted(status: str, runs: list[tuple[list[str], int]], stop_exit: int = 0) -> hook.Runner:
    """A fake lich (and git) for both hosts: the open prints ``status``; a stop exits ``stop_exit``."""

    def run(argv: Sequence[str], cwd: str | None, timeout_ms: int) -> ProcessResult:
        runs.append((list(argv), timeout_ms))
        if list(argv[:2]) == ["git", "branch"]:
            return ProcessResult(0, "feat/login\n", "")
        if argv[1] == "sessions":
            return ProcessResult(0, json.dumps([{"name": "auth-fix-9f8e", "state": "running"}]) + "\n", "")
        if argv[1] in ("close", "control"):
            return ProcessResult(stop_exit, "", "" if stop_exit == 0 else "lich: it is busy elsewhere\n")
        opened = {"label": "auth-fix", "name": "auth-fix-9f8e", "path": "/wt/auth-fix",
                  "delivery": {"status": status, "answer": "All fixed." if status == "answered" else ""}}
        return ProcessResult(0, json.dumps(opened) + "\n", "")

    return run


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every decision the core gives, whichever host asked; the hook's clock stands still, as the mod's host's
    (which reads 0): frozen at the epoch, where freezegun's monotonic clock reads 0 too."""
    seen: list[object] = []

    def recording(decide: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: Any, **kwargs: Any) -> object:
            seen.append(decide(*args, **kwargs))
            return seen[-1]

        return wrapper

    monkeypatch.setattr(taken.Opening, "decide", recording(taken.Opening.decide))
    monkeypatch.setattr(taken.TakenStop, "decide", recording(taken.TakenStop.decide))
    with freeze_time("1970-01-01 00:00:00"):
        yield seen


def _mod_answer(e: Event, values: Mapping[str, str], run: hook.Runner) -> HookResult:
    mod = AgentCards(MemoryStore())
    host: Any = _Host(values, run)

    async def play() -> HookResult:
        await mod.session_start(host, {"cwd": "/", "isInteractive": True}, _Next(lambda e: {"cwd": "/"}))
        spawn = {"tool_use_id": e["tool_use_id"], "prompt": e.get("prompt"), "description": e.get("description")}

        async def beneath(_: Event) -> HookResult:
            await mod.agent_spawn(host, spawn, _Next(lambda s: {"model": "m", "agentId": "a1"}))
            return {"result": "native"}

        return await mod.agent_call(host, e, _Next(beneath))

    return asyncio.run(play())


@pytest.mark.parametrize("status", ["pending", "answered", "unread", "stopped"])
@pytest.mark.parametrize("inp", [{}, {"isolation": "worktree"}, {"model": "haiku"}])
def test_the_hook_runs_the_mods_argv_and_carries_its_answer(
    env: dict[str, str], project: Path, decisions: list[object], status: str, inp: dict[str, Any]
) -> None:
    started(project)
    data = agent(project, **inp)
    hook_runs: list[tuple[list[str], int]] = []
    mod_runs: list[tuple[list[str], int]] = []
    text = reason(handle(data, _scripted(status, hook_runs)))
    e = {**data["tool_input"], "tool": "Agent", "tool_use_id": data["tool_use_id"]}
    answer = _mod_answer(e, env, _scripted(status, mod_runs))
    assert hook_runs == mod_runs
    hook_decision, mod_decision = decisions
    assert hook_decision == mod_decision and not isinstance(hook_decision, taken.Native)
    if "deny" in answer:
        assert text == answer["deny"]
    elif answer["result"]["status"] == "completed":
        assert text.endswith("\n\n" + answer["result"]["content"][0]["text"])
    else:
        assert text.endswith(" " + answer["context"][0])


@pytest.mark.parametrize("stop_exit", [0, 1])
@pytest.mark.parametrize("inp", [{}, {"isolation": "worktree"}])
def test_the_hook_stops_a_worker_as_the_mod_does(
    env: dict[str, str], project: Path, data_dir: Path, decisions: list[object], stop_exit: int, inp: dict[str, Any]
) -> None:
    started(project)
    hook_runs: list[tuple[list[str], int]] = []
    mod_runs: list[tuple[list[str], int]] = []
    reason(handle(agent(project, **inp), _scripted("pending", hook_runs, stop_exit)))
    counted = state(data_dir)
    (worker,) = counted.workers
    hook_runs.clear()
    decisions.clear()
    text = reason(handle(stop(project, worker.name), _scripted("pending", hook_runs, stop_exit)))
    mod = AgentCards(MemoryStore(counted))
    e: Event = {"tool": "TaskStop", "task_id": worker.name, "tool_use_id": "toolu_stop"}
    host: Any = _Host(env, _scripted("pending", mod_runs, stop_exit))
    answer = asyncio.run(mod.task_stop(host, e, _Next(lambda e: {"result": "Claude Code's own"})))
    stop_argv = lich_calls.stop_argv(str(counted.lich_bin), worker)
    assert hook_runs == [(lich_calls.list_argv(counted.lich_bin), 30_000), (stop_argv, 30_000)]
    assert mod_runs == [(stop_argv, 30_000)]
    hook_decision, mod_decision = decisions
    assert hook_decision == mod_decision
    if stop_exit:
        assert text == answer["deny"] == agent_text(None, "deny.stop_refused", label=worker.label,
                                                    reason="lich: it is busy elsewhere")
        assert state(data_dir).workers == mod.store.get().workers == (worker,)
    else:
        assert answer == {"result": lich_calls.stop_result(worker.name, worker)}
        key = "hook.stopped.shared" if worker.shared else "hook.stopped.isolated"
        assert text == agent_text(None, key, label=worker.label, name=worker.name)
        assert state(data_dir).workers == mod.store.get().workers == ()


# -- input it cannot read never blocks the call ----------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"\xff\xfe", b"[1, 2]", b"null", b'{"hook_event_name": "PreToolUse"}',
     b'{"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": "x"}',
     b'{"hook_event_name": "PreToolUse", "tool_name": "TaskStop", "tool_input": null}',
     b'{"hook_event_name": "Stop", "session_id": "s"}', b'{"hook_event_name": 7}'],
)
def test_input_it_cannot_use_gets_no_decision(env: dict[str, str], raw: bytes) -> None:
    assert hook.handle(raw, os.environ) is None


# -- as a process ----------------------------------------------------------------------------------


def run_hook(data: Mapping[str, Any] | bytes, *, argv: Sequence[str] = (str(LAUNCHER),),
             extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return subprocess.run(
        list(argv), input=raw.decode("utf-8", "replace"), capture_output=True, text=True, timeout=60,
        env={**os.environ, **(extra or {})}, check=False,
    )


def assert_answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """Exit 0, no traceback, and stdout empty or one JSON object."""
    assert done.returncode == 0, done
    assert "Traceback" not in done.stderr, done.stderr
    if not done.stdout.strip():
        return None
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


def test_the_launcher_takes_an_agent_call_and_leaves_explore(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    assert assert_answer(run_hook(start_input(cwd=project))) is None
    assert state(data_dir).interactive is True
    assert assert_answer(run_hook(agent(project, subagent_type="Explore"))) is None
    assert lich.calls() == []
    out = assert_answer(run_hook(agent(project)))
    assert reason(out).startswith(agent_text(None, "hook.launched.shared", name="session-2-9f81"))
    stopped = assert_answer(run_hook(stop(project, "session-2-9f81")))
    assert reason(stopped) == agent_text(None, "hook.stopped.shared", label="Session 2", name="session-2-9f81")


@pytest.mark.parametrize(
    "argv",
    [(sys.executable, "-m", "agent_cards.hook"), (str(Path(sys.executable).parent / "agent-cards"), "hook")],
    ids=["python -m", "console script"],
)
def test_other_entry_points_answer_the_same(
    env: dict[str, str], project: Path, data_dir: Path, argv: tuple[str, ...]
) -> None:
    assert assert_answer(run_hook(start_input(cwd=project), argv=argv)) is None
    assert state(data_dir).interactive is True
    out = assert_answer(run_hook(agent(project), argv=argv))
    assert reason(out).startswith(agent_text(None, "hook.launched.shared", name="session-2-9f81"))


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"\xff\xfe\x00garbage", b"[]", b'"text"', b'{"hook_event_name": "PreToolUse", "tool_name": "Agent"}',
     b'{"hook_event_name": "Nope"}', b'{"hook_event_name": "SessionStart"}',
     json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Agent", "session_id": SESSION,
                 "tool_input": {"prompt": ["not", "text"], "description": 3}}).encode()],
)
def test_malformed_input_exits_0_without_a_traceback(env: dict[str, str], raw: bytes) -> None:
    assert assert_answer(run_hook(raw)) is None


def test_a_hook_that_cannot_even_load_never_blocks(env: dict[str, str], tmp_path: Path) -> None:
    done = run_hook(b"{}", extra={"CLAUDE_PLUGIN_ROOT": str(tmp_path), "AGENT_CARDS_PYTHON": sys.executable})
    assert done.returncode == 0 and done.stdout == "" and "could not load" in done.stderr
    missing = run_hook(b"{}", extra={"AGENT_CARDS_PYTHON": str(tmp_path / "no-python")})
    assert missing.returncode not in (0, 2)  # Claude Code reports it and lets the call go on


def test_help_and_a_terminal(env: dict[str, str]) -> None:
    done = run_hook(b"", argv=(sys.executable, "-m", "agent_cards.hook", "--help"))
    assert done.returncode == 0 and done.stdout.startswith("usage: agent-cards hook")


def test_a_corrupt_state_file_is_recovered_with_a_warning(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    assert assert_answer(run_hook(start_input(cwd=project))) is None
    path = data_dir / "sessions" / f"{SESSION}.json"
    for junk in ("{\"interactive\": tru", "[]", "\x00\x01"):
        path.write_text(junk, encoding="utf-8")
        done = run_hook(agent(project))
        assert assert_answer(done) is None  # the state is lost, so the call stays native: never blocked
        assert done.stderr.count("\n") == 1 and "set aside as" in done.stderr  # once: the file is moved
        done = run_hook(stop(project, "session-2-9f81"))
        assert assert_answer(done) is None and done.stderr == ""
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")  # deeper than json goes
    done = run_hook(start_input(cwd=project))
    assert assert_answer(done) is None and "set aside as" in done.stderr and "not a JSON object" in done.stderr
    assert state(data_dir).interactive is True
    assert len(list(path.parent.glob(f"{path.name}.unusable-*"))) == 4
    assert reason(assert_answer(run_hook(agent(project))))
    assert len(lich.calls()) == 1


def test_32_parallel_agent_calls_lose_no_worker(
    env: dict[str, str], project: Path, data_dir: Path, lich: HookLich
) -> None:
    assert assert_answer(run_hook(start_input(cwd=project))) is None
    procs = []
    for n in range(32):
        raw = json.dumps(agent(project, call_id=f"toolu_par{n:04d}", description=f"Task number {n}")).encode()
        procs.append(subprocess.Popen([str(LAUNCHER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
        assert procs[-1].stdin is not None
        procs[-1].stdin.write(raw)
        procs[-1].stdin.close()
    outputs = []
    for proc in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout is not None and proc.stderr is not None
        outputs.append(json.loads(proc.stdout.read()))
        assert proc.stderr.read() == b""
        proc.stdout.close()
        proc.stderr.close()
    assert all(reason(out) for out in outputs)
    workers = state(data_dir).workers
    assert len(workers) == 32
    assert len({w.name for w in workers}) == 32
    assert sorted(w.description for w in workers) == sorted(f"Task number {n}" for n in range(32))
    assert [p for p in (data_dir / "sessions").iterdir() if p.name.endswith(".tmp")] == []


#: Every module the hook's start-up may load, beyond what ``python -I -S`` loads itself, for the commonest
#: events: a SessionStart and an Agent call it leaves (an Explore agent). The hook runs on every one of
#: them, so its start-up is held to 3x a bare ``python -I -S -c pass`` (``python -m bench cold``): what
#: is left out here (``typing``, ``re``, ``json``, ``dataclasses``, ``subprocess``, the texts, the
#: delivery table) each costs a large part of that (``bench cold`` prints ``typing``, ``json`` and
#: ``dataclasses`` beside the floor), and is imported only by the steps of a call the mod takes.
HOOK_START_UP_MODULES = {
    "agent_cards": frozenset({
        "agent_cards", "agent_cards.hook", "agent_cards.quick_json", "agent_cards.engine", "agent_cards.record",
        "agent_cards.state", "agent_cards.filestore", "agent_cards.rules", "agent_cards.taken", "agent_cards.branch",
    }),
    "the standard library": frozenset({
        "__future__", "os", "os.path", "posixpath", "genericpath", "stat", "_stat", "fcntl", "_json",
        # contextlib.suppress and functools.cached_property, and what they import
        "contextlib", "functools", "_functools", "collections", "_collections", "_collections_abc", "itertools",
        "keyword", "operator", "_operator", "reprlib", "types",
    }),
}

#: The launcher's own start-up (hooks/agent-cards-hook), then the modules it added, on stdout.
_PROBE = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from agent_cards.hook import main\n"
    "main([])\n"
    "sys.stdout.write(' '.join(sorted(set(sys.modules) - before)))\n"
)


def test_the_hook_start_up_loads_only_the_declared_modules(tmp_path: Path, project: Path) -> None:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tmp_path), "CLAUDE_CODE_SESSION_ATTENDED": "1",
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "LICH_BIN": str(tmp_path / "no-lich"),
           "LICH_SESSION_ID": LICH_SESSION}
    loaded: set[str] = set()
    for event in (start_input(cwd=project), agent(project, subagent_type="Explore")):
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _PROBE, str(ROOT)], input=json.dumps(event),
                              env=env, capture_output=True, text=True, check=True, timeout=60)
        assert done.stderr == ""  # no decision and no warning: the event went the common way
        loaded |= set(done.stdout.split())
    own = {m for m in loaded if m.split(".")[0] == "agent_cards"}
    assert own == HOOK_START_UP_MODULES["agent_cards"]  # every one declared, and the list holds no other
    standard = HOOK_START_UP_MODULES["the standard library"]
    assert loaded - own <= standard, f"not declared: {sorted(loaded - own - standard)}"


def test_the_command_hooks_file_runs_the_launcher_for_the_events_it_handles() -> None:
    """``hooks/command-hooks.json``: the entries to copy into a hooks file of one's own (the plugin installs
    the module instead: docs/claude-code-plugin.md)."""
    config = json.loads((ROOT / "hooks" / "command-hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(config) == {"SessionStart", "PreToolUse"}
    assert sorted(entry["matcher"] for entry in config["PreToolUse"]) == ["Agent", "TaskStop"]
    for entries in config.values():
        for entry in entries:
            for command in entry["hooks"]:
                assert command["type"] == "command"
                assert [command["command"], *command["args"]] == ["sh", "${CLAUDE_PLUGIN_ROOT}/hooks/agent-cards-hook"]
    agent_timeout = next(e for e in config["PreToolUse"] if e["matcher"] == "Agent")["hooks"][0]["timeout"]
    assert agent_timeout * 1000 > 120_000 + 30_000  # the open's two minutes, after git's own limit
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "agent-cards"


def test_a_broken_answer_after_lich_has_the_task_still_denies(
    env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started(project)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("slot")

    monkeypatch.setattr("agent_cards.delivery.answer", broken)
    text = reason(handle(agent(project)))
    assert text == AGENT["deny.unknown"].format(label="Session 2", status="pending")


# -- a state file it cannot use --------------------------------------------------------------------


def _session_path(data_dir: Path) -> Path:
    return data_dir / "sessions" / f"{SESSION}.json"


def _asides(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.unusable-*"))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "deep", "huge"])
def test_an_unusable_state_file_is_set_aside_once_and_rebuilt_without_blocking(
    env: dict[str, str], project: Path, data_dir: Path, kind: str
) -> None:
    path = _session_path(data_dir)
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)  # a blocking open would hang every event: run_hook's timeout would fail the test
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    else:
        with path.open("wb") as fh:
            fh.truncate(4 << 20)
    done = run_hook(agent(project))
    assert done.returncode == 0 and assert_answer(done) is None  # native: the state is lost, never blocked
    assert done.stderr.count("\n") == 1 and "set aside as" in done.stderr
    assert len(_asides(path)) == 1
    assert assert_answer(run_hook(start_input(cwd=project))) is None  # SessionStart rebuilds it
    assert path.is_file() and not path.is_symlink() and state(data_dir).interactive is True
    assert len(_asides(path)) == 1


def test_an_unusable_lock_file_is_set_aside(env: dict[str, str], project: Path, data_dir: Path) -> None:
    lock = Path(str(_session_path(data_dir)) + ".lock")
    lock.mkdir(parents=True)
    done = run_hook(start_input(cwd=project))
    assert done.returncode == 0 and "lock file" in done.stderr and "set aside" in done.stderr
    assert state(data_dir).interactive is True


def test_a_field_of_the_wrong_type_is_warned_about(
    env: dict[str, str], project: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _session_path(data_dir)
    path.parent.mkdir(parents=True)
    path.write_text('{"interactive": "yes", "workers": [{"name": "w-1", "shared": "no"}]}', encoding="utf-8")
    assert handle(agent(project)) is None  # "yes" is not true: not interactive, the call stays native
    err = capsys.readouterr().err
    assert "interactive is str, not true or false" in err and "workers[0].shared is not true or false" in err
    assert _asides(path) == []  # readable: only warned about
    assert state(data_dir).workers[0].shared is True


@pytest.mark.parametrize("prompt", [["Fix", "it"], None, float("nan"), 7, {"text": "x"}])
def test_an_agent_call_whose_prompt_is_not_text_is_left_to_claude_code_before_anything_runs(
    env: dict[str, str], project: Path, prompt: object
) -> None:
    started(project)
    ran: list[Sequence[str]] = []

    def run(argv: Sequence[str], cwd: str | None, timeout_ms: int) -> ProcessResult:
        ran.append(argv)
        raise AssertionError("nothing may run")

    data = agent(project)
    data["tool_input"]["prompt"] = prompt
    assert handle(data, run) is None and ran == []
    facts = rules.Facts({"prompt": prompt, "description": "d"}, ENGINE, True, hook.Environ({}))
    leaving = rules.first_leaving(rules.RULES, facts)
    assert leaving is not None and leaving.clause == "TAKE-PROMPT"
