"""agent cards: Claude Code's Agent tool call, run as a lich session (a card) instead of a hidden agent.

``register`` and ``AgentCards`` are loaded on first use, so that the command hook
(``agent_cards.hook``), which runs on every matching tool call, imports only what its event needs.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_cards.mod import AgentCards, register

__all__ = ["AgentCards", "register"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from agent_cards import mod

        return getattr(mod, name)
    raise AttributeError(f"module 'agent_cards' has no attribute {name!r}")
