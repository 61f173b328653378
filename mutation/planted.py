"""A mutant put in place of its module for every import in this process.

:func:`plant` drops the project's modules already imported (a forked worker inherits the parent's) and
puts a finder first on ``sys.meta_path`` that serves the mutated tree for the one module the mutant is in;
every other module, and every later import, is the project's own. ``python -m agent_cards_mutation.planted
ID -- ARGS`` runs pytest with ARGS that way, so a test file sees the mutant as the mod.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from agent_cards_mutation.operators import mutated_tree

PREFIX = "agent_cards"
OWN = "agent_cards_mutation"


def module_path(module: str, root: Path) -> Path:
    """The source file of ``module`` (a dotted name under ``agent_cards``) in the tree at ``root``."""
    base = root.joinpath(*module.split("."))
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


def main(args: list[str]) -> int:
    """``ID MODULE ROOT -- PYTEST-ARGS``: pytest's exit status with the mutant planted."""
    mutant_id, module, root, separator, *rest = args
    if separator != "--":
        print("agent_cards_mutation.planted: ID MODULE ROOT -- PYTEST-ARGS", file=sys.stderr)
        return 2
    plant(mutant_id, module, Path(root))
    import pytest

    return int(pytest.main(rest))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
