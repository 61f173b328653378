"""agent_cards/branch.py: an isolated worker's branch, ``subagent/<slug>-<suffix>``.

The slug is made as lich's worktree dialog slugs a typed name."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cards.branch import FALLBACK, PREFIX, branch_name, slug, suffix

TABLE_ID = "toolu_01QxW7zAB12"
ASTRAL = "𝐀"  # U+1D400, a letter (Lu) outside the BMP: 2 UTF-16 units
HEX4 = re.compile(r"[0-9a-f]{4}")


def units(text: str) -> int:
    """Length in UTF-16 code units, as lich's JavaScript counts it."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def reference_slug(description: str | None) -> str:
    """lich's worktree-dialog slug step by step, on UTF-16 code units (as the dialog counts), with this
    project's one departure:
    a cut that would leave half of a surrogate pair drops that half."""
    lowered = (description or "").lower()
    words = [
        "".join(group)
        for keep, group in itertools.groupby(lowered, key=lambda c: unicodedata.category(c)[0] in "LN")
        if keep
    ]
    picked: list[str] = []
    length = 0
    for word in words:
        grown = units(word) if not picked else length + 1 + units(word)
        has_minimum = len(picked) >= 2 and length >= 10
        if len(picked) == 5 or (grown > 40 and has_minimum):
            break
        picked.append(word)
        length = grown
    code_units = "-".join(picked).encode("utf-16-le", "surrogatepass")[: 40 * 2]
    if len(code_units) >= 2 and 0xD800 <= int.from_bytes(code_units[-2:], "little") <= 0xDBFF:
        code_units = code_units[:-2]  # the departure: no lone high surrogate
    return code_units.decode("utf-16-le", "surrogatepass").rstrip("-") or "agent"


def reference_suffix(tool_use_id: str) -> str | None:
    """The last four ASCII letters or digits, lower-cased; None when the id has none."""
    alnum = re.sub(r"[^A-Za-z0-9]", "", tool_use_id)
    return alnum[-4:].lower() or None


# --- the spec's test table -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (
            "Investigate why the websocket reconnect loop never stops retrying",
            "investigate-why-the-websocket-reconnect",
        ),
        ("a b c d e f g", "a-b-c-d-e"),
        ("Corrigir autenticação do usuário", "corrigir-autenticação-do-usuário"),
        ("x" * 50, "x" * 40),
        ("!!! ???", "agent"),
        ("", "agent"),
        ("Fix the auth flow", "fix-the-auth-flow"),
    ],
)
def test_slug_table(description: str, expected: str) -> None:
    assert slug(description) == expected
    assert branch_name(description, TABLE_ID) == f"subagent/{expected}-ab12"


@pytest.mark.parametrize(
    ("tool_use_id", "expected"),
    [
        ("toolu_01QxW7zAB12", "ab12"),
        ("toolu_01XyZ_9Q", "yz9q"),
        ("ABCD", "abcd"),
        ("toolu_X_y-Z.9", "xyz9"),
    ],
)
def test_suffix_table(tool_use_id: str, expected: str) -> None:
    assert suffix(tool_use_id) == expected


def test_the_table_branches() -> None:
    assert branch_name("Fix the auth flow", "toolu_01QxW7zAB12") == "subagent/fix-the-auth-flow-ab12"
    assert branch_name("Fix the auth flow", "toolu_01XyZ_9Q") == "subagent/fix-the-auth-flow-yz9q"


def test_a_missing_description_is_empty() -> None:
    assert slug(None) == FALLBACK == "agent"
    assert branch_name(None, TABLE_ID) == "subagent/agent-ab12"


# --- the rules behind the table -----------------------------------------------------------------------


def test_a_first_word_over_forty_is_picked_then_cut() -> None:
    assert slug("y" * 45 + " tail") == "y" * 40


def test_words_are_added_past_forty_while_the_minimum_is_unmet() -> None:
    # one word of 9: the minimum (2 words, 10 units) is unmet, so the 35-unit second word is still picked
    # and the final cut bounds the result
    assert slug("abcdefghi " + "z" * 35) == "abcdefghi-" + "z" * 30


def test_the_minimum_met_stops_at_forty() -> None:
    # "alpha-bravo" (11 units, 2 words) meets the minimum; a word that would pass 40 stops the walk
    assert slug("alpha bravo " + "c" * 30) == "alpha-bravo"
    assert slug("alpha bravo " + "c" * 28) == "alpha-bravo-" + "c" * 28  # exactly 40: kept
    # exactly the minimum: 2 words of 10 units together ("abcd-efghi") stop before a word that passes 40
    assert slug("abcd efghi " + "c" * 30) == "abcd-efghi"


def test_letters_and_digits_of_any_script_are_kept() -> None:
    assert slug("Отчёт по задаче 42") == "отчёт-по-задаче-42"
    assert slug("修复登录 问题") == "修复登录-问题"
    assert slug("step Ⅻ and ½") == "step-ⅻ-and-½"  # Nl and No are numbers too
    assert slug("fix:the/auth\tflow!") == "fix-the-auth-flow"


def test_a_trailing_hyphen_left_by_the_cut_is_stripped() -> None:
    assert slug("a" * 39 + " bbbb") == "a" * 39


# --- UTF-16 units and surrogates ----------------------------------------------------------------------


def test_astral_letters_count_two_units() -> None:
    assert slug(ASTRAL * 30) == ASTRAL * 20  # 40 units, 20 characters
    assert units(slug(ASTRAL * 30)) == 40


def test_the_first_astral_letter_counts_two_units_and_the_last_bmp_letter_one() -> None:
    """U+10000 (a Linear B syllable, Lo) is the first character UTF-16 writes as a surrogate pair; U+FFDC (a
    halfwidth Hangul letter, Lo) is the last letter inside the BMP (what follows it there is no letter)."""
    first_astral, last_bmp = "\U00010000", "\uffdc"
    assert unicodedata.category(first_astral) == unicodedata.category(last_bmp) == "Lo"
    assert slug(first_astral * 30) == first_astral * 20  # 40 units
    assert slug(last_bmp * 45) == last_bmp * 40


def test_a_cut_inside_a_surrogate_pair_drops_the_whole_character() -> None:
    # "aaaaaaaaaa-" is 11 units; 14 astral letters make 39, the 15th would straddle unit 40
    result = slug("a" * 10 + " " + ASTRAL * 25)
    assert result == "a" * 10 + "-" + ASTRAL * 14
    assert units(result) == 39
    assert not has_lone_surrogate(result)
    result.encode("utf-8")  # valid UTF-8: raises on a lone surrogate


def test_a_cut_right_after_a_hyphen_and_before_a_pair_strips_the_hyphen() -> None:
    result = slug("a" * 38 + " " + ASTRAL * 3)  # "a"*38 + "-" is 39 units; the next letter needs 2
    assert result == "a" * 38


def test_astral_units_decide_when_the_walk_stops() -> None:
    # 2 words of 5 astral letters each: 10 + 1 + 10 = 21 units; a third 10-unit word makes 32, a fourth 43
    word = ASTRAL * 5
    assert slug(" ".join([word] * 4)) == "-".join([word] * 3)


def test_lone_surrogates_in_the_description_are_not_letters() -> None:
    assert slug("\ud800fix\udc00 the auth") == "fix-the-auth"
    assert slug("\ud83d") == "agent"


# --- the suffix -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tool_use_id", "expected"), [("x_1", "x1"), ("Q", "q"), ("é-7-ü", "7"), ("ab", "ab")])
def test_an_id_with_fewer_than_four_ascii_alnum_keeps_what_it_has(tool_use_id: str, expected: str) -> None:
    assert suffix(tool_use_id) == expected
    assert branch_name("Fix the auth flow", tool_use_id) == f"subagent/fix-the-auth-flow-{expected}"


@pytest.mark.parametrize("tool_use_id", ["", "_-_", "éèü", "١٢٣٤", "ＡＢＣＤ", "\ud800", "😀😀"])
def test_an_id_without_ascii_alnum_gets_four_hex_digits(tool_use_id: str) -> None:
    # non-ASCII digits (Arabic-Indic, fullwidth) are not ASCII letters or digits
    got = suffix(tool_use_id)
    assert HEX4.fullmatch(got), got
    assert suffix(tool_use_id) == got  # stable for one id
    assert branch_name("Fix", tool_use_id) == f"subagent/fix-{got}"


def test_the_hash_fallback_differs_from_id_to_id() -> None:
    ids = ["", "_", "__", "-", "é", "ü", "éé", "😀", "_-_", "…"]
    assert len({suffix(i) for i in ids}) == len(ids)


# --- every branch is a valid git ref name -----------------------------------------------------------------

GIT = shutil.which("git")

any_text = st.lists(
    st.one_of(
        st.characters(codec=None, exclude_categories=()),  # every category, lone surrogates included
        st.sampled_from([ASTRAL, "😀", "é", "-", "/", ".", "..", "@{", "~", "^", ":", "\\", " ", "\t", "\x00", "\x7f"]),
        st.characters(min_codepoint=0x10000, max_codepoint=0x1FFFF),
        st.text(alphabet="abcXYZ019", min_size=1, max_size=12),  # words long enough to reach the 40-unit cut
        st.text(alphabet=[ASTRAL, "𝒳", "𠀀"], min_size=1, max_size=12),  # astral words: cuts inside a pair
    ),
    max_size=40,
).map("".join)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(description=st.one_of(st.none(), any_text, st.text(max_size=200)), tool_use_id=any_text)
def test_every_branch_is_a_valid_git_branch_name(description: str | None, tool_use_id: str) -> None:
    name = branch_name(description, tool_use_id)
    assert name.startswith(PREFIX)
    assert not has_lone_surrogate(name)
    head, sep, tail = name[len(PREFIX) :].rpartition("-")
    assert sep == "-"
    assert head == slug(description) == reference_slug(description)
    assert 1 <= units(head) <= 40
    assert not head.startswith("-") and not head.endswith("-") and "--" not in head
    assert len(head.split("-")) <= 5
    assert all(unicodedata.category(c)[0] in "LN" for c in head.replace("-", ""))
    expected_suffix = reference_suffix(tool_use_id)
    if expected_suffix is None:
        assert HEX4.fullmatch(tail), tail
    else:
        assert tail == expected_suffix
    assert GIT is not None
    checked = subprocess.run(
        [GIT, "check-ref-format", "--branch", name], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, (name, checked.stderr)
    assert checked.stdout.strip() == name


@given(description=any_text)
@settings(max_examples=300)
def test_slug_matches_the_reference_walk(description: str) -> None:
    assert slug(description) == reference_slug(description)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize(
    "bad", ["subagent/fix the-ab12", "subagent/a..b-ab12", "subagent/a@{b-ab12", "subagent/a\x01-ab12"]
)
def test_the_git_check_refuses_bad_names(bad: str) -> None:
    """The oracle the property relies on does refuse: a space, a double dot, ``@{``, a control character."""
    assert GIT is not None
    refused = subprocess.run([GIT, "check-ref-format", "--branch", bad], capture_output=True, check=False)
    assert refused.returncode != 0, bad
