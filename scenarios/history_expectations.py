"""The expectations of a run, from what the checks' one pass kept of its history.

`scenarios.history_scan.scan_history`, given the run's events, keeps per event and per
key a few array slots indexed by its codes (`ExpectationScan`): first attempt, first
valid attempt, first attempt without a key, their amounts. `ExpectationScan.expectations`
turns them into the `scenarios.observations.Expectations` the checks read, by the rules
`scenarios.observations.expectations_from` documents: one Python step per valid event
and per key, one int (not a list or a dict) for a key or an object with a single event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations, ExpectedEffect, ObjectTruth

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hookproof.scenarios.history_scan import HistoryScan

#: Keys turned into expected effects per step (their columns are read as Python values a block at a time).
_BLOCK = 1 << 16


@dataclass(slots=True)
class EventFacts:
    """What the expectations read of one Event (the rest, its object snapshot included,
    is not kept: about 90 bytes an event besides its strings, where an Event holds some
    600). Fields as `simulator.events.Event`'s of the same names; never changed once
    made (not frozen: a frozen dataclass's construction costs four times as much, and a
    storm makes one per event)."""

    id: str
    business_key: str | None
    amount: int | None
    object_id: str
    status: str | None
    version: int
    object_type: str


@dataclass
class ExpectationScan:
    """What the expectations need of a history, kept by the pass (`scan_history` with
    events) as arrays indexed by the scan's codes (`HistoryScan.event_codes`,
    `HistoryScan.key_codes`). Positions count attempts from 0 in history order; -1: none.

    Attributes:
        world: event id → what the checks read of its first Event (`EventFacts`), from
            the run's events: the events themselves are not kept (a storm streams them).
        resolved: an id attempts recorded that is not a world id → its world event's
            facts, joined through the attempt's delivery id (`world_id_of_delivery`).
        first_valid: per event code, the position of its first valid attempt.
        key_first: per key code, the position of the first attempt carrying it as its own;
            `key_amount` that attempt's amount (NaN: None; amounts are exact below 2**53).
        key_valid: per key code, True when a valid attempt carried it as its own.
        unkeyed_first: per event code, the position of its first attempt without a key of
            its own; `unkeyed_amount` that attempt's amount; `unkeyed_valid`: True when
            one such attempt was valid.
        src_objects: (key code or event code) → the object id of the attempt at
            `key_first` (`"k"`) or `unkeyed_first` (`"e"`), kept only when its event is not
            a world id (a world event's facts give the object otherwise).
    """

    world: dict[str, EventFacts]
    resolved: dict[str, EventFacts]
    first_valid: "npt.NDArray[np.int64]"
    key_first: "npt.NDArray[np.int64]"
    key_amount: "npt.NDArray[np.float64]"
    key_valid: "npt.NDArray[np.bool_]"
    unkeyed_first: "npt.NDArray[np.int64]"
    unkeyed_amount: "npt.NDArray[np.float64]"
    unkeyed_valid: "npt.NDArray[np.bool_]"
    src_objects: dict[tuple[str, int], str | None]

    def expectations(
        self, scan: "HistoryScan", *, sender_timeout_s: float, max_attempts_per_event: int | None,
        money_prefixes: Sequence[str] = MONEY_PREFIXES,
    ) -> Expectations:
        """The expectations of the run (`scenarios.observations.expectations_from`, which
        documents the rules), from this part and the codes of `scan`."""
        import numpy as np

        prefixes = tuple(money_prefixes)
        world, resolved = self.world, self.resolved
        names = list(scan.event_codes)  # event code → recorded id
        facts: list[EventFacts | None] = list(map(world.get, names))
        if resolved:
            facts = [f if f is not None else resolved.get(name) for f, name in zip(facts, names)]
        key_names, n_keys = scan.key_names, len(scan.key_names)
        # the sources: each key's first attempt, its own or, for an attempt without a key,
        # its event's key: position, event code, amount, whether an attempt without a key,
        # valid; as columns by key code (a storm has a million keys)
        src_pos = self.key_first.copy()
        src_ev = scan.event_of[self.key_first] if n_keys else np.zeros(0, np.int64)
        src_amount = self.key_amount.copy()
        src_unkeyed = np.zeros(n_keys, np.bool_)
        valid = self.key_valid.copy()
        added_names: list[str] = []  # keys only an event gives, codes n_keys, n_keys + 1, ...
        added: list[list[Any]] = []  # their [position, event code, amount, valid]
        unkeyed = np.flatnonzero(self.unkeyed_first >= 0)
        if unkeyed.size:  # attempts without a key of their own carry their event's
            order = unkeyed[np.argsort(self.unkeyed_first[unkeyed], kind="stable")]
            key_codes = scan.key_codes
            added_code: dict[str, int] = {}
            for code, pos, amount, is_valid in zip(order.tolist(), self.unkeyed_first[order].tolist(),
                                                   self.unkeyed_amount[order].tolist(),
                                                   self.unkeyed_valid[order].tolist()):
                event = facts[code]
                key = event.business_key if event is not None else None
                if key is None:
                    continue
                kc = key_codes.get(key)
                if kc is None:
                    j = added_code.get(key)
                    if j is None:
                        added_code[key] = len(added)
                        added_names.append(key)
                        added.append([pos, code, amount, is_valid])
                    else:
                        source = added[j]
                        if pos < source[0]:
                            source[:3] = pos, code, amount
                        source[3] = source[3] or is_valid
                    continue
                if pos < src_pos[kc]:
                    src_pos[kc], src_ev[kc], src_amount[kc], src_unkeyed[kc] = pos, code, amount, True
                if is_valid:
                    valid[kc] = True
            if added:
                pos_col, ev_col, amount_col, valid_col = zip(*added)
                src_pos = np.concatenate([src_pos, np.array(pos_col, np.int64)])
                src_ev = np.concatenate([src_ev, np.array(ev_col, np.int64)])
                src_amount = np.concatenate([src_amount, np.array(amount_col, np.float64)])
                src_unkeyed = np.concatenate([src_unkeyed, np.ones(len(added), np.bool_)])
                valid = np.concatenate([valid, np.array(valid_col, np.bool_)])
                del added

        # the events of each key and the truth's versions, over the valid events in order
        # of their first valid attempt
        valid_codes = np.flatnonzero(self.first_valid >= 0)
        valid_codes = valid_codes[np.argsort(self.first_valid[valid_codes], kind="stable")]
        # one int per key and per object while they have one event (most, in a storm), a
        # list (a dict of versions) only for those with more
        key_events: dict[str, int | list[int]] = {}  # key → event code(s)
        per_object: dict[str, int | tuple[int, dict[int, int]]] = {}  # object → event code, or (first, version → code)
        for code in valid_codes.tolist():
            event = facts[code]
            if event is None:
                continue
            key = event.business_key
            if key is not None:
                events_of_key = key_events.setdefault(key, code)
                if events_of_key != code:
                    if isinstance(events_of_key, int):
                        key_events[key] = [events_of_key, code]
                    else:
                        events_of_key.append(code)
            if event.status is not None:
                versions = per_object.setdefault(event.object_id, code)
                if versions != code:
                    if isinstance(versions, int):
                        first_code = versions
                        if facts[first_code].version != event.version:  # type: ignore[union-attr]
                            per_object[event.object_id] = (first_code, {
                                facts[first_code].version: first_code, event.version: code})  # type: ignore[union-attr]
                    elif event.version not in versions[1]:
                        versions[1][event.version] = code

        expected: dict[str, ExpectedEffect] = {}
        money: dict[str, int] = {}
        forbidden: set[str] = set()
        by_position = np.argsort(src_pos)  # the sources in position order (each position is one key's)
        for start in range(0, len(by_position), _BLOCK):
            block = by_position[start:start + _BLOCK]
            for kc, ev_code, raw, from_unkeyed, is_valid in zip(
                    block.tolist(), src_ev[block].tolist(), src_amount[block].tolist(), src_unkeyed[block].tolist(),
                    valid[block].tolist()):
                key = key_names[kc] if kc < n_keys else added_names[kc - n_keys]
                codes = key_events.get(key)
                if codes is None:
                    first = facts[ev_code]
                    ids: tuple[str, ...] = (names[ev_code],)
                elif isinstance(codes, int):
                    first = facts[codes]
                    ids = (names[codes],)
                else:
                    first = facts[codes[0]]
                    ids = tuple(map(names.__getitem__, codes))
                amount = first.amount if first is not None and first.amount is not None else (
                    None if raw != raw else int(raw))
                object_id = first.object_id if first is not None else self.src_objects.get(
                    ("e", ev_code) if from_unkeyed else ("k", kc))
                if is_valid:
                    expected[key] = ExpectedEffect(key, ids[0], object_id, amount, ids)
                else:
                    forbidden.add(key)
                if amount is not None and key.startswith(prefixes):
                    money[key] = amount

        pairs: dict[tuple[int, str], tuple[int, str]] = {}
        truth = {object_id: _truth(object_id, versions, facts, names, pairs) for object_id, versions in per_object.items()}
        return Expectations(expected=expected, forbidden=frozenset(forbidden), truth=truth, money=money,
                            sender_timeout_s=sender_timeout_s, max_attempts_per_event=max_attempts_per_event,
                            money_prefixes=prefixes)


def _truth(object_id: str, versions: int | tuple[int, dict[int, int]], facts: Sequence[EventFacts | None],
           names: Sequence[str], pairs: dict[tuple[int, str], tuple[int, str]]) -> ObjectTruth:
    """The truth of `object_id` from the code of its one event, or (its first event's
    code, version → code of the event that first carried it), any order; its kind is its
    first event's object type. `pairs` shares the (version, status) tuples between
    objects (a storm's thousands of objects at ``(1, "active")`` hold one)."""
    shared = pairs.setdefault
    if isinstance(versions, int):
        event = facts[versions]
        assert event is not None and event.status is not None
        pair = (event.version, event.status)
        return ObjectTruth(object_id, (shared(pair, pair),), (names[versions],), event.object_type)
    first = facts[versions[0]]
    assert first is not None
    ordered = sorted(versions[1].items())
    statuses = [(v, facts[code].status) for v, code in ordered]  # type: ignore[union-attr]
    return ObjectTruth(object_id, tuple(shared(pair, pair) for pair in statuses),  # type: ignore[arg-type]
                       tuple(names[code] for _, code in ordered), first.object_type)


__all__: Sequence[str] = ["EventFacts", "ExpectationScan"]
