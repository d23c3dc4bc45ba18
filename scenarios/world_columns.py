"""The run's events as columns: what the expectations read of each, no object per event.

`world_columns` reads the events once, `CHUNK` at a time, and keeps per event a world
code (its id → code, the first Event of an id wins; the ids held as bytes, no string
per id: `scenarios.id_codes.IdCodes`) and a few numpy slots indexed by it: its business
key and object as codes of ids held as bytes (`CompactNames`), its status and object
type as codes into lists holding each distinct string once, its amount and its version.
A storm's million events (each decoded from its own JSON, so with its own copy of every
string) then hold no string per event, key or object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, filterfalse, islice, repeat
from operator import attrgetter, is_not, length_hint
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from hookproof.scenarios.id_codes import IdCodes
from hookproof.simulator.events import Event

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Events read per step, held decoded at once: a storm's are decoded
#: from its spool on each pass, and 8192 of them (some 10 MB of small objects) left as many
#: of Python's 1 MiB arenas each pinned by a few objects that outlived the step, resident
#: through the checks.
CHUNK = 1024
#: Events read per step when they are in memory already (a list or tuple: a step decodes
#: nothing, so it holds only its columns, some 1 MB): fewer numpy calls per event (each
#: step codes its ids, keys and objects in a few dozen of them).
HELD_CHUNK = 8192
#: None alone (whether values hold it: `isdisjoint` hashes each once, at C level).
_NONE = frozenset([None])
#: What `Names.code_all` reads for a string it has not coded yet (codes are -1 or more).
_UNSEEN = -2
#: The int32 range: a world's versions inside it are held as int32.
_INT32_MIN, _INT32_END = -2**31, 2**31
#: The int objects every code dict of a pass shares as its values (`code_range`).
_INTS: list[int] = []


def code_range(start: int, stop: int) -> list[int]:
    """The codes `start` … `stop` - 1 as one shared int object each: the dicts coding a
    storm's million ids, keys and objects (each code past 256 is an object of 28 bytes)
    then hold one int per code between them, not one each. The cache grows to the
    largest code asked for and is kept for the process's life."""
    if stop > len(_INTS):
        _INTS.extend(range(len(_INTS), stop))  # exactly: the list's own growth amortizes it
    return _INTS[start:stop]


_FIELDS = attrgetter("id", "business_key", "amount", "object_id", "status", "version", "object_type", "created_us")


class Names:
    """Distinct strings coded 0, 1, … in order of first sight (`names`, and `codes`
    name → code); None is code -1."""

    __slots__ = ("codes", "names")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.codes: dict[Any, int] = {None: -1}

    def code_all(self, values: Sequence[Any]) -> "npt.NDArray[np.int64]":
        """The codes of `values` (new strings get the next codes), an int64 column."""
        import numpy as np

        codes = self.codes
        out = np.fromiter(map(codes.get, values, repeat(_UNSEEN)), np.int64, len(values))  # one lookup each
        if not (out == _UNSEEN).any():
            return out
        new = list(filterfalse(codes.__contains__, dict.fromkeys(values)))
        codes.update(zip(new, code_range(len(self.names), len(self.names) + len(new))))
        self.names += new
        return np.fromiter(map(codes.__getitem__, values), np.int64, len(values))

    def get(self, name: str) -> int | None:
        """The code of `name`, or None when it was never seen."""
        code = self.codes.get(name)
        return None if code is None or code < 0 else code


class CompactNames:
    """`Names` held as an `IdCodes` (no string per name once they outgrow
    `IdCodes.SMALL`): `codes` name → code (None is never coded), `names` by code. For the
    events' objects, a storm's hundreds of thousands, looked up by id for the few a
    check or a report names."""

    __slots__ = ("codes", "names")

    def __init__(self, expect: int = 0) -> None:
        """`expect`: how many names are expected at most (0: unknown); past
        `IdCodes.SMALL` the codes are columns from the first name (`IdCodes.reserve`)."""
        self.codes = _id_codes(expect)
        self.names: Sequence[str] = self.codes.names

    def code_all(self, values: Sequence[Any]) -> "npt.NDArray[np.int64]":
        """The codes of `values` (new strings get the next codes; None is -1), an int64 column."""
        import numpy as np

        if _NONE.isdisjoint(values):
            return self.codes.code_all(values)
        present = np.flatnonzero(np.fromiter(map(is_not, values, repeat(None)), np.bool_, len(values)))
        out = np.full(len(values), -1, np.int64)
        out[present] = self.codes.code_all(list(map(values.__getitem__, present.tolist())))
        return out

    def get(self, name: str) -> int | None:
        """The code of `name`, or None when it was never seen."""
        code = self.codes.get(name)
        return None if code is None else int(code)


class ExtendedCodes(Mapping[str, int]):
    """`base` (name → code 0 … len(base) - 1) and names added after it (`add`: the next
    codes), as one read-only mapping iterating in code order: what a copy of `base` with
    the names added would be, without copying a storm's million entries."""

    __slots__ = ("base", "added", "names")

    def __init__(self, base: Mapping[str, int]) -> None:
        self.base = base
        self.added: dict[str, int] = {}
        #: the added names, by code - len(base)
        self.names: list[str] = []

    def add(self, name: str) -> int:
        """The code of `name`, the next one when it is new."""
        code = self.get(name)
        if code is None:
            code = self.added[name] = len(self.base) + len(self.names)
            self.names.append(name)
        return code

    def __getitem__(self, name: str) -> int:
        code = self.base.get(name)
        return code if code is not None else self.added[name]

    def get(self, name: str, default: Any = None) -> Any:
        code = self.base.get(name)
        return code if code is not None else self.added.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self.base or name in self.added

    def __iter__(self) -> Iterator[str]:
        return chain(self.base, self.added)

    def __len__(self) -> int:
        return len(self.base) + len(self.added)


@dataclass
class WorldColumns:
    """The run's events by world code (0, 1, … in order of first Event of each id).

    Attributes:
        codes: event id → its world code, held as bytes (`scenarios.id_codes.IdCodes`:
            no string per id); `ids` the ids by code (a view of it).
        key: per code, its business key's code in `keys` (-1: None; as bytes past `IdCodes.SMALL`);
            int32, as `obj`, `status` and `kind` (a run codes fewer than 2**31 of each).
        amount: per code, its amount in minor units (NaN: None; exact below 2**53).
        obj: per code, its object's code in `objects` (as bytes past `IdCodes.SMALL`).
        status: per code, its status's code in `statuses` (-1: None).
        version: per code, its object version (int32 when every version fits, else int64).
        kind: per code, its object type's code in `kinds`.
        at_us: per code, its own time (`Event.created_us`, unix microseconds), int64: what a
            finding renders as the provider's time of the event (`profiles.provider_words.EventClock`).
        `status`, `version`, `kind` and `at_us` are empty (and `statuses`, `kinds` name none)
        when built without the truth (`world_columns` with ``truth=False``).
    """

    codes: IdCodes
    ids: Sequence[str]
    key: "npt.NDArray[np.int32]"
    keys: CompactNames
    amount: "npt.NDArray[np.float64]"
    obj: "npt.NDArray[np.int32]"
    objects: Names | CompactNames
    status: "npt.NDArray[np.int32]"
    statuses: Names
    version: "npt.NDArray[np.int64] | npt.NDArray[np.int32]"
    kind: "npt.NDArray[np.int32]"
    kinds: Names
    at_us: "npt.NDArray[np.int64]"

    def __len__(self) -> int:
        """How many events (world codes) the columns hold."""
        return len(self.key)


def chunk_of(events: Iterable[Event]) -> int:
    """How many of `events` `world_columns` reads per step: `HELD_CHUNK` for events held
    in memory (a `Sequence`), else `CHUNK` (events decoded as they are read: a storm's spool)."""
    return HELD_CHUNK if isinstance(events, Sequence) else CHUNK


def world_columns(events: Iterable[Event], *, truth: bool = True) -> WorldColumns:
    """Read `events` once into `WorldColumns` (O(len(events)), C-level per chunk: no
    Python step per event but for the first Event of each id; the ids coded as bytes,
    `IdCodes`). `truth` False: the columns only the objects' truth reads (status, version,
    type, time) are left empty, for a pass whose caller reads no truth (a storm's are
    some 20 MB at a million events)."""
    import numpy as np

    hint = length_hint(events)  # a storm's events say how many they are: columns sized once
    codes = _id_codes(hint)
    # a storm's spool hands its events out by id: while they come so, no table nor hashes of their ids
    codes.hold_sorted()
    keys, objects, statuses, kinds = CompactNames(hint), CompactNames(hint), Names(), Names()
    # key, amount, obj, status, version, kind, at_us: filled in place (no chunk kept, nothing joined)
    # codes as int32 (a run has fewer than 2**31 keys, objects, statuses, types), version and time int64
    kept = (True, True, True, truth, truth, truth, truth)  # without the truth: no status, version, type, time
    cols: list[Any] = [np.empty(hint if keep else 0, dtype) for dtype, keep in
                       zip((np.int32, np.float64, np.int32, np.int32, np.int64, np.int32, np.int64), kept)]
    n = 0
    step = chunk_of(events)
    it = iter(events)
    while chunk := list(islice(it, step)):
        fields: list[Sequence[Any]] = list(zip(*map(_FIELDS, chunk)))  # the chunk's fields, a tuple each
        n_before = len(codes)
        coded = codes.code_all(fields[0])
        if len(codes) == n_before:
            continue
        if len(codes) - n_before < len(chunk):  # a repeated id, or one seen before: each new id's first Event
            at = np.flatnonzero(coded >= n_before)
            _, first = np.unique(coded[at], return_index=True)
            picked = at[first].tolist()
            fields = [list(map(column.__getitem__, picked)) for column in fields]
        _, key, amount, obj, status, version, kind, at_us = fields
        end = n + len(key)
        if end > len(cols[0]):  # more events than the hint said: room for as many again
            cols = [np.concatenate([c[:n], np.empty(max(end, 2 * n) - n, c.dtype)]) if keep else c
                    for c, keep in zip(cols, kept)]
        cols[0][n:end] = keys.code_all(key)
        cols[1][n:end] = np.array(amount, dtype=np.float64)  # None: NaN
        cols[2][n:end] = objects.code_all(obj)
        if truth:
            cols[3][n:end] = statuses.code_all(status)
            cols[4][n:end] = np.fromiter(version, np.int64, len(version))
            cols[5][n:end] = kinds.code_all(kind)
            cols[6][n:end] = np.fromiter(at_us, np.int64, len(at_us))
        n = end
    if n < len(cols[0]):
        cols = [c[:n].copy() for c in cols]
    if truth and n and _INT32_MIN <= int(cols[4].min()) and int(cols[4].max()) < _INT32_END:
        cols[4] = cols[4].astype(np.int32)  # versions that fit: 4 bytes an event, held until the truth is built
    codes.trim()
    keys.codes.trim()
    objects.codes.trim()
    # no id or object is added from here: their hashes go (8 bytes each; the keys' stay until
    # the pass is done looking its keys up there, `MappedCodes`)
    codes.drop_hashes()
    objects.codes.drop_hashes()
    # events handed out by id (a storm's spool reads them so): the ids' table goes too, a lookup
    # bisects the column of ids (the order checked: in any other, the table stays)
    codes.drop_table_if_sorted()
    return WorldColumns(codes, codes.names, cols[0], keys, cols[1], cols[2], objects, cols[3], statuses, cols[4], cols[5],
                        kinds, cols[6])


def _id_codes(expect: int) -> IdCodes:
    """An `IdCodes` for up to `expect` ids (0: unknown): past `IdCodes.SMALL`, columns
    from the first id with room for `expect` (no dict filled, then spilled, and no table
    placed anew per doubling); below it, a dict as usual."""
    codes = IdCodes(0) if expect > IdCodes.SMALL else IdCodes()
    codes.reserve(expect)
    return codes


__all__: Sequence[str] = ["CHUNK", "HELD_CHUNK", "ExtendedCodes", "Names", "WorldColumns", "chunk_of", "code_range",
                          "world_columns"]
