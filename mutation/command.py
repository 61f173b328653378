"""``agent-cards mutate``: plant mutants in the mod, try each against the checks, print the score."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

from agent_cards.arguments import CommandParser, ctrl_c, interrupted, parse, usage_error, whole_number
from agent_cards_mutation.run import ROOT, Limits, Outcome, all_modules, population, run_all, timed

EQUIVALENT_FILE = Path(__file__).resolve().parent / "equivalent.yaml"

#: The modules mutated when none is named: the mod's sans-I/O core, which the scenarios and the fuzzer
#: drive in process. The command hook, the session host (``bridge``) and the command line's plumbing are
#: mutated when named; their killers are their test files alone.
CORE = ("agent_cards.branch", "agent_cards.delivery", "agent_cards.engine", "agent_cards.lich_calls",
        "agent_cards.mod", "agent_cards.quick_json", "agent_cards.record", "agent_cards.rules",
        "agent_cards.state", "agent_cards.taken", "agent_cards.texts")

DESCRIPTION = """Plant mutants in the mod (one syntax node changed: a comparison flipped or moved off by one, and/or
swapped, a not removed, + and - swapped, a constant changed, a string emptied, a return made None, a
call deleted) and try each, cheapest first: the scenarios replayed in process against the unmutated
transcript, a short fuzz run (seed 14), then the test files that import the module. A mutant that runs
out of time counts as killed. Mutants listed in the equivalent file (with the reason each changes
nothing) are left out; a listed one that no longer exists is an error. MODULE: a module of agent_cards
(default: the sans-I/O core)."""

EXIT = """exit status:
  0  the share of mutants killed is at least the threshold
  1  it is below, or the equivalent list names a mutant that no longer exists
  2  the command line is wrong
  130  interrupted (Ctrl-C)"""


def mutate_parser() -> CommandParser:
    parser = CommandParser("agent-cards mutate", DESCRIPTION, EXIT)
    parser.usage = ("agent-cards mutate [-h] [--sample N] [--seed S] [--threshold T] [--jobs J] [--fuzz-cases N] "
                    "[--id ID]... [--list] [--verbose] [--] [MODULE...]")
    parser.add_argument("--sample", metavar="N", type=whole_number(1),
                        help="try N mutants drawn at random (by --seed) instead of all")
    parser.add_argument("--seed", metavar="S", type=whole_number(0), default=0, help="the sample's seed (default 0)")
    parser.add_argument("--threshold", metavar="T", type=float, default=0.9,
                        help="the least share killed, 0 to 1 (default 0.9)")
    parser.add_argument("--jobs", metavar="J", type=whole_number(1), default=2,
                        help="mutants tried at once (default 2)")
    parser.add_argument("--fuzz-cases", metavar="N", type=whole_number(0), default=Limits().fuzz_cases,
                        help=f"cases of the fuzz step, 0 to skip it (default {Limits().fuzz_cases})")
    parser.add_argument("--id", metavar="ID", action="append", dest="ids", default=[],
                        help="try only the mutant ID (repeatable), as --list or a survivor's line names it")
    parser.add_argument("--list", action="store_true", help="print the chosen mutants' ids and try none")
    parser.add_argument("--verbose", action="store_true", help="a line for every mutant tried, killed or not")
    parser.add_argument("modules", nargs="*", metavar="MODULE", help="modules of agent_cards to mutate")
    return parser


def equivalents(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """The listed equivalent mutants: id → why the change makes no difference."""
    if not path.exists():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {str(entry["id"]): str(entry["why"]) for entry in entries}


def _named(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def score_line(killed: int, tried: int, listed: int, threshold: float) -> str:
    share = killed / tried if tried else 1.0
    return (f"mutation score: {killed} of {tried} killed ({share:.1%}), {listed} listed as equivalent, "
            f"threshold {threshold:.0%}")


def main(args: list[str]) -> int:
    options = parse(mutate_parser(), args, files="modules")
    if isinstance(options, int):
        return options
    if not 0 <= options.threshold <= 1:
        return usage_error("agent-cards mutate", "--threshold is a share from 0 to 1")
    known = all_modules()
    modules: list[str] = options.modules or list(CORE)
    unknown = [m for m in modules if m not in known]
    if unknown:
        return usage_error("agent-cards mutate", f"no module {unknown[0]} in agent_cards (one of: {', '.join(known)})")
    try:
        listed = equivalents(EQUIVALENT_FILE)
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        print(f"{_named(EQUIVALENT_FILE)}:1: not a list of id and why: {error}", file=sys.stderr)
        return 1
    everything = {m.id for m in population(known)}
    stale = [id_ for id_ in listed if id_ not in everything]
    for id_ in stale:
        print(f"{_named(EQUIVALENT_FILE)}: no mutant {id_} any more: remove it from the list",
              file=sys.stderr)
    if stale:
        return 1
    chosen = population(modules)
    if options.ids:
        by_id = {m.id: m for m in population(known)}
        missing = [id_ for id_ in options.ids if id_ not in by_id]
        if missing:
            return usage_error("agent-cards mutate", f"no mutant {missing[0]} (agent-cards mutate --list names them)")
        chosen = [by_id[id_] for id_ in options.ids]
    if options.sample is not None and options.sample < len(chosen):
        # drawn before the listed equivalents are dropped: listing one does not change the rest of the sample
        chosen = random.Random(options.seed).sample(chosen, options.sample)
    excluded = sum(m.id in listed for m in chosen)
    chosen = [m for m in chosen if m.id not in listed]
    if options.list:
        for mutant in chosen:
            print(mutant.id)
        return 0
    limits = Limits(fuzz_cases=options.fuzz_cases)
    each = _shown_all if options.verbose else _shown
    with ctrl_c():
        try:
            outcomes, seconds = timed(lambda: run_all(chosen, options.jobs, limits, done=each))
        except KeyboardInterrupt:
            return interrupted("agent-cards mutate")
    killed = sum(o.killed_by is not None for o in outcomes)
    timeouts = sum(o.killed_by == "timeout" for o in outcomes)
    print(score_line(killed, len(outcomes), excluded, options.threshold)
          + f"; {timeouts} by timeout; {seconds:.0f} s, {options.jobs} jobs")
    share = killed / len(outcomes) if outcomes else 1.0
    return 0 if share >= options.threshold else 1


def _shown(outcome: Outcome) -> None:
    """A survivor, one line as it is found (file:line: id)."""
    if outcome.killed_by is None:
        mutant = outcome.mutant
        print(f"survived: {mutant.module.replace('.', '/')}.py:{mutant.line}: {mutant.id}", flush=True)


def _shown_all(outcome: Outcome) -> None:
    mutant = outcome.mutant
    if outcome.killed_by is None:
        _shown(outcome)
    else:
        why = " ".join(outcome.detail.split())[:120]
        print(f"killed by {outcome.killed_by}: {mutant.id}: {why}", flush=True)
