"""``agent-cards mutate``: plant mutants in the mod or the judge, try each against the checks, print the score
of kills by an assertion, module by module."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import yaml

from agent_cards.arguments import CommandParser, ctrl_c, interrupted, parse, usage_error, whole_number
from agent_cards_mutation.planted import module_path
from agent_cards_mutation.run import (
    JUDGE,
    ROOT,
    Limits,
    NothingToKillWith,
    Outcome,
    all_modules,
    judge_modules,
    population,
    run_all,
    timed,
)
from agent_cards_mutation.sampling import WEAK_RATE, pass_chance

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
mod, a short fuzz run (seed 14), then the test files that import the module. A mutant is killed by an
assertion when a scenario that passes unmutated fails, the fuzzer finds a violation, or a test fails that
passes unmutated (a test that fails unmutated too is a flaky killer: reported, never counted); one that
runs out of time counts as killed by an assertion too (a mod that hangs fails). A mutant whose only effect
is a changed transcript, every expectation still holding, is killed by a snapshot alone: reported, and
not counted. The threshold is judged on kills by an assertion. Mutants listed in the equivalent file
(with the reason each changes nothing) are left out; a listed one that no longer exists is an error.
MODULE: a module of agent_cards (default: the sans-I/O core), or of the judge (--judge: all of them), whose
killers are their test files and the replay's verdicts, never a changed transcript:
""" + "\n".join(textwrap.wrap(", ".join(JUDGE), 104, initial_indent="  ", subsequent_indent="  "))

EXIT = """exit status:
  0  the share of mutants killed by an assertion is at least the threshold
  1  it is below, the equivalent list names a mutant that no longer exists, or nothing here can kill a
     chosen module's mutants (no scenario, fuzz run or test file reaches it: a copy without the tests)
  2  the command line is wrong
  130  interrupted (Ctrl-C)"""


def mutate_parser() -> CommandParser:
    parser = CommandParser("agent-cards mutate", DESCRIPTION, EXIT)
    parser.usage = ("agent-cards mutate [-h] [--sample N] [--seed S] [--seed-from-commit] [--threshold T] [--jobs J] "
                    "[--fuzz-cases N] [--id ID]... [--judge] [--list] [--verbose] [--] [MODULE...]")
    parser.add_argument("--sample", metavar="N", type=whole_number(1),
                        help="try N mutants drawn at random (by --seed) instead of all")
    parser.add_argument("--seed", metavar="S", type=whole_number(0), default=0, help="the sample's seed (default 0)")
    parser.add_argument("--seed-from-commit", action="store_true",
                        help="the sample's seed from the checked-out commit (git rev-parse HEAD): a new sample for "
                             "each commit, the same for a run again on it (outside a git clone: --seed's)")
    parser.add_argument("--threshold", metavar="T", type=float, default=0.9,
                        help="the least share killed by an assertion, 0 to 1 (default 0.9)")
    parser.add_argument("--jobs", metavar="J", type=whole_number(1), default=2,
                        help="mutants tried at once (default 2)")
    parser.add_argument("--fuzz-cases", metavar="N", type=whole_number(0), default=Limits().fuzz_cases,
                        help=f"cases of the fuzz step, 0 to skip it (default {Limits().fuzz_cases})")
    parser.add_argument("--id", metavar="ID", action="append", dest="ids", default=[],
                        help="try only the mutant ID (repeatable), as --list or a survivor's line names it")
    parser.add_argument("--judge", action="store_true", help="mutate the judge's modules (with any MODULE named)")
    parser.add_argument("--list", action="store_true", help="print the chosen mutants' ids and try none")
    parser.add_argument("--verbose", action="store_true", help="a line for every mutant tried, killed or not")
    parser.add_argument("modules", nargs="*", metavar="MODULE", help="modules of agent_cards or of the judge to mutate")
    return parser


def equivalents(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """The listed equivalent mutants: id → why the change makes no difference."""
    if not path.exists():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {str(entry["id"]): str(entry["why"]) for entry in entries}


def _named(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def score_line(asserted: int, tried: int, snapshot: int, listed: int, threshold: float) -> str:
    share = asserted / tried if tried else 1.0
    return (f"mutation score: {asserted} of {tried} killed by an assertion ({share:.1%}), {snapshot} more by a "
            f"changed snapshot alone, {listed} listed as equivalent, threshold {threshold:.0%}")


COLUMNS = ("mutants", "assertion", "snapshot only", "timeout", "survived")
COLUMN_OF_KIND = {"assertion": 1, "snapshot": 2, "timeout": 3, "survived": 4}


def by_module(outcomes: list[Outcome]) -> str:
    """A table: each module's mutants, and how many died by an assertion, by a changed snapshot alone, by
    timeout (also counted as asserted), and how many survived; then the sum."""
    rows: dict[str, list[int]] = {}
    for outcome in outcomes:
        row = rows.setdefault(outcome.mutant.module, [0] * len(COLUMNS))
        row[0] += 1
        row[COLUMN_OF_KIND[outcome.kind]] += 1
    total = [sum(row[i] for row in rows.values()) for i in range(len(COLUMNS))]
    width = max([len("module"), len("all"), *map(len, rows)])
    lines = ["  ".join(["module".ljust(width), *COLUMNS])]
    for name, row in [*sorted(rows.items()), ("all", total)]:
        lines.append("  ".join([name.ljust(width), *(str(v).rjust(len(c)) for v, c in zip(row, COLUMNS, strict=True))]))
    return "\n".join(lines)


def commit_seed(fallback: int, root: Path = ROOT) -> tuple[int, str]:
    """The seed of the checked-out commit (its hash, modulo 2**32) and a line saying where it came from; outside
    a git clone, or without git, ``fallback`` and a line saying so."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return fallback, f"no commit to seed the sample from (git: {error}): seed {fallback}"
    head = done.stdout.strip()
    if done.returncode != 0 or len(head) < 7 or any(c not in "0123456789abcdef" for c in head):
        why = (done.stderr.strip().splitlines() or ["no commit"])[0]
        return fallback, f"no commit to seed the sample from ({why}): seed {fallback}"
    seed = int(head, 16) % 2**32
    return seed, f"seed {seed}, from commit {head[:12]}"


def chance_line(sample: int, population: int, threshold: float) -> str:
    """What the sample can say: the chance that a tree whose true share of mutants killed by an assertion is
    only :data:`WEAK_RATE` passes it (the mutants tried, of those not listed as equivalent)."""
    chance = pass_chance(sample, threshold, WEAK_RATE, population)
    return (f"a tree whose true share killed by an assertion is {WEAK_RATE:.0%} passes {sample} mutants drawn from "
            f"{population} at {threshold:.0%} with probability {_share(chance)}")


def _share(chance: float) -> str:
    """A probability as a person reads it: two decimals of a percent, or an upper bound below that."""
    return f"{chance:.2%}" if chance >= 0.0001 or chance == 0 else "under 0.01%"


def main(args: list[str]) -> int:
    options = parse(mutate_parser(), args, files="modules")
    if isinstance(options, int):
        return options
    if not 0 <= options.threshold <= 1:
        return usage_error("agent-cards mutate", "--threshold is a share from 0 to 1")
    judge = judge_modules()
    known = all_modules() + judge
    modules: list[str] = list(dict.fromkeys(options.modules + (judge if options.judge else []))) or list(CORE)
    unknown = [m for m in modules if m not in known]
    if unknown:
        return usage_error("agent-cards mutate", f"no module {unknown[0]} in agent_cards or the judge "
                           f"(one of: {', '.join(known)})")
    try:
        listed = equivalents(EQUIVALENT_FILE)
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        print(f"{_named(EQUIVALENT_FILE)}:1: not a list of id and why: {error}", file=sys.stderr)
        return 1
    everything = {m.id for m in population(known)}
    lacked = set(JUDGE) - set(judge)  # an installed copy holds the mod without the bench's folders
    stale = [id_ for id_ in listed if id_ not in everything and id_.split(":", 1)[0] not in lacked]
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
    sampled = options.sample is not None and options.sample < len(chosen)
    drawn_from = sum(m.id not in listed for m in chosen)
    if sampled:
        seed, said = options.seed, f"seed {options.seed}"
        if options.seed_from_commit:
            seed, said = commit_seed(options.seed)
        if not options.list:
            print(f"sample: {options.sample} of {len(chosen)} mutants, {said}", flush=True)
        # drawn before the listed equivalents are dropped: listing one does not change the rest of the sample
        chosen = random.Random(seed).sample(chosen, options.sample)
    excluded = sum(m.id in listed for m in chosen)
    chosen = [m for m in chosen if m.id not in listed]
    if options.list:
        for mutant in chosen:
            print(mutant.id)
        return 0
    if sampled and chosen:
        print(chance_line(len(chosen), drawn_from, options.threshold), flush=True)
    limits = Limits(fuzz_cases=options.fuzz_cases)
    each = _shown_all if options.verbose else _shown
    with ctrl_c():
        try:
            outcomes, seconds = timed(lambda: run_all(chosen, options.jobs, limits, done=each))
        except KeyboardInterrupt:
            return interrupted("agent-cards mutate")
        except (NothingToKillWith, RuntimeError) as error:
            print(f"agent-cards mutate: {error}", file=sys.stderr)
            return 1
    return verdict(outcomes, excluded, options.threshold, f"{seconds:.0f} s, {options.jobs} jobs")


def verdict(outcomes: list[Outcome], excluded: int, threshold: float, spent: str,
            out: Callable[[str], None] = print) -> int:
    """The table by module and the score line printed; 0 when the share killed by an assertion reaches ``threshold``."""
    asserted = sum(o.asserted for o in outcomes)
    snapshot = sum(o.kind == "snapshot" for o in outcomes)
    timeouts = sum(o.kind == "timeout" for o in outcomes)
    flaky = sorted({id_ for o in outcomes for id_ in o.flaky})
    for id_ in flaky:
        out(f"flaky killer (fails unmutated too, not counted): {id_}")
    out(by_module(outcomes))
    out(score_line(asserted, len(outcomes), snapshot, excluded, threshold)
        + f"; {timeouts} by timeout; {len(flaky)} flaky killers; {spent}")
    share = asserted / len(outcomes) if outcomes else 1.0
    return 0 if share >= threshold else 1


def _where(outcome: Outcome) -> str:
    mutant = outcome.mutant
    return f"{_named(module_path(mutant.module, ROOT))}:{mutant.line}: {mutant.id}"


def _shown(outcome: Outcome) -> None:
    """A survivor or a mutant only a changed snapshot caught, one line as it is found (file:line: id)."""
    if outcome.kind == "survived":
        print(f"survived: {_where(outcome)}", flush=True)
    elif outcome.kind == "snapshot":
        print(f"snapshot only: {_where(outcome)}", flush=True)


def _shown_all(outcome: Outcome) -> None:
    if outcome.kind in ("survived", "snapshot"):
        _shown(outcome)
    else:
        why = " ".join(outcome.detail.split())[:120]
        print(f"killed by {outcome.killed_by}: {outcome.mutant.id}: {why}", flush=True)
