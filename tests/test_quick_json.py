"""``agent_cards.quick_json`` gives ``json``'s results (and ``json``'s errors) for any input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cards import quick_json

ROOT = Path(__file__).resolve().parents[1]

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def outcome(parse: object, raw: str | bytes) -> tuple[str, object]:
    try:
        return "value", repr(parse(raw))  # type: ignore[operator]
    except Exception as error:
        return type(error).__name__, str(error)


@given(values)
def test_dumps_is_json_dumps(value: object) -> None:
    assert quick_json.dumps(value) == json.dumps(value)
    assert quick_json.dumps(value, separators=(",", ":")) == json.dumps(value, separators=(",", ":"))


@given(values, st.sampled_from(["", " ", "\n\t ", "\r"]))
def test_loads_is_json_loads(value: object, space: str) -> None:
    text = space + json.dumps(value) + space
    for raw in (text, text.encode("utf-8"), text.encode("utf-16"), text.encode("utf-32-le")):
        assert outcome(quick_json.loads, raw) == outcome(json.loads, raw)


@given(st.binary(max_size=12) | st.text(max_size=12))
def test_loads_fails_as_json_fails(raw: str | bytes) -> None:
    assert outcome(quick_json.loads, raw) == outcome(json.loads, raw)


@pytest.mark.parametrize("raw", [
    b"", b"{", b"{} x", b'{"a": 1}\n', b"\xef\xbb\xbf{}", "\ufeff{}", b"NaN", b"[-Infinity]", b'"\xff"',
    b"[" * 100_000, b"\x00{}", b'{"a": "\\ud800"}', "{\"a\": \"\udc80\"}",
    '"a\nb"', b'["\t"]',  # a control character inside a string: json refuses it
])
def test_odd_inputs(raw: str | bytes) -> None:
    assert outcome(quick_json.loads, raw) == outcome(json.loads, raw)


@pytest.mark.parametrize("value", [{1: "a"}, {"a": float("nan")}, [object()], {"a": (1, 2)}, [[[[]]]], {},
                                   {(1, 2): "a"}])  # a key json refuses, not one it skips
def test_odd_values(value: object) -> None:
    assert outcome(quick_json.dumps, value) == outcome(json.dumps, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("module", ["agent_cards.quick_json", "agent_cards_simulator.lich.quick"])
def test_it_loads_no_json_nor_re_until_an_error(module: str) -> None:
    code = (
        # the source tree as fake-lich runs from it: the simulator folder is the package agent_cards_simulator
        "import sys; sys.path.insert(0, sys.argv[1]); package = type(sys)('agent_cards_simulator')\n"
        "package.__path__ = [sys.argv[1] + '/simulator']; sys.modules['agent_cards_simulator'] = package\n"
        f"import {module} as quick\n"
        "quick.loads(b'{\"a\": [1, true, null]}'); quick.dumps({'a': ['b']})\n"
        "print(sorted(m for m in ('json', 're') if m in sys.modules))\n"
        "for raw in (b'{not json', b'[1] 2', b'', b'[' * 100000):\n"
        "    try:\n"
        "        quick.loads(raw)\n"
        "    except (ValueError, RecursionError) as error:\n"
        "        print(type(error).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT)], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["[]", "JSONDecodeError", "JSONDecodeError", "JSONDecodeError", "RecursionError"]


@given(values)
def test_the_fake_lich_copy_is_json_too(value: object) -> None:
    from agent_cards_simulator.lich import quick

    for ascii_only in (True, False):
        assert quick.dumps(value, ensure_ascii=ascii_only, separators=(",", ":")) == json.dumps(
            value, ensure_ascii=ascii_only, separators=(",", ":")
        )
    assert outcome(quick.loads, json.dumps(value)) == outcome(json.loads, json.dumps(value))


@pytest.mark.parametrize("raw", [
    b'{"a": [1, true, null]}', ' \t\n\r{"a": "\\u00e9"} \r\n', b"\n[-1.5e3, \"x\"]\t",
    b"[NaN, Infinity, -Infinity]", b'"\xed\xa0\x80"',  # json's constants; a lone surrogate
])
def test_the_fast_path_reads_ordinary_input_without_json(raw: str | bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process (where a mutant of the module is the one imported, unlike the subprocess above), any
    use of ``json`` for input the accelerator reads, whitespace around it included, fails the test."""
    expected = repr(json.loads(raw))  # repr: NaN is not equal to itself
    monkeypatch.setitem(sys.modules, "json", None)  # ``import json`` now raises ImportError
    assert repr(quick_json.loads(raw)) == expected


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")])
def test_the_fast_path_writes_without_json(ascii_only: bool, separators: tuple[str, str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"a": ["b", 1, None, True, 2.5], "é": {}, "n": [float("nan"), float("inf"), -float("inf")]}
    expected = json.dumps(value, separators=separators, ensure_ascii=ascii_only)
    monkeypatch.setitem(sys.modules, "json", None)
    assert quick_json.dumps(value, separators, ensure_ascii=ascii_only) == expected
    assert quick_json.dumps(value, separators, ensure_ascii=ascii_only) == expected  # the kept encoder too


@given(values)
def test_dump_writes_what_json_dump_writes(value: object) -> None:
    for separators in ((", ", ": "), (",", ":")):
        ours, theirs = io.StringIO(), io.StringIO()
        quick_json.dump(value, ours, separators)
        json.dump(value, theirs, separators=separators)
        assert ours.getvalue() == theirs.getvalue()
    ours, theirs = io.StringIO(), io.StringIO()
    quick_json.dump(value, ours)
    json.dump(value, theirs)
    assert ours.getvalue() == theirs.getvalue()
