"""Waiting on what a real program shows: a condition looked at again and again until it holds, or a deadline.

Every wait of the end-to-end tier is on something a program makes visible (a process, a file it wrote, a log
line, the screen), never a guessed delay; the pause between two looks is only how often it looks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(what: str, done: Callable[[], T | None], timeout: float = 30.0, *, every: float = 0.05,
          shown: Callable[[], object] | None = None) -> T:
    """What ``done()`` returns once it is true, looked at every ``every`` seconds. Past ``timeout`` seconds, a
    ``TimeoutError`` naming ``what`` that did not come, the last value seen and ``shown()`` (the screen, say)."""
    deadline = time.monotonic() + timeout
    while not (found := done()):
        if time.monotonic() >= deadline:
            seen = "" if found is None or found is False else f" (last seen: {found!r})"
            detail = "" if shown is None else f":\n{shown()}"
            raise TimeoutError(f"{what}: not within {timeout:g} s{seen}{detail}")
        time.sleep(every)
    return found
