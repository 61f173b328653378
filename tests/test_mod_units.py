"""Units of the mod's core: the take-or-leave table (rules), what ``lich open`` printed and the answer it
decides (delivery), and the serializable state (state). The decisions of a taken call: test_taken.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cards import lich_calls, rules
from agent_cards.delivery import NotOpened, Opened, TakenCall, answer, read_open
from agent_cards.engine import ENGINE, Event, Origin, ProcessResult
from agent_cards.record import replace
from agent_cards.state import MemoryStore, ModState, PendingOpen, Worker, restore
from agent_cards.taken import Completed, Deny, Launched
from agent_cards.texts import AGENT

# --- rules ---------------------------------------------------------------------------------------------------

TAKEN_ENV = {"LICH_BIN": "/opt/lich/bin/lich", "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0"}
TAKEN_CALL: Event = {"tool": "Agent", "tool_use_id": "toolu_1", "description": "d", "prompt": "p"}


class RecordingEnv:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.read: list[str] = []

    def get(self, name: str, /) -> str | None:
        self.read.append(name)
        return self.values.get(name)


def facts(
    e: Event | None = None,
    env: dict[str, str] | None = None,
    origin: Origin = ENGINE,
    interactive: bool = True,
    base: str = "",
) -> rules.Facts:
    return rules.Facts(dict(TAKEN_CALL if e is None else e), origin, interactive,
                       RecordingEnv(dict(TAKEN_ENV if env is None else env)), base)


def test_the_rules_run_in_the_specs_order() -> None:
    assert [(r.clause, r.toast) for r in rules.RULES] == [
        ("TAKE-INTERACTIVE", None),
        ("TAKE-ORIGIN", None),
        ("TAKE-TYPE", None),
        ("TAKE-TEAM", None),
        ("TAKE-REMOTE", None),
        ("TAKE-PROMPT", None),
        ("TAKE-LICH-ENV", None),
        ("TAKE-CARDS-OFF", "toast.cards_off"),
        ("TAKE-CARDS-OFF", None),
        ("FALL-OVERSIZE", "toast.oversize"),
    ]
    assert [(r.clause, r.toast) for r in rules.AFTER_BASE] == [
        ("TAKE-OLD-LICH-WORKER", None), ("FALL-OVERSIZE", "toast.oversize"),
    ]


def test_a_plain_call_is_taken() -> None:
    assert rules.first_leaving(rules.RULES, facts()) is None
    assert rules.first_leaving(rules.RULES, facts({**TAKEN_CALL, "subagent_type": "general-purpose"})) is None
    assert rules.first_leaving(rules.RULES, facts({**TAKEN_CALL, "isolation": "worktree"})) is None


@pytest.mark.parametrize(
    ("change", "clause", "toast"),
    [
        ({"interactive": False}, "TAKE-INTERACTIVE", None),
        ({"origin": Origin("other-plugin", "user")}, "TAKE-ORIGIN", None),
        ({"e": {**TAKEN_CALL, "agentId": "a123"}}, "TAKE-ORIGIN", None),
        ({"e": {**TAKEN_CALL, "subagent_type": "Explore"}}, "TAKE-TYPE", None),
        ({"e": {**TAKEN_CALL, "subagent_type": "no-such-type"}}, "TAKE-TYPE", None),
        ({"e": {**TAKEN_CALL, "team_name": "blue"}}, "TAKE-TEAM", None),
        ({"e": {**TAKEN_CALL, "isolation": "remote"}}, "TAKE-REMOTE", None),
        ({"env": {**TAKEN_ENV, "LICH_BIN": ""}}, "TAKE-LICH-ENV", None),
        ({"env": {"LICH_BIN": "/opt/lich/bin/lich"}}, "TAKE-LICH-ENV", None),
        ({"env": {**TAKEN_ENV, "LICH_SUBAGENT_CARDS": "off", "LICH_SUBAGENT_DEPTH": "2"}}, "TAKE-CARDS-OFF",
         "toast.cards_off"),
        ({"env": {**TAKEN_ENV, "LICH_SUBAGENT_CARDS": "off"}}, "TAKE-CARDS-OFF", None),
        ({"e": {**TAKEN_CALL, "prompt": "x" * 8193}}, "FALL-OVERSIZE", "toast.oversize"),
    ],
)
def test_each_rule_leaves_its_calls(change: dict[str, Any], clause: str, toast: str | None) -> None:
    leaving = rules.first_leaving(rules.RULES, facts(**change))
    assert leaving is not None
    assert (leaving.clause, leaving.toast) == (clause, toast)


def test_cards_on_or_unset_is_taken_and_exactly_8192_bytes_goes_to_lich() -> None:
    assert rules.first_leaving(rules.RULES, facts(env={**TAKEN_ENV, "LICH_SUBAGENT_CARDS": "on"})) is None
    assert rules.first_leaving(rules.RULES, facts({**TAKEN_CALL, "prompt": "é" * 4096})) is None  # 8192 bytes


def test_after_the_base_exactly_8192_bytes_still_goes_to_lich_and_one_more_leaves_it_native() -> None:
    """An isolated call under a lich that sets no depth has its size checked after its base is known."""
    old_lich = {k: v for k, v in TAKEN_ENV.items() if k != "LICH_SUBAGENT_DEPTH"}
    isolated = {**TAKEN_CALL, "isolation": "worktree"}
    for prompt, leaving in (("é" * 4096, None), ("x" * 8193, "FALL-OVERSIZE")):
        f = facts({**isolated, "prompt": prompt}, env=old_lich, base="main")
        assert rules.first_leaving(rules.RULES, f) is None  # not before the base
        rule = rules.first_leaving(rules.AFTER_BASE, f)
        assert (rule and rule.clause) == leaving


def test_the_first_rule_that_leaves_wins() -> None:
    f = facts({**TAKEN_CALL, "subagent_type": "Plan", "prompt": "x" * 9000}, interactive=False)
    leaving = rules.first_leaving(rules.RULES, f)
    assert leaving is not None and leaving.clause == "TAKE-INTERACTIVE"


def test_a_call_the_first_rows_leave_reads_no_environment() -> None:
    f = facts({**TAKEN_CALL, "subagent_type": "Explore"})
    assert rules.first_leaving(rules.RULES, f) is not None
    assert isinstance(f.env, RecordingEnv) and f.env.read == []


def test_the_environment_is_read_once_per_variable() -> None:
    f = facts()
    assert rules.first_leaving(rules.RULES, f) is None
    assert isinstance(f.env, RecordingEnv)
    assert sorted(f.env.read) == sorted(set(f.env.read))


@pytest.mark.parametrize(
    ("depth", "base", "leaves"),
    [
        (None, "subagent/fix-ab12", True),  # an older lich: a worker on a subagent/ branch stays native
        (None, "feat/login", False),
        (None, "", False),
        ("0", "subagent/fix-ab12", False),  # a current lich decides through LICH_SUBAGENT_CARDS alone
        ("2", "subagent/fix-ab12", False),
    ],
)
def test_after_base_old_lich_worker(depth: str | None, base: str, leaves: bool) -> None:
    env = {k: v for k, v in TAKEN_ENV.items() if k != "LICH_SUBAGENT_DEPTH"}
    if depth is not None:
        env["LICH_SUBAGENT_DEPTH"] = depth
    f = facts({**TAKEN_CALL, "isolation": "worktree"}, env=env, base=base)
    assert (rules.first_leaving(rules.AFTER_BASE, f) is not None) is leaves
    shared = facts(dict(TAKEN_CALL), env=env, base=base)  # only isolated calls are left for their base
    assert rules.first_leaving(rules.AFTER_BASE, shared) is None


@pytest.mark.parametrize(
    ("raw", "depth", "worker"),
    [
        (None, None, False),
        ("", None, False),
        ("0", 0, False),
        ("3", 3, True),
        ("03", 3, True),
        ("deep", -1, False),
        ("-1", -1, False),
        (" 3", -1, False),
        ("٣", -1, False),  # an Arabic-Indic three is no ASCII decimal
        ("3.0", -1, False),
    ],
)
def test_depth_parsing(raw: str | None, depth: int | None, worker: bool) -> None:
    env = {k: v for k, v in TAKEN_ENV.items() if k != "LICH_SUBAGENT_DEPTH"}
    if raw is not None:
        env["LICH_SUBAGENT_DEPTH"] = raw
    f = facts(env=env)
    assert f.depth == depth
    assert f.is_worker is worker


@pytest.mark.parametrize(
    ("prompt", "size"),
    [
        ("", 0),
        ("abc", 3),
        ("é", 2),
        ("日本語", 9),
        ("😀", 4),
        ("\ud800", 3),  # a lone surrogate: 3 bytes, as TextEncoder's U+FFFD
        ("a\udfffb", 5),
        (None, 0),
        (42, 0),
    ],
)
def test_prompt_bytes(prompt: Any, size: int) -> None:
    e = {**TAKEN_CALL, "prompt": prompt}
    assert facts(e).prompt_bytes == size


def test_prompt_bytes_of_a_missing_prompt() -> None:
    e = {k: v for k, v in TAKEN_CALL.items() if k != "prompt"}
    assert facts(e).prompt_bytes == 0


# --- lich_calls ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [None, "", 5, ["sonnet"], {"name": "sonnet"}])
def test_a_model_that_is_no_name_adds_no_model_flag(model: Any) -> None:
    argv = lich_calls.open_argv("/bin/lich", {**TAKEN_CALL, "model": model}, "", "")
    assert argv == ["/bin/lich", "open", "--kind", "claude", "--subagent", "--prompt", "p", "--json"]


def test_a_named_model_goes_before_the_prompt() -> None:
    argv = lich_calls.open_argv("/bin/lich", {**TAKEN_CALL, "model": "sonnet"}, "b/x", "main")
    assert argv[5:] == ["--worktree", "b/x", "--base", "main", "--model", "sonnet", "--prompt", "p", "--json"]


@pytest.mark.parametrize(("shared", "listed", "running"), [
    (True, {}, False), (True, {"w1": "done"}, True), (False, {"w1": "done"}, False), (False, {"w1": "busy"}, True),
    (False, {}, False),
])
def test_a_worker_still_runs_while_lich_lists_it_and_an_isolated_one_until_done(
        shared: bool, listed: dict[str, str], running: bool) -> None:
    assert lich_calls.still_running(Worker("w1", "One", "d", shared), listed) is running


# --- delivery.read_open ----------------------------------------------------------------------------------------


def printed(stdout: str, stderr: str = "", exit_code: int = 0) -> ProcessResult:
    return ProcessResult(exit_code=exit_code, stdout=stdout, stderr=stderr)


SESSION = {"label": "Fix auth", "name": "fix-auth", "path": "/srv/lich/fix-auth", "id": "s1"}


@pytest.mark.parametrize("exit_code", [0, 2, 3])
def test_read_open_pending(exit_code: int) -> None:
    stdout = json.dumps({**SESSION, "delivery": {"status": "pending", "ticket": "t1"}}) + "\n"
    assert read_open(printed(stdout, exit_code=exit_code)) == Opened(
        label="Fix auth", name="fix-auth", path="/srv/lich/fix-auth", status="pending", answer=""
    )


def test_read_open_answered_carries_the_answer() -> None:
    stdout = json.dumps({**SESSION, "delivery": {"status": "answered", "answer": "All done."}})
    opened = read_open(printed(stdout))
    assert isinstance(opened, Opened) and (opened.status, opened.answer) == ("answered", "All done.")


def test_read_open_label_and_name_fall_back_on_each_other() -> None:
    only_name = read_open(printed(json.dumps({"name": "n1", "delivery": {"status": "pending"}})))
    assert isinstance(only_name, Opened) and (only_name.label, only_name.name) == ("n1", "n1")
    only_label = read_open(printed(json.dumps({"label": "L", "delivery": {"status": "pending"}})))
    assert isinstance(only_label, Opened) and (only_label.label, only_label.name) == ("L", "L")
    assert read_open(printed(json.dumps({"name": "n1"}), "", 1)) == NotOpened("exit code 1", label="n1")


def test_read_open_reads_no_id_lich_did_not_give_as_label_or_name() -> None:
    """The mod reads ``label``, ``name``, ``path`` and ``delivery`` of what lich printed, nothing else."""
    only_id = read_open(printed(json.dumps({"id": "9f8e", "delivery": {"status": "pending"}})))
    assert isinstance(only_id, Opened) and (only_id.label, only_id.name) == ("", "")
    assert read_open(printed(json.dumps({"id": "9f8e"}), "", 1)) == NotOpened("exit code 1", label=None)


def test_read_open_without_a_delivery_names_the_card() -> None:
    stderr = "lich: the session is open, but the task did not reach it: prompt is 9000 bytes\n"
    got = read_open(printed(json.dumps(SESSION), stderr, 1))
    assert got == NotOpened("lich: the session is open, but the task did not reach it: prompt is 9000 bytes",
                            label="Fix auth")
    assert read_open(printed(json.dumps(SESSION), "", 1)) == NotOpened("exit code 1", label="Fix auth")
    assert read_open(printed(json.dumps({**SESSION, "delivery": None}), "", 1)) == NotOpened("exit code 1",
                                                                                               label="Fix auth")


@pytest.mark.parametrize("stdout", ["", "not json", "{", "[1, 2]", '"text"', "42", "null"])
def test_read_open_not_a_json_object(stdout: str) -> None:
    assert read_open(printed(stdout, "lich: no lich is running\n", 1)) == NotOpened("lich: no lich is running")
    assert read_open(printed(stdout, "  \n", 3)) == NotOpened("exit code 3")
    silent = read_open(printed(stdout, "", 0))  # exit 0 with nothing said: still not opened
    assert isinstance(silent, NotOpened) and silent.label is None and silent.reason


@pytest.mark.parametrize(("value", "status"), [("pending", "null"), ([], "null"), ({"status": 5}, "5"),
                                               ({"status": None}, "null"), ({}, "null")])
def test_read_open_a_delivery_that_is_not_an_object_with_a_status(value: Any, status: str) -> None:
    """lich has the task (there is a delivery) but its status is unreadable: an unknown status, so a deny."""
    got = read_open(printed(json.dumps({**SESSION, "delivery": value})))
    assert isinstance(got, Opened) and got.status == status
    assert answer(call(), got, 0) == Deny(AGENT["deny.unknown"].format(label="Fix auth", status=status), "Fix auth")


# --- delivery.answer ---------------------------------------------------------------------------------------------


def call(branch: str = "", lang: str | None = None, started: int = 1000) -> TakenCall:
    return TakenCall("toolu_1", "Fix the auth flow", "Fix the login form", branch, started, lang)


def opened(status: str, answer_text: str = "") -> Opened:
    return Opened(label="Fix auth", name="fix-auth", path="/srv/lich/fix-auth", status=status,
                  answer=answer_text)


@pytest.mark.parametrize(("status", "counted"), [("pending", True), ("unanswered", False)])
@pytest.mark.parametrize("branch", ["", "subagent/fix-the-auth-flow-ab12"])
def test_async_launched(status: str, counted: bool, branch: str) -> None:
    decided = answer(call(branch), opened(status), 5000)
    assert isinstance(decided, Launched)
    worker = Worker("fix-auth", "Fix auth", "Fix the auth flow", shared=not branch)
    assert decided.worker == (worker if counted else None)
    assert (decided.agent_id, decided.card) == ("fix-auth", "Fix auth")
    assert decided.result == {
        "status": "async_launched",
        "agentId": "fix-auth",
        "description": "Fix the auth flow",
        "prompt": "Fix the login form",
        "outputFile": "",
    }
    line = decided.context
    for part in ('"Fix auth"', "/srv/lich/fix-auth", "[lich]", "send_to_session", "lich send", "SendMessage"):
        assert part in line
    assert (branch in line) if branch else ("this same checkout" in line)


def test_a_pending_worker_without_a_name_is_not_counted() -> None:
    nameless = Opened(label="Fix auth", name="", path="/srv/lich/fix-auth", status="pending", answer="")
    decided = answer(call(), nameless, 0)
    assert isinstance(decided, Launched) and decided.worker is None


ZERO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": None,
    "cache_read_input_tokens": None,
    "server_tool_use": None,
    "service_tier": None,
    "cache_creation": None,
}


def test_completed_shared() -> None:
    decided = answer(call(started=1000), opened("answered", "All done."), 4000)
    assert isinstance(decided, Completed)
    report = AGENT["completed.shared"].format(answer="All done.", label="Fix auth", path="/srv/lich/fix-auth")
    assert decided.report == report
    assert decided.result == {
        "status": "completed",
        "agentId": "fix-auth",
        "content": [{"type": "text", "text": report}],
        "totalToolUseCount": 0,
        "totalDurationMs": 3000,
        "totalTokens": 0,
        "usage": ZERO_USAGE,
        "prompt": "Fix the login form",
    }
    assert report.startswith("All done.\n\n")
    assert "this same checkout" in report and "/srv/lich/fix-auth" in report and "send_to_session" in report


def test_completed_isolated_carries_the_worktree() -> None:
    branch = "subagent/fix-the-auth-flow-ab12"
    decided = answer(call(branch, started=1000), opened("answered", "All done."), 4000)
    assert isinstance(decided, Completed)
    report = AGENT["completed.isolated"].format(answer="All done.", label="Fix auth", branch=branch,
                                                path="/srv/lich/fix-auth")
    result = decided.result
    assert result["content"] == [{"type": "text", "text": report}]
    assert (result["worktreePath"], result["worktreeBranch"]) == ("/srv/lich/fix-auth", branch)
    assert list(result)[-2:] == ["worktreePath", "worktreeBranch"]


def test_a_clock_that_went_back_gives_a_duration_of_zero() -> None:
    decided = answer(call(started=5000), opened("answered"), 4000)
    assert isinstance(decided, Completed) and decided.result["totalDurationMs"] == 0


def test_completed_usage_is_a_fresh_copy() -> None:
    decided = answer(call(), opened("answered"), 2000)
    assert isinstance(decided, Completed)
    decided.result["usage"]["input_tokens"] = 99
    assert decided.result["usage"] == ZERO_USAGE
    assert answer(call(), opened("answered"), 2000) == decided


@pytest.mark.parametrize("status", ["unread", "undelivered"])
def test_never_reached_denies(status: str) -> None:
    decided = answer(call(), opened(status), 2000)
    assert decided == Deny(AGENT["deny.never_reached"].format(label="Fix auth", status=status), card="Fix auth")


@pytest.mark.parametrize("status", ["stopped", "expired", "weird"])
def test_an_unknown_status_denies_naming_the_card_and_its_branch(status: str) -> None:
    shared = answer(call(), opened(status), 2000)
    assert shared == Deny(AGENT["deny.unknown"].format(label="Fix auth", status=status), card="Fix auth")
    isolated = answer(call("subagent/x-ab12"), opened(status), 2000)
    text = AGENT["deny.unknown.isolated"].format(label="Fix auth", branch="subagent/x-ab12", status=status)
    assert isolated == Deny(text, card="Fix auth")


def test_the_answer_follows_the_prompt_language() -> None:
    english, japanese, unknown = (answer(call(lang=lang), opened("pending"), 0) for lang in (None, "ja", "xx"))
    assert isinstance(english, Launched) and isinstance(japanese, Launched) and isinstance(unknown, Launched)
    assert japanese.context != english.context
    assert unknown.context == english.context
    assert english.context == AGENT["context.shared"].format(label="Fix auth", path="/srv/lich/fix-auth")
    for literal in ("[lich]", "send_to_session", "SendMessage"):
        assert literal in japanese.context
    assert any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in japanese.context)


# --- state ---------------------------------------------------------------------------------------------------------

names = st.text(min_size=1, max_size=20)
workers = st.builds(Worker, name=names, label=names, description=st.text(max_size=40), shared=st.booleans())
opens = st.builds(PendingOpen, key=names, description=st.text(max_size=40), prompt=st.text(max_size=40),
                  branch=st.text(max_size=20), call_ms=st.integers(0, 2**40), opened_ms=st.integers(0, 2**40),
                  timeout_ms=st.integers(1, 600_000), lang=st.none() | st.text(max_size=8),
                  lich_bin=st.text(max_size=30))
states = st.builds(ModState, interactive=st.booleans(), lich_bin=st.text(max_size=30),
                   workers=st.lists(workers, max_size=5).map(tuple), opens=st.lists(opens, max_size=3).map(tuple))


@given(states)
def test_state_round_trips(state: ModState) -> None:
    assert ModState.from_json(state.to_json()) == state
    assert ModState.from_json(json.loads(json.dumps(state.to_json()))) == state


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
state_like = st.fixed_dictionaries(
    {},
    optional={
        "interactive": json_values,
        "lich_bin": json_values,
        "workers": json_values | st.lists(st.dictionaries(st.sampled_from(["name", "label", "description", "shared"]),
                                                          json_values, max_size=4), max_size=4),
    },
)


@settings(max_examples=200)
@given(st.one_of(json_values, state_like))
def test_garbage_in_never_raises(data: Any) -> None:
    state = ModState.from_json(data)
    assert isinstance(state, ModState)
    assert isinstance(state.interactive, bool) and isinstance(state.lich_bin, str)
    assert all(isinstance(w.name, str) and w.name for w in state.workers)
    assert ModState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    "data",
    [None, 5, "state", [], [{"name": "x"}], {"workers": 5}, {"workers": True}, {"workers": "abc"},
     {"workers": {"name": "x"}}, {"workers": [5, None, "x", {"name": ""}, {"name": 7}]}],
)
def test_garbage_reads_as_the_empty_state(data: Any) -> None:
    assert ModState.from_json(data) == ModState()


def test_from_json_reads_what_it_can() -> None:
    state = ModState.from_json({
        "interactive": "yes",  # only true is true
        "lich_bin": 5,
        "workers": [{"name": "w1"}, {"name": "w2", "label": "Two", "description": "d", "shared": False}, {"x": 1}],
    })
    assert state == ModState(
        interactive=False,
        lich_bin="",
        workers=(Worker("w1", "w1", "", True), Worker("w2", "Two", "d", False)),
    )


@pytest.mark.parametrize("lost", ["w1", {"w1": 1}, ["w1", 5], 5])
def test_reported_lost_is_read_only_as_a_list_of_names(lost: Any) -> None:
    """A text is no list of names (its letters are not workers), nor is a list holding other things."""
    said: list[str] = []
    state = ModState.from_json({"workers": [{"name": "w1"}], "reported_lost": lost}, said.append)
    assert state.reported_lost == ()
    assert said == ["reported_lost is not a list of names"]


def test_a_pending_open_is_kept_until_it_settles_into_its_worker() -> None:
    """The state keeps an open from before it starts until it was read; the worker it opened comes in with the
    same change that drops it, and a state without opens writes no ``opens`` key (files of before stay as
    they were)."""
    pending = PendingOpen("toolu_1", "Fix auth", "Fix it.", "", 10, 20, 120_000, None, "/bin/lich")
    state = ModState().with_open(pending)
    assert ModState.from_json(state.to_json()).opens == (pending,)
    worker = Worker("w1", "One", "Fix auth", True)
    settled = state.settled("toolu_1", worker, "/bin/lich")
    assert settled.opens == () and settled.workers == (worker,) and "opens" not in settled.to_json()
    assert state.settled("toolu_1", None, "/bin/lich") == ModState()
    kept = state.to_json()["opens"][0]
    broken = {"opens": [{"key": "toolu_2", "call_ms": "soon"}, 5, {**kept, "key": "toolu_3", "lang": 5}, kept]}
    said: list[str] = []
    assert ModState.from_json(broken, said.append).opens == (pending,)
    assert said == ["opens[0] is not an open; opens[1] is not an open; opens[2] is not an open"]
    assert ModState.from_json({"opens": [{**kept, "lang": "ja"}]}).opens == (replace(pending, lang="ja"),)


def test_opens_under_way_side_by_side_are_each_kept_and_one_started_again_replaces_its_own() -> None:
    first = PendingOpen("toolu_1", "Fix auth", "Fix it.", "", 10, 20, 120_000, None, "/bin/lich")
    second = replace(first, key="toolu_2", description="Add tests")
    both = ModState().with_open(first).with_open(second)
    assert both.opens == (first, second)
    again = replace(first, opened_ms=30)
    assert both.with_open(again).opens == (second, again)
    assert both.settled("toolu_1", None, "/bin/lich").opens == (second,)


def test_a_state_that_is_no_object_is_named_so_to_the_report() -> None:
    said: list[str] = []
    assert ModState.from_json(["w1"], said.append) == ModState()
    assert said == ["the state is not a JSON object"]


def test_every_field_from_json_could_not_read_is_named_to_the_report_in_one_line() -> None:
    said: list[str] = []
    state = ModState.from_json({
        "interactive": 1, "lich_bin": 5, "owner": ["pid"], "opens": {},
        "workers": [{"name": "w1", "label": 2, "description": None, "shared": "yes"}, {"label": "no name"}],
    }, said.append)
    assert state == ModState(workers=(Worker("w1", "w1", "", True),))
    assert said == ["workers[0].label is not text; workers[0].description is not text; workers[0].shared is not "
                    "true or false; workers[1] is not a worker with a name; lich_bin is not text; interactive is "
                    "int, not true or false (read as false); owner is not text; opens is not a list"]
    said.clear()
    assert ModState.from_json({"workers": {"w1": {}}}, said.append) == ModState()
    assert said == ["workers is not a list"]
    said.clear()
    assert ModState.from_json(ModState(workers=(ONE,)).to_json(), said.append).workers == (ONE,)
    assert said == []  # nothing wrong, nothing said


def test_state_updates() -> None:
    store = MemoryStore()
    one, two = Worker("w1", "One", "d1", True), Worker("w2", "Two", "d2", False)
    store.update(lambda s: s.with_worker(one, "/bin/lich-a"))
    store.update(lambda s: s.with_worker(two, "/bin/lich-b"))
    store.update(lambda s: s.with_worker(Worker("w1", "One again", "d1", True), "/bin/lich-b"))
    state = store.get()
    assert [w.label for w in state.workers] == ["Two", "One again"] and state.lich_bin == "/bin/lich-b"
    assert state.worker("w2") == two and state.worker("nope") is None
    assert store.update(lambda s: s.without({"w1", "other"})).workers == (two,)


# --- restore: the state a session host starts from -------------------------------------------------------------

ONE = Worker("w1", "One", "d1", True)


class FakeKeptStore:
    """A kept store (the session host's file) holding ``state``, or failing to be read."""

    def __init__(self, state: ModState | None) -> None:
        self.state = state

    def get(self) -> ModState:
        if self.state is None:
            raise OSError(13, "Permission denied")
        return self.state


def test_restore_reads_the_kept_store_first_and_the_given_state_when_it_holds_nothing() -> None:
    given = ModState(lich_bin="/bin/given", workers=(ONE,)).to_json()
    kept = ModState(lich_bin="/bin/kept", workers=(Worker("w2", "Two", "d2", False),))
    assert restore(given, FakeKeptStore(kept), "", None, print) == kept
    assert restore(given, FakeKeptStore(ModState()), "", None, print).lich_bin == "/bin/given"
    assert restore(given, FakeKeptStore(ModState(owner="41")), "", None, print).owner == "41"


def test_restore_reports_a_kept_store_it_cannot_read_and_keeps_the_given_state() -> None:
    reported: list[str] = []
    state = restore(ModState(workers=(ONE,)).to_json(), FakeKeptStore(None), "", None, reported.append)
    assert state.workers == (ONE,)
    assert reported == ["the kept state could not be read: Permission denied"]


def test_restore_marks_the_workers_of_another_process_reported_lost() -> None:
    kept = FakeKeptStore(ModState(workers=(ONE,), owner="41"))
    assert restore(None, kept, "42", None, print).reported_lost == ("w1",)
    assert restore(None, kept, "42", None, print).owner == "42"
    assert restore(None, kept, "41", None, print).reported_lost == ()
    assert restore(None, kept, "", None, print) == ModState(workers=(ONE,), owner="41")
    assert restore(None, FakeKeptStore(ModState(owner="41")), "42", None, print).reported_lost == ()


def test_restore_takes_interactive_from_a_session_start_seen_now() -> None:
    kept = FakeKeptStore(ModState(interactive=True, workers=(ONE,)))
    assert restore(None, kept, "", None, print).interactive is True
    assert restore(None, kept, "", {"isInteractive": False}, print).interactive is False
    one = FakeKeptStore(ModState(workers=(ONE,)))
    assert restore(None, one, "", {"isInteractive": True}, print).interactive is True
    assert restore(None, kept, "", {"isInteractive": "yes"}, print).interactive is False


def test_the_owner_and_the_workers_reported_lost_round_trip_through_json() -> None:
    state = ModState(workers=(ONE,), owner="41", reported_lost=("w1",))
    data = json.loads(json.dumps(state.to_json()))
    assert (data["owner"], data["reported_lost"]) == ("41", ["w1"])
    assert ModState.from_json(data) == state
