"""agent cards: Claude Code's Agent tool call, run as a lich session (a card) instead of a hidden agent.

``register`` and ``AgentCards`` (:mod:`agent_cards.mod`, which needs ``typing``) are loaded on first
use: the command hook (``agent_cards.hook``) imports this package, and its start-up does without them.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from agent_cards.mod import AgentCards, register

__all__ = ["AgentCards", "register"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from agent_cards import mod

        return getattr(mod, name)
    raise AttributeError(f"module 'agent_cards' has no attribute {name!r}")
