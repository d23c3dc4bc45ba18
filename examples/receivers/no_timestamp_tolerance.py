"""no_timestamp_tolerance: checks the HMAC but not the signed timestamp's age.

Exactly inbox_sync, except that verification runs with no tolerance (Stripe:
``stripe.WebhookSignature.verify_header(..., tolerance=None)``). A captured request
stays valid forever: an attacker who once saw a delivery can replay it months later
(with dedupe by event id the replay of the *same* event is harmless; a captured event
the receiver has pruned from its processed table, or a different endpoint sharing the
secret, is not).
"""

from __future__ import annotations

from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class NoTimestampTolerance(InboxSync):
    """inbox_sync verifying signatures without a timestamp window."""

    name = "no_timestamp_tolerance"
    framework = "fastapi"

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        return self.verifier.verify(body, headers, tolerance_s=None)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(NoTimestampTolerance(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, NoTimestampTolerance.name)
