"""The sans-I/O core of a taken Agent call and of a TaskStop (agent_cards.taken): each arm of its decision.

No host and no process here: the tests hand the core what a process gave, or how it failed, and read the
one decision it returns. How the two hosts drive it: test_hook.py (the parity test) and test_any_host.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cards import rules, taken
from agent_cards.delivery import TakenCall
from agent_cards.engine import ENGINE, Event, ProcessError, ProcessResult
from agent_cards.state import ModState, Worker
from agent_cards.taken import Completed, Deny, Launched, Native, Opening, ProcessRun, Stopped, TakenStop
from agent_cards.texts import AGENT, agent_text

LICH = "/opt/lich/bin/lich"
ENV = {"LICH_BIN": LICH, "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0"}
CALL: Event = {"tool": "Agent", "tool_use_id": "toolu_01QxW7zAB12", "description": "Fix the auth flow",
               "prompt": "Fix the login form"}
BRANCH = "subagent/fix-the-auth-flow-ab12"


class FakeEnv:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, name: str, /) -> str | None:
        return self.values.get(name)


def facts(env: dict[str, str] | None = None, **inp: Any) -> rules.Facts:
    return rules.Facts({**CALL, **inp}, ENGINE, True, FakeEnv(ENV if env is None else env))


def opening(env: dict[str, str] | None = None, base: ProcessResult | BaseException | None = None,
            **inp: Any) -> Opening:
    step = taken.opening(facts(env, **inp), base, 1_000)
    assert isinstance(step, Opening)
    return step


def printed(status: str | None, answer: str = "", label: str = "Fix auth", exit_code: int = 0,
            stderr: str = "") -> ProcessResult:
    session: dict[str, Any] = {"id": "9f81", "label": label, "name": "fix-auth-9f81", "path": "/srv/fix-auth"}
    if status is not None:
        session["delivery"] = {"ticket": "t1", "status": status, "answer": answer}
    return ProcessResult(exit_code, json.dumps(session) + "\n", stderr)


# -- leave ---------------------------------------------------------------------------------------------


def test_a_call_no_rule_leaves_is_taken() -> None:
    assert taken.leave(facts()) is None


def test_a_rule_without_a_toast_leaves_the_call_silently() -> None:
    assert taken.leave(facts(subagent_type="Explore")) == Native()


def test_a_rule_with_a_toast_names_the_call_and_fills_the_slots() -> None:
    assert taken.leave(facts(prompt="x" * 8193)) == Native(
        "toast.oversize", {"description": "Fix the auth flow", "bytes": 8193, "limit": 8192}
    )


# -- the base read and the open --------------------------------------------------------------------------


def test_only_an_isolated_call_reads_its_base() -> None:
    assert taken.base_read(facts()) is None
    assert taken.base_read(facts(isolation="worktree")) == ProcessRun(("git", "branch", "--show-current"), 30_000)


def test_a_shared_call_opens_in_this_checkout() -> None:
    step = opening(model="haiku")
    assert step == Opening(
        TakenCall("toolu_01QxW7zAB12", "Fix the auth flow", "Fix the login form", "", 1_000, None),
        ProcessRun((LICH, "open", "--kind", "claude", "--subagent", "--model", "haiku", "--prompt",
                    "Fix the login form", "--json"), 120_000),
        LICH,
    )


@pytest.mark.parametrize(
    ("base", "argv_base"),
    [
        (ProcessResult(0, "feat/login\n", ""), ["--base", "feat/login"]),  # BASE-BRANCH
        (ProcessResult(0, "\n", ""), []),  # a detached HEAD (BASE-NONE)
        (ProcessResult(128, "", "fatal: not a git repository\n"), []),  # git cannot answer
        (ProcessError("git failed to start", "start"), []),
    ],
)
def test_an_isolated_call_opens_a_worktree_on_the_base_git_gave(
    base: ProcessResult | ProcessError, argv_base: list[str]
) -> None:
    step = opening(base=base, isolation="worktree")
    assert step.call.branch == BRANCH and step.call.isolated
    assert list(step.run.argv) == [LICH, "open", "--kind", "claude", "--subagent", "--worktree", BRANCH, *argv_base,
                                   "--prompt", "Fix the login form", "--json"]


def test_a_base_read_that_failed_in_another_way_leaves_the_call_saying_why() -> None:
    step = taken.opening(facts(isolation="worktree"), RuntimeError("the host broke"), 1_000)
    assert step == Native("toast.open_failed", {"description": "Fix the auth flow", "reason": "the host broke"})


def test_an_older_lichs_worker_on_a_subagent_branch_stays_native_silently() -> None:
    older = {k: v for k, v in ENV.items() if k != "LICH_SUBAGENT_DEPTH"}
    step = taken.opening(facts(older, isolation="worktree"), ProcessResult(0, "subagent/earlier-0001\n", ""), 1_000)
    assert step == Native()


def test_the_call_reads_its_language() -> None:
    assert opening({**ENV, "LICH_PROMPT_LANG": "ja"}).call.lang == "ja"


# -- the open's decision ---------------------------------------------------------------------------------


def test_pending_is_launched_with_the_worker_to_count() -> None:
    decision = opening(base=ProcessResult(0, "main\n", ""), isolation="worktree").decide(printed("pending"), 5_000)
    assert decision == Launched(
        "fix-auth-9f81", "Fix auth", "Fix the auth flow", "Fix the login form",
        agent_text(None, "context.isolated", label="Fix auth", branch=BRANCH, path="/srv/fix-auth"),
        Worker("fix-auth-9f81", "Fix auth", "Fix the auth flow", shared=False),
    )


def test_answered_is_completed_timed_from_the_calls_start() -> None:
    decision = opening().decide(printed("answered", "All done."), 4_500)
    assert isinstance(decision, Completed)
    assert (decision.agent_id, decision.duration_ms, decision.worktree_branch) == ("fix-auth-9f81", 3_500, "")


def test_a_status_that_never_reached_the_card_denies_naming_it() -> None:
    decision = opening().decide(printed("unread"), 2_000)
    assert decision == Deny(AGENT["deny.never_reached"].format(label="Fix auth", status="unread"), card="Fix auth")


def test_a_card_the_task_did_not_reach_runs_the_native_agent_naming_it() -> None:
    result = printed(None, exit_code=1, stderr="lich: the task did not reach it\n")
    assert opening().decide(result, 2_000) == Native(
        "toast.not_reached",
        {"description": "Fix the auth flow", "label": "Fix auth", "reason": "lich: the task did not reach it"},
    )


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (ProcessResult(1, "", "lich: no lich is running\n"), "lich: no lich is running"),
        (ProcessError("lich: the run failed to start", "start"), "lich: the run failed to start"),
        (RuntimeError(), "RuntimeError"),
    ],
)
def test_an_open_that_failed_runs_the_native_agent_saying_why(outcome: ProcessResult | Exception, reason: str) -> None:
    assert opening().decide(outcome, 2_000) == Native(
        "toast.open_failed", {"description": "Fix the auth flow", "reason": reason}
    )


def test_an_open_that_timed_out_runs_the_native_agent_with_a_toast_naming_the_timeout() -> None:
    reason = "$.process.run(lich) aborted: still running after 120000ms"
    timed_out = ProcessError(reason, "timeout")
    native = Native("toast.open_timeout", {"description": "Fix the auth flow", "reason": reason})
    assert opening().decide(timed_out, 120_000) == native
    isolated = opening(base=ProcessResult(0, "main\n", ""), isolation="worktree")
    assert isolated.decide(timed_out, 120_000) == native
    assert isinstance(opening().decide(timed_out, 120_000, esc=True), Deny)  # Esc alone denies


def test_esc_during_a_failed_open_denies_instead_of_running_it_twice() -> None:
    aborted = ProcessError("$.process.run(lich) aborted", "aborted")
    assert opening().decide(aborted, 2_000, esc=True) == Deny(AGENT["deny.esc"])
    isolated = opening(base=ProcessResult(0, "main\n", ""), isolation="worktree")
    assert isolated.decide(aborted, 2_000, esc=True) == Deny(AGENT["deny.esc.isolated"].format(branch=BRANCH))


def test_esc_during_an_open_tells_the_agent_lich_may_hold_the_task() -> None:
    text = AGENT["deny.esc"]
    assert "interrupted while lich was opening a card" in text and "[lich] note" in text


def test_esc_after_lich_has_the_task_keeps_lichs_answer() -> None:
    decision = opening().decide(printed("pending"), 2_000, esc=True)
    assert isinstance(decision, Launched) and decision.worker is not None


def test_an_answer_that_cannot_be_worded_still_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> Any:
        raise KeyError("slot")

    monkeypatch.setattr("agent_cards.delivery.answer", broken)
    assert opening().decide(printed("pending"), 2_000) == Deny(
        AGENT["deny.unknown"].format(label="Fix auth", status="pending"),
        card="Fix auth",
        fault="could not word the answer for fix-auth-9f81 (KeyError: 'slot')",
    )


def test_the_spawn_is_denied_naming_the_card_or_with_the_calls_own_deny() -> None:
    step = opening()
    spawn = agent_text(None, "deny.spawn", label="Fix auth")
    for status in ("pending", "answered", "unread"):
        decision = step.decide(printed(status), 2_000)
        assert not isinstance(decision, Native)
        assert step.spawn_denial(decision) == spawn
    esc = step.decide(ProcessError("aborted", "aborted"), 2_000, esc=True)
    assert isinstance(esc, Deny) and step.spawn_denial(esc) == esc.text


# -- TaskStop -------------------------------------------------------------------------------------------

SHARED = Worker("session-2-9f81", "Session 2", "Fix the auth flow", shared=True)
ISOLATED = Worker("subagent-fix-9f82", BRANCH, "Fix it apart", shared=False)
STATE = ModState(interactive=True, lich_bin=LICH, workers=(SHARED, ISOLATED))


@pytest.mark.parametrize("e", [{"task_id": "a6309eb26840c8e82"}, {}, {"task_id": ""}, {"shell_id": 7}])
def test_taskstop_for_any_other_id_is_claude_codes(e: Event) -> None:
    assert taken.stop_of({"tool": "TaskStop", **e}, STATE) is None


def test_taskstop_closes_a_shared_worker_and_aborts_an_isolated_ones_turn() -> None:
    shared = taken.stop_of({"task_id": SHARED.name}, STATE)
    assert shared == TakenStop(SHARED.name, SHARED, LICH)
    assert shared.run == ProcessRun((LICH, "close", SHARED.name), 30_000)
    isolated = taken.stop_of({"shell_id": ISOLATED.name}, STATE)  # the deprecated name of the id
    assert isolated is not None and isolated.run == ProcessRun((LICH, "control", ISOLATED.name, "abort"), 30_000)


@pytest.mark.parametrize(("worker", "exit_code"), [(SHARED, 0), (ISOLATED, 0), (ISOLATED, 2), (ISOLATED, 3)])
def test_a_stop_lich_carried_out_gives_taskstops_result(worker: Worker, exit_code: int) -> None:
    stop = TakenStop(worker.name, worker, LICH)
    decision = stop.decide(ProcessResult(exit_code, "", ""), None)
    assert isinstance(decision, Stopped) and decision == Stopped(worker.name, worker)
    assert decision.result == {
        "message": f"Successfully stopped task: {worker.name} ({worker.description})",
        "task_id": worker.name,
        "task_type": "local_agent",
        "command": worker.description,
    }


@pytest.mark.parametrize(
    ("worker", "outcome", "reason"),
    [
        (SHARED, ProcessResult(2, "", "lich: it is busy elsewhere\n"), "lich: it is busy elsewhere"),
        (ISOLATED, ProcessResult(1, "", ""), "exit code 1"),
        (SHARED, ProcessError("lich was still running after 30000 ms", "timeout"),
         "lich was still running after 30000 ms"),
    ],
)
def test_a_stop_lich_refused_denies_with_its_reason(
    worker: Worker, outcome: ProcessResult | ProcessError, reason: str
) -> None:
    decision = TakenStop(worker.name, worker, LICH).decide(outcome, "pt-BR")
    assert decision == Deny(agent_text("pt-BR", "deny.stop_refused", label=worker.label, reason=reason))


# -- the values --------------------------------------------------------------------------------------------


def test_decisions_are_immutable_values_of_their_own_type() -> None:
    deny = Deny("no")
    with pytest.raises(AttributeError):
        setattr(deny, "text", "yes")  # noqa: B010
    assert deny == Deny("no") and hash(deny) == hash(Deny("no"))
    assert deny != Deny("no", card="Fix auth")
    assert Native() != Deny("no") and Native() != ()
    assert repr(ProcessRun(("git",), 1)) == "ProcessRun(argv=('git',), timeout_ms=1)"


def test_a_spawn_in_plan_mode_leaves_the_call_native_with_a_toast() -> None:
    spawn = {"tool_use_id": "toolu_01QxW7zAB12", "permissionMode": "plan"}
    assert opening().left_in_plan_mode(spawn) == Native("toast.plan_mode", {"description": "Fix the auth flow"})


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "auto", "bypassPermissions", "dontAsk", None])
def test_a_spawn_in_any_other_mode_opens_the_worker(mode: str | None) -> None:
    assert opening().left_in_plan_mode({"permissionMode": mode}) is None
