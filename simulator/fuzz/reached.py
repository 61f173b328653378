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
from agent_cards_simulator.fuzz.oracle import SpecModel, parsed

Events = Sequence[dict[str, Any]]


class TargetState(Value):
    doc: str
    seen: Callable[[SpecModel, Events], bool]


def _sessions(events: Events) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "run" and e.get("argv", [None, None])[1:2] == ["sessions"]]


def _refused_then_finished(model: SpecModel, events: Events) -> bool:
    return any(w.refused and w.gone is not None for w in model.book.workers)


def _note_after_reload(model: SpecModel, events: Events) -> bool:
    """A worker's [lich] note lands after a reload while a worker was counted (its report still arrives,
    whether the fresh module kept the count or, with no data folder, forgot it)."""
    counted = [t for t in model.reloads if model.book.bounds(t - 0.5)[0] > 0]
    return any(e["kind"] == "note" and counted and e["t"] > counted[0] for e in events)


def _note_while_reload_waits(model: SpecModel, events: Events) -> bool:
    """A worker's [lich] note falls due while a reload asked for mid-turn waits for the turn to end: both wait
    for it, and the model reads the note as the turn ends, with the reload."""
    held = [(e["asked"], e["t"]) for e in events if e["kind"] == "reload" and e.get("asked") is not None]
    return any(e["kind"] == "note" and asked <= e["t"] <= done for e in events for asked, done in held)


def _first_read(events: Events, index: int) -> dict[str, Any] | None:
    """The first sessions read after the event at ``index``."""
    return next((e for e in _sessions(events[index + 1:])), None)


def _continued(running: bool) -> Callable[[SpecModel, Events], bool]:
    """A new process (continue or resume) from the kept state with a worker counted: after the fresh
    module's first read of lich, the worker still counted (``running``) or dropped by that very read."""
    def seen(model: SpecModel, events: Events) -> bool:
        if not model.scenario.session.data:
            return False
        for index in model.resumes:
            read = _first_read(events, index)
            listed = parsed(read.get("stdout")) if read is not None and read.get("exit") == 0 else None
            if read is None or not isinstance(listed, list):
                continue
            names = {r["name"] for r in listed if isinstance(r, dict) and isinstance(r.get("name"), str)}
            end = read["t"] + (read.get("ms") or 0)
            for worker in model.kept(index):
                if (worker.maybe(end) and worker.name in names) if running else \
                        (worker.gone == end and worker.name not in names):
                    return True
        return False
    return seen


def _told_still_running(model: SpecModel, events: Events) -> bool:
    for index in model.resumes:
        found = model.first_prompt(index)
        context = found[1].get("context") or [] if found else []
        if any(isinstance(c, str) and f"agentId {w.name}" in c for w in model.kept(index) for c in context):
            return True
    return False


def _stop_after_continue(model: SpecModel, events: Events) -> bool:
    for index in model.resumes:
        names = {w.name for w in model.kept(index)}
        if any(e["argv"][1:2] in (["close"], ["control"]) and e["argv"][2:3] and e["argv"][2] in names
               for _, e in model.runs if e["t"] >= events[index]["t"]):
            return True
    return False


def _host_restart_with_workers(model: SpecModel, events: Events) -> bool:
    """A session host died with a worker counted, and the next one started with it still counted."""
    for i, died in enumerate(events):
        if died["kind"] != "host.dies":
            continue
        start = next((e for e in events[i + 1:] if e["kind"] == "host.start"), None)
        if start is not None and any(w.surely(died["t"]) and w.surely(start["t"]) for w in model.book.workers):
            return True
    return False


def _host_dies_mid_open(model: SpecModel, events: Events) -> bool:
    """A session host died while lich opened a card, and a later footer counts a worker: the next host
    collected what the open printed."""
    for died in (e for e in events if e["kind"] == "host.dies"):
        opens = [e for e in events if e["kind"] == "run" and e.get("argv", [None, None])[1:2] == ["open"]
                 and e.get("exit") == 0 and e["t"] < died["t"] < e["t"] + (e.get("ms") or 0)]
        if opens and any(e["kind"] == "footer" and e["t"] > died["t"] and str(e.get("line") or "").startswith("lich: ")
                         for e in events):
            return True
    return False


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


STATES: dict[str, TargetState] = {
    "stop-refused-then-finished": TargetState("a TaskStop lich refused, then the worker finished by a read",
                                              _refused_then_finished),
    "note-after-reload": TargetState("a worker's [lich] note after a reload with workers counted", _note_after_reload),
    "note-while-reload-pending": TargetState("a worker's [lich] note due while a reload waits for the turn to end",
                                             _note_while_reload_waits),
    "esc-during-base-read": TargetState("Esc while git branch --show-current runs for an isolated call",
                                        _esc_during_base_read),
    "read-failed-between-good": TargetState("a sessions read that failed between two good ones",
                                            _failed_between_good),
    **{f"after-reload-{arm}": TargetState(f"a taken call answered by the {arm} arm after a reload",
                                          _arm_after_reload(arm))
       for arm in ("pending", "unanswered", "answered", "never", "unknown", "open-failed")},
    "stop-racing-poll": TargetState("a TaskStop's close or control running while a sessions read runs",
                                    _stop_racing_poll),
    "continue-worker-running": TargetState("a continue or resume with a worker lich still lists, counted again",
                                           _continued(running=True)),
    "continue-worker-dropped": TargetState("a continue or resume after lich dropped a worker: its first read ends it",
                                           _continued(running=False)),
    "continue-told-still-running": TargetState("the first prompt after a continue says a kept worker still runs",
                                               _told_still_running),
    "stop-after-continue": TargetState("a TaskStop after a continue runs close or control for a kept worker",
                                       _stop_after_continue),
    "host-restart-with-workers": TargetState("a session host died with a worker counted; the next one counts it",
                                             _host_restart_with_workers),
    "host-dies-mid-open": TargetState("a session host died while lich opened; a later host counts the worker",
                                      _host_dies_mid_open),
}

NOT_YET: dict[str, str] = {}


def reached(model: SpecModel, events: Events) -> set[str]:
    return {name for name, state in STATES.items() if state.seen(model, events)}
