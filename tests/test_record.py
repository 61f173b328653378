"""agent_cards.record: the one way the project writes a record, immutable or mutable."""

from __future__ import annotations

import pytest

from agent_cards.record import Record, Value, field, replace


class Settings(Value):
    name: str
    env: dict[str, str] = field(default_factory=lambda: {"LANG": "en"})
    tags: tuple[str, ...] = ()


class Log(Record):
    lines: list[str] = field(default_factory=list)
    seen: int = 0

    def __post_init__(self) -> None:
        self.seen += 1


def test_a_default_factory_makes_a_fresh_value_for_each_record() -> None:
    one, two = Settings("a"), Settings(name="b")
    assert one.env == two.env == {"LANG": "en"}
    one.env["LANG"] = "fr"  # one record's default is its own
    assert two.env == {"LANG": "en"} and Settings("c").env == {"LANG": "en"}
    given = {"LANG": "de"}
    assert Settings("d", given).env is given  # a value given is kept as it is


def test_a_default_factory_runs_before_the_class_own_post_init() -> None:
    first, second = Log(), Log()
    first.lines.append("x")
    assert second.lines == [] and first.seen == second.seen == 1


def test_replace_copies_with_fields_changed() -> None:
    base = Settings("a", {"LANG": "en"}, ("x",))
    changed = replace(base, name="b")
    assert changed == Settings("b", {"LANG": "en"}, ("x",)) and base.name == "a"
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        replace(base, nope=1)


def test_a_subclass_keeps_its_base_fields_and_adds_its_own() -> None:
    class Named(Settings):
        """Only methods: the same fields as its base."""

        def title(self) -> str:
            return self.name.title()

    class Tagged(Log):
        extra: str = "x"

    assert Named("ada").title() == "Ada" and Named("ada") == Named("ada") != Settings("ada")
    tagged = Tagged(["a"], 0, "y")
    assert (tagged.lines, tagged.extra, tagged.seen) == (["a"], "y", 1)  # the base's __post_init__ still runs
    assert Tagged().lines == [] and Tagged().extra == "x"
