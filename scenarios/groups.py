"""Positions of a history grouped by a name (event id, business key), held as columns.

A history of a million attempts grouped the obvious way (a dict of lists) costs a list
and an int object per group and per position: about 200 bytes per event, and as much
allocation time. `Groups` holds the same mapping as three flat parts: the names' codes
(name → group number, one dict), every position sorted by group (an ``array('q')``,
8 bytes a position) and where each group starts in it. `group_positions` builds one from
the group number of each position (a column the scan appends to) with one sort in C.
"""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import accumulate, compress, islice, repeat
from operator import le, ne, sub
from typing import Iterator, Mapping, Sequence, TypeVar, overload

T = TypeVar("T")

#: The group number of a position that belongs to no group.
NO_GROUP = -1


class Groups(Mapping[str, Sequence[int]]):
    """name → the positions of its group, ascending (a read-only mapping).

    Iterates its names in their codes' order (first seen first). Every group holds at
    least one position. `groups[name]` is a fresh ``array('q')``: a copy of 8 bytes per
    position, never a view into the columns.
    """

    __slots__ = ("_codes", "_order", "_starts")

    def __init__(self, codes: Mapping[str, int], order: array[int], starts: array[int]) -> None:
        self._codes = codes
        self._order = order
        self._starts = starts

    def __getitem__(self, name: str) -> array[int]:
        code = self._codes[name]
        starts = self._starts
        return self._order[starts[code]:starts[code + 1]]

    @overload
    def get(self, name: str) -> array[int] | None: ...

    @overload
    def get(self, name: str, default: array[int] | Sequence[int] | T) -> array[int] | Sequence[int] | T: ...

    def get(self, name: str, default: object = None) -> object:
        code = self._codes.get(name)
        if code is None:
            return default
        starts = self._starts
        return self._order[starts[code]:starts[code + 1]]

    def __contains__(self, name: object) -> bool:
        return name in self._codes

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    def sizes(self) -> Iterator[tuple[str, int]]:
        """(name, how many positions its group holds) for every group, in order, without a copy."""
        starts = self._starts
        return zip(self._codes, map(sub, islice(starts, 1, None), starts))

    def size_of(self, name: str) -> int:
        """How many positions `name`'s group holds (0 for a name not here), without a copy."""
        code = self._codes.get(name)
        if code is None:
            return 0
        return self._starts[code + 1] - self._starts[code]


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


__all__: Sequence[str] = ["Groups", "NO_GROUP", "group_positions"]
