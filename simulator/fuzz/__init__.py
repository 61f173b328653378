"""``agent-cards fuzz``: generated scenarios replayed against the mod, every transcript checked against its
invariants; a violation is shrunk and written out as a scenario file that replays and fails for the same reason.

- :mod:`agent_cards_simulator.fuzz.writer`: a scenario as plain data, written as YAML the reader accepts (``Repeat``
  for long texts), and read back into a :class:`agent_cards_simulator.scenario.model.Scenario`;
- :mod:`agent_cards_simulator.fuzz.generate`: hypothesis strategies for host, lich and git behaviour;
- :mod:`agent_cards_simulator.fuzz.invariants`: what must hold on every transcript, each as a check and, where the
  format can say it, as an expectation the written scenario carries;
- :mod:`agent_cards_simulator.fuzz.oracle`: a model of the spec every replay is compared with;
- :mod:`agent_cards_simulator.fuzz.reached`: the named states a run must reach;
- :mod:`agent_cards_simulator.fuzz.storage`: the cache folders (example database, hypothesis's own files);
- :mod:`agent_cards_simulator.fuzz.command`: the command line.
"""

from agent_cards_simulator.fuzz.storage import example_folder

__all__ = ["example_folder"]
