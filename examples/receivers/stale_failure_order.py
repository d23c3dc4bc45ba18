"""stale_failure_order: moves invoices and their subscription by invoice outcomes, in arrival order.

Exactly inbox_sync, plus a shortcut many integrations take: each new invoice event sets
the invoice's status (``invoice_states``) in arrival order, whatever its version, and an
``invoice.paid`` marks the invoice's subscription active and an ``invoice.payment_failed``
marks it past due (the stored version is kept: the invoice event says nothing about it).
When a renewal fails on its first attempt and is paid on the second, and the failure is
delivered after the payment, the paid invoice ends ``open`` and its subscription past due
(Polar #14274: an order marked failed after it was paid). The subscription's next
``customer.subscription.updated`` repairs the subscription, so where the provider sends
one after the payment (Stripe does) only the invoice's state shows the fault for good.
"""

from __future__ import annotations

from typing import Any, Mapping

from sqlalchemy import update

from examples.receivers.get_or_create_atomic import invoice_subscription
from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import invoice_state_of
from hookproof.receivers.db import invoice_states, subscription_states
from hookproof.receivers.inbox_sync import InboxSync

#: Invoice event type -> the subscription status it is taken to mean.
STATUS_OF: Mapping[str, str] = {"invoice.paid": "active", "invoice.payment_failed": "past_due"}


class StaleFailureOrder(InboxSync):
    """inbox_sync, plus last-arrival-wins invoice status and subscription status from invoice events."""

    name = "stale_failure_order"
    framework = "flask"

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        invoice = invoice_state_of(event)
        if invoice is not None and reply.status == 200 and "duplicate" not in reply.body:
            with self.store.transaction() as conn:  # the fault: the last event to arrive wins
                self.store.write_state(conn, invoice, only_newer=False, event_created=event.created,
                                       table=invoice_states)
        subscription = invoice_subscription(event.object)
        if event.type in STATUS_OF and subscription and reply.status == 200 and "duplicate" not in reply.body:
            with self.store.transaction() as conn:
                conn.execute(update(subscription_states).where(subscription_states.c.object_id == subscription)
                             .values(status=STATUS_OF[event.type]))
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(StaleFailureOrder(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, StaleFailureOrder.name)
