"""A scripted fake of the Anthropic Messages API, for driving the real CLI offline.

The server binds 127.0.0.1 on an ephemeral port and answers:

* ``POST /v1/messages`` (the CLI adds ``?beta=true``) with the next scripted reply,
  streamed as Server-Sent Events, or as one JSON body for non-streamed requests;
* ``HEAD``/``GET /api/hello`` with ``200 {}``.

Requests are routed by who sent them, not by a global counter:

* a request carrying ``x-claude-code-agent-id`` comes from a subagent and is answered
  from ``subagent_replies`` (then plain text);
* a request without tools, or a non-streamed one (title, auto-mode classifier), is a
  side request and gets a plain text answer (``<severity>0</severity>`` for the classifier);
* every other request is the main conversation and consumes ``replies`` in order.

When a script runs out, the answer is the text ``done``. Every request is recorded in
``.requests`` (secrets removed) and, if a log path is given, appended as a JSON line.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from agent_cards.record import Record, Value, field

__all__ = [
    "AGENT_ID_HEADER",
    "RecordedRequest",
    "Reply",
    "ScriptedModel",
    "TextReply",
    "ToolUse",
    "text_of",
    "tool_results",
]

AGENT_ID_HEADER = "x-claude-code-agent-id"
FALLBACK_TEXT = "done"
CLASSIFIER_TEXT = "<severity>0</severity>"
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization", "cookie"})

RequestKind = Literal["main", "subagent", "side", "other"]


class TextReply(Value):
    """A plain text assistant reply (``stop_reason: end_turn``)."""

    text: str


class ToolUse(Value):
    """A tool call (``stop_reason: tool_use``), optionally preceded by a text block."""

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=lambda: f"toolu_fake_{uuid.uuid4().hex[:20]}")
    text: str | None = None
    parallel: tuple[ToolUse, ...] = ()  # more tool calls in the same reply, after this one


Reply = TextReply | ToolUse | str


class RecordedRequest(Record):
    """One request as the fake saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: RequestKind
    time: float
    reply: dict[str, Any] | None = None

    @property
    def agent_id(self) -> str | None:
        return self.headers.get(AGENT_ID_HEADER)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "kind": self.kind,
            "time": self.time,
            "reply": self.reply,
        }


def _as_reply(item: Reply) -> TextReply | ToolUse:
    return TextReply(item) if isinstance(item, str) else item


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Content as a list of blocks: a plain string becomes one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _body_of(request: RecordedRequest | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(request, RecordedRequest):
        return request.body if isinstance(request.body, Mapping) else {}
    return request


def tool_results(request: RecordedRequest | Mapping[str, Any]) -> list[dict[str, Any]]:
    """All ``tool_result`` blocks in a request body's messages, oldest first."""
    out: list[dict[str, Any]] = []
    for message in _body_of(request).get("messages") or []:
        if isinstance(message, dict):
            out.extend(b for b in _blocks(message.get("content")) if b.get("type") == "tool_result")
    return out


def text_of(value: Any) -> str:
    """Concatenated text of a content value (string, block list, or tool_result content)."""
    parts: list[str] = []
    for block in _blocks(value):
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class ScriptedModel:
    """The fake Messages API. Use as a context manager, or call ``start``/``close``."""

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        subagent_replies: Sequence[Reply] = (),
        log_path: Path | None = None,
        lifetime: float = 600.0,
        fallback: str = FALLBACK_TEXT,
    ) -> None:
        self._main: list[TextReply | ToolUse] = [_as_reply(r) for r in replies]
        self._sub: list[TextReply | ToolUse] = [_as_reply(r) for r in subagent_replies]
        self._fallback = fallback
        self._log_path = log_path
        self._lifetime = lifetime
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.requests: list[RecordedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._closed = False

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> ScriptedModel:
        model = self

        class Handler(_Handler):
            owner = model

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self._lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("ScriptedModel is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- queries -------------------------------------------------------------

    def of_kind(self, kind: RequestKind) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.of_kind("main")

    @property
    def subagent_requests(self) -> list[RecordedRequest]:
        return self.of_kind("subagent")

    @property
    def remaining(self) -> int:
        """Scripted main replies not yet served."""
        with self._lock:
            return len(self._main)

    def wait_until(self, predicate: Callable[[ScriptedModel], bool], timeout: float = 30.0) -> bool:
        """Block until ``predicate(self)`` holds after some request, or the timeout passes."""
        deadline = time.monotonic() + timeout
        while not predicate(self):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._changed:
                self._changed.wait(min(left, 0.25))
        return True

    # -- routing (called from handler threads) --------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(request)
            if self._log_path is not None:
                with self._log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(request.to_json()) + "\n")
            self._changed.notify_all()

    def _classify(self, headers: Mapping[str, str], body: Any) -> RequestKind:
        if not isinstance(body, dict):
            return "other"
        if headers.get(AGENT_ID_HEADER):
            return "subagent"
        if not body.get("stream") or not body.get("tools"):
            return "side"
        return "main"

    def _next_reply(self, kind: RequestKind, body: Mapping[str, Any]) -> TextReply | ToolUse:
        with self._lock:
            if kind == "main" and self._main:
                return self._main.pop(0)
            if kind == "subagent" and self._sub:
                return self._sub.pop(0)
        if kind == "side" and "security monitor" in json.dumps(body.get("system", "")):
            return TextReply(CLASSIFIER_TEXT)
        return TextReply(self._fallback)


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModel
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _headers(self) -> dict[str, str]:
        return {k.lower(): ("<redacted>" if k.lower() in _SECRET_HEADERS else v) for k, v in self.headers.items()}

    def _read_body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: Any, head_only: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{uuid.uuid4().hex[:20]}")
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def do_HEAD(self) -> None:
        self._simple(head_only=True)

    def do_GET(self) -> None:
        self._simple(head_only=False)

    def _simple(self, head_only: bool) -> None:
        self.owner._record(RecordedRequest(self.command, self.path, self._headers(), None, "other", time.time()))
        if self.path.split("?")[0] == "/api/hello":
            self._send_json(200, {}, head_only)
        else:
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}}, head_only)

    def do_POST(self) -> None:
        headers = self._headers()
        body = self._read_body()
        kind = self.owner._classify(headers, body)
        record = RecordedRequest(self.command, self.path, headers, body, kind, time.time())
        if self.path.split("?")[0] != "/v1/messages" or not isinstance(body, dict):
            self.owner._record(record)
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        reply = self.owner._next_reply(kind, body)
        record.reply = _describe(reply)
        self.owner._record(record)
        model = str(body.get("model", "claude-fake"))
        if body.get("stream"):
            self._stream(reply, model)
        else:
            self._send_json(200, _message(reply, model))

    def _stream(self, reply: TextReply | ToolUse, model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.send_header("request-id", f"req_fake_{uuid.uuid4().hex[:20]}")
        self.end_headers()
        for event, data in _events(reply, model):
            self.wfile.write(_sse(event, data))
            self.wfile.flush()
        self.close_connection = True


def _describe(reply: TextReply | ToolUse) -> dict[str, Any]:
    if isinstance(reply, TextReply):
        return {"type": "text", "text": reply.text}
    return {"type": "tool_use", "name": reply.name, "id": reply.id, "input": dict(reply.input)}


def _usage(output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 10,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _content(reply: TextReply | ToolUse) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        return [{"type": "text", "text": reply.text}]
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in (reply, *reply.parallel):
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.input)})
    return blocks


def _message(reply: TextReply | ToolUse, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": "end_turn" if isinstance(reply, TextReply) else "tool_use",
        "stop_sequence": None,
        "usage": _usage(5),
    }


def _events(reply: TextReply | ToolUse, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    start = _message(reply, model)
    start.update(content=[], stop_reason=None, usage=_usage(1))
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(_content(reply)):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                },
            )
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                },
            )
            encoded = json.dumps(block["input"])
            half = len(encoded) // 2
            for piece in (encoded[:half], encoded[half:]):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = "end_turn" if isinstance(reply, TextReply) else "tool_use"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}
