"""docs/scenario.schema.json, made from the definitions of the format (never written by hand).

    python -m agent_cards_simulator.scenario.schema > docs/scenario.schema.json
    python -m agent_cards_simulator.scenario.schema --steps-table     # the table of steps in docs/scenarios.md

The schema is JSON Schema draft 2020-12, for editors with a YAML language server: every key carries
its description. It is made from the same definitions the reader checks with (the top level in
:mod:`.reader`, the settings in :mod:`.settings`, the step kinds in
:mod:`agent_cards_simulator.scenario.steps`, the expectations in :mod:`agent_cards_simulator.scenario.expect`);
tests/test_schema.py checks that the committed file is this one.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from agent_cards.arguments import CommandParser, parse
from agent_cards_simulator.scenario.reader import TOP
from agent_cards_simulator.scenario.spec import Defs
from agent_cards_simulator.scenario.steps import steps_table


def scenario_schema() -> dict[str, Any]:
    defs: Defs = {}
    top = TOP.own_schema(defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agent-cards scenario",
        **top,
        "$defs": defs,
    }


def schema_text() -> str:
    """The schema as the committed file holds it: indented, non-ASCII kept, one newline at the end."""
    return json.dumps(scenario_schema(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str]) -> int:
    """``argv``: as ``sys.argv`` holds it (the program's name first)."""
    parser = CommandParser("python -m agent_cards_simulator.scenario.schema",
                           "Print docs/scenario.schema.json, made from the definitions of the format.",
                           "exit status:\n  0  printed\n  2  the command line is wrong")
    parser.add_argument("--steps-table", action="store_true", help="print the table of steps in docs/scenarios.md")
    options = parse(parser, argv[1:])
    if isinstance(options, int):
        return options
    if options.steps_table:
        print(steps_table())
        return 0
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
