"""Virtual time: an asyncio event loop whose clock jumps instead of sleeping.

When nothing is ready to run, the loop would block in ``select(timeout)`` until the next timer; the
virtual selector instead moves the clock forward by ``timeout`` and returns at once. So ``asyncio.sleep``,
``wait_for`` and ``call_later`` all work unchanged, a replay spanning an hour of virtual time takes
milliseconds, and two runs of the same scenario interleave exactly alike. Nothing here sleeps for real.

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
import collections
import heapq
import itertools
import math
import selectors
from asyncio import base_events
from collections.abc import Callable, Mapping
from contextvars import Context, copy_context
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, Unpack

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

T = TypeVar("T")

# asyncio's own limits for its loop's turn (asyncio.base_events), which VirtualEventLoop._run_once keeps
_MIN_SCHEDULED: int = getattr(base_events, "_MIN_SCHEDULED_TIMER_HANDLES", 100)
_MIN_CANCELLED_SHARE: float = getattr(base_events, "_MIN_CANCELLED_TIMER_HANDLES_FRACTION", 0.5)
_LONGEST_SELECT: float = getattr(base_events, "MAXIMUM_SELECT_TIMEOUT", 24 * 3600)
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

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = selectors.SelectorKey(fileobj, _fd(fileobj), events, data)
        self._keys[fileobj] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._keys.pop(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.real_in_flight and timeout != 0:
            return self._wait_for_real()
        if timeout is None:
            raise Stalled(f"nothing can happen any more at t={self._clock.ms} ms: every task waits on another")
        if timeout > 0:  # VirtualClock.advance_seconds, inlined: the loop selects on every turn (issue 15)
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


def _fill(handle: asyncio.Handle, callback: Callable[..., object], args: tuple[Any, ...],
          loop: asyncio.AbstractEventLoop, context: Context | None) -> None:
    """``asyncio.Handle.__init__`` outside the debug mode, in one frame: every task step, future
    callback and timer makes a handle, and asyncio's own constructors are two levels deep (issue 15)."""
    me: Any = handle
    me._context = copy_context() if context is None else context
    me._loop = loop
    me._callback = callback
    me._args = args
    me._cancelled = False
    me._repr = None
    me._source_traceback = None


class _Timer(asyncio.TimerHandle):
    """A timer that sorts by its deadline, then by the order it was set in."""

    __slots__ = ("_key", "_order")

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...],
                 loop: asyncio.AbstractEventLoop, context: Context | None, order: int) -> None:
        if loop._debug:  # type: ignore[attr-defined]  # the debug mode: asyncio's own, which records the caller
            super().__init__(when, callback, args, loop, context)
        else:  # Handle.__init__ and TimerHandle.__init__ in one: every poll sets two timers (issue 15)
            _fill(self, callback, args, loop, context)
            me: Any = self
            me._when = when
            me._scheduled = False
        self._order = order
        self._key = (when, order)  # one tuple comparison in the heap (issue 15)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, _Timer):
            return NotImplemented
        return self._key < other._key


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

    def call_soon(
        self, callback: Callable[[Unpack[Ts]], object], *args: *Ts, context: Context | None = None
    ) -> asyncio.Handle:
        """asyncio's ``call_soon``, step for step, but in debug mode (then asyncio's own, with its checks)."""
        me: Any = self
        if me._debug:
            return super().call_soon(callback, *args, context=context)
        if me._closed:
            raise RuntimeError("Event loop is closed")
        handle = asyncio.Handle.__new__(asyncio.Handle)
        _fill(handle, callback, args, self, context)
        me._ready.append(handle)
        return handle

    def call_at(
        self, when: float, callback: Callable[[Unpack[Ts]], object], *args: *Ts, context: Context | None = None
    ) -> asyncio.TimerHandle:
        """asyncio's ``call_at``, its timers first in, first out among equal deadlines."""
        self._check_closed()  # type: ignore[attr-defined]
        timer = _Timer(when, callback, args, self, context, next(self._timer_order))
        heapq.heappush(self._scheduled, timer)  # type: ignore[attr-defined]
        timer._scheduled = True  # type: ignore[attr-defined]
        return timer

    def _run_once(self) -> None:
        """One turn of the loop: asyncio's own (``BaseEventLoop._run_once``), step for step, without what
        a virtual loop never needs on its way: a select that cannot wait and finds no events, and the
        debug mode's timing of each callback (issue 15: a poll is four turns); and the turns that follow
        while callbacks are ready run here too. With real work in flight or in debug mode, asyncio's own
        turn runs."""
        me: Any = self  # asyncio's private state, which its own turn reads
        if me._debug or self._virtual_selector.real_in_flight:
            me._run_once_asyncio()
            return
        scheduled: list[Any] = me._scheduled
        ready: collections.deque[Any] = me._ready
        clock = self.clock
        while True:
            count = len(scheduled)
            if count > _MIN_SCHEDULED and me._timer_cancelled_count / count > _MIN_CANCELLED_SHARE:
                kept = []
                for timer in scheduled:
                    if timer._cancelled:
                        timer._scheduled = False
                    else:
                        kept.append(timer)
                heapq.heapify(kept)
                me._scheduled = scheduled = kept
                me._timer_cancelled_count = 0
            else:
                while scheduled and scheduled[0]._cancelled:
                    me._timer_cancelled_count -= 1
                    heapq.heappop(scheduled)._scheduled = False
            if not ready and not me._stopping:
                if not scheduled:  # asyncio would select with no timeout, which the virtual selector refuses
                    self._virtual_selector.select(None)  # raises Stalled
                # the virtual selector's select(timeout), inlined: the clock moves to the first timer
                timeout = scheduled[0]._when - clock._us / 1_000_000
                if timeout > 0:  # min(max(0, ...), longest) and ceil, without the calls (issue 15)
                    us = (timeout if timeout < _LONGEST_SELECT else _LONGEST_SELECT) * 1_000_000
                    whole = int(us)
                    clock._us += whole + (whole < us)
            end_time = clock._us / 1_000_000 + me._clock_resolution
            while scheduled:
                if scheduled[0]._when >= end_time:
                    break
                timer = heapq.heappop(scheduled)
                timer._scheduled = False
                ready.append(timer)
            for _ in range(len(ready)):  # only what was ready at the turn's start, as asyncio's own turn
                handle = ready.popleft()
                if not handle._cancelled:
                    handle._run()
            # The next turn, with callbacks ready, would select without waiting (the clock stays) and
            # find no events: it is this loop again, unless run_forever is to stop (its check after
            # each turn) or real work or the debug mode now needs asyncio's own turn.
            if not ready or me._stopping or me._debug or self._virtual_selector.real_in_flight:
                return
            scheduled = me._scheduled

    _run_once_asyncio = asyncio.SelectorEventLoop._run_once  # type: ignore[attr-defined]

    def now_ms(self) -> int:
        """Virtual ms since the loop started (:attr:`VirtualClock.ms`): what every transcript time is."""
        return (self.clock._us + 500) // 1000  # VirtualClock.ms, inlined

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
