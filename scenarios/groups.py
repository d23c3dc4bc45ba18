"""Positions of a history grouped by a name (event id, business key), held as columns.

A history of a million attempts grouped the obvious way (a dict of lists) costs a list
and an int object per group and per position: about 200 bytes per event, and as much
allocation time. `Groups` holds the same mapping as three flat parts: the names' codes
(name → group number, one dict), every position sorted by group (an ``array('i')``,
4 bytes a position, while the positions are fewer than 2**31; ``array('q')`` past it) and
where each group starts in it (the same type). `group_positions` builds one from the group
number of each position (a column the scan fills) with at most one sort, in numpy.
"""

from __future__ import annotations

from array import array
from itertools import islice
from operator import sub
from typing import TYPE_CHECKING, Callable, Iterator, Literal, Mapping, Sequence, TypeVar, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

T = TypeVar("T")

#: The group number of a position that belongs to no group.
NO_GROUP = -1
#: Positions (and group starts) below this are held as int32 (``array('i')``), else int64.
_INT32_END = 2**31


class Groups(Mapping[str, Sequence[int]]):
    """name → the positions of its group, ascending (a read-only mapping).

    Iterates its names in their codes' order (first seen first). Every group holds at
    least one position. `groups[name]` is a fresh array of the columns' type (``'i'`` or
    ``'q'``, see the module docstring): a copy per position, never a view into the columns.
    """

    __slots__ = ("_codes", "_columns", "_make")

    def __init__(self, codes: Mapping[str, int], order: array[int], starts: array[int]) -> None:
        self._codes = codes
        self._columns: tuple[array[int], array[int]] | None = (order, starts)
        self._make: Callable[[], Groups] | None = None

    @classmethod
    def deferred(cls, codes: Mapping[str, int], make: Callable[[], "Groups"]) -> "Groups":
        """The groups `make()` returns (over the same `codes`), grouped on the first read of
        a position: until then only the names are read (membership, iteration, `len`), and
        no column is held (a storm's checks that name no event never group its million)."""
        groups = cls.__new__(cls)
        groups._codes, groups._columns, groups._make = codes, None, make
        return groups

    def _grouped(self) -> tuple[array[int], array[int]]:
        """(positions by group, each group's start and the end), made on the first call when deferred."""
        columns = self._columns
        if columns is None:
            assert self._make is not None
            made = self._make()
            columns = self._columns = made._grouped()
            self._make = None
        return columns

    def __getitem__(self, name: str) -> array[int]:
        code = self._codes[name]
        order, starts = self._grouped()
        return order[starts[code]:starts[code + 1]]

    @overload
    def get(self, name: str) -> array[int] | None: ...

    @overload
    def get(self, name: str, default: array[int] | Sequence[int] | T) -> array[int] | Sequence[int] | T: ...

    def get(self, name: str, default: object = None) -> object:
        code = self._codes.get(name)
        if code is None:
            return default
        order, starts = self._grouped()
        return order[starts[code]:starts[code + 1]]

    def at(self, code: int) -> array[int]:
        """The positions of group number `code` (a copy, as `groups[name]`)."""
        order, starts = self._grouped()
        return order[starts[code]:starts[code + 1]]

    def __contains__(self, name: object) -> bool:
        return name in self._codes

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    @property
    def codes(self) -> Mapping[str, int]:
        """name → its group number (0, 1, … in iteration order)."""
        return self._codes

    def columns(self) -> tuple["npt.NDArray[np.int64]", "npt.NDArray[np.int64]"]:
        """(every position sorted by group, where each group starts in it plus the end),
        read-only views of the columns (no copy): int32 when the columns are (`group_positions`'s
        below 2**31 positions), else int64."""
        import numpy as np

        order, starts = self._grouped()
        return np.frombuffer(order, _DTYPES[order.typecode]), np.frombuffer(starts, _DTYPES[starts.typecode])

    def sizes(self) -> Iterator[tuple[str, int]]:
        """(name, how many positions its group holds) for every group, in order, without a copy."""
        starts = self._grouped()[1]
        return zip(self._codes, map(sub, islice(starts, 1, None), starts))

    def size_of(self, name: str) -> int:
        """How many positions `name`'s group holds (0 for a name not here), without a copy."""
        code = self._codes.get(name)
        if code is None:
            return 0
        starts = self._grouped()[1]
        return starts[code + 1] - starts[code]


def group_positions(codes: Mapping[str, int],
                    group_of: Sequence[int] | "npt.NDArray[np.int64] | npt.NDArray[np.int32]") -> Groups:
    """The `Groups` of `codes` (name → group number 0 … len(codes) - 1, each group
    non-empty) where position p belongs to group ``group_of[p]`` (`NO_GROUP`: to none).

    Every step runs in numpy: the positions of no group are left out, and the rest need
    no sort when their groups come in order (one attempt per event, or each event's
    attempts together), else one stable sort by group (O(n log n)). The positions and
    starts are int32 while `group_of` holds fewer than 2**31 positions (a storm's million:
    half the bytes), else int64.
    """
    import numpy as np

    wide = len(group_of) >= _INT32_END
    dtype = np.int64 if wide else np.int32
    typecode: Literal["i", "q"] = "q" if wide else "i"
    groups = group_of if isinstance(group_of, np.ndarray) and group_of.dtype in (np.int32, np.int64) \
        else np.asarray(group_of, dtype=np.int64)  # an int32 column as it is: no copy
    member = groups != NO_GROUP
    if member.all():
        positions = np.arange(len(groups), dtype=dtype)
    else:
        positions = np.flatnonzero(member).astype(dtype, copy=False)
        groups = groups[positions]
    del member
    starts = np.zeros(len(codes) + 1, dtype=dtype)
    np.cumsum(np.bincount(groups, minlength=len(codes))[:len(codes)], out=starts[1:])
    if len(groups) > 1 and not bool((groups[1:] >= groups[:-1]).all()):
        positions = positions[np.argsort(groups, kind="stable")]
    del groups
    # the columns' bytes copied straight into the arrays (no bytes object between)
    order: array[int] = array(typecode)
    order.frombytes(np.ascontiguousarray(positions, dtype).data.cast("B"))
    del positions
    offsets: array[int] = array(typecode)
    offsets.frombytes(starts.data.cast("B"))
    return Groups(codes, order, offsets)


#: The numpy type of each array type a `Groups` holds its columns in.
_DTYPES: dict[str, str] = {"i": "int32", "q": "int64"}
assert array("i").itemsize == 4 and array("q").itemsize == 8  # what `_DTYPES` says of them

__all__: Sequence[str] = ["Groups", "NO_GROUP", "group_positions"]
