"""Where the ``fake-lich`` program of this installation is.

Whether a process it started still runs: :func:`agent_cards.bridge.lifetime.alive`, shared with the bridge.

Kept apart from :mod:`agent_cards_simulator.lich.program`, whose start-up imports as little as it can.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


class SetupError(Exception):
    """A real fake-lich cannot run here (no ``fake-lich``, no git, a branch git refuses)."""


def fake_lich_program() -> str:
    """The ``fake-lich`` console script of this installation."""
    beside = Path(sys.executable).parent / "fake-lich"
    found = str(beside) if beside.is_file() else shutil.which("fake-lich")
    if found is None:
        raise SetupError("the fake-lich program is not installed beside this Python (pip install -e .)")
    return found
