"""One pass over a history: what the check index and the expectations need, per event and per key.

`scan_history` reads the attempts once, in history order, from any iterable: the list
certify recorded in memory, or a storm's `simulator.delivery.history.HistoryFile`
streamed from disk. It keeps no attempt: per attempt only a few machine words (its
position in the lists of its event and its key, its completion, its answer, its latency
when acked: about 60 bytes), per event and per key a dictionary entry and a list. The
index (`scenarios.check_index.build_index`) and the expectations
(`scenarios.observations.expectations_from`) are both built from one `HistoryScan`;
`scenarios.check_index.expectations_and_index` builds both from a single pass, which is
how a storm's checks read a history of millions of attempts.

Everything a finding needs beyond that (an attempt's event type, faults, times) is read
back from the history by position, for the attempts a finding names only.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from hookproof.scenarios.observations import (
    MONEY_PREFIXES,
    Expectations,
    ExpectedEffect,
    ObjectTruth,
    world_event_id,
)
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event

#: Outcomes of an attempt that got an answer other than a success.
ANSWERED_NON_SUCCESS = (Outcome.REJECTED, Outcome.SERVER_ERROR)
#: An answer without a status, in `HistoryScan.answers`: ``-1 - OUTCOME_CODES[outcome]``.
OUTCOME_CODES: Mapping[Outcome, int] = {o: i for i, o in enumerate(Outcome)}
_OUTCOMES_BY_CODE: tuple[Outcome, ...] = tuple(Outcome)


@dataclass
class HistoryScan:
    """What `scan_history` kept of a history. Positions count attempts from 0 in history order.

    Attributes:
        size: attempts read.
        by_key: business key → positions of the attempts carrying it (their own key only).
        by_event: event id → positions.
        unkeyed: event id → positions of its attempts that carry no business key.
        completions: per position, the completion of a valid attempt, None for an invalid one.
        answers: per position, the HTTP status, or ``-1 - OUTCOME_CODES[outcome]`` when none came.
        ids: per position, the attempt's recorded history index, or None when every attempt
            carries its position (or none: `Attempt.index` -1).
        acked_events: events with at least one valid attempt that completed ok.
        notable: positions of attempts that are invalid, or got a 4xx/5xx status or a
            rejected or server-error outcome.
        acked_latencies: latency (ms) of every acked attempt (valid or not), history order.
        over_half: positions of acked attempts slower than half the sender timeout, and
            `over_half_ms` their latencies (ms).
        valid_events / key_source / valid_keys / unkeyed_first / unkeyed_valid / resolved:
            the expectations' part, kept when events were given (`scan_history`).
    """

    size: int
    by_key: dict[str, list[int]]
    by_event: dict[str, list[int]]
    unkeyed: dict[str, list[int]]
    completions: list[Completion | None]
    answers: array[int]
    ids: array[int] | None
    acked_events: set[str]
    notable: list[int]
    acked_latencies: array[float]
    over_half: list[int]
    over_half_ms: list[float]
    sender_timeout_s: float
    world: dict[str, Event] | None = None
    valid_events: dict[str, None] = field(default_factory=dict)
    key_source: dict[str, tuple[int, str, int | None, str | None]] = field(default_factory=dict)
    valid_keys: set[str] = field(default_factory=set)
    unkeyed_first: dict[str, tuple[int, int | None, str | None]] = field(default_factory=dict)
    unkeyed_valid: set[str] = field(default_factory=set)
    resolved: dict[str, Event] = field(default_factory=dict)

    def answer_summary(self, positions: Iterable[int]) -> str:
        """The distinct answers the attempts at `positions` got: status codes, or the
        outcome when none came (``"timeout"``, ``"connection error"``), first-seen order."""
        answers, outcomes = self.answers, _OUTCOMES_BY_CODE
        seen = dict.fromkeys(str(n) if n >= 0 else outcomes[-1 - n].value.replace("_", " ")
                             for n in (answers[p] for p in positions))
        return ", ".join(seen)

    def expectations(
        self, *, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
    ) -> Expectations:
        """The expectations of the run (`scenarios.observations.expectations_from`, which
        documents the rules). Raises ValueError when the scan was made without events."""
        if self.world is None:
            raise ValueError("the history was scanned without the run's events: no expectations")
        prefixes = tuple(money_prefixes)
        by_id = {**self.world, **self.resolved}
        sources, valid_keys = self.key_source, set(self.valid_keys)
        if self.unkeyed_first:  # attempts without a key of their own carry their event's
            sources = dict(sources)
            merged = False
            for event_id, (pos, amount, object_id) in self.unkeyed_first.items():
                event = by_id.get(event_id)
                key = event.business_key if event is not None else None
                if key is None:
                    continue
                if event_id in self.unkeyed_valid:
                    valid_keys.add(key)
                src = sources.get(key)
                if src is None or pos < src[0]:
                    sources[key] = (pos, event_id, amount, object_id)
                    merged = True
            if merged:
                sources = dict(sorted(sources.items(), key=lambda item: item[1][0]))

        key_events: dict[str, list[str]] = {}
        per_object: dict[str, dict[int, tuple[str, str]]] = {}
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
                    per_object[event.object_id] = {event.version: (event.status, event_id)}
                    kinds[event.object_id] = event.object_type
                elif event.version not in versions:
                    versions[event.version] = (event.status, event_id)

        expected: dict[str, ExpectedEffect] = {}
        money: dict[str, int] = {}
        forbidden: set[str] = set()
        for key, (_, src_event, src_amount, src_object) in sources.items():
            ids = key_events.get(key) or [src_event]
            first = by_id.get(ids[0])
            amount = first.amount if first is not None and first.amount is not None else src_amount
            object_id = first.object_id if first is not None else src_object
            if key in valid_keys:
                expected[key] = ExpectedEffect(key, ids[0], object_id, amount, tuple(ids))
            else:
                forbidden.add(key)
            if amount is not None and key.startswith(prefixes):
                money[key] = amount

        truth = {object_id: _truth(object_id, versions, kinds[object_id])
                 for object_id, versions in per_object.items()}
        return Expectations(expected=expected, forbidden=frozenset(forbidden), truth=truth, money=money,
                            sender_timeout_s=self.sender_timeout_s, max_attempts_per_event=max_attempts_per_event,
                            money_prefixes=prefixes)


def scan_history(
    history: Iterable[Attempt], *, sender_timeout_s: float, events: Iterable[Event] | None = None,
) -> HistoryScan:
    """Read `history` once, in order, keeping what the index (and, with `events`, the
    expectations) need; see `HistoryScan`. O(len(history)); nothing allocated per
    attempt but a slot in a few lists and arrays."""
    world: dict[str, Event] | None = None
    if events is not None:
        world = {}
        for event in events:  # event id -> its first Event
            world.setdefault(event.id, event)
    by_key: dict[str, list[int]] = {}
    by_event: dict[str, list[int]] = {}
    unkeyed: dict[str, list[int]] = {}
    completions: list[Completion | None] = []
    answers: array[int] = array("i")
    ids: array[int] | None = None
    acked_events: set[str] = set()
    notable: list[int] = []
    latencies: array[float] = array("d")
    over_half: list[int] = []
    over_half_ms: list[float] = []
    valid_events: dict[str, None] = {}
    key_source: dict[str, tuple[int, str, int | None, str | None]] = {}
    valid_keys: set[str] = set()
    unkeyed_first: dict[str, tuple[int, int | None, str | None]] = {}
    unkeyed_valid: set[str] = set()
    resolved: dict[str, Event] = {}
    unresolved: set[str] = set()  # recorded ids not (yet) joined to a world event
    expect = world is not None
    half_ms = sender_timeout_s * 1000.0 / 2
    ok, acked, non_success, codes = Completion.OK, Outcome.ACKED, ANSWERED_NON_SUCCESS, OUTCOME_CODES
    add_completion, add_answer, add_latency, add_notable = (completions.append, answers.append, latencies.append,
                                                            notable.append)
    size = 0
    for pos, a in enumerate(history):
        size = pos + 1
        event_id = a.event_id
        positions = by_event.get(event_id)  # get-or-create without allocating when present
        event = None
        if positions is None:
            if expect:
                event = world.get(event_id)  # type: ignore[union-attr]
                if event is None:
                    _resolve(a, world, resolved, unresolved)  # type: ignore[arg-type]
                else:
                    event_id = event.id  # kept: the event's own string, not the attempt's copy
            by_event[event_id] = [pos]
        else:
            positions.append(pos)
            if unresolved and event_id in unresolved:
                _resolve(a, world, resolved, unresolved)  # type: ignore[arg-type]
        key = a.business_key
        if key is None:
            positions = unkeyed.get(event_id)
            if positions is None:
                unkeyed[event_id] = [pos]
                unkeyed_first[event_id] = (pos, a.amount, a.object_id)
            else:
                positions.append(pos)
        else:
            positions = by_key.get(key)
            if positions is None:
                object_id = a.object_id
                if event is not None:  # keep the event's strings where they are the attempt's
                    if event.business_key == key:
                        key = event.business_key
                    if event.object_id == object_id:
                        object_id = event.object_id
                by_key[key] = [pos]
                key_source[key] = (pos, event_id, a.amount, object_id)
            else:
                positions.append(pos)
        index = a.index
        if ids is not None:
            ids.append(index if index >= 0 else pos)
        elif index >= 0 and index != pos:
            ids = array("q", range(pos))
            ids.append(index)
        outcome, status = a.outcome, a.status
        add_answer(status if status is not None else -1 - codes[outcome])
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
        if (status is not None and status >= 400) or outcome in non_success:
            add_notable(pos)
        if expect:
            if event_id not in valid_events:
                valid_events[event_id] = None
            if key is None:
                unkeyed_valid.add(event_id)
            else:
                valid_keys.add(key)
    if not expect:  # the expectations' part is not needed
        key_source, unkeyed_first = {}, {}
    return HistoryScan(size, by_key, by_event, unkeyed, completions, answers, ids, acked_events, notable, latencies,
                       over_half, over_half_ms, sender_timeout_s, world, valid_events, key_source, valid_keys,
                       unkeyed_first, unkeyed_valid, resolved)


def _resolve(a: Attempt, world: Mapping[str, Event], resolved: dict[str, Event], unresolved: set[str]) -> None:
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


def _truth(object_id: str, versions: Mapping[int, tuple[str, str]], kind: str) -> ObjectTruth:
    """The truth of `object_id` (of `kind`) from version -> (status, event id), any order."""
    ordered = sorted(versions.items())
    return ObjectTruth(object_id, tuple((v, status) for v, (status, _) in ordered),
                       tuple(event_id for _, (_, event_id) in ordered), kind)


__all__: Sequence[str] = [
    "ANSWERED_NON_SUCCESS",
    "HistoryScan",
    "OUTCOME_CODES",
    "scan_history",
]
