"""Plausible bugs planted in the mod, one at a time, to measure what the fuzzer finds.

Each plant is one or two exact text edits to a module of ``agent_cards``: the kinds of slip the spec's
clauses guard against (an arm, an argv, a slug, a limit, the count, the poll, a stop). :func:`planted`
applies one in this process (the module's source run again, edited, into the module itself, so every
function that reads the module's names sees the edit) and puts the module back after.

``python -m agent_cards_simulator.fuzz.plants [--cases N] [--seed S] [NAME ...]`` runs the fuzzer (no
shrinking) against each plant and prints which it found; the figure the project keeps is at the CI seed
and case count (``.ci/run``'s fuzz step): 23 of 24 at seed 14 and 3000 cases. ``stop-exits-swapped`` is
not found: the spec gives a stop's exits 2 and 3 no meaning, so the model widens the count there instead
of saying which way it goes.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

from agent_cards.record import Value


class PlantedBug(Value):
    name: str
    module: str
    edits: tuple[tuple[str, str], ...]  # (old text, new text), each old text found exactly once
    why: str = ""


PLANTS: tuple[PlantedBug, ...] = (
    PlantedBug("refused-stop-ends-poll", "agent_cards.mod", (
        ("    _watching: bool = False\n", "    _watching: bool = False\n    _poll_off: bool = False\n"),
        ("        if self._watching or not self.store.get().workers:\n            return\n"
         "        self._watching = True\n        host.clock.after(ms, ",
         "        if self._watching or self._poll_off or not self.store.get().workers:\n            return\n"
         "        self._watching = True\n        host.clock.after(ms, "),
        ("        if isinstance(decision, taken.Deny):  # STOP-REFUSED: the worker still counts\n",
         "        if isinstance(decision, taken.Deny):  # STOP-REFUSED: the worker still counts\n"
         "            self._poll_off = True\n"),
    ), "a refused TaskStop ends the polling for good"),
    PlantedBug("two-failed-reads-end-poll", "agent_cards.mod", (
        ("    _watching: bool = False\n", "    _watching: bool = False\n    _failed: int = 0\n"),
        ("        self._watching = False\n        took = ",
         "        self._watching = False\n        if self._failed >= 2:\n            return\n        took = "),
        ("            if listed is not None:  # FOOTER-LIST-FAIL",
         "            self._failed = self._failed + 1 if listed is None else 0\n"
         "            if listed is not None:  # FOOTER-LIST-FAIL"),
    ), "two failed reads in a row end the polling"),
    PlantedBug("unanswered-completed", "agent_cards.delivery", (
        ('    "unanswered": Row("async"),', '    "unanswered": Row("completed"),'),),
        "an unanswered delivery answered completed"),
    PlantedBug("unanswered-counted", "agent_cards.delivery", (
        ('    "unanswered": Row("async"),', '    "unanswered": Row("async", counted=True),'),), "unanswered counted"),
    PlantedBug("undelivered-launched", "agent_cards.delivery", (
        ('    "undelivered": Row("deny", deny="deny.never_reached"),', '    "undelivered": Row("async"),'),),
        "an undelivered task answered async_launched"),
    PlantedBug("no-base", "agent_cards.lich_calls", (
        ('(["--base", base] if base else [])', "[]"),), "no --base"),
    PlantedBug("model-first", "agent_cards.lich_calls", (
        ('    if branch:\n        argv += ["--worktree", branch] + (["--base", base] if base else [])\n'
         '    model = e.get("model")\n    if isinstance(model, str) and model:\n        argv += ["--model", model]\n',
         '    model = e.get("model")\n    if isinstance(model, str) and model:\n        argv += ["--model", model]\n'
         '    if branch:\n        argv += ["--worktree", branch] + (["--base", base] if base else [])\n'),),
        "--model before --worktree"),
    PlantedBug("six-word-slug", "agent_cards.branch", (
        ("MIN_WORDS, MAX_WORDS = 2, 5", "MIN_WORDS, MAX_WORDS = 2, 6"),), "slugs of six words"),
    PlantedBug("suffix-first-four", "agent_cards.branch", (
        ("[-SUFFIX_LEN:].lower()", "[:SUFFIX_LEN].lower()"),), "the suffix from the first four characters"),
    PlantedBug("size-limit-ge", "agent_cards.rules", (
        ('    Rule("FALL-OVERSIZE", lambda f: f.prompt_bytes > PROMPT_LIMIT_BYTES, toast=',
         '    Rule("FALL-OVERSIZE", lambda f: f.prompt_bytes >= PROMPT_LIMIT_BYTES, toast='),),
        ">= at the size limit"),
    PlantedBug("stopped-still-counted", "agent_cards.mod", (
        ("        self.store.update(lambda s: s.without({stop.worker.name}))\n", ""),),
        "a stopped worker still counted"),
    PlantedBug("list-fail-resets-count", "agent_cards.mod", (
        ("            if listed is not None:  # FOOTER-LIST-FAIL",
         "            listed = {} if listed is None else listed\n"
         "            if listed is not None:  # FOOTER-LIST-FAIL"),), "a failed list read resets the count"),
    PlantedBug("close-control-swapped", "agent_cards.lich_calls", (
        ("    if worker.shared:\n        return [lich_bin, \"close\"", "    if not worker.shared:\n"
         "        return [lich_bin, \"close\""),), "close and control swapped"),
    PlantedBug("stop-exits-swapped", "agent_cards.lich_calls", (
        ("(not worker.shared and result.exit_code in CONTROL_GOES_THROUGH)",
         "(worker.shared and result.exit_code in CONTROL_GOES_THROUGH)"),), "close's and control's exit codes swapped"),
    PlantedBug("errands-first-mode-only", "agent_cards.mod", (
        ('any(str(m).startswith("lich: ") for m in modes)',
         'str(modes[0] if modes else "").startswith("lich: ")'),),
        "the count hidden only when the errands are the first mode"),
    PlantedBug("isolated-done-ignored", "agent_cards.lich_calls", (
        ('    return worker.shared or listed[worker.name] != "done"', "    return True"),),
        "an isolated worker listed done still counted"),
    PlantedBug("shared-done-finished", "agent_cards.lich_calls", (
        ('    return worker.shared or listed[worker.name] != "done"', '    return listed[worker.name] != "done"'),),
        "a shared worker listed done read as finished"),
    PlantedBug("poll-period-6s", "agent_cards.mod", (("POLL_MS = 5_000", "POLL_MS = 6_000"),), "a poll every 6 s"),
    PlantedBug("poll-without-workers", "agent_cards.mod", (
        ("        if self._watching or not self.store.get().workers:\n            return\n"
         "        self._watching = True\n        host.clock.after(ms, ",
         "        if self._watching:\n            return\n"
         "        self._watching = True\n        host.clock.after(ms, "),
        ("        if not state.workers:\n            self._watching = False\n            return\n", ""),
    ), "the poll reads while no worker is counted"),
    PlantedBug("open-timeout-60s", "agent_cards.lich_calls", (
        ("OPEN_TIMEOUT_MS = 120_000", "OPEN_TIMEOUT_MS = 60_000"),), "the open given one minute"),
    PlantedBug("stop-result-without-command", "agent_cards.lich_calls", (
        ('        "command": worker.description,\n', ""),), "a stopped worker's result without its command"),
    PlantedBug("refused-stop-read-as-stopped", "agent_cards.lich_calls", (
        ("    if result.exit_code == 0 or (not worker.shared",
         "    if result.exit_code in (0, 1) or (not worker.shared"),), "a stop lich refused answered as carried out"),
    PlantedBug("answered-launched", "agent_cards.delivery", (
        ('    "answered": Row("completed"),', '    "answered": Row("async"),'),),
        "an answered delivery answered async"),
    PlantedBug("kept-worker-not-told", "agent_cards.mod", (
        ("        lost = [w for w in state.workers if w.name in state.reported_lost]\n",
         "        lost = [w for w in state.workers if w.name in state.reported_lost][:0]\n"),),
        "after a continue the model is not told a kept worker still runs"),
)


@contextlib.contextmanager
def planted(plant: PlantedBug) -> Iterator[None]:
    """The mod with ``plant`` in it, in this process, until the block ends."""
    module = importlib.import_module(plant.module)
    path = Path(str(module.__file__))
    source = path.read_text(encoding="utf-8")
    for old, new in plant.edits:
        if source.count(old) != 1:
            raise ValueError(f"plant {plant.name}: {old!r} is not found exactly once in {path.name}")
        source = source.replace(old, new)
    saved = dict(module.__dict__)
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # the project's own source, edited
        for name, old in saved.items():  # a function the plant left as it was stays the same object (it reads
            fresh = module.__dict__.get(name)  # the edited names all the same): the bench tells the plugin's own
            if isinstance(old, types.FunctionType) and isinstance(fresh, types.FunctionType) \
                    and _unmoved(old.__code__) == _unmoved(fresh.__code__):  # ``register`` by identity
                module.__dict__[name] = old
        yield
    finally:
        module.__dict__.clear()
        module.__dict__.update(saved)


def _unmoved(code: types.CodeType) -> types.CodeType:
    """``code`` as if it began on line 1: a plant's lines above a function do not change it."""
    return code.replace(co_firstlineno=1)


def found_by_fuzz(plant: PlantedBug, cases: int, seed: int) -> str | None:
    """The kind of the first violation the fuzzer finds with ``plant`` in (no shrinking), or None."""
    from agent_cards_simulator.fuzz.engine import Fuzz

    with planted(plant):
        fuzz = Fuzz(seed, progress=False, shrink=False, examples=False)
        found = fuzz.run(cases)
    return found.violation.kind if found else None


def main(args: list[str]) -> int:
    cases, seed, names = 3000, 14, []
    i = 0
    while i < len(args):
        if args[i] in ("--cases", "--seed") and i + 1 < len(args):
            cases, seed = (int(args[i + 1]), seed) if args[i] == "--cases" else (cases, int(args[i + 1]))
            i += 2
        else:
            names.append(args[i])
            i += 1
    chosen = [p for p in PLANTS if not names or p.name in names]
    hits = 0
    for plant in chosen:
        started = time.monotonic()
        kind = found_by_fuzz(plant, cases, seed)
        hits += kind is not None
        print(f"{plant.name:28} {'found: ' + kind if kind else 'not found':32} {time.monotonic() - started:6.1f} s"
              f"  ({plant.why})", flush=True)
    print(f"{hits} of {len(chosen)} plants found at seed {seed}, {cases} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
