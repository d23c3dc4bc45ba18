"""One Shopify event through two subscriptions: the same event, a new delivery.

shopify.dev ("Ignore duplicate webhooks"): dedupe on ``X-Shopify-Event-Id``; "If you have more
than one subscription for the same topic, then you'll receive several webhooks for the same event
(one per subscription)". Shopify has no manual replay, so under the shopify profile
`mass-redelivery`, `mass-redelivery-window` (and explore's window redelivery, the storm's waves)
send each event again through another subscription (`ShopifyProfile.replayed`): the same body,
``X-Shopify-Event-Id`` and ``X-Shopify-Triggered-At``, a new ``X-Shopify-Webhook-Id``.
`shopify_app` (claims the Event-Id) passes; its twin claiming ``X-Shopify-Webhook-Id``
(`shopify_app_dedupe_by_webhook_id`) applies every such delivery again.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config_of

SCENARIO, WINDOW = "mass-redelivery", "mass-redelivery-window"


@pytest.mark.parametrize("scenario_id", [SCENARIO, WINDOW])
def test_a_second_subscription_sends_the_same_event_with_a_new_webhook_id(scenario_id: str) -> None:
    profile = get_profile("shopify")
    plan = CATALOG[scenario_id].plan(Context(profile=profile, redelivery_window=12), new_world(profile.world, 5))
    assert isinstance(plan, Plan)
    first, again = plan.phases
    assert len(again.events) == len(first.events) >= 3
    before = {e.id: profile.envelope(e) for e in first.events}
    webhook_ids = set()
    for event in again.events:
        old, new = before[event.id], profile.envelope(event)
        assert new.body == old.body and new.event_id == old.event_id
        changed = {name for name in old.headers if new.headers[name] != old.headers[name]}
        assert changed == {"X-Shopify-Webhook-Id"}
        assert set(new.headers) == set(old.headers)
        webhook_ids.add(new.headers["X-Shopify-Webhook-Id"])
    assert len(webhook_ids) == len(again.events)
    assert not webhook_ids & {e.headers["X-Shopify-Webhook-Id"] for e in before.values()}
    third = profile.envelope(profile.replayed(first.events[0], 2))  # a third subscription: another one
    assert third.headers["X-Shopify-Webhook-Id"] not in webhook_ids | {before[first.events[0].id].headers[
        "X-Shopify-Webhook-Id"]}


def test_the_scenarios_say_it_in_shopifys_words() -> None:
    for scenario_id in (SCENARIO, WINDOW):
        worded = CATALOG[scenario_id].for_world("shopify", get_profile("shopify").after_refusal())
        assert "second subscription" in worded.title and "X-Shopify-Webhook-Id" in worded.description
        assert "notification" not in worded.description and "Paddle" not in worded.description


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("examples.receivers.shopify_app_dedupe_by_webhook_id", {SCENARIO: ["counter", "duplicated"],
                                                             WINDOW: ["counter", "duplicated"]}),
])
def test_a_second_subscription_is_deduplicated_by_event_id(tmp_path: Path, module: str,
                                                           failed: dict[str, list[str]]) -> None:
    """Retries keep their Webhook-Id, so the twin passes the duplicate scenarios; the second
    subscription's deliveries (a new Webhook-Id) apply every effect again."""
    cfg = config_of("shopify_app", module, tmp_path)
    cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"redelivery_window": 20})})
    report = certify(cfg, scenarios=[SCENARIO, WINDOW, "duplicate-sequential", "dropped-response"],
                     out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    titles = {s.id: s.title for s in report.scenarios}
    assert titles[SCENARIO] == "Every event again through a second subscription"
    duplicated = [f for s in report.scenarios for f in s.findings if f.check_id == "duplicated"]
    assert bool(duplicated) == bool(failed)
    for finding in duplicated:  # in Shopify's words, never Paddle's
        assert SUBSCRIPTION_NAMED.search(finding.message), finding.message
        assert "notification" not in finding.message


#: How a ``duplicated`` finding names the attempts that came through a second subscription.
SUBSCRIPTION_NAMED = re.compile(r"; attempts? [0-9, ]+(?: and [0-9]+ more)? (?:was|were) the same event through a "
                                r"second subscription to its topic: a new X-Shopify-Webhook-Id, the same "
                                r"X-Shopify-Event-Id(?:;|$)")


@pytest.mark.parametrize("profile_name", ["shopify", "stripe", "paddle"])
def test_a_reserialized_retry_is_not_shopify_s(profile_name: str) -> None:
    """shopify.dev's changelog "Updates to webhook retry mechanism": retries are "delivered with
    the original payload from the time they were triggered", so `reserialized-retry` does not
    apply to Shopify, saying so; a delivery in other bytes (`reserialized-body`) still does, and
    other providers keep the scenario."""
    from hookproof.scenarios.catalog import NotApplicable

    profile = get_profile(profile_name)
    world = new_world(profile.world, 5)
    plan = CATALOG["reserialized-retry"].plan(Context(profile=profile), world)
    if profile_name == "shopify":
        assert isinstance(plan, NotApplicable)
        assert "original payload from the time they were triggered" in plan.reason
        assert "updates to webhook retry mechanism" in plan.reason.lower()
    else:
        assert isinstance(plan, Plan) and plan.phases[0].plan.mutate == "retries"
    assert isinstance(CATALOG["reserialized-body"].plan(Context(profile=profile), new_world(profile.world, 5)), Plan)
