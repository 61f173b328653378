"""Virtual time: an asyncio event loop whose clock jumps instead of sleeping.

When nothing is ready to run, the loop would block in ``select(timeout)`` until the next timer; the
virtual selector instead moves the clock forward by ``timeout`` and returns at once. So ``asyncio.sleep``,
``wait_for`` and ``call_later`` all work unchanged, a replay spanning an hour of virtual time takes
milliseconds, and two runs of the same scenario interleave exactly alike. Nothing here sleeps for real.

A loop with nothing scheduled and nothing ready would wait forever; the virtual selector raises
:class:`Stalled` instead, naming the virtual time, so a stuck scenario fails at once.
"""

from __future__ import annotations

import asyncio
import math
import selectors
from collections.abc import Mapping
from typing import Any


class Stalled(RuntimeError):
    """Everything is waiting and nothing is scheduled: the scenario can never go on."""


class VirtualClock:
    """Virtual time in whole microseconds since the scenario's start."""

    def __init__(self) -> None:
        self._us = 0

    @property
    def ms(self) -> int:
        return self._us // 1000

    def seconds(self) -> float:
        return self._us / 1_000_000

    def advance_seconds(self, seconds: float) -> None:
        self._us += max(0, math.ceil(seconds * 1_000_000))


class _VirtualSelector(selectors.BaseSelector):
    """Keeps registrations (the loop's self-pipe) but never waits: it moves the clock instead."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock
        self._keys: dict[Any, selectors.SelectorKey] = {}

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = selectors.SelectorKey(fileobj, _fd(fileobj), events, data)
        self._keys[fileobj] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._keys.pop(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            raise Stalled(f"nothing can happen any more at t={self._clock.ms} ms: every task waits on another")
        self._clock.advance_seconds(timeout)
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._keys

    def close(self) -> None:
        self._keys.clear()


def _fd(fileobj: Any) -> int:
    return fileobj if isinstance(fileobj, int) else int(fileobj.fileno())


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a :class:`VirtualClock`. Real I/O is not available on it (by design)."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock or VirtualClock()
        super().__init__(selector=_VirtualSelector(self.clock))

    def time(self) -> float:
        return self.clock.seconds()
