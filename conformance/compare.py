"""The fake host's transcript and the real engine's, side by side: every lane, the order of cause and effect,
and the time of each event after the one that caused it.

Each transcript becomes lanes, and each lane is compared on its own:

| lane | what is compared |
|---|---|
| ``session.start`` | how many times it was raised, in order, and ``interactive`` |
| ``call`` | the calls in order: id, tool and input |
| ``permission`` | per call: the outcome and how it was decided (``via``) |
| ``spawn`` | per call: whether ``agent.spawn`` came, and its arm (the mod took the call, or Claude Code's own) |
| ``answer`` | per call id: the arm (a result, a wrapped error, a plain error) and the exact text the model |
|  | read, through :data:`NORMALISATIONS` only; its context lines both ways |
| ``run`` | the mod's runs matched by argv (lich's 5 s ``sessions`` polls aside): exit, stdout, stderr, |
|  | whether it failed, ``timeout_ms`` (when both sides know it), and its ms (:data:`TOLERANCES`) |
| ``polls`` | for each turn of the footer a poll drew (in the fake host): how many polls ran since the turn |
|  | before (within :data:`POLL_SLACK`; not across a restart of the poll), and how many after the one whose |
|  | output changed (exactly: none) |
| ``toast`` | the texts in order, exactly (as a set of texts for calls raised side by side), and how many |
|  | answers the model read before each (not for calls raised side by side) |
| ``footer`` | the lich line's turning points in order (:func:`turning_points`), the last one included; a |
|  | state the fake host drew for less than the real screen's read period may be missing from the real |
| ``native`` | which calls Claude Code ran itself, with which input (and the task its agent read) |
| ``note`` | the notes lich typed, in order, exactly |
| ``prompt`` | per prompt the person typed, in order: its text, the notifications and the hooks' context lines the |
|  | model read with it, exactly (through :data:`NORMALISATIONS`) |
| ``report`` | what the engine reported about a hook (the real run shows none the harness can read) |
| ``keys`` | Esc, reload and the person's mode switches (with the mode) in order |
| ``rewind`` | Claude Code's Rewind panel opening and closing, in order |
| ``lifecycle`` | the session's own turns in order: a new process (``resume``, and how), a session host that died |
|  | (``host.dies``), one the module started again by itself (``host.start``) |
| ``order`` | per call: its permission before its spawn and its answer, its spawn before a launch's answer |
| ``time`` | each event's ms after its cause (below), the same cause on both sides, within :data:`TOLERANCES` |

The cause of an event, in the fake host's transcript: for a call's permission, spawn, native agent and answer,
the latest event of that call before it (the call, its check, its spawn; a native agent counts from its spawn,
and the spawn neither from the agent nor from an answer: a spawn comes before its launch's answer, and a
rejection before it, an Esc's mid-open, is no step towards it); for a run or a toast, the latest event
of any call before it; for a note, the latest call before it (a report's delay counts from the call); for a
turn of the footer, the latest answer, poll, Esc, reload or new process (``resume``) before it (what redrew it: a
new process draws its own screen, whose time, Claude Code's start-up, is not compared). The real event's time
is counted from the same cause (its kind and call), where the real transcript has one before it: each side's
own latest cause can be another event, and the two delays would then measure different things. An answer to a call the
person interrupted (Esc, a "no") is read by the model only with the next prompt, so its time is not compared.
Each lane's checks are named in :data:`CHECKS`, and each difference names the one that found it.
Not compared: ``check`` (the fake host's memory), and ``timeout_ms`` when the real run cannot see it (the
session host passes it to its own runs, beyond the wrappers).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from agent_cards.record import Record, Value, field


class Tolerance(Value):
    """How far a real time may be from the fake host's: ``ms``, plus ``share`` of the fake's own delay."""

    ms: int
    share: float
    why: str


#: Every time the comparison allows, with its reason, in one table: how far a real time may be from the fake
#: host's. Measured over every scenario of the tier at a load average of about 5 (two real runs at once): a
#: real run took 0-250 ms longer than the fake's, a footer came up to 1.2 s later after its cause, every
#: other event up to 0.8 s later; the engine's reaction to a reply up to seconds.
TOLERANCES: dict[str, Tolerance] = {
    "run": Tolerance(750, 0.0, "a run's ms: the wrapper's and fake-lich's start-up, whatever the run's length (a "
                     "run a fixed amount slower than the engine's is seen however long it runs)"),
    "footer": Tolerance(2000, 0.0, "a footer's ms after its cause (a poll, an answer, a key): the screen is read "
                        "every 200 ms and redrawn after the engine's next render"),
    "event": Tolerance(3000, 0.05, "any other event's ms after its cause: the engine's turn under load"),
    "note": Tolerance(2000, 0.0, "a note's ms after its open (lich's own clock, which fake-lich keeps in real "
                      "time), or after the turn or the panel that held it: the runner types it and the engine "
                      "submits it"),
    "reaction": Tolerance(6000, 0.05, "the engine's reaction to the model's reply or a changed module, its own "
                          "agent's spawn and first request: it reads a reply, reaches its hooks and sets up its "
                          "agent in up to seconds, more under load"),
}
#: A poll-drawn footer's window: the real count of polls within this share of the fake's (rounded down).
POLL_SLACK = 0.1
TOLERANCE_TEXT = (f"a run's ms within ±{TOLERANCES['run'].ms} ms; a footer's ms after its cause within "
                  f"±{TOLERANCES['footer'].ms} ms; a note's within ±{TOLERANCES['note'].ms} ms; each other "
                  "event's ms after its cause within "
                  f"±({TOLERANCES['event'].ms} ms + {TOLERANCES['event'].share:.0%}), "
                  f"±({TOLERANCES['reaction'].ms} ms + {TOLERANCES['reaction'].share:.0%}) for the engine's "
                  "reaction to a call, a reload or a spawn (its own agent's, and that agent's first request); polls "
                  f"before a footer the polls drew within {POLL_SLACK:.0%}, none late")


def allowed(row: str, fake_ms: int) -> float:
    """How far a real ms may be from the fake's ``fake_ms``, by the row of :data:`TOLERANCES`."""
    tolerance = TOLERANCES[row]
    return tolerance.ms + tolerance.share * abs(fake_ms)


LAUNCHED = "Async agent launched successfully"
#: The line of a launch's text that names its agent's output file (``outputFile``).
OUTPUT_FILE = "\noutput_file: "
#: 2.1.332 frames a completed agent's report: this line, then the report with every line indented by two
#: spaces (so that a frame-like line inside it cannot pass for the engine's own).
HANDBACK = "[Subagent hand-back]"
HANDBACK_INDENT = "  "
#: 'agentId: ID (…' in the launch and completion texts; an empty ID leaves two spaces before the bracket.
AGENT_ID = re.compile(r"(?:^|\s)agentId: (\S*)(?= \(|$)", re.MULTILINE)
CONTEXT_PREFIX = "tool.call hook additional context: "
PROMPT_CONTEXT_PREFIX = "prompt.submit hook additional context: "
#: How the engine shows the model what the fake host's answer says, each the one way a text may differ.
NORMALISATIONS: dict[str, str] = {
    "tool_use_error": "a deny (a tool.call hook's, or the engine's own error written so) reaches the model as "
                      "<tool_use_error>TEXT</tool_use_error>: the same TEXT, wrapped",
    "launch": "an async_launched result reaches the model as Claude Code's launch text: it starts "
              f"{LAUNCHED!r} and names 'agentId: ID' (a native agent's ID is the engine's own)",
    "completed": "a completed result reaches the model as its report: each line of it, a whole line of the text "
                 f"(under 2.1.332's {HANDBACK!r} frame, a whole line once its two-space indent is taken off)",
    "json": "any other mapping result reaches the model as JSON: the fake host's keys, equal",
    "context": f"each context line reaches the model after the call's result as the whole line "
               f"{CONTEXT_PREFIX!r} + LINE",
    "task": "a native agent reads the call's prompt after Claude Code's own <system-reminder> blocks, which "
            "are left aside",
    "by order": "with calls raised side by side, what fake-lich numbers by the order its opens arrive (ids, "
                "tickets, labels) is compared as placeholders",
    "prompt": "beside a prompt the model reads each task notification inside Claude Code's own <system-reminder> "
              f"(after its preamble), and each context line as {PROMPT_CONTEXT_PREFIX!r} + LINE in one: the same "
              "notification, the same LINE",
    "paths": "the real run's paths (lich's binary, the project) are read as the scenario's virtual ones; a toast "
             "the box cut (with '…') within or after such a path is compared up to the real one's cut, its cut "
             "path read whole: the box cuts by length, and the real path's length is the harness's",
    "unstarted": "a run whose argv holds a NUL never starts (no argument can carry one), so no wrapper sees it: "
                 "the fake host's is left out of the run lane",
    "native id": "a native agent's ID is the engine's own: where the real run names it again (a TaskStop's "
                 "task_id), it is read as the fake host's ID of the same call's agent",
}
NOT_COMPARED = ("check",)
#: What fake-lich hands out by the order opens reach it (ids, tickets, labels): calls raised side by side
#: reach it in another order in the real engine, so a scenario with parallel calls compares them as one.
_BY_ORDER = [
    (re.compile(r"\b9f[0-9a-f]{2}\b"), "<id>"),
    (re.compile(r"\ba1b2c3[0-9a-f]{2}\b"), "<ticket>"),
    (re.compile(r"\b7c[0-9a-f]{2}\b"), "<command>"),
    (re.compile(r"Session \d+"), "Session <n>"),
    (re.compile(r"session-\d+-"), "session-<n>-"),
    (re.compile(r'"nextSeq":\d+'), '"nextSeq":<n>'),
]
#: A lane with fewer states than the other: this, never a state (a footer that never clears is not one
#: that clears).
ABSENT = "(no such state)"


def by_order(value: Any) -> Any:
    """``value`` with what fake-lich numbers by order replaced by placeholders (normalisation ``by order``)."""
    if isinstance(value, str):
        for pattern, placeholder in _BY_ORDER:
            value = pattern.sub(placeholder, value)
        return value
    if isinstance(value, Mapping):
        return {k: by_order(v) for k, v in value.items()}
    if isinstance(value, list):
        return [by_order(v) for v in value]
    return value


#: Every check the comparison makes, by name: its lane, and what it holds the two sides to. Each
#: :class:`Difference` names the check that found it, so that the self-test can ask that this very check,
#: and no other, sees a fault planted for it (``agent-cards conform --self-test``).
CHECKS: dict[str, tuple[str, str]] = {
    "session.start": ("session.start", "how many times it was raised, in order, and interactive"),
    "call": ("call", "the calls in order: id, tool and input"),
    "permission": ("permission", "per call: the outcome and how it was decided (via)"),
    "spawn": ("spawn", "per call: whether agent.spawn came, and its arm"),
    "answer.presence": ("answer", "an answer on one side only"),
    "answer.arm": ("answer", "a result, a wrapped error or a plain error"),
    "answer.text": ("answer", "the text of an error, wrapped or plain"),
    "answer.launch": ("answer", "a launch reads as Claude Code's launch text"),
    "answer.agentId": ("answer", "a launch or a completed report names the mod's agentId"),
    "answer.launch.fields": ("answer", "a launch's text shows the fields the fake host gives: agentId, outputFile"),
    "answer.report": ("answer", "each line of a completed report, read whole"),
    "answer.fields": ("answer", "a mapping result: the same keys, each equal"),
    "answer.shape": ("answer", "fields on one side, text on the other"),
    "answer.result": ("answer", "a text result, equal"),
    "answer.context": ("answer", "each of the fake host's context lines is one the model read"),
    "answer.context.real": ("answer", "each context line the model read is one of the fake host's"),
    "run": ("run", "the mod's runs by argv: exit, stdout, stderr, failed, timeout_ms; on one side only"),
    "run.ms": ("run", "a run's ms within TOLERANCES['run']"),
    "polls": ("polls", "the polls before a footer a poll drew: within POLL_SLACK, none late"),
    "toast": ("toast", "the texts in order"),
    "toast.order": ("toast", "how many answers the model read before each toast"),
    "note.order": ("note", "how many answers the model read before each note"),
    "footer": ("footer", "the lich line's turning points in order"),
    "native": ("native", "which calls Claude Code ran itself, with which input"),
    "note": ("note", "the notes the model read, in order, with what came beside each"),
    "prompt": ("prompt", "each prompt: its text, notifications and context lines"),
    "report": ("report", "what the engine reported about a hook"),
    "keys": ("keys", "Esc, reload and mode switches in order"),
    "rewind": ("rewind", "the Rewind panel opening and closing, in order"),
    "lifecycle": ("lifecycle", "a new process, a session host that died or started again, in order"),
    "order.permission/spawn": ("order", "a call's permission before its spawn"),
    "order.permission/answer": ("order", "a call's permission before its answer"),
    "order.spawn/answer": ("order", "a launch's spawn before its answer"),
    **{f"time.{kind}": ("time", f"a {kind}'s ms after its cause within TOLERANCES")
       for kind in ("permission", "spawn", "native", "answer", "run", "toast", "note", "footer")},
}


class Difference(Record):
    lane: str
    key: str
    fake: Any
    real: Any
    why: str
    check: str = ""  # the row of CHECKS that found it (empty: not the comparison's, as an invariant's)

    def to_json(self) -> dict[str, Any]:
        return {"lane": self.lane, "key": self.key, "fake": self.fake, "real": self.real, "why": self.why,
                **({"check": self.check} if self.check else {})}


class Comparison(Record):
    differences: list[Difference] = field(default_factory=list)
    unseen: dict[str, int] = field(default_factory=dict)  # kinds of the fake transcript not compared: how many

    @property
    def conforms(self) -> bool:
        return not self.differences


Events = Sequence[Mapping[str, Any]]


#: How often the real run reads the screen for the footer's lich line.
SCREEN_READ_MS = 200
#: What redraws the footer besides a poll: an answer, Esc, a reload, a new process (its own screen).
_REDRAWS = ("answer", "esc", "reload", "resume")


def _is_poll(event: Mapping[str, Any]) -> bool:
    argv = event.get("argv") or []
    return event["kind"] == "run" and len(argv) >= 2 and argv[1] == "sessions"


def _runs(events: Events) -> list[Mapping[str, Any]]:
    return [e for e in events if e["kind"] == "run" and not _is_poll(e)]


def _count(line: str | None) -> int:
    digits = re.search(r"\d+", line or "")
    return int(digits.group()) if digits else 0


def _turns(events: Events) -> list[tuple[int, str | None]]:
    """The footer's turning points with the index of the event that drew each (see :func:`turning_points`)."""
    drawn: list[tuple[int, str | None]] = []
    for i, e in enumerate(events):
        if e["kind"] != "footer":
            continue
        line = e.get("line")
        if (drawn and drawn[-1][1] == line) or (not drawn and line is None):
            continue
        drawn.append((i, line))
    out: list[tuple[int, str | None]] = [(-1, None)]  # before the first draw: no lich line
    for i, line in drawn:
        if len(out) >= 2 and (_count(out[-2][1]) < _count(out[-1][1]) < _count(line)
                              or _count(out[-2][1]) > _count(out[-1][1]) > _count(line)):
            out[-1] = (i, line)
        else:
            out.append((i, line))
    return out[1:]


def _seen_turns(fake: Events, real: Events) -> list[tuple[int, str | None]]:
    """The fake host's turns as the real screen can show them: the real run reads it every
    :data:`SCREEN_READ_MS`, so a lich line the fake host drew for less than that (a fresh session host's kept
    count that its first read of lich drops at once) may never be seen. When the real turns lack every such
    brief state, the fake's are read without them."""
    turns = _turns(fake)
    real_lines = [line for _, line in _turns(real)]
    if [line for _, line in turns] == real_lines:
        return turns
    kept: list[tuple[int, str | None]] = []
    times = [int(fake[index]["t"]) for index, _ in turns]
    for n, (index, line) in enumerate(turns):
        if n + 1 < len(turns) and times[n + 1] - times[n] < SCREEN_READ_MS:
            continue  # gone before the screen was read again
        if (kept and kept[-1][1] == line) or (not kept and line is None):
            continue
        kept.append((index, line))
    return kept if [line for _, line in kept] == real_lines else turns


def turning_points(lines: Sequence[str | None]) -> list[str | None]:
    """The lich line where its count turns: a count that climbs (or falls) step by step, as parallel calls
    land one by one in real time, is kept only where it stops climbing (falling)."""
    return [line for _, line in _turns([{"kind": "footer", "line": line} for line in lines])]


def _of(events: Events, kind: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def _short(value: Any, limit: int = 400) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    return value


def _sequence(lane: str, fake: Sequence[Any], real: Sequence[Any], out: list[Difference],
              label: str = "#", check: str = "") -> None:
    for i in range(max(len(fake), len(real))):
        f = fake[i] if i < len(fake) else ABSENT
        r = real[i] if i < len(real) else ABSENT
        if f != r:
            why = ("only the fake host has it" if i >= len(real) else "only the real engine has it"
                   if i >= len(fake) else "they differ")
            out.append(Difference(lane, f"{label}{i + 1}", _short(f), _short(r), why, check or lane))


# -- answers ------------------------------------------------------------------------------------------


def wrapped(text: str) -> str | None:
    """The TEXT of ``<tool_use_error>TEXT</tool_use_error>`` (normalisation ``tool_use_error``), else None."""
    inner = re.fullmatch(r"(?s)<tool_use_error>(.*)</tool_use_error>", text)
    return inner.group(1) if inner else None


def _arm(answer: Mapping[str, Any]) -> tuple[str, Any]:
    """An answer as the model reads it: ``("wrapped", TEXT)``, ``("error", TEXT)`` or ``("result", value)``.

    The fake host's ``deny`` is a hook's deny, which the engine wraps; the real transcript's ``deny`` is
    already the TEXT inside the wrapper (the harness takes it out)."""
    if "deny" in answer:
        return "wrapped", str(answer["deny"])
    if "error" in answer:
        text = str(answer["error"])
        inner = wrapped(text)
        return ("error", text) if inner is None else ("wrapped", inner)
    return "result", answer.get("result")


def _answer_problem(fake: Mapping[str, Any], real: Mapping[str, Any]) -> tuple[str, str] | None:
    """The check (:data:`CHECKS`) the real tool_result fails against what the fake host's answer says the model
    reads, and why (None: it is what the model read)."""
    (fake_arm, fake_value), (real_arm, real_value) = _arm(fake), _arm(real)
    if fake_arm != real_arm:
        names = {"wrapped": "a <tool_use_error>", "error": "a plain error", "result": "a result"}
        return "answer.arm", f"the fake host gives {names[fake_arm]}; the real engine gave {names[real_arm]}"
    if fake_arm != "result":
        if fake_value != real_value:
            return "answer.text", "the model read another text"
    else:
        problem = _result_problem(fake_value, real_value)
        if problem:
            return problem
    read_lines = _read_lines(real)  # normalisation ``context``
    for line in (CONTEXT_PREFIX + str(line) for line in fake.get("context") or []):
        if line not in read_lines:
            return "answer.context", ("the model never read the context line "
                                       f"{_short(line.removeprefix(CONTEXT_PREFIX), 120)!r}")
    return None


def _read_lines(real: Mapping[str, Any]) -> list[str]:
    """The lines the model read from a call's tool_result on (the rest of its request: the later calls' results
    and their context lines too)."""
    if "read" not in real and "context" in real:  # a source that kept the lines as the hook gave them
        return [CONTEXT_PREFIX + str(line) for line in real.get("context") or []]
    return str(real.get("read", "")).split("\n")


def _context_the_fake_never_gives(fake: Events, real: Events, out: list[Difference]) -> None:
    """Each context line the model read is one the fake host gives some call. Read over the transcript, not per
    call: what the model read after one result runs on through the results and lines of the calls after it."""
    given = {CONTEXT_PREFIX + str(line) for f in _of(fake, "answer") for line in f.get("context") or []}
    read = dict.fromkeys(line for r in _of(real, "answer") for line in _read_lines(r)
                         if line.startswith(CONTEXT_PREFIX))
    for line in read:
        if line not in given:
            text = line.removeprefix(CONTEXT_PREFIX)
            out.append(Difference("answer", "context", None, _short(text, 120),
                                  f"the fake host never gives the context line {_short(text, 120)!r}",
                                  "answer.context.real"))


def _result_problem(fake: Any, real: Any) -> tuple[str, str] | None:
    text = real if isinstance(real, str) else json.dumps(real, ensure_ascii=False)
    if isinstance(fake, Mapping):
        native = "resolvedModel" in fake  # Claude Code's own agent: its agentId is the engine's to choose
        if fake.get("status") == "async_launched":  # normalisation ``launch``
            if not text.startswith(LAUNCHED):
                return "answer.launch", "not a launch"
            named = AGENT_ID.search(text)
            if not native and (named is None or named.group(1) != fake.get("agentId")):
                return "answer.agentId", "another agentId"
            # what of a launch's fields its text shows the model: an agentId line, and an output_file line only
            # for an agent whose output has a file (Claude Code's own; the mod's workers report through lich)
            shown = {"agentId": named is not None, "outputFile": OUTPUT_FILE in text}
            given = {"agentId": "agentId" in fake, "outputFile": bool(fake.get("outputFile"))}  # an empty id is shown
            if shown != given:
                wrong = [f"{k} ({'shown' if shown[k] else 'not shown'})" for k in shown if shown[k] != given[k]]
                return "answer.launch.fields", "the launch's text shows other fields: " + ", ".join(wrong)
            return None
        if fake.get("status") == "completed":  # normalisation ``completed``
            report = "\n".join(str(b.get("text", "")) for b in fake.get("content") or [] if isinstance(b, Mapping))
            lines = set(text.split("\n"))
            if text.startswith(HANDBACK):
                lines |= {line.removeprefix(HANDBACK_INDENT) for line in lines if line.startswith(HANDBACK_INDENT)}
            missing = [line for line in report.splitlines() if line.strip() and line not in lines]
            if missing:
                return "answer.report", f"the model never read the report's line {_short(missing[0], 120)!r}"
            named = AGENT_ID.search(text)
            if not native and (named is None or named.group(1) != fake.get("agentId")):
                return "answer.agentId", "another agentId"
            return None
        if isinstance(real, Mapping):  # normalisation ``json``
            wrong = [k for k in fake if k in real and fake[k] != real[k]]
            missing_keys = [k for k in fake if k not in real]
            more_keys = [k for k in real if k not in fake]  # a field the fake host leaves out is as wrong
            if wrong or missing_keys or more_keys:
                keys = [*wrong, *(f"{k} (missing)" for k in missing_keys),
                        *(f"{k} (only the engine's)" for k in more_keys)]
                return "answer.fields", "other fields: " + ", ".join(keys)
            return None
        return "answer.shape", "the model read text where the fake host gives fields"
    return None if str(fake) == text else ("answer.result", "the model read another result")


def _answers(fake: Events, real: Events, out: list[Difference]) -> None:
    real_by = {e["call"]: e for e in _of(real, "answer")}
    for f in _of(fake, "answer"):
        r = real_by.pop(f["call"], None)
        fake_side = {k: _short(v) for k, v in f.items() if k in ("result", "deny", "error", "context")}
        if r is None:
            out.append(Difference("answer", f["call"], fake_side, None, "the model never read an answer",
                                  "answer.presence"))
            continue
        problem = _answer_problem(f, r)
        if problem:
            real_side = {k: _short(v) for k, v in r.items() if k in ("result", "deny", "error")}
            out.append(Difference("answer", f["call"], fake_side, real_side, problem[1], problem[0]))
    for call, r in real_by.items():
        out.append(Difference("answer", call, None, {k: _short(v) for k, v in r.items() if k != "read"},
                              "only the real engine answered it", "answer.presence"))
    _context_the_fake_never_gives(fake, real, out)


# -- runs and polls -----------------------------------------------------------------------------------


def _run_key(e: Mapping[str, Any]) -> dict[str, Any]:
    return {"argv": list(e.get("argv") or []), "exit": e.get("exit"), "stdout": e.get("stdout"),
            "stderr": e.get("stderr"), "failed": e.get("error") is not None}


def _run_pairs(fake: Events, real: Events) -> tuple[list[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
                                                    list[Mapping[str, Any]]]:
    """Each fake run with the first real one of the same argv not matched yet (calls raised side by side
    start their runs in any order); the real runs left over."""
    left = list(_runs(real))
    pairs: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = []
    for f in _runs(fake):
        r = next((r for r in left if list(r.get("argv") or []) == list(f.get("argv") or [])), None)
        if r is not None:
            left.remove(r)
        pairs.append((f, r))
    return pairs, left


def _run_lane(fake: Events, real: Events, out: list[Difference]) -> None:
    pairs, left = _run_pairs(fake, real)
    for i, (f, r) in enumerate(pairs, start=1):
        fk = _run_key(f)
        label = f"#{i} {' '.join(map(str, fk['argv'][1:3]))}"
        if r is None:
            out.append(Difference("run", label, fk, None, "only the fake host ran it", "run"))
            continue
        rk = _run_key(r)
        if "timeout_ms" in f and "timeout_ms" in r:
            fk["timeout_ms"], rk["timeout_ms"] = f["timeout_ms"], r["timeout_ms"]
        wrong = [k for k in fk if fk[k] != rk.get(k)]
        if wrong:
            out.append(Difference("run", label, {k: _short(fk[k]) for k in ["argv", *wrong]},
                                  {k: _short(rk.get(k)) for k in ["argv", *wrong]}, "differs in " + ", ".join(wrong),
                                  "run"))
            continue
        fm, rm = f.get("ms"), r.get("ms")
        if isinstance(fm, int) and isinstance(rm, int) and abs(rm - fm) > allowed("run", fm):
            out.append(Difference("run", label, {"ms": fm}, {"ms": rm}, "took another time than the tolerance allows",
                                  "run.ms"))
    for r in left:
        out.append(Difference("run", " ".join(map(str, (r.get("argv") or [])[1:3])), None, _run_key(r),
                              "only the real engine ran it", "run"))


#: The session's turns that start its poll afresh: a session host that died and the one started after it, a new
#: process. The real run cannot place them where the fake host does (a real turn ends seconds after the fake's,
#: and a step after it starts that much later), so the polls before lich's change fall on another phase.
_RESTARTS = ("host.dies", "host.start", "resume")


def _poll_windows(events: Events, turns: Sequence[tuple[int, str | None]]) -> list[
        tuple[str | None, int, int | None, bool, bool]]:
    """For each turn of the footer: the line, how many polls ran since the previous turn, how many of them came
    after the first one whose output changed (a footer drawn a poll late has one; None when no poll's output
    changed), whether a poll drew it (a poll is the latest of its causes: answers, polls, Esc, reloads, new
    processes), and whether the poll started afresh since the previous turn (:data:`_RESTARTS`).
    Turns an answer drew depend on the pace of the turns, not on the polls; the window after the last turn
    is left open (the real run goes on after the fake's end)."""
    out: list[tuple[str | None, int, int | None, bool, bool]] = []
    start, previous_output = 0, None
    for index, line in turns:
        window = events[start:index]
        polls = [e for e in window if _is_poll(e)]
        cause = _cause(events, index, lambda c: c["kind"] in _REDRAWS or _is_poll(c))
        changed = _first_change(polls, previous_output)
        # A new process's own first screen ends a window of its own, and the fresh host's first read starts
        # about then: which side of that screen read it falls on is chance, so the turn after is fresh too.
        after_own_screen = bool(out) and out[-1][4] and not out[-1][3]
        out.append((line, len(polls), None if changed is None else len(polls) - 1 - changed,
                    cause is not None and _is_poll(cause),
                    after_own_screen or any(e["kind"] in _RESTARTS for e in window)))
        if polls:
            previous_output = polls[-1]
        start = index
    return out


def _first_change(polls: Sequence[Mapping[str, Any]], before: Mapping[str, Any] | None) -> int | None:
    """The index of the first poll whose output differs from the poll before it, None when none does (or no
    poll ran before the first)."""
    for i, e in enumerate(polls):
        prior = polls[i - 1] if i else before
        if prior is not None and (e.get("stdout"), e.get("exit")) != (prior.get("stdout"), prior.get("exit")):
            return i
    return None


def _polls_lane(fake: Events, real: Events, out: list[Difference], seen: Sequence[tuple[int, str | None]]) -> None:
    """Each poll-drawn turn: the polls of its window within :data:`POLL_SLACK` of the fake's count (real polls
    drift by their own run time), and none late. A window in which the poll started afresh (:data:`_RESTARTS`)
    is held to none late alone: how many polls come before lich's change there depends on where the restart
    fell, which the real run cannot choose (the mod's invariants still hold the real polls to their 5 s)."""
    fake_windows = _poll_windows(fake, seen)
    for n, (f, r) in enumerate(zip(fake_windows, _poll_windows(real, _turns(real)), strict=False), start=1):
        if f[0] != r[0]:
            return  # another footer: the footer lane says so
        if not f[3]:
            continue  # an answer (or a key) drew it
        counted = not (f[4] or r[4]) and abs(f[1] - r[1]) > int(f[1] * POLL_SLACK)
        if counted or (None not in (f[2], r[2]) and f[2] != r[2]):
            out.append(Difference("polls", f"before {f[0] or 'clearing'} (#{n})",
                                  {"polls": f[1], "after the change": f[2]},
                                  {"polls": r[1], "after the change": r[2]}, "the footer turned after other polls",
                                  "polls"))


# -- order and time -----------------------------------------------------------------------------------


def _first(events: Events, kind: str, call: str) -> tuple[int, Mapping[str, Any]] | None:
    return next(((i, e) for i, e in enumerate(events) if e["kind"] == kind and e.get("call") == call), None)


def _order_lane(fake: Events, real: Events, out: list[Difference]) -> None:
    """Per call, cause before effect as the fake host has it: the permission before the spawn and the
    answer, the spawn before the answer of a launch (lich's, or Claude Code's own)."""
    for call in [e["call"] for e in _of(fake, "call")]:
        answer = _first(fake, "answer", call)
        launch = answer is not None and _arm(answer[1])[0] == "result"
        pairs = [("permission", "spawn"), ("permission", "answer")] + ([("spawn", "answer")] if launch else [])
        for before, after in pairs:
            sides = []
            for events in (fake, real):
                a, b = _first(events, before, call), _first(events, after, call)
                sides.append(None if a is None or b is None else a[0] < b[0])
            if None not in sides and sides[0] != sides[1]:
                said = {True: f"{before} before {after}", False: f"{after} before {before}"}
                out.append(Difference("order", f"{call} {before}/{after}", said[bool(sides[0])],
                                      said[bool(sides[1])], "cause and effect in another order",
                                      f"order.{before}/{after}"))


def _order_against_answers(kind: str, fake: Events, real: Events, out: list[Difference]) -> None:
    """Each ``kind`` event (a toast, a note) on the same side of the answers as the fake host has it: how many
    answers the model read before it (an interrupted call's answer aside: the model reads it only with the next
    prompt)."""
    skip = _interrupted(fake) | _interrupted(real)

    def answers_before(events: Events) -> list[int]:
        """Per event: the answers read before it, in the transcript's order (the fake host's own)."""
        counts, read = [], 0
        for e in events:
            if e["kind"] == "answer" and e.get("call") not in skip:
                read += 1
            elif e["kind"] == kind:
                counts.append(read)
        return counts

    def answers_by(events: Events) -> list[tuple[int, int]]:
        """Per event: the answers before its instant and those by then (a log kept to the millisecond may put
        an answer of the same instant on either side of it)."""
        times = [int(e["t"]) for e in events if e["kind"] == "answer" and e.get("call") not in skip]
        return [(sum(t < int(e["t"]) for t in times), sum(t <= int(e["t"]) for t in times))
                for e in events if e["kind"] == kind]

    for n, (f, (least, most)) in enumerate(zip(answers_before(fake), answers_by(real), strict=False), start=1):
        if not least <= f <= most:
            out.append(Difference(kind, f"#{n}", {"answers before it": f}, {"answers before it": least},
                                  f"the {kind} came on another side of an answer", f"{kind}.order"))


def _interrupted(events: Events) -> set[str]:
    """Calls whose answer came with an Esc or a "no" before it: the model reads it only with a next prompt. A
    "no" at any call's dialog ends the turn, so it interrupts every call of the turn still unanswered."""
    out: set[str] = set()
    for call in [e["call"] for e in _of(events, "call")]:
        start, answer = _first(events, "call", call), _first(events, "answer", call)
        if start is None or answer is None:
            continue
        between = events[start[0]:answer[0] + 1]
        if any(e["kind"] == "esc" or (e["kind"] == "permission" and e.get("via") == "dialog"
                                      and e.get("outcome") == "deny")
               for e in between):
            out.add(call)
    return out


def _cause(events: Events, index: int, kinds: Callable[[Mapping[str, Any]], bool]) -> Mapping[str, Any] | None:
    for e in reversed(events[:index]):
        if kinds(e):
            return e
    return None


def _same_cause(candidate: Mapping[str, Any], cause: Mapping[str, Any]) -> bool:
    """The event on the other side that stands for ``cause``: its kind, its call, a run's command, a poll."""
    return (candidate["kind"] == cause["kind"] and candidate.get("call") == cause.get("call")
            and _is_poll(candidate) == _is_poll(cause)
            and (candidate["kind"] != "run" or (candidate.get("argv") or [])[1:2] == (cause.get("argv") or [])[1:2]))


def _delay(events: Events, index: int, like: Mapping[str, Any] | None = None
           ) -> tuple[int, bool, Mapping[str, Any]] | None:
    """Ms from the event at ``index`` back to its cause (module docstring), whether that is the engine's
    reaction to the model's reply, to a changed module or to a spawn (the cause is a call or a reload, or the
    event is its own agent's spawn or first request), and the cause; None: no cause, or a new process's screen
    (its time is Claude Code's start-up, which the fake host does not model). ``like``: the cause found on the
    other side, which this side's time is counted from too when it has it (each side's own latest cause can
    be another event, and the two delays then measure different things)."""
    found = _own_delay(events, index)
    if found is None or like is None or _same_cause(found[2], like):
        return found  # this side's own cause already stands for the other's (a note's own open, by its ticket)
    same = _cause(events, index, lambda c: _same_cause(c, like))
    if same is None or same is found[2]:
        return found
    return int(events[index]["t"]) - int(same["t"]), found[1], same


def _own_delay(events: Events, index: int) -> tuple[int, bool, Mapping[str, Any]] | None:
    e = events[index]
    t = int(e["t"])
    chain = ("call", "permission", "spawn", "native", "answer")
    if e["kind"] == "native":
        # Claude Code's own agent is the spawn passed on beneath: the spawn is its cause, wherever the log has
        # it at that moment (the fake host logs the agent as it starts, before the spawn's dispatch ends; the
        # real run sees it at its first request, after the spawn and often after its launch's answer).
        spawned = [c for c in events if c["kind"] == "spawn" and c.get("call") == e.get("call")
                   and int(c["t"]) <= t]
        cause = spawned[-1] if spawned else _cause(
            events, index, lambda c: c["kind"] in ("call", "permission") and c.get("call") == e.get("call"))
    elif e["kind"] in chain:
        # ...and so the agent is not its spawn's cause either; nor is an answer: a spawn comes before its
        # launch's answer, and an answer before it (the rejection an Esc mid-open gave) is no step towards it.
        cause = _cause(events, index, lambda c: c["kind"] in chain and c["kind"] != "native"
                       and not (e["kind"] == "spawn" and c["kind"] == "answer") and c.get("call") == e.get("call"))
    elif e["kind"] == "footer":
        cause = _cause(events, index, lambda c: c["kind"] in _REDRAWS or _is_poll(c))
        if cause is not None and cause["kind"] == "resume":
            return None
    elif e["kind"] == "note":
        # lich's clock: a report counts from the open that handed its task over (the one whose output holds
        # the note's ticket), else from the last call; a note held for a free prompt (the fake host submits it
        # at the very ms the hold ends), from the turn's end (an answer read then) or the Rewind panel's closing
        ticket = re.search(r"\(ticket ([0-9a-f]+)\)", str(e.get("text") or ""))
        opened = None if ticket is None else _cause(
            events, index, lambda c: c["kind"] == "run" and "open" in (c.get("argv") or [])[1:2]
            and f'"ticket":"{ticket.group(1)}"' in str(c.get("stdout") or ""))
        called = opened or _cause(events, index, lambda c: c["kind"] == "call")
        if called is None:
            return None
        skip = _interrupted(events)
        held = _cause(events, index, lambda c: (c["kind"] == "answer" and c.get("call") not in skip)
                      or (c["kind"] == "rewind" and c.get("open") is False))
        cause = held if held is not None and int(held["t"]) == t > int(called["t"]) else called
        return t - int(cause["t"]), False, cause
    else:
        cause = _cause(events, index, lambda c: c["kind"] in chain)
    if cause is None:
        return None
    # The engine's own set-up of its agent, once the permission let it run, is its reaction too (seconds under
    # load), and so is that agent's first request after its spawn; a spawn the mod takes waits on lich's open
    # instead, whose time the run lane judges.
    own_agent = e["kind"] == "spawn" and cause["kind"] == "permission" and _spawn_arm(e) == "native"
    return (t - int(cause["t"]), cause["kind"] in ("call", "reload") or own_agent or e["kind"] == "native",
            cause)


def _time_lane(fake: Events, real: Events, out: list[Difference], seen: Sequence[tuple[int, str | None]],
               side_by_side: bool) -> None:
    pairs: list[tuple[str, str, int, int]] = []  # (kind, label, fake index, real index)
    index_of = {id(e): i for i, e in enumerate(fake)}
    real_index = {id(e): i for i, e in enumerate(real)}
    skip = _interrupted(fake) | _interrupted(real)
    for kind in ("permission", "spawn", "native", "answer"):
        for f in _of(fake, kind):
            call = str(f.get("call"))
            found = _first(real, kind, call)
            if found is not None and not (kind == "answer" and call in skip):
                pairs.append((kind, f"{kind} {call}", index_of[id(f)], found[0]))
    run_pairs, _ = _run_pairs(fake, real)
    for n, (f, r) in enumerate(run_pairs, start=1):
        if r is not None:
            pairs.append(("run", f"run #{n} {' '.join(map(str, (f.get('argv') or [])[1:3]))}", index_of[id(f)],
                          real_index[id(r)]))
    for kind in ("toast", "note"):
        real_left = list(_of(real, kind))
        for n, fe in enumerate(_of(fake, kind), start=1):
            # side by side, a toast is paired with the real one of its text (they come in any order)
            same = [r for r in real_left if r.get("text") == fe.get("text")] if side_by_side and kind == "toast" \
                else real_left
            if same:
                paired = same[0]
                real_left.remove(paired)
                pairs.append((kind, f"{kind} #{n}", index_of[id(fe)], real_index[id(paired)]))
    for n, ((fi, _), (ri, _)) in enumerate(zip(seen, _turns(real), strict=False), start=1):
        pairs.append(("footer", f"footer #{n}", fi, ri))
    for kind, label, fi, ri in pairs:
        fake_delay = _delay(fake, fi)
        real_delay = None if fake_delay is None else _delay(real, ri, like=fake_delay[2])
        if fake_delay is None or real_delay is None:
            continue
        (fd, reaction, _), (rd, _, _) = fake_delay, real_delay
        row = kind if kind in ("footer", "note") else "reaction" if reaction else "event"
        if abs(rd - fd) > allowed(row, fd):
            out.append(Difference("time", label, {"ms after its cause": fd}, {"ms after its cause": rd},
                                  "came at another time than the tolerance allows", f"time.{kind}"))


# -- the comparison -----------------------------------------------------------------------------------


def _spawn_arm(e: Mapping[str, Any]) -> str:
    answer = e.get("answer")
    if isinstance(answer, str):
        return answer
    return "deny" if isinstance(answer, Mapping) and isinstance(answer.get("deny"), str) else "native"


def compare(fake: Events, real: Events, *, side_by_side: bool = False,
            missing_programs: Collection[str] = (), lanes: Collection[str] | None = None,
            every_render: bool = False) -> Comparison:
    """The differences; ``side_by_side``: the scenario raises calls in parallel, so what fake-lich numbers by
    the order of its opens is compared as placeholders (:func:`by_order`); ``missing_programs``: programs that
    do not exist in the scenario, whose runs (failing to start) no wrapper can see; ``lanes``: only these
    (a source that cannot see the others, as the session host's journal cannot see the engine's dialog);
    ``every_render``: the real side logged every footer drawn (a journal), not a screen read now and then, so
    a lich line the fake drew briefly must be there too."""
    unseen: dict[str, int] = {}
    if missing_programs:
        kept = [e for e in fake if not (e["kind"] == "run" and (e.get("argv") or [None])[0] in missing_programs)]
        if len(kept) != len(fake):
            unseen["run of a missing program"] = len(fake) - len(kept)
        fake = kept
    kept = [e for e in fake if not (e["kind"] == "run" and any("\0" in str(a) for a in e.get("argv") or []))]
    if len(kept) != len(fake):  # normalisation ``unstarted``
        unseen["run with a NUL in its argv"] = len(fake) - len(kept)
        fake = kept
    if side_by_side:
        fake, real = by_order(list(fake)), by_order(list(real))
    real = native_ids(fake, real)
    out: list[Difference] = []
    _sequence("session.start", [e.get("interactive") for e in _of(fake, "session.start")],
              [e.get("interactive") for e in _of(real, "session.start")], out)
    _sequence("call", [(e["call"], e.get("tool"), e.get("input")) for e in _of(fake, "call")],
              [(e["call"], e.get("tool"), e.get("input")) for e in _of(real, "call")], out)
    def checks(events: Events) -> list[tuple[str, Any, Any]]:
        return sorted((str(e.get("call")), e.get("outcome"), e.get("via")) for e in _of(events, "permission"))
    _sequence("permission", checks(fake), checks(real), out)
    _sequence("spawn", sorted((str(e.get("call")), _spawn_arm(e)) for e in _of(fake, "spawn")),
              sorted((str(e.get("call")), _spawn_arm(e)) for e in _of(real, "spawn")), out)
    _answers(fake, real, out)
    _run_lane(fake, real, out)
    seen = _turns(fake) if every_render else _seen_turns(fake, real)
    _polls_lane(fake, real, out, seen)
    toasts = [[str(e.get("text")) for e in _of(events, "toast")] for events in (fake, real)]
    toasts[1] = [_cut_alike(f, r, e) for f, r, e in zip(toasts[0] + [""] * len(toasts[1]), toasts[1],
                                                        _of(real, "toast"), strict=False)]
    if side_by_side:  # calls raised side by side reach their hooks in any order: so do their toasts
        toasts = [sorted(texts) for texts in toasts]
    _sequence("toast", toasts[0], toasts[1], out)
    if not side_by_side:  # calls raised side by side answer and toast in any order between them
        _order_against_answers("toast", fake, real, out)
    _sequence("footer", [line for _, line in seen], [line for _, line in _turns(real)], out)
    _native_lane(fake, real, out)
    def notes(events: Events) -> list[tuple[Any, Any, Any]]:
        return [(e.get("text"), list(e.get("notifications") or []), list(e.get("context") or []))
                for e in _of(events, "note")]
    _sequence("note", notes(fake), notes(real), out)
    _order_against_answers("note", fake, real, out)
    def prompts(events: Events) -> list[tuple[Any, Any, Any]]:
        return [(e.get("text"), list(e.get("notifications") or []), list(e.get("context") or []))
                for e in _of(events, "prompt")]
    _sequence("prompt", prompts(fake), prompts(real), out)
    _sequence("report", [e.get("text") for e in _of(fake, "report")], [e.get("text") for e in _of(real, "report")],
              out)
    def keys(events: Events) -> list[str]:
        return [f"mode {e.get('mode')}" if e["kind"] == "mode" else e["kind"]
                for e in events if e["kind"] in ("esc", "reload", "mode")]
    _sequence("keys", keys(fake), keys(real), out)
    _sequence("rewind", [e.get("open") for e in _of(fake, "rewind")], [e.get("open") for e in _of(real, "rewind")], out)
    def lifecycle(events: Events) -> list[tuple[str, Any]]:
        return [(e["kind"], e.get("how")) for e in events if e["kind"] in ("resume", "host.dies", "host.start")]
    _sequence("lifecycle", lifecycle(fake), lifecycle(real), out)
    _order_lane(fake, real, out)
    _time_lane(fake, real, out, seen, side_by_side)
    if lanes is not None:
        out = [d for d in out if d.lane in lanes]
    for e in fake:
        if e["kind"] in NOT_COMPARED:
            unseen[e["kind"]] = unseen.get(e["kind"], 0) + 1
    return Comparison(out, unseen)


def native_ids(fake: Events, real: Events) -> list[dict[str, Any]]:
    """``real`` with each native agent's ID (the engine's own choice) written as the fake host's ID of the
    same call's agent (normalisation ``native id``)."""
    fake_ids = {e["call"]: e["result"]["agentId"] for e in _of(fake, "answer")
                if isinstance(e.get("result"), Mapping) and "resolvedModel" in e["result"]
                and isinstance(e["result"].get("agentId"), str)}
    pairs = {}
    for e in _of(real, "answer"):
        named = AGENT_ID.search(e["result"]) if isinstance(e.get("result"), str) else None
        if named and named.group(1) and e.get("call") in fake_ids and named.group(1) != fake_ids[e["call"]]:
            pairs[named.group(1)] = fake_ids[e["call"]]
    if not pairs:
        return [dict(e) for e in real]
    pattern = re.compile("|".join(re.escape(real_id) for real_id in pairs))
    return [json.loads(pattern.sub(lambda m: pairs[m.group(0)], json.dumps(e, ensure_ascii=False))) for e in real]


def _cut_alike(fake: str, real: str, event: Mapping[str, Any]) -> str:
    """The real toast as the fake host's when the box cut it within or after a real path (normalisation
    ``paths``): the fake one agrees when it reads the same up to the real one's cut."""
    if not event.get("cut_path") or not real.endswith("…"):
        return real
    return fake if fake.startswith(real[:-1]) else real


def task_of(text: str) -> str:
    """What a native agent was asked, its engine's reminders aside (normalisation ``task``)."""
    return re.sub(r"(?s)^(\s*<system-reminder>.*?</system-reminder>)*\s*", "", text)


def _native_lane(fake: Events, real: Events, out: list[Difference]) -> None:
    """Which Agent calls Claude Code ran itself, and with which input: the real side's input is the call's
    as the model sent it, with ``prompt`` the task its agent read (``task``: only a real run has it)."""
    def inputs(events: Events) -> list[tuple[str, Any]]:
        found = []
        for e in events:
            if e["kind"] != "native" or e.get("tool", "Agent") != "Agent":
                continue
            given = dict(e.get("input") or {})
            if "task" in e:
                given["prompt"] = task_of(str(e["task"]))
            found.append((str(e.get("call")), given))
        return sorted(found, key=lambda pair: pair[0])
    _sequence("native", inputs(fake), inputs(real), out)
