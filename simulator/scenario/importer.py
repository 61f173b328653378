"""``agent-cards import SESSION.jsonl [--sessions FILE]``: a Claude Code session log made into a scenario.

Claude Code keeps a ``.jsonl`` log of every session (the ``transcript_path`` every hook receives). A
bug report often arrives as one. This reads it and writes a scenario that replays at once:

- every Agent and TaskStop call the model made on the main loop (a subagent's own calls, marked
  ``isSidechain``, are left out), with its input, its tool_use id, its order (calls made in one
  message are a ``parallel`` step) and its timing (the gaps between calls as ``wait`` steps);
- the session's directory (``cwd``), the branch Claude Code saw (``gitBranch``) and whether it was
  interactive (``claude -p`` logs as ``sdk-cli``);
- what Claude Code answered each call, as expectations, for the contributor to confirm or correct;
- with ``--sessions FILE`` (what ``lich sessions --json`` printed), lich's first ``sessions`` read
  answers with it.

Only those values are taken: a log line's other fields (the model's text, attachments, environment
values, request ids) never reach the scenario. A line that cannot be used is reported as
``FILE:LINE: why`` and skipped; lines of kinds that carry no call are skipped silently.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from agent_cards.arguments import STDIN, CommandParser, parse, refused_output, usage_error, write_output
from agent_cards.record import Record, field

TOOLS = ("Agent", "TaskStop")
IMPORT_DESCRIPTION = """Write a scenario from a Claude Code session log (the .jsonl Claude Code keeps for each
session, whose path every hook receives as transcript_path): every Agent and TaskStop call of the main loop with its
input, id, order and timing, the session's directory, and what Claude Code answered each call, as
expectations to confirm or correct. Lines it cannot use are reported as FILE:LINE: why, and skipped."""

IMPORT_EXIT = """exit status:
  0  the scenario was written (a skipped line is reported on stderr)
  1  the log holds no Agent or TaskStop call of the main loop
  2  a file cannot be read or written, or the command line is wrong"""


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


class _ImportedCall(Record):
    id: str
    tool: str
    input: dict[str, Any]
    at_ms: int
    message: str  # the assistant message that made it: calls of one message are raised at once
    answer: dict[str, Any] | None = None
    answered_ms: int | None = None


class Imported(Record):
    """The scenario as YAML text, and the ``FILE:LINE: why`` lines of what was skipped."""

    yaml: str
    problems: list[str] = field(default_factory=list)
    calls: int = 0


def _ms(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _first_line(text: str, limit: int = 80) -> str:
    for tag in ("<tool_use_error>", "</tool_use_error>"):
        text = text.replace(tag, "")
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = line.split(". ", 1)[0]  # the first sentence: what follows is Claude Code's own state then
    return line[:limit].rsplit(" ", 1)[0] if len(line) > limit else line


def import_session(path: Path, sessions: str | None = None) -> Imported:
    """The scenario made from the session log at ``path`` (see the module's doc)."""
    file = str(path)
    problems: list[str] = []
    calls: dict[str, _ImportedCall] = {}
    start: int | None = None
    cwd = branch = None
    interactive = True
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except json.JSONDecodeError as error:
                problems.append(f"{file}:{number}: not a JSON line ({error.msg}); skipped")
                continue
            if not isinstance(line, dict):
                problems.append(f"{file}:{number}: not a JSON object; skipped")
                continue
            at = _ms(line.get("timestamp"))
            if at is not None and start is None:
                start = at
            kind = line.get("type")
            if kind not in ("assistant", "user") or line.get("isSidechain"):
                continue  # kinds that carry no call of the main loop (a subagent's own: isSidechain)
            if isinstance(line.get("cwd"), str) and cwd is None:
                cwd = line["cwd"]
                branch = line.get("gitBranch") if isinstance(line.get("gitBranch"), str) else None
                interactive = line.get("entrypoint") != "sdk-cli"
            message = line.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if kind == "assistant" and block.get("type") == "tool_use" and block.get("name") in TOOLS:
                    problem = _take_call(block, line, at, start, calls)
                    if problem:
                        problems.append(f"{file}:{number}: {problem}; skipped")
                elif kind == "user" and block.get("type") == "tool_result":
                    call = calls.get(str(block.get("tool_use_id")))
                    if call is not None:
                        call.answer = {"is_error": bool(block.get("is_error")), "text": _text_of(block.get("content")),
                                       "result": line.get("toolUseResult")}
                        call.answered_ms = None if at is None or start is None else max(0, at - start)
    for call in calls.values():
        if call.answer is None:
            problems.append(f"{file}: the call {call.id} ({call.tool}) has no answer in the log")
    ordered = sorted(calls.values(), key=lambda c: c.at_ms)
    text = _scenario_yaml(path.name, ordered, cwd, branch, interactive, sessions)
    return Imported(text, problems, len(ordered))


def _take_call(block: dict[str, Any], line: dict[str, Any], at: int | None, start: int | None,
               calls: dict[str, _ImportedCall]) -> str | None:
    call_id, tool_input = block.get("id"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        return f"a {block.get('name')} call without a tool_use id"
    if not isinstance(tool_input, dict):
        return f"the {block.get('name')} call {call_id} has no input mapping"
    if block.get("name") == "Agent" and not all(isinstance(tool_input.get(k), str) for k in ("description", "prompt")):
        return f"the Agent call {call_id} has no description or prompt"
    if call_id in calls:
        return f"the call id {call_id} is given twice"
    message = line.get("message")
    message_id = str(message.get("id") or line.get("uuid")) if isinstance(message, dict) else str(line.get("uuid"))
    offset = 0 if at is None or start is None else max(0, at - start)
    calls[call_id] = _ImportedCall(call_id, str(block["name"]), dict(tool_input), offset, message_id)
    return None


def _expectation(call: _ImportedCall) -> dict[str, Any] | None:
    """What Claude Code answered ``call``, as an expectation on the replay's answer."""
    answer = call.answer
    if answer is None:
        return None
    if answer["is_error"]:
        return {"answer": {"call": call.id, "error": {"contains": _first_line(answer["text"])}}}
    result = answer["result"]
    if call.tool == "Agent" and isinstance(result, dict) and isinstance(result.get("status"), str):
        return {"answer": {"call": call.id, "result": {"status": result["status"]}}}
    if call.tool == "TaskStop" and isinstance(result, dict) and isinstance(result.get("task_id"), str):
        return {"answer": {"call": call.id, "result": {"task_id": result["task_id"]}}}
    return {"answer": {"call": call.id}}


def _clauses(calls: list[_ImportedCall]) -> list[str]:
    found = []
    for call in calls:
        result = call.answer.get("result") if call.answer else None
        if call.tool == "Agent":
            lich = isinstance(result, dict) and result.get("outputFile") == ""  # lich's answer has an empty one
            found.append("DELIV-PENDING" if lich else "TAKE-UNTOUCHED")
        else:
            found.append("STOP-OTHER" if call.answer and call.answer["is_error"] else "STOP-TAKEN")
    return list(dict.fromkeys(found)) or ["TAKE-UNTOUCHED"]


def _step(call: _ImportedCall) -> dict[str, Any]:
    if call.tool == "TaskStop" and set(call.input) == {"task_id"} and isinstance(call.input["task_id"], str):
        return {"taskstop": call.input["task_id"], "id": call.id}
    step: dict[str, Any] = {"call": call.input, "id": call.id}
    if call.tool != "Agent":
        step["tool"] = call.tool
    return step


def _scenario_yaml(name: str, calls: list[_ImportedCall], cwd: str | None, branch: str | None, interactive: bool,
                   sessions: str | None) -> str:
    steps: list[Any] = []
    now = 0  # the end of the last step's calls, on the log's clock
    i = 0
    while i < len(calls):
        group = [calls[i]]
        while i + len(group) < len(calls) and calls[i + len(group)].message == calls[i].message:
            group.append(calls[i + len(group)])
        if group[0].at_ms > now:
            steps.append({"wait": group[0].at_ms - now})
        steps.append(_step(group[0]) if len(group) == 1 else {"parallel": [_step(c) for c in group]})
        now = max([group[0].at_ms, *(c.answered_ms for c in group if c.answered_ms is not None)])
        i += len(group)
    session: dict[str, Any] = {}
    if not interactive:
        session["interactive"] = False
    if cwd:
        session["cwd"] = cwd
    if branch:
        session["git"] = branch
    scenario: dict[str, Any] = {
        "title": f"Imported from {name}: {len(calls)} call(s) of the main loop",
        "clauses": _clauses(calls),
        "about": (f"Made by `agent-cards import` from the session log {name}. The expectations say what "
                  "Claude Code answered then: confirm or correct them, name the clauses the report is about, "
                  "and say here what went wrong."),
    }
    if session:
        scenario["session"] = session
    if sessions is not None:
        scenario["lich"] = {"lists": [{"read": 1, "stdout": sessions, "exit": 0}]}
    scenario["steps"] = steps
    scenario["expect"] = [e for e in map(_expectation, calls) if e is not None]
    return yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


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
        sessions = Path(options.sessions).read_text(encoding="utf-8") if options.sessions is not None else None
    except OSError as error:
        print(f"{error.filename or options.sessions}:1: cannot read the file: {error.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as error:
        print(f"{options.sessions}:1: not UTF-8 text (byte {error.start}): what `lich sessions --json` printed is",
              file=sys.stderr)
        return 2
    try:
        imported = import_session(log, sessions)
    except OSError as error:
        print(f"{error.filename or log}:1: cannot read the file: {error.strerror}", file=sys.stderr)
        return 2
    for problem in imported.problems:
        print(problem, file=sys.stderr)
    if not imported.calls:
        print(f"{log}:1: no Agent or TaskStop call of the main loop in this log", file=sys.stderr)
        return 1
    if output is not None:
        return write_output(prog, output, imported.yaml, options.force)
    sys.stdout.write(imported.yaml)
    return 0
