"""A scratch HOME and project for one run of the real CLI, and the removal of what the CLI leaves outside it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from agent_cards.record import Record, field
from agent_cards_claude_driver.install import AUTH_TOKEN, guard_env, running_version


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
        "lastOnboardingVersion": running_version(),
        "theme": "dark",
        "customApiKeyResponses": {"approved": [AUTH_TOKEN[-20:]], "rejected": []},
        "projects": projects,
    }
    path = home / ".claude.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


class Sandbox(Record):
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

    def session_hosts(self) -> list[int]:
        """The pids of the plugin's session hosts (``python … agent_cards.bridge``) running with this HOME.

        A launcher on the way to the interpreter (pyenv's shim, a wrapper script) is the host's own pid, since
        it ends in an exec; the shells it forks for ``$(…)`` carry the same command line for a moment and are
        not hosts, so a match whose parent matches too is left out."""
        parents: dict[int, int] = {}
        for pid in pids():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if b"agent_cards.bridge" in cmdline and str(self.home).encode() in environ:
                parent = parent_of(pid)
                if parent is not None:  # else it ended meanwhile
                    parents[pid] = parent
        return sorted(pid for pid, parent in parents.items() if parent not in parents)

    def cleanup(self) -> None:
        remove_leftovers(self.project, self.pids, [self.tmp])
        shutil.rmtree(self.tmp, ignore_errors=True)


def pids() -> list[int]:
    """Every process ``/proc`` shows."""
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def parent_of(pid: int) -> int | None:
    """The parent of ``pid``, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state; the name before may hold ")"


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


