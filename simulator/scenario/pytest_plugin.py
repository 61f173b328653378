"""pytest wiring: every ``scenarios/**/*.yaml`` is a test that replays it and snapshots its transcript.

Registered as the ``agent_cards_scenarios`` entry point, so any repository with this package installed
collects its scenario files the same way. ``pytest --snapshot-update`` accepts a changed transcript.
The replay lives in :mod:`simulator.scenario.replay`, the snapshot format in :mod:`simulator.scenario.snapshot`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.scenario.files import CLAUSES_FILE, read_checked
from simulator.scenario.reader import ScenarioError
from simulator.scenario.replay import replay
from simulator.scenario.snapshot import TranscriptExtension, snapshot_value


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".yaml" and file_path.name != CLAUSES_FILE and "scenarios" in file_path.parts:
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        return [pytest.Function.from_parent(self, name=self.path.stem, callobj=_replay_scenario)]


def _replay_scenario(request: pytest.FixtureRequest, snapshot: Any) -> None:
    try:
        scenario = read_checked(Path(request.node.path))
    except ScenarioError as error:
        pytest.fail("\n".join(error.lines()), pytrace=False)
    result = replay(scenario)
    assert snapshot.use_extension(TranscriptExtension) == snapshot_value(result)
    if result.failures:
        pytest.fail("\n".join(result.failures), pytrace=False)
