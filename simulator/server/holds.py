"""Held fetches: the provider API slow to answer one fetch, its snapshot taken on arrival.

A real provider API reads an object when the request arrives and answers some time later
(Stripe's retrieve calls answer in hundreds of milliseconds, now and then in seconds).
While that answer is on its way the object may change and the provider deliver the event
of the change; a receiver handling that newer event fetches the newer state at once. If
the older fetch's write lands last, the newer state is lost: a read-fetch-write without a
row lock. `HeldFetches` lets a scenario make that happen on purpose: armed for one object
id (`arm`), the provider API's next retrieve of that object renders the object as served
at that moment and then holds the answer (`take`, `Hold.wait`) until the scenario releases
it (`release`: the newer event was delivered) or `max_s` seconds have passed, whichever
comes first. `max_s` stays far below any client's timeout (stripe-python's default is
80 s; a held answer is at most `HOLD_MAX_S`), so the receiver sees a slow answer, never a
failed one.

Thread-safe: the scenario's thread arms and releases, the server's event loop takes and
waits (polling, so it never blocks the loop).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

#: The longest a held answer waits (seconds): a slow answer of a real API, inside every
#: SDK's timeout (stripe-python 80 s, the example receivers' 5 s).
HOLD_MAX_S = 1.0
#: How often a held answer looks whether it was released (seconds).
POLL_S = 0.005


@dataclass
class Hold:
    """One armed hold: taken by the first fetch of its object, released by the scenario or
    after `max_s` seconds from being taken."""

    object_id: str
    max_s: float
    taken_at: float | None = None
    released: threading.Event = field(default_factory=threading.Event)

    async def wait(self) -> float:
        """Wait until released or `max_s` after it was taken; returns the seconds held."""
        start = time.monotonic()
        while not self.released.is_set() and time.monotonic() - start < self.max_s:
            await asyncio.sleep(POLL_S)
        return time.monotonic() - start


class HeldFetches:
    """The provider API's armed holds, per object id (one fetch each)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[str, Hold] = {}

    def arm(self, object_id: str, max_s: float = HOLD_MAX_S) -> Hold:
        """Hold the answer to the next fetch of `object_id` for at most `max_s` seconds
        (0 < max_s <= `HOLD_MAX_S`; else ValueError)."""
        if not 0 < max_s <= HOLD_MAX_S:
            raise ValueError(f"a held fetch waits more than 0 and at most {HOLD_MAX_S} s, not {max_s}")
        hold = Hold(object_id, max_s)
        with self._lock:
            self._holds[object_id] = hold
        return hold

    def take(self, object_id: str) -> Hold | None:
        """The hold armed for `object_id` and not taken yet, now taken (the caller has read the
        object and waits `Hold.wait` before answering); None when there is none."""
        with self._lock:
            hold = self._holds.get(object_id)
            if hold is None or hold.taken_at is not None:
                return None
            hold.taken_at = time.monotonic()
            return hold

    def taken(self, object_id: str) -> bool:
        """True when the hold armed for `object_id` was taken by a fetch."""
        with self._lock:
            hold = self._holds.get(object_id)
            return hold is not None and hold.taken_at is not None

    def release(self, object_id: str) -> None:
        """Let the held answer about `object_id` go now (nothing when none is held)."""
        with self._lock:
            hold = self._holds.get(object_id)
        if hold is not None:
            hold.released.set()

    def armed(self, object_id: str) -> Hold | None:
        """The hold armed for `object_id` (taken or not, released or not); None when there is none."""
        with self._lock:
            return self._holds.get(object_id)

    def disarm(self, object_id: str) -> None:
        """Release and forget the hold of `object_id`."""
        with self._lock:
            hold = self._holds.pop(object_id, None)
        if hold is not None:
            hold.released.set()


async def answer_late(holds: HeldFetches, object_id: str) -> None:
    """Before answering a fetch of `object_id` (read already): wait while a hold armed for it
    is held (`HeldFetches.take`, `Hold.wait`); return at once when none is armed. Every
    provider's API calls it (Stripe's, Mercado Pago's, Paddle's, Shopify's, GitHub's)."""
    hold = holds.take(object_id)
    if hold is not None:
        await hold.wait()


async def after_phases(holds: HeldFetches, object_id: str) -> None:
    """Once every phase of the scenario was answered, before any read of the receiver: a hold on
    `object_id` not taken yet is released (a fetch the receiver makes from now on is answered at
    once: every newer event was delivered, nothing is left to overtake it), and one taken and
    still held is waited out (its release or its `Hold.max_s`, at most `HOLD_MAX_S` seconds).
    A receiver answering first and fetching afterwards (a worker, a queue) takes the hold while
    no delivery is in flight, so the scenario never releases it on an answer; reading the
    receiver meanwhile would judge a state the provider API had not yet answered it. Nothing
    when no hold is armed."""
    hold = holds.armed(object_id)
    if hold is None:
        return
    if hold.taken_at is None:
        holds.release(object_id)
        return
    while not hold.released.is_set() and time.monotonic() - hold.taken_at < hold.max_s:
        await asyncio.sleep(POLL_S)


__all__ = ["HOLD_MAX_S", "HeldFetches", "Hold", "after_phases", "answer_late"]
