"""What ``fake-lich`` needs of ``json`` and ``contextlib``, without what they import.

``fake-lich`` starts on every lich call of a replay with processes, and ``json`` and ``contextlib``
would load ``re``, ``collections`` and ``functools`` (``python -m bench cold`` prints what
``contextlib`` alone adds). The JSON is the mod's (``agent_cards.quick_json``, standard library only):
``agent_cards`` loads nothing of the mod on import, so this costs only that module.
"""

from __future__ import annotations

from agent_cards.quick_json import dumps, loads

__all__ = ["dumps", "loads", "suppress"]


class suppress:  # named as the contextlib.suppress it stands for
    """``contextlib.suppress``, without loading ``contextlib``."""

    def __init__(self, *kinds: type[BaseException]) -> None:
        self.kinds = kinds

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> bool:
        return kind is not None and issubclass(kind, self.kinds)
