"""no_signature_check: trusts any well-formed JSON sent to the endpoint.

Exactly inbox_sync, except that the body is decoded without verifying its signature.
Anyone who knows the URL can post a ``payment_intent.succeeded`` and get a license,
or an ``invoice.paid`` and get a renewal credited (forged credit).
"""

from __future__ import annotations

from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class NoSignatureCheck(InboxSync):
    """inbox_sync without verification."""

    name = "no_signature_check"
    framework = "flask"

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        return self.verifier.decode(body, headers)


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(NoSignatureCheck(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, NoSignatureCheck.name)
