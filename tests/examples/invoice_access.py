"""invoice_access: a SaaS extending access once per paid invoice, on the invoice event its team picked.

inbox_sync whose renewal (``renewal:{invoice}``) is granted with ``--option extend_on=0`` (the
default) on ``invoice.paid``, with ``extend_on=1`` on ``invoice.payment_succeeded`` alone (as
Stripe's older subscription guides did), and with ``extend_on=2`` (the broken twin) on both,
which Stripe sends for every invoice paid by a payment (docs.stripe.com/invoicing/integration,
"Handle payment events": both carry the same invoice data, listen to one); hookproof sends
``invoice.payment_succeeded`` to an endpoint whose ``enabled_events`` lists it. Every other effect
is inbox_sync's. With ``--option racy_succeeded=1`` an ``invoice.payment_succeeded`` is deduplicated
as check_then_insert does (look its id up, about 50 ms of work, then insert the effect and the log
row, no UNIQUE), so two copies in flight together both extend; every other event stays
inbox_sync's. Run as ``python -m tests.examples.invoice_access`` from the repository root.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert, select

from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, amount_of, effect_of
from hookproof.receivers.db import webhook_log
from hookproof.receivers.inbox_sync import InboxSync

#: ``extend_on`` -> the invoice event types the access is extended on.
EXTENDS_ON = {0: ("invoice.paid",), 1: ("invoice.payment_succeeded",),
              2: ("invoice.paid", "invoice.payment_succeeded")}


class InvoiceAccess(InboxSync):
    """inbox_sync extending access per paid invoice on the types `EXTENDS_ON` names."""

    __test__ = False  # not a pytest test class
    name = "invoice_access"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        if event.type != "invoice.payment_succeeded" or not self.config.option("racy_succeeded", 0):
            return super().process(event)
        with self.store.transaction() as conn:  # check_then_insert's window: check, work, insert
            if conn.execute(select(webhook_log.c.id).where(webhook_log.c.event_id == event.id)).first():
                return Reply(200, {"duplicate": event.id})
        effect = self.effect_of(event)
        if effect is not None:
            time.sleep(0.05)  # the work between the check and the insert
        with self.store.transaction() as conn:
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            conn.execute(insert(webhook_log).values(event_id=event.id, logged_at=time.time()))
        return OK

    def effect_of(self, event: WebhookEvent) -> Effect | None:  # type: ignore[override]
        if event.type not in ("invoice.paid", "invoice.payment_succeeded"):
            return effect_of(event)
        if event.type not in EXTENDS_ON[int(self.config.option("extend_on", 0))]:
            return None
        return Effect(f"renewal:{event.object['id']}", amount_of(event))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(InvoiceAccess(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, InvoiceAccess.name)
