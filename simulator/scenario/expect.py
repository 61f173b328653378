"""Explicit expectations of a scenario, checked against its transcript.

``- answer: {call: toolu_0001, deny: {contains: auth-fix}}`` holds when at least one ``answer`` event
matches every field; ``count: N`` asks for exactly N; ``- no run: {argv: {contains: open}}`` for none.

A field's matcher is a value (equal), a mapping (a partial match of an object, recursively), a list
(equal, item by item), or an operator mapping: ``contains`` (text: substring; list: an item that
matches, or a text item holding the text; a list of them: all), ``startswith``, ``endswith``,
``matches`` (a regular expression, searched), ``lt``/``le``/``gt``/``ge`` (numbers), ``absent: true``
(the field is not there), ``not`` (the inner matcher fails).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from simulator.scenario.reader import OPERATORS, Expectation

_ABSENT = object()


def matches(matcher: Any, value: Any) -> bool:
    if isinstance(matcher, dict) and matcher and set(matcher) <= OPERATORS:
        return all(_operator(op, arg, value) for op, arg in matcher.items())
    if value is _ABSENT:
        return False
    if isinstance(matcher, dict):
        return isinstance(value, dict) and all(matches(m, value.get(k, _ABSENT)) for k, m in matcher.items())
    if isinstance(matcher, list):
        return isinstance(value, list) and len(matcher) == len(value) and all(map(matches, matcher, value))
    return (type(matcher) is type(value) and bool(matcher == value)) or (
        isinstance(matcher, int | float) and isinstance(value, int | float) and not isinstance(value, bool)
        and not isinstance(matcher, bool) and matcher == value
    )


def _operator(op: str, arg: Any, value: Any) -> bool:
    if op == "absent":
        return (value is _ABSENT) == bool(arg)
    if op == "not":
        return not matches(arg, value)
    if value is _ABSENT:
        return False
    if op == "contains":
        wanted = arg if isinstance(arg, list) else [arg]
        if isinstance(value, str):
            return all(isinstance(w, str) and w in value for w in wanted)
        if isinstance(value, list):  # an item that matches; a text item may contain a wanted text
            return all(any(matches(w, item) or _within(w, item) for item in value) for w in wanted)
        return False
    if op in ("startswith", "endswith"):
        return isinstance(value, str) and isinstance(arg, str) and getattr(value, op)(arg)
    if op == "matches":
        return isinstance(value, str) and isinstance(arg, str) and re.search(arg, value) is not None
    if not isinstance(value, int | float) or not isinstance(arg, int | float):
        return False
    return {"lt": value < arg, "le": value <= arg, "gt": value > arg, "ge": value >= arg}[op]


def _within(wanted: Any, item: Any) -> bool:
    return isinstance(wanted, str) and isinstance(item, str) and wanted in item


def failures(expectations: Sequence[Expectation], events: Sequence[dict[str, Any]], file: str = "") -> list[str]:
    """One ``FILE:LINE: …`` message per expectation that does not hold (empty: all hold)."""
    out = []
    for exp in expectations:
        found = [e for e in events if e["kind"] == exp.kind and matches(exp.fields, e)]
        if exp.count is None and found:
            continue
        if exp.count is not None and len(found) == exp.count:
            continue
        wanted = "at least one" if exp.count is None else ("no" if exp.count == 0 else f"exactly {exp.count}")
        what = json.dumps(exp.fields, ensure_ascii=False) if exp.fields else "(any)"
        message = f"{file}:{exp.line}: expected {wanted} {exp.kind} event matching {what}, found {len(found)}"
        if found and exp.count == 0:
            message += f" (first at t={found[0]['t']})"
        out.append(message)
    return out
