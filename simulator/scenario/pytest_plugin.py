"""pytest wiring: scenario files become tests that replay them and snapshot their transcripts.

Installed as the ``agent_cards_scenarios`` pytest plugin, and inert until a project asks for it: it
collects nothing, and imports nothing beyond pytest, unless the ini option ``agent_cards_scenarios``
names the folders whose ``*.yaml`` files are scenarios (``clauses.yaml`` aside). This repository sets
it in ``pyproject.toml``::

    [tool.pytest.ini_options]
    agent_cards_scenarios = ["scenarios"]

and ``pytest -o agent_cards_scenarios=DIR`` switches it on for one run. Snapshots need syrupy (the
``test`` extra); asking for scenarios without it is one usage error, not a failing import in every
project that happens to have agent-cards installed. ``pytest --snapshot-update`` accepts a changed
transcript. The replay lives in :mod:`agent_cards_simulator.scenario.replay`, the snapshot format in
:mod:`agent_cards_simulator.scenario.snapshot`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

OPTION = "agent_cards_scenarios"
CLAUSES_FILE = "clauses.yaml"  # the clause list beside the scenarios (agent_cards_simulator.scenario.files)
_FOLDERS = pytest.StashKey[tuple[Path, ...]]()
#: Whether each folder pytest walks lies among the scenario folders: resolving a path reads every folder
#: above it, and pytest asks about every file and folder it meets.
_PLACES = pytest.StashKey[dict[Path, bool]]()
#: The clause list of each folder of scenarios, read once a session: every scenario of a folder shares it.
_CLAUSES = pytest.StashKey[dict[Path, set[str]]]()
SNAPSHOTS = "__snapshots__"  # syrupy's folder beside the scenarios (agent_cards_simulator.scenario.snapshot)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        OPTION,
        "folders whose *.yaml files are agent-cards scenarios, replayed and snapshotted (default: none)",
        type="paths",
        default=[],
    )


def pytest_configure(config: pytest.Config) -> None:
    folders = tuple(Path(p).resolve() for p in config.getini(OPTION))
    config.stash[_FOLDERS] = folders
    config.stash[_PLACES] = {}
    config.stash[_CLAUSES] = {}
    if not folders:
        return
    try:
        import syrupy  # noqa: F401  (its snapshot fixture is what a scenario test asks for)
    except ImportError:
        raise pytest.UsageError(
            f"{OPTION} is set, but syrupy is not installed: install agent-cards with its test extra "
            "(pip install 'agent-cards[test]')"
        ) from None


def _inside(config: pytest.Config, path: Path) -> bool:
    """Whether ``path`` is in one of the scenario folders (at any depth); its folder is resolved once a run."""
    folders = config.stash.get(_FOLDERS, ())
    if not folders:
        return False
    places = config.stash[_PLACES]
    inside = places.get(path.parent)
    if inside is None:
        where = path.parent.resolve()
        inside = places[path.parent] = any(folder == where or folder in where.parents for folder in folders)
    return inside


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A snapshot folder among the scenarios holds one JSON file per scenario and no test: pytest does
    not walk it (else every snapshot file goes through every plugin's collection hooks, for nothing)."""
    return True if collection_path.name == SNAPSHOTS and _inside(config, collection_path) else None


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix != ".yaml" or file_path.name == CLAUSES_FILE or not _inside(parent.config, file_path):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


class ScenarioFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        return [pytest.Function.from_parent(self, name=self.path.stem, callobj=_replay_scenario)]


def _replay_scenario(request: pytest.FixtureRequest, snapshot: Any) -> None:
    from agent_cards_simulator.scenario.files import known_clauses, read_checked
    from agent_cards_simulator.scenario.reader import ScenarioError
    from agent_cards_simulator.scenario.replay import replay
    from agent_cards_simulator.scenario.snapshot import TranscriptExtension, snapshot_value

    path = Path(request.node.path)
    clauses = request.config.stash[_CLAUSES]
    try:
        known = clauses.get(path.parent)
        if known is None:
            known = clauses[path.parent] = set(known_clauses(path))
        scenario = read_checked(path, known)
    except ScenarioError as error:
        invalid = error.lines()
    else:
        invalid = []
    if invalid:  # reported once, as its FILE:LINE lines (outside the except: no chained traceback)
        pytest.fail("\n".join(invalid), pytrace=False)
    result = replay(scenario)
    stored = path.parent / SNAPSHOTS / f"{path.stem}.{TranscriptExtension.file_extension}"
    options = ("update_snapshots", "update_new_snapshots_only")
    updating = any(request.config.getoption(o) for o in options)  # syrupy's, and syrupy is there: see configure
    if not stored.exists() and not updating:
        pytest.fail(
            f"{path}:1: this scenario has no snapshot yet: read its transcript (agent-cards replay {path}), "
            f"then write the snapshot with: pytest --snapshot-update {path}",
            pytrace=False,
        )
    assert snapshot.use_extension(TranscriptExtension) == snapshot_value(result)
    if not result.passed:  # the verdict ``agent-cards replay`` exits by: every variant's failures included
        pytest.fail("\n".join(result.failures), pytrace=False)
