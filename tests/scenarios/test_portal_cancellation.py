"""The Customer Portal's default cancellation in the state story: scheduled at the period's end,
taken back, scheduled again, made at the period's end (docs.stripe.com/billing/subscriptions/cancel),
told when a declared state field of a subscription reads it (`Context.reads_cancellation`).
Each body is read by stripe-python as a Subscription.
"""

from __future__ import annotations

import stripe

from hookproof.scenarios.catalog import CANCELLATION_FIELDS, Context, state_events
from hookproof.scenarios.state_fields import StateFields
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.world import World

SECRET = "whsec_portal_0123456789"


def _read(event: object) -> stripe.Event:
    profile = StripeProfile()
    envelope = profile.envelope(event)  # type: ignore[arg-type]
    header = profile.sign(envelope, [SECRET], event.created)["Stripe-Signature"]  # type: ignore[attr-defined]
    return stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)


def test_a_declared_field_reads_the_cancellation_by_its_path() -> None:
    profile = get_profile("stripe")
    fields = StateFields({"subscription": (("cape", "data.object.cancel_at_period_end"),),
                          "invoice": (("paid", "data.object.status_transitions.paid_at"),)}, profile)
    assert fields.reads("subscription", CANCELLATION_FIELDS)
    assert not fields.reads("invoice", CANCELLATION_FIELDS)
    price = StateFields({"subscription": (("price", "data.object.items.data[0].price.id"),)}, profile)
    assert not price.reads("subscription", CANCELLATION_FIELDS)


def test_the_portal_cancellation_is_told_when_a_state_field_reads_it() -> None:
    profile = get_profile("stripe")
    fields = {"subscription": ("cape",)}
    plain = [e.type for e in state_events(Context(profile=profile, state_fields=fields), World(6))]
    ctx = Context(profile=profile, state_fields=fields, reads_cancellation=True)
    story = state_events(ctx, World(6))
    assert plain[-1] == "customer.subscription.deleted"
    portal = story[len(plain) - 1:]
    assert [(e.type, e.status, e.object["cancel_at_period_end"]) for e in portal] == [
        ("customer.subscription.updated", "active", True), ("customer.subscription.updated", "active", False),
        ("customer.subscription.updated", "active", True), ("customer.subscription.deleted", "canceled", True)]
    scheduled, back, again, ended = portal
    assert scheduled.object["cancel_at"] == scheduled.object["current_period_end"] == ended.created
    assert scheduled.object["canceled_at"] == scheduled.created
    assert scheduled.object["cancellation_details"]["reason"] == "cancellation_requested"
    assert scheduled.previous_attributes == {"cancel_at": None, "cancel_at_period_end": False, "canceled_at": None,
                                             "cancellation_details": {"reason": None}}
    assert back.previous_attributes["cancel_at_period_end"] is True and back.object["cancel_at"] is None
    assert ended.object["ended_at"] == ended.created and ended.request_id is None
    for event in portal:
        body = _read(event).data.object
        assert isinstance(body, stripe.Subscription) and body.cancel_at_period_end == event.object[
            "cancel_at_period_end"]
