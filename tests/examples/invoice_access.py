"""invoice_access: a SaaS extending access once per paid invoice, on the invoice event its team picked.

inbox_sync whose renewal (``renewal:{invoice}``) is granted with ``--option extend_on=0`` (the
default) on ``invoice.paid``, with ``extend_on=1`` on ``invoice.payment_succeeded`` alone (as
Stripe's older subscription guides did), and with ``extend_on=2`` (the broken twin) on both,
which Stripe sends for every invoice paid by a payment (docs.stripe.com/invoicing/integration,
"Handle payment events": both carry the same invoice data, listen to one); hookproof sends
``invoice.payment_succeeded`` to an endpoint whose ``enabled_events`` lists it. Every other effect
is inbox_sync's. Run as ``python -m tests.examples.invoice_access`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, amount_of, effect_of
from hookproof.receivers.inbox_sync import InboxSync

#: ``extend_on`` -> the invoice event types the access is extended on.
EXTENDS_ON = {0: ("invoice.paid",), 1: ("invoice.payment_succeeded",),
              2: ("invoice.paid", "invoice.payment_succeeded")}


class InvoiceAccess(InboxSync):
    """inbox_sync extending access per paid invoice on the types `EXTENDS_ON` names."""

    __test__ = False  # not a pytest test class
    name = "invoice_access"
    framework = "fastapi"

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
