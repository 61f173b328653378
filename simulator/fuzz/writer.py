"""A generated case as a scenario file: written with the scenario writer, each value on one line, and read
back, so what a fuzz case replays is exactly what its file says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.writer import to_yaml


def scenario_of(data: dict[str, Any], file: str = "<fuzz>") -> Scenario:
    """The scenario ``data`` describes, read from its written text (a ``ScenarioError`` if it is not valid)."""
    return read(file, to_yaml(data))


def write(data: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(data), encoding="utf-8")
    return path
