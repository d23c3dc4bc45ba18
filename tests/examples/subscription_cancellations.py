"""subscription_cancellations: inbox_sync that also keeps each subscription's status and whether
its cancellation is scheduled, for ``[observer] state = "SELECT object_id, status,
cancel_at_period_end FROM subscription_cancellations"`` with ``[observer.state_fields]
subscription = { cancel_at_period_end = "data.object.cancel_at_period_end" }``.

The Customer Portal's default cancellation sends ``customer.subscription.updated`` with
``cancel_at_period_end: true`` (the subscription still ``active``), a reactivation sends it back
to ``false``, and at the period's end ``customer.subscription.deleted`` (docs.stripe.com/billing/
subscriptions/cancel). The row is written only by an event newer than the one it holds (the
object's ``hookproof_version``), status and flag together. With ``--option
cancel_arrival_order=1`` (the broken twin) the status is still kept that way but the flag is
overwritten by whichever event arrives last. Run as ``python -m
tests.examples.subscription_cancellations`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

TABLE = "subscription_cancellations"
#: The state query and the field a config certifying this receiver gives.
STATE_QUERY = f"SELECT object_id, status, cancel_at_period_end FROM {TABLE}"
CANCEL_PATH = "data.object.cancel_at_period_end"


class SubscriptionCancellations(InboxSync):
    """inbox_sync plus ``subscription_cancellations`` (object_id, status, cancel_at_period_end as
    ``true``/``false``, version): newest version wins."""

    name = "subscription_cancellations"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        with self.store.transaction() as conn:
            conn.execute(text(f"CREATE TABLE IF NOT EXISTS {TABLE} (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, "
                              "cancel_at_period_end TEXT NOT NULL, version INTEGER NOT NULL)"))

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        if event.type.startswith("customer.subscription.") and reply.status < 300:
            obj = event.object
            row = {"id": obj["id"], "status": obj["status"],
                   "cape": "true" if obj["cancel_at_period_end"] else "false",
                   "version": int(obj.get("hookproof_version", 0))}
            newer = f"excluded.version > {TABLE}.version"
            flag = "excluded.cancel_at_period_end" if self.config.option("cancel_arrival_order", 0) else \
                f"CASE WHEN {newer} THEN excluded.cancel_at_period_end ELSE {TABLE}.cancel_at_period_end END"
            with self.store.transaction() as conn:
                conn.execute(text(f"INSERT INTO {TABLE} (object_id, status, cancel_at_period_end, version) "
                                  "VALUES (:id, :status, :cape, :version) ON CONFLICT (object_id) DO UPDATE SET "
                                  f"status = CASE WHEN {newer} THEN excluded.status ELSE {TABLE}.status END, "
                                  f"cancel_at_period_end = {flag}, "
                                  f"version = MAX(excluded.version, {TABLE}.version)"), row)
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SubscriptionCancellations(config))


if __name__ == "__main__":
    run_cli(create_app, SubscriptionCancellations.name)
