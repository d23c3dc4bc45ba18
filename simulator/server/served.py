"""What the provider API served: each object's statuses, in the order its fetches were answered.

A receiver that fetches the object a notification names (Mercado Pago's thin notifications)
decides on what the provider API answered then, and the provider's clock
(`simulator.server.clock`) serves each object as of the deliveries made so far: after a late
or redelivered notification, a later status. `served_log(state)` is the log of one
`ServerState` (its `served`); every provider's routes that serve an object add it and its
status (`ServedLog.add`); `scenarios.fetched_states` names them in a ``lost`` finding, and a
state finding says a state no delivered event carried was served only for an object the API
did serve (`ServedLog.fetched`, `scenarios.observations.Expectations.fetched`). Object ids
are fresh per scenario, so the log needs no marks; it keeps `MAX_OBJECTS` objects and
`MAX_STATUSES` statuses each (the oldest forgotten first). It also keeps the ids of the events
the API served (`GET /v1/events/{id}`, at most `MAX_OBJECTS`): a run refused with 400 after its
receiver fetched the events it was sent says so in its headline (`hookproof.headline`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Iterable

#: Objects the log keeps, and statuses per object.
MAX_OBJECTS = 4096
MAX_STATUSES = 16


class ServedLog:
    """Object id → the statuses the provider API served for it, oldest first. Thread-safe."""

    def __init__(self, capacity: int = MAX_OBJECTS) -> None:
        self._lock = threading.Lock()
        self._capacity = capacity
        self._served: OrderedDict[str, list[str]] = OrderedDict()
        self._events: OrderedDict[str, None] = OrderedDict()

    def add(self, object_id: str, status: object) -> None:
        """Record that `object_id` was served, with `status` when it is text (an object whose
        snapshot has no text status is still recorded as fetched, `fetched`)."""
        with self._lock:
            statuses = self._served.get(object_id)
            if statuses is None:
                statuses = self._served[object_id] = []
                while len(self._served) > self._capacity:
                    self._served.popitem(last=False)
            if isinstance(status, str) and len(statuses) < MAX_STATUSES:
                statuses.append(status)

    def fetched(self, object_ids: Iterable[str]) -> frozenset[str]:
        """Those of `object_ids` the provider API served at least once."""
        with self._lock:
            return frozenset(o for o in object_ids if o in self._served)

    def add_event(self, event_id: str) -> None:
        """Record that the event `event_id` was served (the oldest of `MAX_OBJECTS` forgotten)."""
        with self._lock:
            self._events[event_id] = None
            while len(self._events) > self._capacity:
                self._events.popitem(last=False)

    def events_among(self, event_ids: Iterable[str]) -> int:
        """How many of `event_ids` (distinct) the API served as events."""
        with self._lock:
            return sum(1 for e in set(event_ids) if e in self._events)

    def statuses(self, object_id: str) -> list[str]:
        """The statuses served for `object_id`, oldest first ([] when it was never fetched)."""
        with self._lock:
            return list(self._served.get(object_id, ()))


def served_log(state: Any) -> ServedLog:
    """The ServedLog a provider server's `state` (a `ServerState`) keeps."""
    log: ServedLog = state.served
    return log


__all__ = ["MAX_OBJECTS", "MAX_STATUSES", "ServedLog", "served_log"]
