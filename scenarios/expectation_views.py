"""The expectations of a run as columns, seen as the mappings `Expectations` holds.

`scenarios.history_expectations.ExpectationScan.expectations` keeps per business key
and per object a few numpy slots (`KeyColumns`, `TruthColumns`), never an object: a
storm's million keys hold no `ExpectedEffect` and its objects no `ObjectTruth`. The
views here read them as `Expectations.expected`, `forbidden`, `money` and `truth`
(read-only mappings and a set, in the order the dicts they replace had): an
`ExpectedEffect` or an `ObjectTruth` is built when one is looked up, for the keys and
objects a check or a report names.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from hookproof.scenarios.observations import ExpectedEffect, ObjectTruth

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class SeveralEvents(Mapping[int, list[int]]):
    """key code → the event codes of its validly sent events, for the keys with several
    (`KeyColumns.multi`), held as three flat columns: the keys' codes ascending, where each
    key's events start, and every key's events in their listed order (int32 codes). A
    storm's some 200k such keys then cost a few bytes an event, where a dict of lists held
    a list per key and an int object per event (some 40 MB at a million attempts, and
    Python's small objects are not handed back to the system once freed). Build with `of`;
    iterates the key codes ascending; each list is made when read."""

    __slots__ = ("codes", "starts", "events")

    def __init__(self, codes: "npt.NDArray[np.int32]", starts: "npt.NDArray[np.int64]",
                 events: "npt.NDArray[np.int32]") -> None:
        """`codes` ascending and distinct; key i's events are ``events[starts[i]:starts[i + 1]]``
        (`starts` one longer than `codes`); `of` is the way to make one."""
        self.codes, self.starts, self.events = codes, starts, events

    @classmethod
    def of(cls, codes: "npt.NDArray[np.integer[Any]]", events: "npt.NDArray[np.integer[Any]]") -> "SeveralEvents":
        """From pairs (key code, event code) in listed order (`codes[i]` lists `events[i]`):
        each key's events in that order. Codes and events are below 2**31."""
        import numpy as np

        by_key = np.argsort(codes, kind="stable")  # each key's events keep their order
        sorted_codes = codes[by_key]
        listed = events[by_key].astype(np.int32)
        del by_key
        distinct, first = np.unique(sorted_codes, return_index=True)
        del sorted_codes
        starts = np.empty(len(distinct) + 1, np.int64)
        starts[:-1] = first
        starts[-1] = len(listed)
        return cls(distinct.astype(np.int32), starts, listed)

    def _at(self, code: object) -> int:
        """The index of `code` in `codes`, -1 when it is not there."""
        import numpy as np

        if not isinstance(code, (int, np.integer)) or not len(self.codes):
            return -1
        i = int(np.searchsorted(self.codes, code))
        return i if i < len(self.codes) and int(self.codes[i]) == code else -1

    def __getitem__(self, code: int) -> list[int]:
        i = self._at(code)
        if i < 0:
            raise KeyError(code)
        return self.events[int(self.starts[i]):int(self.starts[i + 1])].tolist()

    def get(self, code: int, default: Any = None) -> Any:
        i = self._at(code)
        return default if i < 0 else self.events[int(self.starts[i]):int(self.starts[i + 1])].tolist()

    def __contains__(self, code: object) -> bool:
        return self._at(code) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self.codes.tolist())

    def __len__(self) -> int:
        return len(self.codes)

    def lengths(self) -> "npt.NDArray[np.int64]":
        """How many events each key (in `codes`' order) lists."""
        import numpy as np

        return np.diff(self.starts)


@dataclass(eq=False)
class KeyColumns:
    """Per business key code, what its expectation is. Codes below ``len(names)`` are the
    scan's (`codes`, `names`); the rest are keys only an event gives (`added_codes`,
    `added_names`).

    Attributes:
        order: every code, in position order of the key's first attempt (the order of
            the expectations' mappings).
        valid: per code, True when a valid attempt carried the key (expected), else it
            is forbidden.
        first_event: per code, the event code (`event_names`) of its first validly sent
            event, else of its first attempt's event.
        multi: code → event codes of its validly sent events, for keys with several
            (`SeveralEvents` from the pass; any mapping of lists reads the same).
        amount: per code, minor units (NaN: unknown).
        money: per code, True for a money-like key whose amount is known.
        obj: per code, its object's code in `object_names` (-1: read `src_objects`).
        src_ev / src_unkeyed: per code, its first attempt's event code and whether that
            attempt carried no key of its own (where `src_objects` keeps a foreign object).
        money_like: per code, True when the key starts with one of `money_prefixes`
            (its amount known or not); None when not computed.
    The pass's columns of codes (`order`, `first_event`, `obj`, `src_ev`) are int32.
    """

    codes: Mapping[str, int]
    names: Sequence[str]
    added_codes: dict[str, int]
    added_names: list[str]
    order: "npt.NDArray[np.int32] | npt.NDArray[np.int64]"
    valid: "npt.NDArray[np.bool_]"
    first_event: "npt.NDArray[np.int32] | npt.NDArray[np.int64]"
    multi: Mapping[int, list[int]]
    amount: "npt.NDArray[np.float64]"
    money: "npt.NDArray[np.bool_]"
    obj: "npt.NDArray[np.int32] | npt.NDArray[np.int64]"
    object_names: Sequence[str]
    src_ev: "npt.NDArray[np.int32] | npt.NDArray[np.int64]"
    src_unkeyed: "npt.NDArray[np.bool_]"
    src_objects: Mapping[tuple[str, int], str | None]
    event_names: Sequence[str]
    money_like: "npt.NDArray[np.bool_] | None" = None
    money_prefixes: tuple[str, ...] = ()

    def code(self, key: Any) -> int | None:
        """The code of `key` (a string), or None for a key no attempt or event gave."""
        code = self.codes.get(key)
        return code if code is not None or not self.added_codes else self.added_codes.get(key)

    def name(self, code: int) -> str:
        """The key of `code`."""
        n = len(self.names)
        return self.names[code] if code < n else self.added_names[code - n]

    def effect(self, code: int) -> ExpectedEffect:
        """The `ExpectedEffect` of `code` (built on each call)."""
        events = self.multi.get(code)
        names = self.event_names
        ids = tuple(names[c] for c in events) if events is not None else (names[int(self.first_event[code])],)
        obj = int(self.obj[code])
        if obj >= 0:
            object_id: str | None = self.object_names[obj]
        else:
            source = ("e", int(self.src_ev[code])) if self.src_unkeyed[code] else ("k", code)
            object_id = self.src_objects.get(source)
        raw = float(self.amount[code])
        return ExpectedEffect(self.name(code), ids[0], object_id, None if raw != raw else int(raw), ids)

    def names_of(self, codes: "npt.NDArray[np.integer[Any]]") -> Iterator[str]:
        """The keys of `codes`, in order."""
        names = self.names if not self.added_names else [*self.names, *self.added_names]
        return map(names.__getitem__, codes.tolist())

    @cached_property
    def expected_order(self) -> "npt.NDArray[np.integer[Any]]":
        """The codes of expected keys, in order."""
        return self.order[self.valid[self.order]]

    @cached_property
    def forbidden_order(self) -> "npt.NDArray[np.integer[Any]]":
        """The codes of forbidden keys, in order."""
        return self.order[~self.valid[self.order]]

    @cached_property
    def money_order(self) -> "npt.NDArray[np.integer[Any]]":
        """The codes of money-like keys with a known amount, in order."""
        return self.order[self.money[self.order]]

    def key_of_events(self, n_events: int) -> "npt.NDArray[np.int32]":
        """Per event code (0 … `n_events` - 1), the code of the first expected key (in
        order) whose events list it, else -1."""
        import numpy as np

        expected = self.expected_order
        multi = self.multi
        # the keys with several events as flat columns (a storm has some 200k of them: no
        # array per key), each key's events in their listed order
        if isinstance(multi, SeveralEvents):
            multi_codes, lengths, listed = multi.codes, multi.lengths(), multi.events
        else:
            multi_codes = np.fromiter(multi, np.int64, len(multi))
            lengths = np.fromiter(map(len, multi.values()), np.int64, len(multi))
            listed = np.fromiter(chain.from_iterable(multi.values()), np.int64, int(lengths.sum()))
        rank_of = np.full(len(self.order), -1, np.int64)  # key code → its rank in `expected`, -1: not expected
        rank_of[expected] = np.arange(len(expected))
        multi_rank = np.repeat(rank_of[multi_codes], lengths)
        del rank_of
        among = multi_rank >= 0  # the events of expected keys only
        single = np.ones(len(expected), np.bool_)
        single[multi_rank[among]] = False
        ev = np.concatenate([self.first_event[expected[single]], listed[among]])
        rank = np.concatenate([np.flatnonzero(single), multi_rank[among]])
        key = np.concatenate([expected[single], np.repeat(multi_codes, lengths)[among]])
        del listed, single, multi_rank, among, multi_codes, lengths
        by_rank = np.argsort(rank, kind="stable")  # by rank; a key's several events in their listed order
        del rank
        ev, key = ev[by_rank], key[by_rank]
        del by_rank
        out = np.full(n_events, -1, np.int32)  # key codes: fewer than 2**31
        seen, first = np.unique(ev, return_index=True)
        out[seen] = key[first]
        return out


class ExpectedView(Mapping[str, ExpectedEffect]):
    """business key → the `ExpectedEffect` it owes (`Expectations.expected`), read from
    `KeyColumns`; iterates in position order of each key's first attempt."""

    __slots__ = ("columns",)

    def __init__(self, columns: KeyColumns) -> None:
        self.columns = columns

    def __getitem__(self, key: str) -> ExpectedEffect:
        code = self.columns.code(key)
        if code is None or not self.columns.valid[code]:
            raise KeyError(key)
        return self.columns.effect(code)

    def __contains__(self, key: object) -> bool:
        code = self.columns.code(key)
        return code is not None and bool(self.columns.valid[code])

    def get(self, key: str, default: Any = None) -> Any:
        code = self.columns.code(key)
        return self.columns.effect(code) if code is not None and self.columns.valid[code] else default

    def __iter__(self) -> Iterator[str]:
        return self.columns.names_of(self.columns.expected_order)

    def __len__(self) -> int:
        return len(self.columns.expected_order)


class ForbiddenView(Set[str]):
    """The keys every attempt of which was invalid (`Expectations.forbidden`), read from
    `KeyColumns`."""

    __slots__ = ("columns",)

    def __init__(self, columns: KeyColumns) -> None:
        self.columns = columns

    def __contains__(self, key: object) -> bool:
        code = self.columns.code(key)
        return code is not None and not self.columns.valid[code]

    def __iter__(self) -> Iterator[str]:
        return self.columns.names_of(self.columns.forbidden_order)

    def __len__(self) -> int:
        return len(self.columns.forbidden_order)

    __hash__ = Set._hash


class MoneyView(Mapping[str, int]):
    """money-like key → its amount in minor units (`Expectations.money`), read from `KeyColumns`."""

    __slots__ = ("columns",)

    def __init__(self, columns: KeyColumns) -> None:
        self.columns = columns

    def __getitem__(self, key: str) -> int:
        code = self.columns.code(key)
        if code is None or not self.columns.money[code]:
            raise KeyError(key)
        return int(self.columns.amount[code])

    def __contains__(self, key: object) -> bool:
        code = self.columns.code(key)
        return code is not None and bool(self.columns.money[code])

    def get(self, key: str, default: Any = None) -> Any:
        code = self.columns.code(key)
        return int(self.columns.amount[code]) if code is not None and self.columns.money[code] else default

    def __iter__(self) -> Iterator[str]:
        return self.columns.names_of(self.columns.money_order)

    def __len__(self) -> int:
        return len(self.columns.money_order)


@dataclass(eq=False)
class TruthColumns:
    """Per truth index t (0, 1, … in order of each object's first validly sent event with
    a status), its object and versions.

    Attributes:
        objects: object id → its code (`object_names`), for every object of the run;
            `truth_of` maps a code to its t (-1: no truth).
        obj: per t, its object code; `kind` its first event's object type code (`kind_names`).
        start / end: per t, its slice of `version`, `status` (codes into `status_names`),
            `event` (event codes into `event_names`) and `at_us` (that event's own time,
            unix microseconds, int64), ascending versions.
        The codes of objects, kinds, statuses and events, `truth_of`, `start` and `end` are
        int32 (a run codes fewer than 2**31 of each, `scenarios.world_columns`); `version` is
        int32 when every version fits, else int64 (read it as int64 before arithmetic that
        may leave the int32 range)."""

    objects: Mapping[Any, int]
    object_names: Sequence[str]
    truth_of: "npt.NDArray[np.int32]"
    obj: "npt.NDArray[np.int32]"
    kind: "npt.NDArray[np.int32]"
    kind_names: Sequence[str]
    start: "npt.NDArray[np.int32]"
    end: "npt.NDArray[np.int32]"
    version: "npt.NDArray[np.int64] | npt.NDArray[np.int32]"
    status: "npt.NDArray[np.int32]"
    status_names: Sequence[str]
    event: "npt.NDArray[np.int32]"
    event_names: Sequence[str]
    at_us: "npt.NDArray[np.int64]"

    def index(self, object_id: object) -> int | None:
        """The truth index of `object_id`, or None."""
        code = self.objects.get(object_id) if isinstance(object_id, str) else None
        if code is None or code < 0:
            return None
        t = int(self.truth_of[code])
        return t if t >= 0 else None

    def truth(self, t: int) -> ObjectTruth:
        """The `ObjectTruth` at `t` (built on each call)."""
        a, b = int(self.start[t]), int(self.end[t])
        statuses, names = self.status_names, self.event_names
        versions = tuple(zip(self.version[a:b].tolist(), (statuses[s] for s in self.status[a:b].tolist())))
        return ObjectTruth(self.object_names[int(self.obj[t])], versions,
                           tuple(names[c] for c in self.event[a:b].tolist()), self.kind_names[int(self.kind[t])],
                           tuple(self.at_us[a:b].tolist()))


class TruthView(Mapping[str, ObjectTruth]):
    """object id → its `ObjectTruth` (`Expectations.truth`), read from `TruthColumns`, in
    order of each object's first validly sent event; `chosen` (a mask by t) narrows it
    to some objects (`of_kinds`)."""

    __slots__ = ("columns", "chosen", "_order")

    def __init__(self, columns: TruthColumns, chosen: "npt.NDArray[np.bool_] | None" = None) -> None:
        import numpy as np

        self.columns = columns
        self.chosen = chosen
        self._order = np.flatnonzero(chosen) if chosen is not None else None

    def order(self) -> "npt.NDArray[np.int64]":
        """The truth indexes t of this view, in its order."""
        import numpy as np

        return self._order if self._order is not None else np.arange(len(self.columns.obj), dtype=np.int64)

    def _index(self, object_id: object) -> int | None:
        t = self.columns.index(object_id)
        if t is None or (self.chosen is not None and not self.chosen[t]):
            return None
        return t

    def __getitem__(self, object_id: str) -> ObjectTruth:
        t = self._index(object_id)
        if t is None:
            raise KeyError(object_id)
        return self.columns.truth(t)

    def __contains__(self, object_id: object) -> bool:
        return self._index(object_id) is not None

    def get(self, object_id: str, default: Any = None) -> Any:
        t = self._index(object_id)
        return self.columns.truth(t) if t is not None else default

    def __iter__(self) -> Iterator[str]:
        names, obj = self.columns.object_names, self.columns.obj
        order = self._order if self._order is not None else range(len(obj))
        return (names[o] for o in obj[order].tolist())

    def __len__(self) -> int:
        return len(self._order) if self._order is not None else len(self.columns.obj)

    def of_kinds(self, kinds: Set[str]) -> "TruthView":
        """The truth of the objects whose kind is one of `kinds`."""
        import numpy as np

        columns = self.columns
        wanted = np.fromiter((name in kinds for name in columns.kind_names), np.bool_, len(columns.kind_names))
        chosen = wanted[columns.kind] if len(wanted) else np.zeros(len(columns.kind), np.bool_)
        return TruthView(columns, chosen if self.chosen is None else chosen & self.chosen)


class EventKeys(Mapping[str, str]):
    """event id → the first expected key listing it (`CheckIndex.expected_keys`), from
    `KeyColumns.key_of_events` over `event_codes`: the index's scan's event codes, or
    those of the pass the expectations came from (`event_codes_of`)."""

    __slots__ = ("_codes", "_key_of", "_columns")

    def __init__(self, event_codes: Mapping[str, int], columns: KeyColumns) -> None:
        self._codes = event_codes
        self._columns = columns
        self._key_of = columns.key_of_events(len(event_codes))

    @property
    def columns(self) -> KeyColumns:
        """The expectations' columns the keys are read from."""
        return self._columns

    @property
    def event_codes(self) -> Mapping[str, int]:
        """event id → the event code `codes_of_events` is indexed by."""
        return self._codes

    @property
    def codes_of_events(self) -> "npt.NDArray[np.int32]":
        """Per event code, the code (in `columns`) of its first expected key, else -1."""
        return self._key_of

    def __getitem__(self, event_id: str) -> str:
        code = self._codes.get(event_id)
        key = -1 if code is None else int(self._key_of[code])
        if key < 0:
            raise KeyError(event_id)
        return self._columns.name(key)

    def get(self, event_id: str, default: Any = None) -> Any:
        code = self._codes.get(event_id)
        key = -1 if code is None else int(self._key_of[code])
        return self._columns.name(key) if key >= 0 else default

    def __iter__(self) -> Iterator[str]:
        key_of = self._key_of.tolist()  # the codes' names iterate in code order
        return (name for name, code in zip(self._codes, range(len(key_of))) if key_of[code] >= 0)

    def __len__(self) -> int:
        return int((self._key_of >= 0).sum())


def event_codes_of(columns: KeyColumns) -> Mapping[str, int]:
    """event id → its event code in `columns` (`KeyColumns.event_names`): the pass's own
    `IdCodes` when the names are its view, else a dict made of the names."""
    from hookproof.scenarios.id_codes import IdNames

    names = columns.event_names
    if isinstance(names, IdNames):
        return names.codes
    return dict(zip(names, range(len(names))))


__all__: Sequence[str] = [
    "EventKeys",
    "ExpectedView",
    "ForbiddenView",
    "KeyColumns",
    "MoneyView",
    "SeveralEvents",
    "TruthColumns",
    "TruthView",
    "event_codes_of",
]
