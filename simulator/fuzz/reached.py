"""The states a fuzz run should reach, beside the invariants: each is named, said in a line, and read off a
replay's transcript with the spec's own model (:class:`.oracle.SpecModel`) of it.

A run counts how often each was reached and prints the ones it never reached; CI fails when one of
:data:`STATES` is never reached at its seed and case count. :data:`NOT_YET` lists those the bench cannot
play yet, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agent_cards.record import Value
from agent_cards_simulator.fuzz.oracle import SpecModel

Events = Sequence[dict[str, Any]]


class State(Value):
    doc: str
    seen: Callable[[SpecModel, Events], bool]


def _sessions(events: Events) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "run" and e.get("argv", [None, None])[1:2] == ["sessions"]]


def _refused_then_finished(model: SpecModel, events: Events) -> bool:
    return any(w.refused and w.gone is not None for w in model.book.workers)


def _note_after_reload(model: SpecModel, events: Events) -> bool:
    """A worker's [lich] note lands after a reload made the mod forget it (its report still arrives)."""
    forgotten = [t for t in model.reloads if model.book.bounds(t - 0.5)[0] > 0]
    return any(e["kind"] == "note" and forgotten and e["t"] > forgotten[0] for e in events)


def _esc_during_base_read(model: SpecModel, events: Events) -> bool:
    reads = [(e["t"], e["t"] + (e.get("ms") or 0)) for _, e in model.runs if e["argv"][:1] == ["git"]]
    return any(a <= t < b for t in model.escs for a, b in reads)


def _failed_between_good(model: SpecModel, events: Events) -> bool:
    kinds = "".join({"good": "g", "failed": "f"}.get(k, "u") for _, k in sorted(model.reads))
    return "gfg" in kinds


def _arm_after_reload(arm: str) -> Callable[[SpecModel, Events], bool]:
    def seen(model: SpecModel, events: Events) -> bool:
        if not model.reloads:
            return False
        first = model.reloads[0]
        return any(a == arm and model.calls[c][1]["t"] > first for c, a in model.arms.items())
    return seen


def _stop_racing_poll(model: SpecModel, events: Events) -> bool:
    reads = [(e["t"], e["t"] + (e.get("ms") or 0)) for e in _sessions(events)]
    return any(a <= c <= b or c <= a <= d for c, d in model.stop_runs for a, b in reads)


STATES: dict[str, State] = {
    "stop-refused-then-finished": State("a TaskStop lich refused, then the worker finished by a read",
                                        _refused_then_finished),
    "note-after-reload": State("a worker's [lich] note after a reload forgot the workers counted", _note_after_reload),
    "esc-during-base-read": State("Esc while git branch --show-current runs for an isolated call",
                                  _esc_during_base_read),
    "read-failed-between-good": State("a sessions read that failed between two good ones", _failed_between_good),
    **{f"after-reload-{arm}": State(f"a taken call answered by the {arm} arm after a reload", _arm_after_reload(arm))
       for arm in ("pending", "unanswered", "answered", "never", "unknown", "open-failed")},
    "stop-racing-poll": State("a TaskStop's close or control running while a sessions read runs", _stop_racing_poll),
}

NOT_YET: dict[str, str] = {
    "host-restart-with-workers": "a host restart with workers counted: the simulator cannot restart the host yet",
    "note-while-reload-pending": "a note while a reload waits for the turn to end: the fake host reloads at once "
                                 "(note-after-reload is the nearest it plays)",
}


def reached(model: SpecModel, events: Events) -> set[str]:
    return {name for name, state in STATES.items() if state.seen(model, events)}
