"""The provider's truth: a versioned billing world that emits events with business keys."""

from hookproof.simulator.world.lifecycle import BUSINESS_KEYS, MONEY_PREFIXES, TRANSITIONS, business_key, check_transition
from hookproof.simulator.world.scripts import SCRIPTS, events_of_type
from hookproof.simulator.world.world import LOCALES, RESOURCES, World, referenced_ids

__all__ = [
    "BUSINESS_KEYS",
    "LOCALES",
    "MONEY_PREFIXES",
    "RESOURCES",
    "SCRIPTS",
    "TRANSITIONS",
    "World",
    "business_key",
    "check_transition",
    "events_of_type",
    "referenced_ids",
]
