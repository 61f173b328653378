"""P6: cold starts, each a ratio to ``python -I -S -c pass`` of the same interpreter in the same round.

- the command hook as the plugin runs it, ``sh hooks/agent-cards-hook``, with ``AGENT_CARDS_PYTHON``
  naming the interpreter: a SessionStart (it writes the session's state file) and a PreToolUse for an
  Explore agent in an attended session (a call the mod leaves: the commonest case);
- the same launcher with no ``AGENT_CARDS_PYTHON`` (``python3`` on PATH, perhaps a version manager's
  shim: the launcher keeps the interpreter it leads to, so only its first run pays the shim);
- ``fake-lich open … --json`` as ``replay --processes`` starts it;
- for comparison (no goal), what a standard-library module the hook does without would add to a bare
  start: each of these figures is what keeping its hand-made stand-in saves (see ``COMPARED``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from agent_cards_simulator.lich import install
from agent_cards_simulator.lich.program import STATE_ENV, create_state
from agent_cards_simulator.lich.scripts import LichScript, OpenScript
from agent_cards_simulator.runners.processes import fake_lich_command
from bench.figures import Figure, command, interleaved, ratios

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "hooks" / "agent-cards-hook"

#: Standard-library imports the hook's start-up does without, each timed as ``python -I -S -c "import …"``.
COMPARED = ("json", "dataclasses", "typing", "functools", "contextlib")


def base_interpreter() -> str:
    """The interpreter behind this Python (not a venv's or a shim's), as a plugin would name it."""
    return str(Path(getattr(sys, "_base_executable", None) or sys.executable).resolve())


def cold_starts(rounds: int) -> list[Figure]:
    python = base_interpreter()
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as scratch:
        env = {
            "PATH": os.environ.get("PATH", os.defpath), "HOME": scratch, "CLAUDE_CODE_SESSION_ATTENDED": "1",
            "CLAUDE_CODE_ENTRYPOINT": "cli", "CLAUDE_PLUGIN_ROOT": str(ROOT),
            "CLAUDE_PLUGIN_DATA": os.path.join(scratch, "data"), "AGENT_CARDS_PYTHON": python,
            "LICH_BIN": os.path.join(scratch, "no-lich"), "LICH_SESSION_ID": "3c4d",
        }
        path_env = {k: v for k, v in env.items() if k != "AGENT_CARDS_PYTHON"}
        start = json.dumps({"session_id": "bench", "transcript_path": "", "cwd": scratch,
                            "hook_event_name": "SessionStart", "source": "startup"}).encode()
        explore = json.dumps({
            "session_id": "bench", "transcript_path": "", "cwd": scratch, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_use_id": "toolu_bench",
            "tool_input": {"description": "Find the tests", "prompt": "List the test files.",
                           "subagent_type": "Explore"},
        }).encode()
        launcher = ["sh", str(LAUNCHER)]
        program = install.fake_lich_program()
        lich = fake_lich_command(program)
        state = create_state(os.path.join(scratch, "lich"), LichScript(default_open=OpenScript(ms=800)))
        lich_env = {**env, STATE_ENV: state, "FAKE_LICH_NOW_MS": "1000"}
        open_argv = [*lich, "open", "--kind", "claude", "--subagent", "--prompt", "t", "--json"]
        floor = [lich[0], "-I", "-S", "-c", "pass"] if lich[0] != program else [python, "-I", "-S", "-c", "pass"]
        times = interleaved({
            "floor": command([python, "-I", "-S", "-c", "pass"], env),
            "start": command(launcher, env, start, silent=True),
            "explore": command(launcher, env, explore, silent=True),
            "path": command(launcher, path_env, explore, silent=True),
            "lich floor": command(floor, env),
            "lich": command(open_argv, lich_env),
            "site": command([python, "-c", "pass"], env),
            **{name: command([python, "-I", "-S", "-c", f"import {name}"], env) for name in COMPARED},
        }, rounds)
    ms = {name: [t * 1000 for t in values] for name, values in times.items()}
    return [
        Figure("P6 floor: python -I -S -c pass", ms["floor"], "ms", None),
        Figure("P6 hook SessionStart ÷ floor", ratios(times, "start", "floor"), "x", 3.0),
        Figure("P6 hook Explore call (left) ÷ floor", ratios(times, "explore", "floor"), "x", 3.0),
        Figure("P6 hook Explore call, python3 from PATH ÷ floor", ratios(times, "path", "floor"), "x", 3.0,
               note=f"python3 is {_python3_kind()}"),
        Figure("P6 fake-lich open --json ÷ floor", ratios(times, "lich", "lich floor"), "x", 2.0),
        Figure("P6 python -c pass (site) ÷ floor, for comparison", ratios(times, "site", "floor"), "x", None),
        *(Figure(f"P6 python -I -S -c 'import {name}' ÷ floor, for comparison", ratios(times, name, "floor"), "x",
                 None) for name in COMPARED),
    ]


def _python3_kind() -> str:
    import shutil

    found = shutil.which("python3") or "missing"
    return "a shim" if "/shims/" in found else "a plain interpreter"
