"""dedupe_by_type_and_object: deduplicates on the event type and the object, not the event.

Exactly inbox_sync, except that the processed key is ``type:data.object.id``. Duplicates are
caught, and the first event of each type about an object is applied, but every *later,
distinct* event of the same type about that object is taken for a duplicate: a
subscription's second ``customer.subscription.updated`` (now past due) never reaches its
state, the second payment failure of an invoice is never recorded, and the second partial
refund of a charge is never credited. A subscription that is created, updated and then
deleted still ends in the right state, so only scenarios that end on a repeated type see it.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class DedupeByTypeAndObject(InboxSync):
    """inbox_sync keyed by the event type and the object id."""

    name = "dedupe_by_type_and_object"
    framework = "fastapi"

    def dedupe_key(self, event: WebhookEvent) -> str:
        return f"{event.type}:{event.object_id}"


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(DedupeByTypeAndObject(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, DedupeByTypeAndObject.name)
