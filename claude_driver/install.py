"""The Claude Code CLI that runs: the pinned build unless asked for another, installed once from npm into a
cache, and the guarded environment of every run.

Which build runs is one choice, :data:`CHOICE_ENV` (``AGENT_CARDS_CLAUDE``, or a command's ``--claude``,
which sets it for that command: :func:`choose`): unset or empty is the pinned
:data:`CLAUDE_VERSION`; a version (``2.1.332``) or a dist-tag (``latest``, resolved once through the
registry) is installed into its own cache folder; a path to a ``claude`` binary is used as it is, never
installed over.

Every run gets a cleared environment (only the variables :func:`guard_env` builds): no auto-update, no
telemetry, proxies pointed at a dead local port, so the CLI stays offline and never changes the machine.
Nothing is installed globally: the CLI lives in a cache directory and is called by its path.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Protocol

CLAUDE_VERSION = "2.1.328"  # the pinned build: what the fake host models and the suite runs by default
CHOICE_ENV = "AGENT_CARDS_CLAUDE"
PACKAGE = "@anthropic-ai/claude-code"
AUTH_TOKEN = "fake-e2e-token"
DEAD_PROXY = "http://127.0.0.1:9"
_MIN_BINARY_BYTES = 10_000_000  # the unpatched placeholder is tiny; the real binary is ~370 MB


class HasBaseUrl(Protocol):
    @property
    def base_url(self) -> str: ...


# -- which build ------------------------------------------------------------------

_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?")
_TAG = re.compile(r"[a-z][a-z0-9-]*")


def choice(env: Mapping[str, str] | None = None) -> str:
    """What the person asked for: a version, a dist-tag or a path; the pinned version when nothing."""
    return (os.environ if env is None else env).get(CHOICE_ENV, "").strip() or CLAUDE_VERSION


def is_path_choice(chosen: str) -> bool:
    return "/" in chosen or chosen.startswith("~")


def check_choice(chosen: str, said: str | None = None) -> str | None:
    """One line saying why ``chosen`` names no build, or None when it does (nothing is run or fetched);
    ``said``: how the person gave it (``--claude 2.1``), else as the variable."""
    said = said or f"{CHOICE_ENV}={chosen}"
    if is_path_choice(chosen):
        path = Path(chosen).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            return f"{said}: not an executable file"
        return None
    if _VERSION.fullmatch(chosen) or _TAG.fullmatch(chosen):
        return None
    return f"{said}: not a version (2.1.332), a dist-tag (latest) or a path to claude"


def choose(chosen: str) -> None:
    """Make ``chosen`` the one choice of this process, as if :data:`CHOICE_ENV` said it (a command's
    ``--claude``): the build installed, its version in the scratch HOME and in a table all follow it."""
    os.environ[CHOICE_ENV] = chosen


@cache
def resolve_version(chosen: str) -> str:
    """The version ``chosen`` stands for: a version as it is, a dist-tag asked of the registry, a path's own
    ``--version``."""
    problem = check_choice(chosen)
    if problem:
        raise RuntimeError(problem)
    if _VERSION.fullmatch(chosen):
        return chosen
    if is_path_choice(chosen):
        argv = [str(Path(chosen).expanduser()), "--version"]
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"npm is not on PATH; cannot resolve {PACKAGE}@{chosen}")
        argv = [npm, "view", f"{PACKAGE}@{chosen}", "version"]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "DISABLE_AUTOUPDATER": "1"})
    found = _VERSION.search(proc.stdout)
    if proc.returncode != 0 or found is None:
        raise RuntimeError(f"cannot tell the version of {chosen}: {' '.join(argv[1:])} exited "
                           f"{proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}")
    return found.group(0)


def running_version(env: Mapping[str, str] | None = None) -> str:
    """The version of the build that runs (the table's heading, the scratch HOME's onboarding mark)."""
    return resolve_version(choice(env))


# -- install ------------------------------------------------------------------


def default_cache_dir(version: str | None = None) -> Path:
    """One folder per version, so that running another build never installs over a cached one."""
    root = os.environ.get("AGENT_CARDS_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "agent-cards"
    return base / f"claude-code-{version or CLAUDE_VERSION}"


def claude_binary(cache_dir: Path) -> Path:
    return cache_dir / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"


def is_installed(cache_dir: Path, version: str = CLAUDE_VERSION) -> bool:
    exe = claude_binary(cache_dir)
    manifest = exe.parent.parent / "package.json"
    try:
        found = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        return found == version and exe.stat().st_size > _MIN_BINARY_BYTES
    except (OSError, ValueError):
        return False


def is_available(env: Mapping[str, str] | None = None) -> bool:
    """The chosen build can run without the registry: a path, or a version already in its cache."""
    chosen = choice(env)
    if is_path_choice(chosen):
        return check_choice(chosen) is None
    return bool(_VERSION.fullmatch(chosen)) and is_installed(default_cache_dir(chosen), chosen)


def ensure_claude(cache_dir: Path | None = None, *, timeout: float = 1200.0) -> Path:
    """The chosen build's binary: a path as it is, else installed into its cache folder once."""
    chosen = choice()
    if is_path_choice(chosen):
        problem = check_choice(chosen)
        if problem:
            raise RuntimeError(problem)
        return Path(chosen).expanduser().resolve()
    version = resolve_version(chosen)
    cache = (cache_dir or default_cache_dir(version)).expanduser()
    if is_installed(cache, version):
        return claude_binary(cache)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH; cannot install Claude Code")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (parallel test workers)
        if not is_installed(cache, version):
            env = {k: v for k, v in os.environ.items() if not k.startswith("npm_config_prefix")}
            proc = subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", f"{PACKAGE}@{version}"],
                cwd=cache,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            if proc.returncode != 0 or not is_installed(cache, version):
                raise RuntimeError(
                    f"npm install of {PACKAGE}@{version} failed "
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


