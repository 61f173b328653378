"""Every combination of the depth and cards rules, replayed as a scenario and checked against the spec.

The shipped scenarios (``scenarios/take/``) show the named cells with their snapshots; this test walks
the whole matrix the spec distinguishes: ``LICH_SUBAGENT_DEPTH`` absent / ``0`` / above 0 / not a number,
``LICH_SUBAGENT_CARDS`` absent / ``off`` / another value, a shared and an isolated call, a base under
``subagent/`` and not. The expected outcome is written here from the spec's words, independently of
``agent_cards.rules``:

- cards ``off``: native; with a toast only in a worker (a depth above 0), silently anywhere else;
- otherwise, under a lich that sets no depth: an isolated call from a ``subagent/`` branch is native
  (silently, after git gave the base); everything else is taken;
- otherwise, under a lich that sets the depth: taken (cards alone decide).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from agent_cards.texts import person_text
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import replay

DEPTHS: tuple[str | None, ...] = (None, "0", "2", "deep")
CARDS: tuple[str | None, ...] = (None, "off", "on")
ISOLATED = (False, True)
BASES = ("main", "subagent/earlier-work-0001")


def expected(depth: str | None, cards: str | None, isolated: bool, base: str) -> tuple[str, bool, list[str]]:
    """(outcome, toast shown, the commands run) as the spec says."""
    worker = depth is not None and depth.isdigit() and int(depth) > 0
    git = ["git"] if isolated else []
    if cards == "off":
        return "native", worker, []
    if depth is None and isolated and base.startswith("subagent/"):
        return "native", False, git
    return "taken", False, [*git, "lich"]


def scenario(depth: str | None, cards: str | None, isolated: bool, base: str) -> str:
    env = {"LICH_SUBAGENT_DEPTH": depth, "LICH_SUBAGENT_CARDS": cards}
    env_lines = "".join(f"    {k}: {'null' if v is None else repr(v)}\n" for k, v in env.items())
    isolation = ", isolation: worktree" if isolated else ""
    return (
        "title: matrix cell\nclauses: [TAKE-NESTED]\n"
        f"session:\n  git: {base}\n  env:\n{env_lines}"
        f"steps:\n  - call: {{description: Cell task, prompt: Do the cell task{isolation}}}\n"
    )


CELLS = list(itertools.product(DEPTHS, CARDS, ISOLATED, BASES))


@pytest.mark.parametrize(("depth", "cards", "isolated", "base"), CELLS)
def test_the_cell_behaves_as_the_spec_says(depth: str | None, cards: str | None, isolated: bool, base: str) -> None:
    result = replay(read("matrix.yaml", scenario(depth, cards, isolated, base)))
    assert result.passed, result.failures
    events: list[dict[str, Any]] = result.events
    outcome, toast, commands = expected(depth, cards, isolated, base)
    ran = ["git" if e["argv"][0] == "git" else "lich" for e in events if e["kind"] == "run"]
    assert ran == commands
    toasts = [e["text"] for e in events if e["kind"] == "toast"]
    assert toasts == ([person_text("toast.cards_off", description="Cell task")] if toast else [])
    natives = [e for e in events if e["kind"] == "native"]
    (answer,) = [e for e in events if e["kind"] == "answer"]
    if outcome == "native":
        assert natives and answer["result"]["agentId"].startswith("a")
    else:
        assert not natives and answer["result"]["status"] == "async_launched"
        opened = next(e["argv"] for e in events if e["kind"] == "run" and e["argv"][0] != "git")
        assert ("--worktree" in opened) == isolated
        assert ("--base" in opened) == isolated
        if isolated:
            assert opened[opened.index("--base") + 1] == base


def test_the_matrix_has_every_outcome() -> None:
    outcomes = {expected(*cell)[:2] for cell in CELLS}
    assert outcomes == {("native", True), ("native", False), ("taken", False)}
