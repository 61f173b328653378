"""A fake ``lich``: the lich CLI contract (spec/lich-cli.md) as a pure command-line model.

argv, environment and a virtual clock go in; stdout, stderr, an exit code and a virtual duration come
out. There is no I/O, no real time and no randomness. All state lives in :class:`LichWorld` and
round-trips through :meth:`LichWorld.to_json` / :meth:`LichWorld.from_json` as plain JSON values.

Fixed schemes of this fake:

- **ids** are 4 hex digits from a counter: ``9f81``, ``9f82``, … (``0x9f80 + n``). Tickets are 8 hex
  digits (``a1b2c301``, …) and control command ids 4 (``7c01``, …). The asking session's id is whatever
  ``LICH_SESSION_ID`` says; pick one outside those ranges (``3c4d``, say).
- **labels**: an open without ``--worktree`` is labelled ``Session <n>`` from a project counter that
  starts at 2 (the asking session counts as Session 1, though it is labelled ``caller_label``); every
  open without ``--worktree`` bumps it, one with a scripted label too. An open with
  ``--worktree <branch>`` is labelled ``<branch>``.
- **roster names** are ``<slug of the label>-<id>``: lower-case, every run of characters other than
  ``a-z0-9`` turned into one ``-``, e.g. ``session-2-9f81``, ``subagent-fix-the-auth-flow-ab12-9f82``.
- **durations**: ``open`` takes its ``OpenScript.ms``; every other command takes ``CALL_MS`` (30 ms).
  ``wait`` never holds the line: it answers with what is known at ``now_ms``.
- **which open gets which OpenScript**: the n-th ``open`` that passes lich's own checks (flags, a
  running lich, ``--subagent``/``--project``/``--kind``/``--base`` validation) consumes ``opens[n]``.
- **old lich** (``subagent=False``) is the lich from before subagent support (§11): no ``--subagent``
  and no ``control``, exits only 0 and 1, no ``id`` in ``sessions --json``, and no ``confined``,
  ``folder`` or ``run`` in ``open --json``.
"""

from __future__ import annotations

import json
import re
from types import MappingProxyType

from simulator.lich.goflags import FlagError, HelpRequested, Parsed, go_quote, parse

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see "records" below)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, ClassVar, Final

    from simulator.lich.goflags import Kind

__all__ = [
    "CALL_MS",
    "COMMANDS",
    "LichRun",
    "LichScript",
    "LichWorld",
    "ListScript",
    "Note",
    "OpenScript",
    "Report",
    "StopScript",
    "go_quote",
]

CALL_MS = 30
PROMPT_LIMIT = 8192
CLI_VERSION, SERVER_VERSION, OLD_VERSION = "0.31.0", "0.31.0", "0.9.4"
NO_LICH = "no lich is running — open lich, or run this inside one of its sessions"
KINDS = ("claude", "codex", "antigravity", "opencode", "omp", "crush", "cursor", "kiro", "shell")
ACTIONS = ("prompt", "abort", "model", "effort", "command")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
#: Delivery statuses after which the errand is still open, so a later answer comes back as a note.
OPEN_ERRAND: frozenset[str | None] = frozenset({None, "pending", "unanswered"})
NEW_ONLY = frozenset({"control", "subagent"})  # a command and a flag the old lich lacks


# --- records -----------------------------------------------------------------------------------------
#
# Plain classes, not dataclasses: fake-lich imports this module on every lich call, and ``dataclasses``
# (which imports ``inspect``), ``typing`` and the decorators' work cost that call ~25 ms. As with a
# dataclass, a record's fields are the names its class body annotates, in order: the order of its
# constructor's parameters, of its repr and of the JSON that ``LichWorld.to_json`` writes.


class _Fields:
    """A record of the fields its class annotates, shown as ``Name(field=value, …)``.

    Only the classes that hold the fields derive from it (from :class:`_Value` for an immutable one):
    a subclass of theirs would count only its own annotations.
    """

    _fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._fields = tuple(cls.__annotations__)  # its own (Python 3.10+), in order

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"


class _Value(_Fields):
    """An immutable record (a frozen dataclass): equal and hashed by its fields, each set once in ``__init__``."""

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is immutable")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Value) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())


def _plain(value: Any) -> Any:
    """``value`` as JSON values: a record as the dict of its fields in order (``asdict``), a tuple as a list."""
    if isinstance(value, _Fields):
        return {name: _plain(getattr(value, name)) for name in value._fields}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


_NOTHING: Mapping[str, Any] = MappingProxyType({})  # an empty default that no caller can change


class Command(_Value):
    """A command of the CLI: its usage line, its line in ``help``, and its flags (name -> kind)."""

    usage: Final[str]
    summary: Final[str]
    flags: Final[Mapping[str, Kind]]

    def __init__(self, usage: str, summary: str, flags: Mapping[str, Kind]) -> None:
        self.usage = usage
        self.summary = summary
        self.flags = flags


COMMANDS: dict[str, Command] = {
    "open": Command(
        "lich open [--project <name-or-path>] [--kind <provider>] [--worktree <branch>] [--base <branch>] "
        "[--model <model>] [--effort <level>] [--ultracode] [--folder <name>] "
        "[--prompt <task> [--private | --subagent]] [--json]",
        "Open a session; with --prompt, hand it a task.",
        {"project": "string", "kind": "string", "worktree": "string", "base": "string", "model": "string",
         "effort": "string", "ultracode": "bool", "folder": "string", "prompt": "string", "private": "bool",
         "subagent": "bool", "json": "bool"},
    ),
    "sessions": Command("lich sessions [--json]", "List the live sessions you can address.", {"json": "bool"}),
    "close": Command(
        "lich close [--project <name-or-path>] [--worktree keep|remove] [--force] [--json] <session>",
        "Close a session.",
        {"project": "string", "worktree": "string", "force": "bool", "json": "bool"},
    ),
    "control": Command(
        "lich control [--project <name-or-path>] [--json] <session> <action> [<value>] [<args>]",
        "Drive a Claude Code session: prompt, abort, model, effort or command.",
        {"project": "string", "json": "bool"},
    ),
    "send": Command(
        "lich send [--project <name>] [--timeout <seconds>] [--private] [--json] <session> <prompt>",
        "Hand a session a task and wait for its answer.",
        {"project": "string", "timeout": "int", "private": "bool", "json": "bool"},
    ),
    "wait": Command(
        "lich wait [--timeout <seconds>] [--no-wait] [--json] [<ticket>]",
        "Wait on an errand again, or collect every result for this session.",
        {"timeout": "int", "no-wait": "bool", "json": "bool"},
    ),
    "reply": Command("lich reply [<ticket>] <answer>", "Answer a task handed to this session.", {}),
    "whoami": Command("lich whoami [--json]", "Show this session.", {"json": "bool"}),
    "version": Command("lich version [--json]", "Show the versions of this client and of the server.",
                       {"json": "bool"}),
    "help": Command("lich help [<command>]", "List the commands, or show one command's help.", {}),
}


# --- the script: how one scenario's lich behaves ---------------------------------------------------


class Report(_Value):
    """How a worker reports after its open."""

    after_ms: Final[int]  # ms after the open STARTED at which the worker answers
    text: Final[str]  # its report (the answer)
    background: Final[bool]  # its turn ended with a background command left: lich does not close it

    def __init__(self, after_ms: int, text: str, background: bool = False) -> None:
        self.after_ms = after_ms
        self.text = text
        self.background = background


class OpenScript(_Value):
    """How lich answers ONE ``open`` call."""

    delivery: Final[str | None]  # delivery.status; None: print no delivery at all (still exit 0)
    answer: Final[str]  # delivery.answer, printed as given
    ms: Final[int]  # how long the open takes
    fail: Final[str | None]  # nothing opened: stderr "lich: <fail>", exit 1
    handoff_error: Final[str | None]  # opened, but the task did not reach it
    hang: Final[bool]  # the open never returns; the session IS opened
    stdout: Final[str | None]  # raw stdout override
    stderr: Final[str | None]  # raw stderr override
    exit: Final[int | None]  # exit code override
    label: Final[str | None]  # label override
    name: Final[str | None]  # roster name override
    report: Final[Report | None]  # the worker reports later (None: never)

    def __init__(self, delivery: str | None = "pending", answer: str = "", ms: int = 800, fail: str | None = None,
                 handoff_error: str | None = None, hang: bool = False, stdout: str | None = None,
                 stderr: str | None = None, exit: int | None = None, label: str | None = None,
                 name: str | None = None, report: Report | None = None) -> None:
        self.delivery = delivery
        self.answer = answer
        self.ms = ms
        self.fail = fail
        self.handoff_error = handoff_error
        self.hang = hang
        self.stdout = stdout
        self.stderr = stderr
        self.exit = exit
        self.label = label
        self.name = name
        self.report = report


class ListScript(_Value):
    """``sessions`` fails while ``from_ms <= now_ms < until_ms``."""

    from_ms: Final[int]
    until_ms: Final[int]
    stdout: Final[str]
    stderr: Final[str]
    exit: Final[int]

    def __init__(self, from_ms: int, until_ms: int, stdout: str = "",
                 stderr: str = "lich: the session list could not be read\n", exit: int = 1) -> None:
        self.from_ms = from_ms
        self.until_ms = until_ms
        self.stdout = stdout
        self.stderr = stderr
        self.exit = exit


class StopScript(_Value):
    """Scripted answer of ``close NAME`` / ``control NAME abort`` for one worker roster name.

    exit 0 runs the command as usual; 1 refuses it (``stderr`` is the reason, ``lich: `` added when
    missing); 2 and 3 are control's ``delivered`` and ``ended`` (for ``close``: that exit, no output).
    """

    exit: Final[int]
    stderr: Final[str]

    def __init__(self, exit: int, stderr: str = "") -> None:
        self.exit = exit
        self.stderr = stderr


_DEFAULT_OPEN = OpenScript()  # one for every LichScript: an OpenScript is immutable


class LichScript(_Value):
    """The whole fake lich for one scenario. ``opens`` and ``lists`` may be given as lists."""

    running: Final[bool]
    subagent: Final[bool]
    project: Final[str]
    checkout: Final[str]
    worktrees: Final[str]
    caller_label: Final[str]
    opens: Final[tuple[OpenScript, ...]]
    lists: Final[tuple[ListScript, ...]]
    stops: Final[Mapping[str, StopScript]]
    by_prompt: Final[Mapping[str, OpenScript]]  # an open whose --prompt is a key
    default_open: Final[OpenScript]  # an open neither opens nor by_prompt scripts

    def __init__(self, running: bool = True, subagent: bool = True, project: str = "app",
                 checkout: str = "/home/dev/app", worktrees: str = "/lich/worktrees", caller_label: str = "planner",
                 opens: Sequence[OpenScript] = (), lists: Sequence[ListScript] = (),
                 stops: Mapping[str, StopScript] = _NOTHING, by_prompt: Mapping[str, OpenScript] = _NOTHING,
                 default_open: OpenScript = _DEFAULT_OPEN) -> None:
        self.running = running
        self.subagent = subagent
        self.project = project
        self.checkout = checkout
        self.worktrees = worktrees
        self.caller_label = caller_label
        self.opens = tuple(opens)
        self.lists = tuple(lists)
        self.stops = dict(stops)
        self.by_prompt = dict(by_prompt)
        self.default_open = default_open

    def open_for(self, n: int, prompt: str | None) -> OpenScript:
        """The script of the n-th open (0-based) handing over ``prompt``: by prompt, then by order, then default."""
        if prompt is not None and prompt in self.by_prompt:
            return self.by_prompt[prompt]
        return self.opens[n] if n < len(self.opens) else self.default_open


# --- what comes out ----------------------------------------------------------------------------------


class LichRun(_Value):
    """One command's outcome. With ``hang`` the command never returns: exit_code is -1 and ms meaningless."""

    stdout: Final[str]
    stderr: Final[str]
    exit_code: Final[int]
    ms: Final[int]
    hang: Final[bool]

    def __init__(self, stdout: str, stderr: str, exit_code: int, ms: int, hang: bool = False) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code
        self.ms = ms
        self.hang = hang


class Note(_Value):
    """A note lich types at the asking session's prompt at ``at_ms`` (§10.2; §10.1 for plain errands)."""

    at_ms: Final[int]
    text: Final[str]

    def __init__(self, at_ms: int, text: str) -> None:
        self.at_ms = at_ms
        self.text = text


# --- internal state ----------------------------------------------------------------------------------


class _Session(_Fields):  # mutable, so compared by identity (the world tells sessions apart with `is`)
    """A session this lich opened. Its state over time is derived from the times below."""

    id: str
    label: str
    name: str
    kind: str
    project: str
    path: str
    branch: str  # "" for a session in a shared checkout
    folder: str
    subagent: bool
    origin_id: str
    origin_label: str
    opened_at: int
    bin: str  # argv[0] of the open, for the nudge note
    ticket: str  # "" when no task reached it
    status: str | None  # the delivery status its open printed
    first_state: str  # state until it answers: "busy", "done" or ""
    answer_at: int | None
    answer: str
    close_on_answer: bool  # §9: a shared --subagent worker is closed once it answered
    closed_at: int | None
    aborted_at: int | None
    note_sent: bool
    collected: bool

    def __init__(self, *, id: str, label: str, name: str, kind: str, project: str, path: str, branch: str,
                 folder: str, subagent: bool, origin_id: str, origin_label: str, opened_at: int, bin: str,
                 ticket: str = "", status: str | None = None, first_state: str = "", answer_at: int | None = None,
                 answer: str = "", close_on_answer: bool = False, closed_at: int | None = None,
                 aborted_at: int | None = None, note_sent: bool = False, collected: bool = False) -> None:
        self.id = id
        self.label = label
        self.name = name
        self.kind = kind
        self.project = project
        self.path = path
        self.branch = branch
        self.folder = folder
        self.subagent = subagent
        self.origin_id = origin_id
        self.origin_label = origin_label
        self.opened_at = opened_at
        self.bin = bin
        self.ticket = ticket
        self.status = status
        self.first_state = first_state
        self.answer_at = answer_at
        self.answer = answer
        self.close_on_answer = close_on_answer
        self.closed_at = closed_at
        self.aborted_at = aborted_at
        self.note_sent = note_sent
        self.collected = collected

    def state(self, now: int) -> str:
        answered = self.answer_at is not None and now >= self.answer_at
        aborted = self.aborted_at is not None and now >= self.aborted_at
        return "done" if answered or aborted else self.first_state

    def live(self, now: int) -> bool:
        ends = [t for t in (self.closed_at, self.answer_at if self.close_on_answer else None) if t is not None]
        return not ends or now < min(ends)

    def answered(self, now: int) -> bool:
        return self.answer_at is not None and self.answer_at <= now

    def errand_open(self) -> bool:
        return bool(self.ticket) and self.status in OPEN_ERRAND and not self.collected


class _Ctx(_Value):
    env: Final[Mapping[str, str]]
    now: Final[int]
    bin: Final[str]

    def __init__(self, env: Mapping[str, str], now: int, bin: str) -> None:
        self.env = env
        self.now = now
        self.bin = bin


class _Caller(_Value):
    id: Final[str]
    label: Final[str]
    name: Final[str]
    folder: Final[str]

    def __init__(self, id: str, label: str, name: str, folder: str) -> None:
        self.id = id
        self.label = label
        self.name = name
        self.folder = folder


class _Refused(Exception):
    """A failure: one ``lich: <reason>`` line on stderr, exit 1."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _usage(command: str) -> _Refused:
    return _Refused(f"usage: {COMMANDS[command].usage}")


def _ok(stdout: str, code: int = 0) -> LichRun:
    return LichRun(stdout, "", code, CALL_MS)


def _fail(reason: str, ms: int = CALL_MS) -> LichRun:
    return LichRun("", f"lich: {reason}\n", 1, ms)


def _json_line(value: object) -> str:
    """One line of JSON as Go's encoding/json writes it: compact, with <, >, & and U+2028/9 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = re.sub("[\ud800-\udfff]", "\ufffd", text)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text + "\n"


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "session"


def _utf8_len(text: str) -> int:
    """Bytes lich sees: argv bytes Python carried as surrogate escapes count 1, a lone surrogate 3."""
    try:
        return len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass"))


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance (a swap of two neighbours costs 1)."""
    rows = [list(range(len(b) + 1))] + [[i + 1] + [0] * len(b) for i in range(len(a))]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


def _nearest(word: str, names: Sequence[str]) -> str | None:
    scored = sorted((_distance(word, name), index, name) for index, name in enumerate(names))
    return scored[0][2] if scored and scored[0][0] <= min(2, len(word) - 1) else None


def _open_from_json(o: Mapping[str, Any]) -> OpenScript:
    return OpenScript(**{**o, "report": Report(**o["report"]) if o.get("report") else None})


def _script_from_json(data: Mapping[str, Any]) -> LichScript:
    opens = tuple(_open_from_json(o) for o in data["opens"])
    lists = tuple(ListScript(**item) for item in data["lists"])
    stops = {name: StopScript(**stop) for name, stop in data["stops"].items()}
    by_prompt = {prompt: _open_from_json(o) for prompt, o in data.get("by_prompt", {}).items()}
    default_open = _open_from_json(data["default_open"]) if data.get("default_open") else OpenScript()
    return LichScript(**{**data, "opens": opens, "lists": lists, "stops": stops, "by_prompt": by_prompt,
                         "default_open": default_open})


def _result_prose(label: str, ticket: str, status: str, answer: str, private: bool) -> str:
    """The prose of a Result (§4.3), in this fake's own words."""
    q = go_quote(label)
    if status == "answered":
        text = answer
    elif status == "pending" and private:
        text = (f"{q} is still working on it (ticket {ticket}). The errand is private: no note will come, and a "
                f"plain lich wait will not return it; hold the line with: lich wait {ticket}")
    elif status == "pending":
        text = (f"{q} is still working on it, and the errand stays open (ticket {ticket}). A note will be typed "
                f"at your prompt when the result is ready; to hold the line instead, run: lich wait {ticket}")
    else:
        text = {
            "unread": f"{q} never picked the task up: something else holds its terminal (an agent still starting, "
                      "or a trust question). Nothing is queued or answered: open its card, then send the task again.",
            "undelivered": f"The task never reached {q}: its terminal was not at a prompt, and it ended or stayed "
                           "that way too long. Nothing is queued or answered: open its card, then send it again.",
            "unanswered": f"{q} finished its turn without answering through lich: its output is in that session, "
                          f"and a late answer can still arrive on ticket {ticket} within the hour.",
            "stopped": f"{q} was closed before it answered: no answer is coming.",
            "expired": f"{q} did not answer within the hour: no answer is coming. Open its card to see why.",
        }.get(status, f"{q} left the errand {status} (ticket {ticket}).")
    return text if text.endswith("\n") else text + "\n"


def _note_text(s: _Session) -> str:
    if s.subagent:
        where = f" on branch {s.branch}" if s.branch else ""
        return (f"[lich] Session {go_quote(s.label)}{where} finished the task you handed it (ticket {s.ticket})."
                f" Its report:\n\n{s.answer}")
    return (f"[lich] The task you sent {go_quote(s.label)} has its result ready. To collect everything at once, "
            f'call the lich tool `wait_for_answer` with no ticket, or run:\n  "{s.bin}" wait')


# --- the world -----------------------------------------------------------------------------------------


class LichWorld:
    """The mutable state of one fake lich. Calls are expected in non-decreasing ``now_ms`` order."""

    def __init__(self, script: LichScript) -> None:
        self.script = script
        self.sessions: list[_Session] = []
        self.counters: dict[str, int] = {"id": 0, "label": 2, "ticket": 0, "command": 0, "open": 0}
        self.sent: dict[str, str] = {}  # tickets of `send`, by ticket: the target's label

    # persistence

    def to_json(self) -> dict[str, Any]:
        return {
            "script": _plain(self.script),
            "sessions": [_plain(s) for s in self.sessions],
            "counters": dict(self.counters),
            "sent": dict(self.sent),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LichWorld:
        world = cls(_script_from_json(data["script"]))
        world.sessions = [_Session(**s) for s in data["sessions"]]
        world.counters = {str(k): int(v) for k, v in data["counters"].items()}
        world.sent = {str(k): str(v) for k, v in data["sent"].items()}
        return world

    # observation

    def notes_due(self, until_ms: int) -> list[Note]:
        """The notes not yet emitted whose time is ``<= until_ms``, in time order; marks them emitted."""
        due = [(s.answer_at, s) for s in self.sessions if self._note_pending(s) and s.answer_at is not None
               and s.answer_at <= until_ms]
        due.sort(key=lambda pair: pair[0])
        for _, s in due:
            s.note_sent = True
        return [Note(at, _note_text(s)) for at, s in due]

    def next_note_at(self) -> int | None:
        times = [s.answer_at for s in self.sessions if self._note_pending(s) and s.answer_at is not None]
        return min(times) if times else None

    def roster(self, now_ms: int) -> list[dict[str, Any]]:
        """What ``sessions --json`` lists at ``now_ms``, the asking session aside."""
        return [self._row(s, now_ms) for s in self._live(now_ms)]

    # running a command

    def run(self, argv: Sequence[str], env: Mapping[str, str], now_ms: int) -> LichRun:
        """Run ``argv`` (argv[0], the binary, is ignored but for the nudge note) at virtual time ``now_ms``."""
        ctx = _Ctx(dict(env), now_ms, argv[0] if argv else "lich")
        try:
            return self._dispatch(ctx, list(argv[1:]))
        except _Refused as refused:
            return _fail(refused.reason)

    def _dispatch(self, ctx: _Ctx, args: list[str]) -> LichRun:
        if not args or args[0].startswith("-"):
            if args[:1] in (["-h"], ["-help"], ["--help"]):
                return self._help(ctx, Parsed())
            raise _Refused("this fake lich has no app to launch: name a command (`lich help` lists them)")
        word, rest = args[0], args[1:]
        names = [name for name in COMMANDS if self.script.subagent or name not in NEW_ONLY]
        if word not in names:
            near = _nearest(word, names)
            hint = f" — did you mean {go_quote(near)}?" if near else ""
            return LichRun("", f"lich: unknown command {go_quote(word)}{hint}\nRun `lich help` for the list.\n",
                           1, CALL_MS)
        command = COMMANDS[word]
        flags = {k: v for k, v in command.flags.items() if self.script.subagent or k not in NEW_ONLY}
        try:
            parsed = parse(rest, flags)
        except HelpRequested:
            return _ok(f"usage: {command.usage}\n\n{command.summary}\n")
        except FlagError as error:
            raise _Refused(str(error)) from None
        if not self.script.running and word not in ("version", "help"):
            raise _Refused(NO_LICH)
        return _HANDLERS[word](self, ctx, parsed)

    # helpers

    def _next(self, counter: str) -> int:
        self.counters[counter] += 1
        return self.counters[counter]

    def _note_pending(self, s: _Session) -> bool:
        return bool(s.ticket) and s.status in OPEN_ERRAND and not s.note_sent

    def _live(self, now: int) -> list[_Session]:
        return [s for s in self.sessions if s.live(now)]

    def _row(self, s: _Session, now: int) -> dict[str, Any]:
        row: dict[str, Any] = {"label": s.label, "name": s.name, "project": s.project, "kind": s.kind,
                               "state": s.state(now)}
        if self.script.subagent:
            row["id"] = s.id
        return row

    def _caller(self, ctx: _Ctx) -> _Caller | None:
        sid = ctx.env.get("LICH_SESSION_ID", "")
        if not sid:
            return None
        for s in self.sessions:
            if s.id == sid:
                return _Caller(s.id, s.label, s.name, s.folder)
        label = self.script.caller_label
        return _Caller(sid, label, f"{_slug(label)}-{sid}", "")

    def _target(self, x: str, ctx: _Ctx, itself: str) -> _Session:
        """Resolve a ``<session>`` argument (§1): id first, then label, then roster name."""
        me = self._caller(ctx)
        live = self._live(ctx.now)
        found: list[tuple[str, str, str, _Session | None]] = [(s.id, s.label, s.name, s) for s in live]
        if me is not None and not any(s.id == me.id for s in live):
            found.append((me.id, me.label, me.name, None))
        for key in range(3):
            hits = [entry for entry in found if entry[key] == x]
            if len(hits) > 1:
                raise _Refused(f"{go_quote(x)} names {len(hits)} sessions — narrow it with the project")
            if hits:
                session = hits[0][3]
                if session is None or (me is not None and session.id == me.id):
                    raise _Refused(f"{go_quote(x)} is this session — {itself}")
                return session
        raise _Refused(f"no session named {go_quote(x)}")

    def _status_exit(self, status: str) -> int:
        if not self.script.subagent:
            return 0
        return 0 if status == "answered" else 2 if status == "pending" else 3

    def _result(self, label: str, ticket: str, status: str, answer: str, *, as_json: bool,
                private: bool = False) -> LichRun:
        body = {"ticket": ticket, "target": label, "status": status, "answer": answer}
        out = _json_line(body) if as_json else _result_prose(label, ticket, status, answer, private)
        return _ok(out, self._status_exit(status))

    # commands

    def _open(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§2, §3: open a session; with --prompt hand it its task."""
        if p.args:
            raise _usage("open")
        me = self._caller(ctx)
        prompt = p.text("prompt")
        if p.on("subagent"):
            if prompt is None:
                raise _Refused("--subagent needs --prompt: a subagent is opened to do a task")
            if me is None:
                raise _Refused("--subagent needs LICH_SESSION_ID: only a lich session can open a subagent")
            for flag, why in (("project", "it opens in the caller's project and checkout"),
                              ("folder", "it is filed with the caller"),
                              ("private", "its report goes back to the caller")):
                if flag in p.flags:
                    raise _Refused(f"--subagent does not take --{flag}: {why}")
        if p.on("private") and prompt is None:
            raise _Refused("--private needs --prompt: it applies to the task handed over")
        kind = p.text("kind") or "claude"
        if kind not in KINDS:
            raise _Refused(f"unknown kind {go_quote(kind)}: one of {', '.join(KINDS)}")
        if p.text("model") is not None and kind in ("crush", "shell"):
            raise _Refused(f"a {kind} session takes no --model")
        project = self._project(p.text("project"), me)
        branch = p.text("worktree")
        if branch == "":
            raise _Refused("--worktree needs a branch name")
        base = p.text("base")
        if base == "":
            raise _Refused('"" is not a branch: --base takes a local branch, an origin/ one, or one a worktree holds')
        n = self._next("open") - 1
        script = self.script.open_for(n, prompt)
        if script.fail is not None:
            return self._finish(script, _fail(script.fail, script.ms))
        s = self._new_session(ctx, p, script, me=me, project=project, kind=kind, branch=branch or "")
        error = None
        if prompt is not None:
            size = _utf8_len(prompt)
            if prompt == "":
                error = "nothing to send: the prompt is empty"
            elif size > PROMPT_LIMIT:
                error = (f"prompt is {size} bytes, over the {PROMPT_LIMIT} limit: "
                         "name the paths to read instead of pasting their contents")
            else:
                error = script.handoff_error
            if error is None:
                self._hand_over(s, script)
        return self._finish(script, self._opened(s, p, error, script))

    def _project(self, given: str | None, me: _Caller | None) -> str:
        project = self.script.project
        if given is None and me is None:
            raise _Refused(f"outside a session, name the project with --project (open projects: {go_quote(project)})")
        if given is not None and given not in (project, self.script.checkout):
            raise _Refused(f"no open project named {go_quote(given)} (open projects: {go_quote(project)})")
        return project

    def _new_session(self, ctx: _Ctx, p: Parsed, script: OpenScript, *, me: _Caller | None, project: str,
                     kind: str, branch: str) -> _Session:
        sid = f"{0x9F80 + self._next('id'):04x}"
        label = branch
        if not branch:
            label = f"Session {self.counters['label']}"
            self._next("label")
        label = script.label if script.label is not None else label
        folder = (me.folder or me.label) if p.on("subagent") and me else p.text("folder") or ""
        s = _Session(
            id=sid, label=label, name=script.name if script.name is not None else f"{_slug(label)}-{sid}",
            kind=kind, project=project, path=f"{self.script.worktrees}/{branch}" if branch else self.script.checkout,
            branch=branch, folder=folder, subagent=p.on("subagent"), origin_id=me.id if me else "",
            origin_label=me.label if me else "",
            opened_at=ctx.now, bin=ctx.bin,
        )
        self.sessions.append(s)
        return s

    def _hand_over(self, s: _Session, script: OpenScript) -> None:
        """The task reached the send: set the worker's life from the delivery and the report (§9, §15)."""
        s.ticket = f"{0xA1B2C300 + self._next('ticket'):08x}"
        s.status = script.delivery
        if s.status in ("unread", "undelivered"):
            return  # the task never reached its prompt: state "" and no answer
        s.first_state = "done" if s.status == "unanswered" else "busy"
        report = script.report
        if report is None and s.status == "answered":
            report = Report(script.ms, script.answer)  # answered within the open: the open collected it
        if report is not None:
            s.answer_at, s.answer = s.opened_at + report.after_ms, report.text
            s.close_on_answer = s.subagent and not s.branch and not report.background

    def _opened(self, s: _Session, p: Parsed, error: str | None, script: OpenScript) -> LichRun:
        delivery = None
        if error is None and s.ticket and s.status is not None:
            delivery = {"ticket": s.ticket, "target": s.label, "status": s.status, "answer": script.answer}
        if p.on("json"):
            body: dict[str, Any] = {
                "id": s.id, "projectId": "p1", "project": s.project, "label": s.label, "name": s.name,
                "kind": s.kind, "path": s.path, "nextSeq": self.counters["label"],
                "originSessionId": s.origin_id, "originLabel": s.origin_label, "confined": False,
                "folder": s.folder, "run": False,
            }
            if not self.script.subagent:
                for key in ("confined", "folder", "run"):
                    del body[key]
            if delivery is not None:
                body["delivery"] = delivery
            out = _json_line(body)
        else:
            where = f", in worktree {s.path}" if s.branch else ""
            q, name = go_quote(s.label), go_quote(s.name)
            out = (f"Opened session {q} ({s.kind}) in project {go_quote(s.project)}{where}.\n"
                   f"It answers to {q} and to {name}. Its agent may still be starting (a fresh worktree runs its "
                   "setup script first), so a task sent to it is held until the agent is up.\n")
            if delivery is not None:
                out += _result_prose(s.label, s.ticket, str(s.status), script.answer, p.on("private"))
        if error is not None:
            return LichRun(out, f"lich: the session is open, but the task did not reach it: {error}\n", 1, script.ms)
        return LichRun(out, "", 0, script.ms)

    @staticmethod
    def _finish(script: OpenScript, run: LichRun) -> LichRun:
        stdout = script.stdout if script.stdout is not None else run.stdout
        stderr = script.stderr if script.stderr is not None else run.stderr
        if script.hang:
            return LichRun(script.stdout or "", script.stderr or "", -1, script.ms, hang=True)
        return LichRun(stdout, stderr, script.exit if script.exit is not None else run.exit_code, script.ms)

    def _sessions(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§5: the live sessions but the caller."""
        if p.args:
            raise _usage("sessions")
        for window in self.script.lists:
            if window.from_ms <= ctx.now < window.until_ms:
                return LichRun(window.stdout, window.stderr, window.exit, CALL_MS)
        me = self._caller(ctx)
        rows = [self._row(s, ctx.now) for s in self._live(ctx.now) if me is None or s.id != me.id]
        if p.on("json"):
            return _ok(_json_line(rows))
        if not rows:
            return _ok("No other live sessions.\n")
        lines = ["session\tproject\tprovider\tname\tstate"]
        lines += [f"{r['label']}\t{r['project']}\t{r['kind']}\t{r['name']}\t{r['state'] or '-'}" for r in rows]
        return _ok("\n".join(lines) + "\n")

    def _close(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§6: close a session; a worktree's last session needs --worktree keep|remove."""
        if len(p.args) != 1:
            raise _usage("close")
        s = self._target(p.args[0], ctx, "closing it would take down the agent asking for it")
        stop = self.script.stops.get(s.name)
        if stop is not None and stop.exit != 0:
            return _fail(self._reason(stop, s)) if stop.exit == 1 else LichRun("", "", stop.exit, CALL_MS)
        mode = p.text("worktree")
        if mode is not None and mode not in ("keep", "remove"):
            raise _Refused(f'{go_quote(mode)} is not something to do with a worktree — "keep" keeps the checkout, '
                           '"remove" deletes it')
        q = go_quote(s.label)
        last = s.branch and not any(o is not s and o.path == s.path for o in self._live(ctx.now))
        if last and mode is None:
            raise _Refused(f'{q} is the last session in the worktree {s.path}, so closing it decides that '
                           'checkout\'s fate: say "keep" to leave it on disk (the session is parked and can be '
                           'resumed) or "remove" to delete it')
        s.closed_at = ctx.now
        if s.answer_at is not None and s.answer_at > ctx.now:
            s.answer_at = None  # its report will never come, nor its note (STOP-SILENT)
        kept, removed = bool(last) and mode == "keep", bool(last) and mode == "remove"
        if p.on("json"):
            return _ok(_json_line({"id": s.id, "projectId": "p1", "project": s.project, "label": s.label,
                                   "worktree": s.path if s.branch else "", "kept": kept, "removed": removed}))
        if kept:
            return _ok(f"Closed {q}. Its worktree {s.path} is still there, and the session is parked: opening a "
                       "session on that branch again picks its conversation back up.\n")
        if removed:
            return _ok(f"Closed {q} and removed its worktree {s.path}.\n")
        return _ok(f"Closed {q}.\n")

    def _control(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§7: drive a Claude Code session; only abort changes this world."""
        if not 2 <= len(p.args) <= 4:
            raise _usage("control")
        action, value = p.args[1], (p.args[2] if len(p.args) > 2 else None)
        if action not in ACTIONS:
            raise _Refused(f"unknown action {go_quote(action)}: one of {', '.join(ACTIONS)}")
        if value is None and action in ("prompt", "command"):
            raise _usage("control")
        if action == "effort" and value is not None and value not in EFFORTS:
            raise _Refused(f"{go_quote(value)} is not an effort level: one of {', '.join(EFFORTS)}")
        s = self._target(p.args[0], ctx, "a session cannot control itself")
        q = go_quote(s.label)
        if s.kind != "claude":
            raise _Refused(f"{q} is not a Claude Code session: control drives Claude Code only")
        stop = self.script.stops.get(s.name) if action == "abort" else None
        code = stop.exit if stop is not None else 0
        if stop is not None and code == 1:
            return _fail(self._reason(stop, s))
        if action == "abort" and code == 0 and s.state(ctx.now) != "busy":
            raise _Refused(f"{q} has no turn running to stop")
        command_id = f"{0x7C00 + self._next('command'):04x}"
        if action == "abort" and code in (0, 2):
            self._abort(s, ctx.now)
        if code == 3:
            self._abort(s, ctx.now)
            s.closed_at = ctx.now  # the session ended before confirming
        done = {
            "prompt": f"{q} started a turn on the prompt.",
            "abort": f"{q} stopped its turn.",
            "model": f"{q} uses {value} from its next request on." if value else f"{q} is back on its own model.",
            "effort": f"{q} runs at {value} effort from its next request on." if value
            else f"{q} is back on its own effort level.",
            "command": f"{q} ran /{value}.",
        }[action]
        text = {
            0: done,
            2: f"{q} took the command ({action}, id {command_id}) and has not confirmed it yet: a prompt or a slash "
               "command runs only once the session is idle. It still goes through.",
        }.get(code, f"{q} ended before confirming the command ({action}, id {command_id}).")
        if p.on("json"):
            body: dict[str, Any] = {"id": s.id, "project": s.project, "label": s.label, "action": action}
            if value is not None:
                body["value"] = value
            body |= {"command_id": command_id, "state": {0: "done", 2: "delivered"}.get(code, "ended")}
            return _ok(_json_line(body), code)
        return _ok(text + "\n", code)

    @staticmethod
    def _abort(s: _Session, now: int) -> None:
        s.aborted_at = now
        s.close_on_answer = False  # §9: a turn stopped with Esc is not closed by lich
        if s.answer_at is not None and s.answer_at > now:
            s.answer_at = None

    @staticmethod
    def _reason(stop: StopScript, s: _Session) -> str:
        reason = stop.stderr.strip() or f"{go_quote(s.label)} refused the command"
        return reason.removeprefix("lich: ")

    def _send(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§4.4: hand a session a task. The fake's target never answers a `send`: the ticket stays pending."""
        if len(p.args) != 2:
            raise _usage("send")
        s = self._target(p.args[0], ctx, "a session cannot send to itself")
        prompt = p.args[1]
        size = _utf8_len(prompt)
        if prompt == "":
            raise _Refused("nothing to send: the prompt is empty")
        if size > PROMPT_LIMIT:
            raise _Refused(f"prompt is {size} bytes, over the {PROMPT_LIMIT} limit: "
                           "name the paths to read instead of pasting their contents")
        ticket = f"{0xA1B2C300 + self._next('ticket'):08x}"
        self.sent[ticket] = s.label
        return self._result(s.label, ticket, "pending", "", as_json=p.on("json"), private=p.on("private"))

    def _wait(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§4.5: an errand's Result now (no holding the line), or a collect without a ticket."""
        if len(p.args) > 1 or (p.args and p.on("no-wait")):
            raise _usage("wait")
        timeout = p.number("timeout")
        if timeout is not None and not 0 <= timeout <= 1800:
            raise _Refused(f"--timeout {timeout} is out of range: 0 (the default wait) to 1800 seconds")
        if not p.args:
            return self._collect(ctx, p)
        ticket = p.args[0]
        if ticket in self.sent:
            return self._result(self.sent[ticket], ticket, "pending", "", as_json=p.on("json"))
        s = next((o for o in self.sessions if o.ticket == ticket and o.errand_open()), None)
        if s is None:
            raise _Refused(f"ticket {go_quote(ticket)} is gone: it was collected, or nobody waited on it within the "
                           "hour")
        if s.answered(ctx.now):
            s.collected = True
            return self._result(s.label, ticket, "answered", s.answer, as_json=p.on("json"))
        if s.closed_at is not None:
            s.collected = True
            return self._result(s.label, ticket, "stopped", "", as_json=p.on("json"))
        status = "unanswered" if s.status == "unanswered" else "pending"
        return self._result(s.label, ticket, status, "", as_json=p.on("json"))

    def _collect(self, ctx: _Ctx, p: Parsed) -> LichRun:
        me = self._caller(ctx)
        if me is None:
            raise _Refused("wait without a ticket collects for a session: run it inside one, or name the ticket")
        results: list[dict[str, str]] = []
        still: list[str] = list(self.sent.values())
        for s in self.sessions:
            if s.origin_id != me.id or not s.errand_open():
                continue
            if s.answered(ctx.now) and not (s.subagent and s.note_sent):
                s.collected = True
                results.append({"ticket": s.ticket, "target": s.label, "status": "answered", "answer": s.answer})
            elif s.closed_at is not None and not s.answered(ctx.now):
                s.collected = True
                results.append({"ticket": s.ticket, "target": s.label, "status": "stopped", "answer": ""})
            elif not s.answered(ctx.now):
                still.append(s.label)
        code = 2 if not results and still and not p.on("no-wait") and self.script.subagent else 0
        if p.on("json"):
            return _ok(_json_line({"results": results, "open": still}), code)
        lines = [f"From {go_quote(r['target'])} (ticket {r['ticket']}): "
                 + (r["answer"] if r["status"] == "answered" else r["status"]) for r in results]
        if still:
            lines.append("Still working: " + ", ".join(go_quote(label) for label in still))
        return _ok("\n".join(lines or ["Nothing to collect."]) + "\n", code)

    def _reply(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§8: a worker answers its errand now (the reply route of §15's lifecycle)."""
        if not 1 <= len(p.args) <= 2:
            raise _usage("reply")
        ticket, answer = (p.args[0], p.args[1]) if len(p.args) == 2 else (None, p.args[0])
        me = self._caller(ctx)
        for s in self.sessions:
            mine = s.ticket == ticket if ticket is not None else me is not None and s.id == me.id
            if mine and s.errand_open() and not s.answered(ctx.now) and s.closed_at is None:
                s.answer_at, s.answer = ctx.now, answer
                s.close_on_answer = s.subagent and not s.branch and s.aborted_at is None
                return _ok("Answer sent.\n")
        if ticket in self.sent:
            return _ok("Answer sent.\n")
        if ticket is not None:
            raise _Refused(f"no open errand has the ticket {go_quote(ticket)}")
        raise _Refused("no task is waiting for this session's answer: name the ticket")

    def _whoami(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§8: the caller, in the sessions shape."""
        if p.args:
            raise _usage("whoami")
        me = self._caller(ctx)
        if me is None:
            raise _Refused("whoami needs a session: run it inside one of lich's sessions")
        own = next((s for s in self.sessions if s.id == me.id), None)
        row = self._row(own, ctx.now) if own else {"label": me.label, "name": me.name,
                                                   "project": self.script.project, "kind": "claude",
                                                   "state": "busy", "id": me.id}
        if p.on("json"):
            return _ok(_json_line(row))
        return _ok(f"{row['label']}\t{row['project']}\t{row['kind']}\t{row['name']}\t{row['state'] or '-'}\n")

    def _version(self, ctx: _Ctx, p: Parsed) -> LichRun:
        """§1: the client's version, and the server's when one answers (never exit 1 for its absence)."""
        cli = CLI_VERSION if self.script.subagent else OLD_VERSION
        server = (SERVER_VERSION if self.script.subagent else OLD_VERSION) if self.script.running else None
        if p.on("json"):
            return _ok(_json_line({"cli": cli} | ({"server": server} if server else {})))
        return _ok(f"lich {cli}\n" + (f"server {server}\n" if server else ""))

    def _help(self, ctx: _Ctx, p: Parsed) -> LichRun:
        names = [name for name in COMMANDS if self.script.subagent or name not in NEW_ONLY]
        if p.args:
            if p.args[0] not in names:
                return self._dispatch(ctx, p.args[:1])  # the unknown-command text
            command = COMMANDS[p.args[0]]
            return _ok(f"usage: {command.usage}\n\n{command.summary}\n")
        width = max(map(len, names))
        lines = ["usage: lich <command> [flags] [arguments]", "", "Commands:"]
        lines += [f"  {name.ljust(width)}  {COMMANDS[name].summary}" for name in names]
        lines += ["", "Run `lich <command> --help` for a command's flags."]
        return _ok("\n".join(lines) + "\n")


_HANDLERS: dict[str, Callable[[LichWorld, _Ctx, Parsed], LichRun]] = {
    "open": LichWorld._open,
    "sessions": LichWorld._sessions,
    "close": LichWorld._close,
    "control": LichWorld._control,
    "send": LichWorld._send,
    "wait": LichWorld._wait,
    "reply": LichWorld._reply,
    "whoami": LichWorld._whoami,
    "version": LichWorld._version,
    "help": LichWorld._help,
}
