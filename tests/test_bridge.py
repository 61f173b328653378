"""The session host (``agent_cards.bridge``) driven by a fake module: the JS half's protocol, played in Python.

Each test starts the host as the module does (``python -I -S -c BOOT``, the boot object on stdin), reads its
stdout lines and speaks to its socket. Behind ``LICH_BIN`` is the logging fake lich.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cards import bridge, texts
from agent_cards.bridge import lifetime
from agent_cards.bridge.host import run_process
from agent_cards.texts import agent_text, person_text
from agent_cards_claude_driver.lich_log import LoggedLich
from agent_cards_claude_driver.waits import until
from agent_cards_simulator.lich.install import SetupError
from agent_cards_simulator.lich.scripts import LichScript, OpenScript, ReportScript

ROOT = Path(__file__).resolve().parents[1]
WORKER = "session-2-9f81"


class FakeModule:
    """The JS half: starts the host, keeps what it says on stdout, posts steps and plays ``next``."""

    def __init__(self, env: dict[str, str], boot: dict[str, Any], extra_env: dict[str, str] | None = None) -> None:
        child_env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_ROOT": str(ROOT), "AGENT_CARDS_JOURNAL": "off",
                     **(extra_env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", bridge.BOOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"env": env, **boot}).encode())
        self.proc.stdin.close()
        self.lines: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self.flowing = threading.Event()  # cleared, the lines the host writes wait unread: a reader far behind
        self.flowing.set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.hello = self.wait_line(lambda m: "hello" in m or "fatal" in m)
        self.serial = 0
        self.stderr: bytes | None = None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.flowing.wait()
            with self._cond:
                self.lines.append(json.loads(raw))
                self._cond.notify_all()

    def wait_line(self, predicate: Any, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [m for m in self.lines if predicate(m)]
                if found:
                    return found[-1]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such line; got {self.lines}")
                self._cond.wait(left)

    def wait_state(self, predicate: Callable[[dict[str, Any]], bool] = bool, timeout: float = 20.0) -> dict[str, Any]:
        """The last state the host has told that ``predicate`` holds for, waited for: the host writes its state
        line on its own, so an answer already read says nothing of whether that line has been read yet."""
        line = self.wait_line(lambda m: isinstance(m.get("state"), dict) and predicate(m["state"]), timeout)
        return dict(line["state"])

    def post(self, body: Any, token: str | None = None, path: str = "/step") -> tuple[int, Any]:
        return self.post_raw(json.dumps(body).encode(), token, path)

    def post_raw(self, data: bytes, token: str | None = None, path: str = "/step") -> tuple[int, Any]:
        head = (
            f"POST {path} HTTP/1.1\r\nhost: agent-cards.invalid\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer {self.hello['token'] if token is None else token}\r\n"
            f"content-length: {len(data)}\r\nconnection: close\r\n\r\n"
        ).encode()
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(self.hello["socket"])
            sock.sendall(head + data)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        raw = b"".join(chunks)
        header, _, payload = raw.partition(b"\r\n\r\n")
        return int(header.split()[1]), json.loads(payload)

    def dispatch(self, hook: int, e: dict[str, Any], beneath: Any, event: str = "tool.call") -> dict[str, Any]:
        """One event to its end; ``beneath(e)`` plays next(e). Returns the final answer (with all effects)."""
        self.serial += 1
        key = str(self.serial)
        request: dict[str, Any] = {"op": "event", "id": key, "hook": hook, "e": e,
                                   "origin": {"plugin": "engine", "tier": "core"}, "event": event}
        effects: list[Any] = []
        while True:
            status, answer = self.post(request)
            assert status == 200, answer
            effects += answer.get("effects", [])
            if answer["kind"] in ("done", "failed"):
                return {**answer, "effects": effects}
            if answer["kind"] == "next":
                request = {"op": "resume", "id": key, "value": beneath(answer["e"])}
            else:
                request = {"op": "poll", "id": key}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.stderr = self.proc.stderr.read()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


HOOKS = {r.event + (json.dumps(r.matcher) if r.matcher else ""): i for i, r in enumerate(bridge.registrations()[0])}
AGENT = HOOKS['tool.call{"tool": "Agent"}']
STOP = HOOKS['tool.call{"tool": "TaskStop"}']
SPAWN = HOOKS["agent.spawn"]
FOOTER = HOOKS['ui.render{"component": "SessionMode"}']
START = [{"event": "session.start", "e": {"cwd": ".", "surface": "terminal", "isInteractive": True},
          "result": {"cwd": "."}}]


@pytest.fixture
def lich(tmp_path: Path) -> LoggedLich:
    try:
        return LoggedLich.install(tmp_path / "lich", LichScript(checkout=str(tmp_path)))
    except SetupError as error:
        pytest.skip(str(error))


def lich_env(lich: LoggedLich) -> dict[str, str]:
    return {"LICH_BIN": str(lich.bin), "LICH_SESSION_ID": "3c4d", "LICH_SUBAGENT_DEPTH": "0", "LICH_PROMPT_LANG": "en"}


@pytest.fixture
def modules(lich: LoggedLich) -> Iterator[list[FakeModule]]:
    started: list[FakeModule] = []
    yield started
    for module in started:
        module.close()


def start(modules: list[FakeModule], lich: LoggedLich, boot: dict[str, Any] | None = None,
          extra: dict[str, str] | None = None) -> FakeModule:
    module = FakeModule(lich_env(lich), {"events": START} if boot is None else boot,
                        {**lich_env(lich), "FAKE_LICH_STATE": str(lich.state), **(extra or {})})
    modules.append(module)
    assert "hello" in module.hello, module.hello
    return module


def agent_e(prompt: str = "Fix the auth flow.", **more: Any) -> dict[str, Any]:
    return {"tool": "Agent", "tool_use_id": "toolu_1", "description": "Fix auth", "prompt": prompt,
            "subagent_type": "general-purpose", **more}


def spawn_e(e: dict[str, Any]) -> dict[str, Any]:
    return {"tool_use_id": e["tool_use_id"], "prompt": e["prompt"], "description": e["description"],
            "subagentType": "general-purpose", "provider": {"plugin": "engine", "tier": "core"}, "background": True}


def take(module: FakeModule, e: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """tool.call, whose next raises agent.spawn on the same host (as the engine does)."""
    spawned: list[dict[str, Any]] = []

    def beneath(passed: dict[str, Any]) -> Any:
        answer = module.dispatch(SPAWN, spawn_e(passed), lambda _: {"model": "m", "agentId": "native"}, "agent.spawn")
        spawned.append(answer)
        return {"ref": 1, "result": "Error: Subagent spawn denied by a plugin: x", "isError": True}

    return module.dispatch(AGENT, e, beneath), spawned[0]


def test_hello_folder_and_token(modules: list[FakeModule], lich: LoggedLich) -> None:
    module = start(modules, lich)
    folder = Path(module.hello["socket"]).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(module.hello["token"]) >= 40
    assert module.hello["python"] == sys.executable
    assert module.post({"op": "poll", "id": "x"}, token="wrong") == (403, {"error": "forbidden"})
    assert module.post({"op": "poll", "id": "x"}, token="")[0] == 403
    assert module.post({"op": "poll", "id": "x"}, path="/other")[0] == 404
    # session.start was handed over at boot (run after the hello: wait for the state it sets)
    assert module.wait_line(lambda m: "state" in m)["state"]["interactive"] is True
    module.close()
    assert module.proc.returncode == 0
    assert not folder.exists()


def test_the_hello_hands_over_the_bridge_texts_in_the_session_language(
    modules: list[FakeModule], lich: LoggedLich
) -> None:
    module = FakeModule({**lich_env(lich), "LICH_PROMPT_LANG": "ja"}, {"events": START})
    modules.append(module)
    assert module.hello["texts"] == {"bridge.unsure": agent_text("ja", "bridge.unsure", program="{program}")}
    assert module.hello["texts"]["bridge.unsure"] != agent_text("en", "bridge.unsure", program="{program}")
    js = bridge.js_module()  # the module's own copy, for a host that never said hello: English
    assert json.dumps(texts.AGENT["bridge.unsure"]) in js
    for key in ("bridge.no_python", "bridge.old_python", "bridge.failed"):
        assert json.dumps(texts.PERSON[key]) in js


def test_a_general_purpose_call_is_taken_and_counted(modules: list[FakeModule], lich: LoggedLich) -> None:
    module = start(modules, lich)
    answer, spawned = take(module, agent_e())
    assert spawned["kind"] == "done" and "deny" in spawned["value"], spawned
    assert answer["kind"] == "done"
    result = answer["value"]["result"]
    assert (result["status"], result["agentId"]) == ("async_launched", WORKER)
    assert lich.calls() == [["open", "--kind", "claude", "--subagent", "--prompt", "Fix the auth flow.", "--json"]]
    module.wait_line(lambda m: m.get("invalidate") == "ui.render")
    assert [w["name"] for w in module.wait_state(lambda s: bool(s.get("workers")))["workers"]] == [WORKER]
    footer = module.dispatch(FOOTER, {"component": "SessionMode", "props": {"modes": []}}, lambda e: e, "ui.render")
    assert footer["value"]["props"]["modes"] == [person_text("footer.workers.one")]


def test_a_state_line_read_behind_the_answers_is_waited_for(modules: list[FakeModule], lich: LoggedLich) -> None:
    """The host answers on its socket and tells its state on stdout: the answer can be read before the state
    line is, as on a loaded machine. A read of the lines at that moment misses the state; waiting finds it."""
    module = start(modules, lich)
    module.wait_state()  # the boot's session.start has been told
    module.flowing.clear()
    answer, _ = take(module, agent_e())
    assert answer["value"]["result"]["agentId"] == WORKER
    assert not any(m.get("state", {}).get("workers") for m in module.lines)  # what a read without waiting sees
    module.flowing.set()
    assert [w["name"] for w in module.wait_state(lambda s: bool(s.get("workers")))["workers"]] == [WORKER]


def test_the_spawns_permission_mode_reaches_the_mod_and_plan_mode_stays_native(
    modules: list[FakeModule], lich: LoggedLich
) -> None:
    """The module hands agent.spawn's event over whole: ``permissionMode: "plan"`` keeps the call native."""
    module = start(modules, lich)
    spawned: list[dict[str, Any]] = []

    def beneath(passed: dict[str, Any]) -> Any:
        spawn = {**spawn_e(passed), "permissionMode": "plan"}
        spawned.append(module.dispatch(SPAWN, spawn, lambda _: {"model": "m", "agentId": "native"}, "agent.spawn"))
        return {"ref": 1, "result": {"status": "async_launched", "agentId": "native"}}

    answer = module.dispatch(AGENT, agent_e(), beneath)
    assert spawned[0]["value"] == {"model": "m", "agentId": "native"}  # the native spawn went on
    assert [effect["toast"] for effect in spawned[0]["effects"]] == [
        person_text("toast.plan_mode", description="Fix auth")
    ]
    assert answer["value"]["result"]["agentId"] == "native"
    assert lich.calls() == []


def test_the_oversize_toast_comes_with_the_answer_before_next(modules: list[FakeModule], lich: LoggedLich) -> None:
    module = start(modules, lich)
    seen: list[Any] = []
    e = agent_e("x" * 9000)
    module.serial += 1
    _, answer = module.post({"op": "event", "id": "big", "hook": AGENT, "e": e,
                                  "origin": {"plugin": "engine", "tier": "core"}, "event": "tool.call"})
    seen.append(answer)
    assert answer["kind"] == "next"  # passed on natively ...
    assert [list(x) for x in answer["effects"]] == [["toast"]]  # ... with the toast to show first
    assert "9000" in answer["effects"][0]["toast"]
    _status, done = module.post({"op": "resume", "id": "big", "value": {"result": "native"}})
    assert done == {"kind": "done", "value": {"result": "native"}, "effects": []}
    assert lich.calls() == []


def test_state_survives_a_new_host_and_task_stop_closes_the_worker(
    modules: list[FakeModule], lich: LoggedLich
) -> None:
    first = start(modules, lich)
    take(first, agent_e())
    kept = first.wait_state(lambda s: bool(s.get("workers")))
    first.proc.kill()  # dies between events
    first.proc.wait()
    second = start(modules, lich, {"state": kept})
    stop = second.dispatch(STOP, {"tool": "TaskStop", "tool_use_id": "t2", "task_id": WORKER},
                           lambda e: pytest.fail("a worker's TaskStop never reaches Claude Code"))
    assert stop["value"]["result"]["task_id"] == WORKER
    assert stop["value"]["result"]["task_type"] == "local_agent"
    assert ["close", WORKER] in lich.calls()  # beside the new host's first read of lich
    second.wait_line(lambda m: m.get("state", {}).get("workers") == [])


def test_a_host_started_again_ends_the_count_by_its_poll(modules: list[FakeModule], lich: LoggedLich) -> None:
    """The state handed to a new host re-arms the mod's 5 s poll (``AgentCards.resume``): the worker reports,
    lich lists it done, and the count ends with no TaskStop."""
    lich.restart(LichScript(checkout="/x", default_open=OpenScript(report=ReportScript(after_ms=0, text="Done."))))
    first = start(modules, lich)
    take(first, agent_e())
    kept = first.wait_state(lambda s: bool(s.get("workers")))
    first.proc.kill()  # dies before its own poll
    first.proc.wait()
    assert [c[0] for c in lich.calls()] == ["open"]
    second = start(modules, lich, {"state": kept})
    second.wait_line(lambda m: m.get("state", {}).get("workers") == [], timeout=30)
    second.wait_line(lambda m: m.get("invalidate") == "ui.render")
    assert [c[0] for c in lich.calls()] == ["open", "sessions"]  # the poll's read, no close


def test_a_cancelled_dispatch_lets_its_open_finish_and_counts_the_worker(
    modules: list[FakeModule], lich: LoggedLich
) -> None:
    """Esc: the module stops listening and tells the host; the open (run here) still ends, so the mod knows
    the worker's name, and the footer counts it."""
    lich.restart(LichScript(checkout="/x", default_open=OpenScript(ms=1500)))
    module = start(modules, lich, extra={"FAKE_LICH_REAL_SLEEP": "1"})
    e = agent_e()
    _, first = module.post({"op": "event", "id": "c1", "hook": AGENT, "e": e,
                                 "origin": {"plugin": "engine", "tier": "core"}, "event": "tool.call"})
    assert first["kind"] == "next"
    _, pending = module.post({"op": "event", "id": "s1", "hook": SPAWN, "e": spawn_e(e),
                                   "origin": {"plugin": "engine", "tier": "core"}, "event": "agent.spawn"})
    assert pending == {"kind": "pending", "busy": ["lich"], "effects": []}  # the open runs: said at once
    # Esc: both dispatches are given up; the host hears it with the next request.
    _status, other = module.post({"op": "poll", "id": "none", "cancel": ["c1", "s1"]})
    assert other["kind"] == "failed"
    module.wait_line(lambda m: bool(m.get("state", {}).get("workers")), timeout=20)
    assert [c[0] for c in lich.calls()] == ["open"]


def test_a_hook_that_fails_says_so(modules: list[FakeModule], lich: LoggedLich) -> None:
    module = start(modules, lich)
    answer = module.dispatch(AGENT, agent_e(), lambda e: {"no": "shape"})
    assert answer["kind"] == "done"  # the mod passes what is beneath on unchanged
    _, bad = module.post({"op": "event", "id": "b", "hook": 99, "e": {}})
    assert bad["kind"] == "failed"
    _, bad = module.post({"op": "resume", "id": "nobody", "value": {}})
    assert bad == {"kind": "failed", "error": "no such dispatch", "calledNext": False}


def test_a_python_too_old_says_how_old(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", bridge.BOOT.replace("(3, 11)", "(99, 0)")],
        input=b"{}", capture_output=True, timeout=30, check=False,
    )
    assert done.returncode == 3
    line = json.loads(done.stdout)
    assert line["fatal"] == "old" and line["version"].startswith("3.")


def test_stale_folders_of_dead_hosts_are_removed(tmp_path: Path) -> None:
    dead = tmp_path / f"{lifetime.FOLDER_PREFIX}999999999-abc"
    dead.mkdir()
    mine = Path(lifetime.make_folder(str(tmp_path)))
    assert not dead.exists()
    assert mine.exists() and stat.S_IMODE(mine.stat().st_mode) == 0o700
    lifetime.prune(str(tmp_path))
    assert mine.exists()  # this process is alive


def test_the_folder_of_a_host_that_ended_unreaped_is_stale(tmp_path: Path) -> None:
    """A host that ended while its parent has not reaped it yet (a zombie) no longer runs: its folder goes."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # it has ended; still not reaped
        assert lifetime.alive(os.getpid())
        assert not lifetime.alive(child.pid)
        zombie = tmp_path / f"{lifetime.FOLDER_PREFIX}{child.pid}-abc"
        zombie.mkdir()
        lifetime.prune(str(tmp_path))
        assert not zombie.exists()
    finally:
        child.wait()
    assert not lifetime.alive(child.pid)


def test_a_boot_event_runs_the_hooks_its_matcher_picks(modules: list[FakeModule], lich: LoggedLich) -> None:
    """The mod's session.start hook asks for ``{isInteractive: true}``: a boot event that is not interactive
    never reaches it, so the state it would set is never told."""
    e = {"cwd": ".", "surface": "terminal", "isInteractive": False}
    module = start(modules, lich, {"events": [{"event": "session.start", "e": e, "result": {"cwd": "."}}]})
    answer = module.dispatch(FOOTER, {"component": "SessionMode", "props": {"modes": []}}, lambda e: e, "ui.render")
    assert answer["kind"] == "done"  # the host has served a later step: the boot events were started before
    assert [m for m in module.lines if "state" in m] == []


def test_the_committed_module_is_the_generated_one() -> None:
    committed = (ROOT / "hooks" / "agent-cards.js").read_text(encoding="utf-8")
    assert committed == bridge.js_module(), "regenerate: python -m agent_cards.bridge --js > hooks/agent-cards.js"


def test_the_module_registers_every_hook_of_the_mod_and_reads_every_variable() -> None:
    js = bridge.js_module()
    for index, registration in enumerate(bridge.registrations()[0]):
        if registration.event != "session.start":
            assert f"on({json.dumps(registration.event)}, " in js
            assert f"dispatch($, {index}, e, next))" in js
    for name in ("LICH_BIN", "LICH_SESSION_ID", "LICH_SUBAGENT_CARDS", "LICH_SUBAGENT_DEPTH", "LICH_PROMPT_LANG"):
        assert f'$.env.get("{name}")' in js
    assert "$.env.get('AGENT_CARDS_PYTHON')" in js
    assert "shell" not in js.lower()


def test_the_plugin_installs_the_module_and_not_the_command_hook() -> None:
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert hooks["modules"] == ["./agent-cards.js"]
    assert "hooks" not in hooks  # the command hook is for a hooks file of one's own (hooks/command-hooks.json)
    classic = json.loads((ROOT / "hooks" / "command-hooks.json").read_text(encoding="utf-8"))
    assert set(classic["hooks"]) == {"SessionStart", "PreToolUse"}


def test_the_session_hosts_process_errors_are_worded_as_the_engines(tmp_path: Path) -> None:
    """A toast quoting a failed run reads the same through the bridge as in the fake host (and the engine)."""
    from agent_cards.engine import ProcessError
    from agent_cards.host_contract import host_check, not_found, timed_out

    missing = str(tmp_path / "no-lich")
    with pytest.raises(ProcessError) as started:
        asyncio.run(run_process([missing, "open"], 1000))
    assert started.value.kind == "start"
    assert str(started.value) == str(not_found([missing, "open"]))
    assert str(started.value).endswith(f'failed to start: ENOENT: Executable not found in $PATH: "{missing}"')
    sleeper = [shutil.which("sleep") or "sleep", "5"]
    with pytest.raises(ProcessError) as slow:
        asyncio.run(run_process(sleeper, 50))
    assert (slow.value.kind, str(slow.value)) == ("timeout", str(timed_out(sleeper, 50)))
    for argv, timeout in (([], 1000), (["sleep"], 0), ("sleep", 1000)):
        with pytest.raises(ProcessError) as bridged:
            asyncio.run(run_process(argv, timeout))
        with pytest.raises(ProcessError) as faked:
            host_check(argv, timeout)
        assert str(bridged.value) == str(faked.value)


def test_a_command_past_its_timeout_is_ended_with_its_whole_process_group(tmp_path: Path) -> None:
    """A hung ``lich open`` is stopped with what it started: a child that ignores SIGTERM is killed too."""
    from agent_cards.bridge.lifetime import alive
    from agent_cards.engine import ProcessError

    pid_file = tmp_path / "child.pid"
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    leader = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {stubborn!r}])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    with pytest.raises(ProcessError) as hung:
        asyncio.run(run_process([sys.executable, "-c", leader], 5000))
    assert hung.value.kind == "timeout"
    child = int(pid_file.read_text())
    until("the leader's child gone", lambda: not alive(child), 10, every=0.02)


# -- the state kept per Claude Code session, across processes ------------------------------------------------

PROMPT = HOOKS["prompt.submit"]


def kept_env(tmp_path: Path, claude_pid: int) -> dict[str, str]:
    """What the engine's hookEnv gives every host of one session: its data folder, its id, the CLI's pid."""
    return {"CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "CLAUDE_CODE_SESSION_ID": "1836434f-7e3f",
            "CLAUDE_PID": str(claude_pid)}


def test_a_continued_session_counts_its_worker_again_and_tells_the_model(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    """``claude --continue``: a new Claude Code process, a fresh module that hands over no state. The host reads
    the session's kept file, counts the worker lich still lists, and the next prompt carries the mod's line."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        first = start(modules, lich, extra=kept_env(tmp_path, sleeper.pid))  # the first process of the session
        take(first, agent_e())
        first.wait_line(lambda m: bool(m.get("state", {}).get("workers")))
        first.close()
    finally:
        sleeper.communicate(b"")
    kept = json.loads((tmp_path / "data" / "session-hosts" / "sessions" / "1836434f-7e3f.json").read_text())
    assert [w["name"] for w in kept["workers"]] == [WORKER] and kept["owner"] == str(sleeper.pid)
    second = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))  # this process continues the session
    second.wait_line(lambda m: m.get("state", {}).get("reported_lost") == [WORKER])
    assert ["sessions", "--json"] in second_calls(lich, 2)  # read at once: the worker is still listed
    footer = second.dispatch(FOOTER, {"component": "SessionMode", "props": {"modes": []}},
                             lambda e: {"drawn": e["props"]["modes"]}, "ui.render")
    assert footer["value"] == {"drawn": [person_text("footer.workers.one")]}
    prompt = second.dispatch(PROMPT, {"text": "go on", "origin": {"kind": "composer"}, "wait": False},
                             lambda e: {"text": e["text"], "context": e.get("context")}, "prompt.submit")
    assert prompt["value"]["context"] == [agent_text("en", "resume.still_running", label="Session 2", name=WORKER)]
    again = second.dispatch(PROMPT, {"text": "and then", "origin": {"kind": "composer"}, "wait": False},
                            lambda e: {"text": e["text"], "context": e.get("context")}, "prompt.submit")
    assert again["value"]["context"] is None  # told once
    stop = second.dispatch(STOP, {"tool": "TaskStop", "tool_use_id": "t2", "task_id": WORKER},
                           lambda e: pytest.fail("a kept worker's TaskStop never reaches Claude Code"))
    assert stop["value"]["result"]["task_id"] == WORKER
    assert lich.calls()[-1] == ["close", WORKER]
    second.wait_line(lambda m: m.get("state", {}).get("workers") == [])


def second_calls(lich: LoggedLich, count: int) -> list[list[str]]:
    """lich's calls once there are ``count`` of them (the host's first read runs on its own)."""
    def enough() -> list[list[str]] | None:
        calls = lich.calls()
        return calls if len(calls) >= count else None

    return until(f"{count} lich calls", enough, 20, shown=lich.calls)


def test_a_reload_keeps_the_count_and_tells_the_model_nothing(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    """A reload (or a host started again) in the same Claude Code: the kept file gives the count back, and
    Claude Code, whose record of the worker lives on, reports nothing failed, so neither does the mod."""
    first = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))
    take(first, agent_e())
    first.wait_line(lambda m: bool(m.get("state", {}).get("workers")))
    first.proc.kill()
    first.proc.wait()
    second = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))  # a fresh module: no state handed over
    restored = second.wait_state(lambda s: bool(s.get("workers")))  # marked lost, if at all, from its first state
    assert restored.get("reported_lost") is None
    prompt = second.dispatch(PROMPT, {"text": "go on", "origin": {"kind": "composer"}, "wait": False},
                             lambda e: {"text": e["text"], "context": e.get("context")}, "prompt.submit")
    assert prompt["value"]["context"] is None


def test_a_kept_worker_lich_no_longer_lists_is_dropped_at_once(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    lich.restart(LichScript(checkout="/x", default_open=OpenScript(report=ReportScript(after_ms=0, text="Done."))))
    first = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))
    take(first, agent_e())
    first.wait_line(lambda m: bool(m.get("state", {}).get("workers")))
    first.proc.kill()
    first.proc.wait()
    began = time.monotonic()
    second = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))
    second.wait_line(lambda m: m.get("state", {}).get("workers") == [])
    assert time.monotonic() - began < 5  # the first read runs at start, not a poll's period later


def test_a_non_interactive_start_is_not_taken_for_the_kept_interactive_flag(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    """``claude -p --continue`` of an interactive session: the kept flag says interactive, this start does not."""
    first = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))
    first.wait_line(lambda m: m.get("state", {}).get("interactive") is True)
    first.close()
    e = {"cwd": ".", "surface": None, "isInteractive": False}
    second = start(modules, lich, {"events": [{"event": "session.start", "e": e, "result": {"cwd": "."}}]},
                   extra=kept_env(tmp_path, os.getpid()))
    answer = second.dispatch(AGENT, agent_e(), lambda e: {"result": "native"})
    assert answer["value"] == {"result": "native"}  # left to Claude Code: not interactive
    assert lich.calls() == []


# -- the host's own faults -----------------------------------------------------------------------------------


def test_a_host_whose_parent_died_before_its_hello_exits(lich: LoggedLich, tmp_path: Path) -> None:
    """The parent starts the host and dies before the host has read its boot object: the host never serves."""
    launcher = (
        "import subprocess, sys, os\n"
        "p = subprocess.Popen([sys.executable, '-I', '-S', '-c', sys.argv[1]], stdin=0, stdout=1, stderr=2)\n"
        "print(p.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_ROOT": str(ROOT), **lich_env(lich)}
    read, write = os.pipe()
    parent = subprocess.Popen([sys.executable, "-c", launcher, bridge.BOOT], stdin=read, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**env, "CLAUDE_PID": "0"})
    os.close(read)
    assert parent.stdout is not None
    host_pid = int(parent.stdout.readline())
    parent.wait()  # gone (and reaped) before the host reads its boot object
    os.write(write, json.dumps({"env": lich_env(lich), "events": START}).encode())
    os.close(write)
    rest = parent.stdout.read()  # the host's stdout: ends when the host exits
    parent.stdout.close()
    assert b"hello" not in rest
    # its stdout closed as it exits: wait for the exit itself to end
    until("the host's exit with its parent gone", lambda: not lifetime.alive(host_pid), 10, every=0.02)
    assert parent.stderr is not None and b"Traceback" not in parent.stderr.read()
    parent.stderr.close()


def test_a_runtime_folder_that_takes_no_folder_gives_way_to_the_temp_folder(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    folder = lifetime.make_folder(str(blocked))
    try:
        assert Path(folder).parent == Path(tempfile.gettempdir())
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    finally:
        shutil.rmtree(folder)


def test_a_malformed_request_gets_an_error_answer(modules: list[FakeModule], lich: LoggedLich) -> None:
    module = start(modules, lich)
    status, answer = module.post_raw(b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and "error" in answer
    status, answer = module.post({"op": "event", "id": "1", "hook": AGENT, "e": agent_e(), "cancel": 5})
    assert status == 400 and "malformed" in answer["error"]
    status, answer = module.post({"op": "poll", "id": ["x"]})
    assert status == 200 and answer["kind"] == "failed"
    footer = module.dispatch(FOOTER, {"component": "SessionMode", "props": {"modes": []}}, lambda e: e, "ui.render")
    assert footer["kind"] == "done"  # still serving
    module.close()
    assert module.proc.stderr is None or b"Traceback" not in (module.stderr or b"")


# -- a host that dies while lich open runs -------------------------------------------------------------------


def runs_of(tmp_path: Path) -> Path:
    """Where the session of ``kept_env`` keeps its opens' output."""
    return tmp_path / "data" / "session-hosts" / "runs" / "1836434f-7e3f"


def wait_for(what: Any, timeout: float = 20.0) -> Any:
    """``what()`` once it is true (a file the programs wrote, a log line), polled."""
    return until("what the programs write", what, timeout, every=0.02)


def test_an_open_whose_host_was_killed_is_counted_by_the_next_host_and_task_stop_closes_it(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    """SIGKILL while ``lich open`` runs: the open goes on in its own process group, printing into the files the
    session keeps, and the pending open is in the kept state. The next host finds it there, waits for the open
    to end, counts the worker it made (never running the open again), and TaskStop closes it."""
    lich.restart(LichScript(checkout="/x", default_open=OpenScript(ms=3000)))
    env = {**kept_env(tmp_path, os.getpid()), "FAKE_LICH_REAL_SLEEP": "1"}
    first = start(modules, lich, extra=env)
    e = agent_e()
    _, passed = first.post({"op": "event", "id": "c1", "hook": AGENT, "e": e,
                            "origin": {"plugin": "engine", "tier": "core"}, "event": "tool.call"})
    assert passed["kind"] == "next"
    _, opening = first.post({"op": "event", "id": "s1", "hook": SPAWN, "e": spawn_e(e),
                             "origin": {"plugin": "engine", "tier": "core"}, "event": "agent.spawn"})
    assert opening["kind"] == "pending" and opening["busy"] == ["lich"]
    kept = first.wait_state(lambda s: bool(s.get("opens")))  # kept before the open started
    assert [p["key"] for p in kept["opens"]] == ["toolu_1"]
    record = wait_for(lambda: (runs_of(tmp_path) / "toolu_1.run").exists() and runs_of(tmp_path) / "toolu_1.run")
    pid = json.loads(record.read_text())["pid"]
    assert os.getpgid(pid) == pid  # a process group of its own
    assert stat.S_IMODE((runs_of(tmp_path) / "toolu_1.out").stat().st_mode) == 0o600
    first.proc.kill()  # mid-open
    first.proc.wait()
    assert lifetime.alive(pid)  # the open outlived its host
    second = start(modules, lich, extra=env)  # the module's timer (or the next event) starts another
    state = second.wait_line(lambda m: bool(m.get("state", {}).get("workers")))["state"]
    assert [w["name"] for w in state["workers"]] == [WORKER] and "opens" not in state
    assert [c[0] for c in lich.calls()].count("open") == 1  # never run again
    assert not list(runs_of(tmp_path).iterdir())  # its files go once the worker is kept
    footer = second.dispatch(FOOTER, {"component": "SessionMode", "props": {"modes": []}},
                             lambda e: {"drawn": e["props"]["modes"]}, "ui.render")
    assert footer["value"] == {"drawn": [person_text("footer.workers.one")]}
    stop = second.dispatch(STOP, {"tool": "TaskStop", "tool_use_id": "t2", "task_id": WORKER},
                           lambda e: pytest.fail("the worker's TaskStop never reaches Claude Code"))
    assert stop["value"]["result"]["task_id"] == WORKER
    assert lich.calls()[-1] == ["close", WORKER]
    second.wait_line(lambda m: m.get("state", {}).get("workers") == [])


def test_an_open_whose_host_died_before_it_began_is_dropped_silently(
    modules: list[FakeModule], lich: LoggedLich, tmp_path: Path
) -> None:
    """A pending open with no output kept (its host died before the command started) leaves the state, with
    no toast and no worker: the model was already told lich may have the task."""
    pending = {"key": "toolu_9", "description": "Fix auth", "prompt": "Fix it.", "branch": "", "call_ms": 1,
               "opened_ms": 1, "timeout_ms": 120_000, "lang": None, "lich_bin": str(lich.bin)}
    data = tmp_path / "data" / "session-hosts" / "sessions"
    data.mkdir(parents=True)
    (data / "1836434f-7e3f.json").write_text(json.dumps({"interactive": True, "workers": [], "opens": [pending],
                                                         "owner": str(os.getpid())}))
    host = start(modules, lich, extra=kept_env(tmp_path, os.getpid()))
    dropped = host.wait_state(lambda s: "opens" not in s)
    assert dropped["workers"] == [] and not any("toast" in m for m in host.lines)
    assert lich.calls() == []


def test_a_kept_run_past_its_time_is_ended_with_its_group(tmp_path: Path) -> None:
    """A kept run a host that died left running is waited for only until its time is up from its start; then
    its process group is ended and it reads as timed out (the open's two minutes, here shortened)."""
    from agent_cards.bridge.host import KeptRuns
    from agent_cards.engine import ProcessError

    runs = KeptRuns(str(tmp_path / "runs"))
    sleeper = [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(600)"]

    async def orphaned() -> None:
        running = asyncio.ensure_future(runs.run(sleeper, "toolu_5", 600_000))
        wait_out = tmp_path / "runs" / "toolu_5.out"
        while not (wait_out.exists() and wait_out.read_text() == "started\n"):
            await asyncio.sleep(0.02)
        running.cancel()  # the host forgets it (as a host that died would): the command runs on

    asyncio.run(orphaned())
    pid = json.loads((tmp_path / "runs" / "toolu_5.run").read_text())["pid"]
    assert lifetime.alive(pid)
    with pytest.raises(ProcessError) as late:
        asyncio.run(runs.collect("toolu_5", started_ms=time.time_ns() // 1_000_000 - 1000, timeout_ms=500))
    assert late.value.kind == "timeout"
    wait_for(lambda: not lifetime.alive(pid))
    with pytest.raises(ProcessError) as gone:
        asyncio.run(runs.collect("toolu_6", started_ms=0, timeout_ms=500))
    assert gone.value.kind == "start"
