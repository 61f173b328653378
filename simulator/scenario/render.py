"""Serializers of a replay: the readable timeline (``agent-cards replay``) and JSON (``--json``).

The timeline is for reading, the JSON is the contract. The timeline opens with a header that names
its columns (the first is virtual ms since the scenario's start); a long value is shortened inside
(a long text in an input, a result's content and prompt, shown whole elsewhere), never by cutting its keys
off; every other field of a result, and what the model or the person reads (a deny, an error, a toast, a
note, a context line), is printed whole.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from agent_cards_simulator.scenario.replay import Replay

_WIDTH = 14
#: The header under a scenario's first line: what the columns are.
HEADER = f"{'t (ms)':>9}  {'event':<{_WIDTH}} what happened   (t: virtual ms since the scenario began)"
_INDENT = " " * (9 + 2 + _WIDTH + 1)


def to_json_line(replay: Replay) -> str:
    return json.dumps(replay.to_json(), ensure_ascii=False, separators=(",", ":"))


def one_line(text: str) -> str:
    return text.replace("\n", "⏎")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shortened(value: Any, limit: int = 48) -> Any:
    """``value`` with every text longer than ``limit`` cut (``…``): its keys and shape are all kept."""
    if isinstance(value, str):
        return _cut(value, limit)
    if isinstance(value, dict):
        return {k: shortened(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [shortened(v, limit) for v in value]
    return value


def compact(value: Any, limit: int = 48) -> str:
    """A value on one line: JSON with each long text shortened, never its keys."""
    if isinstance(value, str):
        return one_line(value)
    return one_line(json.dumps(shortened(value, limit), ensure_ascii=False))


#: The keys of an Agent call's result whose text is shown elsewhere: the content on the lines under the
#: answer, the prompt on the call's own line. Every other field is printed whole (a path, a branch, an id).
_SHOWN_ELSEWHERE = frozenset({"content", "prompt"})


def result_text(value: Any) -> str:
    """An answer's result (or deny, or error) on one line: every field whole, but the texts shown elsewhere."""
    if not isinstance(value, dict):
        return compact(value, limit=10**9)
    whole = {k: shortened(v) if k in _SHOWN_ELSEWHERE else v for k, v in value.items()}
    return one_line(json.dumps(whole, ensure_ascii=False))


def argv_text(argv: Any, limit: int = 60) -> str:
    """A command line: the program's own name, then each argument (quoted, a long one shortened)."""
    if not isinstance(argv, list):
        return compact(argv)
    words = [str(argv[0]).rsplit("/", 1)[-1]] if argv else []
    words += [shlex.quote(_cut(one_line(str(a)), limit)) for a in argv[1:]]
    return " ".join(words)


def lich_printed(event: dict[str, Any]) -> str:
    """What a ``lich open --json`` printed that decides the answer: the session's name and the delivery."""
    argv = event.get("argv")
    if not isinstance(argv, list) or argv[1:2] != ["open"] or not event.get("stdout"):
        return ""
    try:
        printed = json.loads(event["stdout"])
    except ValueError:
        return "; printed no JSON"
    if not isinstance(printed, dict):
        return "; printed no JSON object"
    parts = []
    if isinstance(printed.get("name"), str):
        parts.append(f"session {printed['name']}")
    delivery = printed.get("delivery")
    status = delivery.get("status") if isinstance(delivery, dict) else None
    parts.append(f"delivery {status}" if isinstance(status, str) else "no delivery")
    return "; " + ", ".join(parts)


def describe(event: dict[str, Any]) -> str:
    """One event's line after its time and kind (a context line follows on lines of its own)."""
    kind = event["kind"]
    if kind == "run":
        if event.get("error"):
            outcome = f"✗ {one_line(event['error'])}"
        else:
            outcome = f"exit {event.get('exit')} after {event.get('ms')} ms"
            if event.get("stderr"):
                outcome += f", stderr {one_line(event['stderr'].strip())}"
            outcome += lich_printed(event)
        return f"{argv_text(event['argv'])}  → {outcome}"
    if kind == "call":
        return f"{event['call']} {event['tool']} {compact(event['input'])}"
    if kind == "answer":
        for arm in ("deny", "error", "result"):
            if arm in event:
                return f"{event['call']} {arm}: {result_text(event[arm])}"
    if kind == "permission":
        return f"{event['call']} {event['outcome']} (via {event['via']})"
    if kind == "spawn":
        answer = event["answer"]
        if isinstance(answer, dict) and "deny" in answer:
            return (f"{event['call']} denied by the mod, its own step: Claude Code starts no agent of its own, and "
                    f"the Agent call gets the mod's answer next. It told the spawn: {one_line(str(answer['deny']))}")
        return f"{event['call']} Claude Code's own agent started: {compact(answer)}"
    if kind == "native":
        beneath = f" with {compact(event['input'])}" if "input" in event else ""
        return f"{event['call']} {event.get('tool', '')} ran in Claude Code{beneath}"
    if kind == "session.start":
        return "interactive" if event["interactive"] else "not interactive (claude -p)"
    if kind == "footer":
        return event["line"] if event["line"] is not None else "(no lich line)"
    if kind == "check":
        footer = event.get("footer")
        return f"the mod counts {event.get('count')} workers; the footer's lich line: {footer or '(none)'}"
    if kind == "mode":
        return f"permission mode switched to {event.get('mode')} (Shift+Tab)"
    if kind in ("toast", "note", "report", "log"):
        return one_line(str(event.get("text", "")))
    if kind == "resume":
        return f"/exit, then claude --{event['how']}: a new Claude Code process"
    if kind == "reload":
        asked = event.get("asked")
        return "" if asked is None else f"asked for at {asked} ms, while a turn ran: it waited for the turn to end"
    if kind == "rewind":
        return "the Rewind panel opened over the prompt: no footer until it closes" if event.get("open") else \
            "the Rewind panel closed"
    if kind == "notification":
        return f"{event['task']} {event['status']}: {one_line(str(event['text']))}"
    if kind == "prompt":
        told = len(event.get("notifications") or ())
        return f"{one_line(str(event['text']))}" + (f" (with {told} notification{'s' * (told != 1)})" if told else "")
    return ""


def event_lines(event: dict[str, Any]) -> list[str]:
    lines = [f"{event['t']:>9}  {event['kind']:<{_WIDTH}} {describe(event)}".rstrip()]
    if event["kind"] == "answer":
        result = event.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        for item in content if isinstance(content, list) else ():
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                lines.append(f"{_INDENT}+ content: {one_line(item['text'])}")
    if event["kind"] == "note":
        lines += [f"{_INDENT}+ notification: {one_line(str(text))}" for text in event.get("notifications") or ()]
    if event["kind"] in ("answer", "prompt", "note"):
        lines += [f"{_INDENT}+ context: {one_line(str(line))}" for line in event.get("context") or ()]
    return lines


def to_text(replay: Replay) -> str:
    """The timeline; a file with variants: one timeline per variant, each under its name."""
    if replay.variants:
        return "\n\n".join(to_text(v) for v in replay.variants)
    status = "passed" if replay.passed else "FAILED"
    name = f" [variant: {replay.variant}]" if replay.variant is not None else ""
    lines = [f"{replay.file}{name}: {replay.title} [{status}]", HEADER]
    for event in replay.events:
        lines += event_lines(event)
    lines.extend(f"  ✗ {failure}" for failure in replay.failures)
    return "\n".join(lines)
