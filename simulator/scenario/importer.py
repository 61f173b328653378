"""``agent-cards import SESSION.jsonl [--sessions FILE]``: a Claude Code session log made into a scenario.

Claude Code keeps a ``.jsonl`` log of every session (the ``transcript_path`` every hook receives). A
bug report often arrives as one. This reads what the log says happened and writes a scenario that
replays it against today's mod:

- every Agent and TaskStop call the model made on the main loop (a subagent's own calls, marked
  ``isSidechain``, are left out), with its input, its tool_use id, its order (calls made in one
  message are a ``parallel`` step) and its timing (the gaps between calls as ``wait`` steps);
- the session's directory (``cwd``), git as Claude Code saw it (``gitBranch``, and ``isGitRepo``: ``HEAD``
  is a detached head in a repository and no repository at all where ``isGitRepo`` is false), whether it
  was interactive (``claude -p`` logs as ``sdk-cli``);
- how each call was answered, read back: a card lich opened (the mod's result and context line, or the
  command hook's deny that carries them, re-read as the module's own answer) scripts that open (its
  label, roster name, delivery and how long it took) and is expected whole; a ``completed`` answer
  scripts an ``answered`` delivery with the worker's report; an Esc (``user-rejected`` while the call
  ran) is an Esc step; a "no" at the permission dialog (``user-rejected`` before the call ran) or a
  hook's refusal is that permission; a native agent is expected native; a TaskStop of a worker or of a
  native agent names the call that started it (``{worker: CALL_ID}``);
- the clauses are chosen from what happened to each call.

Only those values are taken: a log line's other fields (the model's text, attachments, environment
values, request ids) never reach the scenario, and Claude Code's own error texts are expected by their
first plain words only (a secret in them is never copied). A line that cannot be used is reported as
``FILE:LINE: why`` and skipped; lines of kinds that carry no call are skipped silently.

The log is read as hostile input, as a scenario file is: regular files only (a pipe or a device is
refused before a byte is read), bounded in size, line length and nesting; the scenario it makes is
checked by the scenario reader before it is written, so what is written replays.
"""

from __future__ import annotations

import json
import os
import re
import stat
import string
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cards.arguments import STDIN, CommandParser, parse, refused_output, usage_error, write_output
from agent_cards.record import Record, field
from agent_cards.rules import PROMPT_LIMIT_BYTES
from agent_cards.texts import AGENT, ENGLISH, PERSON
from agent_cards_simulator.scenario.writer import Repeat, to_yaml
from agent_cards_simulator.scenario.yamlnodes import YamlError, read_file

TOOLS = ("Agent", "TaskStop")
MAX_LOG_BYTES = 256 << 20  # a long real session is tens of MiB; a log past this is refused whole
MAX_LINE_BYTES = 16 << 20  # one line (an API request's shape is the largest a real log holds)
MAX_INPUT_DEPTH = 24  # an input nested deeper than a scenario's 64 levels allow around it is skipped
MAX_INPUT_VALUES = 20_000
MAX_GAP_MS = 600_000  # a pause longer than ten minutes (a session resumed the next day) is cut to ten
MAX_TOTAL_MS = 20 * 3_600_000  # a replay never goes past a day
MAX_OPEN_MS = 110_000  # an open the log shows answered took less than the mod's two-minute timeout
LONG_TEXT = 4096  # a longer text made of one repeated piece is written as !repeat
SCENARIO_BYTES = 1 << 20  # the scenario reader's own limit
HOOK_ERROR = "PreToolUse:Agent hook error: "
USER_REJECTED = "The user doesn't want to proceed"
NATIVE_TYPES = ("Explore", "Plan", "claude-code-guide", "statusline-setup")

IMPORT_DESCRIPTION = """Write a scenario from a Claude Code session log (the .jsonl Claude Code keeps for each
session, whose path every hook receives as transcript_path): every Agent and TaskStop call of the main loop with its
input, id, order and timing, the session's directory and git, and how each call was answered (the card
lich opened, an Esc, a permission dialog, a native agent), as the steps and expectations of a scenario
that replays against today's mod. A log written by the command hook is read as the module's behaviour.
Lines it cannot use are reported as FILE:LINE: why, and skipped."""

IMPORT_EXIT = """exit status:
  0  the scenario was written (a skipped line is reported on stderr)
  1  the log holds no Agent or TaskStop call of the main loop
  2  a file cannot be read, or the log cannot be made into a scenario (one FILE:LINE line says why),
     or the command line is wrong"""


def import_parser() -> CommandParser:
    parser = CommandParser("agent-cards import", IMPORT_DESCRIPTION, IMPORT_EXIT)
    parser.usage = "agent-cards import [-h] [--sessions FILE] [-o FILE [--force]] [--] SESSION.jsonl"
    parser.add_argument("log", nargs="*", metavar="SESSION.jsonl", help="the session log")
    parser.add_argument("--sessions", metavar="FILE",
                        help="what `lich sessions --json` printed: lich's first sessions read answers with it")
    parser.add_argument("-o", dest="output", metavar="FILE",
                        help="write the scenario to FILE, which must not exist yet (default, or -: print it)")
    parser.add_argument("--force", action="store_true", help="with -o: overwrite FILE if it exists")
    return parser


class LogError(Exception):
    """The log (or the ``--sessions`` file) cannot be read at all: one ``FILE:LINE: why``."""


class _ImportedCall(Record):
    id: str
    tool: str
    input: dict[str, Any]
    at_ms: int
    message: str  # the assistant message that made it: calls of one message are raised at once
    line: int
    answer: dict[str, Any] | None = None
    answered_ms: int | None = None
    context: list[str] = field(default_factory=list)
    toasts: list[str] = field(default_factory=list)
    raised_ms: int | None = None  # when its step raised it: the first call of its message


class Imported(Record):
    """The scenario as YAML text, the ``FILE:LINE: why`` lines of what was skipped, or why nothing can be
    written (``refusal``, one line)."""

    yaml: str
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    refusal: str | None = None


# -- reading the log, bounded -------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """The log's lines as bytes (None: a line over the limit, skipped), from a regular file only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise LogError(f"{path}:1: cannot read the file: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a pipe, a device or a socket)"
            raise LogError(f"{path}:1: cannot read the file: it is {what}")
        if info.st_size > MAX_LOG_BYTES:
            raise LogError(f"{path}:1: the log is {info.st_size} bytes, over the limit of {MAX_LOG_BYTES}")
        handle = os.fdopen(fd, "rb", closefd=False)
        number, size = 0, 0
        while True:
            try:
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except OSError as error:
                raise LogError(f"{path}:{number + 1}: cannot read the file: {error.strerror or error}") from None
            if not raw:
                return
            number += 1
            size += len(raw)
            if size > MAX_LOG_BYTES:
                raise LogError(f"{path}:{number}: the log grew past the limit of {MAX_LOG_BYTES} bytes")
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while rest := handle.readline(1 << 20):
                    size += len(rest)  # the rest's last piece, its newline with it, counts too
                    if size > MAX_LOG_BYTES:
                        raise LogError(f"{path}:{number}: the log grew past the limit of {MAX_LOG_BYTES} bytes")
                    if rest.endswith(b"\n"):
                        break
                yield number, None
                continue
            yield number, raw
    finally:
        os.close(fd)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> tuple[Any, bool]:
    """``value`` with every lone surrogate (which no UTF-8 file can hold) replaced by U+FFFD."""
    if isinstance(value, str):
        cleaned = _SURROGATE.sub("\ufffd", value)
        return cleaned, cleaned != value
    if isinstance(value, list):
        items = [_clean(v) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    if isinstance(value, dict):
        pairs = [(_clean(k), _clean(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in pairs}, any(ck or cv for (_, ck), (_, cv) in pairs)
    return value, False


def _shape(value: Any) -> tuple[int, int]:
    """How deep ``value`` nests and how many values it holds, without recursion."""
    deepest, count = 0, 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        count += 1
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
            count += len(item)
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest, count


def _ms(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


# -- the mod's own texts, read back -------------------------------------------------------------------


#: What each slot of the mod's texts can hold, as narrow as lich's values allow, so that reading a text back
#: takes time in proportion to its length (a label is quoted, names and branches have no space).
_SLOT = {"label": '[^"\n]*?', "name": r"\S+?", "branch": r"\S+?", "path": "[^\n]*?", "status": "[^\n]*?"}
MAX_READ_CHARS = 1 << 20  # a longer answer is not one of the mod's texts


def _pattern(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name:
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{_SLOT.get(name, '.*?')})")
            seen.add(name)
    return re.compile("".join(parts), re.DOTALL)


def _catalogs() -> dict[str, dict[str, str]]:
    from agent_cards.languages import TRANSLATIONS

    return {ENGLISH: AGENT, **TRANSLATIONS}


_PATTERNS: dict[tuple[str, str], re.Pattern[str]] = {}


def _read_text(keys: tuple[str, ...], text: str, whole: bool = True) -> tuple[str, str, dict[str, str]] | None:
    """The catalog text (language, key, slots) that ``text`` is, in any language; ``whole=False``: that it
    begins with."""
    if len(text) > MAX_READ_CHARS:
        return None
    for lang, table in _catalogs().items():
        for key in keys:
            template = table.get(key)
            if template is None:
                continue
            pattern = _PATTERNS.setdefault((lang, key), _pattern(template))
            found = pattern.fullmatch(text) if whole else pattern.match(text)
            if found:
                return lang, key, {**found.groupdict(), "_end": str(found.end())}
    return None


def _read_toast(text: str) -> tuple[str, dict[str, str]] | None:
    if len(text) > MAX_READ_CHARS:
        return None
    for key, template in PERSON.items():
        if key.startswith("toast."):
            found = _pattern(template).fullmatch(text)
            if found:
                return key, found.groupdict()
    return None


def _safe_words(text: str) -> str:
    """The first plain words of an engine's error text: letters, spaces and simple punctuation only, so a
    token, a path or a value in the message is never copied."""
    for tag in ("<tool_use_error>", "</tool_use_error>"):
        text = text.replace(tag, "")
    words = []
    for word in text.strip().split()[:8]:
        if not re.fullmatch(r"[A-Za-z][a-z']{0,19}[,:.]?", word):
            break
        words.append(word)
        if word[-1] in ",:.":
            break
    return " ".join(words)


# -- reading what each call's answer says -------------------------------------------------------------


class _Reading(Record):
    """What one call's answer says: the step's own keys, the expectations, the clauses."""

    step: dict[str, Any] = field(default_factory=dict)
    expect: list[dict[str, Any]] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)
    lang: str | None = None
    checkout: str | None = None
    agent_id: str | None = None
    taken: bool = False
    isolated: bool = False
    refusal: str | None = None
    problem: str | None = None  # written, but said on stderr: what the replay cannot show


def _delay(call: _ImportedCall) -> int:
    raised = call.at_ms if call.raised_ms is None else call.raised_ms
    return 0 if call.answered_ms is None else max(0, call.answered_ms - raised)


def _launched(call: _ImportedCall, reading: _Reading, name: str, context: list[str]) -> None:
    """A card lich opened with the delivery pending: the mod's ``async_launched`` and its context line."""
    reading.taken, reading.agent_id = True, name
    script: dict[str, Any] = {"name": name, "ms": min(_delay(call), MAX_OPEN_MS)}
    answer: dict[str, Any] = {"call": call.id, "result": {"status": "async_launched", "agentId": name}}
    for text in context:
        read = _read_text(("context.shared", "context.isolated"), text)
        if read is None:
            continue
        lang, key, slots = read
        script["label"] = slots["label"]
        reading.lang = lang
        if key == "context.shared":
            reading.checkout = slots["path"]
            answer["context"] = {"contains": text}
        else:
            reading.isolated = True
            answer["context"] = {"contains": {"matches": _with_any_path(_catalogs()[lang][key], slots)}}
        break
    reading.step["lich"] = script
    reading.expect.append({"answer": answer})
    reading.clauses += ["DELIV-PENDING", "RESULT-CONTEXT"] if "context" in answer else ["DELIV-PENDING"]
    if reading.isolated:
        reading.clauses.append("BRANCH-SUFFIX")


def _escape(text: str) -> str:
    """``text`` as a regular expression that matches it, escaping only what the syntax needs (readable)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def _with_any_path(template: str, slots: dict[str, str]) -> str:
    """The text ``template`` makes with these slots, as a pattern in which the worktree's path is any: the
    fake lich puts its worktrees under ``/lich/worktrees``, the real one where it keeps them."""
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(_escape(literal))
        if name:
            parts.append(".+?" if name == "path" else _escape(slots[name]))
    return "^" + "".join(parts) + "$"


def _completed(call: _ImportedCall, reading: _Reading, name: str, report: str) -> bool:
    """A card whose worker had answered by the end of the open: ``answered`` scripted, ``completed`` expected."""
    read = _read_text(("completed.shared", "completed.isolated"), report)
    if read is None:
        return False
    lang, key, slots = read
    reading.taken, reading.agent_id, reading.lang = True, name, lang
    reading.step["lich"] = {"delivery": "answered", "answer": slots["answer"], "label": slots["label"],
                            "name": name, "ms": min(_delay(call), MAX_OPEN_MS)}
    if key == "completed.shared":
        reading.checkout = slots["path"]
        text: Any = report
    else:
        reading.isolated = True
        text = {"matches": _with_any_path(_catalogs()[lang][key], slots)}
    reading.expect.append({"answer": {"call": call.id, "result": {
        "status": "completed", "agentId": name, "content": [{"type": "text", "text": text}]}}})
    reading.clauses += ["DELIV-ANSWERED", "RESULT-COMPLETED"]
    return True


def _mod_deny(call: _ImportedCall, reading: _Reading, text: str) -> bool:
    """A deny the mod words itself: the delivery it answers, scripted; the deny expected whole."""
    read = _read_text(("deny.never_reached", "deny.unknown", "deny.unknown.isolated"), text)
    if read is None:
        return False
    lang, key, slots = read
    reading.lang = lang
    reading.step["lich"] = {"delivery": slots["status"], "label": slots["label"], "ms": min(_delay(call), MAX_OPEN_MS)}
    reading.clauses.append("DELIV-NEVER" if key == "deny.never_reached" else "DELIV-UNKNOWN")
    reading.expect.append({"answer": {"call": call.id, "deny": text}})
    return True


def _read_agent(call: _ImportedCall) -> _Reading:
    reading = _read_answer(call)
    answer = call.answer
    assert answer is not None
    by_person = str(answer["decided_by"] or "").startswith("user")  # user_temporary, user_permanent: the dialog
    if answer["decision"] == "accept" and by_person and "permission" not in reading.step:
        reading.step["permission"] = {"ask": True}
        reading.expect.insert(0, {"permission": {"call": call.id, "outcome": "allow", "via": "dialog"}})
    return reading


def _read_answer(call: _ImportedCall) -> _Reading:
    reading = _Reading()
    answer = call.answer
    assert answer is not None
    result, text = answer["result"], answer["text"]
    if not answer["is_error"] and isinstance(result, dict):
        status, agent_id = result.get("status"), result.get("agentId")
        lich_made = result.get("outputFile") == "" and isinstance(agent_id, str)  # lich's answer has an empty one
        if status == "async_launched" and lich_made:
            _launched(call, reading, str(agent_id), call.context)
            return reading
        if status == "completed" and lich_made is False and isinstance(agent_id, str) and \
                _completed(call, reading, agent_id, _text_of(result.get("content"))):
            return reading
        reading.agent_id = agent_id if isinstance(agent_id, str) else None
        _native(call, reading, status)
        return reading
    if not answer["is_error"]:
        reading.expect.append({"answer": {"call": call.id}})
        reading.clauses.append("TAKE-UNTOUCHED")
        return reading
    bare = text.replace("<tool_use_error>", "").replace("</tool_use_error>", "").strip()
    if answer["denial"] == "user-rejected":
        if answer["before_run"]:  # the person said no at the permission dialog
            reading.step["permission"] = {"ask": False}
            reading.expect += [{"permission": {"call": call.id, "outcome": "deny", "via": "dialog"}},
                               {"answer": {"call": call.id, "error": {"startswith": USER_REJECTED}}},
                               {"no run": {"argv": {"contains": "open"}}}]
            reading.clauses.append("PERM-REFUSED")
        else:  # Esc while the call ran: lich was still opening the card
            after = _delay(call)
            reading.step["esc_after"] = after
            reading.step["lich"] = {"ms": min(after + 1000, MAX_OPEN_MS)}
            reading.expect += [{"esc": None},
                               {"answer": {"call": call.id, "error": {"startswith": USER_REJECTED}}},
                               {"no native": {"call": call.id}}]
            reading.clauses.append("FALL-ESC-OPEN")
        return reading
    if bare.startswith(HOOK_ERROR):
        return _hook_answer(call, reading, bare[len(HOOK_ERROR):])
    if _mod_deny(call, reading, bare):
        return reading
    if _read_text(("bridge.unsure",), bare) is not None:  # the session host stopped mid-call
        reading.problem = (f"{call.line}: the answer to {call.id} says the agent cards bridge stopped while it ran, "
                           "which the fake host does not model: nothing is expected of that call")
        reading.clauses.append("FALL-BEFORE-ONLY")
        return reading
    words = _safe_words(text)
    if answer["decision"] == "reject":
        reading.step["permission"] = "deny"
        reading.expect.append({"permission": {"call": call.id, "outcome": "deny"}})
        reading.clauses.append("PERM-REFUSED")
    reading.expect.append({"answer": {"call": call.id, "error": {"contains": words} if words else {"absent": False}}})
    reading.clauses.append("TAKE-UNTOUCHED")
    return reading


def _native(call: _ImportedCall, reading: _Reading, status: Any) -> None:
    """Claude Code ran its own agent: the mod left the call (or fell back), and lich opened nothing."""
    result: dict[str, Any] = {"status": status} if isinstance(status, str) else {}
    reading.expect += [{"native": {"call": call.id}}, {"answer": {"call": call.id, "result": result}}]
    for toast in call.toasts:  # the command hook's toasts are logged; the module's are not
        read = _read_toast(toast)
        if read is None:
            continue
        key, slots = read
        reading.expect.append({"toast": {"text": toast}})
        if key == "toast.open_failed":
            reason = slots["reason"]
            reading.step["lich"] = {"fail": reason[len("lich: "):] if reason.startswith("lich: ") else reason}
            reading.expect.append({"run": {"argv": {"contains": "open"}, "exit": 1}})
            reading.clauses.append("FALL-OPEN-FAILED")
            return
    prompt = call.input.get("prompt")
    if isinstance(prompt, str) and len(prompt.encode("utf-8", "replace")) > PROMPT_LIMIT_BYTES:
        reading.clauses.append("FALL-OVERSIZE")
    elif call.input.get("subagent_type") in NATIVE_TYPES:
        reading.clauses.append("TAKE-TYPE")
    else:
        reading.clauses.append("TAKE-UNTOUCHED")
    reading.expect.append({"no run": {"argv": {"contains": "open"}}})


def _hook_answer(call: _ImportedCall, reading: _Reading, reason: str) -> _Reading:
    """A PreToolUse hook's deny. The command hook's (``This Agent call was not refused: lich took it…``) is
    the card lich opened, re-read as the answer the module gives for it; any other hook's is that hook's
    refusal."""
    launched = _read_text(("hook.launched.shared", "hook.launched.isolated"), reason, whole=False)
    if launched is not None:
        _, _, slots = launched
        context = reason[int(slots["_end"]):].strip()
        _launched(call, reading, slots["name"], [context])
        if "context" not in reading.expect[-1]["answer"]:
            reading.refusal = (f"{call.line}: the command hook's answer to {call.id} names the worker "
                               f"{slots['name']} but not where it works (no context line the mod words)")
        return reading
    completed = _read_text(("hook.completed",), reason, whole=False)
    if completed is not None:
        _, _, slots = completed
        report = reason[int(slots["_end"]):].removeprefix("\n\n")
        if not _completed(call, reading, slots["name"], report):
            reading.refusal = (f"{call.line}: the command hook's answer to {call.id} says its worker answered, "
                               "but its report is not the one the mod words")
        return reading
    openings = tuple(table[key][:24] for table in _catalogs().values()
                     for key in ("hook.launched.shared", "hook.completed") if key in table)
    if reason.startswith(openings):
        reading.refusal = (f"{call.line}: the command hook's answer to {call.id} is not one this mod words "
                           "(a hook of another version?): it cannot be replayed as the module's")
        return reading
    reading.step["permission"] = {"hook-deny": reason}
    reading.expect += [{"permission": {"call": call.id, "outcome": "deny", "via": "hook"}},
                       {"answer": {"call": call.id, "error": {"startswith": HOOK_ERROR}}},
                       {"no run": {"argv": {"contains": "open"}}}]
    reading.clauses.append("PERM-REFUSED")
    return reading


def _read_taskstop(call: _ImportedCall, readings: dict[str, _Reading], calls: list[_ImportedCall]) -> _Reading:
    reading = _Reading()
    answer = call.answer
    task_id = call.input.get("task_id")
    started = next((c for c in calls if c.at_ms <= call.at_ms and c.id in readings and task_id is not None
                    and readings[c.id].agent_id == task_id), None)
    if started is not None:
        reading.step["worker"] = started.id
    result = answer["result"] if answer else None
    if answer is None:
        pass  # no answer in the log: nothing to expect of it
    elif not answer["is_error"] and isinstance(result, dict) and isinstance(result.get("task_id"), str):
        expected: dict[str, Any] = {"task_id": result["task_id"]}
        if isinstance(result.get("message"), str):
            expected["message"] = result["message"]
        reading.expect.append({"answer": {"call": call.id, "result": expected}})
    elif answer["is_error"]:
        words = _safe_words(answer["text"])
        reading.expect.append({"answer": {"call": call.id, "error": {"contains": words} if words else
                                          {"absent": False}}})
    else:
        reading.expect.append({"answer": {"call": call.id}})
    taken = started is not None and readings[started.id].taken
    if taken:
        assert started is not None
        reading.clauses += ["STOP-TAKEN", "STOP-ISOLATED" if readings[started.id].isolated else "STOP-SHARED"]
    else:
        reading.clauses.append("STOP-OTHER")
    return reading


# -- the whole log --------------------------------------------------------------------------------------


class _Session(Record):
    cwd: str | None = None
    branch: str | None = None
    git_repo: bool | None = None
    interactive: bool = True


def import_session(path: Path, sessions: str | None = None) -> Imported:
    """The scenario made from the session log at ``path`` (see the module's doc); :class:`LogError` when the
    log cannot be read at all."""
    file = str(path)
    problems: list[str] = []
    calls: dict[str, _ImportedCall] = {}
    start: int | None = None
    session = _Session()
    for number, raw in _lines(path):
        if raw is None:
            problems.append(f"{file}:{number}: a line over {MAX_LINE_BYTES} bytes; skipped")
            continue
        if not raw.strip():
            continue
        try:
            line = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            problems.append(f"{file}:{number}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
                            f"{error.start + 1}); skipped")
            continue
        except RecursionError:
            problems.append(f"{file}:{number}: nested too deep to read; skipped")
            continue
        except json.JSONDecodeError as error:
            problems.append(f"{file}:{number}: not a JSON line ({error.msg}); skipped")
            continue
        if not isinstance(line, dict):
            problems.append(f"{file}:{number}: not a JSON object; skipped")
            continue
        at = _ms(line.get("timestamp"))
        if at is not None and start is None:
            start = at
        offset = 0 if at is None or start is None else max(0, at - start)
        _read_line(file, number, line, offset, session, calls, problems)
    for call in calls.values():
        if call.answer is None:
            problems.append(f"{file}:{call.line}: the call {call.id} ({call.tool}) has no answer in the log")
    ordered = sorted(calls.values(), key=lambda c: (c.at_ms, c.line))
    return _scenario(file, path.name, ordered, session, sessions, problems)


def _read_line(file: str, number: int, line: dict[str, Any], offset: int, session: _Session,
               calls: dict[str, _ImportedCall], problems: list[str]) -> None:
    kind = line.get("type")
    if line.get("isSidechain"):
        return  # a subagent's own
    if kind == "attachment":
        attachment = line.get("attachment")
        if not isinstance(attachment, dict):
            return
        what = attachment.get("type")
        if what == "environment" and isinstance(attachment.get("snapshot"), dict):
            repo = attachment["snapshot"].get("isGitRepo")
            if isinstance(repo, bool) and session.git_repo is None:
                session.git_repo = repo
        elif what in ("hook_additional_context", "hook_system_message"):
            owner = str(attachment.get("toolUseID") or "").removesuffix("-context")
            content = attachment.get("content")
            texts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
            call = calls.get(owner)
            if call is not None:
                target = call.context if what == "hook_additional_context" else call.toasts
                target += [_clean(t)[0] for t in texts if isinstance(t, str)]
        return
    if kind not in ("assistant", "user"):
        return
    if isinstance(line.get("cwd"), str) and session.cwd is None:
        session.cwd = _clean(line["cwd"])[0]
        branch = line.get("gitBranch")
        session.branch = _clean(branch)[0] if isinstance(branch, str) else None
        session.interactive = line.get("entrypoint") != "sdk-cli"
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if kind == "assistant" and block.get("type") == "tool_use" and block.get("name") in TOOLS:
            problem = _take_call(block, line, number, offset, calls)
            if problem:
                problems.append(f"{file}:{number}: {problem}")
        elif kind == "user" and block.get("type") == "tool_result":
            call = calls.get(str(block.get("tool_use_id")))
            if call is None or call.answer is not None:
                continue
            decision = line.get("permissionDecision")
            call.answer = {
                "is_error": bool(block.get("is_error")),
                "text": _clean(_text_of(block.get("content")))[0],
                "result": _result(line.get("toolUseResult")),
                "denial": line.get("toolDenialKind"),
                "before_run": line.get("toolDenialBeforeRun") is True,
                "decision": decision.get("decision") if isinstance(decision, dict) else None,
                "decided_by": decision.get("source") if isinstance(decision, dict) else None,
            }
            call.answered_ms = offset


def _result(value: Any) -> Any:
    """The ``toolUseResult`` as far as it is read: nested deeper than a scenario could expect, it is not."""
    depth, _ = _shape(value)
    return _clean(value)[0] if depth <= MAX_INPUT_DEPTH else None


def _take_call(block: dict[str, Any], line: dict[str, Any], number: int, offset: int,
               calls: dict[str, _ImportedCall]) -> str | None:
    name = block.get("name")
    call_id, tool_input = block.get("id"), block.get("input")
    if not isinstance(call_id, str) or not call_id or _SURROGATE.search(call_id):
        return f"a {name} call without a usable tool_use id; skipped"
    if not isinstance(tool_input, dict):
        return f"the {name} call {call_id} has no input mapping; skipped"
    depth, count = _shape(tool_input)
    if depth > MAX_INPUT_DEPTH or count > MAX_INPUT_VALUES:
        return (f"the {name} call {call_id} has an input nested {depth} deep with {count} values, over what a "
                f"scenario holds ({MAX_INPUT_DEPTH} deep, {MAX_INPUT_VALUES} values); skipped")
    if name == "Agent":
        if not all(isinstance(tool_input.get(k), str) for k in ("description", "prompt")):
            return f"the Agent call {call_id} has no description or prompt; skipped"
        isolation = tool_input.get("isolation")
        if "isolation" in tool_input and isolation not in ("worktree", "remote"):  # null too: a scenario refuses it
            return (f"the Agent call {call_id} asks for isolation {json.dumps(isolation)[:40]}, which Claude Code "
                    "does not take (worktree or remote); skipped")
    if call_id in calls:
        return f"the call id {call_id} is given twice; skipped"
    cleaned, changed = _clean(tool_input)
    message = line.get("message")
    message_id = str(message.get("id") or line.get("uuid")) if isinstance(message, dict) else str(line.get("uuid"))
    calls[call_id] = _ImportedCall(call_id, str(name), cleaned, offset, message_id, number)
    if changed:
        return f"the {name} call {call_id} holds a lone surrogate, written as U+FFFD"
    return None


# -- the scenario -------------------------------------------------------------------------------------


def _compact(value: Any) -> Any:
    """Long texts of one repeated piece as ``!repeat``, so a large prompt stays within a scenario's size."""
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    if isinstance(value, str) and len(value) > LONG_TEXT:
        for size in range(1, 65):
            piece = value[:size]
            if len(value) % size == 0 and len(value) // size <= 1_000_000 and piece * (len(value) // size) == value:
                return Repeat(piece, len(value) // size)
    return value


def _step(call: _ImportedCall, reading: _Reading) -> dict[str, Any]:
    extra = dict(reading.step)
    if call.tool == "TaskStop" and set(call.input) == {"task_id"} and isinstance(call.input["task_id"], str):
        worker = extra.pop("worker", None)
        return {"taskstop": {"worker": worker} if worker else call.input["task_id"], "id": call.id, **extra}
    extra.pop("worker", None)
    step: dict[str, Any] = {"call": _compact(call.input), "id": call.id}
    if call.tool != "Agent":
        step["tool"] = call.tool
    return {**step, **extra}


def _git(session: _Session) -> Any:
    if session.git_repo is False:
        return {"exit": 128}  # no repository: git branch --show-current fails as git does there
    if session.branch == "HEAD":
        return "detached"
    if session.branch in ("detached", "missing"):
        return {"branch": session.branch}
    return session.branch or None


def _scenario(file: str, name: str, calls: list[_ImportedCall], session: _Session, sessions: str | None,
              problems: list[str]) -> Imported:
    readings: dict[str, _Reading] = {}
    for call in calls:
        first = next(c for c in calls if c.message == call.message)
        call.raised_ms = first.at_ms
        if call.tool == "Agent" and call.answer is None:
            continue
        reading = _read_agent(call) if call.tool == "Agent" else _read_taskstop(call, readings, calls)
        if reading.refusal is not None:
            return Imported("", problems, len(calls), refusal=f"{file}:{reading.refusal}")
        if reading.problem is not None:
            problems.append(f"{file}:{reading.problem}")
        readings[call.id] = reading
    steps, cut = _steps_of(calls, readings)
    scenario_session = _session_of(session, readings)
    clauses = [c for r in readings.values() for c in r.clauses]
    if sum(1 for c in calls if c.id in readings and readings[c.id].taken) > 1 and any(
            "parallel" in s and sum(1 for c in s["parallel"] if c.get("id") in readings
                                    and readings[c["id"]].taken) > 1 for s in steps if isinstance(s, dict)):
        clauses.append("BG-PARALLEL")
    about = (f"Made by `agent-cards import` from the session log {name}: each call's steps and expectations say "
             "how it was answered then, replayed against today's mod. Name the clauses the report is about and "
             "say here what went wrong.")
    if cut:
        about += f" Pauses longer than {MAX_GAP_MS // 60_000} minutes in the log are cut to that."
    scenario: dict[str, Any] = {
        "title": f"Imported from {name}: {len(calls)} call(s) of the main loop",
        "clauses": list(dict.fromkeys(clauses)) or ["TAKE-UNTOUCHED"],
        "about": about,
    }
    if scenario_session:
        scenario["session"] = scenario_session
    lich: dict[str, Any] = {}
    checkouts = list(dict.fromkeys(r.checkout for r in readings.values() if r.checkout))
    if checkouts:
        lich["checkout"] = checkouts[0]
    if sessions is not None:
        lich["lists"] = [{"read": 1, "stdout": sessions, "exit": 0}]
    if lich:
        scenario["lich"] = lich
    scenario["steps"] = steps
    expect = [e for c in calls if c.id in readings for e in readings[c.id].expect]
    scenario["expect"] = _unique(expect)
    text = to_yaml(scenario, width=120)
    refusal = _check(file, text)
    return Imported("" if refusal else text, problems, len(calls), refusal=refusal)


def _steps_of(calls: list[_ImportedCall], readings: dict[str, _Reading]) -> tuple[list[Any], bool]:
    """The steps, with the log's pauses as waits (bounded: ``cut`` says a pause was shortened)."""
    steps: list[Any] = []
    now = total = 0  # the end of the last step's calls, on the log's clock; the waits written so far
    cut = False
    i = 0
    while i < len(calls):
        group = [calls[i]]
        while i + len(group) < len(calls) and calls[i + len(group)].message == calls[i].message:
            group.append(calls[i + len(group)])
        gap = group[0].at_ms - now
        if gap > 0:
            wait = min(gap, MAX_GAP_MS, max(0, MAX_TOTAL_MS - total))
            cut = cut or wait < gap
            if wait:
                steps.append({"wait": wait})
                total += wait
        made = [_step(c, readings.get(c.id, _Reading())) for c in group]
        if len(made) == 1:
            steps.append(made[0])
        else:
            escs = [m.pop("esc_after") for m in made if "esc_after" in m]
            steps.append({"parallel": made, **({"esc_after": min(escs)} if escs else {})})
        now = max([group[0].at_ms, *(c.answered_ms for c in group if c.answered_ms is not None)])
        i += len(group)
    return steps, cut


def _session_of(session: _Session, readings: dict[str, _Reading]) -> dict[str, Any]:
    scenario_session: dict[str, Any] = {}
    if not session.interactive:
        scenario_session["interactive"] = False
    if session.cwd:
        scenario_session["cwd"] = session.cwd
    git = _git(session)
    if git is not None:
        scenario_session["git"] = git
    langs = {r.lang for r in readings.values() if r.lang} - {ENGLISH}
    if langs:
        scenario_session["lang"] = sorted(langs)[0]
    return scenario_session


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _check(file: str, text: str) -> str | None:
    """Why the scenario made cannot be written (its own reader refuses it), or None."""
    from agent_cards_simulator.scenario.reader import ScenarioError, read

    size = len(text.encode("utf-8"))
    if size > SCENARIO_BYTES:
        return (f"{file}:1: the scenario made from this log would be {size} bytes, over a scenario's limit of "
                f"{SCENARIO_BYTES}: cut the log to the calls the report is about")
    try:
        read("imported.yaml", text=text)
    except ScenarioError as error:
        first = error.lines()[0].split(": ", 1)[-1]
        return f"{file}:1: the scenario made from this log is not one the replay reads ({first})"
    return None


def read_sessions(path: str) -> str:
    """The ``--sessions`` file's text: a regular UTF-8 file of at most a scenario's size."""
    try:
        return read_file(path, limit=SCENARIO_BYTES // 2)
    except YamlError as error:
        raise LogError(f"{path}:{error.line}: {error.message}") from None


def main(args: list[str]) -> int:
    """``agent-cards import``."""
    prog = "agent-cards import"
    options = parse(import_parser(), args, files="log")
    if isinstance(options, int):
        return options
    if len(options.log) != 1:
        return usage_error(prog, "name one session log")
    if STDIN in (options.log[0], options.sessions):
        return usage_error(prog, "a session log and --sessions are read as files: - (standard input) is not one")
    output = None if options.output in (None, STDIN) else str(options.output)
    if output is not None and (problem := refused_output(output, options.force)):
        print(f"{prog}: {problem}", file=sys.stderr)
        return 2
    log = Path(options.log[0])
    try:
        sessions = read_sessions(options.sessions) if options.sessions is not None else None
        imported = import_session(log, sessions)
    except LogError as error:
        print(str(error), file=sys.stderr)
        return 2
    except RecursionError:  # every nesting the log can hold is bounded above; this is the last guard
        print(f"{log}:1: the log is nested too deep to read", file=sys.stderr)
        return 2
    for problem in imported.problems:
        print(problem, file=sys.stderr)
    if imported.refusal is not None:
        print(imported.refusal, file=sys.stderr)
        return 2
    if not imported.calls:
        print(f"{log}:1: no Agent or TaskStop call of the main loop in this log", file=sys.stderr)
        return 1
    if output is not None:
        return write_output(prog, output, imported.yaml, options.force)
    sys.stdout.write(imported.yaml)
    return 0
