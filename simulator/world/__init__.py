"""The provider's truth: versioned worlds that emit events with business keys.

The billing world (`World`, Stripe's objects) and the repository world (`GitHubWorld`);
`new_world(profile.world, seed)` builds the one a profile sends from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "AnyWorld": "hookproof.simulator.world.registry",
    "BUSINESS_KEYS": "hookproof.simulator.world.lifecycle",
    "GITHUB_CHECK_TYPES": "hookproof.simulator.world.github_lifecycle",
    "GITHUB_EVENT_TYPES": "hookproof.simulator.world.github_lifecycle",
    "GitHubWorld": "hookproof.simulator.world.github",
    "LOCALES": "hookproof.simulator.world.world",
    "MONEY_PREFIXES": "hookproof.simulator.world.lifecycle",
    "RESOURCES": "hookproof.simulator.world.world",
    "SCRIPTS": "hookproof.simulator.world.scripts",
    "TRANSITIONS": "hookproof.simulator.world.lifecycle",
    "WORLDS": "hookproof.simulator.world.registry",
    "World": "hookproof.simulator.world.world",
    "business_key": "hookproof.simulator.world.lifecycle",
    "check_transition": "hookproof.simulator.world.lifecycle",
    "emit_events": "hookproof.simulator.world.registry",
    "events_of_type": "hookproof.simulator.world.scripts",
    "new_world": "hookproof.simulator.world.registry",
    "referenced_ids": "hookproof.simulator.world.world",
    "story_start_us": "hookproof.simulator.world.registry",
    "world_event_types": "hookproof.simulator.world.registry",
}


if TYPE_CHECKING:
    from hookproof.simulator.world.github import GitHubWorld
    from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES
    from hookproof.simulator.world.lifecycle import (
        BUSINESS_KEYS,
        MONEY_PREFIXES,
        TRANSITIONS,
        business_key,
        check_transition,
    )
    from hookproof.simulator.world.registry import (
        WORLDS,
        AnyWorld,
        emit_events,
        new_world,
        story_start_us,
        world_event_types,
    )
    from hookproof.simulator.world.scripts import SCRIPTS, events_of_type
    from hookproof.simulator.world.world import LOCALES, RESOURCES, World, referenced_ids

__all__ = [
    "AnyWorld",
    "BUSINESS_KEYS",
    "GITHUB_CHECK_TYPES",
    "GITHUB_EVENT_TYPES",
    "GitHubWorld",
    "LOCALES",
    "MONEY_PREFIXES",
    "RESOURCES",
    "SCRIPTS",
    "TRANSITIONS",
    "WORLDS",
    "World",
    "business_key",
    "check_transition",
    "emit_events",
    "events_of_type",
    "new_world",
    "referenced_ids",
    "story_start_us",
    "world_event_types",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
