"""The agent cards mod: ``register(on)`` wires its hooks into the engine.

Flow of a taken Agent call (PERM-FIRST, PERM-DENY-SPAWN):

1. ``tool.call`` (Agent): the rules decide (``rules.RULES``); an isolated call reads its base
   (``git branch --show-current``) and its branch is named; the call is parked under its
   ``tool_use_id`` and passed on beneath (``next``), where Claude Code's permission check runs.
2. ``agent.spawn``: raised only for an allowed call. The parked call is opened in lich
   (``$LICH_BIN open --kind claude --subagent … --json``, two minutes) and the spawn is denied, so no
   native agent or worktree exists; the answer lich decided is parked beside the call. An open that
   failed lets the native spawn go on, with a toast (lich does not have the task).
3. Back in ``tool.call``: the parked answer replaces what Claude Code answered beneath. A call refused
   by the permission check never reached step 2 and its refusal stands.

After the open: workers with a ``pending`` delivery are counted in the footer (``ui.render`` of
``SessionMode``), ``sessions --json`` is read every 5 s while any runs, and ``TaskStop`` stops them.
Every failure before lich has the task is caught here and decided (native agent plus toast); after
it, the call is never run natively (FALL-BEFORE-ONLY).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import Any

from agent_cards import delivery, lich_calls, rules
from agent_cards.branch import branch_name
from agent_cards.delivery import Call, NotOpened
from agent_cards.engine import Event, HookResult, Host, Next, On, ProcessError, error_reason, text
from agent_cards.lich_calls import OPEN_TIMEOUT_MS
from agent_cards.state import MemoryStore, StateStore, Worker
from agent_cards.texts import agent_text, person_text

POLL_MS = 5_000  # FOOTER-POLL


@dataclass
class _Parked:
    """A taken call between ``tool.call`` and its ``agent.spawn``."""

    call: Call
    argv: list[str]
    lich_bin: str
    answer: HookResult | None = None  # set once lich decided; None: the native answer stands


def _park(e: Event, facts: rules.Facts, now: int, lang: str | None) -> _Parked:
    """OPEN-ARGV: the open this call will run at ``agent.spawn`` (its start time taken now)."""
    tool_use_id = str(e.get("tool_use_id") or "")
    description, prompt = text(e.get("description")), text(e.get("prompt"))
    branch = branch_name(description, tool_use_id) if facts.isolated else ""
    argv = lich_calls.open_argv(facts.lich_bin, e, branch, facts.base)
    return _Parked(Call(tool_use_id, description, prompt, branch, now, lang), argv, facts.lich_bin)


@dataclass
class AgentCards:
    store: StateStore = field(default_factory=MemoryStore)
    _parked: dict[str, _Parked] = field(default_factory=dict)
    _watching: bool = False

    # -- session.start ------------------------------------------------------------------------------

    async def session_start(self, host: Host, e: Event, next: Next) -> HookResult:
        self.store.update(lambda s: replace(s, interactive=True))
        return await next(e)

    # -- tool.call: Agent ---------------------------------------------------------------------------

    async def agent_call(self, host: Host, e: Event, next: Next) -> HookResult:
        facts = rules.Facts(e, next.origin, self.store.get().interactive, host.env)
        leaving = rules.first_leaving(rules.RULES, facts)
        if leaving is None and facts.isolated:
            facts.base = await self._base(host)  # OPEN-BASE, before the call is passed on
            leaving = rules.first_leaving(rules.AFTER_BASE, facts)
        if leaving is not None:
            if leaving.toast:
                await self._toast(host, leaving.toast, e, bytes=facts.prompt_bytes, limit=rules.PROMPT_LIMIT_BYTES)
            return await next(e)
        parked = _park(e, facts, host.clock.now(), host.env.get("LICH_PROMPT_LANG"))
        key = parked.call.tool_use_id
        self._parked[key] = parked
        try:
            beneath = await next(e)  # PERM-FIRST: Claude Code's permission check, then agent.spawn
        finally:
            self._parked.pop(key, None)
        return parked.answer if parked.answer is not None else beneath

    # -- agent.spawn --------------------------------------------------------------------------------

    async def agent_spawn(self, host: Host, e: Event, next: Next) -> HookResult:
        parked = self._parked.get(str(e.get("tool_use_id") or ""))
        if parked is None or parked.answer is not None:
            return await next(e)
        call = parked.call
        try:
            result = await host.process.run(parked.argv, timeout_ms=OPEN_TIMEOUT_MS)
            printed = delivery.read_open(result)  # OPEN-LAST: nothing runs after the open
        except Exception as error:  # FALL-BEFORE-ONLY: decided here, never left to the engine's fail-open
            printed = NotOpened(error_reason(error))
        if isinstance(printed, NotOpened):
            if next.signal.aborted:  # FALL-ESC-OPEN: lich may already have the task; never run it twice
                key = "deny.esc.isolated" if call.isolated else "deny.esc"
                parked.answer = {"deny": agent_text(call.lang, key, branch=call.branch)}
                return {"deny": parked.answer["deny"]}
            if printed.label:
                await self._toast(host, "toast.not_reached", e, label=printed.label, reason=printed.reason)
            else:
                await self._toast(host, "toast.open_failed", e, reason=printed.reason)
            return await next(e)
        parked.answer, counted = delivery.answer(call, printed, host.clock.now())
        if counted:
            self._track(host, Worker(printed.name, printed.label, call.description, not call.isolated), parked.lich_bin)
        return {"deny": agent_text(call.lang, "deny.spawn", label=printed.label)}

    async def _base(self, host: Host) -> str:
        """OPEN-BASE / BASE-NONE: the asking session's branch, or "" (detached, or git cannot answer)."""
        try:
            return lich_calls.base_of(await host.process.run(list(lich_calls.BASE_ARGV)))
        except ProcessError:
            return ""

    # -- workers: footer, polling, TaskStop ---------------------------------------------------------

    def _track(self, host: Host, worker: Worker, lich_bin: str) -> None:
        self.store.update(lambda s: s.with_worker(worker, lich_bin))
        host.ui.invalidate("ui.render")
        self._arm(host)

    def _arm(self, host: Host) -> None:
        if self._watching or not self.store.get().workers:
            return
        self._watching = True
        host.clock.after(POLL_MS, lambda: self._poll(host))

    async def _poll(self, host: Host) -> None:
        """FOOTER-POLL: one ``sessions --json`` read per 5 s tick, whatever the number of workers.

        The next tick is armed before the read, so ticks keep a fixed period whatever the read takes;
        a tick that finds no worker left reads nothing and arms nothing.
        """
        self._watching = False
        state = self.store.get()
        if not state.workers:
            return
        self._arm(host)
        try:
            listed = lich_calls.listed_states(await host.process.run(lich_calls.list_argv(state.lich_bin)))
        except ProcessError:
            listed = None
        if listed is not None:  # FOOTER-LIST-FAIL: a list lich could not give leaves the count as it was
            finished = lich_calls.finished(state.workers, listed)
            if finished:
                self.store.update(lambda s: s.without(finished))
                host.ui.invalidate("ui.render")

    async def footer(self, host: Host, e: Event, next: Next) -> HookResult:
        """FOOTER-COUNT / FOOTER-ERRANDS: ``lich: N workers``, unless the lich line shows errands."""
        count = len(self.store.get().workers)
        props: dict[str, Any] = e["props"] if isinstance(e.get("props"), dict) else {}
        modes = props.get("modes")
        if count == 0 or not isinstance(modes, list) or any(str(m).startswith("lich: ") for m in modes):
            return await next(e)
        label = person_text("footer.workers.one") if count == 1 else person_text("footer.workers.many", count=count)
        return await next({**e, "props": {**props, "modes": [*modes, label]}})

    async def task_stop(self, host: Host, e: Event, next: Next) -> HookResult:
        task_id = lich_calls.task_id_of(e)
        state = self.store.get()
        worker = state.worker(task_id) if task_id else None
        if worker is None:  # STOP-OTHER
            return await next(e)
        try:  # STOP-SHARED: close; STOP-ISOLATED: control NAME abort
            result = await host.process.run(lich_calls.stop_argv(state.lich_bin, worker))
            refusal = lich_calls.stop_refusal(worker, result)
        except Exception as error:
            refusal = error_reason(error)
        if refusal is not None:  # STOP-REFUSED: the worker still counts
            lang = host.env.get("LICH_PROMPT_LANG")
            return {"deny": agent_text(lang, "deny.stop_refused", label=worker.label, reason=refusal)}
        self.store.update(lambda s: s.without({worker.name}))
        host.ui.invalidate("ui.render")
        return {"result": lich_calls.stop_result(task_id, worker)}  # STOP-RESULT

    async def _toast(self, host: Host, key: str, e: Event, **slots: Any) -> None:
        # A toast that cannot be shown must not change what the call does.
        with contextlib.suppress(Exception):
            await host.ui.toast(person_text(key, description=text(e.get("description")), **slots))


def register(on: On, store: StateStore | None = None) -> AgentCards:
    """Wire the mod's hooks. A reload calls this again in a fresh module: a fresh store forgets all."""
    mod = AgentCards(store if store is not None else MemoryStore())
    on("session.start", {"isInteractive": True}, mod.session_start)
    on("tool.call", {"tool": "Agent"}, mod.agent_call)
    on("tool.call", {"tool": "TaskStop"}, mod.task_stop)
    on("agent.spawn", mod.agent_spawn)
    on("ui.render", {"component": "SessionMode"}, mod.footer)
    return mod
