"""simulator/host/claude_code.py: the fake Claude Code, driven directly with small test mods (and the real one).

The pipeline of an Agent call: tool.call hooks → permission check → agent.spawn hooks → the native agent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

import agent_cards
from agent_cards.engine import Event, HookResult, ProcessError
from agent_cards.record import Record, field
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host import results
from agent_cards_simulator.host.claude_code import MOD_PLUGIN, FakeClaudeCode, Register, Session
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.lich.scripts import LichScript, OpenScript
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.scripted_git import GitScript
from agent_cards_simulator.runners.virtual import VirtualExecutor
from agent_cards_simulator.scenario.reader import DEFAULT_ENV

BIN = DEFAULT_ENV["LICH_BIN"]
AGENT = {"description": "Fix the auth flow", "prompt": "Fix the login form"}
OPEN_ARGV = [BIN, "open", "--kind", "claude", "--subagent", "--prompt", "Fix the login form", "--json"]


@contextlib.asynccontextmanager
async def fake_host(register: Register = agent_cards.register,
                    script: LichScript | None = None) -> AsyncIterator[FakeClaudeCode]:
    """The host as the replay builds it, on the test's virtual loop, for the block; closed after it, once the
    footer redraws that are due have landed (as at a scenario's end)."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)  # tests/conftest.py: every async test runs on virtual time
    world = LichWorld(script or LichScript())
    executor = VirtualExecutor(world, GitScript(), True, loop.now_ms)
    host = FakeClaudeCode(loop, Session(env=dict(DEFAULT_ENV)), executor, register)
    try:
        yield host
        await host.settle()
    finally:
        await host.close()


def kinds(host: FakeClaudeCode) -> list[str]:
    return [e["kind"] for e in host.transcript.events]


class Spy(Record):
    """A tiny test mod: records what its hooks saw; each hook passes the event on (``next``)."""

    spawns: list[Event] = field(default_factory=list)
    calls: list[Event] = field(default_factory=list)
    spawn_answer: HookResult | None = None  # answer agent.spawn with this instead of passing it on

    async def on_call(self, host: Any, e: Event, next: Any) -> HookResult:
        self.calls.append(e)
        return dict(await next(e))

    async def on_spawn(self, host: Any, e: Event, next: Any) -> HookResult:
        self.spawns.append(e)
        if self.spawn_answer is not None:
            return self.spawn_answer
        return dict(await next(e))


def spy_register(spy: Spy) -> Register:
    def register(on: Any) -> Spy:
        on("tool.call", spy.on_call)
        on("agent.spawn", spy.on_spawn)
        return spy

    return register


# --- the permission check ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("permission", "via", "refusal"),
    [
        (PermissionVerdict("allow"), "mode", None),
        (PermissionVerdict("ask", answer=True), "dialog", None),
        (PermissionVerdict("deny"), "rule", results.rule_denied("general-purpose", "Agent(general-purpose)")),
        (PermissionVerdict("deny", rule="Agent(general-purpose)"), "rule",
         "Agent type 'general-purpose' has been denied by permission rule 'Agent(general-purpose)' from "
         "projectSettings."),
        (PermissionVerdict("ask", answer=False), "dialog", results.USER_REJECTED),
        (PermissionVerdict("ask"), "dialog", results.PERMISSION_DENIED_NOBODY),
        (PermissionVerdict("hook-deny", reason="no agents today"), "hook", results.hook_error("no agents today")),
        (PermissionVerdict("hook-deny"), "hook", results.hook_error("Blocked by hook")),
    ],
)
async def test_permission_outcomes(permission: PermissionVerdict, via: str, refusal: str | None) -> None:
    spy = Spy()
    answers: list[dict[str, Any]] = []

    async with fake_host(spy_register(spy)) as host:
        answers.append(await host.call("Agent", dict(AGENT), "toolu_1", permission=permission))
    (checked,) = host.transcript.of("permission")
    assert checked["via"] == via
    assert len(spy.calls) == 1  # tool.call hooks run before the permission check, whatever it says
    if refusal is None:
        assert checked["outcome"] == "allow"
        assert answers[0]["result"]["status"] == "async_launched"
        assert len(spy.spawns) == 1 and spy.spawns[0]["tool_use_id"] == "toolu_1"
        assert kinds(host) == ["call", "permission", "native", "spawn", "answer"]
    else:
        assert checked["outcome"] == "deny"
        assert answers[0]["error"] == refusal
        assert spy.spawns == []  # a refused call never raises agent.spawn
        assert kinds(host) == ["call", "permission", "answer"]


@pytest.mark.parametrize("isolation", [None, "worktree"])
async def test_a_refused_call_opens_nothing_in_lich(isolation: str | None) -> None:
    """PERM-REFUSED with the real mod: no lich process runs (only git, for an isolated call)."""
    tool_input = dict(AGENT, isolation=isolation) if isolation else dict(AGENT)

    async with fake_host() as host:
        await host.start_session(True)
        await host.call("Agent", tool_input, "toolu_1", permission=PermissionVerdict("ask", answer=False))
    runs = [e["argv"] for e in host.transcript.of("run")]
    assert runs == ([["git", "branch", "--show-current"]] if isolation else [])
    assert host.transcript.of("spawn") == []
    assert host.transcript.of("answer")[0]["error"] == results.USER_REJECTED


# --- agent.spawn ----------------------------------------------------------------------------------------------


async def test_a_deny_at_agent_spawn_is_the_agent_tools_error() -> None:
    spy = Spy(spawn_answer={"deny": "not here"})

    async with fake_host(spy_register(spy)) as host:
        await host.call("Agent", dict(AGENT), "toolu_1")
    (answer,) = host.transcript.of("answer")
    assert answer["error"] == results.spawn_denied("not here") == "Subagent spawn denied by a plugin: not here"
    assert "result" not in answer
    assert host.transcript.of("spawn")[0]["answer"] == {"deny": "not here"}
    assert host.transcript.of("native") == []  # no native agent


async def test_the_spawn_event_carries_the_call() -> None:
    spy = Spy()

    async with fake_host(spy_register(spy)) as host:
        await host.call("Agent", dict(AGENT, model="haiku"), "toolu_7")
    (spawn,) = spy.spawns
    assert spawn["tool_use_id"] == "toolu_7"
    assert (spawn["description"], spawn["prompt"], spawn["model"]) == (AGENT["description"], AGENT["prompt"], "haiku")
    assert spawn["subagentType"] == "general-purpose"
    assert spawn["provider"] == {"plugin": "engine", "tier": "core"}
    assert spawn["background"] is True and "parentAgentId" not in spawn and "isolation" not in spawn


async def test_the_real_mod_answers_with_lichs_outcome_instead_of_the_spawn_error() -> None:
    """PERM-DENY-SPAWN: the mod denies the spawn, then replaces the error with the answer it parked."""

    async with fake_host() as host:
        await host.start_session(True)
        await host.call("Agent", dict(AGENT), "toolu_1")
    (spawn,) = host.transcript.of("spawn")
    assert isinstance(spawn["answer"].get("deny"), str)
    (answer,) = host.transcript.of("answer")
    assert answer["result"]["status"] == "async_launched"
    assert "error" not in answer
    assert [e["argv"] for e in host.transcript.of("run")] == [OPEN_ARGV]
    assert host.transcript.of("native") == []


async def test_an_unknown_agent_type_keeps_claude_codes_own_error_and_spawns_nothing() -> None:
    spy = Spy()

    async with fake_host(spy_register(spy)) as host:
        await host.call("Agent", dict(AGENT, subagent_type="nobody"), "toolu_1")
    assert host.transcript.of("answer")[0]["error"].startswith("Agent type 'nobody' not found.")
    assert spy.spawns == []


# --- Esc --------------------------------------------------------------------------------------------------------


class Opener(Record):
    """A test mod whose Agent hook runs ``lich open`` itself and answers with how it ended."""

    signals: list[Any] = field(default_factory=list)

    async def on_call(self, host: Any, e: Event, next: Any) -> HookResult:
        self.signals.append(next.signal)
        try:
            result = await host.process.run(OPEN_ARGV, timeout_ms=120_000)
        except ProcessError as error:
            return {"deny": f"{error.kind}: {error}"}
        return {"result": result.stdout}

    def register(self, on: Any) -> Opener:
        on("tool.call", {"tool": "Agent"}, self.on_call)
        return self


async def test_esc_answers_the_call_with_the_engines_rejection_and_the_hook_goes_on() -> None:
    """2.1.328 through the bridge: the model reads the engine's rejection at once; the hook's signal is
    aborted, its run is not cut off, and what it returns later is dropped."""
    opener = Opener()
    answers: list[dict[str, Any]] = []

    async with fake_host(opener.register, LichScript(opens=(OpenScript(hang=True), OpenScript(ms=500)))) as host:
        host.loop.call_later(3, host.esc)  # while the open (which hangs) runs
        answers.append(await host.call("Agent", dict(AGENT), "toolu_1"))
        answers.append(await host.call("Agent", dict(AGENT), "toolu_2"))
        await asyncio.sleep(200)  # the first open runs on to its own timeout
    assert answers[0]["error"] == results.USER_REJECTED
    assert answers[0]["t"] == 3000
    assert opener.signals[0].aborted
    assert not opener.signals[1].aborted  # Esc ends that turn only: the next call runs
    assert "result" in answers[1] and answers[1]["t"] == 3500
    assert [e["t"] for e in host.transcript.of("esc")] == [3000]
    first_open = host.transcript.of("run")[0]
    assert first_open["error"] == "$.process.run(lich) aborted: still running after 120000ms"  # not cut by Esc
    assert len(host.transcript.of("answer")) == 2  # the hook's late answer reached nobody


async def test_without_esc_a_hanging_open_times_out_and_the_budget_stood_still() -> None:
    """The hook waited two minutes on a host call: no budget overrun, no report."""
    opener = Opener()
    answers: list[dict[str, Any]] = []

    async with fake_host(opener.register, LichScript(opens=(OpenScript(hang=True),))) as host:
        answers.append(await host.call("Agent", dict(AGENT), "toolu_1"))
    assert answers[0]["deny"] == "timeout: $.process.run(lich) aborted: still running after 120000ms"
    assert answers[0]["t"] == 120_000
    assert host.transcript.of("report") == []
    assert not opener.signals[0].aborted


async def test_a_hook_that_overruns_on_its_own_time_is_reported_and_skipped() -> None:
    async def slow(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(11)
        return {"deny": "too late"}

    def register(on: Any) -> None:
        on("tool.call", {"tool": "Agent"}, slow)

    async with fake_host(register) as host:
        await host.call("Agent", dict(AGENT), "toolu_1")
    (report,) = host.transcript.of("report")
    assert report["text"] == f"{MOD_PLUGIN}'s tool.call hook was skipped: {MOD_PLUGIN}: exceeded 10000ms budget"
    assert report["t"] == 10_000
    answer = host.transcript.of("answer")[0]
    assert answer["result"]["status"] == "async_launched"  # fail-open: the native agent ran
    assert answer["t"] == 10_000


# --- reload ---------------------------------------------------------------------------------------------------


class Ticker(Record):
    """One instance per load of the test module: its hook arms an ``every`` and an ``after`` timer."""

    calls: list[str] = field(default_factory=list)
    ticks: list[int] = field(default_factory=list)
    afters: list[int] = field(default_factory=list)

    async def on_call(self, host: Any, e: Event, next: Any) -> HookResult:
        self.calls.append(str(e["tool_use_id"]))
        clock = host.clock

        async def tick() -> None:
            self.ticks.append(clock.now())

        async def after() -> None:
            self.afters.append(clock.now())

        clock.every(1000, tick)
        clock.after(5000, after)
        return dict(await next(e))


async def test_reload_drops_the_old_modules_hooks_and_timers() -> None:
    loads: list[Ticker] = []

    def register(on: Any) -> Ticker:
        loads.append(Ticker())
        on("tool.call", {"tool": "Agent"}, loads[-1].on_call)
        return loads[-1]

    async with fake_host(register) as host:
        await host.call("Agent", dict(AGENT), "toolu_1")
        await asyncio.sleep(3.5)
        await host.reload()
        await asyncio.sleep(10)
        await host.call("Agent", dict(AGENT), "toolu_2")
        await asyncio.sleep(1.5)
    old, new = loads
    assert old.calls == ["toolu_1"] and new.calls == ["toolu_2"]
    assert old.ticks == [1000, 2000, 3000]  # stopped at the reload (t=3500)
    assert old.afters == []  # its 5 s timer was due after the reload
    assert new.ticks == [14500]
    assert host.mod is new
    assert host.transcript.of("reload")[0]["t"] == 3500


async def test_the_real_mod_reloads_without_registering_twice() -> None:
    async with fake_host() as host:
        first = host.mod
        await host.reload()
        await host.reload()
        assert host.mod is not first
    spawn_hooks = host.registry.chain("agent.spawn", {"tool_use_id": "x"})
    assert [r.plugin for r in spawn_hooks] == [MOD_PLUGIN]


async def test_reload_raises_session_start_again_for_the_reloaded_module_only() -> None:
    """2.1.328: the fresh module hears session.start again, so the next call is taken; other modules do not."""
    others: list[Event] = []

    async with fake_host() as host:
        async def other(_: Any, e: Event, next: Any) -> HookResult:
            others.append(e)
            return dict(await next(e))

        host.registry.on_for("someone-else")("session.start", other)
        await host.start_session(True)
        await host.reload()
        await host.call("Agent", dict(AGENT), "toolu_1")
    assert [e["interactive"] for e in host.transcript.of("session.start")] == [True, True]
    assert len(others) == 1
    assert host.transcript.of("native") == []
    assert host.transcript.of("run")[0]["argv"][1] == "open"


async def test_a_reload_before_any_session_start_raises_none() -> None:
    async with fake_host() as host:
        await host.reload()
        await host.call("Agent", dict(AGENT), "toolu_1")
    assert host.transcript.of("session.start") == []
    assert host.transcript.of("native")[0]["tool"] == "Agent"


# --- workflows ---------------------------------------------------------------------------------------------------


async def test_workflow_steps_raise_agent_spawn_without_tool_call() -> None:
    spy = Spy()

    async with fake_host(spy_register(spy)) as host:
        await host.workflow_step("Step one", "Do step one")
    assert spy.calls == []
    (spawn,) = spy.spawns
    assert spawn["workflow"] == {"runId": "run_1", "agentIndex": 1}
    assert (spawn["description"], spawn["prompt"]) == ("Step one", "Do step one")
    assert kinds(host) == ["native", "spawn"]


async def test_workflow_steps_stay_native_under_the_real_mod() -> None:
    async with fake_host() as host:
        await host.start_session(True)
        await host.workflow_step("Step one", "Do step one")
    assert host.transcript.of("run") == []
    assert host.transcript.of("call") == []
    assert "agentId" in host.transcript.of("spawn")[0]["answer"]


# --- the host a hook sees -------------------------------------------------------------------------------------


async def test_the_bound_host_reads_env_toasts_and_tells_time() -> None:
    seen: list[Any] = []

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(2)
        seen.extend([host.env.get("LICH_BIN"), host.env.get("NOT_SET"), host.clock.now()])
        await host.ui.toast("hello")
        return {"result": "ok"}

    def register(on: Any) -> None:
        on("tool.call", {"tool": "Agent"}, hook)

    async with fake_host(register) as host:
        await asyncio.sleep(1)
        await host.call("Agent", dict(AGENT), "toolu_1")
    assert seen == [BIN, None, 3000]
    assert host.transcript.of("toast") == [{"t": 3000, "kind": "toast", "text": "hello"}]


async def test_a_host_check_refuses_a_bad_argv() -> None:
    errors: list[str] = []

    async def hook(host: Any, e: Event, next: Any) -> HookResult:
        for argv, timeout in (([], 1000), ("lich", 1000), (["git"], 0), (["git"], 600_001)):
            try:
                await host.process.run(argv, timeout_ms=timeout)
            except ProcessError as error:
                errors.append(error.kind)
        return {"result": "ok"}

    def register(on: Any) -> None:
        on("tool.call", {"tool": "Agent"}, hook)

    async with fake_host(register) as host:
        await host.call("Agent", dict(AGENT), "toolu_1")
    assert errors == ["host", "host", "host", "host"]


# -- lich's notes: typed at the prompt, submitted between turns ---------------------------------------------

_NOTE_SCENARIOS = ("scenarios/note-after-turn.yaml", "scenarios/footer/rewind-panel.yaml",
                   "scenarios/resume/note-first.yaml")


def _note_verdicts() -> dict[str, bool]:
    from pathlib import Path

    from agent_cards_simulator.scenario.files import load_all
    from agent_cards_simulator.scenario.replay import replay

    root = Path(__file__).resolve().parents[1]
    verdicts = {}
    for file in _NOTE_SCENARIOS:
        [scenario], problems = load_all([root / file])
        assert not problems
        verdicts[file] = replay(scenario).passed
    return verdicts


@pytest.mark.parametrize(("held_by", "fails"), [
    ("the Rewind panel only", "scenarios/note-after-turn.yaml"),
    ("a turn only", "scenarios/footer/rewind-panel.yaml"),
])
def test_a_note_waits_for_the_turn_and_for_the_panel(held_by: str, fails: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A note is submitted once no turn runs and no Rewind panel covers the prompt; a host that forgot either
    fails the scenario that shows it, and only that one."""
    assert all(_note_verdicts().values())
    taken = {"the Rewind panel only": lambda self: self._composer.rewind,
             "a turn only": lambda self: bool(self._composer.busy)}[held_by]
    monkeypatch.setattr(FakeClaudeCode, "_prompt_taken", taken)
    assert {f for f, passed in _note_verdicts().items() if not passed} == {fails}


def test_a_note_goes_through_prompt_submit(monkeypatch: pytest.MonkeyPatch) -> None:
    """After --continue the first note carries what waited for a prompt; a note recorded without what
    prompt.submit and the waiting notifications put beside it fails the scenario that shows it."""
    original = FakeClaudeCode._submit

    async def bypassed(self: FakeClaudeCode, text: str) -> tuple[list[str], list[str]]:
        await original(self, text)
        return [], []

    monkeypatch.setattr(FakeClaudeCode, "_submit", bypassed)
    assert not _note_verdicts()["scenarios/resume/note-first.yaml"]
