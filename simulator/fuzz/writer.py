"""A scenario as plain data (dicts, lists, texts), written as a YAML file the reader accepts.

Long texts are :class:`Repeat` values, written as ``!repeat {text, times, then}``: a generated output of
4 MiB stays a one-line file under the reader's size limit. ``scenario_of`` reads the written text back, so
what a fuzz case replays is exactly what its file says.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from agent_cards.record import Value
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.reader import read


class Repeat(Value):
    """``text`` ``times`` times, then ``then``: a long text as the reader's ``!repeat`` builds it."""

    text: str
    times: int
    then: str = ""

    def value(self) -> str:
        return self.text * self.times + self.then


class _Dumper(yaml.SafeDumper):
    pass


def _repeat(dumper: yaml.SafeDumper, value: Repeat) -> yaml.Node:
    fields = {"text": value.text, "times": value.times, **({"then": value.then} if value.then else {})}
    return dumper.represent_mapping("!repeat", fields, flow_style=True)


def _float(dumper: yaml.SafeDumper, value: float) -> yaml.Node:
    if math.isnan(value):
        return dumper.represent_scalar("tag:yaml.org,2002:float", ".nan")
    return yaml.SafeDumper.represent_float(dumper, value)


_Dumper.add_representer(Repeat, _repeat)
_Dumper.add_representer(float, _float)


def to_yaml(data: dict[str, Any]) -> str:
    """``data`` as a scenario file's text (keys in the order given, no aliases, one value per line)."""
    _Dumper.ignore_aliases = lambda self, data: True  # type: ignore[method-assign]
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100_000,
                         default_flow_style=None))


def scenario_of(data: dict[str, Any], file: str = "<fuzz>") -> Scenario:
    """The scenario ``data`` describes, read from its written text (a ``ScenarioError`` if it is not valid)."""
    return read(file, to_yaml(data))


def write(data: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(data), encoding="utf-8")
    return path
