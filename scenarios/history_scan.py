"""One pass over a history: what the check index and the expectations need, as columns.

`scan_history` reads the attempts once, in history order, from any iterable: the list
certify recorded in memory, a storm's `simulator.delivery.history.HistoryFile` (whose
rows are read as columns, `HistoryFile.column_chunks`, never as attempts), or any other.
It reads `CHUNK` attempts at a time and keeps no attempt: per attempt a few machine
words in numpy columns (its event's code, its own key's code, its completion, its
latency when acked), per event and per key a code and a few array slots indexed by it
(first attempt, first valid attempt, first attempt without a key, valid, acked), never
a dict or a set of their own. The index (`scenarios.check_index.build_index`) is built
from a `HistoryScan`; with the run's events the same pass keeps the expectations' part
(`ExpectationScan`), and `scenarios.check_index.expectations_and_index` builds both,
which is how a storm's checks read a history of millions of attempts.

Each chunk is a handful of C-level passes: its columns are read with `attrgetter` maps
straight into numpy (or from SQLite rows; valid, completion, outcome and status graded
together, one dict lookup an attempt), the event ids and the keys coded by hash as bytes
(`scenarios.id_codes.IdCodes`: no string per event or key is kept), each once per run of
equal neighbours (an event's copies, bursts and retries often come together); with the
run's events, the keys (and, when the world's are held as bytes, the event ids) are coded
over the world's own tables (`scenarios.id_codes.MappedCodes`: two int32 slots an id, no
id held twice; one the world does not name, a forged key, held by the mapping's own
table). The amounts are read only for the attempts that first carry a key
or an event; the rest is numpy over the chunk. Python runs per new event or key only where an attempt's value
is needed for an expectation (its amount, its object when its event is unknown), and
per attempt only for ids the run's events do not name (joined through the delivery id).

Everything a finding needs beyond that (an attempt's answer, event type, faults, times)
is read back from the history by position, for the attempts a finding names only.
"""

from __future__ import annotations

from array import array
from collections.abc import Set
from dataclasses import dataclass, field
from itertools import islice, repeat
from operator import attrgetter, is_not, length_hint
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, overload

from hookproof.scenarios.groups import NO_GROUP, Groups, group_positions
from hookproof.scenarios.history_expectations import EventFacts, ExpectationScan
from hookproof.scenarios.id_codes import IdCodes, MappedCodes
from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations, world_id_of_delivery
from hookproof.scenarios.world_columns import WorldColumns, world_columns
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Outcomes of an attempt that got an answer other than a success.
ANSWERED_NON_SUCCESS = (Outcome.REJECTED, Outcome.SERVER_ERROR)
#: Attempts read per step (columns of this many values are alive at once).
CHUNK = 8192
#: None alone (whether a chunk's keys hold it: `isdisjoint` hashes each once, at C level).
_NONE = frozenset([None])
#: Chunks of fewer attempts than this code each id and key on its own, not once per run.
_RUNS_FROM = 2048
#: The most attempts (and world events) a pass reads: positions and world codes per event
#: and per key are int32 columns (`ExpectationScan`); past it `scan_history` raises ValueError.
MAX_ATTEMPTS = 2**31 - 1

# Completion codes of the columns (3: an invalid attempt, whose completion the checks ignore).
_COMPLETION_CODE: dict[str, int] = {Completion.OK: 0, Completion.FAIL: 1, Completion.UNKNOWN: 2}
_COMPLETION_OF: tuple[Completion | None, ...] = (Completion.OK, Completion.FAIL, Completion.UNKNOWN, None)
# Outcome codes: 0 acked, 1 rejected or server error (answered, not a success), 2 any other.
_OUTCOME_CODE: dict[str, int] = {o: 0 if o is Outcome.ACKED else 1 if o in ANSWERED_NON_SUCCESS else 2
                                 for o in Outcome}


class CodedSet(Set[str]):
    """The names (event ids) whose code is marked in a boolean column: a read-only set
    of strings without a set of its own (the names' dict is the scan's codes).
    Membership O(1); iteration in code order."""

    __slots__ = ("_codes", "_marked")

    def __init__(self, codes: Mapping[str, int], marked: "npt.NDArray[np.bool_]") -> None:
        self._codes = codes
        self._marked = marked

    def __contains__(self, name: object) -> bool:
        code = self._codes.get(name) if isinstance(name, str) else None
        return code is not None and bool(self._marked[code])

    def __iter__(self) -> Iterator[str]:
        marked = self._marked.tolist()  # the codes' names iterate in code order (a dict's, or `IdCodes`)
        return (name for name, code in zip(self._codes, range(len(marked))) if marked[code])

    def __len__(self) -> int:
        return int(self._marked.sum())


class Completions(Sequence["Completion | None"]):
    """Per position, the completion of a valid attempt, None for an invalid one: a
    read-only sequence over the scan's completion codes (int8, `_COMPLETION_OF`), each
    value read from the codes when asked for (through a memoryview of them: a Python int
    per read, no list of a million references held, 8 MB a storm's, once a check reads
    one attempt's). Equal to any sequence of the same completions."""

    __slots__ = ("codes", "_view")

    def __init__(self, codes: "npt.NDArray[np.int8]") -> None:
        self.codes = codes
        self._view = codes.data  # a memoryview: a Python int per read

    @overload
    def __getitem__(self, i: int) -> Completion | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[Completion | None]: ...

    def __getitem__(self, i: int | slice) -> Completion | None | list[Completion | None]:
        if isinstance(i, slice):
            return list(map(_COMPLETION_OF.__getitem__, self._view[i]))
        return _COMPLETION_OF[self._view[i]]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[Completion | None]:
        return map(_COMPLETION_OF.__getitem__, self._view)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class AckedLatencies(Sequence[float]):
    """The latency (ms) of every acked attempt, in history order, not kept by the pass: read
    from the history file when asked for (`values`, `HistoryFile.acked_latencies`; a
    storm's million are 9 MB, which only ``ack_latency`` reads, once) and not held after.
    Its length is the pass's count, known without reading; any other read reads them."""

    __slots__ = ("_count", "_read")

    def __init__(self, count: int, read: Callable[[], "array[float]"]) -> None:
        self._count = count
        self._read = read

    def values(self) -> "array[float]":
        """The latencies, read now (a new array on each call). Raises ValueError when the
        history no longer holds as many acked attempts as the pass counted."""
        values = self._read()
        if len(values) != self._count:
            raise ValueError(f"the history holds {len(values):,} acked attempts, its pass counted {self._count:,}")
        return values

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> float: ...

    @overload
    def __getitem__(self, i: slice) -> "array[float]": ...

    def __getitem__(self, i: int | slice) -> "float | array[float]":
        return self.values()[i]

    def __iter__(self) -> Iterator[float]:
        return iter(self.values())


@dataclass
class HistoryScan:
    """What `scan_history` kept of a history for the checks' index. Positions count
    attempts from 0 in history order.

    Per attempt it keeps a few numpy columns, per event and per key one dictionary
    entry (their codes), never a list (`scenarios.groups`).

    Attributes:
        size: attempts read.
        event_codes: event id → its code (0, 1, … in order of first attempt): an
            `IdCodes` (the ids held as bytes, `names` by code), a `MappedCodes` over the
            world's event table (a storm's: the ids not held twice), or a dict.
        event_of: per position, its event's code (int32: a pass codes at most `MAX_ATTEMPTS`).
        key_codes: business key → its code (0, 1, … in order of first attempt carrying it
            as its own): from `scan_history` an `IdCodes`, or with the run's events a
            `MappedCodes` over the world's keys; `key_names` the keys by code.
        key_of: per position, the code of the attempt's own business key, `NO_GROUP` when
            it carries none (int32).
        by_event: event id → positions (`Groups`), grouped on the first read of a position
            (a property over `event_codes` and `event_of`, `Groups.deferred`): never before
            the expectations have freed the pass's per-event and per-key slots, and in a
            storm's checks only once a finding names an event, so its positions and offsets
            (some 9 MB at a million attempts) and their sort are not held beside the key
            table when no check needs them.
        completions: per position, the completion of a valid attempt, None for an invalid one
            (`Completions`, over `completion_codes`).
        acked_events: events with at least one valid attempt that completed ok (a `CodedSet`).
        notable: positions of attempts that are invalid, or got a 4xx/5xx status or a
            rejected or server-error outcome.
        acked_latencies: latency (ms) of every acked attempt (valid or not), history order:
            an array, or for a history file (which reads them again) `AckedLatencies`.
        over_half: positions of acked attempts slower than half the sender timeout, and
            `over_half_ms` their latencies (ms).
        sender_timeout_s: the sender timeout the latencies were compared with, seconds.
        expect: the expectations' part, when the scan was given the run's events.
        completion_codes: per position, 0 ok, 1 fail, 2 unknown, 3 invalid (int8; the
            column `completions` is read from, for the checks' `scenarios.key_table`).
    """

    size: int
    event_codes: Mapping[str, int]
    event_of: "npt.NDArray[np.int32]"
    key_codes: Mapping[str, int]
    key_names: Sequence[str]
    key_of: "npt.NDArray[np.int32]"
    completions: Sequence[Completion | None]
    acked_events: Set[str]
    notable: list[int]
    acked_latencies: "array[float] | AckedLatencies"
    over_half: list[int]
    over_half_ms: list[float]
    sender_timeout_s: float
    expect: ExpectationScan | None = None
    completion_codes: "npt.NDArray[np.int8] | None" = None
    _by_event: Groups | None = field(default=None, repr=False, compare=False)

    @property
    def by_event(self) -> Groups:
        """event id → positions (`Groups`, `Groups.deferred`): its positions grouped on the
        first read of one and kept; its names, membership and length read without."""
        if self._by_event is None:
            codes, event_of = self.event_codes, self.event_of  # not `self`: no cycle keeping the scan alive
            self._by_event = Groups.deferred(codes, lambda: group_positions(codes, event_of))
        return self._by_event

    @property
    def by_key(self) -> Groups:
        """business key → positions of the attempts carrying it as their own (built on
        each call: the checks' index files the attempts without a key too)."""
        return group_positions(self.key_codes, self.key_of)

    def expectations(
        self, *, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
        release: bool = False,
    ) -> Expectations:
        """The expectations of the run (`ExpectationScan.expectations`; their truth empty for
        a pass made without it, `scan_history`'s `truth`). With `release`, the
        scan hands its expectations' part over (`expect` is None from then on): its columns
        are freed as they are read, so a storm's are not held beside the expectations'
        own. Raises ValueError when the scan was made without the run's events (or after
        a release)."""
        part = self.expect
        if part is None:
            raise ValueError("the history was scanned without the run's events: no expectations")
        if release:
            self.expect = None
        return part.expectations(self, sender_timeout_s=self.sender_timeout_s,
                                 max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes,
                                 release=release)


class _Growing:
    """A numpy column indexed by code, grown (doubling) as codes are added; `size` the
    slots it starts with (the codes expected: no doubling up to them)."""

    __slots__ = ("data", "fill")

    def __init__(self, dtype: Any, fill: Any, size: int = 1024) -> None:
        import numpy as np

        self.fill = fill
        self.data = np.full(max(1024, size), fill, dtype=dtype)

    def ensure(self, n: int) -> None:
        import numpy as np

        if n > len(self.data):
            grown = np.full(max(n, 2 * len(self.data)), self.fill, dtype=self.data.dtype)
            grown[:len(self.data)] = self.data
            self.data = grown

    def take(self, n: int) -> Any:
        """The first `n` slots as a column of their own (the doubling's spare slots, up to
        as many again, are freed: a slice would keep them), the buffer given up."""
        data, self.data = self.data, self.data[:0]
        return data[:n].copy() if n < len(data) else data


class _PerAttempt:
    """The pass's columns per attempt (event code and own key code, int32: a pass reads at
    most `MAX_ATTEMPTS`; completion code, int8), filled a chunk at a time in place: `size`
    slots to start with (the history's length when known), room for as many again when a
    chunk needs more."""

    __slots__ = ("cols", "n")

    def __init__(self, size: int) -> None:
        import numpy as np

        self.cols: list[Any] = [np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int8)]
        self.n = 0

    def add(self, *chunk: Any) -> None:
        """Append one chunk's columns (as many values each, in `cols`' order)."""
        import numpy as np

        n, end = self.n, self.n + len(chunk[0])
        if end > len(self.cols[0]):
            self.cols = [np.concatenate([c[:n], np.empty(max(end, 2 * n) - n, c.dtype)]) for c in self.cols]
        for col, values in zip(self.cols, chunk):
            col[n:end] = values
        self.n = end

    def take(self) -> tuple[Any, ...]:
        """The columns, `n` values each (the spare room freed), given up."""
        cols, self.cols = self.cols, []
        return tuple(c if len(c) == self.n else c[:self.n].copy() for c in cols)


class _Grades(dict[Any, int]):
    """(valid, completion, outcome, status) of an attempt → its grade, a small code
    numbering each combination met once (`__missing__`), and per grade the columns the
    scan reads: whether valid, its completion code (`_COMPLETION_CODE`), its outcome code
    (`_OUTCOME_CODE`), whether its status is a 4xx or 5xx (None: no status). One dict
    lookup per attempt, the four columns then taken from these small tables in numpy.
    A run meets a handful of combinations; the tables grow by one per new combination.
    Raises KeyError for a completion or outcome that is none of theirs."""

    def __init__(self) -> None:
        super().__init__()
        self._valid: list[bool] = []
        self._completion: list[int] = []
        self._outcome: list[int] = []
        self._refused: list[bool] = []
        self.tables: tuple[Any, Any, Any, Any] | None = None

    def __missing__(self, grade: tuple[Any, Any, Any, Any]) -> int:
        valid, completion, outcome, status = grade
        row = (bool(valid), _COMPLETION_CODE[completion], _OUTCOME_CODE[outcome],
               status is not None and status >= 400)
        code = self[grade] = len(self._valid)
        self._valid.append(row[0])
        self._completion.append(row[1])
        self._outcome.append(row[2])
        self._refused.append(row[3])
        self.tables = None
        return code

    def columns(self, grades: "npt.NDArray[np.int32]") -> tuple[
            "npt.NDArray[np.bool_]", "npt.NDArray[np.int8]", "npt.NDArray[np.int8]", "npt.NDArray[np.bool_]"]:
        """(valid, completion code, outcome code, refused) of each of `grades`: new columns."""
        import numpy as np

        if self.tables is None:
            self.tables = (np.array(self._valid, np.bool_), np.array(self._completion, np.int8),
                           np.array(self._outcome, np.int8), np.array(self._refused, np.bool_))
        valid, completion, outcome, refused = self.tables
        return valid[grades], completion[grades], outcome[grades], refused[grades]


_GRADES = _Grades()


@dataclass(slots=True)
class _Chunk:
    """`CHUNK` attempts as columns: their event ids and own business keys (as read), and
    per attempt whether valid, its completion code (`_COMPLETION_CODE`), outcome code
    (`_OUTCOME_CODE`), whether its status is a 4xx or 5xx, its latency (ms); `amounts(at)`
    the amounts (NaN: None) and `lazy(i)` the (object id, delivery id) of the attempts at
    indexes of the chunk, read only where needed."""

    ids: Sequence[Any]
    keys: Sequence[Any]
    valid: "npt.NDArray[np.bool_]"
    completion: "npt.NDArray[np.int8]"
    outcome: "npt.NDArray[np.int8]"
    refused: "npt.NDArray[np.bool_]"
    latency: "npt.NDArray[np.float64]"
    amounts: Callable[["npt.NDArray[np.int64]"], "npt.NDArray[np.float64]"]
    lazy: Callable[[int], tuple[Any, Any]]


_ID, _KEY, _LATENCY, _AMOUNT = map(attrgetter, ("event_id", "business_key", "latency_ms", "amount"))
_GRADE = attrgetter("valid", "completion", "outcome", "status")
_LAZY = attrgetter("object_id", "delivery_id")


def _chunks(history: Iterable[Attempt]) -> Iterator[_Chunk]:
    """The history's attempts `CHUNK` at a time, as columns: a `HistoryFile`'s rows read
    as columns (no attempt built), any other iterable's attempts read with `attrgetter`
    straight into numpy (no list per column but the ids and keys); valid, completion,
    outcome and status coded together, one lookup per attempt (`_Grades`)."""
    import numpy as np

    grades = _GRADES
    reader = getattr(history, "column_chunks", None)
    if reader is not None:
        for ids, keys, valid, completion, outcome, status, latency, amount, obj, did in reader(CHUNK):
            n = len(ids)
            graded = grades.columns(np.fromiter(map(grades.__getitem__, zip(valid, completion, outcome, status)),
                                                np.int32, n))
            yield _Chunk(ids, keys, *graded, np.fromiter(latency, np.float64, n), _taken(amount), _reader(obj, did))
        return
    it = iter(history)
    while chunk := list(islice(it, CHUNK)):
        n = len(chunk)
        graded = grades.columns(np.fromiter(map(grades.__getitem__, map(_GRADE, chunk)), np.int32, n))
        yield _Chunk(list(map(_ID, chunk)), list(map(_KEY, chunk)), *graded,
                     np.fromiter(map(_LATENCY, chunk), np.float64, n), _taken(chunk, _AMOUNT),
                     lambda i, chunk=chunk: _LAZY(chunk[i]))  # type: ignore[misc]


def _taken(values: Sequence[Any], get: Callable[[Any], Any] | None = None,
           ) -> Callable[["npt.NDArray[np.int64]"], "npt.NDArray[np.float64]"]:
    """A reader of `values` (or of `get` of them) at indexes, as float64 (None: NaN)."""
    import numpy as np

    if get is None:
        return lambda at: np.array(list(map(values.__getitem__, at.tolist())), dtype=np.float64)
    return lambda at: np.array(list(map(get, map(values.__getitem__, at.tolist()))), dtype=np.float64)


def _reader(objects: Sequence[Any], deliveries: Sequence[Any]) -> Callable[[int], tuple[Any, Any]]:
    """(object id, delivery id) at an index of a chunk read as columns."""
    return lambda i: (objects[i], deliveries[i])


def _runs(values: Sequence[Any]) -> "npt.NDArray[np.int64] | None":
    """Where each run of equal neighbours in `values` starts (ascending, from 0), or None
    when no value equals the one before it (attempts of one event often come together:
    copies, bursts, retries), or when `values` are fewer than `_RUNS_FROM` (a few numpy
    calls would cost more than they save). One comparison per value (`!=`, its truth as
    `operator.ne`'s), in numpy's loop over an object column."""
    import numpy as np

    n = len(values)
    if n < _RUNS_FROM:
        return None
    held = np.fromiter(values, object, n)  # one reference each: compared in numpy's loop, no call per value
    change = held[1:] != held[:-1]
    del held
    if change.all():
        return None
    heads = np.flatnonzero(change)
    heads += 1
    return np.concatenate(([0], heads))


def _coded(values: Sequence[Any], heads: "npt.NDArray[np.int64] | None",
           code: Callable[[Sequence[Any]], "npt.NDArray[np.int64]"]) -> "npt.NDArray[np.int64]":
    """`code(values)`, coding each run of equal neighbours once (`heads`, from `_runs`):
    `code` gives one int64 code per value, new values numbered in order of first appearance."""
    import numpy as np

    if heads is None:
        return code(values)
    coded = code(list(map(values.__getitem__, heads.tolist())))
    return np.repeat(coded, np.diff(heads, append=len(values)))


def scan_history(
    history: Iterable[Attempt], *, sender_timeout_s: float, events: Iterable[Event] | None = None,
    truth: bool = True,
) -> HistoryScan:
    """Read `history` once, in order, keeping what the checks' index (and, with `events`,
    the expectations) need; see `HistoryScan`. O(len(history)) plus one sort of the
    positions by event (none when they come in order); per attempt nothing but a slot in
    a few numpy columns. `truth` False: the expectations' truth is left empty and the
    events' columns only it reads are never kept (`world_columns`), for a caller that reads
    no object's truth (a storm whose observer reads no state)."""
    import numpy as np

    world = world_columns(events, truth=truth) if events is not None else None
    expect = world is not None
    # with the world: room for its events and keys from the start (the recorded ids are
    # the world's but for a few), so no column doubles (and is held twice) mid-pass
    n_world, n_world_keys = (len(world), len(world.keys.names)) if world is not None else (0, 0)
    # the ids as bytes from the first when the world's are (a storm's): mapped over the world's
    # table (`MappedCodes`: no id held twice); the keys always mapped over the world's keys
    # (a key the world does not name, a forged one, held by the mapping's own table)
    mapped = world is not None and world.codes.columnar
    event_codes: IdCodes | MappedCodes = MappedCodes(world.codes) if mapped else IdCodes()  # type: ignore[union-attr]
    if isinstance(event_codes, IdCodes):
        event_codes.reserve(n_world)
    key_codes: IdCodes | MappedCodes = MappedCodes(world.keys.codes) if world is not None else IdCodes()
    resolved: dict[str, int] = {}
    unresolved: set[str] = set()
    src_objects: dict[tuple[str, int], str | None] = {}
    if n_world > MAX_ATTEMPTS:
        raise ValueError(f"{n_world:,} events: a pass codes at most {MAX_ATTEMPTS:,} (int32 columns)")
    # positions and world codes per event and per key: int32 (a pass reads at most MAX_ATTEMPTS)
    first_valid, acked = _Growing(np.int32, -1, n_world), _Growing(np.bool_, False, n_world)
    foreign, event_world = _Growing(np.bool_, False, n_world), _Growing(np.int32, -1, n_world)
    unkeyed_first, unkeyed_amount, unkeyed_valid = (_Growing(np.int32, -1, n_world),
                                                    _Growing(np.float64, np.nan, n_world),
                                                    _Growing(np.bool_, False, n_world))
    key_first, key_amount, key_valid = (_Growing(np.int32, -1, n_world_keys), _Growing(np.float64, np.nan, n_world_keys),
                                        _Growing(np.bool_, False, n_world_keys))
    # per attempt: event code, own key code, completion code, filled in place (a history on
    # disk says how long it is: sized once, no chunk kept and joined)
    per_attempt = _PerAttempt(length_hint(history))
    # the acked latencies: kept, or only counted for a history file that reads them again when asked
    read_latencies: Callable[[], array[float]] | None = getattr(history, "acked_latencies", None)
    latency_parts: list[npt.NDArray[np.float64]] = []
    n_acked = 0
    notable: list[int] = []
    over_half: list[int] = []
    over_half_ms: list[float] = []
    half_ms = sender_timeout_s * 1000.0 / 2
    offset = 0
    for chunk in _chunks(history):
        if offset + len(chunk.ids) > MAX_ATTEMPTS:
            raise ValueError(f"more than {MAX_ATTEMPTS:,} attempts: a pass reads at most that many "
                             "(its positions per event and per key are int32 columns)")
        ids, keys, valid, cc, oc, lazy = chunk.ids, chunk.keys, chunk.valid, chunk.completion, chunk.outcome, chunk.lazy
        # codes of the chunk's event ids, new ones numbered in order of first attempt
        n_before = len(event_codes)
        heads = _runs(ids)
        ev = _coded(ids, heads, event_codes.code_all)
        n_events = len(event_codes)
        # the world code of each new event: read from the mapping when mapped over the world's table
        new_world = event_codes.base_codes(n_before, n_events) \
            if isinstance(event_codes, MappedCodes) and n_events > n_before else None
        unknown: list[str] = []
        if n_events > n_before:
            acked.ensure(n_events)
            if world is not None:  # each new event's world code, from its first attempt's id
                for g in (first_valid, unkeyed_first, unkeyed_amount, unkeyed_valid, foreign, event_world):
                    g.ensure(n_events)
                if new_world is not None:  # coded through the world's codes
                    known = new_world
                    if (known < 0).any():
                        unknown = event_codes.names_at(np.flatnonzero(known < 0) + n_before)
                else:
                    new_ids = list(map(ids.__getitem__, _first_new(ev, n_before).tolist()))
                    known = world.codes.code_all(new_ids, add=False)
                    if (known < 0).any():
                        unknown = [name for name, code in zip(new_ids, known.tolist()) if code < 0]
                event_world.data[n_before:n_events] = known
                if unknown:
                    foreign.data[n_before:n_events] = known < 0
        n_keys_before = len(key_codes)
        key_heads = _runs(keys)
        head_keys = keys if key_heads is None else list(map(keys.__getitem__, key_heads.tolist()))
        # each key hinted with its event's key in the world (an attempt carries its event's key
        # but for a forged or foreign one): checked on the bytes, no hash or probe of the table
        hint = None
        if world is not None and world.keys.codes.columnar:
            at_world = event_world.data[ev if key_heads is None else ev[key_heads]]
            hint = np.where(at_world >= 0, world.key[np.maximum(at_world, 0)], -1)
        kc = _key_codes(key_codes, head_keys, hint)
        if key_heads is not None:
            kc = np.repeat(kc, np.diff(key_heads, append=len(keys)))
        n_keys = len(key_codes)
        new_keys = n_keys > n_keys_before
        cc[~valid] = 3
        latency, refused = chunk.latency, chunk.refused
        per_attempt.add(ev, kc, cc)
        acked.data[ev[cc == 0]] = True
        notable += (np.flatnonzero(~valid | refused | (oc == 1)) + offset).tolist()
        is_acked = oc == 0
        if read_latencies is None:
            latency_parts.append(latency[is_acked])
        else:
            n_acked += int(np.count_nonzero(is_acked))
        slow = np.flatnonzero(is_acked & (latency > half_ms))
        if slow.size:
            over_half += (slow + offset).tolist()
            over_half_ms += latency[slow].tolist()
        if expect:
            assert world is not None
            if unknown or unresolved:
                _join(ids, lazy, unknown, unresolved, world, resolved)
            unkeyed = kc == NO_GROUP
            if new_keys:  # each new key's first attempt: its position and amount
                key_first.ensure(n_keys)
                key_amount.ensure(n_keys)
                key_valid.ensure(n_keys)
                at = _first_new(kc, n_keys_before)
                key_first.data[n_keys_before:n_keys] = at + offset
                key_amount.data[n_keys_before:n_keys] = chunk.amounts(at)
                _objects(at, foreign.data[ev[at]], lazy, src_objects, "k", np.arange(n_keys_before, n_keys))
            key_valid.data[kc[valid & ~unkeyed]] = True
            _first_of(first_valid.data, ev, np.flatnonzero(valid), offset)
            at = np.flatnonzero(unkeyed)
            if at.size:
                fresh = _first_of(unkeyed_first.data, ev, at, offset)
                if fresh.size:
                    unkeyed_amount.data[ev[fresh]] = chunk.amounts(fresh)
                    _objects(fresh, foreign.data[ev[fresh]], lazy, src_objects, "e", ev[fresh])
                unkeyed_valid.data[ev[valid & unkeyed]] = True
        offset += len(ids)
    event_codes.trim()  # the columns' spare room, up to as many ids again
    # per world key, the pass's code of it (-1: none), handed to the expectations (which change
    # it in place: taken from the mapping, made again there on its next lookup by name)
    key_of_world = key_codes.take_inverse() if isinstance(key_codes, MappedCodes) else None
    key_codes.trim()
    key_codes.drop_hashes()  # no key is added from here (8 bytes a key: `IdCodes.drop_hashes`)
    if world is not None:  # the world's keys, which the pass's map over, are not added to either
        world.keys.codes.drop_hashes()
    event_of, key_of, codes = per_attempt.take()
    del per_attempt
    completions = Completions(codes)
    latencies: array[float] | AckedLatencies
    if read_latencies is not None:
        latencies = AckedLatencies(n_acked, read_latencies)
    else:
        latencies = kept = array("d")
        for part in latency_parts:
            kept.frombytes(part.tobytes())
    del latency_parts
    n_events, n_keys = len(event_codes), len(key_codes)
    expectation_part: ExpectationScan | None = None
    if expect:
        assert world is not None
        # what coded ids during the pass (the scan's own `event_codes` stay, the world's event
        # table as the base they map over when mapped; the world's keys are read by the expectations)
        world.codes = IdCodes()
        world.ids = world.codes.names
        resolved_world = event_world.take(n_events)
        for name, code in resolved.items():
            resolved_world[event_codes[name]] = code
        del foreign
        expectation_part = ExpectationScan(world, resolved, resolved_world, first_valid.take(n_events),
                                           key_first.take(n_keys), key_amount.take(n_keys), key_valid.take(n_keys),
                                           unkeyed_first.take(n_events), unkeyed_amount.take(n_events),
                                           unkeyed_valid.take(n_events), src_objects, key_of_world, truth)
    return HistoryScan(offset, event_codes, event_of, key_codes, key_codes.names, key_of, completions,
                       CodedSet(event_codes, acked.take(n_events)), notable, latencies, over_half, over_half_ms,
                       sender_timeout_s, expectation_part, codes)


def _first_new(codes: "npt.NDArray[np.int64]", start: int) -> "npt.NDArray[np.int64]":
    """The index of the first occurrence of each code from `start` on in `codes`, whose
    new codes were numbered in order of first appearance: so in code order, found
    without a sort (a code's first occurrence is above every code before it)."""
    import numpy as np

    at = np.flatnonzero(codes >= start)
    if at.size < 2:
        return at
    seen = codes[at]
    first = np.empty(at.size, np.bool_)
    first[0] = True
    np.greater(seen[1:], np.maximum.accumulate(seen)[:-1], out=first[1:])
    return at[first]


def _first_of(first: "npt.NDArray[np.int64]", ev: "npt.NDArray[np.int64]", at: "npt.NDArray[np.int64]",
              offset: int) -> "npt.NDArray[np.int64]":
    """Record in `first` (per event code) the position of each event's first attempt
    among the chunk's indexes `at` (ascending), for events that had none yet; returns the
    chunk indexes recorded, ascending. No sort: the attempts of events without a first
    yet take the least of their positions (`np.minimum.at` over slots set to the
    column's largest value, above any position a pass reads), and those whose position
    it is are the ones recorded."""
    import numpy as np

    if not at.size:
        return at
    at = at[first[ev[at]] < 0]
    if not at.size:
        return at
    codes = ev[at]
    positions = at + offset
    first[codes] = np.iinfo(first.dtype).max
    np.minimum.at(first, codes, positions.astype(first.dtype, copy=False))
    return at[first[codes] == positions]


def _objects(at: "npt.NDArray[np.int64]", foreign: "npt.NDArray[np.bool_]", lazy: Callable[[int], tuple[Any, Any]],
             src_objects: dict[tuple[str, int], str | None], kind: str, codes: "npt.NDArray[np.int64]") -> None:
    """Keep in `src_objects` under (`kind`, code) the object id of the chunk's attempts at
    `at` whose event is not a world id (`foreign`), `codes` their key or event codes."""
    import numpy as np

    for index, code in zip(at[foreign].tolist(), codes[np.asarray(foreign)].tolist()):
        src_objects[(kind, code)] = lazy(index)[0]


def _join(ids: Sequence[str], lazy: Callable[[int], tuple[Any, Any]], unknown: list[str], unresolved: set[str],
          world: WorldColumns, resolved: dict[str, int]) -> None:
    """Join the recorded ids the world does not name to their world event through the
    delivery id (the envelope's own id, e.g. Standard Webhooks' ``msg_…``, differs from the
    world's): the first attempt of that id, in order, whose delivery id names a world event
    decides. `unknown`: the chunk's new such ids; `unresolved`: those no attempt joined yet."""
    pending = unresolved.union(unknown)
    for i, name in enumerate(ids):
        if name in pending:
            wid = world_id_of_delivery(lazy(i)[1])
            event = world.codes.get(wid) if wid is not None else None
            if event is not None:
                resolved[name] = event
                pending.discard(name)
                unresolved.discard(name)
            else:
                unresolved.add(name)


def scan_expectations(history: Iterable[Attempt], events: Iterable[Event]) -> HistoryScan:
    """Read `history` once with the run's events: the scan whose `HistoryScan.expectations`
    are the run's (the sender timeout is not read)."""
    return scan_history(history, sender_timeout_s=0.0, events=events)


def _key_codes(codes: IdCodes | MappedCodes, keys: Sequence[Any],
               hint: "npt.NDArray[np.integer[Any]] | None" = None) -> "npt.NDArray[np.int64]":
    """The codes of `keys` (business keys or None) in `codes`, new keys getting the next
    codes in order of first appearance; `NO_GROUP` for None. `hint` (a `MappedCodes`
    only): per key, the base code it likely has (`MappedCodes.code_all`; the codes are
    the same with or without it)."""
    import numpy as np

    def coded(values: Sequence[Any], hints: "npt.NDArray[np.integer[Any]] | None") -> "npt.NDArray[np.int64]":
        if hints is not None and isinstance(codes, MappedCodes):
            return codes.code_all(values, hint=hints)
        return codes.code_all(values)

    if _NONE.isdisjoint(keys):
        return coded(keys, hint)
    out = np.full(len(keys), NO_GROUP, np.int64)
    at = np.flatnonzero(np.fromiter(map(is_not, keys, repeat(None)), np.bool_, len(keys)))
    if at.size:
        out[at] = coded(list(map(keys.__getitem__, at.tolist())), None if hint is None else hint[at])
    return out


__all__: Sequence[str] = [
    "ANSWERED_NON_SUCCESS",
    "AckedLatencies",
    "CHUNK",
    "CodedSet",
    "Completions",
    "EventFacts",
    "ExpectationScan",
    "HistoryScan",
    "scan_expectations",
    "scan_history",
]
