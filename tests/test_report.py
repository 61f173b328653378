"""The flight recorder and ``agent-cards report``: the session host driven in process through a take, a
TaskStop and a fallback, its journal made into a scenario, the scenario replayed and compared with the
journal's transcript by the conformance comparator."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cards.bridge import journal as journal_module
from agent_cards.bridge.generate import env_names
from agent_cards.bridge.session import BridgeSession
from agent_cards.record import replace
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_conformance import report
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript, OpenScript
from agent_cards_simulator.runners.scripted_git import GIT_MS

ORIGIN = {"plugin": "engine", "tier": "core"}
START = [{"event": "session.start", "e": {"cwd": "/home/dev/app", "surface": "terminal", "isInteractive": True},
          "result": {"cwd": "/home/dev/app"}}]
SECRET_PROMPT = "Fix the auth flow; the key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789."


class InProcessModule:
    """The JS half played in process against a :class:`BridgeSession` on a real loop (real lich runs)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.lines: list[dict[str, Any]] = []
        self.session = BridgeSession(env, None, lambda text: self.lines.append(json.loads(text)))
        self.hooks = {r.event + (json.dumps(r.matcher) if r.matcher else ""): i
                      for i, r in enumerate(self.session.hooks)}
        self.serial = 0

    async def dispatch(self, hook: str, e: dict[str, Any], beneath: Any, event: str = "tool.call") -> dict[str, Any]:
        self.serial += 1
        key = str(self.serial)
        request: dict[str, Any] = {"op": "event", "id": key, "hook": self.hooks[hook], "e": e, "origin": ORIGIN,
                                   "event": event}
        effects: list[Any] = []
        while True:
            answer = await self.session.step(request)
            effects += answer.get("effects", [])
            if answer["kind"] in ("done", "failed"):
                return {**answer, "effects": effects}
            if answer["kind"] == "next":
                request = {"op": "resume", "id": key, "value": await beneath(answer["e"])}
            else:
                request = {"op": "poll", "id": key}

    async def footer(self) -> None:
        async def drawn(e: dict[str, Any]) -> dict[str, Any]:
            return e

        await self.dispatch('ui.render{"component": "SessionMode"}', {"component": "SessionMode",
                                                                       "props": {"modes": []}}, drawn, "ui.render")

    async def agent(self, e: dict[str, Any], native: bool = False) -> dict[str, Any]:
        """An Agent call whose ``next`` raises ``agent.spawn`` as the engine does."""
        async def spawn(passed: dict[str, Any]) -> dict[str, Any]:
            async def own_agent(_: dict[str, Any]) -> dict[str, Any]:
                return {"model": "m", "agentId": "a0native"}

            spawned = await self.dispatch("agent.spawn", {"tool_use_id": passed["tool_use_id"]}, own_agent,
                                          "agent.spawn")
            if "deny" in spawned.get("value", {}):
                return {"result": "Error: Subagent spawn denied by a plugin", "isError": True}
            return {"result": {"status": "completed", "content": [{"type": "text", "text": "done natively"}]}}

        return await self.dispatch('tool.call{"tool": "Agent"}', e, spawn)

    async def task_stop(self, call_id: str, task_id: str) -> dict[str, Any]:
        async def engine(_: dict[str, Any]) -> dict[str, Any]:
            return {"result": "No task found", "isError": True}

        return await self.dispatch('tool.call{"tool": "TaskStop"}', {"tool": "TaskStop", "tool_use_id": call_id,
                                                                      "task_id": task_id}, engine)


@pytest.fixture
def lich(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LoggedLich:
    try:
        logged = LoggedLich.install(tmp_path / "lich", LichScript(checkout="/home/dev/app"))
    except SetupError as error:
        pytest.skip(str(error))
    monkeypatch.setenv("FAKE_LICH_STATE", str(logged.state))
    for name, value in env_of(logged).items():  # lich reads the asking session's variables, as a real one does
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENT_CARDS_JOURNAL_DIR", str(tmp_path / "journals"))
    monkeypatch.delenv("AGENT_CARDS_JOURNAL", raising=False)
    monkeypatch.delenv("AGENT_CARDS_JOURNAL_PROMPTS", raising=False)
    return logged


def env_of(lich: LoggedLich) -> dict[str, str]:
    return {"LICH_BIN": str(lich.bin), "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0", "LICH_PROMPT_LANG": "en"}


async def _session(module: InProcessModule, worker_name: str | None = None) -> str:
    """Take a call, stop its worker, then an oversize call falls back to the native agent (with a toast)."""
    module.session.boot_events(START)
    await module.footer()
    taken = await module.agent({"tool": "Agent", "tool_use_id": "toolu_01A", "description": "Fix auth",
                                "prompt": SECRET_PROMPT, "subagent_type": "general-purpose"})
    name = str(taken["value"]["result"]["agentId"])
    await module.footer()
    stopped = await module.task_stop("toolu_01B", name)
    assert stopped["value"]["result"]["task_id"] == name
    await module.footer()
    native = await module.agent({"tool": "Agent", "tool_use_id": "toolu_01C", "description": "Too big",
                                 "prompt": "é" * 4097})
    assert native["kind"] == "done" and native["effects"] and "toast" in native["effects"][0]
    assert module.session.journal is not None
    module.session.journal.flush()
    return name


def run_session(lich: LoggedLich) -> tuple[Path, str]:
    module = InProcessModule(env_of(lich))
    name = asyncio.run(_session(module))
    assert module.session.journal is not None
    return Path(module.session.journal.path), name


def test_a_recorded_session_replays_to_the_same_transcript(lich: LoggedLich) -> None:
    path, name = run_session(lich)
    records = report.read_journal(path)
    kinds = {r["k"] for r in records}
    assert {"start", "event", "next", "beneath", "answer", "run", "toast", "footer", "state"} <= kinds
    reported = report.report_scenario(records, path.name)
    scenario = yaml.safe_load(reported.yaml)
    assert scenario["clauses"] == ["DELIV-PENDING", "STOP-TAKEN", "FALL-OVERSIZE"]
    steps = scenario["steps"]
    taken = next(s for s in steps if s.get("id") == "toolu_01A")
    assert taken["lich"]["name"] == name and taken["lich"]["exit"] == 0
    assert json.loads(taken["lich"]["stdout"])["name"] == name  # what lich really printed
    assert next(s for s in steps if s.get("id") == "toolu_01B")["taskstop"] == {"worker": "toolu_01A"}
    assert {"native": {"call": "toolu_01C"}} in scenario["expect"]
    lines = report.replay_and_compare(reported, "reported.yaml")
    assert lines == [], lines
    assert reported.notes == ["engine: toolu_01C was answered by Claude Code itself (its own agent, TaskStop or "
                              "refusal): the fake host gives its own model of that answer"]


def test_a_replay_that_differs_is_said_in_one_line_per_place(lich: LoggedLich) -> None:
    """The comparator is not vacuous here: a journal whose open printed something else than the mod
    answered (as a changed mod would) is named as a difference of the answer lane."""
    path, _ = run_session(lich)
    records = report.read_journal(path)
    for r in records:
        if r["k"] == "answer" and isinstance(r.get("value"), dict) and "context" in r["value"]:
            r["value"] = {**r["value"], "result": {**r["value"]["result"], "agentId": "someone-else"}}
    lines = report.replay_and_compare(report.report_scenario(records, path.name), "reported.yaml")
    assert any(line.startswith("differs: answer toolu_01A: another agentId") for line in lines), lines


@pytest.mark.parametrize("kind", ["call", "answer", "run", "toast", "footer", "native"])
def test_each_lane_the_journal_shows_is_compared(kind: str, lich: LoggedLich) -> None:
    """A journal that lost every event of one kind it does show differs in that lane (a lane the comparison
    of a journal left out would let a report say "as the session went" of another session)."""
    path, _ = run_session(lich)
    reported = report.report_scenario(report.read_journal(path), path.name)
    assert any(e["kind"] == kind for e in reported.events)
    lost = replace(reported, events=[e for e in reported.events if e["kind"] != kind])
    lanes = {line.split()[1] for line in report.replay_and_compare(lost, "reported.yaml")}
    assert kind in lanes or (kind == "answer" and "answer" in lanes), lanes


def test_an_open_that_printed_a_name_of_no_text_names_no_worker() -> None:
    """lich's printed name and label are taken only as text (a number is no name to match or stop)."""
    script = report._open_script({"argv": ["lich", "open"], "exit": 0, "ms": 800,
                                  "stdout": '{"name": 5, "label": "Session 2", "delivery": {"status": "pending"}}'})
    assert "name" not in script and script["label"] == "Session 2"


def test_the_journal_says_why_the_host_before_went(lich: LoggedLich, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The module tells a host it starts again why the last one went; the journal's start record keeps it
    (cut to its limit), and a session's first host says null."""
    first, _ = run_session(lich)
    assert report.read_journal(first)[0]["after"] is None
    why = "the resume step failed: ui.render: superseded state"
    monkeypatch.setenv("AGENT_CARDS_JOURNAL_DIR", str(tmp_path / "again"))  # a file of its own (same pid)
    again = BridgeSession(env_of(lich), None, lambda text: None, after=why + "!" * 500)
    assert again.journal is not None
    again.journal.flush()
    [start, *_] = report.read_journal(Path(again.journal.path))
    assert start["after"] == (why + "!" * 500)[:journal_module.AFTER_CHARS]


def test_the_journal_keeps_no_prompt_and_no_secret_by_default(lich: LoggedLich) -> None:
    path, _ = run_session(lich)
    text = path.read_text(encoding="utf-8")
    assert "sk-ant-api03" not in text and "Fix the auth flow" not in text
    stand_in = journal_module.stand_in(SECRET_PROMPT)
    assert len(stand_in.encode()) == len(SECRET_PROMPT.encode())
    assert stand_in in text  # in the input, lich's argv and output, and the answer alike
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(("said", "secret"), [
    ("sk-ant-api03-abcdefghijklmnopqrstuvwx", "sk-ant-api03-abcdefghijklmnopqrstuvwx"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"), ("Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    ("password=hunter2hunter2", "hunter2hunter2"), ("xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef"),
])
def test_what_looks_like_a_secret_is_replaced(said: str, secret: str) -> None:
    scrubbed = journal_module.scrub(f"lich: failed: {said} was refused")
    assert journal_module.SECRET in scrubbed and secret not in scrubbed
    assert journal_module.scrub('{"name":"session-2-9f81","ticket":"a1b2c301"}') == \
        '{"name":"session-2-9f81","ticket":"a1b2c301"}'  # lich's own ids are no secrets


def test_prompts_are_kept_on_the_persons_choice(lich: LoggedLich, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CARDS_JOURNAL_PROMPTS", "keep")
    path, _ = run_session(lich)
    text = path.read_text(encoding="utf-8")
    assert "Fix the auth flow" in text and "sk-ant-api03" not in text  # secrets stay out whatever is chosen


def test_no_journal_when_turned_off_or_outside_lich(lich: LoggedLich, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CARDS_JOURNAL", "off")
    assert BridgeSession(env_of(lich), None, lambda _: None).journal is None
    monkeypatch.delenv("AGENT_CARDS_JOURNAL")
    monkeypatch.delenv("LICH_SESSION_ID")
    assert BridgeSession({"LICH_BIN": str(lich.bin)}, None, lambda _: None).journal is None
    monkeypatch.setenv("AGENT_CARDS_JOURNAL", "always")
    assert BridgeSession({"LICH_BIN": str(lich.bin)}, None, lambda _: None).journal is not None


def test_the_mods_variables_are_the_ones_the_journal_keeps() -> None:
    assert list(journal_module.MOD_NAMES) == env_names()


def test_report_writes_the_newest_journal(lich: LoggedLich, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    run_session(lich)
    out = tmp_path / "bug.yaml"
    assert report.main(["-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "replays as the session went" in err
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["title"].startswith("Reported from the journal")
    assert report.main(["-o", str(out)]) == 2  # no overwrite without --force
    assert "exists" in capsys.readouterr().err
    assert report.main(["-o", str(out), "--force"]) == 0


def test_a_journal_part_cut_starts_again_with_its_start_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setattr(journal_module, "PART_BYTES", 2000)
    kept = journal_module.SessionJournal(str(tmp_path / "j.jsonl"), {"v": 1, "env": {}, "part": 1}, False)
    for n in range(40):
        kept.record("toast", text=f"toast {n:03d} " + "x" * 60)
        kept.flush()
    first = json.loads((tmp_path / "j.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["k"] == "start" and first["part"] > 1
    assert (tmp_path / "j.jsonl").stat().st_size <= 2000 + 200
    assert (tmp_path / "j.jsonl.1").exists()


@pytest.mark.parametrize(("data", "why"), [
    (b"\xff\xfe\n", "not UTF-8"),
    (b"[" * 100_000 + b"\n", "nested deeper"),
    ((json.dumps({"k": "start", "t": 0, "v": 1}) + "\n" + '{"k": "toast", "t": 1, "x": ' + "[" * 40 + "]" * 40
      + "}\n").encode(), ":2: nested deeper"),
    (b'{"k": "event", "t": 0}\n', "not a journal of this version"),
    (b"", "an empty journal"),
    (b'{"k":"start","t":0,"v":1}\n{"t": "x"}\n', ":2: not a journal record"),
    (b'{"k":"start","t":0,"v":1}\n{"k":"run","t":1,"argv":[{"a":1}]}\n', ":2: a run whose argv is not a list"),
])
def test_a_hostile_journal_is_one_line_and_exit_2(tmp_path: Path, data: bytes, why: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    assert report.main([str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err and "Traceback" not in err


def test_a_journal_that_is_no_regular_file_is_refused_without_waiting(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    for path, why in ((fifo, "not a regular file"), (link, "not a regular file"), (tmp_path, "it is a folder")):
        assert report.main([str(path)]) == 2
        assert why in capsys.readouterr().err
    monkeypatch_size = tmp_path / "big.jsonl"
    with monkeypatch_size.open("wb") as fh:
        fh.truncate(report.MAX_BYTES + 1)
    assert report.main([str(monkeypatch_size)]) == 2
    assert f"over the limit of {report.MAX_BYTES}" in capsys.readouterr().err


def test_esc_while_lich_opens_is_reported_as_esc_after(lich: LoggedLich, monkeypatch: pytest.MonkeyPatch) -> None:
    """Esc during the open: the engine gives both dispatches up, the open still ends and the worker counts.
    The scenario presses Esc at the same point of the call, and its replay counts the worker too."""
    lich.restart(LichScript(checkout="/home/dev/app", default_open=OpenScript(ms=1500)))
    monkeypatch.setenv("FAKE_LICH_REAL_SLEEP", "1")  # the open really takes its 1.5 s, so Esc comes during it
    module = InProcessModule(env_of(lich))

    async def esc_mid_open() -> None:
        module.session.boot_events(START)
        await module.footer()
        e = {"tool": "Agent", "tool_use_id": "toolu_01E", "description": "Fix auth", "prompt": "Fix the auth flow."}
        agent = module.hooks['tool.call{"tool": "Agent"}']
        first = await module.session.step({"op": "event", "id": "c1", "hook": agent, "e": e, "origin": ORIGIN,
                                           "event": "tool.call"})
        assert first["kind"] == "next"
        pending = await module.session.step({"op": "event", "id": "s1", "hook": module.hooks["agent.spawn"],
                                             "e": {"tool_use_id": "toolu_01E"}, "origin": ORIGIN,
                                             "event": "agent.spawn"})
        assert pending["kind"] == "pending"  # the open runs
        spawn = module.session.dispatches["s1"]
        await module.session.step({"op": "poll", "id": "none", "cancel": ["c1", "s1"]})  # Esc
        assert spawn.task is not None
        await spawn.task  # the open ends all the same
        await module.footer()
        assert module.session.journal is not None
        module.session.journal.flush()

    asyncio.run(esc_mid_open())
    assert module.session.journal is not None
    reported = report.report_scenario(report.read_journal(Path(module.session.journal.path)), "esc.jsonl")
    scenario = yaml.safe_load(reported.yaml)
    step = next(s for s in scenario["steps"] if s.get("id") == "toolu_01E")
    assert 0 < step["esc_after"] < step["lich"]["ms"]
    assert "FALL-ESC-OPEN" in scenario["clauses"]
    assert report.replay_and_compare(reported, "esc.yaml") == []


def _esc_journal(run_t: int, done_t: int, cancel_t: int, answer_t: int) -> list[dict[str, Any]]:
    """A journal of one call given up at Esc while its 1,568 ms open ran, with the times given."""
    lich = "/opt/lich/bin/lich"
    printed = json.dumps({"id": "9f81", "label": "Session 2", "name": "session-2-9f81", "kind": "claude",
                          "delivery": {"ticket": "a1b2c301", "target": "Session 2", "status": "pending"}})
    e = {"tool": "Agent", "tool_use_id": "toolu_01E", "description": "Fix auth", "prompt": "e5c1831e2f3ecacbe1"}
    given_up = "user-cancel: the engine gave up on this call"
    boot = {"isInteractive": True, "cwd": "/home/dev/app"}
    return [
        {"k": "start", "t": 0, "v": 1, "pid": 1, "session": None, "state": None, "prompts": "hash", "part": 1,
         "env": {"LICH_BIN": lich, "LICH_PROMPT_LANG": "en", "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0"}},
        {"k": "event", "t": 1, "d": "boot-0", "hook": 0, "event": "session.start", "origin": ORIGIN, "e": boot},
        {"k": "next", "t": 1, "d": "boot-0", "e": boot},
        {"k": "answer", "t": 1, "d": "boot-0", "value": {"cwd": "/home/dev/app"}},
        {"k": "event", "t": 2, "d": "c1", "hook": 1, "event": "tool.call", "origin": ORIGIN, "e": e},
        {"k": "next", "t": 2, "d": "c1", "e": e},
        {"k": "event", "t": 2, "d": "s1", "hook": 3, "event": "agent.spawn", "origin": ORIGIN,
         "e": {"tool_use_id": "toolu_01E"}},
        {"k": "cancel", "t": cancel_t, "ids": ["c1", "s1"]},
        {"k": "beneath", "t": answer_t, "d": "c1", "error": given_up},
        {"k": "answer", "t": answer_t, "d": "c1", "error": given_up},
        {"k": "run", "t": run_t, "d": "s1", "timeout_ms": 120000, "exit": 0, "stdout": printed + "\n", "stderr": "",
         "error": None, "ms": 1568, "argv": [lich, "open", "--kind", "claude", "--subagent", "--prompt",
                                              "e5c1831e2f3ecacbe1", "--json"]},
        {"k": "state", "t": done_t, "workers": ["session-2-9f81"]},
        {"k": "answer", "t": done_t, "d": "s1", "value": {"deny": "lich runs this agent as the card instead."}},
        {"k": "footer", "t": done_t, "line": "lich: 1 worker"},
    ]


@pytest.mark.parametrize(("run_t", "done_t", "cancel_t", "answer_t"), [
    (2, 1569, 5, 5),  # the open's start and length rounded apart: it ends a millisecond after the next record
    (3, 1571, 5, 900),  # a loaded host wrote the given-up call's answer long after the cancel
    (2, 1570, 2, 2),  # the call, the open's start and the Esc in one millisecond: still an Esc mid-open
    (40, 1608, 1590, 1590),  # the open began 38 ms after the call, the Esc 1,550 ms into it
], ids=["rounded", "late-answer", "same-millisecond", "late-open"])
def test_the_replay_of_an_esc_mid_open_lasts_until_the_open_ended(run_t: int, done_t: int, cancel_t: int,
                                                                 answer_t: int) -> None:
    reported = report.report_scenario(_esc_journal(run_t, done_t, cancel_t, answer_t), "esc.jsonl")
    step = next(s for s in yaml.safe_load(reported.yaml)["steps"] if s.get("id") == "toolu_01E")
    assert step["esc_after"] == max(1, cancel_t - run_t)  # as far into the open as the Esc came
    assert report.replay_and_compare(reported, "esc.yaml") == []


def _isolated(records: list[dict[str, Any]], git_ms: int) -> list[dict[str, Any]]:
    """The journal of :func:`_esc_journal` for a call on its own branch: the mod reads the branch first."""
    for r in records:
        if r.get("d") == "c1" and isinstance(r.get("e"), dict):
            r["e"] = {**r["e"], "isolation": "worktree"}
        if r["k"] == "run":
            r["argv"][5:5] = ["--worktree", "subagent/fix-auth-u01e", "--base", "main"]
    passed = next(n for n, r in enumerate(records) if r["k"] == "next" and r["d"] == "c1")
    records.insert(passed, {"k": "run", "t": 2, "d": "c1", "timeout_ms": 30000, "exit": 0, "stdout": "main\n",
                            "stderr": "", "error": None, "ms": git_ms, "argv": ["git", "branch", "--show-current"]})
    return records


@pytest.mark.parametrize(("git_ms", "cancel_t"), [
    (3, 5),  # the open began as git's 3 ms read ended, the Esc in the same millisecond
    (4, 900),  # git read in 4 ms, the replay's in 5: the open ends a millisecond later there
    (3, 1300),
], ids=["at-the-open", "mid-open", "late"])
def test_an_esc_mid_open_after_a_branch_read_lands_in_the_replays_open(git_ms: int, cancel_t: int) -> None:
    """In the replay the open starts once the scripted git has answered (its own time, not the session's), and
    the replay lasts until the open the Esc left running has ended."""
    run_t = 2 + git_ms
    records = _isolated(_esc_journal(run_t, run_t + 1568, cancel_t, cancel_t), git_ms)
    reported = report.report_scenario(records, "esc.jsonl")
    step = next(s for s in yaml.safe_load(reported.yaml)["steps"] if s.get("id") == "toolu_01E")
    assert step["esc_after"] == GIT_MS + max(1, cancel_t - run_t)
    assert report.replay_and_compare(reported, "esc.yaml") == []


def test_a_run_whose_length_is_no_whole_number_is_refused(tmp_path: Path) -> None:
    records = _esc_journal(3, 1571, 5, 5)
    records[10]["ms"] = "1568"
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(report.JournalProblem, match=r"bad\.jsonl:11: a run whose ms is not a whole number"):
        report.read_journal(path)


def test_report_is_a_command_with_a_help_and_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cards import cli

    assert cli._find("report") is not None
    assert report.main(["--help"]) == 0 and "usage: agent-cards report" in capsys.readouterr().out
    assert report.main(["--bogus"]) == 2
    assert "unknown option --bogus" in capsys.readouterr().err
    assert report.main(["a", "b"]) == 2
    assert "name one session at most" in capsys.readouterr().err
    monkeypatch.setenv("AGENT_CARDS_JOURNAL_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert report.main([]) == 2
    assert capsys.readouterr().err.startswith("agent-cards report: no journal found")


def test_calls_whose_hooks_overlapped_are_reported_as_one_parallel_step(lich: LoggedLich) -> None:
    """Two Agent calls raised side by side (as one message's calls are): one ``parallel`` step, each open
    scripted by its prompt, and the replay opens two cards as the session did."""
    module = InProcessModule(env_of(lich))

    async def side_by_side() -> None:
        module.session.boot_events(START)
        await module.footer()
        calls = [{"tool": "Agent", "tool_use_id": f"toolu_01P{n}", "description": f"Part {n}",
                  "prompt": f"Do part {n} of the work, carefully."} for n in (1, 2)]
        await asyncio.gather(*(module.agent(e) for e in calls))
        await module.footer()
        assert module.session.journal is not None
        module.session.journal.flush()

    asyncio.run(side_by_side())
    assert module.session.journal is not None
    reported = report.report_scenario(report.read_journal(Path(module.session.journal.path)), "p.jsonl")
    scenario = yaml.safe_load(reported.yaml)
    parallel = next(s["parallel"] for s in scenario["steps"] if "parallel" in s)
    assert [c["id"] for c in parallel] == ["toolu_01P1", "toolu_01P2"]
    assert {c["lich"]["name"] for c in parallel} == {"session-2-9f81", "session-3-9f82"}
    assert "BG-PARALLEL" in scenario["clauses"]
    assert report.replay_and_compare(reported, "p.yaml") == []


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=8)
_RECORD = st.fixed_dictionaries(
    {"k": st.sampled_from(["event", "next", "beneath", "answer", "run", "toast", "footer", "cancel", "state"]),
     "t": st.integers(0, 5000)},
    optional={"d": st.sampled_from(["1", "2", None]), "event": st.sampled_from(["tool.call", "agent.spawn", "x"]),
              "e": st.dictionaries(st.sampled_from(["tool", "tool_use_id", "prompt", "description", "task_id"]),
                                   _JSON, max_size=4),
              "argv": st.lists(st.sampled_from(["/x/lich", "git", "open", "sessions", "close", "a"]), min_size=1,
                               max_size=4),
              "value": _JSON, "ids": _JSON, "exit": _JSON, "stdout": _JSON, "text": _JSON, "line": _JSON})


@settings(max_examples=40, deadline=None)
@given(st.lists(_RECORD, max_size=8))
def test_any_journal_of_odd_records_ends_with_an_exit_code_not_a_traceback(records: list[dict[str, Any]]) -> None:
    start = {"k": "start", "t": 0, "v": 1, "env": {"LICH_BIN": "/x/lich", "LICH_SESSION_ID": "3c4d"}}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "odd.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in [start, *records]), encoding="utf-8")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = report.main([str(path)])
    assert code in (0, 1, 2)
    assert "Traceback" not in err.getvalue()


def test_a_folder_keeps_the_newest_journals(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir(mode=0o700)
    for n in range(journal_module.KEEP_JOURNALS + 5):
        (folder / f"20260101T0000{n:02d}Z-1{journal_module.SUFFIX}").write_text("{}\n", encoding="utf-8")
    environ = {"AGENT_CARDS_JOURNAL_DIR": str(folder)}
    made = journal_module.open_journal({"LICH_BIN": "/x/lich", "LICH_SESSION_ID": "3c4d"}, None,
                                       journal_module.MOD_NAMES, environ)
    assert made is not None
    made.flush()
    kept = sorted(p.name for p in folder.iterdir())
    assert len(kept) == journal_module.KEEP_JOURNALS
    assert Path(made.path).name in kept and "20260101T000000Z-1.jsonl" not in kept
