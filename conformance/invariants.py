"""The mod's invariants on a real transcript: what the fuzzer holds every replay to, held to what the real
Claude Code did.

Conforming to the fake host is not enough: a fake host and a real engine that agree on a broken mod
would both pass it. So every real transcript the tier records is also read by the fuzzer's robustness
checks (one answer per call, never native once lich has the task, the count never above the launched
opens, every run an argv of lich or git, the delivery's arm) and by the spec model's liveness (a sessions
read every 5 s while a worker is surely counted, each call answered within its bound). A violation is a
difference of its own (lane ``invariant``, keyed by the invariant's kind).

The real transcript is read in the fake host's terms first (:func:`in_replay_terms`), each change one the
real engine's or the harness's way of showing the same thing:

- a result the model read as Claude Code's launch text is ``async_launched`` with the agentId it names; any
  other result naming an agentId is ``completed`` (Claude Code writes a completed agent's report so); a launch
  of a call the mod took (and Claude Code did not run itself) is read at its spawn: the mod counts the worker
  there and the footer shows it, while the model reads the launch only with its next request, seconds later
  (with calls raised side by side, the engine shows all their answers together, after the last spawn);
- a spawn the mod took (``deny``) is a deny, as the fake host writes it;
- a ``session.start`` is logged when a session host starts and is handed the events queued for it, which
  comes after the engine raised it: it is read at the start, or at the reload that raised it, and a reload's
  fresh host is read as starting where it was logged (its first poll counts from there, as after a host
  that died: Python's start-up under load is no time the mod could poll in); one a new process raised (after
  a ``resume``) stays at its host's start, which is when the mod's timers run again (seconds after the old
  process left);
- a call the person's Esc rejected (or their "no" at a dialog, which ends the turn as Esc does, the calls
  already allowed with it): the model reads the rejection only with the next prompt, so the real answer
  comes seconds after the key that made it; it is read at that key (the first after the call), as the
  fake host writes it, so that a worker its open still counts is one of the launched opens;
- the wrappers cannot see the timeout the session host gives its runs: an open is read as given the mod's
  two minutes (the fake host's transcript checks the timeout itself), so that the spec model can count its
  worker.

Real time is not exact: a poll may come up to :data:`REAL_POLL_SLACK_MS` late (the session host's timer,
the wrapper's start, two cores under load).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_cards_conformance.compare import AGENT_ID, LAUNCHED, Difference
from agent_cards_simulator.fuzz import invariants, oracle
from agent_cards_simulator.fuzz.invariants import Violation
from agent_cards_simulator.host.results import USER_REJECTED
from agent_cards_simulator.scenario.model import Scenario

#: How late a real poll may come past its 5 s.
REAL_POLL_SLACK_MS = 1000
#: The spec model's disagreements that hold of a real run as of a replay: its liveness.
LIVENESS = ("liveness-poll", "liveness-answer")


def in_replay_terms(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The real transcript as the fake host would write the same events (module docstring)."""
    reloads = sorted(int(e.get("t", 0)) for e in events if e.get("kind") == "reload")
    resumes = sorted(int(e.get("t", 0)) for e in events if e.get("kind") == "resume")
    # What ends a turn with the engine's rejection: an Esc, or the person's "no" at a dialog.
    escs = sorted(int(e.get("t", 0)) for e in events if e.get("kind") == "esc" or (
        e.get("kind") == "permission" and e.get("via") == "dialog" and e.get("outcome") == "deny"))
    called = {e.get("call"): int(e.get("t", 0)) for e in events if e.get("kind") == "call"}
    native = {e.get("call") for e in events if e.get("kind") == "native"}
    taken = {e.get("call"): int(e.get("t", 0)) for e in events
             if e.get("kind") == "spawn" and e.get("answer") == "deny" and e.get("call") not in native}
    out: list[dict[str, Any]] = []
    for given in events:
        e = dict(given)
        kind = e.get("kind")
        if kind == "answer" and isinstance(e.get("result"), str):
            text = e["result"]
            named = AGENT_ID.search(text)
            if text.startswith(LAUNCHED):
                e["result"] = {"status": "async_launched", "agentId": named.group(1) if named else ""}
                e["t"] = min(int(e.get("t", 0)), taken.get(e.get("call"), int(e.get("t", 0))))
            elif named:
                e["result"] = {"status": "completed", "agentId": named.group(1)}
        elif kind == "answer" and e.get("error") == USER_REJECTED:
            since = called.get(e.get("call"), 0)
            e["t"] = min((t for t in escs if since <= t <= int(e.get("t", 0))), default=e.get("t", 0))
        elif kind == "spawn" and e.get("answer") == "deny":
            e["answer"] = {"deny": ""}
        elif kind == "session.start":
            t = int(e.get("t", 0))
            reloaded = max((r for r in reloads if r <= t), default=0)
            if max((r for r in resumes if r <= t), default=-1) < reloaded:  # not a new process's own
                e["t"] = reloaded
                if any(r <= t for r in reloads) and reloaded != t:  # the reload's fresh host, seen starting here
                    out.append({"t": t, "kind": "host.start"})
        elif kind == "run" and (e.get("argv") or [None, None])[1:2] == ["open"]:
            e.setdefault("timeout_ms", oracle.OPEN_MS)
        out.append(e)
    rank = {"reload": 0, "session.start": 1}
    out.sort(key=lambda e: (int(e.get("t", 0)), rank.get(str(e.get("kind")), 2)))
    return out


def real_violations(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> list[Violation]:
    """Every invariant the real transcript breaks: the robustness checks, then the spec model's liveness."""
    seen = in_replay_terms(events)
    found = list(invariants.robustness(scenario, seen))
    model = oracle.SpecModel(scenario, seen, poll_slack_ms=REAL_POLL_SLACK_MS)
    found += [Violation(d.kind, d.message) for d in model.disagreements() if d.kind in LIVENESS]
    return found


def invariant_differences(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> list[Difference]:
    return [Difference("invariant", v.kind, None, v.message, f"the real run breaks the mod's invariant {v.kind}")
            for v in real_violations(scenario, events)]
