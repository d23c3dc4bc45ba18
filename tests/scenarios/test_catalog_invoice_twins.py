"""Every billing scenario sends a paid invoice's ``invoice.paid`` and ``invoice.payment_succeeded`` together.

Stripe sends ``invoice.payment_succeeded`` right after ``invoice.paid`` for every invoice paid by a
payment, with the same invoice (docs.stripe.com/invoicing/integration, "Handle payment events"), to
an endpoint whose ``enabled_events`` lists it; both owe the invoice's one ``renewal:{invoice}``. A
plan sending one alone would owe a receiver acting on the other a renewal it never got
(`catalog.with_twins`). An endpoint not listing it is sent the plans it always was.
"""

from __future__ import annotations

import pytest

from hookproof.scenarios.catalog import CATALOG, Context, Plan, with_twins
from hookproof.simulator.faults import INVALIDATING
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World

SUCCEEDED = "invoice.payment_succeeded"
LISTING = get_profile("stripe", subscribed=[SUCCEEDED])
#: The checkout modes the stories may open sessions in (a shop's `checkout_modes`): each changes
#: which events come first, and so which a scenario taking the first ones sends.
MODES = [frozenset({"payment", "subscription"}), frozenset({"payment"}), frozenset({"subscription"}), frozenset()]


def _valid_renewals(plan: Plan) -> tuple[dict[str, int], dict[str, int]]:
    """The renewal keys of the plan's ``invoice.paid`` and ``invoice.payment_succeeded`` events
    sent validly (phases of requests to refuse left out), each with how many times it is sent."""
    paid: dict[str, int] = {}
    succeeded: dict[str, int] = {}
    for phase in plan.phases:
        if phase.plan.mutate == "all" and INVALIDATING.intersection(phase.plan.mutations):
            continue
        for e in phase.events:
            if e.type in ("invoice.paid", SUCCEEDED) and e.business_key:
                into = paid if e.type == "invoice.paid" else succeeded
                into[e.business_key] = into.get(e.business_key, 0) + 1
    return paid, succeeded


@pytest.mark.parametrize("modes", MODES, ids=lambda m: "+".join(sorted(m)) or "none")
def test_each_scenario_sends_a_paid_invoice_s_two_events_together(modes: frozenset[str]) -> None:
    ctx = Context(profile=LISTING, enabled=frozenset(LISTING.event_types()), checkout_modes=modes,
                  state_kinds=frozenset({"subscription"}))
    planned = 0
    for scenario_id, scenario in CATALOG.items():
        plan = scenario.plan(ctx, World(5))
        if not isinstance(plan, Plan):
            continue
        paid, succeeded = _valid_renewals(plan)
        assert set(paid) == set(succeeded), (scenario_id, paid, succeeded)
        first = {e.id for phase in plan.phases for e in phase.events}
        assert len(first) == len({(e.id, e.type) for phase in plan.phases for e in phase.events})
        planned += bool(paid)
    assert planned >= 10


def test_a_plan_missing_the_twin_gets_it_right_after_its_invoice_paid() -> None:
    ctx = Context(profile=LISTING, enabled=frozenset(LISTING.event_types()), checkout_modes=frozenset())
    world = World(5)
    world.sent_only(ctx.sends)  # as `Scenario.plan` tells it: it emits invoice.payment_succeeded
    plan = CATALOG["stale-failure-after-success"].build(ctx, world)  # the bare plan, before with_twins
    assert isinstance(plan, Plan)
    assert [e.type for e in plan.phases[0].events if e.type.startswith("invoice.")] == ["invoice.paid"] * 2
    twinned = with_twins(plan, ctx)
    assert isinstance(twinned, Plan)
    types = [e.type for e in twinned.phases[0].events]
    assert [t for t in types if t.startswith("invoice.")] == ["invoice.paid", SUCCEEDED] * 2
    for i, t in enumerate(types):
        if t == SUCCEEDED:
            before, after = twinned.phases[0].events[i - 1], twinned.phases[0].events[i]
            assert before.type == "invoice.paid" and before.object_id == after.object_id
            assert before.business_key == after.business_key
    assert twinned.phases[1] is plan.phases[1]  # the failure, last, as it was


def test_an_endpoint_not_listing_it_gets_its_plans_unchanged() -> None:
    ctx = Context(profile=get_profile("stripe"))
    for scenario_id in ("stale-failure-after-success", "duplicate-concurrent", "transport-fields-change"):
        plan = CATALOG[scenario_id].build(ctx, World(5))
        assert with_twins(plan, ctx) is plan, scenario_id


@pytest.mark.parametrize("events", [1, 4, 5], ids=lambda n: f"events={n}")
@pytest.mark.parametrize("modes", MODES, ids=lambda m: "+".join(sorted(m)) or "none")
def test_each_chaos_scenario_too_and_the_kill_counts_the_twins(modes: frozenset[str], events: int) -> None:
    """``crash-after-ack`` kills the receiver after as many 2xx as its burst sends, twins counted
    (a burst of ``2 * events`` effectful events may end on an ``invoice.paid``: ``events`` 1 and 5
    without checkout, 1 with subscriptions only)."""
    from types import SimpleNamespace

    from hookproof.scenarios.chaos import CHAOS_CATALOG, ChaosSettings

    ctx = Context(profile=LISTING, enabled=frozenset(LISTING.event_types()), checkout_modes=modes,
                  chaos=ChaosSettings(events=events))
    for scenario_id, scenario in CHAOS_CATALOG.items():
        plan = scenario.plan(ctx, World(5))
        assert isinstance(plan, Plan), scenario_id
        paid, succeeded = _valid_renewals(plan)
        assert set(paid) == set(succeeded), (scenario_id, paid, succeeded)
    plan = CHAOS_CATALOG["crash-after-ack"].plan(ctx, World(5))
    assert isinstance(plan, Plan)
    burst = plan.phases[1]
    kills: list[int] = []
    nemesis = SimpleNamespace(kill_after_ack=lambda count, restart: kills.append(count))
    assert burst.before is not None
    burst.before(SimpleNamespace(nemesis=nemesis))  # type: ignore[arg-type]
    assert kills == [len(burst.events)]
