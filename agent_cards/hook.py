"""The agent cards mod as a Claude Code command hook: one event as JSON on stdin, the answer on stdout.

    agent-cards hook            (or: python -m agent_cards.hook, or the plugin's hooks/agent-cards-hook)

A driver of the same core as the mod engine's module: ``agent_cards.taken`` decides a taken Agent call
and a TaskStop (the take-or-leave table, the base read, the open's argv, the delivery table and its
failures), and this module runs what it names with ``subprocess`` and turns its decision into a
PreToolUse answer. What differs is the host: a command hook lives for one event, decides before
Claude Code's permission check, and can answer a tool call only with a PreToolUse decision.

| event                   | what the hook does                                                                |
|-------------------------|-----------------------------------------------------------------------------------|
| SessionStart            | records whether the session is interactive, in the session's state file           |
| PreToolUse, Agent       | takes or leaves the call (``taken.leave``, then the checks only Claude Code would  |
|                         | make: plan mode, Agent permission rules); a taken call is opened in lich and      |
|                         | its decision answered with a ``deny`` whose reason tells the model where the      |
|                         | worker runs and how its report comes back (``reason_of``); a ``Native`` one gets  |
|                         | no decision (``systemMessage`` for the mod's toast)                               |
| PreToolUse, TaskStop    | stops a worker it opened (``taken.stop_of``: ``close`` or ``control NAME abort``), |
|                         | answered by a ``deny`` that says so; any other id gets no decision. Claude Code   |
|                         | 2.1.328 checks the id before any hook, so this never comes for a worker: the deny |
|                         | that answered the Agent call names the lich command instead                       |
|                         | (docs/claude-code-hook.md)                                                        |
| anything else           | no output                                                                         |

Interactive or not: a command hook gets no ``isInteractive``. Claude Code exports
``CLAUDE_CODE_SESSION_ATTENDED`` (``1`` in the interactive screen, ``0`` under ``-p``) to every hook;
when it is unset, ``CLAUDE_CODE_ENTRYPOINT=cli`` means interactive. SessionStart records it, and an
Agent call is taken only when the recorded value and the call's own environment both say so.

It never blocks what it does not take: every answer is exit 0 with one JSON object or nothing; input
it cannot read, an unknown event and its own failures give one line on stderr and no decision. Once
lich has the task, though, the call is never let through to run natively as well (FALL-BEFORE-ONLY).
A SessionStart or a call left native loads no ``subprocess``, no texts and no delivery table
(``agent_cards.taken`` loads those only for a call it takes): ``tests/test_hook.py`` declares every
module its start-up may load.
"""

from __future__ import annotations

import os
import sys

from agent_cards import quick_json as json
from agent_cards.engine import text
from agent_cards.record import replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from agent_cards.delivery import TakenCall
    from agent_cards.engine import Event, ProcessResult
    from agent_cards.filestore import FileStore
    from agent_cards.state import Worker
    from agent_cards.taken import Answer, Native, ProcessRun, Stopped

    Output = dict[str, Any]
    Runner = Callable[[Sequence[str], str | None, int], ProcessResult]

AGENT_TOOLS = ("Agent", "Task")  # Task: the Agent tool's older name
STOP_TOOLS = ("TaskStop", "KillShell", "KillBash")  # TaskStop and its aliases
MANAGED_SETTINGS = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)


def warn(line: str) -> None:
    try:
        sys.stderr.write(f"agent-cards: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Environ:
    """The hook's environment as the mod's ``Env`` (``get`` gives None for an unset variable)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values

    def get(self, name: str, /) -> str | None:
        return self.values.get(name)


def attended(env: Environ) -> bool:
    """Whether a person is at this session: ``CLAUDE_CODE_SESSION_ATTENDED``, else the entrypoint."""
    value = env.get("CLAUDE_CODE_SESSION_ATTENDED")
    if value:
        return value == "1"
    return env.get("CLAUDE_CODE_ENTRYPOINT") == "cli"


# -- input and output ------------------------------------------------------------------------------


def parse(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        warn("the hook input is not JSON; nothing to decide")
        return None
    if not isinstance(data, dict):
        warn("the hook input is not a JSON object; nothing to decide")
        return None
    return data


def tool_event(data: Mapping[str, Any]) -> Event | None:
    """The call as the mod's ``tool.call`` sees it: the input, flattened with the envelope."""
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        warn(f"{text(data.get('tool_name')) or 'a tool call'} came without a tool_input object; left alone")
        return None
    e: Event = {**tool_input, "tool": data.get("tool_name"), "tool_use_id": text(data.get("tool_use_id"))}
    agent_id = data.get("agent_id")
    if isinstance(agent_id, str) and agent_id:
        e["agentId"] = agent_id  # the call was made inside a subagent (TAKE-ORIGIN)
    else:
        e.pop("agentId", None)
    return e


def deny(reason: str) -> Output:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def toast(native: Native) -> Output | None:
    """A ``Native`` decision: no decision, and the mod's toast as the one thing a hook can show the person
    without deciding, ``systemMessage``."""
    if native.toast is None:
        return None
    from agent_cards.texts import person_text

    return {"systemMessage": person_text(native.toast, **native.slots)}


# -- state -----------------------------------------------------------------------------------------


def store_of(data: Mapping[str, Any], env: Environ, *, expect_file: bool) -> FileStore | None:
    """The session's state file under ``CLAUDE_PLUGIN_DATA``, or None (then nothing is remembered)."""
    from agent_cards.filestore import FileStore, session_file

    data_dir = env.get("CLAUDE_PLUGIN_DATA")
    if not data_dir:
        warn("CLAUDE_PLUGIN_DATA is not set, so this session's state cannot be kept; Agent calls stay native")
        return None
    path = session_file(data_dir, text(data.get("session_id")))
    if path is None:
        warn("the hook input names no usable session_id; Agent calls stay native")
        return None
    return FileStore(path, expect_file=expect_file, report=warn)


def session_start(data: Mapping[str, Any], env: Environ) -> Output | None:
    """Record whether a person is at this session (TAKE-INTERACTIVE), and drop long-gone sessions."""
    from agent_cards.filestore import prune

    store = store_of(data, env, expect_file=False)
    if store is None:
        return None
    here = attended(env)
    try:
        store.update(lambda s: replace(s, interactive=here))
    except OSError as error:
        warn(f"cannot write {store.path} ({error.strerror}); Agent calls stay native")
        return None
    prune(os.path.dirname(os.path.dirname(store.path)), store.path)
    return None


# -- processes -------------------------------------------------------------------------------------


def run_process(argv: Sequence[str], cwd: str | None, timeout_ms: int) -> ProcessResult:
    """Run ``argv`` (no shell) to its end; a timeout or a failed start raises ``ProcessError``."""
    import subprocess

    from agent_cards.engine import ProcessError, ProcessResult

    name = os.path.basename(argv[0]) if argv else "?"
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_ms / 1000,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ProcessError(f"{name} was still running after {timeout_ms} ms", "timeout") from None
    except OSError as error:
        raise ProcessError(f"{name} failed to start: {error.strerror or error}", "start") from None
    return ProcessResult(
        exit_code=done.returncode if done.returncode >= 0 else 1,  # killed by a signal: 1, as the engine
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
    )


def run_or_error(run: Runner, step: ProcessRun, cwd: str | None) -> ProcessResult | Exception:
    """What ``step`` gave, or how it failed: the core decides either."""
    try:
        return run(step.argv, cwd, step.timeout_ms)
    except Exception as error:
        return error


def _cwd(data: Mapping[str, Any]) -> str | None:
    cwd = text(data.get("cwd"))
    return cwd if cwd and os.path.isdir(cwd) else None


# -- what only Claude Code's permission check would know ---------------------------------------------


def _settings_files(data: Mapping[str, Any], env: Environ) -> list[str]:
    home = env.get("HOME") or os.path.expanduser("~")
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    files = [*MANAGED_SETTINGS, os.path.join(config, "settings.json")]
    for project in dict.fromkeys(p for p in (env.get("CLAUDE_PROJECT_DIR"), text(data.get("cwd"))) if p):
        folder = os.path.join(project, ".claude")
        files += [os.path.join(folder, "settings.json"), os.path.join(folder, "settings.local.json")]
    return files


def _covers(rule: str, agent_type: str) -> bool:
    """Whether a permission rule names this Agent call: ``Agent``, ``Agent(<type>)``, ``Agent(*)``, or ``Task…``."""
    tool, _, rest = rule.strip().partition("(")
    if tool.strip() not in AGENT_TOOLS:
        return False
    spec = rest.rstrip().removesuffix(")").strip()
    return spec in ("", "*", agent_type)


def permission_rule(data: Mapping[str, Any], env: Environ, e: Event) -> str | None:
    """A ``deny`` or ``ask`` rule in the settings files this hook can read that covers the call."""
    agent_type = text(e.get("subagent_type")) or "general-purpose"
    for path in _settings_files(data, env):
        try:
            with open(path, "rb") as fh:
                settings = json.loads(fh.read())
        except (OSError, ValueError):
            continue
        permissions = settings.get("permissions") if isinstance(settings, dict) else None
        if not isinstance(permissions, dict):
            continue
        for kind in ("deny", "ask"):
            listed = permissions.get(kind)
            for rule in listed if isinstance(listed, list) else []:
                if isinstance(rule, str) and _covers(rule, agent_type):
                    return rule
    return None


# -- PreToolUse: Agent -----------------------------------------------------------------------------


def _now_ms() -> int:
    import time

    return time.monotonic_ns() // 1_000_000


def agent_call(data: Mapping[str, Any], env: Environ, run: Runner) -> Output | None:
    from agent_cards import rules, taken
    from agent_cards.engine import ENGINE

    e = tool_event(data)
    if e is None:
        return None
    store = store_of(data, env, expect_file=True) if attended(env) else None
    interactive = store is not None and store.get().interactive
    facts = rules.Facts(e, ENGINE, interactive, env)
    left = taken.leave(facts)
    if left is not None:
        return toast(left)
    # Checks the mod leaves to Claude Code's permission check, which runs after this hook (docs).
    if data.get("permission_mode") == "plan":
        return toast(taken.native(e, "toast.plan_mode"))  # PERM-PLAN
    rule = permission_rule(data, env, e)
    if rule is not None:
        return toast(taken.native(e, "toast.hook_rule", rule=rule))
    cwd = _cwd(data)
    read = taken.base_read(facts)
    step = taken.opening(facts, None if read is None else run_or_error(run, read, cwd), _now_ms())
    if isinstance(step, taken.Native):
        return toast(step)
    decision = step.decide(run_or_error(run, step.run, cwd), _now_ms())
    if isinstance(decision, taken.Native):  # DELIV-OPEN-FAILED / FALL-OPEN-FAILED: the native agent runs
        return toast(decision)
    # lich has the task: from here on the call is never let through to run natively as well.
    if isinstance(decision, taken.Deny):
        if decision.fault:
            warn(decision.fault)
        return deny(decision.text)
    if isinstance(decision, taken.Launched) and decision.worker is not None:
        remember(store, decision.worker, step.lich_bin)
    return deny(reason_of(step.call, decision))


def remember(store: FileStore | None, worker: Worker, lich_bin: str) -> None:
    """DELIV-PENDING: count the worker, so that TaskStop can stop it."""
    if store is None:
        warn(f"cannot remember the worker {worker.name}: TaskStop will not know it")
        return
    try:
        store.update(lambda s: s.with_worker(worker, lich_bin))
    except Exception as error:
        warn(f"cannot remember the worker {worker.name} ({error}): TaskStop will not know it")


def reason_of(call: TakenCall, answer: Answer) -> str:
    """The deny reason that carries the mod's answer to the model (the only answer a hook can give)."""
    from agent_cards import taken
    from agent_cards.texts import AGENT, agent_text

    try:
        if isinstance(answer, taken.Completed):
            return f"{agent_text(call.lang, 'hook.completed', name=answer.agent_id)}\n\n{answer.report}"
        key = "hook.launched.isolated" if call.isolated else "hook.launched.shared"
        return f"{agent_text(call.lang, key, name=answer.agent_id)} {answer.context}".rstrip()
    except Exception as error:  # still a deny: lich has the task (FALL-BEFORE-ONLY)
        warn(f"could not word the answer for {answer.agent_id} ({type(error).__name__}: {error})")
        return AGENT["deny.spawn"].format(label=answer.card)


# -- PreToolUse: TaskStop --------------------------------------------------------------------------


def task_stop(data: Mapping[str, Any], env: Environ, run: Runner) -> Output | None:
    """STOP-TAKEN: a worker this session opened and still counts; any other id goes to Claude Code."""
    from agent_cards import lich_calls, taken
    from agent_cards.engine import DEFAULT_TIMEOUT_MS, ProcessError
    from agent_cards.state import ModState

    e = tool_event(data)
    store = store_of(data, env, expect_file=False) if e is not None and lich_calls.task_id_of(e) else None
    if e is None or store is None:
        return None
    stop = taken.stop_of(e, store.get())
    if stop is None:  # STOP-OTHER
        return None
    worker, cwd = stop.worker, _cwd(data)
    # A hook cannot poll: whether the worker still runs is read now, as the mod's poll would have.
    try:
        listed = lich_calls.listed_states(run(lich_calls.list_argv(stop.lich_bin), cwd, DEFAULT_TIMEOUT_MS))
    except ProcessError:
        listed = None  # FOOTER-LIST-FAIL: it still counts
    if listed is not None and not lich_calls.still_running(worker, listed):
        store.update(lambda s: s.without({worker.name}))
        return None  # finished: no longer counted, so the id is Claude Code's to answer
    claimed: list[bool] = []

    def claim(s: ModState) -> ModState:
        if s.worker(worker.name) is None:
            return s
        claimed.append(True)
        return s.without({worker.name})

    store.update(claim)
    if not claimed:  # another TaskStop took it meanwhile
        return None
    decision = stop.decide(run_or_error(run, stop.run, cwd), env.get("LICH_PROMPT_LANG"))
    if isinstance(decision, taken.Deny):  # STOP-REFUSED: the worker still counts
        store.update(lambda s: s.with_worker(worker, s.lich_bin or stop.lich_bin))
        return deny(decision.text)
    return deny(stopped_reason(decision, env.get("LICH_PROMPT_LANG")))


def stopped_reason(stopped: Stopped, lang: str | None) -> str:
    """The deny reason that tells the model TaskStop was carried out (a hook cannot give its result)."""
    from agent_cards.texts import agent_text

    key = "hook.stopped.shared" if stopped.worker.shared else "hook.stopped.isolated"
    return agent_text(lang, key, label=stopped.worker.label, name=stopped.worker.name)


# -- entry point -----------------------------------------------------------------------------------


def handle(raw: bytes, environ: Mapping[str, str], run: Runner = run_process) -> Output | None:
    """One hook event: the JSON to print, or None for no decision."""
    data = parse(raw)
    if data is None:
        return None
    env = Environ(environ)
    event = data.get("hook_event_name")
    if event == "SessionStart":
        return session_start(data, env)
    if event == "PreToolUse":
        tool = data.get("tool_name")
        if tool in AGENT_TOOLS:
            return agent_call(data, env, run)
        if tool in STOP_TOOLS:
            return task_stop(data, env, run)
    return None  # an event or a tool this hook does not handle


def _words(args: list[str]) -> bool:
    """Words on the hook's command line (Claude Code gives none), read as every command reads them
    (:mod:`agent_cards.arguments`, imported only then: argparse would double the hook's start-up): True
    when the hook is done (``--help``). A wrong word is one line, and the event is still handled: exit 2
    would block the person's call."""
    from agent_cards.arguments import CommandParser, parse

    parser = CommandParser("agent-cards hook", "The mod as a Claude Code command hook: one event as JSON on stdin, "
                           "the hook's answer as JSON on stdout.", "exit status: always 0 (exit 2 would block the "
                           "person's call)")
    parser.usage = "agent-cards hook   (a Claude Code command hook: one event as JSON on stdin)"
    return parse(parser, ["--help" if a == "help" else a for a in args]) == 0


def main(argv: Sequence[str] | None = None) -> int:
    """Always exit 0: exit 2 would block the person's call, and no failure here is worth that."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and _words(args):
        return 0
    try:
        if sys.stdin is None or sys.stdin.isatty():
            warn("no hook input: Claude Code runs this with one event as JSON on stdin")
            return 0
        output = handle(sys.stdin.buffer.read(), os.environ)
    except Exception as error:
        warn(f"the hook failed ({type(error).__name__}: {error}); the call goes on untouched")
        return 0
    if output:
        try:
            sys.stdout.write(json.dumps(output) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
