"""YAML with line numbers: mappings and lists that remember where each key and item stood.

Scenario errors are reported as ``FILE:LINE: what is wrong``; this is what makes the LINE possible.
Only YAML's safe types are read; a duplicate key is an error, not a silent override.

One tag of our own builds long texts without pasting them: ``!repeat {text: "é", times: 4096, then: "x"}``
is ``"é"`` 4096 times followed by ``"x"`` (``then`` is optional). A task over lich's size limit fits on
one line that way.
"""

from __future__ import annotations

from typing import Any

import yaml

#: libyaml's parser when PyYAML has it (most wheels do): parsing is most of a replay's time otherwise.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class YMap(dict[str, Any]):
    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class YList(list[Any]):
    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if index < len(self.item_lines) else self.line


def line_of(container: object, key: str | int) -> int:
    if isinstance(container, YMap) and isinstance(key, str):
        return container.line_of(key)
    if isinstance(container, YList) and isinstance(key, int):
        return container.line_of(key)
    return int(getattr(container, "line", 1))


def load(text: str) -> Any:
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        what = str(error.problem or error.context or "").splitlines()[0] if (error.problem or error.context) else ""
        raise YamlError(line, f"not valid YAML: {what or 'cannot be read'}") from None
    except yaml.YAMLError as error:
        raise YamlError(1, f"not valid YAML: {error}") from None
    return None if node is None else _convert(node)


REPEAT = "!repeat"


def _repeat(node: yaml.Node, line: int) -> str:
    value = _convert(node) if isinstance(node, yaml.MappingNode) else None
    if not isinstance(value, dict) or not {"text", "times"} <= set(value) <= {"text", "times", "then"}:
        raise YamlError(line, '!repeat takes {text: "…", times: N} and optionally then: "…"')
    text, times, then = value["text"], value["times"], value.get("then", "")
    if not isinstance(text, str) or not isinstance(then, str) or isinstance(times, bool) or not isinstance(times, int):
        raise YamlError(line, "!repeat: text and then are texts, times a whole number")
    if not 0 <= times <= 1_000_000:
        raise YamlError(line, "!repeat: times is 0 to 1000000")
    return text * times + then


def _convert(node: yaml.Node) -> Any:
    line = node.start_mark.line + 1
    if node.tag == REPEAT:
        node.tag = "tag:yaml.org,2002:map"
        return _repeat(node, line)
    if isinstance(node, yaml.MappingNode):
        mapping = YMap()
        mapping.line, mapping.key_lines = line, {}
        for key_node, value_node in node.value:
            key = _convert(key_node)
            if not isinstance(key, str):
                raise YamlError(key_node.start_mark.line + 1, f"a key must be text, not {key!r}")
            if key in mapping:
                raise YamlError(key_node.start_mark.line + 1, f"{key!r} is given twice")
            mapping[key] = _convert(value_node)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping
    if isinstance(node, yaml.SequenceNode):
        items = YList(_convert(item) for item in node.value)
        items.line, items.item_lines = line, [item.start_mark.line + 1 for item in node.value]
        return items
    try:
        return yaml.SafeLoader("").construct_object(node, deep=True)
    except yaml.YAMLError as error:
        first = str(getattr(error, "problem", None) or error).splitlines()[0]
        raise YamlError(line, f"not a valid value: {first}") from None
