"""``replay --processes``: the same scenarios, with every lich and git call run as a real process.

:class:`ProcessExecutor` is the :class:`~..host.process_run.Executor` of this mode. The mod's argv is
recorded as given; only at execution is ``$LICH_BIN`` swapped for the ``fake-lich`` program, whose state
lives in a directory of the scenario's own (:mod:`agent_cards_simulator.lich.program`), and ``git`` runs for real
in a scratch repository built from the scenario's ``session.git`` when the replay first runs git (a
scenario that never does costs no repository; one whose branch git refuses fails, with git's reason,
only when it runs git). Time stays virtual:

- fake-lich is told the virtual time (``FAKE_LICH_NOW_MS``) and, once it has saved the world, reports
  how long its call takes on that clock and whether it hangs (``FAKE_LICH_REPORT_FD``). Calls made
  together start side by side (their interpreters start up at once), but each waits for its turn
  (``FAKE_LICH_TURN_FD``, given when the call before it has reported) before it touches the world, so
  the world changes in the order the calls were made, as in the in-process mode. The virtual clock
  stands still until the report is in; then the call waits that long on the virtual clock exactly as
  :class:`~agent_cards_simulator.runners.virtual.VirtualExecutor` does.
- the rest of the process (a real sleep, its output, its exit) is collected through
  :meth:`VirtualEventLoop.run_real`, in a thread: the virtual clock stands still until it is in,
  and the real sleeps of calls made together overlap.
- a hung lich keeps running for real while the virtual wait goes on; at the virtual timeout, on Esc,
  or when the scenario ends, its whole process group is killed.

Every scratch directory lives in one temporary directory removed at the end, and every process
started is stopped. docs/scenarios.md lists what differs from the in-process mode and how
:func:`comparable` evens it out.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import select
import shutil
import signal as signals
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import agent_cards
from agent_cards.bridge.lifetime import alive
from agent_cards.engine import ProcessResult
from agent_cards.host_contract import capped, exit_code, failed_to_start, interrupted, not_found, timed_out
from agent_cards.record import Value
from agent_cards_simulator.clock import VirtualEventLoop
from agent_cards_simulator.host.chain import AbortSignal
from agent_cards_simulator.host.process_run import wait_unless_aborted
from agent_cards_simulator.lich import program as lich_program
from agent_cards_simulator.lich.install import SetupError, fake_lich_program
from agent_cards_simulator.lich.output import CALL_MS, Note
from agent_cards_simulator.lich.program import (
    ARGV0_ENV,
    NOW_ENV,
    REAL_SLEEP_ENV,
    REPORT_ENV,
    STATE_ENV,
    TURN_ENV,
    create_state,
    transact,
)
from agent_cards_simulator.lich.world import LichWorld
from agent_cards_simulator.runners.scripted_git import GIT_MS, GitScript
from agent_cards_simulator.scenario.reader import Scenario
from agent_cards_simulator.scenario.replay import Replay, replay

__all__ = ["ProcessExecutor", "ProcessRuns", "SetupError", "alive", "comparable", "replay_processes"]

#: Real seconds a process may take for work that stands for no real time; then it is killed.
REAL_LIMIT_S = 60.0
#: Environment names a scenario's session decides: never inherited from the caller's environment.
_OWN_PREFIXES = ("LICH_", "FAKE_LICH_", "GIT_")


class HungRun(Value):
    """A lich call that hung: its process and the child it forked, both killed when the call gave up."""

    pid: int
    child: int | None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class ProcessExecutor:
    """Runs one scenario's lich and git calls as real processes, on virtual time (see the module's doc).

    A call does what the in-process mode's call does, in the same order: it starts its process and,
    for lich, reads the report (the world is changed by then), all before it yields; then it waits on
    the virtual clock. So calls change the world, and set their timers, exactly when and in the order
    the in-process mode does, and transcripts come out alike. What the process does after its report
    (a real sleep, printing, exiting) is collected in a thread, and the virtual clock stands still
    until it is in.
    """

    def __init__(
        self,
        loop: VirtualEventLoop,
        scratch: Path,
        scenario: Scenario,
        world: LichWorld,
        *,
        program: str,
        git_dir: str,
        real_sleep: bool = False,
    ) -> None:
        self.loop = loop
        self.program = program
        self.real_sleep = real_sleep
        self.git = scenario.session.git
        self.lich_installed = scenario.lich.installed
        self.hung: list[HungRun] = []
        scratch.mkdir(parents=True)
        self.scratch = scratch
        self.state = create_state(scratch / "lich", world.script)
        self.absent = str(scratch / "absent" / "program")  # never created: what no program runs as
        self.git_env = _git_env(scratch, self.git, git_dir)
        self._git_cwd: Path | None = None  # made on the first git call (_git_workspace)
        #: Why the scratch repository could not be made (git refused the scenario's branch), once a git
        #: call needed it: the replay fails with it (replay_processes).
        self.git_failure: str | None = None
        self.command = fake_lich_command(program)
        self._last_turn: threading.Event | None = None  # set once the last lich call started has reported
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen[bytes]] = set()
        self._closed = False

    # -- the Executor protocol -----------------------------------------------------------------------

    async def execute(
        self, argv: list[str], env: Mapping[str, str], timeout_ms: int, signal: AbortSignal
    ) -> ProcessResult:
        if argv[0] == "git":
            cwd = self._git_workspace()
            if cwd is None:
                raise failed_to_start(argv, str(self.git_failure))
            proc = self._spawn([*argv], {**env, **self.git_env}, cwd)
            if proc is None:
                raise not_found(argv)
            ms, hang, limit = GIT_MS, False, REAL_LIMIT_S
        elif argv[0] == env.get("LICH_BIN") and self.lich_installed:
            proc, ms, hang = await self._start_lich(argv, env)
            limit = REAL_LIMIT_S + (ms / 1000 if self.real_sleep else 0)
        else:
            self._spawn([self.absent, *argv[1:]], dict(env), self.scratch)
            raise not_found(argv)
        if hang:
            try:
                await wait_unless_aborted(timeout_ms, signal)
            finally:
                self._kill(proc)  # a real timeout (or Esc) kills the real process and its children
            raise interrupted(argv) if signal.aborted else timed_out(argv, timeout_ms)
        collecting = asyncio.ensure_future(self.loop.run_real(lambda: self._finish(proc, limit)))
        try:
            await wait_unless_aborted(min(ms, timeout_ms), signal)
            if signal.aborted:
                raise interrupted(argv)
            if ms > timeout_ms:
                raise timed_out(argv, timeout_ms)
        except BaseException:
            collecting.cancel()  # its output is not wanted; the process ends by itself (or at close)
            raise
        exit_code, stdout, stderr = await collecting  # already in: the clock stood still until it was
        return capped(stdout, stderr, exit_code)

    def _git_workspace(self) -> Path | None:
        """The directory git runs in, made on the first call; None when git refused to make it."""
        if self._git_cwd is None and self.git_failure is None:
            try:
                self._git_cwd = _git_workspace(self.scratch, self.git, self.git_env)
            except SetupError as error:
                self.git_failure = str(error)
        return self._git_cwd

    # -- the notes the host types at the prompt: read from the lich's state ----------------------------

    def next_note_at(self) -> int | None:
        return transact(self.state, lambda state: state.world.next_note_at())

    def notes_due(self, until_ms: int) -> list[Note]:
        return transact(self.state, lambda state: state.world.notes_due(until_ms))

    # -- lich --------------------------------------------------------------------------------------------

    async def _start_lich(
        self, argv: list[str], env: Mapping[str, str]
    ) -> tuple[subprocess.Popen[bytes], int, bool]:
        """Start fake-lich for ``argv`` and read its report: the process, its virtual ms, whether it hangs.

        The process starts at once; it touches the world only when the lich call made before it has
        reported (its turn), and the virtual clock stands still until its own report is in.
        """
        child_env = {k: v for k, v in os.environ.items() if not k.startswith(_OWN_PREFIXES)}
        child_env |= {**env, STATE_ENV: self.state, NOW_ENV: str(self.loop.now_ms()), ARGV0_ENV: argv[0]}
        if self.real_sleep:
            child_env[REAL_SLEEP_ENV] = "1"
        read_end, write_end = os.pipe()
        turn_read, turn_write = os.pipe()
        try:
            proc = self._spawn(
                [*self.command, *argv[1:]],
                {**child_env, REPORT_ENV: str(write_end), TURN_ENV: str(turn_read)},
                self.scratch,
                pass_fds=(write_end, turn_read),
            )
        finally:
            os.close(write_end)
            os.close(turn_read)
        before, mine = self._last_turn, threading.Event()
        self._last_turn = mine

        def report() -> bytes:
            """(A thread.) Wait for the call before this one to report, give this one its turn, read its report."""
            try:
                if before is not None:
                    before.wait(REAL_LIMIT_S)
                os.close(turn_write)
                return _read_to_end(read_end, time.monotonic() + REAL_LIMIT_S) if proc is not None else b""
            finally:
                os.close(read_end)
                mine.set()

        # shielded: a call cut short still gives the turn on, and its pipes are closed by the thread alone
        raw = await asyncio.shield(self.loop.run_real(report))
        if proc is None:
            raise not_found(argv)  # the fake-lich program went away (or the replay is over)
        try:
            report_json = json.loads(raw) if raw else None
        except ValueError:
            report_json = None
        if not isinstance(report_json, dict):
            report_json = {}
            self._kill(proc)  # it said nothing in time: whatever it would still do, it does not
        ms = report_json.get("ms")
        ms = ms if isinstance(ms, int) else CALL_MS
        if report_json.get("hang") is True:
            child = report_json.get("child")
            self.hung.append(HungRun(proc.pid, child if isinstance(child, int) else None))
            return proc, ms, True
        return proc, ms, False

    # -- processes ---------------------------------------------------------------------------------------

    def _spawn(
        self, command: list[str], env: Mapping[str, str], cwd: Path, pass_fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes] | None:
        """Start a program in a process group of its own; None when there is no such program."""
        with self._lock:
            if self._closed:
                return None  # the replay is over: nothing starts any more
            try:
                proc = subprocess.Popen(
                    command, env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
                )
            except FileNotFoundError:
                return None
            self._live.add(proc)
        return proc

    def _finish(self, proc: subprocess.Popen[bytes], limit_s: float) -> tuple[int, str, str]:
        """(A thread.) A process's exit code and output; one that overruns ``limit_s`` is killed."""
        try:
            stdout, stderr = proc.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            stdout, stderr = b"", b""
        with self._lock:
            self._live.discard(proc)
        return exit_code(proc.returncode), _decode(stdout), _decode(stderr)

    def _kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill a process and everything in its process group, and reap it."""
        with self._lock:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signals.SIGKILL)
        try:
            proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            proc.kill()
            proc.wait()
        with self._lock:
            self._live.discard(proc)

    def close(self) -> None:
        """Stop whatever still runs (a hung lich the scenario left behind); nothing starts afterwards."""
        with self._lock:
            self._closed = True
            live = list(self._live)
        for proc in live:
            self._kill(proc)


#: How a replay starts fake-lich: its interpreter, isolated (``-I``: no user site, no ``PYTHON*``
#: variables) and without ``site`` (``-S``). Started so, a call costs its interpreter's bare start-up
#: and what fake-lich imports, not a venv's site. Without ``site`` an editable install's import hook is
#: not there either, so the boot names the two folders itself: the mod's parent first on ``sys.path``,
#: and the bench's package (whose ``__init__`` is empty) given its folder as its path.
_BOOT = (
    "import sys; mods, bench = sys.argv.pop(1), sys.argv.pop(1); sys.path.insert(0, mods); "
    "package = type(sys)('agent_cards_simulator'); package.__path__ = [bench]; "
    "sys.modules['agent_cards_simulator'] = package; "
    "from agent_cards_simulator.lich.program import main; sys.exit(main())"
)


def fake_lich_command(program: str) -> list[str]:
    """The argv that runs the ``fake-lich`` console script ``program`` (its arguments follow)."""
    first = Path(program).read_bytes()[:512].split(b"\n", 1)[0]
    interpreter = first[2:].decode().strip() if first.startswith(b"#!") else ""
    if not interpreter or " " in interpreter or not os.path.isfile(interpreter):
        return [program]  # not a plain Python script: run it as it is
    mods = str(Path(agent_cards.__file__).resolve().parents[1])
    bench = str(Path(lich_program.__file__).resolve().parents[1])
    return [interpreter, "-I", "-S", "-c", _BOOT, mods, bench]


def _read_to_end(fd: int, deadline: float) -> bytes:
    """Read a pipe until its writer closes it, or until ``deadline`` (monotonic seconds)."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _git_env(scratch: Path, script: GitScript, git_dir: str) -> dict[str, str]:
    """The environment git runs in for this scenario (git missing: a PATH without git)."""
    home = scratch / "home"
    no_git = scratch / "no-git"
    home.mkdir()
    no_git.mkdir()
    return {
        "PATH": str(no_git) if script.missing else git_dir,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": str(scratch),
        "LC_ALL": "C",
    }


def _git_workspace(scratch: Path, script: GitScript, env: Mapping[str, str]) -> Path:
    """The directory git runs in for this scenario (:class:`SetupError` when git refuses to make it).

    A branch: a repository on that branch with one commit. A detached HEAD: the same, detached. A
    failing git: a directory outside any repository. Git missing: the scratch directory.
    """
    if script.missing:
        return scratch
    if script.exit != 0:
        outside = scratch / "not-a-repository"
        outside.mkdir()
        return outside
    repo = scratch / "repo"
    repo.mkdir()
    commit = ["git", "-c", "user.name=agent-cards", "-c", "user.email=replay@agent-cards.invalid", "commit", "-q",
              "--allow-empty", "-m", "scenario"]
    steps = [["git", "init", "-q", "-b", script.branch or "main"], commit]
    if not script.branch:
        steps.append(["git", "checkout", "-q", "--detach"])
    for step in steps:
        done = subprocess.run(step, cwd=repo, env=dict(env), capture_output=True, check=False)
        if done.returncode != 0:
            why = (_decode(done.stderr).strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise SetupError(f"git cannot make a repository on branch {script.branch!r}: {why}")
    return repo


class ProcessRuns:
    """The :data:`~..scenario.replay.ExecutorFactory` of ``replay --processes``, and what it leaves behind.

    Use it as a context manager: every scenario replayed through it gets a scratch directory in one
    temporary directory, and on leaving, every process still running is killed and the directory removed.
    ``real_sleep`` makes fake-lich's opens really sleep their scripted ms.
    """

    def __init__(self, *, real_sleep: bool = False) -> None:
        self.real_sleep = real_sleep
        self.program = fake_lich_program()
        git = shutil.which("git")
        if git is None:
            raise SetupError("git is not on PATH: replay --processes runs the real git")
        self.git_dir = str(Path(git).parent)
        self.executors: list[ProcessExecutor] = []
        self._scratch: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> ProcessRuns:
        self._scratch = tempfile.TemporaryDirectory(prefix="agent-cards-processes-")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for executor in self.executors:
            executor.close()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def __call__(self, scenario: Scenario, world: LichWorld, loop: VirtualEventLoop) -> ProcessExecutor:
        if self._scratch is None:
            raise RuntimeError("ProcessRuns makes executors only inside its with block")
        scratch = Path(self._scratch.name) / f"scenario-{len(self.executors) + 1}"
        executor = ProcessExecutor(
            loop, scratch, scenario, world, program=self.program, git_dir=self.git_dir, real_sleep=self.real_sleep
        )
        self.executors.append(executor)
        return executor


def replay_processes(scenario: Scenario, *, real_sleep: bool = False) -> Replay:
    """Replay ``scenario`` with real processes; a mode that cannot run here is a failure of the result."""
    try:
        with ProcessRuns(real_sleep=real_sleep) as runs:
            result = replay(scenario, executor=runs)
    except SetupError as error:
        return Replay(scenario.file, scenario.title, scenario.clauses, [], [f"replay --processes: {error}"])
    # a scenario whose branch git refuses fails once it runs git (each variant has an executor of its own)
    failures = {executor.git_failure for executor in runs.executors if executor.git_failure is not None}
    result.failures += [f"replay --processes: {failure}" for failure in sorted(failures)]
    return result


def comparable(result: Replay) -> dict[str, Any]:
    """The replay's JSON with what real git answers differently put in one form (docs/scenarios.md).

    A git run that failed: its exit is ``"non-zero"`` and its stderr ``"<git's error>"`` (real git
    exits 128 with its own words; a scenario may script any code and text).
    """
    data = copy.deepcopy(result.to_json())
    for event in data["events"]:
        argv = event.get("argv")
        if event.get("kind") != "run" or not isinstance(argv, list) or argv[:1] != ["git"]:
            continue
        if isinstance(event.get("exit"), int) and event["exit"] != 0:
            event["exit"], event["stderr"] = "non-zero", "<git's error>"
    return data
