"""Serializers of a replay: the readable timeline (``agent-cards replay``) and JSON (``--json``)."""

from __future__ import annotations

import json
import shlex
from typing import Any

from simulator.scenario.replay import Replay

_WIDTH = 14


def to_json_line(replay: Replay) -> str:
    return json.dumps(replay.to_json(), ensure_ascii=False, separators=(",", ":"))


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _argv(argv: Any) -> str:
    if not isinstance(argv, list):
        return _short(argv)
    return _short(" ".join(shlex.quote(str(a)) if i else str(a).rsplit("/", 1)[-1] for i, a in enumerate(argv)))


def describe(event: dict[str, Any]) -> str:
    kind = event["kind"]
    if kind == "run":
        if event.get("error"):
            outcome = f"✗ {event['error']}"
        else:
            outcome = f"exit {event.get('exit')}"
            if event.get("stderr"):
                outcome += f", stderr {_short(event['stderr'].strip(), 80)}"
        return f"{_argv(event['argv'])}  → {outcome} after {event.get('ms')} ms"
    if kind == "call":
        return f"{event['call']} {event['tool']} {_short(event['input'])}"
    if kind == "answer":
        for arm in ("deny", "error", "result"):
            if arm in event:
                extra = f"  + context {_short(event['context'], 100)}" if event.get("context") else ""
                return f"{event['call']} {arm}: {_short(event[arm])}{extra}"
    if kind == "permission":
        return f"{event['call']} {event['outcome']} (via {event['via']})"
    if kind == "spawn":
        return f"{event['call']} {_short(event['answer'])}"
    if kind == "native":
        return f"{event['call']} {event.get('tool', '')} ran in Claude Code"
    if kind == "session.start":
        return "interactive" if event["interactive"] else "not interactive (claude -p)"
    if kind == "footer":
        return event["line"] if event["line"] is not None else "(no lich line)"
    if kind in ("toast", "note", "report"):
        return _short(event["text"], 200)
    return ""


def to_text(replay: Replay) -> str:
    status = "passed" if replay.passed else "FAILED"
    lines = [f"{replay.file}: {replay.title} [{status}]"]
    for event in replay.events:
        lines.append(f"{event['t']:>9}  {event['kind']:<{_WIDTH}} {describe(event)}".rstrip())
    lines.extend(f"  ✗ {failure}" for failure in replay.failures)
    return "\n".join(lines)
