"""The scenario's settings: ``session``, ``lich``, and the parts a call may repeat (``permission``, an open).

Each is defined once, with :mod:`agent_cards_simulator.scenario.spec`: how it is read and checked, the record it
becomes (the model's, :mod:`agent_cards_simulator.scenario.model`: for lich, the fake lich's own scripts), and its
description in the schema.
"""

from __future__ import annotations

import re
from typing import Any

from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.lich.scripts import LichScript, ListScript, OpenScript, ReportScript, StopScript
from agent_cards_simulator.runners.scripted_git import GitRun, GitScript
from agent_cards_simulator.scenario.model import DEFAULT_ENV, ScenarioSession
from agent_cards_simulator.scenario.spec import (
    FAILED,
    Bool,
    Const,
    Defs,
    Field,
    Int,
    Kind,
    ListOf,
    Ms,
    Named,
    Nullable,
    Reader,
    RecordKind,
    Schema,
    TextKind,
    described,
    is_int,
    show,
)
from agent_cards_simulator.scenario.yamlnodes import YMap

# -- permission -------------------------------------------------------------------------------------------

_ASK: dict[object, bool | None] = {True: True, False: False, "yes": True, "no": False, "nobody": None}
#: A deny rule as Claude Code's settings write it: the plain ``Agent``, or ``Agent(<agent type>)``.
_DENY_RULE = re.compile(r"Agent(?:\([^()\s][^()]*\))?")
_DENY_RULE_EXPECTED = "a deny rule as the settings write it: Agent (the tool is gone) or Agent(<agent type>)"


def _verdict(decision: str, detail: str) -> PermissionVerdict:
    if decision == "deny":
        return PermissionVerdict(decision, rule=detail)
    return PermissionVerdict(decision, reason=detail)


class _PermissionKind(Kind):
    """``allow``, ``deny``, ``hook-deny``, or a mapping with exactly one of ``ask``, ``deny``, ``hook-deny``."""

    expected = "allow, deny, hook-deny or {ask: yes|no|nobody}"
    description = "How Claude Code's permission check answers an Agent call."
    WORDS = ("allow", "deny", "hook-deny")
    KEYS = frozenset({"ask", "deny", "hook-deny"})

    def accepts(self, value: Any) -> bool:
        if isinstance(value, str):
            return value in self.WORDS
        if not isinstance(value, dict) or len(value) != 1 or not set(value) <= self.KEYS:
            return False
        ((decision, detail),) = value.items()
        if decision == "ask":
            return isinstance(detail, bool | str) and detail in _ASK
        if decision == "deny":
            return isinstance(detail, str) and _DENY_RULE.fullmatch(detail) is not None
        return isinstance(detail, str)

    def convert(self, value: Any) -> PermissionVerdict:
        if isinstance(value, str):
            return PermissionVerdict(value)
        ((decision, detail),) = value.items()
        if decision == "ask":
            return PermissionVerdict("ask", answer=_ASK[detail])
        return _verdict(decision, detail)

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if isinstance(value, str):
            if value not in self.WORDS:
                r.fail(where, key, f"{path}: expected {self.expected}, got {value!r}")
                return FAILED
            return PermissionVerdict(value)
        p = r.mapping(where, key, value, path, self.KEYS)
        if p is None or len(p) != 1:
            if p is not None:
                r.fail(where, key, f"{path}: give exactly one of ask, deny, hook-deny")
            return FAILED
        ((decision, detail),) = p.items()
        if decision == "ask":
            if not isinstance(detail, bool | str) or detail not in _ASK:
                r.fail(p, "ask", f"{path}.ask: expected yes, no or nobody, got {show(detail)}")
                return FAILED
            return PermissionVerdict("ask", answer=_ASK[detail])
        if decision == "deny" and not (isinstance(detail, str) and _DENY_RULE.fullmatch(detail)):
            r.fail(p, decision, f"{path}.deny: expected {_DENY_RULE_EXPECTED}, got {show(detail)}")
            return FAILED
        if not isinstance(detail, str):
            r.fail(p, decision, f"{path}.{decision}: expected the reason as text")
            return FAILED
        return _verdict(decision, detail)

    def schema(self, defs: Defs) -> Schema:
        return described({"anyOf": [
            {
                "description": "`allow`: the mode lets it run; `deny`: the rule `Agent(<the call's type>)` in the "
                "project's settings refuses it (Claude Code's own text); `hook-deny`: a PreToolUse hook denies it.",
                "type": "string",
                "enum": list(self.WORDS),
            },
            {
                "description": "Exactly one of ask, deny, hook-deny.",
                "type": "object",
                "additionalProperties": False,
                "minProperties": 1,
                "maxProperties": 1,
                "properties": {
                    "ask": {
                        "description": "The dialog asks; the person answers yes or no, or nobody is there to answer "
                        "(the call is refused: as in `claude -p`, the one session where nobody can, so give it "
                        "`interactive: false`).",
                        "enum": ["yes", "no", "nobody", True, False],
                    },
                    "deny": {
                        "description": "A deny rule in the project's settings, as they write it: `Agent` takes the "
                        "tool away before any hook runs (the model reads Claude Code's 'No such tool available'); "
                        "`Agent(<type>)` refuses the calls of that agent type after the hooks passed them on.",
                        "type": "string",
                        "pattern": "^" + _DENY_RULE.pattern + "$",
                    },
                    "hook-deny": {
                        "description": "A PreToolUse hook denies the call with this reason.", "type": "string",
                    },
                },
            },
        ]}, self.description)


PERMISSION = Named("permission", _PermissionKind())

#: Claude Code's permission modes, as agent.spawn's ``permissionMode`` names them (2.1.328).
PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "bypassPermissions", "dontAsk")
PERMISSION_MODE = Const(PERMISSION_MODES, "A permission mode of Claude Code.", expected="a permission mode ("
                        + ", ".join(PERMISSION_MODES) + ")")

# -- an open ----------------------------------------------------------------------------------------------

REPORT = RecordKind(
    [
        Field("after", Ms(), "When the worker answers, in ms after its open STARTED.", default=0,
              missing="{path}: 'after' (ms after the open started) is missing", attr="after_ms"),
        Field("text", TextKind(), "The report. Default `Done.`.", default="Done."),
        Field("background", Bool(), "Its turn ended with a background command left, so lich keeps it open and "
              "listed. Default false.", default=False),
    ],
    ReportScript,
    description="The worker's report.",
    name="report",
)

_DELIVERY = Nullable(
    TextKind("A known status, or any other text.",
         examples=("pending", "answered", "unanswered", "unread", "undelivered", "stopped", "expired")),
    null="No delivery printed.",
    expected="a status as text",
)

OPEN = RecordKind(
    [
        Field("delivery", _DELIVERY, "The delivery status printed. Default `pending`; null prints no delivery at all "
              "(still exit 0). Any other text is printed as given.", default="pending"),
        Field("answer", TextKind(), "The delivery's answer (for `answered`). Default empty.", default=""),
        Field("ms", Ms(), "How long the open takes, virtual ms. Default 800.", default=800),
        Field("fail", TextKind(), "Nothing is opened: stderr `lich: <fail>`, exit 1."),
        Field("handoff_error", TextKind(), "The session is opened but the task does not reach it: exit 1, this reason "
              "on stderr."),
        Field("hang", Bool(), "The open never returns (the host's timeout ends it); the session is opened. "
              "Default false.", default=False),
        Field("stdout", TextKind(), "Replaces what lich prints on stdout."),
        Field("stderr", TextKind(), "Replaces what lich prints on stderr."),
        Field("exit", Int(), "Replaces the exit code."),
        Field("label", TextKind(), "Replaces the session's label (`Session N`, or the branch for a worktree)."),
        Field("name", TextKind(), "Replaces the session's roster name (`<slug of label>-<id>`)."),
        Field("report", REPORT, "The worker reports later (without it: never)."),
    ],
    OpenScript,
    description="How lich answers one `lich open`.",
    name="open",
)

# -- session ----------------------------------------------------------------------------------------------


def _git_run(*, argv: tuple[str, ...], **values: Any) -> GitRun:
    return GitRun(argv=tuple(argv), **values)


GIT_RUN = RecordKind(
    [
        Field("argv", ListOf(TextKind(), min_items=2), "The command line, `git` first: `[git, rev-parse, HEAD]`.",
              default=(), missing="{path}: 'argv' (the git command line, git first) is missing"),
        Field("stdout", TextKind(), "What git prints on stdout. Default empty.", default=""),
        Field("stderr", TextKind(), "What git prints on stderr. Default empty.", default=""),
        Field("exit", Int(), "The exit code. Default 0.", default=0),
    ],
    _git_run,
    description="One git command line and how git answers it (after 5 ms).",
    name="gitRun",
)


class _GitKind(Kind):
    """A branch name, ``detached``, ``missing``, or the mapping ``{branch, exit, stderr, missing}``."""

    expected = "text or a mapping"
    DETAIL = RecordKind(
        [
            Field("branch", Nullable(TextKind()), "The current branch; null: a detached HEAD (an empty line). "
                  "Default `main`.", default="main"),
            Field("exit", Int(), "A non-zero exit code makes git fail (with `stderr`, or git's not-a-repository "
                  "message). Default 0.", default=0),
            Field("stderr", TextKind(), "What a failing git prints on stderr.", default=""),
            Field("missing", Bool(), "true: git is not on PATH, so the run fails to start. Default false.",
                  default=False),
            Field("runs", ListOf(GIT_RUN), "How git answers other command lines, by argv (a run whose argv is "
                  "one of these gets its answer; `git branch --show-current` too, which then wins over `branch`).",
                  default=()),
        ],
        GitScript,
        description="git in detail.",
        name="git",
    )

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) or self.DETAIL.accepts(value)

    def convert(self, value: Any) -> GitScript:
        if value == "detached":
            return GitScript(branch=None)
        if value == "missing":
            return GitScript(missing=True)
        if isinstance(value, str):
            return GitScript(branch=value)
        result: GitScript = self.DETAIL.convert(value)
        return result

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if isinstance(value, str):
            return self.convert(value)
        return self.DETAIL.read(r, where, key, value, path)

    def schema(self, defs: Defs) -> Schema:
        return {"anyOf": [
            TextKind("`detached`, `missing` or the current branch's name.", examples=("main", "detached", "missing"))
            .schema(defs),
            self.DETAIL.schema(defs),
        ]}


class _EnvKind(Kind):
    """Variables by name: text, a whole number (made text) or null (unset)."""

    expected = "a mapping"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict) and all(v is None or isinstance(v, str) or is_int(v) for v in value.values())

    def convert(self, value: Any) -> dict[str, str | None]:
        return {name: None if v is None else str(v) for name, v in value.items()}

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YMap):
            r.fail(where, key, f"{path}: expected a mapping, got {show(value)}")
            return FAILED
        ok = True
        for name, v in value.items():
            if not (v is None or isinstance(v, str) or is_int(v)):
                r.fail(value, name, f"{path}.{name}: expected text or null (null: unset), got {show(v)}")
                ok = False
        return self.convert(value) if ok else FAILED

    def schema(self, defs: Defs) -> Schema:
        return {
            "type": "object",
            "additionalProperties": {
                "description": "The variable's value; null unsets it.",
                "type": ["string", "integer", "null"],
            },
        }


def _session(*, env: dict[str, str | None] | None, lang: str | None, **values: Any) -> ScenarioSession:
    merged = dict(DEFAULT_ENV)
    for name, value in (env or {}).items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    if lang is not None:
        merged["LICH_PROMPT_LANG"] = lang
    return ScenarioSession(env=merged, **values)


_DEFAULTS = ScenarioSession()

SESSION = RecordKind(
    [
        Field("interactive", Bool(), "Whether the session.start raised at t=0 says the session is interactive "
              "(false: `claude -p`). Default true.", default=True),
        Field("start", Bool(), "Whether session.start is raised at t=0. Default true; false: the mod never sees the "
              "session start.", default=True),
        Field("env", _EnvKind(), "Environment variables added to or replacing the defaults ("
              + ", ".join(f"{k}={v}" for k, v in DEFAULT_ENV.items())
              + "). null unsets a variable; a whole number is turned into text."),
        Field("lang", TextKind(), "Shorthand for `env: {LICH_PROMPT_LANG: …}`; wins over `env`."),
        Field("git", _GitKind(), "What `git branch --show-current` does. A text: `detached` (a detached HEAD), "
              "`missing` (git is not installed) or a branch name. Default `main`.", default=_DEFAULTS.git),
        Field("permission", PERMISSION, "How Claude Code's permission check answers every Agent call (a call's own "
              "`permission` wins). Default `allow`.", default=_DEFAULTS.permission),
        Field("permission_mode", PERMISSION_MODE, "The permission mode the session starts in (`claude "
              "--permission-mode`), which agent.spawn carries as `permissionMode`. Default `default`.",
              default=_DEFAULTS.permission_mode),
        Field("modes", ListOf(TextKind("A mode's text, e.g. `plan mode`.")), "The footer's other modes, drawn before "
              "the mod adds its own.", default=()),
        Field("agent_types", ListOf(TextKind("An agent type's name.")), "Agent types known besides Claude Code's "
              "built-in ones (general-purpose, Explore, Plan, claude-code-guide, statusline-setup).", default=()),
        Field("cwd", TextKind(), "The session's directory (the cwd session.start reports). Default /home/dev/app.",
              default=_DEFAULTS.cwd),
        Field("data", Bool(), "Whether Claude Code gives the plugin a data folder and the session's id, where its "
              "session host keeps the mod's state: a reload, a session host that died and a continued session then "
              "start from it. Default true; false: only the module's memory holds it, and a reload forgets it.",
              default=True),
    ],
    _session,
    description="The Claude Code session the mod runs in.",
    name="session",
)

# -- lich -------------------------------------------------------------------------------------------------


class MapOf(Kind):
    """A mapping from names (any text) to ``item``."""

    expected = "a mapping"

    def __init__(self, item: Kind) -> None:
        self.item = item

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict) and all(map(self.item.accepts, value.values()))

    def convert(self, value: Any) -> dict[str, Any]:
        return {name: self.item.convert(v) for name, v in value.items()}

    def read(self, r: Reader, where: object, key: str | int, value: Any, path: str) -> Any:
        if not isinstance(value, YMap):
            r.fail(where, key, f"{path}: expected a mapping, got {show(value)}")
            return FAILED
        table = {name: self.item.read(r, value, name, v, f"{path}.{name}") for name, v in value.items()}
        return FAILED if FAILED in table.values() else table

    def schema(self, defs: Defs) -> Schema:
        return {"type": "object", "additionalProperties": self.item.schema(defs)}


LIST_WINDOW = RecordKind(
    [
        Field("from", Ms(), "Start of the window, virtual ms (inclusive). Default 0.", default=0, attr="from_ms"),
        Field("until", Ms(), "End of the window, virtual ms (exclusive). Default 0, which makes an empty window.",
              default=0, attr="until_ms"),
        Field("stdout", TextKind(), "What lich prints on stdout. Default empty.", default=ListScript.stdout),
        Field("stderr", TextKind(), "What lich prints on stderr. Default `lich: the session list could not be read` "
              "and a newline.", default=ListScript.stderr),
        Field("exit", Int(), "The exit code. Default 1.", default=ListScript.exit),
        Field("read", Int(minimum=1), "The n-th `lich sessions` read (counting from 1) answers with this, whatever "
              "its time; `from` and `until` are then not used."),
    ],
    ListScript,
    description="`lich sessions` answers with this while from <= t < until, or at its n-th read (`read: N`).",
    name="listWindow",
)

STOP = RecordKind(
    [
        Field("exit", Int(), "0: as usual; 1: refused (default); 2: control took the abort but has not confirmed it "
              "(it still goes through); 3: the session ended before confirming. For close, 2 and 3 are that exit "
              "with no output.", default=StopScript.exit),
        Field("stderr", TextKind(), "The reason of a refusal (`lich: ` is added when missing). Default: the worker "
              "refused the command.", default=StopScript.stderr),
    ],
    StopScript,
    description="How lich answers a close or an abort of one worker.",
    name="stop",
)

_LICH = LichScript()

LICH = RecordKind(
    [
        Field("installed", Bool(), "false: `$LICH_BIN` does not exist, so every lich run fails to start. "
              "Default true.", default=_LICH.installed),
        Field("running", Bool(), "false: no lich is running; every command but help fails. "
              "Default true.", default=_LICH.running),
        Field("subagent", Bool(), "false: a lich from before subagent support (no `--subagent`, no `control`). "
              "Default true.", default=_LICH.subagent),
        Field("project", TextKind(), "The project lich has open. Default `app`.", default=_LICH.project),
        Field("checkout", TextKind(), "The project's checkout, where a worker without a worktree works. "
              "Default `/home/dev/app`.", default=_LICH.checkout),
        Field("caller_label", TextKind(), "The asking session's label. Default `planner`.", default=_LICH.caller_label),
        Field("lists", ListOf(LIST_WINDOW), "Windows of time in which `lich sessions` fails or prints something "
              "else.", default=()),
        Field("stops", MapOf(STOP), "Scripted answers of `lich close NAME` and `lich control NAME abort`, by the "
              "worker's roster name.", default={}),
        Field("open", OPEN, "How lich answers every open that no call scripts with its own `lich:`. Default: pending "
              "after 800 ms.", default=_LICH.default_open, attr="default_open"),
        Field("sessions_ms", Ms(), "How long every `lich sessions` read takes, virtual ms (a `lists` window's "
              "answer too). Default: as long as every command but `open` (30 ms)."),
        Field("opens", ListOf(OPEN), "By order: the n-th open (counting every open from 1) gets the n-th of these, "
              "unless its call scripts it with its own `lich:`; an open past the list gets `open`.", default=()),
    ],
    LichScript,
    description="How the fake lich behaves.",
    name="lich",
)
