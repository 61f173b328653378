"""``agent-cards fuzz``: generated scenarios replayed, their transcripts checked, a violation shrunk and written."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

USAGE = """usage: agent-cards fuzz [--cases N] [--seed S] [--out DIR] [--require-states]

Generate scenarios (host, lich and git behaviour: every exit code and output shape, timeouts, Esc,
reloads, session.start, TaskStop and parallel calls at any virtual time, failing lists), replay each,
and check every transcript: no report naming the mod, exactly one answer per call, never native once
lich has the task, a footer count never above the launched opens, every run an argv list starting with
$LICH_BIN or git, answers that follow the delivery table, no stall; and against a model of the spec
(which calls are taken, the exact open argv, the answer's arm, the count after each event, where a
TaskStop goes), with liveness after a quiet tail: a read every 5 s while a worker is counted, the count
back to what lich lists, every call answered within its bound. Each replay is checked after every step,
so a violation names the step where it first held. A violation is shrunk and written to DIR as a
scenario file that replays and fails for the same reason. Failures found are kept in an example
database in the user's cache and tried first on the next run. The run prints how often it reached
each named state (a TaskStop refused then the worker finished, Esc during the base read, ...).

options:
  --cases N   how many scenarios to generate (default 200)
  --seed S    the seed (default 0): the same seed generates the same scenarios
  --out DIR   where a violation's scenario is written (default fuzz-failures)
  --require-states  fail (exit 1) when a named state was never reached
  -h, --help  show this help

exit status: 0 no violation; 1 a violation (its file is written), or with --require-states a state
never reached; 2 the command line is wrong, or
hypothesis is not installed"""

INSTALL = "agent-cards fuzz needs hypothesis: pip install 'agent-cards[fuzz]'"


def _options(args: list[str]) -> tuple[dict[str, str], str | None]:
    values = {"--cases": "200", "--seed": "0", "--out": "fuzz-failures"}
    i = 0
    while i < len(args):
        flag, _, inline = args[i].partition("=")
        if flag not in values:
            return values, f"unknown option {args[i]}"
        if inline:
            values[flag] = inline
            i += 1
        elif i + 1 < len(args):
            values[flag] = args[i + 1]
            i += 2
        else:
            return values, f"{flag} takes a value"
    for flag in ("--cases", "--seed"):
        if not values[flag].isdigit():
            return values, f"{flag} takes a whole number, not {values[flag]!r}"
    return values, None


def main(args: list[str]) -> int:
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    require = "--require-states" in args
    values, problem = _options([a for a in args if a != "--require-states"])
    if problem:
        print(f"agent-cards fuzz: {problem} (agent-cards fuzz --help)", file=sys.stderr)
        return 2
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print(INSTALL, file=sys.stderr)
        return 2
    return run(int(values["--cases"]), int(values["--seed"]), Path(values["--out"]), require_states=require)


def run(cases: int, seed: int, out: Path, progress: bool = True, require_states: bool = False) -> int:
    from agent_cards_simulator.fuzz.engine import Fuzz

    fuzz = Fuzz(seed, progress=progress)
    started = time.monotonic()
    found = fuzz.run(cases)
    elapsed = max(time.monotonic() - started, 1e-9)
    summary: dict[str, Any] = {"cases": fuzz.cases, "seconds": round(elapsed, 1),
                               "per_second": round(fuzz.cases / elapsed, 1)}
    if found is None:
        print(f"fuzz: {fuzz.cases} cases, seed {seed}, {elapsed:.1f} s ({summary['per_second']} cases/s): "
              "no violation")
        _states(fuzz)
        return 1 if require_states and fuzz.never_reached else 0
    path = fuzz.write(found, out)
    print(f"fuzz: {fuzz.cases} cases, seed {seed}, {elapsed:.1f} s: a violation ({found.violation.kind}) at case "
          f"{fuzz.first_at}, shrunk over the {fuzz.cases - (fuzz.first_at or 0)} cases after it")
    print(f"  {found.violation.message}")
    print(f"  written to {path} (agent-cards replay {path})")
    return 1


def _states(fuzz: Any) -> None:
    from agent_cards_simulator.fuzz.reached import NOT_YET, STATES

    print("reached states (cases):")
    for name, state in STATES.items():
        print(f"  {fuzz.reached[name]:6}  {name}: {state.doc}")
    for name, why in NOT_YET.items():
        print(f"       -  {name}: not yet reachable ({why})")
    if fuzz.never_reached:
        print(f"never reached: {', '.join(fuzz.never_reached)}")
