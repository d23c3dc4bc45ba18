"""World scripts: the smallest story that makes the world emit a given event type."""

from __future__ import annotations

from typing import Callable

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world.world import World


def _customer(w: World) -> str:
    return w.event(w.create_customer()).object_id


def _refund(w: World) -> None:
    pi = w.pay(_customer(w))
    charge = w.get(pi)["latest_charge"]
    w.refund(charge, w.get(charge)["amount"] // 2)


def _async_checkout(w: World, succeeded: bool) -> None:
    cus = _customer(w)
    cs = w.open_checkout(cus, w.create_price(interval=None), asynchronous=True)
    w.complete_checkout(cs)
    w.settle_async_checkout(cs, succeeded=succeeded)


def _expired_checkout(w: World) -> None:
    cus = _customer(w)
    w.expire_checkout(w.open_checkout(cus, w.create_price(interval=None)))


def _checkout(w: World) -> None:
    cus = _customer(w)
    w.complete_checkout(w.open_checkout(cus, w.create_price(interval=None)))


def _failed_renewal(w: World) -> None:
    w.renew(w.subscribe(_customer(w)), pay=False)


def _voided(w: World) -> None:
    sub = w.subscribe(_customer(w))
    inv = w.renew(sub, pay=False)
    w.void_invoice(inv)


def _paused(w: World) -> str:
    sub = w.subscribe(_customer(w), trial=True)
    w.pause(sub)
    return sub


def _resumed(w: World) -> None:
    w.resume(_paused(w))


def _payment_succeeded(w: World) -> None:
    """A subscription whose first invoice is paid, told as to an endpoint sent
    ``invoice.payment_succeeded`` (`World.payment_succeeded_sent`; what it was before after)."""
    sent = w.payment_succeeded_sent
    w.payment_succeeded_sent = True
    try:
        w.subscribe(_customer(w))
    finally:
        w.payment_succeeded_sent = sent


def _trial_will_end(w: World) -> None:
    """A subscription on a free trial, three days before the trial ends (`World.trial_will_end`)."""
    w.trial_will_end(w.subscribe(_customer(w), trial=True))


def _dispute(w: World, won: bool = True) -> None:
    """A card payment charged back (`World.dispute`): opened, funds withdrawn, evidence
    submitted, then `won` (the funds reinstated) or lost."""
    w.dispute(w.get(w.pay(_customer(w)))["latest_charge"], won=won)


def _delayed_refund(w: World, succeeded: bool = True) -> None:
    """Half of an ACH Direct Debit Checkout payment refunded (``pending``), then its bank's
    answer (`World.settle_refund`): `succeeded`, or failed."""
    cs = w.open_checkout(_customer(w), w.create_price(interval=None), asynchronous=True,
                         delayed_method="us_bank_account")
    w.complete_checkout(cs)
    w.settle_async_checkout(cs)
    charge = w.get(w.get(cs)["payment_intent"])["latest_charge"]
    w.settle_refund(w.refund(charge, w.get(charge)["amount"] // 2), succeeded=succeeded)


#: Stripe event type -> a script that makes a fresh world emit it.
SCRIPTS: dict[str, Callable[[World], object]] = {
    "customer.created": _customer,
    "payment_intent.succeeded": lambda w: w.pay(_customer(w)),
    "payment_intent.payment_failed": lambda w: w.fail_payment(_customer(w)),
    "charge.succeeded": lambda w: w.pay(_customer(w)),
    "charge.failed": lambda w: w.fail_payment(_customer(w)),
    "charge.refunded": _refund,
    "refund.created": _refund,
    "checkout.session.completed": _checkout,
    "checkout.session.async_payment_succeeded": lambda w: _async_checkout(w, True),
    "checkout.session.async_payment_failed": lambda w: _async_checkout(w, False),
    "checkout.session.expired": _expired_checkout,
    "invoice.created": lambda w: w.subscribe(_customer(w)),
    "invoice.paid": lambda w: w.subscribe(_customer(w)),
    "invoice.payment_succeeded": _payment_succeeded,
    "invoice.payment_failed": _failed_renewal,
    "invoice.voided": _voided,
    "customer.subscription.created": lambda w: w.subscribe(_customer(w)),
    "customer.subscription.updated": lambda w: w.renew(w.subscribe(_customer(w))),
    "customer.subscription.deleted": lambda w: w.cancel(w.subscribe(_customer(w))),
    "customer.subscription.paused": _paused,
    "customer.subscription.resumed": _resumed,
    "customer.subscription.trial_will_end": _trial_will_end,
    "charge.dispute.created": _dispute,
    "charge.dispute.funds_withdrawn": _dispute,
    "charge.dispute.updated": _dispute,
    "charge.dispute.closed": _dispute,
    "charge.dispute.funds_reinstated": _dispute,
    "refund.updated": _delayed_refund,
    "refund.failed": lambda w: _delayed_refund(w, False),
}


def _subscription_checkout_expired(w: World) -> None:
    w.expire_checkout(w.open_checkout(_customer(w), w.create_price(), mode="subscription"))


#: Checkout mode -> the Stripe event types a Checkout Session of that mode can emit -> a script
#: that makes a fresh world emit it from a session of that mode (``payment``: `SCRIPTS`'; a
#: subscription-mode session completes, starting its subscription, or expires; Stripe's
#: ``async_payment_*`` events are a delayed payment method's, which the world pays in payment mode).
CHECKOUT_MODE_SCRIPTS: dict[str, dict[str, Callable[[World], object]]] = {
    "payment": {t: SCRIPTS[t] for t in SCRIPTS if t.startswith("checkout.session.")},
    "subscription": {
        "checkout.session.completed": lambda w: w.subscribe_through_checkout(_customer(w)),
        "checkout.session.expired": _subscription_checkout_expired,
    },
}


#: Event type -> the script that makes a Connect world (a connected account, `World.connected`)
#: emit it: a new seller onboarded (`World.onboard_account`).
CONNECT_SCRIPTS: dict[str, Callable[[World], object]] = {
    "account.updated": lambda w: w.onboard_account(),
}


def events_of_type(world: World, event_type: str, count: int = 1, *, checkout_mode: str | None = None) -> list[Event]:
    """Run the script for `event_type` `count` times; return the emitted events of that type.
    `checkout_mode` (``payment``, ``subscription``; None: the type's own script) picks the mode
    of the Checkout Session a ``checkout.session.*`` type is emitted from.

    Raises WorldError for a type no script emits, or no session of `checkout_mode` emits.
    """
    script = SCRIPTS.get(event_type) or CONNECT_SCRIPTS.get(event_type)
    if checkout_mode is not None:
        scripts = CHECKOUT_MODE_SCRIPTS.get(checkout_mode)
        if scripts is None:
            raise WorldError(f"no checkout mode {checkout_mode!r} (known: {', '.join(CHECKOUT_MODE_SCRIPTS)})")
        script = scripts.get(event_type)
        if script is None:
            raise WorldError(f"a {checkout_mode}-mode checkout session emits no {event_type!r} "
                             f"(it emits {', '.join(sorted(scripts))})")
    if script is None:
        raise WorldError(f"no world script emits {event_type!r} (known: {', '.join(sorted(SCRIPTS))})")
    start = len(world.events)
    for _ in range(count):
        script(world)
    return [e for e in world.events[start:] if e.type == event_type]
