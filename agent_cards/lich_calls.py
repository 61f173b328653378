"""The commands the mod runs and how it reads what they print, shared by every host of the mod.

The core of a taken call (``agent_cards.taken``) names these commands and reads what they printed;
every host runs them the same way, only with its own runner (``$.process.run`` in the mod engine,
``subprocess`` in the command hook). Nothing in this module does I/O.

| step  | argv                                                                       | timeout |
|-------|----------------------------------------------------------------------------|---------|
| base  | ``git branch --show-current`` (isolated calls only)                         | 30 s    |
| open  | ``$LICH_BIN open --kind claude --subagent [--worktree B [--base C]]``       | 120 s   |
|       | ``[--model M] --prompt P --json``                                           |         |
| list  | ``$LICH_BIN sessions --json``                                               | 30 s    |
| stop  | ``$LICH_BIN close NAME`` (shared), ``$LICH_BIN control NAME abort`` (isolated) | 30 s    |
"""

from __future__ import annotations

import json
from typing import Any

from agent_cards.delivery import lich_reason
from agent_cards.engine import DEFAULT_TIMEOUT_MS, Event, ProcessResult, text
from agent_cards.state import Worker
from agent_cards.texts import person_text

OPEN_TIMEOUT_MS = 120_000  # lich's own limit for an open with a task: 60 + 20 + 30 s (OPEN-TIMEOUT)
STOP_TIMEOUT_MS = DEFAULT_TIMEOUT_MS
BASE_TIMEOUT_MS = DEFAULT_TIMEOUT_MS
BASE_ARGV = ("git", "branch", "--show-current")


def base_of(result: ProcessResult) -> str:
    """OPEN-BASE / BASE-NONE: the asking session's branch, or "" (detached HEAD, or git failed)."""
    return result.stdout.strip() if result.exit_code == 0 else ""


def open_argv(lich_bin: str, e: Event, branch: str, base: str) -> list[str]:
    """OPEN-ARGV / OPEN-MODEL: one argv, no shell. ``branch`` is "" for a call in this checkout."""
    argv = [lich_bin, "open", "--kind", "claude", "--subagent"]
    if branch:
        argv += ["--worktree", branch] + (["--base", base] if base else [])
    model = e.get("model")
    if isinstance(model, str) and model:
        argv += ["--model", model]
    return [*argv, "--prompt", text(e.get("prompt")), "--json"]


def list_argv(lich_bin: str) -> list[str]:
    """FOOTER-POLL: the roster read."""
    return [lich_bin, "sessions", "--json"]


def task_id_of(e: Event) -> str:
    """TaskStop's id: ``task_id``, else the deprecated ``shell_id``."""
    return text(e.get("task_id")) or text(e.get("shell_id"))


def stop_argv(lich_bin: str, worker: Worker) -> list[str]:
    """STOP-SHARED: close a worker in this checkout. STOP-ISOLATED: stop an isolated worker's turn."""
    if worker.shared:
        return [lich_bin, "close", worker.name]
    return [lich_bin, "control", worker.name, "abort"]


#: ``control … abort`` exits 2 when the session took the abort but has not confirmed it yet (it still goes
#: through) and 3 when the session ended first: neither is a refusal (docs/decisions.md).
CONTROL_GOES_THROUGH = frozenset({2, 3})


def stop_refusal(worker: Worker, result: ProcessResult) -> str | None:
    """STOP-REFUSED: lich's reason when it refused the stop; None when the worker was stopped."""
    if result.exit_code == 0 or (not worker.shared and result.exit_code in CONTROL_GOES_THROUGH):
        return None
    return lich_reason(result)


def stop_result(task_id: str, worker: Worker) -> dict[str, Any]:
    """STOP-RESULT: TaskStop's own result shape (its message is Claude Code's wording, in English)."""
    return {
        "message": person_text("taskstop.message", task_id=task_id, description=worker.description),
        "task_id": task_id,
        "task_type": "local_agent",
        "command": worker.description,
    }


def listed_states(result: ProcessResult) -> dict[str, Any] | None:
    """``sessions --json`` as ``{roster name: state}``; None when lich could not give the list (or printed
    something that is not one: garbage, or JSON nested deeper than the parser goes)."""
    if result.exit_code != 0:
        return None
    try:
        listed = json.loads(result.stdout)
    except (ValueError, RecursionError):  # RecursionError: a list nested too deep would fail every poll
        return None
    if not isinstance(listed, list):
        return None
    return {str(p.get("name")): p.get("state") for p in listed if isinstance(p, dict)}


def still_running(worker: Worker, listed: dict[str, Any]) -> bool:
    """FOOTER-SHARED-DONE: listed at all. FOOTER-ISOLATED-DONE: listed and not ``done``."""
    if worker.name not in listed:
        return False
    return worker.shared or listed[worker.name] != "done"


def finished(workers: tuple[Worker, ...], listed: dict[str, Any]) -> set[str]:
    return {w.name for w in workers if not still_running(w, listed)}
