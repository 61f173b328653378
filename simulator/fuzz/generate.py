"""Hypothesis strategies for a scenario: host, lich and git behaviour, as plain data (:mod:`simulator.fuzz.writer`).

Every exit code and output shape lich may give (garbage, truncated, deep, huge, wrong types), opens that
fail, hang or take long, failing session lists, Esc, reloads, ``session.start``, errands and the footer at
any virtual time (``at:``), TaskStop of a worker or of anything else, and parallel calls. Prompts are
unique per call, so each call's own ``lich:`` is its open's script.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from simulator.fuzz.writer import Repeat

DELIVERIES = ("pending", "answered", "unanswered", "unread", "undelivered", "stopped", "expired", "", "weird")

#: Outputs of every shape: JSON of the right and wrong types, garbage, truncated, deep, huge.
_OUTPUT = st.one_of(
    st.just(""),
    st.text(max_size=30),
    st.sampled_from(["[]", "{}", "null", "7", '"x"', "[1, 2]", '[{"name": 5}]', '[{"name": "session-2-9f81"}]',
                     '[{"name": "session-2-9f81", "state": "done"}]', '{"sessions": []}', "[{", "\x00\xff",
                     '{"session": {"name": "x"}, "delivery": {"status": "pending"}}',
                     '{"session": {"name": 3}, "delivery": 7}', '{"session": null}']),
    st.builds(lambda n: Repeat("[", n), st.one_of(st.integers(1, 20_000), st.sampled_from([999, 1000, 5000]))),
    st.builds(lambda n: Repeat('{"a":', n), st.integers(1, 5_000)),
    st.builds(lambda n: Repeat("xxxxxxxx", n), st.sampled_from([512, 8_750, (1 << 19) + 1])),  # up to 4 MiB + 8
)
_EXIT = st.one_of(st.just(0), st.sampled_from([0, 1, 2, 3, 124, 127, 128, 255]), st.integers(-300, 300))
_MS = st.one_of(st.integers(0, 2_000), st.integers(0, 200_000))


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def open_script(draw: st.DrawFn) -> dict[str, Any]:
    script: dict[str, Any] = {}
    kind = draw(st.sampled_from(["delivery"] * 6 + ["fail", "handoff", "hang", "output"]))
    if kind == "delivery":
        script["delivery"] = draw(st.one_of(st.just("pending"), st.sampled_from(DELIVERIES), st.none()))
        if script["delivery"] == "answered":
            script["answer"] = draw(st.sampled_from(["", "Done.", "ok\n\nmore"]))
    elif kind == "fail":
        script["fail"] = draw(st.sampled_from(["no such project", "", "the session list is full"]))
    elif kind == "handoff":
        script["handoff_error"] = draw(st.sampled_from(["the card refused the task", ""]))
    elif kind == "hang":
        script["hang"] = True
    else:
        script["stdout"] = draw(_OUTPUT)
        script["exit"] = draw(_EXIT)
    if draw(st.booleans()):
        script["ms"] = draw(_MS)
    if draw(st.integers(0, 3)) == 0:
        script["report"] = {"after": draw(st.integers(0, 60_000)), "background": draw(st.booleans())}
    return script


@st.composite
def lich(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.integers(0, 15)) == 0:
        out["installed"] = False
    if draw(st.integers(0, 15)) == 0:
        out["running"] = False
    lists = []
    for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):
        start = draw(st.integers(0, 30_000))
        lists.append({"from": start, "until": start + draw(st.integers(0, 300_000)), "stdout": draw(_OUTPUT),
                      "exit": draw(_EXIT)})
    if lists:
        out["lists"] = lists
    if draw(st.booleans()):
        out["stops"] = {f"session-{n}-{0x9f80 + n - 1:04x}": {"exit": draw(_EXIT)} for n in range(2, 4)}
    return out


@st.composite
def session(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.integers(0, 7)) == 0:
        out["interactive"] = False
    if draw(st.integers(0, 7)) == 0:
        out["start"] = False
    git = draw(st.sampled_from(["main", "main", "detached", "missing", "subagent/x", "{exit}"]))
    out["git"] = {"exit": draw(_EXIT), "stderr": "fatal: not a git repository"} if git == "{exit}" else git
    env: dict[str, Any] = {}
    if draw(st.integers(0, 5)) == 0:
        env["LICH_SUBAGENT_DEPTH"] = draw(st.sampled_from(["", "1", "x", None]))
    if draw(st.integers(0, 8)) == 0:
        env["LICH_SUBAGENT_CARDS"] = "off"
    if env:
        out["env"] = env
    if draw(st.integers(0, 8)) == 0:
        out["permission"] = draw(st.sampled_from(["deny", "hook-deny", {"ask": "yes"}, {"ask": "nobody"}]))
    return out


_PROMPT_ODD = st.sampled_from([["a", "b"], None, float("nan"), 7, {"text": "x"}])


class Calls:
    """Counts call ids as the reader does (``toolu_NNNN`` in file order)."""

    def __init__(self) -> None:
        self.count = 0
        self.agents: list[str] = []

    def next(self) -> str:
        self.count += 1
        return f"toolu_{self.count:04d}"


@st.composite
def agent_call(draw: st.DrawFn, ids: Calls) -> dict[str, Any]:
    call_id = ids.next()
    ids.agents.append(call_id)
    prompt: Any = f"task {ids.count}"
    if draw(st.integers(0, 12)) == 0:
        prompt = draw(_PROMPT_ODD)
    elif draw(st.integers(0, 12)) == 0:
        prompt = Repeat("é", draw(st.sampled_from([4096, 4097])), then=f" {ids.count}")
    tool_input: dict[str, Any] = {"description": draw(st.sampled_from(["Fix the login bug", "", "Ünïcode ✓ task"])),
                                  "prompt": prompt}
    if draw(st.integers(0, 3)) == 0:
        tool_input["isolation"] = draw(st.sampled_from(["worktree", "worktree", "remote"]))
    if draw(st.integers(0, 8)) == 0:
        tool_input["subagent_type"] = draw(st.sampled_from(["general-purpose", "Explore"]))
    if draw(st.integers(0, 8)) == 0:
        tool_input["model"] = "sonnet"
    step: dict[str, Any] = {"call": tool_input}
    if isinstance(prompt, str | Repeat) and draw(st.integers(0, 2)) > 0:
        step["lich"] = draw(open_script())
    return step


@st.composite
def taskstop(draw: st.DrawFn, ids: Calls) -> dict[str, Any]:
    ids.next()
    by_call: bool = draw(st.booleans())
    if ids.agents and by_call:
        worker: str = draw(st.sampled_from(ids.agents))
        return {"taskstop": {"worker": worker}}
    name: str = draw(st.sampled_from(["session-2-9f81", "session-3-9f82", "a123", ""]))
    return {"taskstop": name}


@st.composite
def step(draw: st.DrawFn, ids: Calls, now: list[int]) -> Any:
    kind = draw(st.sampled_from(["call", "call", "call", "parallel", "taskstop", "wait", "wait", "at", "esc",
                                 "reload", "session.start", "footer", "errands"]))
    if kind == "call":
        one = draw(agent_call(ids))
        if draw(st.integers(0, 3)) == 0:
            one["esc_after"] = draw(st.integers(0, 3_000))
        return one
    if kind == "parallel":
        calls = [draw(st.one_of(agent_call(ids), taskstop(ids))) for _ in range(draw(st.integers(2, 3)))]
        out: dict[str, Any] = {"parallel": calls}
        if draw(st.integers(0, 3)) == 0:
            out["esc_after"] = draw(st.integers(0, 3_000))
        return out
    if kind == "taskstop":
        return draw(taskstop(ids))
    if kind == "wait":
        return {"wait": draw(st.one_of(st.integers(0, 6_000), st.integers(5_000, 60_000)))}
    if kind == "at":
        action = draw(st.sampled_from(["esc", "reload", "session.start", "footer", "errands"]))
        value: Any = None if action != "errands" else draw(st.sampled_from(["2 errands", None]))
        if action == "session.start":
            value = draw(st.booleans())
        return {"at": draw(st.integers(0, 60_000)), action: value}
    if kind == "errands":
        return {"errands": draw(st.sampled_from(["1 errand", None, ""]))}
    if kind == "session.start":
        return {"session.start": draw(st.booleans())}
    return kind


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    ids = Calls()
    now = [0]
    data: dict[str, Any] = {"title": "fuzz", "clauses": ["TAKE-TYPE"]}
    own_session = draw(session())
    if own_session:
        data["session"] = own_session
    own_lich = draw(lich())
    if draw(st.booleans()):
        own_lich["open"] = draw(open_script())
    if own_lich:
        data["lich"] = own_lich
    steps = [draw(step(ids, now)) for _ in range(draw(st.integers(1, 8)))]
    timed = [s for s in steps if isinstance(s, dict) and "at" in s]  # first: their time is never past
    data["steps"] = timed + [s for s in steps if not (isinstance(s, dict) and "at" in s)]
    if draw(st.integers(0, 2)) > 0:  # time for the footer's polls and the workers' reports
        data["steps"].append({"wait": draw(st.integers(5_000, 60_000))})
    return data


def describe(data: dict[str, Any]) -> str:
    """One line for a progress report."""
    return json.dumps(data, default=str)[:200]
