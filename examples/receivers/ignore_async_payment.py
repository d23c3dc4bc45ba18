"""ignore_async_payment: fulfils only on ``checkout.session.completed``.

Exactly inbox_sync, except that ``checkout.session.async_payment_succeeded`` does nothing. A
session paid by a delayed method (ACH or SEPA Direct Debit, Boleto) completes ``unpaid`` and is paid days
later: Stripe's fulfilment docs ("Fulfill orders", "Handle delayed notification payment
methods") call the fulfilment from both events; this receiver never ships what such a
customer paid for.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, effect_of
from hookproof.receivers.inbox_sync import InboxSync


class IgnoreAsyncPayment(InboxSync):
    """inbox_sync that ignores ``checkout.session.async_payment_succeeded``."""

    __test__ = False  # not a pytest test class
    name = "ignore_async_payment"
    framework = "fastapi"

    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        if event.type == "checkout.session.async_payment_succeeded":
            return None
        return effect_of(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(IgnoreAsyncPayment(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, IgnoreAsyncPayment.name)
