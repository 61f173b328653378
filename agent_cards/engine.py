"""The Claude Code mod engine, as the mod sees it: typed Protocols and the few values they carry.

Nothing here does I/O. A host (the simulator, a command hook, a bridge to the real engine) implements
these Protocols; the mod is written against them alone. The shapes follow what was measured on Claude
Code 2.1.328:

- ``register(on)``; ``on(event, hook)`` or ``on(event, matcher, hook)``;
- a hook is ``async (host, e, next) -> result``; ``await next(e)`` runs what is beneath and returns its
  result unchanged; ``next.origin`` says who raised the event, ``next.signal`` is aborted on Esc;
- the host offers ``env.get``, ``process.run``, ``ui.toast``, ``ui.invalidate``, ``clock.now`` and the
  timers ``clock.after`` / ``clock.every``; it keeps the mod's state in a ``StateStore``. A host whose own
  process may die mid-run (the bridge's session host) also offers ``process.run_kept`` / ``collect``
  (``KeptProcess``): a run whose output the next host reads.

The Protocols need ``typing``, which the command hook's start-up does without (``python -m bench cold``
prints what ``import typing`` would add): they are written in :mod:`agent_cards._protocols`, and this
module gives them on first use, so ``from agent_cards.engine import Host`` works as any import does.
"""

from __future__ import annotations

from agent_cards.record import Value

__all__ = [
    "DEFAULT_TIMEOUT_MS", "ENGINE", "MAX_TIMEOUT_MS", "UI", "Clock", "Env", "Event", "Hook", "HookResult", "Host",
    "KeptProcess", "Matcher", "Next", "On", "Origin", "Process", "ProcessError", "ProcessErrorKind", "ProcessResult",
    "Signal", "StateStore", "Timer", "error_reason", "text",
]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Literal, TypeAlias

    from agent_cards._protocols import (
        UI,
        Clock,
        Env,
        Hook,
        Host,
        KeptProcess,
        Next,
        On,
        Process,
        Signal,
        StateStore,
        Timer,
    )

    Event: TypeAlias = dict[str, Any]
    """An event as the engine hands it to a hook: a JSON-like mapping (``tool``, ``tool_use_id``, input…)."""

    HookResult: TypeAlias = dict[str, Any]
    """What a hook answers: ``{"result": …, "context"?: [...]}``, ``{"deny": text}``, or the layer beneath's value."""

    Matcher: TypeAlias = Mapping[str, Any]
    """A partial match on the event: scalars by equality, ``re.Pattern`` against the value as text, a list for
    "one of", a mapping for a partial match of a nested object."""

    ProcessErrorKind: TypeAlias = Literal["timeout", "start", "aborted", "host"]
else:
    # At run time the aliases are the plain types they stand for.
    Event = dict
    HookResult = dict
    Matcher = dict
    ProcessErrorKind = str

    _PROTOCOLS = frozenset({"Signal", "Next", "Env", "Process", "KeptProcess", "UI", "Clock", "Host", "On", "Timer",
                            "Hook", "StateStore"})

    def __getattr__(name):
        """A Protocol, from :mod:`agent_cards._protocols` (loaded on first use)."""
        if name in _PROTOCOLS:
            from agent_cards import _protocols

            return getattr(_protocols, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def text(value: Any) -> str:
    """An event field as text: the value when it is a string, else ``""`` (a missing or odd field)."""
    return value if isinstance(value, str) else ""


def error_reason(error: BaseException) -> str:
    """What a failure says, for a toast or a deny: its message, else its type's name."""
    return str(error) or type(error).__name__


DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000


class Origin(Value):
    """Who raised the event: ``Origin("engine", "core")`` for the model's own calls."""

    plugin: str
    tier: str


ENGINE = Origin("engine", "core")


class ProcessResult(Value):
    """A process that ran to its end. A non-zero exit resolves; it does not raise."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False


class ProcessError(Exception):
    """``process.run`` rejected: it timed out, failed to start, was aborted, or a host check refused it.

    ``str(error)`` is the engine's message, e.g.
    ``$.process.run(lich) aborted: still running after 120000ms``.
    """

    def __init__(self, message: str, kind: ProcessErrorKind) -> None:
        super().__init__(message)
        self.kind: ProcessErrorKind = kind
