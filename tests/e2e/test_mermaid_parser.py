"""``replay --mermaid`` read by Mermaid's own parser (the npm package ``mermaid``, installed once into the
cache): every shipped scenario's diagram, and texts with the characters Mermaid reads as syntax.

Beside the grammar check in tests/test_mermaid.py, which needs nothing installed; skipped with the e2e
tier, and with a reason when the package cannot be installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_cards_simulator.scenario.files import scenario_files
from agent_cards_simulator.scenario.mermaid import diagram
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import replay

ROOT = Path(__file__).resolve().parents[2]
MERMAID = "11.12.1"

#: Reads a JSON list of diagrams on stdin; prints a JSON list: null for each that parses, else the error.
_PARSE = """import mermaid from 'mermaid';
import { readFileSync } from 'node:fs';
const out = [];
for (const text of JSON.parse(readFileSync(0, 'utf8'))) {
  try { await mermaid.parse(text); out.push(null); } catch (e) { out.push(String(e.message || e)); }
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def parser() -> Path:
    folder = Path.home() / ".cache" / "agent-cards" / f"mermaid-{MERMAID}"
    script = folder / "parse.mjs"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run Mermaid's own parser")
    if not (folder / "node_modules" / "mermaid" / "package.json").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                               f"mermaid@{MERMAID}"], capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            pytest.skip(f"mermaid@{MERMAID} could not be installed from npm: {done.stderr.strip()[-300:]}")
    script.write_text(_PARSE, encoding="utf-8")
    return script


def _parsed(script: Path, diagrams: list[str]) -> list[str | None]:
    done = subprocess.run(["node", str(script)], input=json.dumps(diagrams), capture_output=True, text=True,
                          timeout=300, check=True, cwd=script.parent)
    found: list[str | None] = json.loads(done.stdout)
    return found


def test_every_shipped_diagram_parses_with_mermaid(parser: Path) -> None:
    diagrams = []
    for file in scenario_files([ROOT / "scenarios"]):
        result = replay(read(file))
        diagrams += [diagram(one) for one in result.variants or [result]]
    errors = _parsed(parser, diagrams)
    assert [e for e in errors if e is not None] == []


def test_syntax_characters_in_texts_and_par_blocks_parse_with_mermaid(parser: Path) -> None:
    scenario = read("x.yaml", text="title: t\nclauses: [TAKE-TYPE]\nsteps:\n  - parallel:\n"
                    "      - call: {description: 'Fix issue #123 in login; then <b>', prompt: 'a; #b'}\n"
                    "      - call: {description: 'x --> y %% z', prompt: c}\n")
    text = diagram(replay(scenario))
    assert "Fix issue #35;123 in login#59; then #60;b#62;" in text and "\n    par " in text
    assert _parsed(parser, [text]) == [None]
    assert _parsed(parser, ["sequenceDiagram\n    participant A as a\n    A->>A: x; y\n"]) != [None]  # it can fail
