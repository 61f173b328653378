"""The Claude Code mod engine, as the mod sees it: typed Protocols and the few values they carry.

Nothing here does I/O. A host (the simulator, a command hook, a bridge to the real engine) implements
these Protocols; the mod is written against them alone. The shapes follow what was measured on Claude
Code 2.1.328 (see the project's spec folder, ``claude-code-engine.md``):

- ``register(on)``; ``on(event, hook)`` or ``on(event, matcher, hook)``;
- a hook is ``async (host, e, next) -> result``; ``await next(e)`` runs what is beneath and returns its
  result unchanged; ``next.origin`` says who raised the event, ``next.signal`` is aborted on Esc;
- the host offers ``env.get``, ``process.run``, ``ui.toast``, ``ui.invalidate``, ``clock.now`` and the
  timers ``clock.after`` / ``clock.every``.

The Protocols themselves are written in :mod:`agent_cards._protocols` and given from here on first
use: importing this module loads neither ``typing`` nor ``dataclasses`` (the command hook imports it
at every start), and ``from agent_cards.engine import Host`` works as ever.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIMEOUT_MS", "ENGINE", "MAX_TIMEOUT_MS", "UI", "Clock", "Env", "Event", "Hook", "HookResult", "Host",
    "Matcher", "Next", "On", "Origin", "Process", "ProcessError", "ProcessErrorKind", "ProcessResult", "Signal",
    "Timer", "error_reason", "text",
]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command hook's path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Literal, TypeAlias

    from agent_cards._protocols import UI, Clock, Env, Hook, Host, Next, On, Process, Signal, Timer

    Event: TypeAlias = dict[str, Any]
    """An event as the engine hands it to a hook: a JSON-like mapping (``tool``, ``tool_use_id``, input…)."""

    HookResult: TypeAlias = dict[str, Any]
    """What a hook answers: ``{"result": …, "context"?: [...]}``, ``{"deny": text}``, or the layer beneath's value."""

    Matcher: TypeAlias = Mapping[str, Any]
    """A partial match on the event: scalars by equality, ``re.Pattern`` against the value as text, a list for
    "one of", a mapping for a partial match of a nested object."""

    ProcessErrorKind: TypeAlias = Literal["timeout", "start", "aborted", "host"]
else:
    # At run time the aliases are the plain types, and the Protocols (which need ``typing``) load on
    # first use (``__getattr__`` below): the command hook starts without ``typing`` or ``dataclasses``.
    Event = dict
    HookResult = dict
    Matcher = dict
    ProcessErrorKind = str

    _PROTOCOLS = frozenset({"Signal", "Next", "Env", "Process", "UI", "Clock", "Host", "On", "Timer", "Hook"})

    def __getattr__(name):
        if name in _PROTOCOLS:
            from agent_cards import _protocols

            return getattr(_protocols, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Frozen:
    """An immutable value (as a frozen dataclass): its fields are its ``__slots__``, in order."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self) or not isinstance(other, _Frozen):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


def text(value: Any) -> str:
    """An event field as text: the value when it is a string, else ``""`` (a missing or odd field)."""
    return value if isinstance(value, str) else ""


def error_reason(error: BaseException) -> str:
    """What a failure says, for a toast or a deny: its message, else its type's name."""
    return str(error) or type(error).__name__


DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000


class Origin(_Frozen):
    """Who raised the event: ``Origin("engine", "core")`` for the model's own calls."""

    __slots__ = ("plugin", "tier")
    plugin: str
    tier: str

    def __init__(self, plugin: str, tier: str) -> None:
        object.__setattr__(self, "plugin", plugin)
        object.__setattr__(self, "tier", tier)


ENGINE = Origin("engine", "core")


class ProcessResult(_Frozen):
    """A process that ran to its end. A non-zero exit resolves; it does not raise."""

    __slots__ = ("exit_code", "stdout", "stderr", "stdout_truncated", "stderr_truncated")  # noqa: RUF023 (field order)
    exit_code: int
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool

    def __init__(
        self, exit_code: int, stdout: str, stderr: str, stdout_truncated: bool = False, stderr_truncated: bool = False
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "exit_code", exit_code)
        set_field(self, "stdout", stdout)
        set_field(self, "stderr", stderr)
        set_field(self, "stdout_truncated", stdout_truncated)
        set_field(self, "stderr_truncated", stderr_truncated)


class ProcessError(Exception):
    """``process.run`` rejected: it timed out, failed to start, was aborted, or a host check refused it.

    ``str(error)`` is the engine's message, e.g.
    ``$.process.run(lich) aborted: still running after 120000ms``.
    """

    def __init__(self, message: str, kind: ProcessErrorKind) -> None:
        super().__init__(message)
        self.kind: ProcessErrorKind = kind
