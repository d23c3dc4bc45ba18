"""mark_before_effect: records the event as processed, then performs the effect.

The event id is committed to ``processed_events`` first ("so we never do it twice"),
then the effect is written to the ledger in a second step. When that step fails the
handler answers 500, the provider retries, the retry finds the event marked and
answers 200: the effect is lost for good (a paid renewal never credited).

The ledger failure is modelled as a lock wait timeout: the ledger serialises writers
per business key and its first write for a key times out waiting for the lock
(option ``ledger_lock_timeouts``, default 1 per key; 0 gives a ledger that never fails).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from hookproof.receivers import OK, Effect, Receiver, ReceiverConfig, Reply, Store, WebhookEvent, make_app, run_cli


class LockWaitTimeout(Exception):
    """The ledger could not take its per-key lock in time (a transient error)."""


class Ledger:
    """The accounting ledger the effect is written to (its own transaction)."""

    def __init__(self, store: Store, lock_timeouts_per_key: int) -> None:
        self.store = store
        self.lock_timeouts_per_key = lock_timeouts_per_key
        self._tries: Counter[str] = Counter()
        self._mutex = threading.Lock()

    def post(self, effect: Effect, event_id: str) -> None:
        with self._mutex:
            self._tries[effect.business_key] += 1
            contended = self._tries[effect.business_key] <= self.lock_timeouts_per_key
        if contended:
            raise LockWaitTimeout(f"lock wait timeout exceeded for ledger key {effect.business_key}")
        with self.store.transaction() as conn:
            self.store.apply_effect(conn, effect, event_id)


class MarkBeforeEffect(Receiver):
    """Commit "processed", then attempt the effect."""

    name = "mark_before_effect"
    framework = "flask"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.ledger = Ledger(self.store, int(config.option("ledger_lock_timeouts", 1)))

    def process(self, event: WebhookEvent) -> Reply:
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is None and state is None:
            return Reply(200, {"ignored": event.type})
        with self.store.transaction() as conn:
            if not self.store.claim(conn, event.id, event.id):
                return Reply(200, {"duplicate": event.id})
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        if effect is not None:
            self.ledger.post(effect, event.id)  # LockWaitTimeout -> 500, after the mark was committed
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(MarkBeforeEffect(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, MarkBeforeEffect.name)
