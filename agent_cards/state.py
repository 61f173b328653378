"""The mod's state: one small serializable value, so that any host can keep it.

A host keeps it in memory (the simulator, the real engine), in a file between hook processes (the
command hook), or across a bridge. ``to_json``/``from_json`` round-trip it; ``from_json`` is tolerant:
anything it cannot read becomes the empty state, never an exception (a field of the wrong type is named
to its ``report``, so a driver can warn about it).
"""

from __future__ import annotations

from agent_cards.record import Value, replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


class Worker(Value):
    """A worker the mod opened with a ``pending`` delivery and still counts (keyed by roster name)."""

    name: str
    label: str
    description: str
    shared: bool  # True: it works in the asking session's checkout; False: in a worktree of its own


class ModState(Value):
    interactive: bool = False  # a session.start with isInteractive was seen (TAKE-INTERACTIVE)
    lich_bin: str = ""  # the LICH_BIN of the last tracked open: polling and TaskStop use it
    workers: tuple[Worker, ...] = ()
    #: The Claude Code process (its pid, as text) whose session host last kept this state in a file: a state
    #: kept by another one outlived the process of its session (``claude --continue``, ``--resume``).
    owner: str = ""
    #: Workers Claude Code told the model had failed (its own record of them died with the process before),
    #: and that the model has not yet been told still run in lich.
    reported_lost: tuple[str, ...] = ()

    def worker(self, name: str) -> Worker | None:
        return next((w for w in self.workers if w.name == name), None)

    def with_worker(self, worker: Worker, lich_bin: str) -> ModState:
        others = tuple(w for w in self.workers if w.name != worker.name)
        return replace(self, workers=(*others, worker), lich_bin=lich_bin)

    def without(self, names: set[str]) -> ModState:
        return replace(self, workers=tuple(w for w in self.workers if w.name not in names))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "interactive": self.interactive,
            "lich_bin": self.lich_bin,
            "workers": [
                {"name": w.name, "label": w.label, "description": w.description, "shared": w.shared}
                for w in self.workers
            ],
        }
        if self.owner:  # only a session host keeps these: the command hook's files stay as they were
            data["owner"] = self.owner
        if self.reported_lost:
            data["reported_lost"] = list(self.reported_lost)
        return data

    @classmethod
    def from_json(cls, data: object, report: Callable[[str], None] | None = None) -> ModState:
        """The state ``data`` holds; what it cannot read is left out (empty), and named to ``report``."""
        wrong: list[str] = []
        if not isinstance(data, dict):
            if report is not None:
                report("the state is not a JSON object")
            return cls()
        workers = []
        listed = data.get("workers", [])
        if not isinstance(listed, list):
            wrong.append("workers is not a list")
            listed = []
        for i, item in enumerate(listed):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                wrong.append(f"workers[{i}] is not a worker with a name")
                continue
            bad = [k for k in ("label", "description") if k in item and not isinstance(item[k], str)]
            bad += ["shared"] if "shared" in item and not isinstance(item["shared"], bool) else []
            wrong += [f"workers[{i}].{k} is not {'true or false' if k == 'shared' else 'text'}" for k in bad]
            workers.append(
                Worker(
                    name=item["name"],
                    label=str(item.get("label") or item["name"]),
                    description=str(item.get("description") or ""),
                    shared=item["shared"] if isinstance(item.get("shared"), bool) else True,
                )
            )
        lich_bin = data.get("lich_bin", "")
        if not isinstance(lich_bin, str):
            wrong.append("lich_bin is not text")
            lich_bin = ""
        interactive = data.get("interactive", False)
        if not isinstance(interactive, bool):
            wrong.append(f"interactive is {type(interactive).__name__}, not true or false (read as false)")
        owner = data.get("owner", "")
        if not isinstance(owner, str):
            wrong.append("owner is not text")
            owner = ""
        lost = data.get("reported_lost", [])
        if not isinstance(lost, list) or not all(isinstance(name, str) for name in lost):
            wrong.append("reported_lost is not a list of names")
            lost = []
        if wrong and report is not None:
            report("; ".join(wrong))
        return cls(interactive=interactive is True, lich_bin=lich_bin, workers=tuple(workers), owner=owner,
                   reported_lost=tuple(lost))


def restore(given: object, kept: Any, owner: str, start: Mapping[str, Any] | None,
            report: Callable[[str], None]) -> ModState:
    """The state a mod starts from when its session keeps one (a session host started again, a reload, the
    session continued in a new Claude Code process): the ``kept`` store's (a :class:`agent_cards.engine.
    StateStore` holding every change) when it has one, else ``given`` (what the module still held). A state
    kept by another Claude Code process (``owner``: this one's pid) outlived the process of its session: that
    Claude Code's record of the workers died with it, and it tells the model they failed, so they are marked
    ``reported_lost``. A ``session.start`` seen now says whether the session is interactive."""
    state = ModState.from_json(given)
    if kept is not None:
        try:
            from_file = kept.get()
        except OSError as error:
            report(f"the kept state could not be read: {error.strerror or error}")
        else:
            if from_file.workers or from_file.owner or not state.workers:
                state = from_file
    if owner and state.owner and state.owner != owner and state.workers:
        state = replace(state, reported_lost=tuple(w.name for w in state.workers))
    if start is not None:
        state = replace(state, interactive=start.get("isInteractive") is True)
    return replace(state, owner=owner or state.owner)


class MemoryStore:
    """A :class:`agent_cards.engine.StateStore`: the state kept in memory, as the mod engine keeps a module's
    variables (lost on reload)."""

    def __init__(self, state: ModState | None = None) -> None:
        self._state = state or ModState()

    def get(self) -> ModState:
        return self._state

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        self._state = change(self._state)
        return self._state
