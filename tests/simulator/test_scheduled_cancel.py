"""A subscription canceled at its period's end (the Customer Portal's default), and the provider
API's ``POST /v1/subscriptions/{id}`` and ``DELETE /v1/subscriptions/{id}``, driven by
stripe-python's ``stripe.Subscription.modify`` and ``stripe.Subscription.cancel``
(docs.stripe.com/billing/subscriptions/cancel)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import stripe

from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.server import DEFAULT_API_KEY, ServerState, run_server
from hookproof.simulator.world import World

PROFILE = StripeProfile()
SECRET = "whsec_scheduled_cancel_0123"


def _subscribed(seed: int = 5) -> tuple[World, str]:
    w = World(seed)
    return w, w.subscribe(w.event(w.create_customer()).object_id)


def _parsed(event: Any) -> Any:
    """The event as stripe-python's ``construct_event`` parses the bytes the profile sends."""
    envelope = PROFILE.envelope(event)
    header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
    return stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)


def test_a_cancellation_at_the_period_s_end_is_an_update_then_the_deletion_at_that_end() -> None:
    w, sub = _subscribed()
    end = w.get(sub)["items"]["data"][0]["current_period_end"]
    start = len(w.events)
    w.cancel_at_period_end(sub)
    updated = w.events[-1]
    assert [e.type for e in w.events[start:]] == ["customer.subscription.updated"]
    parsed = _parsed(updated).data
    obj = parsed.object
    assert (obj.status, obj.cancel_at_period_end, obj.cancel_at, obj.canceled_at) == (
        "active", True, end, updated.created)
    assert obj.cancellation_details.to_dict() == {"comment": None, "feedback": None, "reason": "cancellation_requested"}
    assert obj.ended_at is None
    assert parsed.previous_attributes.to_dict() == {
        "cancel_at": None, "cancel_at_period_end": False, "canceled_at": None,
        "cancellation_details": {"reason": None}}
    with pytest.raises(WorldError, match="cancels at its period's end: it is not renewed"):
        w.renew(sub)
    w.end_period(sub)
    deleted = w.events[-1]
    assert [e.type for e in w.events[start:]] == ["customer.subscription.updated", "customer.subscription.deleted"]
    gone = _parsed(deleted).data.object
    assert (gone.status, gone.ended_at, deleted.created, gone.canceled_at, gone.cancel_at) == (
        "canceled", end, end, updated.created, end)
    assert gone.cancellation_details.reason == "cancellation_requested"
    assert deleted.request_id is None and updated.request_id is not None  # Stripe's own doing at the period's end
    assert [e.version for e in w.events[start:]] == [updated.version, updated.version + 1]


def test_a_scheduled_cancellation_taken_back_restores_the_four_fields() -> None:
    w, sub = _subscribed()
    w.cancel_at_period_end(sub)
    w.cancel_at_period_end(sub, False)
    back = _parsed(w.events[-1]).data
    assert (back.object.cancel_at_period_end, back.object.cancel_at, back.object.canceled_at,
            back.object.cancellation_details.reason) == (False, None, None, None)
    assert back.previous_attributes.cancel_at_period_end is True
    with pytest.raises(WorldError, match="is not scheduled to cancel at its period's end"):
        w.end_period(sub)
    w.renew(sub)  # renewed as any active subscription
    assert w.get(sub)["status"] == "active"


@pytest.fixture
def sdk_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[World, str]]:
    """stripe-python's global API pointed at a provider server over a world with one active subscription."""
    w, sub = _subscribed(9)
    with run_server(ServerState([w])) as provider:
        monkeypatch.setattr(stripe, "api_key", DEFAULT_API_KEY)
        monkeypatch.setattr(stripe, "api_base", provider.api_base)
        monkeypatch.setattr(stripe, "max_network_retries", 0)
        yield w, sub


def test_stripe_python_modify_schedules_and_cancel_cancels(sdk_api: tuple[World, str]) -> None:
    w, sub = sdk_api
    start = len(w.events)
    modified = stripe.Subscription.modify(sub, cancel_at_period_end=True)
    assert isinstance(modified, stripe.Subscription)
    assert (modified.id, modified.status, modified.cancel_at_period_end) == (sub, "active", True)
    assert modified.cancel_at == w.get(sub)["items"]["data"][0]["current_period_end"]
    assert modified.cancellation_details.reason == "cancellation_requested"
    again = stripe.Subscription.modify(sub, cancel_at_period_end=True)  # nothing changes: no event
    assert again.cancel_at_period_end is True
    assert [e.type for e in w.events[start:]] == ["customer.subscription.updated"]
    undone = stripe.Subscription.modify(sub, cancel_at_period_end=False)
    assert (undone.cancel_at_period_end, undone.cancel_at, undone.canceled_at) == (False, None, None)
    canceled = stripe.Subscription.cancel(sub)
    assert isinstance(canceled, stripe.Subscription)
    assert (canceled.status, canceled.cancellation_details.reason) == ("canceled", "cancellation_requested")
    assert canceled.ended_at == canceled.canceled_at is not None
    assert [e.type for e in w.events[start:]] == ["customer.subscription.updated", "customer.subscription.updated",
                                                  "customer.subscription.deleted"]
    assert stripe.Subscription.retrieve(sub).status == "canceled"


def test_the_api_refuses_what_it_does_not_simulate_naming_the_parameter(sdk_api: tuple[World, str]) -> None:
    w, sub = sdk_api
    with pytest.raises(stripe.InvalidRequestError, match="proration_behavior is not simulated") as bad:
        stripe.Subscription.modify(sub, proration_behavior="none")
    assert bad.value.param == "proration_behavior"
    with pytest.raises(stripe.InvalidRequestError, match="No such subscription: 'sub_missing'") as missing:
        stripe.Subscription.modify("sub_missing", cancel_at_period_end=True)
    assert missing.value.http_status == 404
    stripe.Subscription.cancel(sub)
    with pytest.raises(stripe.InvalidRequestError, match="is canceled") as twice:
        stripe.Subscription.cancel(sub)
    assert twice.value.http_status == 400
    with pytest.raises(stripe.InvalidRequestError, match="only an active, trialing or past_due"):
        stripe.Subscription.modify(sub, cancel_at_period_end=True)
