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
from typing import TypeVar

C = TypeVar("C", bound=Callable[[list[str]], int])

GROUP = "agent_cards.commands"


DIST = "agent_cards"  # the distribution's name as its metadata folder spells it (agent-cards, normalized)

Loader = Callable[[], Callable[[list[str]], int]]


def _commands() -> dict[str, Loader]:
    """Each command's loader, by name: a command's module is imported only when it is run."""
    from importlib.metadata import entry_points

    found: dict[str, Loader] = {}
    for point in entry_points(group=GROUP):
        found.setdefault(point.name, point.load)
    return found


def _own_commands() -> dict[str, str] | None:
    """This distribution's own ``agent_cards.commands`` (name: ``module:attr``), read from the first
    ``agent_cards-*.dist-info`` or ``agent_cards*.egg-info`` on ``sys.path``, as ``importlib.metadata``
    would find it; None when there is none or it cannot be read.

    Importing ``importlib.metadata`` costs about as much as the rest of a command's start-up, so a
    command this package ships is found here first; any other name goes through entry points."""
    import os

    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:  # a zip file, a folder that is gone
            continue
        for name in sorted(names):
            if not name.startswith(DIST) or not name.endswith((".dist-info", ".egg-info")):
                continue
            stem = name.rsplit(".", 1)[0]
            if stem != DIST and not stem.startswith(DIST + "-"):
                continue
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as file:
                    return _section(file.read(), GROUP)
            except (OSError, UnicodeDecodeError):
                return None
    return None


def _section(text: str, group: str) -> dict[str, str]:
    """``name = value`` lines of one ``[group]`` of an ``entry_points.txt`` (first of a name wins)."""
    found: dict[str, str] = {}
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
            continue
        if inside and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            found.setdefault(name, value)
    return found


def _loader(value: str) -> Loader:
    """``module:attr.attr [extra]`` as ``EntryPoint.load`` reads it: import the module, follow the attributes."""

    def load() -> Callable[[list[str]], int]:
        from importlib import import_module
        from typing import Any, cast

        module, _, attrs = value.split("[", 1)[0].strip().partition(":")
        found: Any = import_module(module.strip())
        for attr in filter(None, attrs.strip().split(".")):
            found = getattr(found, attr)
        return cast("Callable[[list[str]], int]", found)

    return load


def _find(command: str) -> Loader | None:
    """The loader of ``command``: this package's own first (cheap), else any installed package's."""
    if not command.startswith("-"):
        own = _own_commands()
        if own is not None and command in own:
            return _loader(own[command])
    return _commands().get(command)


def usage(names: Sequence[str]) -> str:
    lines = ["usage: agent-cards hook   (a Claude Code command hook: event JSON on stdin)"]
    lines += [f"       agent-cards {name} ...   (agent-cards {name} --help)" for name in names]
    lines += ["       agent-cards --version"]
    return "\n".join(lines)


def _top_level(names: Sequence[str], args: list[str]) -> int:
    """``agent-cards`` with no command it knows: ``--help``, ``--version``, or a usage error (argparse's)."""
    from agent_cards.arguments import CommandParser, parse, usage_error

    parser = CommandParser("agent-cards", "The agent cards mod for Claude Code, and the commands installed beside it.",
                           usage(names) + "\n\nexit status: each command's own (agent-cards COMMAND --help); "
                           "2 the command line is wrong")
    parser.usage = "agent-cards [-h] [-V] COMMAND ..."
    parser.add_argument("-V", "--version", action="store_true", help="print the installed version")
    parser.add_argument("command", nargs="?", metavar="COMMAND", help="hook, or a command listed below")
    options = parse(parser, args[:1])
    if isinstance(options, int):
        return options
    if options.version:
        print(f"agent-cards {version()}")
        return 0
    if options.command == "help":
        parser.print_help()
        return 0
    command = options.command
    print(usage(names), file=sys.stderr)  # the commands there are, then why this is not one of them
    return usage_error("agent-cards", f"unknown command {command!r}" if command else "no command given")


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("agent-cards")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _imported(loader: Loader) -> Callable[[list[str]], int]:
    """The command, its modules imported with the cyclic garbage collector off: an import makes many
    objects and frees few, so the collections it would set off find nothing (a few ms of a start-up)."""
    import gc

    if not gc.isenabled():
        return loader()
    gc.disable()
    try:
        return loader()
    finally:
        gc.enable()


def _run(run: Callable[[list[str]], int], args: list[str], command: str) -> int:
    """Run a command; a reader that stops early (``| head``) ends it quietly, as other tools end, and Ctrl-C
    ends it with one line and 130 (a command that has a summary so far prints it itself)."""
    import os

    from agent_cards.arguments import ctrl_c

    try:
        with ctrl_c():
            code = int(run(args))
            sys.stdout.flush()
    except BrokenPipeError:
        # Nobody reads any more: point stdout at nothing so the interpreter's last flush cannot fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        from agent_cards.arguments import interrupted

        return interrupted(f"agent-cards {command}")
    return code


#: The mark :func:`ends_at_once` puts on a command.
_AT_ONCE = "agent_cards_ends_at_once"

def ends_at_once(command: C) -> C:
    """Mark an added command whose process may end without the interpreter's teardown, once what it
    printed is flushed: it leaves nothing that an exit handler closes (its temporary folders, threads and
    children are gone when it returns). Freeing every object one by one costs ``replay`` over a folder
    about 20 ms. Only the console script ends so (:func:`entry`); :func:`main` returns."""
    setattr(command, _AT_ONCE, True)
    return command


def main(argv: Sequence[str] | None = None) -> int:
    return _main(argv)[0]


def _main(argv: Sequence[str] | None) -> tuple[int, bool]:
    """The command's exit code, and whether the process may end at once (:func:`ends_at_once`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    if command == "hook":
        from agent_cards.hook import main as hook_main

        return hook_main(args[1:]), False
    if command in ("-V", "--version"):  # answered before any command is looked up
        print(f"agent-cards {version()}")
        return 0, False
    try:
        loader = _find(command) if command else None
        if loader is not None:
            run = _imported(loader)
            return _run(run, args[1:], command), bool(getattr(run, _AT_ONCE, False))
        return _top_level(sorted(_commands()), args), False
    except KeyboardInterrupt:  # while a command's modules were imported, or the commands looked up
        from agent_cards.arguments import interrupted

        return interrupted(f"agent-cards {command}".rstrip()), False


def entry() -> None:
    """The console script: :func:`main`; a command marked :func:`ends_at_once` ends the process at once
    with its exit code, once what it printed is flushed."""
    code, at_once = _main(None)
    if at_once:
        import os
        from contextlib import suppress

        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a reader gone (| head), or a stream closed: nothing to say
                stream.flush()
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
