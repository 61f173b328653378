"""YAML with line numbers: mappings and lists that remember where each key and item stood.

Scenario errors are reported as ``FILE:LINE: what is wrong``; this is what makes the LINE possible.
Only YAML's safe types are read; a duplicate key is an error, not a silent override.

One tag of our own builds long texts without pasting them: ``!repeat {text: "é", times: 4096, then: "x"}``
is ``"é"`` 4096 times followed by ``"x"`` (``then`` is optional). A task over lich's size limit fits on
one line that way.

Safe for hostile input: a file is read only when it is a regular file of at most ``MAX_FILE_BYTES``
(a pipe, a device or a folder is refused without being opened for a blocking read), and the values are
built from the parser's events without recursion, under limits: ``MAX_DEPTH`` levels of nesting,
``MAX_VALUES`` values once every alias is expanded, ``MAX_TEXT`` characters of text (``!repeat`` and
aliases included). An alias to a value that is not finished (``&a [*a]``) is refused. Every problem is
one :class:`YamlError` on the line where it is (an unclosed bracket or quote: where it was opened).
"""

from __future__ import annotations

import os
import stat
from typing import Any

import yaml

#: libyaml's parser when PyYAML has it (most wheels do): parsing is most of a replay's time otherwise.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_FILE_BYTES = 1 << 20  # a scenario is a few KB; !repeat builds long texts without pasting them
MAX_DEPTH = 64  # mappings and lists inside each other
MAX_VALUES = 200_000  # values (keys included) once aliases are expanded: no alias bomb
MAX_TEXT = 32 << 20  # characters of text once aliases and !repeat are expanded (lich truncates at 4 MiB)
REPEAT_MAX_TIMES = 1_000_000


class YamlError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class YMap(dict[str, Any]):
    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class YList(list[Any]):
    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if index < len(self.item_lines) else self.line


def line_of(container: object, key: str | int) -> int:
    if isinstance(container, YMap) and isinstance(key, str):
        return container.line_of(key)
    if isinstance(container, YList) and isinstance(key, int):
        return container.line_of(key)
    return int(getattr(container, "line", 1))


# -- the file ------------------------------------------------------------------------------------------


def read_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """The text of a regular UTF-8 file of at most ``limit`` bytes; anything else is a :class:`YamlError`."""
    return decode(read_bytes(path, limit))


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is a :class:`YamlError`.

    The file is opened without blocking (a FIFO with no writer is not waited for) and checked before a
    byte is read: a folder, a pipe, a device (``/dev/zero``) or a socket is refused.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise YamlError(1, f"cannot read the file: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a pipe, a device or a socket)"
            raise YamlError(1, f"cannot read the file: it is {what}")
        if info.st_size > limit:
            raise YamlError(1, f"the file is {info.st_size} bytes, over the limit of {limit}")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise YamlError(1, f"cannot read the file: {error.strerror or error}") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > limit:
        raise YamlError(1, f"the file grew past the limit of {limit} bytes while it was read")
    return raw


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise YamlError(line, f"not UTF-8: byte 0x{raw[error.start]:02x} at column {column}") from None


# -- the parse -----------------------------------------------------------------------------------------


def _problem_line(error: yaml.MarkedYAMLError, text: str) -> int:
    """The line to blame: where the problem was found, or where an unclosed thing was opened."""
    problem, context = error.problem_mark, error.context_mark
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    what = str(error.problem or "")
    unclosed = context is not None and (
        "end of stream" in what or "<stream end>" in what or "expected ',' or" in what
        or (problem is not None and problem.index >= len(text.rstrip()))
    )
    at_end = problem is not None and problem.index >= len(text.rstrip())
    opened = _unclosed(text) if at_end or "end of stream" in what else None
    mark = context if unclosed else (problem or context)
    line = opened or (mark.line + 1 if mark is not None else 1)
    return max(1, min(line, max(lines, 1)))


_OPENERS = {"[": "]", "{": "}"}


def _unclosed(text: str) -> int | None:
    """The line of the innermost bracket or quote still open at the end of ``text`` (a rough scan, used only
    when the parser ran into the end of the file: where the unclosed thing began is the line to blame)."""
    stack: list[tuple[str, int]] = []
    line, i, n = 1, 0, len(text)
    previous = "\n"  # the last character that was not a space, outside quotes
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            previous = "\n"
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif c in "'\"" and previous in "\n:-[{,?":
            start, i = line, i + 1
            while i < n:
                if text[i] == "\n":
                    line += 1
                elif c == '"' and text[i] == "\\":
                    i += 1
                elif text[i] == c:
                    if c == "'" and i + 1 < n and text[i + 1] == "'":
                        i += 1
                    else:
                        break
                i += 1
            if i >= n:
                return start
            previous = c
        elif c in _OPENERS:
            stack.append((_OPENERS[c], line))
            previous = c
        elif c in "]}":
            if stack and stack[-1][0] == c:
                stack.pop()
            previous = c
        elif c not in " \t":
            previous = c
        i += 1
    return stack[-1][1] if stack else None


def load(text: str) -> Any:
    """The document's value (None when empty), built from the parser's events without recursion."""
    try:
        return _Builder(text).build(yaml.parse(text, Loader=_LOADER))
    except yaml.MarkedYAMLError as error:
        raw = error.problem or error.context or ""
        what = str(raw).splitlines()[0] if raw else ""
        raise YamlError(_problem_line(error, text), f"not valid YAML: {_printable(what) or 'cannot be read'}") from None
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, max(0, error.position)) + 1
        char = error.character
        shown = f"#x{ord(char) if isinstance(char, str) else int(char):04x}"
        raise YamlError(line, f"not valid YAML: the character {shown} is not allowed") from None
    except yaml.YAMLError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise YamlError(1, f"not valid YAML: {_printable(first)}") from None


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


REPEAT = "!repeat"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Open:
    """A mapping or list being built: its value, the key waiting for its value, what it will weigh."""

    __slots__ = ("anchor", "key", "key_line", "repeat", "size", "text", "value")

    def __init__(self, value: YMap | YList, anchor: str | None, repeat: bool) -> None:
        self.value = value
        self.anchor = anchor
        self.repeat = repeat
        self.key: Any = _NO_KEY
        self.key_line = 0
        self.size = 1  # values, aliases expanded
        self.text = 0  # characters, aliases expanded


_NO_KEY = object()
_UNFINISHED = object()
_STR = "tag:yaml.org,2002:str"
_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
#: A plain scalar's value depends on its text alone (the resolver's patterns, then the constructor):
#: short ones of an immutable type are kept, so ``true``, ``800`` or ``allow`` are resolved once per process.
_PLAIN: dict[str, Any] = {}
_SHARED = (str, int, float, bool, type(None))
_PLAIN_LONGEST = 64
_PLAIN_MOST = 4096


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text
        self.constructor = yaml.SafeLoader("")
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, size, text
        self.stack: list[_Open] = []
        self.result: Any = None
        self.documents = 0

    def build(self, events: Any) -> Any:
        for event in events:
            self.event(event)
        return self.result

    def event(self, event: yaml.Event) -> None:
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        # the commonest first: a scalar, then the ends and starts of mappings and lists (the reading's hot path)
        if isinstance(event, yaml.ScalarEvent):
            self.scalar(event, line)
        elif isinstance(event, _ENDS):
            self.end(line)
        elif isinstance(event, _STARTS):
            self.start(event, line)
        elif isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise YamlError(line, "one document per file (a second one starts here)")
        elif isinstance(event, yaml.AliasEvent):
            self.alias(event, line)

    def start(self, event: yaml.MappingStartEvent | yaml.SequenceStartEvent, line: int) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise YamlError(line, f"nested more than {MAX_DEPTH} levels deep")
        repeat = event.tag == REPEAT
        if event.tag not in (None, "!", REPEAT, _MAP, _SEQ):
            raise YamlError(line, f"the tag {_printable(str(event.tag))[:80]} is not allowed here (only !repeat)")
        if repeat and isinstance(event, yaml.SequenceStartEvent):
            raise YamlError(line, '!repeat takes {text: "…", times: N} and optionally then: "…"')
        value: YMap | YList
        if isinstance(event, yaml.MappingStartEvent):
            value = YMap()
            value.line, value.key_lines = line, {}
        else:
            value = YList()
            value.line, value.item_lines = line, []
        if event.anchor is not None:
            self.anchors[event.anchor] = (_UNFINISHED, 0, 0)
        self.stack.append(_Open(value, event.anchor, repeat))

    def end(self, line: int) -> None:
        top = self.stack.pop()
        value: Any = top.value
        size, text = top.size, top.text
        if top.repeat:
            value = _repeat(value, value.line)
            size, text = 1, len(value)
            self._charge_text(text, top.value.line)
        if top.anchor is not None:
            self.anchors[top.anchor] = (value, size, text)
        self.put(value, top.value.line, size, text)

    def scalar(self, event: yaml.ScalarEvent, line: int) -> None:
        if event.tag == REPEAT:
            raise YamlError(line, '!repeat takes {text: "…", times: N} and optionally then: "…"')
        tag, raw = event.tag, event.value
        plain = (tag is None or tag == "!") and event.implicit[0]
        value = _PLAIN.get(raw, _NO_KEY) if plain else _NO_KEY
        if value is _NO_KEY:
            if tag is None or tag == "!":
                tag = self.constructor.resolve(yaml.ScalarNode, raw, event.implicit)  # type: ignore[no-untyped-call]
            # a text is what the constructor would build from it (most scalars): no node needed
            value = raw if tag == _STR else self._construct(event, tag, line)
            if plain and type(value) in _SHARED and len(raw) <= _PLAIN_LONGEST and len(_PLAIN) < _PLAIN_MOST:
                _PLAIN[raw] = value
        text = len(value) if isinstance(value, str) else 0
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, text)
        self.put(value, line, 1, text)

    def _construct(self, event: yaml.ScalarEvent, tag: str, line: int) -> Any:
        marks: Any = (event.start_mark, event.end_mark)  # libyaml's marks or PyYAML's: the node only keeps them
        node = yaml.ScalarNode(tag, event.value, marks[0], marks[1], event.style)
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            first = str(getattr(error, "problem", None) or error).splitlines()[0]
            raise YamlError(line, f"not a valid value: {_printable(first)}") from None
        except (ValueError, OverflowError) as error:  # e.g. a date that does not exist
            raise YamlError(line, f"not a valid value: {_printable(str(error))}") from None

    def alias(self, event: yaml.AliasEvent, line: int) -> None:
        found = self.anchors.get(str(event.anchor))
        if found is None:
            raise YamlError(line, f"the alias *{event.anchor} names no anchor before it")
        value, size, text = found
        if value is _UNFINISHED:
            raise YamlError(line, f"the alias *{event.anchor} is inside the value it names")
        self.put(value, line, size, text)

    def _charge_text(self, text: int, line: int) -> None:
        if text > MAX_TEXT:
            raise YamlError(line, f"the texts here come to more than {MAX_TEXT} characters")

    def put(self, value: Any, line: int, size: int, text: int) -> None:
        """Add a finished value to the mapping or list being built (or make it the document)."""
        if not self.stack:
            self.result = value
            return
        top = self.stack[-1]
        top.size += size
        top.text += text
        if top.size > MAX_VALUES:
            raise YamlError(line, f"more than {MAX_VALUES} values once aliases are expanded (an alias bomb?)")
        self._charge_text(top.text, line)
        container = top.value
        if isinstance(container, YList):
            container.append(value)
            container.item_lines.append(line)
            return
        if top.key is _NO_KEY:
            if not isinstance(value, str):
                shown = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else repr(value)
                raise YamlError(line, f"a key must be text, not {shown[:80]}")
            if value in container:
                raise YamlError(line, f"{value!r} is given twice")
            top.key, top.key_line = value, line
            return
        container[top.key] = value
        container.key_lines[top.key] = top.key_line
        top.key = _NO_KEY


def _repeat(value: Any, line: int) -> str:
    if not isinstance(value, dict) or not {"text", "times"} <= set(value) <= {"text", "times", "then"}:
        raise YamlError(line, '!repeat takes {text: "…", times: N} and optionally then: "…"')
    text, times, then = value["text"], value["times"], value.get("then", "")
    if not isinstance(text, str) or not isinstance(then, str) or isinstance(times, bool) or not isinstance(times, int):
        raise YamlError(line, "!repeat: text and then are texts, times a whole number")
    if not 0 <= times <= REPEAT_MAX_TIMES:
        raise YamlError(line, f"!repeat: times is 0 to {REPEAT_MAX_TIMES}")
    if len(text) * times + len(then) > MAX_TEXT:
        raise YamlError(line, f"!repeat: the text would be {len(text) * times + len(then)} characters, over the "
                        f"limit of {MAX_TEXT}")
    return text * times + then
