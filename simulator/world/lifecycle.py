"""Lifecycles and business keys of the billing world (pure tables).

Allowed transitions follow Stripe's documented object lifecycles
(docs.stripe.com/billing/subscriptions/overview "Subscription statuses",
docs.stripe.com/invoicing/overview "Invoice lifecycle",
docs.stripe.com/api/checkout/sessions/object `status`, `payment_status`;
docs.stripe.com/billing/subscriptions/trials "paused" when a trial ends without a
payment method, resumed by ``POST /v1/subscriptions/{id}/resume``; docs.stripe.com/api/refunds/object
``status``: a delayed method's refund ``pending``, then ``succeeded`` or ``failed``;
docs.stripe.com/api/disputes/object ``status`` and docs.stripe.com/disputes/how-disputes-work: a
chargeback ``needs_response``, ``under_review`` once evidence is submitted, then ``won`` or
``lost``; an inquiry's ``warning_needs_response``, ``warning_under_review``, ``warning_closed``, or
escalated to a chargeback).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Mapping

from hookproof.simulator.errors import WorldError

if TYPE_CHECKING:
    from hookproof.simulator.events import Event

#: object type -> status -> statuses it may move to (a self-loop is a change in place).
TRANSITIONS: Mapping[str, Mapping[str, frozenset[str]]] = {
    "checkout.session": {
        "open": frozenset({"complete", "expired"}),
        "complete": frozenset({"complete"}),  # async payment settles after completion
        "expired": frozenset(),
    },
    "payment_intent": {
        "requires_payment_method": frozenset({"processing", "succeeded", "canceled", "requires_payment_method"}),
        "processing": frozenset({"succeeded", "requires_payment_method"}),
        "succeeded": frozenset(),
        "canceled": frozenset(),
    },
    "charge": {
        "succeeded": frozenset({"succeeded"}),  # refunds change amount_refunded in place
        "failed": frozenset(),
    },
    "invoice": {
        "draft": frozenset({"open", "void"}),
        "open": frozenset({"open", "paid", "void", "uncollectible"}),  # a failed attempt stays open
        "paid": frozenset(),
        "void": frozenset(),
        "uncollectible": frozenset({"paid", "void"}),
    },
    "refund": {
        "pending": frozenset({"succeeded", "failed", "canceled"}),
        "requires_action": frozenset({"pending", "succeeded", "failed", "canceled"}),
        "succeeded": frozenset(),
        "failed": frozenset(),
        "canceled": frozenset(),
    },
    "dispute": {
        "warning_needs_response": frozenset({"warning_under_review", "warning_closed", "needs_response"}),
        "warning_under_review": frozenset({"warning_closed", "needs_response"}),
        "warning_closed": frozenset(),
        "needs_response": frozenset({"under_review", "won", "lost", "needs_response"}),  # funds move in place
        "under_review": frozenset({"won", "lost"}),
        "won": frozenset({"won"}),  # the funds reinstated after the decision
        "lost": frozenset(),
    },
    "subscription": {
        "incomplete": frozenset({"active", "incomplete_expired", "incomplete"}),
        "incomplete_expired": frozenset(),
        "trialing": frozenset({"active", "past_due", "canceled", "trialing", "paused"}),
        "active": frozenset({"active", "past_due", "canceled"}),
        "past_due": frozenset({"active", "canceled", "past_due", "unpaid"}),
        "unpaid": frozenset({"active", "canceled"}),
        "paused": frozenset({"active", "canceled"}),
        "canceled": frozenset(),
    },
}


def check_transition(object_type: str, old: str, new: str, object_id: str) -> None:
    """Raise WorldError unless `object_type` may move from `old` to `new`."""
    allowed = TRANSITIONS.get(object_type, {}).get(old)
    if allowed is None or new not in allowed:
        raise WorldError(f"{object_type} {object_id}: {old} -> {new} is not an allowed transition", object_id=object_id)


#: A subscription-mode session's ``payment_status`` values that provision it: paid, or nothing to
#: pay (a trial: docs.stripe.com/api/checkout/sessions/object ``payment_status``
#: ``no_payment_required``).
PROVISIONED_STATUSES = frozenset({"paid", "no_payment_required"})


def _completed(obj: Mapping[str, Any]) -> str | None:
    """A completed session's key: a subscription-mode one provisions its subscription once it
    exists, paid or on trial (``provision:``; docs.stripe.com/billing/subscriptions/build-subscriptions,
    "Provision and monitor subscriptions": provision on ``checkout.session.completed``); a
    payment-mode one is fulfilled once paid (``fulfillment:``; docs.stripe.com/checkout/fulfillment)."""
    if obj.get("mode") == "subscription":
        return f"provision:{obj['id']}" if obj.get("payment_status") in PROVISIONED_STATUSES else None
    return f"fulfillment:{obj['id']}" if obj.get("payment_status") == "paid" else None


#: Stripe event type -> function of the event's object giving its business key (None: no effect).
#: The effect contract (one effect per key):
#:   checkout.session.completed (payment mode, paid at completion) and
#:   checkout.session.async_payment_succeeded -> fulfillment:{checkout_session.id}
#:   checkout.session.completed (subscription mode, paid or on trial)
#:                                            -> provision:{checkout_session.id} (no money: the
#:                                               first payment is its invoice's renewal:)
#:   payment_intent.succeeded                 -> license:{payment_intent.id} (none for a payment-mode
#:                                               Checkout Session's intent: the session's purchase; none
#:                                               for an invoice's intent, sent beside the invoice's
#:                                               invoice.paid: its renewal:, `World._emit_payment_beside`)
#:   invoice.paid and invoice.payment_succeeded -> renewal:{invoice.id} (Stripe sends both for an
#:                                               invoice paid by a payment, the same invoice data:
#:                                               one renewal, owed once, on either; the second only
#:                                               to an endpoint listing it, `World.sent_only`)
#:   invoice.payment_failed                   -> dunning:{invoice.id}:{invoice.attempt_count}
#:   charge.refunded                          -> refund:{charge.id}:{charge.amount_refunded} (cumulative,
#:                                               so each partial refund is its own effect; the refund's
#:                                               own refund.created, sent beside it, owes none: one refund;
#:                                               nor do a delayed method's refund.updated and refund.failed,
#:                                               which carry its status)
#:   charge.dispute.created                   -> dispute:{dispute.id} (a chargeback opened: one effect,
#:                                               revoking access or flagging the order; the dispute's
#:                                               later events carry its status, owing none)
#: Subscription events carry state, observed as (subscription id, status).
BUSINESS_KEYS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "checkout.session.completed": _completed,
    "checkout.session.async_payment_succeeded": lambda o: f"fulfillment:{o['id']}",
    "payment_intent.succeeded": lambda o: f"license:{o['id']}",
    "invoice.paid": lambda o: f"renewal:{o['id']}",
    "invoice.payment_succeeded": lambda o: f"renewal:{o['id']}",
    "invoice.payment_failed": lambda o: f"dunning:{o['id']}:{o['attempt_count']}",
    "charge.refunded": lambda o: f"refund:{o['id']}:{o['amount_refunded']}",
    "charge.dispute.created": lambda o: f"dispute:{o['id']}",
}

#: The ``payment_intent_data.metadata`` the world's own stories' shop sets on a payment-mode
#: Checkout Session's payment intent (and so on its charge), the way a shop selling through
#: Checkout and through its own payment intents tells the two apart: no field of a payment intent
#: names the session that made it, and Stripe's answer is the session's
#: ``payment_intent_data.metadata`` (docs.stripe.com/api/checkout/sessions/create). The
#: reference receivers grant no ``license:`` for an intent carrying it (`WITHHELD_KEYS`).
CHECKOUT_INTENT_METADATA: Mapping[str, str] = {"channel": "checkout"}

#: Stripe's ``description`` of the payment intent (and so the charge) a subscription's invoice
#: makes, by the invoice's ``billing_reason``: its first invoice's, and every other's (a renewal,
#: a change). From API version 2025-03-31.basil on no field of the intent or the charge names the
#: invoice (docs.stripe.com/changelog/basil/2025-03-31/add-support-for-multiple-partial-payments-on-invoices).
SUBSCRIPTION_PAYMENT_DESCRIPTIONS: Mapping[str, str] = {"subscription_create": "Subscription creation",
                                                        "other": "Subscription update"}


def invoice_payment(event: Event) -> bool:
    """True when `event` is about a payment intent or charge a subscription's invoice made (its
    ``description``, `SUBSCRIPTION_PAYMENT_DESCRIPTIONS`; the billing world's events alone)."""
    return (event.object_type in ("payment_intent", "charge") and event.api_version != "user-catalog"
            and event.object.get("description") in SUBSCRIPTION_PAYMENT_DESCRIPTIONS.values())


#: Event type -> (the built-in key its object id would have, why an event of it owes none): the
#: types whose built-in key is made only when a condition holds, so that ``unexpected`` can name
#: the event whose condition failed. Stripe's (`BUSINESS_KEYS`): a fulfilment of a session
#: completed unpaid (docs.stripe.com/checkout/fulfillment, "Handle delayed notification payment
#: methods": fulfil only a session whose payment_status is not unpaid). Paddle's
#: (`simulator.world.paddle`): a refund before Paddle approved it, or one it rejected
#: (developer.paddle.com/webhooks/adjustments/adjustment-updated: refunds "are created as
#: pending_approval initially. On review, they move to approved or rejected").
WITHHELD_KEYS: Mapping[str, tuple[Callable[[str], str], str]] = {
    "checkout.session.completed": (
        lambda object_id: f"fulfillment:{object_id}",
        "it owed no fulfilment: its payment_status was not paid (a delayed payment method completes the "
        "session unpaid; Stripe's fulfilment guide fulfils it only once paid, on "
        "checkout.session.async_payment_succeeded: docs.stripe.com/checkout/fulfillment)"),
    "payment_intent.succeeded": (
        lambda object_id: f"license:{object_id}",
        "it owed no license of its own: a payment-mode Checkout Session made this payment intent, and "
        "Stripe sends its payment_intent.succeeded beside the session's checkout.session.completed (or "
        "async_payment_succeeded) for the same purchase, fulfilled once, on the session's events "
        "(docs.stripe.com/checkout/fulfillment); acting on both fulfils the order twice. Or it is an "
        "invoice's payment intent (a subscription's payment, its description \"Subscription creation\" or "
        "\"Subscription update\"): the invoice owes the effect, once, on its invoice.paid, which Stripe "
        "sends beside it (docs.stripe.com/invoicing/payment-intents); acting on both grants each payment "
        "twice"),
    "adjustment.created": (
        lambda object_id: f"refund:{object_id}",
        "it owed no refund: Paddle creates a refund pending_approval, and the money goes back only once "
        "Paddle approves it, on the adjustment.updated saying approved "
        "(developer.paddle.com/webhooks/adjustments/adjustment-updated)"),
    "adjustment.updated": (
        lambda object_id: f"refund:{object_id}",
        "it owed no refund: Paddle rejected it (status rejected; a refund is owed only on the "
        "adjustment.updated saying approved: developer.paddle.com/webhooks/adjustments/adjustment-updated)"),
}

#: Provider types whose event moves no money while its object's field (first) holds one of the
#: statuses (second): as no built-in key is made for it (`WITHHELD_KEYS`), a counter of the type (a
#: revenue total a refund reduces) does not move on it either. A Checkout Session completed unpaid
#: (its delayed payment is still owed: docs.stripe.com/checkout/fulfillment); a Paddle refund
#: pending approval or rejected (developer.paddle.com/webhooks/adjustments/adjustment-updated).
#: Not a Checkout intent's payment_intent.succeeded: its key is withheld, but its money moved.
MONEYLESS_STATUSES: Mapping[str, tuple[str, frozenset[str]]] = {
    "checkout.session.completed": ("payment_status", frozenset({"unpaid"})),
    "adjustment.created": ("status", frozenset({"pending_approval", "rejected"})),
    "adjustment.updated": ("status", frozenset({"pending_approval", "rejected"})),
}


def moves_no_money(event: Event) -> bool:
    """True when a provider's `event` moves no money (`MONEYLESS_STATUSES`); a user catalog's
    events (its own types) never match."""
    rule = MONEYLESS_STATUSES.get(event.type)
    if rule is None or event.api_version == "user-catalog":  # user_catalog.USER_API_VERSION
        return False
    return event.object.get(rule[0]) in rule[1]


#: The first events of one new object that a provider emits together, each group one object's:
#: a new subscription's (created, updated, its first invoice paid: ``invoice.paid``, and
#: ``invoice.payment_succeeded`` where the endpoint is sent it; and the subscription-mode
#: Checkout Session's completion when it was bought through one) and a payment's
#: (``payment_intent.succeeded`` with ``charge.succeeded``: integrations act on either, Polar's
#: double order). The `related-burst` scenario releases each group at once; storms send them.
RELATED_TYPES: tuple[frozenset[str], ...] = (
    frozenset({"customer.subscription.created", "customer.subscription.updated", "invoice.paid",
               "invoice.payment_succeeded", "checkout.session.completed"}),
    frozenset({"payment_intent.succeeded", "charge.succeeded"}),
)

#: Business-key prefixes whose effects move money (checked by the `counter` check). Not
#: ``provision:``: a subscription's first payment is its first invoice's (``renewal:``), and
#: counting it again under the session would count it twice.
MONEY_PREFIXES: tuple[str, ...] = ("refund:", "license:", "renewal:", "fulfillment:")


#: A built-in Stripe refund key: ``refund:{charge.id}:{charge.amount_refunded}`` (a charge's id
#: begins ``ch_``, or ``py_`` for some payment methods: docs.stripe.com/api/charges/object).
_STRIPE_REFUND_KEY = re.compile(r"refund:(?:ch|py)_[A-Za-z0-9]+:([0-9]+)")


def refunded_total(key: str) -> int | None:
    """The charge's cumulative ``amount_refunded`` (minor units) a built-in Stripe refund key
    carries, or None for any other key. A receiver may record either that refund's own amount or
    this total (docs.stripe.com/api/charges/object ``amount_refunded``: the charge's refunded
    amount so far), so the ``counter`` check accepts both on these keys."""
    found = _STRIPE_REFUND_KEY.fullmatch(key)
    return int(found.group(1)) if found else None


def business_key(event_type: str, obj: Mapping[str, Any]) -> str | None:
    """The business key an event of `event_type` about `obj` must produce, or None."""
    fn = BUSINESS_KEYS.get(event_type)
    return fn(obj) if fn else None
