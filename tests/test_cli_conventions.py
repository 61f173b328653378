"""Every command keeps the ecosystem's conventions: ``--`` ends the options, ``-`` is standard input where it
can be, Ctrl-C is one line and 130, a count of 0 is a usage error, ``--help`` does no work, ``-o`` never
overwrites without ``--force``, and nothing lands in the current folder.

Each case runs the command as a real subprocess, as a shell would; a Ctrl-C is a real SIGINT sent once
the command has printed that it started.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_cards_simulator.fuzz.storage import example_folder, hypothesis_folder
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.replay import Replay, replay

ROOT = Path(__file__).resolve().parents[1]
ONE = ROOT / "scenarios" / "deliver" / "pending-shared.yaml"
LOG = ROOT / "tests" / "fixtures" / "sessions" / "print-agent-taskstop.jsonl"

#: ``agent-cards`` as a terminal starts it: Ctrl-C raises KeyboardInterrupt (a test runner's own process may
#: have SIGINT ignored, which its children would inherit).
_AS_A_TERMINAL = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "sys.argv[0] = 'agent-cards'; from agent_cards.cli import entry; entry()")


def _env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env.update(more)
    return env


def agent_cards(*args: str | Path, cwd: Path = ROOT, stdin: str = "", env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_cards.cli", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, encoding="utf-8", check=False, timeout=300,
                          env=env or _env())


# -- `--` and `-` -----------------------------------------------------------------------------------------------


def test_a_file_named_like_an_option_replays_after_double_dash(tmp_path: Path) -> None:
    shutil.copy(ONE, tmp_path / "-x.yaml")
    refused = agent_cards("replay", "-x.yaml", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr == "agent-cards replay: unrecognized arguments: -x.yaml (agent-cards replay --help)\n"
    done = agent_cards("replay", "--json", "--", "-x.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"file":"-x.yaml"')


def test_options_may_come_between_the_files() -> None:
    done = agent_cards("replay", ONE, "--json", ONE)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2


def test_dash_replays_a_scenario_from_standard_input() -> None:
    done = agent_cards("replay", "-", stdin=ONE.read_text(encoding="utf-8"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<stdin>: ") and "[passed]" in done.stdout.splitlines()[0]
    broken = agent_cards("replay", "-", stdin="title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - wiat: 3\n")
    assert broken.returncode == 2
    assert broken.stderr == "<stdin>:4: steps[0]: unknown step 'wiat' (did you mean 'wait'?)\n"


@pytest.mark.parametrize(("args", "why"), [
    (("coverage", "-"), "coverage reads a folder, not standard input (-)"),
    (("import", "-"), "a session log and --sessions are read as files: - (standard input) is not one"),
    (("conform", "-"), "a real run needs its scenario files by name: - (standard input) is not one"),
    (("fuzz", "--out", "-"), "--out takes a folder to write a violation's scenario in, not -"),
])
def test_dash_where_standard_input_makes_no_sense_is_a_usage_error(args: tuple[str, ...], why: str) -> None:
    done = agent_cards(*args)
    assert done.returncode == 2
    assert done.stderr == f"agent-cards {args[0]}: {why} (agent-cards {args[0]} --help)\n"


# -- Ctrl-C ---------------------------------------------------------------------------------------------------------


def _interrupted(args: Sequence[str], started: str, tmp_path: Path) -> tuple[int, str]:
    """Start the command, wait until ``started`` (stdout or stderr) says it is at work, send SIGINT to its
    process group (what a terminal's Ctrl-C does), and give its exit code and stderr."""
    with subprocess.Popen([sys.executable, "-c", _AS_A_TERMINAL, *args], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True,
                          env=_env(XDG_CACHE_HOME=str(tmp_path / "cache"))) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        stream = proc.stderr if started == "stderr" else proc.stdout
        first = stream.readline()
        assert first, f"{args} ended before it said it started: {proc.stderr.read()}"
        os.killpg(proc.pid, signal.SIGINT)
        proc.stdout.read()
        err = (first if started == "stderr" else "") + proc.stderr.read()
        return proc.wait(timeout=120), err


@pytest.mark.parametrize("jobs", [["--jobs", "1"], [], ["--processes"]], ids=["one job", "a job per core", "processes"])
def test_ctrl_c_in_replay_is_one_line_with_the_summary_so_far(jobs: list[str], tmp_path: Path) -> None:
    code, err = _interrupted(["replay", *jobs, "scenarios"], "stdout", tmp_path)
    assert code == 130
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    (line,) = err.splitlines()
    assert line.startswith("agent-cards replay: interrupted: ") and " scenarios replayed, " in line


def test_a_ctrl_c_a_finalizer_swallowed_still_ends_the_replay_as_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python runs the Ctrl-C handler wherever the interrupt lands, a finalizer too (a weakref callback of an
    object a replay frees), and there its KeyboardInterrupt is only reported as unraisable: the command goes on.
    It still ends as interrupted once the scenario under way is printed."""
    from agent_cards import arguments, cli
    from agent_cards_simulator import commands

    monkeypatch.setattr(arguments, "_PRESSED", [])
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # the handler silences it: put it back after
    replayed: list[str] = []

    class Freed:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # bytecode enough for the handler to run here, inside the finalizer
                pass

    def replay_once(scenario: Scenario) -> Replay:
        replayed.append(scenario.file)
        if len(replayed) == 2:
            Freed()
        return replay(scenario)

    monkeypatch.setattr(commands, "run_replay", replay_once)
    # As a terminal starts it: Python's own handler, which the command takes over (another test, or a plugin,
    # may have left one of its own, and a handler someone else set stays theirs).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = cli.main(["replay", "--jobs", "1", "scenarios"])
    finally:
        signal.signal(signal.SIGINT, previous)
    err = capsys.readouterr().err
    assert code == 130, err
    assert err.startswith("agent-cards replay: interrupted: 2 of ") and len(replayed) == 2, err


def test_ctrl_c_in_fuzz_is_one_line_with_the_case_count_and_the_seed(tmp_path: Path) -> None:
    code, err = _interrupted(["fuzz", "--cases", "5000", "--seed", "7", "--out", str(tmp_path)], "stderr", tmp_path)
    assert code == 130
    assert "Traceback" not in err
    start, line = err.splitlines()
    assert start == "fuzz: 5000 cases to generate, seed 7"
    assert line.startswith("agent-cards fuzz: interrupted: ") and " of 5000 cases run, seed 7" in line


# -- counts, -o, --help ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cases", ["0", "-1", "x", "1.5"])
def test_a_case_count_below_one_or_not_a_number_is_a_usage_error(cases: str) -> None:
    done = agent_cards("fuzz", "--cases", cases)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (f"agent-cards fuzz: argument --cases: expected a whole number, 1 or more, not {cases!r} "
                           "(agent-cards fuzz --help)\n")
    helped = agent_cards("fuzz", "--help").stdout
    assert "\n  1  a violation" in helped and "\n  2  the command line is wrong" in helped


def test_import_o_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "s.yaml"
    out.write_text("mine\n", encoding="utf-8")
    refused = agent_cards("import", LOG, "-o", out)
    assert refused.returncode == 2
    assert refused.stderr == f"agent-cards import: {out} exists: give --force to overwrite it\n"
    assert out.read_text(encoding="utf-8") == "mine\n"
    forced = agent_cards("import", LOG, "-o", out, "--force")
    assert forced.returncode == 0, forced.stderr
    assert out.read_text(encoding="utf-8").startswith("title: ")


def test_import_o_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "nowhere" / "s.yaml"
    done = agent_cards("import", LOG, "-o", out)
    assert done.returncode == 2
    assert done.stderr == f"agent-cards import: no folder {out.parent} to write s.yaml in\n"


def test_sessions_that_are_not_utf8_are_one_line(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions.json"
    sessions.write_bytes(b"[\xff]")
    done = agent_cards("import", LOG, "--sessions", sessions)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"{sessions}:1: not UTF-8") and done.stderr.count("\n") == 1


#: Every command line and ``python -m`` main of the project.
HELPED = [
    [sys.executable, "-m", "agent_cards.cli", name, "--help"]
    for name in ("replay", "coverage", "fuzz", "conform", "import", "mutate", "hook")
] + [
    [sys.executable, "-m", module, "--help"]
    for module in ("bench", "bench.bridge", "bench.instructions", "agent_cards_simulator.scenario.schema",
                   "agent_cards.bridge", "agent_cards.cli")
]


@pytest.mark.parametrize("argv", HELPED, ids=lambda argv: " ".join(argv[2:]))
def test_every_help_answers_without_doing_the_work(argv: list[str], tmp_path: Path) -> None:
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60,
                          env=_env(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ") and done.stderr == ""
    assert "load average" not in done.stdout  # the bench's first line once it measures
    assert list(tmp_path.iterdir()) == []


# -- the current folder ---------------------------------------------------------------------------------------------


def test_nothing_is_written_to_the_current_folder(tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    shutil.copy(ONE, work / "one.yaml")
    env = _env(XDG_CACHE_HOME=str(cache))
    # (12 cases: a text is drawn, and hypothesis keeps its Unicode tables)
    fuzzed = agent_cards("fuzz", "--cases", "12", "--seed", "0", cwd=work, env=env)
    assert fuzzed.returncode == 0, fuzzed.stderr
    for args in (("replay", "one.yaml"), ("replay", "--processes", "one.yaml"), ("coverage", ROOT / "scenarios")):
        assert agent_cards(*args, cwd=work, env=env).returncode == 0
    assert sorted(p.name for p in work.iterdir()) == ["one.yaml"]  # no .hypothesis/, nothing else
    assert hypothesis_folder(env).is_dir()  # hypothesis's own files went to the cache folder


def test_the_cache_folder_follows_the_xdg_rules(tmp_path: Path) -> None:
    home = os.path.expanduser("~")
    assert example_folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "agent-cards" / "fuzz-examples"
    for unset in ({}, {"XDG_CACHE_HOME": ""}, {"XDG_CACHE_HOME": "relative/cache"}):
        assert example_folder(unset) == Path(home) / ".cache" / "agent-cards" / "fuzz-examples"


def test_a_ctrl_c_before_the_loop_takes_a_replay_leaves_no_coroutine_unawaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The race the one-job replay met under load: the interrupt lands as the loop is about to start."""
    import gc
    import warnings

    from agent_cards_simulator.clock import VirtualEventLoop
    from agent_cards_simulator.scenario import replay as replay_module
    from agent_cards_simulator.scenario.files import read_checked

    def interrupted_at_once(self: VirtualEventLoop, work: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(VirtualEventLoop, "run_until_complete", interrupted_at_once)
    scenario = read_checked(ROOT / "scenarios" / "taskstop.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            replay_module.replay(scenario)
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []


def test_a_ctrl_c_mid_replay_leaves_no_task_pending(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Interrupted while the mod's hook runs: the replay's tasks are ended, not reported destroyed."""
    import gc

    from agent_cards.mod import AgentCards
    from agent_cards_simulator.scenario import replay as replay_module
    from agent_cards_simulator.scenario.files import read_checked

    async def interrupted(*_: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(AgentCards, "agent_spawn", interrupted)
    scenario = read_checked(ROOT / "scenarios" / "taskstop.yaml")
    with caplog.at_level("ERROR", logger="asyncio"), pytest.raises(KeyboardInterrupt):
        replay_module.replay(scenario)
    gc.collect()
    assert not [r.getMessage() for r in caplog.records if "destroyed" in r.getMessage()]
