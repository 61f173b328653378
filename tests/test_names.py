"""Names that say one thing: a class name means one class across the tree, and a comment gives its reason
itself rather than pointing at an issue or a spec section the repository does not hold."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("agent_cards", "simulator", "conformance", "claude_driver", "mutation", "bench", "tests")

#: An issue's number in brackets, or a section sign: pointers a reader of the repository cannot follow.
_POINTER = re.compile(r"\(issue #?\d+\)|§")


def _sources() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def shared_class_names(paths: list[Path]) -> dict[str, list[str]]:
    """Each class name defined more than once (at any depth), with where."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path.name}:{node.lineno}")
    return {name: places for name, places in where.items() if len(places) > 1}


def pointing_comments(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        found += [f"{path.name}:{t.start[0]}: {t.string.strip()}" for t in tokens
                  if t.type == tokenize.COMMENT and _POINTER.search(t.string)]
    return found


def test_no_two_classes_of_the_tree_share_a_name() -> None:
    shared = shared_class_names(_sources())
    assert not shared, f"classes sharing a name (rename one, or make it an alias): {shared}"


def test_no_comment_points_at_an_issue_or_a_spec_section() -> None:
    found = pointing_comments(_sources())
    assert not found, "\n".join(found)


def test_each_check_finds_its_slip(tmp_path: Path) -> None:
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("class Plant:\n    class Inner: ...\n", encoding="utf-8")
    two.write_text('class Plant: ...  # kept (issue 15)\nALIAS = Plant\nTEXT = "see (issue 15)"  # §4\n',
                   encoding="utf-8")
    assert shared_class_names([one, two]) == {"Plant": ["one.py:1", "two.py:1"]}
    assert pointing_comments([one, two]) == ["two.py:1: # kept (issue 15)", "two.py:3: # §4"]
