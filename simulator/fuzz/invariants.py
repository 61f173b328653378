"""What must hold on every transcript, whatever the host, lich and git did.

Each check gives a :class:`Violation`: its kind (what a shrink keeps), one line saying what went wrong,
and where the format can say it, the expectation a written scenario carries so that its replay fails for
the same reason (a report naming the mod and a stall fail a replay by themselves: a replay is strict).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from agent_cards.record import Value
from agent_cards_simulator.fuzz import oracle
from agent_cards_simulator.host.results import USER_REJECTED
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.replay import Replay

_FOOTER = re.compile(r"lich: (\d+) worker")
#: Step problems the generator makes (an ``at:`` already past, a TaskStop of a call that opened no worker):
#: they stop the steps, they are not the mod's.
_STEP_PROBLEM = re.compile(r"(?:^|:\d+: )steps\[\d+\]: (at: .* already past|taskstop: the call)")
LAUNCHED = ("pending", "unanswered")


class Violation(Value):
    kind: str
    message: str
    expect: tuple[dict[str, Any], ...] = ()


def check(scenario: Scenario, result: Replay) -> Violation | None:
    """The first invariant the replay broke, or None."""
    return examine(scenario, result)[0]


def examine(scenario: Scenario, result: Replay) -> tuple[Violation | None, oracle.SpecModel | None]:
    """The first invariant the replay broke (or None), and the spec's model of the replay (None when a
    step or the replay itself failed before the transcript could be read)."""
    for failure in result.failures:
        if _STEP_PROBLEM.search(failure):
            continue
        if "the engine reported the mod" in failure:
            return Violation("mod-report", failure), None
        if "nothing can happen any more" in failure:
            return Violation("stall", failure), None
        return Violation("replay-failed", failure), None
    return on_events(scenario, result.events)


def on_events(scenario: Scenario, events: Sequence[dict[str, Any]]) -> tuple[Violation | None,
                                                                            oracle.SpecModel]:
    """The invariants on a transcript (or the part of one up to a step): the robustness checks, then the
    spec's own model (:mod:`.oracle`), safety and liveness."""
    model = oracle.SpecModel(scenario, events)
    found = next(robustness(scenario, events), None)
    for disagreement in model.disagreements():  # run whole: the model's book is complete after it
        if found is None:
            expect = oracle.expectation(disagreement, events)
            found = Violation(disagreement.kind, disagreement.message, (expect,) if expect else ())
    return found, model


def robustness(scenario: Scenario, events: Sequence[dict[str, Any]]) -> Iterator[Violation]:
    """The robustness checks that a transcript breaks, in order: one answer per call, never native once
    lich has the task, the count, the argv, the delivery's arm."""
    for found in (_answers(events), _native_after_lich(events), _count(events), _argv(scenario, events),
                  _delivery(scenario, events)):
        if found is not None:
            yield found


def _answers(events: Sequence[dict[str, Any]]) -> Violation | None:
    """Exactly one answer per call."""
    for call in (e for e in events if e["kind"] == "call"):
        answers = [e for e in events if e["kind"] == "answer" and e["call"] == call["call"]]
        if len(answers) != 1:
            return Violation("answers", f"the call {call['call']} got {len(answers)} answers, not one",
                             ({"count": 1, "answer": {"call": call["call"]}},))
    return None


def _native_after_lich(events: Sequence[dict[str, Any]]) -> Violation | None:
    """Never native once lich has the task: a spawn the mod denied is never also run by Claude Code, and a
    call whose open printed a session with a delivery (lich has the task, whatever the exit) never runs
    natively (FALL-BEFORE-ONLY)."""
    denied = {e["call"] for e in events if e["kind"] == "spawn" and "deny" in (e.get("answer") or {})}
    taken = _taken_by_lich(events)
    for e in events:
        if e["kind"] == "native" and e.get("tool") == "Agent" and (e["call"] in denied or e["call"] in taken):
            why = "the mod gave it to lich" if e["call"] in denied else "its open printed a delivery"
            return Violation("native-after-lich", f"the call {e['call']} ran natively after {why}",
                             ({"no native": {"call": e["call"], "tool": "Agent"}},))
    return None


def _taken_by_lich(events: Sequence[dict[str, Any]]) -> set[str]:
    """The Agent calls (each the only one with its prompt) whose open printed a JSON object with a delivery."""
    by_prompt: dict[str, list[str]] = {}
    for e in events:
        prompt = e["input"].get("prompt") if e["kind"] == "call" and e.get("tool") == "Agent" else None
        if isinstance(prompt, str):
            by_prompt.setdefault(prompt, []).append(e["call"])
    taken: set[str] = set()
    for e in events:
        argv = e.get("argv") if e["kind"] == "run" else None
        if not isinstance(argv, list) or argv[1:2] != ["open"] or "--prompt" not in argv[:-1]:
            continue
        calls = by_prompt.get(argv[argv.index("--prompt") + 1], [])
        stdout = e.get("stdout")
        if len(calls) != 1 or not isinstance(stdout, str) or not stdout.lstrip().startswith("{"):
            continue
        try:
            printed = json.loads(stdout)
        except (ValueError, RecursionError):
            continue
        if isinstance(printed, dict) and printed.get("delivery") is not None:
            taken.add(calls[0])
    return taken


def _count(events: Sequence[dict[str, Any]]) -> Violation | None:
    """The footer's count is never above the opens lich launched so far (nor negative)."""
    launched: set[str] = set()
    native = set()
    for e in events:
        if e["kind"] == "native":
            native.add(e["call"])
        elif e["kind"] == "answer" and (
            (isinstance(e.get("result"), dict) and e["result"].get("status") == "async_launched"
             and e["call"] not in native)
            or e.get("error") == USER_REJECTED  # Esc: the open goes on, and may still count a worker
            or oracle.host_lost(e)  # the host was lost mid-open: the open went on, and the next host counts its worker
        ):
            launched.add(e["call"])
        elif e["kind"] == "footer" and isinstance(e.get("line"), str):
            found = _FOOTER.search(e["line"])
            if found and not 0 <= int(found.group(1)) <= len(launched):
                return Violation("count", f"the footer counts {found.group(1)} at t={e['t']} after {len(launched)} "
                                 "launched opens", ({"no footer": {"line": e["line"]}},))
    return None


def _argv(scenario: Scenario, events: Sequence[dict[str, Any]]) -> Violation | None:
    """Every run is an argv list starting with ``$LICH_BIN`` or ``git``."""
    allowed = {scenario.env.get("LICH_BIN"), "git"}
    for e in events:
        argv = e.get("argv") if e["kind"] == "run" else None
        if e["kind"] == "run" and (not isinstance(argv, list) or not argv or argv[0] not in allowed
                                   or not all(isinstance(a, str) for a in argv)):
            return Violation("argv", f"a run at t={e['t']} is {argv!r}", ({"no run": {"argv": argv}},))
    return None


def _delivery(scenario: Scenario, events: Sequence[dict[str, Any]]) -> Violation | None:
    """An open that printed a delivery is answered as the delivery table says (when nothing interrupted it)."""
    if any(e["kind"] in ("esc", "reload") for e in events):
        return None
    calls = {e["call"]: e for e in events if e["kind"] == "call" and e.get("tool") == "Agent"}
    for call_id, call in calls.items():
        prompt = call["input"].get("prompt")
        script = scenario.lich.by_prompt.get(prompt) if isinstance(prompt, str) else None
        if script is None or script.stdout is not None or script.exit is not None or script.fail or script.hang \
                or script.handoff_error is not None or script.delivery is None:
            continue
        opened = [e for e in events if e["kind"] == "run" and "open" in e["argv"][1:2] and prompt in e["argv"]]
        answer = next((e for e in events if e["kind"] == "answer" and e["call"] == call_id), None)
        if len(opened) != 1 or opened[0].get("exit") != 0 or answer is None or oracle.host_lost(answer):
            continue  # (unsure: its host was lost while lich opened, so the delivery never reached the mod)
        status = (answer.get("result") or {}).get("status") if isinstance(answer.get("result"), dict) else None
        want = ("async_launched" if script.delivery in LAUNCHED
                else "completed" if script.delivery == "answered" else None)
        if status != want:
            wanted: dict[str, Any] = ({"call": call_id, "result": {"status": want}} if want
                                      else {"call": call_id, "deny": {"absent": False}})
            return Violation("delivery", f"the call {call_id} with delivery {script.delivery!r} was answered "
                             f"{status or 'without a result'}, not {want or 'with a deny'}", ({"answer": wanted},))
    return None
