"""``json.loads`` and ``json.dumps`` for the command hook's path, without importing ``json``.

Also used by ``fake-lich`` (``agent_cards_simulator.lich``), whose start-up every real-process replay pays: one copy
of this, standard library only, for both.

``import json`` loads ``re`` (and with it ``enum``, ``functools``, ``collections``) and compiles its
patterns: on its own about as long as a bare interpreter's start-up (``python -m bench cold`` prints
it), and both the hook and ``fake-lich`` start once per call. The parser ``json`` itself uses, the C
accelerator ``_json``, needs none of that. The results are ``json``'s, for every input: what the fast
path does not cover (input in UTF-16 or UTF-32, a byte-order mark, a value json refuses, any error, an
interpreter without ``_json``) is handed to ``json`` itself, so errors are ``json``'s own.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    class SupportsWrite(Protocol):
        def write(self, text: str, /) -> object: ...

_accelerator: Any
try:
    import _json as _accelerator
except ImportError:  # pragma: no cover (an interpreter without the accelerator)
    _accelerator = None

_SPACE = " \t\n\r"  # json's whitespace
_NOT_UTF8 = (b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe")  # byte-order marks: json.detect_encoding decides


class _Decoder:
    """What ``_json.make_scanner`` reads from ``json.JSONDecoder()``: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_quote: dict[bool, Callable[[str], str]] = {}
if _accelerator is not None:
    _scan = _accelerator.make_scanner(_Decoder())
    _quote = {True: _accelerator.encode_basestring_ascii, False: _accelerator.encode_basestring}


def loads(raw: str | bytes) -> Any:
    """``json.loads(raw)``."""
    if _scan is not None:
        try:
            if isinstance(raw, bytes):
                if raw.startswith(_NOT_UTF8) or b"\x00" in raw[:4]:
                    raise ValueError("not UTF-8")
                raw = raw.decode("utf-8", "surrogatepass")
            if not raw.startswith("\ufeff"):
                value, end = _scan(raw, len(raw) - len(raw.lstrip(_SPACE)))
                if len(raw.rstrip(_SPACE)) == end:
                    return value
        except Exception:  # StopIteration, ValueError; a SystemError from _json's errors while json is not loaded
            pass
    import json  # json's own answer, or its own error

    return json.loads(raw)


def dumps(value: object, separators: tuple[str, str] = (", ", ": "), *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)``: through the C encoder json uses."""
    if _quote:
        key = (ensure_ascii, separators)
        encode = _encoders.pop(key, None) or _accelerator.make_encoder(
            {}, _unusual, _quote[bool(ensure_ascii)], None, separators[1], separators[0], False, False, True
        )
        try:
            text = "".join(encode(value, 0))
        except Exception:  # a value json would refuse: its own error (and the encoder, half-way, is dropped)
            pass
        else:
            _encoders[key] = encode  # kept for the next call: its circular-reference marks are empty again
            return text
    import json

    return json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)


_encoders: dict[tuple[bool, tuple[str, str]], Any] = {}


def _unusual(value: object) -> object:
    """The encoder's ``default``: what it cannot encode goes to ``json``, which says why."""
    raise TypeError(type(value).__name__)


def dump(value: object, fh: SupportsWrite, separators: tuple[str, str] = (", ", ": ")) -> None:
    """``json.dump(value, fh, separators=separators)``: the same text, written at once."""
    fh.write(dumps(value, separators))
