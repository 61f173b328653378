"""The translated agent texts: same keys, same slots, the literals kept, and the language matching."""

from __future__ import annotations

import pytest

from agent_cards import texts
from agent_cards.languages import TRANSLATIONS

LITERALS = ("[lich]", "send_to_session", "lich send", "SendMessage", "wait_for_answer", "TaskStop", "agentId")
# The command hook's stop commands: kept whole, quotes and slot included, so the model can run them as written.
COMMANDS = ('"$LICH_BIN" close {name}', '"$LICH_BIN" control {name} abort')
KEPT_IN_ENGLISH = ("task notification", "lich", "Agent")
SAMPLE_LABEL = "fix-login-β"
SAMPLES: dict[str, str] = {
    "label": SAMPLE_LABEL,
    "path": "/repo/.worktrees/fix-login",
    "branch": "lich/fix-login",
    "status": "pending",
    "reason": "no such session",
    "answer": "Done: the login form validates again.",
    "name": "session-2-9f81",
    "program": "lich",
}

CASES = [(lang, key) for lang in sorted(TRANSLATIONS) for key in sorted(texts.AGENT)]


def test_exactly_the_seven_languages_are_offered() -> None:
    assert {texts.ENGLISH, *TRANSLATIONS} == {"en", "pt-BR", "zh-CN", "es", "ja", "ko", "ru"}


@pytest.mark.parametrize("lang", sorted(TRANSLATIONS))
def test_each_language_has_exactly_the_english_keys(lang: str) -> None:
    assert set(TRANSLATIONS[lang]) == set(texts.AGENT)


@pytest.mark.parametrize(("lang", "key"), CASES)
def test_each_translation_has_the_english_slots(lang: str, key: str) -> None:
    assert texts.slots(TRANSLATIONS[lang][key]) == texts.slots(texts.AGENT[key])


@pytest.mark.parametrize(("lang", "key"), CASES)
def test_each_translation_keeps_the_literals(lang: str, key: str) -> None:
    english = texts.AGENT[key]
    translated = TRANSLATIONS[lang][key]
    for literal in (*LITERALS, *COMMANDS, *KEPT_IN_ENGLISH):
        if literal in english:
            assert literal in translated, f"{lang} {key} lost {literal!r}"


def test_the_commands_are_checked_where_english_has_them() -> None:
    keys = {command: {key for key, text in texts.AGENT.items() if command in text} for command in COMMANDS}
    assert keys == {
        COMMANDS[0]: {"hook.launched.shared"},
        COMMANDS[1]: {"hook.launched.isolated"},
    }


@pytest.mark.parametrize(("lang", "key"), CASES)
def test_each_translation_formats_and_keeps_the_label(lang: str, key: str) -> None:
    values = {name: SAMPLES[name] for name in texts.slots(texts.AGENT[key])}
    text = TRANSLATIONS[lang][key].format(**values)
    for name, value in values.items():
        assert value in text, f"{lang} {key} lost the {name}"
    if "label" in values:
        assert f'"{SAMPLE_LABEL}"' in text


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        (None, "en"),
        ("", "en"),
        ("xx", "en"),
        ("fr", "en"),
        ("en", "en"),
        ("ja", "ja"),
        ("JA", "ja"),
        ("pt_BR", "pt-BR"),
        ("pt_BR.UTF-8", "pt-BR"),
        ("pt", "pt-BR"),
        ("es-MX", "es"),
        ("zh", "zh-CN"),
        ("zh-Hans", "zh-CN"),
        ("zh_CN.UTF-8", "zh-CN"),
        ("zh-TW", "en"),
        ("zh-MO", "en"),  # Macau writes Traditional Chinese
        ("zh_MO.UTF-8", "en"),
        ("zh-Hant-HK", "en"),
        ("zh-HK", "en"),  # Hong Kong writes Traditional Chinese
        ("zh-Hant", "en"),  # the Traditional script, named alone
        ("zh_Hant_TW", "en"),
        ("ko-KR", "ko"),
        ("ru_RU@euro", "ru"),
    ],
)
def test_match_language(tag: str | None, expected: str) -> None:
    assert texts.match_language(tag) == expected


def test_agent_text_reads_japanese() -> None:
    text = texts.agent_text("ja", "context.shared", label=SAMPLE_LABEL, path="/repo")
    assert any("\u3040" <= ch <= "\u30ff" for ch in text)  # hiragana or katakana
    assert "send_to_session" in text
    assert "[lich]" in text
    assert f'"{SAMPLE_LABEL}"' in text


def test_agent_text_falls_back_to_english() -> None:
    english = texts.agent_text("fr", "deny.spawn", label=SAMPLE_LABEL)
    assert english == texts.AGENT["deny.spawn"].format(label=SAMPLE_LABEL)


@pytest.mark.parametrize("catalog", ["AGENT", "PERSON"])
def test_every_english_text_of_the_catalog_says_something(catalog: str) -> None:
    """An empty text would reach the agent or the person as a blank answer or toast."""
    blank = [key for key, text in getattr(texts, catalog).items() if not text.strip()]
    assert blank == []
