"""The fake host where it was seen to differ from the real Claude Code 2.1.328, and now does as the engine does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cards.bridge.host import run_process
from agent_cards.engine import Event, HookResult, ProcessError
from agent_cards.host_contract import host_check
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host import results
from agent_cards_simulator.host.claude_code import FakeClaudeCode, Register, Session
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.lich.scripts import LichScript
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.scripted_git import NOT_A_REPO, GitScript, not_a_repository
from agent_cards_simulator.runners.virtual import VirtualExecutor
from agent_cards_simulator.scenario.reader import DEFAULT_ENV

# --- a git repository, by git's own answer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("exit_code", "stderr", "outside"),
    [
        (128, NOT_A_REPO, True),
        (128, "fatal: not a git repository (or any parent up to mount point /home)\nStopping at filesystem "
              "boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).\n", True),
        (128, "fatal: not a git repository: /home/dev/app/.git/worktrees/gone\n", True),  # a .git file pointing nowhere
        (128, "fatal: detected dubious ownership in repository at '/home/dev/app'\n", False),  # git found one
        (1, NOT_A_REPO, False),  # not git's status for it: git dies with 128
        (0, "", False),
    ],
)
def test_not_a_repository_is_git_dying_with_its_own_words(exit_code: int, stderr: str, outside: bool) -> None:
    assert not_a_repository(exit_code, stderr) is outside


def test_a_scripted_git_that_fails_without_words_of_its_own_is_outside_a_repository() -> None:
    assert GitScript(exit=128).is_repository() is False  # git's own message is the default
    assert GitScript(exit=128, stderr="fatal: not a git repository\n").is_repository() is False
    assert GitScript(missing=True).is_repository() is True  # no git on PATH: the project's .git is still there
    assert GitScript(branch=None).is_repository() is True


# --- a NUL in a command line: fails to start in every host -------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["/opt/lich/bin/lich", "open", "--prompt", "Fix\0 it"], "the argument at index 2 (zero-based) contains a null "
                                                                  "byte (\\0)"),
        (["/opt/lich\0/bin/lich"], "the executable path contains a null byte (\\0)"),
    ],
)
def test_a_nul_in_argv_fails_to_start_before_anything_runs(argv: list[str], why: str) -> None:
    with pytest.raises(ProcessError) as refused:
        host_check(argv, 1000)
    assert (refused.value.kind, str(refused.value)) == ("start", f"$.process.run({argv[0]}) failed to start: {why}")


async def test_the_bridge_refuses_a_nul_as_the_fake_host_does() -> None:
    """The bridge (the mod's host in the real engine) starts nothing either: the same ProcessError, not Python's
    own ValueError, so the mod falls back to the native agent with the same toast in every mode."""
    with pytest.raises(ProcessError) as refused:
        await run_process(["/bin/echo", "a\0b"], 1000)
    assert refused.value.kind == "start" and "contains a null byte" in str(refused.value)


# --- the end of a turn: Esc, or a "no" at the dialog ---------------------------------------------------------


@contextlib.asynccontextmanager
async def _host(register: Register) -> AsyncIterator[FakeClaudeCode]:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)
    executor = VirtualExecutor(LichWorld(LichScript()), GitScript(), True, loop.now_ms)
    host = FakeClaudeCode(loop, Session(env=dict(DEFAULT_ENV)), executor, register)
    try:
        yield host
    finally:
        await host.close()


AGENT = {"description": "Fix the auth flow", "prompt": "Fix the login form"}


async def test_a_call_passed_on_after_esc_runs_nothing_beneath_its_hooks() -> None:
    """The hook waits (as the mod's git read does), Esc comes, then the hook passes the call on: Claude Code
    answered at Esc, and beneath the hooks nothing runs: no permission check, no agent.spawn, no agent."""
    beneath: list[HookResult] = []
    spawned: list[Event] = []

    async def on_call(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(0.005)
        beneath.append(dict(await next(e)))
        return beneath[-1]

    async def on_spawn(host: Any, e: Event, next: Any) -> HookResult:
        spawned.append(e)
        return dict(await next(e))

    def register(on: Any) -> None:
        on("tool.call", {"tool": "Agent"}, on_call)
        on("agent.spawn", on_spawn)

    async with _host(register) as host:
        calling = asyncio.ensure_future(host.call("Agent", dict(AGENT), "toolu_1"))
        await asyncio.sleep(0.002)
        host.esc()
        answer = await calling
        await asyncio.sleep(0.01)
    assert answer["error"] == results.USER_REJECTED
    assert beneath == [results.error(results.USER_REJECTED)]
    assert spawned == [] and host.transcript.of("permission") == [] and host.transcript.of("native") == []


async def test_no_at_the_first_dialog_answers_every_call_of_the_turn_and_asks_no_more() -> None:
    async with _host(lambda on: None) as host:
        answers = await asyncio.gather(
            host.call("Agent", dict(AGENT), "toolu_1", permission=PermissionVerdict("ask", answer=False)),
            host.call("Agent", dict(AGENT), "toolu_2", permission=PermissionVerdict("ask", answer=True)),
        )
        later = await host.call("Agent", dict(AGENT), "toolu_3", permission=PermissionVerdict("ask", answer=True))
    assert [a.get("error") for a in answers] == [results.USER_REJECTED, results.USER_REJECTED]
    assert [(p["call"], p["outcome"]) for p in host.transcript.of("permission")] == [("toolu_1", "deny"),
                                                                                   ("toolu_3", "allow")]
    assert [n["call"] for n in host.transcript.of("native")] == ["toolu_3"]  # the next turn asks again
    assert later["result"]["status"] == "async_launched"


async def test_yes_at_the_first_dialog_leaves_the_second_call_its_own_dialog() -> None:
    async with _host(lambda on: None) as host:
        answers = await asyncio.gather(
            host.call("Agent", dict(AGENT), "toolu_1", permission=PermissionVerdict("ask", answer=True)),
            host.call("Agent", dict(AGENT), "toolu_2", permission=PermissionVerdict("ask", answer=False)),
        )
    assert answers[0]["result"]["status"] == "async_launched" and answers[1]["error"] == results.USER_REJECTED
    assert [(p["call"], p["outcome"]) for p in host.transcript.of("permission")] == [("toolu_1", "allow"),
                                                                                   ("toolu_2", "deny")]


# --- deny rules, as the settings write them ---------------------------------------------------------------------


def _recording(seen: list[Event]) -> Callable[[Any, Event, Any], Awaitable[HookResult]]:
    """A ``tool.call`` hook that keeps each event it is handed in ``seen`` and passes it on."""

    async def on_call(host: Any, e: Event, next: Any) -> HookResult:
        seen.append(e)
        return dict(await next(e))

    return on_call


async def test_the_plain_deny_rule_takes_the_tool_away_before_any_hook() -> None:
    seen: list[Event] = []
    async with _host(lambda on: on("tool.call", _recording(seen))) as host:
        answer = await host.call("Agent", dict(AGENT), "toolu_1", permission=PermissionVerdict("deny", rule="Agent"))
    assert answer["error"] == (
        "<tool_use_error>Error: No such tool available: Agent. Agent is disabled for this session, in subagents as "
        "well as here.</tool_use_error>"
    )
    assert seen == [] and [e["kind"] for e in host.transcript.events] == ["call", "answer"]


async def test_a_prompt_that_is_not_text_reaches_the_hooks_and_is_refused_before_the_permission() -> None:
    seen: list[Event] = []
    async with _host(lambda on: on("tool.call", _recording(seen))) as host:
        answer = await host.call("Agent", {**AGENT, "prompt": ["Fix", "it"]}, "toolu_1",
                                 permission=PermissionVerdict("ask", answer=True))
    assert answer["error"] == ("<tool_use_error>InputValidationError: Agent failed due to the following issue:\n"
                               "The parameter `prompt` type is expected as `string` but provided as `array`"
                               "</tool_use_error>")
    assert [e["prompt"] for e in seen] == [["Fix", "it"]]  # the hook ran for it
    assert [e["kind"] for e in host.transcript.events] == ["call", "answer"]  # no dialog, no spawn


@pytest.mark.parametrize(
    ("rule", "agent_type", "refusal"),
    [
        ("", "general-purpose", "Agent type 'general-purpose' has been denied by permission rule "
                                "'Agent(general-purpose)' from projectSettings."),
        ("Agent(Explore)", "Explore", "Agent type 'Explore' has been denied by permission rule 'Agent(Explore)' "
                                      "from projectSettings."),
        ("Agent(Explore)", "general-purpose", None),  # a rule for another type lets the call run
    ],
)
async def test_a_typed_deny_rule_refuses_its_type_in_the_engines_words(rule: str, agent_type: str,
                                                                        refusal: str | None) -> None:
    async with _host(lambda on: None) as host:
        answer = await host.call("Agent", dict(AGENT, subagent_type=agent_type), "toolu_1",
                                 permission=PermissionVerdict("deny", rule=rule))
    (checked,) = host.transcript.of("permission")
    if refusal is None:
        assert (checked["outcome"], checked["via"]) == ("allow", "mode")
        assert answer["result"]["status"] == "async_launched"
    else:
        assert (checked["outcome"], checked["via"], answer["error"]) == ("deny", "rule", refusal)


def test_the_real_tier_writes_each_deny_rule_as_the_scenario_names_it() -> None:
    from agent_cards_conformance.plan import plan, why_not
    from agent_cards_simulator.scenario.files import load_all

    root = Path(__file__).resolve().parents[1] / "scenarios" / "perm"
    scenarios, problems = load_all([root / "rule-deny.yaml", root / "rule-deny-plain.yaml"])
    assert problems == []
    rules = {Path(s.file).name: (why_not(s, []), plan(s, []).permission.deny_rules) for s in scenarios}
    assert rules == {"rule-deny.yaml": (None, ("Agent(general-purpose)",)), "rule-deny-plain.yaml": (None, ("Agent",))}


def test_a_no_at_one_dialog_excuses_the_answer_time_of_every_call_of_the_turn() -> None:
    """The real engine hands both rejections to the model only with the next prompt, seconds later."""
    from agent_cards_conformance.compare import compare

    def transcript(answered_at: int) -> list[dict[str, Any]]:
        return [
            {"t": 0, "kind": "call", "call": "toolu_0001", "tool": "Agent", "input": AGENT},
            {"t": 0, "kind": "call", "call": "toolu_0002", "tool": "Agent", "input": AGENT},
            {"t": 0, "kind": "permission", "call": "toolu_0001", "outcome": "deny", "via": "dialog"},
            {"t": answered_at, "kind": "answer", "call": "toolu_0001", "error": results.USER_REJECTED},
            {"t": answered_at, "kind": "answer", "call": "toolu_0002", "error": results.USER_REJECTED},
        ]

    assert compare(transcript(0), transcript(34_000), side_by_side=True).differences == []


# --- Esc twice at the idle prompt: the Rewind panel (measured on 2.1.328 and 2.1.332) ---------------------------


def _rewinds(host: FakeClaudeCode) -> list[tuple[int, bool]]:
    return [(e["t"], e["open"]) for e in host.transcript.of("rewind")]


async def test_esc_twice_at_the_idle_prompt_opens_the_rewind_panel_only_once_the_conversation_has_a_turn() -> None:
    async with _host(lambda on: None) as host:
        host.esc()
        host.esc()  # nothing to go back to yet: two presses, no panel
        assert _rewinds(host) == []
        await host.call("TaskStop", {"task_id": "nothing"}, "toolu_1")
        host.esc()
        host.esc()
        assert _rewinds(host) == [(0, True)]
        host.esc()  # the next Esc closes it
        assert _rewinds(host) == [(0, True), (0, False)]


async def test_two_escs_further_apart_than_the_double_press_are_two_presses() -> None:
    async with _host(lambda on: None) as host:
        await host.call("TaskStop", {"task_id": "nothing"}, "toolu_1")
        host.esc()
        await asyncio.sleep(0.801)
        host.esc()
        assert _rewinds(host) == []
        await asyncio.sleep(0.8)
        host.esc()  # 800 ms after the one before: a double press
        assert _rewinds(host) == [(1601, True)]


async def test_an_esc_that_interrupts_a_call_is_no_first_press_of_a_double_press() -> None:
    async def slow(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(1)
        return dict(await next(e))

    async with _host(lambda on: on("tool.call", {"tool": "Agent"}, slow)) as host:
        calling = asyncio.ensure_future(host.call("Agent", dict(AGENT), "toolu_1"))
        await asyncio.sleep(0.1)
        host.esc()  # the turn's call is interrupted
        await calling
        host.esc()  # the idle prompt's first press
        assert _rewinds(host) == []
        host.esc()
        assert _rewinds(host) == [(100, True)]


async def test_the_footer_is_not_drawn_under_the_rewind_panel_and_is_drawn_again_when_a_prompt_closes_it() -> None:
    async with _host(lambda on: None) as host:
        await host.call("TaskStop", {"task_id": "nothing"}, "toolu_1")
        host.esc()
        host.esc()
        await host.render_footer()
        assert host.transcript.of("footer") == []
        await host.prompt("Carry on")  # the person leaves the panel to type
        await host.settle()
        assert _rewinds(host) == [(0, True), (0, False)]
        assert len(host.transcript.of("footer")) == 1


# --- the module replaced one way at a time -------------------------------------------------------------------


async def test_a_reload_given_while_a_continue_is_under_way_reloads_the_new_processs_module_once() -> None:
    """Found by the fuzz (``at: 0`` reload, then ``continue``): the reload ran while the new process drew its
    screen, between the old module's drop and the new one's load, and the module was registered twice."""
    import agent_cards

    async with _host(agent_cards.register) as host:
        await asyncio.gather(host.continue_session("continue"), host.reload(), host.reload())
        kinds = [e["kind"] for e in host.transcript.events if e["kind"] in ("resume", "reload")]
    assert kinds == ["resume", "reload", "reload"]
    assert [e for e in host.transcript.events if e["kind"] == "report"] == []


def _slow_read(on: Any) -> None:
    """A hook that holds every Read call 5 s of virtual time: a turn that runs that long."""

    async def on_call(host: Any, e: Event, next: Any) -> HookResult:
        await asyncio.sleep(5)
        return dict(await next(e))

    on("tool.call", {"tool": "Read"}, on_call)


async def test_a_reload_asked_for_while_a_turn_runs_waits_for_the_turn_to_end() -> None:
    """Measured on 2.1.328 and 2.1.332: a module changed while a tool ran was reloaded once the turn ended,
    not at once. Asked for twice meanwhile, it is one reload, which says when it was first asked."""
    async with _host(_slow_read) as host:
        calling = asyncio.ensure_future(host.call("Read", {"file_path": "README.md"}, "toolu_1"))
        await asyncio.sleep(1)
        await host.reload()
        await asyncio.sleep(1)
        await host.reload()
        assert host.transcript.of("reload") == []
        answer = await calling
        reloads = host.transcript.of("reload")
    assert [(e["t"], e["asked"]) for e in reloads] == [(5000, 1000)]
    assert host.transcript.events.index(answer) < host.transcript.events.index(reloads[0])


async def test_a_reload_at_the_idle_prompt_is_at_once_and_says_nothing_of_a_wait() -> None:
    async with _host(_slow_read) as host:
        await host.call("Read", {"file_path": "README.md"}, "toolu_1")
        await host.reload()
        reloads = host.transcript.of("reload")
    assert [(e["t"], "asked" in e) for e in reloads] == [(5000, False)]


async def test_a_new_process_drops_the_reload_its_old_one_held_for_a_turn() -> None:
    """``/exit`` and ``claude --continue`` load the module fresh: the reload the old turn held never runs."""
    async with _host(_slow_read) as host:
        calling = asyncio.ensure_future(host.call("Read", {"file_path": "README.md"}, "toolu_1"))
        await asyncio.sleep(1)
        await host.reload()
        await host.continue_session("continue")
        await asyncio.gather(calling, return_exceptions=True)
        await host.call("Read", {"file_path": "README.md"}, "toolu_2")
    assert host.transcript.of("reload") == []
