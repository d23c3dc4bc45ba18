"""The business: which effect and which state change each event type means.

Effects (one per business key, the contract hookproof checks):

=========================================== =========================================
event type                                  business key
=========================================== =========================================
checkout.session.completed (when paid)      ``fulfillment:{checkout_session.id}``
checkout.session.completed (subscription)   ``provision:{checkout_session.id}`` (paid or on trial)
checkout.session.async_payment_succeeded    ``fulfillment:{checkout_session.id}``
payment_intent.succeeded                    ``license:{payment_intent.id}`` (none for a Checkout
                                            Session's intent, its ``metadata.channel`` ``checkout``;
                                            none for an invoice's intent, `made_by_invoice`: the
                                            invoice's ``invoice.paid`` is the payment's renewal)
invoice.paid                                ``renewal:{invoice.id}`` (its ``invoice.payment_succeeded``,
                                            the same payment, is left alone: one renewal)
invoice.payment_failed                      ``dunning:{invoice.id}:{attempt_count}``
charge.refunded                             ``refund:{charge.id}:{amount_refunded}``
charge.dispute.created                      ``dispute:{dispute.id}`` (a chargeback opened; the
                                            dispute's later events owe none)
=========================================== =========================================

State: every ``customer.subscription.*`` event sets the subscription's status; its
version is the object's ``hookproof_version`` (hookproof's counter of the object's changes,
which the checks compare a state's version with; Stripe's objects have no such field:
README, "Stripe: objects, API versions and the provider API"). Every ``invoice.*`` event sets the
invoice's status (``invoice_state_of``: Stripe's invoice ``status``, e.g. ``open``,
``paid``), kept apart in ``invoice_states``. Every other type: no effect (2xx).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from hookproof.receivers.profiles import WebhookEvent


@dataclass(frozen=True)
class Effect:
    """One business effect: what the ``effects`` table (or the sink) records."""

    business_key: str
    amount: int | None


@dataclass(frozen=True)
class StateChange:
    """The state an event says an object is in, at a version."""

    object_id: str
    status: str
    version: int


def _completed(obj: Mapping[str, Any]) -> str | None:
    """A subscription-mode session provisions its subscription, paid or on trial; a payment-mode
    one is fulfilled once paid."""
    if obj.get("mode") == "subscription":
        return f"provision:{obj['id']}" if obj.get("payment_status") in ("paid", "no_payment_required") else None
    return f"fulfillment:{obj['id']}" if obj.get("payment_status") == "paid" else None


#: The ``description`` Stripe gives the payment intent (and its charge) of a subscription's
#: invoice: its first invoice's, and every other's (a renewal, a change of plan).
SUBSCRIPTION_PAYMENT_DESCRIPTIONS: frozenset[str] = frozenset({"Subscription creation", "Subscription update"})


def made_by_invoice(obj: Mapping[str, Any]) -> bool:
    """True when an invoice made payment intent (or charge) `obj`: "Invoices automatically create
    PaymentIntents" (docs.stripe.com/invoicing/payment-intents), and Stripe sends its
    ``payment_intent.succeeded`` beside the invoice's ``invoice.paid``, one payment. API versions
    before 2025-03-31.basil name the invoice (``invoice``); from basil on no field does
    (docs.stripe.com/changelog/basil/2025-03-31/add-support-for-multiple-partial-payments-on-invoices),
    and a subscription's invoice describes its intent "Subscription creation" or "Subscription
    update"."""
    return bool(obj.get("invoice")) or obj.get("description") in SUBSCRIPTION_PAYMENT_DESCRIPTIONS


def _licensed(obj: Mapping[str, Any]) -> str | None:
    """A payment intent grants a license, unless a payment-mode Checkout Session made it: Stripe
    sends its ``payment_intent.succeeded`` beside the session's completion, one purchase fulfilled
    on the session's events (docs.stripe.com/checkout/fulfillment). The shop marks its sessions'
    intents through ``payment_intent_data.metadata`` (``channel: checkout``): no field of a
    payment intent names its session. Nor an invoice's (`made_by_invoice`): the payment is the
    invoice's ``renewal:``, granted on its ``invoice.paid``."""
    if (obj.get("metadata") or {}).get("channel") == "checkout" or made_by_invoice(obj):
        return None
    return f"license:{obj['id']}"


#: Event type -> business key of its object (None: this occurrence has no effect).
KEYS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "checkout.session.completed": _completed,
    "checkout.session.async_payment_succeeded": lambda o: f"fulfillment:{o['id']}",
    "payment_intent.succeeded": _licensed,
    "invoice.paid": lambda o: f"renewal:{o['id']}",
    "invoice.payment_failed": lambda o: f"dunning:{o['id']}:{o['attempt_count']}",
    "charge.refunded": lambda o: f"refund:{o['id']}:{o['amount_refunded']}",
    "charge.dispute.created": lambda o: f"dispute:{o['id']}",
}

#: Event types that carry subscription state.
STATE_TYPES: frozenset[str] = frozenset({
    "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
    "customer.subscription.paused", "customer.subscription.resumed", "customer.subscription.trial_will_end",
})


def handles(event_type: str) -> bool:
    """True for event types the business acts on (effects or state)."""
    return event_type in KEYS or event_type in STATE_TYPES


def effect_of(event: WebhookEvent) -> Effect | None:
    """The effect `event` asks for, or None."""
    key_of = KEYS.get(event.type)
    key = key_of(event.object) if key_of else None
    return None if key is None else Effect(key, amount_of(event))


def amount_of(event: WebhookEvent) -> int | None:
    """Minor units moved: a refund's own amount; a paid invoice's ``amount_paid`` (0 for a trial's
    $0 invoice: docs.stripe.com/billing/subscriptions/trials); otherwise the object's total, paid
    or amount."""
    obj = event.object
    if event.type == "charge.refunded":
        before = (event.previous_attributes or {}).get("amount_refunded")
        return None if before is None else obj["amount_refunded"] - before
    if event.type in ("invoice.paid", "invoice.payment_succeeded"):
        return obj.get("amount_paid")
    return obj.get("amount_total") or obj.get("amount_paid") or obj.get("amount")


def invoice_state_of(event: WebhookEvent) -> StateChange | None:
    """The invoice state an ``invoice.*`` event carries (its ``status`` at its
    ``hookproof_version``), or None for another type or an invoice without a status."""
    obj = event.object
    if not event.type.startswith("invoice.") or obj.get("object") not in (None, "invoice") or not obj.get("status"):
        return None
    return StateChange(obj["id"], obj["status"], int(obj.get("hookproof_version", 0)))


def state_of(event: WebhookEvent) -> StateChange | None:
    """The subscription state `event` carries, or None."""
    if event.type not in STATE_TYPES:
        return None
    obj = event.object
    return StateChange(obj["id"], obj["status"], int(obj.get("hookproof_version", 0)))
