"""The module's JS half under the engine's own testing kit: ``claude plugin test`` runs ``tests/plugin/*.test.ts``.

Those tests play the Python side themselves (they answer the module's ``$.process.spawn`` and ``$.http.fetch``),
so no Python host runs. The kit runs every ``*.test.ts`` under the folder it is given and may write editor types
there, so the run is made in a scratch copy of the plugin (its manifest, its hooks file, the module) beside the
test files: only they run, and nothing is written into the checkout.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent_cards_claude_driver.runs import run_plugin_test

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TESTS = sorted((ROOT / "tests" / "plugin").glob("*.test.ts"))


def kit_folder(folder: Path) -> Path:
    """The plugin as it ships (manifest, hooks file, module) and the kit's tests, in a folder of its own."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "hooks").mkdir()
    (folder / "tests").mkdir()
    shutil.copy(ROOT / ".claude-plugin" / "plugin.json", folder / ".claude-plugin" / "plugin.json")
    for name in ("hooks.json", "agent-cards.js"):
        shutil.copy(ROOT / "hooks" / name, folder / "hooks" / name)
    for test in TESTS:
        shutil.copy(test, folder / "tests" / test.name)
    return folder


def test_the_js_half_passes_the_engine_kit(claude: Path, tmp_path: Path, timings: list[str]) -> None:
    assert TESTS, "tests/plugin holds the kit's tests"
    run = run_plugin_test(claude, kit_folder(tmp_path / "plugin"), tmp_path / "home", timeout=300)
    timings.append(f"claude plugin test ({len(TESTS)} file(s)): {run.elapsed:.2f}s")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    written = sum(len(re.findall(r"(?m)^test\(", test.read_text(encoding="utf-8"))) for test in TESTS)
    passed = re.search(r"(\d+) pass", output)
    assert passed and int(passed.group(1)) == written, output  # every test the files hold ran, and passed
    assert re.search(r"\b0 fail", output), output
    assert "(fail)" not in output, output


def test_no_kit_test_ships_in_the_module_folder() -> None:
    assert not list((ROOT / "hooks").rglob("*.test.ts*"))
