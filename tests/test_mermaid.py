"""``agent-cards replay --mermaid``: a valid sequence diagram that says what the transcript says."""

from __future__ import annotations

import re
from pathlib import Path

from agent_cards_simulator.scenario.mermaid import PARTICIPANTS, diagram, to_mermaid
from agent_cards_simulator.scenario.reader import read
from agent_cards_simulator.scenario.replay import Replay, replay

ROOT = Path(__file__).resolve().parents[1]
IDS = "|".join(pid for pid, _ in PARTICIPANTS)
#: The lines a Mermaid sequence diagram may hold, as this module writes them.
_LINE = re.compile(
    rf"^    (participant ({IDS}) as [^;#:]+|({IDS})(->>|-->>)({IDS}): \S.*|Note over ({IDS})(,({IDS}))?: \S.*)$"
)


def check_sequence_diagram(text: str) -> None:
    """The grammar Mermaid's sequenceDiagram reads for these lines: one statement a line, known
    participants, arrows it knows, no `;` (a statement separator) and no bare `#` (an entity code)."""
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    declared = [line.split()[1] for line in lines[1:] if line.startswith("    participant ")]
    assert declared == [pid for pid, _ in PARTICIPANTS]
    for line in lines[1:]:
        assert _LINE.match(line), line
        message = line.split(": ", 1)[1] if ": " in line else ""
        assert ";" not in message.replace("#59;", "").replace("#35;", "").replace("#lt;", "").replace("#gt;", "")
        assert not re.search(r"#(?!59;|35;|lt;|gt;)", message), line


def _replayed(name: str) -> Replay:
    return replay(read(ROOT / "scenarios" / name))


def test_every_shipped_scenario_makes_a_valid_diagram() -> None:
    for file in sorted((ROOT / "scenarios").rglob("*.yaml")):
        if file.name == "clauses.yaml":
            continue
        result = replay(read(file))
        for one in result.variants or [result]:
            check_sequence_diagram(diagram(one))


def test_the_diagram_says_what_the_transcript_says() -> None:
    result = _replayed("esc-mid-open.yaml")
    text = diagram(result)
    for event in result.events:
        t = f"t={event['t']}"
        if event["kind"] == "call":
            assert re.search(rf"Model->>CC: {t} Agent {event['call']}", text)
        if event["kind"] == "answer":
            arm = next(a for a in ("deny", "error", "result") if a in event)
            assert f"CC-->>Model: {t} {event['call']} {arm if arm != 'result' else ''}".rstrip() in text
        if event["kind"] == "esc":
            assert f"Person->>CC: {t} Esc" in text
        if event["kind"] == "note":
            assert f"Lich->>Model: {t} [lich]" in text
        if event["kind"] == "run":
            assert f"Mod->>Lich: {t} lich {event['argv'][1]}" in text  # the open, then the footer's polls
    assert text.count("\n") + 1 == 1 + len(PARTICIPANTS) + sum(
        2 if e["kind"] == "run" and e["argv"][0] != "git" else 1 for e in result.events
    )


def test_toasts_footers_and_reloads_are_shown_at_their_time() -> None:
    text = diagram(_replayed("oversize-task.yaml"))
    assert 'Mod->>Person: t=0 toast: Agent ran natively: its task is 8193 bytes' in text
    assert "Mod->>Person: t=800 footer: lich: 1 worker" in text
    reload_text = diagram(_replayed("reload.yaml"))
    assert re.search(r"CC->>Mod: t=\d+ reload", reload_text)


def test_the_printed_form_is_a_fenced_block_per_variant() -> None:
    result = _replayed("take/old-lich-oversize.yaml")
    printed = to_mermaid(result)
    blocks = re.findall(r"```mermaid\n(.*?)\n```", printed, re.S)
    assert len(blocks) == 2
    for block in blocks:
        check_sequence_diagram(block)
    assert "[variant: from a subagent branch, native and silent]" in printed
