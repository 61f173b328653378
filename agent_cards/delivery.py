"""What ``lich open`` printed, and the Agent answer it decides: the delivery table.

``answer`` gives the decision as a value of ``agent_cards.taken`` (``Launched``, ``Completed``, ``Deny``);
each host turns it into its own answer (the mod's hook result, the command hook's deny reason).

| delivery              | the Agent call answers                                   | counted |
|-----------------------|----------------------------------------------------------|---------|
| pending               | Launched: async_launched + context line                  | yes     |
| unanswered            | Launched: async_launched + context line (report to come) | no      |
| answered              | Completed: the report, then where the work is            | no      |
| unread, undelivered   | deny: the task never reached the card                    | no      |
| any other status      | deny, naming the card (and its branch)                   | no      |
| the open failed       | (``taken``) the native agent runs, with a toast          | no      |

Reading the output (``read_open``), of which the mod reads ``label``, ``name``, ``path`` and ``delivery``
only: stdout that is no JSON object is a failed open; an object without
``delivery`` is a card the task did not reach (a failed open, naming the card); an object with a
``delivery`` means lich has the task, whatever the exit code (lich's own fakes exit 2 and 3 here).
"""

from __future__ import annotations

import json
from typing import Literal

from agent_cards.engine import ProcessResult, text
from agent_cards.record import Value
from agent_cards.state import Worker
from agent_cards.taken import Answer, Completed, Deny, Launched
from agent_cards.texts import agent_text

Arm = Literal["async", "completed", "deny"]


class Row(Value):
    arm: Arm
    counted: bool = False
    deny: str = ""  # the AGENT text key of a deny


DELIVERY: dict[str, Row] = {
    "pending": Row("async", counted=True),
    "unanswered": Row("async"),
    "answered": Row("completed"),
    "unread": Row("deny", deny="deny.never_reached"),
    "undelivered": Row("deny", deny="deny.never_reached"),
}
UNKNOWN = Row("deny", deny="deny.unknown")


class Opened(Value):
    """lich has the task: a card, and the status of the hand-off."""

    label: str
    name: str
    path: str
    status: str
    answer: str


class NotOpened(Value):
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
            return NotOpened("lich open printed no session: its output is not the JSON object --json gives")
        return NotOpened(lich_reason(result))
    label, name = text(printed.get("label")), text(printed.get("name"))  # each stands in for the other
    delivery = printed.get("delivery")
    if delivery is None:
        return NotOpened(lich_reason(result), label=label or name or None)
    details = delivery if isinstance(delivery, dict) else {}
    status = details.get("status")
    return Opened(
        label=label or name,
        name=name or label,
        path=text(printed.get("path")),
        status=status if isinstance(status, str) else json.dumps(status),
        answer=text(details.get("answer")),
    )


class TakenCall(Value):
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


def answer(call: TakenCall, opened: Opened, now_ms: int) -> Answer | Deny:
    """The Agent call's answer for what lich printed; a ``Launched`` carries the worker to count, if any."""
    row = DELIVERY.get(opened.status, UNKNOWN)
    where = "isolated" if call.isolated else "shared"
    slots = {"label": opened.label, "path": opened.path, "branch": call.branch, "status": opened.status}
    if row.arm == "async":
        # A worker lich printed no name for can be neither found in its list nor stopped: not counted.
        counted = row.counted and bool(opened.name)
        worker = Worker(opened.name, opened.label, call.description, not call.isolated) if counted else None
        context = agent_text(call.lang, f"context.{where}", **slots)
        return Launched(opened.name, opened.label, call.description, call.prompt, context, worker)
    if row.arm == "completed":
        report = agent_text(call.lang, f"completed.{where}", answer=opened.answer, **slots)
        duration_ms = max(0, now_ms - call.started_ms)
        path = opened.path if call.isolated else ""
        return Completed(opened.name, opened.label, report, duration_ms, call.prompt, path, call.branch)
    key = row.deny
    if key == "deny.unknown" and call.isolated:
        key = "deny.unknown.isolated"
    return Deny(agent_text(call.lang, key, **slots), card=opened.label)
