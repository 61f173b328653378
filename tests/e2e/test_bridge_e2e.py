"""The plugin's module in the real Claude Code: ``agent_cards.mod`` through the bridge, interactive, offline.

The repository is the plugin (``--plugin-dir``); its hooks file installs ``hooks/agent-cards.js``, which
starts the session host. The fake Messages API scripts the model; the logging fake lich stands behind
LICH_BIN. No fixed sleeps: every wait is on the screen, the model's requests or the lich log. Each run
prints its wall time (``[e2e timing]``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cards import bridge
from agent_cards.texts import agent_text, person_text
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.model_api import ScriptedModel, ToolUse, text_of, tool_results
from agent_cards_claude_driver.runs import run_print, run_validate
from agent_cards_claude_driver.sandbox import Sandbox
from agent_cards_claude_driver.tui import Tui
from agent_cards_claude_driver.waits import until
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript, OpenScript, ReportScript

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not found")]

ModelFactory = Callable[..., ScriptedModel]

ROOT = Path(__file__).resolve().parents[2]
TRIGGER = "E2E-TRIGGER: please delegate this to a subagent."
LAUNCHED = "Async agent launched successfully"
WORKER = "session-2-9f81"  # the fake lich's first worker: label "Session 2"
ONE = person_text("footer.workers.one")
DEFAULT = ["--permission-mode", "default"]
AGENT_HOOK = next(i for i, r in enumerate(bridge.registrations()[0]) if r.matcher == {"tool": "Agent"})


class FakeLich(LoggedLich):
    def env(self, **more: str) -> dict[str, str]:
        return {
            "AGENT_CARDS_BRIDGE_LOG": str(self.log.parent / "bridge.jsonl"),
            "LICH_BIN": str(self.bin),
            "LICH_SESSION_ID": "3c4d",
            "LICH_SUBAGENT_DEPTH": "0",
            "LICH_PROMPT_LANG": "en",
            "FAKE_LICH_STATE": str(self.state),
            **more,
        }

    def wait_calls(self, predicate: Callable[[list[list[str]]], bool], timeout: float = 30.0) -> list[list[str]]:
        def matched() -> list[list[str]] | None:
            calls = self.calls()
            return calls if predicate(calls) else None

        return until("the lich calls awaited", matched, timeout, every=0.1, shown=self.calls)


@pytest.fixture
def fake_lich(tmp_path: Path, sandbox: Sandbox) -> FakeLich:
    try:
        logged = LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(sandbox.project)))
    except SetupError as error:
        pytest.skip(str(error))
    return FakeLich(logged.bin, logged.state, logged.log)


def agent_call(description: str, prompt: str, **more: Any) -> ToolUse:
    return ToolUse("Agent", {"description": description, "prompt": prompt, "subagent_type": "general-purpose",
                             **more}, text=f"Delegating: {description}.")


def result_for(model: ScriptedModel, call: ToolUse) -> dict[str, Any]:
    for request in model.main_requests:
        found = [r for r in tool_results(request) if r.get("tool_use_id") == call.id]
        if found:
            return found[0]
    raise AssertionError(f"no tool_result for {call.name} {call.id}")


def answered(call: ToolUse) -> Callable[[ScriptedModel], bool]:
    def has(model: ScriptedModel) -> bool:
        return any(r.get("tool_use_id") == call.id for q in model.main_requests for r in tool_results(q))

    return has


def open_argv(prompt: str) -> list[str]:
    return ["open", "--kind", "claude", "--subagent", "--prompt", prompt, "--json"]


def hosts(sandbox: Sandbox) -> list[int]:
    """The session hosts (python … agent_cards.bridge) running for this sandbox's CLI."""
    return sandbox.session_hosts()


def test_the_plugin_validates_strictly(claude: Path, tmp_path: Path, timings: list[str]) -> None:
    run = run_validate(claude, ROOT, tmp_path / "validate-home", strict=True)
    timings.append(f"claude plugin validate --strict: {run.elapsed:.2f}s")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "./agent-cards.js hooks: session.start, tool.call{tool=Agent}, tool.call{tool=TaskStop}" in run.stdout


def test_a_general_purpose_call_is_taken_counted_and_stopped(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """The open's argv; async_launched with lich's agentId; the footer; TaskStop closes the worker."""
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping that worker.")
    model = fake_api([general, "Launched.", stop, "Stopped."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        ready = time.monotonic() - start
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(re.escape(ONE), 30)
        assert hosts(sandbox), "one session host runs"
        tui.wait_idle(30)
        tui.type("Stop that worker now.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        screen = tui.wait_idle(30)
        until("the footer cleared", lambda: ONE not in tui.screen(), 15, every=0.2, shown=tui.screen)
        footer_after = tui.screen()
        status = tui.exit()
    timings.append(f"interactive: taken, counted, stopped: {time.monotonic() - start:.2f}s (ready {ready:.2f}s)")
    print(screen)
    assert status == 0
    assert fake_lich.actions() == [open_argv("Fix the auth flow in src/auth."), ["close", WORKER]]
    launched = result_for(model, general)
    assert not launched.get("is_error")
    text = text_of(launched["content"])
    assert LAUNCHED in text and f"agentId: {WORKER}" in text, text
    assert not model.subagent_requests  # no native subagent ran
    stopped = result_for(model, stop)
    assert not stopped.get("is_error"), stopped
    body = json.loads(text_of(stopped["content"]))
    assert body["task_id"] == WORKER and body["task_type"] == "local_agent", body
    assert body["message"].startswith(f"Successfully stopped task: {WORKER}")
    assert ONE not in footer_after
    assert hosts(sandbox) == []  # the host left with the CLI


def test_the_poll_ends_the_count(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """The worker reports and lich closes it: the next 5 s read of ``sessions --json`` clears the footer."""
    fake_lich.restart(LichScript(checkout=str(sandbox.project),
                                 default_open=OpenScript(report=ReportScript(after_ms=1500, text="All fixed."))))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Launched."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        tui.wait_for(re.escape(ONE), 60)
        shown = time.monotonic()
        fake_lich.wait_calls(lambda calls: ["sessions", "--json"] in calls, 30)
        until("the footer cleared", lambda: ONE not in tui.screen(), 30, every=0.2, shown=tui.screen)
        cleared = time.monotonic() - shown
        status = tui.exit()
    timings.append(f"interactive: the poll cleared the footer {cleared:.1f}s after it showed "
                   f"({time.monotonic() - start:.2f}s in all)")
    assert status == 0
    calls = fake_lich.calls()
    assert calls[0] == open_argv("Fix the auth flow in src/auth.")
    assert set(map(tuple, calls[1:])) == {("sessions", "--json")}


def bridge_log(lich: FakeLich) -> list[dict[str, Any]]:
    path = lich.log.parent / "bridge.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def kill_hosts(sandbox: Sandbox, sig: int = signal.SIGKILL) -> list[int]:
    found = hosts(sandbox)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    return found


def wait_hosts(sandbox: Sandbox, timeout: float = 20.0) -> list[int]:
    return until("a session host", lambda: hosts(sandbox), timeout, every=0.1)


def ask_rule(sandbox: Sandbox) -> None:
    folder = sandbox.project / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps({"permissions": {"ask": ["Agent"]}}), encoding="utf-8")


def test_an_isolated_call_opens_on_its_branch_from_this_one(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    isolated = agent_call("Refactor the parser", "Refactor the parser module.", isolation="worktree")
    model = fake_api([isolated, "Launched."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(isolated), 60), tui.screen()
        status = tui.exit()
    timings.append(f"interactive: isolated call: {time.monotonic() - start:.2f}s")
    assert status == 0
    [argv] = fake_lich.actions()
    suffix = isolated.id[-4:]
    branch = f"subagent/refactor-the-parser-{suffix}"
    assert argv[:6] == ["open", "--kind", "claude", "--subagent", "--worktree", branch]
    assert argv[6:8] == ["--base", "main"]
    assert LAUNCHED in text_of(result_for(model, isolated)["content"])


def test_oversize_toast_comes_before_the_card_and_no_runs_nothing(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """An ask rule puts every Agent call to the person. The size toast shows before the card (the mod
    decides at tool.call, before the permission check); the person's "no" leaves lich untouched."""
    ask_rule(sandbox)
    big = agent_call("Summarise the logs", "y" * 9000)
    refused = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([big, "Ran it natively.", refused, "Understood."], subagent_replies=["Summary."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        tui.wait_for(r"Do you want to proceed\?", 60)
        steps = bridge_log(fake_lich)
        tui.say_yes()  # the native agent runs
        # The native agent's end starts a turn by itself, whose reply is the next call: a card again.
        tui.wait_for(r'Agent "Summarise the logs" finished', 60)
        assert model.wait_until(answered(big), 60), tui.screen()
        tui.wait_for(r"Do you want to proceed\?", 60)
        tui.say_no()
        tui.wait_for(r"Interrupted", 30)
        status = tui.exit()
    timings.append(f"interactive: oversize toast, yes, then no: {time.monotonic() - start:.2f}s")
    assert status == 0
    # The toast went to the engine with the answer that asked for next(e), so before the card existed.
    first = next(s for s in steps if s["op"] == "event" and s["hook"] == AGENT_HOOK)
    assert first["kind"] == "next", steps
    assert [list(x) for x in first["effects"]] == [["toast"]], steps
    assert fake_lich.calls() == []
    assert model.subagent_requests  # the oversize call ran natively
    assert LAUNCHED in text_of(result_for(model, big)["content"])


def test_two_parallel_calls_each_open_at_once(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=2000)))
    second = agent_call("Write the docs", "Write the docs for src/auth.")
    first = ToolUse("Agent", {"description": "Fix the auth flow", "prompt": "Fix the auth flow in src/auth.",
                              "subagent_type": "general-purpose"}, text="Two at once.", parallel=(second,))
    model = fake_api([first, "Both launched."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(FAKE_LICH_REAL_SLEEP="1"),
             extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(lambda m: answered(first)(m) and answered(second)(m), 60), tui.screen()
        tui.wait_for(re.escape(person_text("footer.workers.many", count=2)), 30)
        status = tui.exit()
    elapsed = time.monotonic() - start
    timings.append(f"interactive: two parallel calls (2 s opens): {elapsed:.2f}s")
    assert status == 0
    prompts = sorted(c[5] for c in fake_lich.actions())
    assert prompts == ["Fix the auth flow in src/auth.", "Write the docs for src/auth."]
    ids = {text_of(result_for(model, c)["content"]).split("agentId: ")[1].split()[0] for c in (first, second)}
    assert len(ids) == 2


def test_esc_during_the_open_leaves_a_worker_the_footer_counts(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """Esc while lich open runs: the engine rejects the call; the open, run by the session host in a
    session of its own, is not cut off, so lich has the worker and the mod counts it (TaskStop reaches it)."""
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=4000)))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping it.")
    model = fake_api([general, stop, "Stopped."])  # Esc ends the turn: no request until the person types
    start = time.monotonic()
    debug = ["--debug-file", str(fake_lich.log.parent / "debug.log")] if os.environ.get("BRIDGE_DEBUG") else []
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(FAKE_LICH_REAL_SLEEP="1"),
             extra_args=[*DEFAULT, *debug]) as tui:
        tui.type(TRIGGER)
        try:
            fake_lich.wait_calls(lambda calls: len(calls) == 1, 60)
        except TimeoutError:
            raise AssertionError(tui.screen()) from None
        pressed = time.monotonic()
        tui.key("Escape")
        tui.wait_for("Interrupted", 30)
        tui.wait_for(re.escape(ONE), 30)
        counted = time.monotonic() - pressed
        [worker] = list(json.loads((fake_lich.state / "world.json").read_text())["sessions"])
        tui.type("Stop the worker you opened.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        status = tui.exit()
    timings.append(f"interactive: Esc mid-open, counted {counted:.1f}s after Esc: {time.monotonic() - start:.2f}s")
    assert status == 0
    rejected = result_for(model, general)
    assert rejected.get("is_error") is True
    assert "The user doesn't want to proceed" in text_of(rejected["content"])
    assert worker["name"] == WORKER and worker["status"] == "pending"
    assert fake_lich.actions() == [open_argv("Fix the auth flow in src/auth."), ["close", WORKER]]
    assert not model.subagent_requests


def test_a_host_killed_between_events_is_started_again_with_its_state(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping it.")
    model = fake_api([general, "Launched.", stop, "Stopped."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        tui.wait_for(re.escape(ONE), 60)
        tui.wait_idle(30)
        killed = kill_hosts(sandbox)
        assert killed
        tui.type("Stop that worker now.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        again = hosts(sandbox)
        status = tui.exit()
    timings.append(f"interactive: host killed between events, TaskStop after: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert again and not set(again) & set(killed)
    assert fake_lich.actions()[-1] == ["close", WORKER]
    assert json.loads(text_of(result_for(model, stop)["content"]))["task_id"] == WORKER


def test_a_hung_host_falls_back_to_the_native_agent(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Done."], subagent_replies=["Fixed natively."])
    start = time.monotonic()
    stopped: list[int] = []
    try:
        with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
            stopped = wait_hosts(sandbox)
            for pid in stopped:
                os.kill(pid, signal.SIGSTOP)
            asked = time.monotonic()
            tui.type(TRIGGER)
            assert model.wait_until(answered(general), 60), tui.screen()
            waited = time.monotonic() - asked
            tui.wait_for(r'Agent "Fix the auth flow" finished', 60)
            status = tui.exit()
    finally:
        for pid in stopped:
            for sig in (signal.SIGKILL, signal.SIGCONT):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
    timings.append(f"interactive: hung host, native after {waited:.1f}s: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert fake_lich.calls() == []
    assert model.subagent_requests
    assert LAUNCHED in text_of(result_for(model, general)["content"])


def test_a_host_killed_mid_open_runs_nothing_twice(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=3000)))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Understood."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(FAKE_LICH_REAL_SLEEP="1"),
             extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        fake_lich.wait_calls(lambda calls: len(calls) == 1, 60)
        kill_hosts(sandbox)
        assert model.wait_until(answered(general), 60), tui.screen()
        status = tui.exit()
    timings.append(f"interactive: host killed mid-open: {time.monotonic() - start:.2f}s")
    assert status == 0
    denied = result_for(model, general)
    assert denied.get("is_error") is True
    assert "lich may already have the task" in text_of(denied["content"])
    assert not model.subagent_requests


def test_a_host_killed_mid_open_leaves_a_worker_the_next_host_counts_and_task_stop_closes(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """SIGKILL to the session host while lich open runs: the model reads that lich may have the task; the open
    goes on and keeps its output for the next host, which the module's timer starts: it counts the worker
    (the footer), and TaskStop with the worker's roster name runs ``lich close``. The open runs once."""
    fake_lich.restart(LichScript(checkout=str(sandbox.project), default_open=OpenScript(ms=3000)))
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping it.")
    model = fake_api([general, "Understood.", stop, "Stopped."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(FAKE_LICH_REAL_SLEEP="1"),
             extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        fake_lich.wait_calls(lambda calls: len(calls) == 1, 60)
        [first] = wait_hosts(sandbox)
        kill_hosts(sandbox)
        killed = time.monotonic()
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(re.escape(ONE), 60)  # the next host read the open's output and counts its worker
        counted = time.monotonic() - killed
        again = hosts(sandbox)
        tui.wait_idle(30)
        tui.type("Stop the worker lich opened.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        tui.wait_idle(30)
        until("the footer cleared", lambda: ONE not in tui.screen(), 15)
        status = tui.exit()
    timings.append(f"interactive: host killed mid-open, counted {counted:.1f}s later, stopped: "
                   f"{time.monotonic() - start:.2f}s")
    assert status == 0
    assert again and first not in again
    denied = result_for(model, general)
    assert denied.get("is_error") is True
    assert "lich may already have the task" in text_of(denied["content"])
    assert fake_lich.actions() == [open_argv("Fix the auth flow in src/auth."), ["close", WORKER]]
    stopped = result_for(model, stop)
    assert not stopped.get("is_error"), stopped
    assert json.loads(text_of(stopped["content"]))["task_id"] == WORKER
    assert not model.subagent_requests


def test_a_missing_python_is_a_toast_and_the_agent_runs_natively(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Done."], subagent_replies=["Fixed natively."])
    missing = str(sandbox.root / "no-such-python")
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(AGENT_CARDS_PYTHON=missing),
             extra_args=DEFAULT) as tui:
        tui.wait_for(r"No Python 3\.11\+: set AGENT_CARDS_PYTHON", 30)
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(r'Agent "Fix the auth flow" finished', 60)
        status = tui.exit()
    timings.append(f"interactive: missing Python: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert fake_lich.calls() == []
    assert model.subagent_requests


def test_the_next_session_starts_the_interpreter_python3_on_path_ran_as(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, tmp_path: Path, timings: list[str]
) -> None:
    """The module keeps what python3 on PATH ran as (the plugin's store), and the next session's first host starts
    that interpreter directly: a python3 first on PATH that cannot serve (one that exits at once) is not asked.
    First without anything kept, to show that such a python3 serves nobody."""
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "python3").write_text("#!/bin/false\n", encoding="utf-8")
    (broken / "python3").chmod(0o755)
    paths = {"broken": f"{broken}{os.pathsep}{os.environ['PATH']}", "plain": os.environ["PATH"]}
    served = []
    start = time.monotonic()
    for name in ("broken", "plain", "broken"):
        before = len(bridge_log(fake_lich))
        model = fake_api([agent_call("Fix the auth flow", "Fix the auth flow in src/auth."), "Done."],
                         subagent_replies=["Fixed."])
        run = run_print(claude, sandbox, [ROOT], TRIGGER, model, env_extra=fake_lich.env(PATH=paths[name]),
                        timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
        steps = bridge_log(fake_lich)[before:]
        served.append(any(s["op"] == "event" and s["hook"] == AGENT_HOOK for s in steps))
    timings.append(f"-p: three sessions, the kept interpreter: {time.monotonic() - start:.2f}s")
    assert served == [False, True, True]


def test_a_reloaded_module_takes_the_next_call(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, tmp_path: Path, timings: list[str]
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    shutil.copytree(ROOT / ".claude-plugin", plugin / ".claude-plugin")
    shutil.copy(ROOT / "hooks" / "hooks.json", plugin / "hooks" / "hooks.json")
    module = plugin / "hooks" / "agent-cards.js"
    shutil.copy(ROOT / "hooks" / "agent-cards.js", module)
    (plugin / "agent_cards").symlink_to(ROOT / "agent_cards")
    first = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    second = agent_call("Write the docs", "Write the docs for src/auth.")
    model = fake_api([first, "Launched.", second, "Launched again."])
    start = time.monotonic()
    with Tui(claude, sandbox, [plugin], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(first), 60), tui.screen()
        tui.wait_idle(30)
        before = wait_hosts(sandbox)
        module.write_text(module.read_text(encoding="utf-8") + "// reloaded\n", encoding="utf-8")
        tui.type("/reload-plugins")
        until("only a new session host", lambda: hosts(sandbox) and not set(hosts(sandbox)) & set(before), 30,
              every=0.2, shown=tui.screen)
        tui.wait_idle(30)
        tui.type("Now write the docs.")
        assert model.wait_until(answered(second), 60), tui.screen()
        status = tui.exit()
    timings.append(f"interactive: reload, then a call: {time.monotonic() - start:.2f}s")
    assert status == 0
    calls = fake_lich.calls()
    opens = [c[5] for c in calls if c[0] == "open"]
    assert opens == ["Fix the auth flow in src/auth.", "Write the docs for src/auth."]
    assert ["sessions", "--json"] in calls  # the fresh host read the kept count back and asked lich at once
    assert LAUNCHED in text_of(result_for(model, second)["content"])


def settings_command_hook(sandbox: Sandbox, plugin: Path) -> None:
    """The command hook in the scratch HOME's settings (``hooks/command-hooks.json``, its launcher named by
    path, as one copies it into a hooks file of one's own)."""
    entries = (plugin / "hooks" / "hooks.json").read_text(encoding="utf-8")
    entries = entries.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    folder = sandbox.home / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": json.loads(entries)["hooks"]}), encoding="utf-8")


def test_the_module_and_a_settings_command_hook_take_one_call_once(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, command_hook_plugin: Path,
    tmp_path: Path, timings: list[str]
) -> None:
    """Exactly one taker: the plugin (the module) and the command hook in the settings, one general-purpose
    call. The command hook is given a data folder (CLAUDE_PLUGIN_DATA), so it can take the call too."""
    settings_command_hook(sandbox, command_hook_plugin)
    data = tmp_path / "command-hook-data"
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Launched."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(CLAUDE_PLUGIN_DATA=str(data)),
             extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        screen = tui.wait_idle(30)
        status = tui.exit()
    timings.append(f"interactive: module and settings command hook, one call: {time.monotonic() - start:.2f}s")
    print(screen)
    assert status == 0
    assert list(data.glob("sessions/*.json")), "the command hook ran (it recorded the session)"
    assert fake_lich.actions() == [open_argv("Fix the auth flow in src/auth.")]  # one open
    answers = [r for q in model.main_requests for r in tool_results(q) if r.get("tool_use_id") == general.id]
    assert len({json.dumps(a, sort_keys=True) for a in answers}) == 1, answers  # one answer, repeated in history
    assert not model.subagent_requests  # no native subagent ran
    # The taker is the command hook: it decides at PreToolUse, beneath the module's tool.call, and denies
    # the call there, so agent.spawn is never raised and the module passes on what came back beneath.
    assert answers[0].get("is_error") is True
    assert text_of(answers[0]["content"]).startswith(
        "PreToolUse:Agent hook error: " + agent_text("en", "hook.launched.shared", name=WORKER))
    steps = bridge_log(fake_lich)
    calls = {s["id"] for s in steps if s["op"] == "event" and s["hook"] == AGENT_HOOK}
    assert [(s["op"], s["hook"], s["kind"]) for s in steps if s["id"] in calls] == [
        ("event", AGENT_HOOK, "next"), ("resume", None, "done")]


def test_a_call_in_plan_mode_runs_claude_codes_own_agent_and_opens_no_card(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    """In plan mode Claude Code asks about the Agent call; after Yes, agent.spawn carries permissionMode
    "plan", and the mod leaves the spawn to Claude Code's own agent (held to plan mode), with a toast."""
    general = agent_call("Map the login flow", "Read src/auth and explain the login flow.")
    model = fake_api([general, "Done."], subagent_replies=["Explained."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(),
             extra_args=["--permission-mode", "plan"]) as tui:
        tui.type(TRIGGER)
        tui.wait_for(r"Do you want to proceed\?", 60)
        tui.say_yes()  # plan mode's dialog offers No first, then Yes
        tui.wait_for(r"Plan mode: agent ran natively", 30)
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(r'Agent "Map the login flow" finished', 60)  # /exit would ask to stop it first
        status = tui.exit()
    timings.append(f"interactive: plan mode, yes: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert fake_lich.calls() == []
    assert model.subagent_requests  # Claude Code's own agent ran
    assert LAUNCHED in text_of(result_for(model, general)["content"])


# -- the mod's state outlives the process that holds it ------------------------------------------------------
# /exit and claude --continue: the worker is counted again and TaskStop reaches it, and the model reads, beside
# Claude Code's own failed task-notification, that the lich worker still runs. A killed session host is started
# again by the module's own timer (the poll), with no other event. Outside lich no host ever starts.

LOST = "didn't finish before the previous session ended"
STILL = agent_text("en", "resume.still_running", label="Session 2", name=WORKER)


def test_continue_keeps_the_worker_counted_and_stoppable(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    stop = ToolUse("TaskStop", {"task_id": WORKER}, text="Stopping that worker.")
    model = fake_api([general, "Launched.", stop, "Stopped."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        tui.wait_for(re.escape(ONE), 30)
        tui.wait_idle(30)
        assert tui.exit() == 0
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(),
             extra_args=[*DEFAULT, "--continue"]) as tui:
        tui.wait_for(re.escape(LOST), 30)
        tui.wait_for(re.escape(ONE), 30)  # counted again: the fresh host read the kept state and lich
        shown = tui.screen()
        tui.type("Stop that worker now.")
        assert model.wait_until(answered(stop), 60), tui.screen()
        tui.wait_idle(30)
        until("the footer cleared", lambda: ONE not in tui.screen(), 15)
        status = tui.exit()
    timings.append(f"interactive: /exit, --continue, counted and stopped: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert ONE in shown
    acts = fake_lich.actions()
    assert acts == [open_argv("Fix the auth flow in src/auth."), ["close", WORKER]]
    stopped = result_for(model, stop)
    assert not stopped.get("is_error"), stopped
    # The request that carried the person's prompt after --continue: Claude Code's failed notification,
    # then the prompt, then the mod's line beside it.
    asked = next(q for q in model.main_requests if "Stop that worker now." in str(q.body.get("messages", [])[-1]))
    last = asked.body["messages"][-1]
    texts = [b.get("text", "") for b in last["content"] if isinstance(b, dict)]
    joined = "\n".join(texts)
    assert "<status>failed</status>" in joined and f"<task-id>{WORKER}</task-id>" in joined
    assert STILL in joined, joined
    assert not any(tool_results(q) and "No task found" in text_of(r.get("content"))
                   for q in model.main_requests for r in tool_results(q))


def test_a_killed_host_is_started_again_by_the_poll(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, fake_lich: FakeLich, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Launched."])
    with Tui(claude, sandbox, [ROOT], model, env_extra=fake_lich.env(), extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        tui.wait_for(re.escape(ONE), 60)
        tui.wait_idle(30)
        [first] = wait_hosts(sandbox)
        reads = sum(c == ["sessions", "--json"] for c in fake_lich.calls())
        killed = time.monotonic()
        kill_hosts(sandbox, signal.SIGKILL)
        until("a new host", lambda: [p for p in hosts(sandbox) if p != first], 30)
        restarted = time.monotonic() - killed
        until("the new host's read of lich",
              lambda: sum(c == ["sessions", "--json"] for c in fake_lich.calls()) > reads, 30)
        assert ONE in tui.screen()
        status = tui.exit()
    timings.append(f"interactive: a killed host started again {restarted:.1f}s later")
    assert status == 0
    assert hosts(sandbox) == []


def test_no_host_starts_outside_lich(
    claude: Path, sandbox: Sandbox, fake_api: ModelFactory, timings: list[str]
) -> None:
    general = agent_call("Fix the auth flow", "Fix the auth flow in src/auth.")
    model = fake_api([general, "Ran it."], subagent_replies=["Fixed."])
    start = time.monotonic()
    with Tui(claude, sandbox, [ROOT], model, extra_args=DEFAULT) as tui:
        tui.type(TRIGGER)
        assert model.wait_until(answered(general), 60), tui.screen()
        seen = hosts(sandbox)
        tui.wait_idle(30)
        seen += hosts(sandbox)
        status = tui.exit()
    timings.append(f"interactive: outside lich, one native call: {time.monotonic() - start:.2f}s")
    assert status == 0
    assert seen == []
    assert model.subagent_requests  # the native agent ran
    assert "Async agent launched successfully" in text_of(result_for(model, general)["content"])
