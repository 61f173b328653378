"""``agent-cards report`` one form at a time, on journals written by hand: each way a journal line is
refused (its exact ``FILE:LINE: why``), where journals are looked for and which one a session names, how
the records become dispatches and the transcript, and each part of the scenario written from them (the
session, lich's script, the steps with their waits and Esc, the expectations, the clauses)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_cards.record import plain, replace
from agent_cards_conformance import report
from agent_cards_simulator.host.results import launched
from agent_cards_simulator.runners.scripted_git import GIT_MS

LICH = "/opt/lich/bin/lich"
ORIGIN = {"plugin": "engine", "tier": "core"}
START: dict[str, Any] = {"k": "start", "t": 0, "v": 1, "env": {"LICH_BIN": LICH, "LICH_SESSION_ID": "3c4d"}}


def write(folder: Path, *lines: Any, name: str = "j.jsonl") -> Path:
    """A journal file of ``lines``: each a record (made JSON) or the bytes of a line as they are."""
    path = folder / name
    path.write_bytes(b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n"
                              for line in lines))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(report.JournalProblem) as caught:
        report.read_journal(path)
    return str(caught.value)


def nested(kind: str, levels: int) -> Any:
    """A value ``levels`` containers deep (an empty one innermost)."""
    value: Any = [] if kind == "list" else {}
    for _ in range(levels - 1):
        value = [value] if kind == "list" else {"a": value}
    return value


# -- reading, bounded ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "why"), [
    (b"\xff\xfe", "2: not UTF-8"),
    (b"{", "2: not a JSON line (Expecting property name enclosed in double quotes)"),
    (b"[" * 100_000, "2: nested deeper than 32"),
    ({"k": "toast", "t": 1, "x": nested("list", 32)}, "2: nested deeper than 32"),
    ({"k": "toast", "t": 1, "x": nested("dict", 32)}, "2: nested deeper than 32"),
    ([1], "2: not a journal record (an object with a kind k and a time t)"),
    ({"t": 1}, "2: not a journal record (an object with a kind k and a time t)"),
    ({"k": 5, "t": 1}, "2: not a journal record (an object with a kind k and a time t)"),
    ({"k": "toast"}, "2: not a journal record (an object with a kind k and a time t)"),
    ({"k": "toast", "t": "1"}, "2: not a journal record (an object with a kind k and a time t)"),
    ({"k": "toast", "t": True}, "2: not a journal record (an object with a kind k and a time t)"),
    ({"k": "run", "t": 1}, "2: a run whose argv is not a list of texts"),
    ({"k": "run", "t": 1, "argv": []}, "2: a run whose argv is not a list of texts"),
    ({"k": "run", "t": 1, "argv": "git status"}, "2: a run whose argv is not a list of texts"),
    ({"k": "run", "t": 1, "argv": ["git", 5]}, "2: a run whose argv is not a list of texts"),
    ({"k": "run", "t": 1, "argv": ["git"], "ms": -1}, "2: a run whose ms is not a whole number of milliseconds"),
    ({"k": "run", "t": 1, "argv": ["git"], "ms": 1.5}, "2: a run whose ms is not a whole number of milliseconds"),
    ({"k": "run", "t": 1, "argv": ["git"], "ms": True}, "2: a run whose ms is not a whole number of milliseconds"),
    ({"k": "collect", "t": 1, "ms": "9"}, "2: a run whose ms is not a whole number of milliseconds"),
], ids=["utf8", "json", "deep-json", "deep-list", "deep-dict", "no-object", "no-k", "k-no-text", "no-t", "t-text",
        "t-bool", "no-argv", "argv-empty", "argv-text", "argv-number", "ms-negative", "ms-fraction", "ms-bool",
        "collect-ms"])
def test_a_line_that_is_no_journal_record_is_refused_with_its_number(tmp_path: Path, line: Any, why: str) -> None:
    assert refusal(write(tmp_path, START, line)) == f"{tmp_path / 'j.jsonl'}:{why}"


@pytest.mark.parametrize("line", [
    {"k": "toast", "t": 1, "x": nested("list", 31)},
    {"k": "toast", "t": 1, "x": nested("dict", 31)},
    {"k": "toast", "t": 1, "argv": 5, "ms": "x"},  # only a run's argv and a run's or collect's ms are read
    {"k": "run", "t": 1, "argv": ["git"], "ms": 0},
    {"k": "run", "t": 1, "argv": ["git"], "ms": None},
    {"k": "collect", "t": 1, "ms": 7},
    {"k": "start", "t": 1, "v": 2},  # a later start record (a part cut) is no first record
    b'{"k": "toast", "t": 1, "text": "\xed\xa0\x80"}',  # a lone surrogate, as Python's json writes one
], ids=["list-32", "dict-32", "other-kinds", "ms-0", "ms-none", "collect", "later-start", "surrogate"])
def test_a_line_within_the_bounds_is_read_as_it_is(tmp_path: Path, line: Any) -> None:
    records = report.read_journal(write(tmp_path, START, b"", b"  ", line))
    assert records == [START, json.loads(line.decode("utf-8", "surrogatepass") if isinstance(line, bytes)
                                         else json.dumps(line))]


@pytest.mark.parametrize(("first", "line"), [
    ({"k": "event", "t": 0}, 1),
    ({"k": "start", "t": 0}, 1),
    ({"k": "start", "t": 0, "v": 2}, 1),
])
def test_a_journal_whose_first_record_is_no_start_of_version_1_is_refused(tmp_path: Path, first: dict[str, Any],
                                                                          line: int) -> None:
    path = write(tmp_path, first, START)
    assert refusal(path) == (f"{path}:{line}: not a journal of this version (its first record is not a start record "
                             "of version 1)")


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    path = write(tmp_path, b"", START, b" \t", b"{")
    assert refusal(path) == f"{path}:4: not a JSON line (Expecting property name enclosed in double quotes)"


@pytest.mark.parametrize("data", [b"", b"\n \n"])
def test_a_journal_of_no_record_is_empty(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(data)
    assert refusal(path) == f"{path}:1: an empty journal"


def test_a_journal_that_cannot_be_opened_is_line_1(tmp_path: Path) -> None:
    assert refusal(tmp_path / "gone.jsonl") == f"{tmp_path / 'gone.jsonl'}:1: cannot read the file: No such file or " \
                                               "directory"


def test_the_limit_of_a_journal_is_16_mib(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)
    assert refusal(path) == f"{path}:1: the file is 16777217 bytes, over the limit of 16777216"


@pytest.mark.parametrize(("value", "ok"), [
    (nested("list", 32), True), (nested("list", 33), False), (nested("dict", 32), True), (nested("dict", 33), False),
    ([[0]] * 3, True), ({"a": [{"b": 1}]}, True), (5, True),
])
def test_depth_is_counted_from_the_value_itself(value: Any, ok: bool) -> None:
    assert report._depth_ok(value) is ok


# -- where journals are, and which one a session names ------------------------------------------------


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp folder, made this test's own."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return folder


def own(root: Path) -> Path:
    return root / f"agent-cards-journals-{os.getuid()}"


def test_journals_are_looked_for_in_each_place_in_order_once(tmp_path: Path, temp: Path) -> None:
    config = tmp_path / "conf[1]"  # a folder name glob would read as a pattern
    for plugin in ("zeta", "alpha"):
        (config / "plugins" / "data" / plugin / "journals").mkdir(parents=True)
    (config / "plugins" / "data" / "beta").mkdir()  # a plugin that keeps no journals
    runtime = tmp_path / "run"
    runtime.mkdir()
    environ = {"AGENT_CARDS_JOURNAL_DIR": str(tmp_path / "chosen"), "CLAUDE_CONFIG_DIR": str(config),
               "XDG_RUNTIME_DIR": str(runtime)}
    assert report.journal_folders(environ) == [
        tmp_path / "chosen", config / "plugins/data/alpha/journals", config / "plugins/data/zeta/journals",
        own(runtime), own(temp)]


def test_without_settings_the_folders_are_the_home_s_and_the_temp_folder_once(
        tmp_path: Path, temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".claude/plugins/data/p/journals").mkdir(parents=True)
    for name in ("AGENT_CARDS_JOURNAL_DIR", "CLAUDE_PLUGIN_DATA", "CLAUDE_CONFIG_DIR", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    expected = [own(temp), tmp_path / ".claude/plugins/data/p/journals"]
    assert report.journal_folders() == expected
    assert report.journal_folders({"XDG_RUNTIME_DIR": ""}) == expected
    assert report.journal_folders({"CLAUDE_CONFIG_DIR": ""}) == expected


def journal(folder: Path, name: str, session: str | None = None, mtime: int = 1_700_000_000) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = write(folder, {**START, "session": session}, name=name)
    os.utime(path, (mtime, mtime))
    return path


def find(session: str | None, tmp_path: Path) -> Path:
    return report.find_journal(session, {"AGENT_CARDS_JOURNAL_DIR": str(tmp_path / "a"),
                                         "CLAUDE_CONFIG_DIR": str(tmp_path / "conf"),
                                         "XDG_RUNTIME_DIR": str(tmp_path / "b")})


def test_the_newest_journal_is_the_latest_name_then_the_latest_change(tmp_path: Path, temp: Path) -> None:
    journal(tmp_path / "a", "20260101T000000Z-1.jsonl", mtime=1_800_000_000)
    journal(tmp_path / "a", "20260102T000000Z-1.jsonl", mtime=1_700_000_000)
    journal(tmp_path / "a", "20260103T000000Z-1.jsonl.1")  # an older part is no journal to pick
    older = journal(own(tmp_path / "b"), "20260102T000000Z-1.jsonl", mtime=1_600_000_000)
    assert find(None, tmp_path) == tmp_path / "a/20260102T000000Z-1.jsonl"
    os.utime(older, (1_750_000_000, 1_750_000_000))
    assert find(None, tmp_path) == older


def test_no_journal_anywhere_is_a_problem(tmp_path: Path, temp: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a/notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(report.JournalProblem) as caught:
        find(None, tmp_path)
    assert str(caught.value) == ("agent-cards report: no journal found (the session host keeps one inside lich, "
                                 "unless AGENT_CARDS_JOURNAL=off)")


def test_a_session_is_a_path_a_journal_s_name_or_a_session_id(tmp_path: Path, temp: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    named = journal(tmp_path / "a", "20260101T000000Z-1.jsonl", session="s-old")
    mine = journal(own(tmp_path / "b"), "20260102T000000Z-2.jsonl", session="s-1")
    journal(own(tmp_path / "b"), "20260102T000000Z-1.jsonl", session="s-1")  # an earlier part of the same session
    assert find(str(tmp_path / "nowhere.jsonl"), tmp_path) == tmp_path / "nowhere.jsonl"  # a path, as it is
    assert find("20260101T000000Z-1.jsonl", tmp_path) == named
    assert find("20260101T000000Z-1", tmp_path) == named
    assert find("s-1", tmp_path) == mine
    assert find("s-old", tmp_path) == named
    monkeypatch.chdir(tmp_path / "a")
    assert find("20260101T000000Z-1.jsonl", tmp_path) == Path("20260101T000000Z-1.jsonl")  # a file here, by name


def test_a_session_id_skips_journals_whose_first_line_is_no_start(tmp_path: Path, temp: Path) -> None:
    folder = tmp_path / "a"
    mine = journal(folder, "20260101T000000Z-1.jsonl", session="s-1")
    (folder / "20260109T000000Z-1.jsonl").mkdir()  # no file at all
    (folder / "20260108T000000Z-1.jsonl").write_bytes(b"{\n")
    (folder / "20260107T000000Z-1.jsonl").write_bytes(b"[" * 100_000 + b"\n")
    (folder / "20260106T000000Z-1.jsonl").write_bytes(b'["s-1"]\n')
    (folder / "20260105T000000Z-1.jsonl").write_bytes(b"")
    (folder / "20260104T000000Z-1.jsonl").write_bytes(json.dumps({**START, "session": "s-1", "pad": "x" * 70_000})
                                                      .encode() + b"\n")  # a first line past 64 KiB is not read
    assert find("s-1", tmp_path) == mine


def test_a_session_no_journal_names_is_a_problem(tmp_path: Path, temp: Path) -> None:
    journal(tmp_path / "a", "20260101T000000Z-1.jsonl", session="s-1")
    with pytest.raises(report.JournalProblem) as caught:
        find("s-2", tmp_path)
    assert str(caught.value) == "agent-cards report: no journal of the session 's-2'"


# -- the journal read as dispatches, and their events ---------------------------------------------------


def event(t: int, d: str, e: dict[str, Any], kind: str = "tool.call", **more: Any) -> dict[str, Any]:
    return {"k": "event", "t": t, "d": d, "hook": 1, "event": kind, "origin": ORIGIN, "e": e, **more}


def dispatch(**fields: Any) -> report._JournalDispatch:
    given = {"id": "1", "event": "tool.call", "t": 10, "e": {"tool": "Agent", "tool_use_id": "toolu_1"},
             "origin": {}, **fields}
    d = report._JournalDispatch(given.pop("id"), given.pop("event"), given.pop("t"), given.pop("e"),
                                given.pop("origin"))
    for name, value in given.items():
        setattr(d, name, value)
    return d


def test_each_record_of_a_dispatch_is_kept_on_it() -> None:
    e = {"tool": "Agent", "tool_use_id": "toolu_1"}
    run = {"k": "run", "t": 4, "d": "1", "argv": ["git", "status"]}
    records = [START, event(1, "1", e), {"k": "next", "t": 2, "d": "1"},
               {"k": "beneath", "t": 3, "d": "1", "value": {"result": "x"}, "error": "boom"}, run,
               {"k": "answer", "t": 5, "d": "1", "value": {"deny": "no"}},
               {"k": "event", "t": 6, "d": 7, "event": "agent.spawn", "e": {"tool_use_id": "toolu_1"}, "origin": 3},
               {"k": "answer", "t": 8, "d": "7", "value": 1, "error": "gave up"},
               {"k": "event", "t": 9, "d": "8", "event": "tool.call", "e": "no object"},
               {"k": "next", "t": 9, "d": "8"}, {"k": "run", "t": 9, "d": "nobody", "argv": ["git"]}]
    found = report._dispatches(records)
    assert list(found) == ["1", "7"]
    assert plain(found["1"]) == {
        "id": "1", "event": "tool.call", "t": 1, "e": e, "origin": ORIGIN, "passed": True, "beneath": {"result": "x"},
        "beneath_error": "boom", "answer": {"deny": "no"}, "answered": True, "answer_t": 5, "cancelled_t": None,
        "runs": [run]}
    assert plain(found["7"]) == {
        "id": "7", "event": "agent.spawn", "t": 6, "e": {"tool_use_id": "toolu_1"}, "origin": {}, "passed": False,
        "beneath": None, "beneath_error": None, "answer": 1, "answered": False, "answer_t": 8, "cancelled_t": None,
        "runs": []}
    assert found["1"].e is not e  # a copy: the scenario's edits leave the records as read


def test_a_cancel_marks_the_dispatches_not_yet_answered_once() -> None:
    records = [START, *(event(1, d, {"tool_use_id": f"toolu_{d}"}) for d in ("1", "2", "3")),
               {"k": "answer", "t": 2, "d": "3", "value": {}},
               {"k": "cancel", "t": 4, "ids": [1, "3", "9"]}, {"k": "cancel", "t": 6, "ids": ["1", "2"]},
               {"k": "cancel", "t": 7, "ids": None}, {"k": "cancel", "t": 8}]
    found = report._dispatches(records)
    assert [(d.id, d.cancelled_t) for d in found.values()] == [("1", 4), ("2", 6), ("3", None)]


def test_a_run_is_an_event_with_every_field_the_comparator_reads() -> None:
    assert report._run_event({"t": 3, "k": "run"}) == {
        "t": 3, "kind": "run", "argv": [], "timeout_ms": None, "exit": None, "stdout": "", "stderr": "", "error": None,
        "ms": None}
    given = {"t": 3, "argv": ["git", "x"], "timeout_ms": 30000, "exit": 1, "stdout": "o", "stderr": "e",
             "error": "spawn failed", "ms": 12}
    assert report._run_event({**given, "k": "run", "d": "4"}) == {**given, "kind": "run"}


@pytest.mark.parametrize(("fields", "mine"), [
    ({}, False),
    ({"answered": True, "answer": {"deny": "x"}}, True),
    ({"answered": True, "passed": True, "answer": {"result": 1}, "beneath": {"result": 1}}, False),
    ({"answered": True, "passed": True, "answer": {"result": 1}, "beneath": {"result": 2}}, True),
    ({"answered": True, "passed": False, "answer": {"result": 1}, "beneath": {"result": 1}}, True),
])
def test_the_mod_s_own_answer_is_one_it_did_not_pass_on(fields: dict[str, Any], mine: bool) -> None:
    assert report._mods_answer(dispatch(**fields)) is mine


@pytest.mark.parametrize(("answer", "t", "event"), [
    ({"deny": "no", "result": "x", "context": ["c", 2]}, 30, {"deny": "no", "context": ["c", "2"]}),
    ({"isError": True, "result": "boom"}, 30, {"error": "boom", "context": []}),
    ({"isError": True, "result": {"x": 1}}, 30, {"result": {"x": 1}, "context": []}),
    ({"isError": False, "result": "fine", "context": "one"}, 30, {"result": "fine", "context": []}),
    ({"text": "whole"}, 30, {"result": {"text": "whole"}, "context": []}),
    ({"result": {"agentId": "a1", "status": "async_launched"}}, 0, {"result": launched("a1"), "context": []}),
], ids=["deny", "error", "error-no-text", "result", "whole-value", "launched-at-0"])
def test_an_answer_is_the_event_the_replay_gives(answer: dict[str, Any], t: int, event: dict[str, Any]) -> None:
    d = dispatch(answer=answer, answered=True, answer_t=t)
    assert report._answer_event(d) == {"t": t or 10, "kind": "answer", "call": "toolu_1", **event}


@pytest.mark.parametrize("fields", [{"answer": {"deny": "x"}}, {"answered": True, "answer": "text"}])
def test_no_answer_event_for_an_error_or_an_answer_of_no_object(fields: dict[str, Any]) -> None:
    assert report._answer_event(dispatch(**fields)) is None


@pytest.mark.parametrize(("result", "read"), [
    ("text", "text"),
    ({"agentId": 5, "status": "completed"}, {"agentId": 5, "status": "completed"}),
    ({"agentId": "a1", "status": "async_launched"}, launched("a1")),
    ({"agentId": "a1", "status": "completed", "content": [{"type": "text", "text": "one"}, "odd", {"type": "image"},
                                                        {"text": 2}]}, "one\n\n2\nagentId: a1"),
    ({"agentId": "a1", "status": "completed", "content": "no list"}, "\nagentId: a1"),
    ({"agentId": "a1", "status": "killed"}, {"agentId": "a1", "status": "killed"}),
])
def test_an_agent_s_result_is_read_as_the_model_reads_it(result: Any, read: Any) -> None:
    assert report._as_read(result) == read


@pytest.mark.parametrize(("answer_t", "cancelled_t", "ended"), [
    (None, None, 10), (40, None, 40), (None, 5, 5), (40, 20, 20), (40, 60, 40), (0, None, 0),
])
def test_a_call_s_step_ends_at_its_answer_or_sooner_at_esc(answer_t: int | None, cancelled_t: int | None,
                                                          ended: int) -> None:
    assert report._ended(dispatch(answer_t=answer_t, cancelled_t=cancelled_t)) == ended


@pytest.mark.parametrize(("record", "end"), [
    ({"k": "run", "t": 5, "ms": 7}, 12), ({"k": "collect", "t": 5, "ms": 7}, 12), ({"k": "run", "t": 5}, 5),
    ({"k": "run", "t": 5, "ms": None}, 5), ({"k": "toast", "t": 5, "ms": 7}, 5),
])
def test_a_record_s_work_ends_after_its_length(record: dict[str, Any], end: int) -> None:
    assert report._record_end(record) == end


def opened(t: int, ms: int) -> dict[str, Any]:
    return {"k": "run", "t": t, "ms": ms, "argv": [LICH, "open"]}


@pytest.mark.parametrize(("opens", "cancel", "begun", "after"), [
    ([], 30, 10, 20),
    ([], 5, 10, 0),
    ([(opened(100, 50), 0)], 99, 90, 9),  # before the open began: as far after the step began
    ([(opened(100, 50), 0)], 150, 90, 60),  # as the open ended: the open is no longer running
    ([(opened(100, 50), 7)], 100, 90, 8),  # at the open's start: just after it starts in the replay
    ([(opened(100, 50), 7)], 120, 90, 27),  # 20 ms into it
    ([(opened(100, 50), 7)], 149, 90, 56),  # a millisecond before its end
    ([(opened(100, 50), 7), (opened(110, 20), 0)], 115, 90, 19),  # before the end of one that began sooner there
    ([(opened(100, 50), 30), (opened(110, 20), 0)], 112, 90, 31),  # and still after the open's own start
    ([(opened(100, 50), 7), (opened(110, 20), 30)], 115, 90, 22),  # two running: the first to start, the first end
    ([(opened(110, 20), 30), (opened(100, 50), 7)], 125, 90, 32),
    ([(opened(100, 5), 3), (opened(100, 40), 9)], 110, 90, 19),  # only the open still running counts
], ids=["no-open", "before-the-step", "before-the-open", "at-its-end", "at-its-start", "into-it", "near-its-end",
        "other-ends-first", "other-ends-before-it-starts", "two", "two-other-order", "one-ended"])
def test_esc_lands_as_far_into_the_opens_as_it_came(opens: list[tuple[dict[str, Any], int]], cancel: int,
                                                    begun: int, after: int) -> None:
    assert report._esc_after(opens, cancel, begun) == after


@pytest.mark.parametrize(("argv", "lich", "command", "matches"), [
    ([LICH, "open"], LICH, "open", True), ([LICH, "open", "x"], LICH, "open", True), ([LICH], LICH, "open", False),
    (["lich", "open"], LICH, "open", False), ([LICH, "close"], LICH, "open", False), (None, None, "open", False),
    ([None, "open"], None, "open", True),
])
def test_a_run_is_a_lich_command_by_its_first_two_words(argv: list[Any] | None, lich: str | None, command: str,
                                                        matches: bool) -> None:
    assert report._is({"argv": argv}, lich, command) is matches


# -- lich's scripts, the permission, the clauses and the call steps --------------------------------------

PRINTED = {"id": "9f81", "label": "Session 2", "name": "session-2-9f81",
           "delivery": {"ticket": "a1b2c301", "status": "pending"}}


@pytest.mark.parametrize(("run", "script"), [
    ({"ms": 800, "exit": 0, "stdout": json.dumps(PRINTED), "stderr": "w"},
     {"ms": 800, "stdout": json.dumps(PRINTED), "stderr": "w", "exit": 0, "name": "session-2-9f81",
      "label": "Session 2", "delivery": "pending"}),
    ({"why": "timeout", "ms": 800, "exit": None, "stdout": json.dumps(PRINTED)},
     {"hang": True, "name": "session-2-9f81", "label": "Session 2", "delivery": "pending"}),
    ({"exit": None, "stdout": None, "stderr": None, "error": "ENOENT"}, {"ms": 0, "stdout": "", "stderr": ""}),
    ({"exit": 2, "ms": 5, "stdout": "lich: no such project\n", "stderr": ""},
     {"ms": 5, "stdout": "lich: no such project\n", "stderr": "", "exit": 2}),
    ({"exit": 0, "stdout": '{"name": "", "label": 7, "delivery": {"status": 1}}'},
     {"ms": 0, "stdout": '{"name": "", "label": 7, "delivery": {"status": 1}}', "stderr": "", "exit": 0,
      "delivery": None}),
    ({"exit": 0, "stdout": '{"delivery": "pending"}'},
     {"ms": 0, "stdout": '{"delivery": "pending"}', "stderr": "", "exit": 0, "delivery": None}),
    ({"exit": 0, "stdout": "[" * 100_000}, {"ms": 0, "stdout": "[" * 100_000, "stderr": "", "exit": 0}),
    ({"exit": 0, "stdout": '["session-2"]'}, {"ms": 0, "stdout": '["session-2"]', "stderr": "", "exit": 0}),
], ids=["printed", "timeout", "failed-to-run", "refused", "odd-fields", "odd-delivery", "deep", "no-object"])
def test_an_open_is_scripted_as_it_ran_and_printed(run: dict[str, Any], script: dict[str, Any]) -> None:
    assert report._open_script({"k": "run", "t": 1, "argv": [LICH, "open"], **run}) == script


@pytest.mark.parametrize(("beneath", "permission"), [
    ({"result": "The user doesn't want to proceed with this tool use."}, {"ask": "no"}),
    ({"error": "PreToolUse:Agent hook error: blocked by policy"}, {"hook-deny": "blocked by policy"}),
    ({"deny": "Permission to use Agent has been denied."}, {"deny": "Permission to use Agent has been denied."}),
    ({"result": "", "error": "", "deny": "later"}, {"deny": "later"}),
    ({"result": "first", "deny": "later"}, {"deny": "first"}),
    ({"result": "say PreToolUse:Agent hook error: x"}, {"deny": "say PreToolUse:Agent hook error: x"}),
    ({}, "deny"),
    ("refused", "deny"),
])
def test_a_refused_call_s_permission_is_what_came_back_from_beneath(beneath: Any, permission: Any) -> None:
    assert report._permission(dispatch(beneath=beneath)) == permission


def call(n: int, tool: str = "Agent", **fields: Any) -> report._JournalDispatch:
    return dispatch(id=str(n), t=10 * n, e={"tool": tool, "tool_use_id": f"toolu_{n}"}, **fields)


def mine(value: Any, **fields: Any) -> dict[str, Any]:
    return {"answer": value, "answered": True, **fields}


@pytest.mark.parametrize(("d", "touched", "clause"), [
    (call(1, "TaskStop"), set(), ["STOP-OTHER"]),
    (call(1, "TaskStop", **mine({"deny": "no"})), set(), ["STOP-REFUSED"]),
    (call(1, "TaskStop", **mine({"result": {"task_id": "a"}})), set(), ["STOP-TAKEN"]),
    (call(1, **mine({"result": {"status": "async_launched"}})), set(), ["DELIV-PENDING"]),
    (call(1, **mine({"result": {"status": "completed"}})), set(), ["DELIV-ANSWERED"]),
    (call(1, **mine({"deny": "no"})), set(), ["DELIV-NEVER"]),
    (call(1, **mine({"deny": "no"}, cancelled_t=5)), set(), ["FALL-ESC-OPEN"]),
    (call(1, **mine({"result": "status: completed"})), set(), ["TAKE-UNTOUCHED"]),
    (call(1, **mine({"result": {"status": "killed"}})), set(), ["TAKE-UNTOUCHED"]),
    (call(1, **mine({"result": {"status": "killed"}})), {"toolu_1"}, []),
    (call(1, **mine({"result": {"status": "async_launched"}}, passed=True)), {"toolu_1"}, ["DELIV-PENDING"]),
    (call(1, passed=True), {"toolu_1"}, []),
    (call(1, passed=True), set(), ["TAKE-UNTOUCHED"]),
    (call(1, passed=True, **mine({"r": 1}, beneath={"r": 1})), set(), ["TAKE-UNTOUCHED"]),
    (call(1, passed=True, **mine({"r": 1}, beneath={"r": 1})), {"toolu_1"}, []),
    (call(1, passed=True, **mine({"r": 1}, beneath={"r": 2})), set(), []),
    (call(1, passed=True, answered=True, answer="text"), set(), []),
    (call(1, passed=True, **mine({"result": {"status": "completed"}}, beneath={"result": {"status": "completed"}})),
     set(), ["TAKE-UNTOUCHED"]),
    (call(1, passed=True, **mine({"deny": "no"}, beneath={"deny": "no"})), set(), ["TAKE-UNTOUCHED"]),
], ids=["stop-other", "stop-refused", "stop-taken", "pending", "answered", "never", "esc", "result-text",
        "other-status", "other-status-touched", "pending-touched", "passed-touched", "passed", "passed-on",
        "passed-on-touched", "changed", "no-object", "passed-completed", "passed-deny"])
def test_a_call_s_clause_is_what_became_of_it(d: report._JournalDispatch, touched: set[str],
                                              clause: list[str]) -> None:
    """(A toast's clause after it, so that a call of no clause of its own shows as none.)"""
    assert report._clauses([d], ["lich failed"], False, False, touched) == [*clause, "FALL-OPEN-FAILED"]


def test_toasts_parallel_steps_and_esc_add_their_clauses_once_in_order() -> None:
    calls = [call(1, **mine({"result": {"status": "async_launched"}})), call(2, **mine({"deny": "no"})),
             call(3, **mine({"result": {"status": "async_launched"}}))]
    toasts = ["Agent ran natively: its task is 8194 bytes, over lich's 8192-byte limit.", "lich open failed",
              "over 8192 again"]
    assert report._clauses(calls, toasts, True, True, set()) == [
        "DELIV-PENDING", "DELIV-NEVER", "FALL-OVERSIZE", "FALL-OPEN-FAILED", "BG-PARALLEL", "FALL-ESC-OPEN"]
    assert report._clauses([], [], True, False, set()) == ["BG-PARALLEL"]
    assert report._clauses([], [], False, True, set()) == ["FALL-ESC-OPEN"]
    assert report._clauses([], [], False, False, set()) == ["TAKE-UNTOUCHED"]


def step_of(d: report._JournalDispatch, opens: dict[str, dict[str, Any]] | None = None, by_order: bool = False,
            spawns: dict[str, report._JournalDispatch] | None = None,
            agent_ids: dict[str, str] | None = None) -> dict[str, Any]:
    return report._call_step(d, opens or {}, by_order, spawns or {}, agent_ids or {})


def stop(e: dict[str, Any], **fields: Any) -> report._JournalDispatch:
    return dispatch(e={"tool": "TaskStop", "tool_use_id": "toolu_2", **e}, **fields)


@pytest.mark.parametrize(("d", "step"), [
    (stop({"task_id": "session-2"}), {"taskstop": "session-2", "id": "toolu_2"}),
    (stop({"task_id": "a1"}), {"taskstop": {"worker": "toolu_1"}, "id": "toolu_2"}),
    (stop({"task_id": 5}), {"call": {"task_id": 5}, "tool": "TaskStop", "id": "toolu_2"}),
    (stop({"task_id": "a1", "shell_id": "s"}), {"call": {"task_id": "a1", "shell_id": "s"}, "tool": "TaskStop",
                                                "id": "toolu_2"}),
    (stop({"task_id": "a1", "agentId": "main"}, origin={"plugin": "helper"}),
     {"call": {"task_id": "a1", "agentId": "main"}, "tool": "TaskStop", "id": "toolu_2", "agent": "main",
      "origin": "helper"}),
], ids=["other-task", "a-worker", "no-text", "more-fields", "agent-and-origin"])
def test_a_taskstop_names_the_worker_by_the_call_that_made_it(d: report._JournalDispatch,
                                                              step: dict[str, Any]) -> None:
    assert step_of(d, agent_ids={"a1": "toolu_1"}) == step


AGENT = {"tool": "Agent", "tool_use_id": "toolu_1", "description": "Fix", "prompt": "p"}


@pytest.mark.parametrize(("d", "by_order", "spawned", "step"), [
    (dispatch(e=AGENT), False, True, {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1",
                                      "lich": {"ms": 5}}),
    (dispatch(e=AGENT), True, True, {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1"}),
    (dispatch(e={**AGENT, "agentId": 7}, origin={"plugin": "engine"}), False, True,
     {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1", "lich": {"ms": 5}, "agent": "7"}),
    (dispatch(e=AGENT, passed=True, beneath={"deny": "no"}), False, False,
     {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1", "lich": {"ms": 5}, "permission": {"deny": "no"}}),
    (dispatch(e=AGENT, passed=True), False, True, {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1",
                                                  "lich": {"ms": 5}}),
    (dispatch(e={**AGENT, "tool": "Bash"}, passed=True, origin={"plugin": ""}), False, False,
     {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_1", "tool": "Bash", "lich": {"ms": 5}}),
    (dispatch(e={**AGENT, "tool_use_id": "toolu_9"}, origin={"plugin": 3}), False, False,
     {"call": {"description": "Fix", "prompt": "p"}, "id": "toolu_9"}),
], ids=["scripted", "by-order", "agent-id", "refused", "spawned", "other-tool", "unscripted"])
def test_a_call_step_holds_its_input_and_its_own_open(d: report._JournalDispatch, by_order: bool, spawned: bool,
                                                      step: dict[str, Any]) -> None:
    spawns = {"toolu_1": dispatch(event="agent.spawn")} if spawned else {}
    assert step_of(d, {"toolu_1": {"ms": 5}}, by_order, spawns) == step


# -- the scenario's session, and lich's script -------------------------------------------------------------

BOOT = {"isInteractive": True, "cwd": "/home/dev/app"}


def reported(*records: dict[str, Any], start: dict[str, Any] | None = None) -> report.Reported:
    return report.report_scenario([start or START, *records], "j.jsonl")


def scenario_of(*records: dict[str, Any], start: dict[str, Any] | None = None) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(reported(*records, start=start).yaml)
    return loaded


def git(t: int, *words: str, exit: Any = 0, stdout: Any = "main\n", d: str = "c1", **more: Any) -> dict[str, Any]:
    return {"k": "run", "t": t, "d": d, "argv": ["git", *words], "exit": exit, "stdout": stdout, "stderr": "",
            "error": None, "ms": 3, **more}


def lich(t: int, *words: str, d: str = "s1", exit: Any = 0, ms: int | None = 5, **more: Any) -> dict[str, Any]:
    return {"k": "run", "t": t, "d": d, "argv": [LICH, *words], "exit": exit, "stdout": "", "stderr": "",
            "error": None, "ms": ms, **more}


def test_the_session_has_the_mod_s_variables_in_order_and_the_first_start_s_folder() -> None:
    start = {**START, "env": {"LICH_SESSION_ID": "3c4d", "LICH_BIN": LICH, "LICH_SUBAGENT_CARDS": None}}
    got = reported(event(1, "b0", BOOT, "session.start"), event(2, "b1", {"cwd": "/elsewhere"}, "session.start"),
                   start=start)
    session = yaml.safe_load(got.yaml)["session"]
    assert session == {"env": {"LICH_BIN": LICH, "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_CARDS": None},
                       "cwd": "/home/dev/app"}
    assert list(session["env"]) == ["LICH_BIN", "LICH_SESSION_ID", "LICH_SUBAGENT_CARDS"]
    assert got.notes == []


@pytest.mark.parametrize("cwd", ["app", 5, None])
def test_a_start_s_folder_that_is_no_absolute_path_is_left_out(cwd: Any) -> None:
    assert scenario_of(event(1, "b0", {"cwd": cwd}, "session.start"))["session"] == {"env": START["env"]}


def test_a_journal_of_no_interactive_start_replays_a_session_that_is_not_interactive() -> None:
    got = reported(start={**START, "env": ["LICH_BIN"]})
    assert yaml.safe_load(got.yaml)["session"] == {"env": {}, "interactive": False}
    assert got.notes == ["engine: the journal holds no interactive session.start (the mod's hook sees only an "
                         "interactive one): replayed as a session that is not interactive"]


@pytest.mark.parametrize(("fields", "note"), [
    ({"state": {"workers": ["a", "b"]}}, "engine: this host was handed the state of one before it (2 worker(s)); a "
                                         "scenario cannot hand a state over, so calls about them replay differently"),
    ({"part": 3}, "engine: the journal's oldest records were dropped (part 3): the scenario starts where it does"),
])
def test_what_a_scenario_cannot_start_from_is_a_note(fields: dict[str, Any], note: str) -> None:
    boot = event(1, "b0", BOOT, "session.start")
    assert reported(boot, start={**START, **fields}).notes == [note]


@pytest.mark.parametrize("fields", [{"state": {"workers": []}}, {"state": ["a"]}, {"part": 1}, {"state": None}])
def test_a_first_part_of_a_host_handed_no_workers_has_no_note(fields: dict[str, Any]) -> None:
    boot = event(1, "b0", BOOT, "session.start")
    assert reported(boot, start={**START, **fields}).notes == []


def test_git_s_runs_are_scripted_once_each_as_first_answered() -> None:
    got = reported(git(1, "branch", "--show-current"), git(2, "status", exit=None, stdout=None, stderr="fatal: x\n"),
                   git(3, "branch", "--show-current"), git(4, "branch", "--show-current", stdout="dev\n"),
                   lich(5, "sessions"))
    assert yaml.safe_load(got.yaml)["session"]["git"] == {"runs": [
        {"argv": ["git", "branch", "--show-current"], "stdout": "main\n", "stderr": "", "exit": 0},
        {"argv": ["git", "status"], "stdout": "", "stderr": "fatal: x\n", "exit": 1}]}
    assert got.notes[1:] == ["differs: git branch --show-current answered differently twice; the scenario answers it "
                             "as the first time"]


def test_git_s_output_of_no_text_is_scripted_empty() -> None:
    runs = scenario_of(git(1, "status", stdout=None, stderr=None))["session"]["git"]["runs"]
    assert runs == [{"argv": ["git", "status"], "stdout": "", "stderr": "", "exit": 0}]


def test_git_that_did_not_start_is_missing() -> None:
    assert scenario_of(git(1, "status"), git(2, "status", why="start"))["session"]["git"] == "missing"


def test_no_git_run_is_no_git_script() -> None:
    assert "git" not in scenario_of(lich(1, "sessions", stdout="[]"))["session"]


def test_lich_s_reads_of_sessions_are_scripted_by_their_number() -> None:
    got = reported(lich(1, "sessions", stdout="[]"), lich(2, "sessions", exit=None, stderr="gone", error="ENOENT"),
                   lich(3, "sessionsx"), {"k": "run", "t": 4, "argv": ["lich", "sessions"], "exit": 0})
    assert yaml.safe_load(got.yaml)["lich"] == {"lists": [
        {"read": 1, "stdout": "[]", "stderr": "", "exit": 0}, {"read": 2, "stdout": "", "stderr": "gone", "exit": 1}]}
    assert got.notes[1:] == ["differs: a sessions read that failed to run is scripted as an exit 1"]


def test_refused_stops_are_scripted_by_the_worker_s_name() -> None:
    got = scenario_of(lich(1, "close", "session-2", exit=1, stderr="no such session\n"),
                      lich(2, "control", "session-3", "stop", exit=3, stderr=None), lich(3, "close", "session-4"),
                      lich(4, "close", "session-5", exit=None), lich(5, "close", exit=1),
                      lich(6, "send", "session-6", exit=1))
    assert got["lich"] == {"stops": {"session-2": {"exit": 1, "stderr": "no such session\n"},
                                     "session-3": {"exit": 3, "stderr": ""}}}


@pytest.mark.parametrize(("run", "installed"), [
    (lich(1, "sessions", why="start"), False),
    ({"k": "run", "t": 1, "argv": [LICH], "why": "start"}, None),
    (lich(1, "sessions", why="timeout"), None),
    (git(1, "status", why="start"), None),
])
def test_lich_that_did_not_start_is_not_installed(run: dict[str, Any], installed: bool | None) -> None:
    assert scenario_of(run).get("lich", {}).get("installed") == installed


def agent_call(n: int, t: int, prompt: str, **e: Any) -> dict[str, Any]:
    return event(t, f"c{n}", {"tool": "Agent", "tool_use_id": f"toolu_{n}", "description": f"d{n}", "prompt": prompt,
                              **e})


def spawn(n: int, t: int) -> dict[str, Any]:
    return event(t, f"s{n}", {"tool_use_id": f"toolu_{n}"}, "agent.spawn")


def taken(n: int, t: int, prompt: str, ms: int = 50, *, open_ms: int | None = None) -> list[dict[str, Any]]:
    """An Agent call the mod took: passed on, its spawn opened a card, the spawn denied and the call answered."""
    printed = json.dumps({**PRINTED, "name": f"session-{n}", "label": f"Session {n}"})
    e = {"tool": "Agent", "tool_use_id": f"toolu_{n}", "description": f"d{n}", "prompt": prompt}
    result = {"status": "async_launched", "agentId": f"session-{n}", "description": f"d{n}", "prompt": prompt}
    return [agent_call(n, t, prompt), {"k": "next", "t": t, "d": f"c{n}", "e": e}, spawn(n, t),
            lich(t, "open", "--prompt", prompt, d=f"s{n}", stdout=printed, ms=open_ms or ms - 1),
            {"k": "answer", "t": t + ms - 1, "d": f"s{n}", "value": {"deny": "lich runs this agent as the card."}},
            {"k": "beneath", "t": t + ms, "d": f"c{n}", "value": {"result": "Error: denied", "isError": True}},
            {"k": "answer", "t": t + ms, "d": f"c{n}", "value": {"result": result, "context": ["took it"]}}]


def test_opens_are_scripted_on_their_call_when_prompts_tell_them_apart() -> None:
    got = scenario_of(*taken(1, 10, "first"), *taken(2, 100, "second"))
    assert "lich" not in got
    assert [(s["id"], s["lich"]["name"]) for s in got["steps"] if "id" in s] == [("toolu_1", "session-1"),
                                                                                  ("toolu_2", "session-2")]


def test_opens_of_one_prompt_are_scripted_in_the_order_of_their_spawns() -> None:
    got = scenario_of(*taken(2, 10, "same"), *taken(1, 100, "same"))
    assert [o["name"] for o in got["lich"]["opens"]] == ["session-2", "session-1"]
    assert all("lich" not in s for s in got["steps"])


def test_no_open_is_scripted_when_lich_is_not_installed() -> None:
    got = scenario_of(lich(1, "sessions", why="start", d="x"), *taken(1, 10, "p"))
    assert got["lich"] == {"installed": False, "lists": [{"read": 1, "stdout": "", "stderr": "", "exit": 0}]}
    assert "lich" not in got["steps"][1]


# -- the steps: waits, parallel calls, Esc -----------------------------------------------------------------


def shapes(steps: list[dict[str, Any]]) -> list[Any]:
    """Each step as its wait, its call's id or its parallel calls' ids, with its Esc when it has one."""
    out: list[Any] = []
    for s in steps:
        shape: Any = s["wait"] if "wait" in s else [c["id"] for c in s["parallel"]] if "parallel" in s else s["id"]
        out.append((shape, s["esc_after"]) if "esc_after" in s else shape)
    return out


def cancel(t: int, *ids: str) -> dict[str, Any]:
    return {"k": "cancel", "t": t, "ids": list(ids)}


def footer(t: int, line: Any = "lich: 1 worker") -> dict[str, Any]:
    return {"k": "footer", "t": t, "line": line}


@pytest.mark.parametrize(("records", "steps"), [
    ([*taken(1, 10, "first"), *taken(2, 100, "second"), footer(200)], [10, "toolu_1", 40, "toolu_2", 50]),
    ([*taken(1, 0, "first"), *taken(2, 50, "second")], ["toolu_1", "toolu_2"]),
    ([*taken(1, 10, "first"), *taken(2, 59, "second")], [10, ["toolu_1", "toolu_2"]]),
    ([*taken(1, 10, "first"), *taken(2, 30, "second", ms=100), *taken(3, 120, "third"), footer(210)],
     [10, ["toolu_1", "toolu_2", "toolu_3"], 40]),
    ([*taken(1, 10, "first", ms=100), *taken(2, 30, "second"), *taken(3, 110, "third")],
     [10, ["toolu_1", "toolu_2"], "toolu_3"]),
    ([*taken(1, 10, "p", open_ms=300)], [10, "toolu_1", 250]),  # the open ran past the call's answer
], ids=["gaps", "back-to-back", "overlap", "chain", "longest-first", "to-the-last-end"])
def test_calls_are_steps_in_order_with_the_gaps_as_waits(records: list[dict[str, Any]], steps: list[Any]) -> None:
    assert shapes(scenario_of(*records)["steps"]) == steps


def test_calls_written_out_of_time_order_are_steps_in_time_order() -> None:
    steps = scenario_of(*taken(2, 100, "second"), *taken(1, 10, "first"))["steps"]
    assert shapes(steps) == [10, "toolu_1", 40, "toolu_2"]


def test_an_empty_session_is_a_wait_to_its_last_record() -> None:
    assert scenario_of(footer(30), {"k": "toast", "t": 7, "text": "x"})["steps"] == [{"wait": 30}]
    assert scenario_of()["steps"] == []


def given_up(records: list[dict[str, Any]], at: int, *ids: str, after: str = "k") -> list[dict[str, Any]]:
    """``records`` with a cancel of ``ids`` at ``at``, put in after the first run (before the answers)."""
    where = next(n for n, r in enumerate(records) if r["k"] == "run") + 1
    return [*records[:where], cancel(at, *ids), *records[where:]]


@pytest.mark.parametrize(("records", "steps"), [
    (given_up(taken(1, 10, "p"), 30, "c1", "s1"), [10, ("toolu_1", 20), 30]),  # the open ran to 59, its answer 60
    (given_up(taken(1, 10, "p", open_ms=200), 30, "c1", "s1"), [10, ("toolu_1", 20), 180]),
    (given_up(taken(1, 10, "p"), 10, "c1", "s1"), [10, ("toolu_1", 1), 49]),
    (given_up(taken(1, 10, "p"), 5, "c1", "s1"), [10, ("toolu_1", 0), 50]),
    (given_up([*taken(1, 10, "first"), *taken(2, 20, "second")], 30, "c2", "s2", "c1"),
     [10, (["toolu_1", "toolu_2"], 20), 40]),
    (given_up([agent_call(1, 10, "p"), lich(10, "open", d="c1", ms=49),
               {"k": "answer", "t": 40, "d": "c1", "value": {"deny": "no"}}], 30, "c1"), [10, ("toolu_1", 20), 29]),
    (given_up([agent_call(1, 10, "p"), lich(10, "open", d="c1", ms=0)], 10, "c1"), [10, ("toolu_1", 0)]),
    (given_up([agent_call(1, 10, "p"), lich(10, "open", d="c1", ms=None)], 10, "c1"), [10, ("toolu_1", 0)]),
], ids=["mid-open", "long-open", "at-its-start", "before-the-call", "parallel", "the-call-s-own-open",
        "an-open-of-no-length", "an-open-of-no-time"])
def test_a_step_given_up_at_esc_ends_there_and_its_opens_run_on(records: list[dict[str, Any]],
                                                                 steps: list[Any]) -> None:
    assert shapes(scenario_of(*records)["steps"]) == steps


def test_an_esc_after_branch_reads_lands_after_the_scripted_git_s_time() -> None:
    """The replay's open starts once each git run before it has taken the scripted git's time, and the open
    the Esc left running ends that much later too."""
    records = taken(1, 10, "p", open_ms=200)
    records[3:3] = [git(10, "branch", "--show-current", d="c1"), git(14, "status", d="s1"),
                    git(300, "log", d="c1")]
    records[6]["t"] = 14  # the open, after both reads
    steps = scenario_of(*given_up(records, 30, "c1", "s1"))["steps"]
    assert shapes(steps) == [10, ("toolu_1", 2 * GIT_MS + 16), 300 - (10 + 2 * GIT_MS + 16) + 3]
    assert shapes(scenario_of(*given_up(records, 14, "c1", "s1"))["steps"])[1] == ("toolu_1", 2 * GIT_MS + 1)
    del records[5]  # no later run: the replay lasts until its own open ends, later than the journal's did
    assert shapes(scenario_of(*given_up(records, 30, "c1", "s1"))["steps"]) == [
        10, ("toolu_1", 2 * GIT_MS + 16), (10 + 2 * GIT_MS + 200) - (10 + 2 * GIT_MS + 16)]


def test_a_later_call_starts_after_the_esc_of_the_one_before() -> None:
    records = [*given_up(taken(1, 10, "first"), 30, "c1", "s1"), *taken(2, 100, "second")]
    assert shapes(scenario_of(*records)["steps"]) == [10, ("toolu_1", 20), 70, "toolu_2"]


def test_a_taskstop_names_a_worker_by_the_call_an_earlier_step_answered_with_it() -> None:
    stop_e = {"tool": "TaskStop", "tool_use_id": "toolu_9", "task_id": "session-1"}
    other = {"tool": "TaskStop", "tool_use_id": "toolu_8", "task_id": "session-7"}
    records = [*taken(1, 10, "p"), event(100, "c9", stop_e), {"k": "answer", "t": 101, "d": "c9", "value": {}},
               event(110, "c8", other)]
    records[6]["value"]["result"]["agentId"] = "session-1"
    steps = scenario_of(*records)["steps"]
    assert steps[3] == {"taskstop": {"worker": "toolu_1"}, "id": "toolu_9"}
    assert steps[5] == {"taskstop": "session-7", "id": "toolu_8"}


def test_an_answer_whose_agent_id_is_no_text_names_no_worker() -> None:
    stop_e = {"tool": "TaskStop", "tool_use_id": "toolu_9", "task_id": "5"}
    records = [*taken(1, 10, "p"), event(100, "c9", stop_e)]
    records[6]["value"]["result"]["agentId"] = 5
    assert scenario_of(*records)["steps"][3] == {"taskstop": "5", "id": "toolu_9"}


# -- the expectations, the transcript and the scenario's text ----------------------------------------------


def native(n: int, t: int, *, spawn_error: str | None = None, passed: bool = True) -> list[dict[str, Any]]:
    """An Agent call the mod passed on, and its spawn passed on to Claude Code's own agent."""
    e = {"tool": "Agent", "tool_use_id": f"toolu_{n}", "description": f"d{n}", "prompt": "p", "agentId": "main"}
    answer = {"result": {"status": "completed", "content": [{"type": "text", "text": "done"}], "agentId": "a0"}}
    beneath: dict[str, Any] = {"k": "beneath", "t": t + 2, "d": f"s{n}", "value": {"agentId": "a0"}}
    if spawn_error is not None:
        beneath = {"k": "beneath", "t": t + 2, "d": f"s{n}", "error": spawn_error}
    return [event(t, f"c{n}", e), {"k": "next", "t": t, "d": f"c{n}", "e": e}, spawn(n, t + 1),
            *([{"k": "next", "t": t + 1, "d": f"s{n}", "e": {}}] if passed else []), beneath,
            {"k": "beneath", "t": t + 3, "d": f"c{n}", "value": answer},
            {"k": "answer", "t": t + 3, "d": f"c{n}", "value": answer}]


def test_the_mod_s_answers_toasts_and_runs_are_expected_the_polls_aside() -> None:
    stop_e = {"tool": "TaskStop", "tool_use_id": "toolu_5", "task_id": "session-1"}
    refused = {"tool": "Agent", "tool_use_id": "toolu_6", "description": "d6", "prompt": "q"}
    records = [*taken(1, 10, "p"), *native(2, 100), *native(3, 200, spawn_error="gave up"),
               *native(4, 300, passed=False),
               event(400, "c5", stop_e), {"k": "answer", "t": 401, "d": "c5", "value": {"result": "text"}},
               event(410, "c6", refused), {"k": "answer", "t": 411, "d": "c6", "value": {"deny": "too big"}},
               event(420, "c7", {**refused, "tool_use_id": "toolu_7"}),
               {"k": "answer", "t": 421, "d": "c7", "value": "no object"},
               event(430, "c8", {"tool": "Bash", "tool_use_id": "toolu_8"}),
               {"k": "next", "t": 430, "d": "c8", "e": {}}, {"k": "next", "t": 431, "d": "s8", "e": {}},
               spawn(8, 431), {"k": "answer", "t": 432, "d": "c8", "value": {"deny": "x"}},
               {"k": "beneath", "t": 432, "d": "c8", "value": {"deny": "x"}},
               {"k": "toast", "t": 440, "d": "c6", "text": "Agent ran natively"}, {"k": "toast", "t": 441},
               lich(450, "sessions", d="poll"), lich(451, "close", "session-1", d="c5", exit=None),
               git(452, "status", exit=128)]
    records[6]["value"]["result"] = {"status": "async_launched", "agentId": "session-1", "n": 3, "ok": True,
                                     "list": [1], "none": None}
    assert scenario_of(*records)["expect"] == [
        {"answer": {"call": "toolu_1", "result": {"status": "async_launched", "agentId": "session-1", "ok": True}}},
        {"native": {"call": "toolu_2"}},
        {"answer": {"call": "toolu_6", "deny": "too big"}},
        {"toast": {"text": "Agent ran natively"}}, {"toast": {"text": None}},
        {"run": {"argv": [LICH, "open", "--prompt", "p"], "exit": 0}},
        {"run": {"argv": [LICH, "close", "session-1"], "exit": None}},
        {"run": {"argv": ["git", "status"], "exit": 128}}]


def test_the_transcript_is_the_journal_s_events_in_time_order() -> None:
    boot = event(1, "b0", {"cwd": "/home/dev/app"}, "session.start")
    records = [boot, event(2, "b1", {"isInteractive": False}, "session.start"), footer(3, None), footer(3, 5),
               *native(2, 10), {"k": "toast", "t": 12, "text": 5},
               *given_up([agent_call(1, 20, "p", agentId="main"), lich(20, "open", "--prompt", "p", d="c1", ms=9)],
                         25, "c1"),
               {"k": "answer", "t": 26, "d": "c1", "error": "gave up"},
               git(30, "status", d="c9", timeout_ms=30000)]
    call_2 = {"description": "d2", "prompt": "p"}
    assert reported(*records).events == [
        {"t": 1, "kind": "session.start", "interactive": True},
        {"t": 2, "kind": "session.start", "interactive": False},
        {"t": 3, "kind": "footer", "line": None}, {"t": 3, "kind": "footer", "line": None},
        {"t": 10, "kind": "call", "call": "toolu_2", "tool": "Agent", "input": call_2},
        {"t": 11, "kind": "native", "call": "toolu_2", "tool": "Agent", "input": call_2},
        {"t": 12, "kind": "toast", "text": "5"},
        {"t": 13, "kind": "answer", "call": "toolu_2", "result": "done\nagentId: a0", "context": []},
        {"t": 20, "kind": "call", "call": "toolu_1", "tool": "Agent", "input": {"description": "d1", "prompt": "p"}},
        report._run_event(records[-4]),
        {"t": 25, "kind": "esc"},
        report._run_event(records[-1])]


def test_a_call_of_a_toast_or_a_run_of_its_own_or_of_its_spawn_is_touched() -> None:
    records = [agent_call(1, 1, "p"), agent_call(2, 2, "p"), spawn(2, 3), agent_call(3, 4, "p"), spawn(3, 5),
               agent_call(4, 6, "p"), {"k": "toast", "t": 7, "d": "c1", "text": "x"},
               lich(8, "open", d="s2"), lich(9, "open", d="c4"), {"k": "toast", "t": 10, "text": "y"}]
    session = report._JournalSession([START, *records])
    assert session.touched() == {"toolu_1", "toolu_2", "toolu_4"}


@pytest.mark.parametrize(("spawn_records", "went"), [
    ([{"k": "next", "t": 2, "d": "s1"}], True),
    ([{"k": "next", "t": 2, "d": "s1"}, {"k": "beneath", "t": 3, "d": "s1", "error": "gave up"}], False),
    ([{"k": "next", "t": 2, "d": "s1"}, {"k": "beneath", "t": 3, "d": "s1", "value": None}], True),
    ([], False),
])
def test_a_call_went_native_when_its_spawn_was_passed_on_and_came_back(spawn_records: list[dict[str, Any]],
                                                                        went: bool) -> None:
    session = report._JournalSession([START, agent_call(1, 1, "p"), spawn(1, 2), *spawn_records])
    assert session.went_native("toolu_1") is went
    assert session.went_native("toolu_2") is False


def test_the_scenario_names_the_journal_and_counts_its_calls() -> None:
    got = report.report_scenario([START, event(1, "b0", BOOT, "session.start"), *taken(1, 10, "p"),
                                  *native(2, 100)], "20260101T000000Z-1.jsonl")
    text = got.yaml
    assert text.startswith("title: 'Reported from the journal 20260101T000000Z-1.jsonl: 2 call(s)'\n")
    loaded = yaml.safe_load(text)
    assert list(loaded) == ["title", "clauses", "about", "session", "steps", "expect"]
    assert loaded["clauses"] == ["DELIV-PENDING", "TAKE-UNTOUCHED"]
    assert loaded["about"] == (
        "Written by `agent-cards report` from the session host's journal 20260101T000000Z-1.jsonl: lich's and git's "
        "answers are what they printed then, the expectations what the mod answered. Say here what went wrong, and "
        "correct the clauses.")
    assert got.engine_calls == {"toolu_2"}
    assert got.notes == ["engine: toolu_2 was answered by Claude Code itself (its own agent, TaskStop or refusal): "
                         "the fake host gives its own model of that answer"]


def test_the_scenario_s_texts_are_folded_at_120_columns() -> None:
    assert report.report_scenario([START], "early.jsonl").yaml.splitlines()[2:4] == [
        "about: 'Written by `agent-cards report` from the session host''s journal early.jsonl: lich''s and git''s "
        "answers are what",
        "  they printed then, the expectations what the mod answered. Say here what went wrong, and correct the "
        "clauses.'"]


def test_the_scenario_s_clauses_see_its_toasts_parallel_calls_and_esc() -> None:
    records = [*given_up(taken(1, 10, "p"), 30, "c1"), *taken(2, 20, "q"),
               {"k": "toast", "t": 90, "text": "lich refused: over 8192 bytes"}]
    got = scenario_of(*records)
    assert got["clauses"] == ["DELIV-PENDING", "FALL-OVERSIZE", "BG-PARALLEL", "FALL-ESC-OPEN"]
    assert list(got)[4:] == ["steps", "expect"]


def test_notes_of_the_session_come_before_those_of_the_engine_s_calls_in_order() -> None:
    records = [*native(3, 10), *native(2, 20), git(30, "a"), git(31, "a", stdout="x")]
    assert [n.split(":")[1].split()[0] for n in reported(*records).notes] == ["the", "git", "toolu_2", "toolu_3"]


# -- the replay compared with the journal --------------------------------------------------------------

BOOTED = [event(1, "b0", BOOT, "session.start"), {"k": "next", "t": 1, "d": "b0", "e": BOOT},
          {"k": "answer", "t": 1, "d": "b0", "value": {"cwd": "/home/dev/app"}}]
TOASTED = {"k": "toast", "t": 5, "text": "lich failed"}


def test_a_session_the_replay_follows_has_no_difference() -> None:
    assert report.replay_and_compare(reported(*BOOTED), "x.yaml") == []


def test_each_difference_is_one_line_with_both_sides_cut_to_200_characters() -> None:
    said = reported(*BOOTED, TOASTED)
    long = replace(said, yaml=said.yaml.replace("lich failed", "never"),
                   events=[{**e, "text": "x" * 300} if e["kind"] == "toast" else e for e in said.events])
    assert report.replay_and_compare(long, "x.yaml") == [
        'differs: the replay failed: x.yaml:11: expected at least one toast event matching {"text": "never"}, found 0; '
        "no toast event at all",
        'differs: toast #1: only the real engine has it (replayed: "(no such state)"; journal: "' + "x" * 199 + ")"]


def test_a_scenario_that_does_not_read_is_one_line_its_first_problem() -> None:
    said = replace(reported(*BOOTED), yaml=reported(*BOOTED).yaml + "bogus: 1\nother: 2\n")
    assert report.replay_and_compare(said, "x.yaml") == [
        "differs: the written scenario does not read: x.yaml:11: scenario: unknown key 'bogus' (did you mean 'about'?)"]


def test_an_answer_claude_code_gave_itself_is_said_once_among_the_notes() -> None:
    said = reported(*BOOTED, *native(2, 10))
    assert said.engine_calls == {"toolu_2"}
    assert report.replay_and_compare(said, "x.yaml") == []
    [line] = report.replay_and_compare(replace(said, engine_calls={"toolu_9"}), "x.yaml")
    assert line.startswith('differs: answer toolu_2: not a launch (replayed: {"result": {"isAsync": true, ')
    replayed, journal = line.removeprefix("differs: answer toolu_2: not a launch (replayed: ").split("; journal: ")
    assert len(replayed) == 200  # the replayed side is cut as the journal's is
    assert journal.startswith('{"result": "done\\nagentId: ') and journal.endswith('"})')


def test_a_start_the_journal_does_not_hold_is_said_once_among_the_notes() -> None:
    said = replace(reported(), events=[{"t": 0, "kind": "session.start", "interactive": True}])
    assert report.replay_and_compare(said, "x.yaml") == []
    assert report.replay_and_compare(replace(said, notes=["engine: the journal's oldest records were dropped"]),
                                     "x.yaml") == [
        "differs: session.start #1: they differ (replayed: false; journal: true)"]


def test_the_journal_is_compared_on_what_the_session_host_sees() -> None:
    """Not the engine's dialog (permission), nor whether it raised agent.spawn (spawn, order): the journal
    cannot say either."""
    lanes = {"session.start", "call", "answer", "run", "polls", "toast", "footer", "native", "note", "report", "keys",
             "time"}
    assert lanes == report.JOURNAL_LANES


# -- the command --------------------------------------------------------------------------------------------

SUMMARY = " (lanes: session.start, call, answer, run, toast, footer, native, keys)"


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = report.main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args", [["-h"], ["x", "--help"], ["-o", "f.yaml", "-h", "--force"]])
def test_help_is_the_usage_on_stdout(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(args, capsys) == (0, report.REPORT_HELP + "\n", "")
    assert report.REPORT_HELP.startswith("usage: agent-cards report [SESSION] [-o SCENARIO.yaml [--force]]\n")


@pytest.mark.parametrize(("args", "err"), [
    (["-o"], "-o takes a file"),
    (["x", "--force", "-o"], "-o takes a file"),
    (["--bogus"], "unknown option --bogus"),
    (["--bogus", "x"], "unknown option --bogus"),
    (["-o", "f.yaml", "-x"], "unknown option -x"),
    (["a", "b"], "name one session at most"),
    (["a", "-x"], "unknown option -x"),
    (["-", "x"], "name one session at most"),
    (["a", "-o", "f.yaml", "b"], "name one session at most"),
])
def test_a_wrong_command_line_is_one_line_and_exit_2(args: list[str], err: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_main(args, capsys) == (2, "", f"agent-cards report: {err} (agent-cards report --help)\n")
    assert not (tmp_path / "f.yaml").exists()


def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Journals looked for in a folder of this test's alone; the working folder is the test's too."""
    folder = tmp_path / "journals"
    folder.mkdir()
    monkeypatch.setenv("AGENT_CARDS_JOURNAL_DIR", str(folder))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "conf"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path)
    return folder


def test_a_dash_is_a_session_s_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    isolated(tmp_path, monkeypatch)
    assert run_main(["-"], capsys) == (2, "", "agent-cards report: no journal of the session '-'\n")


def test_a_journal_is_written_to_stdout_and_its_notes_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = isolated(tmp_path, monkeypatch)
    path = write(folder, START, *BOOTED, *native(2, 10), name="20260101T000000Z-1.jsonl")
    code, out, err = run_main(["20260101T000000Z-1"], capsys)
    assert (code, out) == (0, report.report_scenario(report.read_journal(path), path.name).yaml)
    assert err == ("agent-cards report: engine: toolu_2 was answered by Claude Code itself (its own agent, TaskStop or "
                   "refusal): the fake host gives its own model of that answer\n"
                   f"agent-cards report: {path}: replays as the session went{SUMMARY}\n")


def test_a_replay_that_differs_is_exit_1_with_a_line_for_each_difference(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = isolated(tmp_path, monkeypatch)
    path = write(folder, START, *BOOTED, TOASTED, name="20260101T000000Z-1.jsonl")
    code, out, err = run_main([], capsys)
    assert (code, out) == (1, report.report_scenario(report.read_journal(path), path.name).yaml)
    assert err == (
        'agent-cards report: differs: the replay failed: 20260101T000000Z-1.yaml:11: expected at least one toast event '
        'matching {"text": "lich failed"}, found 0; no toast event at all\n'
        'agent-cards report: differs: toast #1: only the real engine has it (replayed: "(no such state)"; journal: '
        '"lich failed")\n'
        f"agent-cards report: {path}: 2 difference(s) from the session{SUMMARY}\n")


def test_the_scenario_is_written_to_the_file_named_and_replayed_under_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    isolated(tmp_path, monkeypatch)
    path = write(tmp_path, START, *BOOTED, TOASTED)  # named, where no journal is looked for
    code, out, err = run_main(["-o", "bug.yaml", str(path)], capsys)
    assert (code, out) == (1, "")
    assert (tmp_path / "bug.yaml").read_text(encoding="utf-8") == report.report_scenario(
        report.read_journal(path), path.name).yaml
    assert err.startswith("agent-cards report: differs: the replay failed: bug.yaml:11: expected at least one toast")


def test_an_existing_file_is_replaced_only_with_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write(isolated(tmp_path, monkeypatch), START, *BOOTED)
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere")
    for name in ("bug.yaml", "dangling.yaml"):
        (tmp_path / "bug.yaml").write_text("mine\n", encoding="utf-8")
        assert run_main([str(path), "-o", name], capsys) == (
            2, "", f"agent-cards report: {name} exists: give --force to replace it\n")
    assert (tmp_path / "bug.yaml").read_text(encoding="utf-8") == "mine\n"
    code, out, _ = run_main([str(path), "-o", "bug.yaml", "--force"], capsys)
    assert (code, out) == (0, "")
    assert (tmp_path / "bug.yaml").read_text(encoding="utf-8").startswith("title: 'Reported from the journal j.jsonl")


def test_a_scenario_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = write(isolated(tmp_path, monkeypatch), START, *BOOTED)
    assert run_main([str(path), "-o", "none/bug.yaml"], capsys) == (
        2, "", "none/bug.yaml:1: cannot write the scenario: No such file or directory\n")


def test_a_journal_that_cannot_be_read_is_its_problem_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = write(isolated(tmp_path, monkeypatch), START, b"{")
    assert run_main([str(path)], capsys) == (
        2, "", f"{path}:2: not a JSON line (Expecting property name enclosed in double quotes)\n")


def deep(tmp_path: Path) -> Path:
    """A folder whose path alone is over the 300 characters a line of an odd record is cut to."""
    folder = tmp_path / ("x" * 100) / ("y" * 100) / ("z" * 100)
    folder.mkdir(parents=True)
    return folder


def test_a_record_of_odd_shape_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write(isolated(tmp_path, monkeypatch), START, {"k": "cancel", "t": 1, "ids": 5})
    assert run_main([str(path)], capsys) == (
        2, "", f"{path}:1: a record this report cannot read (TypeError: 'int' object is not iterable)\n")
    long = write(deep(tmp_path), START, {"k": "cancel", "t": 1, "ids": 5})
    code, out, err = run_main([str(long)], capsys)
    assert (code, out, err) == (2, "", f"{long}:1: a record this report cannot read"[:300] + "\n")


@pytest.mark.parametrize("error", [TypeError("odd"), ValueError("odd"), KeyError("odd"), AttributeError("odd")])
def test_a_replay_that_meets_a_record_of_odd_shape_is_one_line_and_exit_2(
        error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(isolated(tmp_path, monkeypatch), START, *BOOTED)

    def odd(reported: report.Reported, file: str) -> list[str]:
        raise error

    monkeypatch.setattr(report, "replay_and_compare", odd)
    assert run_main([str(path), "-o", "bug.yaml"], capsys) == (
        2, "", f"{path}:1: a record this report cannot read ({type(error).__name__}: {error})\n")
    assert not (tmp_path / "bug.yaml").exists()
    long = write(deep(tmp_path), START)
    assert run_main([str(long)], capsys)[2] == f"{long}:1: a record this report cannot read"[:300] + "\n"
