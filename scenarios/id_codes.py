"""Distinct ids coded 0, 1, … in order of first sight, without a Python string per id.

A storm's checks code a million event ids. A ``dict`` of them costs a string (some 80
bytes) and an entry (some 40) per id. `IdCodes` holds each id as its UTF-8 bytes in one
numpy column (by code; `HeldBytes`: at fixed width while the ids are of about one length,
else back to back, each at its own length with its end) and finds it by its ``hash()`` (an
int64 column by code, and an open-addressing table of codes indexed by the hash's low
bits, probed in steps from its high bits, at most two thirds full): about the id's length
(plus 4 for its end) plus 14 to 20 bytes;
8 fewer once the table is done growing (`IdCodes.drop_hashes`: lookups then compare the
ids' bytes alone, as a match always did; the hashes are made again from the ids if one is
added after all). It is a read-only
``Mapping[str, int]`` (id → code, iterating in code order) with `names` (code → id), so
what took the dict (`scenarios.groups.Groups`, `scenarios.history_scan.CodedSet`) takes it.

Up to `IdCodes.SMALL` ids they are a plain dict (a run of certify's size codes as fast as
before). Past it, `IdCodes.code_all` codes a chunk of ids in a few numpy passes (their hashes,
bytes, a probe of the table per round, the chunk at once), new ids getting the next codes:
O(1) per id, however many are held. Ids whose hashes collide sit in the table side by side
(a match is the same hash and the same bytes). An id the column cannot hold exactly (ending
in NUL, a lone surrogate) is kept in a small dict beside it: exact for every string. One lookup by name (`get`) costs
about a microsecond, the names come back decoded on each read: for the ids a finding
names, not for a loop over every id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, filterfalse, repeat
from typing import TYPE_CHECKING, Any, Iterator, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Ids decoded per step when iterating.
_STEP = 8192
#: The table's fewest slots.
_MIN_SLOTS = 1024
#: The hash's bits below this one choose an id's first slot; those from it on its probe step.
_STEP_SHIFT = 32
#: The table is at most this full (`_FILL_NUM` / `_FILL_DEN` of its slots hold a code).
_FILL_NUM, _FILL_DEN = 2, 3


class _Codes(Mapping[str, int]):
    """What `IdCodes` and `MappedCodes` share: a mapping read through their `get`, `_n` ids long."""

    _n: int

    def get(self, name: object, default: Any = None) -> Any:
        raise NotImplementedError

    def __getitem__(self, name: str) -> int:
        code = self.get(name)
        if code is None:
            raise KeyError(name)
        return int(code)

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None

    def __len__(self) -> int:
        return self._n


class IdCodes(_Codes):
    """id → its code (0, 1, … in order of first sight); `names` the ids by code. See the
    module docstring. Up to `SMALL` ids they are a plain dict and list (a run of
    certify's or explore's size pays nothing for the columns); past it, the columns.
    Not thread-safe; grown only by `code_all`."""

    __slots__ = ("_held", "_n", "_hash_of", "_slots", "_odd", "_odd_names", "_dict", "_list", "_small", "_room")

    #: Ids held as a dict before the columns take over.
    SMALL = 65536

    def __init__(self, small: int | None = None) -> None:
        """`small`: how many ids a dict holds before the columns take over (0: none;
        default `SMALL`)."""
        import numpy as np

        self._small = IdCodes.SMALL if small is None else small
        self._dict: dict[str, int] | None = {}  # while small: id → code, and `_list` the ids by code
        self._list: list[str] = []
        self._held = HeldBytes()  # the ids' bytes by code
        self._n = 0
        # by code; None once dropped (`drop_hashes`: made again by `_hashes` when needed)
        self._hash_of: npt.NDArray[np.int64] | None = np.zeros(1024, np.int64)
        # the table: a code per slot (-1: empty), a power of two long, at most 2/3 full (`_FILL_NUM`)
        self._slots: npt.NDArray[np.int32] = np.full(_MIN_SLOTS, -1, np.int32)
        self._odd: dict[str, int] = {}  # ids the columns do not hold
        self._odd_names: dict[int, str] = {}
        self._room = 0  # ids the columns and the table are sized for when they grow (`reserve`)

    def reserve(self, n: int) -> None:
        """Expect `n` ids in all: once past `SMALL`, the columns and the table take room for
        `n` at once rather than doubling (each doubling holds the old and the new column at
        once, and places every id in the table anew). A hint: more ids still fit, fewer
        leave spare room (`trim`)."""
        self._room = max(self._room, n)

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
        if not n:
            return np.full(0, -1, np.int64)
        hashes = np.fromiter(map(hash, values), np.int64, n)
        data, plain = _encoded(values)
        codes = self._find(hashes, data)
        odd = np.flatnonzero(~plain)
        if odd.size:  # an id the table does not hold: the dict beside it
            codes[odd] = np.fromiter(map(self._odd.get, map(values.__getitem__, odd.tolist()), repeat(-1)),
                                     np.int64, odd.size)
        missing = np.flatnonzero(codes < 0)
        if not missing.size or not add:
            return codes
        first = self._n
        at = _fresh(codes, missing, hashes, data, plain, first)
        if at is None:  # ids the hashes cannot tell apart alone: a dict of the missing ids
            order = missing.tolist()
            fresh = dict.fromkeys(map(values.__getitem__, order))  # in order of first appearance
            new_codes = dict(zip(fresh, range(first, first + len(fresh))))
            codes[missing] = np.fromiter(map(new_codes.__getitem__, map(values.__getitem__, order)), np.int64,
                                         missing.size)
            # the first position of each new id (its code above every code before it): its hash and bytes
            seen = codes[missing]
            once = np.empty(missing.size, np.bool_)
            once[0] = True
            np.greater(seen[1:], np.maximum.accumulate(seen)[:-1], out=once[1:])
            at = missing[once]
        self._append(hashes[at], data[at], plain[at], [values[i] for i in at[~plain[at]].tolist()])
        return codes

    def codes_hinted(self, values: Sequence[str], hint: "npt.NDArray[np.integer[Any]]") -> "npt.NDArray[np.int64]":
        """The codes of `values` (strings; -1 for an id not held, none added), where
        `hint[i]` is a code `values[i]` likely has (-1: none): a hint is taken when the
        column holds exactly that id's UTF-8 bytes at that code (one compare in numpy, no
        hash and no probe of the table), the others are looked up as `code_all` does. So
        exactly `code_all(values, add=False)`, whatever the hints. A scan's business keys
        are hinted with their event's key in the world (`scenarios.history_scan`)."""
        import numpy as np

        n = len(values)
        if self._dict is not None or not n:
            return self.code_all(values, add=False)
        data, plain = _encoded(values)
        hint = np.asarray(hint, np.int64)
        ok = (hint >= 0) & (hint < self._n) & plain & (data != b"")  # b"": an odd id's slot, or the empty id
        ok &= self._held.equal(np.where(ok, hint, 0), data)
        out = np.where(ok, hint, -1)
        rest = np.flatnonzero(~ok)
        if rest.size:
            out[rest] = self.code_all(list(map(values.__getitem__, rest.tolist())), add=False)
        return out

    def _find(self, hashes: "npt.NDArray[np.int64]", data: "npt.NDArray[np.bytes_]") -> "npt.NDArray[np.int64]":
        """The code of each id held in the table (its hash `hashes`, its bytes `data`), -1
        for one not held: every id probes at once, a round per step of the longest probe
        (without a table, `drop_table_if_sorted`, the column is bisected instead)."""
        import numpy as np

        if not len(self._slots):
            return self._bisected(data)
        out = np.full(len(hashes), -1, np.int64)
        table, hash_of, held = self._slots, self._hash_of, self._held  # hash_of None: the bytes alone
        mask = len(table) - 1
        todo = np.arange(len(hashes))
        slot, step = hashes & mask, _steps(hashes, mask)
        while todo.size:
            code = table[slot]
            filled = np.flatnonzero(code >= 0)
            if not filled.size:
                break
            todo, slot, step, code = todo[filled], slot[filled], step[filled], code[filled]
            if hash_of is not None:  # the bytes compared where the hashes match alone
                hit = hash_of[code] == hashes[todo]
                maybe = np.flatnonzero(hit)
                hit[maybe] = held.equal(code[maybe], data[todo[maybe]])
            else:
                hit = held.equal(code, data[todo])
            out[todo[hit]] = code[hit]
            miss = ~hit
            todo, step = todo[miss], step[miss]
            slot = (slot[miss] + step) & mask
        return out

    def _append(self, hashes: "npt.NDArray[np.int64]", data: "npt.NDArray[np.bytes_]", plain: "npt.NDArray[np.bool_]",
                odd: list[str]) -> None:
        """Hold new ids, the next codes in order (their hashes, bytes, whether the column
        holds them exactly; `odd` the ids of those it does not, in order). Without a table
        (`drop_table_if_sorted`) one is made again for every id held."""
        import numpy as np

        new = np.arange(self._n, self._n + len(hashes), dtype=np.int64)
        end = self._n + len(new)
        # held without a table (`hold_sorted`, `drop_table_if_sorted`) and still in order: no table, no hashes
        in_order = not len(self._slots) and not self._odd_names and bool(plain.all()) and self._after_held(data)
        hash_of = self._hashes() if not in_order else None
        self._held.append(data if plain.all() else np.where(plain, data, b""), max(end, self._room))
        if hash_of is None:  # in order: found by bisecting the column, as before
            self._n = end
            return
        if end > len(hash_of):
            hash_of = self._hash_of = grow(hash_of[:self._n], max(end, 2 * len(hash_of), self._room))
        hash_of[self._n:end] = hashes
        self._n = end
        for name, code in zip(odd, new[~plain].tolist()):
            self._odd[name] = code
            self._odd_names[code] = name
        held = end - len(self._odd_names)
        if _FILL_DEN * held > _FILL_NUM * len(self._slots):  # grown: every held id placed anew
            room = max(held, self._room - len(self._odd_names))
            self._slots = np.full(_slots_for(room), -1, np.int32)
            every = np.arange(end, dtype=np.int64)
            if self._odd_names:
                every = every[np.isin(every, np.fromiter(self._odd_names, np.int64, len(self._odd_names)),
                                      invert=True)]
            self._place(every)
        else:
            self._place(new[plain])

    def _place(self, codes: "npt.NDArray[np.int64]") -> None:
        """Put `codes` (held ids, none in the table yet) in the table's empty slots, each at
        the first empty one of its probe (`_steps`; of several new codes meeting at one
        empty slot one takes it, read back from the table, the others probe on)."""
        import numpy as np

        table = self._slots
        mask = len(table) - 1
        hashes = self._hashes()[codes]
        slot, step = hashes & mask, _steps(hashes, mask)
        while codes.size:
            free = table[slot] < 0
            table[slot[free]] = codes[free]
            left = np.flatnonzero(~(free & (table[slot] == codes)))  # the codes not placed: found once, taken thrice
            codes, step = codes[left], step[left]
            slot = slot[left]
            slot += step
            slot &= mask

    def _spill(self) -> None:
        """Move the dict's ids into the columns (once they outgrow `SMALL`)."""
        names, self._dict, self._list, self._n = self._list, None, [], 0
        import numpy as np

        hashes = np.fromiter(map(hash, names), np.int64, len(names))
        data, plain = _encoded(names)
        self._append(hashes, data, plain, [name for name, ok in zip(names, plain.tolist()) if not ok])

    def trim(self) -> None:
        """Give up the columns' spare room (once no id is to be added; adding still works),
        and the table's: one sized for a `reserve` hint above the ids held (a world's keys
        and objects, sized by its events) is made anew for those held, every id placed
        again (the same codes, found as before)."""
        if self._dict is None:
            self._held.trim()  # in place: the columns are not held twice
            if self._hash_of is not None and len(self._hash_of) > self._n:
                shrink(self, "_hash_of", self._n)
        self._room = 0
        if self._dict is None:
            held = self._n - len(self._odd_names)
            if _slots_for(held) < len(self._slots):
                import numpy as np

                self._slots = np.full(_slots_for(held), -1, np.int32)
                every = np.arange(self._n, dtype=np.int64)
                if self._odd_names:
                    every = every[np.isin(every, np.fromiter(self._odd_names, np.int64, len(self._odd_names)),
                                          invert=True)]
                self._place(every)

    def hold_sorted(self) -> None:
        """Hold the ids without a table, and without their hashes, for as long as they come
        in ascending order of their bytes, each new id above every one held (a storm's spool
        hands its events out by id): they are found by bisecting the column, as after
        `drop_table_if_sorted` (4 bytes a slot, one and a half to three slots an id, and 8
        bytes a hash, never made). The first id out of that order (or one the column cannot
        hold) makes the table and the hashes of every id held, and coding goes on as without
        this call: the same codes either way."""
        import numpy as np

        self._slots = np.full(0, -1, np.int32)
        self._hash_of = None

    def _after_held(self, data: "npt.NDArray[np.bytes_]") -> bool:
        """Whether the ids whose bytes are `data` are in strictly ascending order, the first
        above every id held (the column's last)."""
        if not len(data):
            return True
        if len(data) > 1 and not bool((data[1:] > data[:-1]).all()):
            return False
        return not self._n or bool(data[0] > self._held.one(self._n - 1))

    def drop_table_if_sorted(self) -> bool:
        """Give up the table (4 bytes a slot, one and a half to three slots an id) when the
        ids are held in ascending order of their bytes, code after code (a storm's spool
        hands its events out by id: the world's event ids): a lookup then bisects the column
        of ids (`_bisected`), whose order is the bytes' (numpy's order of fixed-width bytes,
        SQLite's of its ``BINARY`` text, for ids without a NUL). The order is checked, not
        assumed: ids out of order, an id the column cannot hold, or ids still a dict keep
        the table (False). Adding an id afterwards makes the table again (`_append`)."""
        import numpy as np

        if self._dict is not None or self._odd_names:
            return False
        if not len(self._slots):
            return True
        if not self._held.ascending():
            return False
        self._slots = np.full(0, -1, np.int32)
        return True

    def _bisected(self, data: "npt.NDArray[np.bytes_]") -> "npt.NDArray[np.int64]":
        """The code of each of the ids whose bytes are `data`, -1 for one not held, found
        by bisecting the column of ids (held in ascending order: `drop_table_if_sorted`).
        An id longer than the column's width is not held; the others are compared at its
        width (no copy of the column)."""
        import numpy as np

        held = self._held
        out = np.full(len(data), -1, np.int64)
        if not held.n or not len(data):
            return out
        width = held.width  # ids of one length (0: of several)
        at = np.flatnonzero(np.char.str_len(data) <= width) if width and data.dtype.itemsize > width else None
        asked = data if at is None else data[at]
        i = held.search(asked)
        np.minimum(i, held.n - 1, out=i)
        found = np.where(held.equal(i, asked), i, -1)
        if at is None:
            return found.astype(np.int64, copy=False)
        out[at] = found
        return out

    def drop_hashes(self) -> None:
        """Give up the column of the ids' hashes (8 bytes an id) once no id is to be added
        (after `trim`): a lookup then matches an id by its bytes alone, which is what a match
        always was (the hash spared comparing the bytes of ids it tells apart; an id held
        in the column is never one of another's bytes, and the ids the column cannot hold
        are not in the table). Adding or trimming ids afterwards makes
        the column again from the ids first. Nothing to drop while the ids are a dict."""
        if self._dict is None:
            self._hash_of = None

    def _hashes(self) -> "npt.NDArray[np.int64]":
        """The column of the ids' hashes by code, made again from the
        ids, a step at a time, when `drop_hashes` dropped it."""
        if self._hash_of is None:
            import numpy as np

            hashes = np.zeros(self._n, np.int64)
            for start in range(0, self._n, _STEP):
                stop = min(self._n, start + _STEP)
                hashes[start:stop] = np.fromiter(map(hash, self.names_of(start, stop)), np.int64, stop - start)
            self._hash_of = hashes
        return self._hash_of

    # ---- reading ---------------------------------------------------------------------

    def get(self, name: object, default: Any = None) -> Any:
        if self._dict is not None:
            return self._dict.get(name, default)  # type: ignore[call-overload]
        if not isinstance(name, str):
            return default
        odd = self._odd.get(name) if self._odd else None
        if odd is not None:
            return odd
        if not len(self._slots):  # no table: the column is bisected
            import numpy as np

            try:
                code = int(self._bisected(np.array([name.encode("utf-8")], "S"))[0])
            except UnicodeEncodeError:
                return default
            return code if code >= 0 and not name.endswith("\x00") else default
        h = hash(name)
        table = self._slots
        mask = len(table) - 1
        slot, step = h & mask, ((h >> _STEP_SHIFT) & mask) | 1
        hash_of = self._hash_of  # None once dropped: the id alone decides
        while (code := int(table[slot])) >= 0:
            if (hash_of is None or int(hash_of[code]) == h) and self.name(code) == name:
                return code
            slot = (slot + step) & mask
        return default


    @property
    def columnar(self) -> bool:
        """Whether the ids are held as columns (past `SMALL`), not as a dict."""
        return self._dict is None

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict) if self._dict is not None else iter(self.names)

    def name(self, code: int) -> str:
        """The id of `code` (0 ≤ code < len). Raises IndexError past the end."""
        if not 0 <= code < self._n:
            raise IndexError(f"code {code} out of range ({self._n} ids)")
        if self._dict is not None:
            return self._list[code]
        odd = self._odd_names.get(code) if self._odd_names else None
        return odd if odd is not None else self._held.one(code).decode("utf-8")

    @property
    def names(self) -> "IdNames":
        """The ids by code, a read-only sequence (each decoded when read)."""
        return IdNames(self)

    def names_at(self, codes: "npt.NDArray[np.integer[Any]]") -> list[str]:
        """The ids of `codes` (each 0 ≤ code < len), decoded at once."""
        if self._dict is not None:
            return list(map(self._list.__getitem__, codes.tolist()))
        out = self._held.decoded_at(codes)
        if self._odd_names:
            for i, code in enumerate(codes.tolist()):
                odd = self._odd_names.get(code)
                if odd is not None:
                    out[i] = odd
        return out

    def names_of(self, start: int, stop: int) -> list[str]:
        """The ids of codes `start` … `stop` - 1, decoded at once."""
        if self._dict is not None:
            return self._list[start:stop]
        out = self._held.decoded(start, stop)
        if self._odd_names:
            for code, name in self._odd_names.items():
                if start <= code < stop:
                    out[code - start] = name
        return out


class HeldBytes:
    """The ids' UTF-8 bytes by code, in one uint8 column (`buf`), in the cheaper of two
    layouts (chosen as ids come, `append`):

    - fixed width (`off` None): code ``c``'s bytes at ``buf[c*width:(c+1)*width]``, padded
      with NULs: a numpy ``S`` column, read with no copy (`column`); what ids of about one
      length cost least as (a storm's event ids);
    - back to back: each id at its own length, its end in `off` (int32; int64 past 2 GiB
      of ids): the id's length plus 4 bytes, what ids of spread lengths cost least as (a
      storm's business keys and objects: some 49 bytes on average, up to 80).

    Held at fixed width while that costs at most `_SPREAD` times as much as back to back;
    once it costs more the ids move to back to back, and stay so. Either way they read as
    numpy ``S`` columns (`column`, `at`: compared and ordered as numpy compares fixed-width
    bytes), those held back to back copied out a step at a time. An id is held as given in
    an ``S`` column (`append`): one ending in NUL is not held exactly (an ``S`` column drops
    trailing NULs), as before. Not thread-safe."""

    __slots__ = ("buf", "off", "width", "n", "nbytes", "total")

    #: Fixed width is kept while it costs at most this many times the bytes back to back.
    _SPREAD = 1.125

    def __init__(self) -> None:
        import numpy as np

        self.buf: npt.NDArray[np.uint8] = np.zeros(0, np.uint8)
        # per code its bytes' end, off[0] = 0 (None: held at fixed width)
        self.off: npt.NDArray[np.int32] | npt.NDArray[np.int64] | None = None
        self.width = 0  # at fixed width: the width (0 before the first id)
        self.n = 0
        self.nbytes = 0  # the bytes of `buf` in use
        self.total = 0  # the ids' bytes, without padding

    @property
    def capacity(self) -> int:
        """How many ids the columns have room for (at fixed width, ``len(buf) // width``;
        back to back, the ends')."""
        if self.off is not None:
            return len(self.off) - 1
        return len(self.buf) // self.width if self.width else 0

    def append(self, data: "npt.NDArray[np.bytes_]", room: int = 0) -> None:
        """Hold `data`'s ids (an ``S`` column) as the next codes. `room`: how many ids in all
        to size the columns for when they grow (a hint, as `IdCodes.reserve`'s)."""
        import numpy as np

        k = len(data)
        if not k:
            return
        data = np.ascontiguousarray(data)
        w = data.dtype.itemsize
        lens = np.char.str_len(data) if w else np.zeros(k, np.int64)
        end = self.n + k
        self.total += int(lens.sum())
        if self.off is None:
            width = max(self.width, int(lens.max()), 1)
            if end * width <= self._SPREAD * (self.total + 4 * end):
                self._append_fixed(data, width, max(end, room))
                return
            self._to_ends(room)
        flat = data.view(np.uint8).reshape(k, w)[np.arange(w) < lens[:, None]] if w else np.zeros(0, np.uint8)
        nbytes = self.nbytes + len(flat)
        if nbytes > len(self.buf):
            size = max(nbytes, 2 * len(self.buf))
            if room > end:  # room for `room` ids of the lengths seen so far
                size = max(size, -(-nbytes * room // end))
            self.buf = grow(self.buf[:self.nbytes], size)
        self.buf[self.nbytes:nbytes] = flat
        assert self.off is not None
        if nbytes > np.iinfo(self.off.dtype).max:
            self.off = self.off.astype(np.int64)
        if end + 1 > len(self.off):
            self.off = grow(self.off[:self.n + 1], max(end + 1, 2 * len(self.off) - 1, room + 1))
        np.cumsum(lens, out=self.off[self.n + 1:end + 1], dtype=self.off.dtype)
        self.off[self.n + 1:end + 1] += self.nbytes
        self.n, self.nbytes = end, nbytes

    def _append_fixed(self, data: "npt.NDArray[np.bytes_]", width: int, room: int) -> None:
        """Hold `data` at fixed width `width` (≥ the width held: the ids held widened first),
        with room for `room` ids when the column grows."""
        import numpy as np

        end = self.n + len(data)
        if width > self.width and self.n:  # widened: a new column (as a wider ``S`` column was)
            size = max(end, 2 * self.n, room) if end > self.capacity else self.capacity
            wider = np.zeros(size * width, np.uint8)
            wider[:self.n * width].view(f"S{width}")[:] = self.column()
            self.buf = wider
        elif end * width > len(self.buf):
            self.buf = grow(self.buf[:self.nbytes], max(end, 2 * self.capacity, room) * width)
        self.width = width
        self.buf[self.n * width:end * width].view(f"S{width}")[:] = data
        self.n, self.nbytes = end, end * width

    def _to_ends(self, room: int) -> None:
        """Move the ids held at fixed width back to back, their ends in `off`."""
        import numpy as np

        n, width = self.n, self.width
        room = max(room, n) + 1
        dtype = np.int32 if self.total + 2**20 < np.iinfo(np.int32).max else np.int64
        off: Any = np.zeros(room, dtype)  # int32 or int64
        buf = np.zeros(max(self.total, 1), np.uint8)
        at = 0
        for start in range(0, n, _STEP):  # a step at a time: no mask over every id at once
            held = self.column(start, min(n, start + _STEP))
            lens = np.char.str_len(held)
            flat = held.view(np.uint8).reshape(len(held), width)[np.arange(width) < lens[:, None]]
            buf[at:at + len(flat)] = flat
            np.cumsum(lens, out=off[start + 1:start + 1 + len(held)], dtype=dtype)
            off[start + 1:start + 1 + len(held)] += at
            at += len(flat)
        self.buf, self.off, self.width, self.nbytes = buf, off, 0, at

    def trim(self) -> None:
        """Give up the columns' spare room (in place where no view of them is alive)."""
        shrink(self, "buf", self.nbytes)
        if self.off is not None:
            shrink(self, "off", self.n + 1)

    def column(self, start: int = 0, stop: int | None = None) -> "npt.NDArray[np.bytes_]":
        """The ids of codes `start` … `stop` - 1 (default: to the last) as an ``S`` column: a
        view of `buf` at fixed width, else a copy as wide as the longest of them."""
        import numpy as np

        stop = self.n if stop is None else stop
        if self.off is None:
            if not self.width:
                return np.zeros(0, "S1")
            return self.buf[start * self.width:stop * self.width].view(f"S{self.width}")
        return self.at(np.arange(start, max(start, stop), dtype=np.int64))

    def at(self, codes: "npt.NDArray[np.integer[Any]]") -> "npt.NDArray[np.bytes_]":
        """The ids of `codes` (each 0 ≤ code < n) as an ``S`` column (a copy; back to back,
        as wide as the longest of them, copied out `_STEP` at a time)."""
        import numpy as np

        if self.off is None:
            return self.column()[codes]
        codes = np.asarray(codes, np.int64)
        starts = self.off[codes].astype(np.int64)
        lens = self.off[codes + 1] - starts
        width = max(1, int(lens.max())) if len(codes) else 1
        out = np.zeros(len(codes), f"S{width}")
        for i in range(0, len(codes), _STEP):
            out[i:i + _STEP] = self._copied(starts[i:i + _STEP], lens[i:i + _STEP])
        return out

    def _copied(self, starts: "npt.NDArray[np.int64]", lens: "npt.NDArray[np.integer[Any]]") -> "npt.NDArray[np.bytes_]":
        """The ids whose bytes are ``buf[starts[i]:starts[i] + lens[i]]``, an ``S`` column as
        wide as the longest: a row of that width per id, taken from a view of `buf` as
        overlapping rows (one starting at each byte; no index per byte), its tail zeroed."""
        import numpy as np
        from numpy.lib.stride_tricks import as_strided

        k = len(starts)
        width = max(1, int(lens.max())) if k else 1
        buf = self.buf
        if not k or len(buf) < width:
            out = np.zeros(k, f"S{width}")
            for i, (a, n) in enumerate(zip(starts.tolist(), lens.tolist())):
                out[i] = buf[a:a + n].tobytes()
            return out
        last = len(buf) - width  # the last row the view holds whole
        rows = as_strided(buf, shape=(last + 1, width), strides=(1, 1), writeable=False)[np.minimum(starts, last)]
        late = np.flatnonzero(starts > last)  # ids in the last `width` bytes: their row read from its end
        for i in late.tolist():
            a = int(starts[i])
            rows[i, :len(buf) - a] = buf[a:]
        rows[np.arange(width) >= lens[:, None]] = 0
        return rows.view(f"S{width}").reshape(k)

    def equal(self, codes: "npt.NDArray[np.integer[Any]]", data: "npt.NDArray[np.bytes_]") -> "npt.NDArray[np.bool_]":
        """Per i, whether the id of ``codes[i]`` is ``data[i]`` (as ``S`` columns compare:
        numpy's ``==``); back to back, ids of other lengths are told apart by their lengths,
        not copied out."""
        import numpy as np

        if self.off is None:
            return self.column()[codes] == data
        codes = np.asarray(codes, np.int64)
        starts = self.off[codes].astype(np.int64)
        lens = self.off[codes + 1] - starts
        out = lens == (np.char.str_len(data) if data.dtype.itemsize else 0)
        same = np.flatnonzero(out)
        for i in range(0, same.size, _STEP):  # `_STEP` ids copied out at a time
            step = same[i:i + _STEP]
            out[step] = self._copied(starts[step], lens[step]) == data[step]
        return out

    def one(self, code: int) -> bytes:
        """The bytes of `code`'s id."""
        if self.off is None:
            return bytes(self.column()[code])
        return self.buf[int(self.off[code]):int(self.off[code + 1])].tobytes()

    def decoded(self, start: int, stop: int) -> list[str]:
        """The ids of codes `start` … `stop` - 1, decoded from UTF-8."""
        if start >= stop:
            return []
        if self.off is None:
            return [b.decode("utf-8") for b in self.column(start, stop).tolist()]
        ends = self.off[start:stop + 1].tolist()
        base = ends[0]
        blob = self.buf[base:ends[-1]].tobytes()
        return [blob[a - base:b - base].decode("utf-8") for a, b in zip(ends, ends[1:])]

    def decoded_at(self, codes: "npt.NDArray[np.integer[Any]]") -> list[str]:
        """The ids of `codes`, decoded from UTF-8."""
        if self.off is None:
            return [b.decode("utf-8") for b in self.column()[codes].tolist()]
        return [b.decode("utf-8") for i in range(0, len(codes), _STEP) for b in self.at(codes[i:i + _STEP]).tolist()]

    def search(self, data: "npt.NDArray[np.bytes_]") -> "npt.NDArray[np.int64]":
        """Per id of `data` (an ``S`` column; at fixed width, none wider than `width`), the
        first code whose id is not below it (numpy's ``searchsorted`` over the ids held in
        ascending order: `IdCodes._bisected`); back to back, a bisection of all at once, a
        round per halving."""
        import numpy as np

        if self.off is None:
            held = self.column()
            return np.searchsorted(held, data.astype(held.dtype)).astype(np.int64)
        lo = np.zeros(len(data), np.int64)
        hi = np.full(len(data), self.n, np.int64)
        todo = np.arange(len(data))
        while todo.size:
            mid = (lo[todo] + hi[todo]) >> 1
            below = self.at(mid) < data[todo]
            lo[todo[below]] = mid[below] + 1
            hi[todo[~below]] = mid[~below]
            todo = todo[lo[todo] < hi[todo]]
        return lo

    def ascending(self) -> bool:
        """Whether the ids held are in strictly ascending order of their bytes, code after
        code (back to back, checked a step at a time)."""
        step = self.n if self.off is None else _STEP
        for start in range(0, max(0, self.n - 1), max(step, 1)):
            held = self.column(start, min(self.n, start + step + 1))
            if not bool((held[1:] > held[:-1]).all()):
                return False
        return True


class MappedCodes(_Codes):
    """id → its code (0, 1, … in order of first sight, as `IdCodes` codes them) over
    another table's ids: the ids `base` holds are not held again, only their codes mapped.

    A storm's checks code a million event ids the run's events coded first (the world's
    table, `scenarios.world_columns`); a table of their own would hold every id's bytes
    and hash a second time (some 50 MB). Here an id `base` codes costs two int32 slots:
    per base code this code (-1: not coded here yet), per code its base code; an id
    `base` does not hold (an envelope's own ``msg_…`` id) is held in an `IdCodes` of its
    own (`own`), its code's slot holding -1 - its own code. `base` must not grow while
    this maps over it (it is read, never changed). The same reads as `IdCodes`: `get`,
    `name`, `names`, `names_at`, `names_of`, `code_all`, `codes_in`. Not thread-safe."""

    __slots__ = ("base", "own", "_from_base", "_to_base", "_own_code", "_n", "_n_own")

    def __init__(self, base: IdCodes) -> None:
        import numpy as np

        self.base = base
        self.own = IdCodes()
        # base code → code (-1: none); None once trimmed, made again on the next lookup (`_inverse`)
        self._from_base: npt.NDArray[np.int32] | None = np.full(len(base), -1, np.int32)
        self._to_base: npt.NDArray[np.int32] = np.empty(max(1024, len(base)), np.int32)  # code → base code
        self._own_code: npt.NDArray[np.int32] = np.empty(1024, np.int32)  # own code → code
        self._n = 0
        self._n_own = 0  # own codes given a code here (the own table may hold more: not yet coded)

    @property
    def columnar(self) -> bool:
        """True: the ids are read as columns (`IdCodes.columnar`'s sense)."""
        return True

    def base_codes(self, start: int, stop: int) -> "npt.NDArray[np.int64]":
        """The base code of codes `start` … `stop` - 1, -1 for an id `base` does not hold."""
        import numpy as np

        out = self._to_base[start:stop].astype(np.int64)
        out[out < 0] = -1
        return out

    def code_all(self, values: Sequence[str], *, add: bool = True,
                 hint: "npt.NDArray[np.integer[Any]] | None" = None) -> "npt.NDArray[np.int64]":
        """The codes of `values` (strings), an int64 column; with `add`, ids not seen yet get
        the next codes in order of first appearance (as `IdCodes.code_all`), else -1.
        `hint`: per value, the base code it likely has (-1: none; `IdCodes.codes_hinted`),
        which spares the base's table the values it names; the codes are the same."""
        import numpy as np

        n = len(values)
        listed = values if isinstance(values, list) else list(values)
        wc = self.base.code_all(listed, add=False) if hint is None else self.base.codes_hinted(listed, hint)
        codes = np.full(n, -1, np.int64)
        in_base = np.flatnonzero(wc >= 0)
        from_base = self._inverse()
        codes[in_base] = from_base[wc[in_base]]
        elsewhere = np.flatnonzero(wc < 0)
        ident = wc  # per value: its base code, or len(base) + its own code (for the new ones below)
        if elsewhere.size:
            oc = self.own.code_all(list(map(values.__getitem__, elsewhere.tolist())), add=add)
            mapped = (oc >= 0) & (oc < self._n_own)
            codes[elsewhere[mapped]] = self._own_code[oc[mapped]]
            ident[elsewhere] = oc + len(self.base)
        missing = np.flatnonzero(codes < 0)
        if not add or not missing.size:
            return codes
        seen, first = np.unique(ident[missing], return_index=True)
        order = seen[np.argsort(first, kind="stable")]  # the new ids in order of first appearance
        new = np.arange(self._n, self._n + len(order), dtype=np.int32)
        self._grow(self._n + len(order))
        nb = len(self.base)
        is_base = order < nb
        from_base[order[is_base]] = new[is_base]
        to_base = order.astype(np.int32)  # a copy: own ids' slots set below
        own = np.flatnonzero(~is_base)
        if own.size:
            own_codes = order[own] - nb
            end = int(own_codes.max()) + 1
            if end > len(self._own_code):
                grown = np.empty(max(end, 2 * len(self._own_code)), np.int32)
                grown[:self._n_own] = self._own_code[:self._n_own]
                self._own_code = grown
            self._own_code[own_codes] = new[own]
            self._n_own = max(self._n_own, end)
            to_base[own] = -1 - own_codes
        self._to_base[self._n:self._n + len(order)] = to_base
        self._n += len(order)
        at = ident[missing]
        at_base = at < nb
        codes[missing[at_base]] = from_base[at[at_base]]
        codes[missing[~at_base]] = self._own_code[at[~at_base] - nb]
        return codes

    def _inverse(self) -> "npt.NDArray[np.int32]":
        """Per base code, this code (-1: none): the column kept while coding, made again
        from the codes' base codes after a `trim`."""
        import numpy as np

        if self._from_base is None:
            from_base = np.full(len(self.base), -1, np.int32)
            to_base = self._to_base[:self._n]
            held = np.flatnonzero(to_base >= 0)
            from_base[to_base[held]] = held
            self._from_base = from_base
        return self._from_base

    def _grow(self, n: int) -> None:
        import numpy as np

        if n > len(self._to_base):
            grown = np.empty(max(n, 2 * len(self._to_base)), np.int32)
            grown[:self._n] = self._to_base[:self._n]
            self._to_base = grown

    def trim(self) -> None:
        """Give up the spare room of the column by code, and the column by base code (made
        again on the next lookup by name: a storm's checks look few events up by id), once
        no id is to be added (adding still works)."""
        if len(self._to_base) > self._n:
            shrink(self, "_to_base", self._n)
        self._from_base = None
        self.own.trim()

    def drop_hashes(self) -> None:
        """Give up the hashes of the ids held in `own` (`IdCodes.drop_hashes`); the base's
        are its owner's to drop."""
        self.own.drop_hashes()

    def take_inverse(self) -> "npt.NDArray[np.int32]":
        """Per base code, this code (-1: not coded here), an int32 column the caller owns
        (it may change it): the mapping's own, handed over and made again on its next
        lookup by name, or a new one when it holds none."""
        inverse = self._inverse()
        self._from_base = None
        return inverse

    def get(self, name: object, default: Any = None) -> Any:
        wc = self.base.get(name)
        if wc is not None:
            code = int(self._inverse()[wc])
            return code if code >= 0 else default
        if len(self.own):
            oc = self.own.get(name)
            if oc is not None and oc < self._n_own:
                return int(self._own_code[oc])
        return default


    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def name(self, code: int) -> str:
        """The id of `code` (0 ≤ code < len). Raises IndexError past the end."""
        if not 0 <= code < self._n:
            raise IndexError(f"code {code} out of range ({self._n} ids)")
        wc = int(self._to_base[code])
        return self.base.name(wc) if wc >= 0 else self.own.name(-1 - wc)

    @property
    def names(self) -> "IdNames":
        """The ids by code, a read-only sequence (each decoded when read)."""
        return IdNames(self)

    def names_at(self, codes: "npt.NDArray[np.integer[Any]]") -> list[str]:
        """The ids of `codes` (each 0 ≤ code < len), decoded at once."""
        import numpy as np

        wc = self._to_base[codes]
        if not len(self.own) or bool((wc >= 0).all()):
            return self.base.names_at(wc)
        out = [""] * len(wc)
        in_base = np.flatnonzero(wc >= 0)
        for i, name in zip(in_base.tolist(), self.base.names_at(wc[in_base])):
            out[i] = name
        own = np.flatnonzero(wc < 0)
        for i, name in zip(own.tolist(), self.own.names_at(-1 - wc[own].astype(np.int64))):
            out[i] = name
        return out

    def names_of(self, start: int, stop: int) -> list[str]:
        """The ids of codes `start` … `stop` - 1, decoded at once."""
        import numpy as np

        return self.names_at(np.arange(start, max(start, stop), dtype=np.int64))


class IdNames(Sequence[str]):
    """The ids of an `IdCodes` (or a `MappedCodes`) by code (a view: ids added later are seen)."""

    __slots__ = ("_codes",)

    def __init__(self, codes: "IdCodes | MappedCodes") -> None:
        self._codes = codes

    @property
    def codes(self) -> "IdCodes | MappedCodes":
        """The `IdCodes` these are the ids of (id → code)."""
        return self._codes

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
        n = len(codes)  # a step of names decoded at a time, each step's list walked at C level
        return chain.from_iterable(codes.names_of(start, min(n, start + _STEP)) for start in range(0, n, _STEP))


def codes_in(codes: Mapping[str, int], names: Sequence[Any]) -> "npt.NDArray[np.int64]":
    """The code of each of `names` in `codes`, -1 for a name not there, an int64 column:
    an `IdCodes` past `IdCodes.SMALL` looks them up `_STEP` at a time (`IdCodes.code_all`,
    no Python step per name), any other mapping (or one still a dict) one by one."""
    import numpy as np

    if isinstance(codes, MappedCodes):
        parts = [codes.code_all(list(names[i:i + _STEP]), add=False) for i in range(0, len(names), _STEP)]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if isinstance(codes, IdCodes):
        if codes._dict is not None:  # a dict while small: a lookup each, in one go
            return codes.code_all(names if isinstance(names, list) else list(names), add=False)
        parts = [codes.code_all(names[i:i + _STEP], add=False) for i in range(0, len(names), _STEP)]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return np.fromiter(map(codes.get, names, repeat(-1)), np.int64, len(names))


def _fresh(codes: "npt.NDArray[np.int64]", missing: "npt.NDArray[np.int64]", hashes: "npt.NDArray[np.int64]",
           data: "npt.NDArray[np.bytes_]", plain: "npt.NDArray[np.bool_]", first: int) -> "npt.NDArray[np.int64] | None":
    """Code the ids at `missing` (ascending indexes of ids not held: `hashes`, `data`,
    `plain` as `IdCodes.code_all` read them) into `codes` from `first` on, new ids in order
    of first appearance, told apart in numpy by their hashes; returns the index of each new
    id's first appearance, in code order. Ids of distinct hashes are distinct; ids sharing
    a hash are one id when their bytes are equal and the column holds both exactly
    (`plain`). None, `codes` untouched, when two ids share a hash but that does not hold
    (a collision, or an id the column does not hold): the caller tells them apart by value."""
    import numpy as np

    h = hashes[missing]
    if missing.size < 2 or bool((np.diff(np.sort(h)) != 0).all()):  # each missing id once (a world's ids)
        codes[missing] = np.arange(first, first + missing.size)
        return missing
    _, head, group = np.unique(h, return_index=True, return_inverse=True)  # head: a hash's first index
    group = group.reshape(-1)
    rep = head[group]  # per missing id: the first one of its hash
    if not bool(plain[missing].all()) or not bool((data[missing] == data[missing[rep]]).all()):
        return None
    by_first = np.argsort(head, kind="stable")
    rank = np.empty(len(head), np.int64)
    rank[by_first] = np.arange(first, first + len(head))
    codes[missing] = rank[group]
    return missing[head[by_first]]


def starts_with(codes: Mapping[str, int], prefixes: tuple[str, ...]) -> "npt.NDArray[np.bool_]":
    """Per code of `codes` (a mapping iterating in code order), whether its id starts with
    one of `prefixes` (`str.startswith`'s answer), a bool column: compared on the ids'
    UTF-8 bytes in numpy for an `IdCodes` held as columns or a `MappedCodes` (no id decoded,
    but those the column does not hold), each id read and compared otherwise (a dict, an
    `IdCodes` still a dict, or a prefix containing NUL or not UTF-8, which the bytes could
    not answer for)."""
    import numpy as np

    n = len(codes)
    try:
        heads = [p.encode("utf-8") for p in prefixes]
    except UnicodeEncodeError:
        heads = [b"\x00"]
    if isinstance(codes, MappedCodes) and not any(b"\x00" in h for h in heads):
        to_base = codes._to_base[:n]
        out = np.zeros(n, np.bool_)
        in_base = np.flatnonzero(to_base >= 0)
        if in_base.size:
            out[in_base] = starts_with(codes.base, prefixes)[to_base[in_base]]
        own = np.flatnonzero(to_base < 0)
        if own.size:
            out[own] = starts_with(codes.own, prefixes)[-1 - to_base[own].astype(np.int64)]
        return out
    if isinstance(codes, IdCodes) and codes.columnar and not any(b"\x00" in h for h in heads):
        out = np.zeros(n, np.bool_)
        step = n if codes._held.off is None else _STEP  # UTF-8 bytes: a string starts with a prefix when its bytes start with the prefix's
        for start in range(0, n, max(step, 1)):
            held = codes._held.column(start, min(n, start + step))
            for head in heads:
                out[start:start + len(held)] |= np.char.startswith(held, head)
        for code, name in codes._odd_names.items():  # b"" in the column: compared as strings
            out[code] = name.startswith(prefixes)
        return out
    return np.fromiter((name.startswith(prefixes) for name in codes), np.bool_, n)


def shrink(holder: object, name: str, n: int) -> None:
    """Keep the first `n` values of the 1-D column ``holder.<name>`` and give its spare room
    back: the column shrunk in place (``ndarray.resize``, the allocator's realloc: no second
    column held beside it, as a slice's copy would be) when nothing but `holder` refers to it
    (numpy checks: no view of it, no other reference); else replaced by a copy of them."""
    column = getattr(holder, name)
    setattr(holder, name, None)  # `holder`'s reference dropped: the resize's check sees this one alone
    try:
        if column.base is None and column.flags.owndata and column.flags.c_contiguous:
            try:
                column.resize(n)
            except ValueError:  # referred to elsewhere (a view, another name): copied
                column = column[:n].copy()
        else:
            column = column[:n].copy()
    finally:
        setattr(holder, name, column)


def grow(column: "npt.NDArray[Any]", n: int) -> "npt.NDArray[Any]":
    """A copy of the 1-D `column` with room for `n` values (n ≥ its length), the rest zero:
    a new column from ``np.zeros`` (pages the allocator maps zeroed and the process takes
    only when written, so room reserved for ids still to come is not resident; a realloc,
    ``ndarray.resize``, writes zeros over all of it)."""
    import numpy as np

    grown = np.zeros(n, column.dtype)
    grown[:len(column)] = column
    return grown


def _slots_for(n: int) -> int:
    """The table's slots for `n` ids: the fewest, a power of two (at least `_MIN_SLOTS`),
    that `n` fill at most `_FILL_NUM` / `_FILL_DEN` of."""
    slots = _MIN_SLOTS
    while _FILL_DEN * n > _FILL_NUM * slots:
        slots *= 2
    return slots


def _steps(hashes: "npt.NDArray[np.int64]", mask: int) -> "npt.NDArray[np.int64]":
    """Each hash's probe step in a table of `mask` + 1 slots (a power of two): odd, so a
    probe visits every slot; from the hash's high bits, so ids meeting at one slot part
    at the next (double hashing: no long runs of full slots)."""
    return ((hashes >> _STEP_SHIFT) & mask) | 1


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


__all__: Sequence[str] = ["HeldBytes", "IdCodes", "IdNames", "MappedCodes", "codes_in", "grow", "shrink", "starts_with"]
