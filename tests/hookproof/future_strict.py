"""A Stripe receiver stricter than Stripe's SDK: inbox_sync that also refuses a signature
timestamp more than 300 s in the future (the SDK checks only the past). Run as
``python -m tests.hookproof.future_strict`` (the reference receivers' CLI)."""

from __future__ import annotations

import time
from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, SignatureError, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

#: Seconds a signature's timestamp may lie ahead of this receiver's clock.
FUTURE_TOLERANCE_S = 300


class FutureStrict(InboxSync):
    """inbox_sync refusing a ``Stripe-Signature`` whose ``t=`` is in the future past the tolerance."""

    name = "future_strict"
    framework = "fastapi"

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        event = self.verifier.verify(body, headers)
        fields = dict(part.split("=", 1) for part in headers.get("stripe-signature", "").split(",") if "=" in part)
        if int(fields.get("t", "0")) > time.time() + FUTURE_TOLERANCE_S:
            raise SignatureError("timestamp in the future")
        return event


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FutureStrict(config))


if __name__ == "__main__":
    run_cli(create_app, FutureStrict.name)
