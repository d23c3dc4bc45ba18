"""payment_intent_states: inbox_sync that also keeps each payment intent's and checkout
session's status, for ``[observer.states] payment_intent = "SELECT object_id, status FROM
payment_intent_states"`` and ``"checkout.session" = "SELECT object_id, status FROM
checkout_session_states"``.

A payment intent's ``succeeded`` is final in Stripe's lifecycle (docs.stripe.com/payments/paymentintents/lifecycle):
the receiver never writes another status over it, so a ``payment_intent.payment_failed``
delivered after the ``payment_intent.succeeded`` of the same intent changes nothing. With
``--option arrival_order=1`` (the broken twin) it stores each status as its event arrives, and
the late failure leaves a paid intent ``requires_payment_method``. A checkout session's
``status`` is ``complete`` or ``expired`` on every event it has: it is stored as it comes.
Run as ``python -m tests.examples.payment_intent_states`` from the repository root
(the reference receivers' flags: ``--port``, ``--db``, ``--secret``, ``--option``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

TABLES = ("payment_intent_states", "checkout_session_states")


class PaymentIntentStates(InboxSync):
    """inbox_sync plus ``payment_intent_states`` (``succeeded`` is never overwritten) and
    ``checkout_session_states``."""

    name = "payment_intent_states"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        with self.store.transaction() as conn:
            for table in TABLES:
                conn.execute(text(f"CREATE TABLE IF NOT EXISTS {table} (object_id TEXT PRIMARY KEY, status TEXT NOT NULL)"))

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        if event.type.startswith("payment_intent.") and reply.status < 300:
            guard = "" if self.config.option("arrival_order", 0) else " WHERE payment_intent_states.status != 'succeeded'"
            with self.store.transaction() as conn:
                conn.execute(text("INSERT INTO payment_intent_states (object_id, status) VALUES (:id, :status) "
                                  f"ON CONFLICT (object_id) DO UPDATE SET status = excluded.status{guard}"),
                             {"id": event.object["id"], "status": event.object["status"]})
        if event.type.startswith("checkout.session.") and reply.status < 300:
            with self.store.transaction() as conn:
                conn.execute(text("INSERT INTO checkout_session_states (object_id, status) VALUES (:id, :status) "
                                  "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status"),
                             {"id": event.object["id"], "status": event.object["status"]})
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(PaymentIntentStates(config))


if __name__ == "__main__":
    run_cli(create_app, PaymentIntentStates.name)
