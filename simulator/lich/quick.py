"""What ``fake-lich`` needs of ``json`` and ``contextlib``, without what they import: it starts on
every call.

The one copy lives with the mod (``agent_cards.quick_json``, standard library only): both the command
hook and ``fake-lich`` start on every call, and both would otherwise load ``json``, ``re`` and
``contextlib``. ``agent_cards`` loads nothing of the mod on import, so this costs only that module.
"""

from agent_cards.quick_json import dumps, loads, suppress

__all__ = ["dumps", "loads", "suppress"]
