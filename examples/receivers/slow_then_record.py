"""slow_then_record: performs a slow effect, and only then records the event id.

The handler checks ``processed_events``, applies the effect (grant the license, then
render and e-mail the license PDF: about 2 s), and records the event id at the end. A
provider that gives up waiting (sender timeout) or loses the answer retries while the
first attempt is still inside the effect; the retry finds no record and grants the
license again. Quick, sequential duplicates are handled fine.

Options: ``effect_delay_s`` (2.0).
"""

from __future__ import annotations

import time
from typing import Any

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli


class SlowThenRecord(Receiver):
    """Check, slow effect, record: the record comes too late."""

    name = "slow_then_record"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        with self.store.transaction() as conn:
            if self.store.is_processed(conn, event.id):
                return Reply(200, {"duplicate": event.id})
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is not None:
            with self.store.transaction() as conn:
                self.store.apply_effect(conn, effect, event.id)
            time.sleep(self.config.option("effect_delay_s", 2.0))  # render and e-mail the license PDF
        with self.store.transaction() as conn:
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
            self.store.claim(conn, event.id, event.id)
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SlowThenRecord(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, SlowThenRecord.name)
