"""docs/scenario.schema.json: made from the format's definitions, a valid 2020-12 schema that every shipped
scenario meets, and that agrees with the reader (agent_cards_simulator.scenario.reader.read) on what it refuses and
what it accepts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_cards_simulator.scenario.expect import EVENTS, OPERATORS
from agent_cards_simulator.scenario.reader import ScenarioError, read
from agent_cards_simulator.scenario.schema import schema_text
from agent_cards_simulator.scenario.settings import OPEN
from agent_cards_simulator.scenario.steps import KINDS as STEP_KINDS
from agent_cards_simulator.scenario.steps import steps_table
from agent_cards_simulator.scenario.yamlnodes import load
from agent_cards_simulator.transcript import EVENT_FIELDS

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "docs" / "scenario.schema.json"
DOCS_FILE = ROOT / "docs" / "scenarios.md"
SCENARIOS = ROOT / "scenarios"
SHIPPED = sorted(p for p in SCENARIOS.rglob("*.yaml") if p.name != "clauses.yaml")

HEAD = "title: A case\nclauses: [TAKE-TYPE]\n"
CALL = "{description: Fix it, prompt: Fix the bug}"


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


def _validator() -> Any:
    return Draft202012Validator(_schema())


def _plain(value: Any) -> Any:
    """YMap and YList as the dict and list they are, without their line bookkeeping."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _schema_errors(text: str) -> list[str]:
    return [f"{error.json_path}: {error.message}" for error in _validator().iter_errors(_plain(load(text)))]


def _reader_errors(text: str) -> list[str]:
    try:
        read("case.yaml", text)
    except ScenarioError as error:
        return error.lines()
    return []


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    schema = _schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "docs/scenario.schema.json is out of date: "
        "python -m agent_cards_simulator.scenario.schema > docs/scenario.schema.json"
    )


def test_the_docs_list_every_step_kind() -> None:
    assert steps_table() in DOCS_FILE.read_text(encoding="utf-8"), (
        "the table of steps in docs/scenarios.md is out of date: "
        "python -m agent_cards_simulator.scenario.schema --steps-table"
    )


def test_every_scenario_file_is_shipped() -> None:
    """Every YAML file under scenarios/ but the clause list is a scenario this module checks."""
    every = {p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.rglob("*.yaml")}
    assert "clauses.yaml" in every
    assert {p.relative_to(SCENARIOS).as_posix() for p in SHIPPED} == every - {"clauses.yaml"}
    assert SCENARIOS / "taskstop.yaml" in SHIPPED and SCENARIOS / "stop" / "refused.yaml" in SHIPPED


#: What reading a scenario may load of the mod and the layers under the format: the project's record
#: classes, and the plain records the format writes as those layers' own (the fake lich's scripts, the host's
#: permission verdict, the scripted git), each with its package, whose ``__init__`` imports nothing.
READER_MAY_LOAD = [
    "agent_cards",
    "agent_cards.record",
    "agent_cards_simulator.host",
    "agent_cards_simulator.host.permission",
    "agent_cards_simulator.lich",
    "agent_cards_simulator.lich.scripts",
    "agent_cards_simulator.runners",
    "agent_cards_simulator.runners.scripted_git",
]


def test_reading_a_scenario_loads_no_runtime_code() -> None:
    """The reader and its model know the format only: no host, no runtime, no mod logic. The host, the lich's
    world and the mod come in with the replay; of them the reader takes only plain records."""
    code = (
        "import sys; from agent_cards_simulator.scenario.reader import read; read('scenarios/taskstop.yaml'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'agent_cards' "
        "or m.startswith(tuple('agent_cards_simulator.' + p for p in ('host', 'lich', 'runners', 'clock')))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == repr(READER_MAY_LOAD)


def test_the_records_the_reader_may_load_import_only_records() -> None:
    """Each module the reader may load of the lower layers imports nothing of the project but the records."""
    code = (
        "import sys; before = set(sys.modules); "
        f"[__import__(m) for m in {READER_MAY_LOAD!r}]; "
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0].startswith('agent_cards') "
        "and m != 'agent_cards_simulator'))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == repr(sorted(READER_MAY_LOAD))


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(SCENARIOS)) for p in SHIPPED])
def test_every_shipped_scenario_meets_the_schema(path: Path) -> None:
    errors = _schema_errors(path.read_text(encoding="utf-8"))
    assert errors == []


INVALID: dict[str, str] = {
    "unknown top-level key": HEAD + "notes: hello\nsteps: []\n",
    "unknown step": HEAD + "steps:\n  - sleep: 100\n",
    "unknown bare step": HEAD + "steps:\n  - pause\n",
    "wait as text": HEAD + 'steps:\n  - wait: "1000"\n',
    "a deny rule's own text": HEAD + "session: {permission: {deny: Denied by a rule.}}\nsteps: []\n",
    "wait negative": HEAD + "steps:\n  - wait: -5\n",
    "wait as a boolean": HEAD + "steps:\n  - wait: true\n",
    "until as a fraction": HEAD + "steps:\n  - until: 1.5\n",
    "unknown key in lich.open": HEAD + "lich:\n  open: {delay: 100}\nsteps: []\n",
    "unknown key in a call's lich": HEAD + f"steps:\n  - call: {CALL}\n    lich: {{status: pending}}\n",
    "title missing": "clauses: [TAKE-TYPE]\nsteps: []\n",
    "steps missing": HEAD,
    "title not text": "title: [a, b]\nclauses: [TAKE-TYPE]\nsteps: []\n",
    "steps not a list": HEAD + "steps: {wait: 1}\n",
    "clauses empty": "title: A case\nclauses: []\nsteps: []\n",
    "clause id in lower case": "title: A case\nclauses: [take-type]\nsteps: []\n",
    "unknown key in a call step": HEAD + f"steps:\n  - call: {CALL}\n    timeout: 3\n",
    "Agent call without a prompt": HEAD + "steps:\n  - call: {description: Fix it}\n",
    "call input not a mapping": HEAD + "steps:\n  - call: Fix the bug\n",
    "unknown isolation": HEAD + "steps:\n  - call: {description: Fix it, prompt: Fix, isolation: local}\n",
    "esc_after inside parallel": HEAD + f"steps:\n  - parallel:\n      - call: {CALL}\n        esc_after: 10\n",
    "parallel empty": HEAD + "steps:\n  - parallel: []\n",
    "parallel of a wait": HEAD + "steps:\n  - parallel:\n      - wait: 10\n",
    "two actions in one step": HEAD + "steps:\n  - {wait: 10, footer: null}\n",
    "taskstop not text": HEAD + "steps:\n  - taskstop: [a]\n",
    "esc false": HEAD + "steps:\n  - esc: false\n",
    "errands a number": HEAD + "steps:\n  - errands: 3\n",
    "session.start unknown key": HEAD + "steps:\n  - session.start: {interactive: true, cwd: x}\n",
    "workflow unknown key": HEAD + "steps:\n  - workflow: {description: a, model: b}\n",
    "unknown session key": HEAD + "session: {interactve: false}\nsteps: []\n",
    "session.env value a boolean": HEAD + "session: {env: {LICH_SUBAGENT_DEPTH: true}}\nsteps: []\n",
    "session.git a number": HEAD + "session: {git: 3}\nsteps: []\n",
    "unknown key in session.git": HEAD + "session: {git: {branch: main, dirty: true}}\nsteps: []\n",
    "permission ask maybe": HEAD + "session: {permission: {ask: maybe}}\nsteps: []\n",
    "permission bare ask": HEAD + "session: {permission: ask}\nsteps: []\n",
    "permission with two decisions": HEAD + "session: {permission: {ask: yes, deny: no way}}\nsteps: []\n",
    "permission unknown word": HEAD + "session: {permission: block}\nsteps: []\n",
    "unknown lich key": HEAD + "lich: {version: 1}\nsteps: []\n",
    "lich.lists item unknown key": HEAD + "lich: {lists: [{from: 0, to: 10}]}\nsteps: []\n",
    "lich.stops exit as text": HEAD + "lich: {stops: {session-2-9f81: {exit: refused}}}\nsteps: []\n",
    "report without after": HEAD + "lich: {open: {report: {text: Done.}}}\nsteps: []\n",
    "delivery a number": HEAD + "lich: {open: {delivery: 3}}\nsteps: []\n",
    "open ms negative": HEAD + "lich: {open: {ms: -1}}\nsteps: []\n",
    "expect unknown kind": HEAD + "steps: []\nexpect:\n  - notes: {}\n",
    "expect unknown bare kind": HEAD + "steps: []\nexpect:\n  - no toasts\n",
    "expect two kinds": HEAD + "steps: []\nexpect:\n  - {run: {}, toast: {}}\n",
    "expect count alone": HEAD + "steps: []\nexpect:\n  - count: 1\n",
    "expect count negative": HEAD + "steps: []\nexpect:\n  - {count: -1, run: {}}\n",
    "expect fields a list": HEAD + "steps: []\nexpect:\n  - run: [open]\n",
    "expect not a list": HEAD + "steps: []\nexpect: {run: {}}\n",
    "clauses null": "title: A case\nclauses: null\nsteps: []\n",
    "about not text": HEAD + "about: [a, b]\nsteps: []\n",
    "a mode not text": HEAD + "session: {modes: [3]}\nsteps: []\n",
    "workflow prompt not text": HEAD + "steps:\n  - workflow: {description: a, prompt: 3}\n",
    "taskstop with a call": HEAD + f"steps:\n  - taskstop: session-2-9f81\n    call: {CALL}\n",
    "count with no": HEAD + "steps: []\nexpect:\n  - {count: 1, no run: {}}\n",
}


@pytest.mark.parametrize("text", INVALID.values(), ids=INVALID.keys())
def test_the_schema_and_the_reader_both_refuse(text: str) -> None:
    assert _reader_errors(text) != []
    assert _schema_errors(text) != []


VALID: dict[str, str] = {
    "the smallest scenario": HEAD + f"steps:\n  - call: {CALL}\n",
    "no steps": HEAD + "steps: []\n",
    "bare steps": HEAD + "steps:\n  - esc\n  - reload\n  - footer\n  - session.start\n",
    "steps with empty values": HEAD + "steps:\n  - esc:\n  - reload: true\n  - footer:\n",
    "session.start forms": HEAD + "steps:\n  - session.start: false\n  - session.start: {interactive: false}\n",
    "waits and errands": HEAD + "steps:\n  - wait: 0\n  - until: 5000\n  - errands: 2 errands\n  - errands: null\n",
    "workflow": HEAD + "steps:\n  - workflow: {description: Step one, prompt: Lint it}\n",
    "every call key": HEAD
    + f"steps:\n  - call: {CALL}\n    tool: Agent\n    id: toolu_X1\n    origin: reviewer\n    agent: a1\n"
    + "    permission: {ask: nobody}\n    lich: {delivery: answered, answer: Done., ms: 10}\n    esc_after: 5\n",
    "another tool": HEAD + "steps:\n  - call: {shell_id: session-2-9f81}\n    tool: TaskStop\n",
    "parallel with a taskstop": HEAD
    + f"steps:\n  - parallel:\n      - call: {CALL}\n      - taskstop: session-2-9f81\n    esc_after: 100\n",
    "taskstop with an id": HEAD + "steps:\n  - taskstop: session-2-9f81\n    id: toolu_stop\n",
    "session in full": HEAD
    + "session:\n  interactive: false\n  start: true\n  env: {LICH_BIN: null, LICH_SUBAGENT_DEPTH: 1, X: y}\n"
    + "  lang: ja\n  git: detached\n  permission: hook-deny\n  modes: [plan mode]\n  agent_types: [db-migrator]\n"
    + "steps: []\n",
    "git in detail": HEAD + "session: {git: {branch: null, exit: 128, stderr: nope, missing: false}}\nsteps: []\n",
    "permission forms": HEAD
    + "session: {permission: {deny: Agent(Explore)}}\nsteps:\n"
    + f"  - call: {CALL}\n    permission: {{ask: yes}}\n"
    + "  - call: {description: b, prompt: c}\n    permission: {hook-deny: Frozen}\n",
    "lich in full": HEAD
    + "lich:\n  installed: true\n  running: true\n  subagent: false\n  project: app\n  checkout: /srv/app\n"
    + "  caller_label: planner\n  lists: [{from: 0, until: 10, stdout: '', stderr: '', exit: 0}]\n"
    + "  stops: {session-2-9f81: {exit: 2}, other-9f82: {stderr: busy}}\n"
    + "  open: {delivery: null, fail: x, handoff_error: y, hang: false, stdout: s, stderr: e, exit: 3, label: L,"
    + " name: n, report: {after: 10, text: t, background: true}}\nsteps: []\n",
    "expectations": HEAD
    + "steps: []\nexpect:\n  - toast\n  - no note\n  - no run: {argv: {contains: open}}\n  - count: 2\n"
    + "    answer: {call: toolu_0001, result: {status: async_launched}}\n  - footer: {t: {gt: 5, le: 10}, line: null}\n"
    + "  - answer: {error: {absent: false}, deny: {not: {matches: '^x'}}}\n  - session.start:\n",
    "a repeated text": HEAD
    + 'steps:\n  - call: {description: Big, prompt: !repeat {text: "é", times: 10, then: "x"}}\n',
}


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_the_schema_and_the_reader_both_accept(text: str) -> None:
    assert _reader_errors(text) == []
    assert _schema_errors(text) == []


def _subschemas(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _subschemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _subschemas(value)


def test_every_property_has_a_description() -> None:
    missing = [
        name
        for node in _subschemas(_schema())
        for name, sub in (node.get("properties") or {}).items()
        if isinstance(sub, dict) and not sub.get("description")
    ]
    assert missing == []


def test_the_schema_names_the_readers_kinds_operators_steps_and_open_keys() -> None:
    defs = _schema()["$defs"]
    expectation = next(alt for alt in defs["expectation"]["anyOf"] if alt.get("type") == "object")
    kinds = {name for name in expectation["properties"] if name != "count" and not name.startswith("no ")}
    assert kinds == set(EVENTS) == set(EVENT_FIELDS)  # the expectations know every kind the transcript records
    assert {name.removeprefix("no ") for name in expectation["properties"] if name.startswith("no ")} == set(EVENTS)
    assert set(defs["operators"]["properties"]) == set(OPERATORS)
    assert set(defs["open"]["properties"]) == set(OPEN.fields)
    for kind, fields in EVENT_FIELDS.items():
        assert set(fields) <= set(expectation["properties"][kind]["properties"])
    described = [alt.get("description") or defs[alt["$ref"].rsplit("/", 1)[1]]["description"]
                 for alt in defs["step"]["anyOf"][1:]]
    assert described == [kind.doc for kind in STEP_KINDS.values()]
