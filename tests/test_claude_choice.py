"""Which real Claude Code build runs: the pinned one, a version, a dist-tag or a path (no registry touched)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_cards_claude_driver import install
from agent_cards_conformance.command import table


def test_nothing_chosen_is_the_pinned_build() -> None:
    assert install.choice({}) == install.CLAUDE_VERSION
    assert install.choice({install.CHOICE_ENV: "  "}) == install.CLAUDE_VERSION
    assert install.running_version({}) == install.CLAUDE_VERSION


@pytest.mark.parametrize("chosen", ["2.1.332", "2.2.0-beta.1", "latest", "next", "stable"])
def test_versions_and_dist_tags_are_choices(chosen: str) -> None:
    assert install.check_choice(chosen) is None


@pytest.mark.parametrize("chosen", ["2.1", "v2.1.332", "2.1.332;rm", "LATEST", "@latest"])
def test_anything_else_is_named_in_one_line(chosen: str) -> None:
    problem = install.check_choice(chosen)
    assert problem is not None and "\n" not in problem and chosen in problem


def test_a_path_must_be_an_executable_file(tmp_path: Path) -> None:
    missing = tmp_path / "claude"
    assert install.check_choice(str(missing)) == f"{install.CHOICE_ENV}={missing}: not an executable file"
    plain = tmp_path / "plain"
    plain.write_text("", encoding="utf-8")
    assert install.check_choice(str(plain)) is not None


def _fake_claude(folder: Path, says: str) -> Path:
    exe = folder / "claude"
    exe.write_text(f"#!{sys.executable}\nprint({says!r})\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def test_a_path_is_used_as_it_is_and_names_its_own_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _fake_claude(tmp_path, "2.1.400 (Claude Code)")
    monkeypatch.setenv(install.CHOICE_ENV, str(exe))
    assert install.ensure_claude() == exe.resolve()
    assert install.running_version() == "2.1.400"
    assert install.is_available()


def test_a_path_that_names_no_version_is_an_error(tmp_path: Path) -> None:
    exe = _fake_claude(tmp_path, "hello")
    with pytest.raises(RuntimeError, match="cannot tell the version"):
        install.resolve_version(str(exe))


def test_each_version_has_its_own_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CARDS_CACHE", str(tmp_path))
    assert install.default_cache_dir() == tmp_path / f"claude-code-{install.CLAUDE_VERSION}"
    assert install.default_cache_dir("2.1.332") == tmp_path / "claude-code-2.1.332"
    monkeypatch.setenv(install.CHOICE_ENV, "2.1.332")
    assert not install.is_available()  # nothing cached there: the registry would be needed


def test_the_table_is_headed_with_the_build_that_ran() -> None:
    assert "against the real Claude Code 2.1.400." in table([], "2.1.400")


def test_conform_takes_the_build_by_flag_and_heads_the_table_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--claude PATH`` is the one choice for that command: the build it names is the one the table names."""
    from agent_cards_conformance import command

    monkeypatch.setenv(install.CHOICE_ENV, "")  # restored after: --claude sets it for the command
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    monkeypatch.setattr(command, "proof", lambda: "")  # the self-test's header is tested on its own
    exe = _fake_claude(tmp_path, "2.1.400 (Claude Code)")
    table = tmp_path / "table.md"
    lines: list[str] = []
    # a scenario that cannot run: the build is chosen and named, nothing is run
    assert command.main(["--claude", str(exe), "--table", str(table), "scenarios/workflow.yaml"],
                        out=lines.append) == 0
    assert install.choice() == str(exe)
    assert "against the real Claude Code 2.1.400." in table.read_text(encoding="utf-8")


@pytest.mark.parametrize("given", ["2.1", "/nowhere/claude"])
def test_conform_names_a_wrong_build_in_one_line(
    given: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_cards_conformance import command

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert command.main(["--claude", given, "scenarios/workflow.yaml"]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if given in x]
    assert f"--claude {given}: not" in line
    assert install.CHOICE_ENV not in line


def test_conform_refuses_a_build_where_nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cards_conformance import command

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert command.main(["--claude", "latest", "--self-test"]) == 2
    assert command.main(["--claude", "latest", "--from", "conformance/selftest-real.jsonl"]) == 2
