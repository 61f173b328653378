"""The fake host's transcript and the real engine's, side by side.

Real turns take seconds, so events are matched by kind, order and call id, not by time. Each transcript
becomes lanes, and each lane is compared on its own:

| lane | what is compared |
|---|---|
| ``session.start`` | how many times it was raised, in order, and ``interactive`` |
| ``call`` | the calls in order: id and tool |
| ``answer`` | per call id: the arm (a result, a deny or an error) and what the model read (below) |
| ``run`` | the mod's runs matched by argv (lich's 5 s ``sessions`` polls aside): exit, stdout, stderr, |
|  | whether it failed, and its ms within :data:`TOLERANCE` |
| ``toast`` | the texts in order |
| ``footer`` | the lich line's turning points in order (:func:`turning_points`) |
| ``native`` | which Agent calls Claude Code ran itself |
| ``keys`` | Esc and reload in order |

What the model read: a deny's text inside the tool_result (a ``tool.call`` deny reaches it as
``<tool_use_error>…</tool_use_error>``), an error's text, a launch's ``agentId``, a TaskStop's JSON keys,
each ``context`` line somewhere after the call's tool_result. Not compared: ``permission`` and ``spawn``
(no counterpart outside the engine), ``check`` (the fake host's memory), ``note`` and ``report`` (fake-lich
types no note; the engine's reports are screen lines), and when each 5 s poll ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_cards.record import Record, field

#: A run's ms, real against virtual: within this many ms plus this share of the virtual ms.
TOLERANCE = (1500, 0.25)
TOLERANCE_TEXT = (f"a run's ms within ±({TOLERANCE[0]} ms + {TOLERANCE[1]:.0%}); other events matched by kind, "
                  "order and call id, not by time")
LAUNCHED = "Async agent launched successfully"
NOT_COMPARED = ("permission", "spawn", "check", "note", "report")
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


def by_order(value: Any) -> Any:
    """``value`` with what fake-lich numbers by order replaced by placeholders."""
    if isinstance(value, str):
        for pattern, placeholder in _BY_ORDER:
            value = pattern.sub(placeholder, value)
        return value
    if isinstance(value, Mapping):
        return {k: by_order(v) for k, v in value.items()}
    if isinstance(value, list):
        return [by_order(v) for v in value]
    return value


class Difference(Record):
    lane: str
    key: str
    fake: Any
    real: Any
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"lane": self.lane, "key": self.key, "fake": self.fake, "real": self.real, "why": self.why}


class Comparison(Record):
    differences: list[Difference] = field(default_factory=list)
    unseen: dict[str, int] = field(default_factory=dict)  # kinds of the fake transcript not compared: how many

    @property
    def conforms(self) -> bool:
        return not self.differences


def _is_poll(event: Mapping[str, Any]) -> bool:
    argv = event.get("argv") or []
    return len(argv) >= 2 and argv[1] == "sessions"


def _runs(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in events if e["kind"] == "run" and not _is_poll(e)]


def _footers(events: Sequence[Mapping[str, Any]]) -> list[str | None]:
    out: list[str | None] = []
    for e in events:
        if e["kind"] != "footer":
            continue
        line = e.get("line")
        if (out and out[-1] == line) or (not out and line is None):
            continue
        out.append(line)
    return out


def _count(line: str | None) -> int:
    digits = re.search(r"\d+", line or "")
    return int(digits.group()) if digits else 0


def turning_points(lines: Sequence[str | None]) -> list[str | None]:
    """The lich line where its count turns: a count that climbs (or falls) step by step, as parallel calls
    land one by one in real time, is kept only where it stops climbing (falling)."""
    out: list[str | None] = [None]  # before the first draw: no lich line
    for line in lines:
        if len(out) >= 2 and (_count(out[-2]) < _count(out[-1]) < _count(line)
                              or _count(out[-2]) > _count(out[-1]) > _count(line)):
            out[-1] = line
        else:
            out.append(line)
    return out[1:]


def _of(events: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def _short(value: Any, limit: int = 400) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    return value


def _sequence(lane: str, fake: Sequence[Any], real: Sequence[Any], out: list[Difference],
              label: str = "#") -> None:
    for i in range(max(len(fake), len(real))):
        f = fake[i] if i < len(fake) else None
        r = real[i] if i < len(real) else None
        if f != r:
            why = ("only the fake host has it" if i >= len(real) else "only the real engine has it"
                   if i >= len(fake) else "they differ")
            out.append(Difference(lane, f"{label}{i + 1}", _short(f), _short(r), why))


def _answer_problem(fake: Mapping[str, Any], real: Mapping[str, Any]) -> str | None:
    """Why the real tool_result is not what the fake host's answer says the model reads (None: it is)."""
    said = real.get("deny", real.get("error"))
    read = str(real.get("read", ""))
    if "deny" in fake or "error" in fake:
        expected = str(fake.get("deny", fake.get("error")))
        expected = re.sub(r"(?s)^<tool_use_error>(.*)</tool_use_error>$", r"\1", expected)
        if said is None:
            return "the fake host refuses the call; the real engine gave a result"
        if expected not in str(said):
            return "the model read another refusal"
    elif "result" in fake:
        if said is not None:
            return "the fake host gives a result; the real engine refused the call"
        problem = _result_problem(fake["result"], real.get("result"))
        if problem:
            return problem
    for line in fake.get("context") or []:
        if str(line) not in read:
            return f"the model never read the context line {_short(str(line), 120)!r}"
    return None


def _result_problem(fake: Any, real: Any) -> str | None:
    text = real if isinstance(real, str) else json.dumps(real, ensure_ascii=False)
    if isinstance(fake, Mapping):
        native = "resolvedModel" in fake  # Claude Code's own agent: its agentId is the engine's to choose
        if fake.get("status") == "async_launched":
            if LAUNCHED not in text:
                return "not a launch"
            if not native and fake.get("agentId") and f"agentId: {fake['agentId']}" not in text:
                return "another agentId"
            return None
        if fake.get("status") == "completed":
            report = "\n".join(str(b.get("text", "")) for b in fake.get("content") or [] if isinstance(b, Mapping))
            missing = [line for line in report.splitlines() if line.strip() and line.strip() not in text]
            if missing:
                return f"the model never read the report's line {_short(missing[0], 120)!r}"
            if not native and f"agentId: {fake.get('agentId')}" not in text:
                return "another agentId"
            return None
        if isinstance(real, Mapping):
            wrong = [k for k in fake if k in real and fake[k] != real[k]]
            missing_keys = [k for k in fake if k not in real]
            if wrong or missing_keys:
                return "other fields: " + ", ".join([*wrong, *(f"{k} (missing)" for k in missing_keys)])
            return None
        absent = [k for k, v in fake.items() if isinstance(v, str) and v and k != "outputFile" and v not in text]
        return f"the model never read {', '.join(absent)}" if absent else None
    return None if str(fake) in text else "the model read another result"


def _answers(fake: Sequence[Mapping[str, Any]], real: Sequence[Mapping[str, Any]], out: list[Difference]) -> None:
    real_by = {e["call"]: e for e in _of(real, "answer")}
    for f in _of(fake, "answer"):
        r = real_by.pop(f["call"], None)
        fake_side = {k: _short(v) for k, v in f.items() if k in ("result", "deny", "error", "context")}
        if r is None:
            out.append(Difference("answer", f["call"], fake_side, None, "the model never read an answer"))
            continue
        problem = _answer_problem(f, r)
        if problem:
            real_side = {k: _short(v) for k, v in r.items() if k in ("result", "deny", "error")}
            out.append(Difference("answer", f["call"], fake_side, real_side, problem))
    for call, r in real_by.items():
        out.append(Difference("answer", call, None, {k: _short(v) for k, v in r.items() if k != "read"},
                              "only the real engine answered it"))


def _run_key(e: Mapping[str, Any]) -> dict[str, Any]:
    return {"argv": list(e.get("argv") or []), "exit": e.get("exit"), "stdout": e.get("stdout"),
            "stderr": e.get("stderr"), "failed": e.get("error") is not None}


def _run_lane(fake: Sequence[Mapping[str, Any]], real: Sequence[Mapping[str, Any]], out: list[Difference]) -> None:
    """Runs matched by argv, each fake run with the first real one of the same argv not matched yet (calls
    raised side by side start their runs in any order), then compared field by field."""
    left = list(_runs(real))
    for i, f in enumerate(_runs(fake), start=1):
        fk = _run_key(f)
        label = f"#{i} {' '.join(map(str, fk['argv'][1:3]))}"
        r = next((r for r in left if list(r.get("argv") or []) == fk["argv"]), None)
        if r is None:
            out.append(Difference("run", label, fk, None, "only the fake host ran it"))
            continue
        left.remove(r)
        rk = _run_key(r)
        wrong = [k for k in fk if fk[k] != rk[k]]
        if wrong:
            out.append(Difference("run", label, {k: _short(fk[k]) for k in ["argv", *wrong]},
                                  {k: _short(rk[k]) for k in ["argv", *wrong]}, "differs in " + ", ".join(wrong)))
            continue
        fm, rm = f.get("ms"), r.get("ms")
        if isinstance(fm, int) and isinstance(rm, int) and abs(rm - fm) > TOLERANCE[0] + TOLERANCE[1] * fm:
            out.append(Difference("run", label, {"ms": fm}, {"ms": rm}, "took another time than the tolerance allows"))
    for r in left:
        out.append(Difference("run", " ".join(map(str, (r.get("argv") or [])[1:3])), None, _run_key(r),
                              "only the real engine ran it"))


def compare(fake: Sequence[Mapping[str, Any]], real: Sequence[Mapping[str, Any]], *,
            side_by_side: bool = False, missing_program: str | None = None) -> Comparison:
    """The differences; ``side_by_side``: the scenario raises calls in parallel, so what fake-lich numbers by
    the order of its opens is compared as placeholders (:func:`by_order`); ``missing_program``: a program that
    does not exist in the scenario, whose runs (failing to start) no wrapper can see."""
    unseen: dict[str, int] = {}
    if missing_program is not None:
        kept = [e for e in fake if not (e["kind"] == "run" and (e.get("argv") or [None])[0] == missing_program)]
        if len(kept) != len(fake):
            unseen["run of a missing program"] = len(fake) - len(kept)
        fake = kept
    if side_by_side:
        fake, real = by_order(list(fake)), by_order(list(real))
    out: list[Difference] = []
    _sequence("session.start", [e.get("interactive") for e in _of(fake, "session.start")],
              [e.get("interactive") for e in _of(real, "session.start")], out)
    _sequence("call", [(e["call"], e.get("tool")) for e in _of(fake, "call")],
              [(e["call"], e.get("tool")) for e in _of(real, "call")], out)
    _answers(fake, real, out)
    _run_lane(fake, real, out)
    _sequence("toast", [e.get("text") for e in _of(fake, "toast")], [e.get("text") for e in _of(real, "toast")], out)
    _sequence("footer", turning_points(_footers(fake)), turning_points(_footers(real)), out)
    native_fake = sorted(e["call"] for e in _of(fake, "native") if e.get("tool") == "Agent")
    native_real = sorted(e["call"] for e in _of(real, "native"))
    if native_fake != native_real:
        out.append(Difference("native", "Agent", native_fake, native_real, "Claude Code ran its own agent for "
                              "other calls"))
    _sequence("keys", [e["kind"] for e in fake if e["kind"] in ("esc", "reload")],
              [e["kind"] for e in real if e["kind"] in ("esc", "reload")], out)
    for e in fake:
        if e["kind"] in NOT_COMPARED:
            unseen[e["kind"]] = unseen.get(e["kind"], 0) + 1
    return Comparison(out, unseen)
