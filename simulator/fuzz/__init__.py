"""``agent-cards fuzz``: generated scenarios replayed against the mod, every transcript checked against its
invariants; a violation is shrunk and written out as a scenario file that replays and fails for the same reason.

- :mod:`agent_cards_simulator.fuzz.writer`: a scenario as plain data, written as YAML the reader accepts (``Repeat``
  for long texts), and read back into a :class:`agent_cards_simulator.scenario.model.Scenario`;
- :mod:`agent_cards_simulator.fuzz.generate`: hypothesis strategies for host, lich and git behaviour;
- :mod:`agent_cards_simulator.fuzz.invariants`: what must hold on every transcript, each as a check and, where the
  format can say it, as an expectation the written scenario carries;
- :mod:`agent_cards_simulator.fuzz.command`: the command line.
"""

import os
from pathlib import Path


def example_folder() -> Path:
    """Where the fuzzer keeps hypothesis's example database: the user's cache, never the working folder
    (``$XDG_CACHE_HOME/agent-cards/fuzz-examples``, else ``~/.cache/agent-cards/fuzz-examples``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-cards" / "fuzz-examples"
