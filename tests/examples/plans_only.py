"""plans_only: a SaaS that sells plans alone, written from Stripe's "Build a subscriptions
integration" (docs.stripe.com/billing/subscriptions/build-subscriptions): its Checkout opens
``mode=subscription`` sessions only, so it provisions on a subscription-mode
``checkout.session.completed`` and applies nothing for a payment-mode session (it never opened
one). Otherwise inbox_sync. Correct for such a shop: `[target] checkout_modes = ["subscription"]`
says so to hookproof.
Run as ``python -m tests.examples.plans_only`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, effect_of
from hookproof.receivers.inbox_sync import InboxSync


class PlansOnly(InboxSync):
    """inbox_sync that applies nothing for a payment-mode Checkout Session's events."""

    __test__ = False  # not a pytest test class
    name = "plans_only"
    framework = "fastapi"

    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        if event.type.startswith("checkout.session.") and event.object.get("mode") != "subscription":
            return None
        return effect_of(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(PlansOnly(config))


if __name__ == "__main__":
    run_cli(create_app, PlansOnly.name)
