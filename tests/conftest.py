"""Every ``async def`` test runs on virtual time: pytest-asyncio makes each test's loop a VirtualEventLoop,
so a test's sleeps and timeouts cost nothing real and its timers fire in the order they were set.

Every hypothesis test runs under the ``loaded`` profile, loaded here before any test module is imported (a
``@settings`` made at import takes what it leaves unset from the profile then loaded)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest
from hypothesis import HealthCheck, settings

from agent_cards_simulator.clock import VirtualEventLoop

#: Tests share their machine with other work (CI's other steps, the mutation runner's jobs): a wall-clock limit
#: on one example, or on drawing examples, measures that machine's load, not the code, and turns a busy moment
#: into a red test. A test bounds how many examples it draws instead; hypothesis checks a deadline only once an
#: example has ended, so it never caught a hang either.
settings.register_profile("loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"virtual": VirtualEventLoop}
