"""A replay as a Mermaid sequence diagram (``agent-cards replay --mermaid``), for a bug report.

GitHub, GitLab and most trackers render a fenced ``mermaid`` block, so the diagram can be pasted into
the report as it is printed. It has five participants: the model, Claude Code, the mod, lich and the
person at the screen; each event of the transcript is one message or note, in the transcript's order,
led by its virtual time (``t=800``: ms since the scenario began). Texts are the transcript's own,
shortened where long, with the few characters Mermaid reads as syntax written as its entity codes.
"""

from __future__ import annotations

import json
from typing import Any

from agent_cards_simulator.scenario.render import argv_text, lich_printed
from agent_cards_simulator.scenario.replay import Replay

#: The participants: their id in the diagram and the name shown.
PARTICIPANTS = (("Model", "the model"), ("CC", "Claude Code"), ("Mod", "agent cards mod"), ("Lich", "lich"),
                ("Person", "the person"))
_LIMIT = 140
#: The characters Mermaid reads as syntax inside a message, as its entity codes (``#`` + decimal code + ``;``),
#: replaced in one pass: replacing ``#`` and then ``;`` would turn ``#`` into ``#35#59;``, which Mermaid reads
#: as an entity it does not know and cuts the text there ("Fix issue #123" drawn as "Fix issue").
_ENTITIES = str.maketrans({"#": "#35;", ";": "#59;", "<": "#60;", ">": "#62;"})


def text(value: Any, limit: int = _LIMIT) -> str:
    """A message's text, on one line and safe for Mermaid (``;``, ``#`` and angle brackets as entity codes)."""
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    raw = " ".join(raw.split())
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return raw.translate(_ENTITIES)


def _answer(event: dict[str, Any]) -> str:
    if "deny" in event:
        return f"deny: {event['deny']}"
    if "error" in event:
        return f"error: {event['error']}"
    result = event.get("result")
    if isinstance(result, dict) and "status" in result:
        return f"{result['status']}, agentId {result.get('agentId')!s}"
    return f"result: {json.dumps(result, ensure_ascii=False)}"


def lines_of(event: dict[str, Any]) -> list[str]:
    """The diagram's line(s) for one event (none for an event it leaves out)."""
    kind = event["kind"]
    at = f"t={event['t']}"
    call, tool, said = event.get("call"), event.get("tool"), event.get("text")
    if kind == "session.start":
        how = "interactive" if event.get("interactive") else "not interactive (claude -p)"
        return [f"CC->>Mod: {text(f'{at} session.start, {how}')}"]
    if kind == "call":
        tool_input = event.get("input")
        what = tool_input.get("description", "") if isinstance(tool_input, dict) else ""
        return [f"Model->>CC: {text(f'{at} {tool} {call} {what}'.rstrip())}"]
    if kind == "permission":
        outcome, via = event.get("outcome"), event.get("via")
        return [f"Note over CC: {text(f'{at} permission {outcome} (via {via})')}"]
    if kind == "run":
        argv = event.get("argv")
        if event.get("error"):
            outcome = f"✗ {event['error']}"
        else:
            outcome = f"exit {event.get('exit')} after {event.get('ms')} ms{lich_printed(event)}"
        if isinstance(argv, list) and argv and argv[0] == "git":
            return [f"Note over Mod: {text(f'{at} {argv_text(argv)} → {outcome}')}"]
        done = f"t={event['t'] + (event.get('ms') or 0)}"
        return [f"Mod->>Lich: {text(f'{at} {argv_text(argv)}')}", f"Lich-->>Mod: {text(f'{done} {outcome}')}"]
    if kind == "spawn":
        answer = event.get("answer")
        if isinstance(answer, dict) and "deny" in answer:
            return [f"Mod-->>CC: {text(f'{at} denies the spawn of {call}: no native agent')}"]
        return [f"Note over CC: {text(f'{at} own agent for {call} started')}"]
    if kind == "native":
        return [f"Note over CC: {text(f'{at} {tool} {call} runs natively')}"]
    if kind == "answer":
        return [f"CC-->>Model: {text(f'{at} {call} {_answer(event)}')}"]
    if kind == "toast":
        return [f"Mod->>Person: {text(f'{at} toast: {said}')}"]
    if kind == "note":
        return [f"Lich->>Model: {text(f'{at} {said}')}"]
    if kind == "footer":
        line = event.get("line") or "(no lich line)"
        return [f"Mod->>Person: {text(f'{at} footer: {line}')}"]
    if kind == "esc":
        return [f"Person->>CC: {text(f'{at} Esc')}"]
    if kind == "rewind":
        return [f"CC->>Person: {text(f'{at} Rewind panel ' + ('opened' if event.get('open') else 'closed'))}"]
    if kind == "mode":
        mode = event.get("mode")
        return [f"Person->>CC: {text(f'{at} Shift+Tab: {mode} mode')}"]
    if kind == "reload":
        asked = event.get("asked")
        held = "" if asked is None else f", asked for at {asked} ms and held for the turn"
        return [f"CC->>Mod: {text(f'{at} reload (a fresh module{held})')}"]
    if kind == "resume":
        how = str(event.get("how"))
        return [f"Person->>CC: {text(f'{at} /exit, then claude --{how}')}"]
    if kind == "notification":
        task, status = event.get("task"), event.get("status")
        return [f"CC->>Model: {text(f'{at} {task} {status}')}"]
    if kind == "prompt":
        return [f"Person->>Model: {text(f'{at} prompt: {said}')}"]
    if kind in ("host.dies", "host.start"):
        return [f"Note over Mod: {text(f'{at} session host: {kind[5:]}')}"]
    if kind == "check":
        count, footer = event.get("count"), event.get("footer")
        return [f"Note over Mod: {text(f'{at} check: counts {count}, footer {footer}')}"]
    if kind == "report":
        return [f"Note over CC: {text(f'{at} {said}')}"]
    return []


def _is_open(event: dict[str, Any]) -> bool:
    """A lich run (the arrows to lich and back): what runs side by side when calls are parallel."""
    argv = event.get("argv")
    return event["kind"] == "run" and not (isinstance(argv, list) and argv and argv[0] == "git")


def _groups(events: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The events in drawing order, as ``("one", [event])`` or ``("par", [events])``: the calls raised at
    one time, and the lich runs that overlap in time (each starts before an earlier one of them has ended),
    are each a ``par`` block, one branch an event. An event the transcript holds between the runs of a
    block is drawn just before the block."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    i = 0
    while i < len(events):
        event = events[i]
        if event["kind"] == "call":
            j = i
            while j + 1 < len(events) and events[j + 1]["kind"] == "call" and events[j + 1]["t"] == event["t"]:
                j += 1
            out.append(("par", events[i : j + 1]) if j > i else ("one", [event]))
            i = j + 1
            continue
        if _is_open(event):
            runs, between, end = [event], [], event["t"] + (event.get("ms") or 0)
            last, j = i, i + 1
            while j < len(events) and events[j]["t"] < end:
                if _is_open(events[j]):
                    runs.append(events[j])
                    between += [e for e in events[last + 1 : j] if not _is_open(e)]
                    end = max(end, events[j]["t"] + (events[j].get("ms") or 0))
                    last = j
                j += 1
            if len(runs) > 1:
                out += [("one", [e]) for e in between]
                out.append(("par", runs))
                i = last + 1
                continue
        out.append(("one", [event]))
        i += 1
    return out


def diagram(replay: Replay) -> str:
    """The sequence diagram of one replay (of one variant), without the fence."""
    out = ["sequenceDiagram"]
    out += [f"    participant {pid} as {name}" for pid, name in PARTICIPANTS]
    for shape, events in _groups(list(replay.events)):
        if shape == "one":
            out += [f"    {line}" for line in lines_of(events[0])]
            continue
        what = "calls raised at once" if events[0]["kind"] == "call" else "lich runs at the same time"
        for n, event in enumerate(events):
            label = f"t={event['t']} {what}" if n == 0 else f"t={event['t']}"
            out.append(f"    {'par' if n == 0 else 'and'} {text(label)}")
            out += [f"        {line}" for line in lines_of(event)]
        out.append("    end")
    for failure in replay.failures:
        out.append(f"    Note over Model,Person: {text(f'✗ {failure}', 200)}")
    return "\n".join(out)


def to_mermaid(replay: Replay) -> str:
    """What ``--mermaid`` prints for one file: a heading and a fenced diagram per scenario (per variant)."""
    if replay.variants:
        return "\n\n".join(to_mermaid(v) for v in replay.variants)
    status = "passed" if replay.passed else "FAILED"
    name = f" [variant: {replay.variant}]" if replay.variant is not None else ""
    heading = f"{replay.file}{name}: {replay.title} [{status}] (t: virtual ms since the scenario began)"
    return f"{heading}\n\n```mermaid\n{diagram(replay)}\n```"
