"""``fake-lich``, the fake lich as a real program: every test here runs it as a real process, but the one
that reads its wall clock, frozen (freezegun) in this process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

import agent_cards_simulator
from agent_cards.bridge.lifetime import alive
from agent_cards_claude_driver.waits import until
from agent_cards_simulator.lich.install import fake_lich_program
from agent_cards_simulator.lich.program import NOW_ENV, STATE_ENV, State, create_state, run_command, transact
from agent_cards_simulator.lich.scripts import LichScript, OpenScript, ReportScript, StopScript
from agent_cards_simulator.lich.world import LichWorld

BIN = "/opt/lich/bin/lich"
SESSION = {"LICH_SESSION_ID": "3c4d", "LICH_BIN": BIN}
NO_LICH = "lich: no lich is running — open lich, or run this inside one of its sessions\n"
OPEN = ("open", "--kind", "claude", "--subagent", "--prompt", "Fix the auth flow", "--json")


@pytest.fixture(scope="module")
def program() -> str:
    return fake_lich_program()


def _env(extra: Mapping[str, str]) -> dict[str, str]:
    """The test's environment without any lich of its own, plus ``extra``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LICH_", "FAKE_LICH_"))}
    return {**base, **extra}


def run(program: str, *args: str, env: Mapping[str, str] = SESSION,
        state: str | None = None, now: int | None = None) -> subprocess.CompletedProcess[str]:
    extra = dict(env)
    if state is not None:
        extra[STATE_ENV] = state
    if now is not None:
        extra["FAKE_LICH_NOW_MS"] = str(now)
    return subprocess.run([program, *args], env=_env(extra), capture_output=True, text=True, timeout=60, check=False)


def one_lich_line(done: subprocess.CompletedProcess[str]) -> str:
    """A refusal: nothing on stdout, exactly one ``lich: `` line on stderr, exit 1."""
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr.startswith("lich: ") and done.stderr.endswith("\n") and done.stderr.count("\n") == 1, done
    return done.stderr


def world_of(state: str) -> LichWorld:
    return transact(state, lambda s: s.world)


# --- refusals and no lich at all -----------------------------------------------------------------


def test_an_unknown_flag_is_one_lich_line_and_exit_1(program: str, tmp_path: Path) -> None:
    assert one_lich_line(run(program, "open", "--bogus")) == "lich: flag provided but not defined: -bogus\n"
    state = create_state(tmp_path / "lich", LichScript())
    assert one_lich_line(run(program, "open", "--bogus", state=state)) == (
        "lich: flag provided but not defined: -bogus\n"
    )
    assert world_of(state).sessions == []  # nothing opened


@pytest.mark.parametrize("args", [
    ("sessions", "--json"), OPEN, ("close", "session-2-9f81"), ("control", "session-2-9f81", "abort"),
])
@pytest.mark.parametrize("where", ["unset", "missing", "empty"])
def test_without_state_no_lich_is_running(program: str, tmp_path: Path, args: tuple[str, ...], where: str) -> None:
    env = dict(SESSION)
    if where != "unset":
        directory = tmp_path / "state"
        if where == "empty":
            directory.mkdir()
        env[STATE_ENV] = str(directory)
    assert one_lich_line(run(program, *args, env=env)) == NO_LICH


def test_without_state_help_still_answers(program: str) -> None:
    listing = run(program, "help")
    assert listing.returncode == 0 and listing.stdout.startswith("usage: lich <command>")
    unknown = run(program, "sesions")
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr == (
        'lich: unknown command "sesions" — did you mean "sessions"?\nRun `lich help` for the list.\n'
    )


def test_a_damaged_state_is_one_lich_line(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    Path(state, "world.json").write_text("{not json", encoding="utf-8")
    assert "is damaged" in one_lich_line(run(program, "sessions", "--json", state=state))


def test_a_clock_that_is_not_a_number_is_one_lich_line(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    done = run(program, *OPEN, env={**SESSION, "FAKE_LICH_NOW_MS": "soon"}, state=state)
    assert "FAKE_LICH_NOW_MS" in one_lich_line(done)


# --- one consistent lich across calls ------------------------------------------------------------

SCRIPT = LichScript(
    opens=(OpenScript(report=ReportScript(after_ms=5000, text="Fixed: the cookie was stale.")),
           OpenScript(delivery="answered", answer="42", ms=300)),
    stops={"refuses-9f85": StopScript(exit=1, stderr="lich: it is busy")},
)

#: (virtual ms, argv after the command name); every line runs both in-process and as fake-lich.
SEQUENCE: list[tuple[int, tuple[str, ...]]] = [
    (0, OPEN),
    (10, ("open", "--kind", "claude", "--subagent", "--prompt=-starts with a dash", "--json")),
    (20, ("open", "--kind", "claude", "--subagent", "--worktree", "subagent/fix-ab12", "--base", "main",
          "--prompt", "Fix it", "--json")),
    (30, ("open", "--kind", "claude", "--prompt", "x" * 9000, "--json")),
    (40, ("open", "--kind", "claude", "--subagent", "--prompt", "Refuse", "--json")),
    (50, ("open", "--subagent", "--project", "app", "--prompt", "p")),
    (100, ("sessions", "--json")),
    (110, ("sessions",)),
    (6000, ("sessions", "--json")),
    (6020, ("control", "subagent/fix-ab12", "abort")),
    (6030, ("close", "subagent/fix-ab12")),
    (6040, ("close", "--worktree", "keep", "subagent/fix-ab12")),
    (6050, ("close", "refuses-9f85")),
    (6060, ("close", "nobody")),
    (6080, ("version", "--json")),  # not answered by this fake: the unknown-command text
    (6090, ("help", "open")),
    (6100, ("open", "-h")),
]


def test_successive_calls_see_one_lich_exactly_as_the_model(program: str, tmp_path: Path) -> None:
    model = LichWorld(SCRIPT)
    state = create_state(tmp_path / "lich", SCRIPT)
    for now, args in SEQUENCE:
        expected = model.run([BIN, *args], SESSION, now)
        done = run(program, *args, env={**SESSION, "FAKE_LICH_ARGV0": BIN}, state=state, now=now)
        assert (done.stdout, done.stderr, done.returncode) == (expected.stdout, expected.stderr,
                                                               expected.exit_code), (now, args)
    assert world_of(state).to_json() == model.to_json()  # the notes too: one world, on disk


def test_the_command_name_defaults_to_how_it_was_called(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    run(program, *OPEN, state=state, now=0)
    run(program, *OPEN, env={**SESSION, "FAKE_LICH_ARGV0": BIN}, state=state, now=0)
    assert [s.bin for s in world_of(state).sessions] == [program, BIN]  # the nudge note names it


def test_without_a_virtual_clock_lich_time_is_real_ms_since_the_state_was_made(tmp_path: Path) -> None:
    """What the program answers a call with (``run_command``, in this process): with no FAKE_LICH_NOW_MS, the
    wall clock's ms since the state was made, read here from a frozen clock moved by hand."""
    # 2**30 s after the epoch: there freezegun's float seconds, times 1e9, are these whole ms exactly
    with freeze_time(datetime.fromtimestamp(2**30, UTC)) as clock:
        state = create_state(tmp_path / "lich", LichScript())
        clock.tick(timedelta(milliseconds=1250))
        env = {k: v for k, v in _env({**SESSION, STATE_ENV: state}).items() if k != NOW_ENV}
        run_command([BIN, *OPEN], env)
        clock.tick(timedelta(milliseconds=750))
        run_command([BIN, *OPEN], env)
    assert [s.opened_at for s in world_of(state).sessions] == [1250, 2000]


def test_an_open_of_a_listed_call_counts_from_the_call_and_takes_its_turn(tmp_path: Path) -> None:
    """FAKE_LICH_CALLS: a real-time caller names each task's call time and turn. The open lives from the
    call (its report's after_ms counts from there, as the scenario does), and a later call's open that
    arrives first waits until the earlier one has opened, so ids go by call."""
    import threading

    from agent_cards_simulator.lich.program import CALLS_ENV

    state = create_state(tmp_path / "lich", LichScript(default_open=OpenScript(report=ReportScript(9000, "Done."))))
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps({"Second": {"ms": 40, "turn": 1}, "First": {"ms": 30, "turn": 0}}), encoding="utf-8")
    env = {**_env({**SESSION, STATE_ENV: state}), CALLS_ENV: str(calls), NOW_ENV: "5000"}
    second = threading.Thread(target=run_command, args=([BIN, *OPEN[:5], "Second", "--json"], env))
    second.start()  # waits for its turn: the first call's open has not come yet
    run_command([BIN, *OPEN[:5], "First", "--json"], env)
    second.join(10)
    world = world_of(state)
    assert [(s.id, s.opened_at, s.answer_at) for s in world.sessions] == [("9f81", 30, 9030), ("9f82", 40, 9040)]
    run_command([BIN, *OPEN[:5], "Unlisted", "--json"], env)  # not a listed call: the clock as ever
    assert world_of(state).sessions[-1].opened_at == 5000


@pytest.mark.parametrize("count", [8, 32])
def test_concurrent_opens_neither_lose_nor_duplicate_a_session(program: str, tmp_path: Path, count: int) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    env = _env({**SESSION, STATE_ENV: state})
    procs = [
        subprocess.Popen([program, "open", "--kind", "claude", "--subagent", "--prompt", f"task {n}", "--json"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(count)
    ]
    answers = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert (proc.returncode, stderr) == (0, ""), stderr
        answers.append(json.loads(stdout))
    ids = {a["id"] for a in answers}
    assert len(ids) == count
    assert len({a["label"] for a in answers}) == count and len({a["delivery"]["ticket"] for a in answers}) == count
    listed = run(program, "sessions", "--json", state=state)
    assert {row["id"] for row in json.loads(listed.stdout)} == ids
    assert {s.id for s in world_of(state).sessions} == ids


# --- what the replay reads: the report, a hang, a real sleep ----------------------------------------


def _with_report(program: str, args: Sequence[str], state: str, extra: Mapping[str, str] | None = None,
                 ) -> tuple[subprocess.Popen[str], dict[str, object], float]:
    """Start fake-lich with a report pipe; the process, its report, and how long the report took."""
    read_end, write_end = os.pipe()
    env = _env({**SESSION, STATE_ENV: state, "FAKE_LICH_NOW_MS": "0", "FAKE_LICH_REPORT_FD": str(write_end),
                **(extra or {})})
    started = time.monotonic()
    proc = subprocess.Popen([program, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            pass_fds=(write_end,), start_new_session=True)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as report:
        data = json.loads(report.read())
    return proc, data, time.monotonic() - started


def test_the_report_gives_the_virtual_duration(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript(default_open=OpenScript(ms=1234)))
    proc, report, _ = _with_report(program, OPEN, state)
    stdout, _ = proc.communicate(timeout=60)
    assert report == {"ms": 1234, "hang": False, "child": None}
    assert proc.returncode == 0 and json.loads(stdout)["delivery"]["status"] == "pending"
    proc, report, _ = _with_report(program, ("sessions", "--json"), state)
    proc.communicate(timeout=60)
    assert report == {"ms": 30, "hang": False, "child": None}


def test_a_hung_open_saves_reports_and_sleeps_with_its_child(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript(default_open=OpenScript(hang=True)))
    proc, report, _ = _with_report(program, OPEN, state)
    try:
        assert report["hang"] is True and isinstance(report["child"], int)
        child = report["child"]
        assert len(world_of(state).sessions) == 1  # the session IS opened
        time.sleep(0.3)
        assert proc.poll() is None and alive(child)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    until("the open's child gone", lambda: not alive(child), 5, every=0.02)


def test_a_real_sleep_comes_after_the_report(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript(default_open=OpenScript(ms=700)))
    proc, report, _ = _with_report(program, OPEN, state, {"FAKE_LICH_REAL_SLEEP": "1"})
    reported = time.monotonic()
    stdout, _ = proc.communicate(timeout=60)
    assert time.monotonic() - reported >= 0.65  # the world was saved and reported before the sleep
    assert report["ms"] == 700 and proc.returncode == 0 and json.loads(stdout)["label"] == "Session 2"


def test_a_slow_sessions_read_really_takes_its_time(program: str, tmp_path: Path) -> None:
    """A real-time caller (the conformance run) sees a lich that lists slowly as slow: the read's scripted
    ``sessions_ms`` is slept, as an open's ms is."""
    state = create_state(tmp_path / "lich", LichScript(sessions_ms=700))
    proc, report, _ = _with_report(program, ("sessions", "--json"), state, {"FAKE_LICH_REAL_SLEEP": "1"})
    reported = time.monotonic()
    stdout, _ = proc.communicate(timeout=60)
    assert time.monotonic() - reported >= 0.65
    assert report["ms"] == 700 and proc.returncode == 0 and json.loads(stdout) == []


# --- start-up ----------------------------------------------------------------------------------------


def test_fake_lich_imports_only_what_a_call_needs() -> None:
    probe = "import sys, agent_cards_simulator.lich.program; print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    modules = set(json.loads(done.stdout.replace("'", '"')))
    loaded = {m.split(".")[0] for m in modules}
    assert not loaded & {"yaml", "asyncio", "subprocess", "tempfile"}, loaded
    # Of the mod, only the fast JSON and the records all share (standard library only): nothing of its rules
    # or texts.
    assert {m for m in modules if m.split(".")[0] == "agent_cards"} == {
        "agent_cards", "agent_cards.quick_json", "agent_cards.record"
    }
    assert Path(str(agent_cards_simulator.__file__)).read_text(encoding="utf-8") == ""


def test_create_state_starts_a_fresh_lich(tmp_path: Path) -> None:
    state = create_state(tmp_path / "nested" / "lich", SCRIPT)

    def look(s: State) -> dict[str, object]:
        return s.world.to_json()

    assert transact(state, look) == LichWorld(SCRIPT).to_json()


# --- a state it cannot use (its world deleted, or not a readable file) ------------------------------


def test_a_deleted_world_is_refused_loudly_and_never_gives_an_id_out_again(program: str, tmp_path: Path) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    first = run(program, *OPEN, state=state, now=0)
    assert first.returncode == 0 and "9f81" in first.stdout
    Path(state, "world.json").unlink()
    for _ in range(2):  # every call, not only the first: the ids it gave out are lost for good
        line = one_lich_line(run(program, *OPEN, state=state, now=10))
        assert "no world.json" in line and "recreate the state" in line


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "deep", "garbage"])
def test_an_unusable_world_is_set_aside_and_refused_without_blocking(program: str, tmp_path: Path, kind: str) -> None:
    state = create_state(tmp_path / "lich", LichScript())
    world = Path(state, "world.json")
    world.unlink()
    if kind == "fifo":
        os.mkfifo(world)  # a blocking open would hang until run()'s timeout fails the test
    elif kind == "dev-zero":
        world.symlink_to("/dev/zero")
    elif kind == "folder":
        world.mkdir()
    elif kind == "deep":
        world.write_text("[" * 100_000, encoding="utf-8")
    else:
        world.write_text("{not json", encoding="utf-8")
    started = time.monotonic()
    line = one_lich_line(run(program, *OPEN, state=state, now=0))
    assert time.monotonic() - started < 30
    assert "set aside as" in line and "recreate the state" in line
    assert len(list(Path(state).glob("world.json.unusable-*"))) == 1
    assert "no world.json" in one_lich_line(run(program, "sessions", "--json", state=state, now=0))
