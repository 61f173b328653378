"""Several cases in one file: ``variants:``, each a change to the scenario the file describes.

::

    variants:
      - name: old lich
        session: {env: {LICH_SUBAGENT_DEPTH: null}}    # merged into the file's session (and lich)
        expect: [no toast]                             # added to the file's expectations
      - name: with a model
        set: {steps[0].call.model: opus}               # one value replaced (or added) at a path

A variant is made on the YAML itself, before it is read, so each of its values keeps its own line and
a problem in a variant is reported at that line. Each variant is then read and replayed as a whole
scenario, named by ``name`` in the timeline, the JSON and the snapshot; the file's own scenario is only
what they share.
"""

from __future__ import annotations

import re
from typing import Any

from agent_cards_simulator.scenario.spec import Defs, Kind, Reader, Schema, show
from agent_cards_simulator.scenario.yamlnodes import YList, YMap

KEYS = frozenset({"name", "about", "session", "lich", "set", "expect"})
_STEP = re.compile(r"([^.\[\]]+)|\[(-?[0-9]+)\]")


def copy(value: Any) -> Any:
    """A deep copy of YAML's mappings and lists, each with its lines."""
    if isinstance(value, YMap):
        out = YMap({k: copy(v) for k, v in value.items()})
        out.line, out.key_lines = value.line, dict(value.key_lines)
        return out
    if isinstance(value, YList):
        items = YList(copy(v) for v in value)
        items.line, items.item_lines = value.line, list(value.item_lines)
        return items
    return value


def merged(base: Any, change: Any) -> Any:
    """``change`` over ``base``: mappings merged key by key (recursively), anything else replaced."""
    if not isinstance(base, YMap) or not isinstance(change, YMap):
        return copy(change)
    out = copy(base)
    for key, value in change.items():
        out[key] = merged(out[key], value) if key in out else copy(value)
        out.key_lines[key] = change.line_of(key)
    return out


def path_steps(path: str) -> list[str | int] | None:
    """``steps[0].call.model`` as ``["steps", 0, "call", "model"]`` (None: not a path)."""
    found: list[str | int] = []
    at = 0
    for m in _STEP.finditer(path):
        if m.start() != at and not (m.start() == at + 1 and path[at] == "."):
            return None
        found.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        at = m.end()
    return found if found and at == len(path) else None


def put(r: Reader, top: YMap, where: YMap, path: str, value: Any) -> None:
    """Set the value at ``path`` in ``top`` (a mapping key may be new; a list position must exist)."""
    parts = path_steps(path)
    if parts is None or not isinstance(parts[0], str):
        r.fail(where, path, f"set: {path!r} is not a path such as steps[0].call.model")
        return
    node: Any = top
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, YList) or not -len(node) <= part < len(node):
                r.fail(where, path, f"set: {path!r}: no item [{part}] there")
                return
            if last:
                node[part] = copy(value)
                node.item_lines[part % len(node)] = where.line_of(path)
            node = node[part]
            continue
        if not isinstance(node, YMap):
            r.fail(where, path, f"set: {path!r}: {part!r} is not in a mapping there")
            return
        if last:
            node[part] = copy(value)
            node.key_lines[part] = where.line_of(path)
        elif part not in node:
            node[part] = YMap()
            node[part].line, node[part].key_lines = where.line_of(path), {}
        node = node[part]


def expand(r: Reader, data: YMap) -> list[tuple[str, YMap]]:
    """Each variant's name and its whole scenario, as YAML (problems go to ``r``)."""
    variants = data["variants"]
    if not isinstance(variants, YList) or not variants:
        r.fail(data, "variants", "variants: expected a list of variants, each with a name")
        return []
    base = YMap({k: v for k, v in data.items() if k != "variants"})
    base.line, base.key_lines = data.line, dict(data.key_lines)
    made: list[tuple[str, YMap]] = []
    names: set[str] = set()
    for i, variant in enumerate(variants):
        path = f"variants[{i}]"
        v = r.mapping(variants, i, variant, path, KEYS)
        if v is None:
            continue
        name = v.get("name")
        if not isinstance(name, str) or not name:
            r.fail(v, "name" if "name" in v else None, f"{path}.name: each variant needs a name (text)")
            continue
        if name in names:
            r.fail(v, "name", f"{path}.name: the name {name!r} is used twice")
        names.add(name)
        one = copy(base)
        for key in ("about", "session", "lich"):
            if key in v:
                one[key] = merged(one.get(key), v[key]) if key in one else copy(v[key])
                one.key_lines[key] = v.line_of(key)
        if "expect" in v:
            added = v["expect"]
            if not isinstance(added, YList):
                r.fail(v, "expect", f"{path}.expect: expected a list of expectations")
                continue
            common = one.get("expect")
            both = YList([*(common if isinstance(common, YList) else ()), *added])
            both.line = added.line
            both.item_lines = [*(common.item_lines if isinstance(common, YList) else ()), *added.item_lines]
            one["expect"] = both
            one.key_lines["expect"] = v.line_of("expect")
        changes = v.get("set")
        if changes is not None:
            if not isinstance(changes, YMap):
                r.fail(v, "set", f"{path}.set: expected a mapping of path: value, got {show(changes)}")
                continue
            for where, value in changes.items():
                put(r, one, changes, where, value)
        made.append((name, one))
    return made


class Variants(Kind):
    """``variants``: its schema (the reader expands the variants itself, see :func:`expand`)."""

    expected = "a list of variants"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, list)

    def schema(self, defs: Defs) -> Schema:
        return {
            "type": "array",
            "minItems": 1,
            "items": {
                "description": "One case: the file's scenario with these changes, named in the output and the "
                "snapshot.",
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"description": "The variant's name (each once in the file).", "type": "string"},
                    "about": {"description": "Replaces the file's `about` for this variant.", "type": "string"},
                    "session": {"description": "Merged into the file's `session`, key by key (mappings such as "
                                "`env` too; null unsets a variable as usual).", "type": "object"},
                    "lich": {"description": "Merged into the file's `lich`, key by key.", "type": "object"},
                    "set": {
                        "description": "Values replaced or added at paths such as `steps[0].call.model` or "
                        "`steps[1].lich.delivery` (a list position must exist).",
                        "type": "object",
                        "propertyNames": {"pattern": r"^[^.\[\]]+(\.[^.\[\]]+|\[-?[0-9]+\])*$"},
                    },
                    "expect": {"description": "Expectations added to the file's own for this variant.",
                               "type": "array", "items": {"$ref": "#/$defs/expectation"}},
                },
            },
        }
