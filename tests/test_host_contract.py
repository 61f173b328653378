"""The engine's contract every host keeps (agent_cards.host_contract): matchers, process.run's checks and words.

Both hosts of the mod use it: the bridge in the real engine and the simulator's fake Claude Code. The
cases marked "used to disagree" are where the two once had copies of their own that answered differently.
"""

from __future__ import annotations

import errno
import re

import pytest

from agent_cards.engine import ProcessError
from agent_cards.host_contract import (
    OUTPUT_CAP,
    capped,
    capped_bytes,
    exit_code,
    failed_to_start,
    host_check,
    interrupted,
    js_string,
    matches,
    not_found,
    timed_out,
)
from agent_cards_simulator.host import registry

# --- matchers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "value", "expected"),
    [
        (5, 5, True),
        (5, "5", False),
        ("5", 5, False),
        (True, 1, False),
        (1, True, False),
        (True, True, True),
        (None, None, True),
        (5, 5.0, True),  # one number in JavaScript (used to disagree: the bridge compared types)
        (5.0, 5, True),
        (float("nan"), float("nan"), False),  # nothing === NaN
        ("Agent", "Agent", True),
        ("Agent", "agent", False),
        ({"a": 1}, {"a": 1}, True),
        ([1], [1], False),  # an array matcher is "one of", and [1] is none of 1
        (re.compile(r"^Rx"), "RxFoo", True),
        (re.compile(r"^Rx"), "aRx", False),
        (re.compile(r"^12"), 123, True),  # against the value as text
        (re.compile(r"^5$"), 5.0, True),  # String(5.0) is "5" (used to disagree: "5.0" in both copies)
        (re.compile(r"^1,2$"), [1, 2], True),  # String([1, 2]) (used to disagree: "[1, 2]")
        (re.compile(r"^\[object Object\]$"), {"a": 1}, True),  # (used to disagree: the dict's JSON or repr)
        (re.compile(r"^true$"), True, True),
        (re.compile(r"^null$"), None, True),
        (["One", "Two"], "One", True),
        (["One", "Two"], "Two", True),
        (["One", "Two"], "Three", False),
        (("One", "Two"), "Two", True),  # a tuple is an array too (used to disagree: the bridge compared it whole)
        ([re.compile("^A"), 5], 5, True),
        ([5], 5.0, True),
        ({"a": 1}, {"a": 1, "b": 2}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, "a", False),
        ({"a": {"b": [1, 2]}}, {"a": {"b": 2, "c": 0}}, True),
        ({"n": 5}, {"n": 5.0}, True),  # the brief's own case (used to disagree)
        ({}, {"anything": 1}, True),
    ],
)
def test_matchers(matcher: object, value: object, expected: bool) -> None:
    assert matches(matcher, value) is expected
    assert matches({"key": matcher}, {"key": value, "other": 0}) is expected


def test_a_matcher_on_a_missing_key_does_not_match() -> None:
    assert not matches({"opt": {"a": 1}}, {"tool": "Agent"})
    assert not matches({"opt": re.compile("")}, {"tool": "Agent"})  # even a regex that matches any text
    assert not matches({"opt": None}, {"tool": "Agent"})


def test_the_fake_host_picks_hooks_by_it() -> None:
    async def hook(host: object, e: object, next: object) -> None:
        return None

    hooks = registry.Registry()
    hooks.on_for("p")("tool.call", {"n": 5, "tool": ("Agent", "Task")}, hook)
    assert len(hooks.chain("tool.call", {"n": 5.0, "tool": "Task"})) == 1  # (used to disagree with the bridge)
    assert hooks.chain("tool.call", {"n": "5", "tool": "Task"}) == []


@pytest.mark.parametrize(
    ("value", "written"),
    [  # what node's String(value) wrote for each
        (5.0, "5"), (0.1, "0.1"), (-0.5, "-0.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
        (1e-7, "1e-7"), (1e-6, "0.000001"), (1.5e16, "15000000000000000"), (0.000123, "0.000123"),
        (2.5e-300, "2.5e-300"), (1.7976931348623157e308, "1.7976931348623157e+308"), (5e-324, "5e-324"),
        (12345.678, "12345.678"), (-0.0, "0"), (10**22, "1e+22"), (7, "7"), (float("inf"), "Infinity"),
        ([1, 2.0, None, "a", [3, 4]], "1,2,,a,3,4"), ({"a": 1}, "[object Object]"), (False, "false"),
        (None, "null"), ("text", "text"),
    ],
)
def test_a_value_as_text_is_what_javascript_writes(value: object, written: str) -> None:
    assert js_string(value) == written


# --- process.run: the host checks -----------------------------------------------------------------------

ARGV_REFUSED = "process.run: takes argv, a non-empty list of strings naming the command first (host check)"
TIMEOUT_REFUSED = "process.run: init.timeoutMs is a whole number of ms, 1 to 600000 (host check)"


@pytest.mark.parametrize(
    ("argv", "timeout_ms", "message"),
    [
        ("lich", 1000, ARGV_REFUSED),  # a string (used to disagree: the bridge ran its letters as argv)
        ([], 1000, ARGV_REFUSED),
        ([""], 1000, ARGV_REFUSED),
        (["lich", 3], 1000, ARGV_REFUSED),
        (["lich"], 0, TIMEOUT_REFUSED),
        (["lich"], 600_001, TIMEOUT_REFUSED),
        (["lich"], 1.5, TIMEOUT_REFUSED),
        (["lich"], True, TIMEOUT_REFUSED),
    ],
)
def test_the_host_checks_refuse_in_the_engines_words(argv: object, timeout_ms: object, message: str) -> None:
    with pytest.raises(ProcessError) as refused:
        host_check(argv, timeout_ms)
    assert (refused.value.kind, str(refused.value)) == ("host", message)


@pytest.mark.parametrize(("argv", "timeout_ms"), [(["lich"], 1), (("git", "status"), 600_000)])
def test_the_host_checks_pass_what_the_engine_runs(argv: object, timeout_ms: object) -> None:
    host_check(argv, timeout_ms)


# --- process.run: its rejections and results ------------------------------------------------------------


def test_the_rejections_are_worded_as_the_engines() -> None:
    assert str(timed_out(["/usr/bin/lich", "open"], 120_000)) == (
        "$.process.run(lich) aborted: still running after 120000ms"
    )
    assert timed_out(["lich"], 1).kind == "timeout"
    assert str(interrupted(["lich"])) == "$.process.run(lich) aborted: the call it ran for was interrupted"
    assert interrupted(["lich"]).kind == "aborted"
    missing = not_found(["no-such-binary-xyz"])
    assert (missing.kind, str(missing)) == (
        "start",
        "$.process.run(no-such-binary-xyz) failed to start: "
        'ENOENT: Executable not found in $PATH: "no-such-binary-xyz"',
    )


def test_a_failed_start_names_the_errno_and_its_text() -> None:
    assert str(failed_to_start(["x"], OSError(errno.ENOENT, "No such file or directory"))) == str(not_found(["x"]))
    assert str(failed_to_start(["/x"], PermissionError(errno.EACCES, "Permission denied"))) == (
        "$.process.run(/x) failed to start: EACCES: Permission denied"
    )
    assert str(failed_to_start(["git"], "git refused the branch")) == (
        "$.process.run(git) failed to start: git refused the branch"
    )


def test_a_child_killed_by_a_signal_exits_1() -> None:
    assert [exit_code(code) for code in (0, 3, -9, None)] == [0, 3, 1, 1]


def test_each_stream_keeps_its_first_4_mib() -> None:
    big = "a" * (OUTPUT_CAP + 10)
    result = capped(big, "short", 0)
    assert (len(result.stdout), result.stdout_truncated) == (OUTPUT_CAP, True)
    assert (result.stderr, result.stderr_truncated) == ("short", False)
    assert capped("out", "err", 2) == capped_bytes(b"out", b"err", 2)


def test_a_character_cut_at_the_cap_reads_as_a_replacement() -> None:
    """(used to disagree: the fake host dropped the cut character, the bridge replaced it)"""
    cut = "a" * (OUTPUT_CAP - 1) + "é"  # its two bytes straddle the cap
    assert capped(cut, "", 0).stdout == "a" * (OUTPUT_CAP - 1) + "\ufffd"
    assert capped(cut, "", 0) == capped_bytes(cut.encode(), b"", 0)
