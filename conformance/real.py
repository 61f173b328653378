"""One scenario in the real Claude Code: the interactive screen under tmux, the plugin's bridged module,
the scripted model, fake-lich in real time; out comes a transcript in the replay's JSON contract.

What the run gathers is kept as :class:`~agent_cards_conformance.extract.Evidence`, and the transcript is made
from it by :mod:`.extract` (which says where each event comes from), as the self-test makes it from kept
evidence.

Times are real ms since the scenario's t=0: the moment the first step began (for a call step, when the
model sent its calls). Every wait is on the screen, the model's requests or a deadline of the scenario's
own time; nothing sleeps a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import agent_cards
from agent_cards.record import Record, field
from agent_cards_claude_driver.model_api import RecordedRequest
from agent_cards_claude_driver.runs import run_print
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui, dialog_on
from agent_cards_conformance.compare import SCREEN_READ_MS
from agent_cards_conformance.extract import Evidence, Extractor, Request, RunRecord, last_user_text
from agent_cards_conformance.model import MARKER, ConformModel
from agent_cards_conformance.plan import MODE_LABELS, OPEN_TIMEOUT_MS, Plan, step_key
from agent_cards_simulator.lich.install import fake_lich_program
from agent_cards_simulator.lich.program import CALLS_ENV, create_state, transact
from agent_cards_simulator.scenario import steps

ROOT = Path(__file__).resolve().parents[1]
MOD = Path(agent_cards.__file__).resolve().parent


def plugin_folder() -> Path | None:
    """The folder holding the plugin's own files (its manifest and hooks), which an installed package does
    not carry: the checkout this module runs from, else the current folder when it is a clone."""
    for folder in (ROOT, Path.cwd()):
        if (folder / ".claude-plugin" / "plugin.json").is_file() and (folder / "hooks" / "agent-cards.js").is_file():
            return folder
    return None
FOOTER = re.compile(r"lich: \d+ workers?")
#: The default mode's label in 2.1.332's footer (2.1.328 draws none).
DEFAULT_MODE_LABEL = "manual mode on"
#: Any mode's label in the footer (``plan mode on``, ``accept edits on``, ``auto mode on``).
MODE_ON = re.compile(r"\b(?:\w+ mode|accept edits|bypass permissions) on\b")
#: The row the lich line shares with the permission mode: seen without a lich line, the footer has none.
STATUS_ROW = re.compile(r"mode on|edits on|for shortcuts|to cycle")
#: Claude Code's Rewind panel (Esc twice at the idle prompt): its line under the title, in either wording.
REWIND_PANEL = re.compile(r"Restore the (?:code and/or )?conversation to the point before")
STEP_TIMEOUT_S = 90.0
MODE_PRESSES = 6  # more than the permission modes Shift+Tab cycles through
RELOAD_SEEN_S = 15.0  # how long a changed module may take to start its host before the command is typed
END_MARKER = "conform end: that is all."

_WRAPPER = """#!/bin/sh
{guard}
d={runs}
n=$(date +%s%N)-$$
printf '%s\\037' "$@" > "$d/$n.argv"
{hold}{env} {program} "$@" > "$d/$n.out" 2> "$d/$n.err"
rc=$?
printf '%s %s' "$rc" "$(date +%s%N)" > "$d/$n.rc"
cat "$d/$n.out"
cat "$d/$n.err" >&2
exit $rc
"""

_PYTHON = """#!/bin/sh
f=$(mktemp {boots}/boot.$(date +%s%N).XXXXXX)
cat > "$f"
exec {env} {python} "$@" < "$f"
"""

#: The mod's git read an Esc lands in (``esc_in_git``): the wrapper takes the hold flag (one run only), marks the
#: run held, and waits on the fifo until the harness has seen the Esc taken; the release's moment goes to
#: ``.held``, which the run's ms then count from (the hold is the harness's, not git's).
_HOLD = """if [ "$*" = {argv} ] && mv {flag} {flag}.taken 2>/dev/null; then
: > "$d/$n.held"
read _ < {fifo}
printf '%s' "$(date +%s%N)" > "$d/$n.held"
fi
"""

#: The mod's git when the scenario scripts its failure: what it prints, and its exit.
_GIT_REFUSES = """#!/bin/sh
printf '%s' {stderr} >&2
exit {exit}
"""


ERRANDS_ENV = "AGENT_CARDS_CONFORM_ERRANDS"
#: The stand-in status module: the errands text the harness writes (``errands:`` steps), read every 0.1 s
#: and drawn as a mode of the footer (``lich: TEXT``) above the mod, which then leaves its count out.
_STATUS_MODULE = """// A stand-in for lich's status module in a conformance run: it draws the errands it is handed.
let errands = ''
let watching = false

async function look($) {
  const file = await $.env.get('ERRANDS_ENV')
  const read = await $.process.run(['cat', file])
  const text = read.exitCode === 0 ? read.stdout.trim() : ''
  if (text !== errands) {
    errands = text
    $.ui.invalidate('ui.render')
  }
}

function watch($) {
  setInterval(() => {
    look($).catch(() => null)
  }, 100)
}

export function register(on) {
  on('ui.render', { component: 'SessionMode' }, ($, e, next) => {
    if (!watching) {
      watching = true
      watch($)
    }
    if (!errands) return next(e)
    return next({ ...e, props: { ...e.props, modes: [...e.props.modes, 'lich: ' + errands] } })
  })
}
""".replace("ERRANDS_ENV", ERRANDS_ENV)


SPAWN_ENV = "AGENT_CARDS_CONFORM_SPAWN"
#: A stand-in for another plugin that raises an Agent call of its own (a scenario's ``origin: NAME``): the
#: harness writes the call's input (and where to write the answer) to the file SPAWN_ENV names; the module,
#: reading it every 0.1 s, raises it once with ``$.agent.call({tool: 'Agent', input})`` (the Agent tool's own
#: call, as the model's: ``$.agent.spawn`` would resolve to the spawn's answer instead of the tool's result)
#: and writes back what the call resolved to.
_SPAWN_MODULE = """// A stand-in for another plugin in a conformance run: it raises the Agent call it is handed.
let watching = false
let raised = false

async function look($) {
  if (raised) return
  const file = await $.env.get('SPAWN_ENV')
  const read = await $.process.run(['cat', file])
  const text = read.exitCode === 0 ? read.stdout.trim() : ''
  if (!text || raised) return
  raised = true
  const asked = JSON.parse(text)
  let answer
  try {
    const value = await $.agent.call({ tool: 'Agent', input: asked.input })
    answer = { value }
  } catch (error) {
    answer = { error: String((error && error.message) || error) }
  }
  await $.process.run([asked.python, '-c', 'import sys; open(sys.argv[1], "w").write(sys.argv[2])',
    asked.answer, JSON.stringify(answer)])
}

export function register(on) {
  on('ui.render', { component: 'SessionMode' }, ($, e, next) => {
    if (!watching) {
      watching = true
      setInterval(() => {
        look($).catch(() => null)
      }, 100)
    }
    return next(e)
  })
}
""".replace("SPAWN_ENV", SPAWN_ENV)


class RealRun(Record):
    events: list[dict[str, Any]]
    screen: str = ""
    remarks: list[str] = field(default_factory=list)
    evidence: Evidence | None = None  # what the run saw, which the transcript was made from


class _WallClock:
    def __init__(self) -> None:
        self.t0: float | None = None

    def start(self) -> None:
        if self.t0 is None:
            self.t0 = time.time()

    def ms(self, at: float) -> int:
        return max(0, round((at - (self.t0 or at)) * 1000))

    def at(self, t_ms: int) -> float:
        """The ``time.time()`` of the scenario's ``t_ms`` (now, before the clock started)."""
        return time.time() if self.t0 is None else self.t0 + t_ms / 1000

    def wait_until(self, t_ms: int, stop: threading.Event) -> None:
        """Let the scenario's own time pass up to t_ms (no-op when already past)."""
        if self.t0 is None:
            return
        left = self.t0 + t_ms / 1000 - time.time()
        if left > 0:
            stop.wait(left)


class _Screen(threading.Thread):
    """Reads the screen every :data:`SCREEN_READ_MS`: the footer's lich line as it changes (the mod's count, or
    the errands the stand-in status module draws), and when Claude Code's Rewind panel opens and closes."""

    def __init__(self, tui: Tui, errands: Sequence[str] = ()) -> None:
        super().__init__(daemon=True)
        self.tui = tui
        self.line = re.compile("|".join([FOOTER.pattern, *(re.escape(f"lich: {text}") for text in errands)]))
        self.stop = threading.Event()
        self.footers: list[tuple[float, str | None]] = []
        self.panels: list[tuple[float, bool]] = []  # the Rewind panel: (when, open) at each change
        self.last = ""

    def run(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(Exception):
                self.last = self.tui.screen()
                found = self.line.findall(self.last)
                line = found[-1] if found else None
                # Without the row the lich line shares (a menu over it, Esc twice), the screen says nothing.
                seen = line is not None or STATUS_ROW.search(self.last) is not None
                if seen and (not self.footers or self.footers[-1][1] != line):
                    self.footers.append((time.time(), line))
                panel = REWIND_PANEL.search(self.last) is not None
                if panel != (bool(self.panels) and self.panels[-1][1]):
                    self.panels.append((time.time(), panel))
            self.stop.wait(SCREEN_READ_MS / 1000)


def _write(path: Path, text: str, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


class RealRunner:
    """One scenario's real run in ``folder`` (its own HOME, project, lich state and logs)."""

    def __init__(self, plan: Plan, claude: Path, folder: Path) -> None:
        self.plan, self.claude, self.folder = plan, claude, folder
        self.scenario = plan.scenario
        self.clock = _WallClock()
        self.stop = threading.Event()
        self.marks: list[dict[str, Any]] = []  # esc, reload, as the runner did them
        self.lich_bin = folder / "lich" / "bin" / "lich"
        self.runs = folder / "runs"
        self.boots = folder / "boots"
        self.state = folder / "lich" / "state"
        self.bridge_log = folder / "bridge.jsonl"
        self.module = folder / "plugin" / "hooks" / "agent-cards.js"
        self.call_steps = {n: s.calls for n, s in enumerate(self._call_steps(), start=1)}
        self.calls_file = folder / "lich" / "calls.json"
        self.remarks: list[str] = []
        self.errands = folder / "errands.txt"  # what the stand-in status module draws after "lich: "
        self.with_errands = any(isinstance(s, steps.Errands) for s in self.scenario.steps)
        self.prompts: list[tuple[str, int]] = []  # the person's prompts: the text, the main requests before it
        self.notes: list[tuple[str, int]] = []  # the notes typed as lich types them: the text, the requests before
        self._restarts = 0  # continue/resume steps done
        #: call id: when the person answered the dialog whose card named that call, and the answer given
        self.dialogs: dict[str, tuple[float, bool]] = {}
        self.spawn_file = folder / "spawn.json"  # what the stand-in plugin raises (origin: NAME)
        self.plugin_answers: dict[str, tuple[float, dict[str, Any]]] = {}  # call id: when, what its call gave
        self.git_hold = folder / "git-hold"  # present: the mod's next git read of esc_in_git's argv is held
        self.git_release = folder / "git-release"  # the fifo a held read waits on

    def _call_steps(self) -> Iterator[steps.CallStep]:
        yield from (s for s in self.scenario.steps if isinstance(s, steps.CallStep))

    # -- setting up ----------------------------------------------------------------------------------

    def _plugin(self) -> Path:
        plugin, source = self.folder / "plugin", plugin_folder()
        assert source is not None, "agent-cards conform checks for the plugin's files before it runs"
        shutil.copytree(source / ".claude-plugin", plugin / ".claude-plugin", ignore=shutil.ignore_patterns("types"))
        (plugin / "hooks").mkdir(parents=True, exist_ok=True)
        shutil.copy(source / "hooks" / "hooks.json", plugin / "hooks" / "hooks.json")
        shutil.copy(source / "hooks" / "agent-cards.js", self.module)
        (plugin / "agent_cards").symlink_to(MOD)
        return plugin

    def _status_plugin(self) -> Path:
        """The stand-in for lich's status module: listed before the mod, so that its hook runs above the mod's
        and the mod beneath sees the errands part, as with lich's own."""
        plugin = self.folder / "status"
        _write(plugin / ".claude-plugin" / "plugin.json",
               json.dumps({"name": "conform-status", "version": "0.0.1", "description": "draws lich's errands"}))
        _write(plugin / "hooks" / "status.js", _STATUS_MODULE)
        _write(plugin / "hooks" / "hooks.json", json.dumps({"modules": ["./status.js"]}))
        self.errands.write_text("", encoding="utf-8")
        return plugin

    def _spawning_plugin(self, name: str) -> Path:
        """The stand-in for the plugin ``name`` that raises a call of its own (``origin: NAME``): the engine
        names the call's origin after the plugin's manifest."""
        plugin = self.folder / f"plugin-{name}"
        _write(plugin / ".claude-plugin" / "plugin.json",
               json.dumps({"name": name, "version": "0.0.1", "description": "raises an Agent call of its own"}))
        _write(plugin / "hooks" / "spawn.js", _SPAWN_MODULE)
        _write(plugin / "hooks" / "hooks.json", json.dumps({"modules": ["./spawn.js"]}))
        return plugin

    def _hook_deny_plugin(self, reason: str) -> Path:
        plugin = self.folder / "deny-hook"
        _write(plugin / ".claude-plugin" / "plugin.json",
               json.dumps({"name": "conform-deny", "version": "0.0.1", "description": "denies every Agent call"}))
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                      "permissionDecisionReason": reason}}
        script = _write(plugin / "hooks" / "deny.sh", f"#!/bin/sh\ncat > /dev/null\nprintf '%s\\n' "
                        f"{shlex.quote(json.dumps(out))}\n", 0o755)
        hook = {"type": "command", "command": shlex.quote(str(script)), "timeout": 30}
        _write(plugin / "hooks" / "hooks.json",
               json.dumps({"hooks": {"PreToolUse": [{"matcher": "Agent", "hooks": [hook]}]}}))
        return plugin

    def _wrappers(self) -> Path:
        self.runs.mkdir(parents=True)
        self.boots.mkdir(parents=True)
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in {
            "FAKE_LICH_STATE": str(self.state), "FAKE_LICH_REAL_SLEEP": "1", CALLS_ENV: str(self.calls_file),
            "FAKE_LICH_ARGV0": self.scenario.env.get("LICH_BIN") or "lich"}.items())
        (self.runs / "lich").mkdir()
        (self.runs / "git").mkdir()
        # lich's wrapper runs with the PATH of the harness, whatever the session host's is (git hidden).
        path = f"PATH={shlex.quote(os.environ.get('PATH', os.defpath))}; export PATH"
        _write(self.lich_bin, _WRAPPER.format(guard=path, runs=shlex.quote(str(self.runs / "lich")), hold="",
                                              env="env " + env,
                                              program=shlex.quote(str(fake_lich_program()))), 0o755)
        real_git = shutil.which("git") or "git"
        # Only the plugin's runs (its session host has CLAUDE_PLUGIN_ROOT) are the mod's: Claude Code's own
        # git, for its worktrees and its prompt's context, is the real one untouched.
        guard = f'[ -n "$CLAUDE_PLUGIN_ROOT" ] || exec {shlex.quote(real_git)} "$@"'
        mods_git = real_git
        git = self.plan.git
        if git.mode == "refuses" or (git.mode == "none" and git.stderr):
            mods_git = str(_write(self.folder / "git-refuses", _GIT_REFUSES.format(
                stderr=shlex.quote(git.stderr), exit=int(git.exit)), 0o755))
        bin_dir = self.folder / "gitbin"
        hold = ""
        for argv in dict.fromkeys(self.plan.esc_in_git.values()):  # one read held per step that asks for it
            hold += _HOLD.format(argv=shlex.quote(" ".join(argv)), flag=shlex.quote(str(self.git_hold)),
                                 fifo=shlex.quote(str(self.git_release)))
        _write(bin_dir / "git", _WRAPPER.format(guard=guard, runs=shlex.quote(str(self.runs / "git")), env="",
                                                hold=hold, program=shlex.quote(mods_git)), 0o755)
        python = shutil.which("python3") or "python3"
        host_env = ""
        if git.mode == "missing":
            # The session host, and so every run of the mod's, looks for git in a folder that holds none.
            (self.folder / "no-git").mkdir()
            python = _interpreter(python)  # a launcher (pyenv's shim) would look for its own tools on PATH
            env_program = shutil.which("env") or "/usr/bin/env"
            host_env = f"{shlex.quote(env_program)} PATH={shlex.quote(str(self.folder / 'no-git'))}"
        _write(self.folder / "python", _PYTHON.format(boots=shlex.quote(str(self.boots)), env=host_env,
                                                      python=shlex.quote(python)), 0o755)
        return bin_dir

    def _project(self, sandbox: Sandbox) -> None:
        git = self.plan.git
        if git.mode == "branch" and git.branch != "main":
            _git(sandbox, "checkout", "-q", "-b", git.branch)
        elif git.mode == "detached":
            _git(sandbox, "checkout", "-q", "--detach")
        permission = self.plan.permission
        if permission.decision == "ask" and permission.rule:
            _write(sandbox.project / ".claude" / "settings.local.json", json.dumps({"permissions": {"ask": ["Agent"]}}))
        elif permission.decision == "deny":  # the project's settings: the refusal says "from projectSettings"
            _write(sandbox.project / ".claude" / "settings.json",
                   json.dumps({"permissions": {"deny": list(permission.deny_rules)}}))
        for name in self.scenario.session.agent_types:
            _write(sandbox.project / ".claude" / "agents" / f"{name}.md",
                   f"---\nname: {name}\ndescription: The project's own {name} agent.\n---\nYou are {name}.\n")

    def _missing_lich(self, wanted: str) -> str:
        """A lich that is not installed: the scenario's own path where nothing is there on this machine (so
        that a toast the mod cuts to fit names the same path and is cut at the same place), else a path in
        the run's folder that nothing is at."""
        if os.path.isabs(wanted) and not os.path.lexists(wanted):
            return wanted
        return str(self.folder / "no-lich")

    def _env(self, git_bin: Path) -> dict[str, str]:
        env = {k: v for k, v in self.scenario.env.items() if k != "LICH_BIN"}
        wanted = self.scenario.env.get("LICH_BIN")
        if wanted is not None:
            env["LICH_BIN"] = str(self.lich_bin) if self.scenario.lich.installed else self._missing_lich(wanted)
        env["AGENT_CARDS_BRIDGE_LOG"] = str(self.bridge_log)
        if self.with_errands:
            env[ERRANDS_ENV] = str(self.errands)
        if self.plan.plugin_calls:
            env[SPAWN_ENV] = str(self.spawn_file)
        env["AGENT_CARDS_PYTHON"] = str(self.folder / "python")
        env["PATH"] = f"{git_bin}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
        return env

    # -- running ------------------------------------------------------------------------------------

    def run(self) -> RealRun:
        plugin = self._plugin()
        plugins = [self._status_plugin(), plugin] if self.with_errands else [plugin]
        if self.plan.permission.decision == "hook-deny":
            plugins.append(self._hook_deny_plugin(self.plan.permission.hook_reason))
        plugins += [self._spawning_plugin(name) for name in dict.fromkeys(self.plan.plugin_calls.values())]
        git_bin = self._wrappers()
        sandbox = Sandbox.create(self.folder / "sandbox", git=self.plan.git.mode != "none")
        model = ConformModel(self.call_steps, on_serve=self._served, lifetime=600,
                             subagent_turns=self.plan.subagent_steps,
                             log_path=self.folder / "api.jsonl")
        model.start()
        screen = ""
        try:
            self._project(sandbox)
            if self.plan.printed:
                screen = self._printed(sandbox, plugins, model, git_bin)
                events, evidence = self._transcript(model, [], sandbox)
                return RealRun(events, screen, self.remarks, evidence)
            self._tui_args = (sandbox, plugins, model, self._env(git_bin))
            with self._tui() as first, contextlib.ExitStack() as self._later:
                if self.plan.mode is not None:
                    self._switch_mode(first, self.plan.mode)
                watcher = self._watcher = _Screen(first, [s.text for s in self.scenario.steps
                                                          if isinstance(s, steps.Errands) and s.text])
                watcher.start()
                tui = first
                try:
                    tui = self._steps(first, model)
                    self._finish(tui, model, watcher)
                    screen = tui.screen()
                finally:
                    # The footer's last state is the one before /exit, which clears the screen.
                    watcher.stop.set()
                    watcher.join(5)
                with contextlib.suppress(TimeoutError, AssertionError):
                    tui.exit()
                events, evidence = self._transcript(model, watcher.footers, sandbox, watcher.panels)
        finally:
            model.close()
            sandbox.cleanup()
        return RealRun(events, screen, self.remarks, evidence)

    def _printed(self, sandbox: Sandbox, plugins: Sequence[Path], model: ConformModel, git_bin: Path) -> str:
        """A non-interactive session: ``claude -p`` with the one step's marker as its prompt. Nobody is there
        to answer a dialog (the engine refuses what would ask), and no screen has a footer. What it printed
        stands for the screen."""
        (step,) = self._call_steps()
        timeout = STEP_TIMEOUT_S + max(self._open_ms(c) for c in step.calls) / 1000
        run = run_print(self.claude, sandbox, plugins, MARKER.format(n=1), model, env_extra=self._env(git_bin),
                        extra_args=["--permission-mode", "default"], timeout=timeout)
        printed = f"claude -p exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
        if 1 not in model.served:
            raise TimeoutError(f"the model was never asked for step 1: {printed}")
        if run.timed_out:
            raise TimeoutError(f"claude -p ran past {timeout:.0f} s: {printed}")
        self.clock.wait_until(self.plan.end_ms, self.stop)
        return printed

    def _switch_mode(self, tui: Tui, label: str) -> None:
        """Shift+Tab, as the person cycles the permission modes, until the footer names ``label`` (each press
        waits for the footer to change: a key pressed before the redraw would be lost)."""
        for _ in range(MODE_PRESSES):
            before = tui.screen()
            if label in before:
                return
            tui.key("BTab")
            self._wait(_changed(tui, before), 10, "Shift+Tab changed nothing", tui)
        raise TimeoutError(f"the footer never showed {label!r}:\n{tui.screen()}")

    def _switch_to(self, tui: Tui, mode: str) -> None:
        """Shift+Tab until the footer shows ``mode``'s label (the default mode: ``manual mode on``, or none), each press
        waiting for the footer's mode to move (any other redraw, a spinner or the lich line, is not the
        press's: pressing again before the mode moved would go one mode too far)."""
        for _ in range(MODE_PRESSES):
            before = tui.screen()
            if in_mode(before, mode):
                return
            tui.key("BTab")
            self._wait(_mode_moved(tui, mode_label(before)), 10, "Shift+Tab moved no mode", tui)
        raise TimeoutError(f"the footer never showed {mode} mode:\n{tui.screen()}")

    def _served(self, n: int) -> None:
        """The model sent step n's calls: the scenario's clock starts with the first step, and fake-lich
        learns when each call that opens a card was made, and its place among the opens."""
        self._start_clock()
        calls = json.loads(self.calls_file.read_text(encoding="utf-8")) if self.calls_file.exists() else {}
        now = self.clock.ms(time.time())
        for call in self.call_steps.get(n, ()):
            if call.id in self.plan.opens:
                calls[str(call.input.get("prompt"))] = {"ms": now, "turn": self.plan.opens[call.id]}
        self.calls_file.parent.mkdir(parents=True, exist_ok=True)
        temp = self.calls_file.with_suffix(".tmp")
        temp.write_text(json.dumps(calls), encoding="utf-8")
        temp.replace(self.calls_file)

    def _start_clock(self) -> None:
        """t=0: lich's state is made now, so that its own clock (real ms since then) is the scenario's."""
        if self.clock.t0 is None:
            create_state(self.state, self.scenario.lich)
            self.clock.start()

    def _tui(self, *more: str) -> Tui:
        """Claude Code in the run's sandbox; ``more``: the arguments of a restart (``--continue``)."""
        sandbox, plugins, model, env = self._tui_args
        return Tui(self.claude, sandbox, plugins, model, env_extra=env,
                   extra_args=["--permission-mode", self.plan.permission_mode, *more], ready_timeout=60)

    def _steps(self, tui: Tui, model: ConformModel) -> Tui:
        """Drive each step; the Claude Code screen the steps end on (a restart starts another)."""
        n = 0
        for step in self.scenario.steps:
            if isinstance(step, steps.CallStep):
                n += 1
                if n in self.plan.plugin_calls:
                    self._plugin_call(tui, model, n, step)
                elif n in self.plan.subagent_steps:
                    self._subagent_call(tui, model, n, step)
                else:
                    self._calls(tui, model, n, step)
                self._type_notes(tui, model)  # a note due during the call's turn is typed once it is over
                continue
            if isinstance(step, steps.At) and isinstance(step.step, steps.HostDies):
                continue  # mid-open: the next call step kills the host at that moment of its open (plan.host_dies_in)
            self._start_clock()
            if isinstance(step, steps.Wait):
                self._pass_time(tui, model, time.time() + step.ms / 1000)
            elif isinstance(step, steps.Until):
                self._pass_time(tui, model, self.clock.at(step.t))
            elif isinstance(step, steps.Esc):
                self._mark("esc")
                tui.key("Escape")
            elif isinstance(step, steps.Reload):
                self._mark("reload")
                self._reload(tui)
                tui.wait_idle(30)
            elif isinstance(step, steps.Mode):
                self._mark("mode", mode=step.mode)
                self._switch_to(tui, step.mode)
            elif isinstance(step, steps.Errands):
                temp = self.errands.with_suffix(".tmp")
                temp.write_text(step.text or "", encoding="utf-8")
                temp.replace(self.errands)
            elif isinstance(step, steps.SessionStart):
                tui.type("/clear")
                tui.wait_idle(30)
            elif isinstance(step, steps.Continue | steps.Resume):
                tui = self._start_again(tui, model, resume=isinstance(step, steps.Resume))
            elif isinstance(step, steps.HostDies):
                self._host_dies(tui)
            elif isinstance(step, steps.Prompt):
                self._prompt(tui, model, step.text)
            elif not isinstance(step, steps.Footer | steps.Check):  # plan.why_not keeps these out: never skip one
                raise NotImplementedError(f"the real run cannot drive a {step_key(step)!r} step")
            # footer, check: nothing to do (the engine draws the footer; a check reads the fake's memory)
            self._type_notes(tui, model)
        return tui

    def _plugin_call(self, tui: Tui, model: ConformModel, n: int, step: steps.CallStep) -> None:
        """The stand-in plugin raises the step's one call once the session has started (the mod's session host
        was handed session.start, as the fake host's is before any call); the step ends with what the call
        resolved to."""
        (call,) = step.calls
        self._wait(self._session_started, 60, "the session never started its session host", tui)
        answer = self.folder / f"spawn-{n}.answer"
        temp = self.spawn_file.with_suffix(".tmp")
        temp.write_text(json.dumps({"input": dict(call.input), "answer": str(answer),
                                    "python": shutil.which("python3") or "python3"}), encoding="utf-8")
        model.made_elsewhere(n)  # the call is made now: its step's window starts (its check's and spawn's)
        self._served(n)
        temp.replace(self.spawn_file)
        self._wait(answer.exists, STEP_TIMEOUT_S, f"the plugin {call.origin!r} never had its call answered", tui)
        with contextlib.suppress(ValueError, OSError):
            self.plugin_answers[call.id] = (answer.stat().st_mtime, json.loads(answer.read_text(encoding="utf-8")))
        tui.wait_idle(60)

    def _session_started(self) -> bool:
        """A session host of the mod's was started with session.start on its stdin."""
        return any('"session.start"' in _read(boot) for boot in self.boots.glob("boot.*"))

    def _subagent_call(self, tui: Tui, model: ConformModel, n: int, step: steps.CallStep) -> None:
        """A native agent's first reply made the step's call (the scripted model): the step ends once that
        agent read its answer."""
        ids = [c.id for c in step.calls]
        if not model.wait_until(lambda m: all(i in model.results() for i in ids), STEP_TIMEOUT_S):
            raise TimeoutError(f"no subagent made and read step {n}'s calls:\n{tui.screen()}")
        tui.wait_idle(60)

    def _mark(self, kind: str, **more: Any) -> None:
        self.marks.append({"at": time.time(), "kind": kind, **more})

    # -- the session's lifecycle: a new process, a dead session host, the person's prompt ------------------

    def _start_again(self, tui: Tui, model: ConformModel, *, resume: bool) -> Tui:
        """``/exit``, then Claude Code again in the same sandbox with ``--continue`` (``--resume <id>``); the
        step ends once the fresh module's session host has started, and has read lich where the fake host's
        does at once (its order: session.start, the read, then the next step)."""
        tui.wait_idle(30)
        how = "resume" if resume else "continue"
        more = ["--resume", self._session_id()] if resume else ["--continue"]
        self._mark("resume", how=how)
        tui.exit()
        tui.close()
        hosts = self._hosts()
        fresh = self._later.enter_context(self._tui(*more))
        self._watcher.tui = fresh
        self._wait(lambda: self._hosts() > hosts, 30, f"claude {more[0]} started no session host", fresh)
        booted = max(p.stat().st_mtime for p in self.boots.glob("boot.*"))
        reads = self.plan.resume_reads
        if len(reads) > self._restarts and reads[self._restarts]:
            self._wait(lambda: self._read_lich_since(booted), 30, "the fresh session host never read lich", fresh)
        self._restarts += 1
        return fresh

    def _session_id(self) -> str:
        """The session Claude Code keeps a log of (``~/.claude/projects/<slug>/<id>.jsonl``), the newest."""
        sandbox = self._tui_args[0]
        logs = sorted((sandbox.home / ".claude" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)
        if not logs:
            raise RuntimeError("Claude Code kept no session log to resume")
        return logs[-1].stem

    def _read_lich_since(self, since: float) -> bool:
        """A ``lich sessions`` run that started since ``since`` has ended."""
        for argv_file in (self.runs / "lich").glob("*.argv"):
            started = int(argv_file.name.split("-")[0]) / 1e9
            if (started >= since and argv_file.with_suffix(".rc").exists()
                    and argv_file.read_text(encoding="utf-8").split("\x1f")[:1] == ["sessions"]):
                return True
        return False

    def _host_dies(self, tui: Tui) -> None:
        """SIGKILL to the plugin's session hosts of this run; the step ends once they are gone."""
        pids = self._tui_args[0].session_hosts()
        if not pids:
            raise RuntimeError(f"host.dies: no session host is running:\n{tui.screen()}")
        self._mark("host.dies")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._wait(lambda: not set(pids) & set(self._tui_args[0].session_hosts()), 10,
                   "a killed session host still runs", tui)

    def _host_dies_mid_open(self, tui: Tui, since: float, into_ms: int) -> bool:
        """``at: T`` + ``host.dies``: the hosts are killed ``into_ms`` into the real open (True once done)."""
        started = self._open_started(since)
        if started is None or time.time() < started + into_ms / 1000:
            return False
        self._host_dies(tui)
        return True

    def _prompt(self, tui: Tui, model: ConformModel, text: str) -> None:
        """The person's prompt: typed; the step ends when the model was asked with it and the turn is over."""
        asked = len(model.main_requests)
        self.prompts.append((text, asked))
        tui.type(text)
        if not model.wait_until(lambda m: any(text in last_user_text(r.body)
                                              for r in m.main_requests[asked:]), STEP_TIMEOUT_S):
            raise TimeoutError(f"the model was never asked with the prompt {text!r}:\n{tui.screen()}")
        tui.wait_idle(60)

    def _reload(self, tui: Tui) -> None:
        """One trigger: the module file changed (Claude Code reloads a changed module by itself, and
        ``/reload-plugins`` reloads an unchanged one not at all); the command only if the change started
        no session host."""
        started = self._hosts()
        self.module.write_text(self.module.read_text(encoding="utf-8") + f"// reload {time.time_ns()}\n",
                               encoding="utf-8")
        try:
            self._wait(lambda: self._hosts() > started, RELOAD_SEEN_S, "the changed module started no host", tui)
            return
        except TimeoutError:
            self.remarks.append("the changed module was not reloaded by itself: /reload-plugins typed")
        tui.type("/reload-plugins")
        self._wait(lambda: self._hosts() > started, 30, "the reload started no session host", tui)

    def _hosts(self) -> int:
        """How many session hosts the module has started (each one's stdin is kept in ``boots``)."""
        return len(list(self.boots.glob("boot.*")))

    def _wait(self, done: Callable[[], bool], timeout: float, what: str, tui: Tui) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{what}:\n{tui.screen()}")
            self.stop.wait(0.05)

    def _open_started(self, since: float) -> float | None:
        """When the first ``lich open`` since ``since`` started (the bridge has reached the open), or None."""
        for argv_file in sorted((self.runs / "lich").glob("*.argv")):
            started = int(argv_file.name.split("-")[0]) / 1e9
            if started >= since and argv_file.read_text(encoding="utf-8").split("\x1f")[:1] == ["open"]:
                return started
        return None

    def _git_held(self, since: float) -> float | None:
        """When the mod's git read the wrapper holds began (since ``since``), or None."""
        for held in sorted((self.runs / "git").glob("*.held")):
            started = int(held.name.split("-")[0]) / 1e9
            if started >= since:
                return started
        return None

    def _release_git(self) -> None:
        """Let a held git read go on (nothing when none waits on the fifo)."""
        if not self.git_release.exists():
            return
        try:
            fd = os.open(self.git_release, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader: no read is held
            return
        try:
            os.write(fd, b"go\n")
        finally:
            os.close(fd)

    def _esc_moment(self, step: steps.CallStep, served: float, n: int = 0) -> float | None:
        """When Esc is due: ``esc_after`` ms after the call, counted from the real open's start when the fake
        host's open starts before it (so Esc lands mid-open however late the engine reached the open)."""
        if step.esc_after is None:
            return None
        if n in self.plan.esc_in_git:  # the read it lands in is held: Esc as soon as the read has begun
            return self._git_held(served)
        before = [self.plan.open_after[c.id] for c in step.calls
                  if c.id in self.plan.open_after and self.plan.open_after[c.id] <= step.esc_after]
        if not before:
            return served + step.esc_after / 1000
        started = self._open_started(served)
        return None if started is None else started + (step.esc_after - min(before)) / 1000

    def _calls(self, tui: Tui, model: ConformModel, n: int, step: steps.CallStep) -> None:
        ids = [c.id for c in step.calls]
        asks = {c.id: self.plan.permission.answers[c.id] for c in step.calls if c.id in self.plan.permission.answers}
        if n in self.plan.esc_in_git:
            if not self.git_release.exists():
                os.mkfifo(self.git_release)
            self.git_hold.touch()
        try:
            self._await_calls(tui, model, n, step, ids, asks)
        finally:
            self.git_hold.unlink(missing_ok=True)  # a read of a later step is not held for this one's Esc
            self._release_git()  # a held read never outlives its step
        tui.wait_idle(60)

    def _await_calls(self, tui: Tui, model: ConformModel, n: int, step: steps.CallStep, ids: list[str],
                     asks: dict[str, bool]) -> None:
        """Type the step's marker, then answer its dialogs and press its keys until every call is answered
        (or the turn was interrupted, and the screen says so)."""
        tui.type(MARKER.format(n=n))
        if not model.wait_until(lambda _: n in model.served, STEP_TIMEOUT_S):
            raise TimeoutError(f"the model was never asked for step {n}:\n{tui.screen()}")
        served = model.served[n]
        esc_due = step.esc_after is not None
        esc_at = self._esc_moment(step, served, n)
        dies_in = [self.plan.host_dies_in[i] for i in ids if i in self.plan.host_dies_in]  # at: T host.dies
        deadline = time.monotonic() + STEP_TIMEOUT_S + max(self._open_ms(c) for c in step.calls) / 1000
        interrupted = refused = False  # Esc was pressed; a dialog was answered "no" (either ends the turn)
        while True:
            answered = model.results()
            if all(i in answered for i in ids) or interrupted or refused:
                break
            if esc_due and esc_at is None:  # waiting for the open to start
                esc_at = self._esc_moment(step, served, n)
            if dies_in and self._host_dies_mid_open(tui, served, dies_in[0]):
                dies_in = []
                continue
            if esc_at is not None and time.time() >= esc_at:
                esc_at, esc_due = None, False
                self._mark("esc")
                tui.key("Escape")
                interrupted = True
                continue
            screen = tui.screen()
            dialog = dialog_on(screen)
            if dialog is not None and asks:
                # The dialog ignores keys for a moment after it appears (a prompt typed just before it must
                # not answer it): press until it goes, and only then is this call's answer spent. Each dialog
                # is answered as the plan says for the call its card names.
                call_id = _asked_call(dialog[1], step.calls, asks)
                yes = asks[call_id]
                pressed = time.time()
                if not tui.answer_dialog(yes, screen):
                    continue
                self.dialogs[call_id] = (pressed, yes)
                del asks[call_id]
                refused = not yes  # a "no" ends the turn: the loop stops here
                continue
            if time.monotonic() >= deadline:
                raise TimeoutError(f"step {n}'s calls were never answered:\n{screen}")
            idle = 0.05 if esc_due or dies_in else 0.2  # waiting on the open to start: look more often
            wait = idle if esc_at is None else max(0.0, min(0.2, esc_at - time.time()))
            model.wait_until(lambda m: False, wait)
        if interrupted:
            with contextlib.suppress(TimeoutError):
                tui.wait_for("Interrupted", 30)
        elif refused:  # no call may be running to say "Interrupted": the turn's end is its spinner gone
            tui.wait_idle(30)

    def _open_ms(self, call: steps.ToolCall) -> int:
        """How long the call's open may take: its scripted ms, or the mod's timeout for an open that hangs."""
        scripted = call.lich or self.scenario.lich.default_open
        if scripted is None:
            return 800
        return OPEN_TIMEOUT_MS if scripted.hang else scripted.ms

    def _finish(self, tui: Tui, model: ConformModel, watcher: _Screen) -> None:
        """The last calls' results reach the model (after a "no" or Esc only with the next prompt); then
        time passes up to the fake's last event, and the footer settles (its 5 s poll)."""
        self._start_clock()
        pending = [c.id for n, calls in self.call_steps.items() for c in calls
                   if c.id not in model.results() and n not in self.plan.plugin_calls]
        if pending:
            tui.type(END_MARKER)
            model.wait_until(lambda _: all(i in model.results() for i in pending), 60)
            tui.wait_idle(60)
        self._pass_time(tui, model, self.clock.at(self.plan.end_ms))
        self._pass_time(tui, model, time.time() + 6.5)  # one 5 s poll and its redraw

    # -- lich's notes ---------------------------------------------------------------------------------

    def _pass_time(self, tui: Tui, model: ConformModel, until: float) -> None:
        """Real time passes up to ``until`` (a ``time.time()``), and lich types each note as it falls due."""
        while not self.stop.is_set():
            now = time.time()
            if now >= until:
                return
            due = self._next_note_at()
            if due is not None and due <= now:
                if not self._type_notes(tui, model):  # the prompt is not free: look again at the next screen read
                    self.stop.wait(SCREEN_READ_MS / 1000)
                continue
            # fake-lich's schedule may change while time passes (a worker opened meanwhile): look again each second
            self.stop.wait(min(until, due if due is not None else until, now + 1.0) - now)

    def _next_note_at(self) -> float | None:
        """When fake-lich's next note falls due (a ``time.time()``), if any is pending."""
        if self.clock.t0 is None or not (self.state / "world.json").exists():
            return None
        with contextlib.suppress(Exception):  # a state being written: the next look reads it
            due = transact(str(self.state), lambda state: state.world.next_note_at())
            return None if due is None else self.clock.at(due)
        return None

    def _type_notes(self, tui: Tui, model: ConformModel) -> bool:
        """lich types each note due by now at the asking session's prompt, between turns; False when the prompt is
        not free for it. The Rewind panel over the prompt, or a dialog, holds the notes (the keys would land
        there); a turn still running does not (Claude Code submits what was typed once the turn is over). Typed
        as a paste, its line breaks stay in the note."""
        if self.clock.t0 is None or not (self.state / "world.json").exists() or self.plan.printed:
            return True
        screen = tui.screen()
        if REWIND_PANEL.search(screen) or dialog_on(screen) is not None:
            return False
        now_ms = self.clock.ms(time.time())
        try:
            due = transact(str(self.state), lambda state: state.world.notes_due(now_ms))
        except Exception as error:  # said so: the run then reads no note, and the lane shows it
            self.remarks.append(f"fake-lich's notes could not be read: {error}")
            return True
        for note in due:
            self.notes.append((note.text, len(model.main_requests)))
            tui.paste(note.text)
        return True

    # -- the transcript -------------------------------------------------------------------------------

    def _transcript(self, model: ConformModel, footers: Sequence[tuple[float, str | None]], sandbox: Sandbox,
                    panels: Sequence[tuple[float, bool]] = ()) -> tuple[list[dict[str, Any]], Evidence]:
        """The run's transcript, made from the evidence it gathered (as the self-test makes it from kept evidence)."""
        evidence = self._evidence(model, footers, sandbox, panels)
        return Extractor(self.scenario, evidence).events(), evidence

    def _evidence(self, model: ConformModel, footers: Sequence[tuple[float, str | None]], sandbox: Sandbox,
                  panels: Sequence[tuple[float, bool]] = ()) -> Evidence:
        """What the run saw, as the programs showed it: read from the model, the screen's watcher, the runner's
        own record and the files the wrappers, the session hosts, the bridge and fake-lich left."""
        virtual_lich = self.scenario.env.get("LICH_BIN") or "lich"
        return Evidence(
            t0=self.clock.t0 or time.time(),
            paths=[(str(self.lich_bin), virtual_lich), (str(self.folder / "no-lich"), virtual_lich),
                   (str(sandbox.project), self.scenario.session.cwd)],
            main=[_request(r) for r in model.main_requests],
            subagent=[_request(r) for r in model.subagent_requests],
            served=dict(model.served), sent={n: [dict(c) for c in calls] for n, calls in model.sent.items()},
            footers=list(footers), panels=list(panels), marks=[dict(m) for m in self.marks],
            dialogs=dict(self.dialogs), prompts=list(self.prompts), plugin_answers=dict(self.plugin_answers),
            boots=self._boots(), runs=self._run_records(), bridge=self._bridge_log(), notes=list(self.notes),
        )

    def _boots(self) -> list[tuple[float, dict[str, Any]]]:
        """Each session host's start file: when it was written, and what it holds."""
        out = []
        for boot in sorted(self.boots.glob("boot.*")):
            with contextlib.suppress(OSError, ValueError):
                out.append((boot.stat().st_mtime, json.loads(boot.read_text(encoding="utf-8") or "{}")))
        return out

    def _run_records(self) -> list[RunRecord]:
        """What the wrappers logged of each run, lich's and then git's, in the order they started."""
        out = []
        for program in ("lich", "git"):
            for argv_file in sorted((self.runs / program).glob("*.argv")):
                stem = argv_file.with_suffix("")
                released = _read(stem.with_suffix(".held")).strip()
                rc = _read(stem.with_suffix(".rc")).split()
                out.append(RunRecord(
                    program, int(stem.name.split("-")[0]), argv_file.read_text(encoding="utf-8").split("\x1f")[:-1],
                    _read(stem.with_suffix(".out")), _read(stem.with_suffix(".err")),
                    int(released) if released.isdigit() else None,
                    (int(rc[0]), int(rc[1])) if len(rc) == 2 else None))
        return out

    def _bridge_log(self) -> list[dict[str, Any]]:
        if not self.bridge_log.exists():
            return []
        lines = []
        for raw in self.bridge_log.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                lines.append(json.loads(raw))
        return lines


def _request(request: RecordedRequest) -> Request:
    """A request as evidence keeps it: its time and conversation (Claude Code's system prompt and tools aside)."""
    body = request.body if isinstance(request.body, dict) else {}
    return Request(request.time, {"messages": body.get("messages") or []})


def mode_label(screen: str) -> str | None:
    """The footer's label of the permission mode (``plan mode on``), None when it shows none."""
    found = MODE_ON.findall(screen)
    return found[-1] if found else None


def in_mode(screen: str, mode: str) -> bool:
    """Whether the screen's footer shows the permission mode ``mode`` (the default mode: no mode's label)."""
    label = MODE_LABELS.get(mode)
    if label is not None:
        return label in screen
    # 2.1.332 labels the default mode too, and auto mode sits in its cycle with a label of its own
    return DEFAULT_MODE_LABEL in screen or MODE_ON.search(screen) is None


def _asked_call(named: str, calls: Sequence[steps.ToolCall], asks: Mapping[str, bool]) -> str:
    """The call a dialog asks about: the one still to be answered whose description its card names (a
    long one may be cut short with an ellipsis), else the first still to be answered."""
    waiting = [c for c in calls if c.id in asks]
    cut = named.rstrip("…").rstrip()
    for call in waiting:
        description = str(call.input.get("description", ""))
        if named and (description == named or (named.endswith("…") and description.startswith(cut))):
            return call.id
    return waiting[0].id


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _mode_moved(tui: Tui, label: str | None) -> Callable[[], bool]:
    """Whether the footer shows another mode's label than ``label``."""
    return lambda: mode_label(tui.screen()) != label


def _changed(tui: Tui, before: str) -> Callable[[], bool]:
    """Whether the screen shows something else than ``before``."""
    return lambda: tui.screen() != before


def _interpreter(python: str) -> str:
    """The interpreter ``python`` runs in the end, which needs no PATH to start."""
    import subprocess

    found = subprocess.run([python, "-I", "-S", "-c", "import sys; print(sys.executable)"], capture_output=True,
                           text=True, check=True, timeout=60).stdout.strip()
    return found or python


def _git(sandbox: Sandbox, *args: str) -> None:
    import subprocess

    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(sandbox.home), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=sandbox.project, env=env, check=True, capture_output=True)


def run_real(plan: Plan, claude: Path, folder: Path) -> RealRun:
    return RealRunner(plan, claude, folder).run()
