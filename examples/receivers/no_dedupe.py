"""no_dedupe: applies every delivery it receives.

Verifies the signature, keeps subscription state versioned, but has no memory of
which events it already handled: at-least-once delivery means every duplicate, retry
after a lost answer or sender timeout, and every replay applies the effect again
(a second license, a renewal credited twice).
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli


class NoDedupe(Receiver):
    """Effect and state in one transaction, without a processed-events check."""

    name = "no_dedupe"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        effect, state = self.effect_of(event), self.state_of(event)
        with self.store.transaction() as conn:
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(NoDedupe(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, NoDedupe.name)
