"""The checks' pass coding a history's business keys through the world's codes.

`scenarios.history_scan.scan_history`, given the run's events, codes each chunk's
business keys in order of first attempt. When every key of a chunk is one the world
names, `WorldJoin` codes the chunk through the world's own codes
(`scenarios.world_columns.WorldColumns`): each run of equal keys looked up once in the
world's table, the scan's code read from an int32 column by world code, and a new key's
hash and bytes copied into the scan's table (`scenarios.id_codes.IdCodes.add_from`), never
hashed, encoded or probed for a second time.
A chunk holding a key the world does not name (a forged key) is coded by the scan as
before, and the column told (`coded_keys`), so the codes and their order are the same
either way. (The event ids are not copied: the pass maps its codes over the world's
table, `scenarios.id_codes.MappedCodes`.)
"""

from __future__ import annotations

from itertools import repeat
from operator import is_not
from typing import TYPE_CHECKING, Any, Sequence

from hookproof.scenarios.groups import NO_GROUP
from hookproof.scenarios.id_codes import IdCodes, codes_in
from hookproof.scenarios.world_columns import WorldColumns

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: None alone (whether a chunk's keys hold it: `isdisjoint` hashes each once, at C level).
_NONE = frozenset([None])


class WorldJoin:
    """The scan's codes of business keys found through the world's codes
    (`WorldColumns`), a chunk of the history at a time: each run of equal keys looked up
    once in the world's table, and a new one's scan code given from a column by world
    code (numbered in order of first attempt, as `IdCodes.code_all` numbers them), its
    hash and bytes copied (`IdCodes.add_from`): no second table probed, no second hash
    per attempt. A chunk holding a key the world does not name is coded as before
    (`keys` returns None), the column kept up to date (`coded_keys`).

    Per world key an int32 slot (the scan code, -1: none yet), made on first use and
    dropped with the scan."""

    __slots__ = ("world", "_keys")

    def __init__(self, world: WorldColumns) -> None:
        self.world = world
        self._keys: npt.NDArray[np.int32] | None = None

    def keys(self, keys: Sequence[Any], heads: "npt.NDArray[np.int64] | None",
             key_codes: IdCodes) -> "npt.NDArray[np.int64] | None":
        """The scan codes of `keys` (`NO_GROUP` for None; new ones added to `key_codes`,
        their hashes and bytes copied from the world's, `IdCodes.add_from`), or None when
        one of them is not a world key (nothing is changed then). `heads`: where each run
        of equal keys starts (None: each key its own run)."""
        import numpy as np

        world = self.world
        head_keys = keys if heads is None else list(map(keys.__getitem__, heads.tolist()))
        world_codes = _world_keys(world.keys.codes, head_keys)
        if world_codes is None:
            return None
        if self._keys is None:
            self._keys = np.full(len(world.keys.names), -1, np.int32)
            self.coded_keys(key_codes, 0)
        column = self._keys
        keyed = world_codes >= 0
        coded = np.full(len(head_keys), NO_GROUP, np.int64)
        coded[keyed] = column[world_codes[keyed]]
        fresh = np.flatnonzero(keyed & (coded < 0))
        if fresh.size:
            order = in_order(world_codes[fresh])
            n_before = len(key_codes)
            column[order] = np.arange(n_before, n_before + len(order), dtype=np.int32)
            key_codes.add_from(world.keys.codes, order)
            coded[fresh] = column[world_codes[fresh]]
        return coded if heads is None else np.repeat(coded, np.diff(heads, append=len(keys)))

    @property
    def key_column(self) -> "npt.NDArray[np.int32] | None":
        """Per world key code, the scan's code of that key (-1: none), when a chunk was
        coded here (kept up to date since), else None."""
        return self._keys

    def coded_keys(self, key_codes: IdCodes, first: int) -> None:
        """Note the keys `key_codes` coded elsewhere as `first`, `first` + 1, … (those the
        world names), looked up in the world's codes together (`codes_in`)."""
        import numpy as np

        if self._keys is not None and len(key_codes) > first:
            world_codes = codes_in(self.world.keys.codes, key_codes.names_of(first, len(key_codes)))
            known = np.flatnonzero(world_codes >= 0)
            self._keys[world_codes[known]] = known + first


def _world_keys(codes: IdCodes, keys: Sequence[Any]) -> "npt.NDArray[np.int64] | None":
    """The world code of each of `keys` in `codes` (-1 for None), looked up together
    (`codes_in`); None when there are none or one of them is not there."""
    import numpy as np

    if _NONE.isdisjoint(keys):
        found = codes_in(codes, keys)
        return found if found.size and int(found.min()) >= 0 else None
    at = np.flatnonzero(np.fromiter(map(is_not, keys, repeat(None)), np.bool_, len(keys)))
    found = codes_in(codes, list(map(keys.__getitem__, at.tolist())))
    if found.size and int(found.min()) < 0:
        return None
    out = np.full(len(keys), -1, np.int64)
    out[at] = found
    return out


def in_order(values: "npt.NDArray[np.int64]") -> "npt.NDArray[np.int64]":
    """The distinct `values`, in order of first appearance."""
    import numpy as np

    distinct, first = np.unique(values, return_index=True)
    return distinct[np.argsort(first, kind="stable")]


__all__: Sequence[str] = ["WorldJoin", "in_order"]
