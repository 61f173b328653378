"""``agent-cards``: the command a person and CI run.

    agent-cards hook                 the mod as a Claude Code command hook (one event as JSON on stdin)
    agent-cards COMMAND ...          a command another installed package adds (the replay bench adds
                                     ``replay`` and ``coverage``); ``agent-cards COMMAND --help``
    agent-cards --version

``hook`` is on the path of every tool call a person makes, so it is decided here first and imports only
the mod. Every other command is found by name in the ``agent_cards.commands`` entry-point group, so
the mod knows nothing of the packages that extend its command line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

GROUP = "agent_cards.commands"


def _commands() -> dict[str, Callable[[], Callable[[list[str]], int]]]:
    """Each command's loader, by name: a command's module is imported only when it is run."""
    from importlib.metadata import entry_points

    found: dict[str, Callable[[], Callable[[list[str]], int]]] = {}
    for point in entry_points(group=GROUP):
        found.setdefault(point.name, point.load)
    return found


def usage(names: Sequence[str]) -> str:
    lines = ["usage: agent-cards hook   (a Claude Code command hook: event JSON on stdin)"]
    lines += [f"       agent-cards {name} ...   (agent-cards {name} --help)" for name in names]
    lines += ["       agent-cards --version"]
    return "\n".join(lines)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("agent-cards")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _run(run: Callable[[list[str]], int], args: list[str]) -> int:
    """Run a command; a reader that stops early (``| head``) ends it quietly, as other tools end."""
    import os

    try:
        code = int(run(args))
        sys.stdout.flush()
    except BrokenPipeError:
        # Nobody reads any more: point stdout at nothing so the interpreter's last flush cannot fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    if command == "hook":
        from agent_cards.hook import main as hook_main

        return hook_main(args[1:])
    if command in ("-V", "--version"):
        print(f"agent-cards {version()}")
        return 0
    loaders = _commands()
    if command in loaders:
        return _run(loaders[command](), args[1:])
    if command in ("-h", "--help", "help"):
        print(usage(sorted(loaders)))
        return 0
    print(f"agent-cards: unknown command {command!r}" if command else "agent-cards: no command given", file=sys.stderr)
    print(usage(sorted(loaders)), file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
