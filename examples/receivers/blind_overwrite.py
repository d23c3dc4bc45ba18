"""blind_overwrite: writes whatever status the payload carries, whatever its age.

Exactly inbox_sync, except that subscription state is upserted without comparing
versions. Providers do not guarantee order: an ``updated`` (active) snapshot that
arrives after the ``deleted`` one revives a canceled subscription, and a retry of an
old event rolls the status back.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from hookproof.receivers import ReceiverConfig, StateChange, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class BlindOverwrite(InboxSync):
    """inbox_sync with last-arrival-wins state."""

    name = "blind_overwrite"
    framework = "fastapi"

    def save_state(self, conn: Connection, event: WebhookEvent, state: StateChange) -> None:
        self.store.write_state(conn, state, only_newer=False, event_created=event.created)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(BlindOverwrite(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, BlindOverwrite.name)
