"""The fake engine's hook chain: simulator/host/registry.py (who runs, in what order) and simulator/host/chain.py
(``next``, budgets, fail-open), as measured on Claude Code 2.1.328. Every ``async def`` test runs on the
virtual loop (tests/conftest.py): a budget of 10 s costs nothing real."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agent_cards.engine import ENGINE, Event, Hook, HookResult, Origin
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host import results
from agent_cards_simulator.host.chain import BUDGET_MS, LINGER_MS, AbortSignal, Budget, Chain, Invocation
from agent_cards_simulator.host.registry import TIERS, LoadError, Registry

CALL: Event = {"tool": "Agent", "tool_use_id": "toolu_1", "description": "d", "prompt": "p"}


def now_ms() -> int:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)  # the test runs on virtual time, or its times mean nothing
    return loop.now_ms()


class FakeHost:
    """A host bound to one invocation: ``wait`` is a host call, so it pauses that hook's budget."""

    def __init__(self, invocation: Invocation) -> None:
        self.invocation = invocation

    async def wait(self, ms: float) -> None:
        with self.invocation.budget.suspended():
            await asyncio.sleep(ms / 1000)


class Engine:
    """A registry, a chain over it, and what came out: the report lines and the bottom's calls."""

    def __init__(self) -> None:
        self.registry = Registry()
        self.reports: list[str] = []
        self.bottom_calls: list[tuple[int, Event]] = []
        self.bottom_ms = 0.0
        self.invocations: list[Invocation] = []
        self.chain = Chain(self.registry, self._bind, self.reports.append)

    def _bind(self, invocation: Invocation) -> Any:
        self.invocations.append(invocation)
        return FakeHost(invocation)

    async def bottom(self, e: Event) -> HookResult:
        self.bottom_calls.append((now_ms(), dict(e)))
        if self.bottom_ms:
            await asyncio.sleep(self.bottom_ms / 1000)
        return {"result": f"native #{len(self.bottom_calls)}", "ref": len(self.bottom_calls)}

    def on(self, plugin: str, tier: str = "user") -> Any:
        return self.registry.on_for(plugin, tier)

    async def dispatch(
        self,
        e: Event | None = None,
        event: str = "tool.call",
        origin: Origin = ENGINE,
        signal: AbortSignal | None = None,
    ) -> HookResult:
        e = dict(CALL if e is None else e)
        return await self.chain.dispatch(event, e, self.bottom, origin, signal or AbortSignal())


def passing(trail: list[str], name: str) -> Hook:
    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        trail.append(name)
        return dict(await next(e))

    return hook


def answering(value: Any) -> Hook:
    async def hook(host: Any, e: Event, next: Any) -> Any:
        return value

    return hook


# --- registration: order and tiers -------------------------------------------------------------------------


async def test_tiers_run_prepend_user_inline_append_builtin_then_the_native() -> None:
    engine = Engine()
    trail: list[str] = []
    for tier in reversed(TIERS):  # registered bottom tier first: the tier decides, not the order
        engine.on(f"p-{tier}", tier)("tool.call", passing(trail, tier))
    answer = await engine.dispatch()
    assert trail == ["prepend", "user", "inline", "append", "builtin"]
    assert answer == {"result": "native #1", "ref": 1}
    assert TIERS == ("prepend", "user", "inline", "append", "builtin")


async def test_within_a_plugin_hooks_run_in_registration_order_matched_or_not() -> None:
    engine = Engine()
    trail: list[str] = []
    on = engine.on("p")
    on("tool.call", {"tool": "Agent"}, passing(trail, "matched-1"))
    on("tool.call", passing(trail, "unmatched"))
    on("tool.call", {"tool": "Agent"}, passing(trail, "matched-2"))
    await engine.dispatch()
    assert trail == ["matched-1", "unmatched", "matched-2"]

    engine = Engine()
    trail = []
    on = engine.on("p")
    on("tool.call", passing(trail, "unmatched"))
    on("tool.call", {"tool": "Agent"}, passing(trail, "matched"))
    await engine.dispatch()
    assert trail == ["unmatched", "matched"]


async def test_plugins_of_one_tier_run_in_the_order_they_registered() -> None:
    engine = Engine()
    trail: list[str] = []
    engine.on("first", "inline")("tool.call", passing(trail, "first"))
    engine.on("second", "inline")("tool.call", passing(trail, "second"))
    engine.on("plugin", "user")("tool.call", passing(trail, "plugin"))
    await engine.dispatch()
    assert trail == ["plugin", "first", "second"]


def test_an_unknown_tier_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tier"):
        Registry().on_for("p", "core")


async def test_a_hook_on_another_event_or_another_tool_does_not_run() -> None:
    engine = Engine()
    trail: list[str] = []
    on = engine.on("p")
    on("agent.spawn", passing(trail, "spawn"))
    on("tool.call", {"tool": "TaskStop"}, passing(trail, "taskstop"))
    on("tool.call", {"tool": "Agent"}, passing(trail, "agent"))
    await engine.dispatch()
    assert trail == ["agent"]
    assert engine.registry.hooks("agent.spawn") and not engine.registry.hooks("ui.render")


def test_a_second_matcherless_hook_on_one_event_from_one_plugin_is_refused() -> None:
    registry = Registry()
    on = registry.on_for("p")
    on("tool.call", answering({"result": 1}))
    with pytest.raises(LoadError, match=re.escape('p: hooks module did not load: on("tool.call") is registered twice '
                                                  "without a matcher")):
        on("tool.call", answering({"result": 2}))


def test_what_loads_beside_a_matcherless_hook() -> None:
    registry = Registry()
    on = registry.on_for("p")
    on("tool.call", answering({"result": 1}))
    on("tool.call", {"tool": "Agent"}, answering({"result": 2}))  # a matched one beside it
    on("tool.call", {"tool": "Agent"}, answering({"result": 3}))  # two matched ones
    on("agent.spawn", answering({"deny": "x"}))  # another event
    registry.on_for("q")("tool.call", answering({"result": 4}))  # another plugin
    registry.on_for("p", "append")("tool.call", {"tool": "X"}, answering({"result": 5}))
    assert len(registry.chain("tool.call", dict(CALL))) == 4


def test_dropping_a_plugin_lets_it_register_again() -> None:
    registry = Registry()
    registry.on_for("p")("tool.call", answering({"result": 1}))
    registry.on_for("q")("tool.call", answering({"result": 2}))
    registry.drop_plugin("p")
    registry.on_for("p")("tool.call", answering({"result": 3}))
    assert [r.plugin for r in registry.chain("tool.call", dict(CALL))] == ["q", "p"]


# --- matchers (the rule itself: tests/test_host_contract.py) ------------------------------------------------


async def test_matchers_choose_the_hooks_that_run() -> None:
    engine = Engine()
    trail: list[str] = []
    on = engine.on("p")
    on("tool.call", {"tool": re.compile("^Ag")}, passing(trail, "regex"))
    on("tool.call", {"tool": ["Bash", "Agent"]}, passing(trail, "list"))
    on("tool.call", {"tool": "Agent", "opt": {"a": 1}}, passing(trail, "object"))
    on("tool.call", {"tool": "Bash"}, passing(trail, "scalar-miss"))
    await engine.dispatch({**CALL, "opt": {"a": 1, "b": 2}})
    assert trail == ["regex", "list", "object"]
    trail.clear()
    await engine.dispatch({**CALL, "opt": {"a": 2}})
    assert trail == ["regex", "list"]


# --- next --------------------------------------------------------------------------------------------------


async def test_next_returns_what_is_beneath_exactly() -> None:
    engine, seen = Engine(), []

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        beneath = await next(e)
        seen.append(beneath)
        return {"result": "mine", "beneath": beneath}

    engine.on("p")("tool.call", hook)
    answer = await engine.dispatch()
    assert seen == [{"result": "native #1", "ref": 1}]
    assert answer == {"result": "mine", "beneath": {"result": "native #1", "ref": 1}}
    assert engine.reports == []


async def test_next_hands_the_hook_below_its_rewrite() -> None:
    engine, below = Engine(), []

    async def top(host: Any, e: Event, next: Any) -> HookResult:
        return dict(await next({**e, "prompt": "rewritten", "extra": 1}))

    async def low(host: Any, e: Event, next: Any) -> HookResult:
        below.append(e)
        return dict(await next(e))

    engine.on("a")("tool.call", top)
    engine.on("b", "append")("tool.call", low)
    await engine.dispatch()
    assert below[0]["prompt"] == "rewritten" and below[0]["extra"] == 1
    assert engine.bottom_calls[0][1]["prompt"] == "rewritten"


async def test_next_called_twice_runs_what_is_beneath_twice() -> None:
    engine = Engine()

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        first = await next(e)
        second = await next(e)
        return {"result": [first["result"], second["result"]]}

    engine.on("p")("tool.call", hook)
    assert await engine.dispatch() == {"result": ["native #1", "native #2"]}
    assert len(engine.bottom_calls) == 2


async def test_next_origin_is_the_engine_for_the_models_own_calls() -> None:
    engine, seen = Engine(), []

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        seen.append((next.origin, next.event, next.signal.aborted, next.budget))
        return dict(await next(e))

    engine.on("p")("tool.call", hook)
    await engine.dispatch()
    await engine.dispatch(origin=Origin("other-plugin", "user"))
    assert seen[0] == (ENGINE, "tool.call", False, {"ms": BUDGET_MS, "remainingMs": BUDGET_MS})
    assert seen[0][0] == Origin("engine", "core")
    assert seen[1][0] == Origin("other-plugin", "user")


async def test_next_without_the_event_fails_the_hook() -> None:
    engine = Engine()

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        return dict(await next())

    engine.on("p")("tool.call", hook)
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert engine.reports == [f"p's tool.call hook was skipped: p: HooksError: {results.NEXT_WITHOUT_EVENT}"]
    assert len(engine.bottom_calls) == 1


@pytest.mark.parametrize("key", ["tool", "tool_use_id", "agentId"])
async def test_a_rewrite_of_the_envelope_fails_the_hook(key: str) -> None:
    engine = Engine()

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        return dict(await next({**e, key: "changed"}))

    engine.on("p")("tool.call", hook)
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert engine.reports == [f"p's tool.call hook was skipped: p: HooksError: {results.envelope_rewrite(key)}"]
    assert engine.bottom_calls[0][1].get(key) == CALL.get(key)  # what is beneath got the call as it came


# --- fail-open ---------------------------------------------------------------------------------------------


def raising(trail: list[str]) -> Hook:
    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        trail.append("raising")
        raise RuntimeError("boom")

    return hook


@pytest.mark.parametrize(
    ("hook_answer", "report"),
    [
        (None, 'the on("tool.call") hook returned no result'),
        ({"nonsense": 1}, "returned neither { result } nor { deny }"),
        ({"deny": 5}, "returned neither { result } nor { deny }"),
        (["result"], 'the on("tool.call") hook returned list, not an object'),
        ("text", 'the on("tool.call") hook returned str, not an object'),
    ],
)
async def test_a_hook_answering_nothing_or_the_wrong_shape_is_skipped(hook_answer: Any, report: str) -> None:
    engine = Engine()
    trail: list[str] = []
    engine.on("p")("tool.call", answering(hook_answer))
    engine.on("q", "append")("tool.call", passing(trail, "beneath"))
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert trail == ["beneath"]
    assert engine.reports == [f"p's tool.call hook was skipped: p: {report}"]


async def test_a_hook_that_raises_is_skipped_and_what_is_beneath_runs() -> None:
    engine = Engine()
    trail: list[str] = []
    engine.on("p")("tool.call", raising(trail))
    engine.on("q", "append")("tool.call", passing(trail, "beneath"))
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert trail == ["raising", "beneath"]
    assert engine.reports == ["p's tool.call hook was skipped: p: RuntimeError: boom"]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"model": "m", "agentId": "a1"}, None),
        ({"model": "m"}, None),
        ({"deny": "no"}, None),
        ({"result": 1}, "returned neither { model, agentId } nor { deny }"),
        ({"deny": None}, "returned neither { model, agentId } nor { deny }"),
        (None, 'the on("agent.spawn") hook returned no result'),
    ],
)
def test_agent_spawn_answers(answer: Any, problem: str | None) -> None:
    assert results.shape_problem("agent.spawn", answer) == problem


async def test_valid_answers_stand_without_a_report() -> None:
    for answer in ({"result": "x"}, {"deny": "no"}, {"result": None, "context": ["c"]}):
        engine = Engine()
        engine.on("p")("tool.call", answering(answer))
        assert await engine.dispatch() == answer
        assert engine.reports == [] and engine.bottom_calls == []


@pytest.mark.parametrize("failure", ["raise", "none", "shape"])
async def test_a_hook_that_already_called_next_keeps_that_result_and_nothing_runs_twice(failure: str) -> None:
    engine = Engine()
    trail: list[str] = []

    async def hook(host: Any, e: Event, next: Any) -> Any:
        await next({**e, "prompt": "rewritten"})
        if failure == "raise":
            raise RuntimeError("after next")
        return None if failure == "none" else {"nonsense": 1}

    engine.on("p")("tool.call", hook)
    engine.on("q", "append")("tool.call", passing(trail, "beneath"))
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert trail == ["beneath"]
    assert len(engine.bottom_calls) == 1
    assert engine.bottom_calls[0][1]["prompt"] == "rewritten"  # the hook's rewrite stands too
    assert len(engine.reports) == 1 and engine.reports[0].startswith("p's tool.call hook was skipped: p: ")


# --- the 10 s budget (virtual time) ------------------------------------------------------------------------


def sleeping(ms: float, then: Callable[[Event, Any], Awaitable[Any]] | None = None) -> Hook:
    async def hook(host: Any, e: Event, next: Any) -> Any:
        await asyncio.sleep(ms / 1000)
        return await then(e, next) if then else {"result": "late"}

    return hook


async def test_a_hook_within_its_budget_stands() -> None:
    engine = Engine()
    engine.on("p")("tool.call", sleeping(BUDGET_MS - 100))
    assert await engine.dispatch() == {"result": "late"}
    assert engine.reports == []


async def test_a_hook_that_overruns_its_budget_is_skipped_at_10_s() -> None:
    engine = Engine()
    engine.on("p")("tool.call", sleeping(BUDGET_MS + 2_000))  # done before its linger ends

    answer = await engine.dispatch()
    assert engine.invocations[0].signal.aborted  # the overrun hook's signal is aborted
    assert not engine.invocations[0].finished  # it is not stopped: it lingers
    assert engine.chain.lingering
    await asyncio.sleep(10)
    assert answer == {"result": "native #1", "ref": 1}
    assert engine.bottom_calls[0][0] == pytest.approx(BUDGET_MS)
    assert engine.reports == [f"p's tool.call hook was skipped: p: exceeded {BUDGET_MS}ms budget"]
    assert engine.invocations[0].finished and not engine.chain.lingering


async def test_a_hook_still_running_after_its_linger_is_reported() -> None:
    engine = Engine()
    engine.on("p")("tool.call", sleeping(BUDGET_MS + LINGER_MS + 10_000))

    await engine.dispatch()
    await asyncio.sleep((LINGER_MS + 20_000) / 1000)
    assert engine.reports[0] == f"p's tool.call hook was skipped: p: exceeded {BUDGET_MS}ms budget"
    assert engine.reports[1].startswith(f"hook overran: p: still running {LINGER_MS}ms after its budget ran out")
    assert len(engine.reports) == 2


async def test_an_overrun_after_next_keeps_its_result_and_nothing_runs_twice() -> None:
    engine = Engine()
    trail: list[str] = []

    async def then(e: Event, next: Any) -> Any:
        await next(e)
        await asyncio.sleep(30)  # 6 s + 30 s of its own: over budget
        return {"result": "too late"}

    engine.on("p")("tool.call", sleeping(6_000, then))
    engine.on("q", "append")("tool.call", passing(trail, "beneath"))
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert trail == ["beneath"] and len(engine.bottom_calls) == 1
    assert engine.reports == [f"p's tool.call hook was skipped: p: exceeded {BUDGET_MS}ms budget"]


async def test_the_budget_stands_still_while_next_is_in_flight() -> None:
    engine, remaining = Engine(), []
    engine.bottom_ms = 60_000  # what is beneath takes a minute

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(4)
        beneath = dict(await next(e))
        remaining.append(next.budget["remainingMs"])
        await asyncio.sleep(4)
        return beneath

    engine.on("p")("tool.call", hook)

    answer = await engine.dispatch()
    assert answer == {"result": "native #1", "ref": 1}
    assert engine.reports == []
    assert now_ms() == pytest.approx(68_000)
    assert remaining[0] == pytest.approx(6_000)


async def test_host_calls_pause_the_budget() -> None:
    engine = Engine()

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(6)
        await host.wait(60_000)  # a host call of a minute costs the hook nothing
        await asyncio.sleep(3)
        return {"result": "in time"}

    engine.on("p")("tool.call", hook)
    assert await engine.dispatch() == {"result": "in time"}
    assert engine.reports == []


async def test_host_calls_pause_the_budget_but_own_time_still_runs_out() -> None:
    engine = Engine()

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(6)
        await host.wait(60_000)
        await asyncio.sleep(6)  # 12 s of its own: over at 6 + 60 + 4
        return {"result": "late"}

    engine.on("p")("tool.call", hook)
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert engine.bottom_calls[0][0] == pytest.approx(70_000)
    assert engine.reports == [f"p's tool.call hook was skipped: p: exceeded {BUDGET_MS}ms budget"]


async def test_each_hook_has_a_budget_of_its_own() -> None:
    engine = Engine()

    async def slow_top(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(8)
        return dict(await next(e))

    engine.on("p")("tool.call", slow_top)
    engine.on("q", "append")("tool.call", sleeping(8_000, lambda e, next: next(e)))
    assert await engine.dispatch() == {"result": "native #1", "ref": 1}
    assert engine.reports == []
    assert engine.bottom_calls[0][0] == pytest.approx(16_000)


# --- the abort signal and the budget object ---------------------------------------------------------------


async def test_an_aborted_turn_aborts_its_hooks_signals() -> None:
    engine, signals = Engine(), []

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        signals.append(next.signal)
        await next.signal.wait()
        return {"result": "aborted" if next.signal.aborted else "?"}

    engine.on("p")("tool.call", hook)
    turn = AbortSignal()

    asyncio.get_running_loop().call_later(3, turn.abort)
    assert await engine.dispatch(signal=turn) == {"result": "aborted"}
    assert signals[0].aborted and turn.aborted


def test_a_signal_born_under_an_aborted_parent_is_aborted() -> None:
    parent = AbortSignal()
    parent.abort()
    assert AbortSignal(parent).aborted
    child, grandchild = AbortSignal(AbortSignal()), None
    grandchild = AbortSignal(child)
    child.abort()
    assert grandchild.aborted
    sibling_parent = AbortSignal()
    sibling = AbortSignal(sibling_parent)
    assert not sibling.aborted


def test_budget_suspension_nests() -> None:
    budget = Budget()
    assert budget.remaining_ms == BUDGET_MS and budget.paused == 0
    with budget.suspended():
        with budget.suspended():
            assert budget.paused == 2
        assert budget.paused == 1
    assert budget.paused == 0
