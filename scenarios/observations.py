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
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter, eq
from typing import TYPE_CHECKING, AbstractSet, Any, Iterable, Iterator, Mapping, Protocol, Sequence, Union, overload

from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.provider_words import ProviderWords

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Business-key prefixes of effects that move money (checked by the `counter` check): the
#: default of expectations built by hand; certify, explore and storm pass the run's own,
#: `scenarios.business_keys.money_prefixes` (hookproof's built-in keys, or none).
MONEY_PREFIXES: tuple[str, ...] = ("refund:", "credit:")
#: Object kinds whose states an observer that does not declare its kinds reports.
#: (GitHub's issues and pull requests are the repository world's stateful objects.)
STATEFUL_KINDS: frozenset[str] = frozenset({"subscription", "issue", "pull_request"})
_BUSINESS_KEY = attrgetter("business_key")
class CounterMovesSource(Protocol):
    """Moves of counters made on request, for the counters a check found off the truth alone
    (`business_keys.CounterEventsOf`)."""

    def only(self, keys: Iterable[str]) -> Mapping[str, tuple[Any, ...]]:
        """Counter key → its moves, for `keys`."""
        ...


#: What `Expectations.counter_events` holds: the moves themselves, or their source.
CounterEvents = Union[Mapping[str, tuple[Any, ...]], CounterMovesSource]
#: Effect rows from which a read holds them as columns (`effect_rows`): fewer stay a tuple.
EFFECT_ROWS_FROM = 65536
#: Keys decoded per step when effect rows held as columns are walked.
_STEP = 8192


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


class EffectRows(Sequence[Effect]):
    """Effect rows held as columns, a read-only sequence of `Effect` equal to the tuple of
    the same rows (``==`` either way, same hash): a storm's read of a million rows holds
    one string of every business key (joined by NUL, none of which contains one) and
    their start offsets (int32 while the keys are shorter than 2**31 characters, else
    int64), about the key's length plus 5 bytes a row where an `Effect` and its key string
    cost some 150. The amounts and Idempotency-Keys are tuples
    aligned with the rows, or None when every row's is None. Each `Effect` is made when
    read; `key_chunks` gives the keys a step at a time (no object per row), `amounts` the
    amounts as a column. Build with `effect_rows`.
    """

    __slots__ = ("_keys", "_starts", "_amounts", "_idems")

    def __init__(self, keys: str, starts: "npt.NDArray[np.int32] | npt.NDArray[np.int64]",
                 amounts: tuple[int | None, ...] | None, idempotency_keys: tuple[str | None, ...] | None) -> None:
        """Rows from `keys` (the business keys joined by NUL), `starts` (each key's offset
        in it) and the optional aligned columns; `effect_rows` is the way to make one."""
        self._keys, self._starts, self._amounts, self._idems = keys, starts, amounts, idempotency_keys

    def __len__(self) -> int:
        return len(self._starts)

    def _key(self, i: int) -> str:
        start = int(self._starts[i])
        end = int(self._starts[i + 1]) - 1 if i + 1 < len(self._starts) else len(self._keys)
        return self._keys[start:end]

    def keys(self, start: int, stop: int) -> list[str]:
        """The business keys of rows `start` … `stop` - 1 (0 ≤ start ≤ stop ≤ len), in order."""
        if start >= stop:
            return []
        begin = int(self._starts[start])
        end = int(self._starts[stop]) - 1 if stop < len(self._starts) else len(self._keys)
        return self._keys[begin:end].split("\x00")

    def key_chunks(self) -> Iterator[list[str]]:
        """The business keys in row order, `_STEP` rows a list."""
        n = len(self)
        return (self.keys(i, min(n, i + _STEP)) for i in range(0, n, _STEP))

    @property
    def has_amounts(self) -> bool:
        """Whether some row has an amount (else `amounts` is all NaN)."""
        return self._amounts is not None

    def amounts(self) -> "npt.NDArray[np.float64]":
        """Each row's amount (minor units) as a float64 column, NaN for None."""
        import numpy as np

        if self._amounts is None:
            return np.full(len(self), np.nan, np.float64)
        return np.array(self._amounts, np.float64)  # None → NaN in numpy's conversion: no list of the rows

    @overload
    def __getitem__(self, i: int) -> Effect: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Effect]: ...

    def __getitem__(self, i: int | slice) -> Effect | Sequence[Effect]:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return tuple(self[j] for j in range(start, stop, step))
            stop = max(start, stop)
            return _rows(self.keys(start, stop), None if self._amounts is None else self._amounts[start:stop],
                         None if self._idems is None else self._idems[start:stop])
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"effect row {i} out of range ({n} rows)")
        return Effect(self._key(j), None if self._amounts is None else self._amounts[j],
                      None if self._idems is None else self._idems[j])

    def __iter__(self) -> Iterator[Effect]:
        amounts = iter(self._amounts) if self._amounts is not None else repeat(None)
        idems = iter(self._idems) if self._idems is not None else repeat(None)
        return map(Effect, chain.from_iterable(self.key_chunks()), amounts, idems)

    def compress(self, kept: Sequence[bool]) -> Sequence[Effect]:
        """The rows whose `kept` (aligned with the rows) is true, in order."""
        keys = list(compress(chain.from_iterable(self.key_chunks()), kept))
        return _rows(keys, None if self._amounts is None else tuple(compress(self._amounts, kept)),
                     None if self._idems is None else tuple(compress(self._idems, kept)))

    def begins_with(self, other: "EffectRows") -> bool:
        """Whether the first ``len(other)`` rows are `other`'s rows (keys, amounts and
        Idempotency-Keys), compared as columns: no row or key string made."""
        n = len(other)
        if n > len(self) or not self._keys.startswith(other._keys):
            return False
        if n < len(self) and int(self._starts[n]) != len(other._keys) + 1:
            return False  # other's last key is only the start of this one's

        def head(column: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
            part = None if column is None else column[:n]
            return None if part is None or all(v is None for v in part) else part

        return head(self._amounts) == head(other._amounts) and head(self._idems) == head(other._idems)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EffectRows):
            return (self._keys == other._keys and len(self) == len(other) and self._amounts == other._amounts
                    and self._idems == other._idems)
        if isinstance(other, tuple):  # as a tuple: equal to a tuple of the same rows, not to a list
            return len(self) == len(other) and all(map(eq, self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"EffectRows({len(self)} rows)"


def _rows(keys: list[str], amounts: Sequence[int | None] | None, idems: Sequence[str | None] | None) -> EffectRows:
    """`EffectRows` of `keys` (none containing NUL) and the aligned optional columns."""
    import numpy as np

    lengths = np.fromiter(map(len, keys), np.int64, len(keys))
    # int32 offsets while the joined keys are shorter than 2**31 (4 bytes a row, not 8)
    starts: npt.NDArray[np.int32] | npt.NDArray[np.int64] = \
        np.zeros(len(keys), np.int32) if int(lengths.sum()) + len(keys) < 2**31 else np.zeros(len(keys), np.int64)
    if len(keys) > 1:
        np.cumsum(lengths[:-1] + 1, out=starts[1:], dtype=starts.dtype)
    return EffectRows("\x00".join(keys), starts, None if amounts is None or not any(a is not None for a in amounts)
                      else tuple(amounts), None if idems is None or not any(k is not None for k in idems)
                      else tuple(idems))


def effect_rows(keys: Sequence[str], amounts: Sequence[int | None] | None = None,
                idempotency_keys: Sequence[str | None] | None = None) -> Sequence[Effect]:
    """The effect rows of `keys` (business keys, in row order) with their aligned amounts
    and Idempotency-Keys (None: every row's None): `EffectRows` from `EFFECT_ROWS_FROM` rows
    on when no key contains NUL, else the tuple of `Effect`. Either compares equal to the
    other for the same rows. Raises ValueError when a column's length is not the keys'."""
    n = len(keys)
    if (amounts is not None and len(amounts) != n) or (idempotency_keys is not None and len(idempotency_keys) != n):
        raise ValueError(f"effect rows: {n} keys but columns of another length")
    if n >= EFFECT_ROWS_FROM and not any("\x00" in k for k in keys):
        return _rows(list(keys), amounts, idempotency_keys)
    return tuple(map(Effect, keys, amounts if amounts is not None else repeat(None),
                     idempotency_keys if idempotency_keys is not None else repeat(None)))


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
        effects: every applied effect row (a key applied twice appears twice): a tuple,
            or for a large read `EffectRows` (equal to the tuple of the same rows).
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
    effects: Sequence[Effect] = ()
    states: tuple[ObjectState, ...] = ()
    state_kinds: frozenset[str] | None = None
    counters: Mapping[str, int] | None = None

    def counts(self, only: AbstractSet[str] | None = None) -> dict[str, int]:
        """Number of effect rows per business key (of `only`'s keys, when given), in order of
        first row (O(len(effects)), counted in C by `collections.Counter`'s counting loop)."""
        out: dict[str, int] = {}
        effects = self.effects
        keys: Iterable[str] = chain.from_iterable(effects.key_chunks()) if isinstance(effects, EffectRows) \
            else map(_BUSINESS_KEY, effects)
        _count_elements(out, keys if only is None else filter(only.__contains__, keys))
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
        event_times_us: the own time (`Event.created_us`, unix microseconds) of the event
            that produced each entry of `versions`, aligned with it (-1: no event carried
            that version, or its time is not known); empty when not known at all.
    """

    object_id: str
    versions: tuple[tuple[int, str], ...]
    event_ids: tuple[str, ...] = ()
    kind: str = "subscription"
    event_times_us: tuple[int, ...] = ()
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

    def event_time_at(self, version: int) -> int | None:
        """The own time (unix microseconds) of the event that carried `version`, or None."""
        for (v, _), at_us in zip(self.versions, self.event_times_us):
            if v == version:
                return at_us if at_us >= 0 else None
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
        times = dict(zip((v for v, _ in self.versions), self.event_times_us)) if self.event_times_us else None
        merged = tuple(sorted((*self.versions, *extra)))
        event_ids = tuple(ids.get(v, "") for v, _ in merged) if ids is not None else ()
        event_times = tuple(times.get(v, -1) for v, _ in merged) if times is not None else ()
        return ObjectTruth(self.object_id, merged, event_ids, self.kind, event_times)

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
        counter_events: counter key → the moves (`business_keys.CounterMove`: event id, type,
            signed amount) of (the first few) events that move it
            (`scenarios.business_keys.counter_events`): the attempts a ``counter`` finding
            names; or a `business_keys.CounterEventsOf` (a storm's: made for the counters
            found off the truth alone); empty when the run does not say.
        servable: object id → every ``(version, status)`` the provider API could have
            served the receiver during the run, ascending (`simulator.server.clock.
            servable_states`), or None when the run does not say (a storm's, a hand-built
            one). A receiver that fetches an object when an older event arrives stores
            the status the API served, possibly of a version whose events were never
            delivered; ``regressed`` maps a status seen without a version through these
            as well as through `truth` (`ObjectTruth.with_servable`).
        fetched: object ids the provider API served the receiver during the run (its served
            log, `simulator.server.served.ServedLog.fetched`): a state no delivered event carried
            is said to be the API's (`state_words`) only for these; empty when the run does not say.
        checked_foreign: object ids of another account's or the other mode's events
            (``foreign-account``, ``test-mode-to-live``) that the provider API refused to the
            receiver's token when it fetched them (404, the object being another account's or
            mode's: `ServerState.refused_foreign`). The receiver
            checked them and was told it cannot see them, the answer it also gets for an
            object not visible yet, so its error answer (a retry asked for) is not
            ``unexpected``'s "not refused" finding; any effect of them still is.
        provider: what findings say of the provider (`simulator.profiles.provider_words.
            ProviderWords`: its events' own time, what it does with an event it could not
            deliver), or None when the run does not say (a hand-built one).
        erased: object ids a receiver may have erased on an event it was validly sent
            (`Profile.erasable`: a Shopify shop's objects after its ``app/uninstalled``);
            the state checks judge none of them, present or missing.
    """

    expected: Mapping[str, ExpectedEffect]
    forbidden: AbstractSet[str]
    truth: Mapping[str, ObjectTruth]
    money: Mapping[str, int]
    sender_timeout_s: float
    max_attempts_per_event: int | None = None
    money_prefixes: tuple[str, ...] = MONEY_PREFIXES
    counters: Mapping[str, int] | None = None
    counter_events: CounterEvents = field(default_factory=dict)
    servable: Mapping[str, tuple[tuple[int, str], ...]] | None = None
    fetched: AbstractSet[str] = frozenset()
    checked_foreign: AbstractSet[str] = frozenset()
    provider: ProviderWords | None = None
    erased: AbstractSet[str] = frozenset()

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
    provider: ProviderWords | None = None,
) -> Expectations:
    """Build the expectations of a run from its events and its delivery history
    (`provider`: `Expectations.provider`, the sending profile's `Profile.words`).

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

    expectations = scan_history(history, sender_timeout_s=sender_timeout_s, events=events).expectations(
        max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)
    return replace(expectations, provider=provider) if provider is not None else expectations


def world_event_id(a: Attempt) -> str | None:
    """The world's id of the event `a` delivered, read from its delivery id
    (``dlv_<event id>_<copy>``, `simulator.faults.Delivery`), or None for another shape."""
    return world_id_of_delivery(a.delivery_id)


def attempted(events: Iterable[Event], attempts: Iterable[Attempt]) -> list[Event]:
    """The events of `events` with a valid attempt among `attempts` (what a receiver may have
    acted on: `Profile.erasable` reads them), matched by the attempt's event id or the world's
    id in its delivery id (`world_event_id`)."""
    sent: set[str] = set()
    for a in attempts:
        if a.valid:
            sent.add(a.event_id)
            if (w := world_event_id(a)) is not None:
                sent.add(w)
    return [e for e in events if e.id in sent]


def world_id_of_delivery(did: str) -> str | None:
    """The world's event id a delivery id names (``dlv_<event id>_<copy>``), or None."""
    if not did.startswith("dlv_"):
        return None
    head, sep, _ = did[4:].rpartition("_")
    return head if sep else None


__all__: Sequence[str] = [
    "EFFECT_ROWS_FROM",
    "Effect",
    "EffectRows",
    "ExpectedEffect",
    "Expectations",
    "MONEY_PREFIXES",
    "ObjectState",
    "ObjectTruth",
    "Observation",
    "STATEFUL_KINDS",
    "effect_rows",
    "expectations_from",
    "world_event_id",
    "world_id_of_delivery",
]
