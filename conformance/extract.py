"""What a real run saw, kept as evidence, and the transcript made from it.

A real run (:mod:`.real`) drives Claude Code and gathers what the programs showed into :class:`Evidence`:
the model's requests, the screen's footer and Rewind panel as read, the keys the runner pressed and the
dialogs it answered, the session hosts' start files, the wrappers' records of each run, the bridge's log
and lich's notes. :class:`Extractor` turns evidence into a transcript in the replay's JSON contract. The
run uses it on the evidence it has just gathered, and the conformance self-test on evidence kept from real
runs (``selftest-evidence.jsonl``), so an extraction that goes blind to something is seen to fail.

Where each event comes from:

| kind | source |
|---|---|
| ``session.start`` | the session host's stdin (each host the module starts is handed the events it answered) |
| ``call`` | the scripted model: when it sent the step's calls (a plugin's: when the stand-in plugin was handed it) |
| ``answer`` | the model's next requests: each call's ``tool_result`` (and the text around it, for ``context``); a |
|  | subagent's call: that agent's next request; a plugin's: what its ``$.agent.call`` resolved to |
| ``run`` | wrappers around ``fake-lich`` and ``git`` logging argv, output, exit and times (git: the mod's runs only; |
|  | a read held for an Esc: its ms from the release, the hold as ``held_ms``) |
| ``permission`` | the bridge's log: when the mod's ``tool.call`` hook passed the call on beneath it (the check's |
|  | moment, or for a dialog when the person answered it; not after the step's Esc, when Claude Code |
|  | checks nothing of the call); its outcome and ``via``: the answer pressed at the dialog whose card |
|  | named the call (``dialog``), else the refusal the model got for it (a typed deny rule's: ``rule``; a |
|  | hook's: ``hook``; an ask with nobody to answer: ``dialog``), else allowed by the mode (``mode``) |
| ``spawn`` | the bridge's log: the last step of the mod's ``agent.spawn`` dispatch; ``answer`` is ``native`` when |
|  | Claude Code then ran its own agent, else ``deny`` (the mod took the call) |
| ``toast`` | the bridge's own log (``AGENT_CARDS_BRIDGE_LOG``): the effects handed back with each step |
| ``footer`` | the screen, read every 0.2 s (``SCREEN_READ_MS``) until before the last ``/exit``: the ``lich: …`` |
|  | line as it changes |
| ``native`` | a subagent request whose task is the call's prompt (Claude Code ran its own agent), and its |
|  | input: the call's input as the model sent it |
| ``prompt`` | the model's first request with the person's prompt: the notifications and context read beside it |
| ``note`` | the model's first request after the runner typed a note fake-lich had due (as lich types it): |
|  | the submitted text that holds it, and what came beside it |
| ``rewind`` | the screen, read with the footer: Claude Code's Rewind panel as it opens and closes |
| ``esc``, ``reload``, ``mode`` | the runner, when it presses the key, reloads, or starts a mode switch |
| ``resume``, ``host.dies`` | the runner, when it typed ``/exit`` to start Claude Code again, or killed the host |
| ``host.start`` | a session host the module started by itself (its stdin carries no ``session.start``) |

Hook dispatches carry no call id in the bridge's log: each is given to the calls of the step it falls in,
in the calls' order (the k-th check of a step is the k-th Agent call's; the k-th spawn is the k-th
spawning call's), which keeps each call's check before its spawn whenever the real engine did.

Times are real ms since the scenario's t=0: the moment the first step began (for a call step, when the
model sent its calls).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_cards.record import Record, Value, field
from agent_cards_claude_driver.model_api import text_of
from agent_cards_conformance.compare import PROMPT_CONTEXT_PREFIX
from agent_cards_conformance.model import first_results
from agent_cards_simulator.host import results
from agent_cards_simulator.scenario import steps
from agent_cards_simulator.scenario.model import Scenario

#: How Claude Code's refusal of a tool input its schema rejects begins.
INVALID_INPUT = "<tool_use_error>InputValidationError: "
#: The module's hooks by number, as its ``register`` lists them (the bridge's log names them so).
AGENT_HOOK, SPAWN_HOOK = 1, 3


class Request(Value):
    """A request the model got: when (seconds since the epoch), and the conversation it carried."""

    time: float
    body: dict[str, Any]


class RunRecord(Value):
    """What a wrapper logged of one run: the program (``lich`` or ``git``), when it started (ns), its argv,
    its output, when a held read was released (ns), and its exit code and end (ns) once it exited."""

    program: str
    started_ns: int
    argv: list[str]
    stdout: str = ""
    stderr: str = ""
    released_ns: int | None = None
    exit: tuple[int, int] | None = None


class Evidence(Record):
    """What one real run saw, as the programs showed it. Times are seconds since the epoch; ``t0`` is the
    scenario's t=0. ``paths`` pairs each real path of the run with the scenario's virtual one."""

    t0: float
    paths: list[tuple[str, str]] = field(default_factory=list)
    main: list[Request] = field(default_factory=list)
    subagent: list[Request] = field(default_factory=list)
    served: dict[int, float] = field(default_factory=dict)  # call step: when the model sent its calls
    sent: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # call step: the calls as sent
    footers: list[tuple[float, str | None]] = field(default_factory=list)
    panels: list[tuple[float, bool]] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)  # keys the runner pressed, restarts it made
    dialogs: dict[str, tuple[float, bool]] = field(default_factory=dict)  # call id: when answered, yes
    prompts: list[tuple[str, int]] = field(default_factory=list)  # the person's prompts, main requests before
    plugin_answers: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)
    boots: list[tuple[float, dict[str, Any]]] = field(default_factory=list)  # a session host's start file
    runs: list[RunRecord] = field(default_factory=list)
    bridge: list[dict[str, Any]] = field(default_factory=list)
    notes: list[tuple[str, int]] = field(default_factory=list)  # the notes typed as lich does, main requests before

    def to_json(self) -> dict[str, Any]:
        return {
            "t0": self.t0, "paths": [list(p) for p in self.paths],
            "main": [{"time": r.time, "body": r.body} for r in self.main],
            "subagent": [{"time": r.time, "body": r.body} for r in self.subagent],
            "served": {str(n): t for n, t in self.served.items()},
            "sent": {str(n): calls for n, calls in self.sent.items()},
            "footers": [list(f) for f in self.footers], "panels": [list(p) for p in self.panels],
            "marks": self.marks, "dialogs": {k: list(v) for k, v in self.dialogs.items()},
            "prompts": [list(p) for p in self.prompts],
            "plugin_answers": {k: list(v) for k, v in self.plugin_answers.items()},
            "boots": [list(b) for b in self.boots],
            "runs": [{"program": r.program, "started_ns": r.started_ns, "argv": r.argv, "stdout": r.stdout,
                      "stderr": r.stderr, "released_ns": r.released_ns,
                      "exit": list(r.exit) if r.exit is not None else None} for r in self.runs],
            "bridge": self.bridge, "notes": [list(n) for n in self.notes],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(
            t0=float(data["t0"]), paths=[(str(a), str(b)) for a, b in data.get("paths", [])],
            main=[Request(float(r["time"]), dict(r["body"])) for r in data.get("main", [])],
            subagent=[Request(float(r["time"]), dict(r["body"])) for r in data.get("subagent", [])],
            served={int(n): float(t) for n, t in data.get("served", {}).items()},
            sent={int(n): list(calls) for n, calls in data.get("sent", {}).items()},
            footers=[(float(t), line) for t, line in data.get("footers", [])],
            panels=[(float(t), bool(shown)) for t, shown in data.get("panels", [])],
            marks=list(data.get("marks", [])),
            dialogs={k: (float(t), bool(yes)) for k, (t, yes) in data.get("dialogs", {}).items()},
            prompts=[(str(text), int(asked)) for text, asked in data.get("prompts", [])],
            plugin_answers={k: (float(t), dict(v)) for k, (t, v) in data.get("plugin_answers", {}).items()},
            boots=[(float(t), dict(b)) for t, b in data.get("boots", [])],
            runs=[RunRecord(r["program"], int(r["started_ns"]), list(r["argv"]), r.get("stdout", ""),
                            r.get("stderr", ""), r.get("released_ns"),
                            (int(r["exit"][0]), int(r["exit"][1])) if r.get("exit") is not None else None)
                  for r in data.get("runs", [])],
            bridge=list(data.get("bridge", [])),
            notes=[(str(text), int(asked)) for text, asked in data.get("notes", [])],
        )

    def ms(self, at: float) -> int:
        """Real ms since the scenario's t=0."""
        return max(0, round((at - self.t0) * 1000))

    def results(self) -> dict[str, tuple[float, dict[str, Any], Mapping[str, Any]]]:
        return first_results([*self.main, *self.subagent])


#: A folder of the machine a run was made on (a temporary one, or the run's own once kept as ``<run>``).
MACHINE_PATH = re.compile(r"(?:/tmp/|<run>)[^\s'\"\\]*")


def kept(evidence: Evidence, folder: str) -> dict[str, Any]:
    """Evidence as it is kept apart from its run: the run's folder named ``<run>``, and any other folder of the
    machine (Claude Code's own temporary files) ``<folder>``. Extraction reads the same paths as before, since
    the run's paths are named alike everywhere they stand."""
    text = json.dumps(evidence.to_json(), ensure_ascii=False).replace(folder, "<run>")
    text = re.sub(r"/tmp/[^\s'\"\\]*", "<folder>", text)
    kept_json: dict[str, Any] = json.loads(text)
    return kept_json


class Extractor:
    """The transcript of a scenario's real run, from its evidence (the module's table)."""

    def __init__(self, scenario: Scenario, evidence: Evidence) -> None:
        self.scenario = scenario
        self.evidence = evidence
        self.call_steps = {n: s.calls for n, s in enumerate(
            (s for s in scenario.steps if isinstance(s, steps.CallStep)), start=1)}

    def events(self) -> list[dict[str, Any]]:
        ev = self.evidence
        ms = ev.ms
        events: list[dict[str, Any]] = []
        for at, data in ev.boots:
            given = data.get("events") or []
            if not any(item.get("event") == "session.start" for item in given):  # the module's own restart
                events.append({"t": ms(at), "kind": "host.start"})
            for item in given:
                if item.get("event") == "session.start":
                    e = item.get("e") or {}
                    events.append({"t": ms(at), "kind": "session.start",
                                   "interactive": bool(e.get("isInteractive", True))})
        for n, sent in ev.sent.items():
            for call in sent:
                events.append({"t": ms(ev.served[n]), "kind": "call", **call})
        for call_id, (at, result, body) in ev.results().items():
            events.append({"t": ms(at), "kind": "answer", "call": call_id, **_answer(result, body)})
        for call_id, (at, given) in ev.plugin_answers.items():
            events.append({"t": ms(at), "kind": "answer", "call": call_id, **_spawned(given)})
        events += self.runs()
        for line in ev.bridge:
            for effect in line.get("effects") or []:
                if isinstance(effect, dict) and "toast" in effect:
                    events.append({"t": ms(float(line.get("t") or 0)), "kind": "toast", "text": effect["toast"]})
        events += [{"t": ms(at), "kind": "footer", "line": footer} for at, footer in ev.footers]
        events += [{"t": ms(at), "kind": "rewind", "open": shown} for at, shown in ev.panels]
        native = self._native()
        events += native
        events += self._prompt_events()
        events += self.checks_and_spawns({str(e["call"]) for e in native})
        events += self.notes()
        events += [{"t": ms(mark["at"]), **{k: v for k, v in mark.items() if k != "at"}} for mark in ev.marks]
        events.sort(key=lambda e: e["t"])
        return [self._virtual_paths(e) for e in events]

    def _native(self) -> list[dict[str, Any]]:
        """A subagent request whose task holds a call's prompt: Claude Code ran its own agent for that call."""
        ev = self.evidence
        prompts = {str(c.input.get("prompt")): c.id for calls in self.call_steps.values() for c in calls
                   if c.tool == "Agent"}
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for request in ev.subagent:
            first = next((m for m in request.body.get("messages") or [] if m.get("role") == "user"), None)
            task = text_of(first.get("content")) if first else ""
            matching = sorted((p for p in prompts if p and p in task), key=len)  # the longest: a short prompt
            call_id = prompts[matching[-1]] if matching else ""                # may sit inside a long one
            if call_id and call_id not in seen:
                seen.add(call_id)
                made = next((c for made_calls in ev.sent.values() for c in made_calls if c["call"] == call_id), None)
                out.append({"t": ev.ms(request.time), "kind": "native", "call": call_id, "tool": "Agent",
                            "input": dict(made["input"]) if made else {}, "task": task})
        return out

    def _prompt_events(self) -> list[dict[str, Any]]:
        """Each prompt the person typed, with what the model read beside it: the task notifications and the
        prompt.submit hooks' context lines, each taken out of the <system-reminder> Claude Code wraps it in."""
        ev = self.evidence
        out: list[dict[str, Any]] = []
        for text, asked in ev.prompts:
            request = next((r for r in ev.main[asked:] if text in last_user_text(r.body)), None)
            if request is None:
                continue
            notifications, context = beside_prompt(last_user_text(request.body))
            out.append({"t": ev.ms(request.time), "kind": "prompt", "text": text, "notifications": notifications,
                        "context": context})
        return out

    def checks_and_spawns(self, native: set[str]) -> list[dict[str, Any]]:
        """``permission`` and ``spawn`` from the bridge's log, each given to the calls of its step in order."""
        ev = self.evidence
        passed: dict[str, float] = {}  # tool.call dispatch (Agent): when its hook passed the call on
        spawns: dict[str, float] = {}  # agent.spawn dispatch: when it ended
        began: dict[str, float] = {}  # agent.spawn dispatch: when it began (the step it belongs to)
        hook_of: dict[str, Any] = {}
        latest: dict[str, str] = {}  # the module's dispatch id: the latest dispatch of that id (a reloaded
        for line in ev.bridge:  # module numbers its dispatches from 1 again)
            given = str(line.get("id"))
            if line.get("op") == "event":
                latest[given] = f"{given}#{len(hook_of)}"
                hook_of[latest[given]] = line.get("hook")
            key = latest.get(given, given)
            hook = hook_of.get(key)
            if hook == AGENT_HOOK and line.get("kind") == "next" and key not in passed:
                passed[key] = float(line.get("t") or 0)
            elif hook == SPAWN_HOOK:  # its last step: where it ended (or where the engine gave up on it)
                spawns[key] = float(line.get("t") or 0)
                began.setdefault(key, spawns[key])
        windows = sorted((at, n) for n, at in ev.served.items())
        answered = ev.results()
        invalid = refused_as_invalid(answered)
        refusals = {call_id: refusal_of(result) for call_id, (_, result, _) in answered.items()}
        out: list[dict[str, Any]] = []
        escs = [float(m["at"]) for m in ev.marks if m["kind"] == "esc"]
        by_step: dict[int, list[float]] = {}
        for at in sorted(passed.values()):
            n = step_of(windows, at)
            # A call passed on after the step's Esc is no check: Claude Code ended the call's turn at the Esc
            # and checks nothing of it (the mod's hook only went on with its signal aborted).
            if n is not None and not any(ev.served[n] <= esc <= at for esc in escs):
                by_step.setdefault(n, []).append(at)
        spawning: dict[int, list[str]] = {}
        for n, times in by_step.items():
            agents = [c for c in self.call_steps.get(n, ()) if c.tool == "Agent"]
            said_no = False  # a "no" at a dialog ends the turn: the step's later calls are never asked
            for call, at in zip(agents, times, strict=False):
                if said_no or call.id in invalid:
                    continue
                outcome, via, decided = self.checked(call.id, at, refusals.get(call.id))
                said_no = via == "dialog" and outcome == "deny"
                out.append({"t": ev.ms(decided), "kind": "permission", "call": call.id, "outcome": outcome,
                            "via": via})
                if outcome == "allow":
                    spawning.setdefault(n, []).append(call.id)
        spawn_steps: dict[int, list[float]] = {}
        for key, at in sorted(spawns.items(), key=lambda item: began[item[0]]):
            # The step a spawn began in: one that began earlier and ended late (the engine resuming a native
            # agent to tell it its own agent finished, which no call of the step raised) is not this step's.
            n = step_of(windows, began[key])
            if n is not None:
                spawn_steps.setdefault(n, []).append(at)
        for n, times in spawn_steps.items():
            for call_id, at in zip(spawning.get(n, []), times, strict=False):
                out.append({"t": ev.ms(at), "kind": "spawn", "call": call_id,
                            "answer": "native" if call_id in native else "deny"})
        return out

    def checked(self, call_id: str, passed: float, refusal: str | None) -> tuple[str, str, float]:
        """A call's permission check as observed, never as planned: the answer the person gave at the dialog
        whose card named the call (decided when answered, not when asked), else the refusal the engine sent
        the model for it (a rule's, a hook's, nobody to ask), else allowed by the mode. Outcome, via, when."""
        dialog = self.evidence.dialogs.get(call_id)
        if dialog is not None:
            answered_at, yes = dialog
            return ("allow" if yes else "deny"), "dialog", max(passed, answered_at)
        if refusal is not None:
            return "deny", refusal, passed
        return "allow", "mode", passed

    def notes(self) -> list[dict[str, Any]]:
        """Each note typed at the prompt as lich types it, as the model read it: the text block that holds it in
        the first main request after it was typed, with what came beside it. A note the model never read within
        the run is no event."""
        ev = self.evidence
        out: list[dict[str, Any]] = []
        for text, asked in ev.notes:
            wanted = " ".join(text.split())
            for request in ev.main[asked:]:
                holding = [t for t in submitted_texts(request.body) if wanted and wanted in " ".join(t.split())]
                if holding:
                    notifications, context = beside_prompt(last_user_text(request.body))
                    beside = {k: v for k, v in (("notifications", notifications), ("context", context)) if v}
                    out.append({"t": ev.ms(request.time), "kind": "note", "text": holding[0], **beside})
                    break
        return out

    def runs(self) -> list[dict[str, Any]]:
        out = []
        for record in self.evidence.runs:
            program = (self.scenario.env.get("LICH_BIN") or "lich") if record.program == "lich" else "git"
            started = record.started_ns / 1e9
            run: dict[str, Any] = {"t": self.evidence.ms(started), "kind": "run", "argv": [program, *record.argv]}
            output = {"stdout": record.stdout, "stderr": record.stderr}
            if record.released_ns is not None:  # held until the Esc was taken: the run itself began at the release
                run["held_ms"] = round((record.released_ns / 1e9 - started) * 1000)
            if record.exit is not None:
                code, ended_ns = record.exit
                began = record.released_ns / 1e9 if record.released_ns is not None else started
                run.update(exit=code, **output, error=None, ms=round((ended_ns / 1e9 - began) * 1000))
            else:
                run.update(exit=None, **output, error="cut off before it exited")
            out.append(run)
        return out

    def _virtual_paths(self, event: dict[str, Any]) -> dict[str, Any]:
        """The real run's paths read as the scenario's virtual ones (lich's binary, the project)."""
        pairs = self.evidence.paths
        text = json.dumps(event, ensure_ascii=False)
        for real, virtual in pairs:
            # Found as the event's text spells it (a character beyond ASCII as itself); put in as JSON, which
            # reads an escaped character as the same one.
            text = text.replace(json.dumps(real, ensure_ascii=False)[1:-1], json.dumps(virtual)[1:-1])
        result: dict[str, Any] = json.loads(text)
        if result.get("kind") == "toast":
            cut = cut_path(str(result.get("text")), pairs)
            if cut is not None:
                result.update(text=cut, cut_path=True)
        return result


def _answer(result: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    text = text_of(result.get("content"))
    out: dict[str, Any] = {}
    if result.get("is_error"):
        inner = re.fullmatch(r"(?s)<tool_use_error>(.*)</tool_use_error>", text)
        out["deny" if inner else "error"] = inner.group(1) if inner else text
    else:
        try:
            out["result"] = json.loads(text)
        except ValueError:
            out["result"] = text
    out["read"] = _after_result(body, str(result.get("tool_use_id")))
    return out


def _spawned(given: Mapping[str, Any]) -> dict[str, Any]:
    """What a plugin's Agent call resolved to, as an answer: a deny, an error, or the tool's result (its text,
    as the model would read it)."""
    if "error" in given:
        return {"error": str(given["error"])}
    value = given.get("value")
    if isinstance(value, Mapping) and isinstance(value.get("deny"), str):
        return {"deny": value["deny"]}
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return {"result": value["text"]}
    return {"result": value}


def cut_path(toast: str, pairs: Sequence[tuple[str, str]]) -> str | None:
    """A toast the box cut within a real path (``…/lic…``): its text up to the cut, the path read whole as its
    virtual one (normalisation ``paths``); None when no real path was cut."""
    if not toast.endswith("…"):
        return None
    body = toast[:-1]
    for real, virtual in pairs:
        for size in range(len(real) - 1, 0, -1):
            if body.endswith(real[:size]) and real[:size].count("/") > 1:
                return body[:-size] + virtual + "…"
    return None if not any(virtual in body for _, virtual in pairs) else toast


def step_of(windows: Sequence[tuple[float, int]], at: float) -> int | None:
    """The step whose model reply was served last at or before ``at`` (``windows``: when each was served)."""
    found = None
    for served, n in windows:
        if served <= at:
            found = n
    return found


#: The engine's refusals of a call at its permission check, each with what decided it (a ``permission``
#: event's ``via``): a typed deny rule, a PreToolUse hook's deny, an ask with nobody to answer it.
#: Each is matched from the text's start (re.match).
_REFUSALS = (
    (re.compile(r"Agent type '.*' has been denied by permission rule '.*'"), "rule"),
    (re.compile(re.escape(results.hook_error(""))), "hook"),
    (re.compile(re.escape(results.PERMISSION_DENIED_NOBODY)), "dialog"),
)


def refusal_of(result: Mapping[str, Any]) -> str | None:
    """What refused the call at its permission check, read from the tool result the model got (None: no
    refusal of the check)."""
    if not result.get("is_error"):
        return None
    text = text_of(result.get("content"))
    inner = re.fullmatch(r"(?s)<tool_use_error>(.*)</tool_use_error>", text)
    text = inner.group(1) if inner else text
    return next((via for pattern, via in _REFUSALS if pattern.match(text)), None)


def refused_as_invalid(answered: Mapping[str, tuple[float, Mapping[str, Any], Mapping[str, Any]]]) -> set[str]:
    """The calls Claude Code refused as invalid input. It checks the tool's input against its schema beneath
    the hooks and before it asks for the permission: such a call was passed on by the hook, and no permission
    was checked."""
    return {call_id for call_id, (_, result, _) in answered.items()
            if result.get("is_error") and text_of(result.get("content")).startswith(INVALID_INPUT)}


def _after_result(body: Mapping[str, Any], call_id: str) -> str:
    """All text the model read from a call's tool_result on (what a hook's context would be among)."""
    parts: list[str] = []
    found = False
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                found = True
            if found:
                parts.append(text_of([block]))
    return "\n".join(parts)


def beside_prompt(read: str) -> tuple[list[str], list[str]]:
    """What a prompt's message carries beside the prompt (normalisation ``prompt``): the task notifications, and
    the prompt.submit hooks' context lines, each out of the <system-reminder> it came in."""
    notifications = re.findall(r"(?s)<task-notification>.*?</task-notification>", read)
    context = [line[len(PROMPT_CONTEXT_PREFIX):] for line in read.split("\n") if line.startswith(PROMPT_CONTEXT_PREFIX)]
    return notifications, context


def submitted_texts(body: Any) -> list[str]:
    """The texts typed and submitted in a request's last user message: its text blocks, each stripped, without
    the <system-reminder> blocks Claude Code adds beside them (an interrupted turn's marker is a block of its own)."""
    messages = [m for m in (body.get("messages") or []) if isinstance(m, dict)] if isinstance(body, dict) else []
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
    texts = [str(b.get("text", "")).strip() for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return [t for t in texts if t and not t.startswith("<system-reminder>")]


def last_user_text(body: Any) -> str:
    """The text of a request's last user message (what the person's prompt came with)."""
    messages = [m for m in (body.get("messages") or []) if isinstance(m, dict)] if isinstance(body, dict) else []
    users = [m for m in messages if m.get("role") == "user"]
    return text_of(users[-1].get("content")) if users else ""


__all__ = ["AGENT_HOOK", "MACHINE_PATH", "SPAWN_HOOK", "Evidence", "Extractor", "Request", "RunRecord",
           "beside_prompt", "cut_path", "kept", "last_user_text", "refusal_of", "step_of", "submitted_texts"]
