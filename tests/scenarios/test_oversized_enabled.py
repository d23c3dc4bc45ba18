"""oversized-payload pads an event of a type the receiver is sent: a new user's endpoint,
enabled for 12 Stripe types without `customer.created`, was sent a padded customer.created
(Stripe sends an endpoint only the types it enabled)."""

from __future__ import annotations

import pytest

from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world.registry import new_world

CASES = {
    "stripe": ("customer.created", ["invoice.created", "invoice.paid", "charge.refunded"]),
    "shopify": ("customers/update", ["orders/create", "orders/paid", "orders/updated", "refunds/create"]),
    "mercadopago": ("merchant_order", ["payment.created", "payment.updated"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_padded_event_is_of_an_enabled_type_owing_nothing(name: str) -> None:
    profile = get_profile(name)
    quiet, enabled = CASES[name]
    everything = Context(profile=profile)
    plan = CATALOG["oversized-payload"].plan(everything, new_world(profile.world, 5))
    assert not isinstance(plan, NotApplicable)
    assert profile.provider_type(plan.phases[0].events[0].type) == quiet  # every type sent: the quiet one

    ctx = Context(profile=profile, enabled=frozenset(enabled))
    plan = CATALOG["oversized-payload"].plan(ctx, new_world(profile.world, 5))
    assert not isinstance(plan, NotApplicable), plan.reason
    (padded,) = plan.phases[0].events
    assert ctx.sends(padded.type) and ctx.key_of(padded) is None, padded.type
