"""The conformance tier: each scenario replayed through the real Claude Code, compared with the fake host.

| module      | job                                                                                         |
|-------------|---------------------------------------------------------------------------------------------|
| ``plan``    | what of a scenario the real engine can show, and how (the concrete settings), or why not     |
| ``model``   | the scripted model of a run: each step's calls, keyed by the call ids they answer            |
| ``real``    | one scenario in the real interactive CLI: keys under tmux, the bridge, fake-lich in real time |
| ``compare`` | the two transcripts side by side: every lane, cause before effect, each event's time         |
| ``selftest``| planted fake-host infidelities judged against saved real transcripts: each must be caught     |
| ``command`` | ``agent-cards conform``: parallel runs, the report, the table in docs/conformance.md          |

It imports the bench (:mod:`simulator`) for the fake host's transcript and :mod:`claude_driver` for the
real CLI; neither imports it.
"""
