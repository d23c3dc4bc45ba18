"""subscription_prices: inbox_sync that also keeps each subscription's status and price, for
``[observer] state = "SELECT object_id, status, price FROM subscription_prices"`` with
``[observer.state_fields] subscription = { price = "data.object.items.data.0.price.id" }``.

A subscription's price is ``items.data[0].price.id`` in every ``customer.subscription.*``
event (docs.stripe.com/api/subscriptions/object; a plan change is a
``customer.subscription.updated`` whose ``previous_attributes`` holds the old ``items``,
docs.stripe.com/billing/subscriptions/change-price). The row is written only by an event
newer than the one it holds (the object's ``hookproof_version``, as every reference receiver
orders states), status and price together. With ``--option price_arrival_order=1`` (the
broken twin) the status is still kept that way but the price is overwritten by whichever
event arrives last: a plan change delivered before an older event of the subscription
leaves the old price. Run as ``python -m tests.examples.subscription_prices`` from the
repository root (the reference receivers' flags: ``--port``, ``--db``, ``--secret``, ``--option``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

TABLE = "subscription_prices"
#: The state query and the field a config certifying this receiver gives.
STATE_QUERY = f"SELECT object_id, status, price FROM {TABLE}"
PRICE_PATH = "data.object.items.data.0.price.id"


class SubscriptionPrices(InboxSync):
    """inbox_sync plus ``subscription_prices`` (object_id, status, price, version): newest version wins."""

    name = "subscription_prices"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        with self.store.transaction() as conn:
            conn.execute(text(f"CREATE TABLE IF NOT EXISTS {TABLE} (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, "
                              "price TEXT, version INTEGER NOT NULL)"))

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        if event.type.startswith("customer.subscription.") and reply.status < 300:
            obj = event.object
            row = {"id": obj["id"], "status": obj["status"], "price": obj["items"]["data"][0]["price"]["id"],
                   "version": int(obj.get("hookproof_version", 0))}
            newer = f"excluded.version > {TABLE}.version"
            price = "excluded.price" if self.config.option("price_arrival_order", 0) else \
                f"CASE WHEN {newer} THEN excluded.price ELSE {TABLE}.price END"
            with self.store.transaction() as conn:
                conn.execute(text(f"INSERT INTO {TABLE} (object_id, status, price, version) "
                                  "VALUES (:id, :status, :price, :version) ON CONFLICT (object_id) DO UPDATE SET "
                                  f"status = CASE WHEN {newer} THEN excluded.status ELSE {TABLE}.status END, "
                                  f"price = {price}, "
                                  f"version = MAX(excluded.version, {TABLE}.version)"), row)
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SubscriptionPrices(config))


if __name__ == "__main__":
    run_cli(create_app, SubscriptionPrices.name)
