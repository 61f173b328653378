"""The vocabulary the scenario format is written in: each piece reads a value, checks it, and describes it.

A *kind* (``TextKind``, ``Ms``, ``RecordKind``, …) is one value of the format. It knows three things, so they
are said once:

- ``read(r, where, key, value, path)``: the value checked and turned into the model's value; every
  problem goes to ``r`` as one ``FILE:LINE: what`` line (with "did you mean" where it helps);
- ``accepts(value)``: the same check without a message (for a step's value, which words its own);
- ``schema(defs)``: its JSON Schema, descriptions included; a named kind is put in ``defs`` once and
  referred to with ``$ref``.

Records (mappings of known keys) are tables of ``Field``s. The step kinds
(:mod:`agent_cards_simulator.scenario.steps`), the expectations (:mod:`agent_cards_simulator.scenario.expect`) and the
settings (:mod:`.reader`) are written with these; :mod:`.schema`
puts the schema together from them. Nothing here knows the fake host or lich.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from agent_cards.record import Record, Value, field
from agent_cards_simulator.scenario.yamlnodes import YList, YMap, line_of

Schema = dict[str, Any]
Defs = dict[str, Schema]


class _Failed:
    def __repr__(self) -> str:
        return "FAILED"


#: What ``read`` returns for a value it refused (the problem is already reported).
FAILED: Final = _Failed()


class Reader(Record):
    """Collects problems as ``(line, message)`` pairs instead of stopping at the first one."""

    problems: list[tuple[int, str]] = field(default_factory=list)

    def fail(self, where: object, key: str | int | None, message: str) -> None:
        self.problems.append((line_of(where, key) if key is not None else int(getattr(where, "line", 1)), message))

    def mapping(
        self, where: object, key: str | int, value: Any, path: str, allowed: Mapping[str, Any] | AbstractSet[str]
    ) -> YMap | None:
        """``value`` as a mapping whose keys are all ``allowed`` (each unknown key is one problem)."""
        if not isinstance(value, YMap):
            self.fail(where, key, f"{path}: expected a mapping, got {show(value)}")
            return None
        for name in value:
            if name not in allowed:
                self.fail(value, name, f"{path}: unknown key {name!r}{did_you_mean(name, allowed)}")
        return value


def show(value: Any) -> str:
    if isinstance(value, YMap):
        return "a mapping"
    if isinstance(value, YList):
        return "a list"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"a number of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    import difflib  # only for a misspelt key

    found = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {found[0]!r}?)" if found else ""


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- kinds ----------------------------------------------------------------------------------------------


class Kind(ABC):
    """One value of the format (see the module's doc)."""

    #: How a problem names what was expected: "text", "a whole number", …
    expected: str = "a valid value"
    #: What a refusal says after the path, when "expected …, got …" does not fit (empty: that form).
    refusal: str = ""
    description: str = ""

    @abstractmethod
    def accepts(self, value: Any) -> bool: ...

    @abstractmethod
    def schema(self, defs: Defs) -> Schema: ...

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if self.accepts(value):
            return self.convert(value)
        r.fail(where, key, f"{path}: {self.refusal or f'expected {self.expected}, got {show(value)}'}")
        return FAILED

    def convert(self, value: Any) -> Any:
        """The model's value of an accepted value (YAML's own by default)."""
        return value


def described(schema: Schema, description: str) -> Schema:
    return {"description": description, **schema} if description else schema


class TextKind(Kind):
    expected = "text"

    def __init__(self, description: str = "", examples: tuple[str, ...] = ()) -> None:
        self.description = description
        self.examples = examples

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str)

    def schema(self, defs: Defs) -> Schema:
        schema: Schema = {"type": "string"}
        if self.examples:
            schema["examples"] = list(self.examples)
        return described(schema, self.description)


class Bool(Kind):
    expected = "true or false"

    def __init__(self, description: str = "") -> None:
        self.description = description

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def schema(self, defs: Defs) -> Schema:
        return described({"type": "boolean"}, self.description)


class Int(Kind):
    """A whole number; with ``minimum=0`` a time in ms (never negative, at most ``MAX_MS``).

    Every whole number is bounded (``maximum``, else ``MAX_INT``): a huge one cannot reach the replay.
    """

    expected = "a whole number"

    def __init__(self, description: str = "", minimum: int | None = None, maximum: int | None = None) -> None:
        self.description = description
        self.minimum = minimum
        self.maximum = maximum

    def accepts(self, value: Any) -> bool:
        return (is_int(value) and (self.minimum is None or value >= self.minimum)
                and value <= self._maximum and value >= -MAX_INT)

    @property
    def _maximum(self) -> int:
        return MAX_INT if self.maximum is None else self.maximum

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not is_int(value):
            r.fail(where, key, f"{path}: expected {self.expected}, got {show(value)[:80]}")
            return FAILED
        if self.minimum is not None and value < self.minimum:
            r.fail(where, key, f"{path}: a time in ms cannot be negative")
            return FAILED
        if value > self._maximum or value < -MAX_INT:
            limit = f"{self._maximum} ms (a day of virtual time)" if self.maximum == MAX_MS else str(self._maximum)
            r.fail(where, key, f"{path}: at most {limit}")
            return FAILED
        return value

    def schema(self, defs: Defs) -> Schema:
        schema: Schema = {"type": "integer"}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return described(schema, self.description)


#: The longest time or duration a scenario may name, and the virtual time no replay goes past: a day.
#: (The clock counts whole microseconds; past a day the footer's 5 s poll alone would make a transcript
#: of more than 17,000 runs.)
MAX_MS = 86_400_000
#: The largest whole number of any other field (an exit code, a count): well inside a float's exact range.
MAX_INT = 2**31 - 1


def Ms(description: str = "") -> Int:
    """A time or a duration in virtual ms: a whole number, never negative."""
    return Int(description, minimum=0, maximum=MAX_MS)


class Nullable(Kind):
    """``inner`` or null."""

    def __init__(self, inner: Kind, description: str = "", null: str = "", expected: str = "") -> None:
        self.inner = inner
        self.description = description
        self.null = null  # what null means, when it is worth saying in the schema
        self.expected = expected or f"{inner.expected} or null"

    def accepts(self, value: Any) -> bool:
        return value is None or self.inner.accepts(value)

    def convert(self, value: Any) -> Any:
        return None if value is None else self.inner.convert(value)

    def schema(self, defs: Defs) -> Schema:
        inner = self.inner.schema(defs)
        if set(inner) <= {"type", "description"} and isinstance(inner.get("type"), str):
            return described({"type": [inner["type"], "null"]}, self.description)
        return described({"anyOf": [inner, described({"type": "null"}, self.null)]}, self.description)


class Anything(Kind):
    """Any value at all (a key of a tool's input, which the tool itself checks)."""

    def __init__(self, description: str = "") -> None:
        self.description = description

    def accepts(self, value: Any) -> bool:
        return True

    def schema(self, defs: Defs) -> Schema:
        return described({}, self.description)


class Const(Kind):
    """One of a few exact values (``true`` or null for a step without a value)."""

    def __init__(self, values: tuple[Any, ...], description: str = "", expected: str = "", refusal: str = "") -> None:
        self.values = values
        self.description = description
        self.expected = expected or " or ".join(map(repr, values))
        self.refusal = refusal

    def accepts(self, value: Any) -> bool:
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def schema(self, defs: Defs) -> Schema:
        return described({"enum": list(self.values)}, self.description)


class ListOf(Kind):
    expected = "a list"

    def __init__(self, item: Kind, description: str = "", min_items: int = 0) -> None:
        self.item = item
        self.description = description
        self.min_items = min_items

    def accepts(self, value: Any) -> bool:
        return isinstance(value, list) and len(value) >= self.min_items and all(map(self.item.accepts, value))

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YList):
            r.fail(where, key, f"{path}: expected {self.expected}, got {show(value)}")
            return FAILED
        items = [self.item.read(r, value, i, item, f"{path}[{i}]") for i, item in enumerate(value)]
        return FAILED if FAILED in items else tuple(items)

    def schema(self, defs: Defs) -> Schema:
        schema: Schema = {"type": "array"}
        if self.min_items:
            schema["minItems"] = self.min_items
        schema["items"] = self.item.schema(defs)
        return described(schema, self.description)


class AnyOf(Kind):
    """The first of ``kinds`` that accepts the value (a step's value with several forms)."""

    def __init__(self, *kinds: Kind, description: str = "", expected: str = "", refusal: str = "") -> None:
        self.kinds = kinds
        self.description = description
        self.expected = expected or " or ".join(k.expected for k in kinds)
        self.refusal = refusal

    def accepts(self, value: Any) -> bool:
        return any(k.accepts(value) for k in self.kinds)

    def convert(self, value: Any) -> Any:
        return next(k for k in self.kinds if k.accepts(value)).convert(value)

    def schema(self, defs: Defs) -> Schema:
        return described({"anyOf": [k.schema(defs) for k in self.kinds]}, self.description)


class Field(Value):
    """One key of a record: its kind, its description (the kind's when empty), what its absence means."""

    key: str
    kind: Kind
    description: str = ""
    #: The model's value when the key is absent (also the argument name, see ``RecordKind.attr``).
    default: Any = None
    #: The key must be given; the problem's wording (``{path}`` is the record's path).
    missing: str | None = None
    #: The model's argument the value goes to (default: the key).
    attr: str | None = None


class RecordKind(Kind):
    """A mapping of known keys; its model value is ``build(**values)``.

    With ``name`` its schema is put in ``$defs`` under that name, once. Unknown keys are refused with a
    "did you mean"; a missing required key is one problem. With ``others``, keys besides the fields are
    allowed and passed on: the fields are checked, and the value is the mapping as written.
    """

    expected = "a mapping"

    def __init__(self, fields: list[Field], build: Callable[..., Any] = dict, *, description: str = "",
                 name: str | None = None, extra: Callable[[Defs], Schema] | None = None,
                 others: bool = False) -> None:
        self.fields = {f.key: f for f in fields}
        self.build = build
        self.description = description
        self.name = name
        self.extra = extra  # more schema keywords (if/then, …)
        self.others = others

    def accepts(self, value: Any) -> bool:
        return (
            isinstance(value, dict)
            and all((k in self.fields and self.fields[k].kind.accepts(v)) or (self.others and k not in self.fields)
                    for k, v in value.items())
            and all(f.missing is None or f.key in value for f in self.fields.values())
        )

    def convert(self, value: Any) -> Any:
        if self.others:
            return plain(value)
        return self.build(**{
            f.attr or f.key: f.kind.convert(value[f.key]) if f.key in value else f.default
            for f in self.fields.values()
        })

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if self.others:
            if not isinstance(value, YMap):
                r.fail(where, key, f"{path}: expected a mapping, got {show(value)}")
                return FAILED
            return FAILED if self.read_fields(r, value, path) is FAILED else plain(value)
        m = r.mapping(where, key, value, path, self.fields)
        if m is None:
            return FAILED
        return self.read_fields(r, m, path)

    def read_fields(self, r: Reader, m: YMap, path: str, child: Callable[[str], str] | None = None) -> Any:
        values: dict[str, Any] = {}
        ok = True
        for f in self.fields.values():
            if f.key in m:
                value = f.kind.read(r, m, f.key, m[f.key], child(f.key) if child else f"{path}.{f.key}")
                ok &= value is not FAILED
            else:
                value = f.default
                if f.missing is not None:
                    r.fail(m, None, f.missing.format(path=path))
                    ok = False
            values[f.attr or f.key] = value
        return self.build(**values) if ok else FAILED

    def own_schema(self, defs: Defs) -> Schema:
        schema: Schema = {"type": "object"}
        required = [f.key for f in self.fields.values() if f.missing is not None]
        if required:
            schema["required"] = required
        if not self.others:
            schema["additionalProperties"] = False
        schema["properties"] = {
            f.key: with_description(f.kind.schema(defs), f.description) for f in self.fields.values()
        }
        if self.extra is not None:
            schema.update(self.extra(defs))
        return described(schema, self.description)

    def schema(self, defs: Defs) -> Schema:
        if self.name is None:
            return self.own_schema(defs)
        if self.name not in defs:
            defs[self.name] = {}  # taken: a record that refers to itself stops here
            defs[self.name] = self.own_schema(defs)
        return {"$ref": f"#/$defs/{self.name}"}


def with_description(schema: Schema, description: str) -> Schema:
    """A field's schema with the field's own description first (a ``$ref`` keeps its target's otherwise)."""
    if not description:
        return schema
    return {"description": description, **{k: v for k, v in schema.items() if k != "description"}}


class Named(Kind):
    """A kind whose schema goes in ``$defs`` under ``name`` (referred to with ``$ref``)."""

    def __init__(self, name: str, inner: Kind) -> None:
        self.name = name
        self.inner = inner
        self.expected = inner.expected
        self.description = inner.description

    def accepts(self, value: Any) -> bool:
        return self.inner.accepts(value)

    def convert(self, value: Any) -> Any:
        return self.inner.convert(value)

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        return self.inner.read(r, where, key, value, path)

    def schema(self, defs: Defs) -> Schema:
        if self.name not in defs:
            defs[self.name] = {}
            defs[self.name] = self.inner.schema(defs)
        return {"$ref": f"#/$defs/{self.name}"}


def plain(value: Any) -> Any:
    """YAML's mappings and lists as plain dicts and lists (without their line bookkeeping)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
