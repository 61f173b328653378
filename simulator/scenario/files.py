"""Scenario files on disk: which files a path names, and the clause list of the folder that holds them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from agent_cards_simulator.scenario.reader import Scenario, ScenarioError, read
from agent_cards_simulator.scenario.yamlnodes import YamlError, load, read_file

CLAUSES_FILE = "clauses.yaml"
#: Clause lists already read, by path, with the (mtime, size) they were read at: a folder of scenarios
#: shares one list, which is read once, not once per file.
_CLAUSES: dict[Path, tuple[tuple[int, int], dict[str, str]]] = {}


def scenario_files(paths: Iterable[str | Path]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        found.extend(sorted(path.rglob("*.yaml")) if path.is_dir() else [path])
    return [p for p in found if p.name != CLAUSES_FILE]


def known_clauses(near: Path) -> dict[str, str]:
    """The clause list of the scenarios folder that holds ``near`` (empty when there is none)."""
    try:
        above = near.resolve().parents
    except (OSError, RuntimeError):  # a symlink loop: the folders above it as written
        above = near.absolute().parents
    for folder in [near if near.is_dir() else near.parent, *above]:
        candidate = folder / CLAUSES_FILE
        if candidate.is_file():
            return _clause_list(candidate)
    return {}


def _clause_list(path: Path) -> dict[str, str]:
    try:
        stat = path.stat()
        seen = (stat.st_mtime_ns, stat.st_size)
        cached = _CLAUSES.get(path)
        if cached is not None and cached[0] == seen:
            return cached[1]
        data = load(read_file(path))  # as hostile-safe as a scenario: bounded size, depth, aliases
    except OSError as error:
        raise ScenarioError(str(path), [(1, f"the clause list cannot be read: {error.strerror or error}")]) from None
    except YamlError as error:
        raise ScenarioError(str(path), [(error.line, f"the clause list cannot be read: {error.message}")]) from None
    if not isinstance(data, dict):
        raise ScenarioError(str(path), [(1, "the clause list is a mapping of clause id to its text")])
    clauses = {str(k): "" if isinstance(v, dict | list) else str(v) for k, v in data.items()}
    _CLAUSES[path] = (seen, clauses)
    return clauses


def read_checked(file: Path, known: set[str] | None = None) -> Scenario:
    """Read a scenario, its clause ids checked against the clause list of its folder (when there is one);
    ``known``: that list, when the caller has it already."""
    return read(file, known_clauses=(set(known_clauses(file)) if known is None else known) or None)


def load_all(files: Sequence[Path]) -> tuple[list[Scenario], list[str]]:
    """Read every file; the clause list is looked up once per folder, not once per file."""
    scenarios, problems = [], []
    by_folder: dict[Path, set[str]] = {}
    for file in files:
        try:
            known = by_folder.get(file.parent)
            if known is None:
                known = by_folder[file.parent] = set(known_clauses(file))
            scenarios.append(read_checked(file, known))
        except ScenarioError as error:
            problems.extend(error.lines())
    return scenarios, problems
