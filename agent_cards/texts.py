"""Every text the mod writes, in one catalog: keyed, with ``{slots}``.

Two audiences:
- ``AGENT``: what the model reads (context lines, the ``completed`` text, deny reasons). It follows
  ``LICH_PROMPT_LANG``; each language has exactly the English keys and slots.
- ``PERSON``: toasts, the footer label and TaskStop's message. They stay English in every language, as
  lich's own toasts and Claude Code's TaskStop message do (docs/decisions.md).

Literals the agent must type or recognise stay untranslated in every language: ``[lich]``,
``send_to_session``, ``lich send``, ``SendMessage``, ``wait_for_answer``, ``task notification``, branch
names and lich's status names.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from agent_cards.languages import TRANSLATIONS

ENGLISH = "en"

AGENT: dict[str, str] = {
    # RESULT-CONTEXT: where the worker is, that its report comes on its own, how to reach it.
    "context.shared": (
        'lich session "{label}" took this task in a card of its own and works in this same checkout '
        "({path}), editing the same files you are. Its whole report comes back by itself as a [lich] note, "
        "not as a task notification, so there is nothing to collect (wait_for_answer still works). "
        "SendMessage cannot reach that session; send_to_session or lich send can."
    ),
    "context.isolated": (
        'lich session "{label}" took this task in a card of its own, on branch {branch} in its own worktree '
        "({path}), not in this checkout. Its whole report comes back by itself as a [lich] note, not as a "
        "task notification, so there is nothing to collect (wait_for_answer still works). SendMessage "
        "cannot reach that session; send_to_session or lich send can."
    ),
    # DELIV-ANSWERED: the report, then where the work is.
    "completed.shared": (
        "{answer}\n\n"
        'lich session "{label}" did this work in this same checkout ({path}). To reach that session, use '
        "send_to_session or lich send, not SendMessage."
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'lich session "{label}" did this work on branch {branch} in its own worktree ({path}), not in this '
        "checkout. To reach that session, use send_to_session or lich send, not SendMessage."
    ),
    # DELIV-NEVER
    "deny.never_reached": (
        'lich opened the card "{label}", but the task never reached it (status: {status}). Nothing is '
        "working on it: ask the user to open that card and see what holds it."
    ),
    # DELIV-UNKNOWN
    "deny.unknown": (
        'lich opened the card "{label}" and answered the hand-off with a status this mod does not know '
        "({status}). Do not start this work again here: ask the user to open that card."
    ),
    "deny.unknown.isolated": (
        'lich opened the card "{label}" on branch {branch} and answered the hand-off with a status this '
        "mod does not know ({status}). Do not start this work again here: ask the user to open that card."
    ),
    # FALL-ESC-OPEN
    "deny.esc": (
        "This Agent call was interrupted while lich was opening a card for it. A lich session may already "
        "hold the task; if it does, its report still comes back as a [lich] note."
    ),
    "deny.esc.isolated": (
        "This Agent call was interrupted while lich was opening a card for it on branch {branch}. A lich "
        "session may already hold the task; if it does, its report still comes back as a [lich] note."
    ),
    "deny.timeout": (
        'lich did not finish opening a card for this Agent call within two minutes. A lich session may '
        'already hold the task, so it is not run here as well; if one does, its report still comes back as a '
        '[lich] note.'
    ),
    "deny.timeout.isolated": (
        'lich did not finish opening a card for this Agent call on branch {branch} within two minutes. A lich'
        ' session may already hold the task, so it is not run here as well; if one does, its report still '
        'comes back as a [lich] note.'
    ),
    # PERM-DENY-SPAWN: what the native spawn is told; the Agent call itself answers with lich's outcome.
    "deny.spawn": 'lich runs this agent as the card "{label}" instead.',
    # STOP-REFUSED
    "deny.stop_refused": 'lich could not stop the session "{label}": {reason}.',
    # The command hook (agent_cards.hook) can answer only with a deny, which the model reads as a hook
    # error. These lines open that deny and say it is not a refusal; the context line (launched) or the
    # completed text follows them. TaskStop never reaches a command hook for a worker (Claude Code
    # checks the id first), so the launched lines name the lich command that stops it.
    "hook.launched.shared": (
        "This Agent call was not refused: lich took it, so no subagent runs here and it must not be "
        'started again. The worker\'s agentId is {name}. TaskStop cannot reach it: to stop it, run "$LICH_BIN" '
        "close {name}."
    ),
    "hook.launched.isolated": (
        "This Agent call was not refused: lich took it, so no subagent runs here and it must not be "
        'started again. The worker\'s agentId is {name}. TaskStop cannot reach it: to stop its turn, run '
        '"$LICH_BIN" control {name} abort (its card and worktree stay for the user).'
    ),
    "hook.completed": (
        "This Agent call was not refused: lich took it, and its worker (agentId {name}) has already "
        "answered. Its report:"
    ),
    "hook.stopped.shared": (
        'TaskStop was carried out, not refused: lich closed the session "{label}" (agentId {name}), so '
        "that worker has stopped."
    ),
    "hook.stopped.isolated": (
        'TaskStop was carried out, not refused: lich stopped the turn of the session "{label}" (agentId '
        "{name}). Its card and its worktree stay for the user."
    ),
    # The bridge (agent_cards.bridge, hooks/agent-cards.js): its session host stopped while a command
    # ({program}: its name) ran for the call, so lich may have the task (FALL-BEFORE-ONLY).
    "bridge.unsure": (
        "This Agent call was not run: the agent cards bridge stopped while {program} was running for it, so "
        "lich may already have the task. Look for the worker in lich before asking again; running it here "
        "as well could do the work twice."
    ),
    # After claude --continue or --resume: Claude Code's own record of a worker (the async_launched answer)
    # died with the process before, so it tells the model the agent failed; the lich worker still runs.
    "resume.still_running": (
        'lich session "{label}" (agentId {name}) still runs: the task notification saying it failed is Claude '
        "Code's own record, lost with the previous process. Do not redo its work; its report arrives as a "
        "[lich] note, and TaskStop still stops it."
    ),
}

PERSON: dict[str, str] = {
    "toast.cards_off": (
        'Agent "{description}" runs inside Claude Code: this session is itself a lich subagent, and lich '
        "keeps a subagent's own subagents native."
    ),
    "toast.oversize": (
        'Agent "{description}" runs inside Claude Code: its task is {bytes} bytes, over lich\'s {limit}-byte limit.'
    ),
    "toast.open_failed": 'Agent "{description}" runs inside Claude Code: lich could not open a card ({reason}).',
    "toast.not_reached": (
        'Agent "{description}" runs inside Claude Code: lich opened the card "{label}", but the task did '
        "not reach it ({reason})."
    ),
    # The command hook: a call it leaves to Claude Code because only Claude Code can check it.
    "toast.hook_rule": (
        'Agent "{description}" runs inside Claude Code: the permission rule {rule} covers it, and only '
        "Claude Code can apply that rule."
    ),
    "toast.hook_plan": (
        'Agent "{description}" runs inside Claude Code: plan mode is on, and a lich session would not be '
        "held to it."
    ),
    "footer.workers.one": "lich: 1 worker",
    "footer.workers.many": "lich: {count} workers",
    # Claude Code's own TaskStop wording (STOP-RESULT), kept as it is.
    "taskstop.message": "Successfully stopped task: {task_id} ({description})",
    # The bridge's own toasts (hooks/agent-cards.js shows them): {python} is the interpreter, {reason} why.
    "bridge.no_python": (
        "agent cards could not start Python ({python}: {reason}), so Agent calls run inside Claude Code this "
        "session. Set AGENT_CARDS_PYTHON to a Python 3.11 or newer."
    ),
    "bridge.old_python": (
        "agent cards needs Python 3.11 or newer and {python} is {reason}, so Agent calls run inside Claude "
        "Code this session. Set AGENT_CARDS_PYTHON to a newer one."
    ),
    "bridge.failed": "agent cards stopped working for this call ({reason}); it ran inside Claude Code.",
    # The session host did not say hello before the hook's budget would run out: the call runs natively.
    "bridge.slow": "Agent ran natively: Python was too slow",
}


def slots(template: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


def match_language(tag: str | None) -> str:
    """The catalog language for a ``LICH_PROMPT_LANG`` tag; English when unset or unknown.

    Matching (docs/decisions.md): exact first; then case-insensitive with ``_`` read as ``-`` and any
    ``.encoding`` or ``@modifier`` dropped (``pt_BR.UTF-8`` → ``pt-BR``); then the language alone
    (``es-MX`` → ``es``, ``pt`` → ``pt-BR``, ``zh``/``zh-SG``/``zh-Hans`` → ``zh-CN``). Traditional
    Chinese (``zh-TW``, ``zh-HK``, ``zh-Hant``) is not Simplified Chinese and reads English.
    """
    if not tag:
        return ENGLISH
    if tag in TRANSLATIONS or tag == ENGLISH:
        return tag
    wanted = tag.split(".")[0].split("@")[0].replace("_", "-").lower()
    known = {lang.lower(): lang for lang in (ENGLISH, *TRANSLATIONS)}
    if wanted in known:
        return known[wanted]
    parts = wanted.split("-")
    if parts[0] == "zh" and any(p in {"tw", "hk", "mo", "hant"} for p in parts[1:]):
        return ENGLISH
    by_language = {lang.split("-")[0].lower(): lang for lang in TRANSLATIONS}
    return by_language.get(parts[0], ENGLISH)


def agent_text(lang: str | None, key: str, **values: object) -> str:
    """An agent-facing text in the session's prompt language (English when the language lacks it)."""
    table: Mapping[str, str] = TRANSLATIONS.get(match_language(lang), AGENT)
    return table.get(key, AGENT[key]).format(**values)


def person_text(key: str, **values: object) -> str:
    return PERSON[key].format(**values)
