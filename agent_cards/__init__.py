"""agent cards: Claude Code's Agent tool call, run as a lich session (a card) instead of a hidden agent."""

from agent_cards.mod import AgentCards, register

__all__ = ["AgentCards", "register"]
