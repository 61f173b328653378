"""The Claude Code mod engine, as the mod sees it: typed Protocols and the few values they carry.

Nothing here does I/O. A host (the simulator, a command hook, a bridge to the real engine) implements
these Protocols; the mod is written against them alone. The shapes follow what was measured on Claude
Code 2.1.328 (see the project's spec folder, ``claude-code-engine.md``):

- ``register(on)``; ``on(event, hook)`` or ``on(event, matcher, hook)``;
- a hook is ``async (host, e, next) -> result``; ``await next(e)`` runs what is beneath and returns its
  result unchanged; ``next.origin`` says who raised the event, ``next.signal`` is aborted on Esc;
- the host offers ``env.get``, ``process.run``, ``ui.toast``, ``ui.invalidate``, ``clock.now`` and the
  timers ``clock.after`` / ``clock.every``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, overload

Event: TypeAlias = dict[str, Any]
"""An event as the engine hands it to a hook: a JSON-like mapping (``tool``, ``tool_use_id``, input…)."""

HookResult: TypeAlias = dict[str, Any]
"""What a hook answers: ``{"result": …, "context"?: [...]}``, ``{"deny": text}``, or the layer beneath's value."""

Matcher: TypeAlias = Mapping[str, Any]
"""A partial match on the event: scalars by equality, ``re.Pattern`` against the value as text, a list for
"one of", a mapping for a partial match of a nested object."""

def text(value: Any) -> str:
    """An event field as text: the value when it is a string, else ``""`` (a missing or odd field)."""
    return value if isinstance(value, str) else ""


def error_reason(error: BaseException) -> str:
    """What a failure says, for a toast or a deny: its message, else its type's name."""
    return str(error) or type(error).__name__


DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000


@dataclass(frozen=True)
class Origin:
    """Who raised the event: ``Origin("engine", "core")`` for the model's own calls."""

    plugin: str
    tier: str


ENGINE = Origin("engine", "core")


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


@dataclass(frozen=True)
class ProcessResult:
    """A process that ran to its end. A non-zero exit resolves; it does not raise."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False


ProcessErrorKind = Literal["timeout", "start", "aborted", "host"]


class ProcessError(Exception):
    """``process.run`` rejected: it timed out, failed to start, was aborted, or a host check refused it.

    ``str(error)`` is the engine's message, e.g.
    ``$.process.run(lich) aborted: still running after 120000ms``.
    """

    def __init__(self, message: str, kind: ProcessErrorKind) -> None:
        super().__init__(message)
        self.kind: ProcessErrorKind = kind


class Env(Protocol):
    def get(self, name: str, /) -> str | None:
        """The variable's value, or None when it is unset."""
        ...


class Process(Protocol):
    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        """Run ``argv`` (no shell). Raises :class:`ProcessError` on a timeout or a failed start."""
        ...


class UI(Protocol):
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
