"""fulfil_unpaid: fulfils every completed checkout session, paid or not.

Exactly inbox_sync, except that a payment-mode ``checkout.session.completed`` fulfils the
order whatever its ``payment_status`` (a subscription-mode one provisions as inbox_sync
does). A session paid by an asynchronous method (ACH or SEPA Direct Debit, Boleto) completes
``unpaid``: Stripe's fulfilment docs ("Fulfill orders", "Handle delayed notification payment
methods") say to fulfil it only on ``checkout.session.async_payment_succeeded``; when the
payment then fails, the goods are gone and nothing was paid.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, amount_of, effect_of
from hookproof.receivers.inbox_sync import InboxSync


class FulfilUnpaid(InboxSync):
    """inbox_sync that fulfils a completed checkout session without looking at its payment."""

    __test__ = False  # not a pytest test class
    name = "fulfil_unpaid"
    framework = "fastapi"

    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        if event.type == "checkout.session.completed" and event.object.get("mode") != "subscription":
            return Effect(f"fulfillment:{event.object['id']}", amount_of(event))
        return effect_of(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FulfilUnpaid(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FulfilUnpaid.name)
