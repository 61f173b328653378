"""What an install of agent-cards puts on the path: the mod's package and the bench's, under names of their own."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PROJECT["tool"]["setuptools"]


def installed_name(folder: Path) -> str:
    """The name a package folder of the repository is installed as (``package-dir`` maps the bench's)."""
    top, *rest = folder.relative_to(ROOT).parts
    renamed = {source: name for name, source in SETUPTOOLS["package-dir"].items()}
    return ".".join([renamed.get(top, top), *rest])


def test_every_package_folder_is_installed_and_nothing_else() -> None:
    tops = ("agent_cards", *SETUPTOOLS["package-dir"].values())
    folders = {init.parent for top in tops for init in (ROOT / top).rglob("__init__.py")}
    assert sorted(installed_name(folder) for folder in folders) == sorted(SETUPTOOLS["packages"])


def test_every_installed_top_level_name_is_the_projects_own() -> None:
    """No ``simulator``, ``conformance`` or ``claude_driver`` beside another project's packages."""
    tops = {name.split(".")[0] for name in SETUPTOOLS["packages"]}
    assert all(top == "agent_cards" or top.startswith("agent_cards_") for top in tops), tops


def test_the_type_checker_reads_each_renamed_package_through_its_link() -> None:
    links = ROOT / ".mypy-path"
    for name, source in SETUPTOOLS["package-dir"].items():
        assert (links / name).resolve() == (ROOT / source).resolve(), name
