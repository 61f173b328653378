"""The fake lich's world: the sessions it opened, their lives over virtual time, the notes they bring.

All state lives in :class:`LichWorld` and round-trips through :meth:`LichWorld.to_json` /
:meth:`LichWorld.from_json` as plain JSON values. There is no I/O, no real time and no randomness:
a session's state at any time is derived from the times it keeps (opened, answers, closed, aborted).
:meth:`LichWorld.run` answers one command line through :mod:`agent_cards_simulator.lich.commands`.

Fixed schemes of this fake:

- **ids** are 4 hex digits from a counter: ``9f81``, ``9f82``, … (``0x9f80 + n``). Tickets are 8 hex
  digits (``a1b2c301``, …) and control command ids 4 (``7c01``, …). The asking session's id is whatever
  ``LICH_SESSION_ID`` says; pick one outside those ranges (``3c4d``, say).
- **labels**: an open without ``--worktree`` is labelled ``Session <n>`` from a project counter that
  starts at 2 (the asking session counts as Session 1, though it is labelled ``caller_label``); every
  open without ``--worktree`` bumps it, one with a scripted label too. An open with
  ``--worktree <branch>`` is labelled ``<branch>``.
- **roster names** are ``<slug of the label>-<id>``: lower-case, every run of characters other than
  ``a-z0-9`` turned into one ``-``, e.g. ``session-2-9f81``, ``subagent-fix-the-auth-flow-ab12-9f82``.
- **a worker's life**: busy from its open until its scripted report, then done; a shared
  ``--subagent`` worker leaves the roster once it answered, unless its turn left a background command;
  a closed one leaves at once, and a report still to come never comes (nor its note); an aborted one
  is done, stays listed, and never reports.
"""

from __future__ import annotations

from agent_cards.record import Record, Value, plain
from agent_cards_simulator.lich import commands
from agent_cards_simulator.lich.goflags import go_quote
from agent_cards_simulator.lich.output import CALL_MS, LichRun, Note, Refused, json_line, note_text
from agent_cards_simulator.lich.scripts import LichScript, ReportScript, script_from_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from agent_cards_simulator.lich.scripts import OpenScript

__all__ = ["OPEN_ERRAND", "Caller", "LichSession", "LichWorld", "slug"]

#: Delivery statuses after which the errand is still open, so a later answer comes back as a note.
OPEN_ERRAND: frozenset[str | None] = frozenset({None, "pending", "unanswered"})


def slug(label: str) -> str:
    """The label lower-cased, every run of characters other than a-z0-9 one ``-`` (none at the ends).

    Written out rather than as ``re.sub``: compiling that pattern would cost every lich call ~75 µs. Kept
    once worked out: the asking session's name is worked out on every call.
    """
    known = _SLUGS.get(label)
    if known is None:
        if len(_SLUGS) >= 256:
            _SLUGS.clear()
        known = _SLUGS[label] = _slug(label)
    return known


_SLUGS: dict[str, str] = {}


def _slug(label: str) -> str:
    out: list[str] = []
    gap = False
    for ch in label.lower():
        if "a" <= ch <= "z" or "0" <= ch <= "9":
            if gap and out:
                out.append("-")
            out.append(ch)
            gap = False
        else:
            gap = True
    return "".join(out) or "session"


class LichSession(Record):  # mutable, so compared by identity (the world tells sessions apart with `is`)
    """A session this lich opened. Its state over time is derived from the times below."""

    id: str
    label: str
    name: str
    kind: str
    project: str
    path: str
    branch: str  # "" for a session in a shared checkout
    folder: str
    subagent: bool
    origin_id: str
    origin_label: str
    opened_at: int
    bin: str  # argv[0] of the open, for the nudge note
    ticket: str = ""  # "" when no task reached it
    status: str | None = None  # the delivery status its open printed
    first_state: str = ""  # state until it answers: "busy", "done" or ""
    answer_at: int | None = None
    answer: str = ""
    close_on_answer: bool = False  # a shared --subagent worker is closed once it answered
    closed_at: int | None = None
    aborted_at: int | None = None
    note_sent: bool = False

    def state(self, now: int) -> str:
        answered = self.answer_at is not None and now >= self.answer_at
        aborted = self.aborted_at is not None and now >= self.aborted_at
        return "done" if answered or aborted else self.first_state

    def live(self, now: int) -> bool:
        """Not closed yet, and not a worker closed on answering that has answered by ``now``."""
        closed = self.closed_at
        if closed is not None and now >= closed:
            return False
        answered = self.answer_at
        return not (self.close_on_answer and answered is not None and now >= answered)

    def note_pending(self) -> bool:
        return bool(self.ticket) and self.status in OPEN_ERRAND and not self.note_sent

    def hand_over(self, ticket: str, script: OpenScript) -> None:
        """The task reached the send: its life from the delivery and the report."""
        self.ticket, self.status = ticket, script.delivery
        if self.status in ("unread", "undelivered"):
            return  # the task never reached its prompt: state "" and no answer
        self.first_state = "done" if self.status == "unanswered" else "busy"
        report = script.report
        if report is None and self.status == "answered":
            report = ReportScript(script.ms, script.answer)  # answered within the open: the open collected it
        if report is not None:
            self.answer_at, self.answer = self.opened_at + report.after_ms, report.text
            self.close_on_answer = self.subagent and not self.branch and not report.background

    def close(self, now: int) -> None:
        self.closed_at = now
        if self.answer_at is not None and self.answer_at > now:
            self.answer_at = None  # its report will never come, nor its note (STOP-SILENT)

    def abort(self, now: int) -> None:
        self.aborted_at = now
        self.close_on_answer = False  # a turn stopped with Esc is not closed by lich
        if self.answer_at is not None and self.answer_at > now:
            self.answer_at = None


class Caller(Value):
    """The asking session (``LICH_SESSION_ID``): one of this lich's sessions, or the scenario's own."""

    id: str
    label: str
    name: str
    folder: str


class LichWorld:
    """The mutable state of one fake lich. Calls are expected in non-decreasing ``now_ms`` order."""

    def __init__(self, script: LichScript) -> None:
        self.script = script
        self.sessions: list[LichSession] = []
        self.counters: dict[str, int] = {"id": 0, "label": 2, "ticket": 0, "command": 0, "open": 0}
        # sessions --json's last answer: (caller's id, from ms, until ms, answer); see roster_run
        self._roster: tuple[str, int, float, LichRun] | None = None

    # persistence

    def to_json(self) -> dict[str, Any]:
        return {"script": plain(self.script), **self.changes_to_json()}

    def changes_to_json(self) -> dict[str, Any]:
        """What calls change: ``to_json()`` without the script (which never changes)."""
        return {"sessions": [plain(s) for s in self.sessions], "counters": dict(self.counters)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LichWorld:
        world = cls(script_from_json(data["script"]))
        world.sessions = [LichSession(**s) for s in data["sessions"]]
        world.counters = {str(k): int(v) for k, v in data["counters"].items()}
        return world

    # observation

    def notes_due(self, until_ms: int) -> list[Note]:
        """The notes not yet emitted whose time is ``<= until_ms``, in time order; marks them emitted."""
        due = [(s.answer_at, s) for s in self.sessions if s.note_pending() and s.answer_at is not None
               and s.answer_at <= until_ms]
        due.sort(key=lambda pair: pair[0])
        for _, s in due:
            s.note_sent = True
        return [Note(at, note_text(subagent=s.subagent, label=s.label, branch=s.branch, ticket=s.ticket,
                                   answer=s.answer, bin=s.bin)) for at, s in due]

    def next_note_at(self) -> int | None:
        """The earliest time a pending note is due. The host asks after every run, so it is one pass that
        reads ``answer_at`` first (most sessions have none) and builds nothing."""
        due: int | None = None
        for s in self.sessions:
            at = s.answer_at
            if at is not None and (due is None or at < due) and s.note_pending():
                due = at
        return due

    def roster_run(self, me: str, now: int) -> LichRun:
        """``sessions --json`` at ``now`` for the caller whose id is ``me`` (no scripted window covers ``now``).

        A poll reads it every 5 s and it rarely changes, so the answer is kept until a command
        other than ``sessions`` runs (:meth:`changed`: only commands change sessions), the next time a
        session answers, is stopped or is closed (what its state and its place on the list follow), or
        the next scripted window of the list opens; :meth:`run` answers from it without parsing again.
        """
        kept = self._kept(me, now)
        if kept is not None:
            return kept
        line = json_line(self.listed(me, now))
        turns = [t for s in self.sessions for t in (s.answer_at, s.aborted_at, s.closed_at)
                 if t is not None and t > now]
        turns += [window.from_ms for window in self.script.lists if window.from_ms > now and window.read is None]
        ms = self.script.sessions_ms
        run = LichRun(line, "", 0, CALL_MS if ms is None else ms)
        self._roster = (me, now, min(turns, default=float("inf")), run)
        return run

    def _kept(self, me: str, now: int) -> LichRun | None:
        kept = self._roster
        return kept[3] if kept is not None and kept[0] == me and kept[1] <= now < kept[2] else None

    def listed(self, me: str, now: int) -> list[dict[str, Any]]:
        """The rows ``sessions`` lists at ``now`` for the caller whose id is ``me``: every live session but it."""
        return [self.row(s, now) for s in self.sessions if s.id != me and s.live(now)]

    def changed(self) -> None:
        """A command that may change sessions ran: the kept ``sessions --json`` line is stale."""
        self._roster = None

    def roster(self, now_ms: int) -> list[dict[str, Any]]:
        """What ``sessions --json`` lists at ``now_ms``, the asking session aside."""
        return [self.row(s, now_ms) for s in self.live(now_ms)]

    # running a command

    def run(self, argv: Sequence[str], env: Mapping[str, str], now_ms: int) -> LichRun:
        """Run ``argv`` (argv[0], the binary, is ignored but for the nudge note) at virtual time ``now_ms``."""
        if self._roster is not None and len(argv) == 3 and argv[1] == "sessions" and argv[2] == "--json":
            kept = self._kept(env.get("LICH_SESSION_ID", ""), now_ms)
            if kept is not None:
                return kept  # the poll's list, unchanged since it was last given (roster_run)
        return commands.run(self, argv, env, now_ms)

    # the roster, as the commands read and change it

    def bump(self, counter: str) -> int:
        self.counters[counter] += 1
        return self.counters[counter]

    def new_ticket(self) -> str:
        return f"{0xA1B2C300 + self.bump('ticket'):08x}"

    def new_command_id(self) -> str:
        return f"{0x7C00 + self.bump('command'):04x}"

    def live(self, now: int) -> list[LichSession]:
        return [s for s in self.sessions if s.live(now)]

    def row(self, s: LichSession, now: int) -> dict[str, Any]:
        """A session as ``sessions --json`` lists it (the old lich lists no ``id``)."""
        row: dict[str, Any] = {"label": s.label, "name": s.name, "project": s.project, "kind": s.kind,
                               "state": s.state(now)}
        if self.script.subagent:
            row["id"] = s.id
        return row

    def caller(self, env: Mapping[str, str]) -> Caller | None:
        """The asking session, or None outside one (no ``LICH_SESSION_ID``)."""
        sid = env.get("LICH_SESSION_ID", "")
        if not sid:
            return None
        for s in self.sessions:
            if s.id == sid:
                return Caller(s.id, s.label, s.name, s.folder)
        label = self.script.caller_label
        return Caller(sid, label, f"{slug(label)}-{sid}", "")

    def target(self, x: str, me: Caller | None, now: int, itself: str) -> LichSession:
        """Resolve a ``<session>`` argument: id first, then label, then roster name; never the caller."""
        live = self.live(now)
        found: list[tuple[str, str, str, LichSession | None]] = [(s.id, s.label, s.name, s) for s in live]
        if me is not None and not any(s.id == me.id for s in live):
            found.append((me.id, me.label, me.name, None))
        for key in range(3):
            hits = [entry for entry in found if entry[key] == x]
            if len(hits) > 1:
                raise Refused(f"{go_quote(x)} names {len(hits)} sessions — narrow it with the project")
            if hits:
                session = hits[0][3]
                if session is None or (me is not None and session.id == me.id):
                    raise Refused(f"{go_quote(x)} is this session — {itself}")
                return session
        raise Refused(f"no session named {go_quote(x)}")

    def open_session(self, *, kind: str, project: str, branch: str, folder: str, subagent: bool,
                     origin: Caller | None, now: int, bin: str, label: str | None, name: str | None) -> LichSession:
        """A new session on the roster, named by the schemes above unless ``label`` or ``name`` says otherwise."""
        sid = f"{0x9F80 + self.bump('id'):04x}"
        given = branch
        if not branch:
            given = f"Session {self.counters['label']}"
            self.bump("label")
        label = given if label is None else label
        s = LichSession(
            id=sid, label=label, name=f"{slug(label)}-{sid}" if name is None else name, kind=kind, project=project,
            path=f"{self.script.worktrees}/{branch}" if branch else self.script.checkout, branch=branch,
            folder=folder, subagent=subagent, origin_id=origin.id if origin else "",
            origin_label=origin.label if origin else "", opened_at=now, bin=bin,
        )
        self.sessions.append(s)
        return s
