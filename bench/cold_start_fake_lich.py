"""Cold start of ``fake-lich`` against ``python -c pass`` on the same interpreter.

    python bench/cold_start_fake_lich.py [RUNS]      (default 40 runs of each, interleaved)

``fake-lich`` runs once per lich call of a ``replay --processes``, so its start-up is the price of
every call. The runs are interleaved so that a busy machine slows every command alike; the figures
are medians of wall time. Goal: the stateful calls within 1.5 times the bare interpreter.

The modules fake-lich imports are byte-compiled first (as Python does on a first run unless
``PYTHONDONTWRITEBYTECODE`` is set), so the figures are those of every call after the first.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from coldstart import Case, measure, report

from simulator.lich import install as real_processes
from simulator.lich.program import STATE_ENV, create_state
from simulator.lich.scripts import LichScript, OpenScript


def fake_lich_program() -> str:
    try:
        return real_processes.fake_lich_program()
    except real_processes.SetupError as error:
        raise SystemExit(f"cold_start_fake_lich: {error}") from None


def interpreter_of(program: str) -> str:
    """The interpreter a console script's ``#!`` line names (the one to compare with)."""
    first = Path(program).read_text(encoding="utf-8").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def compile_modules() -> None:
    """Byte-compile what fake-lich imports from this project (all imported here), where the import system looks."""
    ours = [name for name in sys.modules if name == "simulator" or name.startswith("simulator.lich")]
    for name in ours:
        source = sys.modules[name].__file__
        if source is not None:
            py_compile.compile(source, cfile=importlib.util.cache_from_source(source), doraise=True)


def main(argv: Sequence[str]) -> int:
    runs = int(argv[0]) if argv else 40
    program = fake_lich_program()
    compile_modules()
    python = interpreter_of(program)
    with tempfile.TemporaryDirectory(prefix="fake-lich-bench-") as scratch:
        state = create_state(scratch, LichScript(default_open=OpenScript(ms=800)))
        env = {**os.environ, STATE_ENV: state, "LICH_SESSION_ID": "3c4d", "FAKE_LICH_NOW_MS": "1000"}
        bare = {k: v for k, v in env.items() if k != STATE_ENV}
        for _ in range(4):  # a few opens, so that `sessions` lists something
            subprocess.run([program, "open", "--kind", "claude", "--subagent", "--prompt", "task", "--json"],
                           env=env, stdout=subprocess.DEVNULL, check=True)
        cases = {
            "python -c pass": Case([python, "-c", "pass"], env),
            "fake-lich help (no state)": Case([program, "help"], bare),
            "fake-lich sessions --json": Case([program, "sessions", "--json"], env),
            "fake-lich open … --json": Case([program, "open", "--kind", "claude", "--subagent", "--prompt", "t",
                                             "--json"], env),
        }
        medians = measure(cases, runs)
    report(python, runs, medians, base="python -c pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
