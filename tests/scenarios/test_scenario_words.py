"""A scenario whose story names objects and states says them in the provider's words.

`stale-after-newer` delivers one object's earlier event after its later ones; its title and
description name that object, that event and its state as each provider world has them:
the event the plan really delivers last, with the status it really carries (Shopify's
``financial_status``, GitHub's issue ``state``, Paddle's and Mercado Pago's ``status``).
"""

from __future__ import annotations

import pytest

from hookproof.scenarios.catalog import AFTER_REFUSAL, CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world

#: profile -> what its description must say: the object's noun, the late event's type and status.
WORDS = {
    "stripe": ("subscription", None, "past_due"),
    "standard-webhooks": ("subscription", None, "past_due"),
    "shopify": ("order", "orders/create", "pending"),
    "github": ("issue", "issues.opened", "open"),
    "paddle": ("subscription", "subscription.updated", "past_due"),  # the status change's own update
    "mercadopago": ("payment", "payment.created", "pending"),
}


@pytest.mark.parametrize("profile_name", sorted(WORDS))
def test_stale_after_newer_names_the_late_event_as_the_provider_does(profile_name: str) -> None:
    profile = get_profile(profile_name)
    scenario = CATALOG["stale-after-newer"].for_world(profile.world)
    plan = scenario.plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan)
    late, *tied = plan.phases[-1].events  # billing: then a second subscription's same-second recovery
    # (Shopify: a second order's partial refund, of the same updated_at second as its cancellation;
    # GitHub: a second issue's comment, of the same updated_at second as its close, and a pull
    # request's synchronize, of the same second as its merge)
    assert [e.status for e in tied] == {"billing": ["active"], "shopify": ["partially_refunded"],
                                        "github": ["open", "open"]}.get(profile.world, [])
    if profile.world == "github":
        assert [e.type for e in tied] == ["issue_comment.created", "pull_request.synchronize"]
        for (kind, ends), late_one in zip((("issue", "issues.closed"), ("pull_request", "pull_request.closed")), tied):
            (closed,) = [e for e in plan.phases[0].events if e.object_id == late_one.object_id and e.type == ends]
            assert closed.extra["payload"][kind]["updated_at"] == late_one.extra["payload"][kind]["updated_at"]
    noun, event_type, status = WORDS[profile_name]
    assert late.status == status and (event_type is None or late.type == event_type)
    assert noun in scenario.description.lower() and status in scenario.description
    if event_type is not None:
        assert event_type in scenario.description
    assert "past due" not in scenario.description  # a status is named as the provider spells it


def test_shopify_words_are_shopify_s() -> None:
    scenario = CATALOG["stale-after-newer"].for_world("shopify")
    assert "financial_status" in scenario.description and "subscription" not in scenario.description
    assert scenario.id == "stale-after-newer" and scenario.checks == CATALOG["stale-after-newer"].checks


def test_a_user_catalog_and_an_unworded_scenario_keep_neutral_or_own_words() -> None:
    catalog = CATALOG["stale-after-newer"].for_world("catalog:0123abcd")
    assert "subscription" not in catalog.description and "object" in catalog.description
    assert CATALOG["reorder"].for_world("shopify") is CATALOG["reorder"]
    assert CATALOG["stale-after-newer"].for_world("billing") is CATALOG["stale-after-newer"]


def test_a_run_reports_the_scenario_in_its_profile_s_words() -> None:
    """The runner reports each scenario with its profile's words (an in-process receiver
    answering 200 to everything, observed as showing nothing)."""
    import time

    from hookproof.scenarios.observations import Observation
    from hookproof.scenarios.observers import observation_from_data
    from hookproof.scenarios.runner import Runner
    from hookproof.simulator.delivery import History, Target

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def observe() -> Observation:
        return observation_from_data({"effects": [], "states": []}, time.time(), observer="python")

    runner = Runner(target=Target(app=app), profile=get_profile("shopify"), secrets=("shpss_words_test_secret",),
                    observe=observe, history=History(), seed=3, settle_window_s=0.05, settle_interval_s=0.01)
    report = runner.run(["stale-after-newer"])
    (scenario,) = report.scenarios
    worded = CATALOG["stale-after-newer"].for_world("shopify")
    assert (scenario.title, scenario.description) == (worded.title, worded.description)


@pytest.mark.parametrize(("profile_name", "said"), [
    ("stripe", "Stripe would keep retrying it for up to 3 days"),
    ("shopify", "Shopify would keep retrying it, 8 times over 4 hours"),
    ("github", "GitHub never retries: it stays lost unless redelivered by hand"),
])
def test_what_the_provider_does_with_a_refused_event_is_its_own(profile_name: str, said: str) -> None:
    """A GitHub App's receiver was told a 4xx "makes the provider retry it for days"; GitHub
    never retries. Each scenario saying what follows a refusal says it in the profile's words."""
    profile = get_profile(profile_name)
    refusing = [s for s in CATALOG.values() if AFTER_REFUSAL in s.refusal_template]
    assert {s.id for s in refusing} == {"duplicate-sequential", "reserialized-retry", "reserialized-body",
                                        "unknown-event-type"}
    for scenario in refusing:
        worded = scenario.for_world(profile.world, profile.after_refusal())
        assert said in worded.description and "for days on most" not in worded.description, worded.description
        assert "for days on most providers' schedules" in scenario.description  # no profile: neutral
        assert worded.checks == scenario.checks


def test_a_retry_of_a_provider_signing_no_timestamp_is_not_called_a_new_signature() -> None:
    from hookproof.simulator.delivery.mutations import build_attempt
    from hookproof.simulator.faults import Mutation
    from hookproof.simulator.world import new_world

    for name in ("github", "shopify"):
        profile = get_profile(name)
        scenario = CATALOG["transport-fields-change"].for_world(profile.world)
        assert "new timestamp" not in scenario.title and "byte for byte" in scenario.description
        plan = scenario.plan(Context(profile=profile), new_world(profile.world, 3))
        assert isinstance(plan, Plan)
        event = plan.phases[0].events[0]
        first, retry = (build_attempt(profile, event, ["s3cret"], [Mutation.TRANSPORT_FIELDS], now=1_790_000_000,
                                      attempt=n) for n in (1, 2))
        assert first.request.headers == retry.request.headers and first.request.body == retry.request.body
    assert "new timestamp" in CATALOG["transport-fields-change"].for_world("billing").title


@pytest.mark.parametrize("enabled", [None, frozenset({"payment_intent.succeeded", "invoice.paid"})])
def test_an_unhandled_type_is_sent_only_to_an_endpoint_enabled_for_every_type(enabled: frozenset[str] | None) -> None:
    """Stripe sends an endpoint only the types it enabled, and new ones only to an endpoint
    enabled for all: with a listed subscription (`target.enabled_events`) `unknown-event-type`
    is not applicable (a 4xx to a type Stripe never sends it is no finding), naming the setting."""
    from hookproof.scenarios.catalog import NotApplicable

    plan = CATALOG["unknown-event-type"].plan(Context(profile=get_profile("stripe"), enabled=enabled),
                                              new_world("billing", 4242))
    if enabled is None:
        assert isinstance(plan, Plan) and plan.phases[0].events[0].type == "payment_method.automatically_updated"
    else:
        assert isinstance(plan, NotApplicable) and "target.enabled_events" in plan.reason


@pytest.mark.parametrize("profile_name", ["shopify", "paddle", "mercadopago"])
def test_related_burst_names_the_events_its_bursts_release(profile_name: str) -> None:
    """A Shopify app's report described the related burst in billing words (subscriptions,
    invoice.paid) while it released customers/create, orders/create and orders/paid: each
    world's description names every event type its bursts hold, and no billing one."""
    profile = get_profile(profile_name)
    scenario = CATALOG["related-burst"].for_world(profile.world)
    plan = scenario.plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan) and len(plan.phases) == 2
    sent = {e.type for phase in plan.phases for e in phase.events}
    assert sent and all(t in scenario.description for t in sent), sorted(t for t in sent
                                                                          if t not in scenario.description)
    assert "invoice.paid" not in scenario.description and "checkout.session" not in scenario.description
    assert scenario.checks == CATALOG["related-burst"].checks
