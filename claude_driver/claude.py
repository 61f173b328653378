"""Install and drive the real Claude Code CLI offline, against a fake Messages API.

Every run gets a cleared environment (only the variables built by ``guard_env``), a
scratch HOME, and the guard variables that keep the CLI off the network (no auto
update, no telemetry, proxies pointed at a dead local port). Nothing is installed
globally: the CLI lives in a cache directory and is called by its path.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol

__all__ = [
    "AUTH_TOKEN",
    "CLAUDE_VERSION",
    "PACKAGE",
    "CliRun",
    "HasBaseUrl",
    "PrintRun",
    "Sandbox",
    "Tui",
    "claude_binary",
    "default_cache_dir",
    "ensure_claude",
    "guard_env",
    "is_installed",
    "remove_leftovers",
    "run_claude",
    "run_print",
    "run_validate",
    "seed_home",
]

CLAUDE_VERSION = "2.1.328"
PACKAGE = "@anthropic-ai/claude-code"
AUTH_TOKEN = "fake-e2e-token"
DEAD_PROXY = "http://127.0.0.1:9"
_MIN_BINARY_BYTES = 10_000_000  # the unpatched placeholder is tiny; the real binary is ~370 MB


class HasBaseUrl(Protocol):
    @property
    def base_url(self) -> str: ...


# -- install ------------------------------------------------------------------


def default_cache_dir() -> Path:
    env = os.environ.get("AGENT_CARDS_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "agent-cards" / f"claude-code-{CLAUDE_VERSION}"


def claude_binary(cache_dir: Path) -> Path:
    return cache_dir / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"


def is_installed(cache_dir: Path) -> bool:
    exe = claude_binary(cache_dir)
    manifest = exe.parent.parent / "package.json"
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        return version == CLAUDE_VERSION and exe.stat().st_size > _MIN_BINARY_BYTES
    except (OSError, ValueError):
        return False


def ensure_claude(cache_dir: Path | None = None, *, timeout: float = 1200.0) -> Path:
    """Install the pinned CLI into ``cache_dir`` once; return the binary's path."""
    cache = (cache_dir or default_cache_dir()).expanduser()
    if is_installed(cache):
        return claude_binary(cache)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH; cannot install Claude Code")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (parallel test workers)
        if not is_installed(cache):
            env = {k: v for k, v in os.environ.items() if not k.startswith("npm_config_prefix")}
            proc = subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", f"{PACKAGE}@{CLAUDE_VERSION}"],
                cwd=cache,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            if proc.returncode != 0 or not is_installed(cache):
                raise RuntimeError(
                    f"npm install of {PACKAGE}@{CLAUDE_VERSION} failed "
                    f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
                )
    return claude_binary(cache)


# -- environment and HOME -----------------------------------------------------


def guard_env(
    home: Path,
    base_url: str,
    extra: Mapping[str, str] | None = None,
    *,
    tmpdir: Path | None = None,
) -> dict[str, str]:
    """The complete, cleared environment for one CLI run."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HTTPS_PROXY": DEAD_PROXY,
        "HTTP_PROXY": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_AUTH_TOKEN": AUTH_TOKEN,
    }
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
        env["CLAUDE_CODE_TMPDIR"] = str(tmpdir)
    env.update(extra or {})
    return env


def seed_home(home: Path, project_dir: Path) -> Path:
    """Write ``~/.claude.json`` so the TUI skips onboarding, folder trust and key approval."""
    home.mkdir(parents=True, exist_ok=True)
    project_entry = {
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
        "allowedTools": [],
    }
    projects = {str(p): dict(project_entry) for p in {project_dir.absolute(), project_dir.resolve()}}
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": CLAUDE_VERSION,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [AUTH_TOKEN[-20:]], "rejected": []},
        "projects": projects,
    }
    path = home / ".claude.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


@dataclass
class Sandbox:
    """A scratch HOME, a project directory (a git repo with one commit) and a short tmp dir."""

    root: Path
    home: Path
    project: Path
    tmp: Path
    pids: set[int] = field(default_factory=set)

    @classmethod
    def create(cls, root: Path, *, git: bool = True) -> Sandbox:
        root = root.resolve()
        home, project = root / "home", root / "project"
        project.mkdir(parents=True, exist_ok=True)
        # Kept short: the CLI puts its messaging socket under this directory.
        tmp = Path(tempfile.mkdtemp(prefix="ac-e2e-")).resolve()
        seed_home(home, project)
        box = cls(root=root, home=home, project=project, tmp=tmp)
        if git:
            box._init_git()
        return box

    def _init_git(self) -> None:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "e2e",
            "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
            "GIT_COMMITTER_NAME": "e2e",
            "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
        }
        (self.project / "README.md").write_text("# e2e project\n", encoding="utf-8")
        for argv in (
            ["git", "init", "-q", "-b", "main"],
            ["git", "add", "-A"],
            ["git", "commit", "-q", "-m", "initial"],
        ):
            subprocess.run(argv, cwd=self.project, env=env, check=True, capture_output=True)

    def env(self, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return guard_env(self.home, base_url, extra, tmpdir=self.tmp)

    def cleanup(self) -> None:
        remove_leftovers(self.project, self.pids, [self.tmp])
        shutil.rmtree(self.tmp, ignore_errors=True)


def _slugs(project: Path) -> set[str]:
    names = {str(project.absolute()), str(project.resolve())}
    return {n.replace(os.sep, "-") for n in names} | {re.sub(r"[^A-Za-z0-9]", "-", n) for n in names}


def remove_leftovers(project: Path, pids: Iterable[int], tmp_roots: Iterable[Path] = ()) -> None:
    """Remove the CLI's files outside HOME for this project and these CLI pids."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    roots = {Path(tempfile.gettempdir()), Path("/tmp"), *tmp_roots}
    pid_list = list(pids)
    for root in roots:
        for slug in _slugs(project):
            shutil.rmtree(root / f"claude-{uid}" / slug, ignore_errors=True)
        for pid in pid_list:
            for sockdir in (root / "cc-socks", root / f"cc-socks-{uid}"):
                (sockdir / f"{pid}.sock").unlink(missing_ok=True)


# -- one-shot runs ------------------------------------------------------------


@dataclass(frozen=True)
class CliRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    timed_out: bool = False


PrintRun = CliRun


def run_claude(
    claude: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = 120.0,
    pids: set[int] | None = None,
) -> CliRun:
    """Run the CLI once with stdin on /dev/null; kill its process group on timeout."""
    argv = [str(claude), *args]
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    if pids is not None:
        pids.add(proc.pid)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            _kill_group(proc.pid)
            proc.wait()
    return CliRun(argv, proc.returncode, out, err, time.monotonic() - start, timed_out)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_validate(claude: Path, plugin_dir: Path, home: Path, *, timeout: float = 60.0) -> CliRun:
    """``claude plugin validate DIR`` (no model needed: the base URL is a dead port)."""
    home.mkdir(parents=True, exist_ok=True)
    env = guard_env(home, DEAD_PROXY)
    return run_claude(claude, ["plugin", "validate", str(plugin_dir)], env=env, cwd=plugin_dir, timeout=timeout)


def _plugin_args(plugin_dirs: Iterable[Path]) -> list[str]:
    return [a for d in plugin_dirs for a in ("--plugin-dir", str(d))]


def run_print(
    claude: Path,
    sandbox: Sandbox,
    plugin_dirs: Sequence[Path],
    prompt: str,
    model: HasBaseUrl,
    *,
    env_extra: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 120.0,
) -> CliRun:
    """``claude -p PROMPT --plugin-dir ...`` in the sandbox's project directory."""
    args = ["-p", prompt, *_plugin_args(plugin_dirs), *extra_args]
    run = run_claude(
        claude,
        args,
        env=sandbox.env(model.base_url, env_extra),
        cwd=sandbox.project,
        timeout=timeout,
        pids=sandbox.pids,
    )
    remove_leftovers(sandbox.project, sandbox.pids, [sandbox.tmp])
    return run


# -- the interactive TUI under tmux ---------------------------------------------


class Tui:
    """The interactive CLI in a detached tmux session on a private server.

    ``with Tui(claude, sandbox, [plugin], model) as tui:`` starts it and waits for the
    input box; leaving the block kills the private tmux server and removes leftovers.
    """

    def __init__(
        self,
        claude: Path,
        sandbox: Sandbox,
        plugin_dirs: Sequence[Path],
        model: HasBaseUrl,
        *,
        env_extra: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
        width: int = 200,
        height: int = 50,
        ready_timeout: float = 30.0,
    ) -> None:
        self.claude = claude
        self.sandbox = sandbox
        self.argv = [str(claude), *_plugin_args(plugin_dirs), *extra_args]
        self.env = sandbox.env(model.base_url, env_extra)
        self.width, self.height = width, height
        self.ready_timeout = ready_timeout
        tag = uuid.uuid4().hex[:10]
        self.server = f"ac-e2e-{tag}"
        self.session = "e2e"
        self._dir = sandbox.tmp / f"tui-{tag}"
        self._pidfile = self._dir / "cli.pid"
        self.started_at = 0.0
        self.pid: int | None = None

    # tmux plumbing
    def _tmux_env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.sandbox.home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TMUX_TMPDIR": str(self.sandbox.tmp),
            "SHELL": "/bin/sh",
        }

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.server, *args],
            env=self._tmux_env(),
            capture_output=True,
            text=True,
            check=check,
            timeout=15,
            stdin=subprocess.DEVNULL,
        )

    def _write_launchers(self) -> Path:
        self._dir.mkdir(parents=True, exist_ok=True)
        inner = self._dir / "inner.sh"
        env_words = " ".join(shlex.quote(f"{k}={v}") for k, v in self.env.items())
        inner.write_text(
            f"echo $$ > {shlex.quote(str(self._pidfile))}\n"
            f"cd {shlex.quote(str(self.sandbox.project))} || exit 97\n"
            f"exec env -i {env_words} {shlex.join(self.argv)}\n",
            encoding="utf-8",
        )
        outer = self._dir / "outer.sh"
        outer.write_text(f"sh {shlex.quote(str(inner))}\necho EXITED-$?\nsleep 30\n", encoding="utf-8")
        return outer

    # lifecycle
    def start(self) -> Tui:
        outer = self._write_launchers()
        self.started_at = time.monotonic()
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            f"sh {shlex.quote(str(outer))}",
        )
        self.wait_for(r"(?m)^\s*❯", self.ready_timeout)
        self.pid = self._read_pid()
        return self

    def _read_pid(self) -> int | None:
        try:
            pid = int(self._pidfile.read_text().strip())
        except (OSError, ValueError):
            return None
        self.sandbox.pids.add(pid)
        return pid

    def close(self) -> None:
        pid = self.pid or self._read_pid()
        self._tmux("kill-server", check=False)
        if pid is not None and self._still_ours(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        uid = os.getuid() if hasattr(os, "getuid") else 0
        (self.sandbox.tmp / f"tmux-{uid}" / self.server).unlink(missing_ok=True)
        remove_leftovers(self.sandbox.project, self.sandbox.pids, [self.sandbox.tmp])
        shutil.rmtree(self._dir, ignore_errors=True)

    def _still_ours(self, pid: int) -> bool:
        """True only while ``pid`` is still this CLI (guards against pid reuse)."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return str(self.claude).encode() in cmdline

    def __enter__(self) -> Tui:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # driving
    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.session).stdout

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> str:
        """Poll the screen until ``pattern`` matches; return the screen or raise TimeoutError."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if regex.search(text):
                return text
            if time.monotonic() >= deadline:
                raise TimeoutError(f"pattern {regex.pattern!r} not on screen:\n{text}")
            time.sleep(0.3)

    def type(self, text: str, *, enter: bool = True, pause: float = 0.5) -> None:
        self._tmux("send-keys", "-t", self.session, "-l", text)
        if enter:
            time.sleep(pause)
            self.key("Enter")

    def key(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.session, *keys)

    def wait_idle(self, timeout: float = 30.0, settle: float = 0.6) -> str:
        """Wait until the footer no longer shows a running turn, for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        quiet_since: float | None = None
        while True:
            text = self.screen()
            now = time.monotonic()
            if "esc to interrupt" in text:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= settle:
                return text
            if now >= deadline:
                raise TimeoutError(f"turn still running:\n{text}")
            time.sleep(0.2)

    def exit(self, timeout: float = 20.0) -> int:
        """Type ``/exit`` and return the CLI's exit status."""
        self.type("/exit")
        match = re.search(r"EXITED-(\d+)", self.wait_for(r"EXITED-\d+", timeout))
        assert match is not None
        return int(match.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m claude_driver.claude validate DIR``: install the pinned CLI (cached) and validate a plugin.

    HOME is a scratch folder and the guard variables are set, as for every run of the real CLI here.
    """
    import sys
    import tempfile

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "validate":
        print("usage: python -m claude_driver.claude validate PLUGIN_DIR", file=sys.stderr)
        return 2
    try:
        claude = ensure_claude()
    except Exception as error:  # no npm, no registry: say so in one line
        print(f"claude_cli: cannot install Claude Code {CLAUDE_VERSION}: {error}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="agent-cards-validate-") as scratch:
        run = run_validate(claude, Path(args[1]).resolve(), Path(scratch) / "home")
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
