"""The session host from start to exit: read the boot object, listen, say hello, serve, clean up.

The module starts the host with ``python -I -S -c BOOT`` and writes the boot object on its stdin:
``{"env": {...}, "state": ..., "events": [...]}`` (what ``$.env.get`` gave for the names the mod reads, the
mod's state as the host before this one left it, the events already answered, ``session.start``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_cards.bridge.lifetime import (
    cleanup,
    make_folder,
    parent_gone,
    parent_is_gone,
    remove_at_exit,
    runtime_root,
    write_stdout,
)
from agent_cards.bridge.server import StepServer
from agent_cards.bridge.session import UNSURE, BridgeSession
from agent_cards.engine import error_reason
from agent_cards.texts import agent_text


def _tool(args: list[str]) -> int:
    """``--js`` (print the generated module) or ``--check FILE`` (exit 1 when FILE is not it)."""
    from agent_cards.arguments import CommandParser, parse, usage_error

    parser = CommandParser("python -m agent_cards.bridge", "The plugin's session host (no argument: serve a session, "
                           "the boot object on stdin), or its module printed or checked.",
                           "exit status:\n  0  served, printed, or FILE is the module generated\n"
                           "  1  FILE is not the module generated (or serving failed)\n  2  the command line is wrong")
    parser.usage = "python -m agent_cards.bridge [-h] [--js | --check FILE]"
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--js", action="store_true", help="print the module agent_cards.bridge generates")
    shape.add_argument("--check", metavar="FILE", help="exit 1 when FILE is not the module generated")
    options = parse(parser, args)
    if isinstance(options, int):
        return options
    if options.js:
        from agent_cards.bridge.generate import js_module

        sys.stdout.write(js_module())
        return 0
    if options.check is None:
        return usage_error(parser.prog, "give --js or --check FILE (no argument: serve)")
    from agent_cards.bridge.generate import is_generated

    same = is_generated(options.check)
    if not same:
        sys.stderr.write(f"{options.check} is not the module agent_cards.bridge generates: regenerate it\n")
    return 0 if same else 1


async def serve(
    boot: Mapping[str, Any], write: Callable[[str], None] = write_stdout, parent: int | None = None
) -> None:
    """Listen, say hello, serve until the parent goes (or a signal ends it), then remove the folder.

    ``parent`` is the Claude Code this host serves, read before anything else: one that is gone by then (or
    goes before the hello) ends the host instead of leaving it to serve nobody."""
    parent = os.getppid() if parent is None else parent
    if parent_is_gone(parent, os.environ):
        return
    given = boot.get("env")
    env: Mapping[str, Any] = given if isinstance(given, dict) else {}
    events = boot.get("events")
    boot_events = [item for item in events if isinstance(item, dict)] if isinstance(events, list) else []
    after = boot.get("after")
    session = BridgeSession(env, boot.get("state"), write, boot_events, after=after if isinstance(after, str) else None)
    folder = make_folder(runtime_root(os.environ))
    remove_at_exit(folder)
    path = os.path.join(folder, "s")
    token = secrets.token_urlsafe(32)
    server = StepServer(session.step, token)
    old_umask = os.umask(0o077)
    try:
        listener = await asyncio.start_unix_server(server.connection, path=path)
    finally:
        os.umask(old_umask)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()

    def ending() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, ending)
    unsure = agent_text(session.env.get("LICH_PROMPT_LANG"), UNSURE, program="{program}")
    session.emit({
        "hello": 1, "socket": path, "token": token, "python": sys.executable,
        "version": list(sys.version_info[:3]), "pid": os.getpid(), "texts": {UNSURE: unsure},
    })
    session.boot_events(boot_events)
    session.resume()

    async def watch_parent() -> None:
        await parent_gone(parent)
        ending()

    watcher = loop.create_task(watch_parent())
    try:
        await stop
    finally:
        watcher.cancel()
        listener.close()
        if session.journal is not None:
            session.journal.flush()
        cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agent_cards.bridge [--js | --check FILE]``; with no argument, serve (the boot object on stdin).

    The module starts the host with no argument, so serving reads no command line; the two tools' words are
    read by argparse (:mod:`agent_cards.arguments`), imported only for them."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        return _tool(args)
    parent = os.getppid()  # first: a parent that dies while this host starts is still seen to be gone
    try:
        raw = sys.stdin.read() if sys.stdin is not None else ""
        boot = json.loads(raw) if raw.strip() else {}
        if not isinstance(boot, dict):
            boot = {}
        asyncio.run(serve(boot, parent=parent))
    except Exception as error:
        with contextlib.suppress(OSError, ValueError):
            write_stdout(json.dumps({"fatal": error_reason(error)}) + "\n")
        cleanup()
        return 1
    finally:
        cleanup()
    return 0
