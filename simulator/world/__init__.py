"""The provider's truth: versioned worlds that emit events with business keys.

The billing world (`World`, Stripe's objects) and the repository world (`GitHubWorld`);
`new_world(profile.world, seed)` builds the one a profile sends from.
"""

from hookproof.simulator.world.github import GitHubWorld
from hookproof.simulator.world.github_lifecycle import GITHUB_EVENT_TYPES
from hookproof.simulator.world.lifecycle import (
    BUSINESS_KEYS,
    MONEY_PREFIXES,
    TRANSITIONS,
    business_key,
    check_transition,
)
from hookproof.simulator.world.registry import WORLDS, AnyWorld, emit_events, new_world, world_event_types
from hookproof.simulator.world.scripts import SCRIPTS, events_of_type
from hookproof.simulator.world.world import LOCALES, RESOURCES, World, referenced_ids

__all__ = [
    "AnyWorld",
    "BUSINESS_KEYS",
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
    "world_event_types",
]
