"""``agent-cards``: replay scenarios, report clause coverage, or run as a Claude Code command hook.

    agent-cards replay [--json] [--processes] [--lang TAG] FILE|DIR...
                                               exit 0 all passed, 1 an expectation failed, 2 invalid file
    agent-cards coverage [--json] [DIR]        exit 0 every clause shown, 1 a gap or an unknown id
    agent-cards hook                           the mod as a classic command hook (JSON on stdin)

``hook`` is on the path of every tool call a person makes, so it imports only the mod; the replay
tools are imported when they are asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: agent-cards replay [--json] [--processes] [--lang TAG] FILE|DIR...
       agent-cards coverage [--json] [SCENARIOS_DIR]
       agent-cards hook   (a Claude Code command hook: event JSON on stdin)"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    if command == "hook":
        from agent_cards.hook import main as hook_main  # type: ignore[import-not-found,unused-ignore]

        return int(hook_main(args[1:]))
    if command in ("replay", "coverage"):
        from simulator import commands

        return commands.replay(args[1:]) if command == "replay" else commands.coverage(args[1:])
    if command in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    print(f"agent-cards: unknown command {command!r}" if command else "agent-cards: no command given", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
