"""``python -m agent_cards_claude_driver validate [--strict] PLUGIN_DIR``: validate a plugin with the real CLI.

The CLI is the pinned build unless ``AGENT_CARDS_CLAUDE`` names another; it is installed once, into a cache.

HOME is a scratch folder and the guard variables are set, as for every run of the real CLI here.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from agent_cards_claude_driver.install import choice, ensure_claude
from agent_cards_claude_driver.runs import run_validate


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    strict = "--strict" in args
    args = [a for a in args if a != "--strict"]
    if len(args) != 2 or args[0] != "validate":
        print("usage: python -m agent_cards_claude_driver validate [--strict] PLUGIN_DIR", file=sys.stderr)
        return 2
    try:
        claude = ensure_claude()
    except Exception as error:  # no npm, no registry: say so in one line
        print(f"claude_driver: cannot install Claude Code {choice()}: {error}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="agent-cards-validate-") as scratch:
        run = run_validate(claude, Path(args[1]).resolve(), Path(scratch) / "home", strict=strict)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
