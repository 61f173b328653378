"""``agent-cards`` finds its own commands without ``importlib.metadata``, as ``importlib.metadata`` would.

A command this distribution ships is read from its ``entry_points.txt`` on ``sys.path`` (a wheel's
``.dist-info``, an editable install's, or a source tree's ``.egg-info``); any other name still goes
through entry points, so another package's commands keep working.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from agent_cards import cli

ROOT = Path(__file__).resolve().parents[1]

ENTRY_POINTS = """\
[console_scripts]
replay = elsewhere:nothing

[agent_cards.commands]
# a comment
replay = agent_cards_simulator.commands:replay
coverage=agent_cards_simulator.commands:coverage
nested = os.path:join [extra]

[pytest11]
coverage = nothing:here
"""


def test_the_section_is_read_as_entry_points_reads_it() -> None:
    assert cli._section(ENTRY_POINTS, cli.GROUP) == {
        "replay": "agent_cards_simulator.commands:replay",
        "coverage": "agent_cards_simulator.commands:coverage",
        "nested": "os.path:join [extra]",
    }


def test_a_loader_imports_the_module_and_follows_the_attributes() -> None:
    import os.path

    assert cli._loader("os.path:join [extra]")() is os.path.join  # type: ignore[comparison-overlap]


@pytest.mark.parametrize("layout", ["agent_cards-9.9.9.dist-info", "agent_cards.egg-info"])
def test_the_first_metadata_folder_on_the_path_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "agent_cards_extra-1.0.dist-info").mkdir(parents=True)  # another distribution
    (tmp_path / "other" / "agent_cards_extra-1.0.dist-info" / "entry_points.txt").write_text(
        "[agent_cards.commands]\nreplay = wrong:one\n", encoding="utf-8")
    site = tmp_path / "site"
    (site / layout).mkdir(parents=True)
    (site / layout / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    later = tmp_path / "later" / "agent_cards-0.0.1.dist-info"
    later.mkdir(parents=True)
    (later / "entry_points.txt").write_text("[agent_cards.commands]\nreplay = wrong:two\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "other"), str(site),
                                      str(tmp_path / "later")])
    own = cli._own_commands()
    assert own is not None and own["replay"] == "agent_cards_simulator.commands:replay"


def test_without_metadata_on_the_path_entry_points_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "_own_commands", lambda: None)
    assert cli._find("replay") is not None
    assert cli._find("no-such-command") is None


def test_the_installed_distribution_agrees_with_importlib_metadata() -> None:
    """Here (an editable install, or a wheel's): every command of the group is found the cheap way."""
    own = cli._own_commands()
    points = {p.name: p.value for p in entry_points(group=cli.GROUP)}
    assert own is not None and own == points


def test_replay_starts_without_importlib_metadata() -> None:
    probe = ("import sys; from agent_cards.cli import _find; loader = _find('replay'); "
             "assert loader is not None and callable(loader()); "
             "print('importlib.metadata' in sys.modules)")
    for cwd in (ROOT, ROOT / "scenarios"):  # the source tree's .egg-info on the path, or only the install's
        done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, check=True,
                              timeout=60)
        assert done.stdout.strip() == "False", done.stderr
