"""The bench's commands, ``agent-cards replay`` and ``agent-cards coverage`` (found by :mod:`agent_cards.cli`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from agent_cards.cli import ends_at_once
from agent_cards_simulator.scenario import render
from agent_cards_simulator.scenario.files import CLAUSES_FILE, known_clauses, load_all, scenario_files
from agent_cards_simulator.scenario.mermaid import to_mermaid
from agent_cards_simulator.scenario.reader import Scenario, ScenarioError, read
from agent_cards_simulator.scenario.replay import Replay
from agent_cards_simulator.scenario.replay import replay as run_replay

DEFAULT_DIR = Path("scenarios")

REPLAY_HELP = """usage: agent-cards replay [--json | --mermaid] [--processes] [--lang TAG] [--jobs N] FILE|DIR...

Replay scenario files (a folder: every *.yaml below it but clauses.yaml) and print what happened.

options:
  --json         one JSON object per scenario per line (a public contract), instead of the timeline
  --mermaid      a Mermaid sequence diagram per scenario (the model, Claude Code, the mod, lich, the
                 person), in a fenced block to paste into a bug report
  --processes    run every lich and git call as a real process (fake-lich, real git), time still virtual
  --lang TAG     replay every scenario with LICH_PROMPT_LANG=TAG (the caller's own is never read)
  --jobs N       scenarios replayed at once, each in a worker process; the output is the same, in the
                 same order (default: one per core; with --processes, 1)
  -h, --help     show this help

exit status:
  0  every scenario replayed and met its expectations
  1  an expectation failed (the failures are printed with the scenario)
  2  a file is not a valid scenario, a path names nothing, or the command line is wrong;
     the valid files are still replayed"""

COVERAGE_HELP = """usage: agent-cards coverage [--json] [DIR]

Which scenarios show each clause of the spec (the clause list is DIR's clauses.yaml, or the nearest
one above it; DIR defaults to ./scenarios).

options:
  --json         one JSON object: counts, uncovered and unknown clause ids, invalid files, shown_by
  -h, --help     show this help

exit status:
  0  every clause is shown by a scenario
  1  a clause no scenario shows, a scenario naming an unknown clause, an invalid file, or no clause list
  2  the command line is wrong"""


def _usage_error(command: str, reason: str) -> int:
    print(f"agent-cards {command}: {reason} (agent-cards {command} --help)", file=sys.stderr)
    return 2


def take_value(args: list[str], flag: str, example: str = "ja") -> tuple[str | None, str | None]:
    """Remove ``flag VALUE`` or ``flag=VALUE`` from ``args``; (value, problem). ``example``: a value to
    show when the flag comes without one."""
    for i, arg in enumerate(args):
        if arg == flag:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None, f"{flag} takes a value, e.g. {flag} {example}"
            value = args[i + 1]
            del args[i : i + 2]
            return value, None
        if arg.startswith(flag + "="):
            del args[i]
            return arg.split("=", 1)[1], None
    return None, None


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
    args = list(args)
    if any(a in ("-h", "--help") for a in args):
        print(REPLAY_HELP)
        return 0
    lang, problem = take_value(args, "--lang")  # every scenario in this prompt language (LICH_PROMPT_LANG)
    jobs_text, jobs_problem = take_value(args, "--jobs", "2")
    problem = problem or jobs_problem
    if jobs_text is not None and not (jobs_text.isdigit() and int(jobs_text) >= 1):
        problem = problem or f"--jobs takes a whole number of workers, 1 or more (got {jobs_text!r})"
    as_json = "--json" in args
    as_mermaid = "--mermaid" in args
    processes = "--processes" in args  # every lich and git call a real process (runners.processes)
    paths = [a for a in args if a not in ("--json", "--mermaid", "--processes")]
    if as_json and as_mermaid:
        return _usage_error("replay", "--json and --mermaid cannot be given together")
    unknown = [a for a in paths if a.startswith("-")]
    if problem or unknown or not paths:
        return _usage_error(
            "replay", problem or (f"unknown option {unknown[0]}" if unknown else "name scenario files or folders")
        )
    files, missing = _files_named(paths)
    scenarios, problems = load_all(files)
    problems = missing + problems
    if lang is not None:  # the caller's own LICH_PROMPT_LANG is never read: a replay must not depend on its shell
        for scenario in scenarios:
            scenario.env["LICH_PROMPT_LANG"] = lang
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

    jobs = int(jobs_text) if jobs_text is not None else 1 if processes else default_jobs()
    failed = False
    for passed, text in in_order(scenarios, replayed, jobs,
                                 lost=lambda s: failed_itself(s, "its worker process ended before replaying it")):
        failed |= not passed
        print(text)
    if problems:
        return 2
    return 1 if failed else 0


@ends_at_once
def coverage(args: list[str]) -> int:
    if any(a in ("-h", "--help") for a in args):
        print(COVERAGE_HELP)
        return 0
    as_json = "--json" in args
    paths = [a for a in args if a != "--json"]
    options = [a for a in paths if a.startswith("-")]
    if options or len(paths) > 1:
        return _usage_error("coverage", f"unknown option {options[0]}" if options else "name one scenarios folder")
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
