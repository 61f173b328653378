"""The flight recorder: what the mod saw and did in this Claude Code session, as JSON lines.

Inside lich (``LICH_BIN`` and ``LICH_SESSION_ID`` set) the session host keeps a journal by default, so that
a person who meets a bug can turn the session into a scenario with one command (``agent-cards report``).
It wraps what the host serves the mod (``$.process``, ``$.ui``, each hook and its ``next``); the mod itself
stays free of I/O and never sees it. One record a line, each with ``k`` (its kind) and ``t`` (ms since the
host started):

- ``start``: the host's pid, the session id when the engine gives one, the value of every variable the mod
  reads, the state handed over by a host before this one, why that host went (``after``: a step that failed,
  its exit; null for the first), how prompts are kept;
- ``event``: a hook event the mod received (``d`` the dispatch, ``hook``, ``event``, ``origin``, and only
  the input fields the mod reads); ``next``: the mod passed it on (``e`` as passed); ``beneath``: what came
  back from beneath (or ``error``); ``answer``: the hook's answer (or ``error``);
- ``run``: every ``lich`` and ``git`` argv with its ``timeout_ms``, ``exit``, ``stdout``, ``stderr``,
  ``error`` (why it failed, else null) and ``ms``; ``t`` is when it started;
- ``collect``: an open a host that died left running, read by this one (``key``: its call, then as ``run``);
- ``toast``, ``footer`` (the lich line the mod drew, when it changes), ``state`` (the workers it counts),
  ``cancel`` (the dispatches the engine gave up on: Esc, a "no").

Bounds: a file is cut over :data:`PART_BYTES`; the part before is kept as ``NAME.1`` (one, the older
dropped), and the new part starts again with the ``start`` record (``part`` counts them); a run's output is
kept up to :data:`OUTPUT_CHARS` characters each; a folder keeps the newest :data:`KEEP_JOURNALS` journals.
Files are mode 0600 in a folder of mode 0700.

What stays out: values that look like secrets (API keys, tokens, ``Bearer …``, ``password=…``) are replaced
by ``<secret>`` everywhere; a prompt is kept only as its UTF-8 length and SHA-256, as a stand-in text of
the same length (``prompt 1a2b3c4d5e6f ....``), everywhere it appears (the input, lich's argv, lich's
output, the answer), unless the person chooses to keep it. Settings, read from the host's environment:

- ``AGENT_CARDS_JOURNAL``: ``off`` keeps none; ``on`` (the default) keeps one inside lich; ``always`` keeps
  one outside lich too;
- ``AGENT_CARDS_JOURNAL_PROMPTS``: ``hash`` (the default) or ``keep`` (the prompts' whole text);
- ``AGENT_CARDS_JOURNAL_DIR``: the folder; else ``$CLAUDE_PLUGIN_DATA/journals`` (the plugin's data folder,
  which the engine gives its hooks), else ``agent-cards-journals-<uid>`` in the user's runtime folder (else
  the temp folder).

Cost: a record is a dict appended to a list; the records of :data:`FLUSH_S` are made JSON and written
together after it (the steps' answers have gone out by then), so a dispatch waits on no write. The host
writes what is left when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from agent_cards.engine import DEFAULT_TIMEOUT_MS, Event, HookResult, ProcessResult

VERSION = 1
PART_BYTES = 4 << 20  # a journal file is cut past this; the part before is kept once (8 MiB at most a host)
OUTPUT_CHARS = 64 << 10  # each of a run's stdout and stderr, kept up to this
AFTER_CHARS = 300  # why the previous host went, kept up to this
KEEP_JOURNALS = 20  # the newest journals a folder keeps
FLUSH_S = 0.25  # records are written together this long after the first of them: never while a step is served
SUFFIX = ".jsonl"
FOLDER_NAME = "journals"

#: The input fields the mod reads, by event (``ui.render`` is kept as the footer line alone).
FIELDS: Mapping[str, tuple[str, ...]] = {
    "session.start": ("isInteractive", "cwd"),
    "tool.call": ("tool", "tool_use_id", "description", "prompt", "subagent_type", "isolation", "model",
                  "team_name", "agentId", "task_id", "shell_id"),
    "agent.spawn": ("tool_use_id",),
}
#: The variables the mod reads (its ``env.get`` names; a test keeps this in step with the mod's source).
MOD_NAMES = ("LICH_BIN", "LICH_PROMPT_LANG", "LICH_SESSION_ID", "LICH_SUBAGENT_CARDS", "LICH_SUBAGENT_DEPTH")
SECRET = "<secret>"
# Patterns, not compiled ones: re compiles each the first time it is used (and keeps it), so that a host
# says hello without paying for them, and one whose journal meets no secret-like mark never does.
_TOKENS = (
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
)
_TOKEN_MARKS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "AIza", "eyJ")
_BEARER = r"(Bearer )[A-Za-z0-9._~+/-]{12,}=*"
_ASSIGNED = r"(?i)((?:token|secret|password|passwd|api_key|apikey)=)[^\s\"'&,;]{4,}"


def scrub(text: str) -> str:
    """``text`` with what looks like a secret replaced by ``<secret>``. Each pattern runs only where its
    mark is in the text (a substring test costs next to nothing; the pattern's scan does not)."""
    if any(mark in text for mark in _TOKEN_MARKS):
        text = re.sub(_TOKENS, SECRET, text)
    if "Bearer " in text:
        text = re.sub(_BEARER, r"\1" + SECRET, text)
    if "=" in text:
        text = re.sub(_ASSIGNED, r"\1" + SECRET, text)
    return text


def stand_in(prompt: str) -> str:
    """A prompt's stand-in: its SHA-256 in a text of the same UTF-8 length, so that every limit on it holds."""
    data = prompt.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(data).hexdigest()
    tag = f"prompt {digest[:12]} "
    return tag + "." * (len(data) - len(tag)) if len(data) >= len(tag) else digest[: len(data)]


def folder_of(environ: Mapping[str, str]) -> str:
    """Where journals go (see the module's doc); the report looks in the same places."""
    chosen = environ.get("AGENT_CARDS_JOURNAL_DIR")
    if chosen:
        return chosen
    data = environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        return os.path.join(data, FOLDER_NAME)
    from agent_cards.bridge.lifetime import runtime_root

    return os.path.join(runtime_root(environ), f"agent-cards-journals-{os.getuid()}")


def wanted(environ: Mapping[str, str], lich_bin: str | None, lich_session: str | None) -> bool:
    setting = (environ.get("AGENT_CARDS_JOURNAL") or "on").strip().lower()
    if setting in ("off", "0", "no", "false"):
        return False
    return setting == "always" or bool(lich_bin and lich_session)


def _private_folder(path: str) -> bool:
    """Make ``path`` a folder of mode 0700 of this user's; False when it is someone else's or not a folder."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if stat.S_IMODE(info.st_mode) != 0o700:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
    return True


def _prune(folder: str, keep: int) -> None:
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(SUFFIX))
    except OSError:
        return
    for name in names[: max(0, len(names) - keep)]:
        for path in (os.path.join(folder, name), os.path.join(folder, name) + ".1"):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _fields(event: str, e: Mapping[str, Any]) -> dict[str, Any]:
    return {k: e[k] for k in FIELDS.get(event, ()) if k in e}


def footer_line(e: Mapping[str, Any]) -> str | None:
    """The lich line among the footer's modes in ``e`` (what the mod passed on), or None."""
    props = e.get("props")
    modes = props.get("modes") if isinstance(props, Mapping) else None
    if not isinstance(modes, list):
        return None
    lines = [m for m in modes if isinstance(m, str) and m.startswith("lich: ")]
    return lines[-1] if lines else None


class SessionJournal:
    """One host's journal file: records kept in memory and written together :data:`FLUSH_S` after the first."""

    def __init__(self, path: str, start: dict[str, Any], keep_prompts: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.keep_prompts = keep_prompts
        self._clock = clock
        self._t0 = clock()
        self._start = start
        self._pending: list[dict[str, Any]] = []
        self._flushing = False
        self._prompts: dict[str, list[tuple[str, str]]] = {}  # a prompt seen: what replaces it (prompt_pairs)
        self._footer: object = ()  # the last footer line written (() before any)
        self._size = 0
        self._part = 1
        self.record("start", **start)

    # -- recording ---------------------------------------------------------------------------------

    def now(self) -> int:
        return round((self._clock() - self._t0) * 1000)

    def record(self, kind: str, at: int | None = None, **fields: Any) -> None:
        """Keep a record (``at``: when it began, else now); it is written with the others of :data:`FLUSH_S`."""
        self._pending.append({"k": kind, "t": self.now() if at is None else at, **fields})
        if not self._flushing:
            self._flushing = True
            try:
                asyncio.get_running_loop().call_later(FLUSH_S, self.flush)
            except RuntimeError:  # no loop (a test, the exit): at once
                self.flush()

    def prompt(self, e: Mapping[str, Any]) -> None:
        value = e.get("prompt")
        if not self.keep_prompts and isinstance(value, str) and value and value not in self._prompts:
            self._prompts[value] = self.prompt_pairs(value)

    def event(self, d: str, hook: int, event: str, origin: Any, e: Mapping[str, Any]) -> None:
        self.prompt(e)
        self.record("event", d=d, hook=hook, event=event,
                    origin={"plugin": getattr(origin, "plugin", ""), "tier": getattr(origin, "tier", "")},
                    e=_fields(event, e))

    def footer(self, line: str | None) -> None:
        if line != self._footer:
            self._footer = line
            self.record("footer", line=line)

    # -- writing -----------------------------------------------------------------------------------

    def prompt_pairs(self, prompt: str) -> list[tuple[str, str]]:
        """What to replace in a record's JSON text for ``prompt``: the whole value (quoted), and for a long one
        any text holding it, as it reads in the record and inside a JSON text lich printed."""
        stand = stand_in(prompt)
        pairs = [(json.dumps(prompt, ensure_ascii=False), json.dumps(stand, ensure_ascii=False))]
        if len(prompt) >= 16:  # a short one only where it is the whole value: it may be any word
            for inner in (prompt, json.dumps(prompt)[1:-1], json.dumps(prompt, ensure_ascii=False)[1:-1]):
                pairs.append((json.dumps(inner, ensure_ascii=False)[1:-1], json.dumps(stand, ensure_ascii=False)[1:-1]))
        return list(dict.fromkeys(pairs))

    def _lines(self, records: Sequence[Mapping[str, Any]]) -> str:
        """Records as JSON lines, prompts and secrets replaced on the text of them all (one pass each, in C)."""
        text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":"), default=str) + "\n" for r in records)
        for pairs in self._prompts.values():
            for old, new in pairs:
                if old in text:
                    text = text.replace(old, new)
        return scrub(text)

    def flush(self) -> None:
        self._flushing = False
        records, self._pending = self._pending, []
        if not records:
            return
        data = self._lines(records).encode("utf-8", "surrogatepass")
        if self._size and self._size + len(data) > PART_BYTES:
            self._cut()
        self._write(data)

    def _cut(self) -> None:
        """A new part: the one before kept once as ``NAME.1``, the new one starting with the ``start`` record."""
        with contextlib.suppress(OSError):
            os.replace(self.path, self.path + ".1")
        self._size = 0
        self._part += 1
        head = {"k": "start", "t": self.now(), **self._start, "part": self._part}
        self._write(self._lines([head]).encode("utf-8", "surrogatepass"))

    def _write(self, data: bytes) -> None:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        except OSError:
            return
        try:
            os.write(fd, data)
            self._size += len(data)
        except OSError:
            pass
        finally:
            os.close(fd)

    # -- wrapping what the host serves ---------------------------------------------------------------

    def hook(self, hook: Callable[[Any, Event, Any], Awaitable[HookResult | None]], d: Any, index: int,
             event: str) -> Callable[[Any, Event, Any], Awaitable[HookResult | None]]:
        """``hook`` recording its event, its ``next`` and its answer (``ui.render``: the footer line alone)."""
        key = str(d.id)

        if event == "ui.render":
            async def footer(host: Any, e: Event, next: Any) -> HookResult | None:
                async def passing(given: Event) -> HookResult:
                    self.footer(footer_line(given))
                    result: HookResult = await next(given)
                    return result
                return await hook(host, e, _JournaledNext(next, passing))
            return footer

        async def recorded(host: Any, e: Event, next: Any) -> HookResult | None:
            self.event(key, index, event, d.origin, e)

            async def passing(given: Event) -> HookResult:
                self.record("next", d=key, e=_fields(event, given))
                try:
                    result: HookResult = await next(given)
                except Exception as error:
                    self.record("beneath", d=key, error=str(error) or type(error).__name__)
                    raise
                self.record("beneath", d=key, value=result)
                return result

            try:
                answer = await hook(JournaledHost(host, self, key), e, _JournaledNext(next, passing))
            except Exception as error:
                self.record("answer", d=key, error=str(error) or type(error).__name__)
                raise
            self.record("answer", d=key, value=answer)
            return answer

        return recorded

    def host(self, host: Any) -> JournaledHost:
        """``$`` of no dispatch (a timer, the mod's resume), recording its runs and toasts."""
        return JournaledHost(host, self, None)

    def cancelled(self, ids: Sequence[Any]) -> None:
        if ids:
            self.record("cancel", ids=[str(i) for i in ids])

    def state(self, workers: Sequence[str]) -> None:
        self.record("state", workers=list(workers))


class _JournaledNext:
    """``next`` of one dispatch, its call recorded; ``origin``, ``signal`` and ``event`` are the engine's."""

    def __init__(self, inner: Any, call: Callable[[Event], Awaitable[HookResult]]) -> None:
        self._inner, self._call = inner, call

    @property
    def origin(self) -> Any:
        return self._inner.origin

    @property
    def signal(self) -> Any:
        return self._inner.signal

    @property
    def event(self) -> Any:
        return getattr(self._inner, "event", "")

    async def __call__(self, e: Event, /) -> HookResult:
        return await self._call(e)


class _JournaledProcess:
    def __init__(self, inner: Any, journal: SessionJournal, d: str | None) -> None:
        self._inner, self._journal, self._d = inner, journal, d

    async def run(self, argv: Sequence[str], /, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ProcessResult:
        return await self._recorded(argv, timeout_ms, self._inner.run(argv, timeout_ms=timeout_ms))

    async def run_kept(self, argv: Sequence[str], key: str, /, *, timeout_ms: int) -> ProcessResult:
        """The host's run that outlives it (``KeptProcess``), recorded as any run."""
        return await self._recorded(argv, timeout_ms, self._inner.run_kept(argv, key, timeout_ms=timeout_ms))

    async def collect(self, key: str, /, *, started_ms: int, timeout_ms: int) -> ProcessResult:
        """What a run a host that died kept printed: a ``collect`` record (no ``run``: nothing ran again)."""
        done = self._inner.collect(key, started_ms=started_ms, timeout_ms=timeout_ms)
        return await self._recorded({"key": key}, timeout_ms, done, "collect")

    async def _recorded(self, argv: Sequence[str] | Mapping[str, str], timeout_ms: int,
                        running: Awaitable[ProcessResult], kind: str = "run") -> ProcessResult:
        journal = self._journal
        t = journal.now()
        begun = time.monotonic()
        record: dict[str, Any] = {"d": self._d, "timeout_ms": timeout_ms}
        if isinstance(argv, Mapping):
            record.update(argv)
        else:
            record["argv"] = list(argv) if isinstance(argv, (list, tuple)) else argv
        try:
            result: ProcessResult = await running
        except Exception as error:
            journal.record(kind, t, **record, exit=None, stdout="", stderr="", error=str(error) or
                           type(error).__name__, why=getattr(error, "kind", None),
                           ms=round((time.monotonic() - begun) * 1000))
            raise
        journal.record(kind, t, **record, exit=result.exit_code, stdout=_cap(result.stdout),
                       stderr=_cap(result.stderr), error=None, ms=round((time.monotonic() - begun) * 1000))
        return result


def _cap(text: str) -> str:
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "\n[cut by the journal]"


class _JournaledUI:
    def __init__(self, inner: Any, journal: SessionJournal, d: str | None) -> None:
        self._inner, self._journal, self._d = inner, journal, d

    async def toast(self, text: str, /) -> None:
        self._journal.record("toast", d=self._d, text=str(text))
        await self._inner.toast(text)

    def invalidate(self, event: str, /) -> None:
        self._inner.invalidate(event)


class JournaledHost:
    """``$`` for the mod with its runs and toasts recorded: the host's own ``env`` and ``clock``."""

    def __init__(self, inner: Any, journal: SessionJournal, d: str | None) -> None:
        self.env = inner.env
        self.clock = inner.clock
        self.process = _JournaledProcess(inner.process, journal, d)
        self.ui = _JournaledUI(inner.ui, journal, d)


def open_journal(env: Any, state: object, names: Sequence[str], environ: Mapping[str, str] | None = None,
                 after: str | None = None) -> SessionJournal | None:
    """This host's journal, or None (turned off, outside lich, or no private folder to keep it in). ``after``:
    why the module's previous host went (a step that failed, an exit), as the module tells it."""
    environ = os.environ if environ is None else environ
    values = {name: env.get(name) for name in names}
    if not wanted(environ, values.get("LICH_BIN"), values.get("LICH_SESSION_ID")):
        return None
    folder = folder_of(environ)
    if not _private_folder(folder):
        return None
    _prune(folder, KEEP_JOURNALS - 1)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = os.path.join(folder, f"{stamp}-{os.getpid()}{SUFFIX}")
    keep = (environ.get("AGENT_CARDS_JOURNAL_PROMPTS") or "hash").strip().lower() == "keep"
    from agent_cards.state import ModState

    handed = ModState.from_json(state).to_json() if state is not None else None
    start = {"v": VERSION, "wall": round(time.time() * 1000), "pid": os.getpid(),
             "session": environ.get("CLAUDE_CODE_SESSION_ID") or None, "env": values, "state": handed,
             "prompts": "keep" if keep else "hash", "part": 1, "after": None if after is None else after[:AFTER_CHARS]}
    return SessionJournal(path, start, keep)
