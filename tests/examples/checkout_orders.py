"""checkout_orders: a shop fulfilling each Stripe Checkout order once, keyed by its payment intent.

inbox_sync whose only effect is an order, ``order:{payment intent}``: a one-off payment's (an
intent no session made: no ``channel: checkout`` in its ``payment_intent_data.metadata``) on its
``payment_intent.succeeded``; a Checkout purchase's with ``--option fulfil_on=0`` (the default)
on the session's ``checkout.session.completed`` when paid and on
``checkout.session.async_payment_succeeded`` (Stripe's "Fulfill orders" guide,
docs.stripe.com/checkout/fulfillment); with ``fulfil_on=1`` on ``payment_intent.succeeded``
alone; with ``fulfil_on=2`` (the broken twin) on both, which Stripe sends for one purchase. Run
as ``python -m tests.examples.checkout_orders`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect
from hookproof.receivers.inbox_sync import InboxSync

#: ``fulfil_on`` -> the event types the shop fulfils on.
FULFILS_ON = {0: ("checkout.session.completed", "checkout.session.async_payment_succeeded"),
              1: ("payment_intent.succeeded",)}
FULFILS_ON[2] = FULFILS_ON[0] + FULFILS_ON[1]


class CheckoutOrders(InboxSync):
    """inbox_sync fulfilling an order per payment intent, on the types `FULFILS_ON` names."""

    __test__ = False  # not a pytest test class
    name = "checkout_orders"
    framework = "fastapi"

    def effect_of(self, event: WebhookEvent) -> Effect | None:  # type: ignore[override]
        obj = event.object
        fulfils_on = FULFILS_ON[int(self.config.option("fulfil_on", 0))]
        checkout = (obj.get("metadata") or {}).get("channel") == "checkout"  # the sessions' payment_intent_data
        if event.type == "payment_intent.succeeded" and (event.type in fulfils_on or not checkout):
            return Effect(f"order:{obj['id']}", obj.get("amount"))
        if event.type not in fulfils_on or obj.get("mode") != "payment" or obj.get("payment_status") != "paid":
            return None
        return Effect(f"order:{obj['payment_intent']}", obj.get("amount_total"))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(CheckoutOrders(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, CheckoutOrders.name)
