"""How every command of agent-cards reads its command line: argparse, with the conventions they all keep.

- ``--`` ends the options (``agent-cards replay -- -x.yaml`` replays a file named ``-x.yaml``); ``-`` where a
  file is read means standard input where the command can read one, else it is a usage error.
- A usage error is one line, ``PROG: why (PROG --help)``, and exit 2; ``--help`` prints and exits 0, before
  any work is done.
- Ctrl-C ends a command with one line (what it had done so far) and exit 130, never a traceback.
- ``-o FILE`` never overwrites a file without ``--force``, and a folder that is not there is one line.

The parser returns an exit code instead of raising ``SystemExit``, so that a command called as a function
(``main(["--help"])``) returns as it does from the console script. The command hook and the bridge's
session host do not use this module: they read their few words by hand, because importing argparse
(and ``re``, ``gettext`` with it) would cost their start-up more than the rest of it (docs/decisions.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence

USAGE = 2
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C ended
STDIN = "-"


class UsageError(Exception):
    """The command line is wrong: the message says why (argparse's own wording, or the command's)."""


class _Done(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class CommandParser(argparse.ArgumentParser):
    """argparse's parser for one command: raw help text (the exit codes laid out as written), no
    abbreviated options, and its errors and exits handed to :func:`parse` instead of ending the process."""

    def __init__(self, prog: str, description: str, epilog: str = "") -> None:
        super().__init__(prog=prog, description=description, epilog=epilog, allow_abbrev=False,
                         formatter_class=argparse.RawDescriptionHelpFormatter)

    def error(self, message: str) -> None:  # type: ignore[override]  # argparse's is NoReturn too, by exiting
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if message:
            sys.stderr.write(message)
        raise _Done(status)


def parse(parser: CommandParser, args: Sequence[str], files: str | None = None) -> argparse.Namespace | int:
    """The options, or the exit code to return at once (0 after ``--help``, 2 after a usage error, printed).

    ``files``: the destination of the command's list of files (a positional with ``nargs="*"``): options may
    then come between the files (``replay a.yaml --json b.yaml``), and every word after ``--`` is a file.
    (argparse's own intermixed parsing loses the words after ``--`` before Python 3.12, so they are set
    aside here.)"""
    words = list(args)
    after: list[str] = []
    if files is not None and "--" in words:
        at = words.index("--")
        words, after = words[:at], words[at + 1 :]
    try:
        if files is None:
            return parser.parse_args(words)
        options = parser.parse_intermixed_args(words)
    except UsageError as error:
        return usage_error(parser.prog, str(error))
    except _Done as done:
        return done.code
    setattr(options, files, [*getattr(options, files), *after])
    return options


def usage_error(prog: str, reason: str) -> int:
    print(f"{prog}: {reason} ({prog} --help)", file=sys.stderr)
    return USAGE


def whole_number(minimum: int) -> type[int]:
    """An argparse ``type``: a whole number at least ``minimum`` (``--cases 0`` is a usage error, exit 2)."""

    def number(text: str) -> int:
        value = text.strip()
        if not (value.isascii() and value.isdigit()) or int(value) < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number, {minimum} or more, not {text!r}")
        return int(value)

    number.__name__ = "whole number"
    return number  # type: ignore[return-value]  # argparse takes any callable from text


#: Set once Ctrl-C was pressed in this process (:func:`ctrl_c`).
_PRESSED: list[bool] = []


def _on_ctrl_c(number: int, frame: object) -> None:
    """SIGINT: KeyboardInterrupt, as Python's own handler raises it, remembered; and from now on an error
    in a finalizer (an object the interrupt left half made, an event loop cut off in its ``__init__``) is
    not printed: it is the interrupt's doing, and the command says so in its one line."""
    _PRESSED.append(True)
    sys.unraisablehook = lambda unraisable: None
    raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c() -> Iterator[None]:
    """While a command runs: Ctrl-C raises KeyboardInterrupt, remembered (:func:`ctrl_c_pressed`), even
    where a library turns the KeyboardInterrupt into another error. SIGINT ignored (a background job) or
    handled by someone else stays theirs."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_pressed() -> bool:
    return bool(_PRESSED)


def interrupted(prog: str, so_far: str = "") -> int:
    """Ctrl-C: one line on stderr, what was done so far with it, and 130."""
    with_summary = f": {so_far}" if so_far else ""
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing more to say
        print(f"{prog}: interrupted{with_summary}", file=sys.stderr, flush=True)
    return INTERRUPTED


def refused_output(path: str, force: bool) -> str | None:
    """Why ``-o PATH`` cannot be written (None: it can): a file already there without ``force``, a folder
    that is not there, a folder where a file is meant."""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        return f"{path} is a folder: name a file to write"
    if not os.path.isdir(folder):
        return f"no folder {folder} to write {os.path.basename(path)} in"
    if os.path.lexists(path) and not force:
        return f"{path} exists: give --force to overwrite it"
    return None


def write_output(prog: str, path: str, text: str, force: bool) -> int:
    """Write ``text`` to ``-o PATH`` (0), or say in one line why not (2): :func:`refused_output`, or the
    operating system's reason. Without ``force`` the file is created only if it is not there."""
    problem = refused_output(path, force)
    if problem is None:
        try:
            with open(path, "w" if force else "x", encoding="utf-8") as file:
                file.write(text)
            return 0
        except FileExistsError:  # made between the check and the write
            problem = f"{path} exists: give --force to overwrite it"
        except OSError as error:
            problem = f"cannot write {path}: {error.strerror or error}"
    print(f"{prog}: {problem}", file=sys.stderr)
    return USAGE
