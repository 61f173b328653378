"""``hooks/agent-cards.js``, the plugin's module, generated from the mod's own ``register(on)``.

The template (``agent-cards.js.in``, beside this file) is the module's logic; this fills in what the mod
decides: its registrations with their matchers, the environment variables its pure modules read (the
engine wants every ``$.env.get`` name as a literal), the start-up program of the host (:data:`BOOT`), the
bridge's texts from the catalog, and the module's own limits.

    python -m agent_cards.bridge --js       print the module
    python -m agent_cards.bridge --check F  exit 1 when F is not the module generated
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cards.bridge.session import UNSURE, registrations
from agent_cards.texts import AGENT, PERSON

MIN_PYTHON = (3, 11)

# The module's own limits (milliseconds), written into the generated JavaScript.
STEP_LIMIT_MS = 5_000  # no answer to one fetch within this: the host hangs (the engine's own limit is 30 s)
AFTER_NEXT_LIMIT_MS = 25_000  # the same once next(e) ran: no fallback is left, so only a host past saving is let go
TICK_MS = 250  # how often the module counts its wait for an answer (a late tick counts as two)
READY_LIMIT_MS = 8_000  # a host that has not said hello by then did not start (within the hook's 10 s budget)
BUDGET_MARGIN_MS = 2_000  # what the wait for a hello leaves of the hook's budget, for the toast and next(e)
RESTART_MS = 5_000  # a host that died with workers counted is started again after this (the poll's period)
BUSY_LIMIT_MS = 150_000  # a dispatch pending this long: given up (the longest command the mod runs is 120 s)

# Run by the module with ``python -I -S -c BOOT``: valid in any Python, so that an old one says how old it is.
_OLD_CHECK = "if sys.version_info < ({}, {}):\n".format(*MIN_PYTHON)
BOOT = (
    "import sys, os, json\n"
    + _OLD_CHECK
    + "    v = '%d.%d.%d' % tuple(sys.version_info[:3])\n"
    "    sys.stdout.write(json.dumps({'fatal': 'old', 'version': v}) + '\\n')\n"
    "    sys.exit(3)\n"
    "sys.path.insert(0, os.environ.get('CLAUDE_PLUGIN_ROOT') or '.')\n"
    "from agent_cards.bridge import main\n"
    "sys.exit(main([]))\n"
)

# The mod's modules that read the machine themselves, not through ``$.env``: their reads are not the module's.
_DRIVERS = frozenset({"hook.py", "filestore.py", "cli.py"})


def env_names() -> list[str]:
    """Every name the mod reads with ``env.get("NAME")`` (its pure modules, read off their source)."""
    import ast  # here, not at the top: the host serving a session never needs it
    import pathlib

    names: set[str] = set()
    for path in sorted(pathlib.Path(__file__).parent.parent.glob("*.py")):
        if path.name in _DRIVERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "env"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.add(node.args[0].value)
    return sorted(names)


def _js(value: Any) -> str:
    """A JavaScript literal for a matcher value (JSON, a pattern as a RegExp literal)."""
    if hasattr(value, "pattern") and hasattr(value, "search"):
        return "/" + str(value.pattern).replace("/", "\\/") + "/"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))}: {_js(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return json.dumps(value)


def js_module() -> str:
    """``hooks/agent-cards.js``: the mod's registrations and env reads as the loader needs them, nothing else."""
    import pathlib

    template = (pathlib.Path(__file__).parent / "agent-cards.js.in").read_text(encoding="utf-8")
    lines = []
    for index, registration in enumerate(registrations()[0]):
        if registration.event == "session.start":
            continue  # the module's own session.start starts the host and hands it the event
        matcher = "" if registration.matcher is None else f"{_js(registration.matcher)}, "
        lines.append(f"  on({json.dumps(registration.event)}, {matcher}($, e, next) => dispatch($, {index}, e, next))")
    reads = [f"      {json.dumps(name)}: $.env.get({json.dumps(name)})," for name in env_names()]
    values = {
        "@ON@": "\n".join(lines),
        "@ENV@": "\n".join(reads),
        "@BOOT@": json.dumps(BOOT),
        "@PERSON@": json.dumps({k: v for k, v in PERSON.items() if k.startswith("bridge.")}, indent=2,
                               ensure_ascii=False),
        "@AGENT@": json.dumps({UNSURE: AGENT[UNSURE]}, indent=2, ensure_ascii=False),
        "@STEP_LIMIT_MS@": str(STEP_LIMIT_MS),
        "@AFTER_NEXT_LIMIT_MS@": str(AFTER_NEXT_LIMIT_MS),
        "@TICK_MS@": str(TICK_MS),
        "@READY_LIMIT_MS@": str(READY_LIMIT_MS),
        "@BUSY_LIMIT_MS@": str(BUSY_LIMIT_MS),
        "@BUDGET_MARGIN_MS@": str(BUDGET_MARGIN_MS),
        "@RESTART_MS@": str(RESTART_MS),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def is_generated(path: str) -> bool:
    """Whether the file at ``path`` is exactly the module :func:`js_module` writes."""
    with open(path, encoding="utf-8") as fh:
        return fh.read() == js_module()
