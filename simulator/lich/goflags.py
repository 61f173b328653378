"""A small model of Go's ``flag`` package and of ``strconv.Quote``, as the lich CLI uses them.

Parsing follows ``flag.FlagSet.Parse``: ``-name`` and ``--name`` are the same flag; a value comes as
``-name=value`` or as the next argument (even one starting with ``-``); a boolean flag takes no next
argument (``-json=false`` is allowed); parsing stops at the first non-flag argument (``-`` counts as
one) or after ``--``. ``-h``/``-help`` that the command does not define raise :class:`HelpRequested`.
Error texts are Go's own, without the ``lich: `` prefix the CLI adds.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a lich call imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Literal

    Kind = Literal["bool", "string", "int"]
else:
    Kind = str  # at run time only annotations name it: no need to import typing for a Literal
FlagValue = str | bool | int

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


class FlagError(Exception):
    """A command line the parser refused; ``str(err)`` is Go's message."""


class HelpRequested(Exception):
    """``-h`` or ``-help`` was given and the command defines no such flag (Go's ``flag.ErrHelp``)."""


class Parsed:  # noqa: PLW1641 -- mutable, so unhashable (as a dataclass with eq is)
    """The flags that were set (by name, without dashes) and the arguments left after them."""

    __slots__ = ("args", "flags")

    def __init__(self, flags: dict[str, FlagValue] | None = None, args: list[str] | None = None) -> None:
        self.flags: dict[str, FlagValue] = {} if flags is None else flags
        self.args: list[str] = [] if args is None else args

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parsed) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.flags, self.args) == (other.flags, other.args)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(flags={self.flags!r}, args={self.args!r})"

    def text(self, name: str) -> str | None:
        """The value of a string flag, or None when it was not given."""
        value = self.flags.get(name)
        return value if isinstance(value, str) else None

    def on(self, name: str) -> bool:
        """Whether a boolean flag was set true."""
        return self.flags.get(name) is True

    def number(self, name: str) -> int | None:
        """The value of an int flag, or None when it was not given."""
        value = self.flags.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def go_quote(text: str) -> str:
    """``strconv.Quote``: double-quote ``text``, backslash-escaping ``"``, ``\\`` and non-printables.

    Surrogate escapes (U+DC80..U+DCFF, how Python carries undecodable argv bytes) print as ``\\xNN``.
    """
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _go_int(text: str) -> int:
    """``strconv.ParseInt(text, 0, 64)``: decimal, ``0x``, ``0o``, ``0b`` or a leading-zero octal."""
    if text != text.strip() or not text.isascii():
        raise ValueError(text)
    digits = text[1:] if text[:1] in ("+", "-") else text
    octal = len(digits) > 1 and digits[0] == "0" and not digits[1:].strip("01234567")  # [+-]?0[0-7]+, no re
    number = int(text, 8) if octal else int(text, 0)
    if not -(2**63) <= number < 2**63:
        raise OverflowError(text)
    return number


def parse(args: Sequence[str], spec: Mapping[str, Kind]) -> Parsed:
    """Parse ``args`` against ``spec`` (flag name -> kind), as ``flag.FlagSet.Parse`` would."""
    out = Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        if len(arg) < 2 or arg[0] != "-":
            break
        dashes = 2 if arg[1] == "-" else 1
        if arg == "--":
            i += 1
            break
        body = arg[dashes:]
        if not body or body[0] in "-=":
            raise FlagError(f"bad flag syntax: {arg}")
        i += 1
        name, eq, value = body.partition("=")
        kind = spec.get(name)
        if kind is None:
            if name in ("h", "help"):
                raise HelpRequested(name)
            raise FlagError(f"flag provided but not defined: -{name}")
        if kind == "bool":
            if not eq or value in _TRUE:
                out.flags[name] = True
            elif value in _FALSE:
                out.flags[name] = False
            else:
                raise FlagError(f"invalid boolean value {go_quote(value)} for -{name}: parse error")
            continue
        if not eq:
            if i >= len(args):
                raise FlagError(f"flag needs an argument: -{name}")
            value = args[i]
            i += 1
        if kind == "string":
            out.flags[name] = value
            continue
        try:
            out.flags[name] = _go_int(value)
        except OverflowError:
            raise FlagError(f"invalid value {go_quote(value)} for flag -{name}: value out of range") from None
        except ValueError:
            raise FlagError(f"invalid value {go_quote(value)} for flag -{name}: parse error") from None
    out.args = list(args[i:])
    return out
