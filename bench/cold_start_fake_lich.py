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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import simulator
import simulator.fake_lich_cli
import simulator.goflags
import simulator.lich
from simulator import real_processes
from simulator.fake_lich_cli import STATE_ENV, create_state
from simulator.lich import LichScript, OpenScript


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
    """Byte-compile what fake-lich imports from this project, where the import system looks for it."""
    for module in (simulator, simulator.fake_lich_cli, simulator.goflags, simulator.lich):
        source = module.__file__
        if source is not None:
            py_compile.compile(source, cfile=importlib.util.cache_from_source(source), doraise=True)


def once(argv: Sequence[str], env: Mapping[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


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
        cases: dict[str, tuple[list[str], Mapping[str, str]]] = {
            "python -c pass": ([python, "-c", "pass"], env),
            "fake-lich version (no state)": ([program, "version"], bare),
            "fake-lich sessions --json": ([program, "sessions", "--json"], env),
            "fake-lich open … --json": ([program, "open", "--kind", "claude", "--subagent", "--prompt", "t",
                                         "--json"], env),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for command, command_env in cases.values():  # warm the caches once
            once(command, command_env)
        for _ in range(runs):
            for name, (command, command_env) in cases.items():
                times[name].append(once(command, command_env))
    base = statistics.median(times["python -c pass"])
    print(f"interpreter: {python}; {runs} runs of each, interleaved")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<30} median {median * 1000:7.1f} ms   ratio {median / base:4.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
