"""Every catalog scenario over the Mercado Pago and Paddle worlds: a plan of the provider's own
events, or not applicable with the reason; never a billing event sent under their names; and
`enabled_events` in the provider's own names narrows the plans instead of emptying them."""

from __future__ import annotations

from collections import Counter

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
                                   "distinct-events-same-object", "unknown-event-type"}
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


def test_a_kind_the_observer_reads_beside_the_stateful_one_is_walked_too() -> None:
    """An observer reading Paddle's subscriptions and transactions: `reorder` sends the
    subscription's life and its transactions' (before, the transactions' were left out whenever
    the subscriptions' were read), and `stale-after-newer` delivers the subscription's past-due
    update last, beside the first transaction's. Read alone, each kind is walked as before."""
    def plan(scenario: str, kinds: frozenset[str]) -> list[list[tuple[str, str | None]]]:
        made = CATALOG[scenario].plan(Context(profile=get_profile("paddle"), state_kinds=kinds),
                                      new_world("paddle", 5))  # type: ignore[arg-type]
        assert isinstance(made, Plan), made
        return [[(e.object_type, e.status) for e in phase.events] for phase in made.phases]

    both = frozenset({"subscription", "transaction"})
    (reordered,) = plan("reorder", both)
    assert {kind for kind, _ in reordered} == {"subscription", "transaction"}
    alone = plan("reorder", frozenset({"subscription"}))[0] + plan("reorder", frozenset({"transaction"}))[0]
    assert Counter(reordered) == Counter(alone)  # each kind's whole walk, in the story's order
    assert plan("stale-after-newer", both)[1] == [("subscription", "past_due"), ("transaction", "past_due")]
    assert plan("stale-after-newer", frozenset({"subscription"}))[1] == [("subscription", "past_due")]
    assert plan("stale-after-newer", frozenset({"transaction"}))[1] == [("transaction", "past_due")]


#: The scenarios that send a story's every effectful event and what goes with it: scenario ->
#: (copies of each event, the phases' orders).
WHOLE_STORY = {"duplicate-sequential": (3, ["emitted"]), "thin-event": (1, ["reversed"]),
               "mass-redelivery": (1, ["emitted", "shuffled"])}


@pytest.mark.parametrize("scenario_id", sorted(WHOLE_STORY))
def test_a_checkout_pro_merchant_order_goes_with_its_payment(scenario_id: str) -> None:
    """The card payment of the effect story paid a Checkout Pro merchant order: its
    ``merchant_order`` notifications (opened, closed by the approved payment, updated by its
    refund) are sent with the payment's events, after them, duplicated and reordered as they are."""
    ctx = Context(profile=get_profile("mercadopago"), account="123456789")
    world = new_world("mercadopago", 7, account="123456789")
    plan = CATALOG[scenario_id].plan(ctx, world)  # type: ignore[arg-type]
    assert isinstance(plan, Plan)
    copies, orders = WHOLE_STORY[scenario_id]
    assert [phase.plan.order for phase in plan.phases] == orders
    assert all(phase.plan.copies == copies for phase in plan.phases)
    (order,) = world.objects("merchant_order")  # type: ignore[attr-defined]
    paid = world.get(order)["payments"][0]["id"]  # type: ignore[attr-defined]
    for phase in plan.phases:
        sent = [e for e in phase.events if e.type == "merchant_order"]
        assert [(e.object_id, e.version, e.object["status"]) for e in sent] == [
            (order, 1, "opened"), (order, 2, "closed"), (order, 3, "closed")]
        license_at = next(i for i, e in enumerate(phase.events) if e.business_key == f"license:{paid}")
        assert license_at < phase.events.index(sent[0])  # effectful events first


def test_a_merchant_order_goes_with_nothing_when_its_payment_owes_nothing() -> None:
    """With only ``payment.updated`` enabled, the card payment's approval (``payment.created``)
    is not sent: the order still goes with the payment's refund, which is."""
    ctx = Context(profile=get_profile("mercadopago"), enabled=frozenset({"payment.updated", "merchant_order"}))
    plan = CATALOG["duplicate-sequential"].plan(ctx, new_world("mercadopago", 7))  # type: ignore[arg-type]
    assert isinstance(plan, Plan)
    types = [e.type for phase in plan.phases for e in phase.events]
    assert types.count("merchant_order") == 3 and "payment.created" not in types
    ctx = Context(profile=get_profile("mercadopago"), enabled=frozenset({"payment.created"}))
    plan = CATALOG["duplicate-sequential"].plan(ctx, new_world("mercadopago", 7))  # type: ignore[arg-type]
    assert isinstance(plan, Plan) and "merchant_order" not in {e.type for ph in plan.phases for e in ph.events}


@pytest.mark.parametrize(("provider", "enabled", "unknown", "said"), [
    ("paddle", "transaction.completed", "address.updated",
     "Paddle sends a notification destination only the event types it is subscribed to"),
    ("shopify", "orders/paid", "products/update",
     "Shopify sends an app only the topics it has a webhook subscription for"),
    ("mercadopago", "payment.updated", "subscription_preapproval",
     "Mercado Pago sends an application's Webhooks only for the events registered in Your integrations"),
])
def test_an_unhandled_type_is_not_sent_to_a_listed_subscription(provider: str, enabled: str, unknown: str,
                                                                 said: str) -> None:
    """Paddle's notification destinations (developer.paddle.com/api-reference/notification-settings),
    Mercado Pago's Webhooks registered in Your integrations and Shopify's webhook subscriptions
    (shopify.dev/docs/apps/build/webhooks/subscribe) are per event
    type, as a Stripe endpoint's enabled_events are: with `target.enabled_events` listed,
    `unknown-event-type` does not apply (a 4xx to a type the provider never sends is no finding),
    the reason naming the provider's rule and the setting; without it the unknown type is sent,
    then an effectful event."""
    profile = get_profile(provider)
    listed = CATALOG["unknown-event-type"].plan(Context(profile=profile, enabled=frozenset({enabled})),
                                                new_world(provider, 3))  # type: ignore[arg-type]
    assert isinstance(listed, NotApplicable)
    assert listed.reason.startswith(said) and "target.enabled_events" in listed.reason, listed.reason
    assert "leave enabled_events out to test an unhandled type" in listed.reason
    every = CATALOG["unknown-event-type"].plan(Context(profile=profile), new_world(provider, 3))  # type: ignore[arg-type]
    assert isinstance(every, Plan)
    assert [e.type for e in every.phases[0].events] == [unknown] and every.phases[1].events



def test_distinct_events_names_the_one_paddle_story_with_two_effects_of_one_object() -> None:
    """A Paddle endpoint enabled for ``transaction.completed`` and ``adjustment.updated`` (each owes one
    effect per object: ``fulfil:{txn}``, ``refund:{adj}``) was told it is sent no effectful events, blaming
    its enabled_events and keys; the Paddle world's only object with two effects of its own is a
    subscription past due in two periods (``dunning:{sub}:{period}``, `PaddleWorld.distinct_story`), and
    the reason now says so, and that enabled_events leaves them out; sent them, made effectless by the
    team's keys, the keys alone are named (as before)."""
    from hookproof.scenarios.business_keys import KeyMapping

    profile = get_profile("paddle")
    head = "in the Paddle Billing world only subscription.past_due events give one object two effects of its own"
    enabled = frozenset({"transaction.completed", "adjustment.updated", "subscription.created"})
    for keys in (None, KeyMapping({}, profile)):
        plan = CATALOG["distinct-events-same-object"].plan(Context(profile=profile, enabled=enabled, keys=keys),
                                                           new_world("paddle", 3))  # type: ignore[arg-type]
        assert isinstance(plan, NotApplicable)
        assert plan.reason == f"{head}, and the receiver is sent none (enabled_events)"
    keyless = KeyMapping({"subscription.past_due": None}, profile)
    plan = CATALOG["distinct-events-same-object"].plan(Context(profile=profile, keys=keyless),
                                                       new_world("paddle", 3))  # type: ignore[arg-type]
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("the team's business keys make none of this scenario's events effectful "
                           "(business_keys, builtin_keys): no effectful events to send")
    sent = CATALOG["distinct-events-same-object"].plan(
        Context(profile=profile, enabled=enabled | {"subscription.past_due"}), new_world("paddle", 3))  # type: ignore[arg-type]
    assert isinstance(sent, Plan)
    events = [e for phase in sent.phases for e in phase.events]
    assert [e.type for e in events] == ["subscription.past_due"] * 2 and len({e.object_id for e in events}) == 1
    assert len({e.business_key for e in events}) == 2


def test_distinct_events_names_the_types_left_out_and_those_made_effectless() -> None:
    """The GitHub world's object with two effects of its own is told by two types: an endpoint sent
    one of them, whose team keys make it effectless, hears which type enabled_events leaves out and
    which one the keys make effectless."""
    from hookproof.scenarios.business_keys import KeyMapping

    profile = get_profile("github")
    keys = KeyMapping({"issue_comment.created": None}, profile)
    plan = CATALOG["distinct-events-same-object"].plan(
        Context(profile=profile, keys=keys, enabled=frozenset({"issue_comment.created", "issues.opened"})),
        new_world(profile.world, 2))  # type: ignore[arg-type]
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("in the GitHub world only issue_comment.created, pull_request.synchronize events give one "
                           "object two effects of its own: the receiver is sent no pull_request.synchronize "
                           "(enabled_events), and the team's business keys make its issue_comment.created effectless "
                           "(business_keys, builtin_keys)")


def test_provider_api_transient_says_a_ci_app_s_effects_are_on_objects_the_api_does_not_serve() -> None:
    """A CI App sent only the checks owes jobs on check suites and runs, which GitHub's REST API
    as hookproof serves it (issues, pull requests) never fetches: the reason names its effectful
    types and the served kinds, not 'sent no effectful events'."""
    from hookproof.simulator.world import GITHUB_CHECK_TYPES

    profile = get_profile("github", subscribed=list(GITHUB_CHECK_TYPES))
    world = new_world(profile.world, 2)
    world.sent_only(lambda t: t in GITHUB_CHECK_TYPES)
    plan = CATALOG["provider-api-transient"].plan(
        Context(profile=profile, enabled=frozenset(GITHUB_CHECK_TYPES), fetches_state=True), world)  # type: ignore[arg-type]
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("the receiver's effectful events (check_suite.requested, check_suite.rerequested, "
                           "check_run.rerequested, check_run.requested_action) are about objects the provider API "
                           "does not serve: it serves issue, pull_request, and the receiver is sent no effectful "
                           "event about one (enabled_events), so no fetch of it can fail")


def test_distinct_events_sends_a_ci_app_its_suite_requested_and_re_run_twice() -> None:
    """A CI App sent only the checks: one check suite owes a job when requested and one per re-run
    (``suite:``, two ``rerun:``, one suite id), so the scenario sends those, not an n/a reason
    naming the comments' and pull requests' types alone."""
    from hookproof.simulator.world import GITHUB_CHECK_TYPES

    profile = get_profile("github", subscribed=list(GITHUB_CHECK_TYPES))
    world = new_world(profile.world, 2)
    world.sent_only(lambda t: t in GITHUB_CHECK_TYPES)
    plan = CATALOG["distinct-events-same-object"].plan(
        Context(profile=profile, enabled=frozenset(GITHUB_CHECK_TYPES)), world)  # type: ignore[arg-type]
    assert isinstance(plan, Plan), plan
    events = [e for phase in plan.phases for e in phase.events]
    assert [e.type for e in events] == ["check_suite.requested", "check_suite.rerequested", "check_suite.rerequested"]
    assert len({e.object_id for e in events}) == 1
    assert [str(e.business_key).split(":")[0] for e in events] == ["suite", "rerun", "rerun"]
    assert len({e.business_key for e in events}) == 3
