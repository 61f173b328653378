"""The real runner without Claude Code, tmux or a network: its pure readers (``mode_label``, ``in_mode``,
which call a dialog asks about), the scenario's wall clock, the files it writes before Claude Code starts (the
plugins, the wrappers, the environment, the project's settings) and the files it reads back afterwards (the
wrappers' runs, the session hosts' start files, the bridge's log); then its driving, with stand-ins: a Tui that
shows recorded screens and keeps every key, a model that says which steps it served and which results it read,
a sandbox, and a clock that moves only when a wait passes.

Each test builds its :class:`Plan` by hand from a few steps, so that what it asserts is the runner's own doing,
not a scenario file's. Nothing sleeps: every wait the runner makes passes at once on the stand-in clock, and
is kept, so that how long the runner waited is asserted too."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_cards.record import replace
from agent_cards_claude_driver.model_api import RecordedRequest
from agent_cards_conformance import real
from agent_cards_conformance.extract import Evidence, Request, RunRecord
from agent_cards_conformance.plan import OPEN_TIMEOUT_MS, Plan, RealGit, RealPermission
from agent_cards_conformance.real import RealRunner, _WallClock
from agent_cards_simulator.lich.install import fake_lich_program
from agent_cards_simulator.lich.scripts import LichScript, OpenScript
from agent_cards_simulator.scenario import steps
from agent_cards_simulator.scenario.model import DEFAULT_ENV, Scenario, ScenarioSession, Step

# -- building a runner ----------------------------------------------------------------------------------


def call(n: int, description: str = "", *, lich: OpenScript | None = None, origin: str = "engine") -> steps.ToolCall:
    """An Agent call with the id ``toolu_000N`` and the prompt ``Task N``."""
    tool_input: dict[str, Any] = {"prompt": f"Task {n}"}
    if description:
        tool_input["description"] = description
    return steps.ToolCall("Agent", tool_input, f"toolu_{n:04d}", origin=origin, lich=lich)


def scenario(*given: Step, env: dict[str, str] | None = None, lich: LichScript | None = None) -> Scenario:
    session = ScenarioSession(env=dict(DEFAULT_ENV) if env is None else env)
    return Scenario(file="unit.yaml", title="unit", clauses=(), session=session, lich=lich or LichScript(),
                    steps=given)


def make_plan(*given: Step, env: dict[str, str] | None = None, lich: LichScript | None = None,
              **changes: Any) -> Plan:
    made = Plan(scenario=scenario(*given, env=env, lich=lich), permission=RealPermission(), git=RealGit(), end_ms=0)
    return replace(made, **changes) if changes else made


def runner(folder: Path, *given: Step, env: dict[str, str] | None = None, lich: LichScript | None = None,
           **changes: Any) -> RealRunner:
    return RealRunner(make_plan(*given, env=env, lich=lich, **changes), Path("claude"), folder)


class FakeTime:
    """Stands for the ``time`` module inside the runner: it moves only when told to (or when a wait passes)."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return round(self.now * 1e9)


class Ticking(threading.Event):
    """A stop event whose waits pass at once on the stand-in clock, each kept; it sets itself after
    ``limit`` waits, so that a loop that would never end stops (and says so)."""

    def __init__(self, clock: FakeTime, limit: int = 10_000, on_wait: Callable[[int], object] | None = None) -> None:
        super().__init__()
        self.clock, self.limit, self.on_wait = clock, limit, on_wait
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if timeout is not None:
            self.clock.now = round(self.clock.now + timeout, 6)
        if self.on_wait is not None:
            self.on_wait(len(self.waits))
        if len(self.waits) >= self.limit:
            self.set()
        return self.is_set()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    here = FakeTime()
    monkeypatch.setattr(real, "time", here)
    return here


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def q(path: Path | str) -> str:
    return shlex.quote(str(path))


# -- the screen's readers ------------------------------------------------------------------------------


@pytest.mark.parametrize(("screen", "label"), [
    ("  ⏵⏵ accept edits on (shift+tab to cycle)", "accept edits on"),
    ("  ⏸ plan mode on (shift+tab to cycle)", "plan mode on"),
    ("plan mode on\n…\n  ⏵⏵ bypass permissions on", "bypass permissions on"),  # the footer's, the last one
    ("  ⏵ auto mode on · lich: 1 worker", "auto mode on"),
    ("  ? for shortcuts", None),
    ("the plan mode only", None),
])
def test_the_mode_label_is_the_last_one_on_the_screen(screen: str, label: str | None) -> None:
    assert real.mode_label(screen) == label


@pytest.mark.parametrize(("screen", "wanted", "shown"), [
    ("  ⏸ plan mode on", "plan", True),
    ("  ⏵⏵ accept edits on", "plan", False),
    ("  manual mode on", "plan", False),
    ("  ⏵⏵ accept edits on", "acceptEdits", True),
    ("  ⏵ auto mode on", "auto", True),
    ("  ? for shortcuts", "default", True),  # 2.1.328: the default mode draws no label
    ("  manual mode on", "default", True),  # 2.1.332 labels it
    ("  ⏸ plan mode on", "default", False),
    ("  ⏵ auto mode on", "default", False),  # auto mode has a label of its own
    ("  manual mode on · ⏸ plan mode on", "default", True),
])
def test_a_mode_is_shown_by_its_label_and_the_default_one_by_its_own_or_none(
        screen: str, wanted: str, shown: bool) -> None:
    assert real.in_mode(screen, wanted) is shown


CALLS = (call(1, "Fix the login bug"), call(2, "Fix the logout bug"), call(3))


@pytest.mark.parametrize(("named", "asks", "asked"), [
    ("Fix the logout bug", {"toolu_0001": True, "toolu_0002": True}, "toolu_0002"),
    ("Fix the log…", {"toolu_0002": True}, "toolu_0002"),
    ("Fix the log …", {"toolu_0001": True, "toolu_0002": True}, "toolu_0001"),  # cut after a space
    ("Fix the logo…", {"toolu_0001": True, "toolu_0002": True}, "toolu_0002"),  # not the first still asked
    ("Fix the logo", {"toolu_0001": True, "toolu_0002": True}, "toolu_0001"),  # cut without "…": no match, in order
    ("Fix the logout bug", {"toolu_0003": True, "toolu_0001": False}, "toolu_0001"),  # answered already: in order
    ("Mend…", {"toolu_0002": True, "toolu_0003": True}, "toolu_0002"),  # names none waiting
    ("", {"toolu_0003": True}, "toolu_0003"),  # the call without a description is the first still asked
])
def test_a_dialog_asks_about_the_waiting_call_its_card_names(named: str, asks: dict[str, bool], asked: str) -> None:
    assert real._asked_call(named, CALLS, asks) == asked


def test_a_card_that_names_nothing_is_not_the_call_without_a_description() -> None:
    """An empty name matches no description, even an empty one: the first call still asked is taken."""
    calls = (call(1, "First"), call(2))
    assert real._asked_call("", calls, {"toolu_0001": True, "toolu_0002": True}) == "toolu_0001"
    assert real._asked_call("…", calls, {"toolu_0001": True, "toolu_0002": True}) == "toolu_0001"


class Screens:
    """A Tui as the screen readers use it: the screen now, changed by hand."""

    def __init__(self, screen: str) -> None:
        self.now = screen

    def screen(self) -> str:
        return self.now


def test_a_mode_moved_and_a_screen_changed_are_read_from_the_screen_each_time() -> None:
    tui = Screens("  ⏸ plan mode on · esc to interrupt")
    moved = real._mode_moved(tui, "plan mode on")  # type: ignore[arg-type]
    changed = real._changed(tui, tui.now)  # type: ignore[arg-type]
    assert (moved(), changed()) == (False, False)
    tui.now = "  ⏸ plan mode on · lich: 1 worker"
    assert (moved(), changed()) == (False, True)
    tui.now = "  ⏵⏵ accept edits on"
    assert (moved(), changed()) == (True, True)
    tui.now = "  ? for shortcuts"
    assert real._mode_moved(tui, None)() is False  # type: ignore[arg-type]
    assert real._mode_moved(tui, "plan mode on")() is True  # type: ignore[arg-type]


def _recorded(body: Any, at: float = 12.5) -> RecordedRequest:
    return RecordedRequest(method="POST", path="/v1/messages", headers={}, body=body, kind="main", time=at)


@pytest.mark.parametrize(("body", "messages"), [
    ({"system": "You are Claude Code", "tools": [{"name": "Agent"}], "messages": [{"role": "user", "content": "Go"}]},
     [{"role": "user", "content": "Go"}]),
    ({"messages": None}, []),
    ({"system": "x"}, []),
    ("not json", []),
    (None, []),
])
def test_a_request_keeps_its_time_and_conversation_only(body: Any, messages: list[Any]) -> None:
    assert real._request(_recorded(body)) == Request(12.5, {"messages": messages})


def test_a_file_read_is_its_text_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "out").write_bytes(b"caf\xc3\xa9 \xff")
    assert real._read(tmp_path / "out") == "café \ufffd"  # a broken byte does not lose the rest
    assert real._read(tmp_path / "missing") == ""
    assert real._read(tmp_path) == ""  # a folder: no text either


def test_a_written_file_gets_its_folders_its_text_and_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "run.sh"
    assert real._write(path, "#!/bin/sh\n", 0o700) == path
    assert (path.read_text(encoding="utf-8"), mode(path)) == ("#!/bin/sh\n", 0o700)
    plain = real._write(tmp_path / "c" / "plain.txt", "text")
    assert plain == tmp_path / "c" / "plain.txt" and plain.read_text(encoding="utf-8") == "text"


def test_the_interpreter_is_the_one_a_launcher_ends_in(tmp_path: Path) -> None:
    """A launcher (a shell script standing for pyenv's shim) is not the interpreter that needs no PATH; one
    that prints nothing leaves the name as given."""
    launcher = real._write(tmp_path / "python3", f"#!/bin/sh\nexec {q(sys.executable)} \"$@\"\n", 0o755)
    assert real._interpreter(str(launcher)) == sys.executable
    silent = real._write(tmp_path / "silent", "#!/bin/sh\nexit 0\n", 0o755)
    assert real._interpreter(str(silent)) == str(silent)


def _plugin_files(folder: Path, manifest: bool = True, hook: bool = True) -> Path:
    folder.mkdir()
    if manifest:
        real._write(folder / ".claude-plugin" / "plugin.json", "{}")
    if hook:
        real._write(folder / "hooks" / "agent-cards.js", "")
    return folder


@pytest.mark.parametrize(("root", "here", "found"), [
    ((True, True), (True, True), "root"),
    ((True, False), (True, True), "here"),  # the checkout lacks the hook: the clone it runs from
    ((False, True), (True, True), "here"),
    ((True, False), (False, True), None),  # each has only one of the two files
    ((False, False), (False, False), None),
])
def test_the_plugins_files_are_the_checkouts_else_the_current_clones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: tuple[bool, bool], here: tuple[bool, bool],
        found: str | None) -> None:
    monkeypatch.setattr(real, "ROOT", _plugin_files(tmp_path / "root", *root))
    monkeypatch.chdir(_plugin_files(tmp_path / "here", *here))
    assert real.plugin_folder() == (None if found is None else tmp_path / found)


# -- the scenario's wall clock -----------------------------------------------------------------------------


def test_the_wall_clock_counts_ms_from_its_first_start(clock: FakeTime) -> None:
    wall = _WallClock()
    assert (wall.t0, wall.ms(990.0), wall.at(1500)) == (None, 0, 1_000.0)  # not started: now, and 0 ms
    wall.start()
    clock.now = 1_005.0
    wall.start()  # a second start moves nothing
    assert wall.t0 == 1_000.0
    assert [wall.ms(at) for at in (1_000.0, 1_000.0004, 1_000.0006, 1_002.5, 999.0)] == [0, 0, 1, 2500, 0]
    assert wall.at(1500) == 1_001.5


def test_the_wall_clock_lets_time_pass_only_up_to_the_moment_asked(clock: FakeTime) -> None:
    wall = _WallClock()
    stop = Ticking(clock)
    wall.wait_until(5_000, stop)
    assert stop.waits == []  # not started: nothing to wait for
    wall.start()
    clock.now = 1_002.0
    wall.wait_until(5_000, stop)
    assert stop.waits == [3.0]
    wall.wait_until(1_000, stop)  # already past
    wall.wait_until(2_000, stop)  # exactly now
    assert stop.waits == [3.0]
    clock.now = 1_004.5
    wall.wait_until(5_000, stop)  # less than a second left
    assert stop.waits == [3.0, 0.5]


# -- what the runner sets up --------------------------------------------------------------------------------


def test_a_runner_keeps_each_file_of_its_run_in_its_own_folder(tmp_path: Path) -> None:
    run = runner(tmp_path, steps.CallStep((call(1),)), steps.Errands("tidy"), steps.CallStep((call(2), call(3))))
    assert (run.lich_bin, run.runs, run.boots, run.state) == (
        tmp_path / "lich" / "bin" / "lich", tmp_path / "runs", tmp_path / "boots", tmp_path / "lich" / "state")
    assert (run.bridge_log, run.module, run.calls_file, run.errands) == (
        tmp_path / "bridge.jsonl", tmp_path / "plugin" / "hooks" / "agent-cards.js", tmp_path / "lich" / "calls.json",
        tmp_path / "errands.txt")
    assert (run.spawn_file, run.git_hold, run.git_release) == (
        tmp_path / "spawn.json", tmp_path / "git-hold", tmp_path / "git-release")
    assert run.call_steps == {1: (call(1),), 2: (call(2), call(3))}
    assert run.with_errands and not runner(tmp_path, steps.CallStep((call(1),))).with_errands
    assert (run.marks, run.remarks, run.prompts, run.notes, run.dialogs, run.plugin_answers) == ([], [], [], [], {}, {})
    assert run.clock.t0 is None and not run.stop.is_set()


def test_the_plugin_is_the_checkouts_files_and_the_installed_package(tmp_path: Path) -> None:
    source = real.plugin_folder()
    assert source is not None
    plugin = runner(tmp_path)._plugin()
    assert plugin == tmp_path / "plugin"
    manifest = plugin / ".claude-plugin" / "plugin.json"
    assert manifest.read_bytes() == (source / ".claude-plugin" / "plugin.json").read_bytes()
    assert not (plugin / ".claude-plugin" / "types").exists()  # the types are the editor's, not the engine's
    for name in ("hooks.json", "agent-cards.js"):
        assert (plugin / "hooks" / name).read_bytes() == (source / "hooks" / name).read_bytes()
    assert sorted(p.name for p in (plugin / "hooks").iterdir()) == ["agent-cards.js", "hooks.json"]
    assert (plugin / "agent_cards").is_symlink() and (plugin / "agent_cards").readlink() == real.MOD


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_stand_in_status_plugin_draws_the_errands_and_starts_with_none(tmp_path: Path) -> None:
    run = runner(tmp_path, steps.Errands("tidy"))
    plugin = run._status_plugin()
    assert plugin == tmp_path / "status"
    assert _json(plugin / ".claude-plugin" / "plugin.json") == {
        "name": "conform-status", "version": "0.0.1", "description": "draws lich's errands"}
    assert _json(plugin / "hooks" / "hooks.json") == {"modules": ["./status.js"]}
    module = (plugin / "hooks" / "status.js").read_text(encoding="utf-8")
    assert module == real._STATUS_MODULE
    assert "$.env.get('AGENT_CARDS_CONFORM_ERRANDS')" in module and "ERRANDS_ENV" not in module
    assert "modes: [...e.props.modes, 'lich: ' + errands]" in module
    assert run.errands.read_text(encoding="utf-8") == ""


def test_the_stand_in_plugin_that_raises_a_call_is_named_as_the_scenarios_origin(tmp_path: Path) -> None:
    plugin = runner(tmp_path)._spawning_plugin("helper")
    assert plugin == tmp_path / "plugin-helper"
    assert _json(plugin / ".claude-plugin" / "plugin.json") == {
        "name": "helper", "version": "0.0.1", "description": "raises an Agent call of its own"}
    assert _json(plugin / "hooks" / "hooks.json") == {"modules": ["./spawn.js"]}
    module = (plugin / "hooks" / "spawn.js").read_text(encoding="utf-8")
    assert module == real._SPAWN_MODULE
    assert "$.env.get('AGENT_CARDS_CONFORM_SPAWN')" in module and "SPAWN_ENV" not in module
    assert "$.agent.call({ tool: 'Agent', input: asked.input })" in module


def test_the_deny_hook_plugin_answers_every_agent_call_deny_with_the_reason(tmp_path: Path) -> None:
    plugin = runner(tmp_path)._hook_deny_plugin("Blocked by policy")
    assert plugin == tmp_path / "deny-hook"
    assert _json(plugin / ".claude-plugin" / "plugin.json") == {
        "name": "conform-deny", "version": "0.0.1", "description": "denies every Agent call"}
    script = plugin / "hooks" / "deny.sh"
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                  "permissionDecisionReason": "Blocked by policy"}}
    assert script.read_text(encoding="utf-8") == f"#!/bin/sh\ncat > /dev/null\nprintf '%s\\n' {q(json.dumps(out))}\n"
    assert mode(script) == 0o755
    assert _json(plugin / "hooks" / "hooks.json") == {"hooks": {"PreToolUse": [
        {"matcher": "Agent", "hooks": [{"type": "command", "command": q(script), "timeout": 30}]}]}}


def _wrapper(guard: str, runs: Path, hold: str, env: str, program: str) -> str:
    """The wrapper script as a reader expects it, line by line."""
    return "\n".join([
        "#!/bin/sh", guard, f"d={q(runs)}", "n=$(date +%s%N)-$$", "printf '%s\\037' \"$@\" > \"$d/$n.argv\"",
        f"{hold}{env} {program} \"$@\" > \"$d/$n.out\" 2> \"$d/$n.err\"", "rc=$?",
        "printf '%s %s' \"$rc\" \"$(date +%s%N)\" > \"$d/$n.rc\"", "cat \"$d/$n.out\"", "cat \"$d/$n.err\" >&2",
        "exit $rc", ""])


def _git_guard() -> str:
    return f'[ -n "$CLAUDE_PLUGIN_ROOT" ] || exec {q(shutil.which("git") or "git")} "$@"'


def test_the_wrappers_log_each_run_of_lich_and_of_the_mods_git(tmp_path: Path) -> None:
    run = runner(tmp_path, env={**DEFAULT_ENV, "LICH_BIN": "/usr/local/bin/lich"})
    assert run._wrappers() == tmp_path / "gitbin"
    assert sorted(p.name for p in run.runs.iterdir()) == ["git", "lich"] and run.boots.is_dir()
    env = " ".join([f"FAKE_LICH_STATE={tmp_path}/lich/state", "FAKE_LICH_REAL_SLEEP=1",
                    f"FAKE_LICH_CALLS={tmp_path}/lich/calls.json", "FAKE_LICH_ARGV0=/usr/local/bin/lich"])
    path = f"PATH={q(os.environ.get('PATH', os.defpath))}; export PATH"
    assert run.lich_bin.read_text(encoding="utf-8") == _wrapper(path, tmp_path / "runs" / "lich", "", f"env {env}",
                                                                q(fake_lich_program()))
    git = tmp_path / "gitbin" / "git"
    assert git.read_text(encoding="utf-8") == _wrapper(_git_guard(), tmp_path / "runs" / "git", "", "",
                                                       q(shutil.which("git") or "git"))
    python = tmp_path / "python"
    assert python.read_text(encoding="utf-8") == (
        f"#!/bin/sh\nf=$(mktemp {q(run.boots)}/boot.$(date +%s%N).XXXXXX)\ncat > \"$f\"\n"
        f"exec  {q(shutil.which('python3') or 'python3')} \"$@\" < \"$f\"\n")
    assert [mode(p) for p in (run.lich_bin, git, python)] == [0o755, 0o755, 0o755]
    assert not (tmp_path / "git-refuses").exists() and not (tmp_path / "no-git").exists()


def test_lichs_wrapper_names_lich_by_its_bare_name_when_the_scenario_names_none(tmp_path: Path) -> None:
    run = runner(tmp_path / "run", env={})  # a folder not made yet: the wrappers make it
    run._wrappers()
    assert " FAKE_LICH_ARGV0=lich " in run.lich_bin.read_text(encoding="utf-8")


@pytest.mark.parametrize(("git", "refuses"), [
    (RealGit(mode="refuses", exit=128, stderr="fatal: detected dubious ownership in 'a b'\n"), True),
    (RealGit(mode="none", exit=128, stderr="fatal: not a git repository (or any parent up to mount point /)\n"),
     True),
    (RealGit(mode="none"), False),  # git's own words: the real git, in a project that is no repository
    (RealGit(mode="detached"), False),
])
def test_the_mods_git_answers_as_the_scenario_scripts_its_failure(tmp_path: Path, git: RealGit, refuses: bool) -> None:
    run = runner(tmp_path, git=git)
    run._wrappers()
    refusing = tmp_path / "git-refuses"
    program = q(refusing) if refuses else q(shutil.which("git") or "git")
    assert (tmp_path / "gitbin" / "git").read_text(encoding="utf-8") == _wrapper(
        _git_guard(), tmp_path / "runs" / "git", "", "", program)
    assert refusing.exists() is refuses
    if refuses:
        assert refusing.read_text(encoding="utf-8") == f"#!/bin/sh\nprintf '%s' {q(git.stderr)} >&2\nexit 128\n"
        assert mode(refusing) == 0o755


def test_the_mods_git_read_an_esc_lands_in_is_held_once_per_argv(tmp_path: Path) -> None:
    run = runner(tmp_path, esc_in_git={1: ("rev-parse", "--abbrev-ref", "HEAD"), 2: ("branch", "--show-current"),
                                       3: ("rev-parse", "--abbrev-ref", "HEAD")})
    run._wrappers()
    flag, fifo = q(tmp_path / "git-hold"), q(tmp_path / "git-release")
    holds = [
        f"if [ \"$*\" = {q(argv)} ] && mv {flag} {flag}.taken 2>/dev/null; then\n: > \"$d/$n.held\"\n"
        f"read _ < {fifo}\nprintf '%s' \"$(date +%s%N)\" > \"$d/$n.held\"\nfi\n"
        for argv in ("rev-parse --abbrev-ref HEAD", "branch --show-current")]
    assert (tmp_path / "gitbin" / "git").read_text(encoding="utf-8") == _wrapper(
        _git_guard(), tmp_path / "runs" / "git", "".join(holds), "", q(shutil.which("git") or "git"))


def test_with_git_missing_the_session_host_starts_with_a_path_of_no_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(real, "_interpreter", lambda python: f"/resolved{python}")  # a launcher needs a PATH
    run = runner(tmp_path, git=RealGit(mode="missing"))
    run._wrappers()
    assert (tmp_path / "no-git").is_dir()
    python = "/resolved" + (shutil.which("python3") or "python3")
    env = f"{q(shutil.which('env') or '/usr/bin/env')} PATH={q(tmp_path / 'no-git')}"
    assert (tmp_path / "python").read_text(encoding="utf-8") == (
        f"#!/bin/sh\nf=$(mktemp {q(run.boots)}/boot.$(date +%s%N).XXXXXX)\ncat > \"$f\"\n"
        f"exec {env} {q(python)} \"$@\" < \"$f\"\n")


@pytest.mark.parametrize(("found", "used"), [("/opt/tools/env", "/opt/tools/env"), (None, "/usr/bin/env")])
def test_the_session_host_is_started_by_the_env_on_path_else_the_usual_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, found: str | None, used: str) -> None:
    which = shutil.which
    monkeypatch.setattr(real, "_interpreter", lambda python: python)
    monkeypatch.setattr(shutil, "which", lambda name: found if name == "env" else which(name))
    run = runner(tmp_path, git=RealGit(mode="missing"))
    run._wrappers()
    assert f"\nexec {used} PATH=" in (tmp_path / "python").read_text(encoding="utf-8")


def test_the_environment_names_the_runs_own_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    run = runner(tmp_path, steps.Errands("tidy"), env={**DEFAULT_ENV, "LICH_BIN": "/opt/lich/bin/lich"},
                 plugin_calls={1: "helper"})
    assert run._env(tmp_path / "gitbin") == {
        "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0", "LICH_PORT": "47999", "LICH_TOKEN": "tok",
        "LICH_BIN": str(tmp_path / "lich" / "bin" / "lich"),
        "AGENT_CARDS_BRIDGE_LOG": str(tmp_path / "bridge.jsonl"),
        "AGENT_CARDS_CONFORM_ERRANDS": str(tmp_path / "errands.txt"),
        "AGENT_CARDS_CONFORM_SPAWN": str(tmp_path / "spawn.json"),
        "AGENT_CARDS_PYTHON": str(tmp_path / "python"),
        "PATH": f"{tmp_path / 'gitbin'}:/usr/bin:/bin",
    }


def test_the_environment_without_lich_errands_or_plugin_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/bin")
    run = runner(tmp_path, env={"LICH_PORT": "1"})
    assert run._env(tmp_path / "g") == {"LICH_PORT": "1", "AGENT_CARDS_BRIDGE_LOG": str(tmp_path / "bridge.jsonl"),
                                        "AGENT_CARDS_PYTHON": str(tmp_path / "python"), "PATH": f"{tmp_path}/g:/bin"}
    missing = runner(tmp_path, env={"LICH_BIN": "/nowhere/lich"}, lich=LichScript(installed=False))
    assert missing._env(tmp_path / "g")["LICH_BIN"] == "/nowhere/lich"


@pytest.mark.parametrize(("call_lich", "default", "ms"), [
    (OpenScript(ms=2_500), OpenScript(ms=9_000), 2_500),
    (None, OpenScript(ms=9_000), 9_000),
    (None, OpenScript(ms=10, hang=True), OPEN_TIMEOUT_MS),
    (OpenScript(ms=10, hang=True), None, OPEN_TIMEOUT_MS),
    (None, None, 800),
])
def test_an_open_may_take_its_scripted_ms_or_the_mods_timeout_when_it_hangs(
        tmp_path: Path, call_lich: OpenScript | None, default: OpenScript | None, ms: int) -> None:
    run = runner(tmp_path, lich=LichScript() if default is None else LichScript(default_open=default))
    assert run._open_ms(call(1, lich=call_lich)) == ms


# -- the files the runner reads back -------------------------------------------------------------------------


def _logged(runs: Path, program: str, started_ns: int, argv: Sequence[str], **parts: str) -> Path:
    """A run as the wrapper logs it: ``<ns>-<pid>.argv`` (each argument ended by \\x1f) and its other files."""
    stem = runs / program / f"{started_ns}-{4242}"
    real._write(stem.with_suffix(".argv"), "".join(f"{a}\x1f" for a in argv))
    for suffix, text in parts.items():
        real._write(stem.with_suffix(f".{suffix}"), text)
    return stem.with_suffix(".argv")


def test_the_runs_are_lichs_then_gits_each_in_the_order_they_started(tmp_path: Path) -> None:
    run = runner(tmp_path)
    _logged(run.runs, "git", 3_000, ["branch", "--show-current"], out="main\n", rc="0 3500")
    _logged(run.runs, "lich", 2_000, ["sessions"], out="[]", err="warn", rc="0 2600\n")
    _logged(run.runs, "lich", 1_000, ["open", "--prompt", "a b", ""], held="1500", rc="1")
    _logged(run.runs, "git", 4_000, [], held="\n", out="caf\xe9")
    assert run._run_records() == [
        RunRecord("lich", 1_000, ["open", "--prompt", "a b", ""], "", "", 1_500, None),
        RunRecord("lich", 2_000, ["sessions"], "[]", "warn", None, (0, 2_600)),
        RunRecord("git", 3_000, ["branch", "--show-current"], "main\n", "", None, (0, 3_500)),
        RunRecord("git", 4_000, [], "caf\xe9", "", None, None),
    ]
    assert runner(tmp_path / "none")._run_records() == []


def test_the_session_hosts_start_files_are_read_in_order_with_when_they_were_written(tmp_path: Path) -> None:
    run = runner(tmp_path)
    for name, text, at in [("boot.2.b", '{"kind": "session.start"}', 20.0), ("boot.1.a", "", 10.0),
                           ("boot.3.c", "{half", 30.0), ("other", "{}", 40.0)]:
        os.utime(real._write(run.boots / name, text), (at, at))
    assert run._boots() == [(10.0, {}), (20.0, {"kind": "session.start"})]
    assert run._hosts() == 3
    assert run._session_started() is True
    (run.boots / "boot.2.b").write_text('{"kind": "session.end"}', encoding="utf-8")
    assert run._session_started() is False


def test_the_bridges_log_is_each_line_it_could_write_whole(tmp_path: Path) -> None:
    run = runner(tmp_path)
    assert run._bridge_log() == []
    run.bridge_log.write_text('{"a": 1}\n{"b": \n\n[2]\n', encoding="utf-8")
    assert run._bridge_log() == [{"a": 1}, [2]]


NS = 1_000_000_000


def test_the_first_lich_open_since_a_moment_is_when_the_bridge_reached_it(tmp_path: Path) -> None:
    run = runner(tmp_path)
    assert run._open_started(0.0) is None
    _logged(run.runs, "lich", 5 * NS, ["open", "--prompt", "old"])
    _logged(run.runs, "lich", 7 * NS, ["sessions"])
    _logged(run.runs, "lich", 9 * NS, ["open", "--prompt", "b"])
    _logged(run.runs, "lich", 8 * NS + NS // 2, ["open", "--prompt", "a"])
    assert run._open_started(6.0) == 8.5
    assert run._open_started(5.0) == 5.0  # one that starts at that very moment counts
    assert run._open_started(9.5) is None


def test_a_held_git_read_began_when_its_held_file_was_named(tmp_path: Path) -> None:
    run = runner(tmp_path)
    assert run._git_held(0.0) is None
    _logged(run.runs, "git", 2 * NS, ["status"], held="")
    _logged(run.runs, "git", 6 * NS, ["branch"], held="")
    _logged(run.runs, "git", 4 * NS, ["rev-parse"])  # not held
    assert run._git_held(3.0) == 6.0
    assert run._git_held(2.0) == 2.0
    assert run._git_held(7.0) is None


def test_lich_was_read_since_a_moment_once_a_sessions_run_that_started_then_has_ended(tmp_path: Path) -> None:
    run = runner(tmp_path)
    assert run._read_lich_since(0.0) is False
    _logged(run.runs, "lich", 1 * NS, ["sessions"], rc="0 1")  # before
    _logged(run.runs, "lich", 3 * NS, ["open", "sessions"], rc="0 1")  # not a read
    running = _logged(run.runs, "lich", 4 * NS, ["sessions", "--json"])  # not ended yet
    _logged(run.runs, "git", 5 * NS, ["sessions"], rc="0 1")  # not lich
    assert run._read_lich_since(2.0) is False
    real._write(running.with_suffix(".rc"), "0 5")
    assert run._read_lich_since(2.0) is True
    assert run._read_lich_since(4.0) is True
    assert run._read_lich_since(4.5) is False


def test_the_session_to_resume_is_the_newest_log_claude_code_kept(tmp_path: Path) -> None:
    from agent_cards_claude_driver.sandbox import Sandbox

    sandbox = Sandbox(root=tmp_path, home=tmp_path / "home", project=tmp_path / "project", tmp=tmp_path / "tmp")
    run = runner(tmp_path / "run")
    run._tui_args = (sandbox, [], None, {})  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match="Claude Code kept no session log to resume"):
        run._session_id()
    projects = sandbox.home / ".claude" / "projects"
    for name, at in [("-home-a/older.jsonl", 10.0), ("-home-b/newest.jsonl", 30.0), ("-home-a/middle.jsonl", 20.0),
                     ("-home-a/notes.txt", 40.0), ("stray.jsonl", 50.0)]:
        os.utime(real._write(projects / name, "{}"), (at, at))
    assert run._session_id() == "newest"


def test_esc_is_due_from_the_call_from_the_real_opens_start_or_from_the_held_git_read(tmp_path: Path) -> None:
    """Counted from the real open's start when the fake host's open starts before the Esc (however late the
    engine reached it), else from the call; in a held git read, at once."""
    step = steps.CallStep((call(1), call(2)), esc_after=1_500)
    run = runner(tmp_path, step, open_after={"toolu_0001": 2_000, "toolu_0002": 500, "toolu_0009": 100})
    assert run._esc_moment(replace(step, esc_after=None), 100.0) is None
    assert run._esc_moment(step, 100.0) is None  # the open has not started yet
    _logged(run.runs, "lich", 103 * NS, ["open"])
    assert run._esc_moment(step, 100.0) == 104.0  # 1000 ms into the open, as the fake host's Esc
    late = runner(tmp_path, step, open_after={"toolu_0001": 2_000})  # its open starts after the Esc
    assert late._esc_moment(step, 100.0) == 101.5
    held = runner(tmp_path, step, esc_in_git={2: ("status",)})
    _logged(held.runs, "git", 107 * NS, ["status"], held="")
    assert held._esc_moment(step, 100.0, n=2) == 107.0
    assert held._esc_moment(step, 100.0, n=1) == 101.5  # another step: no read held, no open before it
    exact = runner(tmp_path, step, open_after={"toolu_0002": 1_500})  # an open that starts as the Esc falls
    assert exact._esc_moment(step, 100.0) == 103.0


def test_a_held_git_read_is_let_go_only_when_one_waits(tmp_path: Path) -> None:
    run = runner(tmp_path)
    run._release_git()  # no fifo: nothing
    os.mkfifo(run.git_release)
    run._release_git()  # nobody reads: nothing waits
    reader = os.open(run.git_release, os.O_RDONLY | os.O_NONBLOCK)
    try:
        run._release_git()
        assert os.read(reader, 16) == b"go\n"
    finally:
        os.close(reader)


# -- the scenario's clock and fake-lich's state ---------------------------------------------------------------


def test_the_first_served_step_starts_the_clock_and_tells_lich_each_opens_moment_and_turn(
        tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path / "run", steps.CallStep((call(1), call(2))), steps.CallStep((call(3),)),
                 opens={"toolu_0001": 0, "toolu_0003": 1})
    run._served(1)
    assert run.clock.t0 == 1_000.0 and (run.state / "world.json").is_file()
    assert _json(run.calls_file) == {"Task 1": {"ms": 0, "turn": 0}}
    clock.now = 1_002.5
    run._served(2)
    assert run.clock.t0 == 1_000.0
    assert _json(run.calls_file) == {"Task 1": {"ms": 0, "turn": 0}, "Task 3": {"ms": 2_500, "turn": 1}}
    assert sorted(p.name for p in run.calls_file.parent.iterdir()) == ["calls.json", "state"]  # no .tmp left


def test_a_step_served_on_a_started_clock_makes_the_calls_files_folder(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path / "run", steps.CallStep((call(1),)), opens={"toolu_0001": 0})
    run.clock.start()
    run._served(1)
    assert _json(run.calls_file) == {"Task 1": {"ms": 0, "turn": 0}}
    assert not run.state.exists()  # the clock was started: lich's state is its starter's


class World:
    """fake-lich's world as the runner asks it: when the next note is due, and the notes due by a moment."""

    def __init__(self, next_at: int | None = None, due: Sequence[str] = ()) -> None:
        self.next_at, self.due = next_at, list(due)
        self.asked: list[int] = []

    def next_note_at(self) -> int | None:
        return self.next_at

    def notes_due(self, until_ms: int) -> list[Any]:
        self.asked.append(until_ms)
        return [type("Note", (), {"text": text})() for text in self.due]


def _lich_state(monkeypatch: pytest.MonkeyPatch, world: World | Exception) -> list[str]:
    """fake-lich's state, as ``transact`` hands it to the runner; the folders it was asked for."""
    asked: list[str] = []

    def transact(directory: str, work: Callable[[Any], Any]) -> Any:
        asked.append(directory)
        if isinstance(world, Exception):
            raise world
        return work(type("State", (), {"world": world})())

    monkeypatch.setattr(real, "transact", transact)
    return asked


def test_the_next_note_is_due_at_the_scenarios_moment_lich_says(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    asked = _lich_state(monkeypatch, World(next_at=2_500))
    assert run._next_note_at() is None  # no clock yet
    run.clock.start()
    assert run._next_note_at() is None  # no state yet
    real._write(run.state / "world.json", "{}")
    assert run._next_note_at() == 1_002.5
    assert asked == [str(run.state)]
    _lich_state(monkeypatch, World(next_at=None))
    assert run._next_note_at() is None
    _lich_state(monkeypatch, ValueError("half written"))
    assert run._next_note_at() is None


# -- driving the screen: a stand-in ScreenLog and model -------------------------------------------------------------


class ScreenLog:
    """Claude Code's screen as recorded: ``stages[k]`` is what the screen shows, read after read, once ``k``
    keys were pressed (its last screen stays); a screen of None fails to be read. Every key, text typed, paste
    and wait is kept in ``sent``."""

    def __init__(self, *stages: Sequence[str | None], answers: Sequence[bool] = (),
                 on_type: Callable[[str], object] | None = None) -> None:
        self.stages = [list(stage) for stage in stages] or [[""]]
        self.answers = list(answers)
        self.on_type = on_type
        self.keys = self.reads = self.looks = 0
        self.sent: list[tuple[Any, ...]] = []

    def screen(self) -> str:
        stage = self.stages[min(self.keys, len(self.stages) - 1)]
        shown = stage[min(self.reads, len(stage) - 1)]
        self.reads, self.looks = self.reads + 1, self.looks + 1
        assert self.looks <= 100_000, "the screen was read without end, no time passing"
        if shown is None:
            raise RuntimeError("tmux said nothing")
        return shown

    def key(self, *keys: str) -> None:
        self.sent.append(("key", *keys))
        self.keys, self.reads = self.keys + 1, 0

    def type(self, text: str) -> None:
        self.sent.append(("type", text))
        if self.on_type is not None:
            self.on_type(text)

    def paste(self, text: str) -> None:
        self.sent.append(("paste", text))

    def answer_dialog(self, yes: bool, screen: str | None = None) -> bool:
        self.sent.append(("answer", yes))
        return self.answers.pop(0)

    def wait_idle(self, timeout: float = 30.0) -> str:
        self.sent.append(("wait_idle", timeout))
        return ""

    def wait_for(self, pattern: str, timeout: float = 30.0) -> str:
        self.sent.append(("wait_for", pattern, timeout))
        return ""

    def exit(self) -> int:
        self.sent.append(("exit",))
        return 0

    def close(self) -> None:
        self.sent.append(("close",))

    def __enter__(self) -> ScreenLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sent.append(("closed",))


class Turns:
    """The scripted model as the runner asks it: the steps it served, the calls whose results it read, and
    each wait (which passes at once on the stand-in clock, running ``on_wait`` before the look again)."""

    def __init__(self, clock: FakeTime, on_wait: Callable[[Turns], None] | None = None) -> None:
        self.clock, self.on_wait = clock, on_wait
        self.served: dict[int, float] = {}
        self.sent: dict[int, list[dict[str, Any]]] = {}
        self.answered: dict[str, Any] = {}
        self.main_requests: list[RecordedRequest] = []
        self.subagent_requests: list[RecordedRequest] = []
        self.waits: list[float] = []
        self.elsewhere: list[int] = []

    def results(self) -> dict[str, Any]:
        return dict(self.answered)

    def made_elsewhere(self, n: int) -> None:
        self.elsewhere.append(n)
        self.served[n] = self.clock.now

    def wait_until(self, predicate: Callable[[Any], bool], timeout: float) -> bool:
        if predicate(self):
            return True
        self.waits.append(timeout)
        self.clock.now = round(self.clock.now + timeout, 6)
        if self.on_wait is not None:
            self.on_wait(self)
        return predicate(self)


def tui_of(fake: ScreenLog) -> Any:
    """The stand-in, where the runner's signature names the real Tui."""
    return fake


def stopped(run: RealRunner, clock: FakeTime, limit: int = 10_000,
            on_wait: Callable[[int], object] | None = None) -> Ticking:
    run.stop = Ticking(clock, limit, on_wait)
    return run.stop


def test_the_screens_watcher_keeps_each_change_of_the_lich_line_and_of_the_rewind_panel(clock: FakeTime) -> None:
    screens: list[str | None] = [
        "  ? for shortcuts",
        "  ? for shortcuts · lich: 1 worker",
        "  lich: 1 worker",  # the same line: no change
        "  a menu over the footer",  # nothing said of the footer
        None,  # a read that failed
        "  Restore the conversation to the point before …",
        "  ? for shortcuts · lich: 2 workers · lich: tidy (a.b)",
        "  ⏵⏵ accept edits on",  # the row without a lich line: none
        "  Restore the code and/or conversation to the point before … lich: 3 workers",
    ]
    tui = ScreenLog(screens)
    watcher = real._Screen(tui_of(tui), ["tidy (a.b)", ""])
    read = tui.screen

    def timed() -> str:
        clock.now = 2_000.0 + tui.reads  # each read at a second of its own
        return read()

    tui.screen = timed  # type: ignore[method-assign]
    watcher.stop = Ticking(clock, limit=len(screens))
    watcher.run()
    assert watcher.footers == [(2_000.0, None), (2_001.0, "lich: 1 worker"), (2_006.0, "lich: tidy (a.b)"),
                               (2_007.0, None), (2_008.0, "lich: 3 workers")]
    assert watcher.panels == [(2_005.0, True), (2_006.0, False), (2_008.0, True)]
    assert watcher.stop.waits == [0.2] * len(screens)
    assert watcher.last == screens[-1]
    assert watcher.line.pattern == r"lich: \d+ workers?|lich:\ tidy\ \(a\.b\)|lich:\ "


def test_the_screens_watcher_starts_with_nothing_seen(clock: FakeTime) -> None:
    watcher = real._Screen(tui_of(ScreenLog()))
    assert (watcher.footers, watcher.panels, watcher.last, watcher.daemon) == ([], [], "", True)
    assert watcher.line.pattern == r"lich: \d+ workers?" and not watcher.stop.is_set()
    watcher.stop.set()
    watcher.run()
    assert watcher.footers == []


def test_a_wait_looks_until_done_or_says_what_never_happened_with_the_screen(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock)
    run._wait(lambda: True, 10, "never", tui_of(ScreenLog(["screen"])))
    assert stop.waits == []
    looks = iter([False, False, True])
    run._wait(lambda: next(looks), 10, "never", tui_of(ScreenLog(["screen"])))
    assert stop.waits == [0.05, 0.05]
    start = clock.now
    with pytest.raises(TimeoutError) as raised:
        run._wait(lambda: False, 3, "the thing never happened", tui_of(ScreenLog(["the screen now"])))
    assert str(raised.value) == "the thing never happened:\nthe screen now"
    assert round(clock.now - start, 6) == 3.0


def test_shift_tab_is_pressed_until_the_footer_shows_the_label(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    stopped(run, clock)
    tui = ScreenLog(["  ? for shortcuts"], ["  ? for shortcuts", "  ⏵⏵ accept edits on"], ["  ⏸ plan mode on"])
    run._switch_mode(tui_of(tui), "plan mode on")
    assert tui.sent == [("key", "BTab"), ("key", "BTab")]
    there = ScreenLog(["  ⏸ plan mode on"])
    run._switch_mode(tui_of(there), "plan mode on")
    assert there.sent == []


def test_shift_tab_that_changes_nothing_or_never_reaches_the_label_fails_saying_so(tmp_path: Path,
                                                                                    clock: FakeTime) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock)
    start = clock.now
    with pytest.raises(TimeoutError) as raised:
        run._switch_mode(tui_of(ScreenLog(["  ? for shortcuts"])), "plan mode on")
    assert str(raised.value) == "Shift+Tab changed nothing:\n  ? for shortcuts"
    assert round(clock.now - start, 6) == 10.0 and set(stop.waits) == {0.05}
    cycling = ScreenLog(*[[f"  mode {k} on"] for k in range(10)])
    with pytest.raises(TimeoutError) as raised:
        run._switch_mode(tui_of(cycling), "plan mode on")
    assert str(raised.value) == "the footer never showed 'plan mode on':\n  mode 6 on"
    assert cycling.sent == [("key", "BTab")] * real.MODE_PRESSES


def test_a_mode_is_reached_press_by_press_each_once_the_footers_mode_moved(tmp_path: Path, clock: FakeTime) -> None:
    """A redraw of the spinner is not the press's: the next press waits for the mode's label to move."""
    run = runner(tmp_path)
    stop = stopped(run, clock)
    tui = ScreenLog(["  manual mode on"], ["  manual mode on", "  manual mode on ✻", "  ⏵⏵ accept edits on"],
              ["  ⏸ plan mode on"])
    run._switch_to(tui_of(tui), "plan")
    assert tui.sent == [("key", "BTab"), ("key", "BTab")]
    assert stop.waits == [0.05, 0.05]
    default = ScreenLog(["  ⏸ plan mode on"], ["  ? for shortcuts"])
    run._switch_to(tui_of(default), "default")
    assert default.sent == [("key", "BTab")]


def test_a_mode_that_never_moves_or_never_comes_fails_saying_so(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    stopped(run, clock)
    with pytest.raises(TimeoutError) as raised:
        run._switch_to(tui_of(ScreenLog(["  manual mode on", "  manual mode on ✻"])), "plan")
    assert str(raised.value) == "Shift+Tab moved no mode:\n  manual mode on ✻"
    cycling = ScreenLog(*[["  ⏵⏵ accept edits on"], ["  ⏵ auto mode on"]] * 5)
    with pytest.raises(TimeoutError) as raised:
        run._switch_to(tui_of(cycling), "plan")
    assert str(raised.value) == "the footer never showed plan mode:\n  ⏵⏵ accept edits on"
    assert cycling.sent == [("key", "BTab")] * real.MODE_PRESSES


# -- a call step: its marker, its Esc, its dialogs ------------------------------------------------------------


def card(description: str) -> str:
    """A permission dialog about the Agent call ``description`` (the lines the reader looks for)."""
    return f" Tool use\n Agent({description})\n Do you want to proceed?\n ❯ 1. Yes\n   3. No\n"


def _call_step(tmp_path: Path, clock: FakeTime, step: steps.CallStep, *, screens: Sequence[str] = ("  idle",),
               answers: Sequence[bool] = (), on_wait: Callable[[Turns], None] | None = None,
               **changes: Any) -> tuple[RealRunner, ScreenLog, Turns]:
    run = runner(tmp_path, step, **changes)
    stopped(run, clock)
    model = Turns(clock, on_wait)
    tui = ScreenLog(screens, answers=answers, on_type=lambda _: model.served.update({1: clock.now}))
    return run, tui, model


def _await(run: RealRunner, tui: ScreenLog, model: Turns, step: steps.CallStep,
           asks: dict[str, bool] | None = None) -> None:
    run._await_calls(tui_of(tui), model, 1, step, [c.id for c in step.calls],  # type: ignore[arg-type]
                     {} if asks is None else asks)


def test_a_step_types_its_marker_and_ends_once_every_call_is_answered(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1), call(2)))
    run, tui, model = _call_step(tmp_path, clock, step, on_wait=lambda m: m.answered.update(
        {"toolu_0001": 1, "toolu_0002": 2} if len(m.waits) == 3 else {"toolu_0001": 1}))
    _await(run, tui, model, step)
    assert tui.sent == [("type", "conform step 1: carry on with the task.")]
    assert model.waits == [0.2, 0.2, 0.2]  # nothing to press: a look each 0.2 s
    assert run.marks == [] and run.dialogs == {}


def test_a_step_the_model_never_served_fails_with_the_screen(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1),))
    run = runner(tmp_path, step)
    model = Turns(clock)
    with pytest.raises(TimeoutError) as raised:
        run._await_calls(tui_of(ScreenLog(["  the prompt"])), model, 3, step, ["toolu_0001"], {})  # type: ignore[arg-type]
    assert str(raised.value) == "the model was never asked for step 3:\n  the prompt"
    assert model.waits == [real.STEP_TIMEOUT_S]


def test_a_step_whose_calls_are_never_answered_fails_after_its_opens_time(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1, lich=OpenScript(ms=4_000)), call(2)))
    run, tui, model = _call_step(tmp_path, clock, step, screens=["  ✻ Running…"])
    with pytest.raises(TimeoutError) as raised:
        _await(run, tui, model, step)
    assert str(raised.value) == "step 1's calls were never answered:\n  ✻ Running…"
    assert round(clock.now - 1_000.0, 6) == real.STEP_TIMEOUT_S + 4.0
    assert set(model.waits) == {0.2}


def test_esc_is_pressed_as_its_moment_comes_and_the_turn_ends_interrupted(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1),), esc_after=1_500)
    run, tui, model = _call_step(tmp_path, clock, step)
    _await(run, tui, model, step)
    assert tui.sent == [("type", "conform step 1: carry on with the task."), ("key", "Escape"),
                        ("wait_for", "Interrupted", 30)]
    assert run.marks == [{"at": 1_001.5, "kind": "esc"}]
    assert model.waits[:7] == [0.2] * 7 and len(model.waits) == 8  # the last look ends at the Esc's moment


def test_esc_counted_from_the_real_open_waits_for_the_open_to_start(tmp_path: Path, clock: FakeTime) -> None:
    def opens(model: Turns) -> None:
        if len(model.waits) == 4:  # the bridge reached the open 0.25 s after the call
            _logged(run.runs, "lich", 1_000_250_000_000, ["open", "--prompt", "Task 1"])

    step = steps.CallStep((call(1),), esc_after=1_500)
    run, tui, model = _call_step(tmp_path, clock, step, on_wait=opens, open_after={"toolu_0001": 500})
    _await(run, tui, model, step)
    assert model.waits[:4] == [0.05] * 4  # waiting for the open to start: a look each 0.05 s
    assert run.marks == [{"at": 1_001.25, "kind": "esc"}]
    assert ("key", "Escape") in tui.sent


def test_each_dialog_is_answered_as_the_plan_says_for_the_call_its_card_names(tmp_path: Path, clock: FakeTime) -> None:
    """The first press is not taken (the dialog ignores keys as it appears): the answer is spent only once it
    goes. A "no" ends the turn; the turn's end is then its spinner gone."""
    step = steps.CallStep((call(1, "Fix the login bug"), call(2, "Fix the logout bug")))
    run, tui, model = _call_step(tmp_path, clock, step, answers=[False, True, True],
                                 screens=[card("Fix the logout bug"), card("Fix the logout bug"),
                                          card("Fix the login bug")])
    _await(run, tui, model, step, {"toolu_0001": False, "toolu_0002": True})
    assert tui.sent == [("type", "conform step 1: carry on with the task."), ("answer", True), ("answer", True),
                        ("answer", False), ("wait_idle", 30)]
    assert run.dialogs == {"toolu_0002": (1_000.0, True), "toolu_0001": (1_000.0, False)}
    assert model.waits == []


def test_a_dialog_no_call_asks_for_is_left_alone(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1, "Fix it"),))
    run, tui, model = _call_step(tmp_path, clock, step, screens=[card("Fix it")],
                                 on_wait=lambda m: m.answered.update({"toolu_0001": 1}))
    _await(run, tui, model, step)
    assert tui.sent == [("type", "conform step 1: carry on with the task.")]
    assert model.waits == [0.2]


def test_a_host_that_dies_mid_open_is_killed_that_far_into_the_real_open(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    killed: list[float] = []

    def opens(model: Turns) -> None:
        if len(model.waits) == 2:
            _logged(run.runs, "lich", 1_000_100_000_000, ["open"])
        if len(model.waits) == 40:
            model.answered["toolu_0001"] = 1

    step = steps.CallStep((call(1),))
    run, tui, model = _call_step(tmp_path, clock, step, on_wait=opens, host_dies_in={"toolu_0001": 1_000})
    monkeypatch.setattr(run, "_host_dies", lambda tui: killed.append(clock.now))
    _await(run, tui, model, step)
    assert killed == [1_001.1]
    assert model.waits[:22] == [0.05] * 22 and set(model.waits[22:]) == {0.2}  # once killed: looks as usual


def test_the_host_dies_only_once_that_far_into_an_open_that_started(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    killed: list[float] = []
    monkeypatch.setattr(run, "_host_dies", lambda tui: killed.append(clock.now))
    assert run._host_dies_mid_open(tui_of(ScreenLog()), 999.0, 500) is False  # no open yet
    _logged(run.runs, "lich", 1_000 * NS, ["open"])
    clock.now = 1_000.4
    assert run._host_dies_mid_open(tui_of(ScreenLog()), 999.0, 500) is False
    clock.now = 1_000.5
    assert run._host_dies_mid_open(tui_of(ScreenLog()), 999.0, 500) is True
    assert killed == [1_000.5]
    clock.now = 1_049.97
    assert run._host_dies_mid_open(tui_of(ScreenLog()), 999.0, 50_000) is False  # 50 s into the open: not yet


def test_a_steps_git_read_is_held_for_its_esc_only_during_the_step(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    step = steps.CallStep((call(1), call(2)), esc_after=100)
    run = runner(tmp_path, step, esc_in_git={1: ("status",)},
                 permission=RealPermission(decision="ask", answers={"toolu_0002": False, "toolu_0009": True}))
    seen: list[tuple[Any, ...]] = []

    def awaited(tui: Any, model: Any, n: int, step: steps.CallStep, ids: list[str], asks: dict[str, bool]) -> None:
        seen.append((n, ids, asks, run.git_hold.exists(), stat.S_ISFIFO(run.git_release.stat().st_mode)))

    monkeypatch.setattr(run, "_await_calls", awaited)
    tui = ScreenLog()
    run._calls(tui_of(tui), Turns(clock), 1, step)  # type: ignore[arg-type]
    assert seen == [(1, ["toolu_0001", "toolu_0002"], {"toolu_0002": False}, True, True)]
    assert not run.git_hold.exists() and tui.sent == [("wait_idle", 60)]
    run._calls(tui_of(tui), Turns(clock), 1, step)  # type: ignore[arg-type]  # the fifo made once is kept
    run._calls(tui_of(tui), Turns(clock), 2, step)  # type: ignore[arg-type]
    assert [s[3] for s in seen] == [True, True, False]

    def fails(*_: Any) -> None:
        assert run.git_hold.exists()
        raise TimeoutError("no answer")

    monkeypatch.setattr(run, "_await_calls", fails)
    with pytest.raises(TimeoutError):
        run._calls(tui_of(tui), Turns(clock), 1, step)  # type: ignore[arg-type]
    assert not run.git_hold.exists()  # a failed step holds no read of a later one


# -- lich's notes, and time passing ---------------------------------------------------------------------------


def _noting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world: World | Exception, **changes: Any) -> RealRunner:
    run = runner(tmp_path, **changes)
    run.clock.start()
    real._write(run.state / "world.json", "{}")
    _lich_state(monkeypatch, world)
    return run


def test_lich_types_each_note_due_at_a_free_prompt_as_a_paste(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(due=["Worker a is done.\nIts report.", "Worker b is done."])
    run = _noting(tmp_path, monkeypatch, world)
    model = Turns(clock)
    model.main_requests = [_recorded({}), _recorded({})]
    clock.now = 1_003.25
    tui = ScreenLog(["  ? for shortcuts · esc to interrupt"])  # a turn still running does not hold them
    assert run._type_notes(tui_of(tui), model) is True  # type: ignore[arg-type]
    assert world.asked == [3_250]
    assert tui.sent == [("paste", "Worker a is done.\nIts report."), ("paste", "Worker b is done.")]
    assert run.notes == [("Worker a is done.\nIts report.", 2), ("Worker b is done.", 2)]


@pytest.mark.parametrize("screen", ["  Restore the conversation to the point before …", card("Fix it")])
def test_the_rewind_panel_or_a_dialog_over_the_prompt_holds_the_notes(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch, screen: str) -> None:
    world = World(due=["Worker a is done."])
    run = _noting(tmp_path, monkeypatch, world)
    tui = ScreenLog([screen])
    assert run._type_notes(tui_of(tui), Turns(clock)) is False  # type: ignore[arg-type]
    assert (tui.sent, world.asked, run.notes) == ([], [], [])


def test_no_note_is_typed_before_the_clock_without_a_state_or_in_claude_p(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(due=["Worker a is done."])
    printed = _noting(tmp_path / "p", monkeypatch, world, printed=True)
    unstarted = runner(tmp_path / "u")
    real._write(unstarted.state / "world.json", "{}")
    stateless = runner(tmp_path / "s")
    stateless.clock.start()
    for run in (printed, unstarted, stateless):
        tui = ScreenLog(["  ? for shortcuts"])
        assert run._type_notes(tui_of(tui), Turns(clock)) is True  # type: ignore[arg-type]
        assert tui.sent == []
    assert world.asked == []


def test_notes_that_cannot_be_read_are_remarked_and_none_is_typed(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _noting(tmp_path, monkeypatch, ValueError("a state half written"))
    tui = ScreenLog(["  ? for shortcuts"])
    assert run._type_notes(tui_of(tui), Turns(clock)) is True  # type: ignore[arg-type]
    assert run.remarks == ["fake-lich's notes could not be read: a state half written"]
    assert tui.sent == [] and run.notes == []


def test_time_passes_a_second_at_a_time_so_that_a_changed_schedule_is_seen(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock)
    run._pass_time(tui_of(ScreenLog()), Turns(clock), 1_003.5)  # type: ignore[arg-type]
    assert stop.waits == [1.0, 1.0, 1.0, 0.5] and clock.now == 1_003.5
    run._pass_time(tui_of(ScreenLog()), Turns(clock), 1_003.0)  # type: ignore[arg-type]  # already past
    assert len(stop.waits) == 4


def test_time_passes_up_to_a_note_due_and_types_it_when_the_prompt_is_free(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock)
    dues = iter([1_000.25, 1_000.25, 1_000.25, None])
    monkeypatch.setattr(run, "_next_note_at", lambda: next(dues))
    free = iter([False, True])
    typed: list[float] = []

    def type_notes(tui: Any, model: Any) -> bool:
        typed.append(clock.now)
        return next(free)

    monkeypatch.setattr(run, "_type_notes", type_notes)
    run._pass_time(tui_of(ScreenLog()), Turns(clock), 1_001.0)  # type: ignore[arg-type]
    assert [round(w or 0, 6) for w in stop.waits] == [0.25, 0.2, 0.55]  # up to the note; a screen read on; the rest
    assert typed == [1_000.25, 1_000.45]


def test_time_stops_passing_when_the_run_is_stopped(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock, limit=2)
    run._pass_time(tui_of(ScreenLog()), Turns(clock), 1_010.0)  # type: ignore[arg-type]
    assert stop.waits == [1.0, 1.0]


def test_the_runs_end_sends_the_last_results_then_lets_the_fakes_time_and_a_poll_pass(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path, steps.CallStep((call(1),)), steps.CallStep((call(2), call(3))), steps.CallStep((call(4),)),
                 end_ms=4_000, plugin_calls={3: "helper"})
    passed: list[float] = []
    monkeypatch.setattr(run, "_pass_time", lambda tui, model, until: passed.append(until))
    model = Turns(clock, on_wait=lambda m: m.answered.update({"toolu_0002": 1, "toolu_0003": 1}))
    model.answered["toolu_0001"] = 1
    tui = ScreenLog()
    run._finish(tui_of(tui), model, real._Screen(tui_of(tui)))  # type: ignore[arg-type]
    assert tui.sent == [("type", "conform end: that is all."), ("wait_idle", 60)]
    assert model.waits == [60]
    assert passed == [1_004.0, 1_066.5] and (run.state / "world.json").is_file()
    done = ScreenLog()
    run._finish(tui_of(done), model, real._Screen(tui_of(done)))  # type: ignore[arg-type]
    assert done.sent == []  # every result read: nothing to send


# -- the steps between the calls -------------------------------------------------------------------------------


def test_each_step_is_driven_by_its_own_means_in_order(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[Step] = [
        steps.CallStep((call(1),)), steps.At(500, steps.HostDies()), steps.CallStep((call(2, origin="helper"),)),
        steps.CallStep((call(3),)), steps.Wait(2_000), steps.Until(9_000), steps.Esc(), steps.Reload(),
        steps.Mode("plan"), steps.SessionStart(), steps.Continue(), steps.Resume(), steps.HostDies(),
        steps.Prompt("Go on."), steps.Footer(), steps.Check(count=1),
    ]
    run = runner(tmp_path, *given, plugin_calls={2: "helper"}, subagent_steps=(3,))
    first, fresh = ScreenLog(), ScreenLog()
    names = {id(first): "first", id(fresh): "fresh"}
    done: list[tuple[Any, ...]] = []

    def did(name: str) -> Callable[..., Any]:
        def record(*args: Any, **kwargs: Any) -> Any:
            shown = [names.get(id(a), a) for a in args if isinstance(a, ScreenLog | int | float | str)]
            done.append((name, *shown, *kwargs.values()))
            return fresh if name == "start_again" else None
        return record

    for name in ("_calls", "_plugin_call", "_subagent_call", "_pass_time", "_reload", "_switch_to", "_start_again",
                 "_host_dies", "_prompt", "_type_notes"):
        monkeypatch.setattr(run, name, did(name.strip("_")))
    assert run._steps(tui_of(first), Turns(clock)) is tui_of(fresh)  # type: ignore[arg-type]
    notes = ("type_notes", "first")
    assert done == [
        ("calls", "first", 1), notes, ("plugin_call", "first", 2), notes, ("subagent_call", "first", 3), notes,
        ("pass_time", "first", 1_002.0), notes, ("pass_time", "first", 1_009.0), notes, notes, ("reload", "first"),
        notes, ("switch_to", "first", "plan"), notes, notes, ("start_again", "first", False),
        ("type_notes", "fresh"), ("start_again", "fresh", True), ("type_notes", "fresh"), ("host_dies", "fresh"),
        ("type_notes", "fresh"), ("prompt", "fresh", "Go on."), ("type_notes", "fresh"), ("type_notes", "fresh"),
        ("type_notes", "fresh"),
    ]
    assert first.sent == [("key", "Escape"), ("wait_idle", 30), ("type", "/clear"), ("wait_idle", 30)]
    assert [{k: v for k, v in m.items() if k != "at"} for m in run.marks] == [
        {"kind": "esc"}, {"kind": "reload"}, {"kind": "mode", "mode": "plan"}]
    assert run.clock.t0 == 1_000.0 and (run.state / "world.json").is_file()


@pytest.mark.parametrize(("texts", "drawn"), [(["tidy"], "tidy"), (["tidy", None], ""), (["a", "b"], "b")])
def test_the_errands_are_handed_to_the_status_module_whole(
        tmp_path: Path, clock: FakeTime, texts: list[str | None], drawn: str) -> None:
    run = runner(tmp_path, *[steps.Errands(t) for t in texts])
    run.errands.write_text("", encoding="utf-8")
    run._steps(tui_of(ScreenLog()), Turns(clock))  # type: ignore[arg-type]
    assert run.errands.read_text(encoding="utf-8") == drawn
    assert sorted(p.name for p in tmp_path.iterdir()) == ["errands.txt", "lich"]  # no .tmp left


def test_a_step_the_run_cannot_drive_is_never_skipped(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path, steps.Workflow())
    with pytest.raises(NotImplementedError) as raised:
        run._steps(tui_of(ScreenLog()), Turns(clock))  # type: ignore[arg-type]
    assert str(raised.value) == "the real run cannot drive a 'workflow' step"


# -- the session's lifecycle -----------------------------------------------------------------------------------


class Hosts:
    """The sandbox as the runner asks it for the session hosts running: each look gives the next list."""

    def __init__(self, *looks: list[int], home: Path = Path("/nowhere")) -> None:
        self.looks, self.home = list(looks), home

    def session_hosts(self) -> list[int]:
        return self.looks.pop(0) if len(self.looks) > 1 else self.looks[0]


def test_a_dying_host_is_killed_and_the_step_ends_once_it_is_gone(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    stop = stopped(run, clock)
    killed: list[tuple[int, int]] = []

    def kill(pid: int, sig: int) -> None:
        killed.append((pid, sig))
        if pid == 12:
            raise ProcessLookupError(pid)

    monkeypatch.setattr(os, "kill", kill)
    monkeypatch.setattr(run, "_tui_args", (Hosts([11, 12], [11, 13], [13]), [], None, {}), raising=False)
    run._host_dies(tui_of(ScreenLog()))
    assert killed == [(11, signal.SIGKILL), (12, signal.SIGKILL)]
    assert run.marks == [{"at": 1_000.0, "kind": "host.dies"}]  # at its kill, not when the host was gone
    assert stop.waits == [0.05]


def test_a_host_that_is_not_running_or_outlives_its_kill_fails_saying_so(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run = runner(tmp_path)
    stopped(run, clock)
    monkeypatch.setattr(os, "kill", lambda pid, sig: None)
    monkeypatch.setattr(run, "_tui_args", (Hosts([]), [], None, {}), raising=False)
    with pytest.raises(RuntimeError) as none:
        run._host_dies(tui_of(ScreenLog(["  the screen"])))
    assert str(none.value) == "host.dies: no session host is running:\n  the screen"
    monkeypatch.setattr(run, "_tui_args", (Hosts([11]), [], None, {}), raising=False)
    with pytest.raises(TimeoutError) as alive:
        run._host_dies(tui_of(ScreenLog(["  the screen"])))
    assert str(alive.value) == "a killed session host still runs:\n  the screen"
    assert clock.now == 1_010.0


def test_a_marks_moment_is_when_the_runner_did_it(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    run._mark("resume", how="continue")
    assert run.marks == [{"at": 1_000.0, "kind": "resume", "how": "continue"}]


def test_the_persons_prompt_ends_when_the_model_was_asked_with_it_and_the_turn_is_over(
        tmp_path: Path, clock: FakeTime) -> None:
    def asks(model: Turns) -> None:
        for text in ("Something else.", "Go on."):
            model.main_requests.append(_recorded({"messages": [{"role": "user", "content": text}]}))

    run = runner(tmp_path)
    model = Turns(clock, on_wait=asks)
    model.main_requests = [_recorded({"messages": [{"role": "user", "content": "Go on."}]})]  # an older one
    tui = ScreenLog()
    run._prompt(tui_of(tui), model, "Go on.")  # type: ignore[arg-type]
    assert run.prompts == [("Go on.", 1)]
    assert tui.sent == [("type", "Go on."), ("wait_idle", 60)]
    assert model.waits == [real.STEP_TIMEOUT_S]
    never = Turns(clock)
    with pytest.raises(TimeoutError) as raised:
        run._prompt(tui_of(ScreenLog(["  the screen"])), never, "Stop.")  # type: ignore[arg-type]
    assert str(raised.value) == "the model was never asked with the prompt 'Stop.':\n  the screen"


def test_a_subagents_call_step_ends_once_that_agent_read_its_answers(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1), call(2)))
    run = runner(tmp_path, step, subagent_steps=(1,))
    model = Turns(clock, on_wait=lambda m: m.answered.update({"toolu_0001": 1, "toolu_0002": 1}))
    model.answered["toolu_0001"] = 1
    tui = ScreenLog()
    run._subagent_call(tui_of(tui), model, 1, step)  # type: ignore[arg-type]
    assert model.waits == [real.STEP_TIMEOUT_S] and tui.sent == [("wait_idle", 60)]
    with pytest.raises(TimeoutError) as raised:
        run._subagent_call(tui_of(ScreenLog(["  the screen"])), Turns(clock), 4, step)  # type: ignore[arg-type]
    assert str(raised.value) == "no subagent made and read step 4's calls:\n  the screen"


def test_a_plugins_call_is_handed_to_its_stand_in_once_the_session_started(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    step = steps.CallStep((call(1, "Help", origin="helper"),))
    run = runner(tmp_path, step, plugin_calls={1: "helper"}, opens={"toolu_0001": 0})
    answer = tmp_path / "spawn-1.answer"
    handed: list[Any] = []

    def on_wait(count: int) -> None:
        if count == 2:
            real._write(run.boots / "boot.1.x", '{"event": "session.start"}')
        if count == 4:
            handed.append(_json(run.spawn_file))
            os.utime(real._write(answer, '{"value": "launched"}'), (1_234.0, 1_234.0))

    stop = stopped(run, clock, on_wait=on_wait)
    real._write(run.boots / "boot.0.x", '{"event": "other"}')
    model = Turns(clock)
    tui = ScreenLog()
    run._plugin_call(tui_of(tui), model, 1, step)  # type: ignore[arg-type]
    python = shutil.which("python3") or "python3"
    assert handed == [{"input": {"prompt": "Task 1", "description": "Help"}, "answer": str(answer), "python": python}]
    assert model.elsewhere == [1] and model.served == {1: 1_000.1}
    assert _json(run.calls_file) == {"Task 1": {"ms": 0, "turn": 0}}  # lich learns when the call was made
    assert run.plugin_answers == {"toolu_0001": (1_234.0, {"value": "launched"})}
    assert tui.sent == [("wait_idle", 60)] and stop.waits == [0.05] * 4
    assert not run.spawn_file.with_suffix(".tmp").exists()


def test_a_plugins_call_never_answered_fails_naming_the_plugin(tmp_path: Path, clock: FakeTime) -> None:
    step = steps.CallStep((call(1, origin="helper"),))
    run = runner(tmp_path, step, plugin_calls={1: "helper"})
    stopped(run, clock)
    real._write(run.boots / "boot.1", '"session.start"')
    with pytest.raises(TimeoutError) as raised:
        run._plugin_call(tui_of(ScreenLog(["  the screen"])), Turns(clock), 1, step)  # type: ignore[arg-type]
    assert str(raised.value) == "the plugin 'helper' never had its call answered:\n  the screen"
    assert round(clock.now - 1_000.0, 6) == real.STEP_TIMEOUT_S
    unanswerable = runner(tmp_path / "late", step, plugin_calls={1: "helper"})
    stopped(unanswerable, clock)
    with pytest.raises(TimeoutError) as raised:
        unanswerable._plugin_call(tui_of(ScreenLog(["  the screen"])), Turns(clock), 1, step)  # type: ignore[arg-type]
    assert str(raised.value) == "the session never started its session host:\n  the screen"


def test_a_reload_changes_the_module_and_types_the_command_only_when_no_host_started(
        tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    real._write(run.module, "export function register() {}\n")
    stopped(run, clock, on_wait=lambda count: count == 3 and real._write(run.boots / "boot.1", "{}"))
    tui = ScreenLog()
    run._reload(tui_of(tui))
    assert run.module.read_text(encoding="utf-8") == "export function register() {}\n// reload 1000000000000\n"
    assert tui.sent == [] and run.remarks == []


def test_a_module_not_reloaded_by_itself_is_reloaded_by_the_command(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path)
    real._write(run.module, "")
    stop = stopped(run, clock)
    tui = ScreenLog(on_type=lambda text: real._write(run.boots / "boot.1", "{}"))
    run._reload(tui_of(tui))
    assert tui.sent == [("type", "/reload-plugins")]
    assert run.remarks == ["the changed module was not reloaded by itself: /reload-plugins typed"]
    assert len(stop.waits) == round(real.RELOAD_SEEN_S / 0.05)
    stopped(run, clock)
    with pytest.raises(TimeoutError) as raised:
        run._reload(tui_of(ScreenLog(["  the screen"])))
    assert str(raised.value) == "the reload started no session host:\n  the screen"


def test_continue_starts_claude_code_again_and_ends_once_the_fresh_host_read_lich(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    run = runner(tmp_path, steps.Continue(), steps.Resume(), resume_reads=(True, False))
    started: list[tuple[str, ...]] = []
    fresh = ScreenLog()

    def booted(count: int) -> None:
        if count == 2:
            os.utime(real._write(run.boots / f"boot.{len(started)}", "{}"), (1_000.0, 1_000.0))
        if count == 4:
            _logged(run.runs, "lich", 1_000 * NS, ["sessions"], rc="0 1")

    stop = stopped(run, clock, on_wait=booted)

    def tui(*more: str) -> ScreenLog:
        started.append(more)
        return fresh

    monkeypatch.setattr(run, "_tui", tui)
    monkeypatch.setattr(run, "_session_id", lambda: "abc")
    run._later = contextlib.ExitStack()
    old = ScreenLog()
    run._watcher = real._Screen(tui_of(old))
    assert run._start_again(tui_of(old), Turns(clock), resume=False) is tui_of(fresh)  # type: ignore[arg-type]
    assert old.sent == [("wait_idle", 30), ("exit",), ("close",)]
    assert started == [("--continue",)] and run._watcher.tui is tui_of(fresh) and run._restarts == 1
    assert stop.waits == [0.05] * 4
    assert run.marks == [{"at": 1_000.0, "kind": "resume", "how": "continue"}]
    stopped(run, clock, on_wait=lambda count: count == 1 and real._write(run.boots / "boot.9", "{}"))
    assert run._start_again(tui_of(fresh), Turns(clock), resume=True) is tui_of(fresh)  # type: ignore[arg-type]
    assert started == [("--continue",), ("--resume", "abc")] and run._restarts == 2
    assert run.marks[1]["how"] == "resume"
    run._later.close()
    assert fresh.sent[-1] == ("closed",)


def test_a_fresh_host_that_never_reads_lich_fails_after_its_time(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    run = runner(tmp_path, steps.Continue(), resume_reads=(True,))
    stopped(run, clock, on_wait=lambda count: count == 1 and real._write(run.boots / "boot.1", "{}"))
    monkeypatch.setattr(run, "_tui", lambda *more: ScreenLog(["  fresh"]))
    run._later = contextlib.ExitStack()
    run._watcher = real._Screen(tui_of(ScreenLog()))
    with pytest.raises(TimeoutError) as raised:
        run._start_again(tui_of(ScreenLog()), Turns(clock), resume=False)  # type: ignore[arg-type]
    assert str(raised.value) == "the fresh session host never read lich:\n  fresh"
    assert round(clock.now - 1_000.05, 6) == 30.0
    stopped(run, clock)
    with pytest.raises(TimeoutError) as raised:
        run._start_again(tui_of(ScreenLog()), Turns(clock), resume=False)  # type: ignore[arg-type]
    assert str(raised.value) == "claude --continue started no session host:\n  fresh"


# -- the project, claude -p, the evidence ------------------------------------------------------------------------


def _sandbox(tmp_path: Path) -> Any:
    from agent_cards_claude_driver.sandbox import Sandbox

    return Sandbox(root=tmp_path, home=tmp_path / "home", project=tmp_path / "project", tmp=tmp_path / "tmp")


@pytest.mark.parametrize(("git", "argv"), [
    (RealGit(mode="branch", branch="feature/x"), ["checkout", "-q", "-b", "feature/x"]),
    (RealGit(mode="branch"), None),  # main: the sandbox's own
    (RealGit(mode="detached"), ["checkout", "-q", "--detach"]),
    (RealGit(mode="none"), None),
])
def test_the_project_is_on_the_scenarios_branch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git: RealGit, argv: list[str] | None) -> None:
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(real, "_git", lambda sandbox, *args: ran.append(args))
    runner(tmp_path / "run", git=git)._project(_sandbox(tmp_path))
    assert ran == ([] if argv is None else [tuple(argv)])


def test_gits_runs_in_the_project_with_the_sandboxs_home_and_no_system_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    ran: list[tuple[Any, ...]] = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: ran.append((argv, kw)))
    monkeypatch.setenv("PATH", "/usr/bin")
    sandbox = _sandbox(tmp_path)
    real._git(sandbox, "checkout", "-q", "--detach")
    assert ran == [(["git", "checkout", "-q", "--detach"], {
        "cwd": sandbox.project, "env": {"PATH": "/usr/bin", "HOME": str(sandbox.home), "GIT_CONFIG_NOSYSTEM": "1"},
        "check": True, "capture_output": True})]


@pytest.mark.parametrize(("permission", "files"), [
    (RealPermission(decision="ask"), {"settings.local.json": {"permissions": {"ask": ["Agent"]}}}),
    (RealPermission(decision="ask", rule=False), {}),  # only plan mode's calls ask, by the mode
    (RealPermission(decision="deny", deny_rules=("Agent(Explore)", "Agent")),
     {"settings.json": {"permissions": {"deny": ["Agent(Explore)", "Agent"]}}}),
    (RealPermission(decision="hook-deny"), {}),
    (RealPermission(), {}),
])
def test_the_projects_settings_ask_or_deny_as_the_plan_says(
        tmp_path: Path, permission: RealPermission, files: dict[str, Any]) -> None:
    sandbox = _sandbox(tmp_path)
    runner(tmp_path / "run", permission=permission)._project(sandbox)
    claude = sandbox.project / ".claude"
    assert {p.name: _json(p) for p in claude.glob("*.json")} == files


def test_the_projects_own_agents_are_written_for_the_session(tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    made = make_plan()
    session = replace(made.scenario.session, agent_types=("reviewer", "Explore"))
    RealRunner(replace(made, scenario=replace(made.scenario, session=session)), Path("claude"),
               tmp_path / "run")._project(sandbox)
    agents = sandbox.project / ".claude" / "agents"
    assert sorted(p.name for p in agents.iterdir()) == ["Explore.md", "reviewer.md"]
    assert (agents / "reviewer.md").read_text(encoding="utf-8") == (
        "---\nname: reviewer\ndescription: The project's own reviewer agent.\n---\nYou are reviewer.\n")


class Printed:
    def __init__(self, returncode: int = 0, timed_out: bool = False) -> None:
        self.returncode, self.timed_out = returncode, timed_out
        self.stdout, self.stderr = "Launched.", "warn"


def test_claude_p_is_the_one_steps_marker_and_what_it_printed_stands_for_the_screen(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    step = steps.CallStep((call(1, lich=OpenScript(ms=3_000)), call(2)))
    run = runner(tmp_path, step, printed=True, end_ms=2_000)
    stop = stopped(run, clock)
    asked: list[tuple[Any, ...]] = []

    def run_print(claude: Path, sandbox: Any, plugins: Sequence[Path], prompt: str, model: Turns,
                  **more: Any) -> Printed:
        asked.append((claude, plugins, prompt, more))
        run.clock.start()
        model.served[1] = clock.now
        return Printed(returncode=3)

    monkeypatch.setattr(real, "run_print", run_print)
    monkeypatch.setattr(run, "_env", lambda git_bin: {"GIT_BIN": str(git_bin)})
    printed = run._printed(_sandbox(tmp_path), [tmp_path / "plugin"], Turns(clock), tmp_path / "gitbin")  # type: ignore[arg-type]
    assert printed == "claude -p exited 3:\nLaunched.\nwarn"
    assert asked == [(Path("claude"), [tmp_path / "plugin"], "conform step 1: carry on with the task.", {
        "env_extra": {"GIT_BIN": str(tmp_path / "gitbin")}, "extra_args": ["--permission-mode", "default"],
        "timeout": real.STEP_TIMEOUT_S + 3.0})]
    assert stop.waits == [2.0]  # the fake's time passes after the session's end


@pytest.mark.parametrize(("served", "timed_out", "why"), [
    (False, False, "the model was never asked for step 1: claude -p exited 0:\nLaunched.\nwarn"),
    (True, True, "claude -p ran past 91 s: claude -p exited 0:\nLaunched.\nwarn"),
])
def test_claude_p_that_never_asked_or_ran_past_its_time_fails(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch, served: bool, timed_out: bool,
        why: str) -> None:
    run = runner(tmp_path, steps.CallStep((call(1),)), printed=True)

    def run_print(claude: Path, sandbox: Any, plugins: Any, prompt: str, model: Turns, **more: Any) -> Printed:
        if served:
            model.served[1] = 0.0
        return Printed(timed_out=timed_out)

    monkeypatch.setattr(real, "run_print", run_print)
    monkeypatch.setattr(run, "_env", lambda git_bin: {})
    with pytest.raises(TimeoutError) as raised:
        run._printed(_sandbox(tmp_path), [], Turns(clock), tmp_path)  # type: ignore[arg-type]
    assert str(raised.value) == why


def test_the_evidence_is_what_each_program_left_and_the_runner_saw(tmp_path: Path, clock: FakeTime) -> None:
    run = runner(tmp_path / "run", env={**DEFAULT_ENV, "LICH_BIN": "/opt/lich"})
    run.clock.start()
    model = Turns(clock)
    model.main_requests = [_recorded({"messages": [1]}, at=1.0)]
    model.subagent_requests = [_recorded({"messages": [2]}, at=2.0)]
    model.served, model.sent = {1: 3.0}, {1: [{"call": "toolu_0001"}]}
    run.marks, run.dialogs, run.prompts = [{"at": 4.0, "kind": "esc"}], {"toolu_0001": (5.0, True)}, [("Go", 1)]
    run.plugin_answers, run.notes = {"toolu_0002": (6.0, {"value": 1})}, [("Done.", 2)]
    _logged(run.runs, "lich", 7, ["sessions"])
    os.utime(real._write(run.boots / "boot.1", "{}"), (8.0, 8.0))
    run.bridge_log.write_text('{"b": 1}\n', encoding="utf-8")
    sandbox = _sandbox(tmp_path)
    evidence = run._evidence(model, [(9.0, "lich: 1 worker")], sandbox, [(10.0, True)])  # type: ignore[arg-type]
    assert evidence.t0 == 1_000.0
    assert evidence.paths == [(str(run.lich_bin), "/opt/lich"), (str(tmp_path / "run" / "no-lich"), "/opt/lich"),
                              (str(sandbox.project), "/home/dev/app")]
    assert (evidence.main, evidence.subagent) == ([Request(1.0, {"messages": [1]})], [Request(2.0, {"messages": [2]})])
    assert (evidence.served, evidence.sent, evidence.marks) == ({1: 3.0}, {1: [{"call": "toolu_0001"}]}, run.marks)
    assert (evidence.footers, evidence.panels) == ([(9.0, "lich: 1 worker")], [(10.0, True)])
    assert (evidence.dialogs, evidence.prompts, evidence.plugin_answers, evidence.notes) == (
        run.dialogs, run.prompts, run.plugin_answers, run.notes)
    assert evidence.boots == [(8.0, {})] and evidence.bridge == [{"b": 1}]
    assert evidence.runs == [RunRecord("lich", 7, ["sessions"])]
    unstarted = runner(tmp_path / "other", env={})._evidence(Turns(clock), [], sandbox)  # type: ignore[arg-type]
    assert unstarted.t0 == 1_000.0 and unstarted.paths[0][1] == "lich" and unstarted.panels == []


# -- a whole run, every program a stand-in ----------------------------------------------------------------------


class Box:
    """The sandbox a run makes, and whether it was cleaned up."""

    def __init__(self, root: Path) -> None:
        self.root, self.home, self.project, self.tmp = root, root / "home", root / "project", root / "tmp"
        self.cleaned = False

    def cleanup(self) -> None:
        self.cleaned = True


class Boxes:
    """Stands for the Sandbox class: each sandbox made, where, and with git or not."""

    def __init__(self) -> None:
        self.made: list[tuple[Path, bool]] = []
        self.boxes: list[Box] = []

    def create(self, root: Path, *, git: bool = True) -> Box:
        self.made.append((root, git))
        self.boxes.append(Box(root))
        return self.boxes[-1]


def kept(did: list[tuple[str, Any]], entry: tuple[str, Any], value: Any) -> Any:
    """Keeps what a stand-in was asked, and gives back what it answers."""
    did.append(entry)
    return value


EVIDENCE = Evidence(0.0)


class Served(Turns):
    """The scripted model as a run makes it: started, then closed whatever happened."""

    def __init__(self, clock: FakeTime) -> None:
        super().__init__(clock)
        self.made: dict[str, Any] = {}
        self.life: list[str] = []

    def __call__(self, turns: Any, **more: Any) -> Served:
        self.made = {"turns": turns, **more}
        return self

    def start(self) -> Served:
        self.life.append("start")
        return self

    def close(self) -> None:
        self.life.append("close")


def _whole_run(tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch, *given: Step,
               **changes: Any) -> tuple[RealRunner, Served, Boxes, list[tuple[str, Any]]]:
    run = runner(tmp_path / "run", *given, **changes)
    model, boxes = Served(clock), Boxes()
    monkeypatch.setattr(real, "Sandbox", boxes)
    monkeypatch.setattr(real, "ConformModel", model)
    monkeypatch.setattr(run, "_project", lambda sandbox: None)
    did: list[tuple[str, Any]] = []
    monkeypatch.setattr(run, "_transcript", lambda model, footers, sandbox, panels=(): kept(
        did, ("transcript", (list(footers), list(panels))), ([{"t": 0, "kind": "call"}], EVIDENCE)))
    return run, model, boxes, did


def test_a_run_starts_claude_code_with_every_plugin_drives_its_steps_and_cleans_up(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run, model, boxes, did = _whole_run(
        tmp_path, clock, monkeypatch, steps.CallStep((call(1),)), steps.Errands("tidy"), steps.Errands(None),
        steps.CallStep((call(2, origin="helper"),)), steps.CallStep((call(3, origin="helper"),)),
        mode="accept edits on", permission=RealPermission(decision="hook-deny", hook_reason="No."),
        plugin_calls={2: "helper", 3: "helper"}, subagent_steps=(4,))
    first, last = ScreenLog(["  first"]), ScreenLog(["  the last screen"])
    monkeypatch.setattr(run, "_tui", lambda *more: kept(did, ("tui", run._tui_args), first))
    monkeypatch.setattr(run, "_switch_mode", lambda tui, label: did.append(("switch_mode", label)))

    def drive(tui: Any, model: Any) -> Any:
        did.append(("steps", run._watcher.line.pattern))
        run._watcher.footers.append((1.0, "lich: tidy"))
        return last

    monkeypatch.setattr(run, "_steps", drive)
    monkeypatch.setattr(run, "_finish", lambda tui, model, watcher: did.append(("finish", tui is last)))
    ran = run.run()
    assert (ran.events, ran.screen, ran.remarks, ran.evidence) == (
        [{"t": 0, "kind": "call"}], "  the last screen", run.remarks, EVIDENCE)
    folder = tmp_path / "run"
    assert boxes.made == [(folder / "sandbox", True)] and boxes.boxes[0].cleaned
    assert model.life == ["start", "close"]
    assert model.made == {"turns": run.call_steps, "on_serve": run._served, "lifetime": 600, "subagent_turns": (4,),
                          "log_path": folder / "api.jsonl"}
    (tui_step, tui_args), *rest = did
    assert tui_step == "tui" and tui_args[0] is boxes.boxes[0] and tui_args[2] is model
    assert tui_args[1] == [folder / "status", folder / "plugin", folder / "deny-hook", folder / "plugin-helper"]
    assert tui_args[3] == run._env(folder / "gitbin")
    assert rest == [("switch_mode", "accept edits on"), ("steps", r"lich: \d+ workers?|lich:\ tidy"),
                    ("finish", True), ("transcript", ([(1.0, "lich: tidy")], []))]
    assert last.sent == [("exit",)] and first.sent == [("closed",)]
    assert not run._watcher.is_alive()


def test_a_run_without_a_mode_to_switch_or_git_makes_a_sandbox_with_none(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _, boxes, did = _whole_run(tmp_path, clock, monkeypatch, steps.CallStep((call(1),)), git=RealGit(mode="none"))
    only = ScreenLog(["  done"])
    monkeypatch.setattr(run, "_tui", lambda *more: kept(did, ("tui", run._tui_args[1]), only))
    monkeypatch.setattr(run, "_switch_mode", lambda tui, label: did.append(("switch_mode", label)))
    monkeypatch.setattr(run, "_steps", lambda tui, model: tui)
    monkeypatch.setattr(run, "_finish", lambda tui, model, watcher: None)
    assert run.run().screen == "  done"
    assert boxes.made == [(tmp_path / "run" / "sandbox", False)]
    assert [d[0] for d in did] == ["tui", "transcript"] and did[0][1] == [tmp_path / "run" / "plugin"]


def test_a_run_that_fails_still_closes_the_model_and_cleans_up(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run, model, boxes, did = _whole_run(tmp_path, clock, monkeypatch, steps.CallStep((call(1),)))
    shown = ScreenLog(["  stuck"])
    monkeypatch.setattr(run, "_tui", lambda *more: shown)

    def fails(tui: Any, model: Any) -> Any:
        raise TimeoutError("step 1's calls were never answered")

    monkeypatch.setattr(run, "_steps", fails)
    with pytest.raises(TimeoutError):
        run.run()
    assert model.life == ["start", "close"] and boxes.boxes[0].cleaned
    assert not run._watcher.is_alive() and did == []


def test_a_printed_run_is_claude_p_with_no_screen_to_watch(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    run, model, boxes, did = _whole_run(tmp_path, clock, monkeypatch, steps.CallStep((call(1),)), printed=True)
    monkeypatch.setattr(run, "_printed", lambda sandbox, plugins, model, git_bin: kept(
        did, ("printed", (list(plugins), git_bin)), "claude -p exited 0:\nLaunched.\n"))
    ran = run.run()
    assert (ran.events, ran.screen, ran.evidence) == ([{"t": 0, "kind": "call"}], "claude -p exited 0:\nLaunched.\n",
                                                      EVIDENCE)
    assert did == [("printed", ([tmp_path / "run" / "plugin"], tmp_path / "run" / "gitbin")), ("transcript", ([], []))]
    assert model.life == ["start", "close"] and boxes.boxes[0].cleaned


def test_the_transcript_is_made_from_the_evidence_the_run_gathered(tmp_path: Path, clock: FakeTime) -> None:
    from agent_cards_conformance.extract import Extractor

    run = runner(tmp_path / "run", steps.CallStep((call(1),)))
    run.clock.start()
    events, evidence = run._transcript(Turns(clock), [(2.0, "lich: 1 worker")], _sandbox(tmp_path),  # type: ignore[arg-type]
                                       [(3.0, True)])
    assert (evidence.t0, evidence.footers, evidence.panels) == (1_000.0, [(2.0, "lich: 1 worker")], [(3.0, True)])
    assert events == Extractor(run.scenario, evidence).events()


def test_claude_code_starts_in_the_sessions_permission_mode_with_the_runs_plugins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    did: list[tuple[str, Any]] = []
    monkeypatch.setattr(real, "Tui", lambda *args, **kwargs: kept(did, ("tui", (*args, kwargs)), "tui"))
    run = runner(tmp_path, permission_mode="plan")
    monkeypatch.setattr(run, "_tui_args", ("sandbox", ["plugin"], "model", {"A": "1"}), raising=False)
    shown: Any = run._tui("--resume", "abc")
    assert shown == "tui"
    assert [entry for _, entry in did] == [(Path("claude"), "sandbox", ["plugin"], "model", {
        "env_extra": {"A": "1"}, "extra_args": ["--permission-mode", "plan", "--resume", "abc"], "ready_timeout": 60})]


def test_a_real_run_is_its_runners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = real.RealRun([{"t": 0}], "screen")
    ran: list[Path] = []

    def run(self: RealRunner) -> real.RealRun:
        ran.append(self.folder)
        return made

    monkeypatch.setattr(RealRunner, "run", run)
    assert real.run_real(make_plan(), Path("claude"), tmp_path) is made
    assert ran == [tmp_path]
