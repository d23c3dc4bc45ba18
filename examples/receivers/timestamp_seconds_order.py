"""timestamp_seconds_order: orders state changes by the event's ``created`` second.

Exactly inbox_sync, except that an update wins only when ``event.created`` is strictly
greater than the ``created`` of the last applied event. ``created`` has one-second
resolution and several changes often share a second: the later of two same-second
events is dropped (a cancellation right after a renewal is ignored), and the order of
same-second events is otherwise arbitrary. The object's own version is stored but not
used for ordering.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from hookproof.receivers import ReceiverConfig, StateChange, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class TimestampSecondsOrder(InboxSync):
    """inbox_sync ordering state by ``created`` seconds, strictly newer wins."""

    name = "timestamp_seconds_order"
    framework = "flask"

    def save_state(self, conn: Connection, event: WebhookEvent, state: StateChange) -> None:
        current = self.store.read_state(conn, state.object_id)
        if current is None or event.created > (current.event_created or 0):
            self.store.write_state(conn, state, only_newer=False, event_created=event.created)


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(TimestampSecondsOrder(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, TimestampSecondsOrder.name)
