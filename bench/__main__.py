"""Every speed figure beside its goal: ``python -m bench [--quick] [SECTION ...]``.

Sections: leave (P1), virtual (P3), memory (P3), cold (P6), real (P4), cli, first (P7: the real Claude Code,
offline; it needs tmux). Each figure is the
median of its samples, with min and max; PASS when the median meets the goal. Ratios are taken
within one round, their sides run in turn, so that a loaded machine slows both alike.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from agent_cards.arguments import CommandParser, interrupted, parse, usage_error
from bench import bridge, cli_speed, cold_start, in_process, real_processes
from bench.figures import Figure, print_section


def sections(quick: bool) -> dict[str, tuple[str, Callable[[], list[Figure]]]]:
    rounds = 5 if quick else 15
    return {
        "leave": ("P1 · the mod's hook for a call it leaves (in process)", lambda: in_process.leave_cost(rounds * 2)),
        "virtual": ("P3 · virtual time (in process)", lambda: in_process.virtual_time(rounds)),
        "memory": ("P3 · memory across replays in one process",
                   lambda: in_process.memory(1_000 if quick else 10_000)),
        "cold": ("P6 · cold starts (interleaved, ratios to the floor in the same round)",
                 lambda: cold_start.cold_starts(rounds * 2)),
        "real": ("P4 · real processes", lambda: real_processes.parallel_opens(3 if quick else 5)),
        "cli": ("CLI · per scenario, start-up included once", lambda: cli_speed.per_scenario(3 if quick else 5)),
        "first": ("P7 · inside lich, the first Agent call's wait for its session host (real Claude Code)",
                  lambda: bridge.first_call_waits(2 if quick else 5)),
    }


def bench_parser() -> CommandParser:
    parser = CommandParser(
        "python -m bench",
        "Every speed figure beside its goal: the median of its samples, with min and max; PASS when\n"
        "the median meets the goal.",
        "sections:\n" + "\n".join(f"  {name:<8} {title}" for name, (title, _) in sections(True).items())
        + "\n\nexit status:\n  0  the figures were measured (a figure that misses its goal is marked MISS)\n"
        "  2  the command line is wrong\n  130  interrupted (Ctrl-C)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds and samples (a rough figure, quickly)")
    parser.add_argument("wanted", nargs="*", metavar="SECTION",
                        help="only these sections (default: all)")
    return parser


def main(argv: Sequence[str]) -> int:
    options = parse(bench_parser(), argv, files="wanted")
    if isinstance(options, int):
        return options
    quick, wanted = options.quick, options.wanted
    table = sections(quick)
    unknown = [name for name in wanted if name not in table]
    if unknown:
        return usage_error("python -m bench", f"no section {unknown[0]!r} (sections: {', '.join(table)})")
    try:
        return _measure(table, wanted, quick)
    except KeyboardInterrupt:
        return interrupted("python -m bench")


def _measure(table: dict[str, tuple[str, Callable[[], list[Figure]]]], wanted: list[str], quick: bool) -> int:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load:.2f} at the start"
          f"{' (--quick)' if quick else ''}")
    missed = 0
    for name, (title, measure) in table.items():
        if wanted and name not in wanted:
            continue
        figures = measure()
        print_section(title, figures)
        missed += sum(1 for f in figures if f.verdict == "MISS")
    print(f"{missed} figure(s) miss their goal" if missed else "every figure meets its goal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
