"""Distinct ids coded 0, 1, … in order of first sight, without a Python string per id.

A storm's checks code a million event ids. A ``dict`` of them costs a string (some 80
bytes) and an entry (some 40) per id. `IdCodes` holds each id as its UTF-8 bytes in one
fixed-width numpy column (by code) and finds it by its ``hash()`` (an int64 column kept
sorted, with the code of each): about the id's length plus 24 bytes. It is a read-only
``Mapping[str, int]`` (id → code, iterating in code order) with `names` (code → id), so
what took the dict (`scenarios.groups.Groups`, `scenarios.history_scan.CodedSet`) takes it.

Up to `IdCodes.SMALL` ids they are a plain dict (a run of certify's size codes as fast as
before). Past it, `IdCodes.code_all` codes a chunk of ids in a few numpy passes (their hashes, bytes, one
search in the sorted hashes), new ids getting the next codes. An id the column cannot
hold exactly (ending in NUL, a lone surrogate) or whose hash an other id already holds is
kept in a small dict beside it: exact for every string. One lookup by name (`get`) costs
about a microsecond, the names come back decoded on each read: for the ids a finding
names, not for a loop over every id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import filterfalse, repeat
from typing import TYPE_CHECKING, Any, Iterator, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Ids decoded per step when iterating.
_STEP = 8192


class IdCodes(Mapping[str, int]):
    """id → its code (0, 1, … in order of first sight); `names` the ids by code. See the
    module docstring. Up to `SMALL` ids they are a plain dict and list (a run of
    certify's or explore's size pays nothing for the columns); past it, the columns.
    Not thread-safe; grown only by `code_all`."""

    __slots__ = ("_data", "_n", "_hashes", "_by_hash", "_odd", "_odd_names", "_dict", "_list", "_small")

    #: Ids held as a dict before the columns take over.
    SMALL = 65536

    def __init__(self, small: int | None = None) -> None:
        """`small`: how many ids a dict holds before the columns take over (0: none;
        default `SMALL`)."""
        import numpy as np

        self._small = IdCodes.SMALL if small is None else small
        self._dict: dict[str, int] | None = {}  # while small: id → code, and `_list` the ids by code
        self._list: list[str] = []
        self._data: npt.NDArray[np.bytes_] = np.zeros(1024, "S1")  # by code; spare room past _n
        self._n = 0
        self._hashes: npt.NDArray[np.int64] = np.zeros(0, np.int64)  # ascending
        self._by_hash: npt.NDArray[np.int64] = np.zeros(0, np.int64)  # the code of each hash
        self._odd: dict[str, int] = {}  # ids the columns do not hold
        self._odd_names: dict[int, str] = {}

    # ---- coding ----------------------------------------------------------------------

    def code_all(self, values: Sequence[str], *, add: bool = True) -> "npt.NDArray[np.int64]":
        """The codes of `values` (strings), an int64 column; with `add`, ids not seen yet
        get the next codes in order of first appearance, else their code is -1."""
        import numpy as np

        n = len(values)
        small = self._dict
        if small is not None:
            if add:
                new = list(filterfalse(small.__contains__, dict.fromkeys(values)))
                if new:
                    small.update(zip(new, range(self._n, self._n + len(new))))
                    self._list += new
                    self._n += len(new)
                codes = np.fromiter(map(small.__getitem__, values), np.int64, n)
                if self._n > self._small:
                    self._spill()
                return codes
            return np.fromiter(map(small.get, values, repeat(-1)), np.int64, n)
        codes = np.full(n, -1, np.int64)
        if not n:
            return codes
        hashes = np.fromiter(map(hash, values), np.int64, n)
        data, plain = _encoded(values)
        pos = held = None
        if len(self._hashes):
            pos = _positions(self._hashes, hashes)
            at = np.minimum(pos, len(self._hashes) - 1)
            cand = self._by_hash[at]
            held = self._hashes[at] == hashes
            same = plain & held
            same[same] = self._data[cand[same]] == data[same]
            codes[same] = cand[same]
        missing = np.flatnonzero(codes < 0)
        if not missing.size:
            return codes
        odd = self._odd
        if odd:
            got = np.fromiter((odd.get(values[i], -1) for i in missing.tolist()), np.int64, missing.size)
            codes[missing] = got
            missing = missing[got < 0]
            if not missing.size or not add:
                return codes
        elif not add:
            return codes
        order = missing.tolist()
        fresh = dict.fromkeys(map(values.__getitem__, order))  # in order of first appearance
        first = self._n
        new_codes = dict(zip(fresh, range(first, first + len(fresh))))
        codes[missing] = np.fromiter(map(new_codes.__getitem__, map(values.__getitem__, order)), np.int64,
                                     missing.size)
        # the first position of each new id: its hash and bytes
        at = np.flatnonzero(codes >= first)
        seen, where = np.unique(codes[at], return_index=True)
        at = at[where]
        self._append(seen, hashes[at], data[at], plain[at], values, at,
                     None if pos is None else pos[at], None if held is None else held[at])
        return codes

    def _append(self, new: "npt.NDArray[np.int64]", hashes: "npt.NDArray[np.int64]", data: "npt.NDArray[np.bytes_]",
                plain: "npt.NDArray[np.bool_]", values: Sequence[str], at: "npt.NDArray[np.int64]",
                pos: "npt.NDArray[np.int64] | None", held: "npt.NDArray[np.bool_] | None") -> None:
        """Hold the new ids (codes `new`, ascending from `_n`; their hashes, bytes, whether
        the column holds them, their positions `at` in `values`, and where their hashes
        fall in the sorted hashes, `pos`, with whether one is there, `held`; None: none yet)."""
        import numpy as np

        end = self._n + len(new)
        if end > len(self._data) or data.dtype.itemsize > self._data.dtype.itemsize:
            width = max(data.dtype.itemsize, self._data.dtype.itemsize)
            grown = np.zeros(max(end, 2 * len(self._data)) if end > len(self._data) else len(self._data), f"S{width}")
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        self._data[self._n:end] = np.where(plain, data, b"")
        self._n = end
        # a hash another id holds (already, or earlier in this chunk): that id goes to the dict
        if held is None or pos is None:
            held, pos = np.zeros(len(new), np.bool_), np.zeros(len(new), np.int64)
        by = np.argsort(hashes, kind="stable")
        repeat = np.zeros(len(new), np.bool_)
        repeat[by[1:]] = hashes[by[1:]] == hashes[by[:-1]]
        kept = plain & ~held & ~repeat
        for i in np.flatnonzero(~kept).tolist():
            name, code = values[int(at[i])], int(new[i])
            self._odd[name] = code
            self._odd_names[code] = name
        by = by[kept[by]]  # the kept ones, by hash: their insertion points ascend with them
        if by.size:
            self._hashes = np.insert(self._hashes, pos[by], hashes[by])
            self._by_hash = np.insert(self._by_hash, pos[by], new[by])

    def _spill(self) -> None:
        """Move the dict's ids into the columns (once they outgrow `SMALL`)."""
        import numpy as np

        names, self._dict, self._list, self._n = self._list, None, [], 0
        n = len(names)
        hashes = np.fromiter(map(hash, names), np.int64, n)
        data, plain = _encoded(names)
        every = np.arange(n, dtype=np.int64)
        self._append(every, hashes, data, plain, names, every, None, None)

    def trim(self) -> None:
        """Give up the column's spare room (once no id is to be added; adding still works)."""
        if self._dict is None and len(self._data) > self._n:
            self._data = self._data[:self._n].copy()

    # ---- reading ---------------------------------------------------------------------

    def get(self, name: object, default: Any = None) -> Any:
        import numpy as np

        if self._dict is not None:
            return self._dict.get(name, default)  # type: ignore[call-overload]
        if not isinstance(name, str):
            return default
        odd = self._odd.get(name) if self._odd else None
        if odd is not None:
            return odd
        hashes = self._hashes
        if not len(hashes):
            return default
        h = hash(name)
        i = int(np.searchsorted(hashes, h))
        if i >= len(hashes) or int(hashes[i]) != h:
            return default
        code = int(self._by_hash[i])
        return code if self.name(code) == name else default

    def __getitem__(self, name: str) -> int:
        code = self.get(name)
        if code is None:
            raise KeyError(name)
        return int(code)

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict) if self._dict is not None else iter(self.names)

    def name(self, code: int) -> str:
        """The id of `code` (0 ≤ code < len). Raises IndexError past the end."""
        if not 0 <= code < self._n:
            raise IndexError(f"code {code} out of range ({self._n} ids)")
        if self._dict is not None:
            return self._list[code]
        odd = self._odd_names.get(code) if self._odd_names else None
        return odd if odd is not None else bytes(self._data[code]).decode("utf-8")

    @property
    def names(self) -> "IdNames":
        """The ids by code, a read-only sequence (each decoded when read)."""
        return IdNames(self)

    def names_of(self, start: int, stop: int) -> list[str]:
        """The ids of codes `start` … `stop` - 1, decoded at once."""
        if self._dict is not None:
            return self._list[start:stop]
        out = [b.decode("utf-8") for b in self._data[start:stop].tolist()]
        if self._odd_names:
            for code, name in self._odd_names.items():
                if start <= code < stop:
                    out[code - start] = name
        return out


class IdNames(Sequence[str]):
    """The ids of an `IdCodes` by code (a view: ids added later are seen)."""

    __slots__ = ("_codes",)

    def __init__(self, codes: IdCodes) -> None:
        self._codes = codes

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        n = len(self._codes)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step == 1:
                return self._codes.names_of(start, max(start, stop))
            return [self._codes.name(j) for j in range(start, stop, step)]
        return self._codes.name(i + n if i < 0 else i)

    def __iter__(self) -> Iterator[str]:
        codes = self._codes
        for start in range(0, len(codes), _STEP):
            yield from codes.names_of(start, min(len(codes), start + _STEP))


def _positions(sorted_hashes: "npt.NDArray[np.int64]", hashes: "npt.NDArray[np.int64]") -> "npt.NDArray[np.int64]":
    """Where each of `hashes` falls in `sorted_hashes` (``searchsorted``, left), searched
    in ascending order (each search starts where the last ended: several times faster
    over a large table than in the chunk's order)."""
    import numpy as np

    order = np.argsort(hashes)
    pos = np.empty(len(hashes), np.int64)
    pos[order] = np.searchsorted(sorted_hashes, hashes[order])
    return pos


def _encoded(values: Sequence[str]) -> tuple["npt.NDArray[np.bytes_]", "npt.NDArray[np.bool_]"]:
    """`values` as UTF-8 bytes in a fixed-width column, and which the column holds
    exactly (not one ending in NUL, which the column would drop, nor one UTF-8 cannot
    encode; those are b"" in the column)."""
    import numpy as np

    n = len(values)
    try:
        joined = "".join(values)
    except TypeError:  # not all strings: those go to the dict
        joined = "\x00"
    if joined.isascii() and "\x00" not in joined:
        return np.array(values, dtype="S") if n else np.zeros(0, "S1"), np.ones(n, np.bool_)
    out: list[bytes] = []
    plain: list[bool] = []
    for v in values:
        try:
            b = v.encode("utf-8") if isinstance(v, str) else b"\x00"
        except UnicodeEncodeError:
            b = b"\x00"
        ok = not b.endswith(b"\x00")
        out.append(b if ok else b"")
        plain.append(ok)
    return np.array(out, dtype="S"), np.array(plain, np.bool_)


__all__: Sequence[str] = ["IdCodes", "IdNames"]
