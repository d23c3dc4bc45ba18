"""fulfil_check_then_insert: inbox_sync, except that a fulfilment is check-then-insert.

Every event is handled as inbox_sync handles it (event id claimed, effect applied, in one
transaction), except the events that fulfil a checkout session (a paid
``checkout.session.completed``, ``checkout.session.async_payment_succeeded``): those go
through check_then_insert (``SELECT`` the event id, call the fulfilment service, then insert
the effect and the log row, with no unique constraint), so two copies of one such event
arriving together both ship the order. Only Checkout's events expose it: a run that never
sends them (no checkout story) passes it.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.check_then_insert import CheckThenInsert
from hookproof.receivers.inbox_sync import InboxSync


class FulfilCheckThenInsert(InboxSync, CheckThenInsert):
    """inbox_sync whose checkout fulfilments are check-then-insert (`CheckThenInsert.process`)."""

    __test__ = False  # not a pytest test class
    name = "fulfil_check_then_insert"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        effect = self.effect_of(event)
        if effect is not None and effect.business_key.startswith("fulfillment:"):
            return CheckThenInsert.process(self, event)
        return InboxSync.process(self, event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FulfilCheckThenInsert(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FulfilCheckThenInsert.name)
