"""unknown_type_500: dispatches on a table of handlers with no default.

``HANDLERS[event.type]`` raises KeyError for any type the team did not write a handler
for (``customer.created``, ``invoice.created``, ``charge.succeeded``… or one Stripe adds
next year), so the endpoint answers 500 and the provider retries it for days and
eventually disables the endpoint, losing the events that mattered.
Handled types are processed as in inbox_sync.
"""

from __future__ import annotations

from typing import Any, Callable

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class UnknownType500(InboxSync):
    """inbox_sync behind a handler table without a fallback."""

    name = "unknown_type_500"
    framework = "flask"

    def process(self, event: WebhookEvent) -> Reply:
        handlers: dict[str, Callable[[WebhookEvent], Reply]] = {
            "checkout.session.completed": self.fulfil_order,
            "checkout.session.async_payment_succeeded": self.fulfil_order,
            "payment_intent.succeeded": self.grant_license,
            "invoice.paid": self.renew,
            "invoice.payment_failed": self.start_dunning,
            "charge.refunded": self.credit_refund,
            "customer.subscription.created": self.sync_subscription,
            "customer.subscription.updated": self.sync_subscription,
            "customer.subscription.deleted": self.sync_subscription,
        }
        return handlers[event.type](event)

    fulfil_order = grant_license = renew = start_dunning = credit_refund = sync_subscription = InboxSync.process


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(UnknownType500(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, UnknownType500.name)
