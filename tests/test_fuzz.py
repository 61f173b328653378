"""``agent-cards fuzz``: the writer, the invariants, a seeded run, and a violation written as a scenario."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agent_cards import lich_calls, taken
from agent_cards.engine import Event, HookResult, Host, Next, ProcessResult
from agent_cards.host_contract import OUTPUT_CAP
from agent_cards.mod import AgentCards, Decided
from agent_cards.state import Worker
from agent_cards_simulator.fuzz import command, engine, writer
from agent_cards_simulator.fuzz.engine import Found, Fuzz, check
from agent_cards_simulator.fuzz.generate import QUIET_TAIL
from agent_cards_simulator.fuzz.invariants import Violation
from agent_cards_simulator.fuzz.writer import scenario_of
from agent_cards_simulator.scenario.files import read_checked
from agent_cards_simulator.scenario.replay import replay
from agent_cards_simulator.scenario.writer import Repeat, to_yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own_example_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The fuzz's example database in a folder of the test's own, never the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))

#: A sessions list nested deeper than json's parser goes on every Python the project supports: it
#: raises RecursionError from about 1,000 levels on 3.11 (the recursion limit), 1,500 on 3.12 and
#: 10,000 on 3.13 (the C recursion limit); less deep, 3.12 and 3.13 give a ValueError.
DEEP_LIST: dict[str, Any] = {
    "title": "t",
    "clauses": ["TAKE-TYPE"],
    "lich": {"lists": [{"from": 0, "until": 60_000, "stdout": Repeat("[", 30_000), "exit": 0}]},
    "steps": [{"call": {"description": "d", "prompt": "p"}}, {"wait": 12_000}],
}


def test_the_writer_writes_what_the_reader_reads() -> None:
    data = {"title": "t", "clauses": ["TAKE-TYPE"],
            "steps": [{"call": {"description": "d", "prompt": Repeat("é", 3, then="x"), "n": float("nan")}},
                      "esc", {"at": 5, "reload": None}, {"wait": 1}]}
    text = to_yaml(data)
    assert "!repeat {text: é, times: 3, then: x}" in text
    scenario = scenario_of(data)
    assert len(scenario.steps) == 4


def test_a_case_the_reader_refuses_is_the_writer_s_violation_located_in_the_case(tmp_path: Path) -> None:
    violation = check({"title": "t", "clauses": ["TAKE-TYPE"], "steps": [{"wiat": 1}]})
    assert violation is not None and violation.kind == "writer"
    assert violation.message.startswith("the written scenario is not valid: <fuzz>:4: "), violation.message


def test_a_case_is_written_into_a_folder_made_for_it_and_again_over_itself(tmp_path: Path) -> None:
    data = {"title": "t", "clauses": ["TAKE-TYPE"], "steps": [{"call": {"description": "d", "prompt": "p"}}]}
    path = tmp_path / "new" / "deeper" / "case.yaml"
    for _ in range(2):
        assert writer.write(data, path) == path
        assert read_checked(path).steps == scenario_of(data).steps


def test_a_seeded_run_is_clean_and_reproducible() -> None:
    first, second = Fuzz(11, progress=False), Fuzz(11, progress=False)
    drawn: list[list[str]] = [[], []]
    for fuzz, out in ((first, drawn[0]), (second, drawn[1])):
        original = engine.examine

        def spy(data: dict[str, Any], out: list[str] = out, original: Any = original) -> engine.Checked:
            out.append(to_yaml(data))
            result: engine.Checked = original(data)
            return result

        engine.examine = spy
        try:
            assert fuzz.run(20, chunk=8) is None  # three hypothesis runs, each seeded from the one seed
        finally:
            engine.examine = original
    assert drawn[0] == drawn[1] and len(drawn[0]) == 20
    assert len(set(drawn[0][:8]) & set(drawn[0][8:])) <= 2  # the later runs draw other cases than the first


def _held_examples() -> int:
    """hypothesis's results of examples still alive (each run keeps its own until it ends)."""
    gc.collect()
    return sum(type(o).__name__ == "ConjectureResult" for o in gc.get_objects())


def test_a_long_fuzz_holds_the_examples_of_one_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hypothesis run keeps every example it drew until it ends: one run of the whole fuzz grew by about
    0.09 MB a case. Drawn as runs of ``chunk`` cases, what is held stops growing after the first."""
    held: dict[int, int] = {}
    original = engine.examine
    fuzz = Fuzz(14, progress=False, examples=False)

    def spy(data: dict[str, Any]) -> engine.Checked:
        if fuzz.cases in (24, 48):
            held[fuzz.cases] = _held_examples()
        result: engine.Checked = original(data)
        return result

    monkeypatch.setattr(engine, "examine", spy)
    assert fuzz.run(48, chunk=10) is None
    assert 0 < held[24] <= 12 and held[48] <= 12, held  # one run's, not the 24 and 48 drawn so far


def _old_listed_states(result: ProcessResult) -> dict[str, Any] | None:  # once: a ValueError only, not a deep nest
    if result.exit_code != 0:
        return None
    try:
        listed = json.loads(result.stdout)
    except ValueError:
        return None
    return {str(p.get("name")): p.get("state") for p in listed if isinstance(p, dict)} if isinstance(listed, list) \
        else None


def test_the_deep_list_is_clean_now_and_was_a_mod_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert check(DEEP_LIST) is None
    monkeypatch.setattr(lich_calls, "listed_states", _old_listed_states)
    violation = check(DEEP_LIST)
    assert violation is not None and violation.kind == "mod-report" and "RecursionError" in violation.message
    path = Fuzz(3, progress=False).write(Found(DEEP_LIST, violation), tmp_path)
    result = replay(read_checked(path))  # the written file fails for the same reason
    assert not result.passed and any("RecursionError" in f for f in result.failures)


def test_a_case_the_bench_itself_fails_on_is_written_without_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """A ``replay-failed`` violation is a replay that raises: writing its file replays it once more, and that
    raise is the reason the file keeps, not a traceback out of ``agent-cards fuzz``."""
    def broken(scenario: Any, *args: Any) -> Any:
        raise RuntimeError("the bench broke")

    monkeypatch.setattr(engine, "replay", broken)
    violation = Violation("replay-failed", "RuntimeError: the bench broke")
    path = Fuzz(3, progress=False).write(Found(DEEP_LIST, violation), tmp_path)
    assert path.is_file() and "replay-failed" in path.name


# -- planted bugs: the fuzz must find each, shrink it and write a file that fails for the same reason ---------

_original_spawn = AgentCards.agent_spawn
_original_decide = taken.Opening.decide


async def _counts_an_answered_call(self: AgentCards, host: Host, e: Event, next: Next) -> HookResult:
    """A count bug: a call lich answered within its open is counted as a worker (the footer counts more
    workers than were launched)."""
    result = await _original_spawn(self, host, e, next)
    key = str(e.get("tool_use_id") or "")
    call = self._calls.get(key)
    if isinstance(call, Decided) and isinstance(call.decision, taken.Completed):
        self._track(host, Worker(f"answered-{key}", "answered", "", True), str(host.env.get("LICH_BIN")),
                    counted=False)
    return result


def _unanswered_goes_native(self: taken.Opening, printed: ProcessResult | BaseException, now_ms: int, *,
                            esc: bool = False) -> taken.Native | taken.Deny | taken.Answer:
    """An answer after lich had the task that goes native: an ``unanswered`` delivery read as a failed open."""
    decision = _original_decide(self, printed, now_ms, esc=esc)
    if isinstance(printed, ProcessResult) and '"status":"unanswered"' in printed.stdout:
        return taken._saying(self.call.description, "toast.open_failed", reason="unanswered")
    return decision


#: (the bug, where it is planted, seed, the kind of violation, what the written file's replay says); each
#: seed finds its bug within the run's cases on Python 3.11, 3.12 and 3.13 alike (the deep list's, a nest
#: deeper than DEEP_LIST's comment says)
PLANTED = {
    "a deep sessions list raises in every poll": (
        (lich_calls, "listed_states", _old_listed_states), 2, "mod-report", "RecursionError"),
    "an answered call is counted": (
        (AgentCards, "agent_spawn", _counts_an_answered_call), 4, "count", "no footer"),
    "an unanswered delivery goes native": (
        (taken.Opening, "decide", _unanswered_goes_native), 0, "native-after-lich", "no native"),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_the_fuzz_finds_a_planted_bug(bug: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (where, name, planted), seed, kind, says = PLANTED[bug]
    monkeypatch.setattr(where, name, planted)
    assert command.run(300, seed, tmp_path, progress=False) == 1
    out = capsys.readouterr().out
    assert f"a violation ({kind}) at case" in out and "shrunk over the" in out
    [path] = tmp_path.glob(f"fuzz-{seed}-{kind}.yaml")
    scenario = read_checked(path)
    assert len(scenario.steps) <= 3 + len(QUIET_TAIL)  # shrunk: a call and a wait (or so), then the quiet tail
    result = replay(scenario)  # the written file fails for the same reason
    assert not result.passed and any(says in f for f in result.failures), result.failures
    monkeypatch.undo()  # the bug fixed, the same file passes: a regression scenario as it stands
    assert replay(read_checked(path)).passed


def test_an_invariant_the_format_can_say_is_written_as_an_expectation(tmp_path: Path) -> None:
    violation = Violation("answers", "the call toolu_0001 got 2 answers, not one",
                          ({"count": 1, "answer": {"call": "toolu_0001"}},))
    data = {"title": "t", "clauses": ["TAKE-TYPE"], "steps": [{"wait": 1}]}
    path = Fuzz(3, progress=False).write(Found(data, violation), tmp_path)
    result = replay(read_checked(path))
    assert any("expected exactly 1 answer event" in f for f in result.failures)


def test_the_command_line() -> None:
    def fuzz(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agent_cards.cli", "fuzz", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, check=False)

    assert fuzz("--help").stdout.startswith("usage: agent-cards fuzz")
    assert fuzz("--cases", "x").returncode == 2
    done = fuzz("--cases", "5", "--seed", "2", "--out", "unused")
    assert done.returncode == 0 and "5 cases, seed 2" in done.stdout and "no violation" in done.stdout


#: What a short fuzz may hold at its peak: the interpreter, hypothesis, the simulator and a few cases (about 75 MB).
_SHORT_FUZZ_PEAK_KB = 150_000


def test_a_fuzz_from_a_fresh_cache_folder_stays_small(tmp_path: Path) -> None:
    """The first fuzz of a cache folder (a CI machine's, always) peaked at 248 MB for ten cases: hypothesis worked
    out which characters UTF-8 encodes by encoding every code point, for ``st.text()``'s default alphabet. The
    generator names that alphabet by category instead. Measured as the peak of the one child of a fresh process."""
    code = ("import resource, subprocess, sys; subprocess.run([sys.executable, '-m', 'agent_cards.cli', 'fuzz', "
            "'--cases', '10', '--seed', '14', '--out', sys.argv[1]], check=True, capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENT_CARDS_E2E": "0"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True, env=env)
    assert int(done.stdout) < _SHORT_FUZZ_PEAK_KB, f"peak {int(done.stdout)} kB"


def test_without_hypothesis_it_says_how_to_install_it() -> None:
    code = ("import sys; sys.modules['hypothesis'] = None; from agent_cards_simulator.fuzz.command import main; "
            "raise SystemExit(main(['--cases', '1']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2 and done.stderr.strip() == "agent-cards fuzz needs hypothesis: pip install " \
        "'agent-cards[fuzz]'"


# -- memory: a case's long outputs are held once, and only while it runs ------------------------------------

#: A generated case at its heaviest: a worker counted, and every 5 s poll answered by a ``lists`` window with
#: an output just over the host's 4 MiB cut (the generator's largest), for 100 s and the quiet tail.
HUGE_READS: dict[str, Any] = {
    "title": "t",
    "clauses": ["TAKE-TYPE"],
    "lich": {"lists": [{"until": 3_600_000, "stdout": Repeat("xxxxxxxx", OUTPUT_CAP // 8 + 1), "exit": 0}]},
    "steps": [{"call": {"description": "d", "prompt": "p"}}, {"wait": 40_000}, {"wait": 40_000}, {"wait": 20_000},
              *QUIET_TAIL],
}


def test_a_case_that_reads_a_4_mib_output_at_every_poll_holds_it_once() -> None:
    """Each of the 20 reads was cut anew into its own 4 MiB copy, every one kept in the transcript: the
    heaviest cases peaked at 250 MB. Cut once, the case peaks at a few copies of the output, whatever the
    number of reads (traced by tracemalloc: what Python allocated, the same on every run)."""
    events = replay(scenario_of(HUGE_READS)).events
    cut = [e for e in events if e["kind"] == "run" and e["argv"][1:2] == ["sessions"] and e.get("truncated")]
    assert len(cut) >= 20 and all(len(e["stdout"]) == OUTPUT_CAP for e in cut)
    del events, cut
    tracemalloc.start()
    try:
        assert engine.examine(HUGE_READS).violation is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * OUTPUT_CAP, f"{peak / 2**20:.0f} MiB at the peak"


def test_a_case_leaves_nothing_of_its_replay_when_it_returns() -> None:
    """A replay's cycles (the host, its mod, their tasks, each holding the transcript) outlived it, were
    frozen with the rest by the next replay and then sat in the oldest generation until a full collection:
    a row of heavy cases held every transcript at once. They are collected at the replay's end."""
    assert gc.isenabled()
    # Whatever an earlier test froze goes back to the collector (mypy's build freezes what it holds): a
    # replay leaves the collector alone while others' objects are frozen, so this test starts from none.
    gc.unfreeze()
    tracemalloc.start()
    try:
        checked = engine.examine(HUGE_READS)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert checked.violation is None
    assert held < OUTPUT_CAP // 4, f"{held / 2**20:.1f} MiB still held"
