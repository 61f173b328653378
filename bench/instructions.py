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
    if argv and not (argv[0].isdigit() and int(argv[0]) >= 1):
        print("usage: python -m bench.instructions [REPLAYS]", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("bench.instructions: valgrind is not installed (its callgrind tool counts the instructions)",
              file=sys.stderr)
        return 2
    replays = int(argv[0]) if argv else 10
    try:
        per_hour = (instructions(replays) - instructions(0)) / replays
    except (subprocess.SubprocessError, RuntimeError) as error:  # one line, not a traceback
        print(f"bench.instructions: the count failed: {error}", file=sys.stderr)
        return 1
    print(f"P3 one hour of virtual time: {per_hour / 1e6:.1f} M instructions per replay ({replays} replays)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
