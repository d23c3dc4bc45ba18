"""The provider's clock: each object served as of the deliveries made so far.

A real provider sends an event right after the change it announces, so when a receiver
fetches an object while handling an event, the provider has that change, and later ones
only as its own clock passes them. The world, though, is built whole before anything is
delivered. This module keeps, per world, a *horizon*: the position in ``world.events``
of the newest event delivered so far (the runner advances it as each delivery step is
sent, `advance`). `served_version` then gives the version the provider API serves for an
object: the one it had when the event at the horizon was emitted.

The world records a version per change but not when each change happened; what it does
record is the version every event carried. So the served version is the last version
before the object's next event after the horizon (changes between two events of an
object are taken to precede the later event, as in every world operation), the current
version when no event of the object comes later, and the version before its first event
(at least 1) when none of its events was sent yet.

A scenario may deliver only part of the world's stories (one story's first event, then
later stories: chaos's ``crash-after-ack``, the catalog's ``provider-api-transient``), so
the horizon passes events it never delivers. The runner says which events it plans to
deliver, in every phase (`plan`); an event at or before the horizon that is not among them
has not happened for the provider API: the object is served as of its last planned event
at or before the horizon (the version before the unplanned event that follows it). A
provider never serves a change whose event it never sends, and a receiver fetching after
it answered (a worker, later) is served no change the scenario does not notify. A planned
event later than an unplanned one carries its change with it, as that event's snapshot does.
Without a plan every event of the world counts as planned.

A world that was never advanced is served at its current versions: `hookproof explore`
(its world operations change objects before their events are delivered, as a real
provider's objects change before it sends the events) and the server's own tests; a
storm serves its template worlds whole (`loadtests.storm_truth`). The horizon only moves forward: a redelivered
older event does not turn the provider's clock back. Events themselves never change.
Thread-safe: the runner advances from its thread, the server reads from its own.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from hookproof.simulator.events import Event

if TYPE_CHECKING:
    from hookproof.simulator.world.registry import AnyWorld


@dataclass
class _Timeline:
    """One world's horizon and, per object, its events' positions and versions."""

    horizon: int = -1  # position in world.events of the newest delivered event (-1: none yet)
    indexed: int = 0  # how many of world.events `positions`/`versions` cover
    positions: dict[str, list[int]] = field(default_factory=dict)
    versions: dict[str, list[int]] = field(default_factory=dict)
    ids: dict[str, list[str]] = field(default_factory=dict)  # per object, its events' ids
    index_of: dict[str, int] = field(default_factory=dict)  # event id -> position

    def catch_up(self, world: AnyWorld) -> None:
        """Index the events the world emitted since the last call."""
        events = world.events
        for pos in range(self.indexed, len(events)):
            e = events[pos]
            self.positions.setdefault(e.object_id, []).append(pos)
            self.versions.setdefault(e.object_id, []).append(e.version)
            self.ids.setdefault(e.object_id, []).append(e.id)
            self.index_of[e.id] = pos
        self.indexed = len(events)


_lock = threading.Lock()
_timelines: "weakref.WeakKeyDictionary[AnyWorld, _Timeline]" = weakref.WeakKeyDictionary()
_planned: "weakref.WeakKeyDictionary[AnyWorld, frozenset[str]]" = weakref.WeakKeyDictionary()


def plan(world: AnyWorld, events: Iterable[Event]) -> None:
    """Say that `events` (by id) are every event of `world` the scenario will deliver, in all
    its phases: the provider API serves no change of an event left out (see the module
    docstring). Replaces an earlier plan; does not move the clock."""
    with _lock:
        _planned[world] = frozenset(e.id for e in events)


def advance(world: AnyWorld, events: Iterable[Event]) -> int:
    """Move `world`'s clock past `events` (the ones being delivered now); returns the horizon.

    Events the world did not emit (fabricated ones: an unknown type, an oversized copy)
    do not move it. Never moves it back.
    """
    with _lock:
        timeline = _timelines.get(world)
        if timeline is None:
            timeline = _timelines[world] = _Timeline()
        timeline.catch_up(world)
        for e in events:
            pos = timeline.index_of.get(e.id)
            if pos is not None and pos > timeline.horizon:
                timeline.horizon = pos
        return timeline.horizon


def horizon(world: AnyWorld) -> int | None:
    """The position in ``world.events`` of the newest delivered event; None when the clock was
    never advanced (everything is served current), -1 before the first delivery."""
    with _lock:
        timeline = _timelines.get(world)
        return None if timeline is None else timeline.horizon


def served_version(world: AnyWorld, object_id: str) -> int:
    """The version of `object_id` the provider API serves now (see the module docstring).

    Raises the world's `WorldError` for an unknown object.
    """
    current = int(world.version(object_id))
    with _lock:
        timeline = _timelines.get(world)
        if timeline is None:
            return current
        timeline.catch_up(world)
        positions = timeline.positions.get(object_id)
        if not positions:
            return current
        later = bisect_right(positions, timeline.horizon)  # the object's first event after the horizon
        planned = _planned.get(world)
        if planned is not None:  # past the object's last planned event at or before the horizon: not happened
            ids = timeline.ids[object_id]
            while later > 0 and ids[later - 1] not in planned:
                later -= 1
        if later == len(positions):
            return current
        versions = timeline.versions[object_id]
        served = versions[later] - 1  # the version before the object's next event
        if later > 0:
            served = max(served, versions[later - 1])  # two events may carry one version
        return max(1, min(current, served))


def servable_states(world: AnyWorld, object_ids: Iterable[str]) -> dict[str, tuple[tuple[int, str], ...]]:
    """Per object of `object_ids`, every ``(version, status)`` the provider API could have
    served a receiver so far: its versions from 1 to the one it serves now (`served_version`;
    the horizon only moves forward, so no earlier fetch was served a later one), ascending.

    The state checks map a status observed without a version through these as well as
    through the delivered events (`scenarios.observations.Expectations.servable`): a
    receiver that fetches the object when an older event arrives stores what the API
    served, possibly a version whose events were never delivered. A version's status is the
    one its event carried, else the world's snapshot's ``status`` at that version (worlds
    whose events' status is that field); versions with neither are left out, as are
    objects the world does not hold.
    """
    from hookproof.simulator.errors import WorldError

    wanted = set(object_ids)
    carried: dict[str, dict[int, str]] = {}
    for e in world.events:
        if e.object_id in wanted and isinstance(e.status, str):
            carried.setdefault(e.object_id, {}).setdefault(int(e.version), e.status)
    out: dict[str, tuple[tuple[int, str], ...]] = {}
    for object_id, by_version in carried.items():
        try:
            top = served_version(world, object_id)
        except WorldError:
            continue
        snapshots = _snapshot_statuses(world, object_id, by_version)
        pairs = []
        for v in range(1, top + 1):
            status = by_version.get(v)
            if status is None and snapshots:
                status = _snapshot_status(world, object_id, v)
            if status is not None:
                pairs.append((v, status))
        if pairs:
            out[object_id] = tuple(pairs)
    return out


def _snapshot_status(world: AnyWorld, object_id: str, version: int) -> str | None:
    """The ``status`` field of the object's snapshot at `version`, or None (no such version:
    every world keeps its objects' versions, `world.records.RecordReads.get`). Read from the
    snapshot itself (`RecordReads.peek`), not a copy of it."""
    from hookproof.simulator.errors import WorldError

    try:
        status = world.peek(object_id, version).get("status")
    except WorldError:
        return None
    return status if isinstance(status, str) else None


def _snapshot_statuses(world: AnyWorld, object_id: str, carried: dict[int, str]) -> bool:
    """True when the object's events carry its snapshots' ``status`` (so a version without an
    event can be read from its snapshot)."""
    version, status = next(iter(carried.items()))
    return _snapshot_status(world, object_id, version) == status


def served_snapshot(world: AnyWorld, object_id: str, *, stale: bool = False) -> dict[str, Any]:
    """A copy of `object_id`'s snapshot at the version the provider API serves now
    (`served_version`), or at the one before it when `stale` (a switch's stale read).

    Raises the world's `WorldError` for an unknown object."""
    version = served_version(world, object_id)
    return world.get(object_id, max(1, version - 1) if stale else version)


def find_served(worlds: Iterable[AnyWorld], world_type: type, object_type: str, object_id: str, *,
                stale: bool) -> dict[str, Any] | None:
    """`object_id` as served (`served_snapshot`) from the first of `worlds` (the server's,
    newest first) of `world_type` that holds it, or None when none does or it is not an
    `object_type` there."""
    from hookproof.simulator.errors import WorldError

    for world in worlds:
        if not isinstance(world, world_type) or not world.has(object_id):
            continue
        try:
            if world.object_type(object_id) != object_type:
                return None
            return served_snapshot(world, object_id, stale=stale)
        except WorldError:
            return None
    return None


__all__ = ["advance", "find_served", "horizon", "plan", "served_snapshot", "served_version", "servable_states"]
