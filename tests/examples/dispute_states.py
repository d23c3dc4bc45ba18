"""dispute_states: inbox_sync that also keeps each dispute's and refund's status, for
``[observer.states] dispute = "SELECT object_id, status FROM dispute_states"`` and ``refund =
"SELECT object_id, status FROM refund_states"``.

A digital-goods shop's answer to Stripe's chargebacks and bank refunds: one ``dispute:`` effect
when a dispute opens (``charge.dispute.created``, the reference receivers' key), and each
dispute's and refund's status kept newest version first, so a ``charge.dispute.created``
(``needs_response``) or a ``refund.created`` (``pending``) delivered after the dispute's
``won`` or the refund's ``succeeded`` changes nothing. Options (the broken twins):
``arrival_order=1`` stores each status as its event arrives; ``effect_per_event=1`` records a
``dispute:`` effect on every dispute event, not only on its creation. Run as ``python -m
tests.examples.dispute_states`` from the repository root (the reference receivers' flags).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from hookproof.receivers import Effect, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

#: The object kind of each table, by the id prefix of its objects.
TABLES = {"dispute_states": "charge.dispute.", "refund_states": "refund."}


class DisputeStates(InboxSync):
    """inbox_sync plus ``dispute_states`` and ``refund_states`` (newest version first)."""

    name = "dispute_states"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        with self.store.transaction() as conn:
            for table in TABLES:
                conn.execute(text(f"CREATE TABLE IF NOT EXISTS {table} (object_id TEXT PRIMARY KEY, "
                                  "status TEXT NOT NULL, version INTEGER NOT NULL)"))

    def effect_of(self, event: WebhookEvent) -> Effect | None:
        if self.config.option("effect_per_event", 0) and event.type.startswith("charge.dispute."):
            return Effect(f"dispute:{event.object['id']}", event.object["amount"])
        return super().effect_of(event)

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        for table, prefix in TABLES.items():
            if event.type.startswith(prefix) and reply.status < 300:
                guard = "" if self.config.option("arrival_order", 0) else f" WHERE {table}.version < excluded.version"
                with self.store.transaction() as conn:
                    conn.execute(text(f"INSERT INTO {table} (object_id, status, version) VALUES (:id, :status, :v) "
                                      "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                                      f"version = excluded.version{guard}"),
                                 {"id": event.object["id"], "status": event.object["status"],
                                  "v": int(event.object.get("hookproof_version", 0))})
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(DisputeStates(config))


if __name__ == "__main__":
    run_cli(create_app, DisputeStates.name)
