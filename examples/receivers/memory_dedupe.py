"""memory_dedupe: remembers processed event ids in a set in process memory.

Check-and-add happens under a lock, so within one process it is correct, even under
concurrent bursts. But the set is empty after every restart or deploy, and each
replica behind a load balancer has its own: a retry that lands after a restart or on
another replica applies the effect again.
"""

from __future__ import annotations

import threading
from typing import Any

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli


class MemoryDedupe(Receiver):
    """A locked in-memory set of seen event ids; effects in the database."""

    name = "memory_dedupe"
    framework = "flask"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def process(self, event: WebhookEvent) -> Reply:
        with self._lock:
            if event.id in self._seen:
                return Reply(200, {"duplicate": event.id})
            self._seen.add(event.id)
        try:
            effect, state = self.effect_of(event), self.state_of(event)
            with self.store.transaction() as conn:
                if effect is not None:
                    self.store.apply_effect(conn, effect, event.id)
                if state is not None:
                    self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        except Exception:
            with self._lock:
                self._seen.discard(event.id)  # not applied: let the provider's retry through
            raise
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(MemoryDedupe(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, MemoryDedupe.name)
