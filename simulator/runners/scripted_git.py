"""The scripted git of a replay: how git answers the session's command lines. Plain records only.

The scenario format writes them (``session.git``) and both runners answer git from them, so they are
defined here once, where the scenario reader can take them without loading a runner.
"""

from __future__ import annotations

from agent_cards.record import Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["GIT_MS", "NOT_A_REPO", "GitRun", "GitScript"]

#: How long a scripted git run takes, virtual ms.
GIT_MS = 5
NOT_A_REPO = "fatal: not a git repository (or any of the parent directories): .git\n"


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

    def run(self, argv: Sequence[str]) -> tuple[int, str, str]:
        if self.exit != 0:
            return self.exit, "", self.stderr or NOT_A_REPO
        if list(argv[1:]) == ["branch", "--show-current"]:
            return 0, f"{self.branch}\n" if self.branch else "", ""  # detached: git prints nothing
        return 1, "", f"git: '{' '.join(argv[1:])}' is not scripted in this scenario\n"
