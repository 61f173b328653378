"""Where the ``fake-lich`` program of this installation is, and whether a process it started still runs.

Kept apart from :mod:`agent_cards_simulator.lich.program`, whose start-up imports as little as it can.
"""

from __future__ import annotations

import os
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


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that still runs (a zombie waiting to be reaped does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return status.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
