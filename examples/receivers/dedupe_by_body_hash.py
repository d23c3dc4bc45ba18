"""dedupe_by_body_hash: deduplicates on a hash of the request body.

Exactly inbox_sync, except that the processed key is the SHA-256 of the raw body. A
byte-identical duplicate is caught; the same event re-serialised by the provider on a
retry (other key order, spacing, escapes, a changed ``pending_webhooks``) hashes
differently and is applied again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class DedupeByBodyHash(InboxSync):
    """inbox_sync keyed by sha256(body)."""

    name = "dedupe_by_body_hash"
    framework = "flask"

    def dedupe_key(self, event: WebhookEvent) -> str:
        return "sha256:" + hashlib.sha256(event.raw).hexdigest()


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(DedupeByBodyHash(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, DedupeByBodyHash.name)
