"""What of a scenario the real Claude Code can show, and how: the concrete settings of one run, or why not.

A scenario speaks of an abstract session; the real engine needs concrete settings, and some of them behave
differently from one another (a ``--permission-mode`` flag, a settings rule and a dialog are not one
and the same to the engine). One choice per feature:

- ``session.permission_mode``: Claude Code started in that mode (``--permission-mode plan``), else
  ``default``; a dialog's yes moves the choice to Yes first (plan mode's dialog offers No first);
- permission ``allow``: ``--permission-mode default`` and no rule (the Agent tool asks for nothing there);
- ``{ask: yes}`` / ``{ask: no}``: the rule ``permissions.ask: ["Agent"]`` in the project's
  ``settings.local.json``; each dialog is answered with Enter (yes) or Esc (no), in the calls' order;
  ``{ask: nobody}``: the same rule in ``claude -p``, where nobody is there to answer;
- a non-interactive session (``session.interactive: false``): ``claude -p`` with the one step's prompt;
- ``deny``: the typed rule ``permissions.deny: ["Agent(<type>)"]`` for each agent type called, and
  ``{deny: RULE}`` that rule itself (the plain ``Agent`` removes the tool before any hook), in the project's
  ``settings.json`` (the refusal names it: ``from projectSettings``);
- ``hook-deny``: a classic PreToolUse command hook (a plugin of its own) answering
  ``permissionDecision: "deny"`` with the reason;
- git branch / detached: the sandbox project on that branch / on a detached HEAD; git failing with git's own
  message: a project that is not a git repository (its "not a git repository" in other words, as at a mount
  point: the same project, the mod's git answering those words); git failing with another message: the project on
  ``main``, and the git the mod's session host runs (a wrapper that only the plugin's runs reach: Claude
  Code's own git is the real one) answers every run with the scenario's exit and stderr; git missing: the
  session host started with a PATH that holds no git (Claude Code keeps its own);
- ``agent_types``: ``.claude/agents/<type>.md`` in the project;
- ``esc_after: N``: Esc at the scenario's moment: when the fake host's open starts before it, N ms after the
  call counted from the real open's start (the bridge has reached the open); when it lands in the mod's git
  read, the git wrapper holds that read until the screen shows the Esc taken (``Interrupted``), so the Esc
  lands within it however fast the real git answers (the held time is not the run's: its ms count from the
  release); else N ms after the model's reply raised the step's calls; ``esc``: Esc between turns;
- ``reload``: the plugin's module file changed, which Claude Code reloads by itself (one trigger:
  ``/reload-plugins`` as well would start a second session host), ``/reload-plugins`` only if it did not;
- ``session.start`` (interactive): ``/clear``;
- ``session.modes`` (other modes in the footer): the person presses Shift+Tab until the footer shows
  accept-edits mode (:data:`SWITCHED_MODE`), before the first step;
- ``mode``: the person presses Shift+Tab until the footer shows that mode's label (:data:`MODE_LABELS`; the
  default mode: ``manual mode on`` or no label), each press once the footer's mode moved; a call made in
  plan mode asks by itself (no rule: the calls outside plan mode ask nothing), its dialog answered as the
  call's ``{ask: …}`` says;
- ``continue`` / ``resume``: ``/exit``, then Claude Code again in the same sandbox with ``--continue`` /
  ``--resume <the session's id>``; the step ends once the fresh session host has read lich;
- ``host.dies``: SIGKILL to the run's session hosts (found by their HOME); as ``at: T`` only mid-open: T ms
  into the fake host's open is that many ms into the real open of the next call; ``prompt``: the text typed;
- ``wait`` / ``until``: that much real time (fake-lich sleeps its scripted ms for real);
- ``errands``: a stand-in for lich's status module (a plugin listed before the mod's) draws the text as
  the footer's ``lich: …`` mode; the harness hands it the text at the step's moment;
- a call raised by a plugin (``origin: NAME``): a stand-in plugin named NAME (installed beside the mod)
  raises it with ``$.agent.call({tool: 'Agent', input})``, once the session has started, when the harness
  hands it the call's input; its answer is what that call resolved to;
- a subagent's own call (``agent: ID``): the scripted model makes it as the first reply to the first native
  agent that asks (the subagent is offered the Agent tool too), and reads its answer in that agent's next
  request; the agent's id is the engine's;
- ``footer`` / ``check``: nothing (the engine draws the footer by itself; a check reads the fake's memory).

Any other step kind cannot run (:data:`DRIVEN` lists the ones the real run drives): a run that skipped a step
would judge another scenario than the one named. What cannot run, and why, is :func:`why_not`'s answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_cards.engine import DEFAULT_TIMEOUT_MS
from agent_cards.record import Value, field
from agent_cards_simulator.host.permission import PermissionVerdict
from agent_cards_simulator.runners.scripted_git import not_a_repository
from agent_cards_simulator.scenario import steps
from agent_cards_simulator.scenario.model import Scenario

#: The longest virtual span run in real time (ms): a hung open's two minutes, the footer's polls after it and
#: a report due after that (``open/timeout``).
MAX_SPAN_MS = 150_000
#: lich's exit codes a real program can end an open with: 0, 1 for a refusal, 2 for a Go runtime panic (a
#: scenario may set any number by hand).
OPEN_EXITS = (0, 1, 2)
#: How long the mod lets a ``lich open`` run: a hung open lasts this long.
OPEN_TIMEOUT_MS = 120_000
POLL_MS = 5_000
GIT_NOT_A_REPO = "fatal: not a git repository (or any of the parent directories): .git\n"
#: The step kinds the real run drives (``conformance/real.py``'s ``_steps``); a scenario with any other cannot run.
DRIVEN: tuple[type[Any], ...] = (steps.CallStep, steps.Wait, steps.Until, steps.Esc, steps.Reload,
                                 steps.SessionStart, steps.Footer, steps.Check, steps.Continue, steps.Resume,
                                 steps.HostDies, steps.Prompt, steps.Errands, steps.Mode)
#: The footer's label of each permission mode Shift+Tab cycles to besides the default one (which 2.1.328 shows
#: no label for, and 2.1.332 labels ``manual mode on``); 2.1.332 cycles to auto mode too.
MODE_LABELS = {"acceptEdits": "accept edits on", "plan": "plan mode on", "auto": "auto mode on"}


def step_key(step: object) -> str:
    """The key a step is written with in a scenario (``host.dies``, ``prompt``)."""
    for key, kind in steps.KINDS.items():
        if isinstance(kind, steps.Action) and type(step) is kind.step:
            return key
    return type(step).__name__


class RealPermission(Value):
    """The concrete permission settings of a run."""

    decision: str = "allow"  # allow | ask | deny | hook-deny
    deny_rules: tuple[str, ...] = ()  # as the settings write them: Agent, Agent(<type>)
    hook_reason: str = "Blocked by hook"
    answers: Mapping[str, bool] = field(default_factory=dict)  # ask: each Agent call's yes (True) or no
    #: ask: the ``permissions.ask`` rule is written (False: only the calls made in plan mode ask, by the mode)
    rule: bool = True


class RealGit(Value):
    mode: str = "branch"  # branch | detached | none (not a repository) | refuses | missing (the mod's runs only)
    branch: str = "main"
    exit: int = 0  # refuses (or none in words of git's own): what every git run of the mod's exits with, and its stderr
    stderr: str = ""


#: The mode the person switches to with Shift+Tab for a footer with other modes (``session.modes``): its
#: label then sits beside the lich line. Accept-edits mode, the first one from the default: plan mode would
#: hold the Agent call itself to plan mode (PERM-PLAN), which no ``session.modes`` says.
SWITCHED_MODE = "accept edits on"


class Plan(Value):
    scenario: Scenario
    permission: RealPermission
    git: RealGit
    end_ms: int  # the fake host's last event (at most the cap): the run lets real time pass up to here
    opens: Mapping[str, int] = field(default_factory=dict)  # call id: how many opens come before its own
    open_after: Mapping[str, int] = field(default_factory=dict)  # call id: ms from the call to its open's start
    permission_mode: str = "default"  # the session's: Claude Code starts in it (``--permission-mode``)
    mode: str | None = None  # the footer's label of the mode the person switches to before the first step
    printed: bool = False  # claude -p: a non-interactive session, with nobody to answer a dialog
    host_dies_in: Mapping[str, int] = field(default_factory=dict)  # call id: ms into its open the host dies
    #: per continue/resume in order: whether the fake host's fresh session host reads lich at once (the step
    #: then ends when the real one has)
    resume_reads: tuple[bool, ...] = ()
    #: call step number (from 1): the argv (after ``git``) of the mod's git read its Esc lands in
    esc_in_git: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: call step number: the plugin that raises its one call (a stand-in plugin of that name)
    plugin_calls: Mapping[int, str] = field(default_factory=dict)
    #: call step numbers whose one call a subagent makes (the first native agent's first reply)
    subagent_steps: tuple[int, ...] = ()


def _span(events: Sequence[Mapping[str, Any]]) -> int:
    return max((int(e.get("t", 0)) for e in events), default=0)


def _calls(scenario: Scenario) -> list[steps.ToolCall]:
    return [c for s in scenario.steps if isinstance(s, steps.CallStep) for c in s.calls]


def _agent_type(call: steps.ToolCall) -> str:
    value = call.input.get("subagent_type")
    return value if isinstance(value, str) and value else "general-purpose"


def declared_span(scenario: Scenario) -> int:
    """The virtual ms the scenario itself asks for (its waits, its untils, lich's scripted ms and reports,
    a hung open's timeout): what decides whether it fits in real time. The fake host's own span does not:
    a fake host that stretches a scenario past the cap must show up as a difference, not as "cannot run"."""
    t = 0
    for step in scenario.steps:
        if isinstance(step, steps.Wait):
            t += step.ms
        elif isinstance(step, steps.Until):
            t = max(t, step.t)
    lich = scenario.lich
    scripted = [o for o in (lich.default_open, *lich.opens, *lich.by_prompt.values()) if o is not None]
    for call in _calls(scenario):
        if call.lich is not None:
            scripted.append(call.lich)
    longest = max((max(o.ms, o.report.after_ms if o.report is not None else 0) for o in scripted), default=0)
    if any(o.hang for o in scripted):  # its timeout, then up to two 5 s polls before the footer shows it
        longest = max(longest, OPEN_TIMEOUT_MS + 2 * POLL_MS)
    windows = max((w.until_ms for w in lich.lists), default=0)
    return max(t, longest, windows)


def why_not(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the real engine cannot show this scenario, or None when it can run."""
    session = scenario.session
    span = declared_span(scenario)
    if span > MAX_SPAN_MS:
        return (f"a virtual span of {span / 1000:.0f} s: too long to run in real time (the tier runs up to "
                f"{MAX_SPAN_MS // 1000} s)")
    if not session.start:
        return "no session.start at the start: the real engine always raises it when a session begins"
    if not session.data:
        return "no data folder (session.data: false): the real engine gives the plugin one, so its state is kept"
    if session.git.runs:
        return "scripted git command lines (session.git.runs): the real git answers what it answers"
    lich = scenario.lich
    if lich.sessions_ms is not None and lich.sessions_ms >= POLL_MS and lich.sessions_ms % POLL_MS == 0:
        return (f"sessions reads scripted at {lich.sessions_ms} ms, a whole multiple of the poll's "
                f"{POLL_MS // 1000} s: a real read takes its start-up more, so the next comes a period later"
                + (" (and this one reaches the read's own 30 s timeout, which cuts it off)"
                   if lich.sessions_ms >= DEFAULT_TIMEOUT_MS else ""))
    if any(w.read is not None for w in lich.lists):
        return "lich.lists by read number: answered by the replay's scripted runner, which fake-lich does not know"
    opens = (lich.default_open, *lich.opens, *lich.by_prompt.values())
    for o in opens:
        if o.exit is not None and o.exit not in OPEN_EXITS:
            return f"an open exiting {o.exit}: an exit code set by hand, not one lich's program prints"
    for step in scenario.steps:
        if isinstance(step, steps.Workflow):
            return "a workflow step: the real engine raises agent.spawn for a workflow only from a workflow run"
        if isinstance(step, steps.At) and not isinstance(step.step, steps.HostDies):
            return "an action at a virtual time across steps (at:): real turns take seconds, so T lands elsewhere"
        if isinstance(step, steps.SessionStart) and not step.interactive:
            return "session.start: false: a non-interactive session.start cannot be raised in the interactive screen"
        if isinstance(step, steps.Mode) and step.mode != "default" and step.mode not in MODE_LABELS:
            return (f"a switch to {step.mode} mode: Shift+Tab's cycle holds no {step.mode} mode (Claude Code enters "
                    "it only from the flags it was started with)")
        if not isinstance(step, (*DRIVEN, steps.At)):  # at: T + host.dies: driven in the next call step
            return f"a `{step_key(step)}` step: the real run does not drive it, and a step skipped is not judged"
    _, problem = _mid_open_deaths(scenario, events)
    if problem:
        return problem
    for call in _calls(scenario):
        if (call.origin != "engine" or call.agent is not None) and not _alone(scenario, call):
            return ("a plugin's or a subagent's call beside other calls in one step: not driven (the harness "
                    "raises such a call alone in its step)")
        if call.origin != "engine" and not re.fullmatch(r"[a-z0-9][a-z0-9-]*", call.origin):
            return f"a call raised by the plugin {call.origin!r}: not a name Claude Code gives a plugin"
        if call.agent is not None and not _native_before(call, events):
            return ("a subagent's own call with no native agent running before it: no subagent is there to "
                    "make it")
    return _permission_problem(scenario) or (_print_problem(scenario) if _printed(scenario) else None)


def _alone(scenario: Scenario, call: steps.ToolCall) -> bool:
    return any(isinstance(s, steps.CallStep) and s.calls == (call,) for s in scenario.steps)


def _native_before(call: steps.ToolCall, events: Sequence[Mapping[str, Any]]) -> bool:
    """A native agent started before the call in the fake host's transcript (the subagent that makes it)."""
    for e in events:
        if e.get("kind") == "call" and e.get("call") == call.id:
            return False
        if e.get("kind") == "native":
            return True
    return False


def missing_programs(scenario: Scenario) -> tuple[str, ...]:
    """The programs the scenario leaves out of the mod's reach: their runs fail to start, which no wrapper
    sees (lich's binary not installed, git not on the session host's PATH)."""
    lich = scenario.env.get("LICH_BIN")
    missing = (lich,) if lich and not scenario.lich.installed else ()
    return missing + (("git",) if scenario.session.git.missing else ())


def _printed(scenario: Scenario) -> bool:
    """Run as ``claude -p``: the session is not interactive, or a dialog has nobody to answer it."""
    return not scenario.session.interactive or any(
        p.decision == "ask" and p.answer is None for _, p in _decisions(scenario))


def _print_problem(scenario: Scenario) -> str | None:
    """What ``claude -p`` cannot show: it takes one prompt, and nothing is typed or pressed while it runs."""
    calls = [s for s in scenario.steps if isinstance(s, steps.CallStep)]
    if len(calls) != 1:
        return f"{len(calls)} call steps in a claude -p session: it takes one prompt"
    if calls[0].esc_after is not None or any(isinstance(s, (steps.Esc, steps.Reload, steps.SessionStart))
                                             for s in scenario.steps):
        return "a key or a command in a claude -p session: nothing is typed or pressed while it runs"
    if scenario.session.modes:
        return "other footer modes in a claude -p session: it draws no footer"
    answered = [p for _, p in _decisions(scenario) if p.decision == "ask" and p.answer is not None]
    if answered:
        return "a dialog the person answers in a claude -p session: nobody is there to answer it"
    return None


def _decisions(scenario: Scenario) -> list[tuple[steps.ToolCall, PermissionVerdict]]:
    own = scenario.session.permission
    return [(c, c.permission or own) for c in _calls(scenario) if c.tool == "Agent"]


def call_modes(scenario: Scenario) -> dict[str, str]:
    """Each call's permission mode: the session's, as the ``mode`` steps before it switched it."""
    mode = scenario.session.permission_mode or "default"
    out: dict[str, str] = {}
    for step in scenario.steps:
        if isinstance(step, steps.Mode):
            mode = step.mode
        elif isinstance(step, steps.CallStep):
            out.update((c.id, mode) for c in step.calls)
    return out


def _asked_by_plan_mode(scenario: Scenario) -> bool:
    """Some calls ask and others are allowed, and the ones that ask are exactly those made in plan mode:
    the mode asks about them by itself, and no rule is needed (one would make the others ask too)."""
    decided = _decisions(scenario)
    modes = call_modes(scenario)
    return {p.decision for _, p in decided} == {"allow", "ask"} and all(
        (p.decision == "ask") == (modes.get(c.id) == "plan") for c, p in decided)


def _permission_problem(scenario: Scenario) -> str | None:
    decided = _decisions(scenario)
    kinds = {p.decision for _, p in decided}
    if len(kinds) > 1 and not _asked_by_plan_mode(scenario):
        return f"calls with different permission checks ({', '.join(sorted(kinds))}): one run has one set of rules"
    hook_reasons = {p.reason for _, p in decided if p.decision == "hook-deny"}
    if len(hook_reasons) > 1:
        return "hook denies with different reasons: one hook answers every call"
    return None


def plan(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> Plan:
    """The concrete settings of a scenario :func:`why_not` let run."""
    decided = _decisions(scenario)
    decision = decided[0][1].decision if decided else "allow"
    if _asked_by_plan_mode(scenario):
        permission = RealPermission("ask", answers={c.id: bool(p.answer) for c, p in decided if p.decision == "ask"},
                                    rule=False)
    elif decision == "ask":
        permission = RealPermission("ask", answers={c.id: bool(p.answer) for c, p in decided})
    elif decision == "deny":
        permission = RealPermission("deny", deny_rules=tuple(dict.fromkeys(p.rule or f"Agent({_agent_type(c)})"
                                                                        for c, p in decided)))
    elif decision == "hook-deny":
        permission = RealPermission("hook-deny", hook_reason=decided[0][1].reason or "Blocked by hook")
    else:
        permission = RealPermission()
    git = scenario.session.git
    if git.missing:
        concrete = RealGit("missing")
    elif git.exit and git.stderr and git.stderr != GIT_NOT_A_REPO:
        # git's own "no repository" in words of its own (a mount point it stops at): a project in none, the
        # mod's git answering those words; any other failure: a repository whose git refuses the mod
        mode = "none" if not_a_repository(git.exit, git.stderr) else "refuses"
        concrete = RealGit(mode, exit=git.exit, stderr=git.stderr)
    elif git.exit:
        concrete = RealGit("none")
    elif git.branch is None:
        concrete = RealGit("detached")
    else:
        concrete = RealGit("branch", git.branch)
    opens, open_after = _opens(scenario, events)
    deaths, _ = _mid_open_deaths(scenario, events)
    reads = tuple(any(r.get("kind") == "run" and [str(a) for a in r.get("argv") or []][1:2] == ["sessions"]
                      and r.get("t") == e.get("t") for r in events)
                  for e in events if e.get("kind") == "resume")
    return Plan(scenario, permission, concrete, min(_span(events), MAX_SPAN_MS), opens, open_after,
                permission_mode=scenario.session.permission_mode or "default",
                mode=SWITCHED_MODE if scenario.session.modes else None, printed=_printed(scenario),
                host_dies_in=deaths, resume_reads=reads, esc_in_git=esc_in_git(scenario, events),
                plugin_calls={n: s.calls[0].origin for n, s in _numbered(scenario) if s.calls[0].origin != "engine"},
                subagent_steps=tuple(n for n, s in _numbered(scenario) if s.calls[0].agent is not None))


def _numbered(scenario: Scenario) -> list[tuple[int, steps.CallStep]]:
    return list(enumerate((s for s in scenario.steps if isinstance(s, steps.CallStep)), start=1))


def esc_in_git(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> dict[int, tuple[str, ...]]:
    """Each call step whose Esc (``esc_after``) lands in one of the fake host's git runs: that run's argv after
    ``git`` (the harness holds the real one until the Esc is taken)."""
    called = {str(e.get("call")): int(e.get("t", 0)) for e in events if e.get("kind") == "call"}
    gits = [e for e in events if e.get("kind") == "run" and [str(a) for a in e.get("argv") or []][:1] == ["git"]]
    out: dict[int, tuple[str, ...]] = {}
    n = 0
    for step in scenario.steps:
        if not isinstance(step, steps.CallStep):
            continue
        n += 1
        if step.esc_after is None or step.calls[0].id not in called:
            continue
        at = called[step.calls[0].id] + step.esc_after
        for run in gits:
            start = int(run.get("t", 0))
            if start <= at < start + int(run.get("ms") or 0):
                out[n] = tuple(str(a) for a in run["argv"][1:])
                break
    return out


def _mid_open_deaths(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], str | None]:
    """Each ``at: T`` + ``host.dies`` as the call whose open it lands in, and how many ms into that open: real
    turns take seconds, so T is found again as that moment of the real open (as Esc mid-open is); one that
    lands in no open of the next call step cannot run (why)."""
    deaths: dict[str, int] = {}
    for index, step in enumerate(scenario.steps):
        if not (isinstance(step, steps.At) and isinstance(step.step, steps.HostDies)):
            continue
        following = next((s for s in scenario.steps[index + 1:] if isinstance(s, steps.CallStep)), None)
        calls = following.calls if following else ()
        prompts = {str(c.input.get("prompt")): c.id for c in calls if c.tool == "Agent"}
        for e in events:
            argv = [str(a) for a in e.get("argv") or []]
            if e.get("kind") != "run" or argv[1:2] != ["open"] or "--prompt" not in argv[:-1]:
                continue
            call_id = prompts.get(argv[argv.index("--prompt") + 1])
            start = int(e.get("t", 0))
            if call_id is not None and start <= step.t < start + int(e.get("ms") or 0):
                deaths[call_id] = step.t - start
                break
        else:
            return deaths, (f"at: {step.t} host.dies lands in no open of the next call: only a host killed mid-open "
                            "is found again in real time (the moment of the real open)")
    return deaths, None


def _opens(scenario: Scenario, events: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """Each call's place among the fake host's opens, and how long after the call its open started."""
    by_prompt = {str(c.input.get("prompt")): c.id for c in _calls(scenario) if c.tool == "Agent"}
    called = {str(e.get("call")): int(e.get("t", 0)) for e in events if e.get("kind") == "call"}
    opens: dict[str, int] = {}
    after: dict[str, int] = {}
    made = 0  # the opens that passed lich's own checks: only those take a turn (fake-lich numbers them so)
    for e in events:
        argv = [str(a) for a in e.get("argv") or []]
        if e.get("kind") != "run" or argv[1:2] != ["open"] or "--prompt" not in argv[:-1]:
            continue
        prompt = argv[argv.index("--prompt") + 1]
        script = scenario.lich.open_for(made, prompt)
        scripted = script.fail is not None or script.exit is not None or script.stdout is not None \
            or script.stderr is not None
        if e.get("exit") != 0 and not e.get("stdout") and not scripted:
            continue  # refused before it opened anything (a flag an old lich lacks): no turn taken
        call_id = by_prompt.get(prompt)
        if call_id is not None and call_id not in opens:
            opens[call_id] = made
            after[call_id] = int(e.get("t", 0)) - called.get(call_id, 0)
        made += 1
    return opens, after
