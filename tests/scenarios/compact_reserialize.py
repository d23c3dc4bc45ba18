"""A receiver verifying the signature over its own compact re-dump of the JSON.

Exactly inbox_sync, except that the verifier is handed
``json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False)``: byte for byte the
body a provider sends compact (``generic-hmac``), so every first delivery verifies, and a
retry whose JSON was re-serialised (other key order or escapes, still correctly signed) is
refused with a 4xx after its event was acknowledged. The provider then retries it for days.
Stripe sends its bodies pretty-printed, so under ``stripe`` every genuine delivery is refused.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, SignatureError, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class CompactReserialize(InboxSync):
    """inbox_sync verifying a compact re-dump of the body."""

    name = "compact_reserialize"
    framework = "fastapi"

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        try:
            payload = json.loads(body)
        except ValueError as exc:
            raise SignatureError(f"invalid JSON: {exc}") from exc
        return self.verifier.verify(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode(), headers)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(CompactReserialize(config))


if __name__ == "__main__":
    run_cli(create_app, CompactReserialize.name)
