"""The hook-call loop: one event down a chain of hooks to the layer beneath, failing open.

Measured on Claude Code 2.1.328 and kept here:
- ``await next(e)`` runs everything beneath and returns its result unchanged; calling it twice runs
  what is beneath twice; ``next()`` without the event fails the hook; a rewrite of the envelope
  (``tool``, ``tool_use_id``, ``agentId``…) fails the hook.
- A hook that raises, answers nothing or the wrong shape, or overruns its budget is skipped, and what
  is beneath runs in its place, unless it already called ``next``: then that call's result stands and
  nothing runs twice.
- The budget is 10 000 ms of the hook's own time: the clock stops while ``next`` or a host call (``$``)
  is in flight. An overrun hook is not stopped (it lingers, its signal aborted); the engine moves on.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agent_cards.engine import Event, HookResult, Host, Origin
from agent_cards.record import Record, Value, field
from agent_cards_simulator.host import results
from agent_cards_simulator.host.registry import Registration, Registry

BUDGET_MS = 10_000
LINGER_MS = 5_000


class HooksError(Exception):
    """An error the engine raises inside a hook (a misuse of ``next`` or ``$``)."""


class AbortSignal:
    """Aborted by Esc (through its parent) or by the hook's own overrun.

    A parent holds its children weakly: a child nobody holds any more can never be read or waited on
    again, so it leaves its parent by itself, and a long-lived signal (a turn) does not keep one child
    per hook run. Without a parent, only the signal's own :meth:`abort` aborts it.
    """

    __slots__ = ("__weakref__", "_aborted", "_children", "_waiters")

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._aborted = False
        self._waiters: list[asyncio.Future[None]] = []
        self._children: weakref.WeakValueDictionary[int, AbortSignal] | None = None  # in the order made
        if parent is not None:
            self._aborted = parent._aborted
            if parent._children is None:
                parent._children = weakref.WeakValueDictionary()
            parent._children[id(self)] = self

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self) -> None:
        if self._aborted:
            return
        self._aborted = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()
        if self._children is not None:
            for child in list(self._children.values()):
                child.abort()

    def wait(self) -> asyncio.Future[None]:
        """A future resolved when the signal aborts; the caller holds the signal while it waits."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._aborted:
            waiter.set_result(None)
        else:
            self._waiters.append(waiter)
        return waiter

    def forget(self, waiter: asyncio.Future[None]) -> None:
        """Drop a waiter that is no longer wanted (a long-lived signal would otherwise keep them all)."""
        if waiter in self._waiters:  # a few at most: no contextlib.suppress on every process run
            self._waiters.remove(waiter)


async def _first_of(
    loop: asyncio.AbstractEventLoop, task: asyncio.Future[Any], changed: asyncio.Future[None], timeout: float | None
) -> None:
    """Until ``task`` ends, ``changed`` resolves or ``timeout`` seconds pass: ``asyncio.wait`` of the two with
    FIRST_COMPLETED, turn for turn, without what its general case costs (every hook call waits so)."""
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    changed.add_done_callback(wake)
    timer = None if timeout is None else loop.call_at(loop.time() + timeout, wake)
    try:
        await waiter
    finally:
        if timer is not None:
            timer.cancel()
        task.remove_done_callback(wake)
        changed.remove_done_callback(wake)


class Budget(Record):
    """The hook's own time left; paused while ``next`` or a host call is in flight."""

    remaining_ms: float = BUDGET_MS
    paused: int = 0
    _changed: list[asyncio.Future[None]] = field(default_factory=list)

    def suspended(self) -> _Suspended:
        """Paused for one ``with`` (a class, not ``contextlib.contextmanager``: every host call passes here)."""
        return _Suspended(self)

    def _flip(self, by: int) -> None:
        self.paused += by
        for waiter in self._changed:
            if not waiter.done():
                waiter.set_result(None)
        self._changed.clear()

    def changed(self) -> asyncio.Future[None]:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._changed.append(waiter)
        return waiter


class _Suspended:
    __slots__ = ("_budget",)

    def __init__(self, budget: Budget) -> None:
        self._budget = budget

    def __enter__(self) -> None:
        self._budget._flip(+1)

    def __exit__(self, *exc: object) -> None:
        self._budget._flip(-1)


class Invocation(Record):
    """One hook's run in one dispatch: what its bound host and its ``next`` share."""

    registration: Registration
    budget: Budget
    signal: AbortSignal
    finished: bool = False  # the hook's own run ended (a timer it armed runs outside it)


class NextFn:
    """The ``next`` a hook receives."""

    def __init__(
        self,
        beneath: Callable[[Event], Awaitable[HookResult]],
        event: str,
        e: Event,
        origin: Origin,
        invocation: Invocation,
    ) -> None:
        self._beneath = beneath
        self._event = event
        self._e = e
        self._origin = origin
        self._invocation = invocation
        self.last: asyncio.Future[HookResult] | None = None

    @property
    def origin(self) -> Origin:
        return self._origin

    @property
    def signal(self) -> AbortSignal:
        return self._invocation.signal

    @property
    def event(self) -> str:
        return self._event

    @property
    def budget(self) -> dict[str, float]:
        return {"ms": BUDGET_MS, "remainingMs": self._invocation.budget.remaining_ms}

    async def __call__(self, e: Event | None = None, /) -> HookResult:
        if e is None:
            raise HooksError(results.NEXT_WITHOUT_EVENT)
        if self._event == "tool.call":
            for key in results.ENVELOPE_KEYS:
                if e.get(key) != self._e.get(key):
                    raise HooksError(results.envelope_rewrite(key))
        self.last = asyncio.ensure_future(self._beneath(e))
        with self._invocation.budget.suspended():
            return await asyncio.shield(self.last)


class Answered(Value):
    """The hook's run ended with an answer (its shape is checked next)."""

    value: Any


class Skipped(Value):
    """The hook's run failed: why, in the engine's report wording."""

    why: str


HookOutcome = Answered | Skipped
HostFactory = Callable[[Invocation], Host]
Report = Callable[[str], None]


class _Dispatch:
    """One event's way down: its hooks, what is beneath them, who raised it, the signal it hangs from."""

    __slots__ = ("bottom", "event", "hooks", "origin", "signal")

    def __init__(
        self,
        event: str,
        hooks: Sequence[Registration],
        bottom: Callable[[Event], Awaitable[HookResult]],
        origin: Origin,
        signal: AbortSignal | None,
    ) -> None:
        self.event = event
        self.hooks = hooks
        self.bottom = bottom
        self.origin = origin
        self.signal = signal


class Chain:
    """Dispatches events through the registry's hooks, then the layer beneath (``bottom``)."""

    def __init__(self, registry: Registry, bind_host: HostFactory, report: Report) -> None:
        self._registry = registry
        self._bind_host = bind_host
        self._report = report
        self.lingering: set[asyncio.Task[Any]] = set()

    async def dispatch(
        self,
        event: str,
        e: Event,
        bottom: Callable[[Event], Awaitable[HookResult]],
        origin: Origin,
        signal: AbortSignal | None,
        plugin: str | None = None,
    ) -> HookResult:
        """Run ``e`` down the hooks of ``event``; each hook's signal is a child of ``signal`` (None: of
        nothing, so only the hook's own overrun aborts it). ``plugin``: that plugin's hooks only (an event
        raised again for one reloaded module)."""
        hooks = self._registry.chain(event, e)
        if plugin is not None:
            hooks = [r for r in hooks if r.plugin == plugin]
        return await self._run(_Dispatch(event, hooks, bottom, origin, signal), 0, e)

    async def _run(self, d: _Dispatch, index: int, e: Event) -> HookResult:
        """The hook at ``index`` and, through its ``next``, those after it. A method, not a closure that
        calls itself: such a closure is a reference cycle, which only the garbage collector frees."""
        if index == len(d.hooks):
            return await d.bottom(e)
        registration = d.hooks[index]
        invocation = Invocation(registration, Budget(), AbortSignal(d.signal))
        nxt = NextFn(lambda e2: self._run(d, index + 1, e2), d.event, e, d.origin, invocation)
        hook = registration.hook(self._bind_host(invocation), e, nxt)
        try:
            outcome = await self._run_budgeted(hook, invocation)
        except asyncio.CancelledError:  # the dispatch was stopped (a scenario's end): so is what is beneath
            if nxt.last is not None:
                nxt.last.cancel()
                await asyncio.wait({nxt.last}, timeout=1)
            raise
        if isinstance(outcome, Answered):
            problem = results.shape_problem(d.event, outcome.value)
            if problem is None:
                return dict(outcome.value)
            why = problem
        else:
            why = outcome.why
        plugin = registration.plugin
        self._report(f"{plugin}'s {d.event} hook was skipped: {plugin}: {why}")
        if nxt.last is not None:  # it already ran what is beneath: that result stands
            return await nxt.last
        return await self._run(d, index + 1, e)

    async def _run_budgeted(self, hook: Awaitable[Any], invocation: Invocation) -> HookOutcome:
        task = asyncio.ensure_future(hook)
        task.add_done_callback(lambda _: setattr(invocation, "finished", True))
        try:
            return await self._budgeted(task, invocation)
        except asyncio.CancelledError:  # the dispatch was stopped (a scenario's end): so is its hook
            task.cancel()
            await asyncio.wait({task}, timeout=1)
            raise

    async def _budgeted(self, task: asyncio.Task[Any], invocation: Invocation) -> HookOutcome:
        budget = invocation.budget
        loop = asyncio.get_running_loop()
        while not task.done():
            changed = budget.changed()
            if budget.paused:
                await _first_of(loop, task, changed, None)
            else:
                started = loop.time()
                await _first_of(loop, task, changed, max(0.0, budget.remaining_ms / 1000))
                budget.remaining_ms -= (loop.time() - started) * 1000
                if not task.done() and not budget.paused and budget.remaining_ms <= 0:
                    changed.cancel()
                    self._linger(task, invocation)
                    return Skipped(f"exceeded {BUDGET_MS}ms budget")
            changed.cancel()
        if task.cancelled():
            return Skipped("was cancelled")
        failure = task.exception()
        if failure is not None:
            return Skipped(f"{type(failure).__name__}: {failure}")
        return Answered(task.result())

    def _linger(self, task: asyncio.Task[Any], invocation: Invocation) -> None:
        invocation.signal.abort()
        self.lingering.add(task)
        task.add_done_callback(self.lingering.discard)
        plugin, event = invocation.registration.plugin, invocation.registration.event

        def still_running() -> None:
            if not task.done():
                self._report(
                    f"hook overran: {plugin}: still running {LINGER_MS}ms after its budget ran out; "
                    f"ignores its signal ({event})"
                )

        asyncio.get_running_loop().call_later(LINGER_MS / 1000, still_running)
