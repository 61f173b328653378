"""The mod runs on any host that implements the engine Protocols, not only on the simulator.

A minimal host written here (a real asyncio loop, no simulator import) drives ``agent_cards`` through
``register(on)`` the way a bridge to the real engine would: the hooks it registers, a taken call from
``tool.call`` through ``agent.spawn``, and the state kept in a store the host owns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import agent_cards
from agent_cards.engine import ENGINE, Event, Hook, HookResult, Origin, ProcessError, ProcessResult, Timer
from agent_cards.record import Record, field
from agent_cards.state import MemoryStore, ModState, Worker
from agent_cards.texts import agent_text

OPENED = {
    "id": "77aa", "label": "Session 5", "name": "session-5-77aa", "path": "/srv/app",
    "delivery": {"ticket": "t1", "target": "Session 5", "status": "pending", "answer": ""},
}


class MiniHost(Record):
    env_values: dict[str, str]
    runs: list[tuple[list[str], int]] = field(default_factory=list)
    toasts: list[str] = field(default_factory=list)
    timers: list[tuple[int, Timer]] = field(default_factory=list)

    # Host
    @property
    def env(self) -> MiniHost:
        return self

    @property
    def process(self) -> MiniHost:
        return self

    @property
    def ui(self) -> MiniHost:
        return self

    @property
    def clock(self) -> MiniHost:
        return self

    def get(self, name: str, /) -> str | None:
        return self.env_values.get(name)

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = 30_000) -> ProcessResult:
        self.runs.append((list(argv), timeout_ms))
        if argv[1:2] == ["open"]:
            return ProcessResult(0, json.dumps(OPENED) + "\n", "")
        return ProcessResult(0, "[]\n", "")

    async def toast(self, text: str, /) -> None:
        self.toasts.append(text)

    def invalidate(self, event: str, /) -> None:
        pass

    def now(self) -> int:
        return 1_000

    def after(self, ms: int, fn: Timer, /) -> None:
        self.timers.append((ms, fn))

    def every(self, ms: int, fn: Timer, /) -> None:
        self.timers.append((ms, fn))


class MiniNext(Record):
    beneath: Any
    origin: Origin = ENGINE
    event: str = "tool.call"

    class _AbortFlag(Record):
        aborted: bool = False

    signal: _AbortFlag = field(default_factory=_AbortFlag)

    async def __call__(self, e: Event, /) -> HookResult:
        result: HookResult = await self.beneath(e)
        return result


ENV = {"LICH_BIN": "/usr/local/bin/lich", "LICH_SESSION_ID": "ab12", "LICH_SUBAGENT_DEPTH": "0"}


def registered(store: MemoryStore) -> dict[str, list[tuple[Any, Hook]]]:
    hooks: dict[str, list[tuple[Any, Hook]]] = {}

    def on(event: str, *args: Any) -> None:
        matcher, hook = (None, args[0]) if len(args) == 1 else (args[0], args[1])
        hooks.setdefault(event, []).append((matcher, hook))

    agent_cards.register(on, store)
    return hooks


def test_register_asks_for_the_measured_hooks() -> None:
    hooks = registered(MemoryStore())
    assert {event: [m for m, _ in pairs] for event, pairs in hooks.items()} == {
        "session.start": [{"isInteractive": True}],
        "tool.call": [{"tool": "Agent"}, {"tool": "TaskStop"}],
        "agent.spawn": [None],
        "ui.render": [{"component": "SessionMode"}],
        "prompt.submit": [None],
    }


async def test_a_taken_call_on_a_hand_written_host() -> None:
    store = MemoryStore()
    hooks = registered(store)
    host = MiniHost(dict(ENV))
    start = hooks["session.start"][0][1]

    async def started(e: Event) -> HookResult:
        return {}

    await start(host, {"isInteractive": True}, MiniNext(started, event="session.start"))
    assert store.get().interactive

    spawn_hook = hooks["agent.spawn"][0][1]
    call_hook = hooks["tool.call"][0][1]
    spawned: list[HookResult] = []

    async def permission_then_spawn(e: Event) -> HookResult:
        async def native(e: Event) -> HookResult:
            raise AssertionError("the native agent must not run for a taken call")

        answer = await spawn_hook(host, e, MiniNext(native, event="agent.spawn"))
        assert answer is not None
        spawned.append(answer)
        return {"isError": True, "text": f"Subagent spawn denied by a plugin: {answer['deny']}"}

    e: Event = {"tool": "Agent", "tool_use_id": "toolu_9", "description": "Tidy", "prompt": "Tidy the docs"}
    answer = await call_hook(host, e, MiniNext(permission_then_spawn))
    assert answer is not None
    assert answer["result"] == {
        "status": "async_launched", "agentId": "session-5-77aa", "description": "Tidy",
        "prompt": "Tidy the docs", "outputFile": "",
    }
    assert "Session 5" in answer["context"][0]
    assert host.runs == [
        (["/usr/local/bin/lich", "open", "--kind", "claude", "--subagent", "--prompt", "Tidy the docs", "--json"],
         120_000)
    ]
    assert "deny" in spawned[0] and host.toasts == []
    assert [w.name for w in store.get().workers] == ["session-5-77aa"]
    assert [ms for ms, _ in host.timers] == [5_000]


async def test_state_is_one_serializable_value_a_host_can_keep() -> None:
    store = MemoryStore()
    hooks = registered(store)
    host = MiniHost(dict(ENV))
    await hooks["session.start"][0][1](host, {"isInteractive": True}, MiniNext(lambda e: _empty()))
    kept = json.dumps(store.get().to_json())
    assert ModState.from_json(json.loads(kept)) == store.get()


async def _empty() -> HookResult:
    return {}


async def test_a_refused_call_opens_nothing_and_a_later_spawn_of_its_id_goes_native() -> None:
    """PERM-REFUSED: the kept ``Opening`` goes with the call; no decision outlives it."""
    store = MemoryStore(ModState(interactive=True))
    hooks = registered(store)
    host = MiniHost(dict(ENV))
    call_hook, spawn_hook = hooks["tool.call"][0][1], hooks["agent.spawn"][0][1]

    async def refused(e: Event) -> HookResult:
        return {"isError": True, "text": "The user doesn't want to proceed with this tool use."}

    e: Event = {"tool": "Agent", "tool_use_id": "toolu_9", "description": "Tidy", "prompt": "Tidy the docs"}
    assert await call_hook(host, e, MiniNext(refused)) == await refused(e)

    async def native(e: Event) -> HookResult:
        return {"model": "m", "agentId": "a1"}

    assert await spawn_hook(host, {"tool_use_id": "toolu_9"}, MiniNext(native, event="agent.spawn")) == await native(e)
    assert host.runs == [] and host.toasts == [] and store.get().workers == ()


async def test_taskstop_on_a_hand_written_host() -> None:
    worker = Worker("session-5-77aa", "Session 5", "Tidy", shared=True)
    store = MemoryStore(ModState(interactive=True, lich_bin="/usr/local/bin/lich", workers=(worker,)))
    hooks = registered(store)
    host = MiniHost(dict(ENV))
    stop_hook = hooks["tool.call"][1][1]

    async def claude_code(e: Event) -> HookResult:
        return {"isError": True, "text": f"No task found with ID: {e['task_id']}"}

    other = await stop_hook(host, {"tool": "TaskStop", "task_id": "b1"}, MiniNext(claude_code))
    assert other == {"isError": True, "text": "No task found with ID: b1"}
    answer = await stop_hook(host, {"tool": "TaskStop", "task_id": worker.name}, MiniNext(claude_code))
    assert answer == {"result": {"message": "Successfully stopped task: session-5-77aa (Tidy)",
                                 "task_id": "session-5-77aa", "task_type": "local_agent", "command": "Tidy"}}
    assert host.runs == [(["/usr/local/bin/lich", "close", "session-5-77aa"], 30_000)]
    assert store.get().workers == ()


class RefusingHost(MiniHost):
    """A host whose lich refuses every stop (``close`` exits 1)."""

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = 30_000) -> ProcessResult:
        self.runs.append((list(argv), timeout_ms))
        return ProcessResult(1, "", "error: the session is busy\n")


async def test_a_refused_taskstop_is_worded_in_the_prompt_language() -> None:
    worker = Worker("session-5-77aa", "Session 5", "Tidy", shared=True)
    denials = []
    for lang in ("", "es"):
        store = MemoryStore(ModState(interactive=True, lich_bin="/usr/local/bin/lich", workers=(worker,)))
        stop_hook = registered(store)["tool.call"][1][1]
        host = RefusingHost({**ENV, "LICH_PROMPT_LANG": lang} if lang else dict(ENV))
        answer = await stop_hook(host, {"tool": "TaskStop", "task_id": worker.name}, MiniNext(_empty_of))
        assert answer is not None and store.get().workers == (worker,)  # STOP-REFUSED: it still counts
        denials.append(answer["deny"])
    english, spanish = denials
    assert "the session is busy" in english and "the session is busy" in spanish
    assert english != spanish


async def _empty_of(e: Event) -> HookResult:
    return {}


class FailingHost(MiniHost):
    """A host on which every command fails to run (``$.process.run`` raises)."""

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = 30_000) -> ProcessResult:
        self.runs.append((list(argv), timeout_ms))
        raise ProcessError(f"$.process.run({argv[0]}) timed out after {timeout_ms} ms", "timeout")


async def test_a_taskstop_whose_stop_failed_to_run_is_denied_with_the_reason_and_the_worker_still_counts() -> None:
    worker = Worker("session-5-77aa", "Session 5", "Tidy", shared=True)
    store = MemoryStore(ModState(interactive=True, lich_bin="/usr/local/bin/lich", workers=(worker,)))
    stop_hook = registered(store)["tool.call"][1][1]
    host = FailingHost(dict(ENV))
    answer = await stop_hook(host, {"tool": "TaskStop", "task_id": worker.name}, MiniNext(_empty_of))
    assert host.runs == [(["/usr/local/bin/lich", "close", worker.name], 30_000)]
    assert answer == {"deny": agent_text(None, "deny.stop_refused", label="Session 5", reason="$.process.run("
                                        "/usr/local/bin/lich) timed out after 30000 ms")}
    assert store.get().workers == (worker,)


async def test_a_worker_lich_still_runs_is_told_once_beside_the_next_prompt_in_its_language() -> None:
    """After the session came back in a new process: the first prompt carries the note, the next none."""
    worker = Worker("session-5-77aa", "Session 5", "Tidy", shared=True)
    store = MemoryStore(ModState(interactive=True, lich_bin="/usr/local/bin/lich", workers=(worker,),
                                 reported_lost=(worker.name,)))
    prompt_hook = registered(store)["prompt.submit"][0][1]
    host = MiniHost({**ENV, "LICH_PROMPT_LANG": "es"})
    seen: list[Event] = []

    async def claude_code(e: Event) -> HookResult:
        seen.append(e)
        return {}

    for _ in range(2):
        await prompt_hook(host, {"prompt": "go on", "context": ["given"]}, MiniNext(claude_code, event="prompt.submit"))
    told = agent_text("es", "resume.still_running", label="Session 5", name="session-5-77aa")
    assert told != agent_text(None, "resume.still_running", label="Session 5", name="session-5-77aa")
    assert [e["context"] for e in seen] == [["given", told], ["given"]]
    assert store.get().reported_lost == ()
