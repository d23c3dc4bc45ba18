"""Distinct ids coded 0, 1, … in order of first sight, without a Python string per id.

A storm's checks code a million event ids. A ``dict`` of them costs a string (some 80
bytes) and an entry (some 40) per id. `IdCodes` holds each id as its UTF-8 bytes in one
fixed-width numpy column (by code) and finds it by its ``hash()`` (an int64 column by code,
and an open-addressing table of codes indexed by the hash's low bits, probed in steps
from its high bits, at most two thirds full): about the id's length plus 14 to 20 bytes;
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

    __slots__ = ("_data", "_n", "_hash_of", "_slots", "_odd", "_odd_names", "_dict", "_list", "_small", "_room")

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
        # by code, as `_data`; None once dropped (`drop_hashes`: made again by `_hashes` when needed)
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
        held = self._data[np.where(ok, hint, 0)]
        ok &= held == data
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
        table, hash_of, held = self._slots, self._hash_of, self._data  # hash_of None: the bytes alone
        mask = len(table) - 1
        todo = np.arange(len(hashes))
        slot, step = hashes & mask, _steps(hashes, mask)
        while todo.size:
            code = table[slot]
            filled = np.flatnonzero(code >= 0)
            if not filled.size:
                break
            todo, slot, step, code = todo[filled], slot[filled], step[filled], code[filled]
            hit = held[code] == data[todo]
            if hash_of is not None:
                hit &= hash_of[code] == hashes[todo]
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
        if end > len(self._data) or data.dtype.itemsize > self._data.dtype.itemsize:
            width = max(data.dtype.itemsize, self._data.dtype.itemsize)
            size = max(end, 2 * len(self._data)) if end > len(self._data) else len(self._data)
            size = max(size, self._room)
            grown = np.zeros(size, f"S{width}")
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        if hash_of is None:  # in order: found by bisecting the column, as before
            self._data[self._n:end] = data
            self._n = end
            return
        if end > len(hash_of):
            grown_hashes = np.zeros(len(self._data), np.int64)
            grown_hashes[:self._n] = hash_of[:self._n]
            hash_of = self._hash_of = grown_hashes
        self._data[self._n:end] = data if plain.all() else np.where(plain, data, b"")
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
        if self._dict is None and len(self._data) > self._n:
            shrink(self, "_data", self._n)  # in place: the column is not held twice
            if self._hash_of is not None:
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
        return not self._n or bool(data[0] > self._data[self._n - 1])

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
        held = self._data[:self._n]
        if self._n > 1 and not bool((held[1:] > held[:-1]).all()):
            return False
        self._slots = np.full(0, -1, np.int32)
        return True

    def _bisected(self, data: "npt.NDArray[np.bytes_]") -> "npt.NDArray[np.int64]":
        """The code of each of the ids whose bytes are `data`, -1 for one not held, found
        by bisecting the column of ids (held in ascending order: `drop_table_if_sorted`).
        An id longer than the column's width is not held; the others are compared at its
        width (no copy of the column)."""
        import numpy as np

        held = self._data[:self._n]
        out = np.full(len(data), -1, np.int64)
        if not len(held) or not len(data):
            return out
        width = held.dtype.itemsize
        at = np.flatnonzero(np.char.str_len(data) <= width) if data.dtype.itemsize > width else None
        asked = (data if at is None else data[at]).astype(held.dtype)
        i = np.searchsorted(held, asked)
        np.minimum(i, len(held) - 1, out=i)
        found = np.where(held[i] == asked, i, -1)
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
        """The column of the ids' hashes by code (as long as `_data`), made again from the
        ids, a step at a time, when `drop_hashes` dropped it."""
        if self._hash_of is None:
            import numpy as np

            hashes = np.zeros(len(self._data), np.int64)
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
        return odd if odd is not None else bytes(self._data[code]).decode("utf-8")

    @property
    def names(self) -> "IdNames":
        """The ids by code, a read-only sequence (each decoded when read)."""
        return IdNames(self)

    def names_at(self, codes: "npt.NDArray[np.integer[Any]]") -> list[str]:
        """The ids of `codes` (each 0 ≤ code < len), decoded at once."""
        if self._dict is not None:
            return list(map(self._list.__getitem__, codes.tolist()))
        out = [b.decode("utf-8") for b in self._data[codes].tolist()]
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
        out = [b.decode("utf-8") for b in self._data[start:stop].tolist()]
        if self._odd_names:
            for code, name in self._odd_names.items():
                if start <= code < stop:
                    out[code - start] = name
        return out


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
        held = codes._data[:n]  # UTF-8 bytes: a string starts with a prefix when its bytes start with the prefix's
        out = np.zeros(n, np.bool_)
        for head in heads:
            out |= np.char.startswith(held, head)
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


__all__: Sequence[str] = ["IdCodes", "IdNames", "MappedCodes", "codes_in", "shrink", "starts_with"]
