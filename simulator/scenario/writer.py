"""A scenario as plain data (dicts, lists, texts), written as YAML the reader takes back.

Long texts are :class:`Repeat` values, written as ``!repeat {text, times, then}`` (the reader's tag): a
generated output of 4 MiB, or a pasted prompt of one repeated piece, stays a short file under the reader's
size limit. Keys keep the order given, and a value used twice is written twice (no anchors).
"""

from __future__ import annotations

from typing import Any

import yaml

from agent_cards.record import Value

#: A width no value reaches: each scalar on one line, as a file a generated case is written to.
ONE_LINE = 100_000


class Repeat(Value):
    """``text`` ``times`` times, then ``then``: a long text as the reader's ``!repeat`` builds it."""

    text: str
    times: int
    then: str = ""

    def value(self) -> str:
        return self.text * self.times + self.then


class _ScenarioDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _repeat(dumper: yaml.SafeDumper, value: Repeat) -> yaml.Node:
    fields = {"text": value.text, "times": value.times, **({"then": value.then} if value.then else {})}
    return dumper.represent_mapping("!repeat", fields, flow_style=True)


_ScenarioDumper.add_representer(Repeat, _repeat)


def to_yaml(data: dict[str, Any], *, width: int = ONE_LINE) -> str:
    """``data`` as a scenario file's text, its lines folded at ``width`` where a text allows."""
    return str(yaml.dump(data, Dumper=_ScenarioDumper, sort_keys=False, allow_unicode=True, width=width,
                         default_flow_style=None))
