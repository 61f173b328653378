"""Replaying a scenario: the fake host, the fake lich and the mod on virtual time; out comes a transcript.

``replay(scenario)`` never raises for what happens inside the scenario: a stalled timeline, a step that
cannot run or an expectation that fails is a failure message in the result, so a contributor sees one
line, not a traceback.

The scenario (:mod:`agent_cards_simulator.scenario.model`) holds the fake lich's script, the host's permission
verdicts and the scripted git as those layers' own records, which the replay hands over as they are; only
the host's session and a call's ``Origin`` are made here. Each step runs itself (:mod:`.steps`) on a
``Play``: the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import inspect
from collections.abc import Callable, Coroutine
from typing import Any

from agent_cards.engine import ENGINE, Origin
from agent_cards.record import Record, field
from agent_cards_simulator.clock import Stalled, VirtualEventLoop
from agent_cards_simulator.host.claude_code import MOD_PLUGIN, FakeClaudeCode, Session
from agent_cards_simulator.host.process_run import Executor
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.virtual import VirtualExecutor
from agent_cards_simulator.scenario import expect, model
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.scripted import scripted
from agent_cards_simulator.scenario.spec import MAX_MS
from agent_cards_simulator.scenario.steps import ToolCall


class Replay(Record):
    file: str
    title: str
    clauses: tuple[str, ...]
    events: list[dict[str, Any]]
    #: The verdict: each reason the file fails, a variant's named (``[name] …``); empty, it passed. Every
    #: reader of the verdict (the command's exit status, the pytest plugin, the fuzzer) reads this list.
    failures: list[str] = field(default_factory=list)
    variant: str | None = None  # the variant's name, for one variant of a file with ``variants:``
    #: A file with ``variants:``: one replay per variant (its own ``events`` are then empty).
    variants: list[Replay] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "file": self.file,
            "title": self.title,
            "passed": self.passed,
            "clauses": list(self.clauses),
            "failures": self.failures,
            "events": self.events,
        }
        if self.variant is not None:
            data["variant"] = self.variant
        if self.variants:
            data["variants"] = [
                {"name": v.variant, "passed": v.passed, "failures": v.failures, "events": v.events}
                for v in self.variants
            ]
        return data


def origin(name: str) -> Origin:
    """``engine``: the model on the main loop; any other name: a plugin that raises the call."""
    return ENGINE if name == "engine" else Origin(name, "user")


class Play:
    """What a step runs on (:mod:`.steps`): the host, and what the steps ask of it."""

    def __init__(self, host: FakeClaudeCode) -> None:
        self.host = host
        self.timed: set[asyncio.Task[Any]] = set()  # the ``at:`` steps still waiting for their time
        self.step = 0  # the index of the step under way (an ``at:`` step's problem names the step that set it)
        #: Problems of ``at:`` steps, by the index of their step: they come while later steps run, so
        #: they cannot stop the steps as a step's own problem does, but they fail the replay all the same.
        self.late: list[tuple[int, str]] = []

    def at(self, t: int, step: model.Step) -> str | None:
        """Run ``step`` at virtual time ``t`` while the next steps go on."""
        now = self.host.now()
        if t < now:
            return f"at: {t} ms is already past (it is t={now} ms)"
        index = self.step

        async def later() -> None:
            await self.sleep(t - now)
            problem = await step.run(self)
            if problem:
                self.late.append((index, f"at: {t}: {problem}"))

        task = asyncio.ensure_future(later())
        self.timed.add(task)
        task.add_done_callback(self.timed.discard)
        return None

    def worker_of(self, call_id: str) -> str | None:
        """The roster name (agentId) the Agent call ``call_id`` answered with, once it has answered."""
        for event in self.host.transcript.events:
            if event["kind"] == "answer" and event["call"] == call_id and isinstance(event.get("result"), dict):
                agent_id = event["result"].get("agentId")
                return agent_id if isinstance(agent_id, str) else None
        return None

    def state(self) -> tuple[int | None, str | None]:
        """The workers the mod counts now (None: no mod state to read) and the footer's lich line as last drawn."""
        store = getattr(self.host.mod, "store", None)
        count = len(store.get().workers) if store is not None else None
        footers = [e for e in self.host.transcript.events if e["kind"] == "footer"]
        return count, footers[-1]["line"] if footers else None

    async def sleep(self, ms: int) -> None:
        """Let ``ms`` of virtual time pass (never past ``MAX_MS``: the replay fails there instead)."""
        if self.host.now() + ms > MAX_MS:
            raise PastHorizon(f"the steps would run past t={MAX_MS} ms (a day of virtual time, the replay's limit)")
        await asyncio.sleep(ms / 1000)

    async def call(self, call: ToolCall) -> None:
        verdict = call.permission if call.permission is not None else self.host.session.permission
        await self.host.call(call.tool, dict(call.input), call.id, origin(call.origin), call.agent, verdict)

    async def workflow(self, description: str, prompt: str) -> None:
        await self.host.workflow_step(description, prompt)


#: Builds the executor of one replay: how its ``process.run`` calls are answered (the seam between
#: the in-process mode and ``--processes``).
ExecutorFactory = Callable[[Scenario, LichWorld, VirtualEventLoop], Executor]


def virtual_executor(scenario: Scenario, world: LichWorld, loop: VirtualEventLoop) -> Executor:
    return VirtualExecutor(world, scenario.session.git, scenario.lich.installed, loop.now_ms)


class PastHorizon(Exception):
    """A step would let virtual time pass ``MAX_MS``: the replay stops there, as for a stalled timeline."""


#: What a report names when it is about the mod (the engine's own words: a hook skipped, a hook that
#: overran, a timer that failed).
MOD_NAMES = (f"{MOD_PLUGIN}:", f"{MOD_PLUGIN}'s ")


def strict_failures(scenario: Scenario, events: list[dict[str, Any]]) -> list[str]:
    """A replay is strict: each report naming the mod fails the scenario, unless a ``report`` expectation
    (not a ``no report``) matches it, which says the scenario shows it on purpose."""
    wanted = [e for e in scenario.expect if e.kind == "report" and e.count != 0]
    out = []
    for event in events:
        if event["kind"] != "report" or not any(name in str(event.get("text")) for name in MOD_NAMES):
            continue
        if any(expect.matches(e.fields, event) for e in wanted):
            continue
        text = str(event.get("text"))
        shown = text if len(text) <= 300 else text[:300] + "…"
        out.append(f"{scenario.file}:1: the engine reported the mod at t={event.get('t')}: {shown} (a replay is "
                   "strict: a scenario that shows this on purpose says so with an expectation such as "
                   "'- report: {text: {contains: …}}')")
    return out


def replay(scenario: Scenario, executor: ExecutorFactory = virtual_executor) -> Replay:
    """The scenario's transcript; a file with ``variants:`` replays each variant on its own."""
    if scenario.variants:
        variants = [replay(v, executor) for v in scenario.variants]
        failures = [f"[{v.variant}] {f}" for v in variants for f in v.failures]
        return Replay(scenario.file, scenario.title, scenario.clauses, [], failures, variants=variants)
    loop = VirtualEventLoop()
    work = None
    with _CollectorTuned():
        try:
            work = _replay(scenario, loop, executor)
            return loop.run_until_complete(work)
        except BaseException:  # a Ctrl-C mid-replay: its tasks are ended here, not reported as destroyed
            _end_tasks(loop, work)
            raise
        finally:
            # A Ctrl-C before the loop took the coroutine: close it, so that no "never awaited" warning
            # follows the one line an interrupted replay prints.
            if work is not None and inspect.getcoroutinestate(work) == inspect.CORO_CREATED:
                work.close()
            loop.close()


def _end_tasks(loop: asyncio.AbstractEventLoop, main: Coroutine[Any, Any, Any] | None = None) -> None:
    """Cancel the tasks an interrupted replay left and let them unwind, as ``asyncio.run`` does.

    A task that cannot end is left to go without the loop reporting it destroyed while pending: the
    interrupt's doing, which the command says in its one line. The interrupt can land between the loop
    taking a callback off its ready queue and running it: when that callback was a task's wake-up, the
    task waits on a future already done and never runs again, whatever is cancelled. It can also land
    in the loop's ``call_soon`` as ``run_until_complete`` makes the task of ``main``, the replay's own
    coroutine: that task is then neither scheduled nor among the loop's tasks, and is left too."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        with contextlib.suppress(BaseException):  # a second Ctrl-C, or a task that will not end: give up
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    # Held, not weakly: a task that goes in a collection of cyclic garbage is out of a weak set by
    # the time it reports.
    left = frozenset(task for task in pending if not task.done())
    if left or main is not None:
        loop.set_exception_handler(functools.partial(_unless_left, left, main))


def _unless_left(left: frozenset[asyncio.Task[Any]], main: Coroutine[Any, Any, Any] | None,
                 loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's report, unless it is about a task :func:`_end_tasks` had to leave."""
    task = context.get("task")
    if task in left or (main is not None and isinstance(task, asyncio.Task) and task.get_coro() is main):
        return
    loop.default_exception_handler(context)


#: The collector's thresholds while a replay runs. A replay allocates in bursts (events,
#: futures, handles, the hooks' tasks) that reference counting mostly frees, while the tasks of its
#: parallel calls live through it: at Python's default (700, 10, 10) the middle generation was
#: collected every 7,000 allocations, walking every live task each time (about 10 % of a 256-call
#: replay); at these it is every 100,000 (about 4 %, alike from 64 to 512 calls).
REPLAY_GC_THRESHOLDS = (2_000, 50)


class _CollectorTuned:
    """While the outermost replay runs: what the process held before it is out of the collector's
    sight (``gc.freeze``; it cannot be the replay's garbage, and a collection the replay sets off then
    walks only the replay's own objects), and the young generations are collected less often. Both
    are put back after (``gc.unfreeze`` and ``gc.freeze`` each move one list, whatever its length).
    Left alone when the collector is off or someone else froze objects: theirs stay as they left them.

    The replay's own cycles (the host, its mod, the tasks, each holding the transcript) are collected
    at its end, while the rest is still frozen: the collection walks only what the replay made. Left
    to the collector's schedule, they were still there when the next replay froze what the process
    held, and thawed into the oldest generation, which is almost never walked: every transcript, with
    each 4 MiB output a run printed, stayed until a full collection, and a row of such cases added up."""

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    def __enter__(self) -> None:
        if not gc.isenabled() or gc.get_freeze_count():
            return
        self._saved = gc.get_threshold()
        young, middle, old = self._saved
        gc.freeze()
        gc.set_threshold(max(young, REPLAY_GC_THRESHOLDS[0]), max(middle, REPLAY_GC_THRESHOLDS[1]), old)

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            gc.collect()
            gc.set_threshold(*self._saved)
            gc.unfreeze()


async def _replay(scenario: Scenario, loop: VirtualEventLoop, make_executor: ExecutorFactory) -> Replay:
    world = LichWorld(scenario.lich)
    host: FakeClaudeCode | None = None
    play: Play | None = None
    failures: list[str] = []
    try:
        own = scenario.session
        session = Session(
            env=dict(own.env),
            cwd=own.cwd,
            modes=list(own.modes),
            permission=own.permission,
            permission_mode=own.permission_mode,
            agent_types=(*Session(env={}).agent_types, *own.agent_types),
            git_repo=own.git.is_repository(),
            keeps_state=own.data,
        )
        executor = scripted(scenario, make_executor(scenario, world, loop))
        host = FakeClaudeCode(loop, session, executor)
        play = Play(host)
        if own.start:
            await host.start_session(own.interactive)
        for index, step in enumerate(scenario.steps):
            play.step = index
            problem = await step.run(play)
            if problem:
                failures.append(_step_failure(scenario, index, problem))
                break
            await host.settle()  # the footer redraws a step caused land before the next step begins
        await host.finish_instant()
    except (Stalled, PastHorizon) as stalled:
        failures.append(str(stalled))
    finally:
        timed = list(play.timed) if play is not None else []
        for task in timed:  # an ``at:`` step later than the last step never happens
            task.cancel()
        await asyncio.gather(*timed, return_exceptions=True)
        if host is not None:
            await host.close()
    if play is not None:
        failures += [_step_failure(scenario, index, problem) for index, problem in play.late]
    events = host.transcript.events if host is not None else []
    failures += strict_failures(scenario, events)
    failures += expect.failures(scenario.expect, events, scenario.file)
    return Replay(scenario.file, scenario.title, scenario.clauses, events, failures, scenario.variant)


def _step_failure(scenario: Scenario, index: int, problem: str) -> str:
    """``FILE:LINE: steps[N]: …``, the line of the step, like an expectation's failure."""
    line = scenario.step_lines[index] if index < len(scenario.step_lines) else 1
    return f"{scenario.file}:{line}: steps[{index}]: {problem}"
