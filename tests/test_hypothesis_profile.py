"""Every hypothesis test of the suite runs with no wall-clock limit (the ``loaded`` profile of conftest.py): one
that sets a deadline of its own, or is made before the profile is loaded, fails on a busy machine alone."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, is_hypothesis_test, settings

TESTS = Path(__file__).resolve().parent


def hypothesis_modules() -> Iterator[ModuleType]:
    """The test modules that use hypothesis, as pytest imports them (by their names, from this folder)."""
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "from hypothesis import" in text or "import hypothesis" in text:
            yield importlib.import_module(path.stem)


def hypothesis_tests(module: ModuleType) -> Iterator[tuple[str, Any]]:
    for name, value in vars(module).items():
        if inspect.isclass(value) and value.__module__ == module.__name__:
            yield from ((f"{name}.{inner}", test) for inner, test in vars(value).items() if is_hypothesis_test(test))
        elif is_hypothesis_test(value):
            yield name, value


def unlimited(used: settings) -> bool:
    """Nothing a test runs with depends on the machine's speed: no deadline, and drawing examples slowly is no
    failure."""
    return used.deadline is None and HealthCheck.too_slow in used.suppress_health_check


def settings_of(test: Any) -> settings:
    used: settings = test._hypothesis_internal_use_settings
    return used


def test_the_loaded_profile_is_the_default() -> None:
    loaded = settings.default
    assert loaded is not None and unlimited(loaded)


def test_every_hypothesis_test_runs_without_a_deadline() -> None:
    found = {f"{module.__name__}.{name}": unlimited(settings_of(test))
             for module in hypothesis_modules() for name, test in hypothesis_tests(module)}
    assert "test_mod_units.test_garbage_in_never_raises" in found  # the walk finds the tests it is meant to
    assert [name for name, free in found.items() if not free] == []


def test_a_test_with_a_limit_of_its_own_is_found() -> None:
    """The check above says red for a deadline set on one test, or a too_slow check put back."""
    from hypothesis import given
    from hypothesis import strategies as st

    @settings(deadline=200)
    @given(st.integers())
    def timed(number: int) -> None:
        pass

    @settings(suppress_health_check=[])
    @given(st.integers())
    def checked(number: int) -> None:
        pass

    @settings(max_examples=5)
    @given(st.integers())
    def counted(number: int) -> None:
        pass

    assert [unlimited(settings_of(test)) for test in (timed, checked, counted)] == [False, False, True]
