"""What a storm user sends next: world events with duplicates, bursts, reordering and waves.

`StormPlan` is pure and deterministic from its seed: it draws events from a source
(`loadtests.stories.StoryBook.stream`: world stories replayed with fresh ids, each
event with its rendered envelope; plain `Event`s work too), and turns them into
*groups*, each released together by the Locust user:

- **reordering**: the next event is drawn at random from a buffer of the next
  `reorder_window` events, so events of one object arrive out of order (1 = in order);
- **duplicates**: a share `duplicates` of events is delivered more than once. With
  ``burst >= 2`` a duplicated event is a group of `burst` concurrent copies; with
  ``burst == 1`` its second copy comes `reorder_window` groups later;
- **mass-redelivery waves**: `start_wave` queues a replay of every event sent in the
  last `wave_window_s` seconds, shuffled; `next_replay` hands them out one at a time
  (the user sends them on top of the regular rate, as a provider's backlog replay).

Tags recorded with each attempt (benign in `scenarios.checks`): ``burst=N`` for burst
copies, ``copies=N`` for a later copy, ``copies=wave-K`` for a replay of wave K.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from hookproof.loadtests.stories import Rendered
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope


@dataclass(frozen=True)
class Send:
    """One delivery of one event (its first attempt; retries keep the delivery id).

    Attributes:
        event: the world event.
        delivery_id: ``dlv_<event id>_<copy>``, unique per delivery.
        copy: 1-based copy number among this event's deliveries.
        tags: fault tags recorded with every attempt of this delivery.
        envelope: the event's envelope when the source rendered it, else None (the
            sender renders it).
    """

    event: Event
    delivery_id: str
    copy: int
    tags: tuple[str, ...] = ()
    envelope: Envelope | None = None


class StormPlan:
    """Groups of sends for one user, deterministic from `seed` (see the module docstring).

    Args:
        events: the event source (finite or endless).
        duplicates: share of events delivered more than once, in [0, 1].
        burst: concurrent copies of a duplicated event (1: one later copy instead).
        reorder_window: events the next one is drawn from (1: emitted order).
        wave_window_s: a wave replays what was sent in this many last seconds.
        seed: drives every random choice.

    Raises:
        ValueError: a parameter out of range.
    """

    def __init__(self, events: Iterable[Event | Rendered], *, duplicates: float = 0.0, burst: int = 1,
                 reorder_window: int = 1, wave_window_s: float = 5.0, seed: int = 0) -> None:
        if not 0.0 <= duplicates <= 1.0:
            raise ValueError(f"duplicates must be in [0, 1], got {duplicates!r}")
        if burst < 1 or reorder_window < 1:
            raise ValueError("burst and reorder_window must be >= 1")
        if wave_window_s < 0:
            raise ValueError("wave_window_s must be >= 0")
        self._source = (e if isinstance(e, Rendered) else Rendered(e, None) for e in events)
        self.duplicates = duplicates
        self.burst = burst
        self.reorder_window = reorder_window
        self.wave_window_s = wave_window_s
        self._rng = random.Random(seed)
        self._buffer: list[Rendered] = []
        self._later: list[tuple[int, int, Send]] = []  # (due tick, order, send): a min-heap
        self._copies: dict[str, int] = {}
        self._sent: deque[tuple[float, Rendered]] = deque()
        self._replays: deque[Send] = deque()
        self._tick = 0
        self._waves = 0
        self.exhausted = False

    # ---- regular groups -----------------------------------------------------------
    def next_group(self, elapsed_s: float = 0.0) -> tuple[Send, ...]:
        """The next group to release together at `elapsed_s` (empty when the source is
        exhausted and nothing is pending)."""
        self._tick += 1
        if self._later and self._later[0][0] <= self._tick:
            send = heapq.heappop(self._later)[2]
            self._remember(elapsed_s, Rendered(send.event, send.envelope))
            return (send,)
        item = self._draw()
        if item is None:
            if self._later:
                send = heapq.heappop(self._later)[2]
                return (send,)
            return ()
        self._remember(elapsed_s, item)
        if self.duplicates and self._rng.random() < self.duplicates:
            if self.burst >= 2:
                tag = f"burst={self.burst}"
                return tuple(self._send(item, (tag,)) for _ in range(self.burst))
            first = self._send(item, ())
            later = self._send(item, (f"copies={first.copy + 1}",))
            heapq.heappush(self._later, (self._tick + self.reorder_window, self._tick, later))
            return (first,)
        return (self._send(item, ()),)

    def _draw(self) -> Rendered | None:
        while len(self._buffer) < self.reorder_window and not self.exhausted:
            try:
                self._buffer.append(next(self._source))
            except StopIteration:
                self.exhausted = True
        if not self._buffer:
            return None
        i = self._rng.randrange(len(self._buffer)) if len(self._buffer) > 1 else 0
        self._buffer[i], self._buffer[-1] = self._buffer[-1], self._buffer[i]
        return self._buffer.pop()

    def _send(self, item: Rendered, tags: tuple[str, ...]) -> Send:
        event = item.event
        copy = self._copies.get(event.id, 0) + 1
        self._copies[event.id] = copy
        return Send(event, f"dlv_{event.id}_{copy}", copy, tags, item.envelope)

    def _remember(self, elapsed_s: float, item: Rendered) -> None:
        self._sent.append((elapsed_s, item))
        horizon = elapsed_s - self.wave_window_s
        while self._sent and self._sent[0][0] < horizon:
            self._sent.popleft()

    # ---- waves --------------------------------------------------------------------
    def start_wave(self, elapsed_s: float) -> int:
        """Queue a replay of every event sent in the last `wave_window_s` seconds before
        `elapsed_s`, shuffled, once per event. Returns how many were queued."""
        self._waves += 1
        horizon = elapsed_s - self.wave_window_s
        window = list({r.event.id: r for t, r in self._sent if t >= horizon}.values())
        self._rng.shuffle(window)
        tag = f"copies=wave-{self._waves}"
        self._replays.extend(self._send(e, (tag,)) for e in window)
        return len(window)

    def next_replay(self) -> Send | None:
        """The next queued replay, or None."""
        return self._replays.popleft() if self._replays else None

    @property
    def replays_pending(self) -> int:
        return len(self._replays)


__all__ = ["Send", "StormPlan"]
