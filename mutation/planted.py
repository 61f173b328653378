"""A mutant put in place of its module for every import in this process.

:func:`plant` drops the project's modules already imported (a forked worker inherits the parent's) and
puts a finder first on ``sys.meta_path`` that serves the mutated tree for the one module the mutant is in;
every other module, and every later import, is the project's own. ``python -m agent_cards_mutation.planted
ID MODULE ROOT [--failed-to FILE] -- ARGS`` runs pytest with ARGS that way, so a test file sees the mutant
as the mod (or as the judge), and writes the ids of the tests that failed to FILE, a JSON list.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_cards_mutation.operators import mutated_tree

PREFIX = "agent_cards"
OWN = "agent_cards_mutation"


@functools.cache
def package_dirs(root: Path) -> dict[str, str]:
    """The folder of each package whose folder is not named as it is imported: ``[tool.setuptools.package-dir]``
    of ``root``'s pyproject.toml (``agent_cards_simulator`` is ``simulator/`` in a clone). An installed copy
    has no pyproject.toml beside its packages, whose folders there are their names: an empty map."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    found = data.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    return {str(name): str(folder) for name, folder in found.items()} if isinstance(found, dict) else {}


def module_path(module: str, root: Path) -> Path:
    """The source file of ``module`` (a dotted name: ``agent_cards.taken``, ``agent_cards_simulator.scenario.expect``)
    in the tree at ``root``, through the package-dir map of its pyproject.toml."""
    first, *rest = module.split(".")
    base = root.joinpath(package_dirs(root).get(first, first), *rest)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, mutant_id: str, module: str, path: Path) -> None:
        self.mutant_id, self.module, self.path = mutant_id, module, path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        tree = mutated_tree(self.mutant_id, self.path.read_text(encoding="utf-8"), self.module)
        exec(compile(tree, str(self.path), "exec"), module.__dict__)  # the project's own source, one node changed


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, loader: _MutantLoader) -> None:
        self.loader = loader

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.loader.module:
            return None
        package = self.loader.path.name == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, self.loader.path, loader=self.loader,
            submodule_search_locations=[str(self.loader.path.parent)] if package else None)


def plant(mutant_id: str, module: str, root: Path) -> None:
    """From now on, this process imports ``module`` with ``mutant_id`` in it."""
    for name in [n for n in sys.modules if n.split(".")[0].startswith(PREFIX) and n.split(".")[0] != OWN]:
        del sys.modules[name]
    sys.meta_path.insert(0, _MutantFinder(_MutantLoader(mutant_id, module, module_path(module, root))))


class _FailedTests:
    """A pytest plugin that keeps the id of every test (or file, when it fails to collect) that fails, its path
    made relative to the folder pytest runs in (an id is relative to pytest's root folder, which a test
    outside the project has elsewhere), so that the same id runs it again from there."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.cwd = self.root = Path.cwd()  # the folder pytest was started in: a test may change the current one

    def pytest_configure(self, config: Any) -> None:
        self.root = Path(config.rootpath)

    def _keep(self, report: Any) -> None:
        if report.failed:
            path, sep, rest = str(report.nodeid).partition("::")
            where = self.root / path
            shown = where.relative_to(self.cwd) if where.is_relative_to(self.cwd) else where
            self.ids.append(f"{shown}{sep}{rest}")

    def pytest_runtest_logreport(self, report: Any) -> None:
        self._keep(report)

    def pytest_collectreport(self, report: Any) -> None:
        self._keep(report)


USAGE = "agent_cards_mutation.planted: ID MODULE ROOT [--failed-to FILE] -- PYTEST-ARGS"


def main(args: list[str]) -> int:
    """``ID MODULE ROOT [--failed-to FILE] -- PYTEST-ARGS``: pytest's exit status with the mutant planted."""
    if "--" not in args:
        print(USAGE, file=sys.stderr)
        return 2
    at = args.index("--")
    head, rest = args[:at], args[at + 1 :]
    failed_to: Path | None = None
    if len(head) == 5 and head[3] == "--failed-to":
        failed_to = Path(head[4])
        head = head[:3]
    if len(head) != 3:
        print(USAGE, file=sys.stderr)
        return 2
    mutant_id, module, root = head
    plant(mutant_id, module, Path(root))
    import pytest

    failed = _FailedTests()
    status = int(pytest.main(rest, plugins=[failed]))
    if failed_to is not None:
        failed_to.write_text(json.dumps(list(dict.fromkeys(failed.ids))), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
