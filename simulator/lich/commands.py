"""The fake lich's commands: a command line in, a :class:`LichRun` out; one function per command.

:func:`run` does what every command shares: the unknown-command text, Go-style flags, usage
errors, ``--help``, "no lich is running", one ``lich: …`` line and exit 1 for a refusal. Then the
command's function (:data:`COMMANDS`) checks its arguments, reads or changes the
:class:`~agent_cards_simulator.lich.world.LichWorld`, and prints. Every command takes ``CALL_MS`` but ``open``,
which takes its ``OpenScript.ms``.

Which ``open`` gets which OpenScript: the n-th ``open`` that passes lich's own checks (flags, a
running lich, ``--subagent``/``--project``/``--kind``/``--base`` validation) consumes ``opens[n]``.
The old lich (``subagent=False``, from before subagent support) has no ``--subagent`` and no ``control``,
exits only 0 and 1, and prints no ``confined``, ``folder`` or ``run`` in ``open --json``.
"""

from __future__ import annotations

from agent_cards.record import Value
from agent_cards_simulator.lich.goflags import FlagError, HelpRequested, Parsed, go_quote, parse
from agent_cards_simulator.lich.output import (
    CALL_MS,
    NO_APP,
    NO_LICH,
    LichRun,
    Refused,
    json_line,
    result_prose,
    unknown_command,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from agent_cards_simulator.lich.goflags import Kind
    from agent_cards_simulator.lich.scripts import OpenScript, StopScript
    from agent_cards_simulator.lich.world import Caller, LichSession, LichWorld

__all__ = ["COMMANDS", "Command", "LichCall", "run"]

PROMPT_LIMIT = 8192
KINDS = ("claude", "codex", "antigravity", "opencode", "omp", "crush", "cursor", "kiro", "shell")
ACTIONS = ("prompt", "abort", "model", "effort", "command")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
NEW_ONLY = frozenset({"control", "subagent"})  # a command and a flag the old lich lacks


class LichCall(Value):
    """One command line's circumstances: its environment, the lich clock, argv[0]."""

    env: Mapping[str, str]
    now: int
    bin: str


class Command(Value):
    """A command of the CLI: its usage line, its line in ``help``, its flags (name -> kind), its function."""

    usage: str
    summary: str
    flags: Mapping[str, Kind]
    handler: Callable[[LichWorld, LichCall, Parsed], LichRun]

    def help(self) -> str:
        return f"usage: {self.usage}\n\n{self.summary}\n"


def run(world: LichWorld, argv: Sequence[str], env: Mapping[str, str], now_ms: int) -> LichRun:
    """Answer ``argv`` (argv[0], the binary, kept only for the nudge note) at virtual time ``now_ms``."""
    call = LichCall(env, now_ms, argv[0] if argv else "lich")
    try:
        return _dispatch(world, call, list(argv[1:]))
    except Refused as refused:
        return refused.run()


def _dispatch(world: LichWorld, call: LichCall, args: list[str]) -> LichRun:
    if not args or args[0].startswith("-"):
        if args[:1] in (["-h"], ["-help"], ["--help"]):
            return lich_help(world, call, Parsed())
        raise Refused(NO_APP)
    word, rest = args[0], args[1:]
    names = _names(world)
    if word not in names:
        return LichRun("", unknown_command(word, _nearest(word, names)), 1, CALL_MS)
    command = COMMANDS[word]
    flags = _flags_of(word, world.script.subagent)
    try:
        parsed = parse(rest, flags)
    except HelpRequested:
        return _ok(command.help())
    except FlagError as error:
        raise Refused(str(error)) from None
    if not world.script.running and word != "help":
        raise Refused(NO_LICH)
    if word != "sessions":  # the only command that reads sessions and changes none
        world.changed()
    return command.handler(world, call, parsed)


# --- open ---------------------------------------------------------------------------------------------


def lich_open(world: LichWorld, call: LichCall, p: Parsed) -> LichRun:
    """Open a session; with --prompt hand it its task."""
    if p.args:
        raise _usage("open")
    me = world.caller(call.env)
    prompt = p.text("prompt")
    subagent = p.on("subagent")
    if subagent:
        if prompt is None:
            raise Refused("--subagent needs --prompt: a subagent is opened to do a task")
        if me is None:
            raise Refused("--subagent needs LICH_SESSION_ID: only a lich session can open a subagent")
        for flag, why in (("project", "it opens in the caller's project and checkout"),
                          ("folder", "it is filed with the caller"),
                          ("private", "its report goes back to the caller")):
            if flag in p.flags:
                raise Refused(f"--subagent does not take --{flag}: {why}")
    if p.on("private") and prompt is None:
        raise Refused("--private needs --prompt: it applies to the task handed over")
    kind = p.text("kind") or "claude"
    if kind not in KINDS:
        raise Refused(f"unknown kind {go_quote(kind)}: one of {', '.join(KINDS)}")
    if p.text("model") is not None and kind in ("crush", "shell"):
        raise Refused(f"a {kind} session takes no --model")
    project = _project(world, p.text("project"), me)
    branch = p.text("worktree")
    if branch == "":
        raise Refused("--worktree needs a branch name")
    if p.text("base") == "":
        raise Refused('"" is not a branch: --base takes a local branch, an origin/ one, or one a worktree holds')
    script = world.script.open_for(world.bump("open") - 1, prompt)
    if script.fail is not None:
        return _as_scripted(script, LichRun("", f"lich: {script.fail}\n", 1, script.ms))
    s = world.open_session(
        kind=kind, project=project, branch=branch or "",
        folder=(me.folder or me.label) if subagent and me else p.text("folder") or "",
        subagent=subagent, origin=me, now=call.now, bin=call.bin, label=script.label, name=script.name,
    )
    error = None
    if prompt is not None:
        error = _prompt_error(prompt)
        if error is None:
            error = script.handoff_error
        if error is None:
            s.hand_over(world.new_ticket(), script)
    return _as_scripted(script, _opened(world, s, p, error, script))


def _project(world: LichWorld, given: str | None, me: Caller | None) -> str:
    project = world.script.project
    if given is None and me is None:
        raise Refused(f"outside a session, name the project with --project (open projects: {go_quote(project)})")
    if given is not None and given not in (project, world.script.checkout):
        raise Refused(f"no open project named {go_quote(given)} (open projects: {go_quote(project)})")
    return project


def _prompt_error(prompt: str) -> str | None:
    """Why the task cannot be handed over (the session is opened all the same), or None."""
    size = _utf8_len(prompt)
    if prompt == "":
        return "nothing to send: the prompt is empty"
    if size > PROMPT_LIMIT:
        return (f"prompt is {size} bytes, over the {PROMPT_LIMIT} limit: "
                "name the paths to read instead of pasting their contents")
    return None


def _utf8_len(text: str) -> int:
    """Bytes lich sees: argv bytes Python carried as surrogate escapes count 1, a lone surrogate 3."""
    try:
        return len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass"))


def _opened(world: LichWorld, s: LichSession, p: Parsed, error: str | None, script: OpenScript) -> LichRun:
    """What ``open`` prints; exit 1 when the task did not reach the session."""
    delivery = None
    if error is None and s.ticket and s.status is not None:
        delivery = {"ticket": s.ticket, "target": s.label, "status": s.status, "answer": script.answer}
    if p.on("json"):
        body: dict[str, Any] = {
            "id": s.id, "projectId": "p1", "project": s.project, "label": s.label, "name": s.name,
            "kind": s.kind, "path": s.path, "nextSeq": world.counters["label"],
            "originSessionId": s.origin_id, "originLabel": s.origin_label, "confined": False,
            "folder": s.folder, "run": False,
        }
        if not world.script.subagent:
            for key in ("confined", "folder", "run"):
                del body[key]
        if delivery is not None:
            body["delivery"] = delivery
        out = json_line(body)
    else:
        where = f", in worktree {s.path}" if s.branch else ""
        q, name = go_quote(s.label), go_quote(s.name)
        out = (f"Opened session {q} ({s.kind}) in project {go_quote(s.project)}{where}.\n"
               f"It answers to {q} and to {name}. Its agent may still be starting (a fresh worktree runs its "
               "setup script first), so a task sent to it is held until the agent is up.\n")
        if delivery is not None:
            out += result_prose(s.label, s.ticket, str(s.status), script.answer, p.on("private"))
    if error is not None:
        return LichRun(out, f"lich: the session is open, but the task did not reach it: {error}\n", 1, script.ms)
    return LichRun(out, "", 0, script.ms)


def _as_scripted(script: OpenScript, run: LichRun) -> LichRun:
    """The open's answer with the script's overrides: its stdout, stderr, exit, or a hang."""
    if script.hang:
        return LichRun(script.stdout or "", script.stderr or "", -1, script.ms, hang=True)
    stdout = script.stdout if script.stdout is not None else run.stdout
    stderr = script.stderr if script.stderr is not None else run.stderr
    return LichRun(stdout, stderr, script.exit if script.exit is not None else run.exit_code, script.ms)


# --- sessions -----------------------------------------------------------------------------------------


def sessions_ms(world: LichWorld) -> int:
    """How long a ``sessions`` read takes: the script's ``sessions_ms``, else every command's time."""
    ms = world.script.sessions_ms
    return CALL_MS if ms is None else ms


def lich_sessions(world: LichWorld, call: LichCall, p: Parsed) -> LichRun:
    """The live sessions but the caller (a window of ``lists`` that covers now answers instead)."""
    if p.args:
        raise _usage("sessions")
    for window in world.script.lists:
        if window.from_ms <= call.now < window.until_ms and window.read is None:
            return LichRun(window.stdout, window.stderr, window.exit, sessions_ms(world))
    me = call.env.get("LICH_SESSION_ID", "")  # the caller's id (world.caller's), all the list needs of it
    now = call.now
    if p.on("json"):
        return world.roster_run(me, now)
    rows = world.listed(me, now)
    if not rows:
        return _ok("No other live sessions.\n")
    lines = ["session\tproject\tprovider\tname\tstate"]
    lines += [f"{r['label']}\t{r['project']}\t{r['kind']}\t{r['name']}\t{r['state'] or '-'}" for r in rows]
    return _ok("\n".join(lines) + "\n")


# --- close --------------------------------------------------------------------------------------------


def lich_close(world: LichWorld, call: LichCall, p: Parsed) -> LichRun:
    """Close a session; a worktree's last session needs --worktree keep|remove."""
    if len(p.args) != 1:
        raise _usage("close")
    s = world.target(p.args[0], world.caller(call.env), call.now, "closing it would take down the agent asking for it")
    stop = world.script.stops.get(s.name)
    if stop is not None and stop.exit != 0:
        if stop.exit == 1:
            raise Refused(_reason(stop, s))
        return LichRun("", "", stop.exit, CALL_MS)
    mode = p.text("worktree")
    if mode is not None and mode not in ("keep", "remove"):
        raise Refused(f'{go_quote(mode)} is not something to do with a worktree — "keep" keeps the checkout, '
                      '"remove" deletes it')
    q = go_quote(s.label)
    last = bool(s.branch) and not any(o is not s and o.path == s.path for o in world.live(call.now))
    if last and mode is None:
        raise Refused(f'{q} is the last session in the worktree {s.path}, so closing it decides that '
                      'checkout\'s fate: say "keep" to leave it on disk (the session is parked and can be '
                      'resumed) or "remove" to delete it')
    s.close(call.now)
    kept, removed = last and mode == "keep", last and mode == "remove"
    if p.on("json"):
        return _ok(json_line({"id": s.id, "projectId": "p1", "project": s.project, "label": s.label,
                              "worktree": s.path if s.branch else "", "kept": kept, "removed": removed}))
    if kept:
        return _ok(f"Closed {q}. Its worktree {s.path} is still there, and the session is parked: opening a "
                   "session on that branch again picks its conversation back up.\n")
    if removed:
        return _ok(f"Closed {q} and removed its worktree {s.path}.\n")
    return _ok(f"Closed {q}.\n")


# --- control ------------------------------------------------------------------------------------------


def lich_control(world: LichWorld, call: LichCall, p: Parsed) -> LichRun:
    """Drive a Claude Code session; only abort changes this world."""
    if not 2 <= len(p.args) <= 4:
        raise _usage("control")
    action, value = p.args[1], (p.args[2] if len(p.args) > 2 else None)
    if action not in ACTIONS:
        raise Refused(f"unknown action {go_quote(action)}: one of {', '.join(ACTIONS)}")
    if value is None and action in ("prompt", "command"):
        raise _usage("control")
    if action == "effort" and value is not None and value not in EFFORTS:
        raise Refused(f"{go_quote(value)} is not an effort level: one of {', '.join(EFFORTS)}")
    s = world.target(p.args[0], world.caller(call.env), call.now, "a session cannot control itself")
    q = go_quote(s.label)
    if s.kind != "claude":
        raise Refused(f"{q} is not a Claude Code session: control drives Claude Code only")
    stop = world.script.stops.get(s.name) if action == "abort" else None
    code = stop.exit if stop is not None else 0
    if stop is not None and code == 1:
        raise Refused(_reason(stop, s))
    if action == "abort" and code == 0 and s.state(call.now) != "busy":
        raise Refused(f"{q} has no turn running to stop")
    command_id = world.new_command_id()
    if action == "abort" and code in (0, 2):
        s.abort(call.now)
    if code == 3:
        s.abort(call.now)
        s.closed_at = call.now  # the session ended before confirming
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
        return _ok(json_line(body), code)
    return _ok(text + "\n", code)


def _reason(stop: StopScript, s: LichSession) -> str:
    """A scripted refusal of close or control: its stderr without ``lich: `` (added again when printed)."""
    reason = stop.stderr.strip() or f"{go_quote(s.label)} refused the command"
    return reason.removeprefix("lich: ")


# --- help ---------------------------------------------------------------------------------------------


def lich_help(world: LichWorld, call: LichCall, p: Parsed) -> LichRun:
    """The list of commands, or one command's help. It answers with no lich running too."""
    names = _names(world)
    if p.args:
        if p.args[0] not in names:
            return _dispatch(world, call, p.args[:1])  # the unknown-command text
        return _ok(COMMANDS[p.args[0]].help())
    width = max(map(len, names))
    lines = ["usage: lich <command> [flags] [arguments]", "", "Commands:"]
    lines += [f"  {name.ljust(width)}  {COMMANDS[name].summary}" for name in names]
    lines += ["", "Run `lich <command> --help` for a command's flags."]
    return _ok("\n".join(lines) + "\n")


# --- the table, and what the commands share ----------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "open": Command(
        "lich open [--project <name-or-path>] [--kind <provider>] [--worktree <branch>] [--base <branch>] "
        "[--model <model>] [--effort <level>] [--ultracode] [--folder <name>] "
        "[--prompt <task> [--private | --subagent]] [--json]",
        "Open a session; with --prompt, hand it a task.",
        {"project": "string", "kind": "string", "worktree": "string", "base": "string", "model": "string",
         "effort": "string", "ultracode": "bool", "folder": "string", "prompt": "string", "private": "bool",
         "subagent": "bool", "json": "bool"},
        lich_open,
    ),
    "sessions": Command("lich sessions [--json]", "List the live sessions you can address.", {"json": "bool"},
                        lich_sessions),
    "close": Command(
        "lich close [--project <name-or-path>] [--worktree keep|remove] [--force] [--json] <session>",
        "Close a session.",
        {"project": "string", "worktree": "string", "force": "bool", "json": "bool"},
        lich_close,
    ),
    "control": Command(
        "lich control [--project <name-or-path>] [--json] <session> <action> [<value>] [<args>]",
        "Drive a Claude Code session: prompt, abort, model, effort or command.",
        {"project": "string", "json": "bool"},
        lich_control,
    ),
    "help": Command("lich help [<command>]", "List the commands, or show one command's help.", {}, lich_help),
}


def _names(world: LichWorld) -> tuple[str, ...]:
    """The commands this lich knows (the old one has no ``control``)."""
    return _NAMES[bool(world.script.subagent)]


_NAMES = {current: tuple(name for name in COMMANDS if current or name not in NEW_ONLY) for current in (False, True)}


def _flags_of(word: str, current: bool) -> Mapping[str, Kind]:
    """The flags of the command ``word`` in this lich (the old one has no ``--subagent``); worked out once."""
    return _FLAGS[word, bool(current)]


_FLAGS = {
    (word, current): {k: v for k, v in command.flags.items() if current or k not in NEW_ONLY}
    for word, command in COMMANDS.items()
    for current in (False, True)
}


def _usage(command: str) -> Refused:
    return Refused(f"usage: {COMMANDS[command].usage}")


def _ok(stdout: str, code: int = 0) -> LichRun:
    return LichRun(stdout, "", code, CALL_MS)


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
