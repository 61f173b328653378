"""Mutation testing of the mod: small changes planted in ``agent_cards/``, and which of them the replay of
the scenarios, the fuzzer and the unit tests catch (``agent-cards mutate``)."""
