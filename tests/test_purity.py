"""The mod is host-agnostic: it never imports the simulator, and its core does no I/O of its own.

Every process, toast, timer and environment read goes through the host it is given (``$`` in the
engine). The only modules allowed to touch the machine are the drivers of the classic Claude Code
command hook, listed in ``DRIVERS``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agent_cards"

# The command-hook drivers: a command hook lives for one process, so these run lich and git with
# subprocess, keep the mod's state in a file and write to stdout/stderr. Any other module of the mod is
# pure; a new driver module must be added here on purpose.
DRIVERS = frozenset({
    "hook.py",  # ``agent-cards hook``: reads the event on stdin, runs processes, prints the decision
    "filestore.py",  # the mod's state in a file between hook processes (fcntl lock, os.replace)
    "cli.py",  # ``agent-cards``: argv in, exit code out; other packages' commands found by entry point
    "arguments.py",  # every command's argv read alike (argparse), ``-o FILE`` written, Ctrl-C said on stderr
    "bridge",  # the package agent_cards.bridge, the session host in the real engine: a socket, processes, stdout
})

# Modules never imported anywhere in the mod, drivers included.
NEVER = frozenset({"agent_cards_simulator", "agent_cards_conformance", "agent_cards_claude_driver", "yaml"})
# Modules the pure core may not import: processes, sockets, files, the real clock, event loops.
IMPURE = frozenset({
    "subprocess", "socket", "asyncio", "urllib", "http", "os", "sys", "io", "pathlib", "shutil", "tempfile",
    "fcntl", "select", "selectors", "multiprocessing", "threading", "ctypes", "time", "requests", "importlib",
    "builtins",
})
IMPURE_CALLS = frozenset({"open", "print", "input", "exec", "eval", "compile", "__import__", "breakpoint"})
IMPURE_METHODS = frozenset({"write_text", "write_bytes", "read_text", "read_bytes", "mkdir", "unlink", "touch"})


def modules() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module name an import statement names (``from . import x`` counts as ``agent_cards.x``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = "agent_cards" + (f".{base}" if base else "")
            found.append((node.lineno, base))
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return found


def problems_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    pure = path.name not in DRIVERS
    problems = []
    for line, name in imported(tree):
        top = name.split(".")[0]
        if top in NEVER or (pure and (top in IMPURE or name == "asyncio.subprocess")):
            problems.append(f"{path.name}:{line}: imports {name}")
        elif pure and name.split(".")[0] == "agent_cards" and any(
            name.split(".")[1:2] == [driver.removesuffix(".py")] for driver in DRIVERS
        ):
            problems.append(f"{path.name}:{line}: imports the driver {name}")
    if pure:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name) and node.func.id in IMPURE_CALLS:
                problems.append(f"{path.name}:{node.lineno}: calls {node.func.id}(...)")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in IMPURE_METHODS:
                problems.append(f"{path.name}:{node.lineno}: calls .{node.func.attr}(...)")
    return problems


def test_the_package_has_a_pure_core_and_the_listed_drivers() -> None:
    names = {p.name for p in modules()}
    assert {"mod.py", "engine.py", "rules.py", "delivery.py", "state.py", "branch.py", "texts.py"} <= names
    assert names - DRIVERS, "every module is a driver: the allowlist is too wide"


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.name)
def test_no_simulator_and_no_io_outside_the_drivers(path: Path) -> None:
    assert problems_of(path) == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("import subprocess\n", "imports subprocess"),
        ("from asyncio import subprocess\n", "imports asyncio.subprocess"),
        ("import asyncio.subprocess\n", "imports asyncio.subprocess"),
        ("from urllib.request import urlopen\n", "imports urllib.request"),
        ("import http.client\n", "imports http.client"),
        ("import socket\n", "imports socket"),
        ("from agent_cards_simulator import host\n", "imports agent_cards_simulator"),
        ("import agent_cards_conformance\n", "imports agent_cards_conformance"),
        ("def f():\n    from pathlib import Path\n", "imports pathlib"),
        ("def f(p):\n    p.write_text('x')\n", "calls .write_text(...)"),
        ("def f():\n    return open('x').read()\n", "calls open(...)"),
        ("from . import filestore\n", "imports the driver agent_cards.filestore"),
        ("from agent_cards.hook import main\n", "imports the driver agent_cards.hook"),
    ],
)
def test_the_checker_finds_what_it_looks_for(tmp_path: Path, source: str, problem: str) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(source, encoding="utf-8")
    assert any(problem in line for line in problems_of(sample)), problems_of(sample)


def test_drivers_may_do_io_but_never_import_the_simulator(tmp_path: Path) -> None:
    driver = tmp_path / "hook.py"
    driver.write_text("import subprocess\nopen('x')\n", encoding="utf-8")
    assert problems_of(driver) == []
    driver.write_text("import yaml\n", encoding="utf-8")
    assert problems_of(driver) == ["hook.py:1: imports yaml"]


def loaded_after(statement: str) -> list[str]:
    """Which watched modules a fresh interpreter loads for ``statement`` (beyond what its start-up loaded)."""
    watched = ("yaml", "agent_cards_simulator", "subprocess", "socket", "asyncio", "urllib", "http")
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        f"{statement}\n"
        f"print(json.dumps(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in {watched!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_importing_agent_cards_imports_neither_yaml_nor_the_simulator() -> None:
    assert loaded_after("import agent_cards") == []


def test_the_whole_mod_core_imports_neither_yaml_nor_the_simulator() -> None:
    core = sorted(p.stem for p in modules() if p.name not in DRIVERS and p.stem != "__init__")
    statement = "import agent_cards\nagent_cards.register\n" + "\n".join(f"import agent_cards.{m}" for m in core)
    assert loaded_after(statement) == []


def test_the_import_check_can_see_a_loaded_module() -> None:
    assert "yaml" in loaded_after("import yaml")
    assert "agent_cards_simulator.host.registry" in loaded_after("import agent_cards_simulator.host.registry")
