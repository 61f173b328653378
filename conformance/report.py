"""``agent-cards report [SESSION]``: a session's flight recorder made into the scenario of what happened.

The session host keeps a journal of every session inside lich (:mod:`agent_cards.bridge.journal`): each
hook event the mod received, its answers, every ``lich`` and ``git`` run with its output, exit code and
time, the toasts and the footer. This reads one and writes a scenario whose scripts are what really
happened:

- each ``lich open`` is the call's ``lich:`` script with the real ``stdout``, ``stderr``, ``exit`` and ``ms``
  (and the card's ``name`` and ``label``, so the fake lich knows the worker by its real name); each
  ``lich sessions`` read is a ``lich.lists`` item by its number; a refused ``close`` or ``control`` is a
  ``lich.stops`` entry; every git run is a ``session.git.runs`` item;
- the calls in their order, with their ids and inputs (calls whose hooks overlapped as a ``parallel`` step),
  the gaps as ``wait`` steps, Esc as ``esc_after``, a call the permission check refused with its refusal;
- what the mod answered, its toasts and its runs, as expectations.

Then it replays the scenario in the fake host and compares the transcript with the journal's, lane by
lane, with the conformance comparator (:mod:`agent_cards_conformance.compare`). Each place the replay
could not follow the session is one line on stderr: ``engine: …`` for what Claude Code did itself (its own
agent, its own refusal), which the fake host models on its own; ``differs: …`` for the rest.

The journal is read as hostile input: a regular file only (a pipe, a device or a link to one is refused
without waiting on it), at most :data:`MAX_BYTES`, UTF-8, each line a JSON object at most
:data:`MAX_DEPTH` deep; any problem is one ``FILE:LINE: why`` line and exit 2.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from agent_cards.bridge.journal import FOLDER_NAME, SUFFIX, folder_of
from agent_cards.record import Record, field
from agent_cards_simulator.runners.scripted_git import GIT_MS
from agent_cards_simulator.scenario.writer import to_yaml

MAX_BYTES = 16 << 20  # two parts of a journal and room to spare
MAX_DEPTH = 32
REPORT_HELP = """usage: agent-cards report [SESSION] [-o SCENARIO.yaml [--force]]

Write the scenario of a Claude Code session from the plugin's flight recorder (the journal the session
host keeps inside lich), replay it in the fake host and say where the replay differs from what happened.
SESSION is a journal file, its name, or a Claude Code session id; without it, the newest journal.

Journals are kept in $AGENT_CARDS_JOURNAL_DIR, else the plugin's data folder ($CLAUDE_PLUGIN_DATA/journals,
~/.claude/plugins/data/*/journals), else agent-cards-journals-<uid> in the runtime or temp folder.

options:
  -o FILE       write the scenario to FILE (default: print it); an existing FILE needs --force
  --force       let -o replace an existing file
  -h, --help    show this help

exit status:
  0  the scenario was written and replays as the session went (engine: lines name what Claude Code did
     itself, which the fake host models on its own)
  1  the scenario was written, but its replay differs (each differs: line says where)
  2  no journal, a journal that cannot be read, or a wrong command line"""


class JournalProblem(Exception):
    """One ``FILE:LINE: why`` line: the journal cannot be read."""


class Reported(Record):
    yaml: str
    events: list[dict[str, Any]]  # the session's transcript, as the journal tells it
    notes: list[str] = field(default_factory=list)  # what the scenario cannot say (engine: …)
    engine_calls: set[str] = field(default_factory=set)  # calls Claude Code answered itself


# -- reading, bounded ----------------------------------------------------------------------------------


def _depth_ok(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The journal's records; :class:`JournalProblem` for anything that is not one."""
    from agent_cards_simulator.scenario.yamlnodes import YamlError, read_bytes

    name = str(path)
    try:
        data = read_bytes(path, MAX_BYTES)
    except YamlError as error:
        raise JournalProblem(f"{name}:1: {error.message}") from None
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise JournalProblem(f"{name}:{number}: not UTF-8") from None
        try:
            record = json.loads(text)
        except RecursionError:
            raise JournalProblem(f"{name}:{number}: nested deeper than {MAX_DEPTH}") from None
        except ValueError as error:
            raise JournalProblem(f"{name}:{number}: not a JSON line ({getattr(error, 'msg', error)})") from None
        if not _depth_ok(record):
            raise JournalProblem(f"{name}:{number}: nested deeper than {MAX_DEPTH}")
        if not isinstance(record, dict) or not isinstance(record.get("k"), str) \
                or not isinstance(record.get("t"), int) or isinstance(record.get("t"), bool):
            raise JournalProblem(f"{name}:{number}: not a journal record (an object with a kind k and a time t)")
        argv = record.get("argv")
        if record["k"] == "run" and not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            raise JournalProblem(f"{name}:{number}: a run whose argv is not a list of texts")
        ms = record.get("ms")
        if record["k"] in ("run", "collect") and ms is not None and not (type(ms) is int and ms >= 0):
            raise JournalProblem(f"{name}:{number}: a run whose ms is not a whole number of milliseconds")
        if not records and (record["k"] != "start" or record.get("v") != 1):
            raise JournalProblem(f"{name}:{number}: not a journal of this version (its first record is not "
                                 "a start record of version 1)")
        records.append(record)
    if not records:
        raise JournalProblem(f"{name}:1: an empty journal")
    return records


def journal_folders(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder a journal may be in (see the module's help)."""
    environ = os.environ if environ is None else environ
    found = [Path(folder_of(environ))]
    config = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    found += [Path(p) for p in sorted(glob.glob(os.path.join(glob.escape(config), "plugins", "data", "*",
                                                             FOLDER_NAME)))]
    for root in (environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir()):
        if root:
            found.append(Path(root) / f"agent-cards-journals-{os.getuid()}")
    return list(dict.fromkeys(found))


def find_journal(session: str | None, environ: Mapping[str, str] | None = None) -> Path:
    if session is not None and (os.sep in session or Path(session).exists()):
        return Path(session)
    candidates: list[Path] = []
    for folder in journal_folders(environ):
        try:
            candidates += [p for p in folder.iterdir() if p.name.endswith(SUFFIX)]
        except OSError:
            continue
    if session is None:
        if not candidates:
            raise JournalProblem("agent-cards report: no journal found (the session host keeps one inside lich, "
                                 "unless AGENT_CARDS_JOURNAL=off)")
        return max(candidates, key=lambda p: (p.name, p.stat().st_mtime))
    for path in candidates:
        if session in (path.name, path.name.removesuffix(SUFFIX)):
            return path
    for path in sorted(candidates, key=lambda p: p.name, reverse=True):
        try:
            with path.open("rb") as fh:
                first = json.loads(fh.readline(1 << 16) or b"{}")
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(first, dict) and first.get("session") == session:
            return path
    raise JournalProblem(f"agent-cards report: no journal of the session {session!r}")


# -- the journal read as a session ------------------------------------------------------------------


class _JournalDispatch(Record):
    id: str
    event: str
    t: int
    e: dict[str, Any]
    origin: dict[str, Any]
    passed: bool = False  # the mod called next
    beneath: Any = None
    beneath_error: str | None = None
    answer: Any = None
    answered: bool = False
    answer_t: int | None = None
    cancelled_t: int | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)


def _dispatches(records: Sequence[dict[str, Any]]) -> dict[str, _JournalDispatch]:
    out: dict[str, _JournalDispatch] = {}
    for r in records:
        key = str(r.get("d"))
        kind = r["k"]
        if kind == "event" and isinstance(r.get("e"), dict):
            origin = r.get("origin") if isinstance(r.get("origin"), dict) else {}
            out[key] = _JournalDispatch(key, str(r.get("event")), r["t"], dict(r["e"]), dict(origin or {}))
            continue
        d = out.get(key)
        if kind == "cancel":
            for gone in r.get("ids") or []:
                g = out.get(str(gone))
                if g is not None and g.cancelled_t is None and not g.answered:
                    g.cancelled_t = r["t"]
        if d is None:
            continue
        if kind == "next":
            d.passed = True
        elif kind == "beneath":
            d.beneath, d.beneath_error = r.get("value"), r.get("error")
        elif kind == "answer":
            d.answer, d.answered, d.answer_t = r.get("value"), "error" not in r, r["t"]
        elif kind == "run":
            d.runs.append(r)
    return out


def _run_event(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"t": r["t"], "kind": "run", "argv": list(r.get("argv") or []), "timeout_ms": r.get("timeout_ms"),
            "exit": r.get("exit"), "stdout": r.get("stdout", ""), "stderr": r.get("stderr", ""),
            "error": r.get("error"), "ms": r.get("ms")}


def _mods_answer(d: _JournalDispatch) -> bool:
    """Whether the mod gave the call's answer itself (not what Claude Code gave beneath, passed on)."""
    return d.answered and not (d.passed and d.answer == d.beneath)


def _answer_event(d: _JournalDispatch) -> dict[str, Any] | None:
    value = d.answer
    if not d.answered or not isinstance(value, dict):
        return None
    out: dict[str, Any] = {"t": d.answer_t or d.t, "kind": "answer", "call": str(d.e.get("tool_use_id"))}
    if "deny" in value:
        out["deny"] = value["deny"]
    elif value.get("isError") and isinstance(value.get("result"), str):
        out["error"] = value["result"]
    else:
        out["result"] = _as_read(value.get("result", value))
    context = value.get("context")
    out["context"] = [str(c) for c in context] if isinstance(context, list) else []  # as the hook gave them
    return out


def _as_read(result: Any) -> Any:
    """An Agent result as the engine hands it to the model (a launch and a report become text), as the
    conformance runner reads it from the model's requests; any other result as it is."""
    if not isinstance(result, dict) or not isinstance(result.get("agentId"), str):
        return result
    if result.get("status") == "async_launched":
        from agent_cards_simulator.host.results import launched

        return launched(result["agentId"])
    if result.get("status") == "completed":
        content = result.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        text = "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        return f"{text}\nagentId: {result['agentId']}"
    return result


def _ended(d: _JournalDispatch) -> int:
    """When the call's step ends in the replay: at its answer, or at Esc when the engine gave it up sooner
    (the journal may write the answer a moment after the cancel)."""
    answered = d.t if d.answer_t is None else d.answer_t
    return answered if d.cancelled_t is None else min(answered, d.cancelled_t)


def _record_end(r: Mapping[str, Any]) -> int:
    """When a record's work ended: a run's at its start plus its length (the two are rounded apart, so the end
    can come a millisecond after the record that followed it), any other's at its time."""
    return int(r["t"]) + (int(r.get("ms") or 0) if r["k"] in ("run", "collect") else 0)


def _esc_after(opens: Sequence[tuple[Mapping[str, Any], int]], cancel: int, begun: int) -> int:
    """A step's Esc as ms after it began in the replay (``opens``: the step's opens and when each starts there).
    An Esc that came while opens ran lands as far into them as it did, before the first of them ends, and never
    at the open's own start: the journal can round the open's start and the Esc to one millisecond, and an Esc
    at the moment an open starts comes before it."""
    running = [(r, at) for r, at in opens if int(r["t"]) <= cancel < _record_end(r)]
    if not running:
        return max(0, cancel - begun)
    first, at = min(running, key=lambda run: int(run[0]["t"]))
    ends = min(start + int(r.get("ms") or 0) for r, start in running)
    return max(at + 1, min(at + cancel - int(first["t"]), ends - 1))


def _is(r: Mapping[str, Any], lich: str | None, command: str) -> bool:
    argv = r.get("argv") or []
    return len(argv) >= 2 and argv[0] == lich and argv[1] == command


def _open_script(r: Mapping[str, Any]) -> dict[str, Any]:
    script: dict[str, Any] = {}
    if r.get("why") == "timeout":
        script["hang"] = True
    else:
        script["ms"] = r.get("ms") or 0
        script["stdout"] = str(r.get("stdout") or "")
        script["stderr"] = str(r.get("stderr") or "")
        if isinstance(r.get("exit"), int):
            script["exit"] = r["exit"]
    try:
        printed = json.loads(str(r.get("stdout") or ""))
    except (ValueError, RecursionError):
        printed = None
    if isinstance(printed, dict):
        for key in ("name", "label"):
            if isinstance(printed.get(key), str) and printed[key]:
                script[key] = printed[key]
        delivery = printed.get("delivery")
        status = delivery.get("status") if isinstance(delivery, dict) else None
        script["delivery"] = status if isinstance(status, str) else None
    return script


def _permission(d: _JournalDispatch) -> Any:
    """A call the permission check refused (it never reached agent.spawn), as the scenario's permission."""
    beneath = d.beneath if isinstance(d.beneath, dict) else {}
    said = str(beneath.get("result") or beneath.get("error") or beneath.get("deny") or "")
    if "doesn't want to proceed" in said:
        return {"ask": "no"}
    if said.startswith("PreToolUse:Agent hook error: "):
        return {"hook-deny": said.removeprefix("PreToolUse:Agent hook error: ")}
    return {"deny": said} if said else "deny"


def _clauses(calls: Sequence[_JournalDispatch], toasts: Sequence[str], parallel: bool, esc: bool,
             touched: set[str]) -> list[str]:
    """Clause ids from what happened (``touched``: the calls with a toast or a run of their own)."""
    found: list[str] = []
    for d in calls:
        value: dict[str, Any] = d.answer if isinstance(d.answer, dict) else {}
        result: dict[str, Any] = value["result"] if isinstance(value.get("result"), dict) else {}
        mine = _mods_answer(d)
        if d.e.get("tool") == "TaskStop":
            found.append("STOP-OTHER" if not mine else "STOP-REFUSED" if "deny" in value else "STOP-TAKEN")
        elif mine and result.get("status") == "async_launched":
            found.append("DELIV-PENDING")
        elif mine and result.get("status") == "completed":
            found.append("DELIV-ANSWERED")
        elif mine and "deny" in value:
            found.append("FALL-ESC-OPEN" if d.cancelled_t is not None else "DELIV-NEVER")
        elif (not d.passed or not mine) and str(d.e.get("tool_use_id")) not in touched:
            found.append("TAKE-UNTOUCHED")
    for toast in toasts:  # the catalog's words: an oversize task names lich's limit
        found.append("FALL-OVERSIZE" if "8192" in toast else "FALL-OPEN-FAILED")
    if parallel:
        found.append("BG-PARALLEL")
    if esc:
        found.append("FALL-ESC-OPEN")
    return list(dict.fromkeys(found)) or ["TAKE-UNTOUCHED"]


class _JournalSession:
    """The journal read as one session: its dispatches by kind, its runs, toasts and footer lines."""

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        self.records = records
        self.start = records[0]
        env = self.start.get("env")
        self.env: dict[str, Any] = dict(env) if isinstance(env, dict) else {}
        lich = self.env.get("LICH_BIN")
        self.lich = lich if isinstance(lich, str) else None
        self.notes: list[str] = []
        self.by_call: dict[str, _JournalDispatch] = {}
        self.spawns: dict[str, _JournalDispatch] = {}
        self.calls: list[_JournalDispatch] = []
        self.starts: list[_JournalDispatch] = []
        for d in _dispatches(records).values():
            call_id = str(d.e.get("tool_use_id") or "")
            if d.event == "tool.call":
                self.calls.append(d)
                self.by_call[call_id] = d
            elif d.event == "agent.spawn":
                self.spawns[call_id] = d
            elif d.event == "session.start":
                self.starts.append(d)
        self.calls.sort(key=lambda d: d.t)
        self.runs = [r for r in records if r["k"] == "run"]
        self.toasts = [r for r in records if r["k"] == "toast"]
        self.footers = [r for r in records if r["k"] == "footer"]
        self.engine_calls = {str(d.e.get("tool_use_id")) for d in self.calls if not _mods_answer(d)}
        self.esc_at = sorted({d.cancelled_t for d in self.calls if d.cancelled_t is not None})
        self.opens: dict[str, dict[str, Any]] = {}  # by call id
        self.by_order = False
        self.parallel = False

    def _id(self, d: _JournalDispatch) -> str:
        return str(d.e.get("tool_use_id"))

    def touched(self) -> set[str]:
        """The calls whose own dispatches (the call's, its spawn's) showed a toast or ran a process."""
        ids = {str(r.get("d")) for r in self.toasts} | {str(r.get("d")) for r in self.runs}
        out = set()
        for d in self.calls:
            spawn = self.spawns.get(self._id(d))
            if d.id in ids or (spawn is not None and spawn.id in ids):
                out.add(self._id(d))
        return out

    def went_native(self, call_id: str) -> bool:
        spawn = self.spawns.get(call_id)
        return spawn is not None and spawn.passed and spawn.beneath_error is None

    def transcript(self) -> list[dict[str, Any]]:
        """The session's transcript, as the journal tells it (the replay's event kinds)."""
        events: list[dict[str, Any]] = [
            {"t": d.t, "kind": "session.start", "interactive": bool(d.e.get("isInteractive", True))}
            for d in self.starts]
        for d in self.calls:
            tool_input = {k: v for k, v in d.e.items() if k not in ("tool", "tool_use_id", "agentId")}
            events.append({"t": d.t, "kind": "call", "call": self._id(d), "tool": d.e.get("tool"), "input": tool_input})
            answer = _answer_event(d)
            if answer is not None:
                events.append(answer)
            if self.went_native(self._id(d)):
                spawn = self.spawns[self._id(d)]  # its input is the call's, as the tool.call hook saw it
                events.append({"t": spawn.t, "kind": "native", "call": self._id(d), "tool": "Agent",
                               "input": tool_input})
        events += [_run_event(r) for r in self.runs]
        events += [{"t": r["t"], "kind": "toast", "text": str(r.get("text"))} for r in self.toasts]
        events += [{"t": r["t"], "kind": "footer", "line": r["line"] if isinstance(r.get("line"), str) else None}
                   for r in self.footers]
        events += [{"t": t, "kind": "esc"} for t in self.esc_at]
        events.sort(key=lambda e: e["t"])
        return events

    def session(self) -> dict[str, Any]:
        start = self.start
        session: dict[str, Any] = {"env": {k: self.env.get(k) for k in sorted(self.env)}}
        if self.starts:
            cwd = self.starts[0].e.get("cwd")
            if isinstance(cwd, str) and cwd.startswith("/"):
                session["cwd"] = cwd
        else:
            session["interactive"] = False
            self.notes.append("engine: the journal holds no interactive session.start (the mod's hook sees only "
                              "an interactive one): replayed as a session that is not interactive")
        state = start.get("state")
        if isinstance(state, dict) and state.get("workers"):
            self.notes.append(f"engine: this host was handed the state of one before it ({len(state['workers'])} "
                              "worker(s)); a scenario cannot hand a state over, so calls about them replay differently")
        if start.get("part", 1) != 1:
            self.notes.append(f"engine: the journal's oldest records were dropped (part {start.get('part')}): the "
                              "scenario starts where it does")
        git_runs = [r for r in self.runs if (r.get("argv") or [None])[0] == "git"]
        if any(r.get("why") == "start" for r in git_runs):
            session["git"] = "missing"
        elif git_runs:
            seen: dict[tuple[str, ...], dict[str, Any]] = {}
            for r in git_runs:
                code = r.get("exit")
                item = {"argv": list(r["argv"]), "stdout": str(r.get("stdout") or ""),
                        "stderr": str(r.get("stderr") or ""), "exit": code if isinstance(code, int) else 1}
                key = tuple(r["argv"])
                if key in seen and seen[key] != item:
                    self.notes.append(f"differs: {' '.join(key)} answered differently twice; the scenario answers "
                                      "it as the first time")
                seen.setdefault(key, item)
            session["git"] = {"runs": list(seen.values())}
        return session

    def lich_script(self) -> dict[str, Any]:
        lich, runs = self.lich, self.runs
        script: dict[str, Any] = {}
        if any(len(r.get("argv") or []) > 1 and r["argv"][0] == lich and r.get("why") == "start" for r in runs):
            script["installed"] = False
        reads = [r for r in runs if _is(r, lich, "sessions")]
        if reads:
            script["lists"] = [{"read": n, "stdout": str(r.get("stdout") or ""), "stderr": str(r.get("stderr") or ""),
                                "exit": r.get("exit") if isinstance(r.get("exit"), int) else 1}
                               for n, r in enumerate(reads, 1)]
            if any(r.get("error") for r in reads):
                self.notes.append("differs: a sessions read that failed to run is scripted as an exit 1")
        stops: dict[str, Any] = {}
        for r in runs:
            argv = r.get("argv") or []
            if (_is(r, lich, "close") or _is(r, lich, "control")) and len(argv) >= 3 \
                    and r.get("exit") not in (0, None):
                stops[str(argv[2])] = {"exit": r["exit"], "stderr": str(r.get("stderr") or "")}
        if stops:
            script["stops"] = stops
        if script.get("installed") is not False:
            for call_id, spawn in self.spawns.items():
                for r in spawn.runs:
                    if _is(r, lich, "open"):
                        self.opens[call_id] = _open_script(r)
        prompts = [str(self.by_call[c].e.get("prompt")) for c in self.opens if c in self.by_call]
        self.by_order = len(set(prompts)) != len(prompts)  # lich tells opens apart by prompt: else by order
        if self.by_order:
            script["opens"] = [self.opens[c] for c in sorted(self.opens, key=lambda c: self.spawns[c].t)]
        return script

    def steps(self) -> list[Any]:
        """The calls in order (overlapping hooks as one parallel step), the gaps as waits, Esc as esc_after."""
        calls = self.calls
        steps: list[Any] = []
        now = 0
        answered_at = {self._id(d): _ended(d) for d in calls}
        agent_ids: dict[str, str] = {}
        left_running: list[int] = []  # when each open a step's Esc left running ends, in the replay
        i = 0
        while i < len(calls):
            group = [calls[i]]
            end = answered_at[self._id(calls[i])]
            while i + len(group) < len(calls) and calls[i + len(group)].t < end:
                group.append(calls[i + len(group)])
                end = max(end, answered_at[self._id(group[-1])])
            begun = group[0].t
            if begun > now:
                steps.append({"wait": begun - now})
            items = [_call_step(d, self.opens, self.by_order, self.spawns, agent_ids) for d in group]
            self.parallel = self.parallel or len(items) > 1
            step: dict[str, Any] = items[0] if len(items) == 1 else {"parallel": items}
            cancelled = [d.cancelled_t for d in group if d.cancelled_t is not None]
            ended = max(begun, end)
            if cancelled:  # the replay's step ends at its Esc; the opens it leaves running end after
                opens = self._opens_in_replay(group)
                step["esc_after"] = _esc_after(opens, min(cancelled), begun)
                ended = begun + step["esc_after"]
                left_running += [begun + at + int(r.get("ms") or 0) for r, at in opens]
            steps.append(step)
            for d in group:
                value: dict[str, Any] = d.answer if isinstance(d.answer, dict) else {}
                result: dict[str, Any] = value["result"] if isinstance(value.get("result"), dict) else {}
                if isinstance(result.get("agentId"), str):
                    agent_ids[result["agentId"]] = self._id(d)
            now = ended
            i += len(group)
        last = max([*(_record_end(r) for r in self.records), *left_running])
        if last > now:  # the polls and footer changes after the last call, and each run to its end
            steps.append({"wait": last - now})
        return steps

    def _opens_in_replay(self, group: Sequence[_JournalDispatch]) -> list[tuple[Mapping[str, Any], int]]:
        """Each open of the step's calls, and when it starts in the replay (ms after the step began): after the
        call's git runs before it, each taking the scripted git's time, while the hooks themselves take none."""
        out: list[tuple[Mapping[str, Any], int]] = []
        for d in group:
            spawn = self.spawns.get(self._id(d))
            runs = [*d.runs, *(spawn.runs if spawn is not None else [])]
            for r in runs:
                if _is(r, self.lich, "open"):
                    gits = [g for g in runs if (g.get("argv") or [None])[0] == "git" and int(g["t"]) <= int(r["t"])]
                    out.append((r, GIT_MS * len(gits)))
        return out

    def expectations(self) -> list[Any]:
        """What the mod answered, its toasts and its runs (the polls aside)."""
        expect: list[Any] = []
        for d in self.calls:
            call_id, value = self._id(d), d.answer if isinstance(d.answer, dict) else None
            if value is None:
                continue
            if _mods_answer(d) and "deny" in value:
                expect.append({"answer": {"call": call_id, "deny": value["deny"]}})
            elif _mods_answer(d) and isinstance(value.get("result"), dict):
                kept = {k: v for k, v in value["result"].items() if isinstance(v, (str, bool))}
                expect.append({"answer": {"call": call_id, "result": kept}})
            elif d.e.get("tool") == "Agent" and self.went_native(call_id):
                expect.append({"native": {"call": call_id}})
        expect += [{"toast": {"text": r.get("text")}} for r in self.toasts]
        expect += [{"run": {"argv": list(r.get("argv") or []), "exit": r.get("exit")}} for r in self.runs
                   if not _is(r, self.lich, "sessions")]
        return expect


def report_scenario(records: Sequence[dict[str, Any]], name: str) -> Reported:
    """The scenario of the journal ``records`` (named ``name`` in its title), and the session's transcript."""
    read = _JournalSession(records)
    session = read.session()
    lich_script = read.lich_script()
    steps = read.steps()
    scenario: dict[str, Any] = {
        "title": f"Reported from the journal {name}: {len(read.calls)} call(s)",
        "clauses": _clauses(read.calls, [str(r.get("text")) for r in read.toasts], read.parallel, bool(read.esc_at),
                            read.touched()),
        "about": (f"Written by `agent-cards report` from the session host's journal {name}: lich's and git's "
                  "answers are what they printed then, the expectations what the mod answered. Say here what "
                  "went wrong, and correct the clauses."),
        "session": session,
    }
    if lich_script:
        scenario["lich"] = lich_script
    scenario["steps"] = steps
    scenario["expect"] = read.expectations()
    notes = read.notes + [f"engine: {c} was answered by Claude Code itself (its own agent, TaskStop or refusal): "
                          "the fake host gives its own model of that answer" for c in sorted(read.engine_calls)]
    text = to_yaml(scenario, width=120)
    return Reported(text, read.transcript(), notes, read.engine_calls)


def _call_step(d: _JournalDispatch, opens: Mapping[str, dict[str, Any]], by_order: bool,
               spawns: Mapping[str, _JournalDispatch], agent_ids: Mapping[str, str]) -> dict[str, Any]:
    call_id = str(d.e.get("tool_use_id"))
    step: dict[str, Any]
    if d.e.get("tool") == "TaskStop":
        task = d.e.get("task_id")
        if isinstance(task, str) and set(d.e) <= {"tool", "tool_use_id", "task_id"}:
            step = {"taskstop": {"worker": agent_ids[task]} if task in agent_ids else task, "id": call_id}
        else:
            step = {"call": {k: v for k, v in d.e.items() if k not in ("tool", "tool_use_id")},
                    "tool": "TaskStop", "id": call_id}
    else:
        step = {"call": {k: v for k, v in d.e.items() if k not in ("tool", "tool_use_id", "agentId")}, "id": call_id}
        if d.e.get("tool") != "Agent":
            step["tool"] = d.e.get("tool")
        if call_id in opens and not by_order:
            step["lich"] = opens[call_id]
        if d.passed and call_id not in spawns and d.e.get("tool") == "Agent":
            step["permission"] = _permission(d)
    if "agentId" in d.e:
        step["agent"] = str(d.e["agentId"])
    plugin = d.origin.get("plugin")
    if isinstance(plugin, str) and plugin and plugin != "engine":
        step["origin"] = plugin
    return step


# -- replay and compare ---------------------------------------------------------------------------------


#: What the session host sees, and so what its journal can be compared on: not the engine's dialog
#: (permission), nor whether the engine raised agent.spawn for a call no hook took (spawn, order).
JOURNAL_LANES = frozenset({"session.start", "call", "answer", "run", "polls", "toast", "footer", "native", "note",
                           "report", "keys", "time"})


def replay_and_compare(reported: Reported, file: str) -> list[str]:
    """The scenario replayed in the fake host against the journal's transcript: one line per difference."""
    from agent_cards_conformance.compare import compare
    from agent_cards_simulator.scenario.reader import ScenarioError, read
    from agent_cards_simulator.scenario.replay import replay

    try:
        scenario = read(file, reported.yaml)
    except ScenarioError as error:
        return [f"differs: the written scenario does not read: {str(error).splitlines()[0]}"]
    done = replay(scenario)
    lines = [f"differs: the replay failed: {f.splitlines()[0]}" for f in done.failures]
    comparison = compare(done.events, reported.events, lanes=JOURNAL_LANES, every_render=True)
    for diff in comparison.differences:
        if diff.lane == "answer" and diff.key in reported.engine_calls:
            continue  # said once among the notes
        if diff.lane == "session.start" and any(n.startswith("engine: the journal holds no") for n in reported.notes):
            continue
        lines.append(f"differs: {diff.lane} {diff.key}: {diff.why} (replayed: {json.dumps(diff.fake)[:200]}; "
                     f"journal: {json.dumps(diff.real)[:200]})")
    return lines


def main(args: list[str]) -> int:
    """``agent-cards report``."""
    args = list(args)
    if any(a in ("-h", "--help") for a in args):
        print(REPORT_HELP)
        return 0
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    out: str | None = None
    if "-o" in args:
        at = args.index("-o")
        if at + 1 >= len(args):
            print("agent-cards report: -o takes a file (agent-cards report --help)", file=sys.stderr)
            return 2
        out = args[at + 1]
        del args[at : at + 2]
    options = [a for a in args if a.startswith("-") and a != "-"]  # "-" alone is a session's name
    if options or len(args) > 1:
        reason = f"unknown option {options[0]}" if options else "name one session at most"
        print(f"agent-cards report: {reason} (agent-cards report --help)", file=sys.stderr)
        return 2
    if out is not None and os.path.lexists(out) and not force:
        print(f"agent-cards report: {out} exists: give --force to replace it", file=sys.stderr)
        return 2
    try:
        path = find_journal(args[0] if args else None)
        records = read_journal(path)
        reported = report_scenario(records, path.name)
    except JournalProblem as problem:
        print(problem, file=sys.stderr)
        return 2
    except (TypeError, ValueError, KeyError, AttributeError, yaml.YAMLError) as error:  # a record of odd shape
        print(f"{path}:1: a record this report cannot read ({type(error).__name__}: {error})"[:300], file=sys.stderr)
        return 2
    file = out or f"{path.name.removesuffix(SUFFIX)}.yaml"
    try:
        lines = [*reported.notes, *replay_and_compare(reported, file)]
    except (TypeError, ValueError, KeyError, AttributeError) as error:  # a record of odd shape
        print(f"{path}:1: a record this report cannot read ({type(error).__name__}: {error})"[:300], file=sys.stderr)
        return 2
    if out is not None:
        try:
            Path(out).write_text(reported.yaml, encoding="utf-8")
        except OSError as error:
            print(f"{out}:1: cannot write the scenario: {error.strerror}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(reported.yaml)
    for line in lines:
        print(f"agent-cards report: {line}", file=sys.stderr)
    differs = [line for line in lines if line.startswith("differs:")]
    print(f"agent-cards report: {path}: " + (f"{len(differs)} difference(s) from the session" if differs else
          "replays as the session went") + " (lanes: session.start, call, answer, run, toast, footer, native, keys)",
          file=sys.stderr)
    return 1 if differs else 0
