"""Every catalog scenario over the Mercado Pago and Paddle worlds: a plan of the provider's own
events, or not applicable with the reason; never a billing event sent under their names; and
`enabled_events` in the provider's own names narrows the plans instead of emptying them."""

from __future__ import annotations

import pytest

from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.scenarios.chaos import CHAOS_SCENARIOS, ChaosSettings
from hookproof.scenarios.world_plans import OWN_PLANS, STORY_SCENARIOS
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world, world_event_types

ALL = {**CATALOG, **{s.id: s for s in CHAOS_SCENARIOS}}
UNKNOWN = {"mercadopago": "subscription_preapproval", "paddle": "address.updated"}


@pytest.mark.parametrize("provider", ["mercadopago", "paddle"])
@pytest.mark.parametrize("scenario_id", sorted(ALL))
def test_each_scenario_sends_only_the_providers_events_or_says_why_not(provider: str, scenario_id: str) -> None:
    profile = get_profile(provider)
    ctx = Context(profile=profile, account="123456789", has_sink=True, chaos=ChaosSettings(), redelivery_window=20)
    plan = ALL[scenario_id].plan(ctx, new_world(provider, 7, account="123456789"))  # type: ignore[arg-type]
    if isinstance(plan, NotApplicable):
        assert plan.reason
        assert scenario_id not in {"duplicate-sequential", "reorder", "stale-after-newer",
                                   "distinct-events-same-object", "unknown-event-type", "oversized-payload"}
        return
    assert isinstance(plan, Plan)
    types = {e.type for phase in plan.phases for e in phase.events}
    assert types and types <= set(world_event_types(provider)) | {UNKNOWN[provider]}, types
    for phase in plan.phases:
        for event in phase.events:
            profile.envelope(event)  # renders: the provider's own notification, not a billing object


@pytest.mark.parametrize(("provider", "enabled"), [("mercadopago", "payment.created"),
                                                   ("paddle", "transaction.completed")])
def test_enabled_events_in_the_providers_names_keep_the_scenarios(provider: str, enabled: str) -> None:
    ctx = Context(profile=get_profile(provider), enabled=frozenset({enabled}))
    for scenario_id in ("duplicate-sequential", "sender-timeout", "mass-redelivery"):
        plan = CATALOG[scenario_id].plan(ctx, new_world(provider, 3))  # type: ignore[arg-type]
        assert isinstance(plan, Plan), (scenario_id, plan)
        assert {e.type for phase in plan.phases for e in phase.events} == {enabled}


def test_the_state_scenarios_follow_one_stateful_object() -> None:
    for provider in ("mercadopago", "paddle"):
        ctx = Context(profile=get_profile(provider))
        plan = CATALOG["reorder"].plan(ctx, new_world(provider, 5))  # type: ignore[arg-type]
        assert isinstance(plan, Plan)
        events = [e for phase in plan.phases for e in phase.events]
        assert len({e.object_id for e in events}) == 1 and all(e.stateful for e in events)
        assert "reorder" in STORY_SCENARIOS and "distinct-events-same-object" in OWN_PLANS
