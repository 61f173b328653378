"""The driver's waits and process facts, which every end-to-end test leans on."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agent_cards_claude_driver.sandbox import parent_of, pids
from agent_cards_claude_driver.waits import until


def test_until_returns_what_came_once_it_came() -> None:
    looks: list[int] = []

    def third_look() -> list[int] | None:
        looks.append(len(looks))
        return looks if len(looks) == 3 else None

    assert until("a third look", third_look, 5, every=0) == [0, 1, 2]


def test_until_names_what_never_came_with_what_it_saw_last() -> None:
    with pytest.raises(TimeoutError) as late:
        until("the footer cleared", list, 0.05, every=0.01, shown=lambda: "lich: 1 worker")
    assert str(late.value) == "the footer cleared: not within 0.05 s (last seen: []):\nlich: 1 worker"


def test_a_process_parent_and_a_gone_one() -> None:
    assert parent_of(os.getpid()) == os.getppid()
    assert os.getpid() in pids()
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    assert parent_of(int(child.stdout)) is None  # reaped: gone, not an error
