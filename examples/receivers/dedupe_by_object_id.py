"""dedupe_by_object_id: deduplicates on the object the event is about, not the event.

Exactly inbox_sync, except that the processed key is ``data.object.id``. Duplicates are
caught, but so is every *later, distinct* event about the same object: the invoice that
failed and was then paid never records the renewal, the second partial refund of a
charge is never credited, and a subscription's status stops at its first event
(a cancellation is ignored).
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class DedupeByObjectId(InboxSync):
    """inbox_sync keyed by the object id."""

    name = "dedupe_by_object_id"
    framework = "fastapi"

    def dedupe_key(self, event: WebhookEvent) -> str:
        return str(event.object_id)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(DedupeByObjectId(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, DedupeByObjectId.name)
