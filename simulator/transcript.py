"""The transcript: the one record of what happened in a replay, on the virtual timeline.

Each event is a JSON object with ``t`` (virtual ms since the scenario's start) and ``kind``. The kinds
and their fields are a public contract (``agent-cards replay --json``): fields may be added, never
renamed. ``EVENT_FIELDS`` lists them; docs/scenarios.md explains each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "session.start": ("interactive",),
    "call": ("call", "tool", "input"),
    "permission": ("call", "outcome", "via"),
    "spawn": ("call", "answer"),
    "native": ("call", "tool", "input"),  # input: what Claude Code got beneath the hooks
    "answer": ("call",),  # and one of result / deny / error, plus context when the answer carries one
    "run": ("argv", "timeout_ms", "exit", "stdout", "stderr", "error", "ms"),
    "toast": ("text",),
    "log": ("text",),  # a line the mod wrote to the plugin's log (a cut toast's whole text)
    "footer": ("line", "modes"),  # line: the first lich mode; modes: every mode drawn, in order
    "note": ("text", "notifications", "context"),  # the last two only when something came beside the note
    "esc": (),
    "reload": ("asked",),  # asked: when it was asked for, had it waited for a turn to end
    "mode": ("mode",),  # the session's permission mode was switched (Shift+Tab)
    "report": ("text",),  # a line of the engine's report: a hook skipped, a hook overran
    "check": ("count", "footer"),  # a check step read the mod's state (no footer drawn)
    "resume": ("how",),  # the session went on in a new Claude Code process (continue / resume)
    "notification": ("task", "status", "text"),  # Claude Code's own report of a background agent
    "prompt": ("text", "notifications", "context"),  # the person's prompt, what the model reads with it
    "host.dies": (),  # the plugin's session host died
    "host.start": (),  # ...and another started from the kept state
    "rewind": ("open",),  # Claude Code's Rewind panel opened (Esc twice at the idle prompt) or closed
}


class Transcript:
    def __init__(self, now_ms: Callable[[], int]) -> None:
        self._now = now_ms
        self.events: list[dict[str, Any]] = []

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append an event at the current virtual time; the returned dict may be completed later."""
        event: dict[str, Any] = {"t": self._now(), "kind": kind, **fields}
        self.events.append(event)
        return event

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]
