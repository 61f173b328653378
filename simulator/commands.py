"""The bench's commands, ``agent-cards replay`` and ``agent-cards coverage`` (found by :mod:`agent_cards.cli`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from agent_cards.arguments import STDIN, CommandParser, ctrl_c_pressed, interrupted, parse, usage_error, whole_number
from agent_cards.cli import ends_at_once
from agent_cards_simulator.scenario import render
from agent_cards_simulator.scenario.files import CLAUSES_FILE, known_clauses, load_all, scenario_files
from agent_cards_simulator.scenario.mermaid import to_mermaid
from agent_cards_simulator.scenario.reader import Scenario, ScenarioError, read
from agent_cards_simulator.scenario.replay import Replay
from agent_cards_simulator.scenario.replay import replay as run_replay

DEFAULT_DIR = Path("scenarios")

REPLAY_EXIT = """exit status:
  0  every scenario replayed and met its expectations
  1  an expectation failed (the failures are printed with the scenario)
  2  a file is not a valid scenario, a path names nothing, or the command line is wrong;
     the valid files are still replayed
  130  interrupted (Ctrl-C): the scenarios replayed so far are printed, and a line that says how many"""

COVERAGE_EXIT = """exit status:
  0  every clause is shown by a scenario
  1  a clause no scenario shows, a scenario naming an unknown clause, an invalid file, or no clause list
  2  the command line is wrong"""


def replay_parser() -> CommandParser:
    parser = CommandParser(
        "agent-cards replay",
        "Replay scenario files (a folder: every *.yaml below it but clauses.yaml) and print what happened.\n"
        "FILE - reads one scenario from standard input; -- ends the options (replay -- -x.yaml).",
        REPLAY_EXIT,
    )
    parser.usage = ("agent-cards replay [-h] [--json | --mermaid] [--processes] [--lang TAG] [--jobs N] "
                    "[--] FILE|DIR|-...")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true",
                       help="one JSON object per scenario per line (a public contract), instead of the timeline")
    shape.add_argument("--mermaid", action="store_true",
                       help="a Mermaid sequence diagram per scenario (the model, Claude Code, the mod, lich, the "
                       "person), in a fenced block to paste into a bug report")
    parser.add_argument("--processes", action="store_true",
                        help="run every lich and git call as a real process (fake-lich, real git), time still virtual")
    parser.add_argument("--lang", metavar="TAG",
                        help="replay every scenario with LICH_PROMPT_LANG=TAG (the caller's own is never read)")
    parser.add_argument("--jobs", metavar="N", type=whole_number(1),
                        help="scenarios replayed at once, each in a worker process; the output is the same, in the "
                        "same order (default: one per core; with --processes, 1)")
    parser.add_argument("paths", nargs="*", metavar="FILE|DIR", help="scenario files and folders; - is standard input")
    return parser


def coverage_parser() -> CommandParser:
    parser = CommandParser(
        "agent-cards coverage",
        "Which scenarios show each clause of the spec (the clause list is DIR's clauses.yaml, or the nearest\n"
        "one above it; DIR defaults to ./scenarios).",
        COVERAGE_EXIT,
    )
    parser.usage = "agent-cards coverage [-h] [--json] [--] [DIR]"
    parser.add_argument("--json", action="store_true",
                        help="one JSON object: counts, uncovered and unknown clause ids, invalid files, shown_by")
    parser.add_argument("folder", nargs="*", metavar="DIR", help="the scenarios folder (default: scenarios)")
    return parser


#: The name a scenario read from standard input (``replay -``) goes by in what is printed.
STDIN_NAME = "<stdin>"


def _from_stdin() -> tuple[list[Scenario], list[str]]:
    """The scenario ``replay -`` reads on standard input, bounded as a file is (or its problem)."""
    from agent_cards_simulator.scenario.files import known_clauses
    from agent_cards_simulator.scenario.yamlnodes import MAX_FILE_BYTES, YamlError, decode

    raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1) if sys.stdin is not None else b""
    try:
        if len(raw) > MAX_FILE_BYTES:
            raise YamlError(1, f"standard input holds more than the limit of {MAX_FILE_BYTES} bytes")
        known = set(known_clauses(Path(STDIN_NAME).resolve())) or None
        return [read(STDIN_NAME, text=decode(raw), known_clauses=known)], []
    except YamlError as error:
        return [], [f"{STDIN_NAME}:{error.line}: {error.message}"]
    except ScenarioError as error:
        return [], error.lines()


def _read_named(paths: list[str]) -> tuple[list[Scenario], list[str]]:
    """The scenarios ``paths`` name, and a ``FILE:LINE: why`` line for each path or file that fails."""
    files, missing = _files_named(paths)
    scenarios, problems = load_all(files)
    return scenarios, missing + problems


def _files_named(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The scenario files ``paths`` name, and a ``PATH:1: why`` line for each path that names none."""
    files: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            problems.append(f"{raw}:1: no such file or folder")
        elif path.is_dir():
            found = scenario_files([path])
            files += found
            if not found:
                problems.append(f"{raw}:1: a folder with no scenario files (*.yaml) in it")
        else:
            files.append(path)
    return files, problems


@ends_at_once
def replay(args: list[str]) -> int:
    options = parse(replay_parser(), args, files="paths")
    if isinstance(options, int):
        return options
    paths: list[str] = options.paths
    if not paths:
        return usage_error("agent-cards replay", "name scenario files or folders (- for standard input)")
    if paths.count(STDIN) > 1:
        return usage_error("agent-cards replay", "- (standard input) can be named once")
    as_json, as_mermaid, processes = options.json, options.mermaid, options.processes
    if STDIN in paths:  # the files before it, the scenario it reads, the files after it, in that order
        at = paths.index(STDIN)
        scenarios, problems = _read_named(paths[:at])
        piped, piped_problems = _from_stdin()
        later, later_problems = _read_named(paths[at + 1 :])
        scenarios, problems = [*scenarios, *piped, *later], [*problems, *piped_problems, *later_problems]
    else:
        scenarios, problems = _read_named(paths)
    if options.lang is not None:  # the caller's own LICH_PROMPT_LANG is never read: a replay must not depend on it
        for scenario in scenarios:
            scenario.env["LICH_PROMPT_LANG"] = options.lang
    for line in problems:
        print(line, file=sys.stderr)
    run: Callable[[Scenario], Replay] = run_replay
    if processes:
        from agent_cards_simulator.runners.processes import replay_processes

        run = replay_processes

    def shown(result: Replay) -> tuple[bool, str]:
        if as_json:
            return result.passed, render.to_json_line(result)
        return result.passed, (to_mermaid(result) if as_mermaid else render.to_text(result)) + "\n"

    def replayed(scenario: Scenario) -> tuple[bool, str]:
        try:
            return shown(run(scenario))
        except Exception as error:  # a fault of the bench itself: one line naming the file, not a traceback
            return failed_itself(scenario, f"{type(error).__name__}: {error}")

    def failed_itself(scenario: Scenario, why: str) -> tuple[bool, str]:
        failure = f"{scenario.file}:1: the replay itself failed: {why}"
        return shown(Replay(scenario.file, scenario.title, scenario.clauses, [], [failure]))

    from agent_cards_simulator.workers import default_jobs, in_order

    jobs = options.jobs if options.jobs is not None else 1 if processes else default_jobs()
    failed = done = 0
    try:
        for passed, text in in_order(scenarios, replayed, jobs,
                                     lost=lambda s: failed_itself(s, "its worker process ended before replaying it")):
            failed += not passed
            done += 1
            print(text)
            if ctrl_c_pressed():  # a Ctrl-C that landed in a finalizer (an object a replay freed) was swallowed there
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        return interrupted("agent-cards replay", f"{done} of {len(scenarios)} scenarios replayed, {failed} failed")
    if problems:
        return 2
    return 1 if failed else 0


@ends_at_once
def coverage(args: list[str]) -> int:
    options = parse(coverage_parser(), args, files="folder")
    if isinstance(options, int):
        return options
    as_json = options.json
    paths: list[str] = options.folder
    if len(paths) > 1:
        return usage_error("agent-cards coverage", "name one scenarios folder")
    if paths == [STDIN]:
        return usage_error("agent-cards coverage", "coverage reads a folder, not standard input (-)")
    folder = Path(paths[0]) if paths else DEFAULT_DIR
    if not folder.is_dir():
        print(f"{folder}:1: no such folder", file=sys.stderr)
        return 1
    try:
        clauses = known_clauses(folder)
    except ScenarioError as error:
        print("\n".join(error.lines()), file=sys.stderr)
        return 1
    if not clauses:
        print(f"agent-cards coverage: no {CLAUSES_FILE} in {folder} or above it", file=sys.stderr)
        return 1
    files = scenario_files([folder])
    shown: dict[str, list[str]] = {c: [] for c in clauses}
    unknown: list[str] = []
    invalid: list[str] = []
    for file in files:
        try:
            scenario = read(file)  # unknown ids are reported here, not refused
        except ScenarioError as error:
            invalid.extend(error.lines())
            continue
        for clause in scenario.clauses:
            if clause in shown:
                shown[clause].append(str(file))
            else:
                unknown.append(f"{file}:{scenario.clause_lines.get(clause, 1)}: no clause {clause!r}")
    uncovered = [c for c, files_ in shown.items() if not files_]
    ok = not uncovered and not unknown and not invalid
    if as_json:
        print(json.dumps({
            "clauses": len(clauses),
            "covered": len(clauses) - len(uncovered),
            "uncovered": uncovered,
            "unknown": unknown,
            "invalid": invalid,
            "shown_by": shown,
        }, ensure_ascii=False))
    else:
        for clause, files_ in shown.items():
            print(f"{clause:<22} {', '.join(Path(f).name for f in files_) or '— NOT SHOWN'}")
        for line in unknown + invalid:
            print(line)
        print(f"{len(clauses) - len(uncovered)} of {len(clauses)} clauses shown by {len(files)} scenarios"
              + (f"; not shown: {', '.join(uncovered)}" if uncovered else ""))
    return 0 if ok else 1
