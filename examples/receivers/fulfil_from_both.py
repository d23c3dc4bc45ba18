"""fulfil_from_both: fulfils a Checkout purchase on the session's events and on its payment intent's.

Exactly inbox_sync, except that every ``payment_intent.succeeded`` grants a license, a Checkout
Session's intent too. Stripe sends a paid payment-mode session's ``payment_intent.succeeded``
(and ``charge.succeeded``) beside ``checkout.session.completed``, and a delayed method's
beside ``checkout.session.async_payment_succeeded`` (the Stripe CLI's ``stripe trigger
checkout.session.completed`` logs all three); Stripe's "Fulfill orders" guide fulfils on the
Checkout events alone (docs.stripe.com/checkout/fulfillment). A shop acting on both ships
each Checkout order twice, once per event type, whatever its dedupe by event id. Likewise an
invoice's intent (a subscription's payment, sent beside its ``invoice.paid``: "Invoices
automatically create PaymentIntents", docs.stripe.com/invoicing/payment-intents): its license
beside the invoice's renewal grants each subscription payment twice.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, amount_of, effect_of
from hookproof.receivers.inbox_sync import InboxSync


class FulfilFromBoth(InboxSync):
    """inbox_sync that grants a license for a Checkout Session's (and an invoice's) payment intent too."""

    __test__ = False  # not a pytest test class
    name = "fulfil_from_both"
    framework = "fastapi"

    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        if event.type == "payment_intent.succeeded":
            return Effect(f"license:{event.object['id']}", amount_of(event))
        return effect_of(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FulfilFromBoth(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FulfilFromBoth.name)
