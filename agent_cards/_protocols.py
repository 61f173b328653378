"""The engine's Protocols (``$``, ``next``, ``on``, the host's ``StateStore``): :mod:`agent_cards.engine`
names them all, and gives them from here on first use (a ``Protocol`` needs ``typing``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeAlias, overload

from agent_cards.engine import DEFAULT_TIMEOUT_MS, Event, HookResult, Matcher, Origin, ProcessResult
from agent_cards.state import ModState


class Signal(Protocol):
    """Aborted when the person presses Esc (or the hook's budget ran out)."""

    @property
    def aborted(self) -> bool: ...


class Next(Protocol):
    """Runs everything beneath the hook. Carries who raised the event and the abort signal."""

    @property
    def origin(self) -> Origin: ...

    @property
    def signal(self) -> Signal: ...

    @property
    def event(self) -> str: ...

    async def __call__(self, e: Event, /) -> HookResult: ...


class Env(Protocol):
    def get(self, name: str, /) -> str | None:
        """The variable's value, or None when it is unset."""
        ...


class Process(Protocol):
    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        """Run ``argv`` (no shell). Raises :class:`ProcessError` on a timeout or a failed start."""
        ...


class KeptProcess(Protocol):
    """A ``$.process`` whose runs may outlive the host that started them: the bridge's session host, whose
    process can die while ``lich open`` runs. The engine's own ``$.process`` has none of this, so the mod
    looks for ``run_kept`` and uses ``run`` where it is not there."""

    async def run_kept(self, argv: Sequence[str], key: str, /, *, timeout_ms: int) -> ProcessResult:
        """As ``run``, but what the command prints goes where a host started after this one finds it under
        ``key`` (its own process group; its output to files the session keeps, not to this host's pipes)."""
        ...

    async def collect(self, key: str, /, *, started_ms: int, timeout_ms: int) -> ProcessResult:
        """What the run kept under ``key`` by a host that died printed: waited for while it still runs, until
        ``timeout_ms`` after ``started_ms`` (the host's clock), then its process group is ended. Raises
        :class:`ProcessError`: ``timeout`` then, ``start`` when nothing of it is left. Never runs it again."""
        ...


class UI(Protocol):
    """``$.ui``. A host may also offer ``log(text)``, a line for the plugin's log: the mod writes there the
    whole text of a toast it cut to fit Claude Code's toast box (the engine's ``$`` has no log, so the
    mod looks for it and needs none)."""

    async def toast(self, text: str, /) -> None: ...

    def invalidate(self, event: str, /) -> None:
        """Ask the engine to raise ``event`` again (``"ui.render"``: redraw the footer)."""
        ...


Timer: TypeAlias = Callable[[], Awaitable[None]]


class Clock(Protocol):
    def now(self) -> int:
        """Milliseconds on the host's clock."""
        ...

    def after(self, ms: int, fn: Timer, /) -> None:
        """Run ``fn`` once, ``ms`` milliseconds from now. A reload of the module cancels it."""
        ...

    def every(self, ms: int, fn: Timer, /) -> None:
        """Run ``fn`` every ``ms`` milliseconds. A reload of the module stops it."""
        ...


class Host(Protocol):
    """What a hook may touch: ``$`` in the JavaScript engine."""

    @property
    def env(self) -> Env: ...

    @property
    def process(self) -> Process: ...

    @property
    def ui(self) -> UI: ...

    @property
    def clock(self) -> Clock: ...


Hook: TypeAlias = Callable[[Host, Event, Next], Awaitable[HookResult | None]]


class On(Protocol):
    """The ``on`` a module's ``register`` receives."""

    @overload
    def __call__(self, event: str, hook: Hook, /) -> None: ...

    @overload
    def __call__(self, event: str, matcher: Matcher, hook: Hook, /) -> None: ...


class StateStore(Protocol):
    """Where a host keeps the mod's state. ``update`` is one atomic read-modify-write."""

    def get(self) -> ModState: ...

    def update(self, change: Callable[[ModState], ModState]) -> ModState: ...
