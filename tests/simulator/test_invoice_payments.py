"""An invoice paid by a payment: Stripe sends its intent's and its charge's own events too.

A team listening to ``payment_intent.succeeded`` for one-off payments and to ``invoice.paid``
for renewals gets both for every renewal on Stripe ("Invoices automatically create
PaymentIntents", docs.stripe.com/billing/subscriptions/overview); hookproof sent only the
invoice's, so a receiver granting a license on every intent (twice per renewal on Stripe)
passed. The intent and charge are described as Stripe describes them ("Subscription creation",
"Subscription update"), the only field telling them apart since API 2025-03-31.basil.
"""

from __future__ import annotations

from hookproof.receivers import made_by_invoice
from hookproof.receivers.business import effect_of
from hookproof.receivers.profiles import WebhookEvent
from hookproof.simulator.world import World
from hookproof.simulator.world.lifecycle import WITHHELD_KEYS
from hookproof.simulator.world.world import INVOICE_PAYMENT_TYPES


def _story(w: World) -> tuple[str, str]:
    """A subscription started, renewed, a renewal failing then paid: (first invoice, failed one)."""
    sub = w.subscribe(w.event(w.create_customer()).object_id)
    first = w.get(sub)["latest_invoice"]
    w.renew(sub)
    failed = w.renew(sub, pay=False)
    w.retry_invoice(failed, pay=True)
    return first, failed


def test_each_paid_invoice_sends_its_charge_and_intent_events_owing_no_license() -> None:
    w = World(7)
    w.sent_only(lambda t: True)
    first, failed = _story(w)
    paid = [e for e in w.events if e.type == "invoice.paid"]
    assert len(paid) == 3
    for invoice_paid in paid:
        at = w.events.index(invoice_paid)
        charge, intent = (e for e in w.events[at + 1:at + 4] if e.type in INVOICE_PAYMENT_TYPES)
        assert (charge.type, intent.type) == ("charge.succeeded", "payment_intent.succeeded")
        assert charge.object["payment_intent"] == intent.object_id and intent.object["latest_charge"] == charge.object_id
        assert intent.object["status"] == "succeeded" and intent.object["amount_received"] == invoice_paid.amount
        assert intent.business_key is None and intent.amount is None and charge.business_key is None
        assert intent.request_id == invoice_paid.request_id and intent.created_us > invoice_paid.created_us
        described = "Subscription creation" if invoice_paid.object_id == first else "Subscription update"
        assert intent.object["description"] == charge.object["description"] == described
        assert made_by_invoice(intent.object) and effect_of(WebhookEvent(
            id=intent.id, type=intent.type, object=intent.object, created=intent.created)) is None
    (declined,) = [e for e in w.events if e.type == "payment_intent.payment_failed"]
    failed_at = w.events.index(next(e for e in w.events if e.type == "invoice.payment_failed"))
    assert w.events.index(declined) == failed_at + 1
    assert declined.object["status"] == "requires_payment_method" and declined.object["last_payment_error"]
    assert declined.object_id == w.get(failed)["payment_intent"]
    # why a license granted on such an intent is unexpected names the invoice
    assert "a subscription's invoice made this payment intent" in WITHHELD_KEYS["payment_intent.succeeded"][1]


def test_the_other_events_keep_their_ids_and_an_endpoint_not_sent_them_is_told_none() -> None:
    told, plain = World(7), World(7)
    told.sent_only(lambda t: True)
    plain.sent_only(lambda t: t not in INVOICE_PAYMENT_TYPES)
    _story(told)
    _story(plain)
    assert [e.id for e in told.events if e.type not in INVOICE_PAYMENT_TYPES
            or e.object.get("description") is None] == [e.id for e in plain.events]
    assert not {e.type for e in plain.events} & set(INVOICE_PAYMENT_TYPES)


def test_without_the_invoice_s_events_the_intent_owes_its_license() -> None:
    """An endpoint sent payment_intent.succeeded but not invoice.paid learns of the payment from
    the intent alone, which then owes its license as any intent's does."""
    w = World(7)
    w.sent_only(lambda t: t not in ("invoice.paid", "invoice.payment_succeeded"))
    _story(w)
    intents = [e for e in w.events if e.type == "payment_intent.succeeded" and made_by_invoice(e.object)]
    assert len(intents) == 3 and all(e.business_key == f"license:{e.object_id}" for e in intents)
    assert all(e.amount == e.object["amount"] > 0 for e in intents)
