"""The mod for one Claude Code session, served step by step: its hooks, its state, its timers, its dispatches.

The module posts one step at a time (:meth:`BridgeSession.step`): an ``event`` starts the mod's hook number
``hook`` (the order of ``register``) as a dispatch, ``resume`` hands back what ``next(e)`` gave beneath,
``poll`` asks again after ``pending``, ``stats`` reads Python's own CPU time. Each answer comes within
:data:`STEP_WAIT_S`, with the toasts raised meanwhile; ``cancel`` names the dispatches the engine gave up on.

With ``AGENT_CARDS_BRIDGE_LOG`` set, every step is appended to that file as one JSON line: its op, hook and
answer, ``waited`` (how long the event waited for a host, as the module measured it) and ``cpu`` (this
process's CPU time in ms after the step).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_cards.bridge.dispatch import BridgeDispatch, DispatchCancelled
from agent_cards.bridge.host import BridgeClock, BridgeEnv, BridgeHost, BridgeNext, KeptRuns
from agent_cards.bridge.journal import MOD_NAMES, JournaledHost, open_journal
from agent_cards.bridge.lifetime import exit_now, log
from agent_cards.engine import Event, HookResult, Origin, StateStore, Timer, error_reason
from agent_cards.filestore import FileStore
from agent_cards.host_contract import matches
from agent_cards.record import Value
from agent_cards.state import MemoryStore, ModState, restore

if TYPE_CHECKING:
    from agent_cards.mod import AgentCards

STEP_WAIT_S = 1.0  # an answer never waits longer than this: "pending" instead

# The bridge's own texts live in the catalog (agent_cards.texts): PERSON "bridge.*" (toasts, English), AGENT
# "bridge.unsure" (the model reads it, in the session's language: the host hands it over in its hello).
UNSURE = "bridge.unsure"


class RegisteredHook(Value):
    """One ``on(event, [matcher,] hook)`` of the mod's ``register``."""

    event: str
    matcher: Mapping[str, Any] | None
    hook: Callable[[Any, Event, Any], Awaitable[HookResult | None]]


def registrations(store: Any = None) -> tuple[list[RegisteredHook], AgentCards]:
    """The mod's hooks, in the order its ``register(on)`` made them, and what ``register`` returned."""
    from agent_cards import register

    found: list[RegisteredHook] = []

    def on(event: str, *args: Any) -> None:
        matcher, hook = (None, args[0]) if len(args) == 1 else (args[0], args[1])
        found.append(RegisteredHook(event, matcher, hook))

    mod = register(on, store)
    return found, mod


#: Where the session hosts keep each session's state, under the plugin's data folder (the command hook keeps
#: its own under ``sessions/`` there: the two never share a file).
KEPT_FOLDER = "session-hosts"


def kept_file(env: Mapping[str, str]) -> str | None:
    """The file that keeps this Claude Code session's state across processes, or None where the engine gives no
    data folder or no session id (the state then lives only as long as the module's memory)."""
    from agent_cards.filestore import session_file

    data, session = env.get("CLAUDE_PLUGIN_DATA"), env.get("CLAUDE_CODE_SESSION_ID")
    if not data or not session:
        return None
    return session_file(os.path.join(data, KEPT_FOLDER), session)


def runs_folder(kept: str) -> str:
    """Where the session whose state is kept in ``kept`` keeps the output of its opens (:class:`KeptRuns`)."""
    sessions, name = os.path.split(kept)
    return os.path.join(os.path.dirname(sessions), "runs", name.removesuffix(".json"))


class BridgeStore(MemoryStore):
    """The mod's state, each change told to the module (which hands it to a host it starts again) and written to
    the session's kept file, when there is one, before anything else happens: a host killed right after a
    change loses nothing, and one started in its place (after a crash, a reload, ``claude --continue``) reads
    it back."""

    def __init__(self, state: ModState, told: Callable[[ModState], None], kept: StateStore | None = None,
                 runs: KeptRuns | None = None) -> None:
        super().__init__(state)
        self._told = told
        self.kept = kept
        self.runs = runs

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        before = self.get()
        after = super().update(change)
        if after != before:
            if self.kept is not None:
                try:
                    self.kept.update(lambda _: after)
                except OSError as error:  # a full or read-only data folder: the memory and the module still hold it
                    log(f"the state could not be kept in a file: {error_reason(error)}")
            if self.runs is not None and before.opens != after.opens:  # an open read: its files may go now
                still = {p.key for p in after.opens}
                for pending in before.opens:
                    if pending.key not in still:
                        self.runs.forget(pending.key)
            self._told(after)
        return after


class BridgeSession:
    """The mod for one Claude Code session, served over the socket."""

    def __init__(self, env: Mapping[str, Any], state: object, write: Callable[[str], None],
                 events: Sequence[Mapping[str, Any]] = (), machine: Mapping[str, str] | None = None,
                 after: str | None = None) -> None:
        self._write = write
        self.env = BridgeEnv(env)
        self.clock = BridgeClock(self.later)
        machine = os.environ if machine is None else machine
        path = kept_file(machine)
        store = None if path is None else FileStore(path, report=log, expect_file=False)
        start = next((item.get("e") for item in events if isinstance(item, Mapping)
                      and item.get("event") == "session.start" and isinstance(item.get("e"), dict)), None)
        first = restore(state, store, machine.get("CLAUDE_PID") or "", start, log)
        self.runs = None if path is None else KeptRuns(runs_folder(path))
        if self.runs is not None:  # what an open left that the state no longer keeps (its host died meanwhile)
            self.runs.prune(p.key for p in first.opens)
        self.store = BridgeStore(first, self.told, store, self.runs)
        if store is not None:  # the file says who keeps it now, and what the model is still to be told
            with contextlib.suppress(OSError):
                store.update(lambda _: first)
        if first != ModState.from_json(state):  # the module learns what this host starts from
            self.emit({"state": first.to_json()})
        self.hooks, self.mod = registrations(self.store)
        self.journal = open_journal(self.env, state, sorted({*self.env.values, *MOD_NAMES}), after=after)
        self.dispatches: dict[str, BridgeDispatch] = {}
        self.timers: set[asyncio.Task[None]] = set()
        self.busy_ms = 0.0  # Python's own time serving steps (bench)
        self.log = os.environ.get("AGENT_CARDS_BRIDGE_LOG") or None
        self.steps = 0

    def host(self, d: BridgeDispatch | None) -> BridgeHost | JournaledHost:
        host = BridgeHost(self.env, self.clock, self.emit, d, self.runs)
        return host if self.journal is None or d is not None else self.journal.host(host)

    def told(self, state: ModState) -> None:
        self.emit({"state": state.to_json()})
        if self.journal is not None:
            self.journal.state([w.name for w in state.workers])

    # -- output ------------------------------------------------------------------------------------

    def emit(self, message: Mapping[str, Any]) -> None:
        try:
            self._write(json.dumps(message, separators=(",", ":")) + "\n")
        except (OSError, ValueError):
            exit_now()

    # -- timers ------------------------------------------------------------------------------------

    def later(self, ms: int, fn: Timer, repeat: bool) -> None:
        async def run() -> None:
            while True:
                await asyncio.sleep(max(0, ms) / 1000)
                try:
                    await fn()
                except Exception as error:
                    log(f"a timer failed: {error_reason(error)}")
                if not repeat:
                    return

        task = asyncio.get_running_loop().create_task(run())
        self.timers.add(task)
        task.add_done_callback(self.timers.discard)

    # -- dispatches ----------------------------------------------------------------------------------

    def start_event(self, d: BridgeDispatch, hook: int, e: Event, given: HookResult | None = None) -> None:
        registration = self.hooks[hook]
        serve = registration.hook
        if self.journal is not None:  # the flight recorder: the event, its next and its answer
            serve = self.journal.hook(serve, d, hook, registration.event)

        async def run() -> None:
            try:
                result = await serve(self.host(d), e, BridgeNext(d, given))
            except Exception as error:
                d.put({"kind": "failed", "error": error_reason(error), "calledNext": d.called_next})
            else:
                if result is None:
                    d.put({"kind": "failed", "error": "the hook returned no result", "calledNext": d.called_next})
                else:
                    d.put({"kind": "done", "value": result})
            finally:
                if not d.live:
                    self.dispatches.pop(d.id, None)

        d.task = asyncio.get_running_loop().create_task(run())

    def boot_events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Events the module already answered before this host was up (``session.start``)."""
        for item in events:
            event, e = str(item.get("event") or ""), item.get("e")
            if not isinstance(e, dict):
                continue
            for index, registration in enumerate(self.hooks):
                if registration.event == event and (registration.matcher is None or matches(registration.matcher, e)):
                    d = BridgeDispatch(f"boot-{index}", event, Origin("engine", "core"), live=False)
                    given = item.get("result") if isinstance(item.get("result"), dict) else {}
                    self.start_event(d, index, e, given)

    def resume(self) -> None:
        """A host started with the state of one before it: the mod re-arms what only lived in memory
        (its 5 s poll, when the state has workers)."""
        try:
            self.mod.resume(self.host(None))
        except Exception as error:
            log(f"resume failed: {error_reason(error)}")

    def cancel(self, ids: Sequence[Any]) -> None:
        if self.journal is not None and ids:
            self.journal.cancelled(ids)
        for key in ids:
            d = self.dispatches.get(str(key))
            if d is None:
                continue
            d.signal.aborted = True
            d.live = False
            for effect in d.effects:  # shown as well, if late
                self.emit(effect)
            d.effects.clear()
            if d.waiting is not None and not d.waiting.done():
                d.waiting.set_exception(DispatchCancelled("user-cancel: the engine gave up on this call"))
            if d.task is None or d.task.done():
                self.dispatches.pop(d.id, None)

    # -- steps ---------------------------------------------------------------------------------------

    async def step(self, request: Mapping[str, Any]) -> dict[str, Any]:
        answer = await self._step(request)
        if self.log is not None:  # AGENT_CARDS_BRIDGE_LOG: every step and its answer, one JSON line each
            record = {"t": time.time(), "op": request.get("op"), "id": request.get("id"),
                      "hook": request.get("hook"), "kind": answer.get("kind"), "effects": answer.get("effects"),
                      "waited": request.get("waited"), "cpu": time.process_time() * 1000}
            with contextlib.suppress(OSError), open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        return answer

    async def _step(self, request: Mapping[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        self.cancel(request.get("cancel") or [])
        op, key = request.get("op"), str(request.get("id") or "")
        if op == "stats":  # the bench: Python's own time so far
            return {"kind": "stats", "steps": self.steps, "cpuMs": time.process_time() * 1000}
        d = self.dispatches.get(key)
        if op == "event":
            hook = request.get("hook")
            e = request.get("e")
            if d is not None or not isinstance(hook, int) or not 0 <= hook < len(self.hooks) or not isinstance(e, dict):
                return {"kind": "failed", "error": "a malformed event", "calledNext": False}
            given = request.get("origin")
            origin: Mapping[str, Any] = given if isinstance(given, dict) else {}
            d = BridgeDispatch(key, str(request.get("event") or self.hooks[hook].event),
                               Origin(str(origin.get("plugin") or ""), str(origin.get("tier") or "")))
            self.dispatches[key] = d
            self.start_event(d, hook, e)
        elif d is None:
            return {"kind": "failed", "error": "no such dispatch", "calledNext": False}
        elif op == "resume":
            if d.waiting is not None and not d.waiting.done():
                if "error" in request:
                    d.waiting.set_exception(DispatchCancelled(str(request.get("error"))))
                else:
                    value = request.get("value")
                    d.waiting.set_result(value if isinstance(value, dict) else {"value": value})
        elif op != "poll":
            return {"kind": "failed", "error": "an unknown op", "calledNext": d.called_next}
        self.busy_ms += (time.perf_counter() - started) * 1000
        return await self.answer(d)

    async def answer(self, d: BridgeDispatch) -> dict[str, Any]:
        if d.out is None:
            d.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(d.wake.wait(), STEP_WAIT_S)
        out, d.out = d.out, None
        if out is None:
            out = {"kind": "pending", "busy": sorted(d.busy)}
        elif out["kind"] in ("done", "failed"):
            self.dispatches.pop(d.id, None)
            d.live = False
        out["effects"], d.effects = d.effects, []
        self.steps += 1
        return out
