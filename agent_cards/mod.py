"""The agent cards mod: ``register(on)`` wires its hooks into the engine.

A driver of ``agent_cards.taken``, the core that decides a taken Agent call and a TaskStop: the hooks
run the processes it names with ``host.process.run`` and answer with what it decides.

Flow of a taken Agent call (PERM-FIRST, PERM-DENY-SPAWN):

1. ``tool.call`` (Agent): ``taken.leave`` applies the rules (``rules.RULES``); an isolated call reads its
   base (``taken.base_read``: ``git branch --show-current``); ``taken.opening`` names its branch and its
   open. The call is kept under its ``tool_use_id`` as ``PassedOn`` (holding the ``Opening``) and passed
   on beneath (``next``), where Claude Code's permission check runs.
2. ``agent.spawn``: raised only for an allowed call. A ``PassedOn`` call is taken out; made in plan mode
   (the spawn's ``permissionMode``), it stays native with a toast (PERM-PLAN). Otherwise its open is run
   in lich (``$LICH_BIN open --kind claude --subagent … --json``, two minutes); ``Opening.decide`` gives
   one decision. A ``Native`` one (the open failed) lets the native spawn go on, after a toast. Any other
   is kept under the ``tool_use_id`` as ``Decided`` for step 3 and the spawn is denied, so no native
   agent or worktree exists.
3. Back in ``tool.call``: the call is forgotten whatever its stage, and a ``Decided`` one's decision
   becomes the call's answer in place of what Claude Code answered beneath. A call refused by the
   permission check never reached step 2: nothing was decided, and its refusal stands.

After the open: workers with a ``pending`` delivery are counted in the footer (``ui.render`` of
``SessionMode``), ``sessions --json`` is read every 5 s while any runs, and ``TaskStop`` stops them
(``taken.stop_of``, ``TakenStop.decide``). Every failure before lich has the task is decided by the core
(native agent plus toast); after it, the call is never run natively (FALL-BEFORE-ONLY).
"""

from __future__ import annotations

import contextlib
from typing import Any

from agent_cards import lich_calls, rules, taken
from agent_cards.engine import Event, HookResult, Host, KeptProcess, Next, On, ProcessError, ProcessResult, StateStore
from agent_cards.record import Record, Value, field, replace
from agent_cards.state import MemoryStore, PendingOpen, Worker
from agent_cards.texts import agent_text, person_text, toast_text

POLL_MS = 5_000  # FOOTER-POLL


def _key(e: Event) -> str:
    """The ``tool_use_id`` that ties a call's ``tool.call`` to its ``agent.spawn``."""
    return str(e.get("tool_use_id") or "")


async def _run(host: Host, run: taken.ProcessRun) -> ProcessResult | Exception:
    """What ``run`` gave, or how it failed: the core decides either."""
    try:
        return await host.process.run(list(run.argv), timeout_ms=run.timeout_ms)
    except Exception as error:  # FALL-BEFORE-ONLY: decided by the core, never left to the engine's fail-open
        return error


def _kept_run(host: Host, key: str) -> KeptProcess | None:
    """The host's ``process`` when its runs outlive it (the bridge's session host) and the call has an id to
    keep the run under; else None, and the open is an ordinary run."""
    process = host.process
    return process if key and callable(getattr(process, "run_kept", None)) else None  # type: ignore[return-value]


async def _run_kept(process: KeptProcess, key: str, run: taken.ProcessRun) -> ProcessResult | Exception:
    try:
        return await process.run_kept(list(run.argv), key, timeout_ms=run.timeout_ms)
    except Exception as error:  # FALL-BEFORE-ONLY, as for ``_run``
        return error


def _pending(key: str, opening: taken.Opening, now_ms: int) -> PendingOpen:
    """What the state keeps of an open about to start, for a host that may have to read it in this one's place."""
    call = opening.call
    return PendingOpen(key, call.description, call.prompt, call.branch, call.started_ms, now_ms,
                       opening.run.timeout_ms, call.lang, opening.lich_bin)


def _answer(decision: taken.Deny | taken.Answer) -> HookResult:
    """A decision as the Agent call's hook result."""
    if isinstance(decision, taken.Deny):
        return {"deny": decision.text}
    if isinstance(decision, taken.Launched):
        return {"result": decision.result, "context": [decision.context]}  # RESULT-CONTEXT
    return {"result": decision.result}


class PassedOn(Value):
    """A taken call passed on beneath, its open waiting for the call's ``agent.spawn``."""

    opening: taken.Opening


class Decided(Value):
    """A taken call whose ``agent.spawn`` ran the open: its ``tool.call`` answers with ``decision``."""

    decision: taken.Deny | taken.Answer


class AgentCards(Record):
    store: StateStore = field(default_factory=MemoryStore)
    _calls: dict[str, PassedOn | Decided] = field(default_factory=dict)  # the taken calls under way, by tool_use_id
    _watching: bool = False

    # -- session.start ------------------------------------------------------------------------------

    async def session_start(self, host: Host, e: Event, next: Next) -> HookResult:
        self.store.update(lambda s: replace(s, interactive=True))
        return await next(e)

    # -- tool.call: Agent ---------------------------------------------------------------------------

    async def agent_call(self, host: Host, e: Event, next: Next) -> HookResult:
        facts = rules.Facts(e, next.origin, self.store.get().interactive, host.env)
        step: taken.Native | taken.Opening | None = taken.leave(facts)
        if step is None:
            read = taken.base_read(facts)  # OPEN-BASE, before the call is passed on
            step = taken.opening(facts, None if read is None else await _run(host, read), host.clock.now())
        if isinstance(step, taken.Native):
            if step.toast is not None:  # most calls left show no toast: no coroutine to await for them
                await self._toast(host, step)
            return await next(e)
        key = _key(e)
        self._calls[key] = PassedOn(step)
        try:
            beneath = await next(e)  # PERM-FIRST: Claude Code's permission check, then agent.spawn
        finally:
            call = self._calls.pop(key, None)
        return _answer(call.decision) if isinstance(call, Decided) else beneath

    # -- agent.spawn --------------------------------------------------------------------------------

    async def agent_spawn(self, host: Host, e: Event, next: Next) -> HookResult:
        key = _key(e)
        call = self._calls.get(key)
        if not isinstance(call, PassedOn):
            return await next(e)
        del self._calls[key]  # taken out: another spawn of this id finds nothing to open
        opening = call.opening
        planning = opening.left_in_plan_mode(e)
        if planning is not None:  # PERM-PLAN: the native agent runs, held to plan mode
            await self._toast(host, planning)
            return await next(e)
        kept = _kept_run(host, key)
        if kept is None:
            printed = await _run(host, opening.run)
        else:  # the open outlives this host: kept in the state before it starts, read by the next host if need be
            self.store.update(lambda s: s.with_open(_pending(key, opening, host.clock.now())))
            printed = await _run_kept(kept, key, opening.run)
        decision = opening.decide(printed, host.clock.now(), esc=next.signal.aborted)
        worker = decision.worker if isinstance(decision, taken.Launched) else None
        if kept is not None:  # read: the open leaves the state, the worker it opened comes in, in one change
            self.store.update(lambda s: s.settled(key, worker, opening.lich_bin))
        if isinstance(decision, taken.Native):  # lich does not have the task: the native agent runs
            await self._toast(host, decision)
            return await next(e)
        self._calls[key] = Decided(decision)
        if worker is not None:
            self._track(host, worker, opening.lich_bin, counted=kept is not None)
        return {"deny": opening.spawn_denial(decision)}

    async def _collect(self, host: Host, pending: PendingOpen) -> None:
        """An open a host that died started: what it printed is read now, as its call would have read it. A
        worker it opened is counted, polled and stoppable; anything else leaves the state silently, since
        the model was already told lich may have the task and no native agent ran. Never run again."""
        collect = getattr(host.process, "collect", None)
        printed: ProcessResult | Exception
        try:
            if not callable(collect):
                raise ProcessError("this host keeps no runs", "start")
            printed = await collect(pending.key, started_ms=pending.opened_ms, timeout_ms=pending.timeout_ms)
        except Exception as error:  # decided like any failed open: nothing is counted
            printed = error
        decision = taken.kept_opening(pending).decide(printed, host.clock.now())
        worker = decision.worker if isinstance(decision, taken.Launched) else None
        self.store.update(lambda s: s.settled(pending.key, worker, pending.lich_bin))
        if worker is not None:
            self._track(host, worker, pending.lich_bin, counted=True)

    # -- workers: footer, polling, TaskStop ---------------------------------------------------------

    def _track(self, host: Host, worker: Worker, lich_bin: str, *, counted: bool) -> None:
        """Count ``worker`` (``counted``: the state already does), redraw the footer, arm the poll."""
        if not counted:
            self.store.update(lambda s: s.with_worker(worker, lich_bin))
        host.ui.invalidate("ui.render")
        self._arm(host)

    def resume(self, host: Host) -> None:
        """A mod handed the state of one before it (a session host started again, a reload, the session
        continued in a new Claude Code process): lich is read at once, so that a worker it no longer lists
        is dropped and every other is counted again, then every 5 s as ever (FOOTER-POLL). An open the host
        before it left running (it died mid-open) is read once it ends (``_collect``)."""
        for pending in self.store.get().opens:
            host.clock.after(0, lambda pending=pending: self._collect(host, pending))  # type: ignore[misc]
        if self._watching or not self.store.get().workers:
            return
        self._watching = True
        host.clock.after(0, lambda: self._poll(host))

    def _arm(self, host: Host, ms: int = POLL_MS) -> None:
        """Arm the one watch (FOOTER-POLL): none while one is armed or a read it made still runs."""
        if self._watching or not self.store.get().workers:
            return
        self._watching = True
        host.clock.after(ms, lambda: self._poll(host))

    async def _poll(self, host: Host) -> None:
        """FOOTER-POLL: one ``sessions --json`` read per tick, whatever the number of workers.

        One watch at a time: the next tick is armed only once this read has ended, so a slow lich never
        has two reads of this session under way. It is armed for what is left of the 5 s period, so reads
        keep a 5 s period while they are quicker than that; a read that took 5 s or longer is followed by
        the next at the first multiple of 5 s from its start that it did not run past. A tick that finds
        no worker left reads nothing and arms nothing.
        """
        state = self.store.get()
        if not state.workers:
            self._watching = False
            return
        started = host.clock.now()
        try:
            try:
                listed = lich_calls.listed_states(await host.process.run(lich_calls.list_argv(state.lich_bin)))
            except ProcessError:
                listed = None
            if listed is not None:  # FOOTER-LIST-FAIL: a list lich could not give leaves the count as it was
                finished = lich_calls.finished(state.workers, listed)
                if finished:
                    self.store.update(lambda s: s.without(finished))
                    host.ui.invalidate("ui.render")
        except Exception:  # a fault of the mod's still reaches the host's report, and the poll goes on
            self._rearm(host, started)
            raise
        self._rearm(host, started)

    def _rearm(self, host: Host, started: int) -> None:
        """The read that began at ``started`` has ended: arm the next for what is left of its period."""
        self._watching = False
        took = max(0, host.clock.now() - started)
        self._arm(host, POLL_MS - took if took < POLL_MS else -took % POLL_MS)

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
        stop = taken.stop_of(e, self.store.get())
        if stop is None:  # STOP-OTHER
            return await next(e)
        decision = stop.decide(await _run(host, stop.run), host.env.get("LICH_PROMPT_LANG"))
        if isinstance(decision, taken.Deny):  # STOP-REFUSED: the worker still counts
            return {"deny": decision.text}
        self.store.update(lambda s: s.without({stop.worker.name}))
        host.ui.invalidate("ui.render")
        return {"result": decision.result}  # STOP-RESULT

    async def prompt_submit(self, host: Host, e: Event, next: Next) -> HookResult:
        """After the session came back in a new process, Claude Code tells the model, with the next prompt,
        that each background agent it launched failed: it lost its own record of them. For a worker lich
        still runs, the model also reads, beside that prompt, that it runs and how its report comes."""
        state = self.store.get()
        if not state.reported_lost:
            return await next(e)
        lost = [w for w in state.workers if w.name in state.reported_lost]
        self.store.update(lambda s: replace(s, reported_lost=()))
        lang = host.env.get("LICH_PROMPT_LANG")
        told = [agent_text(lang, "resume.still_running", label=w.label, name=w.name) for w in lost]
        if not told:
            return await next(e)
        given = e.get("context")
        return await next({**e, "context": [*(given if isinstance(given, list) else []), *told]})

    async def _toast(self, host: Host, native: taken.Native) -> None:
        """The toast, cut to what Claude Code's toast box shows; when it was cut, the whole text goes to the
        host's log (``ui.log``, where the host has one), so that the full reason can still be read."""
        if native.toast is None:
            return
        # A toast that cannot be shown must not change what the call does.
        with contextlib.suppress(Exception):
            shown = toast_text(native.toast, **native.slots)
            await host.ui.toast(shown)
            whole = person_text(native.toast, **native.slots)
            log = getattr(host.ui, "log", None)  # not every host keeps a log (the Protocol's UI needs none)
            if whole != shown and callable(log):
                log(f"toast in full: {whole}")


def register(on: On, store: StateStore | None = None) -> AgentCards:
    """Wire the mod's hooks. A reload calls this again in a fresh module: a fresh store forgets all."""
    mod = AgentCards(store if store is not None else MemoryStore())
    on("session.start", {"isInteractive": True}, mod.session_start)
    on("tool.call", {"tool": "Agent"}, mod.agent_call)
    on("tool.call", {"tool": "TaskStop"}, mod.task_stop)
    on("agent.spawn", mod.agent_spawn)
    on("ui.render", {"component": "SessionMode"}, mod.footer)
    on("prompt.submit", mod.prompt_submit)
    return mod
