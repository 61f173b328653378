"""``agent-cards`` as a person meets it: help on every command, paths that name nothing, a closed pipe.

Each case runs the command as a real subprocess, as a shell would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ONE = ROOT / "scenarios" / "deliver" / "pending-shared.yaml"


def agent_cards(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_cards.cli", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, encoding="utf-8", check=False, timeout=120,
    )


@pytest.mark.parametrize("command", ["replay", "coverage"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_command_has_help_with_its_options_and_exit_codes(command: str, flag: str) -> None:
    done = agent_cards(command, flag)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"usage: agent-cards {command} ")
    assert "--json" in done.stdout
    assert "exit status:" in done.stdout
    for code in ("0", "1", "2"):
        assert f"\n  {code}  " in done.stdout


def test_help_and_version_of_the_command_itself() -> None:
    helped = agent_cards("--help")
    assert helped.returncode == 0
    assert "agent-cards replay ...   (agent-cards replay --help)" in helped.stdout
    version = agent_cards("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("agent-cards ") and version.stdout.split()[1][0].isdigit()


def test_a_folder_without_scenarios_is_an_error(tmp_path: Path) -> None:
    done = agent_cards("replay", tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"{tmp_path}:1: a folder with no scenario files (*.yaml) in it\n"


def test_a_folder_named_like_a_scenario_is_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    folder = tmp_path / "looks-like.yaml"
    folder.mkdir()
    done = agent_cards("replay", folder)
    assert done.returncode == 2
    assert done.stderr.startswith(f"{folder}:1: a folder with no scenario files")


def test_a_missing_path_is_reported_and_the_other_files_still_replay(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    done = agent_cards("replay", "--json", missing, ONE)
    assert done.returncode == 2
    assert done.stderr == f"{missing}:1: no such file or folder\n"
    replayed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [(r["file"], r["passed"]) for r in replayed] == [(str(ONE), True)]


def test_a_reader_that_stops_early_ends_the_replay_quietly() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "agent_cards.cli", "replay", "scenarios"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does once it has its line
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert err == ""
    assert code == 0


def test_coverage_refuses_an_unknown_option_and_a_missing_folder(tmp_path: Path) -> None:
    option = agent_cards("coverage", "--bogus")
    assert option.returncode == 2
    assert option.stderr == "agent-cards coverage: unrecognized arguments: --bogus (agent-cards coverage --help)\n"
    missing = agent_cards("coverage", tmp_path / "nowhere")
    assert missing.returncode == 1
    assert missing.stderr == f"{tmp_path / 'nowhere'}:1: no such folder\n"
