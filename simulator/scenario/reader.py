"""A scenario file, read and checked: every problem becomes one ``FILE:LINE: what is wrong`` line.

The format is documented in docs/scenarios.md and described for editors by docs/scenario.schema.json.
Short for the common case (a session inside lich, interactive, on branch ``main``; every open answers
``pending`` after 800 ms), precise when needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cards.engine import ENGINE, Origin
from simulator.host.claude_code import Permission
from simulator.lich.model import ListScript, OpenScript, Report, StopScript
from simulator.runners.virtual import GitScript
from simulator.scenario.yamlnodes import YamlError, YList, YMap, line_of, load

DEFAULT_ENV: dict[str, str] = {
    "LICH_BIN": "/opt/lich/bin/lich",
    "LICH_SESSION_ID": "3c4d",
    "LICH_SUBAGENT_DEPTH": "0",
    "LICH_PORT": "47999",
    "LICH_TOKEN": "tok",
}


class ScenarioError(Exception):
    """The file is not a valid scenario: ``problems`` holds ``(line, message)`` pairs."""

    def __init__(self, file: str, problems: list[tuple[int, str]]) -> None:
        super().__init__("\n".join(f"{file}:{line}: {message}" for line, message in problems))
        self.file = file
        self.problems = problems

    def lines(self) -> list[str]:
        return [f"{self.file}:{line}: {message}" for line, message in self.problems]


# -- the model of a scenario --------------------------------------------------------------------------


@dataclass(frozen=True)
class CallStep:
    tool: str
    input: dict[str, Any]
    id: str
    origin: Origin = ENGINE
    agent: str | None = None
    permission: Permission | None = None
    lich: OpenScript | None = None


@dataclass(frozen=True)
class Calls:
    """One call, or several raised at once (``parallel``); Esc may come while they run."""

    calls: tuple[CallStep, ...]
    esc_after: int | None = None


@dataclass(frozen=True)
class Simple:
    """``esc``, ``reload``, ``footer``, ``session.start``, ``wait``, ``until``, ``errands``, ``workflow``."""

    action: str
    value: Any = None


Step = Calls | Simple


@dataclass(frozen=True)
class Expectation:
    kind: str
    fields: dict[str, Any]
    count: int | None  # None: at least one; 0: none
    line: int


@dataclass
class Scenario:
    file: str
    title: str
    clauses: tuple[str, ...]
    env: dict[str, str]
    interactive: bool = True
    start: bool = True
    cwd: str = "/home/dev/app"  # the cwd session.start reports; lich's own checkout is lich.checkout
    permission: Permission = field(default_factory=Permission)
    git: GitScript = field(default_factory=GitScript)
    modes: tuple[str, ...] = ()
    agent_types: tuple[str, ...] = ()
    lich_installed: bool = True
    lich: dict[str, Any] = field(default_factory=dict)  # LichScript's fields
    opens: dict[str, OpenScript] = field(default_factory=dict)  # by prompt
    steps: list[Step] = field(default_factory=list)
    expect: list[Expectation] = field(default_factory=list)
    clause_lines: dict[str, int] = field(default_factory=dict)


# -- reading ------------------------------------------------------------------------------------------

_CLAUSE = re.compile(r"[A-Z]+(-[A-Z]+)*")
KINDS = (
    "session.start", "call", "permission", "spawn", "native", "answer", "run", "toast", "footer", "note", "esc",
    "reload", "report",
)
OPERATORS = {"contains", "startswith", "endswith", "matches", "lt", "le", "gt", "ge", "absent", "not"}


class _Reader:
    """Collects problems instead of stopping at the first one."""

    def __init__(self) -> None:
        self.problems: list[tuple[int, str]] = []

    def fail(self, where: object, key: str | int | None, message: str) -> None:
        self.problems.append((line_of(where, key) if key is not None else int(getattr(where, "line", 1)), message))

    def mapping(self, where: object, key: str | int, value: Any, path: str, allowed: set[str]) -> YMap | None:
        if not isinstance(value, YMap):
            self.fail(where, key, f"{path}: expected a mapping, got {_show(value)}")
            return None
        for name in value:
            if name not in allowed:
                hint = _nearest(name, allowed)
                self.fail(value, name, f"{path}: unknown key {name!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
        return value

    def typed(self, where: YMap, key: str, path: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        if key not in where:
            return default
        value = where[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            self.fail(where, key, f"{path}.{key}: expected {_names(names)}, got {_show(value)}")
            return default
        return value

    def ms(self, where: YMap, key: str, path: str, default: int | None = None) -> int | None:
        value: int | None = self.typed(where, key, path, int, default)
        if isinstance(value, int) and value < 0:
            self.fail(where, key, f"{path}.{key}: a time in ms cannot be negative")
            return default
        return value


def _names(names: str) -> str:
    return names.replace("str", "text").replace("int", "a whole number").replace("bool", "true or false").replace(
        "YMap", "a mapping"
    ).replace("YList", "a list").replace("NoneType", "null")


def _show(value: Any) -> str:
    if isinstance(value, YMap):
        return "a mapping"
    if isinstance(value, YList):
        return "a list"
    return repr(value)


def _nearest(name: str, allowed: set[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(name, sorted(allowed), n=1)
    return found[0] if found else None


def read(path: Path | str, text: str | None = None, known_clauses: set[str] | None = None) -> Scenario:
    file = str(path)
    try:
        data = load(text if text is not None else Path(path).read_text(encoding="utf-8"))
    except YamlError as error:
        raise ScenarioError(file, [(error.line, error.message)]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(file, [(1, f"cannot read the file: {error}")]) from None
    r = _Reader()
    top = r.mapping(None, 0, data, "scenario", {"title", "about", "clauses", "session", "lich", "steps", "expect"})
    if top is None:
        raise ScenarioError(file, [(1, "a scenario is a mapping with title, clauses and steps")])
    scenario = Scenario(file=file, title="", clauses=(), env=dict(DEFAULT_ENV))
    for required in ("title", "clauses", "steps"):
        if required not in top:
            r.fail(top, None, f"scenario: {required!r} is missing")
    scenario.title = r.typed(top, "title", "scenario", str, "")
    _clauses(r, top, scenario, known_clauses)
    if "session" in top:
        _session(r, top, scenario)
    if "lich" in top:
        _lich(r, top, scenario)
    if "steps" in top:
        _steps(r, top, scenario)
    if "expect" in top:
        _expect(r, top, scenario)
    if r.problems:
        raise ScenarioError(file, sorted(r.problems))
    return scenario


def _clauses(r: _Reader, top: YMap, s: Scenario, known: set[str] | None) -> None:
    value = top.get("clauses")
    if value is None:
        return
    if not isinstance(value, YList) or not value:
        r.fail(top, "clauses", "clauses: expected a non-empty list of clause ids (scenarios/clauses.yaml)")
        return
    ids = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not _CLAUSE.fullmatch(item):
            r.fail(value, i, f"clauses[{i}]: {_show(item)} is not a clause id such as TAKE-TYPE")
        elif known is not None and item not in known:
            hint = _nearest(item, known)
            r.fail(value, i, f"clauses[{i}]: no clause {item!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
        else:
            ids.append(item)
            s.clause_lines[item] = value.line_of(i)
    s.clauses = tuple(ids)


def _session(r: _Reader, top: YMap, s: Scenario) -> None:
    keys = {"interactive", "start", "env", "lang", "git", "permission", "modes", "agent_types", "cwd"}
    m = r.mapping(top, "session", top["session"], "session", keys)
    if m is None:
        return
    s.interactive = r.typed(m, "interactive", "session", bool, True)
    s.cwd = r.typed(m, "cwd", "session", str, s.cwd)
    s.start = r.typed(m, "start", "session", bool, True)
    env = m.get("env", YMap())
    if r.mapping(m, "env", env, "session.env", set(env) if isinstance(env, dict) else set()):
        for name, value in env.items():
            if value is None:
                s.env.pop(name, None)
            elif isinstance(value, str | int) and not isinstance(value, bool):
                s.env[name] = str(value)
            else:
                r.fail(env, name, f"session.env.{name}: expected text or null (null: unset), got {_show(value)}")
    if "lang" in m:
        lang = r.typed(m, "lang", "session", str)
        if lang is not None:
            s.env["LICH_PROMPT_LANG"] = lang
    if "git" in m:
        s.git = _git(r, m)
    if "permission" in m:
        s.permission = _permission(r, m, "permission", "session.permission") or s.permission
    modes = r.typed(m, "modes", "session", YList, YList())
    s.modes = tuple(str(x) for x in modes)
    types = r.typed(m, "agent_types", "session", YList, YList())
    s.agent_types = tuple(str(x) for x in types)


def _git(r: _Reader, m: YMap) -> GitScript:
    value = m["git"]
    if value == "detached":
        return GitScript(branch=None)
    if value == "missing":
        return GitScript(missing=True)
    if isinstance(value, str):
        return GitScript(branch=value)
    g = r.mapping(m, "git", value, "session.git", {"branch", "exit", "stderr", "missing"})
    if g is None:
        return GitScript()
    return GitScript(
        branch=r.typed(g, "branch", "session.git", (str, type(None)), "main"),
        exit=r.typed(g, "exit", "session.git", int, 0),
        stderr=r.typed(g, "stderr", "session.git", str, ""),
        missing=r.typed(g, "missing", "session.git", bool, False),
    )


_DECISIONS = {"allow", "deny", "hook-deny", "ask"}


def _permission(r: _Reader, where: YMap, key: str, path: str) -> Permission | None:
    value = where[key]
    if isinstance(value, str):
        if value not in _DECISIONS - {"ask"}:
            r.fail(where, key, f"{path}: expected allow, deny, hook-deny or {{ask: yes|no|nobody}}, got {value!r}")
            return None
        return Permission(value)
    p = r.mapping(where, key, value, path, {"ask", "deny", "hook-deny"})
    if p is None or len(p) != 1:
        if p is not None:
            r.fail(where, key, f"{path}: give exactly one of ask, deny, hook-deny")
        return None
    (decision, detail), = p.items()
    if decision == "ask":
        answers: dict[object, bool | None] = {True: True, False: False, "yes": True, "no": False, "nobody": None}
        if not isinstance(detail, bool | str) or detail not in answers:
            r.fail(p, "ask", f"{path}.ask: expected yes, no or nobody, got {_show(detail)}")
            return None
        return Permission("ask", answer=answers[detail])
    if not isinstance(detail, str):
        r.fail(p, decision, f"{path}.{decision}: expected the reason as text")
        return None
    return Permission(decision, reason=detail)


def _lich(r: _Reader, top: YMap, s: Scenario) -> None:
    keys = {"installed", "running", "subagent", "project", "checkout", "caller_label", "lists", "stops", "open"}
    m = r.mapping(top, "lich", top["lich"], "lich", keys)
    if m is None:
        return
    s.lich_installed = r.typed(m, "installed", "lich", bool, True)
    for key in ("running", "subagent"):
        if key in m:
            s.lich[key] = r.typed(m, key, "lich", bool, True)
    for key in ("project", "checkout", "caller_label"):
        if key in m:
            s.lich[key] = r.typed(m, key, "lich", str, "")
    lists = r.typed(m, "lists", "lich", YList, YList())
    windows = []
    for i, item in enumerate(lists):
        w = r.mapping(lists, i, item, f"lich.lists[{i}]", {"from", "until", "stdout", "stderr", "exit"})
        if w is None:
            continue
        path = f"lich.lists[{i}]"
        defaults = ListScript(0, 0)
        windows.append(
            ListScript(
                from_ms=r.ms(w, "from", path, 0) or 0,
                until_ms=r.ms(w, "until", path, 0) or 0,
                stdout=r.typed(w, "stdout", path, str, defaults.stdout),
                stderr=r.typed(w, "stderr", path, str, defaults.stderr),
                exit=r.typed(w, "exit", path, int, defaults.exit),
            )
        )
    s.lich["lists"] = tuple(windows)
    stops = m.get("stops", YMap())
    names = set(stops) if isinstance(stops, dict) else set()
    if r.mapping(m, "stops", stops, "lich.stops", names):
        table = {}
        for name, item in stops.items():
            st = r.mapping(stops, name, item, f"lich.stops.{name}", {"exit", "stderr"})
            if st is not None:
                table[name] = StopScript(
                    exit=r.typed(st, "exit", f"lich.stops.{name}", int, 1),
                    stderr=r.typed(st, "stderr", f"lich.stops.{name}", str, ""),
                )
        s.lich["stops"] = table
    if "open" in m:
        script = _open(r, m, "open", "lich.open")
        if script is not None:
            s.lich["default_open"] = script


_OPEN_KEYS = {
    "delivery", "answer", "ms", "fail", "handoff_error", "hang", "stdout", "stderr", "exit", "label", "name", "report"
}


def _open(r: _Reader, where: YMap, key: str, path: str) -> OpenScript | None:
    o = r.mapping(where, key, where[key], path, _OPEN_KEYS)
    if o is None:
        return None
    report = None
    if "report" in o:
        rep = r.mapping(o, "report", o["report"], f"{path}.report", {"after", "text", "background"})
        if rep is not None:
            if "after" not in rep:
                r.fail(rep, None, f"{path}.report: 'after' (ms after the open started) is missing")
            report = Report(
                after_ms=r.ms(rep, "after", f"{path}.report", 0) or 0,
                text=r.typed(rep, "text", f"{path}.report", str, "Done."),
                background=r.typed(rep, "background", f"{path}.report", bool, False),
            )
    default = OpenScript()
    delivery = o.get("delivery", default.delivery)
    if delivery is not None and not isinstance(delivery, str):
        r.fail(o, "delivery", f"{path}.delivery: expected a status as text, got {_show(delivery)}")
        delivery = default.delivery
    return OpenScript(
        delivery=delivery,
        answer=r.typed(o, "answer", path, str, ""),
        ms=r.ms(o, "ms", path, default.ms) or 0,
        fail=r.typed(o, "fail", path, str),
        handoff_error=r.typed(o, "handoff_error", path, str),
        hang=r.typed(o, "hang", path, bool, False),
        stdout=r.typed(o, "stdout", path, str),
        stderr=r.typed(o, "stderr", path, str),
        exit=r.typed(o, "exit", path, int),
        label=r.typed(o, "label", path, str),
        name=r.typed(o, "name", path, str),
        report=report,
    )


_SIMPLE = {"esc", "reload", "footer", "session.start"}
_CALL_KEYS = {"call", "tool", "id", "origin", "agent", "permission", "lich", "esc_after"}


def _steps(r: _Reader, top: YMap, s: Scenario) -> None:
    steps = top["steps"]
    if not isinstance(steps, YList):
        r.fail(top, "steps", "steps: expected a list of steps")
        return
    counter = [0]
    for i, item in enumerate(steps):
        path = f"steps[{i}]"
        if isinstance(item, str):
            if item in _SIMPLE:
                s.steps.append(Simple(item, True if item == "session.start" else None))
            else:
                r.fail(steps, i, f"{path}: unknown step {item!r}; bare steps are {', '.join(sorted(_SIMPLE))}")
            continue
        if not isinstance(item, YMap) or not item:
            r.fail(steps, i, f"{path}: expected a step (a mapping such as 'call:' or a bare word such as 'esc')")
            continue
        if "call" in item or "taskstop" in item:
            step = _call(r, item, path, counter, s)
            if step is not None:
                esc = r.ms(item, "esc_after", path)
                s.steps.append(Calls((step,), esc))
        elif "parallel" in item:
            p = r.mapping(steps, i, item, path, {"parallel", "esc_after"})
            calls = p.get("parallel") if p is not None else None
            if not isinstance(calls, YList) or not calls:
                r.fail(item, "parallel", f"{path}.parallel: expected a list of calls")
                continue
            parsed = []
            for j, c in enumerate(calls):
                sub = f"{path}.parallel[{j}]"
                if not isinstance(c, YMap) or not ("call" in c or "taskstop" in c):
                    r.fail(calls, j, f"{sub}: expected a 'call:' or 'taskstop:' step")
                    continue
                if "esc_after" in c:
                    r.fail(c, "esc_after", f"{sub}.esc_after: put esc_after on the parallel step itself")
                one = _call(r, c, sub, counter, s)
                if one is not None:
                    parsed.append(one)
            s.steps.append(Calls(tuple(parsed), r.ms(item, "esc_after", path)))
        else:
            _simple(r, steps, i, item, path, s)
    _check_prompts(r, steps, s)
    _check_ids(r, steps, s)


def _check_ids(r: _Reader, steps: YList, s: Scenario) -> None:
    """Claude Code never reuses a tool_use_id; a scenario that does would confuse the transcript."""
    seen: set[str] = set()
    for i, step in enumerate(s.steps):
        for call in step.calls if isinstance(step, Calls) else ():
            if call.id in seen:
                r.fail(steps, i, f"steps: the call id {call.id!r} is used twice; give each call its own id")
            seen.add(call.id)


def _check_prompts(r: _Reader, steps: YList, s: Scenario) -> None:
    """lich answers an open by its prompt: two calls scripted differently need two prompts."""
    seen: dict[str, OpenScript] = {}
    for i, step in enumerate(s.steps):
        for call in step.calls if isinstance(step, Calls) else ():
            prompt = call.input.get("prompt")
            if call.lich is None or not isinstance(prompt, str):
                continue
            if prompt in seen and seen[prompt] != call.lich:
                r.fail(steps, i, f"steps: two calls with the prompt {prompt!r} are scripted differently; "
                       "lich tells opens apart by their prompt, so give them different prompts")
            seen[prompt] = call.lich
    s.opens = seen


def _call(r: _Reader, item: YMap, path: str, counter: list[int], s: Scenario) -> CallStep | None:
    keys = _CALL_KEYS | {"taskstop"}
    m = r.mapping(None, 0, item, path, keys)
    if m is None:
        return None
    counter[0] += 1
    call_id = r.typed(m, "id", path, str, f"toolu_{counter[0]:04d}")
    if "taskstop" in m and ("call" in m or "tool" in m or "lich" in m):
        extra = ", ".join(k for k in ("call", "tool", "lich") if k in m)
        r.fail(m, "taskstop", f"{path}: a taskstop step takes no {extra} (write a TaskStop call as 'call:' with "
               "tool: TaskStop)")
        return None
    if "taskstop" in m:
        target = m["taskstop"]
        if not isinstance(target, str):
            r.fail(m, "taskstop", f"{path}.taskstop: expected the task id (a worker's roster name) as text")
            return None
        tool, tool_input = "TaskStop", {"task_id": target}
    else:
        tool = r.typed(m, "tool", path, str, "Agent")
        raw = m["call"]
        if not isinstance(raw, YMap):
            r.fail(m, "call", f"{path}.call: expected the tool's input as a mapping (description, prompt, …)")
            return None
        tool_input = _plain(raw)
        if tool == "Agent":
            for needed in ("description", "prompt"):
                if needed not in tool_input:
                    r.fail(raw, None, f"{path}.call: an Agent call needs {needed!r}")
            if "isolation" in tool_input and tool_input["isolation"] not in ("worktree", "remote"):
                r.fail(raw, "isolation", f"{path}.call.isolation: Claude Code takes worktree or remote")
    origin = ENGINE
    if "origin" in m:
        plugin = r.typed(m, "origin", path, str, "engine")
        origin = ENGINE if plugin == "engine" else Origin(plugin, "user")
    permission = _permission(r, m, "permission", f"{path}.permission") if "permission" in m else None
    lich = _open(r, m, "lich", f"{path}.lich") if "lich" in m else None
    return CallStep(tool, tool_input, call_id, origin, r.typed(m, "agent", path, str), permission, lich)


def _simple(r: _Reader, steps: YList, i: int, item: YMap, path: str, s: Scenario) -> None:
    if len(item) != 1:
        r.fail(steps, i, f"{path}: one action per step (got {', '.join(item)})")
        return
    (action, value), = item.items()
    checks: dict[str, Callable[[Any], bool]] = {
        "wait": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "until": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "errands": lambda v: v is None or isinstance(v, str),
        "esc": lambda v: v is True or v is None,
        "reload": lambda v: v is True or v is None,
        "footer": lambda v: v is True or v is None,
        "session.start": lambda v: isinstance(v, bool)
        or (isinstance(v, YMap) and set(v) <= {"interactive"} and isinstance(v.get("interactive", True), bool)),
        "workflow": lambda v: isinstance(v, YMap) and set(v) <= {"description", "prompt"},
    }
    if action not in checks:
        hint = _nearest(action, set(checks) | {"call", "parallel", "taskstop"})
        r.fail(item, action, f"{path}: unknown step {action!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
        return
    if not checks[action](value):
        expected = {
            "wait": "a whole number of ms",
            "until": "a virtual time in ms",
            "errands": "the errands text, or null",
            "session.start": "true, false or {interactive: …}",
            "workflow": "{description, prompt}",
        }.get(action, "nothing (or true)")
        r.fail(item, action, f"{path}.{action}: expected {expected}, got {_show(value)}")
        return
    if action == "session.start" and isinstance(value, YMap):
        value = value.get("interactive", True)
    if action == "workflow":
        value = _plain(value)
    if action == "until" and isinstance(value, int):
        pass
    s.steps.append(Simple(action, value))


def _expect(r: _Reader, top: YMap, s: Scenario) -> None:
    items = top["expect"]
    if not isinstance(items, YList):
        r.fail(top, "expect", "expect: expected a list of expectations")
        return
    for i, item in enumerate(items):
        path = f"expect[{i}]"
        if isinstance(item, str):
            item_map: dict[str, Any] = {item: None}
            where: Any = items
        elif isinstance(item, YMap):
            item_map, where = item, item
        else:
            r.fail(items, i, f"{path}: expected '<kind>: {{fields}}' or 'no <kind>'")
            continue
        count = None
        kinds = [k for k in item_map if k != "count"]
        if "count" in item_map:
            count = item_map["count"]
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                r.fail(where, "count", f"{path}.count: expected a whole number")
                continue
        if len(kinds) != 1:
            r.fail(items, i, f"{path}: name exactly one event kind (got {', '.join(kinds) or 'none'})")
            continue
        kind = kinds[0]
        if kind.startswith("no "):
            if count is not None:
                r.fail(where, "count", f"{path}: 'no {kind[3:]}' already means count 0; drop count")
                continue
            kind, count = kind[3:], 0
        if kind not in KINDS:
            hint = _nearest(kind, set(KINDS))
            r.fail(items, i, f"{path}: no event kind {kind!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
            continue
        fields = item_map[kinds[0]]
        if fields is None:
            fields = {}
        if not isinstance(fields, dict):
            r.fail(items, i, f"{path}.{kinds[0]}: expected the fields to match as a mapping")
            continue
        s.expect.append(Expectation(kind, _plain(fields), count, items.line_of(i)))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
