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
_STATEMENT = rf"(({IDS})(->>|-->>)({IDS}): \S.*|Note over ({IDS})(,({IDS}))?: \S.*)"
_LINE = re.compile(rf"^    (participant ({IDS}) as [^;#:]+|{_STATEMENT}|par \S.*|and \S.*|end)$")
_IN_BLOCK = re.compile(rf"^        {_STATEMENT}$")
_ENTITY = re.compile(r"#(35|59|60|62);")


def check_sequence_diagram(text: str) -> None:
    """The grammar Mermaid's sequenceDiagram reads for these lines: one statement a line, known
    participants, arrows it knows, no `;` (a statement separator) and no bare `#` (an entity code)."""
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    declared = [line.split()[1] for line in lines[1:] if line.startswith("    participant ")]
    assert declared == [pid for pid, _ in PARTICIPANTS]
    inside = False
    for line in lines[1:]:
        if inside and line.startswith("        "):
            assert _IN_BLOCK.match(line), line
        else:
            assert _LINE.match(line), line
            word = line.split()[0]
            assert inside == (word in ("and", "end")), f"{line!r}: par ... and ... end, never nested"
            inside = word in ("par", "and")
        message = line.split(": ", 1)[1] if ": " in line else line.strip().partition(" ")[2]
        bare = _ENTITY.sub("", message)
        assert ";" not in bare and "#" not in bare and "<" not in bare, line
    assert not inside, "a par block left open"


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
    statements = [line for line in text.splitlines()[1 + len(PARTICIPANTS) :]
                  if line.split()[0] not in ("par", "and", "end")]
    assert len(statements) == sum(2 if e["kind"] == "run" and e["argv"][0] != "git" else 1 for e in result.events)


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


def test_a_hash_and_a_semicolon_are_mermaid_entity_codes_in_one_pass() -> None:
    from agent_cards_simulator.scenario.mermaid import text

    assert text("Fix issue #123 in login; then <b>") == "Fix issue #35;123 in login#59; then #60;b#62;"


def test_parallel_calls_and_their_overlapping_opens_are_par_blocks() -> None:
    result = _replayed("taskstop.yaml")
    text = diagram(result)
    check_sequence_diagram(text)
    blocks = re.findall(r"^    par (.*?)\n(.*?)^    end$", text, re.S | re.M)
    assert [label for label, _ in blocks] == ["t=0 calls raised at once", "t=0 lich runs at the same time"]
    calls, opens = (body for _, body in blocks)
    assert re.findall(r"Model->>CC: t=0 Agent (\S+)", calls) == ["toolu_0001", "toolu_01Pp7e0002"]
    assert calls.count("\n    and ") == 1 and opens.count("\n    and ") == 1
    assert re.findall(r"Mod->>Lich: t=(\d+) lich open", opens) == ["0", "5"]
    assert len(re.findall(r"Lich-->>Mod: t=80[05] exit 0", opens)) == 2
    one_after_another = diagram(_replayed("esc-mid-open.yaml"))
    assert "\n    par " not in one_after_another  # a lone open is no block


def test_a_reload_held_for_the_turn_says_when_it_was_asked_for() -> None:
    from agent_cards_simulator.scenario.render import to_text

    held = Replay("held.yaml", "A reload held for the turn", (), [{"t": 9800, "kind": "reload", "asked": 2000}])
    text = diagram(held)
    check_sequence_diagram(text)
    assert "CC->>Mod: t=9800 reload (a fresh module, asked for at 2000 ms and held for the turn)" in text
    assert "reload         asked for at 2000 ms, while a turn ran: it waited for the turn to end" in to_text(held)
