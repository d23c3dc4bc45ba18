"""A receiver whose parser rejects one valid event type's body.

Exactly inbox_sync, except that every ``charge.succeeded`` is answered ``400 could not
parse the event`` (a model of the payload stricter than the provider's own: a new field, a
null it did not expect). The delivery is valid, correctly signed and of a type the receiver
subscribes to; the provider counts the 400 as a failed delivery. Nothing else is refused.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

#: The event type this receiver's parser rejects.
REJECTED = "charge.succeeded"


class RejectsOneType(InboxSync):
    """inbox_sync refusing `REJECTED` with a 400."""

    name = "rejects_one_type"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        if event.type == REJECTED:
            return Reply(400, {"error": "could not parse the event"})
        return super().process(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(RejectsOneType(config))


if __name__ == "__main__":
    run_cli(create_app, RejectsOneType.name)
