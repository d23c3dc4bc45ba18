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

from hookproof.receivers import ReceiverConfig, make_app, run_cli
from tests.examples.subscription_field import SubscriptionField

TABLE = "subscription_cancellations"
#: The state query and the field a config certifying this receiver gives.
STATE_QUERY = f"SELECT object_id, status, cancel_at_period_end FROM {TABLE}"
CANCEL_PATH = "data.object.cancel_at_period_end"


class SubscriptionCancellations(SubscriptionField):
    """inbox_sync plus ``subscription_cancellations`` (object_id, status, cancel_at_period_end as
    ``true``/``false``, version): newest version wins."""

    name = "subscription_cancellations"
    table = TABLE
    column = "cancel_at_period_end"
    column_type = "TEXT NOT NULL"
    twin_option = "cancel_arrival_order"

    def value(self, obj: dict[str, Any]) -> str:
        return "true" if obj["cancel_at_period_end"] else "false"


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SubscriptionCancellations(config))


if __name__ == "__main__":
    run_cli(create_app, SubscriptionCancellations.name)
