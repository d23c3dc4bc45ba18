"""A test receiver: inbox_sync that applies every event and then answers 500 to one type.

Applying and then failing is allowed (the provider retries a 5xx and the dedupe keeps
the effect single), but its ``invoice.paid`` deliveries never get a 2xx, retries
included: a fault armed on a count of 2xx answers (`crash-after-ack`'s kill) never fires.
Run as ``python -m tests.chaos.applies_then_500 --port P --db URL --secret S``.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

#: The event type answered 500 after it was applied.
FAILING_TYPE = "invoice.paid"


class AppliesThen500(InboxSync):
    """inbox_sync, then 500 for `FAILING_TYPE`."""

    name = "applies_then_500"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        if event.type == FAILING_TYPE and 200 <= reply.status < 300:
            return Reply(500, {"error": "applied, then failed"})
        return reply


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(AppliesThen500(config))


if __name__ == "__main__":
    run_cli(create_app, AppliesThen500.name)
