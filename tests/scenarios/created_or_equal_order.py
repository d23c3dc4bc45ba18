"""created_or_equal_order: a test twin of `examples.receivers.timestamp_seconds_order` with ``>=``.

inbox_sync, except that an update wins when ``event.created`` is greater than or equal to the
``created`` of the last applied one. Stripe's ``created`` counts whole seconds, so an older
event of the same second delivered after a newer one brings back the state the object left (a
canceled subscription active again). Run as ``python -m tests.scenarios.created_or_equal_order``
from the repository root.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from examples.receivers.timestamp_seconds_order import TimestampSecondsOrder
from hookproof.receivers import ReceiverConfig, StateChange, WebhookEvent, make_app, run_cli


class CreatedOrEqualOrder(TimestampSecondsOrder):
    """inbox_sync ordering state by ``created`` seconds, newer or the same second wins."""

    name = "created_or_equal_order"

    def save_state(self, conn: Connection, event: WebhookEvent, state: StateChange) -> None:
        current = self.store.read_state(conn, state.object_id)
        if current is None or event.created >= (current.event_created or 0):
            self.store.write_state(conn, state, only_newer=False, event_created=event.created)


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(CreatedOrEqualOrder(config))


if __name__ == "__main__":
    run_cli(create_app, CreatedOrEqualOrder.name)
