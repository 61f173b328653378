"""Hypothesis strategies for a scenario: host, lich and git behaviour, as plain data (:mod:`.writer`).

Every exit code and output shape lich may give (garbage, truncated, deep, huge, wrong types), opens that
fail, hang or take long, failing session lists, Esc, reloads, ``session.start``, errands and the footer at
any virtual time (``at:``), TaskStop of a worker or of anything else, and parallel calls; what a session
outlives: ``continue`` and ``resume`` (a new Claude Code process), ``host.dies`` (the plugin's session host),
each mostly followed by a ``prompt``, with the session's kept state or without it (``session: {data:
false}``). Prompts are unique per call, so each call's own ``lich:`` is its open's script.

Three plans, drawn a third each (:func:`scenarios`):

- **broad** (:func:`broad`): anything at any time, mostly the open and what comes before it (rules, git,
  the permission check, opens that fail, hang or print anything).
- **after the open** (:func:`after_open`): the paths where the mod reads lich after lich has the task.
  The steps are drawn against a small model of the replay (which calls opened a pending worker, its
  roster name, the virtual time), so that a pending worker exists and 5 s polls happen: most opens
  launch a worker, waits are mostly past a poll, TaskStops name a live worker; and those reads get the
  hostile shapes (:data:`HOSTILE`) most of the time: ``sessions --json`` windows and reads that exit 0
  with deep, huge, wrongly typed, garbage or truncated output (or fail), ``close``/``control`` answers
  with every exit and hostile reasons, opens that print a launch with fields of the wrong type.
- **what a session outlives** (:func:`outliving`): workers counted, then ``continue``, ``resume``,
  ``host.dies`` and reloads (each followed by a call every arm alike), prompts and TaskStops after them,
  against lich's own reads (a failing one now and then): kept workers counted again, dropped, stopped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

from agent_cards.branch import branch_name
from agent_cards.record import Record, field
from agent_cards_simulator.scenario.spec import MAX_MS
from agent_cards_simulator.scenario.writer import Repeat

DELIVERIES = ("pending", "answered", "unanswered", "unread", "undelivered", "stopped", "expired", "", "weird")

#: Any character but a lone surrogate: the alphabet ``st.text()`` draws from by default (every character UTF-8
#: encodes), named by category so that hypothesis does not work it out from the codec, which takes it over 200 MB
#: once per cache folder (it encodes every code point); the two give the same characters, so the same draws.
_CHARACTERS = st.characters(exclude_categories=["Cs"])

#: Outputs of every shape: JSON of the right and wrong types, garbage, truncated, deep, huge.
_OUTPUT = st.one_of(
    st.just(""),
    st.text(_CHARACTERS, max_size=30),
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
        lists.append({"from": start, "until": start + draw(st.integers(0, 300_000)),
                      "stdout": draw(st.one_of(_OUTPUT, HOSTILE)),
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
    if draw(st.integers(0, 4)) == 0:  # another mode before lich's line in the footer
        out["modes"] = ["accept edits on"]
    if draw(st.integers(0, 7)) == 0:  # no data folder: only the module's memory keeps the state
        out["data"] = False
    return out


#: What the person types after a new process (the prompt the engine's failure notification rides on).
_TYPED = st.sampled_from(["Go on.", "What is left?", "ok"])


@st.composite
def outlived(draw: st.DrawFn) -> list[Any]:
    """What a session outlives: a new process (``continue`` or ``resume``) or its session host's death,
    mostly followed by a prompt (the model reads then what the new process says of its workers)."""
    what = draw(st.sampled_from(["continue", "continue", "resume", "host.dies"]))
    out: list[Any] = [what]
    if draw(st.integers(0, 3)) > 0:
        out.append({"prompt": draw(_TYPED)})
    return out


#: Descriptions: short, empty, in another script, and longer than a slug's five words.
_DESCRIPTIONS = ["Fix the login bug", "", "Ünïcode ✓ task", "Fix the flaky login test in the auth module"]
_PROMPT_ODD = st.sampled_from([["a", "b"], None, float("nan"), 7, {"text": "x"}])


class CallIds:
    """Counts call ids as the reader does (``toolu_NNNN`` in file order)."""

    def __init__(self) -> None:
        self.count = 0
        self.agents: list[str] = []

    def next(self) -> str:
        self.count += 1
        return f"toolu_{self.count:04d}"


@st.composite
def agent_call(draw: st.DrawFn, ids: CallIds) -> dict[str, Any]:
    call_id = ids.next()
    ids.agents.append(call_id)
    prompt: Any = f"task {ids.count}"
    if draw(st.integers(0, 12)) == 0:
        prompt = draw(_PROMPT_ODD)
    elif draw(st.integers(0, 12)) == 0:  # 8,192 UTF-8 bytes exactly (lich takes it), or 8,194
        prompt = Repeat("é", draw(st.sampled_from([4094, 4095])), then=f" {ids.count}".ljust(4, "x"))
    tool_input: dict[str, Any] = {"description": draw(st.sampled_from(_DESCRIPTIONS)), "prompt": prompt}
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
def taskstop(draw: st.DrawFn, ids: CallIds) -> dict[str, Any]:
    ids.next()
    by_call: bool = draw(st.booleans())
    if ids.agents and by_call:
        worker: str = draw(st.sampled_from(ids.agents))
        return {"taskstop": {"worker": worker}}
    name: str = draw(st.sampled_from(["session-2-9f81", "session-3-9f82", "a123", ""]))
    return {"taskstop": name}


@st.composite
def step(draw: st.DrawFn, ids: CallIds, now: list[int]) -> Any:
    kind = draw(st.sampled_from(["call", "call", "call", "parallel", "taskstop", "wait", "wait", "at", "esc",
                                 "reload", "session.start", "footer", "errands", "outlived", "prompt"]))
    if kind == "outlived":
        return draw(outlived())
    if kind == "prompt":
        return {"prompt": draw(_TYPED)}
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
def broad(draw: st.DrawFn) -> dict[str, Any]:
    """Anything at any time (the first plan)."""
    ids = CallIds()
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
    steps = _flat([draw(step(ids, now)) for _ in range(draw(st.integers(1, 8)))])
    timed = [s for s in steps if isinstance(s, dict) and "at" in s]  # first: their time is never past
    data["steps"] = timed + [s for s in steps if not (isinstance(s, dict) and "at" in s)]
    if draw(st.integers(0, 2)) > 0:  # time for the footer's polls and the workers' reports
        data["steps"].append({"wait": draw(st.integers(5_000, 60_000))})
    return data


def _flat(steps: list[Any]) -> list[Any]:
    """Steps, a drawn list of several (:func:`outlived`) spread in place."""
    return [one for s in steps for one in (s if isinstance(s, list) else [s])]


def describe(data: dict[str, Any]) -> str:
    """One line for a progress report."""
    return json.dumps(data, default=str)[:200]


# -- the second plan: after the open ------------------------------------------------------------------

#: An opener nested ``n`` deep and what closes one level: a nest deeper than ``json`` goes raises
#: ``RecursionError``, not ``ValueError``: from about 1,000 levels on Python 3.11 (the recursion limit),
#: 1,500 on 3.12 and 10,000 on 3.13 (the C recursion limit), each among the depths ``_DEEP`` lists.
_NESTS = {"[": "]", '{"a":': "}", '[{"name":': "}]", '{"sessions":': "}", '{"delivery":': "}"}
#: The fake lich cuts an output at 4 MiB: padding around this size is valid JSON below it and cut above.
_FOUR_MIB = 4 << 20


def _nest(opener: str, times: int, closed: bool) -> Repeat:
    """``opener`` ``times`` deep; ``closed``: a valid JSON text (the closers written out), else cut."""
    return Repeat(opener, times, then=("0" if opener.endswith(":") else "") + _NESTS[opener] * times if closed else "")


#: (hypothesis favours the ends of a range: the depths that matter are listed, a range only adds to them)
_DEEP = st.builds(_nest, st.sampled_from(sorted(_NESTS)),
                  st.one_of(st.sampled_from([990, 1_000, 1_001, 2_000, 5_000, 30_000]),
                            st.sampled_from([64, 500, 1_500, 10_000]), st.integers(1, 30_000)), st.booleans())


def _roster(count: int, name: str = "session-2-9f81") -> str:
    rows = [{"name": f"session-{n + 2}-{0x9f81 + n:04x}", "state": "busy"} for n in range(count - 1)]
    return json.dumps([*rows, {"name": name, "state": "busy"}])


_HUGE = st.one_of(
    st.builds(lambda n: Repeat("xxxxxxxx", n), st.sampled_from([512, 8_750, (_FOUR_MIB >> 3) + 1])),
    st.builds(lambda n: Repeat(" " * 8, n, then=_roster(1)),  # under and over the cut (!repeat: 1,000,000 times)
              st.sampled_from([125, (_FOUR_MIB >> 3) - 8, (_FOUR_MIB >> 3) + 1])),
    st.builds(_roster, st.sampled_from([100, 2_000, 5_000])),  # many entries
)
#: JSON of the right kind with values of the wrong types, and JSON of the wrong kind.
_WRONG_TYPES = st.sampled_from([
    '[{"name": "session-2-9f81", "state": null}]', '[{"name": "session-2-9f81", "state": ["done"]}]',
    '[{"name": "session-2-9f81", "state": {"done": true}}]', '[{"name": "session-2-9f81", "state": 7}]',
    '[{"name": "session-2-9f81", "state": "done"}]', '[{"name": "session-2-9f81", "state": "DONE"}]',
    '[{"name": ["session-2-9f81"]}]', '[{"name": {"a": 1}}]', '[{"name": null, "state": "busy"}]',
    '[{"name": 1e999}]', '[{"name": NaN, "state": Infinity}]', '[null, 1, "x", true, [], {}]', "[1e999]",
    '[{"name": "session-2-9f81", "name": "other"}]', '{"sessions": [{"name": "session-2-9f81"}]}',
    '[{"name": "session-2-9f81", "state": "busy"}, {"name": "session-2-9f81", "state": "done"}]',
    '[{"name": "planner-3c4d", "state": "busy"}]', '[{"name": "\\ud800", "state": "\\u0000"}]', "[]", "{}",
    "null", '"[]"', "true", "[" + "1" * 5_000 + "]", "\ufeff[]", '[{"name": "session-2-9f81"}]\n[]',
    '[{"name": "session-2-9f81", "state": "busy"}] trailing',
])
_GARBAGE = st.one_of(st.text(_CHARACTERS, max_size=40),
                     st.sampled_from(["", "\x00\xff", "lich: ok\n", "<html>", "[{", "]"]))


@st.composite
def _truncated(draw: st.DrawFn) -> str:
    whole = _roster(draw(st.integers(1, 3)))
    return whole[:draw(st.integers(0, len(whole) - 1))]


#: What ``sessions --json`` prints in the second plan: always hostile (a clean read is the default).
HOSTILE = st.one_of(_DEEP, _WRONG_TYPES, _HUGE, _GARBAGE, _truncated())
#: Mostly 0, so that the output is read; otherwise a failing list.
_READ_EXIT = st.one_of(st.just(0), st.just(0), st.just(0), st.sampled_from([1, 2, 124, 127, 255, -9]))
#: close / control: 0 stops, 1 refuses, 2 and 3 go through for control; anything else is unknown.
_STOP_EXIT = st.one_of(st.sampled_from([0, 1, 2, 3]), st.sampled_from([4, 124, 127, 255, -9, -15]),
                       st.integers(-300, 300))
_REASON = st.one_of(st.just(""), st.text(_CHARACTERS, max_size=30), _DEEP, _HUGE, _GARBAGE,
                    st.sampled_from(["lich: the worker refused\n\n\n", "  \n", "lich:", "Ünïcode ✓ reason"]))
_ODD = st.sampled_from(["session-2-9f81", "", None, 5, ["a"], {"a": 1}, "planner-3c4d", "x\ny", "ééé", True])
_DELIVERY_ODD = st.sampled_from([{"status": "pending"}, {"status": "unanswered"}, {"status": 5}, {"status": None},
                                 {"status": ["pending"]}, "pending", 5, [], {}, {"status": "answered", "answer": 5},
                                 {"status": "answered", "answer": None}, {"status": "answered", "answer": {"a": 1}},
                                 {"status": "pending", "ticket": ["a"]}, {"status": "weird"}])


@st.composite
def _launch(draw: st.DrawFn) -> str:
    """What an open prints when lich took the task, with fields of the wrong types (maybe cut off)."""
    printed: dict[str, Any] = {"id": "9f81", "delivery": draw(_DELIVERY_ODD)}
    for key in ("name", "label", "path"):
        if draw(st.integers(0, 3)) > 0:
            printed[key] = draw(_ODD)
    whole = json.dumps(printed)
    return whole if draw(st.integers(0, 4)) > 0 else whole[:draw(st.integers(0, len(whole) - 1))]


def _roster_name(label: str, session: int) -> str:
    """The fake lich's roster name: the label's slug and the session's id."""
    return f"{re.sub('[^a-z0-9]+', '-', label.lower())}-{0x9f80 + session:04x}"


class Model(Record):
    """What the replay will have done, as far as the draw needs it: time, names, pending workers."""

    ids: CallIds = field(default_factory=CallIds)
    now: int = 0
    sessions: int = 0  # session ids handed out (0x9f80 + n)
    shared: int = 1  # "Session N" labels handed out (the asking session is 1)
    names: list[str] = field(default_factory=list)  # roster names of every session opened
    workers: dict[str, str] = field(default_factory=dict)  # call id -> roster name, for a pending open

    def opened(self, call_id: str, description: str, isolated: bool) -> str:
        self.sessions += 1
        if isolated:
            label = branch_name(description, call_id)
        else:
            self.shared += 1
            label = f"Session {self.shared}"
        name = _roster_name(label, self.sessions)
        self.names.append(name)
        return name


#: The kinds of open :func:`_worker_call` draws from, by weight: mostly a worker.
_OPENS = ("pending",) * 4 + ("report",) * 2 + ("unanswered", "answered", "launch", "slow", "fail", "never", "unknown")
#: Every arm alike (a call right after a reload: each arm of the fresh module's answer often enough).
_EVERY_ARM = ("pending", "unanswered", "answered", "never", "unknown", "fail", "launch")


@st.composite
def _worker_call(draw: st.DrawFn, model: Model, kinds: tuple[str, ...] = _OPENS) -> tuple[dict[str, Any], int]:
    """An Agent call whose open mostly launches a worker; the step and how long its open takes."""
    call_id = model.ids.next()
    model.ids.agents.append(call_id)
    description = draw(st.sampled_from(["Fix the login bug", "Update docs", "Ünïcode ✓ task", "",
                                        "Fix the flaky login test in the auth module"]))
    isolated = draw(st.integers(0, 3)) == 3  # (a shrink goes to 0: the simpler case)
    tool_input: dict[str, Any] = {"description": description, "prompt": f"task {model.ids.count}"}
    if isolated:
        tool_input["isolation"] = "worktree"
    if draw(st.integers(0, 5)) == 5:
        tool_input["model"] = "sonnet"
    step: dict[str, Any] = {"call": tool_input}
    kind = draw(st.sampled_from(kinds))
    ms = 800
    if kind == "report":
        step["lich"] = {"report": {"after": draw(st.integers(0, 40_000)), "background": draw(st.booleans())}}
    elif kind == "unanswered":
        step["lich"] = {"delivery": "unanswered"}
    elif kind == "answered":  # answered within the open: no worker to count
        step["lich"] = {"delivery": "answered", "answer": draw(st.sampled_from(["Done.", "", "ok\n\nmore"]))}
    elif kind == "never":
        step["lich"] = {"delivery": draw(st.sampled_from(["unread", "undelivered"]))}
    elif kind == "unknown":
        step["lich"] = {"delivery": draw(st.sampled_from(["stopped", "expired", "weird"]))}
    elif kind == "launch":
        step["lich"] = {"stdout": draw(_launch()), "exit": draw(st.sampled_from([0, 0, 0, 1, 2]))}
    elif kind == "slow":
        ms = draw(st.one_of(st.integers(0, 5_000), st.integers(100_000, 130_000)))
        step["lich"] = {"ms": ms}
    elif kind == "fail":
        step["lich"] = {"fail": "no such project"}
        return step, 100
    name = model.opened(call_id, description, isolated)
    if kind not in ("launch", "answered", "never", "unknown") and ms < 120_000:
        model.workers[call_id] = name
    return step, ms + (5 if isolated else 0)


@st.composite
def _stop(draw: st.DrawFn, model: Model) -> dict[str, Any]:
    model.ids.next()
    if model.workers and draw(st.integers(0, 4)) > 0:
        return {"taskstop": {"worker": draw(st.sampled_from(sorted(model.workers)))}}
    return {"taskstop": draw(st.sampled_from([*model.names, "session-2-9f81", ""]))}


@st.composite
def _after_open_step(draw: st.DrawFn, model: Model) -> Any:
    kind = draw(st.sampled_from(["call"] * 3 + ["wait"] * 3 + ["taskstop"] * 2 + ["parallel", "footer", "reload",
                                                                                   "other", "outlived", "outlived",
                                                                                   "dies-mid-open", "dies-mid-open"]))
    if kind == "outlived":
        return draw(outlived())
    if kind in ("call", "dies-mid-open"):
        began = model.now
        one, ms = draw(_worker_call(model))
        model.now += ms
        if kind == "dies-mid-open" and ms >= 200:  # the session host is lost while lich opens the card
            return [one, {"at": began + draw(st.integers(ms // 4, ms * 3 // 4)), "host.dies": None}]
        return one
    if kind == "wait":
        ms = draw(st.one_of(st.sampled_from([5_000, 5_001, 10_000, 30_000]), st.integers(0, 40_000)))
        model.now += ms
        return {"wait": ms}
    if kind == "taskstop":
        model.now += 30
        return draw(_stop(model))
    if kind == "parallel":
        calls: list[dict[str, Any]] = []
        longest = 30
        for _ in range(draw(st.integers(2, 3))):
            if draw(st.booleans()):
                one, ms = draw(_worker_call(model))
                calls.append(one)
                longest = max(longest, ms)
            else:
                calls.append(draw(_stop(model)))
        model.now += longest
        return {"parallel": calls}
    if kind == "reload":
        how = draw(st.sampled_from(["then a call", "while an open runs", "alone"]))
        if how == "then a call":  # a call answered by the fresh module, a moment later
            one, ms = draw(_worker_call(model))
            model.now += 100 + ms
            return ["reload", {"wait": 100}, one]
        if how == "while an open runs":  # asked for mid-turn, it waits for the turn to end: a report lands meanwhile
            reporting, opened = draw(_worker_call(model, ("report",)))
            model.now += opened
            began, asked = model.now, draw(st.integers(0, 1_000))
            reporting["lich"]["report"]["after"] = opened + asked + draw(st.integers(1, 60_000))
            one, ms = draw(_worker_call(model, ("slow",)))
            model.now += ms
            return [reporting, {"at": began + asked, "reload": None}, one]
    if kind in ("footer", "reload"):
        return kind
    other = draw(st.sampled_from(["esc", "errands", "session.start", "reload", "at"]))
    if other == "errands":
        return {"errands": draw(st.sampled_from(["1 errand", None]))}
    if other == "session.start":
        return {"session.start": draw(st.booleans())}
    if other == "at":
        action = draw(st.sampled_from(["footer", "esc", "errands"]))
        return {"at": draw(st.integers(0, model.now + 20_000)), action: None}
    return other


@st.composite
def _reads(draw: st.DrawFn, model: Model) -> list[dict[str, Any]]:
    """The ``sessions`` answers: the first reads one by one (each poll a different hostile shape), then
    maybe one over the whole replay or over a window of time (later reads are the fake lich's own)."""
    windows = [{"read": n, **draw(_answer(model))} for n in range(1, draw(st.sampled_from([0, 1, 2, 3, 4])) + 1)]
    when = draw(st.sampled_from([None, "always", "window"]))  # (a shrink goes to the first)
    if when == "window":
        start = draw(st.one_of(st.sampled_from([0, 5_000, 10_000]), st.integers(0, max(model.now, 1))))
        until = start + draw(st.one_of(st.sampled_from([5_000, 10_000, 60_000]), st.integers(1, 300_000)))
        windows.append({"from": start, "until": until, **draw(_answer(model))})
    elif when == "always":
        windows.append({"until": MAX_MS, **draw(_answer(model))})
    return windows


@st.composite
def _answer(draw: st.DrawFn, model: Model) -> dict[str, Any]:
    stdout = draw(HOSTILE)
    if isinstance(stdout, str) and draw(st.booleans()):
        stdout = _with_roster(stdout, model.names)
    answer: dict[str, Any] = {"stdout": stdout, "exit": draw(_READ_EXIT)}
    if draw(st.integers(0, 3)) == 3:
        answer["stderr"] = draw(_REASON)
    return answer


def _with_roster(stdout: str, names: list[str]) -> str:
    """A JSON list with every session opened added as ``busy``, written into the text as it is (its odd
    parts kept): the workers stay, so the polls go on and the next reads are read too."""
    try:
        listed = json.loads(stdout)
    except (ValueError, RecursionError):
        return stdout
    end = stdout.rfind("]")
    if not isinstance(listed, list) or not names or end < 0:
        return stdout
    rows = ", ".join(json.dumps({"name": name, "state": "busy"}) for name in names)
    return f"{stdout[:end]}{', ' if listed else ''}{rows}{stdout[end:]}"


@st.composite
def after_open(draw: st.DrawFn) -> dict[str, Any]:
    """The second plan: pending workers, time for polls, and hostile reads after the open."""
    model = Model()
    data: dict[str, Any] = {"title": "fuzz", "clauses": ["TAKE-TYPE"]}
    if draw(st.integers(0, 7)) == 7:
        data["session"] = {"env": {"LICH_PROMPT_LANG": draw(st.sampled_from(["ja", "xx", ""]))}}
    if draw(st.integers(0, 7)) == 7:  # no data folder: a reload or a new process forgets the workers
        data.setdefault("session", {})["data"] = False
    first, ms = draw(_worker_call(model))  # a worker, most of the time, from the first step on
    model.now += ms
    steps = _flat([first, *(draw(_after_open_step(model)) for _ in range(draw(st.integers(0, 6))))])
    ends = draw(st.one_of(st.sampled_from([6_000, 11_000, 21_000, 60_000]), st.integers(5_000, 60_000)))  # polls
    model.now += ends
    timed = [s for s in steps if isinstance(s, dict) and "at" in s]  # first: their time is never past
    data["steps"] = timed + [s for s in steps if not (isinstance(s, dict) and "at" in s)] + [{"wait": ends}]
    own_lich: dict[str, Any] = {}
    windows = draw(_reads(model))
    if windows:
        own_lich["lists"] = windows
    stops = {name: {"exit": draw(_STOP_EXIT), "stderr": draw(_REASON)} for name in model.names
             if draw(st.booleans())}
    if stops:
        own_lich["stops"] = stops
    if own_lich:
        data["lich"] = own_lich
    return data


#: The quiet tail every scenario ends with: no step but time, the mod's state read at its start, after
#: one poll period and a read, and after one more period. Nothing is called or interrupted in it, and
#: lich answers as itself (the scripted faults are over or, a read window, still hostile), so that what
#: must come back (the count to what lich lists, the poll while a worker is counted) is seen to.
QUIET_TAIL: tuple[Any, ...] = ({"check": {}}, {"wait": 5_100}, {"check": {}}, {"wait": 5_000}, {"check": {}})


def with_tail(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "steps": [*data["steps"], *QUIET_TAIL]}


# -- the third plan: what a session outlives ----------------------------------------------------------

@st.composite
def _outliving_step(draw: st.DrawFn, model: Model) -> Any:
    kind = draw(st.sampled_from(["outlived"] * 4 + ["wait"] * 2 + ["call", "taskstop", "prompt", "reload"]))
    if kind == "outlived":
        return draw(outlived())
    if kind == "wait":
        ms = draw(st.one_of(st.sampled_from([1_000, 4_000, 5_001, 12_000]), st.integers(0, 40_000)))
        model.now += ms
        return {"wait": ms}
    if kind == "call":
        one, ms = draw(_worker_call(model))
        model.now += ms
        return one
    if kind == "taskstop":
        model.now += 30
        return draw(_stop(model))
    if kind == "prompt":
        return {"prompt": draw(_TYPED)}
    # a reload, and a call the fresh module answers (later: a call on the reload's very ms may be its own)
    pause = draw(st.sampled_from([100, 1_000]))
    one, ms = draw(_worker_call(model, _EVERY_ARM))
    model.now += pause + ms
    return ["reload", {"wait": pause}, one]


@st.composite
def outliving(draw: st.DrawFn) -> dict[str, Any]:
    """The third plan: workers counted, then new processes, a session host that dies, reloads, prompts and
    TaskStops after them; lich mostly lists the workers as they are (its own reads), sometimes it fails a
    read or stops refusing."""
    model = Model()
    data: dict[str, Any] = {"title": "fuzz", "clauses": ["TAKE-TYPE"]}
    if draw(st.integers(0, 7)) == 7:
        data["session"] = {"data": False}
    steps: list[Any] = []
    for _ in range(draw(st.integers(1, 2))):
        one, ms = draw(_worker_call(model, ("pending", "pending", "report")))
        model.now += ms
        steps.append(one)
    steps += _flat([draw(_outliving_step(model)) for _ in range(draw(st.integers(1, 6)))])
    if draw(st.booleans()):
        steps.append(draw(_stop(model)))
    ends = draw(st.sampled_from([1_000, 6_000, 11_000]))
    data["steps"] = [*steps, {"wait": ends}]
    own_lich: dict[str, Any] = {}
    if draw(st.booleans()):  # a failing read between lich's own good ones
        start = draw(st.integers(0, max(model.now, 1)))
        own_lich["lists"] = [{"from": start, "until": start + draw(st.integers(1, 12_000)),
                              "stdout": "", "exit": draw(st.sampled_from([1, 124]))}]
    stops = {name: {"exit": draw(st.sampled_from([0, 1, 2]))} for name in model.names if draw(st.booleans())}
    if stops:
        own_lich["stops"] = stops
    if own_lich:
        data["lich"] = own_lich
    return data


def scenarios() -> st.SearchStrategy[dict[str, Any]]:
    """A third each: broad, after the open and what a session outlives (see the module's docstring), each
    with the quiet tail."""
    return st.one_of(broad(), after_open(), outliving()).map(with_tail)
