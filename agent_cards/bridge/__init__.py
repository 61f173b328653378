"""The session host: ``agent_cards.mod``, unchanged, inside the real Claude Code mod engine.

The engine runs JavaScript modules only, with no Node in them. The plugin's module (``hooks/agent-cards.js``,
generated from the mod's own ``register(on)``: :mod:`~agent_cards.bridge.generate`) starts this host once
per session, at ``session.start``, with ``$.process.spawn``; every later event of the mod is carried to it
over a Unix socket with ``$.http.fetch``. Standard library only: the plugin runs it with ``python -I -S``.

Processes::

    Claude Code ──(module: hooks/agent-cards.js)── $.http.fetch over a Unix socket ──▶ this host
         ▲                                                                               │
         └──── its stdout, read piece by piece: hello, state, toasts, redraws ◀─────────┘

Protocol (one JSON object per ``POST /step``, ``authorization: Bearer <token>``):

- ``{"op": "event", "id", "hook", "e", "origin", "event", "cancel": [ids]}`` runs the mod's hook number
  ``hook`` (the order of ``register``) on ``e``;
- ``{"op": "resume", "id", "value"}`` or ``{"op": "resume", "id", "error"}`` hands back what ``next(e)``
  gave beneath;
- ``{"op": "poll", "id"}`` asks again after ``pending``;
- ``{"op": "stats"}``: Python's own CPU time so far (``cpuMs``) and the steps served (the bench).

Every answer comes within a second: ``{"kind": "done", "value"}``, ``{"kind": "next", "e"}`` (run ``next``
with this ``e`` and resume), ``{"kind": "failed", "error"}`` or ``{"kind": "pending", "busy": [program,
...]}`` (still working; ``busy`` names the commands running for it), each with the ``effects`` (toasts)
raised meanwhile. ``cancel`` lists dispatches the engine gave up on (Esc, a "no"): their ``next`` raises
and their signal reads aborted, but a command already running is left to finish, so that what it did (a
worker lich opened) is still known to the mod.

stdout, one JSON object a line: ``{"hello": 1, "socket", "token", "python", "version", "pid", "texts"}`` once
the mod is loaded and the socket listens (``texts``: the bridge's agent texts in the session's language);
``{"state": …}`` after each change of the mod's state (the module keeps the last one and hands it to a host
it starts again); ``{"toast": text}`` and ``{"invalidate": event}`` raised outside a dispatch (a timer).
``{"fatal": reason}`` when it cannot serve.

The package, by job:

- :mod:`~agent_cards.bridge.host`: the engine's Protocols served to the mod (``$``: env, process, ui,
  clock; ``next`` and its signal); the mod's commands run here, in a session of their own;
- :mod:`~agent_cards.bridge.dispatch`: one event the module waits on;
- :mod:`~agent_cards.bridge.session`: the mod's hooks, state, timers and dispatches, served step by step;
- :mod:`~agent_cards.bridge.server`: the socket (HTTP/1.1, ``POST /step``, the token);
- :mod:`~agent_cards.bridge.lifetime`: the private folder, pruning, the parent, the exit;
- :mod:`~agent_cards.bridge.journal`: the flight recorder (each event, answer, run, toast and footer line of
  the session, as JSON lines; ``agent-cards report`` makes a scenario of it);
- :mod:`~agent_cards.bridge.service`: from the boot object to the exit (:func:`main`);
- :mod:`~agent_cards.bridge.generate`: ``hooks/agent-cards.js`` and the host's start-up program (:data:`BOOT`).

    python -m agent_cards.bridge --js       print the module this package generates
    python -m agent_cards.bridge --check F  exit 1 when F is not the module this package generates
"""

from agent_cards.bridge.generate import BOOT, js_module
from agent_cards.bridge.service import main
from agent_cards.bridge.session import registrations

__all__ = ["BOOT", "js_module", "main", "registrations"]
