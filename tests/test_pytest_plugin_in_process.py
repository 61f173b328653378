"""The scenario plugin's verdict, with the plugin this process has imported: a scenario whose expectation
fails fails pytest, and one that holds passes.

``tests/test_pytest_plugin.py`` runs pytest in processes of their own, which load the plugin afresh from its
entry point; this file runs it inside the test's own process, so that the plugin it judges with is the one
imported here (with a mutant planted in it, the mutant: ``agent-cards mutate`` kills the plugin's mutants
with this file).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agent_cards_simulator.scenario import files, pytest_plugin

ROOT = Path(__file__).resolve().parents[1]
FAILING = ROOT / "tests" / "fixtures" / "failing-scenarios" / "expectation.yaml"


class _Outcomes:
    def __init__(self) -> None:
        self.by_file: dict[str, str] = {}
        self.plugin: object = None

    def pytest_configure(self, config: pytest.Config) -> None:
        self.plugin = config.pluginmanager.get_plugin("agent_cards_scenarios")

        self.said: dict[str, str] = {}  # what pytest says of a failed file

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.failed:
            name = Path(report.nodeid.split("::")[0]).name
            self.by_file[name] = report.outcome
            if report.failed:
                self.said[name] = report.longreprtext


def pytest_here(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, _Outcomes]:
    seen = _Outcomes()
    monkeypatch.chdir(folder)
    status = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", *args, "."],
                         plugins=[seen])
    return int(status), seen


def test_the_plugin_in_this_process_fails_a_failing_scenario_and_passes_one_that_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(ROOT / "scenarios" / "clauses.yaml", cases / "clauses.yaml")
    shutil.copy(ROOT / "scenarios" / "deliver" / "pending-shared.yaml", cases / "holds.yaml")
    shutil.copy(FAILING, cases / "fails.yaml")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                                         "agent_cards_scenarios = cases\n", encoding="utf-8")
    pytest_here(tmp_path, monkeypatch, "--snapshot-update")  # every transcript recorded: what is left is the verdict
    assert sorted(p.name for p in (cases / "__snapshots__").iterdir()) == ["fails.json", "holds.json"]
    status, seen = pytest_here(tmp_path, monkeypatch)
    assert seen.plugin is pytest_plugin  # the plugin that judged is the one this process imported
    assert seen.by_file == {"fails.yaml": "failed", "holds.yaml": "passed"}
    assert status == pytest.ExitCode.TESTS_FAILED


def test_the_plugin_says_each_failure_on_a_line_of_its_own_and_no_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario whose two expectations fail, and one that does not read for two reasons: pytest says each
    as a FILE:LINE line of its own, as `agent-cards replay` does, and shows none of the plugin's code."""
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(ROOT / "scenarios" / "clauses.yaml", cases / "clauses.yaml")
    (cases / "fails.yaml").write_text(FAILING.read_text(encoding="utf-8") + "  - no footer\n", encoding="utf-8")
    (cases / "invalid.yaml").write_text("title: two wrong keys\nclauses: [TAKE-TYPE]\nsteps:\n"
                                        "  - call: {descripton: A, prompt: B}\n  - wiat: 10\n", encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                                         "agent_cards_scenarios = cases\n", encoding="utf-8")
    pytest_here(tmp_path, monkeypatch, "--snapshot-update")
    _, seen = pytest_here(tmp_path, monkeypatch)
    assert seen.by_file == {"fails.yaml": "failed", "invalid.yaml": "failed"}
    for name, lines in (("fails.yaml", 2), ("invalid.yaml", 2)):
        said = [line for line in seen.said[name].splitlines() if line.strip()]
        located = [line for line in said if line.lstrip().startswith(f"cases/{name}:") or f"{name}:" in line]
        assert len(located) >= lines, seen.said[name]
        assert "Traceback" not in seen.said[name] and "def _replay_scenario" not in seen.said[name], seen.said[name]


def _cases(tmp_path: Path, folders: str | None) -> Path:
    cases = tmp_path / "cases" / "deep"
    cases.mkdir(parents=True)
    shutil.copy(ROOT / "scenarios" / "clauses.yaml", cases / "clauses.yaml")
    shutil.copy(ROOT / "scenarios" / "deliver" / "pending-shared.yaml", cases / "holds.yaml")
    (tmp_path / "elsewhere.yaml").write_text("not: a scenario\n", encoding="utf-8")
    ini = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
    (tmp_path / "pytest.ini").write_text(ini + (f"agent_cards_scenarios = {folders}\n" if folders else ""),
                                         encoding="utf-8")
    return cases


def test_the_plugin_collects_only_the_scenarios_of_the_folders_it_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the setting nothing is collected (the plugin is inert); with it, every scenario at any depth of
    the folder, never the clause list, a file outside the folder, or the snapshots beside the scenarios."""
    _cases(tmp_path, None)
    status, seen = pytest_here(tmp_path, monkeypatch)
    assert (status, seen.by_file) == (pytest.ExitCode.NO_TESTS_COLLECTED, {})
    (tmp_path / "pytest.ini").unlink()
    shutil.rmtree(tmp_path / "cases")
    cases = _cases(tmp_path, "cases")
    pytest_here(tmp_path, monkeypatch, "--snapshot-update")
    (cases / "__snapshots__" / "stray.yaml").write_text("not: a scenario\n", encoding="utf-8")
    status, seen = pytest_here(tmp_path, monkeypatch, "--snapshot-warn-unused")  # syrupy's own word on a stray file
    assert (status, seen.by_file) == (pytest.ExitCode.OK, {"holds.yaml": "passed"})


def test_a_scenario_with_no_snapshot_fails_and_says_how_to_write_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cases(tmp_path, "cases")
    status, seen = pytest_here(tmp_path, monkeypatch)
    assert (status, seen.by_file) == (pytest.ExitCode.TESTS_FAILED, {"holds.yaml": "failed"})
    said = seen.said["holds.yaml"]
    assert "holds.yaml:1: this scenario has no snapshot yet" in said and "pytest --snapshot-update" in said
    assert "Traceback" not in said and "def _replay_scenario" not in said, said
    status, _ = pytest_here(tmp_path, monkeypatch, "--snapshot-update")  # written, then it holds
    assert status == pytest.ExitCode.OK and pytest_here(tmp_path, monkeypatch)[0] == pytest.ExitCode.OK


def test_a_scenario_naming_a_clause_its_folder_does_not_know_fails_at_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder's clause list is read once and held against every scenario in it."""
    cases = _cases(tmp_path, "cases")
    text = (cases / "holds.yaml").read_text(encoding="utf-8")
    (cases / "unknown.yaml").write_text(text.replace("clauses: [", "clauses: [NO-SUCH-CLAUSE, ", 1), encoding="utf-8")
    pytest_here(tmp_path, monkeypatch, "--snapshot-update")
    status, seen = pytest_here(tmp_path, monkeypatch)
    assert (status, seen.by_file) == (pytest.ExitCode.TESTS_FAILED, {"holds.yaml": "passed", "unknown.yaml": "failed"})
    assert "unknown.yaml:2:" in seen.said["unknown.yaml"] and "NO-SUCH-CLAUSE" in seen.said["unknown.yaml"]


def test_a_new_scenario_is_written_by_the_update_of_new_snapshots_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """syrupy's --snapshot-update-new-only writes the missing snapshot, as --snapshot-update does."""
    cases = _cases(tmp_path, "cases")
    status, seen = pytest_here(tmp_path, monkeypatch, "--snapshot-update-new-only")
    assert (status, seen.by_file) == (pytest.ExitCode.OK, {"holds.yaml": "passed"})
    assert [p.name for p in (cases / "__snapshots__").iterdir()] == ["holds.json"]


def test_each_folder_s_clause_list_is_read_once_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = _cases(tmp_path, "cases")
    shutil.copy(cases / "holds.yaml", cases / "holds-too.yaml")
    read: list[Path] = []
    real = files.known_clauses

    def counted(path: Path) -> dict[str, str]:
        read.append(path)
        return real(path)
    monkeypatch.setattr(files, "known_clauses", counted)
    status, _ = pytest_here(tmp_path, monkeypatch, "--snapshot-update")
    assert status == pytest.ExitCode.OK and len(read) == 1, read


def test_the_option_says_what_it_is_in_pytest_s_help(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _cases(tmp_path, None)
    status, _ = pytest_here(tmp_path, monkeypatch, "--help")
    said = " ".join(capsys.readouterr().out.split())
    assert status == pytest.ExitCode.OK
    assert "agent_cards_scenarios (paths): folders whose *.yaml files are agent-cards scenarios" in said, said


def test_asking_for_scenarios_without_syrupy_is_one_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _cases(tmp_path, "cases")
    monkeypatch.setitem(sys.modules, "syrupy", None)  # the import fails as when syrupy is not installed
    status, seen = pytest_here(tmp_path, monkeypatch, "-p", "no:syrupy", "--assert=plain")
    assert (status, seen.by_file) == (pytest.ExitCode.USAGE_ERROR, {})
    said = capsys.readouterr().err
    assert "agent_cards_scenarios is set, but syrupy is not installed: install agent-cards with its test extra" in said
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (plain / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    status, seen = pytest_here(plain, monkeypatch, "-p", "no:syrupy", "--assert=plain")
    assert (status, seen.by_file) == (pytest.ExitCode.OK, {"test_one.py": "passed"})  # not asked: no error
