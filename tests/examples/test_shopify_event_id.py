"""One merchant action's topics share ``X-Shopify-Event-Id``: the dedupe key is the topic with it.

shopify.dev/docs/apps/build/webhooks/delivery-structure: ``X-Shopify-Event-Id`` is "a unique ID
shared across all deliveries produced by the same merchant action", ``X-Shopify-Webhook-Id`` "a
unique composite key per delivery". A checkout sends ``customers/create`` (a new buyer),
``orders/create`` and ``orders/paid`` with one Event-Id; `shopify_app` claims the shop, the topic
and the Event-Id and passes; its twin claiming the Event-Id alone
(`shopify_app_dedupe_by_event_id_alone`) takes the checkout's later topics for duplicates of its
first, and never fulfils the order, nor restocks it when the cancellation's refund came first
(``lost``), which the finding says in Shopify's words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config_of

#: The scenarios run: the effect story delivered twice in order, and with its answers lost (each
#: fails the same whichever delivery comes first; `related-burst`'s concurrent checkout may also
#: leave its order unstored, the matrix's ``race_dependent``).
SCENARIOS = ["duplicate-sequential", "dropped-response"]
#: What the finding adds for a lost event whose action's other topic was acknowledged first.
SHOPIFY_WORDS = ('X-Shopify-Event-Id is "a unique ID shared across all deliveries produced by the same merchant '
                 'action" (shopify.dev, "Webhooks delivery structure"): deduplicate on X-Shopify-Topic with it; '
                 '"Ignore duplicate webhooks"\' "the same value across more than one webhook indicates a duplicate" '
                 'holds within one topic')


def test_a_checkouts_deliveries_share_the_event_id_and_not_the_identity() -> None:
    """The story `duplicate-sequential` sends opens with a checkout: its topics share the Event-Id,
    each has its own Webhook-Id and identity (what the history groups attempts by)."""
    profile = get_profile("shopify")
    world = new_world("shopify", 5)
    world.effect_story()
    checkout = [profile.envelope(e) for e in world.events[:3]]
    assert [e.type for e in checkout] == ["customers/create", "orders/create", "orders/paid"]
    assert len({e.headers["X-Shopify-Event-Id"] for e in checkout}) == 1
    assert len({e.headers["X-Shopify-Webhook-Id"] for e in checkout}) == 3
    assert [e.event_id for e in checkout] == [f"{e.type}:{e.headers['X-Shopify-Event-Id']}" for e in checkout]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("examples.receivers.shopify_app_dedupe_by_event_id_alone", {s: ["lost"] for s in SCENARIOS}),
])
def test_a_receiver_must_dedupe_on_the_topic_with_the_event_id(tmp_path: Path, module: str,
                                                                failed: dict[str, list[str]]) -> None:
    report = certify(config_of("shopify_app", module, tmp_path), scenarios=SCENARIOS,
                     out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    lost = [f for s in report.scenarios if s.id == "duplicate-sequential" for f in s.findings]
    assert bool(lost) == bool(failed)
    # the paid order never fulfilled (its checkout's customers/create claimed first), its cancellation
    # never restocked (the cancellation's refunds/create claimed first); the refunds, first of theirs, applied
    assert sorted(f.key.split(":")[0] for f in lost) == (["fulfil", "restock"] if failed else [])
    assert len({f.key.split(":")[1] for f in lost}) == (1 if failed else 0)
    for finding in lost:
        assert "another event sharing its id, was acknowledged" in finding.message, finding.message
        assert finding.message.endswith(SHOPIFY_WORDS), finding.message
