"""Results: the shapes a hook may answer per event, and the texts Claude Code's core answers with.

A hook whose answer has the wrong shape is skipped (fail-open). The core texts are Claude Code's own,
as measured on 2.1.328, shortened where marked.
"""

from __future__ import annotations

from typing import Any

from agent_cards.engine import HookResult


def shape_problem(event: str, value: Any) -> str | None:
    """Why ``value`` is no answer for ``event`` (the engine's report wording), or None when it is one."""
    if value is None:
        return f'the on("{event}") hook returned no result'
    if not isinstance(value, dict):
        return f'the on("{event}") hook returned {type(value).__name__}, not an object'
    if event == "tool.call" and not ("result" in value or isinstance(value.get("deny"), str)):
        return "returned neither { result } nor { deny }"
    if event == "agent.spawn" and not (isinstance(value.get("deny"), str) or "model" in value):
        return "returned neither { model, agentId } nor { deny }"
    return None


def error(text: str, ref: int | None = None) -> HookResult:
    """A core tool error, as the model reads it."""
    result: HookResult = {"result": f"Error: {text}", "text": text, "isError": True}
    return {"ref": ref, **result} if ref is not None else result


NEXT_WITHOUT_EVENT = "next() takes the event's argument: next(e) passes it on, next({ ...e, x }) rewrites it"
ENVELOPE_KEYS = ("tool", "tool_use_id", "agentId", "consent", "$shadowed")


def envelope_rewrite(key: str) -> str:
    return (
        f"next() passed an argument with a changed {key} (the envelope is the engine's; a rewrite keeps "
        "tool, tool_use_id, agentId, consent, $shadowed)"
    )


#: An ask with nobody to answer the dialog (``claude -p``, the one session where nobody can): Claude Code's own
#: refusal (measured on 2.1.328 and 2.1.332 with the ask rule ``Agent``; the testing kit words it otherwise).
PERMISSION_DENIED_NOBODY = "Claude requested permissions to use Agent, but you haven't granted it yet."
USER_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
    "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how "
    "to proceed."
)
#: What the model reads when it calls Agent under the plain deny rule: the tool is gone, no hook ran.
NO_SUCH_TOOL = (
    "<tool_use_error>Error: No such tool available: Agent. Agent is disabled for this session, in subagents as "
    "well as here.</tool_use_error>"
)


def rule_denied(agent_type: str, rule: str) -> str:
    """A typed deny rule's refusal, the rule in the project's settings (``.claude/settings.json``)."""
    return f"Agent type '{agent_type}' has been denied by permission rule '{rule}' from projectSettings."


def hook_error(reason: str) -> str:
    return f"PreToolUse:Agent hook error: {reason}"


def spawn_denied(text: str) -> str:
    return f"Subagent spawn denied by a plugin: {text}"


def unknown_agent_type(name: str, available: list[str]) -> str:
    """Claude Code's error for an agent type it does not know: the types sorted ignoring case (2.1.328)."""
    return f"Agent type '{name}' not found. Available agents: {', '.join(sorted(available, key=str.lower))}"


WORKTREE_NO_GIT = (
    "Cannot create agent worktree: not in a git repository and no WorktreeCreate hooks are configured. "
    "Configure WorktreeCreate/WorktreeRemove hooks in settings.json to use worktree isolation with other VCS "
    "systems."
)
#: The Agent tool's input fields that must be text (its schema; checked beneath the hooks, before the permission).
AGENT_TEXT_FIELDS = ("description", "prompt", "subagent_type", "model")


def _js_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def input_problem(tool: str, tool_input: dict[str, Any]) -> str | None:
    """The engine's refusal of a tool input its schema rejects (measured for ``prompt``), or None."""
    issues = [
        f"The parameter `{key}` type is expected as `string` but provided as `{_js_type(tool_input[key])}`"
        for key in AGENT_TEXT_FIELDS
        if key in tool_input and not isinstance(tool_input[key], str)
    ]
    if not issues:
        return None
    head = "issue" if len(issues) == 1 else "issues"
    return f"<tool_use_error>InputValidationError: {tool} failed due to the following {head}:\n" + "\n".join(
        issues
    ) + "</tool_use_error>"


def launched(agent_id: str) -> str:
    """The head of Claude Code's launch text for a background agent (shortened)."""
    return (
        "Async agent launched successfully.\n"
        f"agentId: {agent_id} (internal ID - do not mention to user. Use SendMessage with to: '{agent_id}' "
        "to continue this agent.)\n"
        "The agent is working in the background. You will be notified automatically when it completes."
    )


def task_stopped(task_id: str, description: str) -> dict[str, Any]:
    return {
        "message": f"Successfully stopped task: {task_id} ({description})",
        "task_id": task_id,
        "task_type": "local_agent",
        "command": description,
    }


def no_task(task_id: str) -> str:
    return f"<tool_use_error>No task found with ID: {task_id}</tool_use_error>"


def lost_at_resume(task_id: str, description: str) -> str:
    """What the model reads, with its next prompt, of a background agent Claude Code launched in the process
    before (``claude --continue``, ``--resume``): it failed, its in-process state lost (2.1.328, word for word
    but the reminder's framing)."""
    return (
        f"<task-notification>\n<task-id>{task_id}</task-id>\n<status>failed</status>\n"
        f'<summary>Background agent "{description}" didn\'t finish before the previous session ended</summary>\n'
        "<note>It was running when the previous Claude Code process exited and did not complete. Its in-process "
        "state was lost. Check its worktree/output for partial work before assuming the task landed.</note>\n"
        "</task-notification>"
    )
