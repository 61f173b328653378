"""What the in-process bench and the mod cost, measured inside this process.

- P1: the mod's ``tool.call`` hook for a call it leaves (an Explore agent), driven without an event
  loop, as a ratio to a bare ``await next(e)`` hook driven alike.
- P3: one hour of virtual time (one worker polled every 5 s); the cost per call at 256 parallel
  calls against 16, and per virtual hour at 24 hours against 1 (linear: about 1×); the share of
  garbage collection; memory across many replays in one process.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from agent_cards.engine import ENGINE
from agent_cards.mod import AgentCards
from agent_cards.state import MemoryStore, ModState
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.scenario.reader import Scenario, read
from agent_cards_simulator.scenario.replay import replay
from bench.figures import Figure, interleaved, ratios

# -- P1 ----------------------------------------------------------------------------------------------


class _BareEnv:
    def get(self, name: str, /) -> str | None:
        return {"LICH_BIN": "/usr/bin/lich", "LICH_SESSION_ID": "3c4d"}.get(name)


class _BareHost:
    env = _BareEnv()


class _BareSignal:
    aborted = False


class _BareNext:
    origin = ENGINE
    signal = _BareSignal()
    event = "tool.call"

    async def __call__(self, e: dict[str, Any], /) -> dict[str, Any]:
        return {"result": "native"}


EXPLORE = {"tool": "Agent", "tool_use_id": "toolu_1", "description": "Find the tests", "prompt": "List them.",
           "subagent_type": "Explore"}


async def _bare(host: Any, e: dict[str, Any], next: _BareNext) -> dict[str, Any]:
    return await next(e)


def _driver(hook: Callable[[Any, dict[str, Any], Any], Any], calls: int) -> Callable[[], None]:
    """``calls`` calls of ``hook``, each run to its end by one ``send``.

    The loop is as bare as it can be, since both sides of the ratio pay for it: a context manager
    per call (``contextlib.suppress``) costs about as much as the bare hook itself, and timed on both
    sides it pulled the ratio from about 2.8 to about 2.0."""
    host, nxt = _BareHost(), _BareNext()

    def drive() -> None:
        for _ in range(calls):
            coroutine = hook(host, EXPLORE, nxt)
            try:  # noqa: SIM105  (not contextlib.suppress: see above)
                coroutine.send(None)
            except StopIteration:
                pass

    return drive


def leave_cost(rounds: int) -> list[Figure]:
    mod = AgentCards(MemoryStore(ModState(interactive=True)))
    times = interleaved({"bare": _driver(_bare, 2000), "mod": _driver(mod.agent_call, 2000)}, rounds)
    per_call = [t / 2000 * 1e6 for t in times["mod"]]
    return [
        Figure("P1 a call the mod leaves ÷ a bare next(e) hook", ratios(times, "mod", "bare"), "x", 2.0),
        Figure("P1 a call the mod leaves, per call", per_call, "µs", None),
    ]


# -- P3 ----------------------------------------------------------------------------------------------


def polled(until_ms: int) -> Scenario:
    return read("bench-poll.yaml", text=f"""
title: one worker polled for {until_ms} ms of virtual time
clauses: [FOOTER-POLL]
lich:
  open: {{report: {{after: {until_ms - 10_000}, text: Done.}}}}
steps:
  - call: {{description: Long job, prompt: Run the long job}}
  - until: {until_ms}
""")


def parallel(calls: int, open_ms: int = 1000) -> Scenario:
    lines = "\n".join(f"      - call: {{description: Task {n}, prompt: Do task {n}}}" for n in range(1, calls + 1))
    return read("bench-parallel.yaml", text=f"""
title: {calls} parallel calls
clauses: [BG-PARALLEL]
lich:
  open: {{ms: {open_ms}}}
steps:
  - parallel:
{lines}
""")


HOUR = 3_600_000
POLL_S = 5  # the mod polls a worker every 5 s: an hour is 720 polls


async def _bare_sleeps(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(POLL_S)


def bare_hour() -> None:
    """The virtual loop's own cost of an hour's polls: as many 5 s sleeps, each a timer and two turns,
    with nothing run between them (the floor under "one hour of virtual time")."""
    loop = VirtualEventLoop()
    try:
        loop.run_until_complete(_bare_sleeps(HOUR // 1000 // POLL_S))
    finally:
        loop.close()


def _gc_share(work: Callable[[], object], runs: int) -> list[float]:
    """Per run: the share (%) of its wall time spent in garbage collection."""
    spent = [0.0]
    started = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]

    shares = []
    gc.callbacks.append(watch)
    try:
        for _ in range(runs):
            spent[0] = 0.0
            begun = time.perf_counter()
            work()
            shares.append(100 * spent[0] / (time.perf_counter() - begun))
    finally:
        gc.callbacks.remove(watch)
    return shares


def virtual_time(rounds: int) -> list[Figure]:
    hour, day, minute = polled(HOUR), polled(24 * HOUR), polled(60_000)
    one, sixteen, many = parallel(1), parallel(16), parallel(256)
    times = interleaved({"hour": lambda: replay(hour), "bare hour": bare_hour, "day": lambda: replay(day),
                         "minute": lambda: replay(minute), "16 calls": lambda: replay(sixteen),
                         "256 calls": lambda: replay(many), "1 call": lambda: replay(one)}, rounds)
    ms = {name: [t * 1000 for t in values] for name, values in times.items()}
    return [
        Figure("P3 one hour of virtual time", ms["hour"], "ms", 30.0),
        Figure("P3 the virtual loop alone: an hour of 5 s sleeps", ms["bare hour"], "ms", None,
               note="720 timers and turns with nothing between them"),
        Figure("P3 one hour ÷ the loop alone", ratios(times, "hour", "bare hour"), "x", None,
               note="in the same round"),
        Figure("P3 24 hours, per virtual hour ÷ one hour", [r / 24 for r in ratios(times, "day", "hour")], "x", 1.5,
               note="in the same round"),
        Figure("P3 one minute of virtual time", ms["minute"], "ms", None),
        Figure("P3 256 parallel calls", ms["256 calls"], "ms", None),
        Figure("P3 per call: 256 parallel ÷ 16 parallel",
               [(a / 256) / (b / 16) for a, b in zip(ms["256 calls"], ms["16 calls"], strict=True)], "x", 1.5),
        Figure("P3 one call", ms["1 call"], "ms", None),
        Figure("P3 garbage collection, 256 parallel calls", _gc_share(lambda: replay(many), rounds), "%", 10.0),
        Figure("P3 garbage collection, one hour", _gc_share(lambda: replay(hour), max(3, rounds // 2)), "%", 10.0),
    ]


def _rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def memory(replays: int) -> list[Figure]:
    """Resident memory after each tenth of ``replays`` replays, against the first tenth."""
    case = parallel(8)
    step = max(1, replays // 10)
    marks = []
    for done in range(replays):
        replay(case)
        if (done + 1) % step == 0:
            gc.collect()
            marks.append(_rss_mib())
    growth = [mark - marks[0] for mark in marks[1:]] or [0.0]
    return [Figure(f"P3 memory growth over {replays} replays (after the first {step})", growth, "MiB", 2.0)]
