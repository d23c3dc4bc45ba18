"""lru_dedupe: remembers the last 100 processed event ids in memory (an LRU cache).

Check-and-add happens under a lock, so copies that arrive together or shortly after
each other are caught, and memory stays bounded. But the provider's redeliveries are not
always recent: after an incident it replays a whole window of events, and every id
that has fallen out of the cache by then is applied again, without any restart.

Options: ``lru_size`` (100), the ids remembered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli


class LruDedupe(Receiver):
    """A locked, bounded in-memory LRU of seen event ids; effects in the database."""

    name = "lru_dedupe"
    framework = "flask"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.size = max(1, int(config.option("lru_size", 100)))
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def process(self, event: WebhookEvent) -> Reply:
        with self._lock:
            if event.id in self._seen:
                self._seen.move_to_end(event.id)
                return Reply(200, {"duplicate": event.id})
            self._seen[event.id] = None
            if len(self._seen) > self.size:
                self._seen.popitem(last=False)  # the least recently seen id is forgotten
        try:
            effect, state = self.effect_of(event), self.state_of(event)
            with self.store.transaction() as conn:
                if effect is not None:
                    self.store.apply_effect(conn, effect, event.id)
                if state is not None:
                    self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        except Exception:
            with self._lock:
                self._seen.pop(event.id, None)  # not applied: let the provider's retry through
            raise
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(LruDedupe(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, LruDedupe.name)
