"""The bench's commands, ``agent-cards replay`` and ``agent-cards coverage`` (found by :mod:`agent_cards.cli`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from simulator.scenario import render
from simulator.scenario.files import CLAUSES_FILE, known_clauses, load_all, scenario_files
from simulator.scenario.reader import Scenario, ScenarioError, read
from simulator.scenario.replay import Replay
from simulator.scenario.replay import replay as run_replay

DEFAULT_DIR = Path("scenarios")


def _take_value(args: list[str], flag: str) -> tuple[str | None, str | None]:
    """Remove ``flag VALUE`` or ``flag=VALUE`` from ``args``; (value, problem)."""
    for i, arg in enumerate(args):
        if arg == flag:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None, f"{flag} takes a value, e.g. {flag} ja"
            value = args[i + 1]
            del args[i : i + 2]
            return value, None
        if arg.startswith(flag + "="):
            del args[i]
            return arg.split("=", 1)[1], None
    return None, None


def replay(args: list[str]) -> int:
    args = list(args)
    lang, problem = _take_value(args, "--lang")  # every scenario in this prompt language (LICH_PROMPT_LANG)
    as_json = "--json" in args
    processes = "--processes" in args  # every lich and git call a real process (simulator.runners.processes)
    paths = [a for a in args if a not in ("--json", "--processes")]
    unknown = [a for a in paths if a.startswith("-")]
    if problem or unknown or not paths:
        reason = problem or (f"unknown option {unknown[0]}" if unknown else "name scenario files or folders")
        print(f"agent-cards replay: {reason}", file=sys.stderr)
        return 2
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        for path in missing:
            print(f"{path}:1: no such file or folder", file=sys.stderr)
        return 2
    scenarios, problems = load_all(scenario_files(paths))
    if lang is not None:  # the caller's own LICH_PROMPT_LANG is never read: a replay must not depend on its shell
        for scenario in scenarios:
            scenario.env["LICH_PROMPT_LANG"] = lang
    for line in problems:
        print(line, file=sys.stderr)
    run: Callable[[Scenario], Replay] = run_replay
    if processes:
        from simulator.runners.processes import replay_processes

        run = replay_processes
    failed = False
    for scenario in scenarios:
        try:
            result = run(scenario)
        except Exception as error:  # a fault of the bench itself: one line naming the file, not a traceback
            failure = f"{scenario.file}:1: the replay itself failed: {type(error).__name__}: {error}"
            result = Replay(scenario.file, scenario.title, scenario.clauses, [], [failure])
        failed |= not result.passed
        print(render.to_json_line(result) if as_json else render.to_text(result) + "\n")
    if problems:
        return 2
    return 1 if failed else 0


def coverage(args: list[str]) -> int:
    as_json = "--json" in args
    paths = [a for a in args if a != "--json"]
    folder = Path(paths[0]) if paths else DEFAULT_DIR
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
