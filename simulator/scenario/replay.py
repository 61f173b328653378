"""Replaying a scenario: the fake host, the fake lich and the mod on virtual time; out comes a transcript.

``replay(scenario)`` never raises for what happens inside the scenario: a stalled timeline, a step that
cannot run or an expectation that fails is a failure message in the result, so a contributor sees one
line, not a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simulator.clock import Stalled, VirtualEventLoop
from simulator.host.claude_code import FakeClaudeCode, Session
from simulator.host.process_run import Executor
from simulator.lich.model import LichScript, LichWorld
from simulator.runners.virtual import VirtualExecutor
from simulator.scenario import expect
from simulator.scenario.reader import Calls, CallStep, Scenario, Simple


@dataclass
class Replay:
    file: str
    title: str
    clauses: tuple[str, ...]
    events: list[dict[str, Any]]
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "title": self.title,
            "passed": self.passed,
            "clauses": list(self.clauses),
            "failures": self.failures,
            "events": self.events,
        }


def lich_script(scenario: Scenario) -> LichScript:
    return LichScript(**scenario.lich, by_prompt=dict(scenario.opens))


#: Builds the executor of one replay: how its ``process.run`` calls are answered (the seam between
#: the in-process mode and ``--processes``).
ExecutorFactory = Callable[[Scenario, LichWorld, VirtualEventLoop], Executor]


def virtual_executor(scenario: Scenario, world: LichWorld, loop: VirtualEventLoop) -> Executor:
    return VirtualExecutor(world, scenario.git, scenario.lich_installed, lambda: round(loop.time() * 1000))


def replay(scenario: Scenario, executor: ExecutorFactory = virtual_executor) -> Replay:
    loop = VirtualEventLoop()
    try:
        return loop.run_until_complete(_replay(scenario, loop, executor))
    finally:
        loop.close()


async def _replay(scenario: Scenario, loop: VirtualEventLoop, make_executor: ExecutorFactory) -> Replay:
    world = LichWorld(lich_script(scenario))
    host: FakeClaudeCode | None = None
    failures: list[str] = []
    try:
        session = Session(
            env=dict(scenario.env),
            cwd=scenario.cwd,
            modes=list(scenario.modes),
            permission=scenario.permission,
            agent_types=(*Session(env={}).agent_types, *scenario.agent_types),
        )
        executor = make_executor(scenario, world, loop)
        host = FakeClaudeCode(loop, session, executor, executor)
        if scenario.start:
            await host.start_session(scenario.interactive)
        for index, step in enumerate(scenario.steps):
            problem = await run_step(host, step)
            if problem:
                failures.append(f"steps[{index}]: {problem}")
                break
            await host.settle()  # the footer redraws a step caused land before the next step begins
        await host.settle()
    except Stalled as stalled:
        failures.append(str(stalled))
    finally:
        if host is not None:
            await host.close()
    events = host.transcript.events if host is not None else []
    failures += expect.failures(scenario.expect, events, scenario.file)
    return Replay(scenario.file, scenario.title, scenario.clauses, events, failures)


async def run_step(host: FakeClaudeCode, step: Calls | Simple) -> str | None:
    """Run one step; a problem the scenario made (not the mod) comes back as a message."""
    if isinstance(step, Calls):
        await _calls(host, step)
        return None
    action, value = step.action, step.value
    if action in ("wait", "until"):
        target = host.now() + value if action == "wait" else value
        if target < host.now():
            return f"until: {value} ms is already past (it is t={host.now()} ms)"
        await asyncio.sleep((target - host.now()) / 1000)
    elif action == "esc":
        host.esc()
    elif action == "reload":
        host.reload()
    elif action == "session.start":
        await host.start_session(bool(value))
    elif action == "footer":
        await host.render_footer()
    elif action == "errands":
        host.set_errands(value)
    elif action == "workflow":
        host.workflow_index += 1
        await host.workflow_step(value.get("description", ""), value.get("prompt", ""), host.workflow_index)
    return None


async def _calls(host: FakeClaudeCode, step: Calls) -> None:
    calls = [asyncio.ensure_future(_call(host, call)) for call in step.calls]
    pressed = None
    if step.esc_after is not None:
        pressed = asyncio.ensure_future(_esc_after(host, step.esc_after))
    await asyncio.gather(*calls)
    if pressed is not None:
        await pressed


async def _call(host: FakeClaudeCode, call: CallStep) -> None:
    permission = call.permission or host.session.permission
    await host.call(call.tool, dict(call.input), call.id, call.origin, call.agent, permission)


async def _esc_after(host: FakeClaudeCode, ms: int) -> None:
    await asyncio.sleep(ms / 1000)
    host.esc()
