"""How a transcript is stored as a snapshot: one readable JSON file per scenario, beside it.

``scenarios/deliver/pending-shared.yaml`` → ``scenarios/deliver/__snapshots__/pending-shared.json``: the
replay's JSON (``agent-cards replay --json``) minus the run's own verdict, indented, keys in the
transcript's order, non-ASCII kept readable. A reviewer reads the diff of that file in a pull request.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from agent_cards_simulator.scenario.replay import Replay


def snapshot_value(replay: Replay) -> dict[str, Any]:
    """What a snapshot holds: the transcript and what the scenario claims, not whether it passed."""
    data = replay.to_json()
    if replay.variants:  # one file, several cases: each variant's events under its name
        return {"title": data["title"], "clauses": data["clauses"],
                "variants": [{"name": v["name"], "events": v["events"]} for v in data["variants"]]}
    return {"title": data["title"], "clauses": data["clauses"], "events": data["events"]}


class TranscriptExtension(SingleFileSnapshotExtension):
    file_extension = "json"
    _write_mode = WriteMode.TEXT

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return Path(test_location.filepath).stem

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return _snapshots_of(test_location.filepath)


@cache
def _snapshots_of(filepath: str) -> str:
    """The snapshot folder beside a scenario file (syrupy asks about ten times a test)."""
    return str(Path(filepath).parent / "__snapshots__")
