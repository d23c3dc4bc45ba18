"""The checks' index by business key code: what was observed, expected and attempted of
each key, as numpy columns.

The per-key checks (``duplicated``, ``lost``, ``unexpected``, ``recovered``,
``counter``) each ask one question of every key: was it applied more than once, not
at all, without being owed, after failing only, for the wrong amount. A storm has a
million keys, and a Python step per key (a dict lookup, a mapping view building an
`ExpectedEffect`) was most of their time. `KeyTable` codes every key once (the index's
`by_key` codes, then keys only the observations or the expectations name) and holds
per code the counts each observation showed, whether the key is expected or forbidden,
its amount and its attempts' completions; a check answers its question for every code
at once with numpy and builds strings and a `Finding` only for the keys that fail.

`CheckIndex.keys` builds the table on first use. The expectations' columns
(`scenarios.expectation_views.KeyColumns`) are read as columns when they share the
index's codes; hand-built expectations (dicts) are read key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Iterator, Sequence, overload

from hookproof.scenarios.expectation_views import ExpectedView
from hookproof.scenarios.groups import Groups
from hookproof.scenarios.id_codes import IdCodes, MappedCodes, codes_in
from hookproof.scenarios.observations import EffectRows, Expectations, Observation
from hookproof.scenarios.world_columns import ExtendedCodes
from hookproof.simulator.delivery.history import Completion

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Below this many keys, effect rows, states or events, a check walks them one by one
#: (`scenarios.key_loops`): numpy's fixed cost (a few microseconds a call) is more than
#: a Python step each there, and explore and certify check runs of a few dozen keys.
SMALL = 256
_KEY = attrgetter("business_key")
_AMOUNT = attrgetter("amount")
#: Codes, counts, observation indexes and row indexes of a key table are below this (int32).
_INT32_END = 2**31
#: Completion codes: 0 ok, 1 fail, 2 unknown, 3 an invalid attempt (no completion counted).
COMPLETION_CODES: dict[Completion | None, int] = {Completion.OK: 0, Completion.FAIL: 1, Completion.UNKNOWN: 2,
                                                  None: 3}


@dataclass(eq=False)
class KeyTable:
    """Per key code, what the checks compare. Codes below `n_grouped` are `by_key`'s
    (`codes`); the rest (`extra`) are keys only an observation or the expectations name.

    Attributes:
        by_key: the index's positions by key (`scenarios.groups.Groups`).
        codes / n_grouped: `by_key`'s codes and how many.
        extra: other keys → their codes (`n_grouped`, `n_grouped` + 1, …).
        peak: per code, the highest count of effect rows in any observation (0: never seen).
        peak_obs: per code, the first observation showing `peak` (-1: never seen).
        first_seen: per code, the row (counted over every observation's effects, in
            order) where the key first appears (-1: never seen); the order of `peak`.
        settled: per code, effect rows in the last observation.
        settled_codes: per effect row of the last observation, its key's code.
        observed_codes: per observation (of those the table was built from, else none),
            per effect row, its key's code; the last is `settled_codes`.
        expected / forbidden: per code, whether the expectations owe the key or forbid it.
        expected_order: codes of the expected keys, in `Expectations.expected`'s order.
        amount: per code, its amount (`Expectations.money`; NaN: none known).
        money_like: per code, True when the key starts with a money prefix.
        completion_codes: per history position, `COMPLETION_CODES` of its attempt.

    The codes, counts and observation indexes are int32 (a table codes fewer than 2**31
    keys; a count or an observation index is at most the rows or reads, each below 2**31:
    `key_table` raises ValueError past it); `first_seen` is int32 while every observation's
    rows together are fewer than 2**31, else int64. A storm's half a million keys hold
    half the bytes int64 columns would.
    """

    by_key: Groups
    codes: Mapping[str, int]
    n_grouped: int
    extra: dict[str, int]
    peak: "npt.NDArray[np.int32]"
    peak_obs: "npt.NDArray[np.int32]"
    first_seen: "npt.NDArray[np.int64] | npt.NDArray[np.int32]"
    settled: "npt.NDArray[np.int32]"
    settled_codes: "npt.NDArray[np.int32]"
    observed_codes: "list[npt.NDArray[np.int32]]"
    expected: "npt.NDArray[np.bool_]"
    forbidden: "npt.NDArray[np.bool_]"
    expected_order: "npt.NDArray[np.int32]"
    amount: "npt.NDArray[np.float64]"
    money_like: "npt.NDArray[np.bool_]"
    completion_codes: "npt.NDArray[np.int8]"

    def __len__(self) -> int:
        """How many codes."""
        return self.n_grouped + len(self.extra)

    @cached_property
    def _names(self) -> Sequence[str]:
        """The keys by code (built when a finding names one): keys held as bytes
        (`IdCodes`, or mapped over the world's, `MappedCodes`; coded in order) are read
        through a view, not decoded into a list."""
        import numpy as np

        codes = self.codes
        base = codes.base if isinstance(codes, ExtendedCodes) else codes
        if isinstance(base, (IdCodes, MappedCodes)):
            added = codes.names if isinstance(codes, ExtendedCodes) else []
            return _Joined(base.names, [*added, *self.extra])
        names = list(self.codes)
        values = np.fromiter(self.codes.values(), np.int64, len(names))
        if not (values == np.arange(len(names))).all():  # codes not in the mapping's order
            names = [names[i] for i in np.argsort(values).tolist()]
        return [*names, *self.extra]

    def name(self, code: int) -> str:
        """The key of `code`."""
        return self._names[code]

    def names(self, codes: "npt.NDArray[np.int64]") -> list[str]:
        """The keys of `codes`, in order."""
        names = self._names
        return [names[c] for c in codes.tolist()]

    def code(self, key: str) -> int | None:
        """The code of `key`, or None for a key nothing names."""
        code = self.codes.get(key)
        return code if code is not None else self.extra.get(key)

    def seen(self, mask: "npt.NDArray[np.bool_]") -> "npt.NDArray[np.int64]":
        """Codes where `mask` holds among the keys some observation showed, in the order
        each first appeared (`first_seen`: the order of `CheckIndex.peak`)."""
        import numpy as np

        codes = np.flatnonzero(mask & (self.first_seen >= 0))
        return codes[np.argsort(self.first_seen[codes], kind="stable")]

    def positions(self, code: int) -> Sequence[int]:
        """History positions filed under `code` (`by_key`), history order."""
        return self.by_key.at(code) if code < self.n_grouped else ()

    def completion_counts(self) -> tuple["npt.NDArray[np.int64]", "npt.NDArray[np.int64]", "npt.NDArray[np.int64]"]:
        """Per code, how many valid attempts filed under it completed ok, failed, and
        with an unknown completion (one pass in numpy, on each call)."""
        import numpy as np

        order, starts = self.by_key.columns()
        group = np.repeat(np.arange(self.n_grouped, dtype=np.int64), np.diff(starts))
        cc = self.completion_codes[order]
        n = len(self)
        return (np.bincount(group[cc == 0], minlength=n), np.bincount(group[cc == 1], minlength=n),
                np.bincount(group[cc == 2], minlength=n))


def completion_codes(completions: Sequence[Completion | None]) -> "npt.NDArray[np.int8]":
    """`COMPLETION_CODES` of `completions` (one per position), an int8 column."""
    import numpy as np

    return np.fromiter(map(COMPLETION_CODES.__getitem__, completions), np.int8, len(completions))


class _Coder:
    """Codes keys: `by_key`'s codes first, other keys the next codes as met."""

    def __init__(self, codes: Mapping[str, int], n_grouped: int) -> None:
        self.codes = codes
        self.n_grouped = n_grouped
        self.extra: dict[str, int] = {}

    def code_all(self, names: Sequence[str]) -> "npt.NDArray[np.int64]":
        import numpy as np

        codes = _looked_up(self.codes, names)
        missing = np.flatnonzero(codes < 0)
        for i in missing.tolist():
            codes[i] = self.code(names[i])
        return codes

    def code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            code = self.extra.get(name)
            if code is None:
                code = self.extra[name] = self.n_grouped + len(self.extra)
        return code


def _looked_up(codes: Mapping[str, int], names: Sequence[str]) -> "npt.NDArray[np.int64]":
    """The code of each of `names` in `codes` (-1: not there), an int64 column; keys held as
    bytes (an `IdCodes` or a `MappedCodes`, or one extended, `ExtendedCodes`) looked up a chunk at a time."""
    if isinstance(codes, ExtendedCodes) and isinstance(codes.base, (IdCodes, MappedCodes)):
        out = codes_in(codes.base, names)
        if codes.added:
            for i in (out < 0).nonzero()[0].tolist():
                out[i] = codes.added.get(names[i], -1)
        return out
    return codes_in(codes, names)


class _Joined(Sequence[str]):
    """`head` then `tail` as one read-only sequence (names by code, without a copy of `head`)."""

    __slots__ = ("head", "tail")

    def __init__(self, head: Sequence[str], tail: list[str]) -> None:
        self.head = head
        self.tail = tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self.head)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.head[i] if i < n else self.tail[i - n]


def key_table(
    by_key: Groups, expectations: Expectations, observations: Sequence[Observation] | None,
    peak: Mapping[str, tuple[int, int]], settled_counts: Mapping[str, int], completions: "npt.NDArray[np.int8]",
    *, shared: int = 0,
) -> KeyTable:
    """The `KeyTable` of an index: its `by_key`, the run's `expectations`, and its
    `observations` (or, when None, its `peak` and `settled_counts`: an index built
    elsewhere; `KeyTable.settled_codes` is then empty).

    `shared`: how many leading codes of `by_key` are those of the expectations' columns
    (`KeyColumns.codes`, when `Expectations.expected` is an `ExpectedView`), read as
    columns; 0 reads the expectations key by key. `completions`: `COMPLETION_CODES`
    per history position. O(keys + effect rows), numpy but for keys `by_key` lacks.
    """
    import numpy as np

    codes = by_key.codes
    coder = _Coder(codes, len(codes))
    rows: list[npt.NDArray[np.int32]] = []
    if observations is not None:
        rows = _coded_rows(coder, observations)
        peak_pairs: list[tuple[int, int, int]] = []
    else:  # the index's own counts: code, count, observation
        peak_pairs = [(coder.code(key), n, oi) for key, (n, oi) in peak.items()]
        settled_pairs = [(coder.code(key), count) for key, count in settled_counts.items()]
    expected_view = expectations.expected if isinstance(expectations.expected, ExpectedView) and shared else None
    if expected_view is not None:
        columns = expected_view.columns
        to_table = np.arange(len(columns.valid), dtype=np.int32)
        for j, name in enumerate(columns.added_names):
            to_table[shared + j] = coder.code(name)
        expected_order = to_table[columns.expected_order]
    else:
        expected_order = np.fromiter(map(coder.code, expectations.expected), np.int32, len(expectations.expected))
        forbidden_codes = [code for code in map(coder.codes.get, expectations.forbidden) if code is not None]
        forbidden_codes += [code for key in expectations.forbidden if (code := coder.extra.get(key)) is not None]
        money_pairs = [(coder.code(key), amount) for key, amount in expectations.money.items()]
    n = coder.n_grouped + len(coder.extra)
    total_rows = sum(map(len, rows))
    if max(n, len(rows), max(map(len, rows), default=0)) >= _INT32_END:
        raise ValueError(f"{n:,} keys over {len(rows):,} observations: a key table holds fewer than "
                         f"{_INT32_END:,} keys, observations and effect rows per observation (int32 columns)")
    peak_n = np.zeros(n, np.int32)
    peak_obs = np.full(n, -1, np.int32)
    first_seen: npt.NDArray[np.int64] | npt.NDArray[np.int32] = np.full(n, -1, np.int32)
    settled = np.zeros(n, np.int32)
    settled_codes = rows[-1] if rows else np.zeros(0, np.int32)
    if observations is not None:
        offset = 0
        # a row's index over every observation's rows: int32 while they fit (a storm's reads of a
        # million rows each, over a long settle, may not)
        row_type = np.int32 if total_rows < _INT32_END else np.int64
        big = np.iinfo(row_type).max
        first: Any = np.full(n, big, row_type)
        for oi, row in enumerate(rows):
            if oi and row is rows[oi - 1]:  # the same rows as the last read: no count moves
                offset += len(row)
                continue
            counts = np.bincount(row, minlength=n).astype(np.int32)  # below 2**31: rows per read
            higher = counts > peak_n
            peak_n[higher] = counts[higher]
            peak_obs[higher] = oi
            del higher
            np.minimum.at(first, row, np.arange(offset, offset + len(row), dtype=row_type))
            offset += len(row)
            settled = counts
            del counts
        first[first == big] = -1
        first_seen = first
        del first
    elif peak_pairs:
        at = np.array([c for c, _, _ in peak_pairs], np.int64)
        peak_n[at] = [p for _, p, _ in peak_pairs]
        peak_obs[at] = [oi for _, _, oi in peak_pairs]
        first_seen[at] = np.arange(len(at))
    expected = np.zeros(n, np.bool_)
    expected[expected_order] = True
    forbidden = np.zeros(n, np.bool_)
    amount = np.full(n, np.nan, np.float64)
    money_like = np.zeros(n, np.bool_)
    prefixes = expectations.money_prefixes
    if expected_view is not None:
        columns = expected_view.columns
        forbidden[to_table[~columns.valid]] = True
        amount[to_table[columns.money]] = columns.amount[columns.money]
        own = columns.money_like if columns.money_prefixes == prefixes else None  # None: not computed
        if own is not None:
            money_like[:shared] = own[:shared]
        rest = range(shared if own is not None else 0, n)
        names = islice(codes, rest.start, None) if rest.start < coder.n_grouped else iter(())
        money_like[rest.start:coder.n_grouped] = [name.startswith(prefixes) for name in names]
        money_like[coder.n_grouped:] = [name.startswith(prefixes) for name in coder.extra]
    else:
        forbidden[forbidden_codes] = True
        for code, value in money_pairs:
            amount[code] = value
        money_like[:] = [name.startswith(prefixes) for name in [*codes, *coder.extra]]
    if observations is None:
        for code, count in settled_pairs:
            settled[code] = count
    return KeyTable(by_key, codes, coder.n_grouped, coder.extra, peak_n, peak_obs, first_seen, settled,
                    settled_codes, rows, expected, forbidden, expected_order, amount, money_like, completions)


def _coded_rows(coder: _Coder, observations: Sequence[Observation]) -> "list[npt.NDArray[np.int32]]":
    """Per observation, its effect rows' key codes (int32); observations sharing one tuple of rows
    (`scenarios.observers.settle` shares the rows of a read equal to the last) share
    one column, and a read whose rows begin with the last read's rows codes only the rows
    after them."""
    import numpy as np

    rows: list[npt.NDArray[np.int32]] = []
    by_rows: dict[int, npt.NDArray[np.int32]] = {}  # id of an effects tuple (alive in `observations`) → its codes
    last: Sequence[Any] = ()
    last_row: npt.NDArray[np.int32] | None = None
    for obs in observations:
        effects = obs.effects
        row = by_rows.get(id(effects))
        if row is None:
            n = len(last)
            if last_row is not None and n and len(effects) >= n and effects[:n] == last:
                # the last read's rows and more (an observer whose rows only grow): only the new rows
                # are looked up (equal rows have equal keys; compared by identity first, at C level)
                row = np.concatenate([last_row, coder.code_all(list(map(_KEY, effects[n:]))).astype(np.int32)])
            elif isinstance(effects, EffectRows):  # a step of keys at a time: no string per row kept
                row = np.concatenate([coder.code_all(keys).astype(np.int32) for keys in effects.key_chunks()]) \
                    if effects else np.zeros(0, np.int32)
            else:
                row = coder.code_all(list(map(_KEY, effects))).astype(np.int32)
            by_rows[id(effects)] = row
        rows.append(row)
        last, last_row = effects, row
    return rows


class PeakView(Mapping[str, tuple[int, int]]):
    """business key → (highest count in any observation, that observation's index)
    (`CheckIndex.peak`), read from a `KeyTable` built on first use; in order of first sight."""

    __slots__ = ("_table",)

    def __init__(self, table: Any) -> None:
        self._table = table  # a KeyTable, or a callable building it

    @property
    def table(self) -> KeyTable:
        if not isinstance(self._table, KeyTable):
            self._table = self._table()
        return self._table

    def __getitem__(self, key: str) -> tuple[int, int]:
        table = self.table
        code = table.code(key)
        if code is None or table.peak[code] == 0:
            raise KeyError(key)
        return int(table.peak[code]), int(table.peak_obs[code])

    def __iter__(self) -> Iterator[str]:
        table = self.table
        return iter(table.names(table.seen(table.peak > 0)))

    def __len__(self) -> int:
        return int((self.table.peak > 0).sum())


class SettledView(Mapping[str, int]):
    """business key → effect rows in the last observation (`CheckIndex.settled_counts`),
    read from a `KeyTable`; in order of first row."""

    __slots__ = ("_peak",)

    def __init__(self, peak: PeakView) -> None:
        self._peak = peak

    def __getitem__(self, key: str) -> int:
        table = self._peak.table
        code = table.code(key)
        if code is None or table.settled[code] == 0:
            raise KeyError(key)
        return int(table.settled[code])

    def __iter__(self) -> Iterator[str]:
        table = self._peak.table
        return map(table.name, dict.fromkeys(table.settled_codes.tolist()))

    def __len__(self) -> int:
        return int((self._peak.table.settled > 0).sum())


__all__: Sequence[str] = ["COMPLETION_CODES", "KeyTable", "SMALL", "PeakView", "SettledView", "completion_codes", "key_table"]
