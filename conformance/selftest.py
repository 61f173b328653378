"""``agent-cards conform --self-test``: the tier proves it sees what it claims to compare.

A kit of planted fake-host infidelities, each a patch on the fake host made in process and each aimed at one
check of the comparison (:data:`~agent_cards_conformance.compare.CHECKS`), is judged against one saved set of
real transcripts (:data:`FIXTURE`, recorded by ``agent-cards conform --json`` from real runs and trimmed): the
fake host as it is must conform on every scenario of the fixture; each plant runs on every scenario, and
wherever its replay differs from the unplanted one, the check it aims at must differ. A plant that alters no
scenario proves nothing and fails; a check no plant aims at fails unless :data:`UNPROVEN` says why the fixture
cannot show it. No real run is needed: each scenario is replayed (virtual time, in process) and compared again.

The real side proves itself too: the raw evidence of the same real runs (:data:`EVIDENCE`, what each run saw,
as ``agent-cards conform --evidence`` keeps it) is made into transcripts again by the code a real run uses
(:mod:`.extract`), and each must be the saved one: an extraction blind to anything it once read fails here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

from agent_cards.record import Record, Value, field, replace
from agent_cards_conformance.compare import CHECKS, Comparison, compare, task_of
from agent_cards_conformance.extract import MACHINE_PATH, Evidence, Extractor
from agent_cards_conformance.plan import missing_programs
from agent_cards_simulator.host import claude_code, results
from agent_cards_simulator.host.claude_code import FakeClaudeCode
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.scenario import steps
from agent_cards_simulator.scenario.files import load_all
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.replay import replay
from agent_cards_simulator.transcript import Transcript

#: The real transcripts the kit is judged against (one ``conform --json`` line per scenario, trimmed).
FIXTURE = Path(__file__).resolve().parent / "selftest-real.jsonl"
#: What the same real runs saw, kept (``agent-cards conform --evidence``): the fixture is made from it again.
EVIDENCE = Path(__file__).resolve().parent / "selftest-evidence.jsonl"
ROOT = Path(__file__).resolve().parents[1]


class Infidelity(Value):
    """One planted infidelity: what it does to the fake host, and the check of the comparison it aims at
    (a name in :data:`CHECKS`)."""

    name: str
    kind: str  # timing | order | end state | text | lane
    what: str
    aims: str
    patch: Callable[[], contextlib.AbstractContextManager[Any]]


def _record_patched(change: Callable[[Transcript, str, dict[str, Any]], tuple[str, dict[str, Any]] | None]
                    ) -> contextlib.AbstractContextManager[Any]:
    """The fake host records through ``change`` (None: the event is not recorded at all)."""
    original = Transcript.record

    def record(self: Transcript, kind: str, **fields: Any) -> dict[str, Any]:
        changed = change(self, kind, fields)
        if changed is None:
            return {"t": 0, "kind": kind, **fields}
        return original(self, changed[0], **changed[1])

    return mock.patch.object(Transcript, "record", record)


def _count(line: Any) -> int:
    found = re.search(r"\d+", str(line or ""))
    return int(found.group()) if found else 0


@contextlib.contextmanager
def _footer_never_clears() -> Iterator[None]:
    """A footer whose workers are gone keeps the last lich line."""
    last: dict[int, Any] = {}

    def change(transcript: Transcript, kind: str, fields: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if kind == "footer":
            if fields.get("line") is None and last.get(id(transcript)) is not None:
                return kind, {**fields, "line": last[id(transcript)]}
            last[id(transcript)] = fields.get("line")
        return kind, fields

    with _record_patched(change):
        yield


class _SlowerExecutor:
    """The lich side as it is, each run 1.2 s slower."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        result = await self._inner.execute(*args, **kwargs)
        await asyncio.sleep(1.2)
        return result


class _EarlyNotes:
    """The lich side as it is, each note typed 5 s before it is due. (A late one would come past the end of the
    fixture's scenarios, which the note lane, not its time, sees.)"""

    LATE_MS = -5000

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def next_note_at(self) -> int | None:
        due = self._inner.next_note_at()
        return None if due is None else due + self.LATE_MS

    def notes_due(self, until_ms: int) -> Any:
        return self._inner.notes_due(until_ms - self.LATE_MS)


def _executor_wrapped(wrapper: Callable[[Any], Any]) -> contextlib.AbstractContextManager[Any]:
    original = FakeClaudeCode.__init__

    def init(self: FakeClaudeCode, loop: Any, session: Any, executor: Any, *more: Any, **named: Any) -> None:
        original(self, loop, session, wrapper(executor), *more, **named)

    return mock.patch.object(FakeClaudeCode, "__init__", init)


@contextlib.contextmanager
def _permission_after_spawn() -> Iterator[None]:
    """The permission check runs after agent.spawn (lich opens a card before the person says yes)."""
    original_checked, original_spawn = FakeClaudeCode._checked, FakeClaudeCode._spawn

    def checked(self: FakeClaudeCode, call_id: str, verdict: Any, agent_type: str) -> str | None:
        if verdict.decision in ("allow", "ask") and (verdict.decision == "allow" or verdict.answer):
            self.__dict__.setdefault("_planted_checks", {})[call_id] = verdict
            return None
        return original_checked(self, call_id, verdict, agent_type)

    async def spawn(self: FakeClaudeCode, event: Any, call_id: str, turn: Any, tool_input: Any = None) -> Any:
        answer = await original_spawn(self, event, call_id, turn, tool_input)
        verdict = self.__dict__.get("_planted_checks", {}).pop(call_id, None)
        if verdict is not None:
            original_checked(self, call_id, verdict, "general-purpose")
        return answer

    with mock.patch.object(FakeClaudeCode, "_checked", checked), mock.patch.object(FakeClaudeCode, "_spawn", spawn):
        yield


def _answer_error(old: str, new: Callable[[str], dict[str, Any]]) -> contextlib.AbstractContextManager[Any]:
    def change(_: Transcript, kind: str, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if kind == "answer" and fields.get("error") == old:
            rest = {k: v for k, v in fields.items() if k != "error"}
            return kind, {**rest, **new(old)}
        return kind, fields

    return _record_patched(change)


def _texts(name: str, value: Any) -> contextlib.AbstractContextManager[Any]:
    return mock.patch.object(results, name, value)


def _native_input_changed() -> contextlib.AbstractContextManager[Any]:
    """The native agent is handed the call's input without its agent type."""
    original = claude_code._beneath
    return mock.patch.object(claude_code, "_beneath",
                             lambda e: {k: v for k, v in original(e).items() if k != "subagent_type"}
                             | ({"prompt": f"{e.get('prompt')}."} if "subagent_type" not in e else {}))


def _note_dropped() -> contextlib.AbstractContextManager[Any]:
    return _record_patched(lambda _, kind, fields: None if kind == "note" else (kind, fields))


def _toast_changed() -> contextlib.AbstractContextManager[Any]:
    # the toast's last word lost, as a box cut one word early would show it
    return _record_patched(lambda _, kind, fields: (kind, {**fields, "text": str(fields.get("text")).rsplit(" ", 1)[0]})
                           if kind == "toast" else (kind, fields))


def _dialog_as_mode() -> contextlib.AbstractContextManager[Any]:
    return _record_patched(lambda _, kind, fields: (kind, {**fields, "via": "mode"})
                           if kind == "permission" and fields.get("via") == "dialog" else (kind, fields))


def _every_dialog_asked() -> contextlib.AbstractContextManager[Any]:
    """Each call gets a dialog of its own at once, and a "no" leaves the turn going on."""
    async def permission(self: FakeClaudeCode, call_id: str, verdict: Any, turn: Any, agent_type: str) -> str | None:
        return self._checked(call_id, verdict, agent_type)

    return mock.patch.object(FakeClaudeCode, "_permission", permission)


def _plain_rule_reaches_the_hooks() -> contextlib.AbstractContextManager[Any]:
    return mock.patch.object(PermissionVerdict, "removes_tool", property(lambda self: False))


def _no_double_press() -> contextlib.AbstractContextManager[Any]:
    """Every Esc at the idle prompt is a press of its own: the Rewind panel never opens."""
    return mock.patch.object(claude_code, "DOUBLE_PRESS_MS", -1)


class _GitWithoutNewline:
    """The lich side as it is, git's output without its last newline (the mod strips it anyway)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def execute(self, argv: list[str], *args: Any, **kwargs: Any) -> Any:
        result = await self._inner.execute(argv, *args, **kwargs)
        if argv and argv[0] == "git":
            return replace(result, stdout=result.stdout.removesuffix("\n"))
        return result


def _polls_doubled() -> contextlib.AbstractContextManager[Any]:
    """A ``sessions`` poll that reads what the one before it read is run again at once (the mod reads the
    first). Every poll run twice would also alter a window a key drew the footer in, whose polls the
    comparison does not count (the real pace of keys and turns decides them)."""
    original = FakeClaudeCode.run_process
    last: dict[int, str] = {}

    async def run_process(self: FakeClaudeCode, argv: Any, timeout_ms: int, signal: Any) -> Any:
        result = await original(self, argv, timeout_ms, signal)
        if _not_a_poll({"argv": argv}):
            return result
        if last.get(id(self)) == result.stdout:
            await original(self, argv, timeout_ms, signal)
        last[id(self)] = result.stdout
        return result

    return mock.patch.object(FakeClaudeCode, "run_process", run_process)


def _recorded_after(kind: str, after: Callable[[dict[str, Any], dict[str, Any]], bool]
                    ) -> contextlib.AbstractContextManager[Any]:
    """Each ``kind`` event is recorded only once an event ``after`` names for it has been (it keeps its fields,
    which the host may still fill in, and takes that event's time); it moves once."""
    original = Transcript.record
    moved: set[int] = set()

    def record(self: Transcript, what: str, **fields: Any) -> dict[str, Any]:
        event = original(self, what, **fields)
        for held in [e for e in self.events[:-1] if e["kind"] == kind and id(e) not in moved and after(e, event)]:
            moved.add(id(held))
            self.events.remove(held)
            self.events.append(held)
            held["t"] = event["t"]
        return event

    return mock.patch.object(Transcript, "record", record)


def _late(kind: str, which: Callable[[dict[str, Any]], bool] = lambda _: True,
          ms: int = 8000) -> contextlib.AbstractContextManager[Any]:
    """Each ``kind`` event ``which`` picks recorded ``ms`` later than it came (where it came)."""
    original = Transcript.record

    def record(self: Transcript, what: str, **fields: Any) -> dict[str, Any]:
        event = original(self, what, **fields)
        if what == kind and which(event):
            event["t"] += ms
        return event

    return mock.patch.object(Transcript, "record", record)


def _changes_the_line() -> Callable[[dict[str, Any]], bool]:
    """Picks a footer whose lich line differs from the one drawn before it: a redraw of the same line is no
    change a screen can show, so delaying it alters nothing the comparison could see."""
    last: list[Any] = [None]

    def changes(event: dict[str, Any]) -> bool:
        changed = bool(event.get("line") != last[0])
        last[0] = event.get("line")
        return changed

    return changes


def _also(kind: str, extra: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]
          ) -> contextlib.AbstractContextManager[Any]:
    """After each ``kind`` event the fake host records one more, ``extra`` of it."""
    original = Transcript.record

    def record(self: Transcript, what: str, **fields: Any) -> dict[str, Any]:
        event = original(self, what, **fields)
        if what == kind:
            more, more_fields = extra(event)
            original(self, more, **more_fields)
        return event

    return mock.patch.object(Transcript, "record", record)


def _result_changed(change: Callable[[dict[str, Any]], Any]) -> contextlib.AbstractContextManager[Any]:
    """Each launch's result as ``change`` makes it (a copy: the mod's own is left alone)."""
    def patched(_: Transcript, kind: str, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result = fields.get("result")
        if kind == "answer" and isinstance(result, dict) and result.get("status") == "async_launched":
            return kind, {**fields, "result": change(dict(result))}
        return kind, fields

    return _record_patched(patched)


def _fields_changed(kind: str, change: Callable[[dict[str, Any]], dict[str, Any]],
                    which: Callable[[dict[str, Any]], bool] = lambda _: True) -> contextlib.AbstractContextManager[Any]:
    return _record_patched(lambda _, what, fields: (what, change(dict(fields))) if what == kind and which(fields)
                           else (what, fields))


def _taken(result: dict[str, Any]) -> bool:
    """A launch the mod took (a native agent's ID is the engine's, never compared)."""
    return "resolvedModel" not in result


def _is_launch(answer: dict[str, Any]) -> bool:
    result = answer.get("result")
    return isinstance(result, dict) and result.get("status") == "async_launched"


def _not_a_poll(run: dict[str, Any]) -> bool:
    argv = run.get("argv") or []
    return not (len(argv) >= 2 and argv[1] == "sessions")


_REJECTED = results.USER_REJECTED
KIT: tuple[Infidelity, ...] = (
    Infidelity("footer 8 s late", "timing", "each change of the footer's lich line recorded 8 s after it was drawn",
               "time.footer", lambda: _late("footer", _changes_the_line())),
    Infidelity("every run 1.2 s slower", "timing", "each lich and git run takes 1.2 s more", "run.ms",
               lambda: _executor_wrapped(_SlowerExecutor)),
    Infidelity("note 5 s early", "timing", "lich's note of a report typed 5 s before it is due", "time.note",
               lambda: _executor_wrapped(_EarlyNotes)),
    Infidelity("permission after agent.spawn", "order", "the permission check runs after agent.spawn",
               "order.permission/spawn", _permission_after_spawn),
    Infidelity("footer never clears", "end state", "a footer whose workers left keeps its lich line", "footer",
               _footer_never_clears),
    Infidelity("Esc answer shortened", "text", "the engine's rejection after Esc without its last sentence",
               "answer.text", lambda: _answer_error(_REJECTED, lambda text: {"error": text.rsplit(" STOP", 1)[0]})),
    Infidelity("Esc answer rewrapped", "text", "the engine's rejection after Esc broken into lines", "answer.text",
               lambda: _answer_error(_REJECTED, lambda text: {"error": text.replace(". ", ".\n")})),
    Infidelity("Esc answer as a deny", "text", "the engine's rejection after Esc delivered as a hook's deny",
               "answer.arm", lambda: _answer_error(_REJECTED, lambda text: {"deny": text})),
    Infidelity("deny without the engine's prefix", "text", "a hook's deny without 'PreToolUse:Agent hook error: '",
               "answer.text", lambda: _texts("hook_error", lambda reason: reason)),
    Infidelity("unknown type without its list", "text", "the unknown-type error without the list of types",
               "answer.text",
               lambda: _texts("unknown_agent_type", lambda name, available: f"Agent type '{name}' not found.")),
    Infidelity("unknown type's list rewrapped", "text", "the list of types one to a line", "answer.text",
               lambda: _texts("unknown_agent_type", lambda name, available: f"Agent type '{name}' not found. Available "
                              "agents:\n" + "\n".join(sorted(available, key=str.lower)))),
    Infidelity("native agent input changed", "lane", "the native agent gets the call's input without its type, "
               "or its prompt with a full stop", "native", _native_input_changed),
    Infidelity("note dropped", "lane", "lich's note of a worker's report never reaches the session", "note",
               _note_dropped),
    Infidelity("note read alone", "lane", "lich's note reaches the model without what waited for a prompt beside it "
               "(Claude Code's notifications, the prompt.submit hooks' context)", "note",
               lambda: _record_patched(lambda _, kind, fields: (kind, {k: v for k, v in fields.items() if kind != "note"
                                                                       or k not in ("notifications", "context")}))),
    Infidelity("note typed over a turn", "order", "lich's note submitted as it falls due, in the middle of a turn "
               "(Claude Code holds what was typed until the turn is over)", "note.order",
               lambda: mock.patch.object(FakeClaudeCode, "_prompt_taken", lambda self: self._composer.rewind)),
    Infidelity("toast changed", "lane", "a toast without its last full stop", "toast", _toast_changed),
    Infidelity("dialog counted as the mode", "lane", "a yes at the dialog recorded as the mode's allow", "permission",
               _dialog_as_mode),
    Infidelity("every dialog asked", "lane", "two Agent calls of one reply each get a dialog, and a 'no' at the first "
               "leaves the second to be asked, allowed and opened", "spawn", _every_dialog_asked),
    Infidelity("deny rule in words of its own", "text", "a typed deny rule answered 'Permission to use Agent has been "
               "denied by a permission rule.'", "answer.text",
               lambda: _texts("rule_denied", lambda agent_type, rule: "Permission to use Agent has been denied by a "
                              "permission rule.")),
    Infidelity("plain deny rule reaches the hooks", "lane", "permissions.deny: [Agent] leaves the tool in the session, "
               "so the mod takes the call", "permission", _plain_rule_reaches_the_hooks),
    Infidelity("no Rewind panel", "lane", "Esc twice at the idle prompt opens nothing, so the footer is drawn on",
               "rewind", _no_double_press),
    Infidelity("session.start twice", "lane", "session.start raised a second time at once", "session.start",
               lambda: _also("session.start", lambda e: ("session.start", {"interactive": e.get("interactive")}))),
    Infidelity("call without its description", "lane", "each call's input recorded without its description", "call",
               lambda: _fields_changed("call", lambda f: {**f, "input": {k: v for k, v in (f.get("input") or {}).items()
                                                                          if k != "description"}})),
    Infidelity("a taken spawn as Claude Code's own", "lane", "agent.spawn's deny (the mod took the call) recorded as "
               "passed on", "spawn", lambda: _fields_changed("spawn", lambda f: {**f, "answer": None},
                                                             lambda f: isinstance((f.get("answer") or {}).get("deny"),
                                                                                  str))),
    Infidelity("answer lost", "lane", "no answer reaches the model", "answer.presence",
               lambda: _record_patched(lambda _, kind, fields: None if kind == "answer" else (kind, fields))),
    Infidelity("launch names another agent", "text", "a taken launch's agentId with a letter more", "answer.agentId",
               lambda: _result_changed(lambda r: {**r, "agentId": f"{r.get('agentId')}x"} if _taken(r) else r)),
    Infidelity("own agent without its output file", "text", "Claude Code's own agent launched with no outputFile",
               "answer.launch.fields", lambda: _result_changed(
                   lambda r: {k: v for k, v in r.items() if k != "outputFile"} if not _taken(r) else r)),
    Infidelity("taken launch with an output file", "text", "a launch the mod took names an output file",
               "answer.launch.fields", lambda: _result_changed(
                   lambda r: {**r, "outputFile": "/tmp/claude-0/tasks/w.output"} if _taken(r) else r)),
    Infidelity("launch read as finished", "text", "a launch answered as a completed report", "answer.report",
               lambda: _result_changed(lambda r: {"status": "completed", "agentId": r.get("agentId"),
                                                  "content": [{"type": "text", "text": "Done."}]})),
    Infidelity("launch without its status", "text", "a launch's fields without 'status'", "answer.shape",
               lambda: _result_changed(lambda r: {k: v for k, v in r.items() if k != "status"})),
    Infidelity("launch as plain text", "text", "a launch's result a line of text", "answer.result",
               lambda: _result_changed(lambda r: f"Launched {r.get('agentId')}.")),
    Infidelity("stop without its command", "text", "a stopped worker's result without the task's command",
               "answer.fields", lambda: _fields_changed(
                   "answer", lambda f: {**f, "result": {k: v for k, v in f["result"].items() if k != "command"}},
                   lambda f: isinstance(f.get("result"), dict) and "task_id" in f["result"])),
    Infidelity("report read as a launch", "text", "a worker's finished report answered as a launch",
               "answer.launch", lambda: _fields_changed(
                   "answer", lambda f: {**f, "result": {"status": "async_launched",
                                                        "agentId": f["result"].get("agentId")}},
                   lambda f: isinstance(f.get("result"), dict) and f["result"].get("status") == "completed")),
    Infidelity("context line more", "text", "a context line the mod never gave, after each it did",
               "answer.context", lambda: _fields_changed("answer", lambda f: {**f, "context": [*f["context"],
                                                                                           "Noted."]},
                                                         lambda f: bool(f.get("context")))),
    Infidelity("context lines lost", "text", "the mod's context lines never reach the model", "answer.context.real",
               lambda: _fields_changed("answer", lambda f: {k: v for k, v in f.items() if k != "context"},
                                       lambda f: bool(f.get("context")))),
    Infidelity("git without its newline", "lane", "git's output without its last newline", "run",
               lambda: _executor_wrapped(_GitWithoutNewline)),
    Infidelity("unchanged poll twice", "timing", "a sessions poll that finds nothing new run again", "polls",
               _polls_doubled),
    Infidelity("toast after the answer", "order", "a toast shown once the model has read the call's answer",
               "toast.order", lambda: _recorded_after("toast", lambda _, e: e["kind"] == "answer")),
    Infidelity("permission after the answer", "order", "a call's permission recorded after its answer",
               "order.permission/answer",
               lambda: _recorded_after("permission", lambda held, e: e["kind"] == "answer"
                                       and e.get("call") == held.get("call"))),
    Infidelity("spawn after the answer", "order", "a launch's agent.spawn recorded after its answer",
               "order.spawn/answer",
               lambda: _recorded_after("spawn", lambda held, e: e["kind"] == "answer"
                                       and e.get("call") == held.get("call"))),
    Infidelity("permission 20 s late", "timing", "each permission recorded 20 s after it was decided",
               "time.permission", lambda: _late("permission", ms=20_000)),
    Infidelity("spawn 8 s late", "timing", "each agent.spawn recorded 8 s after it came", "time.spawn",
               lambda: _late("spawn")),
    Infidelity("native agent 8 s late", "timing", "each native agent recorded 8 s after it started", "time.native",
               lambda: _late("native")),
    Infidelity("launch 8 s late", "timing", "each launch's answer recorded 8 s after the model read it",
               "time.answer", lambda: _late("answer", _is_launch)),
    Infidelity("run 8 s late", "timing", "each run of the mod (a poll aside) recorded 8 s after it started",
               "time.run", lambda: _late("run", _not_a_poll)),
    Infidelity("toast 8 s late", "timing", "each toast recorded 8 s after it was shown", "time.toast",
               lambda: _late("toast")),
    Infidelity("Esc unrecorded", "lane", "the person's Esc never recorded", "keys",
               lambda: _record_patched(lambda _, kind, fields: None if kind == "esc" else (kind, fields))),
    Infidelity("note as a prompt", "lane", "lich's note recorded as a prompt the person typed", "prompt",
               lambda: _also("note", lambda e: ("prompt", {"text": e.get("text"), "notifications": [],
                                                           "context": []}))),
    Infidelity("hook reported", "lane", "the engine reports session.start's hook as failed", "report",
               lambda: _also("session.start", lambda _: ("report", {"text": "session.start hook failed"}))),
    Infidelity("session host restarted", "lane", "the session host started again after session.start", "lifecycle",
               lambda: _also("session.start", lambda _: ("host.start", {}))),
)

#: The checks no fixture scenario can show, and why: a plant aimed at one alters nothing the fixture's real
#: side could differ in.
UNPROVEN: dict[str, str] = {}


class PlantResult(Record):
    plant: Infidelity
    caught: dict[str, list[str]] = field(default_factory=dict)  # scenario: the checks that differed
    missed: dict[str, list[str]] = field(default_factory=dict)  # scenario it alters: the checks that differed

    @property
    def proven(self) -> bool:
        return bool(self.caught) and not self.missed


class SelfTest(Record):
    baseline: dict[str, list[str]] = field(default_factory=dict)  # scenario: its differences unplanted
    plants: list[PlantResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: scenario: where the transcript made again from its kept evidence differs from the saved one ("": nowhere)
    extracted: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return (not self.problems and not any(self.baseline.values()) and all(p.proven for p in self.plants)
                and bool(self.extracted) and not any(self.extracted.values()))

    def summary(self) -> str:
        caught = sum(1 for p in self.plants if p.proven)
        units = sum(len(p.caught) + len(p.missed) for p in self.plants)
        units_caught = sum(len(p.caught) for p in self.plants)
        aimed = {p.plant.aims for p in self.plants if p.proven}
        return (f"self-test: {caught} of {len(self.plants)} planted fake-host infidelities caught by the check they "
                f"aim at on every scenario they alter ({units_caught} of {units} scenario runs); "
                f"{len(aimed & CHECKS.keys())} of {len(CHECKS)} checks proven; the fake host as it is conforms on "
                f"{sum(1 for v in self.baseline.values() if not v)} of {len(self.baseline)}; the real runs' kept "
                f"evidence makes {sum(1 for v in self.extracted.values() if not v)} of {len(self.extracted)} saved "
                "transcripts again")


def _units(file: str) -> list[Scenario]:
    scenarios, problems = load_all([ROOT / file])
    if problems:
        raise ValueError("; ".join(problems))
    return [v for s in scenarios for v in (s.variants or (s,))]


def _fake(scenario: Scenario) -> list[dict[str, Any]]:
    return [dict(e) for e in replay(scenario).events]


def _replayed(replays: Replays, plant: Infidelity | None, scenario: Scenario) -> list[dict[str, Any]]:
    """The fake host's transcript of ``scenario`` with ``plant`` in it (None: as it is), once per ``replays``."""
    key = (plant, scenario.file)
    if key not in replays:
        if plant is None:
            replays[key] = _fake(scenario)
        else:
            with plant.patch():
                replays[key] = _fake(scenario)
    return replays[key]


def _against(scenario: Scenario, fake: list[dict[str, Any]], real: Sequence[dict[str, Any]]) -> Comparison:
    parallel = any(isinstance(s, steps.CallStep) and len(s.calls) > 1 for s in scenario.steps)
    return compare(fake, real, side_by_side=parallel, missing_programs=missing_programs(scenario))


def judged(scenario: Scenario, real: Sequence[dict[str, Any]]) -> Comparison:
    """The fake host's transcript of ``scenario`` now, against a saved real one."""
    return _against(scenario, _fake(scenario), real)


def load_fixture(path: Path = FIXTURE) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            out[data["file"]] = data["real"]
    return out


def extraction_problem(scenario: Scenario, evidence: dict[str, Any], saved: Sequence[dict[str, Any]]) -> str:
    """Where the transcript made from a real run's kept evidence differs from the saved one ("": nowhere)."""
    made = trimmed({"file": scenario.file, "real": Extractor(scenario, Evidence.from_json(evidence)).events()})["real"]
    for n, (got, want) in enumerate(zip(made, saved, strict=False), start=1):
        if got != want:
            return f"event {n}: made {json.dumps(got, ensure_ascii=False)[:200]}, saved {json.dumps(want)[:200]}"
    if len(made) != len(saved):
        return f"{len(made)} events made, {len(saved)} saved"
    return ""


def refresh(results: Path, evidence: Path, fixture: Path = FIXTURE, kept: Path = EVIDENCE) -> None:
    """The saved transcripts and their kept evidence made anew from one ``agent-cards conform --json
    --evidence`` run: the transcripts trimmed (:func:`trimmed`), each scenario's evidence beside its line."""
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
    seen = {json.loads(line)["file"]: line for line in evidence.read_text(encoding="utf-8").splitlines() if line}
    fixture.write_text("".join(json.dumps(trimmed(line), ensure_ascii=False) + "\n" for line in lines
                               if line["file"] in seen), encoding="utf-8")
    kept.write_text("".join(seen[line["file"]] + "\n" for line in lines if line["file"] in seen), encoding="utf-8")


def load_evidence(path: Path = EVIDENCE) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            out[data["file"]] = data["evidence"]
    return out


#: The fake host's transcripts, planted (by the plant) or not (None), of a fixture scenario: what the self-test
#: replays, which a caller that judges one kit several ways (each with another comparison) keeps between runs.
Replays = dict[tuple[Infidelity | None, str], list[dict[str, Any]]]


def self_test(kit: Sequence[Infidelity] | None = None, path: Path = FIXTURE,
              evidence: Path = EVIDENCE, replays: Replays | None = None) -> SelfTest:
    """The kit (:data:`KIT` unless given) against the real transcripts saved in ``path``: each plant on every
    scenario of the fixture, caught where it alters the replay only when the check it aims at differs.
    ``replays``: the fake host's transcripts made before with the same kit and fixture, and made here if not."""
    kit = KIT if kit is None else kit
    replays = {} if replays is None else replays
    real = load_fixture(path)
    result = SelfTest()
    scenarios: dict[str, Scenario] = {}
    unplanted: dict[str, list[dict[str, Any]]] = {}
    for file in sorted(real):
        try:
            [scenarios[file]] = _units(file)
        except (OSError, ValueError) as error:  # an install without the scenarios: only a clone has them
            result.problems.append(f"{file}: {error}")
            continue
        unplanted[file] = _replayed(replays, None, scenarios[file])
        result.baseline[file] = [f"{d.lane} {d.key}: {d.why}"
                                 for d in _against(scenarios[file], unplanted[file], real[file]).differences]
    for file, kept in load_evidence(evidence).items() if evidence.exists() else ():
        if file not in scenarios:
            result.problems.append(f"{file}: kept evidence of a real run whose transcript is not saved")
            continue
        result.extracted[file] = extraction_problem(scenarios[file], kept, real[file])
    for plant in kit:
        outcome = PlantResult(plant)
        if plant.aims not in CHECKS:
            result.problems.append(f"{plant.name}: aims at {plant.aims!r}, which the comparison does not make")
        for file, scenario in scenarios.items():
            try:
                fake = _replayed(replays, plant, scenario)
            except Exception as error:  # a plant that breaks the replay proves nothing of the comparison
                result.problems.append(f"{plant.name}: {file}: the replay raised {type(error).__name__}: {error}")
                continue
            if fake == unplanted[file]:
                continue  # the plant leaves this scenario as it is: nothing to catch here
            checks = sorted({d.check for d in _against(scenario, fake, real[file]).differences})
            (outcome.caught if plant.aims in checks else outcome.missed)[file] = checks
        if not outcome.caught and not outcome.missed:
            result.problems.append(f"{plant.name}: alters no scenario of {path.name}, so proves nothing")
        result.plants.append(outcome)
    aimed = {p.aims for p in kit}
    for check in CHECKS:
        if check not in aimed and check not in UNPROVEN:
            result.problems.append(f"{check}: no plant aims at it")
    return result


def to_text(test: SelfTest) -> str:
    lines = [test.summary()]
    for file, differences in test.baseline.items():
        if differences:
            lines.append(f"  ✗ unplanted, {file} differs: {'; '.join(differences[:3])}")
    def where(found: dict[str, list[str]]) -> str:
        return "; ".join(f"{Path(f).name.removesuffix('.yaml')} ({', '.join(checks) or 'nothing differs'})"
                         for f, checks in found.items())

    for outcome in test.plants:
        p = outcome.plant
        lines.append(f"  {'✓' if outcome.proven else '✗'} [{p.kind}] {p.name} → {p.aims}: caught on "
                     f"{where(outcome.caught) or 'nothing'}"
                     + (f"; missed on {where(outcome.missed)}" if outcome.missed else ""))
    lines += [f"  ✗ {file}: its kept evidence makes another transcript: {where}"
              for file, where in test.extracted.items() if where]
    if not test.extracted:
        lines.append("  ✗ no kept evidence of a real run: the extraction of real transcripts is not proven")
    lines += [f"  ✗ {problem}" for problem in test.problems]
    lines += [f"  · {check} not proven: {why}" for check, why in UNPROVEN.items()]
    return "\n".join(lines)



def trimmed(line: dict[str, Any]) -> dict[str, Any]:
    """A ``conform --json`` line as the fixture keeps it: the real transcript, a native agent's task without the
    engine's reminders, and no folder of the machine it ran on (a native agent's output file)."""
    real = []
    for event in line.get("real") or []:
        kept = dict(event)
        if kept.get("kind") == "native" and "task" in kept:
            kept["task"] = task_of(str(kept["task"]))
        real.append(json.loads(MACHINE_PATH.sub("<folder>", json.dumps(kept, ensure_ascii=False))))
    return {"file": line["file"], "title": line.get("title", ""), "verdict": line.get("verdict"), "real": real}


__all__ = ["EVIDENCE", "FIXTURE", "KIT", "Infidelity", "Replays", "SelfTest", "extraction_problem", "judged",
           "refresh", "self_test", "to_text", "trimmed"]
