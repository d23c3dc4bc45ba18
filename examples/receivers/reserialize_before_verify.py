"""reserialize_before_verify: parses the JSON, then verifies the signature over a re-dump.

Exactly inbox_sync, except that the body handed to the verifier is
``json.dumps(json.loads(body))`` (a framework that gives the handler parsed JSON
invites this). The signature covers the exact bytes sent; Python's default
``json.dumps`` (one line, ``", "`` and ``": "`` separators, non-ASCII escaped) differs
from the provider's JSON, Stripe's pretty-printed lines as much as other providers'
compact JSON, so every genuine delivery is rejected with 400 and nothing is ever applied
(after days of retries the provider disables the endpoint).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, SignatureError, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class ReserializeBeforeVerify(InboxSync):
    """inbox_sync verifying a re-serialised body."""

    name = "reserialize_before_verify"
    framework = "fastapi"

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        try:
            payload = json.loads(body)
        except ValueError as exc:
            raise SignatureError(f"invalid JSON: {exc}") from exc
        return self.verifier.verify(self.redump(payload), headers)

    def redump(self, payload: Any) -> bytes:
        """The bytes handed to the verifier: Python's default re-dump of the parsed body."""
        return json.dumps(payload).encode("utf-8")


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(ReserializeBeforeVerify(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, ReserializeBeforeVerify.name)
