"""A fake Claude Code (the engine of the builds :data:`ENGINE_VERSIONS` names): the mod engine's host, and
the pipeline an Agent call runs through.

An Agent call (as measured on 2.1.328):

    tool.call hooks → [core] classic PreToolUse → permission check (rule, mode, dialog)
                    → tool.run: the agent type → agent.spawn hooks → the native agent (background)

A deny at ``agent.spawn`` becomes the Agent tool's error; a refusal at the permission check never
reaches ``agent.spawn``. An Agent input that fails the tool's schema (a ``prompt`` that is not text)
reaches the hooks and is refused beneath them, before the permission check; an isolated call outside a
git repository is refused before ``agent.spawn``. Every hook gets a host bound to its own invocation, so
a host call pauses its budget.

Esc (measured on 2.1.328 through the plugin's bridge, ``docs/decisions.md`` "Esc during the open"): the
call in flight is answered at once with the engine's rejection (:data:`results.USER_REJECTED`), whatever
the hooks return later; the hooks go on, their signal aborted, but a call they pass on after Esc runs
nothing beneath them (no permission check, no ``agent.spawn``, no agent); the mod's process runs are not
cut off (the bridge's session host runs them in a process session of its own, which Esc does not reach).
The person's "no" at a permission dialog ends the turn the same way, and dialogs come one at a time, so
the other calls of that reply are never asked.
Esc twice within 800 ms at the idle prompt opens the Rewind panel over the prompt and the footer's row
(measured on 2.1.328 and 2.1.332): no footer is drawn until the next Esc closes it.

A reload runs ``register`` again in a fresh module and raises ``session.start`` again for that module
(its hooks only), with the session's interactive flag (measured on 2.1.328).
Everything the host does lands in the transcript.

The host is built with its settings (the loop, the :class:`Session`, the executor, the module's
``register``) and keeps only what a session needs to go on: the turn Esc interrupts, the loaded
module, what runs in the background (each entry gone once done) and Claude Code's own bookkeeping.
Nothing outlives a replay.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import agent_cards
from agent_cards.engine import (
    DEFAULT_TIMEOUT_MS,
    ENGINE,
    Env,
    Event,
    HookResult,
    Origin,
    ProcessError,
    ProcessResult,
    Timer,
)
from agent_cards.host_contract import host_check, left_nothing, program_name
from agent_cards.record import Record, Value, field
from agent_cards.state import MemoryStore, ModState, restore
from agent_cards.texts import agent_text
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host import results
from agent_cards_simulator.host.chain import AbortSignal, Chain, Invocation
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.host.process_run import Executor
from agent_cards_simulator.host.registry import Registry
from agent_cards_simulator.transcript import Transcript

#: The builds of the real Claude Code this fake host models, oldest first. They differ in nothing it draws:
#: the facts written here were measured on the first and seen again on the others (``agent-cards conform``
#: runs the scenarios on a build and says so when it is none of these).
ENGINE_VERSIONS = ("2.1.328", "2.1.332", "2.1.337")
MOD_PLUGIN = "agent-cards"
STATUS_PLUGIN = "lich-status"  # lich's own status module: draws the errands part of the lich line
#: Claude Code's built-in agent types (2.1.328: its unknown-type error lists ``claude`` too).
AGENT_TYPES = ("general-purpose", "Explore", "Plan", "claude", "claude-code-guide", "statusline-setup")
PARENT_MODEL = "claude-opus-5-5"
RUN_CUT_SHORT = "still running when the scenario ended"


class Session(Value):
    """The session's settings, fixed for its whole run."""

    env: Mapping[str, str]
    cwd: str = "/home/dev/app"
    modes: Sequence[str] = ()
    agent_types: tuple[str, ...] = AGENT_TYPES
    #: How the permission check answers by default.
    permission: PermissionVerdict = field(default_factory=PermissionVerdict)
    git_repo: bool = True  # the project is a git repository (an isolated agent needs one for its worktree)
    #: The permission mode the session starts in (Shift+Tab switches it: ``FakeClaudeCode.switch_mode``).
    permission_mode: str = "default"
    #: The plugin has a data folder and the session's id (2.1.328 gives both: ``CLAUDE_PLUGIN_DATA``,
    #: ``CLAUDE_CODE_SESSION_ID``), so its session host keeps the mod's state across modules and processes.
    keeps_state: bool = True


class _Env:
    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = values

    def get(self, name: str, /) -> str | None:
        return self._values.get(name)


class HostGone(BaseException):
    """The plugin's session host died while the mod awaited a kept run (``lich open``): the mod's Python is
    gone, so no ``except Exception`` of the mod may read it as a failed open; the plugin's module answers
    the call in its place (``bridge.unsure``)."""

    def __init__(self, program: str) -> None:
        super().__init__(program)
        self.program = program


class BoundHost:
    """The host one hook invocation sees (``$``): every call pauses that hook's budget."""

    def __init__(self, claude: FakeClaudeCode, invocation: Invocation | None, generation: int) -> None:
        self._claude = claude
        self._invocation = invocation
        self._generation = generation
        self._life = claude.host_life  # aborted when the session host serving this call dies

    @property
    def env(self) -> Env:
        return _Env(self._claude.session.env)

    @property
    def process(self) -> BoundHost:
        return self

    @property
    def ui(self) -> BoundHost:
        return self

    @property
    def clock(self) -> BoundHost:
        return self

    async def run(self, argv: Any, /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        """A run Esc does not cut off: the bridge's session host runs it (only its own timeout ends it)."""
        if self._invocation is None:
            return await self._claude.run_process(argv, timeout_ms, AbortSignal())
        with self._invocation.budget.suspended():
            return await self._claude.run_process(argv, timeout_ms, AbortSignal())

    async def run_kept(self, argv: Any, key: str, /, *, timeout_ms: int) -> ProcessResult:
        """``KeptProcess``: the run goes on, and keeps what it prints for the next host, if the session host dies
        meanwhile (it runs beside the host, as the bridge's open runs in its own process group)."""
        claude = self._claude
        running = claude.start_kept(argv, key, timeout_ms)
        gone = self._life.wait()
        try:
            if self._invocation is None:
                await asyncio.wait((running, gone), return_when=asyncio.FIRST_COMPLETED)
            else:
                with self._invocation.budget.suspended():
                    await asyncio.wait((running, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._life.forget(gone)
        if not running.done():
            raise HostGone(program_name(argv) if isinstance(argv, list | tuple) and argv else "lich")
        claude.kept_runs.pop(key, None)
        return running.result()

    async def collect(self, key: str, /, *, started_ms: int, timeout_ms: int) -> ProcessResult:
        """What the run kept under ``key`` printed, once it ends (its own timeout bounds it); nothing kept: the
        engine's ``left nothing``."""
        running = self._claude.kept_runs.pop(key, None)
        if running is None or running.cancelled():  # never kept, or ended with its Claude Code process
            raise left_nothing(key)
        return await running

    async def toast(self, text: str, /) -> None:
        self._claude.transcript.record("toast", text=text)

    def log(self, text: str, /) -> None:
        """A line for the plugin's log (the whole text of a toast the box had to cut)."""
        self._claude.transcript.record("log", text=text)

    def invalidate(self, event: str, /) -> None:
        if event == "ui.render":
            self._claude.schedule_footer()

    def now(self) -> int:
        return self._claude.now()

    def after(self, ms: int, fn: Timer, /) -> None:
        self._claude.schedule(self._generation, ms, fn, repeat=False)

    def every(self, ms: int, fn: Timer, /) -> None:
        self._claude.schedule(self._generation, ms, fn, repeat=True)


Register = Callable[..., Any]


class _HostTimer:
    """A timer a module armed (``$.clock.after`` / ``every``); held by the host only while armed."""

    __slots__ = ("_claude", "_handle", "fn", "generation", "ms", "repeat")

    def __init__(self, claude: FakeClaudeCode, generation: int, ms: int, fn: Timer, repeat: bool) -> None:
        self._claude = claude
        self.generation = generation
        self.ms = ms
        self.fn = fn
        self.repeat = repeat
        self._handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        loop = self._claude.loop
        self._handle = loop.call_at(loop.time() + self.ms / 1000, self._fire)  # call_later's own sum

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None  # fired: the loop drops the handle, and so does the timer
        self._claude._timer_fired(self)


class _Background(Record):
    """What runs, or waits to run, beside the scenario: each entry leaves once done; ``close`` stops the rest."""

    tasks: set[asyncio.Task[Any]] = field(default_factory=set)  # every task the host started and still runs
    timers: set[_HostTimer] = field(default_factory=set)  # the modules' armed timers (a repeating one: its next)
    note: asyncio.TimerHandle | None = None  # lich types its next note then
    note_due: int | None = None  # ...which is due at this virtual ms
    footer_due: bool = False  # a footer redraw is scheduled and not yet started
    footers: int = 0  # footer redraws being drawn


class _Books(Record):
    """Claude Code's own bookkeeping across the session."""

    refs: int = 0  # the last ``requestId`` / ``ref`` handed out
    workflow_steps: int = 0  # workflow agents spawned: a step's index is its number
    native_tasks: dict[str, str] = field(default_factory=dict)  # its own background agents: id -> description
    #: Every Agent call this process answered ``async_launched`` (a lich worker too: 2.1.328 shows it as
    #: "Backgrounded agent" with no panel behind it), by agentId: the record a new process reports failed.
    launched: dict[str, str] = field(default_factory=dict)
    told: list[str] = field(default_factory=list)  # notifications the model reads with its next prompt
    process: int = 1  # the Claude Code process the session runs in: a continue or a resume starts the next
    turns: int = 0  # calls and prompts the conversation holds: the Rewind panel opens only with one to go back to


RESTART_MS = 5_000  # the plugin's module starts a session host again this long after one died with workers
#: Two Escs at the idle prompt this close together are a double press (2.1.332's input waits 800 ms for the
#: second): it opens the Rewind panel.
DOUBLE_PRESS_MS = 800


class _Composer(Record):
    """What the asking session's prompt shows: a turn running, or the Rewind panel over it (measured on 2.1.332:
    Esc twice at the idle prompt opens the panel, which takes the prompt's place with the footer's row, so no
    footer is drawn while it is open: the mod's redraws wait; Esc closes it)."""

    busy: int = 0  # tool calls and prompts of the session in flight: Esc interrupts them, not the idle prompt
    idle_esc: int | None = None  # when Esc was last pressed at the idle prompt (the first of a double press)
    rewind: bool = False  # the Rewind panel is open
    reload_asked: int | None = None  # when a reload was asked for while a turn ran: it waits for the turn to end


class KeptStore(MemoryStore):
    """The mod's state as the plugin keeps it for the session (a file under the plugin's data folder): every
    change is written through, so a fresh module (a reload, a session host started again, the session
    continued in a new process) starts from it."""

    def __init__(self, state: ModState, kept: MemoryStore) -> None:
        super().__init__(state)
        self._kept = kept

    def update(self, change: Callable[[ModState], ModState]) -> ModState:
        after = super().update(change)
        self._kept.update(lambda _: after)
        return after


class FakeClaudeCode:
    """Claude Code for one session on a virtual loop, the mod loaded through ``register``.

    ``loop`` is the scenario's own (its clock starts with the scenario: transcript times are its
    :meth:`~agent_cards_simulator.clock.VirtualEventLoop.now_ms`); ``executor`` is the lich side: it answers
    ``process.run`` and says when lich types a note.
    """

    def __init__(
        self,
        loop: VirtualEventLoop,
        session: Session,
        executor: Executor,
        register: Register = agent_cards.register,
    ) -> None:
        # settings, given here and never changed
        self.loop = loop
        self.session = session
        self.executor = executor
        self._register = register
        # parts, made once
        self.transcript = Transcript(loop.now_ms)
        self.registry = Registry()
        self.chain = Chain(self.registry, self._bind, self._report)
        # state: what a session needs to go on
        self._turn = AbortSignal()  # the asking session's turn: Esc (or a "no" at a dialog) ends it; a new one begins
        self._dialog = asyncio.Lock()  # the permission dialog: one on screen at a time, the other calls wait
        # A reload and a new process each replace the loaded module, one at a time: a /reload-plugins the
        # person gives while another reload or a continue is under way runs once that one is done.
        self._lifecycle = asyncio.Lock()
        self._generation = 0  # the loaded module's number: its timers and bound hosts carry it
        self._mod: Any = None  # what the loaded module's register returned
        self._errands: str | None = None  # the errands part of the lich line (lich's status module draws it)
        self._interactive: bool | None = None  # the last session.start's flag (None: no session started yet)
        self._permission_mode = session.permission_mode  # what agent.spawn carries as permissionMode
        self._background = _Background()
        self._books = _Books()
        self._composer = _Composer()
        self._prompt_waiters: list[asyncio.Future[None]] = []  # notes lich waits to type at a free prompt
        self._kept = MemoryStore()  # the session's state as the plugin keeps it across modules and processes
        self._dead = False  # the session host died: the next event that needs it starts another
        self.host_life = AbortSignal()  # the running session host's life: aborted when it dies
        self.kept_runs: dict[str, asyncio.Task[ProcessResult]] = {}  # opens that outlive their host, by call id
        self.registry.on_for(STATUS_PLUGIN, "prepend")("ui.render", {"component": "SessionMode"}, self._errands_part)
        self.load_mod()

    @property
    def mod(self) -> Any:
        """What the loaded module's ``register`` returned."""
        return self._mod

    def _report(self, text: str) -> None:
        """What the engine reports about a hook it skipped or a hook still running (a ``report`` event)."""
        self.transcript.record("report", text=text)

    # -- time and tasks ----------------------------------------------------------------------------

    def now(self) -> int:
        """Virtual ms since the scenario's start."""
        return self.loop.now_ms()

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        tasks = self._background.tasks
        task = asyncio.ensure_future(work)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def schedule(self, generation: int, ms: int, fn: Timer, repeat: bool) -> None:
        """Arm a timer of the module loaded as ``generation``; a module reloaded since never runs it."""
        timer = _HostTimer(self, generation, ms, fn, repeat)
        timer.arm()
        self._background.timers.add(timer)

    def _timer_fired(self, timer: _HostTimer) -> None:
        """A timer's time came: it runs unless its module was reloaded since; a repeating one re-arms."""
        if timer.generation != self._generation:
            self._background.timers.discard(timer)
            return
        # spawn, but the task leaves the set itself as it ends (_run_timer): no done callback, so one
        # loop turn less per tick; a task cancelled before it starts is stopped by close.
        self._background.tasks.add(self.loop.create_task(self._run_timer(timer.fn)))
        if timer.repeat:
            timer.arm()
        else:
            self._background.timers.discard(timer)

    async def _run_timer(self, fn: Timer) -> None:
        try:
            await fn()
        except Exception as error:  # the engine reports a failed timer; the scenario goes on
            self.transcript.record("report", text=f"{MOD_PLUGIN}: a timer failed: {type(error).__name__}: {error}")
        finally:
            self._background.tasks.discard(asyncio.current_task())

    def _bind(self, invocation: Invocation) -> BoundHost:
        return BoundHost(self, invocation, self._generation)

    async def close(self) -> None:
        """End of the scenario: stop every timer and whatever still runs."""
        background = self._background
        for timer in background.timers:
            timer.cancel()
        background.timers.clear()
        if background.note is not None:
            background.note.cancel()
            background.note = None
        pending = [*background.tasks, *self.chain.lingering]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    # -- the module: load, reload --------------------------------------------------------------------

    def load_mod(self, start: Mapping[str, Any] | None = None, fresh_module: bool = True) -> None:
        """A fresh mod. The plugin's own (``agent_cards.register``) starts from the state its session keeps,
        as its session host does; a test's module keeps nothing. Without a data folder only the module's
        memory keeps it: a session host started again in the same module (``fresh_module`` false) is handed
        it, a fresh module starts from nothing."""
        self._generation += 1
        on = self.registry.on_for(MOD_PLUGIN, "user")
        if self._register is not agent_cards.register:
            self._mod = self._register(on)
            return
        if not self.session.keeps_state and fresh_module:
            self._kept = MemoryStore()
        state = restore(None, self._kept, str(self._books.process), start, self._report)
        self._kept.update(lambda _: state)
        self._mod = self._register(self._bridged_on(on), KeptStore(state, self._kept))

    def _bridged_on(self, on: Any) -> Any:
        """``on`` as the plugin's module wires the mod: each hook through its session host, so that a host that
        dies while a kept run is awaited is answered as the module answers it (``bridge.unsure``)."""

        def bridged_on(event: str, *args: Any) -> None:
            *matcher, hook = args
            on(event, *matcher, self._bridged(hook))

        return bridged_on

    def _bridged(self, hook: Any) -> Any:
        async def bridged(host: Any, e: Event, next: Any) -> Any:
            try:
                return await hook(host, e, next)
            except HostGone as gone:  # a command ran for the call: lich may have the task
                lang = self.session.env.get("LICH_PROMPT_LANG")
                return {"deny": agent_text(lang, "bridge.unsure", program=gone.program)}

        return bridged

    def start_kept(self, argv: Any, key: str, timeout_ms: int) -> asyncio.Task[ProcessResult]:
        """A run that outlives the session host that started it: what it gives waits in ``kept_runs`` for the
        host that reads it (this one, or the next if this one dies)."""
        running = self.spawn(self.run_process(argv, timeout_ms, AbortSignal()))
        running.add_done_callback(_seen)
        self.kept_runs[key] = running
        return running

    def _resume_mod(self) -> None:
        """What a session host does once up: the mod re-arms what lived only in memory (its read of lich)."""
        resume = getattr(self._mod, "resume", None)
        if resume is not None:
            resume(BoundHost(self, None, self._generation))

    def _stop_module(self) -> None:
        """The module's timers stop and its hooks leave the chain."""
        timers = self._background.timers
        for timer in [t for t in timers if t.generation == self._generation]:
            timer.cancel()
            timers.discard(timer)
        self.registry.drop_plugin(MOD_PLUGIN)
        self._generation += 1

    def host_dies(self) -> None:
        """The plugin's session host dies: the mod's memory is gone; what it kept is not. The next event that
        needs it starts another, and with workers counted (or an open under way) the module does after 5 s.
        A call whose open was running is answered by the module (``bridge.unsure``); the open runs on, and
        the next host reads what it printed."""
        self.transcript.record("host.dies")
        self.host_life.abort()  # a call awaiting its open is answered by the plugin's module instead
        self.host_life = AbortSignal()
        self._stop_module()
        self._mod = None
        self._dead = True
        kept = self._kept.get()
        if kept.workers or kept.opens:  # an open it ran may have made a worker: the next host reads it
            self.loop.call_later(RESTART_MS / 1000, self._revive)

    def _revive(self) -> None:
        if not self._dead:
            return
        self._dead = False
        self.transcript.record("host.start")
        self.load_mod(fresh_module=False)
        self._resume_mod()
        self.schedule_footer()

    async def continue_session(self, how: str) -> None:
        """``/exit``, then ``claude --continue`` (or ``--resume``) in a new process (2.1.328): whatever ran in
        the old one is gone; Claude Code reports each agent it had launched there as failed with the next
        prompt; the module is loaded fresh and ``session.start`` raised for every module.

        The new process draws its screen before the fresh module's session host is up: the lich line is gone
        until that host says hello and draws the kept count, then reads lich (measured on 2.1.332: seconds in
        real time, as Claude Code and the host start; a worker lich no longer lists shows only until that
        read ends)."""
        async with self._lifecycle:
            await self._continue_session(how)

    async def _continue_session(self, how: str) -> None:
        background = self._background
        for timer in background.timers:
            timer.cancel()
        background.timers.clear()
        pending = [*background.tasks, *self.chain.lingering]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._close_rewind(redraw=False)  # /exit is typed at the prompt; the new process draws its own screen
        self._composer.reload_asked = None  # the new process loads the module fresh anyway
        self.registry.drop_plugin(MOD_PLUGIN)
        self._dead = False
        books = self._books
        lost, books.launched = books.launched, {}
        books.native_tasks.clear()
        books.process += 1
        self.transcript.record("resume", how=how)
        await self.render_footer()  # the new screen, drawn before any session host of the plugin is up
        interactive = self._interactive is not False
        self._interactive = interactive
        self.load_mod({"isInteractive": interactive})
        for task_id, description in lost.items():
            text = results.lost_at_resume(task_id, description)
            books.told.append(text)
            self.transcript.record("notification", task=task_id, status="failed", text=text)
        await self._raise_session_start(interactive, None)
        self._resume_mod()
        self.schedule_footer()

    async def prompt(self, text: str) -> None:
        """The person types a prompt: ``prompt.submit`` down the hooks; the model reads it with what the hooks
        put beside it, after the notifications that waited for a prompt."""
        told, context = await self._submit(text)
        self.transcript.record("prompt", text=text, notifications=told, context=context)

    async def _submit(self, text: str) -> tuple[list[str], list[str]]:
        """Text typed at the prompt and submitted: ``prompt.submit`` down the hooks. What the model reads beside
        it: the notifications that waited for a prompt, and the hooks' context lines."""

        async def core(e: Event) -> HookResult:
            entered: HookResult = {"text": e.get("text"), "origin": e.get("origin")}
            if e.get("context"):
                entered["context"] = e["context"]
            return entered

        async with self._a_turn():
            self._revive()
            told, self._books.told = self._books.told, []
            e: Event = {"text": text, "origin": {"kind": "composer"}, "wait": False}
            entered = await self.chain.dispatch("prompt.submit", e, core, ENGINE, self._turn)
        return told, list(entered.get("context") or [])

    async def reload(self) -> None:
        """``register`` runs again in a fresh module; the old module's timers stop; ``session.start`` is
        raised again for the reloaded module alone (2.1.328), once a session has started. The plugin's module
        starts a fresh session host, which reads the state its session keeps.

        Asked for while a turn runs (a call or a prompt in flight), the reload waits for the turn to end
        (measured on 2.1.328 and 2.1.332: a module changed while a tool ran was reloaded once the model's
        reply ended the turn, not while the tool ran; at the idle prompt, within a second), and its ``reload``
        event says when it was asked (``asked``). Asked again meanwhile, it is still one reload."""
        composer = self._composer
        if composer.busy:
            if composer.reload_asked is None:
                composer.reload_asked = self.now()
            return
        async with self._lifecycle:
            await self._reload()

    async def _reload(self, asked: int | None = None) -> None:
        self._close_rewind()  # the command is typed at the prompt
        self._stop_module()
        self._dead = False
        self.transcript.record("reload", **({} if asked is None else {"asked": asked}))
        if self.session.keeps_state and self._kept.get().workers:
            # The engine redraws at once, before the fresh module's session host has said hello: a redraw
            # never waits for one, so the lich line is gone until the host reads the kept count back.
            await self.render_footer()
        started = self._interactive is not None
        self.load_mod({"isInteractive": self._interactive} if started else None)
        self.schedule_footer()  # the footer is drawn again by the fresh module
        if started:
            await self._raise_session_start(bool(self._interactive), MOD_PLUGIN)
        self._resume_mod()

    # -- events the scenario raises ------------------------------------------------------------------

    async def start_session(self, interactive: bool) -> None:
        self._interactive = interactive
        await self._raise_session_start(interactive, None)

    async def _raise_session_start(self, interactive: bool, plugin: str | None) -> None:
        """``session.start`` down every module's hooks, or only ``plugin``'s (a reloaded module)."""
        self.transcript.record("session.start", interactive=interactive)
        self._revive()  # the module's session.start hook starts a host with the event, whatever came before
        e = {"cwd": self.session.cwd, "surface": "terminal" if interactive else None, "isInteractive": interactive}

        async def core(e: Event) -> HookResult:
            return {"cwd": self.session.cwd}

        await self.chain.dispatch("session.start", e, core, ENGINE, None, plugin)

    def switch_mode(self, mode: str) -> None:
        """The person switches the session's permission mode (Shift+Tab): the calls made from now on are
        checked in it, and ``agent.spawn`` carries it as ``permissionMode``."""
        self.transcript.record("mode", mode=mode)
        self._permission_mode = mode

    def esc(self) -> None:
        """Esc in the asking session: its own turn is interrupted (a call in flight is answered with the
        engine's rejection, its hooks go on with their signal aborted); background work goes on. At the idle
        prompt, a second Esc within :data:`DOUBLE_PRESS_MS` opens the Rewind panel (when the conversation has
        a turn to go back to), and the next Esc closes it."""
        self.transcript.record("esc")
        screen = self._composer
        if screen.rewind:
            self._close_rewind()
            return
        now = self.now()
        if screen.busy:
            screen.idle_esc = None
        elif screen.idle_esc is not None and now - screen.idle_esc <= DOUBLE_PRESS_MS:
            screen.idle_esc = None  # a double press, with a turn to go back to or none
            if self._books.turns:
                screen.rewind = True
                self.transcript.record("rewind", open=True)
        else:
            screen.idle_esc = now
        self._end_turn(self._turn)

    @contextlib.asynccontextmanager
    async def _a_turn(self) -> AsyncIterator[None]:
        """A call or a prompt of the session, while it runs: it needs the prompt (the person left the Rewind panel
        for it), it is a turn the conversation can go back to, and an Esc meanwhile interrupts it."""
        self._close_rewind()
        self._books.turns += 1
        composer = self._composer
        composer.idle_esc = None
        composer.busy += 1
        try:
            yield
        finally:
            composer.busy -= 1
            if not composer.busy:
                self._prompt_freed()
        if not composer.busy and composer.reload_asked is not None:  # the turn ended: the reload it held runs
            asked, composer.reload_asked = composer.reload_asked, None
            async with self._lifecycle:
                await self._reload(asked)

    def _close_rewind(self, redraw: bool = True) -> None:
        """The Rewind panel goes (Esc, or the person leaves it to type): the prompt is back, and the footer drawn
        again (``redraw``; a new process draws a screen of its own)."""
        if not self._composer.rewind:
            return
        self._composer.rewind = False
        self.transcript.record("rewind", open=False)
        self._prompt_freed()
        if redraw:
            self.schedule_footer()

    def _end_turn(self, turn: AbortSignal) -> None:
        """``turn`` is interrupted, if it is still the session's: every call of it still in flight is answered with
        the engine's rejection and runs nothing more beneath its hooks (measured on 2.1.328: Esc during the mod's
        read before the open opens nothing and starts no agent), and the next call begins a new turn."""
        turn.abort()
        if turn is self._turn:
            self._turn = AbortSignal()

    async def call(
        self,
        tool: str,
        tool_input: dict[str, Any],
        call_id: str,
        origin: Origin = ENGINE,
        agent_id: str | None = None,
        permission: PermissionVerdict | None = None,
    ) -> dict[str, Any]:
        """The model (or a plugin, or a subagent) calls a tool; returns the ``answer`` event."""
        async with self._a_turn():
            self._revive()
            return await self._call(tool, tool_input, call_id, origin, agent_id, permission)

    async def _call(self, tool: str, tool_input: dict[str, Any], call_id: str, origin: Origin, agent_id: str | None,
                    permission: PermissionVerdict | None) -> dict[str, Any]:
        self.transcript.record("call", call=call_id, tool=tool, input=tool_input)
        verdict = permission or PermissionVerdict()
        if tool == "Agent" and verdict.removes_tool:  # the plain deny rule: no such tool, no hook runs
            return self.transcript.record("answer", call=call_id, error=results.NO_SUCH_TOOL)
        e: Event = {**tool_input, "tool": tool, "tool_use_id": call_id}
        if agent_id is not None:
            e["agentId"] = agent_id

        turn = self._turn

        async def core(e: Event) -> HookResult:
            return await self._core_tool(e, origin, verdict, turn)

        dispatch = asyncio.ensure_future(self.chain.dispatch("tool.call", e, core, origin, turn))
        escaped = turn.wait()
        try:
            await asyncio.wait((dispatch, escaped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            turn.forget(escaped)
        if not dispatch.done():  # Esc: the engine answers now; the hooks go on, and what they return is dropped
            self.spawn(dispatch)
            return self.transcript.record("answer", call=call_id, error=results.USER_REJECTED)
        answer = dispatch.result()
        launched = answer.get("result")
        if tool == "Agent" and isinstance(launched, dict) and launched.get("status") == "async_launched":
            self._books.launched[str(launched.get("agentId"))] = str(tool_input.get("description") or "")
        return self.transcript.record("answer", call=call_id, **_answer_fields(answer))

    async def workflow_step(self, description: str, prompt: str) -> None:
        """A workflow step spawns its agent directly: no Agent tool call, so no tool.call hook runs.

        Steps are numbered from 1 in the order they run (``agentIndex``)."""
        self._books.workflow_steps += 1
        index = self._books.workflow_steps
        spawn = self._spawn_event(f"workflow_{index}", description, prompt, "general-purpose", ENGINE, None)
        spawn["workflow"] = {"runId": "run_1", "agentIndex": index}
        await self._spawn(spawn, f"workflow_{index}", self._turn)

    def set_errands(self, text: str | None) -> None:
        """lich's status module has this errands text to draw (None: nothing)."""
        self._errands = text
        self.schedule_footer()

    async def render_footer(self) -> None:
        if self._composer.rewind:  # the panel covers the footer's row: nothing is drawn until it closes
            return
        self._revive()  # a redraw starts a session host that died
        e: Event = {
            "surface": "terminal",
            "component": "SessionMode",
            "requestId": self._ref(),
            "props": {"modes": list(self.session.modes)},
        }
        drawn: list[str] = []

        async def core(e: Event) -> HookResult:
            props = e.get("props") if isinstance(e.get("props"), dict) else {}
            modes = props.get("modes") if isinstance(props, dict) else None
            drawn.extend(str(m) for m in modes or [])
            return {"type": "engine", "ref": e["requestId"]}

        await self.chain.dispatch("ui.render", e, core, ENGINE, None)
        line = next((m for m in drawn if m.startswith("lich: ")), None)
        self.transcript.record("footer", line=line, modes=drawn)

    def schedule_footer(self) -> None:
        if not self._background.footer_due:
            self._background.footer_due = True
            self.loop.call_soon(self._footer_now)

    def _footer_now(self) -> None:
        self._background.footer_due = False
        task = self.spawn(self.render_footer())
        self._background.footers += 1
        task.add_done_callback(self._footer_drawn)

    def _footer_drawn(self, _: asyncio.Task[Any]) -> None:
        self._background.footers -= 1

    async def settle(self) -> None:
        """Let the footer redraws that are due now finish (the end of a step)."""
        while self._background.footer_due or self._background.footers:
            await asyncio.sleep(0)

    async def finish_instant(self) -> None:
        """Let everything due at this instant happen (the end of a scenario): a run that ends at the very
        instant the last step does still has its answer given and its footer drawn, as in a real session
        where both happened before it ended."""
        await self.loop.instant_over()
        await self.settle()

    async def _errands_part(self, host: Any, e: Event, next: Any) -> HookResult:
        if not self._errands:
            return dict(await next(e))
        props = e["props"]
        return dict(await next({**e, "props": {**props, "modes": [*props["modes"], f"lich: {self._errands}"]}}))

    # -- the pipeline beneath the hooks --------------------------------------------------------------

    def _ref(self) -> int:
        self._books.refs += 1
        return self._books.refs

    async def _core_tool(
        self, e: Event, origin: Origin, permission: PermissionVerdict, turn: AbortSignal
    ) -> HookResult:
        call_id = str(e.get("tool_use_id"))
        if turn.aborted:  # its turn ended while the hooks ran: the call was answered then, and nothing runs for it
            return results.error(results.USER_REJECTED)
        if e.get("tool") == "TaskStop":
            return self._native_task_stop(e)
        if e.get("tool") != "Agent":
            self.transcript.record("native", call=call_id, tool=e.get("tool"), input=_beneath(e))
            return {"ref": self._ref(), "result": "ok", "text": "ok"}
        invalid = results.input_problem("Agent", e)
        if invalid is not None:  # the tool's schema, checked beneath the hooks and before the permission
            return results.error(invalid)
        agent_type = e.get("subagent_type") or "general-purpose"
        refusal = await self._permission(call_id, permission, turn, str(agent_type))
        if refusal is not None:
            return results.error(refusal, self._ref())
        if agent_type not in self.session.agent_types:
            return results.error(results.unknown_agent_type(str(agent_type), list(self.session.agent_types)))
        if e.get("isolation") == "worktree" and not self.session.git_repo:  # before agent.spawn (2.1.328)
            return results.error(results.WORKTREE_NO_GIT)
        spawn = self._spawn_event(
            call_id, e.get("description"), e.get("prompt"), str(agent_type), origin, e.get("agentId")
        )
        if isinstance(e.get("model"), str):
            spawn["model"] = e["model"]
        answer = await self._spawn(spawn, call_id, turn, _beneath(e))
        if isinstance(answer.get("deny"), str):
            return results.error(results.spawn_denied(answer["deny"]))
        agent_id = str(answer.get("agentId"))
        self._books.native_tasks[agent_id] = str(e.get("description") or "")
        result = {
            "isAsync": True,
            "status": "async_launched",
            "agentId": agent_id,
            "description": e.get("description"),
            "resolvedModel": answer.get("model"),
            "prompt": e.get("prompt"),
            "outputFile": f"/tmp/claude-0/-home-dev-app/session/tasks/{agent_id}.output",
            "canReadOutputFile": True,
            "canContinueAgent": True,
        }
        return {"ref": self._ref(), "result": result, "text": results.launched(agent_id)}

    async def _permission(
        self, call_id: str, permission: PermissionVerdict, turn: AbortSignal, agent_type: str
    ) -> str | None:
        """The permission check; the refusal text, or None when the call may run.

        A person answers one dialog at a time: a call that comes to its dialog while another is on screen
        waits for it, in the order the calls reached the check (the engine's order, which the plugin's
        bridge keeps). "No" ends the turn (measured on 2.1.328: two Agent calls of one reply, "no" at the
        first dialog: one dialog shown, both calls answered with the rejection, nothing opened), so a call
        still waiting for its dialog then is never asked."""
        if permission.decision == "ask" and permission.answer is not None:
            async with self._dialog:
                if turn.aborted:
                    return results.USER_REJECTED
                refusal = self._checked(call_id, permission, agent_type)
                if refusal is not None:
                    self._end_turn(turn)
                return refusal
        return self._checked(call_id, permission, agent_type)

    def _checked(self, call_id: str, permission: PermissionVerdict, agent_type: str) -> str | None:
        """The check's verdict, recorded (a ``permission`` event). A typed deny rule for another agent type
        lets the call run, as the mode does."""
        decision, via = permission.decision, {"allow": "mode", "deny": "rule", "ask": "dialog"}.get(
            permission.decision, "hook"
        )
        refusal: str | None = None
        if decision == "deny":
            rule = permission.denied_type(agent_type)
            if rule is None:
                via = "mode"
            else:
                refusal = results.rule_denied(agent_type, rule)
        elif decision == "hook-deny":
            refusal = results.hook_error(permission.reason or "Blocked by hook")
        elif decision == "ask" and permission.answer is None:
            refusal = results.PERMISSION_DENIED_NOBODY
        elif decision == "ask" and not permission.answer:
            refusal = results.USER_REJECTED
        outcome = "allow" if refusal is None else "deny"
        self.transcript.record("permission", call=call_id, outcome=outcome, via=via)
        return refusal

    def _spawn_event(
        self, call_id: str, description: Any, prompt: Any, agent_type: str, origin: Origin, parent: Any
    ) -> Event:
        spawn: Event = {
            "tool_use_id": call_id,
            "prompt": prompt,
            "description": description,
            "subagentType": agent_type,
            "provider": {"plugin": origin.plugin, "tier": origin.tier},
            "parentModel": PARENT_MODEL,
            "permissionMode": self._permission_mode,
            "background": True,
            "fork": False,
        }
        if parent is not None:
            spawn["parentAgentId"] = parent
        return spawn

    async def _spawn(
        self, spawn: Event, call_id: str, turn: AbortSignal, tool_input: dict[str, Any] | None = None
    ) -> HookResult:
        """``agent.spawn`` down the hooks, their signal a child of the call's own ``turn``, then the native agent."""
        beneath = tool_input if tool_input is not None else {"description": spawn["description"],
                                                             "prompt": spawn["prompt"]}

        async def native(e: Event) -> HookResult:
            import hashlib  # only for a native agent's id: most replays never need it

            agent_id = "a" + hashlib.sha256(call_id.encode()).hexdigest()[:16]
            self.transcript.record("native", call=call_id, tool="Agent", input=beneath)
            return {"model": e.get("model") or PARENT_MODEL, "agentId": agent_id}

        if self.registry.hooks("agent.spawn"):
            answer = await self.chain.dispatch("agent.spawn", spawn, native, ENGINE, turn)
        else:
            answer = await native(spawn)
        self.transcript.record("spawn", call=call_id, answer=answer)
        return answer

    def _native_task_stop(self, e: Event) -> HookResult:
        task_id = str(e.get("task_id") or e.get("shell_id") or "")
        self.transcript.record("native", call=str(e.get("tool_use_id")), tool="TaskStop", input=_beneath(e))
        if not task_id:
            return results.error("<tool_use_error>Missing required parameter: task_id</tool_use_error>")
        description = self._books.native_tasks.pop(task_id, None)
        self._books.launched.pop(task_id, None)
        if description is None:
            return {"result": results.no_task(task_id), "text": results.no_task(task_id), "isError": True}
        return {"ref": self._ref(), "result": results.task_stopped(task_id, description), "text": "stopped"}

    # -- processes -----------------------------------------------------------------------------------

    async def run_process(self, argv: Any, timeout_ms: int, signal: AbortSignal) -> ProcessResult:
        event = self.transcript.record(
            "run", argv=list(argv) if isinstance(argv, list | tuple) else argv, timeout_ms=timeout_ms
        )
        started = self.now()
        try:
            host_check(argv, timeout_ms)
            result = await self.executor.execute(list(argv), self.session.env, timeout_ms, signal)
        except ProcessError as error:
            event.update(exit=None, stdout="", stderr="", error=str(error), ms=self.now() - started)
            raise
        except asyncio.CancelledError:  # the scenario ended while it ran: the event still has every field
            event.update(exit=None, stdout="", stderr="", error=RUN_CUT_SHORT, ms=self.now() - started)
            raise
        finally:
            self._arm_notes()
        event.update(
            exit=result.exit_code, stdout=result.stdout, stderr=result.stderr, error=None, ms=self.now() - started
        )
        if result.stdout_truncated or result.stderr_truncated:
            event["truncated"] = {"stdout": result.stdout_truncated, "stderr": result.stderr_truncated}
        return result

    def _arm_notes(self) -> None:
        """lich types a worker's report at this session's prompt when it is due (a ``note``)."""
        background = self._background
        due = self.executor.next_note_at()
        armed = background.note
        if armed is not None:
            if due == background.note_due:
                return  # already armed for that instant: keep it (most runs change no note)
            armed.cancel()
        background.note_due = due
        background.note = None if due is None else self.loop.call_later(max(0, due - self.now()) / 1000,
                                                                        self._emit_notes)

    def _emit_notes(self) -> None:
        self._background.note = None
        texts = [note.text for note in self.executor.notes_due(self.now())]
        if texts:
            self.spawn(self._type_notes(texts))
        self._arm_notes()

    async def _type_notes(self, texts: list[str]) -> None:
        """lich types each note at the asking session's prompt between turns, and the session submits it as a
        prompt: a ``note`` is what the model then reads, with what ``prompt.submit`` put beside it. A turn
        running, or the Rewind panel over the prompt, holds it until the prompt is free; a session run with
        ``-p`` has no prompt to type at, and reads none."""
        for text in texts:
            while self._prompt_taken():
                freed = self.loop.create_future()
                self._prompt_waiters.append(freed)
                await freed
            if self._interactive is False:
                continue
            told, context = await self._submit(text)
            beside = {k: v for k, v in (("notifications", told), ("context", context)) if v}
            self.transcript.record("note", text=text, **beside)

    def _prompt_taken(self) -> bool:
        """Nothing can be typed at the prompt now: a turn runs, or the Rewind panel is over it."""
        return bool(self._composer.busy) or self._composer.rewind

    def _prompt_freed(self) -> None:
        """The prompt may be free again (a turn ended, the Rewind panel closed): whoever waits for it looks."""
        waiters, self._prompt_waiters = self._prompt_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def _seen(task: asyncio.Task[ProcessResult]) -> None:
    """A kept run's failure is read by whoever collects it, or by nobody (a scenario that ends first)."""
    if not task.cancelled():
        task.exception()


def _beneath(e: Event) -> dict[str, Any]:
    """The tool input in a tool.call event as it reached Claude Code beneath the hooks (a ``native`` event's)."""
    return {k: v for k, v in e.items() if k not in ("tool", "tool_use_id", "agentId")}


def _answer_fields(answer: HookResult) -> dict[str, Any]:
    if isinstance(answer.get("deny"), str):
        return {"deny": answer["deny"]}
    if answer.get("isError"):
        return {"error": answer.get("text", answer.get("result"))}
    fields: dict[str, Any] = {"result": answer.get("result")}
    if answer.get("context"):
        fields["context"] = answer["context"]
    return fields
