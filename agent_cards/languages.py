"""Translations of the agent-facing texts in :mod:`agent_cards.texts`, by ``LICH_PROMPT_LANG`` tag.

Each table has exactly the English keys and the same ``{slots}`` (a test holds every language to it).
"""

from __future__ import annotations

TRANSLATIONS: dict[str, dict[str, str]] = {}
