"""The pinned Claude Code CLI: installed once from npm into a cache, and the guarded environment of every run.

Every run gets a cleared environment (only the variables :func:`guard_env` builds): no auto-update, no
telemetry, proxies pointed at a dead local port, so the CLI stays offline and never changes the machine.
Nothing is installed globally: the CLI lives in a cache directory and is called by its path.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

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


