"""The checks' one pass as it was before it kept columns: dicts and sets per event and
per key, a Python loop per attempt. Kept as the oracle the columnar scan
(`scenarios.history_scan`) must agree with: the same expectations, and the same results
of every check over its index (`test_history_scan.py`)."""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate, compress, islice, repeat
from operator import eq, le, ne
from typing import Iterable, Mapping, Sequence

from hookproof.scenarios.check_index import CheckIndex
from hookproof.scenarios.groups import NO_GROUP, Groups
from hookproof.scenarios.history_scan import ANSWERED_NON_SUCCESS, EventFacts
from hookproof.scenarios.observations import (
    MONEY_PREFIXES,
    Expectations,
    ExpectedEffect,
    Observation,
    ObjectTruth,
    world_event_id,
)
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event


def old_expectations_and_index(
    events: Iterable[Event], history: Sequence[Attempt], observations: Sequence[Observation], *,
    sender_timeout_s: float, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
) -> tuple[Expectations, CheckIndex]:
    """`expectations_and_index` as it was: the dict scan, then its index."""
    scan = _scan_both(history, sender_timeout_s, _old_world(events))
    expectations = scan.expectations(max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)
    return expectations, index_of(scan, history, expectations, observations)


@dataclass
class ExpectationScan:
    """What the expectations need of a history, kept by one pass (`scan_history` with events).

    Attributes:
        world: event id → what the checks read of its first Event (`EventFacts`), from
            the run's events: the events themselves are not kept (a storm streams them).
        resolved: an id attempts recorded that is not a world id → its world event's
            facts, joined through the attempt's delivery id (`world_event_id`).
        valid_events: the events with a valid attempt, first valid attempt first.
        key_source: business key → (position, event id, amount, object id) of the first
            attempt carrying it as its own.
        valid_keys: keys a valid attempt carried as its own.
        unkeyed_first: event id → (position, amount, object id) of its first attempt
            without a key of its own; `unkeyed_valid`: those events with a valid one.
    """

    world: dict[str, EventFacts]
    resolved: dict[str, EventFacts] = field(default_factory=dict)
    valid_events: dict[str, None] = field(default_factory=dict)
    key_source: dict[str, tuple[int, str, int | None, str | None]] = field(default_factory=dict)
    valid_keys: set[str] = field(default_factory=set)
    unkeyed_first: dict[str, tuple[int, int | None, str | None]] = field(default_factory=dict)
    unkeyed_valid: set[str] = field(default_factory=set)

    def expectations(
        self, *, sender_timeout_s: float, max_attempts_per_event: int | None,
        money_prefixes: Sequence[str] = MONEY_PREFIXES,
    ) -> Expectations:
        """The expectations of the run (`scenarios.observations.expectations_from`, which
        documents the rules)."""
        prefixes = tuple(money_prefixes)
        by_id = {**self.world, **self.resolved} if self.resolved else self.world
        # the scan's own dicts are not copied (a storm's hold a million keys): what the
        # attempts without a key of their own add (their event's key) is kept aside
        sources, valid_keys = self.key_source, self.valid_keys
        valid_too: set[str] = set()
        if self.unkeyed_first:  # attempts without a key of their own carry their event's
            added: dict[str, tuple[int, str, int | None, str | None]] = {}
            for event_id, (pos, amount, object_id) in self.unkeyed_first.items():
                event = by_id.get(event_id)
                key = event.business_key if event is not None else None
                if key is None:
                    continue
                if event_id in self.unkeyed_valid:
                    valid_too.add(key)
                src = added.get(key) or sources.get(key)
                if src is None or pos < src[0]:
                    added[key] = (pos, event_id, amount, object_id)
            if added:
                sources = dict(sorted({**sources, **added}.items(), key=lambda item: item[1][0]))

        key_events: dict[str, list[str]] = {}
        per_object: dict[str, dict[int, tuple[str, str, int]]] = {}
        kinds: dict[str, str] = {}
        for event_id in self.valid_events:
            event = by_id.get(event_id)
            if event is None:
                continue
            if event.business_key is not None:
                events_of_key = key_events.get(event.business_key)
                if events_of_key is None:
                    key_events[event.business_key] = [event_id]
                else:
                    events_of_key.append(event_id)
            if event.status is not None:
                versions = per_object.get(event.object_id)
                if versions is None:
                    per_object[event.object_id] = {event.version: (event.status, event_id, event.created_us)}
                    kinds[event.object_id] = event.object_type
                elif event.version not in versions:
                    versions[event.version] = (event.status, event_id, event.created_us)

        expected: dict[str, ExpectedEffect] = {}
        money: dict[str, int] = {}
        forbidden: set[str] = set()
        for key, (_, src_event, src_amount, src_object) in sources.items():
            ids = key_events.get(key) or [src_event]
            first = by_id.get(ids[0])
            amount = first.amount if first is not None and first.amount is not None else src_amount
            object_id = first.object_id if first is not None else src_object
            if key in valid_keys or key in valid_too:
                expected[key] = ExpectedEffect(key, ids[0], object_id, amount, tuple(ids))
            else:
                forbidden.add(key)
            if amount is not None and key.startswith(prefixes):
                money[key] = amount

        pairs: dict[tuple[int, str], tuple[int, str]] = {}
        truth = {object_id: _truth(object_id, versions, kinds[object_id], pairs)
                 for object_id, versions in per_object.items()}
        return Expectations(expected=expected, forbidden=frozenset(forbidden), truth=truth, money=money,
                            sender_timeout_s=sender_timeout_s, max_attempts_per_event=max_attempts_per_event,
                            money_prefixes=prefixes)


@dataclass
class HistoryScan:
    """What `scan_history` kept of a history for the checks' index. Positions count
    attempts from 0 in history order.

    Per attempt it keeps a few columns of machine words, per event and per key one
    dictionary entry (their codes), never a list (`scenarios.groups`).

    Attributes:
        size: attempts read.
        event_codes: event id → its code (0, 1, … in order of first attempt).
        event_of: per position, its event's code.
        key_codes: business key → its code (0, 1, … in order of first attempt carrying it
            as its own); `key_names` the keys by code.
        key_of: per position, the code of the attempt's own business key, `NO_GROUP` when
            it carries none.
        by_event: event id → positions (`Groups`).
        completions: per position, the completion of a valid attempt, None for an invalid one.
        acked_events: events with at least one valid attempt that completed ok.
        notable: positions of attempts that are invalid, or got a 4xx/5xx status or a
            rejected or server-error outcome.
        acked_latencies: latency (ms) of every acked attempt (valid or not), history order.
        over_half: positions of acked attempts slower than half the sender timeout, and
            `over_half_ms` their latencies (ms).
        sender_timeout_s: the sender timeout the latencies were compared with, seconds.
        expect: the expectations' part, when the scan was given the run's events.
    """

    size: int
    event_codes: dict[str, int]
    event_of: array[int]
    key_codes: dict[str, int]
    key_names: list[str]
    key_of: array[int]
    by_event: Groups
    completions: list[Completion | None]
    acked_events: set[str]
    notable: list[int]
    acked_latencies: array[float]
    over_half: list[int]
    over_half_ms: list[float]
    sender_timeout_s: float
    expect: ExpectationScan | None = None

    @property
    def by_key(self) -> Groups:
        """business key → positions of the attempts carrying it as their own (built on
        each call: the checks' index files the attempts without a key too)."""
        return group_positions(self.key_codes, self.key_of)

    def expectations(
        self, *, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
    ) -> Expectations:
        """The expectations of the run (`ExpectationScan.expectations`). Raises ValueError
        when the scan was made without the run's events."""
        if self.expect is None:
            raise ValueError("the history was scanned without the run's events: no expectations")
        return self.expect.expectations(sender_timeout_s=self.sender_timeout_s,
                                        max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)


def scan_history(
    history: Iterable[Attempt], *, sender_timeout_s: float, events: Iterable[Event] | None = None,
) -> HistoryScan:
    """Read `history` once, in order, keeping what the checks' index (and, with `events`,
    the expectations) need; see `HistoryScan`. O(len(history)) plus one sort of the
    positions by event, in C; nothing allocated per attempt but a slot in a few columns."""
    if events is not None:
        return _scan_both(history, sender_timeout_s, _world(events))
    event_codes: dict[str, int] = {}
    key_codes: dict[str, int] = {}
    key_names: list[str] = []
    event_of: array[int] = array("q")
    key_of: array[int] = array("q")
    completions: list[Completion | None] = []
    acked_events: set[str] = set()
    notable: list[int] = []
    latencies: array[float] = array("d")
    over_half: list[int] = []
    over_half_ms: list[float] = []
    half_ms = sender_timeout_s * 1000.0 / 2
    ok, acked, non_success = Completion.OK, Outcome.ACKED, ANSWERED_NON_SUCCESS
    add_completion, add_latency, add_notable = completions.append, latencies.append, notable.append
    add_event, add_key = event_of.append, key_of.append
    pos = -1  # the attempt's position (counted by hand: cheaper than enumerate's tuples)
    for a in history:
        pos += 1
        event_id = a.event_id
        code = event_codes.get(event_id)
        if code is None:
            code = event_codes[event_id] = len(event_codes)
        add_event(code)
        key = a.business_key
        if key is None:
            add_key(NO_GROUP)
        else:
            code = key_codes.get(key)
            if code is None:
                code = key_codes[key] = len(key_names)
                key_names.append(key)
            add_key(code)
        outcome = a.outcome
        if outcome is acked:
            latency = a.latency_ms
            add_latency(latency)
            if latency > half_ms:
                over_half.append(pos)
                over_half_ms.append(latency)
        if not a.valid:
            add_completion(None)
            add_notable(pos)
            continue
        completion = a.completion
        add_completion(completion)
        if completion is ok:
            acked_events.add(event_id)
        status = a.status
        if (status is not None and status >= 400) or outcome in non_success:
            add_notable(pos)
    return HistoryScan(pos + 1, event_codes, event_of, key_codes, key_names, key_of,
                       group_positions(event_codes, event_of), completions, acked_events, notable, latencies,
                       over_half, over_half_ms, sender_timeout_s)


def _scan_both(history: Iterable[Attempt], sender_timeout_s: float, world: dict[str, EventFacts]) -> HistoryScan:
    """`scan_history` with the expectations' part, from the same pass (as a storm reads its
    history). The codes and the dictionaries keep an event's own strings (id, business
    key, object id) rather than its first attempt's copies."""
    expect = ExpectationScan(world)
    resolved, valid_events, key_source, valid_keys, unkeyed_first, unkeyed_valid = (
        expect.resolved, expect.valid_events, expect.key_source, expect.valid_keys, expect.unkeyed_first,
        expect.unkeyed_valid)
    unresolved: set[str] = set()
    event_codes: dict[str, int] = {}
    key_codes: dict[str, int] = {}
    key_names: list[str] = []
    event_of: array[int] = array("q")
    key_of: array[int] = array("q")
    completions: list[Completion | None] = []
    acked_events: set[str] = set()
    notable: list[int] = []
    latencies: array[float] = array("d")
    over_half: list[int] = []
    over_half_ms: list[float] = []
    half_ms = sender_timeout_s * 1000.0 / 2
    ok, acked, non_success = Completion.OK, Outcome.ACKED, ANSWERED_NON_SUCCESS
    add_completion, add_latency, add_notable = completions.append, latencies.append, notable.append
    add_event, add_key = event_of.append, key_of.append
    pos = -1  # the attempt's position (counted by hand: cheaper than enumerate's tuples)
    for a in history:
        pos += 1
        event_id = a.event_id
        code = event_codes.get(event_id)
        event = None
        if code is None:
            event = world.get(event_id)
            if event is None:
                _resolve(a, world, resolved, unresolved)
            else:
                event_id = event.id
            code = event_codes[event_id] = len(event_codes)
        elif unresolved and event_id in unresolved:
            _resolve(a, world, resolved, unresolved)
        add_event(code)
        key = a.business_key
        if key is None:
            add_key(NO_GROUP)
            if event_id not in unkeyed_first:
                object_id = a.object_id
                if event is not None and event.object_id == object_id:
                    object_id = event.object_id
                unkeyed_first[event_id] = (pos, a.amount, object_id)
        else:
            code = key_codes.get(key)
            if code is None:
                object_id = a.object_id
                if event is not None:
                    if event.business_key == key:
                        key = event.business_key
                    if event.object_id == object_id:
                        object_id = event.object_id
                code = key_codes[key] = len(key_names)
                key_names.append(key)
                key_source[key] = (pos, event_id, a.amount, object_id)
            add_key(code)
        outcome = a.outcome
        if outcome is acked:
            latency = a.latency_ms
            add_latency(latency)
            if latency > half_ms:
                over_half.append(pos)
                over_half_ms.append(latency)
        if not a.valid:
            add_completion(None)
            add_notable(pos)
            continue
        completion = a.completion
        add_completion(completion)
        if completion is ok:
            acked_events.add(event_id)
        status = a.status
        if (status is not None and status >= 400) or outcome in non_success:
            add_notable(pos)
        if event_id not in valid_events:
            valid_events[event_id] = None
        if key is None:
            unkeyed_valid.add(event_id)
        else:
            valid_keys.add(key)
    return HistoryScan(pos + 1, event_codes, event_of, key_codes, key_names, key_of,
                       group_positions(event_codes, event_of), completions, acked_events, notable, latencies,
                       over_half, over_half_ms, sender_timeout_s, expect)


def _old_world(events: Iterable[Event]) -> dict[str, EventFacts]:
    """Event id → the facts of its first Event (`EventFacts`)."""
    world: dict[str, EventFacts] = {}
    for event in events:
        if event.id not in world:
            world[event.id] = EventFacts(event.id, event.business_key, event.amount, event.object_id, event.status,
                                         event.version, event.object_type, event.created_us)
    return world


def _resolve(a: Attempt, world: Mapping[str, EventFacts], resolved: dict[str, EventFacts],
             unresolved: set[str]) -> None:
    """Join the id `a` recorded to its world event through its delivery id (the envelope's
    own id, e.g. Standard Webhooks' ``msg_…``, differs from the world's): the first
    attempt of that id whose delivery id names a world event decides."""
    wid = world_event_id(a)
    event = world.get(wid) if wid is not None else None
    if event is not None:
        resolved[a.event_id] = event
        unresolved.discard(a.event_id)
    else:
        unresolved.add(a.event_id)


def _truth(object_id: str, versions: Mapping[int, tuple[str, str, int]], kind: str,
           pairs: dict[tuple[int, str], tuple[int, str]]) -> ObjectTruth:
    """The truth of `object_id` (of `kind`) from version -> (status, event id, its time), any order.
    `pairs` shares the (version, status) tuples between objects (a storm's thousands of
    objects at ``(1, "active")`` hold one)."""
    ordered = sorted(versions.items())
    shared = pairs.setdefault
    return ObjectTruth(object_id, tuple(shared((v, status), (v, status)) for v, (status, _, _) in ordered),
                       tuple(event_id for _, (_, event_id, _) in ordered), kind, tuple(at for _, (_, _, at) in ordered))


def group_positions(codes: Mapping[str, int], group_of: Sequence[int]) -> Groups:
    """The `Groups` of `codes` (name → group number 0 … len(codes) - 1, each group
    non-empty) where position p belongs to group ``group_of[p]`` (`NO_GROUP`: to none).

    Every step runs in C: the positions of no group are left out, and the rest need no
    sort when their groups come in order (one attempt per event, or each event's
    attempts together), else one stable sort by group (O(n log n), O(n) on a history
    whose groups come in runs).
    """
    n = len(group_of)
    positions: Sequence[int] = range(n)
    groups = group_of
    if NO_GROUP in group_of:
        member = list(map(ne, group_of, repeat(NO_GROUP)))
        positions = list(compress(positions, member))
        groups = list(compress(group_of, member))
    if all(map(le, islice(groups, 0, max(len(groups) - 1, 0)), islice(groups, 1, None))):
        order = array("q", positions)
    else:
        order = array("q", sorted(positions, key=group_of.__getitem__))
    counts = Counter(groups)
    starts = array("q", accumulate(map(counts.__getitem__, range(len(codes))), initial=0))
    return Groups(codes, order, starts)


def index_of(
    scan: HistoryScan, history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
) -> CheckIndex:
    """The `CheckIndex` of a `scan_history` pass over `history` and of `observations`
    (takes over the scan's lists: scan a history once per index)."""
    peak: dict[str, tuple[int, int]] = {}
    shared: dict[tuple[int, int], tuple[int, int]] = {}  # one (count, observation) tuple per value, not per key
    counts: dict[str, int] = {}
    has_states = False
    state_kinds: frozenset[str] | None = None
    for oi, obs in enumerate(observations):
        counts = obs.counts()
        has_states = has_states or bool(obs.states)
        if obs.state_kinds is not None:
            state_kinds = obs.state_kinds if state_kinds is None else state_kinds | obs.state_kinds
        for key, n in counts.items():
            best = peak.get(key)
            if best is None or n > best[0]:
                pair = (n, oi)
                peak[key] = shared.setdefault(pair, pair)
    settled = observations[-1] if observations else None
    index = CheckIndex(history, expectations, scan.by_event, scan.by_event, scan.completions, scan.acked_events,
                       scan.notable, settled, counts if settled is not None else {}, peak, has_states, state_kinds,
                       scan)
    index.by_key = _filed_by_key(index, scan)
    return index


def _filed_by_key(index: CheckIndex, scan: HistoryScan) -> Groups:
    """`index.by_key`: the attempts under their own business key, and those without one
    under their event's key (`key_of_event`), each key's positions in history order.

    An event none of whose attempts carries a key is looked up in the expectations only.
    A key only an event gives gets the next code (in the order of those events' first
    attempt without a key). One sort of the positions by key, in C.
    """
    key_of = scan.key_of
    if NO_GROUP not in key_of:
        return group_positions(scan.key_codes, key_of)
    unkeyed = list(compress(range(len(key_of)), map(eq, key_of, repeat(NO_GROUP))))
    event_of = scan.event_of
    unkeyed_events = [event_of[p] for p in unkeyed]
    counts = Counter(unkeyed_events)
    names = list(scan.event_codes)  # event code → id
    codes, key_names = dict(scan.key_codes), list(scan.key_names)  # the scan's own keys stay its own
    key_of_code: dict[int, int] = {}
    by_event = index.by_event
    for code in dict.fromkeys(unkeyed_events):  # in order of first attempt without a key
        event_id = names[code]
        if counts[code] == by_event.size_of(event_id):  # no attempt of it carries a key
            key = index.expected_keys.get(event_id)
        else:
            key = index.key_of_event(event_id)
        if key is not None:
            key_code = codes.get(key)
            if key_code is None:
                key_code = codes[key] = len(key_names)
                key_names.append(key)
            key_of_code[code] = key_code
    if not key_of_code:
        return group_positions(codes, key_of)
    filed = array("q", key_of)
    for p, code in zip(unkeyed, unkeyed_events):
        key_code = key_of_code.get(code)
        if key_code is not None:
            filed[p] = key_code
    return group_positions(codes, filed)
