"""downstream_keyed: the effect is a call to an idempotent API, keyed by the business intent.

The receiver keeps no dedupe table of its own for effects: it calls the downstream
effect API (``POST {sink}/sink/effects``) with ``Idempotency-Key: {business_key}``,
a key derived from what the effect *is* (``license:pi_…``), so every duplicate
delivery and every retry of the call carries the same key and the API applies it
once. Transient answers (409 while the same key is in flight, 429, 5xx, a timeout, or
a connection dropped after the API applied the effect) are retried with backoff and
the same key; if the API stays unavailable the receiver answers 503 and the provider's
own retry reuses the key again. Subscription state stays local, versioned.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import OK, Effect, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.sink import SinkClient, SinkError, with_retries


class DownstreamKeyed(Receiver):
    """Effects through the sink with an intent-derived Idempotency-Key, reused on every retry."""

    name = "downstream_keyed"
    framework = "flask"

    def __init__(self, config: ReceiverConfig) -> None:
        if not config.sink_url:
            raise ValueError(f"{self.name} needs --sink (the effect API's base URL)")
        super().__init__(config)
        self.sink = SinkClient(config.sink_url)

    def process(self, event: WebhookEvent) -> Reply:
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is not None:
            try:
                self.send_effect(effect)
            except SinkError as exc:
                return Reply(503, {"error": str(exc)})
        if state is not None:
            with self.store.transaction() as conn:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        return OK if effect or state else Reply(200, {"ignored": event.type})

    def send_effect(self, effect: Effect) -> None:
        """Call the effect API; the key names the intent, so retries and duplicates collapse."""
        key = f"hookproof-example:{effect.business_key}"
        with_retries(lambda: self.sink.post_effect(effect, key))

    def close(self) -> None:
        self.sink.close()
        super().close()


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(DownstreamKeyed(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, DownstreamKeyed.name)
