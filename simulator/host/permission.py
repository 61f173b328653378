"""How the fake Claude Code's permission check answers a call: one plain record, importing nothing of the host.

The scenario format writes it (``session.permission``, a call's ``permission``) and the host checks
with it, so it is defined here once, where the scenario reader can take it without loading the host.
"""

from __future__ import annotations

from agent_cards.record import Value

__all__ = ["PLAIN_RULE", "PermissionVerdict"]


#: The plain deny rule (``permissions.deny: ["Agent"]``): Claude Code takes the tool out of the session.
PLAIN_RULE = "Agent"


class PermissionVerdict(Value):
    """How Claude Code's permission check answers an Agent call.

    ``allow`` (the mode lets it run), ``deny`` (a rule in the project's settings, ``rule``), ``ask`` (the dialog;
    ``answer`` is the person's yes or no, and with nobody to ask the call is refused), ``hook-deny`` (a
    PreToolUse hook denies, with ``reason``).
    """

    decision: str = "allow"
    answer: bool | None = None  # for ask: yes, no, or None when nobody can answer
    reason: str = ""  # for hook-deny; empty: Claude Code's own text
    #: For deny, the rule as the settings write it: ``Agent(<type>)`` refuses calls of that agent type (they
    #: reach the hooks first); :data:`PLAIN_RULE` takes the tool away before any hook. Empty: ``Agent(<the
    #: call's own type>)``.
    rule: str = ""

    def denied_type(self, agent_type: str) -> str | None:
        """The typed rule that refuses a call of ``agent_type``, or None when none does."""
        if self.decision != "deny" or self.rule == PLAIN_RULE:
            return None
        rule = self.rule or f"Agent({agent_type})"
        return rule if rule == f"Agent({agent_type})" else None

    @property
    def removes_tool(self) -> bool:
        """The plain rule: the Agent tool is gone from the session, before any hook."""
        return self.decision == "deny" and self.rule == PLAIN_RULE
