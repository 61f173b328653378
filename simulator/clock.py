"""Virtual time: an asyncio event loop whose clock jumps instead of sleeping.

When nothing is ready to run, the loop would block in ``select(timeout)`` until the next timer; the
virtual selector instead moves the clock forward by ``timeout`` and returns at once. So ``asyncio.sleep``,
``wait_for`` and ``call_later`` all work unchanged, a replay spanning an hour of virtual time takes
milliseconds, and two runs of the same scenario interleave exactly alike. Nothing here sleeps for real.
Every turn of the loop is asyncio's own: the loop only tells the time, arms timers and selects.

Timers due at the same instant run in the order they were set (first in, first out), as a real clock
would have them: asyncio's own heap leaves their order to the heap's shape, so the same timers set
in a different interleaving with others would fire in another order.

A loop with nothing scheduled and nothing ready would wait forever; the virtual selector raises
:class:`Stalled` instead, naming the virtual time, so a stuck scenario fails at once.

Real work (a real subprocess, in ``replay --processes``) runs in a thread through
:meth:`VirtualEventLoop.run_real`. While any is in flight the clock stands still and the selector
waits for real on the loop's self-pipe, which the thread's completion writes to; so real work takes
no virtual time, and the caller decides how much virtual time it stands for.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import selectors
from collections.abc import Callable, Mapping
from contextvars import Context
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, Unpack

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class Stalled(RuntimeError):
    """Everything is waiting and nothing is scheduled: the scenario can never go on."""


class VirtualClock:
    """Virtual time in whole microseconds since the scenario's start."""

    def __init__(self) -> None:
        self._us = 0

    @property
    def ms(self) -> int:
        """Virtual time in whole ms, rounded to the nearest (halves up): the one ms of the simulator."""
        return (self._us + 500) // 1000

    def seconds(self) -> float:
        return self._us / 1_000_000

    def advance_seconds(self, seconds: float) -> None:
        self._us += max(0, math.ceil(seconds * 1_000_000))


class _VirtualSelector(selectors.BaseSelector):
    """Keeps registrations (the loop's self-pipe) but never waits: it moves the clock instead."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock
        self._keys: dict[Any, selectors.SelectorKey] = {}
        self.real_in_flight = 0
        self.instant_over: list[asyncio.Future[None]] = []  # woken when nothing more is due now

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = selectors.SelectorKey(fileobj, _fd(fileobj), events, data)
        self._keys[fileobj] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._keys.pop(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.real_in_flight and timeout != 0:
            return self._wait_for_real()
        if self.instant_over and timeout != 0:  # nothing is ready: the instant is over before time moves
            for waiter in self.instant_over:
                if not waiter.done():
                    waiter.set_result(None)
            self.instant_over.clear()
            return []
        if timeout is None:
            raise Stalled(f"nothing can happen any more at t={self._clock.ms} ms: every task waits on another")
        if timeout > 0:  # VirtualClock.advance_seconds, inlined: the loop selects on every turn
            self._clock._us += math.ceil(timeout * 1_000_000)
        return []

    def _wait_for_real(self) -> list[tuple[selectors.SelectorKey, int]]:
        """Block for real until a thread wakes the loop; virtual time does not move meanwhile."""
        with selectors.DefaultSelector() as real:
            for key in self._keys.values():
                real.register(key.fileobj, key.events, key.data)
            ready = real.select(None)
        return [(self._keys[key.fileobj], events) for key, events in ready]

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._keys

    def close(self) -> None:
        self._keys.clear()


def _fd(fileobj: Any) -> int:
    return fileobj if isinstance(fileobj, int) else int(fileobj.fileno())


class _Deadline(float):
    """A timer's deadline that sorts after every equal deadline set before it.

    asyncio keeps its timers in a heap ordered by ``TimerHandle.__lt__``, which compares the deadlines
    with ``<``, and it reads a deadline only as a number otherwise (``when - time()``, ``>=``). A
    deadline that breaks ties by the order it was set in makes that heap first in, first out, with no
    hand on asyncio's timer list: equal deadlines never tie, so the order they run in no longer
    depends on the heap's shape. Arithmetic on it gives plain floats. That the heap compares the
    deadlines so is asyncio's way on Python 3.11 to 3.13, not its documented interface: the test of
    same-instant timers in tests/test_virtual_time.py fails on a Python that orders them otherwise.
    """

    __slots__ = ("_key",)
    _key: tuple[float, int]

    def __new__(cls, when: float, order: int) -> _Deadline:
        deadline = float.__new__(cls, when)
        deadline._key = (float(when), order)
        return deadline

    def __lt__(self, other: object) -> bool:
        try:
            return self._key < other._key  # type: ignore[attr-defined, no-any-return]
        except AttributeError:  # a plain number: as a float would
            return float.__lt__(self, other)  # type: ignore[operator]


#: asyncio's own ``call_at``, which ``VirtualEventLoop.call_at`` calls without looking it up through
#: ``super()``: every timer of a replay is set through it
_asyncio_call_at = asyncio.SelectorEventLoop.call_at


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a :class:`VirtualClock`. Real I/O is not available on it (by design)."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock or VirtualClock()
        self._timer_order = itertools.count()
        self._real_pool: ThreadPoolExecutor | None = None  # real work runs in parallel, never queued
        # the loop makes its selector itself, so it keeps its own reference (asyncio's is private)
        self._virtual_selector = _VirtualSelector(self.clock)
        super().__init__(selector=self._virtual_selector)

    def close(self) -> None:
        super().close()
        if self._real_pool is not None:
            self._real_pool.shutdown(wait=True)

    def time(self) -> float:
        return self.clock._us / 1_000_000  # VirtualClock.seconds, inlined: asyncio asks on every turn

    def call_at(
        self, when: float, callback: Callable[[Unpack[Ts]], object], *args: *Ts, context: Context | None = None
    ) -> asyncio.TimerHandle:
        """asyncio's ``call_at``, its timers first in, first out among equal deadlines (``call_later``
        and every timeout of asyncio's come through here)."""
        return _asyncio_call_at(self, _Deadline(when, next(self._timer_order)), callback, *args, context=context)

    def now_ms(self) -> int:
        """Virtual ms since the loop started (:attr:`VirtualClock.ms`): what every transcript time is."""
        return (self.clock._us + 500) // 1000  # VirtualClock.ms, inlined

    async def instant_over(self) -> None:
        """Return once everything due at this virtual instant has run, the clock not moved: asyncio would
        next wait for a timer or stall. (A task's steps at one instant can take many turns of the loop,
        so a fixed number of ``sleep(0)`` cannot say it.)"""
        waiter = self.create_future()
        self._virtual_selector.instant_over.append(waiter)
        await waiter

    async def run_real(self, func: Callable[[], T]) -> T:
        """Run blocking ``func`` in a thread; the virtual clock stands still until it returns."""
        selector = self._virtual_selector
        selector.real_in_flight += 1
        try:
            if self._real_pool is None:
                from concurrent.futures import ThreadPoolExecutor  # only with real work: --processes

                self._real_pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="real-work")
            return await self.run_in_executor(self._real_pool, func)
        finally:
            selector.real_in_flight -= 1
