"""The scripted model of a conformance run: each step's calls, keyed by the call ids they answer.

The person types ``conform step N: …`` for the scenario's N-th call step. A main request whose newest
step marker is N, and in which none of step N's calls has a tool_result yet, gets step N's calls as one
reply (several ``tool_use`` blocks for a ``parallel`` step); every other main request gets a short text.
Turns the engine starts by itself (a finished native agent, the person typing after a "no") so never
shift the script. A subagent's own call (``subagent_turns``) is the first reply to the first native agent's
first request, in the steps' order; its tool_result comes back in that agent's next request.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from agent_cards_claude_driver.model_api import Reply, ScriptedModel, TextReply, ToolUse, text_of, tool_results
from agent_cards_simulator.scenario.steps import ToolCall

MARKER = "conform step {n}: carry on with the task."
_MARKER = re.compile(r"conform step (\d+):")
_AGENT_ID = re.compile(r"agentId: (\S+)")


def _step_of(body: Mapping[str, Any]) -> int | None:
    found = None
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            for match in _MARKER.finditer(text_of(message.get("content"))):
                found = int(match.group(1))
    return found


def agent_id_in(text: str) -> str | None:
    """The agentId an Agent call's launch text names."""
    match = _AGENT_ID.search(text)
    return match.group(1) if match else None


class ConformModel(ScriptedModel):
    """The fake Messages API, answering each step marker with that step's calls once."""

    def __init__(self, turns: Mapping[int, Sequence[ToolCall]], *, on_serve: Callable[[int], None] | None = None,
                 subagent_turns: Sequence[int] = (), **more: Any) -> None:
        super().__init__(**more)
        self.turns = dict(turns)
        self.subagent_turns = list(subagent_turns)  # step numbers (of ``turns``) a subagent's reply makes
        self.served: dict[int, float] = {}  # step number: when its calls were sent (time.time())
        self.sent: dict[int, list[dict[str, Any]]] = {}  # step number: the calls as sent (inputs resolved)
        self._on_serve = on_serve
        self._serving = threading.Lock()

    def _next_reply(self, kind: Any, body: Mapping[str, Any]) -> TextReply | ToolUse:
        if kind == "subagent":
            return self._subagent_reply(body)
        if kind != "main":
            return super()._next_reply(kind, body)
        n = _step_of(body)
        with self._serving:
            if n is None or n not in self.turns or n in self.subagent_turns or n in self.served:
                return TextReply("Noted.")
            answered = {str(r.get("tool_use_id")) for r in tool_results(body)}
            calls = self.turns[n]
            if any(c.id in answered for c in calls):
                return TextReply("Noted.")
            uses = [ToolUse(c.tool, self._resolved(c, body), id=c.id) for c in calls]
            self.served[n] = time.time()
            self.sent[n] = [{"call": u.id, "tool": u.name, "input": dict(u.input)} for u in uses]
        if self._on_serve is not None:
            self._on_serve(n)
        first, *rest = uses
        return ToolUse(first.name, first.input, id=first.id, text=f"Step {n}.", parallel=tuple(rest))

    def made_elsewhere(self, n: int) -> None:
        """Step n's calls were made now by another than the model (a plugin): they count as sent."""
        with self._serving:
            self.served[n] = time.time()
            self.sent[n] = [{"call": c.id, "tool": c.tool, "input": dict(c.input)} for c in self.turns[n]]

    def _subagent_reply(self, body: Mapping[str, Any]) -> TextReply | ToolUse:
        """A native agent's first request gets the next subagent step's call (each step once); the rest are
        answered as any subagent's."""
        with self._serving:
            waiting = [n for n in self.subagent_turns if n not in self.served]
            if not waiting or tool_results(body):
                return super()._next_reply("subagent", body)
            n = waiting[0]
            uses = [ToolUse(c.tool, dict(c.input), id=c.id) for c in self.turns[n]]
            self.served[n] = time.time()
            self.sent[n] = [{"call": u.id, "tool": u.name, "input": dict(u.input)} for u in uses]
        if self._on_serve is not None:
            self._on_serve(n)
        first, *rest = uses
        return ToolUse(first.name, first.input, id=first.id, parallel=tuple(rest))

    def _resolved(self, call: ToolCall, body: Mapping[str, Any]) -> dict[str, Any]:
        """A TaskStop naming a worker by the call that opened it gets the agentId that call answered."""
        if call.worker_of is None:
            return dict(call.input)
        for result in tool_results(body):
            if result.get("tool_use_id") == call.worker_of:
                return {"task_id": agent_id_in(text_of(result.get("content"))) or ""}
        return {"task_id": ""}

    def results(self) -> dict[str, tuple[float, dict[str, Any], Mapping[str, Any]]]:
        return first_results([*self.main_requests, *self.subagent_requests])


class Timed(Protocol):
    """A request the model got: when, and its body."""

    @property
    def time(self) -> float: ...

    @property
    def body(self) -> Any: ...


def first_results(requests: Iterable[Timed]) -> dict[str, tuple[float, dict[str, Any], Mapping[str, Any]]]:
    """Each call id's tool_result as the model first read it (on the main loop, or in the subagent that made the
    call), from its requests main ones first: (when, the block, the whole request body)."""
    out: dict[str, tuple[float, dict[str, Any], Mapping[str, Any]]] = {}
    for request in requests:
        body = request.body if isinstance(request.body, dict) else {}
        for result in tool_results(body):
            key = str(result.get("tool_use_id"))
            if key not in out:
                out[key] = (request.time, result, body)
    return out


__all__ = ["MARKER", "ConformModel", "Reply", "Timed", "agent_id_in", "first_results"]
