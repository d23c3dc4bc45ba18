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

from hookproof.receivers import ReceiverConfig, make_app, run_cli
from tests.examples.subscription_field import SubscriptionField

TABLE = "subscription_prices"
#: The state query and the field a config certifying this receiver gives.
STATE_QUERY = f"SELECT object_id, status, price FROM {TABLE}"
PRICE_PATH = "data.object.items.data.0.price.id"


class SubscriptionPrices(SubscriptionField):
    """inbox_sync plus ``subscription_prices`` (object_id, status, price, version): newest version wins."""

    name = "subscription_prices"
    table = TABLE
    column = "price"
    twin_option = "price_arrival_order"

    def value(self, obj: dict[str, Any]) -> str:
        return str(obj["items"]["data"][0]["price"]["id"])


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SubscriptionPrices(config))


if __name__ == "__main__":
    run_cli(create_app, SubscriptionPrices.name)
