"""The fake host where it was seen to differ from the real Claude Code 2.1.328, and now does as the engine does."""

from __future__ import annotations

import pytest

from agent_cards.bridge.host import run_process
from agent_cards.engine import ProcessError
from agent_cards.host_contract import host_check
from agent_cards_simulator.runners.scripted_git import NOT_A_REPO, GitScript, not_a_repository

# --- a git repository, by git's own answer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("exit_code", "stderr", "outside"),
    [
        (128, NOT_A_REPO, True),
        (128, "fatal: not a git repository (or any parent up to mount point /home)\nStopping at filesystem "
              "boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).\n", True),
        (128, "fatal: not a git repository: /home/dev/app/.git/worktrees/gone\n", True),  # a .git file pointing nowhere
        (128, "fatal: detected dubious ownership in repository at '/home/dev/app'\n", False),  # git found one
        (1, NOT_A_REPO, False),  # not git's status for it: git dies with 128
        (0, "", False),
    ],
)
def test_not_a_repository_is_git_dying_with_its_own_words(exit_code: int, stderr: str, outside: bool) -> None:
    assert not_a_repository(exit_code, stderr) is outside


def test_a_scripted_git_that_fails_without_words_of_its_own_is_outside_a_repository() -> None:
    assert GitScript(exit=128).is_repository() is False  # git's own message is the default
    assert GitScript(exit=128, stderr="fatal: not a git repository\n").is_repository() is False
    assert GitScript(missing=True).is_repository() is True  # no git on PATH: the project's .git is still there
    assert GitScript(branch=None).is_repository() is True


# --- a NUL in a command line: fails to start in every host -------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["/opt/lich/bin/lich", "open", "--prompt", "Fix\0 it"], "the argument at index 2 (zero-based) contains a null "
                                                                  "byte (\\0)"),
        (["/opt/lich\0/bin/lich"], "the executable path contains a null byte (\\0)"),
    ],
)
def test_a_nul_in_argv_fails_to_start_before_anything_runs(argv: list[str], why: str) -> None:
    with pytest.raises(ProcessError) as refused:
        host_check(argv, 1000)
    assert (refused.value.kind, str(refused.value)) == ("start", f"$.process.run({argv[0]}) failed to start: {why}")


async def test_the_bridge_refuses_a_nul_as_the_fake_host_does() -> None:
    """The bridge (the mod's host in the real engine) starts nothing either: the same ProcessError, not Python's
    own ValueError, so the mod falls back to the native agent with the same toast in every mode."""
    with pytest.raises(ProcessError) as refused:
        await run_process(["/bin/echo", "a\0b"], 1000)
    assert refused.value.kind == "start" and "contains a null byte" in str(refused.value)
