"""``agent-cards fuzz``: generated scenarios replayed, their transcripts checked, a violation shrunk and written."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from agent_cards.arguments import (
    STDIN,
    CommandParser,
    ctrl_c,
    ctrl_c_pressed,
    interrupted,
    parse,
    usage_error,
    whole_number,
)
from agent_cards_simulator.fuzz.storage import failures_folder, hypothesis_folder

DESCRIPTION = """Generate scenarios (host, lich and git behaviour: every exit code and output shape, timeouts, Esc,
reloads, session.start, TaskStop and parallel calls at any virtual time, failing lists; continue, resume
and a session host that dies, with the session's kept state or without it, and prompts), replay each,
and check every transcript: no report naming the mod, exactly one answer per call, never native once
lich has the task, a footer count never above the launched opens, every run an argv list starting with
$LICH_BIN or git, answers that follow the delivery table, no stall; and against a model of the spec
(which calls are taken, the exact open argv, the answer's arm, the count after each event, where a
TaskStop goes, what a new process keeps and tells the model), with liveness after a quiet tail: a read
every 5 s while a worker is counted, the count back to what lich lists, every call answered within its
bound. Each replay is checked after every step,
so a violation names the step where it first held. A violation is shrunk and written to DIR as a
scenario file that replays and fails for the same reason, its expectation holding the value the spec
wants where the mod went wrong, so the file passes once the bug is fixed. Failures found are kept in an example
database in the user's cache and tried first on the next run. The run prints how often it reached
each named state (a TaskStop refused then the worker finished, Esc during the base read, ...).

Nothing is written to the current folder: hypothesis's own files are kept under the cache folder
($XDG_CACHE_HOME/agent-cards, else ~/.cache/agent-cards), and so is a violation without --out."""

EXIT = """exit status:
  0  no violation
  1  a violation (its file is written), or with --require-states a named state never reached
  2  the command line is wrong, or hypothesis is not installed
  130  interrupted (Ctrl-C): the cases run so far and the seed are printed"""

INSTALL = "agent-cards fuzz needs hypothesis: pip install 'agent-cards[fuzz]'"


def fuzz_parser() -> CommandParser:
    parser = CommandParser("agent-cards fuzz", DESCRIPTION, EXIT)
    parser.add_argument("--cases", metavar="N", type=whole_number(1), default=200,
                        help="how many scenarios to generate, 1 or more (default 200)")
    parser.add_argument("--seed", metavar="S", type=whole_number(0), default=0,
                        help="the seed (default 0): the same seed generates the same scenarios")
    parser.add_argument("--out", metavar="DIR", type=Path, default=None,
                        help="where a violation's scenario is written (default: fuzz-failures in the cache folder)")
    parser.add_argument("--require-states", action="store_true",
                        help="fail (exit 1) when a named state was never reached")
    return parser


def main(args: list[str]) -> int:
    options = parse(fuzz_parser(), args)
    if isinstance(options, int):
        return options
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print(INSTALL, file=sys.stderr)
        return 2
    if options.out == Path(STDIN):
        return usage_error("agent-cards fuzz", "--out takes a folder to write a violation's scenario in, not -")
    return run(options.cases, options.seed, options.out or failures_folder(), require_states=options.require_states)


def run(cases: int, seed: int, out: Path, progress: bool = True, require_states: bool = False) -> int:
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(str(hypothesis_folder()))  # else hypothesis makes ./.hypothesis/ in the current folder
    from agent_cards_simulator.fuzz.engine import Fuzz

    fuzz = Fuzz(seed, progress=progress)
    started = time.monotonic()
    try:
        with ctrl_c():  # a KeyboardInterrupt inside hypothesis's own code can come out as another error
            if progress:
                print(f"fuzz: {cases} cases to generate, seed {seed}", file=sys.stderr, flush=True)
            found = fuzz.run(cases)
    except BaseException as error:
        if not ctrl_c_pressed() and not isinstance(error, KeyboardInterrupt):
            raise
        if progress and fuzz.cases and sys.stderr.isatty():
            print(file=sys.stderr)  # end the progress line the terminal redraws in place
        shrinking = f", shrinking a {fuzz.found.violation.kind} violation" if fuzz.found is not None else ""
        return interrupted("agent-cards fuzz", f"{fuzz.cases} of {cases} cases run, seed {seed}{shrinking} "
                           f"(agent-cards fuzz --cases {cases} --seed {seed} runs them again)")
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
