"""What ``lich open`` printed, and the Agent answer it decides: the delivery table.

| delivery              | the Agent call answers                                   | counted |
|-----------------------|----------------------------------------------------------|---------|
| pending               | async_launched + context line                            | yes     |
| unanswered            | async_launched + context line (the report still comes)   | no      |
| answered              | completed: the report, then where the work is            | no      |
| unread, undelivered   | deny: the task never reached the card                    | no      |
| any other status      | deny, naming the card (and its branch)                   | no      |
| the open failed       | (not here) the native agent runs, with a toast           | no      |

Reading the output (``read_open``): stdout that is no JSON object is a failed open; an object without
``delivery`` is a card the task did not reach (a failed open, naming the card); an object with a
``delivery`` means lich has the task, whatever the exit code (lich's own fakes exit 2 and 3 here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from agent_cards.engine import HookResult, ProcessResult, text
from agent_cards.texts import agent_text

Arm = Literal["async", "completed", "deny"]


@dataclass(frozen=True)
class Row:
    arm: Arm
    counted: bool = False
    deny: str | None = None  # the AGENT text key of a deny


DELIVERY: dict[str, Row] = {
    "pending": Row("async", counted=True),
    "unanswered": Row("async"),
    "answered": Row("completed"),
    "unread": Row("deny", deny="deny.never_reached"),
    "undelivered": Row("deny", deny="deny.never_reached"),
}
UNKNOWN = Row("deny", deny="deny.unknown")


@dataclass(frozen=True)
class Opened:
    """lich has the task: a card, and the status of the hand-off."""

    label: str
    name: str
    path: str
    status: str
    answer: str


@dataclass(frozen=True)
class NotOpened:
    """lich does not have the task. ``label`` names the card when one was opened anyway."""

    reason: str
    label: str | None = None


def lich_reason(result: ProcessResult) -> str:
    """lich's own reason for a failure: its stderr, trimmed, or the exit code when stderr is empty."""
    return result.stderr.strip() or f"exit code {result.exit_code}"


def read_open(result: ProcessResult) -> Opened | NotOpened:
    try:
        printed = json.loads(result.stdout)
    except ValueError:
        printed = None
    if not isinstance(printed, dict):
        if result.exit_code == 0 and not result.stderr.strip():
            return NotOpened("lich open printed no session (its output is not the JSON object --json gives)")
        return NotOpened(lich_reason(result))
    label = text(printed.get("label")) or text(printed.get("name")) or text(printed.get("id"))
    delivery = printed.get("delivery")
    if delivery is None:
        return NotOpened(lich_reason(result), label=label or None)
    name = text(printed.get("name")) or label
    details = delivery if isinstance(delivery, dict) else {}
    status = details.get("status")
    return Opened(
        label=label or name,
        name=name,
        path=text(printed.get("path")),
        status=status if isinstance(status, str) else json.dumps(status),
        answer=text(details.get("answer")),
    )


@dataclass(frozen=True)
class Call:
    """The Agent call the mod took, as the answer needs it."""

    tool_use_id: str
    description: str
    prompt: str
    branch: str  # "" for a call in the asking session's checkout
    started_ms: int
    lang: str | None

    @property
    def isolated(self) -> bool:
        return bool(self.branch)


_ZERO_USAGE: dict[str, Any] = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": None,
    "cache_read_input_tokens": None,
    "server_tool_use": None,
    "service_tier": None,
    "cache_creation": None,
}


def answer(call: Call, opened: Opened, now_ms: int) -> tuple[HookResult, bool]:
    """The Agent call's answer for what lich printed, and whether the worker is counted."""
    row = DELIVERY.get(opened.status, UNKNOWN)
    where = "isolated" if call.isolated else "shared"
    slots = {"label": opened.label, "path": opened.path, "branch": call.branch, "status": opened.status}
    if row.arm == "async":
        result: dict[str, Any] = {
            "status": "async_launched",
            "agentId": opened.name,
            "description": call.description,
            "prompt": call.prompt,
            "outputFile": "",
        }
        # A worker lich printed no name for can be neither found in its list nor stopped: not counted.
        counted = row.counted and bool(opened.name)
        return {"result": result, "context": [agent_text(call.lang, f"context.{where}", **slots)]}, counted
    if row.arm == "completed":
        report = agent_text(call.lang, f"completed.{where}", answer=opened.answer, **slots)
        result = {
            "status": "completed",
            "agentId": opened.name,
            "content": [{"type": "text", "text": report}],
            "totalToolUseCount": 0,
            "totalDurationMs": max(0, now_ms - call.started_ms),
            "totalTokens": 0,
            "usage": dict(_ZERO_USAGE),
            "prompt": call.prompt,
        }
        if call.isolated:
            result["worktreePath"] = opened.path
            result["worktreeBranch"] = call.branch
        return {"result": result}, False
    key = row.deny or "deny.unknown"
    if key == "deny.unknown" and call.isolated:
        key = "deny.unknown.isolated"
    return {"deny": agent_text(call.lang, key, **slots)}, False
