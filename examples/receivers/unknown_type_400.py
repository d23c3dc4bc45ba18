"""unknown_type_400: refuses event types it does not handle with a 400.

A "strict" endpoint: anything it has no handler for is answered ``400 unsupported
event type``. The provider reads a 4xx as a failed delivery: Stripe retries it for up
to three days and disables an endpoint that keeps failing, so one new event type
Stripe starts sending costs the events that mattered. 2xx is the contract for types a
receiver does not handle. Handled types are processed as in inbox_sync.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, handles, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class UnknownType400(InboxSync):
    """inbox_sync that refuses unhandled types instead of acknowledging them."""

    name = "unknown_type_400"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        if not handles(event.type):
            return Reply(400, {"error": f"unsupported event type {event.type}"})
        return super().process(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(UnknownType400(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, UnknownType400.name)
