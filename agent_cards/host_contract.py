"""What every host of the mod must do exactly as Claude Code's mod engine does, written once.

Two hosts serve the mod: the bridge (:mod:`agent_cards.bridge`, the mod's session host inside the real
engine, which runs the mod's processes itself) and the simulator's fake Claude Code. Each of them checks a
``$.process.run`` call, words its failures, caps its output and picks the hooks an event runs; both take
those rules from here, so that a toast quoting a failed run reads the same in both, and a hook runs for
the same events. Every rule is the engine's, as measured on Claude Code 2.1.328.

Nothing here does I/O: the hosts run the processes, this module only judges and words.

``$.process.run``:

- the host checks, before anything starts (:func:`host_check`): argv is a non-empty list of strings whose
  first names the command (a string, ``[]`` and ``[""]`` are refused); ``timeoutMs`` a whole number of ms
  from 1 to 600000; a string with a NUL in it, which no command line can carry, fails to start
  (:func:`nul_problem`), before anything runs and whatever the host, as in the engine;
- its rejections, each a :class:`~agent_cards.engine.ProcessError` in the engine's words:
  ``$.process.run(sleep) aborted: still running after 300ms`` (:func:`timed_out`), ``$.process.run(x) failed
  to start: ENOENT: Executable not found in $PATH: "x"`` (:func:`not_found`, :func:`failed_to_start`), and
  an abort of the call it ran for (:func:`interrupted`);
- a non-zero exit resolves; a child killed by a signal gives exit code 1 (:func:`exit_code`);
- each stream keeps its first 4 MiB, and says so when it was cut (:func:`capped`, :func:`capped_bytes`).

Matchers (:func:`matches`): a scalar is compared with JavaScript's ``===`` (``5`` matches ``5`` and ``5.0``,
which are one number there, but not ``"5"``; ``True`` is not ``1``); a pattern (``re.Pattern``, the
engine's RegExp) is searched in the value as JavaScript's ``String(value)`` writes it; a list is "one of
its members"; a mapping is a partial match of an object. A key the event lacks matches nothing, not even
a pattern that matches any text.
"""

from __future__ import annotations

import errno
import math
import re
from collections.abc import Mapping, Sequence

from agent_cards.engine import MAX_TIMEOUT_MS, ProcessError, ProcessResult

__all__ = [
    "OUTPUT_CAP", "capped", "capped_bytes", "exit_code", "failed_to_start", "host_check", "interrupted", "js_string",
    "matches", "not_found", "nul_problem", "program_name", "timed_out",
]

OUTPUT_CAP = 4 * 1024 * 1024  # bytes per stream: 5,000,000 bytes of stdout arrived as 4,194,304
_SURELY_UNDER = OUTPUT_CAP // 4  # characters: UTF-8 spends at most 4 bytes on one


# -- process.run: the host checks ---------------------------------------------------------------------


def host_check(argv: object, timeout_ms: object) -> None:
    """Refuse, in the engine's words, a ``process.run`` whose argv or ``timeoutMs`` the engine refuses."""
    if not isinstance(argv, (list, tuple)) or not argv or not _all_text(argv) or not argv[0]:
        raise ProcessError(
            "process.run: takes argv, a non-empty list of strings naming the command first (host check)", "host"
        )
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ProcessError("process.run: init.timeoutMs is a whole number of ms, 1 to 600000 (host check)", "host")
    nul = nul_problem(argv)
    if nul is not None:
        raise failed_to_start(argv, nul)


def nul_problem(argv: Sequence[str]) -> str | None:
    """Where argv holds a NUL (the operating system takes each string up to its first NUL, so the engine's
    runtime refuses to start such a command), in the engine's words; None when it holds none."""
    for index, a in enumerate(argv):
        if "\0" in a:
            if index == 0:
                return "the executable path contains a null byte (\\0)"
            return f"the argument at index {index - 1} (zero-based) contains a null byte (\\0)"
    return None


def _all_text(argv: Sequence[object]) -> bool:
    for a in argv:  # noqa: SIM110 (a loop, not all() over a generator: every run of a replay passes here)
        if not isinstance(a, str):
            return False
    return True


# -- process.run: its rejections ----------------------------------------------------------------------


def program_name(argv: Sequence[str]) -> str:
    """The command's file name, as an abort names it (``lich`` for ``/usr/bin/lich``)."""
    name = argv[0]
    return name[name.rfind("/") + 1:] or name


def timed_out(argv: Sequence[str], timeout_ms: int) -> ProcessError:
    """The command ran past ``timeoutMs`` (the host stops it: SIGTERM, then SIGKILL after 2 s)."""
    return ProcessError(f"$.process.run({program_name(argv)}) aborted: still running after {timeout_ms}ms", "timeout")


def interrupted(argv: Sequence[str]) -> ProcessError:
    """The call the command ran for was aborted (Esc) before it ended."""
    return ProcessError(f"$.process.run({program_name(argv)}) aborted: the call it ran for was interrupted", "aborted")


def not_found(argv: Sequence[str]) -> ProcessError:
    """No program of that name or path."""
    return failed_to_start(argv, f'ENOENT: Executable not found in $PATH: "{argv[0]}"')


def left_nothing(key: str) -> ProcessError:
    """A kept run (``process.collect``) of which nothing is left: its host died before the command started, or
    no run was ever kept under ``key``."""
    return ProcessError(f"$.process.run(lich) left nothing: no output was kept for {key}", "start")


def failed_to_start(argv: Sequence[str], why: OSError | str) -> ProcessError:
    """The command did not start: ``why`` is the system's error (its name and text, as the engine words it:
    ``EACCES: Permission denied``) or the reason itself."""
    if isinstance(why, OSError):
        if why.errno == errno.ENOENT:
            return not_found(argv)
        code = errno.errorcode.get(why.errno or 0, "")
        why = f"{code}: {why.strerror}" if code and why.strerror else str(why)
    return ProcessError(f"$.process.run({argv[0]}) failed to start: {why}", "start")


# -- process.run: what it resolves to ----------------------------------------------------------------


def exit_code(returncode: int | None) -> int:
    """The exit code the engine reports for a child's return code: a child killed by a signal gives 1."""
    return returncode if returncode is not None and returncode >= 0 else 1


def capped(stdout: str, stderr: str, exit_code: int) -> ProcessResult:
    """A finished run whose output is text: each stream cut to its first :data:`OUTPUT_CAP` bytes."""
    if len(stdout) <= _SURELY_UNDER and len(stderr) <= _SURELY_UNDER:  # no encoding needed: the common case
        return ProcessResult(exit_code, stdout, stderr)
    return capped_bytes(stdout.encode(), stderr.encode(), exit_code)


def capped_bytes(stdout: bytes, stderr: bytes, exit_code: int) -> ProcessResult:
    """A finished run whose output is bytes: each stream's first :data:`OUTPUT_CAP` bytes as UTF-8 text (what is
    not UTF-8, a character cut in two at the cap included, reads as U+FFFD)."""
    return ProcessResult(
        exit_code=exit_code,
        stdout=stdout[:OUTPUT_CAP].decode("utf-8", "replace"),
        stderr=stderr[:OUTPUT_CAP].decode("utf-8", "replace"),
        stdout_truncated=len(stdout) > OUTPUT_CAP,
        stderr_truncated=len(stderr) > OUTPUT_CAP,
    )


# -- matchers ------------------------------------------------------------------------------------------

_MISSING = object()  # a key the event does not have


def matches(matcher: object, value: object) -> bool:
    """Whether ``value`` (an event, or a field of one) is what ``matcher`` asks for (a hook registered without a
    matcher runs for every event of its kind: its host does not ask)."""
    if isinstance(matcher, re.Pattern):
        return value is not _MISSING and matcher.search(js_string(value)) is not None
    if isinstance(matcher, (list, tuple)):
        return any(matches(m, value) for m in matcher)
    if isinstance(matcher, Mapping):
        return isinstance(value, Mapping) and all(matches(m, value.get(k, _MISSING)) for k, m in matcher.items())
    return _strictly_equal(matcher, value)


def _strictly_equal(a: object, b: object) -> bool:
    """JavaScript's ``a === b`` for JSON values: one kind of number, so ``5 === 5.0``; nothing equals NaN."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and not isinstance(a, (Mapping, list, tuple)) and bool(a == b)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def js_string(value: object) -> str:
    """A JSON value as JavaScript's ``String(value)`` writes it (what a RegExp matcher is tested against)."""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) or (isinstance(value, int) and abs(value) >= 10**21):
        return _js_number(float(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def _js_number(x: float) -> str:
    """JavaScript's Number-to-String: the shortest digits that read back as ``x`` (Python's ``repr`` finds the
    same), written out from 1e-6 up to 1e21, else with an exponent (``1e+21``, ``1e-7``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    from decimal import Decimal

    _, shown, exponent = Decimal(repr(abs(x))).as_tuple()
    assert isinstance(exponent, int)  # a finite number
    every = "".join(map(str, shown))
    digits = every.rstrip("0")
    point = len(every) + exponent  # x is 0.<digits> times 10 ** point
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        e = point - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return ("-" if x < 0 else "") + text
