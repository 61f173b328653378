"""agent_cards.record: the one way the project writes a record, immutable or mutable."""

from __future__ import annotations

import dataclasses

import pytest

from agent_cards.record import Record, Value, field, plain, replace


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
    class Titled(Settings):
        """Only methods: the same fields as its base."""

        def title(self) -> str:
            return self.name.title()

    class Tagged(Log):
        extra: str = "x"

    assert Titled("ada").title() == "Ada" and Titled("ada") == Titled("ada") != Settings("ada")
    tagged = Tagged(["a"], 0, "y")
    assert (tagged.lines, tagged.extra, tagged.seen) == (["a"], "y", 1)  # the base's __post_init__ still runs
    assert Tagged().lines == [] and Tagged().extra == "x"


class Two(Value):
    a: int
    b: int


class Some(Value):
    a: int
    b: int = 2


class Both(Value):
    a: int = 1
    b: int = 2


@pytest.mark.parametrize("record", [Two, Some, Both])
@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_a_call_by_position_fits_the_fields_as_a_dataclass_call_does(record: type[Value], count: int) -> None:
    like = dataclasses.make_dataclass(
        "Like", [(name, int, dataclasses.field(default=record._defaults[name])) if name in record._defaults
                 else (name, int) for name in record._fields], frozen=True)
    args = tuple(range(10, 10 + count))
    try:
        expected = dataclasses.asdict(like(*args))
    except TypeError:
        with pytest.raises(TypeError, match=r"^(Two|Some|Both)\(\) (missing required argument|takes 2 arguments)"):
            record(*args)
    else:
        assert plain(record(*args)) == expected


def test_a_record_passes_its_subclasses_on_to_another_bases_init_subclass() -> None:
    made: list[type] = []

    class Registered:
        def __init_subclass__(cls, **kwargs: object) -> None:
            super().__init_subclass__(**kwargs)
            made.append(cls)

    class Entry(Value, Registered):
        name: str

    assert made == [Entry] and Entry("x").name == "x"


@pytest.mark.parametrize(("args", "kwargs", "why"), [
    ((), {}, "Two() missing required argument 'a'"),
    ((), {"b": 1}, "Two() missing required argument 'a'"),
    ((1,), {}, "Two() missing required argument 'b'"),
    ((1, 2, 3), {}, "Two() takes 2 arguments but 3 were given"),
    ((1, 2), {"a": 3}, "Two() got multiple values for argument 'a'"),
    ((1,), {"c": 3}, "Two() got an unexpected keyword argument 'c'"),
])
def test_a_call_that_does_not_fit_is_refused_as_python_words_it(args: tuple[int, ...], kwargs: dict[str, int],
                                                                 why: str) -> None:
    with pytest.raises(TypeError) as refused:
        Two(*args, **kwargs)
    assert str(refused.value) == why


class Three(Value):
    a: int
    b: int
    c: int


def test_the_field_named_missing_is_the_first_neither_given_nor_defaulted() -> None:
    with pytest.raises(TypeError, match=r"^Three\(\) missing required argument 'c'$"):
        Three(1, b=2)  # type: ignore[call-arg]


def test_a_value_is_immutable_and_says_so() -> None:
    value = Two(1, 2)
    with pytest.raises(AttributeError) as assigned:
        value.a = 3  # type: ignore[misc]
    assert str(assigned.value) == "cannot assign to field 'a': a Two is immutable"
    with pytest.raises(AttributeError) as deleted:
        del value.b
    assert str(deleted.value) == "cannot delete field 'b': a Two is immutable"


def test_values_of_two_classes_are_never_equal_whatever_their_fields() -> None:
    assert (Two(1, 2) == Some(1, 2)) is False and (Two(1, 2) != Some(1, 2)) is True
    assert (Two(1, 2) == (1, 2)) is False


def test_plain_leaves_what_is_no_record_no_sequence_and_no_mapping_as_it_is() -> None:
    other = object()
    assert plain(other) is other and plain({"k": (Two(1, 2), other)}) == {"k": [{"a": 1, "b": 2}, other]}
    assert [plain(scalar) for scalar in ("x", 0, True, 1.5, None)] == ["x", 0, True, 1.5, None]
