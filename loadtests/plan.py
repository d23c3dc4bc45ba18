"""What a storm user sends next: world events with duplicates, bursts, reordering and waves.

`StormPlan` is pure and deterministic from its seed: it draws events from a source
(`story_events`: endless customer lifecycles of one `World`), and turns them into
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
import json
import random
import re
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator

from simulator.events import Event
from simulator.world import World


@dataclass(frozen=True)
class Send:
    """One delivery of one event (its first attempt; retries keep the delivery id).

    Attributes:
        event: the world event.
        delivery_id: ``dlv_<event id>_<copy>``, unique per delivery.
        copy: 1-based copy number among this event's deliveries.
        tags: fault tags recorded with every attempt of this delivery.
    """

    event: Event
    delivery_id: str
    copy: int
    tags: tuple[str, ...] = ()


def story_events(world: World, keep: Callable[[Event], bool]) -> Iterator[Event]:
    """Endless customer lifecycles of `world` (pay, subscribe, renew, fail, recover,
    refund, cancel), keeping the events `keep` accepts, in emitted order.

    Stops (instead of looping forever) if 100 lifecycles in a row keep no event.
    """
    barren = 0
    while barren < 100:
        kept = [e for e in world.lifecycle() if keep(e)]
        barren = 0 if kept else barren + 1
        yield from kept


#: A world id: a lowercase prefix (``cs_test`` included) and 24 letters or digits.
_WORLD_ID = re.compile(r"\b([a-z]{2,5}(?:_test|_live)?_[A-Za-z0-9]{18})[A-Za-z0-9]{6}\b")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _suffix(n: int) -> str:
    out = ""
    for _ in range(6):
        n, r = divmod(n, 62)
        out = _BASE62[r] + out
    return out


def renamed(story: list[Event], copy_no: int) -> list[Event]:
    """`story` with every world id's last 6 characters replaced by `copy_no` in base 62:
    the same truth (versions, statuses, amounts, keys) about fresh objects and events.

    Ids are renamed in the event id, object id, business key, snapshot, previous
    attributes, request id and extras alike, so the renamed story stays consistent.
    """
    tail = _suffix(copy_no)

    def sub(text: str) -> str:
        return _WORLD_ID.sub(lambda m: m.group(1) + tail, text)

    out = []
    for e in story:
        payload = json.loads(sub(json.dumps([e.object, e.previous_attributes, dict(e.extra)])))
        out.append(replace(e, id=sub(e.id), object_id=sub(e.object_id), object=payload[0],
                           previous_attributes=payload[1], extra=payload[2],
                           business_key=sub(e.business_key) if e.business_key else None,
                           request_id=sub(e.request_id) if e.request_id else None))
    return out


def recycled_events(world: World, keep: Callable[[Event], bool], *, stories: int = 16,
                    max_events: int = 50_000_000) -> Iterator[Event]:
    """Like `story_events`, cheaply: `stories` lifecycles are built once (the world's
    snapshots are costly), then replayed with fresh ids (`renamed`), at most
    `max_events` events. Copy 0 is the world's own ids."""
    templates = [kept for kept in ([e for e in world.lifecycle() if keep(e)] for _ in range(stories)) if kept]
    count = 0
    copy_no = 0
    while templates and count < max_events:
        for story in templates:
            for event in (story if copy_no == 0 else renamed(story, copy_no)):
                yield event
                count += 1
        copy_no += 1


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

    def __init__(self, events: Iterable[Event], *, duplicates: float = 0.0, burst: int = 1,
                 reorder_window: int = 1, wave_window_s: float = 5.0, seed: int = 0) -> None:
        if not 0.0 <= duplicates <= 1.0:
            raise ValueError(f"duplicates must be in [0, 1], got {duplicates!r}")
        if burst < 1 or reorder_window < 1:
            raise ValueError("burst and reorder_window must be >= 1")
        if wave_window_s < 0:
            raise ValueError("wave_window_s must be >= 0")
        self._source = iter(events)
        self.duplicates = duplicates
        self.burst = burst
        self.reorder_window = reorder_window
        self.wave_window_s = wave_window_s
        self._rng = random.Random(seed)
        self._buffer: list[Event] = []
        self._later: list[tuple[int, int, Send]] = []  # (due tick, order, send): a min-heap
        self._copies: dict[str, int] = {}
        self._sent: deque[tuple[float, Event]] = deque()
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
            self._remember(elapsed_s, send.event)
            return (send,)
        event = self._draw()
        if event is None:
            if self._later:
                send = heapq.heappop(self._later)[2]
                return (send,)
            return ()
        self._remember(elapsed_s, event)
        if self.duplicates and self._rng.random() < self.duplicates:
            if self.burst >= 2:
                tag = f"burst={self.burst}"
                return tuple(self._send(event, (tag,)) for _ in range(self.burst))
            first = self._send(event, ())
            later = self._send(event, (f"copies={first.copy + 1}",))
            heapq.heappush(self._later, (self._tick + self.reorder_window, self._tick, later))
            return (first,)
        return (self._send(event, ()),)

    def _draw(self) -> Event | None:
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

    def _send(self, event: Event, tags: tuple[str, ...]) -> Send:
        copy = self._copies.get(event.id, 0) + 1
        self._copies[event.id] = copy
        return Send(event, f"dlv_{event.id}_{copy}", copy, tags)

    def _remember(self, elapsed_s: float, event: Event) -> None:
        self._sent.append((elapsed_s, event))
        horizon = elapsed_s - self.wave_window_s
        while self._sent and self._sent[0][0] < horizon:
            self._sent.popleft()

    # ---- waves --------------------------------------------------------------------
    def start_wave(self, elapsed_s: float) -> int:
        """Queue a replay of every event sent in the last `wave_window_s` seconds before
        `elapsed_s`, shuffled, once per event. Returns how many were queued."""
        self._waves += 1
        horizon = elapsed_s - self.wave_window_s
        window = list({e.id: e for t, e in self._sent if t >= horizon}.values())
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


__all__ = ["Send", "StormPlan", "recycled_events", "renamed", "story_events"]
