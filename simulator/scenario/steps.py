"""The step kinds: each is defined here once, with what it reads, how it runs, and how it is documented.

A step kind is an immutable record (:class:`agent_cards.record.Value`, the step as the model holds it:
a frozen dataclass, without the cost of one at start-up) with an ``async run(play)``, and
its registration: the key it is written with, its value's kind (:mod:`agent_cards_simulator.scenario.spec`: how the
value is checked, and its schema), a one-line form and meaning (the schema's description and the table
in docs/scenarios.md). For instance::

    @action("wait", Ms("How many ms to let pass."), form="`wait: N`", expected="a whole number of ms",
            doc="Lets N ms pass (whole number ≥ 0).")
    class Wait(Value):
        ms: int

        async def run(self, play: Play) -> str | None:
            await play.sleep(self.ms)
            return None

That is all a new kind takes: the reader finds it by its key, the replay runs it, the schema
(``python -m agent_cards_simulator.scenario.schema``) and the docs' table (``--steps-table``) describe it. A kind
runs on the replay's ``Play`` (:mod:`agent_cards_simulator.scenario.replay`): the fake host. Nothing here
imports it.

The call steps (``call``, ``taskstop``, ``parallel``) take more keys than their own: each is defined by the
record of its keys (the call keys shared), which its schema is made from and its reading checks each key
with; the reading itself is theirs, since they count call ids across the file, take the Agent tool's
input for an Agent call, and name a key of the other call kind as such.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agent_cards.record import Record, Value, field
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.lich.scripts import OpenScript
from agent_cards_simulator.scenario import model
from agent_cards_simulator.scenario.settings import OPEN, PERMISSION, PERMISSION_MODE
from agent_cards_simulator.scenario.spec import (
    FAILED,
    AnyOf,
    Anything,
    Bool,
    Const,
    Defs,
    Field,
    Int,
    Kind,
    ListOf,
    Ms,
    Nullable,
    Reader,
    RecordKind,
    Schema,
    TextKind,
    did_you_mean,
    plain,
    show,
    with_description,
)
from agent_cards_simulator.scenario.yamlnodes import YList, YMap

if TYPE_CHECKING:
    from agent_cards_simulator.scenario.replay import Play


class Ids(Record):
    """Call ids in file order: ``toolu_0001``, … (a call with its own id still takes a number)."""

    count: int = 0  # the ids given out so far
    calls: set[str] = field(default_factory=set)  # the ids of the calls read so far (their own or given)

    def next(self) -> str:
        self.count += 1
        return f"toolu_{self.count:04d}"


class StepKind(ABC):
    """One kind of step, found by ``key``: reads its mapping, gives its schema, documents itself."""

    key: str
    form: str  # how it is written (docs/scenarios.md)
    doc: str  # what it does (the schema's description, docs/scenarios.md)
    bare: bool = False  # may be written as the bare word

    @abstractmethod
    def read(self, r: Reader, item: YMap, path: str, ids: Ids) -> model.Step | None: ...

    @abstractmethod
    def schema(self, defs: Defs) -> Schema: ...

    def read_bare(self) -> model.Step:
        raise NotImplementedError(self.key)


#: Every step kind by its key, in the order the docs list them.
KINDS: dict[str, StepKind] = {}

S = TypeVar("S")


class Action(StepKind):
    """A step of one key and its value (``wait: 100``, ``esc``, ``workflow: {…}``)."""

    def __init__(self, key: str, step: type[Any], value: Kind, *, form: str, doc: str, expected: str,
                 bare: bool, make: Callable[[Any], model.Step] | None) -> None:
        self.key, self.step, self.value = key, step, value
        self.form, self.doc, self.expected, self.bare = form, doc, expected, bare
        if make is None:
            make = (lambda _: step()) if not step._fields else step
        self.make = make

    def read(self, r: Reader, item: YMap, path: str, ids: Ids) -> model.Step | None:
        value = item[self.key]
        if isinstance(self.value, RecordKind) and isinstance(value, YMap):  # each key's own problem, by its line
            read = self.value.read(r, item, self.key, value, f"{path}.{self.key}")
            return None if read is FAILED else self.make(read)
        if not self.value.accepts(value):
            r.fail(item, self.key, f"{path}.{self.key}: expected {self.expected}, got {show(value)}")
            return None
        return self.make(self.value.convert(value))

    def read_bare(self) -> model.Step:
        return self.make(True)

    def schema(self, defs: Defs) -> Schema:
        return {
            "description": self.doc,
            "type": "object",
            "required": [self.key],
            "additionalProperties": False,
            "properties": {self.key: self.value.schema(defs)},
        }


def action(key: str, value: Kind, *, form: str, doc: str, expected: str, bare: bool = False,
           make: Callable[[Any], model.Step] | None = None) -> Callable[[type[S]], type[S]]:
    """Registers the decorated step record as the step kind ``key`` (see the module's doc).

    ``make`` builds the step from the checked value (default: the record of that one value, or of
    none); ``bare``: the key alone is the step too (its value then is ``true``).
    """

    def register(step: type[S]) -> type[S]:
        KINDS[key] = Action(key, step, value, form=form, doc=doc, expected=expected, bare=bare, make=make)
        return step

    return register


# -- calls -------------------------------------------------------------------------------------------------


class ToolCall(Value):
    """One tool call of a ``call``, ``taskstop`` or ``parallel`` step."""

    tool: str
    input: dict[str, Any]
    id: str
    origin: str = "engine"  # "engine": the model on the main loop; else the plugin that raises the call
    agent: str | None = None
    permission: PermissionVerdict | None = None  # None: the session's
    lich: OpenScript | None = None
    worker_of: str | None = None  # a TaskStop naming the worker this Agent call opened (resolved when it runs)


class CallStep(Value):
    """One call, or several raised at once (``parallel``); Esc may come while they run."""

    calls: tuple[ToolCall, ...]
    esc_after: int | None = None

    async def run(self, play: Play) -> str | None:
        named = []
        for one in self.calls:
            if one.worker_of is not None:
                name = play.worker_of(one.worker_of)
                if name is None:
                    return (f"taskstop: the call {one.worker_of!r} has not answered with a worker (no agentId) "
                            "before this step")
                one = ToolCall(one.tool, {"task_id": name}, one.id, one.origin, one.agent, one.permission)  # noqa: PLW2901
            named.append(one)
        calls = [asyncio.ensure_future(play.call(call)) for call in named]
        pressed = None
        if self.esc_after is not None:
            pressed = asyncio.ensure_future(_esc_after(play, self.esc_after))
        await asyncio.gather(*calls)
        if pressed is not None:
            await pressed
        return None


async def _esc_after(play: Play, ms: int) -> None:
    await play.sleep(ms)
    play.host.esc()


# The keys a call and a taskstop share.
_ID = Field("id", TextKind(), "The call's tool_use id. Default `toolu_NNNN`, NNNN counting every call and taskstop of "
            "the file from 0001 (a call with its own id still takes a number).")
_ORIGIN = Field("origin", TextKind(), "Who makes the call: `engine` (default) is the model on the main loop; any other "
                "text is the name of a plugin that raises the call.", default="engine")
_AGENT = Field("agent", TextKind(), "The agentId of a subagent that makes this call (the call carries `agentId`).")
_PERMISSION = Field("permission", PERMISSION, "How Claude Code's permission check answers this call; default: "
                    "`session.permission`.")
_ESC_AFTER = Field("esc_after", Ms(), "Esc is pressed this many ms after the step began (the call may still be "
                   "running).")
_CALL_KEYS = [_ID, _ORIGIN, _AGENT, _PERMISSION, _ESC_AFTER]


class _ToolInput(Kind):
    """A call's tool input: any mapping, kept as written (an Agent call's is checked as :data:`AGENT_INPUT`)."""

    expected = "a mapping"
    refusal = "expected the tool's input as a mapping (description, prompt, …)"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict)

    def convert(self, value: Any) -> Any:
        return plain(value)

    def schema(self, defs: Defs) -> Schema:
        return {"type": "object"}


#: The Agent tool's input: the keys the reader checks; the others go to the tool as they are.
AGENT_INPUT = RecordKind(
    [
        Field("description", Anything(), "The task's short description (the branch slug comes from it).",
              missing="{path}: an Agent call needs 'description'"),
        Field("prompt", Anything(), "The task. lich tells opens apart by it. `!repeat` builds a long one.",
              missing="{path}: an Agent call needs 'prompt'"),
        Field("subagent_type", Anything(), "The agent type; absent or `general-purpose` may be taken, others stay "
              "native."),
        Field("isolation", Const(("worktree", "remote"), refusal="Claude Code takes worktree or remote"),
              "`worktree`: an isolated worker on a branch of its own; `remote`: stays native."),
        Field("model", Anything(), "A model for the worker, passed to lich as `--model`."),
    ],
    description="The Agent tool's input, as the model gives it. Other keys (team_name, name, run_in_background, "
    "…) are passed on as they are.",
    name="agentInput",
    others=True,
)

_CALL = Field("call", _ToolInput(), "The tool's input. For Agent: description and prompt at least.",
              missing="{path}: 'call' is missing")
_TOOL = Field("tool", TextKind(), "The tool called. Default `Agent`; any other tool runs natively (e.g. TaskStop with "
              "`shell_id`).", default="Agent")
_LICH = Field("lich", OPEN, "How lich answers the open of THIS call (matched by its prompt).")
_TASKSTOP = Field("taskstop", AnyOf(
    TextKind("A worker's roster name (the agentId its Agent call answered), or a native agent's id."),
    RecordKind([Field("worker", TextKind(), "The id of the Agent call that opened the worker (`toolu_0001`).",
                  missing="{path}: 'worker' (the id of the call that opened it) is missing")],
           description="The worker the Agent call with this id opened, by that call (its roster name is read "
           "from the call's answer when the TaskStop is made)."),
    refusal="expected the task id (a worker's roster name) as text, or {worker: CALL_ID}",
), "The task id to stop: a roster name as text, or `{worker: CALL_ID}` for the worker that call opened.",
    missing="{path}: 'taskstop' is missing")


def _agent_input_for_agent(defs: Defs) -> Schema:
    """A call whose tool is Agent (``tool`` absent or the default) gives the Agent tool's input."""
    return {
        "if": {"anyOf": [
            {"not": {"required": [_TOOL.key]}},
            {"properties": {_TOOL.key: {"const": _TOOL.default, "description": "The Agent tool."}}},
        ]},
        "then": {"properties": {
            _CALL.key: with_description(AGENT_INPUT.schema(defs), "An Agent call's input: description and prompt at "
                                        "least."),
        }},
    }


def _value(r: Reader, m: YMap, f: Field, path: str) -> Any:
    return f.kind.read(r, m, f.key, m[f.key], f"{path}.{f.key}") if f.key in m else f.default


class _CallKind(StepKind):
    """A step of one tool call: its own keys and the call keys, defined once as the record ``record``."""

    def __init__(self, key: str, form: str, doc: str, own: list[Field],
                 extra: Callable[[Defs], Schema] | None = None) -> None:
        self.key, self.form, self.doc = key, form, doc
        self.record = RecordKind([*own, *_CALL_KEYS], description=doc, name=f"{key}Step", extra=extra)

    def read(self, r: Reader, item: YMap, path: str, ids: Ids) -> model.Step | None:
        call = read_call(r, item, path, ids)
        if call is None:
            return None
        esc_after = _value(r, item, _ESC_AFTER, path)
        return None if esc_after is FAILED else CallStep((call,), esc_after)

    def schema(self, defs: Defs) -> Schema:
        return self.record.schema(defs)


_CALL_STEP = KINDS["call"] = _CallKind(
    "call", "`call: {…tool input…}` + call keys",
    "The model calls a tool (Agent unless `tool:` says otherwise). Ends when the call is answered.",
    [_CALL, _TOOL, _LICH], extra=_agent_input_for_agent,
)
_TASKSTOP_STEP = KINDS["taskstop"] = _CallKind(
    "taskstop", "`taskstop: NAME` or `taskstop: {worker: CALL_ID}` + call keys",
    "The model calls `TaskStop({task_id: NAME})`; NAME is a worker's roster name (the `agentId` its Agent call "
    "answered) or a native agent's id; `taskstop: {worker: toolu_0001}` names the worker that call opened.",
    [_TASKSTOP],
)
#: The call step kinds; a mapping with either key is a call (read against the keys of both, so that a key
#: of the other kind is named as such).
_CALL_KINDS = (_TASKSTOP_STEP, _CALL_STEP)
_ALL_KEYS = {key for kind in _CALL_KINDS for key in kind.record.fields}
#: The keys of a call that a taskstop does not take.
_CALL_ONLY = [key for key in _CALL_STEP.record.fields if key not in _TASKSTOP_STEP.record.fields]


def read_call(r: Reader, item: YMap, path: str, ids: Ids) -> ToolCall | None:
    """A ``call:`` or ``taskstop:`` mapping (its ``esc_after`` is the step's, read by the step)."""
    m = r.mapping(None, 0, item, path, _ALL_KEYS)
    if m is None:
        return None
    number = ids.next()
    call_id = _value(r, m, _ID, path) if _ID.key in m else number
    worker_of = None
    if _TASKSTOP.key in m:
        extra = ", ".join(k for k in _CALL_ONLY if k in m)
        if extra:
            r.fail(m, "taskstop", f"{path}: a taskstop step takes no {extra} (write a TaskStop call as 'call:' with "
                   "tool: TaskStop)")
            return None
        target = _value(r, m, _TASKSTOP, path)
        if target is FAILED:
            return None
        if isinstance(target, str) and (target in ids.calls or target.startswith("toolu_")):
            r.fail(m, "taskstop", f"{path}.taskstop: {target!r} is a call's id, not a task id: TaskStop takes the "
                   f"worker's roster name; for the worker that call opened write taskstop: {{worker: {target}}}")
            return None
        if isinstance(target, dict):
            worker_of, target = target["worker"], ""
        tool, tool_input = "TaskStop", {"task_id": target}
    else:
        tool = _value(r, m, _TOOL, path)
        tool_input = _value(r, m, _CALL, path)
        if tool_input is FAILED:
            return None
        if tool == _TOOL.default:  # its problems are reported; the call still counts in the checks across steps
            AGENT_INPUT.read(r, m, _CALL.key, m[_CALL.key], f"{path}.{_CALL.key}")
    if isinstance(call_id, str):
        ids.calls.add(call_id)
    origin, agent, permission, lich = (_value(r, m, f, path) for f in (_ORIGIN, _AGENT, _PERMISSION, _LICH))
    if FAILED in (call_id, tool, origin, agent, permission, lich):
        return None
    return ToolCall(tool, tool_input, call_id, origin, agent, permission, lich, worker_of)


class _InParallel(Kind):
    """A call step as one of a ``parallel`` step's calls: without its own ``esc_after``."""

    def __init__(self, step: _CallKind) -> None:
        self.step = step

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError("a parallel step's calls are read, with their problems, never only accepted")

    def schema(self, defs: Defs) -> Schema:
        return {**self.step.schema(defs), "properties": {_ESC_AFTER.key: False}}


class _Parallel(StepKind):
    key = "parallel"
    form = "`parallel: [call or taskstop steps]`, optional `esc_after`"
    doc = ("Raises all calls at once; ends when all are answered. `esc_after` belongs on the `parallel` step, not "
           "inside.")

    def __init__(self) -> None:
        self.calls = Field("parallel", ListOf(AnyOf(*map(_InParallel, (_CALL_STEP, _TASKSTOP_STEP))),
                                              min_items=1),
                           "The calls (call or taskstop steps, without esc_after).",
                           missing="{path}: 'parallel' is missing")
        self.esc_after = Field(_ESC_AFTER.key, Ms(), "Esc is pressed this many ms after the step began.")
        self.record = RecordKind([self.calls, self.esc_after], description=self.doc)

    def read(self, r: Reader, item: YMap, path: str, ids: Ids) -> model.Step | None:
        p = r.mapping(None, 0, item, path, self.record.fields)
        calls = p.get(self.key) if p is not None else None
        if not isinstance(calls, YList) or not calls:
            r.fail(item, self.key, f"{path}.{self.key}: expected a list of calls")
            return None
        parsed = []
        for j, c in enumerate(calls):
            sub = f"{path}.{self.key}[{j}]"
            if not isinstance(c, YMap) or not any(kind.key in c for kind in _CALL_KINDS):
                r.fail(calls, j, f"{sub}: expected a 'call:' or 'taskstop:' step")
                continue
            if _ESC_AFTER.key in c:
                r.fail(c, _ESC_AFTER.key, f"{sub}.esc_after: put esc_after on the parallel step itself")
            one = read_call(r, c, sub, ids)
            if one is not None:
                parsed.append(one)
        esc_after = _value(r, item, self.esc_after, path)
        return None if esc_after is FAILED else CallStep(tuple(parsed), esc_after)

    def schema(self, defs: Defs) -> Schema:
        return self.record.own_schema(defs)


KINDS["parallel"] = _Parallel()



# -- time --------------------------------------------------------------------------------------------------


@action("wait", Ms("How many ms to let pass."), form="`wait: N`", expected="a whole number of ms",
        doc="Lets N ms pass (whole number ≥ 0).")
class Wait(Value):
    ms: int

    async def run(self, play: Play) -> str | None:
        await play.sleep(self.ms)
        return None


@action("until", Ms("The virtual time to reach, ms since the start; it must not be past."), form="`until: T`",
        expected="a virtual time in ms",
        doc='Lets time pass up to t=T. A T already past fails the replay ("until: T ms is already past") and stops '
        "the steps.")
class Until(Value):
    t: int

    async def run(self, play: Play) -> str | None:
        now = play.host.now()
        if self.t < now:
            return f"until: {self.t} ms is already past (it is t={now} ms)"
        await play.sleep(self.t - now)
        return None


# -- the asking session ------------------------------------------------------------------------------------

_NOTHING = Const((True, None), "Nothing, or true.", expected="nothing (or true)")


@action("esc", _NOTHING, form="`esc` (or `esc:` / `esc: true`)", expected=_NOTHING.expected, bare=True,
        doc="Presses Esc in the asking session: its turn is interrupted; background work goes on. Between steps no "
        "call is running; to press Esc during a call use `esc_after`. At the idle prompt, a second Esc within 800 ms "
        "opens Claude Code's Rewind panel (a `rewind` event: no footer is drawn while it is open), and the next Esc "
        "closes it.")
class Esc(Value):
    async def run(self, play: Play) -> str | None:
        play.host.esc()
        return None


@action("reload", _NOTHING, form="`reload`", expected=_NOTHING.expected, bare=True,
        doc="Reloads the mod: `register` runs again in a fresh module, the old module's timers stop, the footer is "
        "redrawn, and `session.start` is raised again for the reloaded module (as Claude Code 2.1.328 does). Asked "
        "for while a turn runs (`at: T` during a call), it waits for the turn to end, as Claude Code does with a "
        "module changed mid-turn; its `reload` event then says when it was asked (`asked`).")
class Reload(Value):
    async def run(self, play: Play) -> str | None:
        await play.host.reload()
        return None


@action("continue", _NOTHING, form="`continue`", expected=_NOTHING.expected, bare=True,
        doc="`/exit`, then `claude --continue`: a new Claude Code process. Whatever ran in the old one stops; the "
        "module is loaded fresh (its session host reads the state the session keeps) and `session.start` is "
        "raised; Claude Code reports every agent it had answered `async_launched` as failed (a `notification` "
        "event; the model reads it with the next `prompt`), as 2.1.328 does.")
class Continue(Value):
    async def run(self, play: Play) -> str | None:
        await play.host.continue_session("continue")
        return None


@action("resume", _NOTHING, form="`resume`", expected=_NOTHING.expected, bare=True,
        doc="`/exit`, then `claude --resume <session id>`: the same as `continue` (2.1.328 keeps the session id).")
class Resume(Value):
    async def run(self, play: Play) -> str | None:
        await play.host.continue_session("resume")
        return None


@action("host.dies", _NOTHING, form="`host.dies`", expected=_NOTHING.expected, bare=True,
        doc="The plugin's session host dies: the mod's memory and timers are gone, its kept state is not. The next "
        "call, prompt or footer redraw starts another (`host.start`), and with workers counted (or an open under "
        "way) the module does 5 s later by itself. As `at: T` mid-open: the call is denied (lich may have the "
        "task), the open runs on, and the next host counts the worker it made.")
class HostDies(Value):
    async def run(self, play: Play) -> str | None:
        play.host.host_dies()
        return None


@action("prompt", TextKind("What the person types."), form="`prompt: TEXT`", expected="the prompt's text",
        doc="The person types a prompt: `prompt.submit` runs down the hooks; a `prompt` event records it with the "
        "notifications the model reads with it and the context the hooks put beside it.")
class Prompt(Value):
    text: str

    async def run(self, play: Play) -> str | None:
        await play.host.prompt(self.text)
        return None


@action("footer", _NOTHING, form="`footer`", expected=_NOTHING.expected, bare=True,
        doc="Draws the footer now (a `footer` event). The footer is also redrawn by itself whenever the mod asks.")
class Footer(Value):
    async def run(self, play: Play) -> str | None:
        await play.host.render_footer()
        return None


_INTERACTIVE = RecordKind([Field("interactive", Bool("Default true."), default=True)], lambda interactive: interactive)


@action("session.start", AnyOf(Bool(), _INTERACTIVE, description="Whether the session is interactive: true, false, "
                               "or {interactive: …}."),
        form="`session.start`, `session.start: false`, `session.start: {interactive: false}`",
        expected="true, false or {interactive: …}", bare=True,
        doc="Raises `session.start` again; interactive unless `false`.")
class SessionStart(Value):
    interactive: bool = True

    async def run(self, play: Play) -> str | None:
        await play.host.start_session(self.interactive)
        return None


@action("mode", PERMISSION_MODE, form="`mode: MODE`", expected=PERMISSION_MODE.expected,
        doc="The person switches the session's permission mode (Shift+Tab) to MODE (`plan`, `default`, "
        "`acceptEdits`, …); later calls are made in it and agent.spawn carries it as `permissionMode`. Records a "
        "`mode` event.")
class Mode(Value):
    mode: str

    async def run(self, play: Play) -> str | None:
        play.host.switch_mode(self.mode)
        return None


@action("errands", Nullable(TextKind(), "The text after `lich: `, or null to remove it."),
        form="`errands: TEXT` or `errands: null`", expected="the errands text, or null",
        doc="lich's own status module shows `lich: TEXT` in the footer (null removes it); the footer redraws.")
class Errands(Value):
    text: str | None

    async def run(self, play: Play) -> str | None:
        play.host.set_errands(self.text)
        return None


#: ``check`` without ``footer``: the footer is not checked (null checks that there is no lich line).
UNCHECKED = "<not checked>"


class Check(Value):
    count: int | None = None
    footer: str | None = UNCHECKED

    async def run(self, play: Play) -> str | None:
        count, footer = play.state()
        play.host.transcript.record("check", count=count, footer=footer)
        wrong = []
        if self.count is not None and count != self.count:
            wrong.append(f"the mod counts {count} workers, not {self.count}")
        if self.footer not in (UNCHECKED, footer):
            wrong.append(f"the footer's lich line is {footer!r}, not {self.footer!r}")
        return "check: " + "; ".join(wrong) if wrong else None


_CHECK = RecordKind(
    [
        Field("count", Int(minimum=0), "The number of workers the mod counts now."),
        Field("footer", Nullable(TextKind()), "The footer's lich line as last drawn, e.g. `lich: 1 worker` (null: no "
              "lich line, or no footer drawn yet).", default=UNCHECKED),
    ],
    Check,
    description="What must hold now; each given key is checked.",
)

action("check", _CHECK, form="`check: {count: N, footer: TEXT}`", expected="{count, footer}",
       make=lambda value: value,
       doc="Reads the mod's state now without drawing the footer: the workers it counts and the lich line last "
       "drawn. Records a `check` event; a key given that does not hold fails the replay there.")(Check)


@action(
    "workflow",
    RecordKind(
        [
            Field("description", TextKind("The agent's description."), default=""),
            Field("prompt", TextKind("The agent's prompt."), default=""),
        ],
        description="The agent's description and prompt (default empty).",
    ),
    form="`workflow: {description, prompt}`", expected="{description, prompt}",
    make=lambda value: Workflow(**value),
    doc="A workflow step spawns an agent directly, with no Agent tool call. Its id is `workflow_1`, `workflow_2`, …",
)
class Workflow(Value):
    description: str = ""
    prompt: str = ""

    async def run(self, play: Play) -> str | None:
        await play.workflow(self.description, self.prompt)
        return None


#: What an ``at:`` step may do at its time.
TIMED = ("esc", "reload", "footer", "session.start", "errands", "check", "mode", "host.dies")


class At(Value):
    """``at: T`` with one action: the action happens at virtual time T while the next steps go on."""

    t: int
    step: model.Step

    async def run(self, play: Play) -> str | None:
        return play.at(self.t, self.step)


class _At(StepKind):
    key = "at"
    form = "`at: T` + one of " + ", ".join(f"`{k}`" for k in TIMED)
    doc = ("Does the action at t=T (virtual ms since the start), while the steps after this one go on: Esc in the "
           "middle of a call, a reload or a `session.start` between two reads, errands at a given time. The step "
           "itself ends at once; a T already past fails the replay; a T after the last step never comes.")

    def read(self, r: Reader, item: YMap, path: str, ids: Ids) -> model.Step | None:
        t = Ms().read(r, item, "at", item["at"], f"{path}.at")
        actions = [k for k in item if k != "at"]
        if len(actions) != 1 or actions[0] not in TIMED:
            got = ", ".join(actions) or "none"
            r.fail(item, "at", f"{path}: 'at' takes one action of {', '.join(TIMED)} (got {got})")
            return None
        (key,) = actions
        one = YMap({key: item[key]})
        one.line, one.key_lines = item.line, {key: item.line_of(key)}
        bare = item[key] is None and KINDS[key].bare
        step = KINDS[key].read_bare() if bare else KINDS[key].read(r, one, path, ids)
        if step is None or t is FAILED:
            return None
        return At(t, step)

    def schema(self, defs: Defs) -> Schema:
        return {
            "description": self.doc,
            "type": "object",
            "required": ["at"],
            "minProperties": 2,
            "maxProperties": 2,
            "additionalProperties": False,
            "properties": {
                "at": Ms("The virtual time, ms since the start.").schema(defs),
                **{k: KINDS[k].schema(defs)["properties"][k] for k in TIMED},
            },
        }


KINDS["at"] = _At()


# -- the list of steps -------------------------------------------------------------------------------------

BARE = {key for key, kind in KINDS.items() if kind.bare}


class Steps(Kind):
    """``steps``: the list, each step found by its key; then the checks across steps."""

    expected = "a list of steps"

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError("steps are read, with their problems, never only accepted")

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YList):
            r.fail(where, key, "steps: expected a list of steps")
            return FAILED
        ids = Ids()
        steps: list[model.Step] = []
        lines: list[int] = []
        ok = True
        for i, item in enumerate(value):
            step = self.read_one(r, value, i, item, f"steps[{i}]", ids)
            if step is None:
                ok = False
            else:
                steps.append(step)
                lines.append(i)
        _check_calls(r, value, steps, lines)
        return tuple(steps) if ok else FAILED

    @staticmethod
    def read_one(r: Reader, steps: YList, i: int, item: Any, path: str, ids: Ids) -> model.Step | None:
        if isinstance(item, str):
            if item in BARE:
                return KINDS[item].read_bare()
            r.fail(steps, i, f"{path}: unknown step {item!r}; bare steps are {', '.join(sorted(BARE))}")
            return None
        if not isinstance(item, YMap) or not item:
            r.fail(steps, i, f"{path}: expected a step (a mapping such as 'call:' or a bare word such as 'esc')")
            return None
        for kind in _SHARED:
            if kind.key in item:
                return kind.read(r, item, path, ids)
        if len(item) != 1:
            r.fail(steps, i, f"{path}: one action per step (got {', '.join(item)})")
            return None
        (key,) = item
        if key not in KINDS:
            r.fail(item, key, f"{path}: unknown step {key!r}{did_you_mean(key, KINDS)}")
            return None
        return KINDS[key].read(r, item, path, ids)

    def schema(self, defs: Defs) -> Schema:
        if "step" not in defs:
            defs["step"] = {}
            defs["step"] = {
                "description": "A bare word (" + ", ".join(k for k in KINDS if k in BARE) + ") or a mapping with one "
                "action.",
                "anyOf": [
                    {"description": "A step without a value.", "type": "string",
                     "enum": [k for k in KINDS if k in BARE]},
                    *(kind.schema(defs) for kind in KINDS.values()),
                ],
            }
        return {"type": "array", "items": {"$ref": "#/$defs/step"}}


#: The kinds that take keys besides their own (the call keys), found by their key among the others, in
#: this order (a taskstop step that also holds ``call`` is a taskstop with a key too many).
_SHARED = [*_CALL_KINDS, KINDS["parallel"], KINDS["at"]]


def _check_calls(r: Reader, steps: YList, read: list[model.Step], lines: list[int]) -> None:
    """Across steps: each call id once (Claude Code never reuses one), and one script per prompt."""
    seen_ids: set[str] = set()
    scripts: dict[str, OpenScript] = {}
    for step, i in zip(read, lines, strict=True):
        for call in step.calls if isinstance(step, CallStep) else ():
            if call.id in seen_ids:
                r.fail(steps, i, f"steps: the call id {call.id!r} is used twice; give each call its own id")
            seen_ids.add(call.id)
            prompt = call.input.get("prompt")
            if call.lich is None or not isinstance(prompt, str):
                continue
            if prompt in scripts and scripts[prompt] != call.lich:
                r.fail(steps, i, f"steps: two calls with the prompt {prompt!r} are scripted differently; "
                       "lich tells opens apart by their prompt, so give them different prompts")
            scripts[prompt] = call.lich


def opens(steps: tuple[model.Step, ...]) -> dict[str, OpenScript]:
    """Each call's own ``lich:`` by the call's prompt (the last one given for a prompt)."""
    found: dict[str, OpenScript] = {}
    for step in steps:
        for call in step.calls if isinstance(step, CallStep) else ():
            prompt = call.input.get("prompt")
            if call.lich is not None and isinstance(prompt, str):
                found[prompt] = call.lich
    return found


def steps_table() -> str:
    """The table of step kinds in docs/scenarios.md, from the kinds themselves."""
    rows = ["| Step | Form | Meaning |", "|---|---|---|"]
    rows += [f"| {kind.key} | {kind.form} | {kind.doc} |" for kind in KINDS.values()]
    return "\n".join(rows)
