"""One-shot runs of the real CLI: ``claude -p`` and ``claude plugin validate``, each killed with its process
group when it overruns."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agent_cards.record import Value
from agent_cards_claude_driver.install import DEAD_PROXY, HasBaseUrl, guard_env
from agent_cards_claude_driver.sandbox import Sandbox, remove_leftovers

# -- one-shot runs ------------------------------------------------------------


class CliRun(Value):
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


def run_validate(
    claude: Path, plugin_dir: Path, home: Path, *, timeout: float = 60.0, strict: bool = False
) -> CliRun:
    """``claude plugin validate [--strict] DIR`` (no model needed: the base URL is a dead port)."""
    home.mkdir(parents=True, exist_ok=True)
    env = guard_env(home, DEAD_PROXY)
    args = ["plugin", "validate", *(["--strict"] if strict else []), str(plugin_dir)]
    return run_claude(claude, args, env=env, cwd=plugin_dir, timeout=timeout)


def run_plugin_test(claude: Path, test_dir: Path, home: Path, *, timeout: float = 300.0) -> CliRun:
    """``claude plugin test DIR``: the engine's testing kit runs every ``*.test.ts`` under DIR, offline (the
    base URL is a dead port). It may write ``.claude-plugin/types/`` and ``tsconfig.json`` into DIR."""
    home.mkdir(parents=True, exist_ok=True)
    env = guard_env(home, DEAD_PROXY)
    return run_claude(claude, ["plugin", "test", str(test_dir)], env=env, cwd=test_dir, timeout=timeout)


def plugin_args(plugin_dirs: Iterable[Path]) -> list[str]:
    return [a for d in plugin_dirs for a in ("--plugin-dir", str(d))]


def module_plugin(folder: Path, name: str, source: str, description: str) -> Path:
    """``folder`` made a plugin of one module, ``hooks/<name>.js`` holding ``source`` (a probe, or a plugin that
    does nothing, run beside the mod with ``--plugin-dir``)."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "hooks").mkdir()
    manifest = {"name": name, "version": "0.0.1", "description": description}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"modules": [f"./{name}.js"]}), encoding="utf-8")
    (folder / "hooks" / f"{name}.js").write_text(source, encoding="utf-8")
    return folder


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
    args = ["-p", prompt, *plugin_args(plugin_dirs), *extra_args]
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
