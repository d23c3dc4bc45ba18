"""The expectations of a run, from what the checks' one pass kept of its history.

`scenarios.history_scan.scan_history`, given the run's events, keeps per event and per
key a few array slots indexed by its codes (`ExpectationScan`): first attempt, first
valid attempt, first attempt without a key, their amounts. `ExpectationScan.expectations`
turns them into the `scenarios.observations.Expectations` the checks read, by the rules
`scenarios.observations.expectations_from` documents, as numpy columns per key and per
object (`scenarios.expectation_views`): no `ExpectedEffect` or `ObjectTruth` is made
until a check or a report looks one up.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import methodcaller
from typing import TYPE_CHECKING, Any, Sequence, cast

from hookproof.scenarios.expectation_views import (
    ExpectedView,
    ForbiddenView,
    KeyColumns,
    MoneyView,
    SeveralEvents,
    TruthColumns,
    TruthView,
)
from hookproof.scenarios.id_codes import IdCodes, MappedCodes, codes_in, starts_with
from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations
from hookproof.scenarios.world_columns import CompactNames, WorldColumns

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hookproof.scenarios.history_scan import HistoryScan


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
    created_us: int = 0


@dataclass
class ExpectationScan:
    """What the expectations need of a history, kept by the pass (`scan_history` with
    events) as arrays indexed by the scan's codes (`HistoryScan.event_codes`,
    `HistoryScan.key_codes`). Positions count attempts from 0 in history order; -1: none.
    Positions and world codes are int32 (`history_scan.MAX_ATTEMPTS`).

    Attributes:
        world: the run's events as columns (`scenarios.world_columns.WorldColumns`): the
            events themselves are not kept (a storm streams them).
        resolved: an id attempts recorded that is not a world id → its world event's
            code, joined through the attempt's delivery id (`world_id_of_delivery`).
        event_world: per event code, its world event's code (`world`), -1 for an id
            neither the world names nor a delivery id joined.
        first_valid: per event code, the position of its first valid attempt.
        key_first: per key code, the position of the first attempt carrying it as its own;
            `key_amount` that attempt's amount (NaN: None; amounts are exact below 2**53).
        key_valid: per key code, True when a valid attempt carried it as its own.
        unkeyed_first: per event code, the position of its first attempt without a key of
            its own; `unkeyed_amount` that attempt's amount; `unkeyed_valid`: True when
            one such attempt was valid.
        src_objects: (key code or event code) → the object id of the attempt at
            `key_first` (`"k"`) or `unkeyed_first` (`"e"`), kept only when its event is not
            a world id (a world event's columns give the object otherwise).
        key_of_world: per world key code (`world.keys`), the scan's code of that key (-1:
            none), when the pass handed that column over (its keys mapped over the world's,
            `MappedCodes.take_inverse`; dropped once `expectations` read it); else worked
            out from the keys' names.
        truth: False when the pass read the events without the truth's columns (`world_columns`
            with ``truth=False``): the expectations' truth is then empty.
    """

    world: WorldColumns
    resolved: dict[str, int]
    event_world: "npt.NDArray[np.int32]"
    first_valid: "npt.NDArray[np.int32]"
    key_first: "npt.NDArray[np.int32]"
    key_amount: "npt.NDArray[np.float64]"
    key_valid: "npt.NDArray[np.bool_]"
    unkeyed_first: "npt.NDArray[np.int32]"
    unkeyed_amount: "npt.NDArray[np.float64]"
    unkeyed_valid: "npt.NDArray[np.bool_]"
    src_objects: dict[tuple[str, int], str | None]
    key_of_world: "npt.NDArray[np.int32] | None" = None
    truth: bool = True

    def expectations(
        self, scan: "HistoryScan", *, sender_timeout_s: float, max_attempts_per_event: int | None,
        money_prefixes: Sequence[str] = MONEY_PREFIXES, release: bool = False,
    ) -> Expectations:
        """The expectations of the run (`scenarios.observations.expectations_from`, which
        documents the rules), from this part and the codes of `scan`, as columns
        (`scenarios.expectation_views`): numpy over keys, events and objects (the events
        of keys with several as flat columns too, `SeveralEvents`).

        `release`: this part's columns (and the world's key codes, amounts) are freed as
        soon as they are read, the per-key slots taken over without a copy: a storm's
        (some 80 MB at a million attempts) are then not held while the truth is built; the
        part cannot give expectations again (it is left empty). The world's table of keys
        stays: the scan's keys are coded over it (`MappedCodes`), and the checks read it.

        Made without the truth (`truth` False): the truth is left empty (`Expectations.truth`
        names no object) and its columns never made (a storm's are some 30 MB at a million
        attempts)."""
        import numpy as np

        prefixes = tuple(money_prefixes)
        world, ew = self.world, self.event_world
        n_world = len(world)  # read once: a release empties the world's key column
        ids = scan.event_codes  # event code → recorded id (a view of an `IdCodes`: no list of a million)
        names = ids.names if isinstance(ids, (IdCodes, MappedCodes)) else list(ids)
        n_keys = len(scan.key_names)
        # the sources: each key's first attempt, its own or, for an attempt without a key,
        # its event's key: position, event code, amount, whether an attempt without a key,
        # valid; as columns by key code (a storm has a million keys)
        # int32, as the scan's codes: held beside the slots until `KeyColumns` takes it
        src_ev = scan.event_of[self.key_first] if n_keys else np.zeros(0, np.int32)
        if release:  # taken over: changed in place below, no copy held beside them
            src_pos, src_amount, valid = self.key_first, self.key_amount, self.key_valid
            self.key_first, self.key_amount, self.key_valid = _freed(src_pos), _freed(src_amount), _freed(valid)
        else:
            src_pos, src_amount, valid = self.key_first.copy(), self.key_amount.copy(), self.key_valid.copy()
        src_unkeyed = np.zeros(n_keys, np.bool_)
        key_codes = scan.key_codes
        # world key code → key code (the scan's, then those only an event gives), -1: none
        to_key: npt.NDArray[np.integer[Any]]
        if self.key_of_world is not None:
            to_key = self.key_of_world  # taken over (int32, changed in place below): no copy beside it
            self.key_of_world = None  # read once: the scan keeps no column per world key past here
        else:
            to_key = codes_in(key_codes, world.keys.names)
        added_codes: dict[str, int] = {}
        added_names: list[str] = []
        # the events with an attempt without a key, as int32 codes (a pass codes fewer than 2**31
        # events), in order of that attempt; each step's column dropped once read (a storm's some
        # half a million events: the tallest step of the expectations)
        unkeyed = np.flatnonzero(self.unkeyed_first >= 0).astype(np.int32)
        if unkeyed.size and n_world:  # attempts without a key of their own carry their event's
            order = unkeyed[np.argsort(self.unkeyed_first[unkeyed], kind="stable")]
            unkeyed = unkeyed[:0]
            w = ew[order]
            kw = np.where(w >= 0, world.key[np.maximum(w, 0)], -1)
            del w
            order, kw = order[kw >= 0], kw[kw >= 0]
            pos, amount, is_valid = self.unkeyed_first[order], self.unkeyed_amount[order], self.unkeyed_valid[order]
            kc = to_key[kw]
            own = kc >= 0
            if own.any():  # a key attempts carried too: the earliest attempt is its source
                c = kc[own]
                seen, first = np.unique(c, return_index=True)
                earlier = pos[own][first] < src_pos[seen]
                at, f = seen[earlier], first[earlier]
                src_pos[at], src_ev[at] = pos[own][f], order[own][f]
                src_amount[at], src_unkeyed[at] = amount[own][f], True
                valid[c[is_valid[own]]] = True
            if not own.all():  # keys only an event gives: the next codes, in order of first attempt
                kn = kw[~own]
                seen, first = np.unique(kn, return_index=True)
                by_first = np.argsort(first, kind="stable")
                seen, first = seen[by_first], first[by_first]
                flags = np.zeros(len(to_key), np.bool_)
                flags[kn[is_valid[~own]]] = True
                added_names = [world.keys.names[k] for k in seen.tolist()]
                added_codes = dict(zip(added_names, range(n_keys, n_keys + len(added_names))))
                to_key[seen] = np.arange(n_keys, n_keys + len(seen))
                src_pos = np.concatenate([src_pos, pos[~own][first]])
                src_ev = np.concatenate([src_ev, order[~own][first]])
                src_amount = np.concatenate([src_amount, amount[~own][first]])
                src_unkeyed = np.concatenate([src_unkeyed, np.ones(len(seen), np.bool_)])
                valid = np.concatenate([valid, flags[seen]])
        n_all = len(src_pos)
        if release:  # read for the last time above
            self.unkeyed_first, self.unkeyed_amount, self.unkeyed_valid = (
                _freed(self.unkeyed_first), _freed(self.unkeyed_amount), _freed(self.unkeyed_valid))
            world.keys = CompactNames()  # the world's hold (its table stays while the scan's keys map over it)
            del unkeyed

        # the valid events of the world, in order of their first valid attempt
        valid_codes = np.flatnonzero(self.first_valid >= 0)
        valid_codes = valid_codes[np.argsort(self.first_valid[valid_codes], kind="stable")]
        if release:
            self.first_valid = _freed(self.first_valid)
        w = ew[valid_codes]
        valid_codes, w = valid_codes[w >= 0], w[w >= 0]
        # the events of each key: its first, and every one for a key with several
        first_event = src_ev.copy()
        multi = SeveralEvents.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
        if len(w):  # each step's arrays are dropped once read: a storm's are megabytes each
            kw = world.key[w]
            if release:
                world.key = _freed(world.key)
            kc = np.where(kw >= 0, to_key[np.maximum(kw, 0)], -1) if len(to_key) else np.full(len(w), -1, np.int64)
            del kw
            has_key = kc >= 0
            listed, events = kc[has_key], valid_codes[has_key]
            del kc, has_key
            seen, first = np.unique(listed, return_index=True)
            first_event[seen] = events[first]
            del seen, first
            counts = np.bincount(listed, minlength=n_all)
            several = counts[listed] > 1
            del counts
            multi = SeveralEvents.of(listed[several], events[several])  # columns: no list or int per event
            del listed, events, several
        fw = ew[first_event] if n_all else np.zeros(0, np.int64)
        if release:
            self.event_world = _freed(ew)
            del ew
        known = fw >= 0
        fw0 = np.maximum(fw, 0)
        amounts = src_amount
        obj = np.full(n_all, -1, np.int64)
        if n_world:
            world_amount = world.amount[fw0]
            amounts = np.where(known & ~np.isnan(world_amount), world_amount, src_amount)
            obj = np.where(known, world.obj[fw0], -1)
            del world_amount
            if release:
                world.amount = _freed(world.amount)
        del fw, known, fw0
        key_names = scan.key_names
        # in code order: the pass's keys (on their bytes, none decoded), then those added
        money_like = np.concatenate([starts_with(key_codes, prefixes),
                                     np.fromiter(map(methodcaller("startswith", prefixes), added_names),
                                                 np.bool_, len(added_names))])
        money = ~np.isnan(amounts) & money_like
        # codes held as int32 through the checks (a pass codes fewer than 2**31 events, keys, objects)
        order = np.argsort(src_pos).astype(np.int32)
        first_event, obj, src_ev = (first_event.astype(np.int32, copy=False), obj.astype(np.int32, copy=False),
                                    src_ev.astype(np.int32, copy=False))
        columns = KeyColumns(key_codes, key_names, added_codes, added_names, order, valid, first_event,
                             multi, amounts, money, obj, world.objects.names, src_ev, src_unkeyed, self.src_objects,
                             names, money_like, prefixes)
        del order
        del src_pos, src_amount  # not the columns': gone before the truth's are made
        if self.truth:
            # the truth's events: those with a status, handed over (`_truth` drops each column as
            # soon as it is read: a storm's are megabytes each)
            has = world.status[w] >= 0 if len(w) else np.zeros(0, np.bool_)
            # (the event codes as int32: held through the truth's sort)
            truth_events: list[npt.NDArray[np.integer[Any]]] = [valid_codes[has].astype(np.int32), w[has]]
            del has, valid_codes, w
            truth_columns = self._truth(truth_events, names, release=release)
        else:
            del valid_codes, w
            truth_columns = self._no_truth(release=release)
        return Expectations(expected=ExpectedView(columns), forbidden=ForbiddenView(columns),
                            truth=TruthView(truth_columns), money=MoneyView(columns),
                            sender_timeout_s=sender_timeout_s, max_attempts_per_event=max_attempts_per_event,
                            money_prefixes=prefixes)

    def _no_truth(self, *, release: bool = False) -> TruthColumns:
        """Truth columns of no object (`expectations` with ``truth=False``); `release`: the
        world's object column freed (the others only the truth reads were never kept)."""
        import numpy as np

        world = self.world
        if release:
            world.obj = _freed(world.obj)
        none = np.zeros(0, np.int32)
        return TruthColumns({}, (), none, none, none, world.kinds.names, none, none, none, none,
                            world.statuses.names, none, (), np.zeros(0, np.int64))

    def _truth(self, events: "list[npt.NDArray[np.integer[Any]]]", names: Sequence[str], *,
               release: bool = False) -> TruthColumns:
        """The truth's columns from the valid world events with a status, `events` = [their
        event codes in order of first valid attempt, their world codes] (the list is emptied:
        each column is freed once read): per object its versions (the first event to carry a
        version wins), ascending, with the time of the event that carried each; its kind is
        its first event's type. `release`: each world column it reads (object, type, version,
        status, time) is freed once read for the last time (only the truth's events' values
        are kept)."""
        import numpy as np

        world = self.world
        codes, w = cast("npt.NDArray[np.int32]", events[0]), events[1]  # event codes, world codes
        events.clear()
        obj = world.obj[w]
        if release:  # each world column freed once read for the last time (a storm's are megabytes each)
            world.obj = _freed(world.obj)
        # each object's first truth event, objects in that order: the lowest index per object code
        # (+1: the code -1 of an event without an object among them), no sort of every event
        # (`np.unique`'s copy and int64 permutation of a storm's million)
        index_type = np.int32 if len(obj) < _INT32_END else np.int64
        at_first: npt.NDArray[np.integer[Any]] = np.full(len(world.objects.names) + 1, len(obj), index_type)
        np.minimum.at(at_first, obj + 1, np.arange(len(obj), dtype=index_type))
        t_obj: npt.NDArray[Any] = np.flatnonzero(at_first < len(obj))
        first = at_first[t_obj]
        del at_first
        by_first = np.argsort(first, kind="stable")
        t_obj, first = (t_obj[by_first] - 1).astype(obj.dtype), first[by_first]
        del by_first
        kind = world.kind[w[first]]
        del first
        version = world.version[w]
        if release:
            world.kind, world.version = _freed(world.kind), _freed(world.version)
        # by object, version, then first valid attempt (lexsort is stable: ties keep that order)
        by = np.lexsort((version, obj))
        head = np.ones(len(by), np.bool_)
        if len(by) > 1:
            obj_by = obj[by]
            head[1:] = obj_by[1:] != obj_by[:-1]
            del obj_by
            version_by = version[by]
            head[1:] |= version_by[1:] != version_by[:-1]
            del version_by
        kept = by[head]
        del by, head
        kept_obj = obj[kept]
        del obj
        kept_version = version[kept]
        del version
        # the kept events' status and time read from the world for them alone (no column of
        # every truth event's beside the sort's)
        kept_w = w[kept]
        del w
        kept_status = world.status[kept_w]
        kept_at = world.at_us[kept_w]
        del kept_w
        if release:
            world.status, world.at_us = _freed(world.status), _freed(world.at_us)
        # event codes (a pass codes fewer than 2**31 events) and versions that fit as int32: the
        # truth's columns are held through every check (a storm's million events, 4 bytes each saved)
        kept_codes = codes[kept].astype(np.int32, copy=False)
        del codes, kept
        if len(kept_version) and _INT32_MIN <= int(kept_version.min()) and int(kept_version.max()) < _INT32_END:
            kept_version = kept_version.astype(np.int32, copy=False)
        truth_of = np.full(len(world.objects.names), -1, np.int32)  # truth indexes: fewer than 2**31 objects
        truth_of[t_obj] = np.arange(len(t_obj), dtype=np.int32)
        return TruthColumns(world.objects.codes, world.objects.names, truth_of, t_obj, kind,
                            world.kinds.names, np.searchsorted(kept_obj, t_obj, "left").astype(np.int32),
                            np.searchsorted(kept_obj, t_obj, "right").astype(np.int32), kept_version, kept_status,
                            world.statuses.names, kept_codes, names, kept_at)


#: The int32 range: a truth's versions inside it are held as int32.
_INT32_MIN, _INT32_END = -2**31, 2**31


def _freed(column: "npt.NDArray[Any]") -> "npt.NDArray[Any]":
    """An empty column of `column`'s dtype: what a column `ExpectationScan.expectations`
    released is left as (the column itself freed once its last reader drops it)."""
    import numpy as np

    return np.empty(0, column.dtype)


__all__: Sequence[str] = ["EventFacts", "ExpectationScan"]
