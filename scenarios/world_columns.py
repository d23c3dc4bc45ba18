"""The run's events as columns: what the expectations read of each, no object per event.

`world_columns` reads the events once, `CHUNK` at a time, and keeps per event a world
code (its id → code, the first Event of an id wins) and a few numpy slots indexed by it:
its business key, object, status and object type as codes into lists holding each
distinct string once, its amount and its version. A storm's million events (each
decoded from its own JSON, so with its own copy of every string) then hold one string
per distinct key and per distinct object, not three per event.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count, filterfalse, islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from hookproof.simulator.events import Event

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Events read per step.
CHUNK = 8192
_FIELDS = attrgetter("id", "business_key", "amount", "object_id", "status", "version", "object_type")


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
        new = list(filterfalse(codes.__contains__, dict.fromkeys(values)))
        if new:
            codes.update(zip(new, count(len(self.names))))
            self.names += new
        return np.fromiter(map(codes.__getitem__, values), np.int64, len(values))

    def get(self, name: str) -> int | None:
        """The code of `name`, or None when it was never seen."""
        code = self.codes.get(name)
        return None if code is None or code < 0 else code


@dataclass
class WorldColumns:
    """The run's events by world code (0, 1, … in order of first Event of each id).

    Attributes:
        codes: event id → its world code; `ids` the ids by code (emptied, with
            ``keys.codes``, once the scan has coded the history's ids and keys).
        key: per code, its business key's code in `keys` (-1: None).
        amount: per code, its amount in minor units (NaN: None; exact below 2**53).
        obj: per code, its object's code in `objects`.
        status: per code, its status's code in `statuses` (-1: None).
        version: per code, its object version.
        kind: per code, its object type's code in `kinds`.
    """

    codes: dict[str, int]
    ids: list[str]
    key: "npt.NDArray[np.int64]"
    keys: Names
    amount: "npt.NDArray[np.float64]"
    obj: "npt.NDArray[np.int64]"
    objects: Names
    status: "npt.NDArray[np.int64]"
    statuses: Names
    version: "npt.NDArray[np.int64]"
    kind: "npt.NDArray[np.int64]"
    kinds: Names

    def __len__(self) -> int:
        """How many events (world codes) the columns hold."""
        return len(self.key)


def world_columns(events: Iterable[Event]) -> WorldColumns:
    """Read `events` once into `WorldColumns` (O(len(events)), C-level per chunk: no
    Python step per event but for the first Event of each id)."""
    import numpy as np

    codes: dict[str, int] = {}
    ids: list[str] = []
    keys, objects, statuses, kinds = Names(), Names(), Names(), Names()
    parts: list[list[Any]] = [[], [], [], [], [], []]  # key, amount, obj, status, version, kind
    it = iter(events)
    while chunk := list(islice(it, CHUNK)):
        rows = list(map(_FIELDS, chunk))
        chunk_ids = [row[0] for row in rows]
        new = list(filterfalse(codes.__contains__, dict.fromkeys(chunk_ids)))
        if not new:
            continue
        if len(new) < len(rows):  # a repeated id: its first Event's row
            first = dict(zip(reversed(chunk_ids), reversed(rows)))
            rows = list(map(first.__getitem__, new))
        codes.update(zip(new, count(len(ids))))
        ids += new
        _, key, amount, obj, status, version, kind = zip(*rows)
        parts[0].append(keys.code_all(key))
        parts[1].append(np.array(amount, dtype=np.float64))  # None: NaN
        parts[2].append(objects.code_all(obj))
        parts[3].append(statuses.code_all(status))
        parts[4].append(np.fromiter(version, np.int64, len(version)))
        parts[5].append(kinds.code_all(kind))
    cols: list[Any] = [np.concatenate(p) if p else np.zeros(0, np.float64 if i == 1 else np.int64)
                       for i, p in enumerate(parts)]
    return WorldColumns(codes, ids, cols[0], keys, cols[1], cols[2], objects, cols[3], statuses, cols[4], cols[5],
                        kinds)


__all__: Sequence[str] = ["CHUNK", "Names", "WorldColumns", "world_columns"]
