"""The agent cards mod as a Claude Code command hook: one event as JSON on stdin, the answer on stdout.

    agent-cards hook            (or: python -m agent_cards.hook, or the plugin's hooks/agent-cards-hook)

The same core as the mod engine's module: the take-or-leave table (``rules``), the open's argv
(``lich_calls``), the delivery table (``delivery``), the branch name (``branch``) and the texts
(``texts``). What differs is the host: a command hook lives for one event, decides before Claude
Code's permission check, and can answer a tool call only with a PreToolUse decision.

| event                   | what the hook does                                                                |
|-------------------------|-----------------------------------------------------------------------------------|
| SessionStart            | records whether the session is interactive, in the session's state file           |
| PreToolUse, Agent       | takes or leaves the call (``rules.RULES``, then the checks only Claude Code would  |
|                         | make: plan mode, Agent permission rules); a taken call is opened in lich and      |
|                         | answered with a ``deny`` whose reason tells the model where the worker runs and   |
|                         | how its report comes back; a left call gets no decision (``systemMessage`` when   |
|                         | the mod would have shown a toast)                                                 |
| PreToolUse, TaskStop    | stops a worker it opened (``close`` or ``control NAME abort``), answered by a     |
|                         | ``deny`` that says so; any other id gets no decision. Claude Code 2.1.328 checks  |
|                         | the id before any hook, so this never comes for a worker: the deny that answered |
|                         | the Agent call names the lich command instead (docs/claude-code-hook.md)          |
| anything else           | no output                                                                         |

Interactive or not: a command hook gets no ``isInteractive``. Claude Code exports
``CLAUDE_CODE_SESSION_ATTENDED`` (``1`` in the interactive screen, ``0`` under ``-p``) to every hook;
when it is unset, ``CLAUDE_CODE_ENTRYPOINT=cli`` means interactive. SessionStart records it, and an
Agent call is taken only when the recorded value and the call's own environment both say so.

It never blocks what it does not take: every answer is exit 0 with one JSON object or nothing; input
it cannot read, an unknown event and its own failures give one line on stderr and no decision. Once
lich has the task, though, the call is never let through to run natively as well (FALL-BEFORE-ONLY).
Only what an event needs is imported: a SessionStart or a call left native loads no ``subprocess``.
"""

from __future__ import annotations

import json
import os
import sys

from agent_cards.engine import error_reason, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from agent_cards.delivery import Call, Opened
    from agent_cards.engine import Event, HookResult, ProcessResult
    from agent_cards.filestore import FileStore
    from agent_cards.rules import Facts

    Output = dict[str, Any]
    Runner = Callable[[Sequence[str], str | None, int], ProcessResult]

USAGE = "usage: agent-cards hook   (a Claude Code command hook: one event as JSON on stdin)"
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


def toast(key: str, e: Event, **slots: object) -> Output:
    """The mod's toast, as the one thing a hook can show the person without deciding: ``systemMessage``."""
    from agent_cards.texts import person_text

    return {"systemMessage": person_text(key, description=text(e.get("description")), **slots)}


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
    from dataclasses import replace

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
    from agent_cards import rules
    from agent_cards.engine import ENGINE

    e = tool_event(data)
    if e is None:
        return None
    store = store_of(data, env, expect_file=True) if attended(env) else None
    interactive = store is not None and store.get().interactive
    facts = rules.Facts(e, ENGINE, interactive, env)
    leaving = rules.first_leaving(rules.RULES, facts)
    if leaving is not None:
        if leaving.toast:
            return toast(leaving.toast, e, bytes=facts.prompt_bytes, limit=rules.PROMPT_LIMIT_BYTES)
        return None
    # Checks the mod leaves to Claude Code's permission check, which runs after this hook (docs).
    if data.get("permission_mode") == "plan":
        return toast("toast.hook_plan", e)
    rule = permission_rule(data, env, e)
    if rule is not None:
        return toast("toast.hook_rule", e, rule=rule)
    return take(data, env, run, e, facts, store)


def take(
    data: Mapping[str, Any], env: Environ, run: Runner, e: Event, facts: Facts, store: FileStore | None
) -> Output | None:
    from agent_cards import delivery, lich_calls, rules
    from agent_cards.branch import branch_name
    from agent_cards.engine import DEFAULT_TIMEOUT_MS, ProcessError

    cwd = _cwd(data)
    try:
        base = ""
        if facts.isolated:
            try:
                base = lich_calls.base_of(run(lich_calls.BASE_ARGV, cwd, DEFAULT_TIMEOUT_MS))
            except ProcessError:
                base = ""
            facts.base = base
            if rules.first_leaving(rules.AFTER_BASE, facts) is not None:
                return None
        tool_use_id = text(e.get("tool_use_id"))
        description, prompt = text(e.get("description")), text(e.get("prompt"))
        branch = branch_name(description, tool_use_id) if facts.isolated else ""
        argv = lich_calls.open_argv(facts.lich_bin, e, branch, base)
        call = delivery.Call(tool_use_id, description, prompt, branch, _now_ms(), env.get("LICH_PROMPT_LANG"))
        try:
            printed = delivery.read_open(run(argv, cwd, lich_calls.OPEN_TIMEOUT_MS))
        except ProcessError as error:
            printed = delivery.NotOpened(str(error))
    except Exception as error:  # FALL-BEFORE-ONLY: lich does not have the task, so the native agent runs
        return toast("toast.open_failed", e, reason=error_reason(error))
    if isinstance(printed, delivery.NotOpened):  # DELIV-OPEN-FAILED / FALL-OPEN-FAILED
        if printed.label:
            return toast("toast.not_reached", e, label=printed.label, reason=printed.reason)
        return toast("toast.open_failed", e, reason=printed.reason)
    # lich has the task: from here on the call is never let through to run natively as well.
    try:
        answer, counted = delivery.answer(call, printed, _now_ms())
        reason = reason_of(call, printed, answer)
    except Exception as error:
        from agent_cards.texts import AGENT

        warn(f"could not word the answer for {printed.name} ({type(error).__name__}: {error})")
        return deny(AGENT["deny.unknown"].format(label=printed.label, status=printed.status))
    if counted:
        remember(store, printed, call, facts.lich_bin)
    return deny(reason)


def remember(store: FileStore | None, opened: Opened, call: Call, lich_bin: str) -> None:
    """DELIV-PENDING: count the worker, so that TaskStop can stop it."""
    from agent_cards.state import Worker

    worker = Worker(opened.name, opened.label, call.description, not call.isolated)
    if store is None:
        warn(f"cannot remember the worker {opened.name}: TaskStop will not know it")
        return
    try:
        store.update(lambda s: s.with_worker(worker, lich_bin))
    except Exception as error:
        warn(f"cannot remember the worker {opened.name} ({error}): TaskStop will not know it")


def reason_of(call: Call, opened: Opened, answer: HookResult) -> str:
    """The deny reason that carries the mod's answer to the model (the only answer a hook can give)."""
    from agent_cards.texts import agent_text

    if "deny" in answer:
        return str(answer["deny"])
    result = answer["result"]
    if result.get("status") == "completed":
        report = "\n".join(str(block.get("text", "")) for block in result.get("content", []))
        return f"{agent_text(call.lang, 'hook.completed', name=opened.name)}\n\n{report}"
    context = " ".join(str(line) for line in answer.get("context", []))
    key = "hook.launched.isolated" if call.isolated else "hook.launched.shared"
    return f"{agent_text(call.lang, key, name=opened.name)} {context}".rstrip()


# -- PreToolUse: TaskStop --------------------------------------------------------------------------


def task_stop(data: Mapping[str, Any], env: Environ, run: Runner) -> Output | None:
    """STOP-TAKEN: a worker this session opened and still counts; any other id goes to Claude Code."""
    from agent_cards import lich_calls
    from agent_cards.engine import DEFAULT_TIMEOUT_MS, ProcessError
    from agent_cards.state import ModState
    from agent_cards.texts import agent_text

    e = tool_event(data)
    task_id = lich_calls.task_id_of(e) if e is not None else ""
    store = store_of(data, env, expect_file=False) if task_id else None
    if store is None:
        return None
    state = store.get()
    worker = state.worker(task_id)
    if worker is None:  # STOP-OTHER
        return None
    lich_bin, cwd = state.lich_bin, _cwd(data)
    # A hook cannot poll: whether the worker still runs is read now, as the mod's poll would have.
    try:
        listed = lich_calls.listed_states(run(lich_calls.list_argv(lich_bin), cwd, DEFAULT_TIMEOUT_MS))
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
    try:
        result = run(lich_calls.stop_argv(lich_bin, worker), cwd, lich_calls.STOP_TIMEOUT_MS)
        refusal = lich_calls.stop_refusal(worker, result)
    except ProcessError as error:
        refusal = str(error)
    lang = env.get("LICH_PROMPT_LANG")
    if refusal is not None:  # STOP-REFUSED: the worker still counts
        store.update(lambda s: s.with_worker(worker, s.lich_bin or lich_bin))
        return deny(agent_text(lang, "deny.stop_refused", label=worker.label, reason=refusal))
    key = "hook.stopped.shared" if worker.shared else "hook.stopped.isolated"
    return deny(agent_text(lang, key, label=worker.label, name=worker.name))


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


def main(argv: Sequence[str] | None = None) -> int:
    """Always exit 0: exit 2 would block the person's call, and no failure here is worth that."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help", "help") for a in args):
        print(USAGE)
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
