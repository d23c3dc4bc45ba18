"""conflict_on_duplicate: answers 409 Conflict to an event it already processed.

Exactly inbox_sync, except for the answer to a duplicate. Effects stay exactly-once, but
the provider counts 409 as a failed delivery: it keeps retrying the event for days,
reports the endpoint as failing and may disable it, after which real events are lost.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class ConflictOnDuplicate(InboxSync):
    """inbox_sync answering 409 to duplicates."""

    name = "conflict_on_duplicate"
    framework = "fastapi"

    def duplicate_reply(self, event: WebhookEvent) -> Reply:
        return Reply(409, {"error": f"event {event.id} was already processed"})


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(ConflictOnDuplicate(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, ConflictOnDuplicate.name)
