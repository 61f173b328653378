"""P3 in CPU instructions: ``python -m bench.instructions [REPLAYS]`` (needs valgrind).

Wall times on a shared machine drift by 15% between runs, more than most single changes to the poll's
path are worth; an instruction count does not. This runs the virtual hour of ``python -m bench virtual``
under callgrind twice in fresh interpreters, once with only its set-up and once with ``REPLAYS`` replays
after it (default 10), and prints the difference per replay. Run it on two commits to compare them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from agent_cards.arguments import CommandParser, interrupted, parse, whole_number

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
from bench.in_process import HOUR, polled
from agent_cards_simulator.scenario.replay import replay
scenario = polled(HOUR)
for _ in range(int(sys.argv[1])):
    replay(scenario)
"""


def instructions(replays: int) -> int:
    """Instructions the interpreter ran for ``replays`` replays and their set-up."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", SCRIPT,
         str(replays)],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=1800,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-300:]}")
    return int(found.group(1))


def main(argv: list[str]) -> int:
    parser = CommandParser("python -m bench.instructions", "P3 in CPU instructions: the virtual hour of `python -m "
                           "bench virtual` under callgrind,\nper replay (needs valgrind).",
                           "exit status:\n  0  counted\n  1  the count failed\n  2  valgrind is missing, or the "
                           "command line is wrong\n  130  interrupted (Ctrl-C)")
    parser.add_argument("replays", nargs="?", metavar="REPLAYS", type=whole_number(1), default=10,
                        help="replays to count after the set-up (default 10)")
    options = parse(parser, argv)
    if isinstance(options, int):
        return options
    try:
        return _count(options.replays)
    except KeyboardInterrupt:
        return interrupted("python -m bench.instructions")


def _count(replays: int) -> int:
    if shutil.which("valgrind") is None:
        print("bench.instructions: valgrind is not installed (its callgrind tool counts the instructions)",
              file=sys.stderr)
        return 2
    try:
        per_hour = (instructions(replays) - instructions(0)) / replays
    except (subprocess.SubprocessError, RuntimeError) as error:  # one line, not a traceback
        print(f"bench.instructions: the count failed: {error}", file=sys.stderr)
        return 1
    print(f"P3 one hour of virtual time: {per_hour / 1e6:.1f} M instructions per replay ({replays} replays)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
