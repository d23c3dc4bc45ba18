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
  last `wave_window_s` seconds, and at least of the last `wave_events` events sent (a
  window of N events replayed after they were delivered: an in-memory LRU dedupe of
  fewer ids forgets them), shuffled; `next_replay` hands them out one at a time (the
  user sends them on top of the regular rate, as a provider's backlog replay).

The patterns of real bug reports (issue 16), each a share:

- **related bursts** (`related`): the next events of the source, of different types, in
  emitted order, released together: a new subscription's created, updated and
  invoice.paid, a payment's created and updated (a racy get-or-create of the shared row
  fails or duplicates it: dj-stripe #409, pay-rails #371). When one of them carries a
  state, the burst also carries that object's state change: its newest event drawn and
  not sent yet or among the next `STATE_LOOKAHEAD` of the source, of a newer state that
  differs, sent first
  (a read, compare and write of the state without a lock keeps the older one, a lost
  update; an object's last event, so no later one heals it);
- **older after newer** (`older_redelivery`): after an object's second effect (R2), its
  earlier one (R1) is delivered again (WooCommerce Stripe gateway #5697);
- **late** (`late`): an event with a status is held back and delivered right after the
  next event of its object (a payment failure after the success: Polar #14274);
- **provider-API transient** (`api_transient`): a share of objects, chosen by their id
  (`api_transient_object`), fails its first fetch at the provider API, then recovers
  (`loadtests.storm_truth`): half answer 404 ("not visible yet"; Stripe's 503, its 404
  being "no such object"), half 500 (`api_transient_status`); their deliveries carry the
  tag ``api-transient``, so a 5xx answered to them is an advisory, not a finding (the
  provider retries it).

A plan keeps what it may still send again and no more (memory stays flat however long
the storm runs): the wave window and an object's first keyed event (at most
`_REMEMBERED_OBJECTS` objects), both kept as how to render the event again when the
source can (`stories.Rendered.again`: the same bytes, no body held), later copies and
held events, and the copy counts of the events these hold.

Tags recorded with each attempt (benign in `scenarios.checks` but ``api-transient``):
``burst=N`` for burst copies, ``burst=related-N`` for a related burst of N events,
``copies=N`` for a later copy, ``copies=wave-K`` for a replay of wave K,
``copies=older-after-newer`` for an older event redelivered, ``order=late`` for a held one;
``replay`` (`simulator.faults.REPLAY_TAG`) beside ``copies=wave-K`` when the profile's replay is a new
delivery entity (Paddle's new ``notification_id``).
"""

from __future__ import annotations

import heapq
import random
import zlib
from collections import OrderedDict, deque
from typing import Callable, Iterable, NamedTuple

from hookproof.loadtests.stories import Rendered
from hookproof.simulator.events import Event
from hookproof.simulator.faults import REPLAY_TAG
from hookproof.simulator.profiles.base import Envelope

#: The tag of deliveries whose object the provider API hides on its first fetch.
API_TRANSIENT_TAG = "api-transient"
#: Objects whose keyed events the plan remembers for an older-after-newer redelivery.
_REMEMBERED_OBJECTS = 4096
#: Events of the source a related burst looks ahead for a state change of its object's
#: (a billing story's subscription lives over 12 of its events: created to deleted).
STATE_LOOKAHEAD = 16


def api_transient_object(object_id: str, share: float) -> bool:
    """True for the share `share` of object ids the provider API hides on their first
    fetch: chosen by a CRC-32 of the id, so senders and provider API agree with no message."""
    return share > 0 and zlib.crc32(object_id.encode("utf-8")) % 10_000 < share * 10_000


def api_transient_status(object_id: str, share: float) -> int | None:
    """What the provider API answers the first fetch of `object_id` under the transient of
    share `share`: None (the object is not chosen, `api_transient_object`), else 404 ("not
    visible yet") or 500 (an outage the provider's retry outlives), half each, chosen by an
    Adler-32 of the id (issue 16's pattern: dj-stripe #832 lost the effect on the 500)."""
    if not api_transient_object(object_id, share):
        return None
    return 500 if zlib.adler32(object_id.encode("utf-8")) % 2 else 404


def largest_group(burst: int) -> int:
    """The most sends a user releases at once from a plan of `burst` (`StormPlan.next_group`'s
    largest group and its sender's replay, `next_replay`): a related burst of
    ``max(3, burst)`` events with its object's state change, or `burst` copies, and one
    replay. A user opens that many connections per group in flight, so no send of a group
    waits for another's answer."""
    return max(3, burst) + 1 + 1


class _Kept(NamedTuple):
    """An object's first keyed event, remembered for an older-after-newer redelivery: the
    item itself, or (when its source renders it again) only how to."""

    business_key: str | None
    event_id: str
    item: Rendered | None
    again: Callable[[], Rendered] | None


class Send(NamedTuple):
    """One delivery of one event (its first attempt; retries keep the delivery id).

    A named tuple rather than a frozen dataclass: a plan makes one per delivery on the
    sender's path, and a tuple is made in a fifth of the time (the same fields, equality
    and immutability).

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
        wave_events: and at least this many last events sent (0: only the seconds).
        related: share of groups that are a related burst.
        older_redelivery: share of second effects of an object followed by its first again.
        late: share of events with a status held back until after their object's next event.
        api_transient: share of objects the provider API hides on their first fetch.
        seed: drives every random choice.
        replayed: the provider's manual replay of an event (`Profile.replayed`, given the
            wave's number): a wave sends that (Paddle's: a new notification of the same
            event); None: the event as it was sent.

    Raises:
        ValueError: a parameter out of range.
    """

    def __init__(self, events: Iterable[Event | Rendered], *, duplicates: float = 0.0, burst: int = 1,
                 reorder_window: int = 1, wave_window_s: float = 5.0, wave_events: int = 0,
                 related: float = 0.0, older_redelivery: float = 0.0, late: float = 0.0,
                 api_transient: float = 0.0, seed: int = 0,
                 replayed: Callable[[Event, int], Event] | None = None) -> None:
        for name, share in (("duplicates", duplicates), ("related", related), ("older_redelivery", older_redelivery),
                            ("late", late), ("api_transient", api_transient)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {share!r}")
        if wave_events < 0:
            raise ValueError("wave_events must be >= 0")
        if burst < 1 or reorder_window < 1:
            raise ValueError("burst and reorder_window must be >= 1")
        if wave_window_s < 0:
            raise ValueError("wave_window_s must be >= 0")
        self._source = (e if isinstance(e, Rendered) else Rendered(e, None) for e in events)
        self._ahead: deque[Rendered] = deque()  # events taken from the source to look ahead, in its order
        self.duplicates = duplicates
        self.burst = burst
        self.reorder_window = reorder_window
        self.wave_window_s = wave_window_s
        self.wave_events = wave_events
        self.related = related
        self.older_redelivery = older_redelivery
        self.late = late
        self.api_transient = api_transient
        self._rng = random.Random(seed)
        # object id -> its first keyed event sent (its key, and how to render it again)
        self._keyed: OrderedDict[str, _Kept] = OrderedDict()
        self._held: dict[str, Send] = {}  # object id -> an event held back until its next one
        self._released: deque[Send] = deque()
        self._buffer: list[Rendered] = []
        self._later: list[tuple[int, int, Send, Rendered]] = []  # (due tick, order, send, its item): a min-heap
        self._copies: dict[str, int] = {}  # event id -> deliveries so far, while it may be sent again
        self._holders: dict[str, int] = {}  # event id -> the places that may send it again (`_hold`)
        # (sent at, event id, object id, the item, or how to render it again when its source can)
        self._sent: deque[tuple[float, str, str, Rendered | Callable[[], Rendered]]] = deque()
        # queued replays: (the item or how to render it, delivery id, copy, tags), rendered when released
        self._replays: deque[tuple[Rendered | Callable[[], Rendered], str, int, tuple[str, ...], int]] = deque()
        self._replayed = replayed
        self._tick = 0
        self._waves = 0
        self.exhausted = False

    # ---- regular groups -----------------------------------------------------------
    def next_group(self, elapsed_s: float = 0.0) -> tuple[Send, ...]:
        """The next group to release together at `elapsed_s` (empty when the source is
        exhausted and nothing is pending)."""
        self._tick += 1
        if self._released:
            return (self._released.popleft(),)
        if self._later and self._later[0][0] <= self._tick:
            popped = self._pop_later()
            if popped is None:
                return self.next_group(elapsed_s)
            self._remember(elapsed_s, popped[1])
            self._release(popped[0].event.id)
            return (popped[0],)
        if self.related and self._rng.random() < self.related:
            group = self._related_group(elapsed_s)
            if group:
                return group
        item = self._draw()
        if item is None:
            while self._later:
                popped = self._pop_later()
                if popped is not None:
                    self._release(popped[0].event.id)
                    return (popped[0],)
            return ()
        event = item.event
        if (self.late and event.status is not None and event.object_id not in self._held
                and self._rng.random() < self.late):
            held = self._send(item, ("order=late",))
            self._held[event.object_id] = held
            self._push_later(self._tick + 4 * self.reorder_window + 4, held, item)
            return self.next_group(elapsed_s)
        self._remember(elapsed_s, item)
        if self.duplicates and self._rng.random() < self.duplicates:
            if self.burst >= 2:
                tag = f"burst={self.burst}"
                return tuple(self._send(item, (tag,)) for _ in range(self.burst))
            first = self._send(item, ())
            later = self._send(item, (f"copies={first.copy + 1}",))
            self._push_later(self._tick + self.reorder_window, later, item)
            return (first,)
        return (self._send(item, ()),)

    def _push_later(self, due_tick: int, send: Send, item: Rendered) -> None:
        heapq.heappush(self._later, (due_tick, self._tick, send, item))
        self._hold(send.event.id)

    def _pop_later(self) -> tuple[Send, Rendered] | None:
        """The next later send and its item, or None when it is a held event released
        already (its hold on the event's copy count then ends here)."""
        _, _, send, item = heapq.heappop(self._later)
        if send.tags[:1] == ("order=late",):  # a held event (its tags may go on: api-transient)
            if self._held.get(send.event.object_id) is not send:
                self._release(send.event.id)
                return None  # released right after its object's next event
            del self._held[send.event.object_id]
        return send, item

    # An event's copy count is kept while something may send it again (the wave window,
    # the first keyed events remembered for an older-after-newer redelivery, a later
    # copy or a held event): each such place holds it once; with the last hold gone it
    # can never be sent again and its count is dropped (a storm's plan stays flat).
    def _hold(self, event_id: str) -> None:
        self._holders[event_id] = self._holders.get(event_id, 0) + 1

    def _release(self, event_id: str) -> None:
        left = self._holders[event_id] - 1
        if left:
            self._holders[event_id] = left
        else:
            del self._holders[event_id]
            self._copies.pop(event_id, None)

    def _related_group(self, elapsed_s: float) -> tuple[Send, ...]:
        """The next events of the source, of different types, in emitted order (at least
        two, at most `burst` and 3): one related burst; empty when there are not two.
        When one of them carries a state, the state change of its object (`_state_change`)
        goes first."""
        items: list[Rendered] = []
        while len(items) < max(3, self.burst):
            item = self._next_item()
            if item is None:
                break
            if any(i.event.type == item.event.type for i in items):
                self._buffer.append(item)
                break
            items.append(item)
        if len(items) < 2:
            self._buffer.extend(items)
            return ()
        change = self._state_change(items)
        if change is not None:
            items.insert(0, change)
        tag = f"burst=related-{len(items)}"
        for item in items:
            self._remember(elapsed_s, item)
        return tuple(self._send(item, (tag,)) for item in items)

    def _state_change(self, items: list[Rendered]) -> Rendered | None:
        """The object's state change a related burst of `items` carries: for the first of
        them with a state that has one, the newest event of its object, among those drawn and
        not sent yet and the next `STATE_LOOKAHEAD` of the source, whose state differs from
        it and is newer; taken out of where it waited (the others stay, in order). None when there is none."""
        stated = [i.event for i in items if i.event.stateful and i.event.status is not None]
        if not stated:
            return None
        while len(self._ahead) < STATE_LOOKAHEAD and not self.exhausted:
            try:
                self._ahead.append(next(self._source))
            except StopIteration:
                self.exhausted = True
        for first in stated:
            best: tuple[int, list[Rendered] | deque[Rendered], int] | None = None
            for where in (self._buffer, self._ahead):
                for k, item in enumerate(where):
                    event = item.event
                    if (event.object_id == first.object_id and event.status is not None and event.status != first.status
                            and event.version > (first.version if best is None else best[0])):
                        best = (event.version, where, k)
            if best is not None:
                _, where, k = best
                chosen = where[k]
                del where[k]
                return chosen
        return None

    def _next_item(self) -> Rendered | None:
        """The next event of the source (those looked ahead at first), or None at its end."""
        if self._ahead:
            return self._ahead.popleft()
        if self.exhausted:
            return None
        try:
            return next(self._source)
        except StopIteration:
            self.exhausted = True
            return None

    def _draw(self) -> Rendered | None:
        while len(self._buffer) < self.reorder_window:
            item = self._next_item()
            if item is None:
                break
            self._buffer.append(item)
        if not self._buffer:
            return None
        i = self._rng.randrange(len(self._buffer)) if len(self._buffer) > 1 else 0
        self._buffer[i], self._buffer[-1] = self._buffer[-1], self._buffer[i]
        return self._buffer.pop()

    def _send(self, item: Rendered, tags: tuple[str, ...]) -> Send:
        event = item.event
        delivery_id, copy, tags = self._delivery(event.id, event.object_id, tags)
        return Send(event, delivery_id, copy, tags, item.envelope)

    def _delivery(self, event_id: str, object_id: str, tags: tuple[str, ...]) -> tuple[str, int, tuple[str, ...]]:
        """(delivery id, copy number, tags) of the next delivery of an event: its copy
        counted now."""
        copy = self._copies.get(event_id, 0) + 1
        self._copies[event_id] = copy
        if self.api_transient and api_transient_object(object_id, self.api_transient):
            tags = (*tags, API_TRANSIENT_TAG)
        return f"dlv_{event_id}_{copy}", copy, tags

    def _remember(self, elapsed_s: float, item: Rendered) -> None:
        """Keep `item` for waves; release what its sending unblocks (a held event of its
        object, an older-after-newer redelivery)."""
        self._sent.append((elapsed_s, item.event.id, item.event.object_id, item if item.again is None else item.again))
        self._hold(item.event.id)
        horizon = elapsed_s - self.wave_window_s
        while len(self._sent) > self.wave_events and self._sent[0][0] < horizon:
            self._release(self._sent.popleft()[1])
        event = item.event
        held = self._held.pop(event.object_id, None)
        if held is not None and held.event.id != event.id:
            self._released.append(held)
        if event.business_key is None or not self.older_redelivery:
            return
        first = self._keyed.get(event.object_id)
        if first is None:
            # kept without its body where the source can render it again
            kept = item if item.again is None else None
            self._keyed[event.object_id] = _Kept(event.business_key, event.id, kept, item.again)
            self._hold(event.id)
            if len(self._keyed) > _REMEMBERED_OBJECTS:
                self._release(self._keyed.popitem(last=False)[1].event_id)
        elif first.business_key != event.business_key and self._rng.random() < self.older_redelivery:
            del self._keyed[event.object_id]  # once per object
            again = first.item if first.item is not None else first.again()  # type: ignore[misc]
            self._released.append(self._send(again, ("copies=older-after-newer",)))
            self._release(first.event_id)

    # ---- waves --------------------------------------------------------------------
    def start_wave(self, elapsed_s: float) -> int:
        """Queue a replay of every event sent in the last `wave_window_s` seconds before
        `elapsed_s` and of the last `wave_events` sent, shuffled, once per event. Returns
        how many were queued."""
        self._waves += 1
        horizon = elapsed_s - self.wave_window_s
        last = len(self._sent) - self.wave_events
        chosen = {event_id: (object_id, r) for i, (t, event_id, object_id, r) in enumerate(self._sent)
                  if t >= horizon or i >= last}
        window = list(chosen.items())
        self._rng.shuffle(window)
        tag = (f"copies=wave-{self._waves}",)
        # each replay's delivery (its copy number) is counted now, in the shuffled order;
        # its event is rendered again only when `next_replay` releases it (a wave queues
        # thousands at once, and those the storm ends before are never rendered)
        for event_id, (object_id, r) in window:
            self._replays.append((r, *self._delivery(event_id, object_id, tag), self._waves))
        return len(window)

    def next_replay(self) -> Send | None:
        """The next queued replay, or None."""
        if not self._replays:
            return None
        r, delivery_id, copy, tags, wave = self._replays.popleft()
        item = r if isinstance(r, Rendered) else r()
        if self._replayed is not None:
            event = self._replayed(item.event, wave)
            if event is not item.event:  # a new delivery entity: its own envelope, rendered by the sender
                return Send(event, delivery_id, copy, (*tags, REPLAY_TAG), None)
        return Send(item.event, delivery_id, copy, tags, item.envelope)

    @property
    def replays_pending(self) -> int:
        return len(self._replays)


__all__ = ["Send", "StormPlan", "api_transient_object", "api_transient_status", "largest_group"]
