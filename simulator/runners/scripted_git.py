"""The scripted git of a replay: how git answers the session's command lines. Plain records only.

The scenario format writes them (``session.git``) and both runners answer git from them, so they are
defined here once, where the scenario reader can take them without loading a runner.
"""

from __future__ import annotations

from agent_cards.record import Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["GIT_DIED", "GIT_MS", "NOT_A_REPO", "NOT_A_REPO_HEAD", "GitRun", "GitScript", "not_a_repository"]

#: How long a scripted git run takes, virtual ms.
GIT_MS = 5
NOT_A_REPO = "fatal: not a git repository (or any of the parent directories): .git\n"
#: How git's message begins when it finds no repository; what follows names where its search stopped (the
#: parent directories, a mount point it would not cross, a ``.git`` file pointing nowhere).
NOT_A_REPO_HEAD = "fatal: not a git repository"
GIT_DIED = 128  # git's exit status when it dies of a fatal error, a missing repository among them


def not_a_repository(exit_code: int, stderr: str) -> bool:
    """Whether git's answer says the directory is in no git repository: git died (exit 128) saying so. Any
    other failure (git refusing a repository it found, git missing) leaves the directory in one."""
    return exit_code == GIT_DIED and stderr.startswith(NOT_A_REPO_HEAD)


class GitRun(Value):
    """How git answers one command line (``session.git.runs``)."""

    argv: tuple[str, ...]
    stdout: str = ""
    stderr: str = ""
    exit: int = 0


class GitScript(Value):
    """What ``git branch --show-current`` does in the session's directory (and, by ``runs``, any other git
    command line: those are answered in front of the runner, by the replay's scripted runs)."""

    branch: str | None = "main"  # None: a detached HEAD (exit 0, nothing printed)
    exit: int = 0  # non-zero: git fails (with ``stderr``, or git's not-a-repository message)
    stderr: str = ""
    missing: bool = False  # git is not on PATH: the run fails to start
    runs: tuple[GitRun, ...] = ()

    def is_repository(self) -> bool:
        """Whether the session's directory is in a git repository, as this git tells it (Claude Code finds
        the repository by the same walk up to a ``.git`` that makes git say it found none)."""
        exit_code, _, stderr = self.run(("git", "branch", "--show-current"))
        return not not_a_repository(exit_code, stderr)

    def run(self, argv: Sequence[str]) -> tuple[int, str, str]:
        if self.exit != 0:
            return self.exit, "", self.stderr or NOT_A_REPO
        if list(argv[1:]) == ["branch", "--show-current"]:
            return 0, f"{self.branch}\n" if self.branch else "", ""  # detached: git prints nothing
        return 1, "", f"git: '{' '.join(argv[1:])}' is not scripted in this scenario\n"
