"""Every toast fits Claude Code's toast box, with the longest realistic slots, what happened and the fix first.

The box, measured on Claude Code 2.1.328's interactive screen (tmux, 80 and 200 columns alike): 44 columns
under the plugin's name, 40 of text, 3 lines; a word that does not fit starts the next line, a longer word
is broken, the rest is cut with "…" (``agent_cards.texts.TOAST_WIDTH``, ``TOAST_LINES``).
"""

from __future__ import annotations

import re
import string

import pytest

from agent_cards.texts import PERSON, TOAST_LINES, TOAST_WIDTH, fits, person_text, toast_lines, toast_text

TOASTS = sorted(k for k in PERSON if k.startswith(("toast.", "bridge.")))

#: The longest each slot gets in practice: a description at the Agent tool's 3-5 words and more, a failed
#: start quoting a long $LICH_BIN twice, an isolated card's label, a pyenv interpreter.
LONGEST = {
    "description": "Investigate why the websocket reconnect loop never stops",
    "reason": '$.process.run(/home/dev/.local/share/lich/bin/lich) failed to start: ENOENT: Executable not found '
              'in $PATH: "/home/dev/.local/share/lich/bin/lich"',
    "label": "subagent/investigate-why-the-websocket-reconnect-ab12",
    "bytes": 1_048_576,
    "limit": 8192,
    "rule": "Agent(general-purpose)",
    "python": "/home/dev/.pyenv/versions/3.10.4/bin/python3",
}
#: What each toast says first: the consequence, or the fix.
FIRST = {"bridge.no_python": "set AGENT_CARDS_PYTHON", "bridge.old_python": "set AGENT_CARDS_PYTHON",
         "toast.plan_mode": "agent ran natively"}


def test_the_layout_is_the_measured_one() -> None:
    """What 2.1.328 drew for the old missing-Python toast: a long word starts its own line and is broken."""
    text = ("agent cards could not start Python (/tmp/pytest-of-root/pytest-138/test_probe_80_0/sandbox/"
            "no-such-python:  agent-cards: ...), so Agent calls run inside Claude Code this session.")
    assert toast_lines(text)[:3] == [
        "agent cards could not start Python",
        "(/tmp/pytest-of-root/pytest-138/test_pro",
        "be_80_0/sandbox/no-such-python:",
    ]
    assert not fits(text)


@pytest.mark.parametrize("key", TOASTS)
def test_every_toast_fits_with_its_longest_slots(key: str) -> None:
    shown = toast_text(key, **LONGEST)
    lines = toast_lines(shown)
    assert len(lines) <= TOAST_LINES, lines
    assert all(len(line) <= TOAST_WIDTH for line in lines)


@pytest.mark.parametrize("key", TOASTS)
def test_the_consequence_and_the_fix_come_first_and_are_never_cut(key: str) -> None:
    template = PERSON[key]
    fixed = template[: template.index("{")] if "{" in template else template
    shown = toast_text(key, **LONGEST)
    assert shown.startswith(fixed)  # only slots are cut
    first = FIRST.get(key, "ran natively")
    assert first in shown[:TOAST_WIDTH].lower() or first in shown[:TOAST_WIDTH], shown


@pytest.mark.parametrize("key", TOASTS)
def test_a_toast_that_fits_is_not_cut(key: str) -> None:
    short = {name: "x" for _, name, _, _ in string.Formatter().parse(PERSON[key]) if name}
    assert toast_text(key, **short) == person_text(key, **short)


#: Slots far past anything realistic, in one word and in many: the toast still fits, whatever a caller
#: passes (the catalog does not know which rule, label or reason a host hands it).
HUGE = [("one word", "x" * 300), ("many words", " ".join(["word"] * 80))]


@pytest.mark.parametrize("key", TOASTS)
@pytest.mark.parametrize("huge", [h for _, h in HUGE], ids=[name for name, _ in HUGE])
def test_every_toast_fits_whatever_its_text_slots_hold(key: str, huge: str) -> None:
    values: dict[str, object] = {**LONGEST, **{name: huge for name in LONGEST if isinstance(LONGEST[name], str)}}
    shown = toast_text(key, **values)
    lines = toast_lines(shown)
    assert len(lines) <= TOAST_LINES, lines
    assert all(len(line) <= TOAST_WIDTH for line in lines)


def test_a_slot_with_no_room_for_one_character_is_cut_to_the_ellipsis_alone() -> None:
    """The description is cut before the rule (CUT_FIRST): while a rule too long for the box stands, not even
    one character of the description fits, so it is cut to "…" alone, and the rule is cut next."""
    shown = toast_text("toast.hook_rule", description="x" * 300, rule="y" * 300)
    assert shown.endswith('…. "…"'), shown
    assert fits(shown)


@pytest.mark.parametrize("key", TOASTS)
def test_an_empty_slot_stays_empty_when_the_others_are_cut(key: str) -> None:
    """Only a slot with text in it is cut: an empty one is never shown as "…", which would say text was cut."""
    template = PERSON[key]
    for empty in sorted(name for name in LONGEST if isinstance(LONGEST[name], str) and f"{{{name}}}" in template):
        values: dict[str, object] = {**LONGEST, **{n: "x" * 300 for n in LONGEST if isinstance(LONGEST[n], str)}}
        values[empty] = ""
        shown = toast_text(key, **values)
        pattern = "".join(
            re.escape(literal) + ("" if name is None else "" if name == empty else "(?:.*)")
            for literal, name, _, _ in string.Formatter().parse(template)
        )
        assert re.fullmatch(pattern, shown, flags=re.DOTALL), (empty, shown)


def test_the_cut_point_of_a_slot_whose_wrap_is_not_monotone_is_pinned() -> None:
    """Runs of spaces and words broken at the box's width make the wrap non-monotone in a prefix's length;
    the binary search's cut for such slots is the one docs/decisions.md describes (a longer prefix of the
    description would fit too)."""
    values = {
        "label": " xx//",
        "description": "b z-xzyyxéx yyx-zxxa  xz  -bb-xxyyébyé-yxbz- a/yaa/ a- -bx  ",
        "reason": " éb  aaabé b--abéyéabyé/-y  - zaz y/é -x/zx xé- xb/y  b/aa  ",
    }
    shown = toast_text("toast.not_reached", **values)
    assert shown == ('lich failed: agent ran natively. "b z-xzyyxéx yyx-zxxa  xz  -bb-xxyyébyé-yxb…" '
                     'did not reach card "…": …')
    longer = 'lich failed: agent ran natively. "b z-xzyyxéx yyx-zxxa  xz  -bb-xxyyébyé-yxbz- a/yaa/ a- -b…" ' \
             'did not reach card "…": …'
    assert fits(shown) and fits(longer)


def test_a_toast_that_cannot_fit_is_still_its_text_with_every_slot_cut() -> None:
    """Only the text slots are cut: a number too long for the box (no real task has a size this long) leaves
    a toast that cannot fit, and toast_text still gives its text, every text slot cut, for the host to show."""
    size = 10**150
    shown = toast_text("toast.oversize", bytes=size, limit=8192, description="x" * 300)
    assert shown == f'Agent ran natively: its task is {size} bytes, over lich\'s 8192-byte limit. "…"'
    assert not fits(shown)
