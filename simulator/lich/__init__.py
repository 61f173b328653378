"""A fake ``lich``: the lich CLI contract as a deterministic model, and as a program.

argv, environment and a virtual clock go in; stdout, stderr, an exit code and a virtual duration come
out. Only the program does I/O; the model has no real time and no randomness. One job per module:

- :mod:`~agent_cards_simulator.lich.scripts`: what a scenario scripts of its lich (``LichScript``, ``OpenScript``,
  ``ListScript``, ``StopScript``, ``ReportScript``: the scenario format's own records);
- :mod:`~agent_cards_simulator.lich.world`: the roster over time (``LichWorld``: the sessions opened, their lives,
  the notes they bring, the naming schemes; its JSON form);
- :mod:`~agent_cards_simulator.lich.commands`: one function per command, argv in and ``LichRun`` out, and what every
  command shares (flags, usage errors, unknown commands, no lich running);
- :mod:`~agent_cards_simulator.lich.output`: what comes out (``LichRun``, ``Note``, a refusal) and the texts lich
  prints beyond one command's own lines (standard errors, Go's JSON, the Result prose, the notes);
- :mod:`agent_cards.record`: how the records above are made (no ``dataclasses`` on start-up);
- :mod:`~agent_cards_simulator.lich.goflags`: Go's ``flag`` parsing and ``strconv.Quote``;
- :mod:`~agent_cards_simulator.lich.program`: the ``fake-lich`` program (state in a directory, a lock, atomic writes);
- :mod:`~agent_cards_simulator.lich.install`: finding that program, and whether a process still runs.

The commands it answers are the ones something runs:

- ``open``, ``sessions``, ``close``, ``control``: the mod runs them (``open --kind claude --subagent …
  --json``, ``sessions --json``, ``close NAME``, ``control NAME abort``), so every scenario and the
  conformance tier (the real Claude Code with ``fake-lich`` as ``LICH_BIN``) do; the command-hook
  end-to-end test's model also runs ``close`` itself, through its Bash tool.
- ``help``: for a person running ``fake-lich`` by hand (``lich help``, ``lich <command> --help``), the
  way to learn what this fake answers; lich's unknown-command text points to it. It answers with no
  lich running too.

Not answered (lich's unknown-command text, exit 1): ``send``, ``wait``, ``reply``, ``whoami`` and
``version``. The mod never runs them, no scenario does (a scenario scripts lich; it runs only what the
mod runs), the conformance tier runs only what the mod runs, and no user of ``fake-lich`` needs them.
The plain-errand note still names ``wait``: that is lich's text, not a command this fake answers.

This package's ``__init__`` imports nothing: ``fake-lich`` loads it on every call.
"""
