"""The conformance comparison and plan, without the real engine (``agent-cards conform`` runs them for real)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cards_claude_driver.install import CLAUDE_VERSION
from agent_cards_conformance.compare import by_order, compare, turning_points
from agent_cards_conformance.plan import why_not
from agent_cards_simulator.host.claude_code import ENGINE_VERSION
from agent_cards_simulator.scenario.files import load_all

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ("Async agent launched successfully. (…)\nagentId: session-2-9f81 (internal ID …)")


def test_the_fake_host_models_the_pinned_engine() -> None:
    assert ENGINE_VERSION == CLAUDE_VERSION


def test_a_launch_conforms_by_its_agent_id_and_context() -> None:
    fake = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 800, "kind": "answer", "call": "c1", "context": ["Look in lich."],
             "result": {"status": "async_launched", "agentId": "session-2-9f81"}},
            {"t": 800, "kind": "footer", "line": "lich: 1 worker"}]
    real = [{"t": 0, "kind": "call", "call": "c1", "tool": "Agent"},
            {"t": 1900, "kind": "answer", "call": "c1", "result": LAUNCH, "read": LAUNCH + "\nLook in lich."},
            {"t": 1950, "kind": "footer", "line": None}, {"t": 2000, "kind": "footer", "line": "lich: 1 worker"}]
    assert compare(fake, real).conforms
    real[1]["read"] = LAUNCH
    [difference] = compare(fake, real).differences
    assert (difference.lane, difference.key) == ("answer", "c1")


def test_a_refusal_must_be_the_same_refusal() -> None:
    fake = [{"t": 0, "kind": "answer", "call": "c1", "deny": "lich opened nothing."}]
    real = [{"t": 0, "kind": "answer", "call": "c1", "error": "The user doesn't want to proceed…", "read": ""}]
    [difference] = compare(fake, real).differences
    assert difference.why == "the model read another refusal"


def test_runs_match_by_argv_and_polls_are_left_aside() -> None:
    run = {"kind": "run", "exit": 0, "stdout": "", "stderr": "", "error": None}
    fake = [{**run, "t": 0, "argv": ["lich", "open", "a"], "ms": 800}, {**run, "t": 0, "argv": ["lich", "open", "b"],
                                                                        "ms": 800}]
    real = [{**run, "t": 5, "argv": ["lich", "open", "b"], "ms": 900}, {**run, "t": 9, "argv": ["lich", "open", "a"],
                                                                        "ms": 2000},
            {**run, "t": 6000, "argv": ["lich", "sessions", "--json"], "ms": 30}]
    assert compare(fake, real).conforms
    real[1]["ms"] = 4000
    assert [d.why for d in compare(fake, real).differences] == ["took another time than the tolerance allows"]


def test_counts_that_climb_one_by_one_compare_where_they_turn() -> None:
    assert turning_points(["lich: 1 worker", "lich: 2 workers", "lich: 3 workers", None]) == ["lich: 3 workers", None]
    assert by_order('{"id":"9f82","label":"Session 3"}') == '{"id":"<id>","label":"Session <n>"}'


def test_what_cannot_run_says_why() -> None:
    scenarios, problems = load_all([ROOT / "scenarios" / "workflow.yaml", ROOT / "scenarios" / "taskstop.yaml"])
    assert not problems
    reasons = {Path(s.file).name: why_not(s, []) for s in scenarios}
    assert reasons["taskstop.yaml"] is None
    assert "workflow" in str(reasons["workflow.yaml"])


def test_a_scenario_that_could_run_fails_when_the_engine_is_missing() -> None:
    """CI's conform step (AGENT_CARDS_CONFORM=1) must not pass having run nothing."""
    from agent_cards_conformance.command import conform_one
    from agent_cards_simulator.scenario.files import load_all

    root = Path(__file__).resolve().parents[1] / "scenarios"
    scenarios, problems = load_all([root / "reload.yaml", root / "workflow.yaml"])
    assert not problems
    runnable, workflow = (conform_one(s, None, "tmux not found") for s in scenarios)
    assert (runnable.verdict, runnable.why) == ("failed", "tmux not found")
    assert workflow.verdict == "cannot run"


def test_conform_without_the_plugins_files_says_what_it_needs_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Installed from a wheel, the package has no .claude-plugin/ or hooks/ beside it: one line says so."""
    from agent_cards_conformance import command, real

    monkeypatch.setattr(real, "ROOT", tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    assert command.main([str(ROOT / "scenarios" / "taskstop.yaml")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "needs the plugin's own files" in line and "clone of agent-cards" in line
    monkeypatch.chdir(ROOT)  # a clone's folder is the plugin's
    assert real.plugin_folder() == ROOT
