"""The scenario plugin's verdict, with the plugin this process has imported: a scenario whose expectation
fails fails pytest, and one that holds passes.

``tests/test_pytest_plugin.py`` runs pytest in processes of their own, which load the plugin afresh from its
entry point; this file runs it inside the test's own process, so that the plugin it judges with is the one
imported here (with a mutant planted in it, the mutant: ``agent-cards mutate`` kills the plugin's mutants
with this file).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_cards_simulator.scenario import pytest_plugin

ROOT = Path(__file__).resolve().parents[1]
FAILING = ROOT / "tests" / "fixtures" / "failing-scenarios" / "expectation.yaml"


class _Outcomes:
    def __init__(self) -> None:
        self.by_file: dict[str, str] = {}
        self.plugin: object = None

    def pytest_configure(self, config: pytest.Config) -> None:
        self.plugin = config.pluginmanager.get_plugin("agent_cards_scenarios")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.failed:
            self.by_file[Path(report.nodeid.split("::")[0]).name] = report.outcome


def pytest_here(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, _Outcomes]:
    seen = _Outcomes()
    monkeypatch.chdir(folder)
    status = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", *args, "cases"],
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
