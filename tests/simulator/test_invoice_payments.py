"""An invoice paid by a payment: its payment intent's and charge's own events beside the invoice's.

"Invoices automatically create PaymentIntents" (docs.stripe.com/invoicing/payment-intents): a
subscription's first invoice and each renewal are paid by one, and Stripe sends its
``charge.succeeded`` and ``payment_intent.succeeded`` beside ``invoice.paid`` (and its
``payment_intent.payment_failed`` beside ``invoice.payment_failed``), to an endpoint listing them.
The intent is described "Subscription creation" (the first invoice) or "Subscription update"
(the others); it owes no ``license:`` where the endpoint is sent the invoice's events: one
payment, the invoice's ``renewal:``.
"""

from __future__ import annotations

import pytest

from hookproof.scenarios.business_keys import KeyMapping, TemplateError
from hookproof.scenarios.key_loops import withheld_messages
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World
from hookproof.simulator.world.world import INVOICE_PAYMENT_TYPES

PAYMENT_TYPES = frozenset(INVOICE_PAYMENT_TYPES)


def _story(w: World) -> tuple[str, str, str]:
    """A subscription started, renewed once (paid), then renewed unpaid: (first invoice, renewal, failed)."""
    sub = w.subscribe(w.event(w.create_customer()).object_id)
    first = w.get(sub)["latest_invoice"]
    renewal = w.renew(sub)
    return first, renewal, w.renew(sub, pay=False)


def _beside(w: World, invoice: str, invoice_type: str) -> list[Event]:
    """The events right after `invoice`'s `invoice_type`, up to the subscription's update."""
    at = next(i for i, e in enumerate(w.events) if e.type == invoice_type and e.object_id == invoice)
    out = []
    for e in w.events[at + 1:]:
        if e.type.startswith("customer.subscription."):
            break
        out.append(e)
    return out


def test_a_renewal_sent_to_an_endpoint_listing_the_payment_s_types_sends_the_pair_beside_invoice_paid() -> None:
    w = World(5)
    w.sent_only(lambda t: True)
    first, renewal, failed = _story(w)
    inv = w.get(renewal)
    paid = next(e for e in w.events if e.type == "invoice.paid" and e.object_id == renewal)
    beside = _beside(w, renewal, "invoice.payment_succeeded")
    assert [(e.type, e.object_id) for e in beside] == [("charge.succeeded", inv["charge"]),
                                                       ("payment_intent.succeeded", inv["payment_intent"])]
    charge, intent = beside
    assert [e.business_key for e in beside] == [None, None] and [e.amount for e in beside] == [None, None]
    assert intent.object["description"] == charge.object["description"] == "Subscription update"
    assert intent.object["status"] == "succeeded" and intent.object["latest_charge"] == inv["charge"]
    assert charge.object["payment_intent"] == inv["payment_intent"] and charge.object["invoice"] == renewal
    assert (intent.object_type, intent.version, intent.request_id) == ("payment_intent", 2, paid.request_id)
    assert paid.business_key == f"renewal:{renewal}"
    # the first invoice's payment is the subscription's creation
    created = _beside(w, first, "invoice.payment_succeeded")
    assert [e.type for e in created] == ["charge.succeeded", "payment_intent.succeeded"]
    assert {e.object["description"] for e in created} == {"Subscription creation"}
    # a failed renewal: its intent's payment_intent.payment_failed beside invoice.payment_failed
    failing = _beside(w, failed, "invoice.payment_failed")
    assert [(e.type, e.object_id, e.business_key) for e in failing] == [
        ("payment_intent.payment_failed", w.get(failed)["payment_intent"], None)]
    assert failing[0].object["last_payment_error"]["code"] == "card_declined"
    assert failing[0].object["description"] == "Subscription update"


def test_an_endpoint_not_listing_them_is_sent_none_and_every_other_id_stays() -> None:
    told, untold = World(5), World(5)
    told.sent_only(lambda t: True)
    untold.sent_only(lambda t: t not in PAYMENT_TYPES)
    _story(told)
    _story(untold)
    assert not PAYMENT_TYPES & {e.type for e in untold.events}
    assert [e.id for e in told.events if e.type not in PAYMENT_TYPES] == [e.id for e in untold.events]
    assert [e.type for e in told.events if e.type in PAYMENT_TYPES] == [
        "charge.succeeded", "payment_intent.succeeded", "charge.succeeded", "payment_intent.succeeded",
        "payment_intent.payment_failed"]
    # the intents are described alike whether or not their events are sent
    assert told.objects("payment_intent") == untold.objects("payment_intent")
    assert {untold.get(pi)["description"] for pi in untold.objects("payment_intent")} == {
        "Subscription creation", "Subscription update"}
    never_told = World(5)
    _story(never_told)
    assert [e.id for e in never_told.events] == [e.id for e in untold.events if e.type != "invoice.payment_succeeded"]


def test_each_listed_type_alone_is_sent_alone() -> None:
    w = World(5)
    w.sent_only(lambda t: t != "charge.succeeded")
    _story(w)
    assert [e.type for e in w.events if e.type in PAYMENT_TYPES] == [
        "payment_intent.succeeded", "payment_intent.succeeded", "payment_intent.payment_failed"]


def test_an_endpoint_not_sent_the_invoice_s_event_is_sent_none_of_its_payment_s() -> None:
    """A shop hearing of no invoice has no subscriptions: the stories' subscriptions' payments
    are none of its own (a one-off payment's events are sent as before)."""
    w = World(5)
    w.sent_only(lambda t: t not in ("invoice.paid", "invoice.payment_succeeded", "invoice.payment_failed"))
    _story(w)
    w.pay(w.objects("customer")[0])
    assert [(e.type, e.object["description"]) for e in w.events if e.type in PAYMENT_TYPES] == [
        ("payment_intent.succeeded", None), ("charge.succeeded", None)]
    paid_only = World(5)
    paid_only.sent_only(lambda t: t != "invoice.payment_failed")
    _story(paid_only)
    assert [e.type for e in paid_only.events if e.type in PAYMENT_TYPES] == [
        "charge.succeeded", "payment_intent.succeeded", "charge.succeeded", "payment_intent.succeeded"]


def _attempt(event: Event) -> Attempt:
    from hookproof.simulator.delivery.history import Completion, Outcome

    return Attempt(event_id=event.id, delivery_id="d1", attempt=1, business_key=event.business_key,
                   object_id=event.object_id, object_version=event.version, event_type=event.type, faults=(),
                   valid=True, sent_at=0.0, answered_at=0.0, status=200, outcome=Outcome.ACKED,
                   completion=Completion.OK, latency_ms=1.0)


def test_unexpected_names_an_invoice_s_intent_licensed_as_the_invoice_s_effect() -> None:
    w = World(5)
    w.sent_only(lambda t: True)
    _, renewal, _ = _story(w)
    pi = w.get(renewal)["payment_intent"]
    intent = next(e for e in w.events if e.type == "payment_intent.succeeded" and e.object_id == pi)
    message = withheld_messages([_attempt(intent)])[f"license:{pi}"]
    assert message.startswith(f"applied, but no validly sent event owes this key: {intent.id} payment_intent.succeeded "
                              f"was validly sent about {pi}, and it owed no license of its own")
    assert "invoice's payment intent" in message and "the invoice owes the effect, once, on its invoice.paid" in message


def test_a_team_s_template_over_the_shop_s_metadata_owes_nothing_on_an_invoice_s_intent() -> None:
    """The README's ``order:{data.object.metadata.order_id}``: Stripe's invoices set no such metadata
    on their intents, which owe no key of their own; an intent of the shop's own still renders it,
    and one lacking it is an error, as before. A template every intent renders keys an invoice's
    intent too, as the team says."""
    profile = get_profile("stripe")
    mapping = KeyMapping({"payment_intent.succeeded": "order:{data.object.metadata.order_id}"}, profile)
    w = World(5)
    w.sent_only(lambda t: True)
    _, renewal, _ = _story(w)
    intents = [e for e in w.events if e.type == "payment_intent.succeeded"]
    assert len(intents) == 2 and [mapping.key_of(e) for e in intents] == [None, None]
    own_pi = w.pay(w.objects("customer")[0])
    own = next(e for e in w.events if e.type == "payment_intent.succeeded" and e.object_id == own_pi)
    own.object["metadata"]["order_id"] = "42"
    assert mapping.key_of(own) == "order:42"
    # a template every intent renders keys an invoice's too: the team's own choice (a ledger of every payment)
    by_id = KeyMapping({"payment_intent.succeeded": "order:{data.object.id}"}, profile)
    assert [by_id.key_of(e) for e in intents] == [f"order:{e.object_id}" for e in intents]
    bare_pi = w.pay(w.objects("customer")[0])
    bare = next(e for e in w.events if e.type == "payment_intent.succeeded" and e.object_id == bare_pi)
    with pytest.raises(TemplateError, match="order_id"):
        mapping.key_of(bare)
