"""One Agent call the mod takes, and one TaskStop, decided without I/O: the core every host drives.

In the manner of h11: this module says what to run and reads what came back. It runs nothing, awaits
nothing and keeps nothing between calls. A host (the mod engine's module ``agent_cards.mod``, the
command hook ``agent_cards.hook``, a bridge into the real Claude Code) runs each ``ProcessRun`` it is given
with its own ``process.run`` and hands back the ``ProcessResult``, or the exception that ended the run.

An Agent call:

1. ``leave(facts)``: the take-or-leave table (``rules.RULES``): a ``Native``, or None when it is taken.
2. ``base_read(facts)``: an isolated call's ``ProcessRun`` for its base (OPEN-BASE), else None.
3. ``opening(facts, base, now_ms)``: what git gave, ``rules.AFTER_BASE``, then the open (OPEN-ARGV,
   OPEN-TIMEOUT): a ``Native``, or an ``Opening`` (the call, its ``lich open`` and ``LICH_BIN``).
4. ``Opening.decide(printed, now_ms, esc=…)``: one decision from what the open gave.

| what came back                             | decision                                         | clause               |
|--------------------------------------------|--------------------------------------------------|----------------------|
| a rule leaves the call                     | ``Native``, with the rule's toast if it has one  | TAKE-*, FALL-OVERSIZE|
| git could not answer (``ProcessError``)    | no ``--base``                                    | BASE-NONE            |
| the base read failed in another way        | ``Native``, ``toast.open_failed``                | FALL-BEFORE-ONLY     |
| an older lich's worker, subagent/ base     | ``Native``, silent                               | TAKE-OLD-LICH-WORKER |
| agent.spawn carries plan mode (PERM-PLAN)  | ``Native``, ``toast.plan_mode``: no open runs    | PERM-PLAN            |
|   (``Opening.left_in_plan_mode``)          |                                                  |                      |
| the open failed and Esc was pressed        | ``Deny``: ``deny.esc`` (``.isolated``)           | FALL-ESC-OPEN        |
| the open timed out (its run was stopped)   | ``Native``, ``toast.open_timeout``               | DELIV-OPEN-FAILED    |
| the open failed, naming a card             | ``Native``, ``toast.not_reached``                | FALL-OPEN-FAILED     |
| the open failed otherwise                  | ``Native``, ``toast.open_failed``                | DELIV-OPEN-FAILED    |
| lich printed a delivery                    | ``Launched``, ``Completed`` or ``Deny``, as the  | DELIV-*              |
|                                            | delivery table says (``delivery.answer``);       |                      |
|                                            | ``Launched`` carries the ``Worker`` to count     |                      |
| wording that answer failed                 | ``Deny``: English ``deny.unknown``, never native | FALL-BEFORE-ONLY     |

A TaskStop: ``stop_of(e, state)`` gives a ``Stop`` for a worker the session counts, or None
(STOP-OTHER); its ``run`` is ``close`` or ``control … abort``; ``TakenStop.decide(done, lang)``:

| what came back                             | decision                                         | clause               |
|--------------------------------------------|--------------------------------------------------|----------------------|
| exit 0 (``control … abort``: 2 and 3 too)  | ``Stopped``: TaskStop's result; worker dropped   | STOP-RESULT          |
| any other exit, or the run failed          | ``Deny``: lich's reason; the worker still counts | STOP-REFUSED         |

How each host answers a decision:

| decision    | the mod: ``tool.call``            | the mod: ``agent.spawn``   | the command hook: PreToolUse       |
|-------------|-----------------------------------|----------------------------|------------------------------------|
| ``Native``  | toast, then ``next(e)``           | toast, then ``next(e)``    | no decision (``systemMessage``)    |
| ``Deny``    | ``{deny}``                        | ``Opening.spawn_denial``   | deny: its text                     |
| ``Launched``| ``{result, context}``             | ``Opening.spawn_denial``   | deny: ``hook.launched.*`` + context |
| ``Completed``| ``{result}``                     | ``Opening.spawn_denial``   | deny: ``hook.completed`` + report  |
| ``Stopped`` | ``{result}``, the worker dropped  |                            | deny: ``hook.stopped.*``           |

The values here are immutable records (``agent_cards.record.Value``). The delivery table, the lich
commands and the texts are imported only by the steps that need them: the command hook loads this
module for every Agent call, the ones it leaves included (``tests/test_hook.py`` declares what its
start-up may load).
"""

from __future__ import annotations

from agent_cards import rules
from agent_cards.branch import branch_name
from agent_cards.engine import Event, ProcessError, ProcessResult, error_reason, text
from agent_cards.record import Value, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from agent_cards.delivery import TakenCall
    from agent_cards.rules import Facts, Rule
    from agent_cards.state import ModState, PendingOpen, Worker


class ProcessRun(Value):
    """A process to run: one argv, no shell, and its time limit."""

    argv: tuple[str, ...]
    timeout_ms: int


# -- decisions -------------------------------------------------------------------------------------


class Native(Value):
    """The call goes on to Claude Code untouched (its native agent runs), after ``toast`` if there is one.

    ``toast`` is a PERSON key of ``agent_cards.texts``; ``slots`` fill it (the call's description included).
    """

    toast: str | None = None
    slots: Mapping[str, object] = field(default_factory=dict)


class Deny(Value):
    """The call is answered with a refusal the model reads: ``text``.

    ``card``: the label of the card lich opened, when it opened one (the spawn denial names it).
    ``fault``: what went wrong while wording the answer, for a host that can log it.
    """

    text: str
    card: str | None = None
    fault: str | None = None


class Launched(Value):
    """lich has the task and the worker runs on: the Agent tool's ``async_launched`` (BG-ASYNC).

    ``context`` is the line the model reads after the result (RESULT-CONTEXT); ``worker`` is the worker to
    count (DELIV-PENDING), None when it is not counted.
    """

    agent_id: str
    card: str
    description: str
    prompt: str
    context: str
    worker: Worker | None

    @property
    def result(self) -> dict[str, Any]:
        """RESULT-ASYNC: the Agent tool's own result (no ``canReadOutputFile``)."""
        return {
            "status": "async_launched",
            "agentId": self.agent_id,
            "description": self.description,
            "prompt": self.prompt,
            "outputFile": "",
        }


_ZERO_USAGE: dict[str, Any] = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": None,
    "cache_read_input_tokens": None,
    "server_tool_use": None,
    "service_tier": None,
    "cache_creation": None,
}


class Completed(Value):
    """lich has the task and the worker already answered: the Agent tool's ``completed`` (DELIV-ANSWERED).

    ``report`` is the worker's answer, then where the work is. ``worktree_branch`` is "" for a worker in
    the asking session's checkout.
    """

    agent_id: str
    card: str
    report: str
    duration_ms: int
    prompt: str
    worktree_path: str = ""
    worktree_branch: str = ""

    @property
    def result(self) -> dict[str, Any]:
        """RESULT-COMPLETED: counts of zero; the worktree only for an isolated call."""
        result: dict[str, Any] = {
            "status": "completed",
            "agentId": self.agent_id,
            "content": [{"type": "text", "text": self.report}],
            "totalToolUseCount": 0,
            "totalDurationMs": self.duration_ms,
            "totalTokens": 0,
            "usage": dict(_ZERO_USAGE),
            "prompt": self.prompt,
        }
        if self.worktree_branch:
            result["worktreePath"] = self.worktree_path
            result["worktreeBranch"] = self.worktree_branch
        return result


class Stopped(Value):
    """TaskStop was carried out (STOP-RESULT): the host stops counting ``worker``."""

    task_id: str
    worker: Worker

    @property
    def result(self) -> dict[str, Any]:
        """TaskStop's own result shape."""
        from agent_cards.lich_calls import stop_result

        return stop_result(self.task_id, self.worker)


Answer = Launched | Completed
"""lich has the task and the call answers with the Agent tool's own result."""


# -- an Agent call ---------------------------------------------------------------------------------


def native(e: Event, toast: str | None = None, **slots: object) -> Native:
    """A ``Native`` for the call ``e``, its toast naming the call's description."""
    return _saying(text(e.get("description")), toast, **slots)


_QUIET = Native()  # no toast: one shared value (it is immutable), not one built per call left


def _saying(description: str, toast: str | None, **slots: object) -> Native:
    return _QUIET if toast is None else Native(toast, {"description": description, **slots})


def _left(rule: Rule, facts: Facts) -> Native:
    if rule.toast is None:  # the commonest case: no slots to fill, so the prompt is not measured
        return _QUIET
    return native(facts.e, rule.toast, bytes=facts.prompt_bytes, limit=rules.PROMPT_LIMIT_BYTES)


def leave(facts: Facts) -> Native | None:
    """TAKE-*, FALL-OVERSIZE: the ``Native`` of a call the rules keep native; None when the call is taken."""
    for rule in rules.RULES:  # rules.first_leaving, inlined: this runs for every Agent call, one call fewer
        if rule.leaves(facts):
            return _QUIET if rule.toast is None else _left(rule, facts)
    return None


def base_read(facts: Facts) -> ProcessRun | None:
    """OPEN-BASE: an isolated call reads the asking session's branch first; any other call reads nothing."""
    if not facts.isolated:
        return None
    from agent_cards.lich_calls import BASE_ARGV, BASE_TIMEOUT_MS

    return ProcessRun(BASE_ARGV, BASE_TIMEOUT_MS)


class Opening(Value):
    """A call the mod takes, its open ready to run: at ``agent.spawn`` (the mod) or at once (the hook)."""

    call: TakenCall
    run: ProcessRun
    lich_bin: str

    def decide(
        self, printed: ProcessResult | BaseException, now_ms: int, *, esc: bool = False
    ) -> Native | Deny | Answer:
        """The call's one decision, from what ``lich open`` printed or how it failed.

        ``esc``: the person pressed Esc while the open ran (the mod's ``next.signal``; a hook sees none).
        """
        from agent_cards import delivery

        call = self.call
        if isinstance(printed, BaseException):
            got: delivery.Opened | delivery.NotOpened = delivery.NotOpened(error_reason(printed))
        else:
            try:
                got = delivery.read_open(printed)  # OPEN-LAST: nothing runs after the open
            except Exception as error:
                got = delivery.NotOpened(error_reason(error))
        if isinstance(got, delivery.NotOpened):
            if esc:  # FALL-ESC-OPEN: lich may already have the task, and the person stopped the call
                from agent_cards.texts import agent_text

                return Deny(agent_text(call.lang, "deny.esc.isolated" if call.isolated else "deny.esc",
                                       branch=call.branch))
            if isinstance(printed, ProcessError) and printed.kind == "timeout":  # OPEN-TIMEOUT: an open that failed
                return _saying(call.description, "toast.open_timeout", reason=got.reason)
            if got.label:
                return _saying(call.description, "toast.not_reached", label=got.label, reason=got.reason)
            return _saying(call.description, "toast.open_failed", reason=got.reason)
        try:
            return delivery.answer(call, got, now_ms)
        except Exception as error:  # lich has the task: a deny, never the native agent (FALL-BEFORE-ONLY)
            from agent_cards.texts import AGENT

            fault = f"could not word the answer for {got.name} ({type(error).__name__}: {error})"
            return Deny(AGENT["deny.unknown"].format(label=got.label, status=got.status), got.label, fault)

    def left_in_plan_mode(self, spawn: Event) -> Native | None:
        """PERM-PLAN: a call whose ``agent.spawn`` carries ``permissionMode: "plan"`` stays native, with a toast.

        lich opens a worker with its own permissions, never in the asking session's mode (``lich open`` has
        no flag for it), so a worker would edit where Claude Code's own agent, held to plan mode, must ask.
        The mode is known only here: ``tool.call`` does not carry it, and the person may switch it (Shift+Tab)
        between two calls.
        """
        if spawn.get("permissionMode") != "plan":
            return None
        return _saying(self.call.description, "toast.plan_mode")

    def spawn_denial(self, decision: Deny | Answer) -> str:
        """PERM-DENY-SPAWN: what the mod tells the native spawn; the Agent call answers with ``decision``."""
        if isinstance(decision, Deny) and decision.card is None:
            return decision.text
        from agent_cards.texts import agent_text

        return agent_text(self.call.lang, "deny.spawn", label=decision.card)


def kept_opening(pending: PendingOpen) -> Opening:
    """The ``Opening`` of an open a host that died left running, rebuilt from what the state kept of it: its
    ``decide`` reads what it printed as its call would have (no argv: it is never run again)."""
    from agent_cards.delivery import TakenCall

    call = TakenCall(pending.key, pending.description, pending.prompt, pending.branch, pending.call_ms, pending.lang)
    return Opening(call, ProcessRun((), pending.timeout_ms), pending.lich_bin)


def opening(facts: Facts, base: ProcessResult | BaseException | None, now_ms: int) -> Native | Opening:
    """The open of a call ``leave`` took, once an isolated call's base read (``base``) came back.

    ``now_ms`` is the call's start on the host's clock (``totalDurationMs`` counts from it).
    """
    from agent_cards import lich_calls
    from agent_cards.delivery import TakenCall

    e = facts.e
    if facts.isolated:
        if isinstance(base, BaseException) and not isinstance(base, ProcessError):  # not git's answer
            return native(e, "toast.open_failed", reason=error_reason(base))
        facts.base = lich_calls.base_of(base) if isinstance(base, ProcessResult) else ""  # BASE-NONE
        rule = rules.first_leaving(rules.AFTER_BASE, facts)
        if rule is not None:
            return _left(rule, facts)
    tool_use_id = str(e.get("tool_use_id") or "")
    description, prompt = text(e.get("description")), text(e.get("prompt"))
    branch = branch_name(description, tool_use_id) if facts.isolated else ""
    call = TakenCall(tool_use_id, description, prompt, branch, now_ms, facts.env.get("LICH_PROMPT_LANG"))
    run = ProcessRun(tuple(lich_calls.open_argv(facts.lich_bin, e, branch, facts.base)), lich_calls.OPEN_TIMEOUT_MS)
    return Opening(call, run, facts.lich_bin)


# -- TaskStop --------------------------------------------------------------------------------------


class TakenStop(Value):
    """STOP-TAKEN: a TaskStop for a worker this session opened and still counts."""

    task_id: str
    worker: Worker
    lich_bin: str

    @property
    def run(self) -> ProcessRun:
        """STOP-SHARED: ``close``; STOP-ISOLATED: ``control … abort``."""
        from agent_cards.lich_calls import STOP_TIMEOUT_MS, stop_argv

        return ProcessRun(tuple(stop_argv(self.lich_bin, self.worker)), STOP_TIMEOUT_MS)

    def decide(self, done: ProcessResult | BaseException, lang: str | None) -> Stopped | Deny:
        """TaskStop's one decision, from what the stop printed or how it failed."""
        from agent_cards.lich_calls import stop_refusal
        from agent_cards.texts import agent_text

        refusal = error_reason(done) if isinstance(done, BaseException) else stop_refusal(self.worker, done)
        if refusal is not None:  # STOP-REFUSED: the worker still counts
            return Deny(agent_text(lang, "deny.stop_refused", label=self.worker.label, reason=refusal))
        return Stopped(self.task_id, self.worker)


def stop_of(e: Event, state: ModState) -> TakenStop | None:
    """The worker a TaskStop names (``task_id``, else ``shell_id``), or None: Claude Code's (STOP-OTHER)."""
    from agent_cards.lich_calls import task_id_of

    task_id = task_id_of(e)
    worker = state.worker(task_id) if task_id else None
    return None if worker is None else TakenStop(task_id, worker, state.lich_bin)
