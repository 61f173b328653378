"""A scenario file, read and checked: every problem becomes one ``FILE:LINE: what is wrong`` line.

The format is documented in docs/scenarios.md. It is defined once: the top level here, the settings in
:mod:`.settings`, the step kinds in :mod:`.steps`, the expectations
in :mod:`agent_cards_simulator.scenario.expect`; each reads, checks and describes itself, and
:mod:`agent_cards_simulator.scenario.schema` makes docs/scenario.schema.json from them. What ``read`` returns is
:mod:`agent_cards_simulator.scenario.model`: plain records, no runtime code (the settings the fake lich, the host
and the scripted git play are their own plain records).

Short for the common case (a session inside lich, interactive, on branch ``main``; every open answers
``pending`` after 800 ms), precise when needed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_cards.record import replace
from agent_cards_simulator.lich.scripts import LichScript
from agent_cards_simulator.scenario.expect import KINDS, OPERATORS, Expectations
from agent_cards_simulator.scenario.model import DEFAULT_ENV, Expectation, Scenario, ScenarioSession, Step
from agent_cards_simulator.scenario.settings import LICH, SESSION
from agent_cards_simulator.scenario.spec import (
    FAILED,
    Defs,
    Field,
    Kind,
    Reader,
    RecordKind,
    Schema,
    TextKind,
    did_you_mean,
    show,
)
from agent_cards_simulator.scenario.steps import Steps, opens
from agent_cards_simulator.scenario.variants import Variants, expand
from agent_cards_simulator.scenario.yamlnodes import YamlError, YList, YMap, load, read_file

__all__ = ["DEFAULT_ENV", "KINDS", "OPERATORS", "TOP", "Expectation", "Scenario", "ScenarioError", "read"]


class ScenarioError(Exception):
    """The file is not a valid scenario: ``problems`` holds ``(line, message)`` pairs."""

    def __init__(self, file: str, problems: list[tuple[int, str]]) -> None:
        super().__init__("\n".join(_one_line(f"{file}:{line}: {message}") for line, message in problems))
        self.file = file
        self.problems = problems

    def lines(self) -> list[str]:
        """One ``FILE:LINE: what`` line per problem (a control character in it is escaped: one line each)."""
        return [_one_line(f"{self.file}:{line}: {message}") for line, message in self.problems]


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


_CLAUSE = re.compile(r"[A-Z]+(-[A-Z]+)*")


class _Clauses(Kind):
    """Clause ids such as ``TAKE-TYPE``, at least one (whether each is known is checked by ``read``)."""

    expected = "a non-empty list of clause ids"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(
            isinstance(item, str) and _CLAUSE.fullmatch(item) for item in value
        )

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YList) or not value:
            r.fail(where, key, "clauses: expected a non-empty list of clause ids (scenarios/clauses.yaml)")
            return FAILED
        ok = True
        for i, item in enumerate(value):
            if not isinstance(item, str) or not _CLAUSE.fullmatch(item):
                r.fail(value, i, f"clauses[{i}]: {show(item)} is not a clause id such as TAKE-TYPE")
                ok = False
        return tuple(value) if ok else FAILED

    def schema(self, defs: Defs) -> Schema:
        return {
            "type": "array",
            "minItems": 1,
            "items": {
                "description": "A clause id such as TAKE-TYPE.",
                "type": "string",
                "pattern": f"^{_CLAUSE.pattern}$",
            },
        }


#: The top level of a scenario file.
TOP = RecordKind(
    [
        Field("title", TextKind(), "One line: what the scenario shows. Printed by the replay and stored in the "
              "snapshot.", default="", missing="{path}: 'title' is missing"),
        Field("clauses", _Clauses(), "The ids of the specification clauses the scenario shows "
              "(scenarios/clauses.yaml). At least one.", default=(), missing="{path}: 'clauses' is missing"),
        Field("about", TextKind(), "Free text for readers: why the scenario exists and how to read its timeline. The "
              "replay ignores it."),
        Field("session", SESSION, "The Claude Code session the mod runs in.", default=None),
        Field("lich", LICH, "How the fake lich behaves.", default=None),
        Field("steps", Steps(), "What happens, in order. A step begins when the one before it has finished.",
              default=(), missing="{path}: 'steps' is missing"),
        Field("expect", Expectations(), "Expectations checked against the transcript once the steps have run.",
              default=()),
        Field("variants", Variants(), "Several cases in one file: each variant is this scenario with its own "
              "changes (merged `session` and `lich`, values `set` at paths, expectations added), replayed and "
              "snapshotted under its name. The file's own scenario is then only what they share."),
    ],
    description="A scenario replayed by `agent-cards replay`, described in docs/scenarios.md. The schema describes "
    "the file after YAML tags are expanded: a `!repeat {text, times, then}` value is the text it builds, so it "
    "stands wherever a text may.",
)


def read(path: Path | str, text: str | None = None, known_clauses: set[str] | None = None) -> Scenario:
    file = str(path)
    try:  # a hostile file too: bounded in size, depth, aliases, texts (agent_cards_simulator.scenario.yamlnodes)
        data = load(text if text is not None else read_file(path))
    except YamlError as error:
        raise ScenarioError(file, [(error.line, error.message)]) from None
    if not isinstance(data, YMap):
        raise ScenarioError(file, [(1, "a scenario is a mapping with title, clauses and steps")])
    if "variants" in data:
        return _with_variants(file, data, known_clauses)
    return _scenario(file, data, known_clauses)


def _with_variants(file: str, data: YMap, known_clauses: set[str] | None) -> Scenario:
    r = Reader()
    made = expand(r, data)
    variants, problems = [], list(r.problems)
    for name, one in made:
        try:
            variants.append(replace(_scenario(file, one, known_clauses), variant=name))
        except ScenarioError as error:
            problems += [(line, f"variant {name!r}: {message}") for line, message in error.problems]
    if problems or not variants:
        raise ScenarioError(file, sorted(set(problems)) or [(data.line_of("variants"), "variants: none given")])
    first = variants[0]
    return replace(first, variant=None, variants=tuple(variants), expect=(), steps=())


def _scenario(file: str, data: YMap, known_clauses: set[str] | None) -> Scenario:
    r = Reader()
    r.mapping(None, 0, data, "scenario", TOP.fields)
    parts = TOP.read_fields(r, data, "scenario", child=str)
    clauses, clause_lines = _known(r, data, known_clauses)
    if r.problems or parts is FAILED:
        raise ScenarioError(file, sorted(r.problems))
    steps: tuple[Step, ...] = parts["steps"]
    listed = data.get("steps")
    lines = tuple(listed.line_of(i) for i in range(len(steps))) if isinstance(listed, YList) else ()
    lich: LichScript = parts["lich"] or LichScript()
    return Scenario(
        file=file,
        title=parts["title"],
        clauses=clauses,
        session=parts["session"] or ScenarioSession(),
        lich=replace(lich, by_prompt=opens(steps)),
        steps=steps,
        step_lines=lines,
        expect=parts["expect"],
        clause_lines=clause_lines,
        about=parts["about"],
    )


def _known(r: Reader, top: YMap, known: set[str] | None) -> tuple[tuple[str, ...], dict[str, int]]:
    """The clause ids the file names, each checked against the clause list when there is one."""
    value = top.get("clauses")
    if not isinstance(value, YList):
        return (), {}
    ids: list[str] = []
    lines: dict[str, int] = {}
    for i, item in enumerate(value):
        if not isinstance(item, str) or not _CLAUSE.fullmatch(item):
            continue
        if known is not None and item not in known:
            r.fail(value, i, f"clauses[{i}]: no clause {item!r}{did_you_mean(item, known)}")
        else:
            ids.append(item)
            lines[item] = value.line_of(i)
    return tuple(ids), lines
