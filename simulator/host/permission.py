"""How the fake Claude Code's permission check answers a call: one plain record, importing nothing of the host.

The scenario format writes it (``session.permission``, a call's ``permission``) and the host checks
with it, so it is defined here once, where the scenario reader can take it without loading the host.
"""

from __future__ import annotations

from agent_cards.record import Value

__all__ = ["PermissionVerdict"]


class PermissionVerdict(Value):
    """How Claude Code's permission check answers an Agent call.

    ``allow`` (the mode lets it run), ``deny`` (a rule), ``ask`` (the dialog; ``answer`` is the person's
    yes or no, and with nobody to ask the call is refused), ``hook-deny`` (a PreToolUse hook denies).
    """

    decision: str = "allow"
    answer: bool | None = None  # for ask: yes, no, or None when nobody can answer
    reason: str = ""  # for deny and hook-deny; empty: Claude Code's own text
