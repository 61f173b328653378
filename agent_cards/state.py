"""The mod's state: one small serializable value, so that any host can keep it.

A host keeps it in memory (the simulator, the real engine), in a file between hook processes (the
command hook), or across a bridge. ``to_json``/``from_json`` round-trip it; ``from_json`` is tolerant:
anything it cannot read becomes the empty state, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol


@dataclass(frozen=True)
class Worker:
    """A worker the mod opened with a ``pending`` delivery and still counts (keyed by roster name)."""

    name: str
    label: str
    description: str
    shared: bool  # True: it works in the asking session's checkout; False: in a worktree of its own


@dataclass(frozen=True)
class ModState:
    interactive: bool = False  # a session.start with isInteractive was seen (TAKE-INTERACTIVE)
    lich_bin: str = ""  # the LICH_BIN of the last tracked open: polling and TaskStop use it
    workers: tuple[Worker, ...] = field(default=())

    def worker(self, name: str) -> Worker | None:
        return next((w for w in self.workers if w.name == name), None)

    def with_worker(self, worker: Worker, lich_bin: str) -> ModState:
        others = tuple(w for w in self.workers if w.name != worker.name)
        return replace(self, workers=(*others, worker), lich_bin=lich_bin)

    def without(self, names: set[str]) -> ModState:
        return replace(self, workers=tuple(w for w in self.workers if w.name not in names))

    def to_json(self) -> dict[str, Any]:
        return {
            "interactive": self.interactive,
            "lich_bin": self.lich_bin,
            "workers": [
                {"name": w.name, "label": w.label, "description": w.description, "shared": w.shared}
                for w in self.workers
            ],
        }

    @classmethod
    def from_json(cls, data: object) -> ModState:
        if not isinstance(data, dict):
            return cls()
        workers = []
        listed = data.get("workers")
        for item in listed if isinstance(listed, list) else []:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
                workers.append(
                    Worker(
                        name=item["name"],
                        label=str(item.get("label") or item["name"]),
                        description=str(item.get("description") or ""),
                        shared=bool(item.get("shared", True)),
                    )
                )
        lich_bin = data.get("lich_bin")
        return cls(
            interactive=data.get("interactive") is True,
            lich_bin=lich_bin if isinstance(lich_bin, str) else "",
            workers=tuple(workers),
        )


class StateStore(Protocol):
    """Where a host keeps the state. ``update`` is one atomic read-modify-write."""

    def get(self) -> ModState: ...

    def update(self, change: Callable[[ModState], ModState]) -> ModState: ...


class MemoryStore:
    """The state kept in memory, as the mod engine keeps a module's variables (lost on reload)."""

    def __init__(self, state: ModState | None = None) -> None:
        self._state = state or ModState()

    def get(self) -> ModState:
        return self._state

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        self._state = change(self._state)
        return self._state
