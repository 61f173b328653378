"""A small model of what the spec says, written from its clauses (``scenarios/clauses.yaml``) and not from the
mod's code, that every fuzz replay is compared with.

It reads the scenario (the session's environment, each call's origin) and the transcript (what lich and git
printed, when), and says, for every call, what the spec makes of it:

- which Agent calls are taken (the TAKE-* rules), and so which open lich runs (exactly one for an allowed
  taken call, none for any other: PERM-REFUSED, TAKE-UNTOUCHED);
- the exact open argv (OPEN-ARGV, OPEN-MODEL, OPEN-TIMEOUT), its branch (BRANCH-*) and base (OPEN-BASE,
  BASE-NONE);
- the answer's arm from the delivery the open printed (DELIV-*, RESULT-*);
- the workers counted after each event (DELIV-PENDING, FOOTER-*, STOP-*, RELOAD), as an interval: what the
  spec leaves open (a read it does not say how to parse, a stop exit it gives no meaning, an Esc or a reload
  during an open) widens the interval instead of guessing;
- where a TaskStop goes and what it runs (STOP-TAKEN, STOP-SHARED, STOP-ISOLATED, STOP-RESULT, STOP-REFUSED,
  STOP-OTHER);
- that the poll runs every 5 s while a worker is surely counted and never while none can be (FOOTER-POLL);
- what the session's kept state carries across a new process (``claude --continue`` or ``--resume``) and a
  session host that died (the project's "Kept state" decision): a worker lich still lists is counted again,
  polled and stoppable, one it no longer lists is dropped, and the first prompt after the new process
  tells the model each kept worker still runs; with no data folder a new process forgets them all.

Where the model cannot tell, it checks nothing: a disagreement is always the mod's (or the bench's).
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

from agent_cards.languages import TRANSLATIONS
from agent_cards.record import Record, Value, field
from agent_cards.texts import AGENT
from agent_cards_simulator.host.results import USER_REJECTED
from agent_cards_simulator.scenario.model import Scenario

POLL_MS = 5_000  # FOOTER-POLL
OPEN_MS = 120_000  # OPEN-TIMEOUT
#: The longest a call may take to be answered: the base read's own timeout (a run's default, 30 s), the
#: open's two minutes and the engine's budget for a hook (10 s) with its grace before it gives up (5 s).
ANSWER_BOUND_MS = 30_000 + OPEN_MS + 10_000 + 5_000
#: How far a poll may fall behind its period: the footer's redraw and a tick land on the same virtual ms.
POLL_SLACK_MS = 50
PROMPT_LIMIT = 8192  # FALL-OVERSIZE
_WORKERS = re.compile(r"^lich: (\d+) (workers?)$")


class Disagreement(Value):
    """What the spec says and the replay did not: a kind (what a shrink keeps), one line, the event's index."""

    kind: str
    message: str
    index: int = -1
    #: What a written scenario expects so that its replay fails for this reason: where the spec says what the
    #: wrong field should have been, that value, so the file passes once the mod is right (empty: no such
    #: event as the one at ``index``, for what the spec says must not happen at all).
    expect: dict[str, Any] = field(default_factory=dict)


class ModelWorker(Record):
    """A worker the spec counts from ``added`` (the open's end) until ``gone`` (surely) or ``vague`` (maybe)."""

    name: str
    isolated: bool
    added: float
    description: str
    sure: bool = True  # False: the spec does not say whether the mod counts it at all
    gone: float | None = None
    vague: float | None = None
    refused: bool = False  # a TaskStop of it was refused (a reached state)

    def surely(self, t: float) -> bool:
        return (self.sure and self.added < t and (self.gone is None or self.gone > t)
                and (self.vague is None or self.vague > t))

    def maybe(self, t: float) -> bool:
        return self.added <= t and (self.gone is None or self.gone >= t)

    def end(self, t: float, sure: bool) -> None:
        """Gone from ``t`` on (``sure``), or maybe. What ends before the worker was added does not end it;
        what ends on the very ms it was added may have come first or after: maybe."""
        if t < self.added:
            return
        if sure and t > self.added:
            self.gone = t if self.gone is None else min(self.gone, t)
        else:
            self.vague = t if self.vague is None else min(self.vague, t)


def slug(description: str) -> str:
    """BRANCH-SLUG: 2 to 5 words, 10 to 40 characters (UTF-16 units), letters and digits of any script."""
    spaced = "".join(c if unicodedata.category(c)[0] in "LN" else " " for c in description.lower())
    words = spaced.split()
    picked: list[str] = []
    length = 0
    for word in words:
        units = _units(word)
        grown = units if not picked else length + 1 + units
        if len(picked) == 5 or (grown > 40 and len(picked) >= 2 and length >= 10):
            break
        picked.append(word)
        length = grown
    joined = "-".join(picked)
    cut = joined.encode("utf-16-le", "surrogatepass")[:80].decode("utf-16-le", "ignore").rstrip("-")
    return cut or "agent"


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def branch(description: str, call_id: str) -> str:
    """BRANCH-PREFIX and BRANCH-SUFFIX: ``subagent/<slug>-<last four ASCII letters or digits of the id>``."""
    suffix = "".join(c for c in call_id if c.isascii() and c.isalnum())[-4:].lower()
    return f"subagent/{slug(description)}-{suffix}"


def parsed(text: Any) -> Any:
    """``text`` as JSON, or ``_UNREAD`` (not JSON), or ``_UNSURE`` (JSON the spec does not say how to read:
    nesting deeper than any parser goes, NaN or Infinity)."""
    if not isinstance(text, str):
        return _UNREAD
    if any(token in text for token in ("NaN", "Infinity")) or text.count("[") + text.count("{") > 500:
        return _UNSURE
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _UNREAD


_UNREAD = object()
_UNSURE = object()
#: The head of the answer to a call whose session host was lost while a command ran for it, in every language
#: (the text goes on to name the command): lich may have the task, and the next host counts its worker.
_UNSURE_HEADS = tuple(sorted({table.get("bridge.unsure", AGENT["bridge.unsure"]).split("{program}")[0]
                              for table in (AGENT, *TRANSLATIONS.values())}))


def host_lost(answer: dict[str, Any]) -> bool:
    """The call was answered that its session host was lost while a command ran for it (lich may have the
    task): the mod never read what the open printed, and the next host collects it."""
    text = answer.get("error") or answer.get("deny")
    return isinstance(text, str) and any(head in text for head in _UNSURE_HEADS)


class Book(Record):
    """The workers the spec counts, in the order opened (a later open of the same roster name makes both vague:
    the mod keeps one record per name, and which one is its own)."""

    workers: list[ModelWorker] = field(default_factory=list)

    def add(self, worker: ModelWorker) -> None:
        for old in self.workers:
            if old.name == worker.name:
                old.end(worker.added, sure=False)
                worker.sure = False
        self.workers.append(worker)

    def bounds(self, t: float) -> tuple[int, int]:
        return (sum(w.surely(t) for w in self.workers), sum(w.maybe(t) for w in self.workers))

    def named(self, name: str, t: float) -> ModelWorker | None:
        """The worker of this name that may be counted at ``t``."""
        return next((w for w in reversed(self.workers) if w.name == name and w.maybe(t)), None)


class SpecModel:
    """The spec's view of one replay; :meth:`disagreements` lists where the replay departs from it."""

    def __init__(self, scenario: Scenario, events: Sequence[dict[str, Any]], *,
                 poll_slack_ms: int = POLL_SLACK_MS) -> None:
        self.scenario = scenario
        self.poll_slack_ms = poll_slack_ms  # how late a poll may come: virtual time is exact, real time is not
        self.events = events
        self.env = dict(scenario.session.env)
        self.lich_bin = self.env.get("LICH_BIN") or ""
        self.book = Book()
        self.origins = {c.id: (c.origin, c.agent) for c in _tool_calls(scenario.steps)}
        self.calls = {e["call"]: (i, e) for i, e in enumerate(events) if e["kind"] == "call"}
        self.answers: dict[str, tuple[int, dict[str, Any]]] = {}
        for i, e in enumerate(events):
            if e["kind"] == "answer":
                self.answers.setdefault(e["call"], (i, e))
        self.natives = {e["call"] for e in events if e["kind"] == "native"}
        self.escs = [e["t"] for e in events if e["kind"] == "esc"]
        self.reloads = [e["t"] for e in events if e["kind"] == "reload"]
        self.resumes = [i for i, e in enumerate(events) if e["kind"] == "resume"]  # continue and resume
        self.deaths = [e["t"] for e in events if e["kind"] == "host.dies"]
        self.runs = [(i, e) for i, e in enumerate(events) if e["kind"] == "run" and isinstance(e.get("argv"), list)]
        self.arms: dict[str, str] = {}  # call id -> the arm the spec gives it (for the reached states)
        self.reads: list[tuple[float, str]] = []  # (start, "good" | "failed" | "unsure") of each sessions read
        self.read_ends: dict[float, float] = {}  # a read's start -> its end
        self.stop_runs: list[tuple[float, float]] = []  # [start, end] of each close / control run

    # -- the model ---------------------------------------------------------------------------------

    def disagreements(self) -> Iterator[Disagreement]:
        yield from self._opens()
        yield from self._reads()
        if not self.scenario.session.data:
            # RELOAD: with nothing kept, the fresh module forgets every worker, and so does a new process
            for t in [*self.reloads, *(self.events[i]["t"] for i in self.resumes)]:
                for worker in self.book.workers:
                    worker.end(t, sure=True)
            for t in self.deaths:  # only the module's memory holds them: the spec does not say it outlives
                for worker in self.book.workers:  # the session host
                    worker.end(t, sure=False)
        # With the session's state kept (the plugin's data folder), a reload, a new process and a session
        # host that died hand the count on: the next host reads the kept workers back and lich at once, so a
        # worker goes only as lich's reads say.
        yield from self._stops()
        yield from self._footers()
        yield from self._polls()
        yield from self._told()
        yield from self._bounds()

    def _interactive(self, index: int) -> bool:
        """TAKE-INTERACTIVE as of event ``index``: a ``session.start`` that saw it, since the last reload."""
        flag = False
        for e in self.events[:index]:
            if e["kind"] == "session.start" and e.get("interactive") is True:
                flag = True
            elif e["kind"] in ("reload", "resume"):  # a fresh module, or a new process, is told again
                flag = False
        return flag

    def _mode(self, index: int) -> str:
        """The session's permission mode as of event ``index``: its setting, then each switch before it."""
        mode = self.scenario.session.permission_mode
        for e in self.events[:index]:
            if e["kind"] == "mode" and isinstance(e.get("mode"), str):
                mode = e["mode"]
        return mode

    def _taken(self, index: int, call: dict[str, Any], base: str | None) -> bool | None:
        """The TAKE-* rules (None: the spec does not say)."""
        tool_input = call["input"]
        origin, agent = self.origins.get(call["call"], ("engine", None))
        if origin != "engine" or agent is not None:
            return False  # TAKE-ORIGIN
        if tool_input.get("subagent_type") not in (None, "general-purpose"):
            return False  # TAKE-TYPE
        if tool_input.get("team_name") is not None or tool_input.get("isolation") == "remote":
            return False  # TAKE-TEAM, TAKE-REMOTE
        if not self._interactive(index):
            return False
        if self._mode(index) == "plan":
            return False  # PERM-PLAN: no lich worker is held to plan mode
        if not self.env.get("LICH_BIN") or not self.env.get("LICH_SESSION_ID"):
            return False  # TAKE-LICH-ENV
        if self.env.get("LICH_SUBAGENT_CARDS") == "off":
            return False  # TAKE-CARDS-OFF
        prompt = tool_input.get("prompt")
        if not isinstance(prompt, str) or not isinstance(tool_input.get("description", ""), str):
            return None
        if len(prompt.encode("utf-8", "surrogatepass")) > PROMPT_LIMIT:
            return False  # FALL-OVERSIZE
        if tool_input.get("isolation") == "worktree":
            if base is None:
                return None
            depth = self.env.get("LICH_SUBAGENT_DEPTH")
            if base.startswith("subagent/"):  # TAKE-OLD-LICH-WORKER / TAKE-NESTED
                if depth is None:
                    return False
                if not depth.strip().isdigit():
                    return None
        return True

    def _base(self, before: float) -> tuple[str | None, int]:
        """OPEN-BASE / BASE-NONE: what ``git branch --show-current`` gave last before ``before`` (None: no read)."""
        found: tuple[str | None, int] = (None, -1)
        for i, e in self.runs:
            if e["argv"] == ["git", "branch", "--show-current"] and e["t"] <= before:
                good = e.get("exit") == 0 and e.get("error") is None and isinstance(e.get("stdout"), str)
                found = (e["stdout"].strip() if good else "", i)
        return found

    def _interrupted(self, start: float, end: float) -> bool:
        return any(start <= t <= end for t in (*self.escs, *self.reloads))

    def _opens(self) -> Iterator[Disagreement]:
        by_prompt: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for i, e in self.runs:
            argv = e["argv"]
            if argv[1:2] == ["open"] and "--prompt" in argv[:-1]:
                by_prompt.setdefault(str(argv[argv.index("--prompt") + 1]), []).append((i, e))
        prompts: dict[str, int] = {}
        for _, call in self.calls.values():
            prompt = call["input"].get("prompt") if call.get("tool") == "Agent" else None
            if isinstance(prompt, str):
                prompts[prompt] = prompts.get(prompt, 0) + 1
        attributed: set[int] = set()
        for call_id, (index, call) in self.calls.items():
            prompt = call["input"].get("prompt")
            if call.get("tool") != "Agent" or not isinstance(prompt, str) or prompts[prompt] != 1:
                continue
            opens = by_prompt.get(prompt, [])
            answer = self.answers.get(call_id)
            end = answer[1]["t"] if answer else float("inf")
            isolated = call["input"].get("isolation") == "worktree"
            base, base_at = self._base(opens[0][1]["t"] if opens else end) if isolated else ("", -1)
            taken = self._taken(index, call, base)
            attributed.update(i for i, _ in opens)
            if taken is None:  # the spec does not say: what the open printed may still count a worker
                for i, run in opens:
                    yield from self._arm(call_id, call, run, i, None, quiet=False)
                continue
            if not taken:
                if opens:
                    yield Disagreement("oracle-taken", f"the call {call_id} is not taken by the spec's rules, yet "
                                       f"lich open ran for it at t={opens[0][1]['t']}", opens[0][0])
                continue
            permission = next((e for e in self.events if e["kind"] == "permission" and e.get("call") == call_id), None)
            outcome = permission.get("outcome") if permission else None
            spawned = any(e["kind"] == "spawn" and e.get("call") == call_id for e in self.events)
            # A session host that died while the open ran: the plugin's module denies the call (lich may have the
            # task), and the next host counts the worker the open made, as after Esc: maybe counted, no arm.
            died = any(run["t"] <= t < run["t"] + (run.get("ms") or 0) for _, run in opens for t in self.deaths)
            # A call the engine rejected (a "no" at a sibling's dialog ends the turn, as Esc does) is given up
            # while its open may still run: as after Esc, its worker is maybe counted and its answer has no arm.
            rejected = answer is not None and answer[1].get("error") == USER_REJECTED
            quiet = not self._interrupted(call["t"], end) and not died and not rejected
            if (outcome == "deny" or (quiet and not spawned)) and opens:
                yield Disagreement("oracle-taken", f"the call {call_id} never reached agent.spawn (refused by the "
                                   "permission check or by Claude Code), yet lich open ran for it (PERM-FIRST, "
                                   "PERM-REFUSED)", opens[0][0])
            if spawned and quiet and answer is not None and len(opens) != 1:
                yield Disagreement("oracle-taken", f"the taken call {call_id} ran lich open {len(opens)} times, "
                                   "not once", answer[0],
                                   {"count": 1, "run": {"argv": {"contains": prompt}, "timeout_ms": OPEN_MS}})
            if len(opens) > 1:
                continue
            for i, run in opens:
                if isolated and base_at < 0:
                    yield Disagreement("oracle-argv", f"the isolated call {call_id} opened without reading its base "
                                       "with git branch --show-current (OPEN-BASE)", i,
                                       {"run": {"t": {"le": run["t"]}, "argv": ["git", "branch", "--show-current"]}})
                want = self._open_argv(call_id, call["input"], base or "")
                if isolated and want[want.index("--worktree") + 1].endswith("-"):
                    want[want.index("--worktree") + 1] = run["argv"][want.index("--worktree") + 1]  # no suffix: open
                if run["argv"] != want or run.get("timeout_ms") != OPEN_MS:
                    yield Disagreement("oracle-argv", f"the call {call_id} opened with {run['argv']!r} "
                                       f"(timeout {run.get('timeout_ms')}), not {want!r} (timeout {OPEN_MS})", i,
                                       {"run": {"t": run["t"], "argv": want, "timeout_ms": OPEN_MS}})
                    continue
                yield from self._arm(call_id, call, run, i, answer, quiet)
        for runs in by_prompt.values():  # opens of calls the model does not tell apart: they may count a worker
            for i, run in runs:
                if i not in attributed:
                    yield from self._arm("", {"input": {}}, run, i, None, quiet=False)

    def _open_argv(self, call_id: str, tool_input: dict[str, Any], base: str) -> list[str]:
        """OPEN-ARGV with OPEN-MODEL."""
        argv = [self.lich_bin, "open", "--kind", "claude", "--subagent"]
        if tool_input.get("isolation") == "worktree":
            argv += ["--worktree", branch(str(tool_input.get("description") or ""), call_id)]
            if base:
                argv += ["--base", base]
        model = tool_input.get("model")
        if isinstance(model, str) and model:
            argv += ["--model", model]
        return [*argv, "--prompt", tool_input["prompt"], "--json"]

    def _arm(self, call_id: str, call: dict[str, Any], run: dict[str, Any], index: int,
             answer: tuple[int, dict[str, Any]] | None, quiet: bool) -> Iterator[Disagreement]:
        """DELIV-*: the answer's arm from what the open printed; a pending one is counted (DELIV-PENDING)."""
        ended = run["t"] + (run.get("ms") or 0)
        printed = parsed(run.get("stdout")) if run.get("error") is None else _UNSURE
        delivery = printed.get("delivery") if isinstance(printed, dict) else None
        status = delivery.get("status") if isinstance(delivery, dict) else None
        # the roster name: the name lich printed, else its label (the mod reads no other field of it: lich's
        # id is not a name its list gives); with neither, the spec does not say what the mod calls it
        named = [printed.get(k) for k in ("name", "label")] if isinstance(printed, dict) else []
        name = next((n for n in named if isinstance(n, str) and n), None)
        isolated = call["input"].get("isolation") == "worktree"
        description = str(call["input"].get("description") or "")
        if status == "pending" and isinstance(name, str):
            self.book.add(ModelWorker(name, isolated, ended, description, sure=quiet))
        elif isinstance(printed, dict) and delivery is not None and (status is None or status == "pending"):
            # a delivery the spec cannot read, or a worker with no roster name: the mod may count it
            self.book.add(ModelWorker(name if isinstance(name, str) else "\x00", isolated, ended, description,
                                      sure=False))
        if not quiet or answer is None or printed is _UNSURE or host_lost(answer[1]):
            return
        got = answer[1]
        result: dict[str, Any] = got["result"] if isinstance(got.get("result"), dict) else {}
        if not isinstance(printed, dict) or "delivery" not in printed:  # not opened, or the task never reached it
            self.arms[call_id] = "open-failed"
            if call_id not in self.natives:
                yield Disagreement("oracle-arm", f"the call {call_id}'s open printed no delivery, so the native "
                                   f"agent runs (DELIV-OPEN-FAILED), yet it answered {_shown(got)}", answer[0],
                                   {"native": {"call": call_id, "tool": "Agent"}})
            return
        if not isinstance(status, str) or not isinstance(name, str):
            return
        arm = ("launched" if status in ("pending", "unanswered") else "answered" if status == "answered"
               else "never" if status in ("unread", "undelivered") else "unknown")
        self.arms[call_id] = status if status in ("pending", "unanswered", "answered") else arm
        wrong = None
        expect: dict[str, Any] = {}
        if arm == "launched":
            want = {"status": "async_launched", "agentId": name, "description": call["input"].get("description"),
                    "prompt": call["input"]["prompt"], "outputFile": ""}
            if result != want:
                wrong = f"{json.dumps(want)} (DELIV-PENDING, DELIV-UNANSWERED, RESULT-ASYNC, RESULT-AGENTID)"
                expect = {"answer": {"call": call_id, "result": _exactly(want, result)}}
        elif arm == "answered":
            keys_ok = ("worktreePath" in result) == isolated == ("worktreeBranch" in result)
            if (result.get("status") != "completed" or result.get("agentId") != name or not keys_ok
                    or result.get("totalTokens") != 0 or result.get("totalToolUseCount") != 0
                    or (isolated and result.get("worktreeBranch") != branch(description, call_id))):
                wrong = "completed with the roster name, zero counts, and a worktree only when isolated " \
                        "(DELIV-ANSWERED, RESULT-COMPLETED)"
                expect = {"answer": {"call": call_id, "result": {
                    "status": "completed", "agentId": name, "totalTokens": 0, "totalToolUseCount": 0,
                    "worktreePath": {"absent": not isolated},
                    "worktreeBranch": branch(description, call_id) if isolated else {"absent": True}}}}
        elif "deny" not in got or call_id in self.natives:
            wrong = "a deny, never the native agent (DELIV-NEVER, DELIV-UNKNOWN)"
            expect = ({"no native": {"call": call_id, "tool": "Agent"}} if call_id in self.natives
                      else {"answer": {"call": call_id, "deny": {"absent": False}}})
        if wrong:
            yield Disagreement("oracle-arm", f"the call {call_id}'s open printed delivery {status!r}: it answered "
                               f"{_shown(got)}, not {wrong}", answer[0], expect)

    def _reads(self) -> Iterator[Disagreement]:
        """FOOTER-SHARED-DONE, FOOTER-ISOLATED-DONE, FOOTER-LIST-FAIL: what each sessions read ends."""
        for i, e in self.runs:
            if e["argv"][1:2] != ["sessions"]:
                continue
            if e["argv"] != [self.lich_bin, "sessions", "--json"]:
                yield Disagreement("oracle-argv", f"a sessions read at t={e['t']} is {e['argv']!r}", i,
                                   {"run": {"t": e["t"], "argv": [self.lich_bin, "sessions", "--json"]}})
            ended = e["t"] + (e.get("ms") or 0)
            self.read_ends[e["t"]] = ended
            # a reload, a new process or the host's death while it ran: what asked is gone, and the next host
            # counts from the kept state and its own read; the spec does not say whether what this one listed
            # still lands, so it may end a worker, never surely
            cut = self.scenario.session.data and any(j > i and r["kind"] in ("reload", "resume", "host.dies")
                                                     and r["t"] < ended for j, r in enumerate(self.events))
            listed = parsed(e.get("stdout")) if e.get("exit") == 0 and e.get("error") is None else _UNREAD
            if cut:
                self.reads.append((e["t"], "unsure"))
                if isinstance(listed, list) or listed is _UNSURE:
                    for worker in self.book.workers:
                        worker.end(ended, sure=False)
                continue
            if listed is _UNSURE:
                self.reads.append((e["t"], "unsure"))
                for worker in self.book.workers:
                    worker.end(ended, sure=False)
                continue
            if not isinstance(listed, list):
                self.reads.append((e["t"], "failed"))
                continue  # a list lich could not give: nothing changes
            self.reads.append((e["t"], "good"))
            for worker in self.book.workers:
                if e["t"] < worker.added:
                    continue  # asked before lich had it: the list says nothing of it
                rows = [r for r in listed if isinstance(r, dict) and r.get("name") == worker.name]
                running = [not worker.isolated or r.get("state") != "done" for r in rows]
                if not any(running):  # (asked on the ms the open ended: lich may not have had it yet)
                    worker.end(ended, sure=e["t"] > worker.added)
                elif not all(running):
                    worker.end(ended, sure=False)  # listed twice, done and not: the spec does not say which

    def _stops(self) -> Iterator[Disagreement]:
        """STOP-*: a TaskStop of a counted worker runs close or control; any other goes to Claude Code."""
        used: set[int] = set()
        for call_id, (index, call) in self.calls.items():
            if call.get("tool") != "TaskStop":
                continue
            task_id = call["input"].get("task_id") or call["input"].get("shell_id") or ""
            t = call["t"]
            worker = self.book.named(task_id, t) if isinstance(task_id, str) else None
            answer = self.answers.get(call_id)
            runs = [(i, e) for i, e in self.runs if e["t"] == t and e["argv"][1:2] in (["close"], ["control"])
                    and task_id in e["argv"] and i not in used]  # parallel stops of one worker: one run each
            if worker is None or not worker.maybe(t):
                if runs:
                    yield Disagreement("oracle-stop", f"the TaskStop {call_id} of {task_id!r}, no worker the mod "
                                       f"counts, ran {runs[0][1]['argv']!r} (STOP-OTHER)", runs[0][0])
                elif answer is not None and call_id not in self.natives and answer[1].get("error") != USER_REJECTED:
                    # (a call the person's Esc gave up was rejected before Claude Code's own TaskStop ran)
                    yield Disagreement("oracle-stop", f"the TaskStop {call_id} of {task_id!r}, no worker the mod "
                                       "counts, did not go to Claude Code (STOP-OTHER)", answer[0],
                                       {"native": {"call": call_id}})
                continue
            want = [self.lich_bin, "control", task_id, "abort"] if worker.isolated else [self.lich_bin, "close",
                                                                                            task_id]
            counted = worker.surely(t) and worker.sure
            if not runs:
                if counted:
                    yield Disagreement("oracle-stop", f"the TaskStop {call_id} of the counted worker {task_id!r} ran "
                                       f"no {want[1]} (STOP-TAKEN)", index, {"run": {"t": t, "argv": want}})
                continue
            i, run = runs[0]
            used.add(i)
            for other in self.book.workers:  # two workers of one name may be counted: the one stopped is either
                if other.name == task_id and other.maybe(t) and other.isolated != worker.isolated \
                        and run["argv"] != want:
                    worker = other
                    want = [self.lich_bin, "control", task_id, "abort"] if worker.isolated else \
                        [self.lich_bin, "close", task_id]
            if run["argv"] != want:
                kind = "isolated" if worker.isolated else "shared"
                yield Disagreement("oracle-stop", f"the TaskStop {call_id} of the {kind} worker {task_id!r} ran "
                                   f"{run['argv']!r}, not {want!r} (STOP-SHARED, STOP-ISOLATED)", i,
                                   {"run": {"t": run["t"], "argv": want}})
                continue
            ended = run["t"] + (run.get("ms") or 0)
            self.stop_runs.append((run["t"], ended))
            code, error = run.get("exit"), run.get("error")
            if code == 0 and error is None:
                worker.end(ended, sure=True)
                want_result = {"message": f"Successfully stopped task: {task_id} ({worker.description})",
                               "task_id": task_id, "task_type": "local_agent", "command": worker.description}
                if answer is not None and not self._interrupted(t, answer[1]["t"]) \
                        and answer[1].get("result") != want_result:
                    got = answer[1].get("result")
                    yield Disagreement("oracle-stop", f"the TaskStop {call_id} that lich carried out answered "
                                       f"{_shown(answer[1])}, not {json.dumps(want_result)} (STOP-RESULT)", answer[0],
                                       {"answer": {"call": call_id, "result": _exactly(
                                           want_result, got if isinstance(got, dict) else {})}})
            elif code == 1 or error is not None:
                worker.refused = True  # STOP-REFUSED: the worker still counts
                if answer is not None and not self._interrupted(t, answer[1]["t"]) and "deny" not in answer[1]:
                    yield Disagreement("oracle-stop", f"the TaskStop {call_id} that lich refused answered "
                                       f"{_shown(answer[1])}, not a deny (STOP-REFUSED)", answer[0],
                                       {"answer": {"call": call_id, "deny": {"absent": False}}})
            else:  # an exit the spec gives no meaning for a stop
                worker.end(ended, sure=False)

    def _footers(self) -> Iterator[Disagreement]:
        """FOOTER-COUNT, FOOTER-ERRANDS: every footer drawn and every state read agrees with the count."""
        for i, e in enumerate(self.events):
            if e["kind"] == "check" and isinstance(e.get("count"), int):
                low, high = self.book.bounds(e["t"])
                if not low <= e["count"] <= high:
                    yield Disagreement("oracle-count", f"the mod counts {e['count']} workers at t={e['t']}; the spec "
                                       f"counts {_range(low, high)}", i)
            if e["kind"] != "footer":
                continue
            modes = e.get("modes")
            lines = [m for m in modes if isinstance(m, str) and m.startswith("lich: ")] if isinstance(modes, list) \
                else ([e["line"]] if isinstance(e.get("line"), str) else [])
            labels = [m for m in lines if _WORKERS.match(m)]
            errands = [m for m in lines if not _WORKERS.match(m)]
            low, high = self.book.bounds(e["t"])
            # the line alone does not tell these apart from a right footer (it is the first lich mode): the
            # modes drawn do
            if len(lines) > 1:
                yield Disagreement("oracle-footer", f"the footer at t={e['t']} shows {len(lines)} lich lines: "
                                   f"{lines!r} (FOOTER-ERRANDS)", i, {"no footer": {"t": e["t"], "modes": modes}})
            elif errands and labels:
                yield Disagreement("oracle-footer", f"the footer at t={e['t']} counts workers beside lich's "
                                   f"errands (FOOTER-ERRANDS)", i, {"no footer": {"t": e["t"], "modes": modes}})
            elif labels:
                found = _WORKERS.match(labels[0])
                assert found is not None
                count = int(found.group(1))
                if not low <= count <= high or (found.group(2) == "worker") != (count == 1) or count == 0:
                    yield Disagreement("oracle-footer", f"the footer at t={e['t']} shows {labels[0]!r}; the spec "
                                       f"counts {_range(low, high)} (FOOTER-COUNT)", i)
            elif not errands and low > 0 and not self._reloading(i):
                yield Disagreement("oracle-footer", f"the footer at t={e['t']} shows no count; the spec counts "
                                   f"{_range(low, high)} (FOOTER-COUNT)", i)

    def _reloading(self, index: int) -> bool:
        """The footer at ``index`` is the redraw of a reload, drawn before the fresh module's host has said
        hello with the kept state: the count is back at the hello, at the same moment."""
        e = self.events[index]
        return any(r["kind"] in ("reload", "resume") and r["t"] == e["t"] for r in self.events[:index])

    def kept(self, index: int) -> list[ModelWorker]:
        """The workers surely counted as the new process of the ``resume`` event at ``index`` started."""
        t = self.events[index]["t"]
        return [w for w in self.book.workers if w.surely(t) or (w.sure and w.added < t and w.gone == t)]

    def first_prompt(self, index: int) -> tuple[int, dict[str, Any]] | None:
        """The first prompt after the ``resume`` event at ``index`` (the person's, or a note lich typed: both are
        submitted at the prompt), if no other new process, reload or host's death came first."""
        for j in range(index + 1, len(self.events)):
            e = self.events[j]
            if e["kind"] in ("prompt", "note"):
                return j, e
            if e["kind"] in ("resume", "reload", "host.dies"):
                return None
        return None

    def _told(self) -> Iterator[Disagreement]:
        """Kept state: after a new process, Claude Code tells the model every agent it launched failed; the
        next prompt (or note) carries one line per worker still counted (``resume.still_running``), none for a worker
        lich no longer lists."""
        for index in self.resumes:
            found = self.first_prompt(index)
            if found is None:
                continue
            j, prompt = found
            context = [c for c in prompt.get("context") or [] if isinstance(c, str)]
            for worker in self.kept(index):
                told = any(f"agentId {worker.name}" in c for c in context)
                line = f"agentId {worker.name}"
                kind = prompt["kind"]
                if worker.surely(prompt["t"]) and not told:
                    yield Disagreement("oracle-resume", f"the {kind} at t={prompt['t']} after a new process does not "
                                       f"tell the model that the kept worker {worker.name!r} still runs", j,
                                       {kind: {"t": prompt["t"], "context": {"contains": line}}})
                elif not worker.maybe(prompt["t"]) and told:
                    yield Disagreement("oracle-resume", f"the {kind} at t={prompt['t']} after a new process tells the "
                                       f"model that {worker.name!r} still runs, which lich no longer lists", j,
                                       {kind: {"t": prompt["t"], "context": {"not": {"contains": line}}}})

    def _polls(self) -> Iterator[Disagreement]:
        """FOOTER-POLL: never a read while no worker can be counted; one every 5 s while one surely is."""
        starts = sorted(t for t, _ in self.reads)
        for t in starts:
            if self.book.bounds(t)[1] == 0:
                index = next(i for i, e in self.runs if e["t"] == t and e["argv"][1:2] == ["sessions"])
                yield Disagreement("oracle-poll", f"a sessions read at t={t} while the mod can count no worker "
                                   "(FOOTER-POLL: never while none runs)", index)
        end = max((e["t"] for e in self.events), default=0)
        for a, b in self._surely_counted(end):
            last = a
            for t in [s for s in starts if a <= s <= b] + [b]:
                # one read at a time: the period counts from the end of a read that ran past it, and
                # from the start of a session host that took over from one that died or from a process the
                # session left (a read the old one started as it exited, cut off, counts for nothing then)
                due = max([self.read_ends.get(last, last),
                           *(h for d, h in self._host_gaps() if last <= d <= t or last <= h <= t)])
                due += POLL_MS
                if t > due + self.poll_slack_ms:
                    index = next((i for i, e in enumerate(self.events) if e["t"] >= due), len(self.events) - 1)
                    yield Disagreement("liveness-poll", f"no sessions read from t={last} to t={t} while the mod "
                                       "surely counts a worker (FOOTER-POLL: every 5 s while any runs)", index,
                                       {"run": {"t": {"gt": last, "le": due + self.poll_slack_ms},
                                                "argv": [self.lich_bin, "sessions", "--json"]}})
                    return
                last = t

    def _host_gaps(self) -> list[tuple[float, float]]:
        """(gone, started again) for each session host that died; for each Claude Code process the session
        left (``resume``: the new process's host starts with its ``session.start``, seconds later in real time);
        and for a reload whose fresh host is seen starting later: no timer of the mod runs in between."""
        gaps: list[tuple[float, float]] = []
        died: float | None = None
        reloaded: float | None = None
        for e in self.events:
            if e["kind"] == "host.dies":
                died = e["t"]
            elif e["kind"] == "resume":
                if died is not None:
                    gaps.append((died, e["t"]))
                died = e["t"]
            elif e["kind"] in ("host.start", "session.start") and died is not None:
                gaps.append((died, e["t"]))
                died = reloaded = None
            elif e["kind"] == "reload":
                reloaded = e["t"]
            elif e["kind"] == "host.start" and reloaded is not None:
                gaps.append((reloaded, e["t"]))
                reloaded = None
            elif e["kind"] == "run" and e.get("argv", [None, None])[1:2] == ["sessions"]:
                reloaded = None  # the module read lich after the reload: its host was there
        if died is not None:
            gaps.append((died, float("inf")))
        return gaps

    def _surely_counted(self, end: float) -> list[tuple[float, float]]:
        """The stretches of time, up to ``end``, through which the spec surely counts a worker."""
        workers = self.book.workers
        moments = sorted({0.0, float(end), *(w.added for w in workers),
                          *(x for w in workers for x in (w.gone, w.vague) if x is not None and x <= end)})
        out: list[tuple[float, float]] = []
        for start, stop in itertools.pairwise(moments):
            if self.book.bounds((start + stop) / 2)[0] == 0:
                continue
            if out and out[-1][1] == start:
                out[-1] = (out[-1][0], stop)
            else:
                out.append((start, stop))
        return out

    def _bounds(self) -> Iterator[Disagreement]:
        """Every call is answered within its bound: the base read, the open's two minutes, the engine's budget."""
        for call_id, (_, call) in self.calls.items():
            answer = self.answers.get(call_id)
            if answer is not None and answer[1]["t"] - call["t"] > ANSWER_BOUND_MS:
                yield Disagreement("liveness-answer", f"the call {call_id} made at t={call['t']} was answered at "
                                   f"t={answer[1]['t']}, past its bound of {ANSWER_BOUND_MS} ms", answer[0],
                                   {"answer": {"call": call_id, "t": {"le": call["t"] + ANSWER_BOUND_MS}}})


def _range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low} to {high}"


def _exactly(want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """A matcher of a result that is ``want``: an expectation's mapping ignores keys it does not name, so each
    key ``got`` had beyond ``want``'s is named absent."""
    return {**want, **{key: {"absent": True} for key in got if key not in want}}


def _shown(answer: dict[str, Any]) -> str:
    if answer.get("error") == USER_REJECTED:
        return "the engine's rejection"
    shown = {k: v for k, v in answer.items() if k in ("result", "deny", "error")}
    return json.dumps(shown, default=str)[:200]


def _tool_calls(steps: Sequence[Any]) -> Iterator[Any]:
    for step in steps:
        yield from getattr(step, "calls", ()) or ()
        inner = getattr(step, "step", None)
        if inner is not None:
            yield from _tool_calls([inner])


def expectation(disagreement: Disagreement, events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What a written scenario expects so that its replay fails for ``disagreement``: its own (the value the
    spec wants in the field that was wrong), or that the event it points at does not happen (its time and the
    fields that tell it apart, the wrong one among them: an event the spec rules out, or a count or a footer
    line the spec's range does not hold)."""
    if disagreement.expect:
        return dict(disagreement.expect)
    if not 0 <= disagreement.index < len(events):
        return {}
    event = events[disagreement.index]
    fields: dict[str, Any] = {"t": event["t"], **{k: event[k] for k in ("call", "argv", "line", "count") if k in event}}
    return {f"no {event['kind']}": fields}
