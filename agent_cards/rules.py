"""Which Agent calls the mod takes: one ordered table, read top to bottom.

The first rule whose ``leaves`` holds keeps the call native (it goes on to Claude Code untouched); a
rule with a ``toast`` says why to the person first. A call no rule leaves is taken. ``Facts`` reads the
environment lazily, so a call the first rows leave (an Explore agent, a subagent's own call) costs no
environment read at all.

All rows run at ``tool.call``, before the call is passed on to Claude Code's permission check, as the
reference mod does: so the size toast comes before the dialog, and the person answering it knows the
agent would run inside Claude Code. ``AFTER_BASE`` runs once git gave the base (isolated calls only).

| clause               | leaves the call native when                                         | toast          |
|----------------------|---------------------------------------------------------------------|----------------|
| TAKE-INTERACTIVE     | no session.start with isInteractive was seen (or a reload forgot it) |                |
| TAKE-ORIGIN          | another plugin raised it, or a subagent made it (agentId)           |                |
| TAKE-TYPE            | subagent_type is neither absent nor general-purpose                 |                |
| TAKE-TEAM            | it names a team_name                                                |                |
| TAKE-REMOTE          | isolation is remote (or anything but absent / worktree)             |                |
| TAKE-PROMPT          | the prompt is not text (a list, null, a number): Claude Code's own  |                |
|                      | check answers it; lich would get an empty task                      |                |
| TAKE-LICH-ENV        | LICH_BIN or LICH_SESSION_ID is unset or empty                       |                |
| TAKE-CARDS-OFF       | LICH_SUBAGENT_CARDS=off in a worker (LICH_SUBAGENT_DEPTH above 0)   | cards_off      |
| TAKE-CARDS-OFF       | LICH_SUBAGENT_CARDS=off anywhere else                               |                |
| FALL-OVERSIZE        | the prompt is over 8192 UTF-8 bytes (not yet for an isolated call   | oversize       |
|                      | under a lich without LICH_SUBAGENT_DEPTH: that one after the base)  |                |
| TAKE-OLD-LICH-WORKER | no LICH_SUBAGENT_DEPTH, isolated, and the base is under subagent/   | (after base)   |
| FALL-OVERSIZE        | (after base) the same call, when the rule above did not leave it   | oversize       |
"""

from __future__ import annotations

from functools import cached_property

from agent_cards.branch import PREFIX
from agent_cards.record import Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_cards.engine import Env, Event, Origin


PROMPT_LIMIT_BYTES = 8192


class Facts:
    """What the rules read about one Agent call. Properties are computed on first use."""

    def __init__(self, e: Event, origin: Origin, interactive: bool, env: Env, base: str = "") -> None:
        self.e = e
        self.origin = origin
        self.interactive = interactive
        self.env = env
        self.base = base

    @property
    def isolated(self) -> bool:
        return self.e.get("isolation") == "worktree"

    @cached_property
    def lich_bin(self) -> str:
        return self.env.get("LICH_BIN") or ""

    @cached_property
    def session_id(self) -> str:
        return self.env.get("LICH_SESSION_ID") or ""

    @cached_property
    def cards_off(self) -> bool:
        return self.env.get("LICH_SUBAGENT_CARDS") == "off"

    @cached_property
    def depth(self) -> int | None:
        """``None``: no depth (an older lich). ``-1``: set but not a decimal integer (a current lich
        whose value we cannot read: not a worker). Otherwise the depth. An empty value counts as unset."""
        raw = self.env.get("LICH_SUBAGENT_DEPTH")
        if not raw:
            return None
        return int(raw) if raw.isascii() and raw.isdigit() else -1  # [0-9]+, whole

    @property
    def is_worker(self) -> bool:
        return self.depth is not None and self.depth > 0

    @property
    def old_lich_isolated(self) -> bool:
        """An isolated call under a lich that sets no depth: TAKE-OLD-LICH-WORKER needs its base first."""
        return self.depth is None and self.isolated

    @cached_property
    def prompt_bytes(self) -> int:
        prompt = self.e.get("prompt")
        text = prompt if isinstance(prompt, str) else ""
        return len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate: 3, as TextEncoder


class Rule(Value):
    """One row of a table."""

    clause: str
    leaves: Callable[[Facts], bool]
    toast: str | None = None  # a PERSON key in agent_cards.texts


RULES: tuple[Rule, ...] = (
    Rule("TAKE-INTERACTIVE", lambda f: not f.interactive),
    Rule("TAKE-ORIGIN", lambda f: f.origin.plugin != "engine" or f.e.get("agentId") is not None),
    Rule("TAKE-TYPE", lambda f: f.e.get("subagent_type") not in (None, "general-purpose")),
    Rule("TAKE-TEAM", lambda f: f.e.get("team_name") is not None),
    Rule("TAKE-REMOTE", lambda f: f.e.get("isolation") not in (None, "worktree")),
    Rule("TAKE-PROMPT", lambda f: not isinstance(f.e.get("prompt"), str)),
    Rule("TAKE-LICH-ENV", lambda f: not f.lich_bin or not f.session_id),
    Rule("TAKE-CARDS-OFF", lambda f: f.cards_off and f.is_worker, toast="toast.cards_off"),
    Rule("TAKE-CARDS-OFF", lambda f: f.cards_off),
    # An isolated call under an old lich may yet stay native silently (TAKE-OLD-LICH-WORKER, after the
    # base): its size is checked after that rule, so such a call never shows the size toast.
    Rule("FALL-OVERSIZE", lambda f: f.prompt_bytes > PROMPT_LIMIT_BYTES and not f.old_lich_isolated,
         toast="toast.oversize"),
)

AFTER_BASE: tuple[Rule, ...] = (
    Rule("TAKE-OLD-LICH-WORKER", lambda f: f.old_lich_isolated and f.base.startswith(PREFIX)),
    Rule("FALL-OVERSIZE", lambda f: f.prompt_bytes > PROMPT_LIMIT_BYTES, toast="toast.oversize"),
)


def first_leaving(rules: tuple[Rule, ...], facts: Facts) -> Rule | None:
    """The rule that keeps this call native, or None when the call is taken."""
    for rule in rules:  # a plain loop: a generator under next() would cost more than the rules it reads
        if rule.leaves(facts):
            return rule
    return None
