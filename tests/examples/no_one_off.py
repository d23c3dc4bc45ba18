"""no_one_off: a SaaS that bills plans alone, written from Stripe's "Using webhooks with
subscriptions" (docs.stripe.com/billing/subscriptions/webhooks): it provisions on Checkout and
extends access on ``invoice.paid``, and never handles ``payment_intent.succeeded``: it takes no
one-off payments, so it acknowledges one and applies nothing. Otherwise plans_only (inbox_sync
for subscription-mode sessions alone). Correct for an endpoint not subscribed to
``payment_intent.succeeded``; sent every type, its every license is lost.
Run as ``python -m tests.examples.no_one_off`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect
from tests.examples.plans_only import PlansOnly


class NoOneOff(PlansOnly):
    """plans_only that applies nothing for ``payment_intent.succeeded``."""

    __test__ = False  # not a pytest test class
    name = "no_one_off"

    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        if event.type == "payment_intent.succeeded":
            return None
        return PlansOnly.effect_of(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(NoOneOff(config))


if __name__ == "__main__":
    run_cli(create_app, NoOneOff.name)
