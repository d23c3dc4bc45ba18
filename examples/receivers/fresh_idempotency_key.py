"""fresh_idempotency_key: calls the effect API with a new random Idempotency-Key each time.

Exactly downstream_keyed, except that the key is ``uuid4()`` generated inside the
retried call. The header is there, but it protects nothing: when the effect API
applies the effect and the connection drops before its answer, the retry carries a new
key and is applied again; every duplicate delivery of the event gets a new key too.
"""

from __future__ import annotations

import uuid
from typing import Any

from examples.receivers.downstream_keyed import DownstreamKeyed
from hookproof.receivers import Effect, ReceiverConfig, make_app, run_cli
from hookproof.receivers.sink import with_retries


class FreshIdempotencyKey(DownstreamKeyed):
    """downstream_keyed with a per-call random key."""

    name = "fresh_idempotency_key"
    framework = "flask"

    def send_effect(self, effect: Effect) -> None:
        with_retries(lambda: self.sink.post_effect(effect, str(uuid.uuid4())))


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(FreshIdempotencyKey(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FreshIdempotencyKey.name)
