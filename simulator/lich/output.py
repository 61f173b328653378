"""What the fake lich puts out: a command's :class:`LichRun`, the :class:`Note` it types later, and its texts.

The texts here are those beyond one command's own lines: the errors every command shares, Go's JSON, the
prose of a Result and the notes typed later. A command's own wording (``Closed "…".``, ``… stopped its
turn.``) stays with the command, in :mod:`agent_cards_simulator.lich.commands`. Labels are quoted as Go quotes them.
"""

from __future__ import annotations

from agent_cards.record import Value
from agent_cards_simulator.lich.goflags import go_quote

__all__ = [
    "CALL_MS", "NO_APP", "NO_LICH", "LichRun", "Note", "Refused", "json_line", "note_text", "result_prose",
    "unknown_command",
]

CALL_MS = 30  # how long every command but ``open`` takes (``open`` takes its OpenScript.ms)


class LichRun(Value):
    """One command's outcome. With ``hang`` the command never returns: exit_code is -1 and ms meaningless."""

    stdout: str
    stderr: str
    exit_code: int
    ms: int
    hang: bool = False


class Note(Value):
    """A note lich types at the asking session's prompt at ``at_ms`` (a worker's report, or a plain errand's result)."""

    at_ms: int
    text: str


class Refused(Exception):
    """A refusal: one ``lich: <reason>`` line on stderr, exit 1, in ``CALL_MS``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def run(self) -> LichRun:
        return LichRun("", f"lich: {self.reason}\n", 1, CALL_MS)


# --- texts -------------------------------------------------------------------------------------------------

NO_LICH = "no lich is running — open lich, or run this inside one of its sessions"
NO_APP = "this fake lich has no app to launch: name a command (`lich help` lists them)"

_GO_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029"))


def json_line(value: object) -> str:
    """One line of JSON as Go's encoding/json writes it: compact, with <, >, & and U+2028/9 escaped."""
    from agent_cards_simulator.lich.quick import dumps  # json's, without loading json and re: lich starts on every call

    text = dumps(value, ensure_ascii=False, separators=(",", ":"))
    ascii = text.isascii()
    if not ascii and not _encodable(text):  # a lone surrogate: U+FFFD, as Go writes invalid UTF-8
        text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    for ch, esc in _GO_JSON_ESCAPES[:3] if ascii else _GO_JSON_ESCAPES:  # U+2028/9 are not ASCII
        text = text.replace(ch, esc)
    return text + "\n"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unknown_command(word: str, nearest: str | None) -> str:
    """The stderr of an unknown subcommand, with the nearest command name when one is close."""
    hint = f" — did you mean {go_quote(nearest)}?" if nearest else ""
    return f"lich: unknown command {go_quote(word)}{hint}\nRun `lich help` for the list.\n"


def result_prose(label: str, ticket: str, status: str, answer: str, private: bool) -> str:
    """The prose of a Result, in this fake's own words."""
    q = go_quote(label)
    if status == "answered":
        text = answer
    elif status == "pending" and private:
        text = (f"{q} is still working on it (ticket {ticket}). The errand is private: no note will come, and a "
                f"plain lich wait will not return it; hold the line with: lich wait {ticket}")
    elif status == "pending":
        text = (f"{q} is still working on it, and the errand stays open (ticket {ticket}). A note will be typed "
                f"at your prompt when the result is ready; to hold the line instead, run: lich wait {ticket}")
    else:
        text = {
            "unread": f"{q} never picked the task up: something else holds its terminal (an agent still starting, "
                      "or a trust question). Nothing is queued or answered: open its card, then send the task again.",
            "undelivered": f"The task never reached {q}: its terminal was not at a prompt, and it ended or stayed "
                           "that way too long. Nothing is queued or answered: open its card, then send it again.",
            "unanswered": f"{q} finished its turn without answering through lich: its output is in that session, "
                          f"and a late answer can still arrive on ticket {ticket} within the hour.",
            "stopped": f"{q} was closed before it answered: no answer is coming.",
            "expired": f"{q} did not answer within the hour: no answer is coming. Open its card to see why.",
        }.get(status, f"{q} left the errand {status} (ticket {ticket}).")
    return text if text.endswith("\n") else text + "\n"


def note_text(*, subagent: bool, label: str, branch: str, ticket: str, answer: str, bin: str) -> str:
    """The note typed at the asking session's prompt once a worker answered."""
    if subagent:  # a --subagent worker's note is its report itself
        where = f" on branch {branch}" if branch else ""
        return (f"[lich] Session {go_quote(label)}{where} finished the task you handed it (ticket {ticket})."
                f" Its report:\n\n{answer}")
    # a plain errand's note says where to collect the result
    return (f"[lich] The task you sent {go_quote(label)} has its result ready. To collect everything at once, "
            f'call the lich tool `wait_for_answer` with no ticket, or run:\n  "{bin}" wait')
