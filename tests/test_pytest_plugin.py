"""The scenario plugin is inert until a project asks for it, and then replays and snapshots scenarios.

Each case runs pytest for real in a scratch project (a subprocess, so this run's own plugins and
options do not leak into it), with the plugin loaded from its entry point as any project gets it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = (ROOT / "scenarios" / "deliver" / "pending-shared.yaml").read_text(encoding="utf-8")

PROBE = """
import sys

def test_nothing_of_the_bench_was_loaded():
    # (syrupy, where installed, is a pytest plugin of its own and loads itself; the bench adds nothing
    # but the plugin's module and the two empty package files above it)
    ours = ("yaml", "agent_cards", "agent_cards_simulator", "agent_cards_conformance", "agent_cards_claude_driver")
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ours)
    assert loaded == [
        "agent_cards_simulator", "agent_cards_simulator.scenario", "agent_cards_simulator.scenario.pytest_plugin"
    ]
    packages = [sys.modules[name] for name in loaded[:2]]
    assert [open(package.__file__, encoding="utf-8").read() for package in packages] == ["", ""]
"""


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_unrelated_project_collects_no_scenario_and_imports_nothing_of_the_bench(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "looks-like-one.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    done = pytest_in(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("1 passed")


def test_a_project_that_names_its_scenario_folder_replays_and_snapshots_them(tmp_path: Path) -> None:
    ini = "[pytest]\nasyncio_default_fixture_loop_scope = function\nagent_cards_scenarios = cases\n"
    (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "pending.yaml").write_text(SCENARIO, encoding="utf-8")
    clauses = (ROOT / "scenarios" / "clauses.yaml").read_text(encoding="utf-8")
    (tmp_path / "cases" / "clauses.yaml").write_text(clauses, encoding="utf-8")
    first = pytest_in(tmp_path, "--snapshot-update")
    assert first.returncode == 0, first.stdout + first.stderr
    snapshot = tmp_path / "cases" / "__snapshots__" / "pending.json"
    assert snapshot.is_file()
    assert snapshot.read_text(encoding="utf-8") == (
        ROOT / "scenarios" / "deliver" / "__snapshots__" / "pending-shared.json"
    ).read_text(encoding="utf-8")
    again = pytest_in(tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 passed" in again.stdout
    # the snapshot folder is syrupy's, not a folder of scenarios: pytest does not walk it
    (tmp_path / "cases" / "__snapshots__" / "stray.yaml").write_text("title: [unclosed\n", encoding="utf-8")
    # a scenario in a folder below the one named is one, and so is a link placed there (its folder is
    # where it stands); a YAML file beside the folder, or in one whose name only begins like it, is not
    for folder in ("cases/deeper", "casesx", "other"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "also.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / "beside.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / "cases" / "linked.yaml").symlink_to(tmp_path / "other" / "also.yaml")
    listed = pytest_in(tmp_path, "--collect-only")
    collected = sorted(line for line in listed.stdout.splitlines() if "::" in line)
    assert collected == ["cases/deeper/also.yaml::also", "cases/linked.yaml::linked", "cases/pending.yaml::pending"], (
        listed.stdout
    )


def test_a_scenario_folder_set_for_one_run_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "broken.yaml").write_text("title: x\nclauses: []\nsteps:\n  - sleep: 1\n", encoding="utf-8")
    done = pytest_in(tmp_path, "-o", "agent_cards_scenarios=cases")
    assert done.returncode == 1
    assert "cases/broken.yaml:4: " in done.stdout
    assert "During handling" not in done.stdout


def test_a_scenario_without_a_snapshot_says_how_to_make_one(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "new.yaml").write_text(SCENARIO, encoding="utf-8")
    done = pytest_in(tmp_path, "-o", "agent_cards_scenarios=cases")
    assert done.returncode == 1
    assert "cases/new.yaml:1: this scenario has no snapshot yet: read its transcript (agent-cards replay " in (
        done.stdout
    )
    assert "then write the snapshot with: pytest --snapshot-update " in done.stdout
    assert "Snapshot 'new' does not exist" not in done.stdout


def test_a_project_with_its_own_simulator_package_imports_its_own(tmp_path: Path) -> None:
    """The bench is installed under names of its own: a project's ``simulator`` package is the one it gets,
    under ``pytest`` and under ``python -m pytest`` (which puts the project's folder first on the path)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "simulator").mkdir()
    (tmp_path / "simulator" / "__init__.py").write_text("OWN = True\n", encoding="utf-8")
    (tmp_path / "simulator" / "scenario.py").write_text("NAME = 'the project'\n", encoding="utf-8")
    (tmp_path / "test_own.py").write_text(
        "import simulator, simulator.scenario\n\n"
        "def test_own():\n    assert simulator.OWN and simulator.scenario.NAME == 'the project'\n",
        encoding="utf-8",
    )
    module = pytest_in(tmp_path)
    assert module.returncode == 0, module.stdout + module.stderr
    script = subprocess.run(
        [str(Path(sys.executable).parent / "pytest"), "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )
    assert script.returncode == 0, script.stdout + script.stderr
    assert "1 passed" in module.stdout and "1 passed" in script.stdout


#: Scenario files that fail, each in a way of its own: pytest must fail each, as ``agent-cards replay`` does.
FAILING = ROOT / "tests" / "fixtures" / "failing-scenarios"


def test_pytest_fails_a_scenario_exactly_when_replay_does(tmp_path: Path) -> None:
    """One verdict: over every shipped scenario and a set made to fail (a variant, an expectation, a ``check``
    at a virtual time and in its turn, a ``distinct`` inside an operator), each file pytest fails is one
    ``agent-cards replay`` exits 1 for, and no other."""
    cases = tmp_path / "cases"
    shutil.copytree(ROOT / "scenarios", cases, ignore=shutil.ignore_patterns("__snapshots__"))
    shutil.copytree(FAILING, cases / "failing")
    shutil.copy(cases / "clauses.yaml", cases / "failing" / "clauses.yaml")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                                         "agent_cards_scenarios = cases\n", encoding="utf-8")
    pytest_in(tmp_path, "--snapshot-update")  # every transcript recorded: what is left is the verdict
    done = pytest_in(tmp_path, "-rA")
    outcomes = {line.split()[1].split("::")[0]: line.split()[0] for line in done.stdout.splitlines()
                if line.startswith(("PASSED ", "FAILED "))}
    replayed = subprocess.run([str(Path(sys.executable).parent / "agent-cards"), "replay", "--json", "cases"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    verdicts = {json.loads(line)["file"]: json.loads(line)["passed"] for line in replayed.stdout.splitlines()}
    assert replayed.returncode == 1
    assert len(outcomes) == len(verdicts) > 100, done.stdout[-2000:]
    assert {file: outcome == "PASSED" for file, outcome in outcomes.items()} == verdicts
    assert sorted(file for file, passed in verdicts.items() if not passed) == [
        f"cases/failing/{file.name}" for file in sorted(FAILING.glob("*.yaml"))]
