"""What a scenario scripts of its lich: :class:`LichScript` and the scripts of single commands in it.

These are the scenario format's own records: the reader (``agent_cards_simulator.scenario``) builds
them from a file's ``lich:`` and its calls' ``lich:``, and a :class:`~agent_cards_simulator.lich.world.LichWorld`
plays them as they are. The defaults are the format's documented ones (docs/scenarios.md). They are
plain records and import nothing but :mod:`agent_cards.record`: the reader loads them without the fake
lich, and ``fake-lich`` loads them on every call. :func:`script_from_json` reads back what
:func:`~agent_cards.record.plain` wrote.
"""

from __future__ import annotations

from types import MappingProxyType

from agent_cards.record import Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["LichScript", "ListScript", "OpenScript", "ReportScript", "StopScript", "script_from_json"]


class ReportScript(Value):
    """How a worker reports after its open."""

    after_ms: int  # ms after the open STARTED at which the worker answers
    text: str  # its report (the answer; the format's default is `Done.`)
    background: bool = False  # its turn ended with a background command left: lich does not close it


class OpenScript(Value):
    """How lich answers ONE ``open`` call (``lich.open``, ``lich.opens``, or a call's own ``lich:``)."""

    delivery: str | None = "pending"  # delivery.status; None: print no delivery at all (still exit 0)
    answer: str = ""  # delivery.answer, printed as given
    ms: int = 800  # how long the open takes
    fail: str | None = None  # nothing opened: stderr "lich: <fail>", exit 1
    handoff_error: str | None = None  # opened, but the task did not reach it
    hang: bool = False  # the open never returns; the session IS opened
    stdout: str | None = None  # raw stdout override
    stderr: str | None = None  # raw stderr override
    exit: int | None = None  # exit code override
    label: str | None = None  # label override
    name: str | None = None  # roster name override
    report: ReportScript | None = None  # the worker reports later (None: never)


class ListScript(Value):
    """``sessions`` answers with this while ``from_ms <= now_ms < until_ms`` (``lich.lists``).

    With ``read`` it answers the n-th ``sessions`` read (from 1) instead, whatever its time. lich itself
    never counts reads: such a window is answered in front of it, by the replay's scripted runs, and the
    world passes it over.
    """

    from_ms: int = 0
    until_ms: int = 0
    stdout: str = ""
    stderr: str = "lich: the session list could not be read\n"
    exit: int = 1
    read: int | None = None


class StopScript(Value):
    """Scripted answer of ``close NAME`` / ``control NAME abort`` for one worker roster name.

    exit 0 runs the command as usual; 1 refuses it (``stderr`` is the reason, ``lich: `` added when
    missing; empty: the worker refused the command); 2 and 3 are control's ``delivered`` and ``ended``
    (for ``close``: that exit, no output).
    """

    exit: int = 1
    stderr: str = ""


_NOTHING: Mapping[str, Any] = MappingProxyType({})  # an empty default that no caller can change


class LichScript(Value):
    """The whole fake lich for one scenario. ``opens`` and ``lists`` may be given as lists (kept as tuples)."""

    #: False: ``$LICH_BIN`` does not exist, so no run of it starts. Whoever runs lich answers that (the
    #: runners); a world, once it runs, is installed.
    installed: bool = True
    running: bool = True
    subagent: bool = True  # False: the lich from before subagent support (no --subagent, no control)
    project: str = "app"
    checkout: str = "/home/dev/app"
    worktrees: str = "/lich/worktrees"
    caller_label: str = "planner"
    opens: Sequence[OpenScript] = ()  # the n-th open that passes lich's own checks gets opens[n]
    lists: Sequence[ListScript] = ()
    stops: Mapping[str, StopScript] = _NOTHING  # by roster name
    by_prompt: Mapping[str, OpenScript] = _NOTHING  # an open whose --prompt is a key
    default_open: OpenScript = OpenScript()  # an open neither opens nor by_prompt scripts
    #: How long every ``sessions`` read takes (virtual ms, a window's answer included); None: as long as
    #: every command but ``open`` takes. A slow lich makes the footer's poll wait on its read.
    sessions_ms: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("opens", tuple(self.opens)), ("lists", tuple(self.lists)),
                            ("stops", dict(self.stops)), ("by_prompt", dict(self.by_prompt))):
            object.__setattr__(self, name, value)

    def open_for(self, n: int, prompt: str | None) -> OpenScript:
        """The script of the n-th open (0-based) handing over ``prompt``: by prompt, then by order, then default."""
        if prompt is not None and prompt in self.by_prompt:
            return self.by_prompt[prompt]
        return self.opens[n] if n < len(self.opens) else self.default_open


def _open_from_json(o: Mapping[str, Any]) -> OpenScript:
    return OpenScript(**{**o, "report": ReportScript(**o["report"]) if o.get("report") else None})


def script_from_json(data: Mapping[str, Any]) -> LichScript:
    """The script that ``plain(script)`` wrote as ``data``."""
    return LichScript(**{
        **data,
        "opens": [_open_from_json(o) for o in data["opens"]],
        "lists": [ListScript(**item) for item in data["lists"]],
        "stops": {name: StopScript(**stop) for name, stop in data["stops"].items()},
        "by_prompt": {prompt: _open_from_json(o) for prompt, o in data.get("by_prompt", {}).items()},
        "default_open": _open_from_json(data["default_open"]) if data.get("default_open") else OpenScript(),
    })
