"""Expectations: each event kind and each matcher operator defined once, read, checked and documented.

``- answer: {call: toolu_0001, deny: {contains: auth-fix}}`` holds when at least one ``answer`` event
matches every field; ``count: N`` asks for exactly N; ``- no run: {argv: {contains: open}}`` for none.

A field's matcher is a value (equal), a mapping (a partial match of an object, recursively), a list
(equal, item by item), or a mapping of operators only (``OPERATORS``: each says what it holds for, how
its argument is described, and how it is checked). The kinds of event an expectation may name, and
their fields, are ``EVENTS`` (the transcript's contract, :mod:`agent_cards_simulator.transcript`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from agent_cards.record import Value
from agent_cards_simulator.scenario.model import Expectation
from agent_cards_simulator.scenario.spec import FAILED, Defs, Kind, Reader, Schema, did_you_mean, is_int, plain
from agent_cards_simulator.scenario.yamlnodes import YList, YMap

# -- event kinds ----------------------------------------------------------------------------------------


class EventKind(Value):
    """An event kind an expectation may name: what the event is, and its fields."""

    doc: str
    fields: dict[str, str]


_T = "Virtual ms since the start of the scenario at which the event was recorded (for a run: when it started)."
_KIND = "The event's kind (always the kind named by the expectation)."

EVENTS: dict[str, EventKind] = {
    "session.start": EventKind("Claude Code raised session.start.", {
        "interactive": "true for an interactive session, false for `claude -p`.",
    }),
    "call": EventKind("A tool call reached Claude Code (from a `call`, `taskstop` or `parallel` step).", {
        "call": "The call's id (`toolu_0001`, … or the step's `id`).",
        "tool": "The tool's name: `Agent`, `TaskStop`, …",
        "input": "The tool's input as the step gave it.",
    }),
    "permission": EventKind("Claude Code's permission check answered an Agent call.", {
        "call": "The call's id.",
        "outcome": "`allow` or `deny`.",
        "via": "What decided: `mode` (allow), `rule` (deny), `dialog` (ask) or `hook` (hook-deny).",
    }),
    "spawn": EventKind("agent.spawn was answered for an Agent call or a workflow step.", {
        "call": "The call's id (`workflow_N` for a workflow step).",
        "answer": "What agent.spawn answered: `{deny}` or `{model, agentId}`.",
    }),
    "native": EventKind("Claude Code ran something itself: its own agent, its own TaskStop, or any other tool.", {
        "call": "The call's id (`workflow_N` for a workflow step).",
        "tool": "`Agent`, `TaskStop` or the other tool's name.",
        "input": "The tool input Claude Code got beneath the mod (for a workflow step: its description and prompt); "
        "equal to the call's own input when the mod left the call untouched.",
    }),
    "answer": EventKind("The answer a tool call got: exactly one of `result`, `deny`, `error`.", {
        "call": "The call's id.",
        "result": "The tool's result (for an Agent call an object with `status`, `agentId`, …).",
        "deny": "The text of a hook's deny.",
        "error": "The text of a tool error.",
        "context": "Extra context lines given to the model with the result (a list of texts); only when there are "
        "some.",
    }),
    "run": EventKind("A process the mod ran through the host (lich or git).", {
        "argv": "The command line as a list of texts; argv[0] is `$LICH_BIN` or `git`.",
        "timeout_ms": "The timeout the mod gave the run.",
        "exit": "The exit code; null when the run failed (see `error`).",
        "stdout": "What the process printed on stdout.",
        "stderr": "What the process printed on stderr.",
        "error": "null, or why the run failed: it could not start, timed out or was interrupted.",
        "ms": "How long the run took in virtual ms.",
        "truncated": "Only when an output passed 4 MiB: `{stdout: bool, stderr: bool}`.",
    }),
    "toast": EventKind("A toast the mod showed.", {"text": "The toast's text."}),
    "log": EventKind("A line the mod wrote to the plugin's log: the whole text of a toast cut to fit Claude Code's "
                     "toast box.", {"text": "The line."}),
    "footer": EventKind("The footer was drawn.", {
        "line": "The footer's first `lich: …` mode, or null when it has none.",
        "modes": "Every mode the footer drew, in order (two `lich: …` modes are two lich lines).",
    }),
    "note": EventKind("The model read a note lich typed at the asking session's prompt (a worker's report), once "
                      "the prompt was free: no turn running, no Rewind panel over it.", {
        "text": "The note's text; it starts with `[lich]`.",
        "notifications": "Claude Code's notifications that waited for a prompt and came with the note (absent: none).",
        "context": "The `prompt.submit` hooks' context lines beside the note (absent: none).",
    }),
    "esc": EventKind("Esc was pressed.", {}),
    "check": EventKind("A `check` step read the mod's state (without drawing the footer).", {
        "count": "The number of workers the mod counted then (null: no mod state to read).",
        "footer": "The footer's lich line as last drawn (null: none).",
    }),
    "reload": EventKind("The mod was reloaded.", {
        "asked": "When the reload was asked for, when it waited for the turn then running to end (absent otherwise).",
    }),
    "mode": EventKind("The session's permission mode was switched (a `mode` step: Shift+Tab).", {
        "mode": "The mode switched to: `default`, `acceptEdits`, `plan`, …",
    }),
    "resume": EventKind("`/exit`, then the session went on in a new Claude Code process.", {
        "how": "`continue` (`claude --continue`) or `resume` (`claude --resume`).",
    }),
    "notification": EventKind("Claude Code's own report of a background agent, which the model reads with its next "
                              "prompt (after a continue: each agent it launched before, failed).", {
        "task": "The agent's id (a worker's roster name for one the mod answered).",
        "status": "`failed`.",
        "text": "The `<task-notification>` the model reads.",
    }),
    "prompt": EventKind("The person typed a prompt; `prompt.submit` ran down the hooks.", {
        "text": "The prompt as typed.",
        "notifications": "The notifications the model reads with it (texts).",
        "context": "What the hooks put beside it for the model (texts; empty when none).",
    }),
    "host.dies": EventKind("The plugin's session host died (the mod's memory and timers with it).", {}),
    "host.start": EventKind("Another session host started, from the state the session keeps.", {}),
    "rewind": EventKind("Claude Code's Rewind panel opened (Esc twice within 800 ms at the idle prompt) or closed "
                        "(Esc, or the person left it to type); no footer is drawn while it is open.", {
        "open": "true when it opened, false when it closed.",
    }),
    "report": EventKind("A line of the engine's own report: a hook it skipped, a hook that overran, a timer that "
                        "failed.", {"text": "The report's text."}),
}
KINDS = tuple(EVENTS)

# -- operators ------------------------------------------------------------------------------------------

#: The value of a field the event does not have.
ABSENT = object()


class Operator(Value):
    """A matcher operator: ``holds(argument, value)``; ``value`` is ``ABSENT`` only when ``sees_absent``.

    ``inner`` (for an operator whose argument holds matchers): the pairs of inner matcher and the item it
    matched in ``value``, for a value the operator holds on; a ``distinct`` inside stands on those items."""

    doc: str
    argument: Schema  # the argument's schema (beside the description); the reader checks every argument by it
    holds: Callable[[Any, Any], bool]
    sees_absent: bool = False  # False: an absent field matches nothing
    inner: Callable[[Any, Any], list[tuple[Any, Any]]] | None = None


def _first_item(wanted: Any, value: list[Any]) -> Any:
    """The first item ``wanted`` matches (or, as text, is found in), else ``ABSENT``."""
    return next((item for item in value if matches(wanted, item) or _within(wanted, item)), ABSENT)


def _contains(wanted: Any, value: Any) -> bool:
    each = wanted if isinstance(wanted, list) else [wanted]
    if isinstance(value, str):
        return all(isinstance(w, str) and w in value for w in each)
    if isinstance(value, list):  # an item that matches; a text item may contain a wanted text
        return all(_first_item(w, value) is not ABSENT for w in each)
    return False


def _contains_inner(wanted: Any, value: Any) -> list[tuple[Any, Any]]:
    each = wanted if isinstance(wanted, list) else [wanted]
    return [(w, _first_item(w, value)) for w in each] if isinstance(value, list) else []


def _within(wanted: Any, item: Any) -> bool:
    return isinstance(wanted, str) and isinstance(item, str) and wanted in item


def _number(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def holds(limit: Any, value: Any) -> bool:
        return isinstance(value, int | float) and isinstance(limit, int | float) and compare(value, limit)

    return holds


def _text(test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    def holds(arg: Any, value: Any) -> bool:
        return isinstance(value, str) and isinstance(arg, str) and test(value, arg)

    return holds


_MATCHER: Schema = {"$ref": "#/$defs/matcher"}
_MATCHERS: Schema = {"type": "array", "minItems": 1, "items": _MATCHER}


def _in_order(wanted: Any, value: Any, adjacent: bool) -> list[int] | None:
    """Where a list holds items matching each of ``wanted`` in order (``adjacent``: one right after
    another): the first such positions, or None."""
    if not isinstance(value, list) or not isinstance(wanted, list) or not wanted:
        return None
    for start in range(len(value)) if adjacent else (0,):  # apart, the scan from the first item finds any
        at: list[int] = []
        i = start
        for w in wanted:
            if not adjacent:
                while i < len(value) and not matches(w, value[i]):
                    i += 1
            if i >= len(value) or not matches(w, value[i]):
                break
            at.append(i)
            i += 1
        else:
            return at
    return None


def _ordered(adjacent: bool) -> tuple[Callable[[Any, Any], bool], Callable[[Any, Any], list[tuple[Any, Any]]]]:
    def holds(wanted: Any, value: Any) -> bool:
        return _in_order(wanted, value, adjacent) is not None

    def inner(wanted: Any, value: Any) -> list[tuple[Any, Any]]:
        at = _in_order(wanted, value, adjacent)
        return [] if at is None else [(w, value[i]) for w, i in zip(wanted, at, strict=True)]

    return holds, inner


def _at(wanted: Any, value: Any) -> bool:
    """``[N, matcher]``: the item at position N (0 the first, -1 the last) matches."""
    if not isinstance(value, list) or not isinstance(wanted, list) or len(wanted) != 2 or not is_int(wanted[0]):
        return False
    n = wanted[0]
    return -len(value) <= n < len(value) and matches(wanted[1], value[n])


_REF_FORBIDDEN = frozenset("".join(map(chr, range(0x21))) + "\x7f~^:?*[\\")  # no pattern to compile at start-up


def valid_branch(name: str) -> bool:
    """What ``git check-ref-format --branch NAME`` accepts (git's own rules, without running git)."""
    if not name or name in ("@", "HEAD") or name.startswith(("-", "/")) or name.endswith(("/", ".")):
        return False
    if not _REF_FORBIDDEN.isdisjoint(name) or ".." in name or "@{" in name or "//" in name:
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/"))


_AFTER, _AFTER_INNER = _ordered(adjacent=False)
_RIGHT_AFTER, _RIGHT_AFTER_INNER = _ordered(adjacent=True)

OPERATORS: dict[str, Operator] = {
    "contains": Operator(
        "Text: holds the text (a list of texts: each). List: an item matches it, or a text item holds it (a list: "
        "each).", {}, _contains, inner=_contains_inner),
    "startswith": Operator("The text starts with this.", {"type": "string"}, _text(str.startswith)),
    "endswith": Operator("The text ends with this.", {"type": "string"}, _text(str.endswith)),
    "matches": Operator("A regular expression found somewhere in the text (Python re.search).", {"type": "string"},
                        _text(lambda value, pattern: re.search(pattern, value) is not None)),
    "lt": Operator("A number below this.", {"type": "number"}, _number(lambda a, b: a < b)),
    "le": Operator("A number at most this.", {"type": "number"}, _number(lambda a, b: a <= b)),
    "gt": Operator("A number above this.", {"type": "number"}, _number(lambda a, b: a > b)),
    "ge": Operator("A number at least this.", {"type": "number"}, _number(lambda a, b: a >= b)),
    "after": Operator(
        "List: items matching each of these matchers, in this order (others may come between): `after: [--subagent, "
        "--model]` is a --model somewhere after --subagent.", _MATCHERS, _AFTER, inner=_AFTER_INNER),
    "right_after": Operator(
        "List: items matching each of these matchers, one right after another: `right_after: [--subagent, --model]` "
        "is --model right after --subagent.", _MATCHERS, _RIGHT_AFTER, inner=_RIGHT_AFTER_INNER),
    "at": Operator(
        "List: `[N, matcher]`, the item at position N matches (0 the first, -1 the last): `at: [1, open]`.",
        {"type": "array", "prefixItems": [{"type": "integer"}, _MATCHER], "minItems": 2, "maxItems": 2}, _at,
        inner=lambda wanted, value: [(wanted[1], value[wanted[0]])]),
    "valid_branch": Operator(
        "true: a text git accepts as a branch name (`git check-ref-format --branch`); false: one it refuses.",
        {"type": "boolean"}, lambda arg, value: isinstance(value, str) and valid_branch(value) == bool(arg)),
    "distinct": Operator(
        "true: across all the events this expectation matches, the values here are all different (e.g. each "
        "worker's agentId); on a list value, its items are all different too. Inside `after`, `right_after`, `at` "
        "or `contains` it stands on the item matched there (the first match); never inside `not`.", {"const": True},
        lambda arg, value: not isinstance(value, list) or _all_different(value)),
    "absent": Operator("true: the field is not there; false: it is (any value, null too).", {"type": "boolean"},
                       lambda arg, value: (value is ABSENT) == bool(arg), sees_absent=True),
    "not": Operator("Holds when the inner matcher does not (also when the field is absent).", _MATCHER,
                    lambda arg, value: not matches(arg, value), sees_absent=True),
}


def _all_different(values: list[Any]) -> bool:
    seen = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in values]
    return len(seen) == len(set(seen))


def is_operators(matcher: Any) -> bool:
    """A mapping of operators only (else a mapping is a partial match of an object)."""
    return isinstance(matcher, dict) and bool(matcher) and matcher.keys() <= OPERATORS.keys()


def _inner_matchers(name: str, arg: Any) -> list[tuple[str, Any]]:
    """The matchers inside an operator's argument, each with its place in it (``[1]``), in the order
    :attr:`Operator.inner` pairs them."""
    if name in ("after", "right_after") and isinstance(arg, list):
        return [(f"[{i}]", m) for i, m in enumerate(arg)]
    if name == "at" and isinstance(arg, list) and len(arg) == 2:
        return [("[1]", arg[1])]
    if name == "contains":
        return [(f"[{i}]", m) for i, m in enumerate(arg)] if isinstance(arg, list) else [("", arg)]
    return []


def distinct_sites(matcher: Any, where: str = "") -> list[str]:
    """Where in ``matcher`` a ``distinct`` stands (``argv.right_after[1]``), in the order of :func:`bound`."""
    if is_operators(matcher):
        own = [where] if matcher.get("distinct") else []
        return own + [s for name, arg in matcher.items() if OPERATORS[name].inner is not None
                      for place, m in _inner_matchers(name, arg) for s in distinct_sites(m, f"{where}.{name}{place}")]
    if isinstance(matcher, dict):
        return [s for k, m in matcher.items() for s in distinct_sites(m, f"{where}.{k}" if where else str(k))]
    if isinstance(matcher, list):
        return [s for i, m in enumerate(matcher) for s in distinct_sites(m, f"{where}[{i}]")]
    return []


def bound(matcher: Any, value: Any) -> list[Any]:
    """The values the ``distinct`` operators of ``matcher`` stand on in ``value``, which it matches: one per
    place :func:`distinct_sites` names, in its order."""
    if is_operators(matcher):
        own = [value] if matcher.get("distinct") else []
        for name, arg in matcher.items():
            inner = OPERATORS[name].inner
            if inner is not None:
                own += [b for m, item in inner(arg, value) for b in bound(m, item)]
        return own
    if isinstance(matcher, dict):
        fields = value if isinstance(value, dict) else {}
        return [b for k, m in matcher.items() for b in bound(m, fields.get(k, ABSENT))]
    if isinstance(matcher, list):
        items = value if isinstance(value, list) else []
        return [b for m, v in zip(matcher, items, strict=False) for b in bound(m, v)]
    return []


def matches(matcher: Any, value: Any) -> bool:
    if is_operators(matcher):
        for name, arg in matcher.items():
            op = OPERATORS[name]
            if (value is ABSENT and not op.sees_absent) or not op.holds(arg, value):
                return False
        return True
    if value is ABSENT:
        return False
    if isinstance(matcher, dict):
        return isinstance(value, dict) and all(matches(m, value.get(k, ABSENT)) for k, m in matcher.items())
    if isinstance(matcher, list):
        return isinstance(value, list) and len(matcher) == len(value) and all(map(matches, matcher, value))
    return (type(matcher) is type(value) and bool(matcher == value)) or (
        isinstance(matcher, int | float) and isinstance(value, int | float) and not isinstance(value, bool)
        and not isinstance(matcher, bool) and matcher == value
    )


# -- what the reader refuses in a matcher -------------------------------------------------------------------


def _argument_problem(schema: Schema, arg: Any) -> str | None:
    """Why ``arg`` is not of an operator argument's schema (the forms :data:`OPERATORS` uses), or None."""
    if "const" in schema:
        return None if arg is schema["const"] or (type(arg) is type(schema["const"]) and arg == schema["const"]) \
            else f"takes only {json.dumps(schema['const'])}"
    kind = schema.get("type")
    if kind == "string" and not isinstance(arg, str):
        return "takes a text"
    if kind == "boolean" and not isinstance(arg, bool):
        return "takes true or false"
    if kind == "number" and (isinstance(arg, bool) or not isinstance(arg, int | float)):
        return "takes a number"
    if kind == "array":
        if not isinstance(arg, list) or len(arg) < schema.get("minItems", 0) or len(arg) > schema.get("maxItems",
                                                                                                      len(arg)):
            return "takes [N, matcher]" if "prefixItems" in schema else "takes a list of one or more matchers"
        if "prefixItems" in schema and not is_int(arg[0]):
            return "takes [N, matcher], N a whole number"
    return None


def matcher_problems(matcher: Any, path: str, inside_not: bool = False) -> list[tuple[Any, Any, str]]:
    """What the reader refuses in a matcher, as (container, key, message): an operator's argument of the wrong
    form, a regular expression that does not compile, a mapping that mixes operators with fields, a
    ``distinct`` inside ``not``. Any of these would otherwise match nothing, or everything, in silence."""
    if not isinstance(matcher, dict | list):
        return []
    if isinstance(matcher, list):
        return [p for i, m in enumerate(matcher) for p in matcher_problems(m, f"{path}[{i}]", inside_not)]
    named = [k for k in matcher if k in OPERATORS]
    if named and len(named) < len(matcher):
        others = [k for k in matcher if k not in OPERATORS]
        return [(matcher, others[0], f"{path}: mixes operators ({', '.join(named)}) with fields "
                 f"({', '.join(map(str, others))}); a mapping is either operators or fields to match")]
    if not named:
        return [p for k, m in matcher.items() for p in matcher_problems(m, f"{path}.{k}", inside_not)]
    out: list[tuple[Any, Any, str]] = []
    for name, arg in matcher.items():
        problem = _argument_problem(OPERATORS[name].argument, arg)
        if problem is None and name == "matches":
            try:
                re.compile(arg)
            except re.error as error:
                problem = f"is no regular expression Python reads ({error})"
        if problem is not None:
            out.append((matcher, name, f"{path}.{name} {problem}"))
        elif name == "distinct" and inside_not:
            out.append((matcher, name, f"{path}.distinct: inside not there is no value for it to stand on"))
        elif name == "not":
            out += matcher_problems(arg, f"{path}.not", inside_not=True)
        else:
            out += [p for place, m in _inner_matchers(name, arg)
                    for p in matcher_problems(m, f"{path}.{name}{place}", inside_not)]
    return out


# -- reading ----------------------------------------------------------------------------------------------


class Expectations(Kind):
    """``expect``: a list of ``KIND: {fields}``, ``count: N`` + ``KIND: …``, ``no KIND: …``, ``KIND``, ``no KIND``."""

    expected = "a list of expectations"

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError("expectations are read, with their problems, never only accepted")

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YList):
            r.fail(where, key, f"expect: expected {self.expected}")
            return FAILED
        found = [self.read_one(r, value, i, item) for i, item in enumerate(value)]
        return FAILED if None in found else tuple(found)

    @staticmethod
    def read_one(r: Reader, items: YList, i: int, item: Any) -> Expectation | None:
        path = f"expect[{i}]"
        where: Any
        if isinstance(item, str):
            item_map: dict[str, Any] = {item: None}
            where = items
        elif isinstance(item, YMap):
            item_map, where = item, item
        else:
            r.fail(items, i, f"{path}: expected '<kind>: {{fields}}' or 'no <kind>'")
            return None
        count = None
        named = [k for k in item_map if k != "count"]
        if "count" in item_map:
            count = item_map["count"]
            if not is_int(count) or count < 0:
                r.fail(where, "count", f"{path}.count: expected a whole number")
                return None
        if len(named) != 1:
            r.fail(items, i, f"{path}: name exactly one event kind (got {', '.join(named) or 'none'})")
            return None
        kind = named[0]
        if kind.startswith("no "):
            if count is not None:
                r.fail(where, "count", f"{path}: 'no {kind[3:]}' already means count 0; drop count")
                return None
            kind, count = kind[3:], 0
        if kind not in EVENTS:
            r.fail(items, i, f"{path}: no event kind {kind!r}{did_you_mean(kind, EVENTS)}")
            return None
        fields = item_map[named[0]]
        if fields is None:
            fields = {}
        if not isinstance(fields, dict):
            r.fail(items, i, f"{path}.{named[0]}: expected the fields to match as a mapping")
            return None
        if not _fields_known(r, fields, kind, f"{path}.{named[0]}"):
            return None
        return Expectation(kind, plain(fields), count, items.line_of(i))

    def schema(self, defs: Defs) -> Schema:
        defs["expectation"] = _expectation_schema()
        defs["matcher"] = {
            "description": "A value (equal), a mapping (a partial match, recursively), a list (equal item by item), "
            "or a mapping of operators only.",
            "anyOf": [
                {"$ref": "#/$defs/operators"},
                {"description": "Any other value: matched by equality (mappings partially)."},
            ],
        }
        defs["operators"] = {
            "description": "Operators; every one given must hold.",
            "type": "object",
            "minProperties": 1,
            "additionalProperties": False,
            "properties": {name: {"description": op.doc, **op.argument} for name, op in OPERATORS.items()},
        }
        return {"type": "array", "items": {"$ref": "#/$defs/expectation"}}


#: The fields whose value is an object: a mapping there is a partial match of it, with keys of its own.
_OBJECT_FIELDS = frozenset({"input", "result", "answer", "truncated"})


def _fields_known(r: Reader, fields: Any, kind: str, path: str) -> bool:
    """Every field named is one the event kind has, and a mapping on a field whose value is no object holds
    operators only: a misspelt name would otherwise match nothing, and ``no KIND`` would hold at once."""
    known = {"t": _T, "kind": _KIND, **EVENTS[kind].fields}
    before = len(r.problems)
    for name, matcher in fields.items():
        if name not in known:
            r.fail(fields, name, f"{path}: unknown field {name!r} in an expectation"
                   f"{did_you_mean(name, known)}")
            continue
        unknown = [op for op in matcher if op not in OPERATORS] \
            if isinstance(matcher, dict) and name not in _OBJECT_FIELDS else []
        for op in unknown:
            r.fail(matcher, op, f"{path}.{name}: unknown operator {op!r}{did_you_mean(op, OPERATORS)}")
        if not unknown:  # else the mapping also "mixes operators with fields": said once is enough
            for where, key, message in matcher_problems(matcher, f"{path}.{name}"):
                r.fail(where, key, message)
    return len(r.problems) == before


def _fields_schema(kind: str, event: EventKind, no: bool) -> Schema:
    lead = f"No {kind} event may match these fields. " if no else ""
    return {
        "description": f"{lead}{event.doc} The fields to match (a partial match; null or nothing: any {kind} event).",
        "type": ["object", "null"],
        "properties": {
            name: {"description": doc, **_MATCHER}
            for name, doc in {"t": _T, "kind": _KIND, **event.fields}.items()
        },
        "additionalProperties": False,
    }


def _expectation_schema() -> Schema:
    names = "|".join(re.escape(kind) for kind in EVENTS)
    properties: Schema = {
        "count": {
            "description": "How many events must match exactly (without it: at least one). Not with a `no …` key.",
            "type": "integer",
            "minimum": 0,
        },
    }
    properties |= {kind: _fields_schema(kind, event, no=False) for kind, event in EVENTS.items()}
    properties |= {f"no {kind}": _fields_schema(kind, event, no=True) for kind, event in EVENTS.items()}
    return {
        "description": "`KIND: {fields}` (at least one such event), with `count: N` (exactly N), or `no KIND: "
        "{fields}` (none). A bare `KIND` or `no KIND` matches on the kind alone.",
        "anyOf": [
            {"description": "`KIND` or `no KIND`.", "type": "string", "pattern": f"^(no )?({names})$"},
            {
                "description": "One event kind (or `no` kind) with its fields, and optionally count.",
                "type": "object",
                "additionalProperties": False,
                "properties": properties,
                "allOf": [
                    {
                        "if": {"required": ["count"]},
                        "then": {"minProperties": 2, "maxProperties": 2},
                        "else": {"minProperties": 1, "maxProperties": 1},
                    },
                    {
                        "if": {"propertyNames": {"not": {"pattern": "^no "}}},
                        "else": {"not": {"required": ["count"]}},
                    },
                ],
            },
        ],
    }


# -- checking -----------------------------------------------------------------------------------------------


def failures(expectations: Sequence[Expectation], events: Sequence[dict[str, Any]], file: str = "") -> list[str]:
    """One ``FILE:LINE: …`` message per expectation that does not hold (empty: all hold)."""
    out = []
    for exp in expectations:
        found = [e for e in events if e["kind"] == exp.kind and matches(exp.fields, e)]
        sites = distinct_sites(exp.fields)
        values = [bound(exp.fields, e) for e in found]
        repeated = [site for i, site in enumerate(sites) if not _all_different([v[i] for v in values])]
        if repeated:
            out.append(f"{file}:{exp.line}: expected the {exp.kind} events' {repeated[0]} to be all different, found "
                       "one twice")
            continue
        if exp.count is None and found:
            continue
        if exp.count is not None and len(found) == exp.count:
            continue
        wanted = "at least one" if exp.count is None else ("no" if exp.count == 0 else f"exactly {exp.count}")
        what = json.dumps(exp.fields, ensure_ascii=False) if exp.fields else "(any)"
        message = f"{file}:{exp.line}: expected {wanted} {exp.kind} event matching {what}, found {len(found)}"
        if found and exp.count == 0:
            message += f" (first at t={found[0]['t']})"
        elif not found:
            message += _closest(exp, events)
        out.append(message)
    return out


def _shown(value: Any, limit: int = 200) -> str:
    text = "absent" if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _closest(exp: Expectation, events: Sequence[dict[str, Any]]) -> str:
    """What came nearest: the event of the kind that matches the most fields, and the first field it differs
    in (what was expected, what it had); or that no event of the kind happened."""
    same_kind = [e for e in events if e["kind"] == exp.kind]
    if not same_kind:
        return f"; no {exp.kind} event at all"
    fields = exp.fields if isinstance(exp.fields, dict) else {}

    def missed(event: dict[str, Any]) -> list[str]:
        return [k for k, m in fields.items() if not matches(m, event.get(k, ABSENT))]

    # The first of the nearest, in the transcript's order. Each misses a field at least: none matched them all.
    closest = min(same_kind, key=lambda e: len(missed(e)))
    differs = missed(closest)
    where, wanted, got = _first_difference(fields[differs[0]], closest.get(differs[0], ABSENT), differs[0])
    more = f" (and {len(differs) - 1} more field(s))" if len(differs) > 1 else ""
    return (f"; the closest, the {exp.kind} at t={closest['t']}, differs in {where}: expected "
            f"{_shown(wanted)}, got {_shown(got)}{more}")


def _first_difference(matcher: Any, value: Any, where: str) -> tuple[str, Any, Any]:
    """Inside a partial match of an object: the first key that does not match (``result.status``)."""
    is_partial = isinstance(matcher, dict) and matcher and not is_operators(matcher)
    if is_partial and isinstance(value, dict):
        for key, inner in matcher.items():
            if not matches(inner, value.get(key, ABSENT)):
                return _first_difference(inner, value.get(key, ABSENT), f"{where}.{key}")
    return where, matcher, value
