"""The bridge in the real Claude Code (offline): its cost per dispatch, the first call's wait, Python's own time.

``python -m bench.bridge [--quick]``, or :func:`bridge_figures` from the ``bench`` package.

- **Per dispatch.** A probe plugin's ``session.start`` hook makes ``$.tool.call({tool: 'TaskStop'})`` calls
  (an unknown id: the mod passes it on with ``next``, Claude Code answers "No task found") and times each.
  In the same round, the same probe runs beside this plugin (the bridge) and beside a plain JS hook doing
  the same (``on('tool.call', {tool: 'TaskStop'}, ($, e, next) => next(e))``), in ``-p`` and interactive.
  Goal: the bridge's median at most 2x the plain hook's, round by round.
- **The first Agent call's wait.** A session whose prompt is typed the moment the screen is ready (and a
  ``-p`` run, whose first request leaves at once): how long the first Agent call waited for the host to say
  hello (the module measures it and hands it to the host, whose step log keeps it). Goal: 0 ms here; in
  ``python -m bench first`` (P7, :func:`first_call_waits`) at most 100 ms, inside lich on a calm machine.
- **Python's own time per event**: the host's CPU time across the probe's dispatches (its step log), per
  dispatch. Goal: at most 1 ms.

Every run uses claude_driver: a scratch HOME, the guard variables, the fake Messages API on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_cards.arguments import CommandParser, interrupted, parse
from agent_cards_claude_driver.install import ensure_claude
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse
from agent_cards_claude_driver.runs import module_plugin, run_print
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_claude_driver.waits import until
from agent_cards_simulator.lich.scripts import LichScript
from bench.figures import Figure, print_section

ROOT = Path(__file__).resolve().parents[1]
AGENT_HOOK = 1  # the mod's tool.call hook for Agent: the second its register makes (session.start first)
CALLS = 40  # dispatches per run; the first WARM are not counted (the host may still be starting)
WARM = 5
TRIGGER = "E2E-TRIGGER: please delegate this to a subagent."

_PROBE = """\
export function register(on) {
  on('session.start', async ($, e, next) => {
    const result = await next(e)
    const out = await $.env.get('AGENT_CARDS_BENCH_OUT')
    const times = []
    for (let i = 0; i < %(calls)d; i++) {
      const begun = performance.now()
      await $.tool.call({ tool: 'TaskStop', task_id: `bench-${i}` })
      times.push(performance.now() - begun)
    }
    await $.fs.write(out, JSON.stringify({ times }))
    return result
  })
}
"""

_PLAIN = """\
export function register(on) {
  on('tool.call', { tool: 'TaskStop' }, ($, e, next) => next(e))
}
"""


def _steps(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


class _Round:
    """One scratch world: a sandbox, the fake lich, the probe and the plain plugin."""

    def __init__(self, claude: Path, scratch: Path) -> None:
        self.claude, self.scratch = claude, scratch
        self.sandbox = Sandbox.create(scratch / "sandbox")
        self.lich = LoggedLich.install(scratch / "lich", LichScript(checkout=str(self.sandbox.project)))
        self.probe = module_plugin(scratch / "probe", "bench-probe", _PROBE % {"calls": CALLS}, "bench: bench-probe")
        self.plain = module_plugin(scratch / "plain", "bench-plain", _PLAIN, "bench: bench-plain")
        self.serial = 0

    def env(self, **more: str) -> dict[str, str]:
        return {"LICH_BIN": str(self.lich.bin), "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0",
                "LICH_PROMPT_LANG": "en", "FAKE_LICH_STATE": str(self.lich.state), **more}

    def _paths(self) -> tuple[Path, Path]:
        self.serial += 1
        return self.scratch / f"out-{self.serial}.json", self.scratch / f"bridge-{self.serial}.jsonl"

    def dispatches(self, beside: Path, interactive: bool) -> tuple[list[float], list[dict[str, Any]]]:
        """The probe's dispatch times (ms, warm-up left out) and the host's step log of the run."""
        out, log = self._paths()
        env = self.env(AGENT_CARDS_BENCH_OUT=str(out), AGENT_CARDS_BRIDGE_LOG=str(log))
        model = ScriptedModel(["Done."], lifetime=300).start()
        try:
            if interactive:
                with Tui(self.claude, self.sandbox, [self.probe, beside], model, env_extra=env,
                         extra_args=["--permission-mode", "default"], ready_timeout=120) as tui:
                    try:
                        until("the probe's figures", out.exists, 120, every=0.1, shown=tui.screen)
                    except TimeoutError as late:
                        raise SystemExit(f"bench: {late}") from None
                    tui.exit()
            else:
                run = run_print(self.claude, self.sandbox, [self.probe, beside], "hi", model, env_extra=env,
                                timeout=180)
                if not out.exists():
                    raise SystemExit(f"bench: the probe wrote nothing: {run.stdout}{run.stderr}")
        finally:
            model.close()
        times = json.loads(out.read_text(encoding="utf-8"))["times"]
        return [float(t) for t in times[WARM:]], _steps(log)

    def first_wait(self, interactive: bool) -> tuple[float, float]:
        """How long the session's first Agent call waited for the host (ms), its prompt sent at once; and, when
        interactive, the ms from the launch to the model's first request, the prompt typed as soon as it shows
        (a wait at the session's start shows there)."""
        _, log = self._paths()
        env = self.env(AGENT_CARDS_BRIDGE_LOG=str(log))
        model = self._first_model()
        try:
            if interactive:
                to_request = self._typed_at_once([ROOT], model, env, requests=2)
            else:
                run_print(self.claude, self.sandbox, [ROOT], TRIGGER, model, env_extra=env, timeout=180)
                to_request = float("nan")
        finally:
            model.close()
        agent = [s for s in _steps(log) if s.get("op") == "event" and s.get("hook") == AGENT_HOOK]
        if not agent:
            raise SystemExit("bench: no Agent call reached the host")
        return float(agent[0].get("waited") or 0.0), to_request

    def first_request_without_the_plugin(self, plugins: Sequence[Path] = ()) -> float:
        """The same interactive session without the plugin (beside ``plugins`` alone): ms from the launch to the
        model's first request."""
        model = ScriptedModel(["Done."], lifetime=300).start()  # no Agent call: its own agent would outlive /exit
        try:
            return self._typed_at_once(list(plugins), model, self.env(), requests=1)
        finally:
            model.close()

    @staticmethod
    def _first_model() -> ScriptedModel:
        call = ToolUse("Agent", {"description": "Fix auth", "prompt": "Fix the auth flow.",
                                 "subagent_type": "general-purpose"}, text="Delegating.")
        return ScriptedModel([call, "Done."], subagent_replies=["Fixed."], lifetime=300).start()

    def _typed_at_once(self, plugins: list[Path], model: ScriptedModel, env: dict[str, str], requests: int) -> float:
        with Tui(self.claude, self.sandbox, plugins, model, env_extra=env,
                 extra_args=["--permission-mode", "default"], ready_timeout=120) as tui:
            launched = time.time() - (time.monotonic() - tui.started_at)
            tui.type(TRIGGER)
            if not model.wait_until(lambda m: len(m.main_requests) >= requests, 120):
                raise SystemExit(f"bench: the prompt was not answered:\n{tui.screen()}")
            tui.exit()
        return (model.main_requests[0].time - launched) * 1000

    def close(self) -> None:
        self.sandbox.cleanup()


def _python_ms_per_dispatch(steps: list[dict[str, Any]]) -> float:
    """The host's CPU time from the first counted dispatch to the last, per dispatch (two steps each)."""
    events = [i for i, s in enumerate(steps) if s.get("op") == "event"]
    if len(events) <= WARM + 1:
        raise SystemExit(f"bench: the host logged {len(events)} dispatches")
    first, last = events[WARM], len(steps) - 1
    cpu = float(steps[last]["cpu"]) - float(steps[first - 1]["cpu"])
    return cpu / (len(events) - WARM)


def bridge_figures(rounds: int = 3) -> list[Figure]:
    """The bridge's figures: ``rounds`` rounds, each running every configuration once, in turn."""
    claude = ensure_claude()
    samples: dict[str, list[float]] = {}

    def add(name: str, values: Sequence[float]) -> None:
        samples.setdefault(name, []).extend(values)

    with tempfile.TemporaryDirectory(prefix="agent-cards-bench-") as folder:
        for number in range(rounds):
            world = _Round(claude, Path(folder) / f"round-{number}")
            try:
                for interactive, mode in ((False, "-p"), (True, "interactive")):
                    plain, _ = world.dispatches(world.plain, interactive)
                    bridged, steps = world.dispatches(ROOT, interactive)
                    add(f"{mode}: a plain JS hook, per TaskStop dispatch (next)", plain)
                    add(f"{mode}: the bridge, per TaskStop dispatch (next)", bridged)
                    add(f"{mode}: the bridge / the plain hook (medians, per round)",
                        [statistics.median(bridged) / statistics.median(plain)])
                    add("Python's own CPU time per event", [_python_ms_per_dispatch(steps)])
                    add(f"{mode}: the first Agent call's wait for the host", [world.first_wait(interactive)[0]])
            finally:
                world.close()
    # "0 ms of start-up wait": under 0.5 ms is the module's check that its host is up, not a wait for it.
    limits = {"/": 2.0, "Python": 1.0, "wait": 0.5}
    units = {"/": "x", "Python": "ms", "wait": "ms"}
    figures = []
    for name, values in samples.items():
        key = next((k for k in limits if k in name), None)
        figures.append(Figure(name, values, units.get(key or "", "ms"), limits.get(key or "")))
    return figures


#: Inside lich the first Agent call waits at most this long for its session host (ms) on a calm machine.
FIRST_WAIT_GOAL_MS = 100.0


#: The two sessions of a round whose first Agent call's wait P7 times, by whether the module had kept an
#: interpreter when each began: a HOME's first session looks ``python3`` up on ``PATH`` (a pyenv shim costs
#: its own start), a later one starts the interpreter that lookup found.
_P7_SESSIONS = {"nothing kept": "a HOME's first session (python3 looked up on PATH)",
                "kept": "a later session (the interpreter kept)"}


def first_call_waits(rounds: int = 3) -> list[Figure]:
    """P7: the first Agent call's wait for the host inside lich, in ``-p`` and interactive (its prompt typed the
    moment the screen is ready), one of each a round in a fresh HOME, the mode that goes first alternating, so
    that each mode is timed both as a HOME's first session and as a later one; beside them, what the plugin
    adds to the time from the launch to the model's first request, against the same session without it, and
    against the same session beside a module that does nothing (what any module plugin costs the engine to
    load)."""
    claude = ensure_claude()
    samples: dict[tuple[str, str], list[float]] = {(mode, kept): [] for mode in ("-p", "interactive")
                                                   for kept in _P7_SESSIONS}
    to_request: dict[str, list[float]] = {"plugin": [], "bare": [], "plain": []}
    with tempfile.TemporaryDirectory(prefix="agent-cards-bench-") as folder:
        for number in range(rounds):
            world = _Round(claude, Path(folder) / f"round-{number}")
            try:
                for index, interactive in enumerate((False, True) if number % 2 == 0 else (True, False)):
                    waited, took = world.first_wait(interactive)
                    samples["interactive" if interactive else "-p", "kept" if index else "nothing kept"].append(waited)
                    if interactive:
                        to_request["plugin"].append(took)
                to_request["bare"].append(world.first_request_without_the_plugin())
                to_request["plain"].append(world.first_request_without_the_plugin([world.plain]))
            finally:
                world.close()
    added = [a - b for a, b in zip(to_request["plugin"], to_request["bare"], strict=True)]
    beyond = [a - b for a, b in zip(to_request["plugin"], to_request["plain"], strict=True)]
    return [
        *(Figure(f"P7 {mode}, {_P7_SESSIONS[kept]}: the first Agent call's wait for its host", values, "ms",
                 FIRST_WAIT_GOAL_MS) for (mode, kept), values in samples.items() if values),
        Figure("P7 interactive: launch → the model's first request", to_request["plugin"], "ms", None,
               note="the prompt typed as soon as it shows: a wait at the session's start shows here"),
        Figure("P7 the same without the plugin", to_request["bare"], "ms", None),
        Figure("P7 what the plugin adds to it (same round)", added, "ms", None),
        Figure("P7 the same beside a JS module that does nothing", to_request["plain"], "ms", None,
               note="the engine's own cost of loading a plugin's module"),
        Figure("P7 what the plugin adds beyond that module (same round)", beyond, "ms", None),
    ]


def main(argv: Sequence[str]) -> int:
    parser = CommandParser("python -m bench.bridge", "The bridge in the real Claude Code (offline): its cost per "
                           "dispatch, the first call's wait,\nPython's own time per event (needs tmux and the real "
                           "Claude Code, which it installs).",
                           "exit status:\n  0  the figures were measured\n  2  tmux is missing, or the command line "
                           "is wrong\n  130  interrupted (Ctrl-C)")
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    options = parse(parser, argv)
    if isinstance(options, int):
        return options
    try:
        return _measure(1 if options.quick else 3)
    except KeyboardInterrupt:
        return interrupted("python -m bench.bridge")


def _measure(rounds: int) -> int:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load:.2f} at the start,"
          f" {rounds} round(s), {CALLS - WARM} dispatches counted per run")
    if shutil.which("tmux") is None:
        print("bench.bridge: tmux is needed for the interactive runs", file=sys.stderr)
        return 2
    figures = bridge_figures(rounds)
    print_section("The bridge in the real Claude Code (offline)", figures)
    end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {end:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
