"""Registration: who hooked which event, with which matcher, in what order (measured on 2.1.328).

- Tiers run in this order: prepend, user (the plugin), inline, append, builtin; the native comes last.
- Within one plugin, hooks run in registration order, matched or not.
- One plugin registering two matcher-less hooks on one event is refused at load (:class:`LoadError`).
- Matchers are the engine's (:func:`agent_cards.host_contract.matches`, which the bridge uses as well): a
  scalar compares strictly (``5`` is not ``"5"``, ``True`` is not ``1``); a ``re.Pattern`` searches the value
  as text; a list is "one of"; a mapping is a partial match.
"""

from __future__ import annotations

from typing import Any

from agent_cards.engine import Event, Hook, Matcher
from agent_cards.host_contract import matches
from agent_cards.record import Value

TIERS = ("prepend", "user", "inline", "append", "builtin")


class LoadError(Exception):
    """A hooks module did not load; the message is the engine's."""


class Registration(Value):
    plugin: str
    tier: str
    event: str
    matcher: Matcher | None
    hook: Hook
    order: int


class Registry:
    """Every hook of every loaded module. ``on_for(plugin)`` is the ``on`` a module's register gets."""

    def __init__(self) -> None:
        self._hooks: list[Registration] = []
        self._count = 0

    def on_for(self, plugin: str, tier: str = "user") -> _On:
        if tier not in TIERS:
            raise ValueError(f"unknown tier {tier!r}; tiers are {', '.join(TIERS)}")
        return _On(self, plugin, tier)

    def add(self, plugin: str, tier: str, event: str, matcher: Matcher | None, hook: Hook) -> None:
        if matcher is None and any(
            r.plugin == plugin and r.event == event and r.matcher is None for r in self._hooks
        ):
            raise LoadError(
                f'{plugin}: hooks module did not load: on("{event}") is registered twice without a matcher'
            )
        self._count += 1
        self._hooks.append(Registration(plugin, tier, event, matcher, hook, self._count))

    def drop_plugin(self, plugin: str) -> None:
        self._hooks = [r for r in self._hooks if r.plugin != plugin]

    def chain(self, event: str, e: Event) -> list[Registration]:
        """The hooks that run for ``e``, top first."""
        hooked = [r for r in self._hooks if r.event == event and (r.matcher is None or matches(r.matcher, e))]
        return sorted(hooked, key=lambda r: (TIERS.index(r.tier), r.order))

    def hooks(self, event: str) -> bool:
        return any(r.event == event for r in self._hooks)


class _On:
    def __init__(self, registry: Registry, plugin: str, tier: str) -> None:
        self._registry, self._plugin, self._tier = registry, plugin, tier

    def __call__(self, event: str, matcher_or_hook: Any, hook: Hook | None = None, /) -> None:
        if hook is None:
            self._registry.add(self._plugin, self._tier, event, None, matcher_or_hook)
        else:
            self._registry.add(self._plugin, self._tier, event, matcher_or_hook, hook)
