"""The checks' one pass over a small history, in plain Python: explore's examples.

`scenarios.check_index.expectations_and_index` reads a history as numpy columns
(`scenarios.history_scan`), which is what a storm's million attempts need; an explore
example holds about ten, where its hundred-odd numpy calls (a few µs each) cost more than
the work: about 0.4 ms per example warm, over 1 ms in the search. `expectations_and_index`
here gives the same expectations and the same index for a history of fewer than
`SMALL_HISTORY` attempts (more: it hands the history to the columnar pass), from one loop
per attempt with a dict per event and per key: the expectations as plain dicts
(`ExpectedEffect`, `ObjectTruth`; equal to the columnar pass's views, in the same order),
the index's groups, completions, notable attempts and latencies as that pass files them,
so every check gives the same result, findings' text, order and attempts included
(`tests/scenarios/test_small_pass.py` compares both over thousands of generated histories).

The rules are `scenarios.observations.expectations_from`'s: each key's source is the first
attempt carrying it as its own, or, for an attempt without a key, its event's key; a key
with a valid attempt is expected, one without is forbidden; objects' truth from the
statuses of the events with a valid attempt, each version's first.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import accumulate, compress, repeat
from operator import eq, le, ne
from typing import Iterable, Mapping, Sequence

from hookproof.scenarios import key_table as key_tables
from hookproof.scenarios.check_index import CheckIndex
from hookproof.scenarios.check_index import expectations_and_index as columnar_expectations_and_index
from hookproof.scenarios.groups import NO_GROUP, Groups
from hookproof.scenarios.history_expectations import EventFacts
from hookproof.scenarios.history_scan import ANSWERED_NON_SUCCESS
from hookproof.scenarios.observations import (
    MONEY_PREFIXES,
    Expectations,
    ExpectedEffect,
    ObjectTruth,
    Observation,
    world_event_id,
)
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.provider_words import ProviderWords

#: Histories of fewer attempts than this take the plain-Python pass; longer ones the
#: columnar pass (`scenarios.history_scan`). Measured (CPU, best of 15, with the checks'
#: index): explore's histories (about 9 attempts, 8 events) 52 µs plain, 370 µs columnar;
#: generated runs of 33 / 112 / 343 attempts 80 / 223 / 604 µs plain, 445 / 636 / 1,060 µs
#: columnar; past some 500 attempts the columnar pass is the faster.
SMALL_HISTORY = 512


def expectations_and_index(
    events: Iterable[Event], history: Sequence[Attempt], observations: Sequence[Observation], *,
    sender_timeout_s: float, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
    provider: ProviderWords | None = None, truth: bool = True,
) -> tuple[Expectations, CheckIndex]:
    """`scenarios.check_index.expectations_and_index`, in plain Python when `history` holds
    fewer than `SMALL_HISTORY` attempts and the observations and keys are fewer than
    `scenarios.key_table.SMALL` (the index then walks its keys one by one, as the columnar
    one does at that size); otherwise the columnar pass itself. Same arguments, same result
    (`truth` False, the caller reading no object's truth: the columnar pass leaves it empty,
    the plain one, whose few objects cost nothing, builds it)."""
    if len(history) >= SMALL_HISTORY:
        return columnar_expectations_and_index(events, history, observations, sender_timeout_s=sender_timeout_s,
                                               max_attempts_per_event=max_attempts_per_event,
                                               money_prefixes=money_prefixes, provider=provider, truth=truth)
    scan = _scan(history, sender_timeout_s, _world(events))
    if sum(len(obs.effects) for obs in observations) + len(scan.key_codes) >= key_tables.SMALL:
        return columnar_expectations_and_index(events, history, observations, sender_timeout_s=sender_timeout_s,
                                               max_attempts_per_event=max_attempts_per_event,
                                               money_prefixes=money_prefixes, provider=provider, truth=truth)
    return _expectations_and_index_of(scan, history, observations, max_attempts_per_event=max_attempts_per_event,
                                      money_prefixes=money_prefixes, provider=provider)


def plain_expectations_and_index(
    events: Iterable[Event], history: Sequence[Attempt], observations: Sequence[Observation], *,
    sender_timeout_s: float, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
    provider: ProviderWords | None = None,
) -> tuple[Expectations, CheckIndex]:
    """This module's plain-Python pass whatever the history's size and keys
    (`expectations_and_index` takes it only below its bounds): a dict per event and per
    key, a Python loop per attempt, nothing of the columnar pass but its containers. The
    tests' oracle of the columnar pass (`tests/scenarios/oracle_scan.py`)."""
    return _expectations_and_index_of(_scan(history, sender_timeout_s, _world(events)), history, observations,
                                      max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes,
                                      provider=provider)


def _expectations_and_index_of(
    scan: _Scan, history: Sequence[Attempt], observations: Sequence[Observation], *,
    max_attempts_per_event: int | None, money_prefixes: Sequence[str], provider: ProviderWords | None,
) -> tuple[Expectations, CheckIndex]:
    """The expectations and the index of `_scan`'s pass over `history`, with `observations`."""
    expectations = scan.expect.expectations(sender_timeout_s=scan.sender_timeout_s,
                                            max_attempts_per_event=max_attempts_per_event,
                                            money_prefixes=money_prefixes)
    if provider is not None:
        expectations = replace(expectations, provider=provider)
    return expectations, _index_of(scan, history, expectations, observations)


@dataclass
class _Expect:
    """What the expectations need of a history, kept by `_scan`.

    Attributes:
        world: event id → what the checks read of its first Event (`EventFacts`).
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
        """The expectations of the run (`scenarios.observations.expectations_from`'s rules)."""
        prefixes = tuple(money_prefixes)
        by_id = {**self.world, **self.resolved} if self.resolved else self.world
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

        truth = {object_id: _truth(object_id, versions, kinds[object_id])
                 for object_id, versions in per_object.items()}
        return Expectations(expected=expected, forbidden=frozenset(forbidden), truth=truth, money=money,
                            sender_timeout_s=sender_timeout_s, max_attempts_per_event=max_attempts_per_event,
                            money_prefixes=prefixes)


@dataclass
class _Scan:
    """What `_scan` kept of a history: the fields `scenarios.history_scan.HistoryScan`
    gives the index and the checks, as plain Python (positions count attempts from 0)."""

    size: int
    event_codes: dict[str, int]
    event_of: list[int]
    key_codes: dict[str, int]
    key_names: list[str]
    key_of: list[int]
    by_event: Groups
    completions: list[Completion | None]
    acked_events: set[str]
    notable: list[int]
    acked_latencies: array[float]
    over_half: list[int]
    over_half_ms: list[float]
    sender_timeout_s: float
    expect: _Expect


def _scan(history: Iterable[Attempt], sender_timeout_s: float, world: dict[str, EventFacts]) -> _Scan:
    """One loop over `history`: each attempt's event and key codes (numbered in order of
    first attempt), completion, latency when acked, whether notable; with the
    expectations' part (`_Expect`)."""
    expect = _Expect(world)
    resolved, valid_events, key_source, valid_keys, unkeyed_first, unkeyed_valid = (
        expect.resolved, expect.valid_events, expect.key_source, expect.valid_keys, expect.unkeyed_first,
        expect.unkeyed_valid)
    unresolved: set[str] = set()
    event_codes: dict[str, int] = {}
    key_codes: dict[str, int] = {}
    key_names: list[str] = []
    event_of: list[int] = []
    key_of: list[int] = []
    completions: list[Completion | None] = []
    acked_events: set[str] = set()
    notable: list[int] = []
    latencies: array[float] = array("d")
    over_half: list[int] = []
    over_half_ms: list[float] = []
    half_ms = sender_timeout_s * 1000.0 / 2
    ok, acked, non_success = Completion.OK, Outcome.ACKED, ANSWERED_NON_SUCCESS
    pos = -1
    for a in history:
        pos += 1
        event_id = a.event_id
        code = event_codes.get(event_id)
        event = None
        if code is None:
            event = world.get(event_id)
            if event is None:
                _resolve(a, world, resolved, unresolved)
            code = event_codes[event_id] = len(event_codes)
        elif unresolved and event_id in unresolved:
            _resolve(a, world, resolved, unresolved)
        event_of.append(code)
        key = a.business_key
        if key is None:
            key_of.append(NO_GROUP)
            if event_id not in unkeyed_first:
                unkeyed_first[event_id] = (pos, a.amount, a.object_id)
        else:
            code = key_codes.get(key)
            if code is None:
                code = key_codes[key] = len(key_names)
                key_names.append(key)
                key_source[key] = (pos, event_id, a.amount, a.object_id)
            key_of.append(code)
        outcome = a.outcome
        if outcome is acked:
            latency = a.latency_ms
            latencies.append(latency)
            if latency > half_ms:
                over_half.append(pos)
                over_half_ms.append(latency)
        if not a.valid:
            completions.append(None)
            notable.append(pos)
            continue
        completion = a.completion
        completions.append(completion)
        if completion is ok:
            acked_events.add(event_id)
        status = a.status
        if (status is not None and status >= 400) or outcome in non_success:
            notable.append(pos)
        if event_id not in valid_events:
            valid_events[event_id] = None
        if key is None:
            unkeyed_valid.add(event_id)
        else:
            valid_keys.add(key)
    return _Scan(pos + 1, event_codes, event_of, key_codes, key_names, key_of,
                 _group_positions(event_codes, event_of), completions, acked_events, notable, latencies,
                 over_half, over_half_ms, sender_timeout_s, expect)


def _world(events: Iterable[Event]) -> dict[str, EventFacts]:
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


def _truth(object_id: str, versions: Mapping[int, tuple[str, str, int]], kind: str) -> ObjectTruth:
    """The truth of `object_id` (of `kind`) from version -> (status, event id, its time), any order."""
    ordered = sorted(versions.items())
    return ObjectTruth(object_id, tuple((v, status) for v, (status, _, _) in ordered),
                       tuple(event_id for _, (_, event_id, _) in ordered), kind, tuple(at for _, (_, _, at) in ordered))


def _group_positions(codes: Mapping[str, int], group_of: Sequence[int]) -> Groups:
    """`scenarios.groups.group_positions` in plain Python: the positions of each group
    (`NO_GROUP`: none), in history order, groups in code order."""
    n = len(group_of)
    positions: Sequence[int] = range(n)
    groups = group_of
    if NO_GROUP in group_of:
        member = list(map(ne, group_of, repeat(NO_GROUP)))
        positions = list(compress(positions, member))
        groups = list(compress(group_of, member))
    if all(map(le, groups[:-1], groups[1:])):
        order = array("q", positions)
    else:
        order = array("q", sorted(positions, key=group_of.__getitem__))
    counts = Counter(groups)
    starts = array("q", accumulate(map(counts.__getitem__, range(len(codes))), initial=0))
    return Groups(codes, order, starts)


def _index_of(
    scan: _Scan, history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
) -> CheckIndex:
    """The `CheckIndex` of `_scan`'s pass over `history` and of `observations`, as
    `scenarios.check_index.index_of` makes it below `scenarios.key_table.SMALL` keys."""
    peak: dict[str, tuple[int, int]] = {}
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
                peak[key] = (n, oi)
    settled = observations[-1] if observations else None
    index = CheckIndex(history, expectations, scan.by_event, scan.by_event, scan.completions, scan.acked_events,
                       scan.notable, settled, counts, peak, has_states, state_kinds,
                       scan,  # type: ignore[arg-type]  # the fields a HistoryScan gives the checks
                       observations=observations)
    index.by_key = _filed_by_key(index, scan)
    return index


def _filed_by_key(index: CheckIndex, scan: _Scan) -> Groups:
    """`index.by_key`: the attempts under their own business key, and those without one
    under their event's key (`CheckIndex.key_of_event`), each key's positions in history
    order. An event none of whose attempts carries a key is looked up in the expectations
    only. A key only an event gives gets the next code (in the order of those events'
    first attempt without a key)."""
    key_of = scan.key_of
    if NO_GROUP not in key_of:
        return _group_positions(scan.key_codes, key_of)
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
        return _group_positions(codes, key_of)
    filed = list(key_of)
    for p, code in zip(unkeyed, unkeyed_events):
        key_code = key_of_code.get(code)
        if key_code is not None:
            filed[p] = key_code
    return _group_positions(codes, filed)


__all__: Sequence[str] = ["SMALL_HISTORY", "expectations_and_index", "plain_expectations_and_index"]
