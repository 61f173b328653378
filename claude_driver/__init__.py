"""The real Claude Code, driven offline: for the end-to-end tier, CI and conformance runs.

| module        | job                                                                          |
|---------------|------------------------------------------------------------------------------|
| ``install``   | the pinned CLI, installed once from npm into a cache; the guarded environment |
| ``sandbox``   | a scratch HOME and project (a git repo) per run, and cleaning up after the CLI |
| ``runs``      | one-shot runs: ``claude -p``, ``claude plugin validate``; a one-module plugin  |
| ``tui``       | the interactive screen under tmux: type, press keys, wait on what it shows    |
| ``model_api`` | the scripted Messages API on 127.0.0.1 the CLI talks to instead of a model    |
| ``lich_log``  | ``fake-lich`` behind a wrapper that logs every argv it is given               |
| ``waits``     | a condition looked at until it holds or a deadline passes: what tests wait on |

``python -m agent_cards_claude_driver validate DIR`` validates a plugin with the pinned CLI. Nothing here is part
of the mod; the simulator does not import it.
"""
