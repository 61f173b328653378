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
    # Toasts: what happened and the fix first, the slots last (``toast_text`` cuts them to fit the box).
    "toast.cards_off": (
        'Agent ran natively: lich keeps a worker\'s own subagents native. "{description}"'
    ),
    "toast.oversize": (
        'Agent ran natively: its task is {bytes} bytes, over lich\'s {limit}-byte limit. "{description}"'
    ),
    "toast.open_failed": 'lich failed: agent ran natively. "{description}": {reason}',
    "toast.not_reached": (
        'lich failed: agent ran natively. "{description}" did not reach card "{label}": {reason}'
    ),
    # OPEN-TIMEOUT: the open ran past its two minutes and was stopped (its process group ended).
    "toast.open_timeout": (
        'lich timed out: agent ran natively. lich open gave no answer in 2 min: "{description}"'
    ),
    # The command hook: a call it leaves to Claude Code because only Claude Code can check it.
    "toast.hook_rule": (
        'Agent ran natively: only Claude Code applies the rule {rule}. "{description}"'
    ),
    # PERM-PLAN (the mod at agent.spawn, the command hook at PreToolUse): a lich worker is not held to plan mode.
    "toast.plan_mode": 'Plan mode: agent ran natively, held to it. A lich card would not be: "{description}"',
    "footer.workers.one": "lich: 1 worker",
    "footer.workers.many": "lich: {count} workers",
    # Claude Code's own TaskStop wording (STOP-RESULT), kept as it is.
    "taskstop.message": "Successfully stopped task: {task_id} ({description})",
    # The bridge's own toasts (hooks/agent-cards.js shows them): {python} is the interpreter, {reason} why.
    "bridge.no_python": (
        "No Python 3.11+: set AGENT_CARDS_PYTHON. Agent calls run natively. {python}: {reason}"
    ),
    "bridge.old_python": (
        "Old Python: set AGENT_CARDS_PYTHON to 3.11+. Agent calls run natively. {python} is {reason}"
    ),
    "bridge.failed": "agent cards failed: agent ran natively. {reason}",
    # The session host did not say hello before the hook's budget would run out: the call runs natively.
    "bridge.slow": "Agent ran natively: Python was too slow",
}


# -- toasts: what Claude Code shows ------------------------------------------------------------------

#: Measured on Claude Code 2.1.328's interactive screen (at 80 and 200 columns alike): a toast is a box of 44
#: columns under the plugin's name, 40 of text, 3 lines; a word that does not fit starts the next line, a word
#: longer than a line is broken, and what is left after the third line is cut with "…".
TOAST_WIDTH = 40
TOAST_LINES = 3
#: The slots a toast may shorten to fit, the first one first (a reason is the longest and the least needed).
CUT_FIRST = ("reason", "label", "python", "description", "rule")


def toast_lines(text: str) -> list[str]:
    """``text`` as the engine's toast box lays it out, every line (the box then shows ``TOAST_LINES``)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) <= TOAST_WIDTH:
            line = f"{line} {word}"
            continue
        if line:
            lines.append(line)
        rest = word
        while len(rest) > TOAST_WIDTH:
            lines.append(rest[:TOAST_WIDTH])
            rest = rest[TOAST_WIDTH:]
        line = rest
    if line:
        lines.append(line)
    return lines


def fits(text: str) -> bool:
    """Whether the toast box shows ``text`` whole."""
    return len(toast_lines(text)) <= TOAST_LINES


def toast_text(key: str, **values: object) -> str:
    """A toast that fits the box: its slots (``CUT_FIRST`` order) cut with "…" as far as needed.

    The fixed words come first and are never cut; the whole text, ``person_text(key, ...)``, is what a
    host writes to its log when this one was cut.
    """
    template = PERSON[key]
    text = template.format(**values)
    if fits(text):
        return text
    given = {name: str(value) for name, value in values.items()}
    for name in CUT_FIRST:
        value = given.get(name)
        if name not in slots(template) or not value:
            continue
        short, long = 0, len(value)  # the longest prefix that fits lies in [short, long]
        while short < long:
            middle = (short + long + 1) // 2
            if fits(template.format(**{**given, name: value[:middle].rstrip() + "…"})):
                short = middle
            else:
                long = middle - 1
        given[name] = value[:short].rstrip() + "…"
        text = template.format(**given)
        if fits(text):
            return text
    return text


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
