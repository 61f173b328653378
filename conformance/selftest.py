"""``agent-cards conform --self-test``: the tier proves it sees what it claims to compare.

A kit of planted fake-host infidelities, each a patch on the fake host made in process (timing, order, end
state, texts, lanes nobody looked at), is judged against one saved set of real transcripts
(:data:`FIXTURE`, recorded by ``agent-cards conform --json`` from real runs and trimmed): the fake host as it
is must conform on every scenario of the fixture, and each plant must make every scenario it alters differ.
No real run is needed: each scenario is replayed (virtual time, in process) and compared again.
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

from agent_cards.record import Record, Value, field
from agent_cards_conformance.compare import Comparison, compare, task_of
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
ROOT = Path(__file__).resolve().parents[1]


class Infidelity(Value):
    """One planted infidelity: what it does to the fake host, and the scenarios it alters."""

    name: str
    kind: str  # timing | order | end state | text | lane
    what: str
    scenarios: tuple[str, ...]
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


#: lich's footer poll: a footer drawn a poll late comes this much later.
POLL_S = 5.0


@contextlib.contextmanager
def _footer_one_poll_late() -> Iterator[None]:
    """A footer that falls is drawn a poll (5 s) late: the draw is dropped and done again then."""
    original = FakeClaudeCode.render_footer
    held: set[int] = set()

    async def render_footer(self: FakeClaudeCode) -> None:
        footers = self.transcript.of("footer")
        last = footers[-1].get("line") if footers else None
        await original(self)
        drawn = self.transcript.events[-1]
        if drawn["kind"] == "footer" and _count(drawn.get("line")) < _count(last) and id(self) not in held:
            held.add(id(self))
            self.transcript.events.pop()
            self.loop.call_later(POLL_S, self.schedule_footer)
        elif drawn["kind"] == "footer":
            held.discard(id(self))

    with mock.patch.object(FakeClaudeCode, "render_footer", render_footer):
        yield


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


class _LateNotes:
    """The lich side as it is, each note typed 8 s after it is due."""

    LATE_MS = 8000

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


_REJECTED = results.USER_REJECTED
KIT: tuple[Infidelity, ...] = (
    Infidelity("footer one poll late", "timing", "a falling footer is drawn only after the next poll",
               ("scenarios/footer/renamed.yaml", "scenarios/report-note.yaml"), _footer_one_poll_late),
    Infidelity("every run 1.2 s slower", "timing", "each lich and git run takes 1.2 s more",
               ("scenarios/perm/dialog-yes.yaml", "scenarios/footer/renamed.yaml", "scenarios/deliver/garbage.yaml"),
               lambda: _executor_wrapped(_SlowerExecutor)),
    Infidelity("note 8 s late", "timing", "lich's note of a report typed 8 s after it is due",
               ("scenarios/report-note.yaml",), lambda: _executor_wrapped(_LateNotes)),
    Infidelity("permission after agent.spawn", "order", "the permission check runs after agent.spawn",
               ("scenarios/perm/dialog-yes.yaml", "scenarios/footer/renamed.yaml"), _permission_after_spawn),
    Infidelity("footer never clears", "end state", "a footer whose workers left keeps its lich line",
               ("scenarios/footer/renamed.yaml", "scenarios/report-note.yaml"), _footer_never_clears),
    Infidelity("Esc answer shortened", "text", "the engine's rejection after Esc without its last sentence",
               ("scenarios/fall/esc-isolated.yaml",),
               lambda: _answer_error(_REJECTED, lambda text: {"error": text.rsplit(" STOP", 1)[0]})),
    Infidelity("Esc answer rewrapped", "text", "the engine's rejection after Esc broken into lines",
               ("scenarios/fall/esc-isolated.yaml",),
               lambda: _answer_error(_REJECTED, lambda text: {"error": text.replace(". ", ".\n")})),
    Infidelity("Esc answer as a deny", "text", "the engine's rejection after Esc delivered as a hook's deny",
               ("scenarios/fall/esc-isolated.yaml",), lambda: _answer_error(_REJECTED, lambda text: {"deny": text})),
    Infidelity("deny without the engine's prefix", "text", "a hook's deny without 'PreToolUse:Agent hook error: '",
               ("scenarios/perm/hook-deny.yaml",), lambda: _texts("hook_error", lambda reason: reason)),
    Infidelity("unknown type without its list", "text", "the unknown-type error without the list of types",
               ("scenarios/take/agent-type.yaml",),
               lambda: _texts("unknown_agent_type", lambda name, available: f"Agent type '{name}' not found.")),
    Infidelity("unknown type's list rewrapped", "text", "the list of types one to a line",
               ("scenarios/take/agent-type.yaml",),
               lambda: _texts("unknown_agent_type", lambda name, available: f"Agent type '{name}' not found. Available "
                              "agents:\n" + "\n".join(sorted(available, key=str.lower)))),
    Infidelity("native agent input changed", "lane", "the native agent gets the call's input without its type, "
               "or its prompt with a full stop", ("scenarios/take/agent-type.yaml", "scenarios/deliver/garbage.yaml"),
               _native_input_changed),
    Infidelity("note dropped", "lane", "lich's note of a worker's report never reaches the session",
               ("scenarios/report-note.yaml",), _note_dropped),
    Infidelity("toast changed", "lane", "a toast without its last full stop",
               ("scenarios/deliver/garbage.yaml",), _toast_changed),
    Infidelity("dialog counted as the mode", "lane", "a yes at the dialog recorded as the mode's allow",
               ("scenarios/perm/dialog-yes.yaml",), _dialog_as_mode),
    Infidelity("every dialog asked", "lane", "two Agent calls of one reply each get a dialog, and a 'no' at the first "
               "leaves the second to be asked, allowed and opened", ("scenarios/perm/parallel-no.yaml",),
               _every_dialog_asked),
    Infidelity("deny rule in words of its own", "text", "a typed deny rule answered 'Permission to use Agent has been "
               "denied by a permission rule.'", ("scenarios/perm/rule-deny.yaml",),
               lambda: _texts("rule_denied", lambda agent_type, rule: "Permission to use Agent has been denied by a "
                              "permission rule.")),
    Infidelity("plain deny rule reaches the hooks", "lane", "permissions.deny: [Agent] leaves the tool in the session, "
               "so the mod takes the call", ("scenarios/perm/rule-deny-plain.yaml",), _plain_rule_reaches_the_hooks),
    Infidelity("no Rewind panel", "lane", "Esc twice at the idle prompt opens nothing, so the footer is drawn on",
               ("scenarios/stop/esc.yaml", "scenarios/footer/rewind-panel.yaml"), _no_double_press),
)


class PlantResult(Record):
    plant: Infidelity
    caught: dict[str, list[str]] = field(default_factory=dict)  # scenario: the lanes that differed
    missed: list[str] = field(default_factory=list)  # scenarios it alters that still conform


class SelfTest(Record):
    baseline: dict[str, list[str]] = field(default_factory=dict)  # scenario: its differences unplanted
    plants: list[PlantResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems and not any(self.baseline.values()) and all(not p.missed for p in self.plants)

    def summary(self) -> str:
        caught = sum(1 for p in self.plants if not p.missed)
        units = sum(len(p.plant.scenarios) for p in self.plants)
        units_caught = sum(len(p.caught) for p in self.plants)
        return (f"self-test: {caught} of {len(self.plants)} planted fake-host infidelities caught on every scenario "
                f"they alter ({units_caught} of {units} scenario runs); the fake host as it is conforms on "
                f"{sum(1 for v in self.baseline.values() if not v)} of {len(self.baseline)}")


def _units(file: str) -> list[Scenario]:
    scenarios, problems = load_all([ROOT / file])
    if problems:
        raise ValueError("; ".join(problems))
    return [v for s in scenarios for v in (s.variants or (s,))]


def judged(scenario: Scenario, real: Sequence[dict[str, Any]]) -> Comparison:
    """The fake host's transcript of ``scenario`` now, against a saved real one."""
    parallel = any(isinstance(s, steps.CallStep) and len(s.calls) > 1 for s in scenario.steps)
    fake = [dict(e) for e in replay(scenario).events]
    return compare(fake, real, side_by_side=parallel, missing_programs=missing_programs(scenario))


def load_fixture(path: Path = FIXTURE) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            out[data["file"]] = data["real"]
    return out


def self_test(kit: Sequence[Infidelity] | None = None, path: Path = FIXTURE) -> SelfTest:
    """The kit (:data:`KIT` unless given) against the real transcripts saved in ``path``."""
    kit = KIT if kit is None else kit
    real = load_fixture(path)
    result = SelfTest()
    scenarios: dict[str, Scenario] = {}
    for file in sorted({f for p in kit for f in p.scenarios}):
        if file not in real:
            result.problems.append(f"{file}: no real transcript in {path.name}")
            continue
        try:
            [scenarios[file]] = _units(file)
        except (OSError, ValueError) as error:  # an install without the scenarios: only a clone has them
            result.problems.append(f"{file}: {error}")
            continue
        result.baseline[file] = [f"{d.lane} {d.key}: {d.why}" for d in judged(scenarios[file], real[file]).differences]
    for plant in kit:
        outcome = PlantResult(plant)
        for file in plant.scenarios:
            if file not in scenarios:
                outcome.missed.append(file)
                continue
            with plant.patch():
                comparison = judged(scenarios[file], real[file])
            if comparison.conforms:
                outcome.missed.append(file)
            else:
                outcome.caught[file] = sorted({d.lane for d in comparison.differences})
        result.plants.append(outcome)
    return result


def to_text(test: SelfTest) -> str:
    lines = [test.summary()]
    for file, differences in test.baseline.items():
        if differences:
            lines.append(f"  ✗ unplanted, {file} differs: {'; '.join(differences[:3])}")
    for outcome in test.plants:
        p = outcome.plant
        mark = "✗" if outcome.missed else "✓"
        caught = "; ".join(f"{Path(f).name.removesuffix('.yaml')} ({', '.join(lanes)})"
                           for f, lanes in outcome.caught.items())
        lines.append(f"  {mark} [{p.kind}] {p.name}: caught on {caught or 'nothing'}"
                     + (f"; missed on {', '.join(outcome.missed)}" if outcome.missed else ""))
    lines += [f"  ✗ {problem}" for problem in test.problems]
    return "\n".join(lines)


_MACHINE_PATH = re.compile(r"/tmp/[^\s'\"\\]*")


def trimmed(line: dict[str, Any]) -> dict[str, Any]:
    """A ``conform --json`` line as the fixture keeps it: the real transcript, a native agent's task without the
    engine's reminders, and no folder of the machine it ran on (a native agent's output file)."""
    real = []
    for event in line.get("real") or []:
        kept = dict(event)
        if kept.get("kind") == "native" and "task" in kept:
            kept["task"] = task_of(str(kept["task"]))
        real.append(json.loads(_MACHINE_PATH.sub("<folder>", json.dumps(kept, ensure_ascii=False))))
    return {"file": line["file"], "title": line.get("title", ""), "verdict": line.get("verdict"), "real": real}


__all__ = ["FIXTURE", "KIT", "Infidelity", "SelfTest", "judged", "self_test", "to_text", "trimmed"]
