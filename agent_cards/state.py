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


class PendingOpen(Value):
    """A ``lich open`` the mod started and has not yet read: kept in the state before it starts, so that a
    session host started after the one running it died (its output went to files the host keeps under
    ``key``, the call's ``tool_use_id``) still reads what it printed, counts the worker it opened, and never
    runs it again. It holds what the mod needs to read that output as the call would have."""

    key: str
    description: str
    prompt: str
    branch: str  # "" for a call in the asking session's checkout
    call_ms: int  # the call's start on the host's clock (what ``completed`` counts its duration from)
    opened_ms: int  # the open's start: its two minutes run from here
    timeout_ms: int
    lang: str | None
    lich_bin: str


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
    #: Opens under way (or whose host died while they ran), by the call's ``tool_use_id``.
    opens: tuple[PendingOpen, ...] = ()

    def worker(self, name: str) -> Worker | None:
        return next((w for w in self.workers if w.name == name), None)

    def with_worker(self, worker: Worker, lich_bin: str) -> ModState:
        others = tuple(w for w in self.workers if w.name != worker.name)
        return replace(self, workers=(*others, worker), lich_bin=lich_bin)

    def without(self, names: set[str]) -> ModState:
        return replace(self, workers=tuple(w for w in self.workers if w.name not in names))

    def with_open(self, pending: PendingOpen) -> ModState:
        return replace(self, opens=(*(p for p in self.opens if p.key != pending.key), pending))

    def settled(self, key: str, worker: Worker | None, lich_bin: str) -> ModState:
        """The open ``key`` has been read: it leaves, and the worker it opened (if counted) comes in, in one
        change, so that no kept state ever holds neither."""
        state = replace(self, opens=tuple(p for p in self.opens if p.key != key))
        return state if worker is None else state.with_worker(worker, lich_bin)

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
        if self.opens:  # only while an open runs (or its host died): every other state's file is as it was
            data["opens"] = [{name: getattr(p, name) for name in _OPEN_FIELDS} for p in self.opens]
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
            label, description, shared = item.get("label"), item.get("description"), item.get("shared")
            workers.append(
                Worker(
                    name=item["name"],
                    label=label if isinstance(label, str) and label else item["name"],
                    description=description if isinstance(description, str) else "",
                    shared=shared if isinstance(shared, bool) else True,
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
        opens = _opens(data.get("opens", []), wrong)
        if wrong and report is not None:
            report("; ".join(wrong))
        return cls(interactive=interactive is True, lich_bin=lich_bin, workers=tuple(workers), owner=owner,
                   reported_lost=tuple(lost), opens=opens)


_OPEN_FIELDS = ("key", "description", "prompt", "branch", "call_ms", "opened_ms", "timeout_ms", "lang", "lich_bin")


def _opens(listed: object, wrong: list[str]) -> tuple[PendingOpen, ...]:
    """The pending opens a state file lists; one it cannot read whole is left out (and named in ``wrong``)."""
    if not isinstance(listed, list):
        wrong.append("opens is not a list")
        return ()
    opens = []
    for i, item in enumerate(listed):
        ok = isinstance(item, dict) and isinstance(item.get("key"), str) and bool(item["key"])
        ok = ok and all(isinstance(item.get(k), str) for k in ("description", "prompt", "branch", "lich_bin"))
        ok = ok and all(type(item.get(k)) is int for k in ("call_ms", "opened_ms", "timeout_ms"))
        ok = ok and (item.get("lang") is None or isinstance(item.get("lang"), str))
        if not ok:
            wrong.append(f"opens[{i}] is not an open")
            continue
        opens.append(PendingOpen(**{name: item.get(name) for name in _OPEN_FIELDS}))
    return tuple(opens)


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
