"""The scripted fake Messages API on its own (no CLI needed; fast)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from agent_cards_claude_driver.model_api import ScriptedModel, TextReply, ToolUse, text_of, tool_results


def _post(model: ScriptedModel, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[str, str]:
    req = urllib.request.Request(
        f"{model.base_url}/v1/messages?beta=true",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer secret", **(headers or {})},
        method="POST",
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=10) as resp:
        return resp.headers.get("content-type", ""), resp.read().decode()


def _events(sse: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in sse.strip().split("\n\n"):
        name, data = chunk.split("\n")
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def _body(prompt: str, *, stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "stream": stream,
        "tools": [{"name": "Agent"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": prompt}]},
            {"role": "system", "content": "# Environment"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": True}],
            },
        ],
    }


def test_script_routing_sse_and_log(tmp_path: Path) -> None:
    log = tmp_path / "api.jsonl"
    call = ToolUse("Agent", {"description": "d", "prompt": "p"}, text="first")
    with ScriptedModel([call], subagent_replies=[TextReply("sub")], log_path=log, lifetime=30) as model:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        head = urllib.request.Request(f"{model.base_url}/api/hello", method="HEAD")
        with opener.open(head, timeout=10) as resp:
            assert resp.status == 200

        ctype, sse = _post(model, _body("go"))
        assert ctype == "text/event-stream"
        events = _events(sse)
        assert [e for e, _ in events] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        assert events[4][1]["content_block"] == {"type": "tool_use", "id": call.id, "name": "Agent", "input": {}}
        partial = "".join(d["delta"]["partial_json"] for e, d in events if d.get("delta", {}).get("partial_json"))
        assert json.loads(partial) == {"description": "d", "prompt": "p"}
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

        _, sse = _post(model, _body("p"), {"x-claude-code-agent-id": "a1"})
        assert _events(sse)[2][1]["delta"]["text"] == "sub"
        _, sse = _post(model, _body("go"))
        assert _events(sse)[2][1]["delta"]["text"] == "done"
        ctype, raw = _post(model, _body("title", stream=False))
        assert ctype == "application/json"
        assert json.loads(raw)["content"] == [{"type": "text", "text": "done"}]

        kinds = [r.kind for r in model.requests]
        assert kinds == ["other", "main", "subagent", "main", "side"]
        assert model.requests[1].headers["authorization"] == "<redacted>"
        assert [r["tool_use_id"] for r in tool_results(model.requests[1])] == ["t1"]
        assert text_of(tool_results(model.requests[1])) == "x"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 5
    assert "secret" not in log.read_text()
