"""The fake host against the real engine: named scenarios through ``agent-cards conform``.

Each scenario is replayed by the fake host and run in the real interactive Claude Code (the plugin's
bridged module, the scripted model, fake-lich in real time); the two transcripts must agree, or differ
only as ``agent_cards_conformance.command.EXPLAINED`` says. The whole tier is ``agent-cards conform scenarios``.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent_cards_conformance.command import Result, conform_one, to_text
from agent_cards_simulator.scenario.files import load_all

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")]

ROOT = Path(__file__).resolve().parents[2]
#: stop/esc: Esc twice at the idle prompt opens Claude Code's Rewind panel over the footer, and a third closes it.
NAMED = ("permission-refusal", "esc-mid-open", "oversize-task", "unknown-delivery", "reload", "stop/esc")


@pytest.fixture(scope="module")
def results(claude: Path) -> dict[str, Result]:
    """The named runs, two at a time (each its own HOME and lich state)."""
    scenarios, problems = load_all([ROOT / "scenarios" / f"{name}.yaml" for name in NAMED])
    assert not problems, problems
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda s: conform_one(s, claude, ""), scenarios))
    return {name: r for r in done for name in NAMED if Path(r.file).as_posix().endswith(f"scenarios/{name}.yaml")}


@pytest.mark.parametrize("name", NAMED)
def test_the_real_engine_does_what_the_fake_host_says(name: str, results: dict[str, Result]) -> None:
    result = results[name]
    print(to_text(result))
    assert result.verdict in ("conforms", "by design"), to_text(result)


#: What the harness makes real beyond the interactive screen's defaults: git hidden from or refusing the
#: mod's runs only, an open exiting 2, a stand-in status module, Shift+Tab into another mode, claude -p.
MADE_REAL = ("branch/base-git-missing", "branch/base-git-refuses", "fall/broken-hook", "footer/errands",
             "footer/modes", "take/not-interactive")


@pytest.fixture(scope="module")
def made_real(claude: Path) -> dict[str, Result]:
    """One at a time: they are short."""
    out: dict[str, Result] = {}
    for name in MADE_REAL:
        [scenario], problems = load_all([ROOT / "scenarios" / f"{name}.yaml"])
        assert not problems, problems
        out[name] = conform_one(scenario, claude, "")
    return out


@pytest.mark.parametrize("name", MADE_REAL)
def test_what_the_harness_makes_real_conforms(name: str, made_real: dict[str, Result]) -> None:
    result = made_real[name]
    print(to_text(result))
    assert result.verdict == "conforms", to_text(result)
