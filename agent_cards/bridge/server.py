"""The socket the module's ``$.http.fetch`` speaks to: HTTP/1.1 over a Unix socket, ``POST /step`` only.

Each request carries one JSON object and ``authorization: Bearer <token>`` (the token of the hello); the
token is checked on every request before its body is parsed, so that no other process of the same user
can drive the mod. A connection may carry several requests, until ``connection: close``. Answers are JSON:
200 with the step's answer, 400 (not JSON, not an object, nested too deep, a field of the wrong type),
403 (a wrong token), 404 (another method or path), 413 (a body over :data:`MAX_BODY`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

MAX_BODY = 8 << 20

_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 413: "Too Large"}

#: What serves one step: the request object in, the answer out (:meth:`BridgeSession.step`).
Step = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]


class StepServer:
    def __init__(self, step: Step, token: str) -> None:
        self._step = step
        self._auth = f"Bearer {token}".encode()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                parts = line.decode("latin-1").split()
                headers: dict[str, str] = {}
                while True:
                    raw = await reader.readline()
                    if raw in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                given = headers.get("content-length") or "0"
                if not given.isdigit():
                    await self._reply(writer, 400, {"error": "a content-length that is not a number"})
                    return
                length = int(given)
                if length > MAX_BODY:
                    await self._reply(writer, 413, {"error": "too large"})
                    return
                body = await reader.readexactly(length) if length else b""
                status, payload = await self.handle(parts, headers, body)
                await self._reply(writer, status, payload)
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def handle(self, parts: list[str], headers: Mapping[str, str], body: bytes) -> tuple[int, Any]:
        given = headers.get("authorization", "").encode("latin-1", "replace")
        if not hmac.compare_digest(given, self._auth):  # every request, before its body is parsed
            return 403, {"error": "forbidden"}
        if parts[:2] != ["POST", "/step"]:
            return 404, {"error": "not found"}
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            return 400, {"error": "not JSON"}
        if not isinstance(request, dict):
            return 400, {"error": "not an object"}
        try:
            return 200, await self._step(request)
        except Exception as error:  # a field of the wrong type: an answer saying so, never a dropped connection
            return 400, {"error": f"a malformed request ({type(error).__name__}: {error})"[:300]}

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
        try:
            data = json.dumps(payload, separators=(",", ":")).encode()
        except (TypeError, ValueError, RecursionError):  # an answer echoing a value nested past what JSON writes
            status, data = 400, b'{"error":"an answer that cannot be written as JSON"}'

        head = (
            f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n\r\n"
        )
        writer.write(head.encode() + data)
        await writer.drain()
