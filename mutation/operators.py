"""The mutants of a module: each a one-node change of its syntax tree, named so that an edit elsewhere in
the file does not rename it.

A mutant's id is ``module:function:operator:original->replacement`` (``function`` the qualified name of the
innermost enclosing def or class, ``<module>`` outside any), with ``#k`` added for the k-th such change in
that function (k from 2): line numbers move whenever a line is added above, the function's name and the
change itself do not. Lines that only describe the code are left alone: annotations, ``Literal[...]``
types (named as an alias, too), docstrings (and any string alone as a statement), ``TYPE_CHECKING =
False`` and the ``if TYPE_CHECKING:`` blocks,
``__repr__``, ``__all__``, and the argument of an ``assert`` (the mod's own
checks of its invariants, not behaviour).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from pathlib import Path

from agent_cards.record import Value

#: Comparison flips (the negation) and boundary shifts of each comparison operator.
_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}
_BOUNDARIES: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv,
                                                             ast.FloorDiv: ast.Mult, ast.Div: ast.Mult}
_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
            ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
            ast.FloorDiv: "//", ast.Div: "/", ast.And: "and", ast.Or: "or"}
#: Calls that only write text for a person reading a log: deleting one changes no behaviour worth a test.
_LOGGING = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical"})

SHOWN = 40  # characters of a node's source shown in an id


class Mutant(Value):
    id: str
    module: str
    line: int
    operator: str
    original: str
    replacement: str


class _Point(Value):
    """One change: where it is, and how it rewrites its node (called on the copy of the tree)."""

    module: str
    scope: str
    line: int
    operator: str
    original: str
    replacement: str
    path: tuple[tuple[str, int | None], ...]  # from the module node: (field, index) steps to the node changed
    rewrite: Callable[[ast.AST], ast.AST | None]  # None: the statement becomes ``pass``


def _shown(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _is_docstring(body: list[ast.stmt], index: int) -> bool:
    statement = body[index]
    return (index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _is_bare_string(node: ast.AST) -> bool:
    """A string alone as a statement: a docstring, of a module, a class, a function or an attribute."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _sets_type_checking(node: ast.AST) -> bool:
    """``TYPE_CHECKING = False``: the stand-in for typing's flag, read only by the type checker."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "TYPE_CHECKING")


def _is_literal_type(node: ast.AST) -> bool:
    """``Literal[...]``: its values are read by the type checker, never at run time."""
    return isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Literal", "typing.Literal")


def _is_logging(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in _LOGGING


_SKIPPED_FIELDS = frozenset({"annotation", "returns", "type_comment", "decorator_list", "type_params"})


class _Walker:
    def __init__(self, module: str) -> None:
        self.module = module
        self.points: list[_Point] = []

    def walk(self, node: ast.AST, path: tuple[tuple[str, int | None], ...], scope: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            scope = node.name if scope == "<module>" else f"{scope}.{node.name}"
            if node.name == "__repr__":
                return
        if isinstance(node, ast.Assert | ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
            return
        if _is_type_checking(node) or _is_bare_string(node) or _sets_type_checking(node) or _is_literal_type(node):
            return
        if isinstance(node, ast.Assign | ast.AnnAssign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in ([node.target] if isinstance(node, ast.AnnAssign)
                                                                        else node.targets)):
            return
        self._points_at(node, path, scope)
        for field, value in ast.iter_fields(node):
            if field in _SKIPPED_FIELDS:
                continue
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if not isinstance(item, ast.AST):
                        continue
                    if field == "body" and isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef |
                                                      ast.ClassDef) and _is_docstring(value, index):
                        continue
                    self.walk(item, (*path, (field, index)), scope)
            elif isinstance(value, ast.AST):
                self.walk(value, (*path, (field, None)), scope)

    def _add(self, node: ast.AST, path: tuple[tuple[str, int | None], ...], scope: str, operator: str,
             replacement: str, rewrite: Callable[[ast.AST], ast.AST | None]) -> None:
        self.points.append(_Point(self.module, scope, getattr(node, "lineno", 0), operator, _shown(node), replacement,
                                  path, rewrite))

    def _points_at(self, node: ast.AST, path: tuple[tuple[str, int | None], ...], scope: str) -> None:
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                for name, table in (("flip", _FLIPS), ("boundary", _BOUNDARIES)):
                    new = table.get(type(op))
                    if new is None:
                        continue
                    changed = copy.deepcopy(node)
                    changed.ops[index] = new()
                    self._add(node, path, scope, f"compare-{name}", _shown(changed), _set_op(index, new))
        elif isinstance(node, ast.BoolOp):
            other: type[ast.boolop] = ast.Or if isinstance(node.op, ast.And) else ast.And
            self._add(node, path, scope, "and-or", _shown(ast.BoolOp(other(), node.values)), _set("op", other))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._add(node, path, scope, "not-removed", _shown(node.operand), lambda n: n.operand)  # type: ignore[attr-defined]
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            new_op = _ARITHMETIC[type(node.op)]
            self._add(node, path, scope, "arithmetic", _shown(ast.BinOp(node.left, new_op(), node.right)),
                      _set("op", new_op))
        elif isinstance(node, ast.Constant):
            self._constant(node, path, scope)
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, path, scope, "return-none", "return None", lambda n: _with(n, value=ast.Constant(None)))
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await)
              and not (isinstance(node.value, ast.Call) and _is_logging(node.value))):
            self._add(node, path, scope, "call-deleted", "pass", lambda n: None)

    def _constant(self, node: ast.Constant, path: tuple[tuple[str, int | None], ...], scope: str) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(node, path, scope, "bool", repr(not value), lambda n: ast.Constant(not value))
        elif isinstance(value, int):
            self._add(node, path, scope, "number", repr(value + 1), lambda n: ast.Constant(value + 1))
        elif isinstance(value, float):
            self._add(node, path, scope, "number", repr(value * 2 or 1.0), lambda n: ast.Constant(value * 2 or 1.0))
        elif isinstance(value, str) and value:
            self._add(node, path, scope, "string-emptied", "''", lambda n: ast.Constant(""))


def _with(node: ast.AST, **fields: object) -> ast.AST:
    for name, value in fields.items():
        setattr(node, name, value)
    return node


def _set(field: str, kind: type[ast.AST]) -> Callable[[ast.AST], ast.AST]:
    """A rewrite that puts a new node of ``kind`` in ``field`` (an operator of a BoolOp or BinOp)."""
    def rewrite(node: ast.AST) -> ast.AST:
        return _with(node, **{field: kind()})
    return rewrite


def _set_op(index: int, new: type[ast.cmpop]) -> Callable[[ast.AST], ast.AST]:
    def rewrite(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Compare)
        node.ops[index] = new()
        return node
    return rewrite


def module_name(path: Path, root: Path) -> str:
    """``agent_cards/bridge/host.py`` → ``agent_cards.bridge.host`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _points(module: str, source: str) -> list[_Point]:
    walker = _Walker(module)
    walker.walk(ast.parse(source), (), "<module>")
    return walker.points


def _ids(points: list[_Point]) -> Iterator[str]:
    seen: dict[str, int] = {}
    for point in points:
        key = f"{point.module}:{point.scope}:{point.operator}:{point.original}->{point.replacement}"
        seen[key] = seen.get(key, 0) + 1
        yield key if seen[key] == 1 else f"{key}#{seen[key]}"


def mutants(module: str, source: str) -> list[Mutant]:
    """Every mutant of ``source`` (the text of ``module``), in the order of the file."""
    points = _points(module, source)
    return [Mutant(id_, p.module, p.line, p.operator, p.original, p.replacement)
            for id_, p in zip(_ids(points), points, strict=True)]


def mutated_tree(mutant_id: str, source: str, module: str) -> ast.Module:
    """``source``'s tree with the one change ``mutant_id`` names (a KeyError when it names none)."""
    points = _points(module, source)
    for id_, point in zip(_ids(points), points, strict=True):
        if id_ == mutant_id:
            tree = ast.parse(source)
            parent: ast.AST = tree
            *steps, (field, index) = point.path
            for step_field, step_index in steps:
                child = getattr(parent, step_field)
                parent = child[step_index] if step_index is not None else child
            holder = getattr(parent, field)
            node = holder[index] if index is not None else holder
            new = point.rewrite(node)
            if new is None:
                new = ast.copy_location(ast.Pass(), node)
            else:
                ast.copy_location(new, node)
            if index is not None:
                holder[index] = new
            else:
                setattr(parent, field, new)
            return ast.fix_missing_locations(tree)
    raise KeyError(mutant_id)
