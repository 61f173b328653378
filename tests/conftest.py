"""Every ``async def`` test runs on virtual time: pytest-asyncio makes each test's loop a VirtualEventLoop,
so a test's sleeps and timeouts cost nothing real and its timers fire in the order they were set."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest

from agent_cards_simulator.clock import VirtualEventLoop


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"virtual": VirtualEventLoop}
