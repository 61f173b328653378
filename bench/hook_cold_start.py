"""Cold start of the command hook against ``python3 -c pass`` on the same interpreter.

    python bench/hook_cold_start.py [RUNS] [--python PATH]     (default 40 runs of each, interleaved)

The hook runs on every Agent call and at every session start, so its start-up is paid each time.
Measured is what the plugin's ``hooks/hooks.json`` runs: ``sh hooks/agent-cards-hook`` with the event
on stdin, which starts the interpreter with ``-I -S`` and imports only what the event needs. Two
events: a SessionStart (it writes the session's state file) and a PreToolUse for an Explore agent in
an attended session (a call the mod does not take: the commonest case). ``python -m agent_cards.hook``
(site loaded) is shown beside it for comparison, ``-I -S -c pass`` as the floor, and the launcher with
no ``AGENT_CARDS_PYTHON``, which runs whatever ``python3`` is first on PATH (a pyenv shim, say).

The interpreter is ``--python``, else the base interpreter of the Python running this script (not a
pyenv shim or a venv's, whose own start-up would be part of the figure). The runs are interleaved, so
that a busy machine slows every command alike; the figures are medians of wall time.
Goal: both events within 1.5 times ``python3 -c pass``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from coldstart import Case, measure, report

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "hooks" / "agent-cards-hook"
SESSION = "bench-session"


def base_interpreter() -> str:
    base = getattr(sys, "_base_executable", None) or sys.executable
    return str(Path(base).resolve())


def main(args: Sequence[str]) -> int:
    rest = list(args)
    python = base_interpreter()
    if "--python" in rest:
        at = rest.index("--python")
        python = rest[at + 1]
        del rest[at : at + 2]
    runs = int(rest[0]) if rest else 40
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as scratch:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": scratch,
            "CLAUDE_CODE_SESSION_ATTENDED": "1",
            "CLAUDE_CODE_ENTRYPOINT": "cli",
            "CLAUDE_PLUGIN_ROOT": str(ROOT),
            "CLAUDE_PLUGIN_DATA": os.path.join(scratch, "data"),
            "AGENT_CARDS_PYTHON": python,
            "LICH_BIN": "/nonexistent/lich",  # an Explore call never reaches lich
            "LICH_SESSION_ID": "3c4d",
            "PYTHONPATH": str(ROOT),  # for python -m only; the launcher runs isolated
        }
        start = json.dumps({"session_id": SESSION, "transcript_path": "", "cwd": scratch,
                            "hook_event_name": "SessionStart", "source": "startup"}).encode()
        explore = json.dumps({
            "session_id": SESSION, "transcript_path": "", "cwd": scratch, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_use_id": "toolu_bench",
            "tool_input": {"description": "Find the tests", "prompt": "List the test files.",
                           "subagent_type": "Explore"},
        }).encode()
        launcher = ["sh", str(LAUNCHER)]
        module = [python, "-m", "agent_cards.hook"]
        path_env = {k: v for k, v in env.items() if k != "AGENT_CARDS_PYTHON"}
        cases = {
            "python3 -c pass": Case([python, "-c", "pass"], env),
            "python3 -I -S -c pass (floor)": Case([python, "-I", "-S", "-c", "pass"], env),
            "hook SessionStart (hooks.json)": Case(launcher, env, start, silent=True),
            "hook Explore call (hooks.json)": Case(launcher, env, explore, silent=True),
            "python -m agent_cards.hook Explore": Case(module, env, explore, silent=True),
            "hook Explore call, python3 from PATH": Case(launcher, path_env, explore, silent=True),
        }
        medians = measure(cases, runs)
    report(python, runs, medians, base="python3 -c pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
