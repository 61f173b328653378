"""The two replay modes agree: in-process (the fake lich as a model, a scripted git) and ``--processes``
(``fake-lich`` and git as real processes). Every shipped scenario is replayed both ways and the
transcripts compared, with the differences docs/scenarios.md lists evened out by ``comparable``.
Scratch scenarios cover what the shipped ones may not: a hang, Esc, git's failures, parallel opens.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cards_claude_driver.waits import until
from agent_cards_simulator.runners.processes import ProcessRuns, alive, comparable, replay_processes
from agent_cards_simulator.scenario.files import read_checked, scenario_files
from agent_cards_simulator.scenario.reader import Scenario, read
from agent_cards_simulator.scenario.replay import Replay, replay

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = scenario_files([ROOT / "scenarios"])


def shipped(path: Path) -> Scenario:
    return read_checked(path)


def scratch(text: str) -> Scenario:
    return read("scratch.yaml", text=text)


def assert_same(processes: Replay, in_process: Replay) -> None:
    real, model = comparable(processes), comparable(in_process)
    for index, (a, b) in enumerate(zip(real["events"], model["events"], strict=False)):
        assert a == b, f"event {index} differs:\n  processes:  {a}\n  in-process: {b}"
    assert len(real["events"]) == len(model["events"])
    assert real == model


def gone(pid: int, within_s: float = 5.0) -> bool:
    return until(f"pid {pid} gone", lambda: not alive(pid), within_s, every=0.02)


def test_scenarios_are_shipped() -> None:
    assert SHIPPED, "no scenario under scenarios/"


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT / "scenarios")) for p in SHIPPED])
def test_a_shipped_scenario_replays_alike_with_real_processes(path: Path) -> None:
    scenario = shipped(path)
    assert_same(replay_processes(scenario), replay(scenario))


# --- scratch scenarios ---------------------------------------------------------------------------------

HANG = """
title: lich open never returns
clauses: [SCRATCH]
lich:
  open: {hang: true}
steps:
  - call: {description: Fix the login bug, prompt: Find why login fails and fix it}
expect:
  - run: {t: 0, argv: {contains: open}, error: {contains: still running after 120000ms}, ms: 120000}
"""

HANG_ESC = """
title: Esc while a hung lich open runs
clauses: [SCRATCH]
lich:
  open: {hang: true}
steps:
  - call: {description: Fix the login bug, prompt: Find why login fails and fix it}
    esc_after: 1500
expect:
  - answer: {error: {contains: "The user doesn't want to proceed"}, t: 1500}
  - run: {argv: {contains: open}, error: {contains: still running when the scenario ended}, ms: 1500}
"""


@pytest.mark.parametrize("text", [HANG, HANG_ESC], ids=["timeout", "esc"])
def test_a_hung_lich_is_killed_for_real_with_its_child(text: str) -> None:
    scenario = scratch(text)
    with ProcessRuns() as runs:
        result = replay(scenario, executor=runs)
        (executor,) = runs.executors
        (hung,) = executor.hung
        assert hung.child is not None
        # killed at the virtual timeout, or as the scenario ends after Esc (Esc itself leaves the open running)
        assert gone(hung.pid) and gone(hung.child)
        scratch_dir = executor.scratch
    assert result.passed, result.failures
    assert not scratch_dir.exists()
    assert_same(result, replay(scenario))


async def test_a_lich_left_running_is_stopped_with_the_replay() -> None:
    """A hung call still waiting when the scenario is torn down is killed by the cleanup."""
    import asyncio

    from agent_cards_simulator.clock import VirtualEventLoop
    from agent_cards_simulator.host.chain import AbortSignal
    from agent_cards_simulator.lich.world import LichWorld

    scenario = scratch(HANG)
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)  # tests/conftest.py
    with ProcessRuns() as runs:
        executor = runs(scenario, LichWorld(scenario.lich), loop)
        argv = ["/opt/lich/bin/lich", "open", "--kind", "claude", "--subagent", "--prompt", "p", "--json"]
        call = asyncio.ensure_future(executor.execute(argv, scenario.env, 120_000, AbortSignal()))
        await asyncio.sleep(1)  # virtual: the call hangs on
        assert not call.done()
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        (hung,) = executor.hung
    assert hung.child is not None and gone(hung.pid) and gone(hung.child)


GIT = """
title: git as the scenario says
clauses: [SCRATCH]
session:
  git: {git}
steps:
  - call: {{description: Bisect the regression, prompt: Find the commit that broke it, isolation: worktree}}
"""


@pytest.mark.parametrize("git", [
    "main", "feature/search", "detached", "missing", "{exit: 128}", "{exit: 1, stderr: 'fatal: scripted words'}",
])
def test_git_runs_for_real_as_the_scenario_scripts_it(git: str) -> None:
    scenario = scratch(GIT.format(git=git))
    processes = replay_processes(scenario)
    assert_same(processes, replay(scenario))
    (git_run,) = [e for e in processes.events if e["kind"] == "run" and e["argv"][0] == "git"]
    if git == "missing":
        assert git_run["error"].endswith('failed to start: ENOENT: Executable not found in $PATH: "git"')
    elif git.startswith("{"):
        assert git_run["exit"] == 128 and "not a git repository" in git_run["stderr"]  # real git's own words
    else:
        assert git_run["stdout"] == ("" if git == "detached" else f"{git}\n")


def test_a_branch_git_refuses_fails_only_a_replay_that_runs_git() -> None:
    """The scratch repository is made on the first git call: a scenario that never runs git needs none."""
    refused = "session:\n  git: {branch: 'a..b'}\n"
    no_git = scratch(f"title: no git\nclauses: [SCRATCH]\n{refused}steps:\n"
                     "  - call: {description: Fix the login bug, prompt: Find why login fails and fix it}\n")
    result = replay_processes(no_git)
    assert result.passed, result.failures
    assert not [e for e in result.events if e["kind"] == "run" and e["argv"][0] == "git"]
    runs_git = scratch(GIT.format(git="BRANCH").replace("session:\n  git: BRANCH\n", refused))
    result = replay_processes(runs_git)
    assert not result.passed
    assert result.failures[-1] == ("replay --processes: git cannot make a repository on branch 'a..b': "
                                   "fatal: invalid initial branch name: 'a..b'")
    (git_run,) = [e for e in result.events if e["kind"] == "run" and e["argv"][0] == "git"]
    assert git_run["error"].startswith("$.process.run(git) failed to start: git cannot make a repository")


def test_a_missing_lich_fails_to_start_and_no_lich_running_is_lich_s_own_line() -> None:
    for text in ("lich: {installed: false}", "lich: {running: false}", "lich: {subagent: false}"):
        scenario = scratch(f"""
title: which lich
clauses: [SCRATCH]
{text}
steps:
  - call: {{description: Fix the login bug, prompt: Find why login fails and fix it}}
""")
        assert_same(replay_processes(scenario), replay(scenario))


PARALLEL = """
title: eight calls at once
clauses: [SCRATCH]
lich:
  open: {ms: 1000, report: {after: 4000, text: Done.}}
steps:
  - parallel:
""" + "".join(f"      - call: {{description: Task {n}, prompt: Do task {n}}}\n" for n in range(1, 9)) + """
  - until: 12000
"""


def test_eight_parallel_opens_with_real_sleeps_start_together() -> None:
    scenario = scratch(PARALLEL)
    result = replay_processes(scenario, real_sleep=True)
    runs = [e for e in result.events if e["kind"] == "run" and e["argv"][1] == "open"]
    assert [e["t"] for e in runs] == [0] * 8
    assert [e["t"] for e in result.events if e["kind"] == "answer"] == [1000] * 8
    assert len([e for e in result.events if e["kind"] == "note"]) == 8
    assert_same(result, replay(scenario))


# --- the command line ------------------------------------------------------------------------------


def agent_cards(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys; from agent_cards.cli import main; sys.exit(main())", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)


def test_replay_processes_json_passes_on_the_shipped_scenarios() -> None:
    done = agent_cards("replay", "--processes", "--json", "scenarios")
    results: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [f"{r['file']}: {r['failures']}" for r in results if not r["passed"]]
    assert not failed, "\n".join(failed)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(results) == len(SHIPPED)


def test_replay_processes_exit_codes_are_the_in_process_ones(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(GIT.format(git="main"), encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(GIT.format(git="main") + "expect:\n  - no run\n", encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text("title: no steps\nclauses: [SCRATCH]\n", encoding="utf-8")
    for mode in ((), ("--processes",)):
        assert agent_cards("replay", *mode, str(good)).returncode == 0
        assert agent_cards("replay", *mode, "--json", str(bad)).returncode == 1
        refused = agent_cards("replay", *mode, str(broken))
        assert refused.returncode == 2 and "steps" in refused.stderr and "Traceback" not in refused.stderr


# --- speed: parallel lich calls start side by side, and change the world in the order made ---------

_TIMED = """
import subprocess, sys, time
log, command = sys.argv[1], sys.argv[2:]
started = time.monotonic_ns()
code = subprocess.call(command, pass_fds=tuple(int(v) for k, v in __import__("os").environ.items()
                                               if k in ("FAKE_LICH_REPORT_FD", "FAKE_LICH_TURN_FD")))
with open(log, "a") as out:
    out.write(f"{started} {time.monotonic_ns()}\\n")
sys.exit(code)
"""


def test_parallel_opens_start_before_any_ends_and_answer_in_the_order_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each fake-lich records when it started and ended: all eight start before the first one ends
    (their starts overlap: none waits for another's report), and the transcript is the in-process one."""
    from agent_cards_simulator.runners import processes

    log = tmp_path / "times"
    made = processes.fake_lich_command

    def timed(program: str) -> list[str]:
        return [sys.executable, "-c", _TIMED, str(log), *made(program)]

    monkeypatch.setattr(processes, "fake_lich_command", timed)
    scenario = scratch(PARALLEL)
    result = replay_processes(scenario, real_sleep=True)
    spans = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    opens = [e for e in result.events if e["kind"] == "run" and e["argv"][1] == "open"]
    assert len(opens) == 8
    starts, ends = sorted(s for s, _ in spans[:8]), sorted(e for _, e in spans)
    assert max(starts) < min(ends), "a fake-lich started only after another one had ended"
    assert [e["call"] for e in result.events if e["kind"] == "answer"] == [f"toolu_000{n}" for n in range(1, 9)]
    assert_same(result, replay(scenario))
