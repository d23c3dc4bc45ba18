"""What the harness saw of the receiver, and what the provider says it should have seen.

`Observation` is one read of the receiver through an observer: the effect rows it had
applied and the states of its objects at unix time `at` (seconds). `Expectations` is
the provider's side: which business keys were validly sent (and must show exactly one
effect), which were only ever sent invalidly (and must show none), the truth of every
stateful object, and the amounts of money-like keys. `expectations_from` builds it from
the world's events and the delivery history in one pass; it is pure.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import _count_elements  # type: ignore[attr-defined]
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import AbstractSet, Iterable, Mapping, Sequence

from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event

#: Business-key prefixes of effects that move money (checked by the `counter` check): the
#: default of expectations built by hand; certify, explore and storm pass the run's own,
#: `scenarios.business_keys.money_prefixes` (hookproof's built-in keys, or none).
MONEY_PREFIXES: tuple[str, ...] = ("refund:", "credit:")
#: Object kinds whose states an observer that does not declare its kinds reports.
#: (GitHub's issues and pull requests are the repository world's stateful objects.)
STATEFUL_KINDS: frozenset[str] = frozenset({"subscription", "issue", "pull_request"})
_BUSINESS_KEY = attrgetter("business_key")


@dataclass(frozen=True, slots=True)
class Effect:
    """One applied effect row, as an observer reports it (slotted: an observation of a
    storm holds one per effect, a million at a million keys).

    Attributes:
        business_key: the effect's business key (``"renewal:in_123"``).
        amount: minor units moved by this row, when the observer exposes it.
        idempotency_key: the ``Idempotency-Key`` the receiver sent to the effect sink
            (sink observer only), else None.
    """

    business_key: str
    amount: int | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class ObjectState:
    """The receiver's view of one object: its status and, when exposed, its version."""

    object_id: str
    status: str
    version: int | None = None


@dataclass(frozen=True)
class Observation:
    """One read of the receiver at unix time `at` (seconds).

    Attributes:
        at: when the read completed, unix seconds.
        effects: every applied effect row (a key applied twice appears twice).
        states: the objects' states; an object absent here was not seen.
        state_kinds: the object kinds (``subscription``, ``invoice``, ``payment_intent``,
            ``checkout.session``…, the world's object types) the observer reads states
            of, when it says so (a configured state query): an object of these kinds
            absent from `states` is missing. None: not declared; the states are taken
            to be subscriptions' and an empty list proves nothing.
        counters: counter key → amount (minor units) from a counter query, or None
            when no counter query is configured.
    """

    at: float
    effects: tuple[Effect, ...] = ()
    states: tuple[ObjectState, ...] = ()
    state_kinds: frozenset[str] | None = None
    counters: Mapping[str, int] | None = None

    def counts(self) -> dict[str, int]:
        """Number of effect rows per business key, in order of first row (O(len(effects)),
        counted in C by `collections.Counter`'s counting loop)."""
        out: dict[str, int] = {}
        _count_elements(out, map(_BUSINESS_KEY, self.effects))
        return out

    def state_of(self, object_id: str) -> ObjectState | None:
        """The state reported for `object_id` (the last row if several), or None."""
        return self._states_by_id.get(object_id)

    @cached_property
    def _states_by_id(self) -> Mapping[str, ObjectState]:
        return {s.object_id: s for s in self.states}


@dataclass(frozen=True, slots=True)
class ExpectedEffect:
    """An effect the receiver must show exactly once after it settles.

    Attributes:
        business_key: the key.
        event_id: the first validly sent event carrying this key.
        object_id: the object that event is about, or None.
        amount: minor units the effect moves, or None.
        event_ids: every validly sent event carrying the key, first first (a key shared
            by several events still allows one effect).
    """

    business_key: str
    event_id: str
    object_id: str | None = None
    amount: int | None = None
    event_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ObjectTruth:
    """The provider's truth about one stateful object (slotted: a storm holds one per
    object it sent; the index `version_for` reads is built on its first call).

    Attributes:
        object_id: the object.
        versions: ``(version, status)`` pairs in ascending version order.
        event_ids: the event (as the history recorded its id) that produced each entry
            of `versions`, aligned with it.
        kind: the world's object type (``subscription``, ``invoice``…).
    """

    object_id: str
    versions: tuple[tuple[int, str], ...]
    event_ids: tuple[str, ...] = ()
    kind: str = "subscription"
    _by_status: Mapping[str, tuple[int, ...]] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.versions:
            raise ValueError(f"object {self.object_id}: truth needs at least one version")

    @property
    def final_version(self) -> int:
        """The highest version the provider emitted (and validly sent)."""
        return self.versions[-1][0]

    @property
    def final_status(self) -> str:
        """The status at `final_version`: what the receiver must show after it settles."""
        return self.versions[-1][1]

    @property
    def final_event_id(self) -> str | None:
        """The event that carried `final_version`, when known."""
        return self.event_ids[-1] if self.event_ids else None

    def event_id_at(self, version: int) -> str | None:
        """The event that carried `version`, or None."""
        for (v, _), event_id in zip(self.versions, self.event_ids):
            if v == version:
                return event_id
        return None

    def with_servable(self, servable: Sequence[tuple[int, str]] | None) -> "ObjectTruth":
        """This truth with the ``(version, status)`` pairs the provider API could have served
        (`Expectations.servable`) added where no delivered event carried the version (a
        delivered event's status wins; an added version names no event). Itself when
        nothing is added."""
        if not servable:
            return self
        known = {v for v, _ in self.versions}
        extra = [(v, st) for v, st in servable if v not in known]
        if not extra:
            return self
        ids = dict(zip((v for v, _ in self.versions), self.event_ids)) if self.event_ids else None
        merged = tuple(sorted((*self.versions, *extra)))
        event_ids = tuple(ids.get(v, "") for v, _ in merged) if ids is not None else ()
        return ObjectTruth(self.object_id, merged, event_ids, self.kind)

    def version_for(self, status: str, floor: int = 0) -> int | None:
        """Map an observed `status` (seen without a version) to a version.

        A status may appear at several versions (``active`` → ``past_due`` →
        ``active``). We take the earliest version at or above `floor` (the highest
        version already observed for this object) that has this status: the reading
        most favourable to monotonicity. When the status exists only below `floor`,
        the latest such version is returned (a regression, as small as possible).
        Returns None for a status the provider never emitted. O(log k), k = versions.
        """
        by_status = self._by_status
        if by_status is None:
            lists: dict[str, list[int]] = {}
            for version, known in self.versions:
                lists.setdefault(known, []).append(version)
            by_status = {known: tuple(v) for known, v in lists.items()}
            object.__setattr__(self, "_by_status", by_status)
        versions = by_status.get(status)
        if not versions:
            return None
        i = bisect_left(versions, floor)
        return versions[i] if i < len(versions) else versions[-1]


@dataclass(frozen=True)
class Expectations:
    """What the provider validly sent, and its truth.

    Attributes:
        expected: business key → the effect that must appear exactly once. A key is
            expected when at least one attempt carrying it was valid.
        forbidden: keys whose every attempt was invalid (forged, stale, foreign…):
            they must have no effect. (The one pass gives read-only views of its columns
            for these four, `scenarios.expectation_views`; a hand-built one, dicts and sets.)
        truth: object id → the provider's truth, for objects with a status (of any
            kind: `ObjectTruth.kind`) that had at least one valid attempt.
        money: business key → amount (minor units), for money-like keys (expected
            and forbidden) whose amount is known.
        sender_timeout_s: the profile's sender timeout, seconds.
        max_attempts_per_event: the most attempts one event may take, or None (no
            limit checked).
        money_prefixes: prefixes that make a business key money-like.
        counters: counter key → the amount the provider's truth implies (a team's
            `[counters]`, `scenarios.business_keys.counter_truth`), or None when no
            counter is mapped.
        servable: object id → every ``(version, status)`` the provider API could have
            served the receiver during the run, ascending (`simulator.server.clock.
            servable_states`), or None when the run does not say (a storm's, a hand-built
            one). A receiver that fetches an object when an older event arrives stores
            the status the API served, possibly of a version whose events were never
            delivered; ``regressed`` maps a status seen without a version through these
            as well as through `truth` (`ObjectTruth.with_servable`).
    """

    expected: Mapping[str, ExpectedEffect]
    forbidden: AbstractSet[str]
    truth: Mapping[str, ObjectTruth]
    money: Mapping[str, int]
    sender_timeout_s: float
    max_attempts_per_event: int | None = None
    money_prefixes: tuple[str, ...] = MONEY_PREFIXES
    counters: Mapping[str, int] | None = None
    servable: Mapping[str, tuple[tuple[int, str], ...]] | None = None

    def is_money(self, business_key: str) -> bool:
        """True when `business_key` starts with one of `money_prefixes`."""
        return business_key.startswith(self.money_prefixes)

    def truth_of_kinds(self, kinds: frozenset[str] | None) -> Mapping[str, ObjectTruth]:
        """The truth of the objects of `kinds` (None: subscriptions, `Event.stateful`), in
        `truth`'s order (a view of the pass's columns narrowed by kind, or a dict)."""
        wanted = kinds if kinds is not None else STATEFUL_KINDS
        of_kinds = getattr(self.truth, "of_kinds", None)
        if of_kinds is not None:
            return of_kinds(wanted)
        return {obj: t for obj, t in self.truth.items() if t.kind in wanted}


def expectations_from(
    events: Iterable[Event],
    history: Iterable[Attempt],
    *,
    sender_timeout_s: float,
    max_attempts_per_event: int | None,
    money_prefixes: Sequence[str] = MONEY_PREFIXES,
) -> Expectations:
    """Build the expectations of a run from its events and its delivery history.

    An attempt's business key, object, version and amount come from its event when
    the event is known (else from the attempt itself, e.g. a fabricated forged event).
    Only events that were actually attempted count: an event filtered out by
    ``enabled_events`` and never sent creates no expectation. The truth of an object
    is built from its events with a `status` (any object kind) that had at least one
    valid attempt; when two such events share a version the first wins. A
    status observed without a version is mapped to one by `ObjectTruth.version_for`
    (the earliest version with that status not below what was already observed).
    Pure, one pass over the history (`scenarios.history_scan.scan_history`, which takes
    any iterable, e.g. a history streamed from disk), O(len(events) + len(history)) plus
    sorting each object's versions. `scenarios.check_index.expectations_and_index`
    builds these and the checks' index from the same pass.
    """
    from hookproof.scenarios.history_scan import scan_history

    return scan_history(history, sender_timeout_s=sender_timeout_s, events=events).expectations(
        max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)


def world_event_id(a: Attempt) -> str | None:
    """The world's id of the event `a` delivered, read from its delivery id
    (``dlv_<event id>_<copy>``, `simulator.faults.Delivery`), or None for another shape."""
    return world_id_of_delivery(a.delivery_id)


def world_id_of_delivery(did: str) -> str | None:
    """The world's event id a delivery id names (``dlv_<event id>_<copy>``), or None."""
    if not did.startswith("dlv_"):
        return None
    head, sep, _ = did[4:].rpartition("_")
    return head if sep else None


__all__: Sequence[str] = [
    "Effect",
    "ExpectedEffect",
    "Expectations",
    "MONEY_PREFIXES",
    "ObjectState",
    "ObjectTruth",
    "Observation",
    "STATEFUL_KINDS",
    "expectations_from",
    "world_event_id",
    "world_id_of_delivery",
]
