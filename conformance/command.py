"""``agent-cards conform``: each scenario through the real Claude Code, compared with the fake host."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agent_cards.arguments import STDIN, CommandParser, interrupted, parse, refused_output, usage_error, whole_number
from agent_cards.record import Record, Value, field
from agent_cards_claude_driver.install import CHOICE_ENV, CLAUDE_VERSION, check_choice, choice, choose, running_version
from agent_cards_conformance.compare import CHECKS, NORMALISATIONS, TOLERANCE_TEXT, Comparison, compare
from agent_cards_conformance.extract import kept
from agent_cards_conformance.invariants import invariant_differences
from agent_cards_conformance.plan import missing_programs, plan, why_not
from agent_cards_simulator.host.claude_code import ENGINE_VERSIONS
from agent_cards_simulator.scenario import steps
from agent_cards_simulator.scenario.files import load_all
from agent_cards_simulator.scenario.model import Scenario
from agent_cards_simulator.scenario.replay import replay

DESCRIPTION = f"""Replay each scenario through the real Claude Code (interactive, offline: the plugin's
bridged module, a scripted model, fake-lich in real time, keys under tmux) and compare what happened with
the fake host's transcript of the same file. The build is the pinned {CLAUDE_VERSION} unless --claude (or
else {CHOICE_ENV}) names a version, a dist-tag (latest) or a path to a claude binary.

Per scenario: conforms, differs (the differing events side by side), or cannot run (why)."""

EXIT = f"""times: {TOLERANCE_TEXT}.

exit status:
  0  every scenario that ran conforms
  1  a scenario differs, or its run failed (the real Claude Code or tmux missing included)
  2  a file is not a valid scenario, a path names nothing, or the command line is wrong
  130  interrupted (Ctrl-C): the runs not yet started are not started"""


def conform_parser() -> CommandParser:
    parser = CommandParser("agent-cards conform", DESCRIPTION, EXIT)
    parser.usage = ("agent-cards conform [--json] [--jobs N] [--claude VERSION|PATH] [--table FILE] [--keep DIR] "
                    "[--evidence FILE] FILE|DIR...\n"
                    "       agent-cards conform [--json] [--table FILE] --from RESULTS.jsonl\n"
                    "       agent-cards conform --self-test")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per scenario per line: verdict, why, differences, both transcripts")
    parser.add_argument("--jobs", metavar="N", type=whole_number(1), default=2,
                        help="real runs at once (default 2; each its own HOME and lich state)")
    parser.add_argument("--claude", metavar="VERSION|PATH",
                        help=f"the Claude Code build to run: a version (2.1.332), a dist-tag (latest) or a path to a "
                        f"claude binary (default: {CHOICE_ENV}, else the pinned {CLAUDE_VERSION}); the table is headed "
                        "with the version that ran")
    parser.add_argument("--table", metavar="FILE", help="write the table of results as Markdown (docs/conformance.md)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep what each run that differs or failed left (its HOME, the bridge's log, the model's "
                        "requests, each program's argv and output, the last screen) in a private folder of its own "
                        "in DIR, named in the output; a run that conforms leaves nothing")
    parser.add_argument("--evidence", metavar="FILE",
                        help="write what each real run saw (the model's requests, the screen's footer, the keys, the "
                        "programs' logs), one JSON line per scenario, its machine's folders left out: the raw "
                        "evidence the self-test makes transcripts from again")
    parser.add_argument("--from", dest="saved", metavar="FILE",
                        help="judge again the real transcripts a `conform --json` run wrote against the fake host as "
                        "it is now (each scenario replayed again), without running Claude Code")
    parser.add_argument("--self-test", action="store_true",
                        help="plant each of a kit of fake-host infidelities and judge the saved real transcripts of "
                        "the scenarios it alters: exit 1 unless every plant is caught and the fake host as it is "
                        "conforms on them (no real run)")
    parser.add_argument("paths", nargs="*", metavar="FILE|DIR", help="scenario files and folders")
    return parser


class Explained(Value):
    """A difference explained elsewhere: why, and the events it excuses, each as ``(lane, key)``."""

    why: str
    excuses: tuple[tuple[str, str], ...]


#: Differences explained elsewhere (a decision in docs/decisions.md, a fact of the engine the fake host
#: cannot take on): ``file`` → why and which differences. A scenario listed here that differs in those
#: differences only is "differs by design"; any other difference makes it differ.
EXPLAINED: dict[str, Explained] = {
    "scenarios/stop/other-id.yaml": Explained(
        "the scripted model answers a native agent's first request at once, so in the real run Claude Code's own "
        "Explore has already finished when the TaskStop comes (`Task … is not running (status: completed)`); the "
        "fake host's native agent runs until stopped. Either way the TaskStop went to Claude Code untouched and "
        "lich ran nothing (STOP-OTHER)",
        (("answer", "toolu_0002"),),
    ),
}


class Result(Record):
    file: str
    variant: str | None
    title: str
    verdict: str  # conforms | differs | by design | cannot run | failed
    why: str = ""
    comparison: Comparison | None = None
    fake: list[dict[str, Any]] = field(default_factory=list)
    real: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    kept: str = ""  # the folder holding what the real run left (--keep), when it differed or failed
    evidence: dict[str, Any] | None = None  # what the real run saw, as kept apart from it (--evidence)

    @property
    def name(self) -> str:
        return self.file + (f" [{self.variant}]" if self.variant else "")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"file": self.file, "title": self.title, "verdict": self.verdict, "why": self.why,
                                "seconds": round(self.seconds, 1), "tolerance": TOLERANCE_TEXT}
        if self.variant is not None:
            data["variant"] = self.variant
        if self.kept:
            data["kept"] = self.kept
        if self.comparison is not None:
            data["differences"] = [d.to_json() for d in self.comparison.differences]
            data["not_compared"] = self.comparison.unseen
        data["fake"], data["real"] = self.fake, self.real
        return data


def _usage(reason: str) -> int:
    return usage_error("agent-cards conform", reason)


def _engine() -> tuple[Path | None, str]:
    if shutil.which("tmux") is None:
        return None, "tmux not found: the interactive screen is driven under tmux"
    try:
        from agent_cards_claude_driver.install import ensure_claude

        return ensure_claude(), ""
    except (RuntimeError, OSError) as error:
        return None, f"the real Claude Code {choice()} is not available: {error}"


#: The verdicts whose run's files ``--keep`` keeps: the runs someone has to read.
KEPT_VERDICTS = ("differs", "failed")


def conform_one(scenario: Scenario, claude: Path | None, engine_problem: str, keep: Path | None = None) -> Result:
    """One scenario (a variant of a file with ``variants``): the fake host's transcript, then the real run.
    With ``keep``, the run is made in a folder of its own there, left in place when it differs or failed."""
    started = time.monotonic()
    fake = replay(scenario)
    events = [dict(e) for e in fake.events]
    result = Result(scenario.file, scenario.variant, scenario.title, "cannot run", fake=events)
    reason = why_not(scenario, events)
    if reason:
        result.why = reason
        return result
    if claude is None:  # asked to run and could not: a failure (CI's conform step must not pass having run nothing)
        result.verdict, result.why = "failed", engine_problem
        return result
    from agent_cards_conformance.real import run_real

    folder = Path(tempfile.mkdtemp(prefix=_folder_name(scenario) + "-" if keep else "conform-", dir=keep))
    screen = ""  # the real run's last screen, kept with its files
    try:
        real = run_real(plan(scenario, events), claude, folder)
    except Exception as error:
        result.verdict, result.why = "failed", f"{type(error).__name__}: {str(error)[:2000]}"
    except BaseException:  # Ctrl-C: nobody will read this run
        shutil.rmtree(folder, ignore_errors=True)
        raise
    else:
        result.real, screen = real.events, real.screen
        if real.evidence is not None:
            result.evidence = kept(real.evidence, str(folder))
        judge(scenario, result)
    result.seconds = time.monotonic() - started
    if keep is not None and result.verdict in KEPT_VERDICTS:
        if screen:
            (folder / "screen.txt").write_text(screen, encoding="utf-8")
        result.kept = str(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def _folder_name(scenario: Scenario) -> str:
    """The start of a kept run's folder name: ``scenarios/branch/ids.yaml``'s variant ``plain`` is
    ``branch-ids-plain``."""
    path = Path(scenario.file)
    words = [path.parent.name, path.stem, scenario.variant or ""]
    return re.sub(r"[^A-Za-z0-9_]+", "-", " ".join(words)).strip("-")


#: What the real run reads from the session host's log alone: outside lich no host starts, so nothing there
#: shows them (the engine still raises the session's start, checks the permission and spawns the agent).
HOST_LOGGED = ("session.start", "permission", "spawn")


def judge(scenario: Scenario, result: Result) -> None:
    """Compare the two transcripts of ``result`` and give its verdict."""
    parallel = any(isinstance(s, steps.CallStep) and len(s.calls) > 1 for s in scenario.steps)
    result.comparison = compare(result.fake, result.real, side_by_side=parallel,
                                missing_programs=missing_programs(scenario))
    if not (scenario.env.get("LICH_BIN") and scenario.env.get("LICH_SESSION_ID")):
        comparison = result.comparison
        comparison.differences = [d for d in comparison.differences if d.lane not in HOST_LOGGED
                                  and not (d.lane in ("order", "time") and d.key.split()[0] in HOST_LOGGED)]
        for kind in HOST_LOGGED:
            if count := sum(1 for e in result.fake if e["kind"] == kind):
                comparison.unseen[f"{kind} outside lich (no session host logs it)"] = count
    # The real run is held to the mod's own invariants too: a fake host that agrees with a broken mod must
    # not make it conform.
    result.comparison.differences += invariant_differences(scenario, result.real)
    explained = EXPLAINED.get(scenario.file)
    if result.comparison.conforms:
        result.verdict = "conforms"
    elif explained is not None and all((d.lane, d.key) in explained.excuses for d in result.comparison.differences):
        result.verdict = "by design"
        result.why = explained.why + " (excused: " + ", ".join(f"{lane} {key}" for lane, key in explained.excuses) + ")"
    else:
        result.verdict = "differs"


def to_text(result: Result) -> str:
    lines = [f"{result.name}: {result.verdict}" + (f" ({result.why})" if result.why else "")
             + (f" [{result.seconds:.0f} s]" if result.seconds else "")]
    if result.kept:
        lines.append(f"  what the run left: {result.kept}")
    comparison = result.comparison
    if comparison is not None:
        for d in comparison.differences:
            lines.append(f"  ✗ {d.lane} {d.key}: {d.why}")
            lines.append(f"      fake host: {json.dumps(d.fake, ensure_ascii=False)}")
            lines.append(f"      real     : {json.dumps(d.real, ensure_ascii=False)}")
        if comparison.unseen:
            lines.append("  not compared: " + ", ".join(f"{k} ×{n}" for k, n in sorted(comparison.unseen.items())))
    return "\n".join(lines)


def ran_version() -> str:
    """The version of the build the table is about: the chosen one, as it names itself."""
    try:
        return running_version()
    except (RuntimeError, OSError, subprocess.SubprocessError):
        return choice()


def proof() -> str:
    """The self-test's result, as the table's header says it."""
    from agent_cards_conformance.selftest import self_test

    return self_test().summary()


def table(results: Sequence[Result], version: str = CLAUDE_VERSION, kit: str = "") -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    order = ("conforms", "by design", "differs", "failed", "cannot run")
    rows = [
        "# Conformance: the fake host against the real Claude Code",
        "",
        f"Written by `agent-cards conform --table docs/conformance.md scenarios` against the real Claude Code "
        f"{version}.{unmodelled(version)} Each scenario ran in the interactive screen (or in `claude -p` where "
        "nobody is there to answer: a non-interactive session; the plugin's bridged module, a scripted model, "
        "fake-lich in real time) and its transcript was compared with the fake host's; "
        f"times: {TOLERANCE_TEXT}. Each real transcript is also held to the mod's invariants (the fuzzer's, and "
        "the spec model's liveness: `conformance/invariants.py`); a break is a difference. How a scenario maps to "
        "the real engine: `conformance/plan.py`; what is compared: `conformance/compare.py`.",
        "",
        *([f"The comparison proves itself (`agent-cards conform --self-test`): {kit.removeprefix('self-test: ')}.", ""]
          if kit else []),
        " · ".join(f"{counts[v]} {v}" for v in order if v in counts) + f" · {len(results)} in all",
        "",
        "| scenario | result | why / what differs |",
        "|---|---|---|",
    ]
    for r in sorted(results, key=lambda r: (order.index(r.verdict), r.name)):
        detail = r.why
        if r.comparison is not None and r.comparison.differences and not detail:
            detail = "; ".join(f"{d.lane} {d.key}: {d.why}" for d in r.comparison.differences[:4])
        detail = " ".join(detail.split(":\n")[0].split())[:300]  # one line (a failure's screen left out)
        rows.append(f"| `{r.name}` | {r.verdict} | {detail.replace('|', '∣')} |")
    return "\n".join([*rows, "", COMPARED, "", READ_ALIKE, "", VERSIONS]) + "\n"


def modelled() -> str:
    """The builds the fake host models, as a sentence says them."""
    *older, newest = ENGINE_VERSIONS
    return f"{', '.join(older)} and {newest}" if older else newest


def unmodelled(version: str) -> str:
    """What a table's heading adds when the build that ran is none the fake host models (empty when it is
    one): a difference may then be the engine's change, not the fake host's fault."""
    if version in ENGINE_VERSIONS:
        return ""
    return (f" The fake host models Claude Code {modelled()}, not this build: a difference below may be a change "
            "in the engine.")


def markdown_text(text: str) -> str:
    """``text`` as markdown shows it, not as a tag: the engine's ``<tool_use_error>`` and the like escaped."""
    return text.replace("<", "\\<")


#: The table's section on what the comparison checks: each check by the name a difference gives it.
COMPARED = "\n".join([
    "## What is compared",
    "",
    "The comparison's checks, each with its lane (`CHECKS` in `conformance/compare.py`): a difference in the "
    "table above is one of them failing.",
    "",
    *(f"- `{name}` ({lane}): {what}" for name, (lane, what) in CHECKS.items()),
])

#: The table's section on what the comparison reads alike: each normalisation, by its name in the code.
READ_ALIKE = "\n".join([
    "## What is read alike",
    "",
    "The real run shows some things otherwise than the fake host writes them. The comparison reads each such thing "
    "alike in one way only (`NORMALISATIONS` in `conformance/compare.py`); anything else is a difference:",
    "",
    *(f"- **{name}**: {markdown_text(what)}" for name, what in NORMALISATIONS.items()),
])

#: The engines the fake host models, and where the spec's older measurements differ from them.

VERSIONS = f"""## Engine versions

The fake host models Claude Code {modelled()}
(`agent_cards_simulator.host.claude_code.ENGINE_VERSIONS`), alike in everything it draws; `claude_driver`
pins {CLAUDE_VERSION}. The table above is for the build its heading names. Parts of the spec were measured on older
builds, and 2.1.328 differs from them here:

- **Reload** (lich-plugin's assumptions, 2.1.289/2.1.296: "a module reload forgets the flag until the next
  `session.start`"): 2.1.328 raises `session.start` again for the reloaded module, so the
  interactive flag comes back at once and the next general-purpose call is taken; the count is still lost.
- **Esc while a hook waits on `$` calls** (2.1.289: "`next.signal` is aborted when the user presses Esc"):
  2.1.328 also rejects the hook's pending `$` calls with `user-cancel`, and a deny the hook returns
  after Esc is not delivered: the model reads the engine's standard rejection. Through the plugin's bridge
  the mod's `lich open` is not cut off (the session host runs it): the open finishes and its worker is
  counted (docs/decisions.md, "Esc during the open"). The fake host does the same.
- **Agent input** (not measured before): 2.1.328 refuses a `prompt` that is not text with
  `InputValidationError` before any hook, and an isolated call outside a git repository with
  `Cannot create agent worktree: …` before `agent.spawn`; its unknown-type error lists the types sorted
  ignoring case, with a built-in `claude` type.
- **"No" at the permission dialog** (2.1.296: "its refusal stands and lich opens nothing"): still true, and
  in 2.1.328 the "no" also ends the turn (`Interrupted · What should Claude do instead?`); the
  refusal reaches the model only with the person's next prompt.
- **Permission rules**: in 2.1.328 a plain `Agent` deny rule removes the tool before any hook runs;
  a typed one (`Agent(general-purpose)`) reaches the mod, with the engine's own refusal text.
- **Nobody to answer a dialog** (measured in `claude -p`, the one session where nobody can, on 2.1.328 and
  2.1.332): an ask rule's refusal reads `Claude requested permissions to use Agent, but you haven't granted it
  yet.`, as the fake host gives it (the testing kit's reads `Permission to use Agent has been denied.
  IMPORTANT: …`); `claude -p` raises `session.start` not interactive, so the mod leaves the call native.
- **A new process** (`/exit`, then `claude --continue` or `--resume`; measured on 2.1.332): its screen comes
  without the lich line, which comes back once the fresh session host says hello with the kept count (seconds
  later in real time), until its first read of lich drops a worker lich no longer lists.
- **Esc twice at the idle prompt** (measured on 2.1.328 and 2.1.332): within 800 ms it is the input's double
  press, and opens the Rewind panel over the prompt and the footer's row; no footer is drawn while it is open,
  and the next Esc closes it. The fake host does the same (a `rewind` event).
- **A module changed while a turn runs** (measured on 2.1.328 and 2.1.332): it is reloaded once the turn ends,
  not at once (at the idle prompt, within a second). The fake host holds a reload asked for mid-turn the same
  way, its `reload` event saying when it was asked (`asked`); the e2e tier checks the engine's side.
- **2.1.328 against 2.1.332**: what the fake host draws is alike in both (the e2e tier runs its conformance
  rows on each); 2.1.332 adds engine events the mod does not hook (`agent.report`, `vcs.*`, `ui.tip`,
  `ui.offer`) and a 20-minute cap on a `tool.call` hook's `$` calls, which the mod's longest (the open, two
  minutes) never meets; it labels the default permission mode in the footer and frames a completed report,
  which the real tier reads as it is.
- **Not modelled by the fake host**: a native background agent that finishes starts a model turn by itself
  (`Agent "…" finished` and a task notification); a scenario never depends on it.
- Unchanged since 2.1.289: Esc leaves background agents running; workflow steps never reach the Agent
  tool's hook (not runnable here: see the table)."""


def main(argv: Sequence[str], *, out: Callable[[str], None] = print) -> int:
    options = parse(conform_parser(), argv, files="paths")
    if isinstance(options, int):
        return options
    paths: list[str] = options.paths
    if options.self_test:
        if (paths or options.saved is not None or options.json or options.table is not None or options.claude
                or options.keep is not None or options.evidence is not None):
            return _usage("--self-test takes nothing else")
        return _self_test(out)
    as_json, table_file = options.json, options.table
    if STDIN in paths or STDIN in (options.saved, table_file, options.evidence):
        return _usage("a real run needs its scenario files by name: - (standard input) is not one")
    for written in (table_file, options.evidence):
        if written is not None and (problem := refused_output(written, force=True)):
            return _usage(problem)
    if options.saved is not None:
        if paths or options.claude is not None or options.keep is not None or options.evidence is not None:
            return _usage("--from runs nothing: it takes no scenario files, no --claude, no --keep and no --evidence")
        return _report(_rejudged(Path(options.saved)), as_json, table_file, out, [])
    if not paths:
        return _usage("name scenario files or folders")
    keep = None if options.keep is None else Path(options.keep)
    if keep is not None and not keep.is_dir():
        return _usage(f"--keep {keep}: no such folder to keep runs in")
    if options.claude is not None:
        if problem := check_choice(options.claude, f"--claude {options.claude}"):
            return _usage(problem)
        choose(options.claude)
    from agent_cards_conformance.real import plugin_folder

    if plugin_folder() is None:
        return _usage("it needs the plugin's own files (.claude-plugin/, hooks/), which an install does not carry: "
                      "run it in a clone of agent-cards")
    from agent_cards_simulator.commands import _files_named

    files, missing = _files_named(paths)
    scenarios, problems = load_all(files)
    problems = missing + problems
    for line in problems:
        print(line, file=sys.stderr)
    units = [v for s in scenarios for v in (s.variants or (s,))]
    claude, engine_problem = _engine()
    results: list[Result] = []
    pool = ThreadPoolExecutor(max_workers=options.jobs)
    try:
        futures = [pool.submit(conform_one, unit, claude, engine_problem, keep) for unit in units]
        with contextlib.ExitStack() as written:
            evidence = None if options.evidence is None else written.enter_context(
                open(options.evidence, "w", encoding="utf-8"))
            for future in futures:
                result = future.result()
                results.append(result)
                out(json.dumps(result.to_json(), ensure_ascii=False) if as_json else to_text(result))
                if evidence is not None and result.evidence is not None:
                    evidence.write(json.dumps({"file": result.file, "variant": result.variant,
                                               "evidence": result.evidence}, ensure_ascii=False) + "\n")
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)  # the runs under way end with their own timeouts
        return interrupted("agent-cards conform", f"{len(results)} of {len(units)} scenarios judged")
    pool.shutdown()
    if not as_json and (note := unmodelled(ran_version())):
        out(note.strip())
    return _report(results, as_json, table_file, out, problems, printed=True)


def _self_test(out: Callable[[str], None]) -> int:
    from agent_cards_conformance.selftest import self_test
    from agent_cards_conformance.selftest import to_text as self_test_text

    test = self_test()
    out(self_test_text(test))
    return 0 if test.passed else 1


def _rejudged(saved: Path) -> list[Result]:
    """The results a ``conform --json`` run wrote, judged again by today's comparison against today's fake
    host: each scenario is replayed again (cheap), so a change to the fake host is judged against the real
    runs already made."""
    results = []
    for line in saved.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        result = Result(data["file"], data.get("variant"), data["title"], data["verdict"], data.get("why", ""),
                        fake=data.get("fake") or [], real=data.get("real") or [], seconds=data.get("seconds", 0.0))
        if result.verdict not in ("cannot run", "failed"):
            scenarios, _ = load_all([Path(result.file)])
            units = [v for s in scenarios for v in (s.variants or (s,)) if v.variant == result.variant]
            if units:
                result.fake = [dict(e) for e in replay(units[0]).events]
                judge(units[0], result)
        results.append(result)
    return results


def _report(results: Sequence[Result], as_json: bool, table_file: str | None, out: Callable[[str], None],
            problems: Sequence[str], *, printed: bool = False) -> int:
    if not printed:
        for result in results:
            out(json.dumps(result.to_json(), ensure_ascii=False) if as_json else to_text(result))
    if not as_json:
        counts: dict[str, int] = {}
        for r in results:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        out(", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + f"; times: {TOLERANCE_TEXT}")
    if table_file:
        Path(table_file).write_text(table(results, ran_version(), proof()), encoding="utf-8")
    if problems:
        return 2
    return 1 if any(r.verdict in ("differs", "failed") for r in results) else 0
