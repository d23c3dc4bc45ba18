"""The history: every attempt, recorded as an invocation with exactly one completion.

As in Jepsen: `ok` (a 2xx came back; the receiver must eventually show the effect),
`fail` (known not to have reached the handler, or a 4xx to a delivery the contract says
must be rejected), `unknown` (the answer was lost, read timeout after the body was sent,
reset after sending, any 5xx, receiver killed). Fault-injector operations are recorded
in the same history as `FaultOp`s.

Stored in SQLite (WAL mode on disk, or ``:memory:``); `History.attempts()` reads it back
whole, `HistoryFile` streams a saved one from disk.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
import threading
import time
from array import array
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Sequence, overload

from hookproof.simulator.frozen import fast_init

#: Bytes of each answer kept in the history.
RESPONSE_EXCERPT_BYTES = 2048


class Outcome(StrEnum):
    """What happened to one attempt, as the provider saw it."""

    ACKED = "acked"  # a success status (profile's definition, usually 2xx)
    REJECTED = "rejected"  # 4xx, or 3xx (redirects are not followed), or another non-success
    SERVER_ERROR = "server_error"  # 5xx
    TIMEOUT = "timeout"  # no answer within the sender timeout after the request was sent
    DROPPED = "dropped"  # the receiver answered; the provider discarded the answer (fault)
    CONNECTION_ERROR = "connection_error"  # refused, reset, closed or garbage


class Completion(StrEnum):
    """Jepsen's three-valued completion of an invocation."""

    OK = "ok"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One HTTP transport of one delivery of one event.

    Attributes:
        event_id: the provider's event id (the dedupe key the provider documents).
        delivery_id: id of the delivery (one event may have several deliveries: copies).
        attempt: 1-based attempt number within the delivery (retries increase it).
        business_key: the effect the event must cause, or None.
        object_id / object_version: the object the event is about and its version.
        event_type: the provider's event-type name.
        faults: fault tags applied to this attempt (``"drop-response"``, ``"forged"``…).
        valid: True when the provider's official verifier would accept this request and
            the receiver's contract says it must be applied (not forged, stale, foreign…).
        sent_at / answered_at: wall-clock unix seconds.
        status: HTTP status, or None when none was read.
        outcome / completion: see `Outcome` and `Completion`.
        latency_ms: milliseconds from the first byte sent to the answer (or the give-up).
        response_excerpt: the first 2 KiB of the answer body, decoded leniently.
        error: a plain-words description of a transport failure, or None.
        amount: minor units moved by the effect, or None.
        scenario: the scenario or run label this attempt belongs to.
    """

    event_id: str
    delivery_id: str
    attempt: int
    business_key: str | None
    object_id: str | None
    object_version: int | None
    event_type: str
    faults: tuple[str, ...]
    valid: bool
    sent_at: float
    answered_at: float
    status: int | None
    outcome: Outcome
    completion: Completion
    latency_ms: float
    response_excerpt: str = ""
    error: str | None = None
    amount: int | None = None
    scenario: str = ""
    index: int = -1  # position in the history, set when recorded

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["faults"] = list(self.faults)
        d["outcome"] = self.outcome.value
        d["completion"] = self.completion.value
        return d


#: `Attempt(...)` without its frozen ``__init__`` (`simulator.frozen.fast_init`: 1.0 against 4.5 µs).
_new_attempt = fast_init(Attempt)


def new_attempt(event_id: str, delivery_id: str, attempt: int, business_key: str | None, object_id: str | None,
                object_version: int | None, event_type: str, faults: tuple[str, ...], valid: bool, sent_at: float,
                answered_at: float, status: int | None, outcome: Outcome, completion: Completion,
                latency_ms: float, response_excerpt: str, error: str | None, amount: int | None, scenario: str,
                index: int) -> Attempt:
    """`Attempt(...)` with every field given in order, built without the frozen ``__init__``.

    The same value (equal, frozen, same repr and hash; `simulator.frozen.fast_init`),
    for the paths that make one per attempt: the dispatcher's record and a history
    file's rows.
    """
    return _new_attempt(event_id, delivery_id, attempt, business_key, object_id, object_version, event_type, faults,
                        valid, sent_at, answered_at, status, outcome, completion, latency_ms, response_excerpt, error,
                        amount, scenario, index)


@dataclass(frozen=True)
class FaultOp:
    """A fault injector operation in the same history (Jepsen's nemesis process).

    `op` is e.g. ``"kill"``, ``"pause"``, ``"resume"``, ``"restart"``, ``"heal"``.
    """

    op: str
    target: str
    at: float
    detail: str = ""
    scenario: str = ""


def completion_for(outcome: Outcome, *, valid: bool, request_sent: bool) -> Completion:
    """Jepsen completion of an attempt from its outcome (DESIGN.md, History).

    A 4xx is `fail` (the contract defines it as a no-op); a 5xx, a timeout, a dropped
    answer or a failure after the request was fully sent are `unknown`; a connection
    failure before the request was fully written is `fail`.
    """
    if outcome is Outcome.ACKED:
        return Completion.OK
    if outcome is Outcome.REJECTED:
        return Completion.FAIL
    if outcome is Outcome.CONNECTION_ERROR and not request_sent:
        return Completion.FAIL
    return Completion.UNKNOWN


_SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    idx INTEGER PRIMARY KEY,
    scenario TEXT NOT NULL,
    event_id TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    business_key TEXT,
    object_id TEXT,
    object_version INTEGER,
    event_type TEXT NOT NULL,
    faults TEXT NOT NULL,
    valid INTEGER NOT NULL,
    sent_at REAL NOT NULL,
    answered_at REAL NOT NULL,
    status INTEGER,
    outcome TEXT NOT NULL,
    completion TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    response_excerpt TEXT NOT NULL,
    error TEXT,
    amount INTEGER
);
CREATE TABLE IF NOT EXISTS fault_ops (
    idx INTEGER PRIMARY KEY,
    scenario TEXT NOT NULL,
    op TEXT NOT NULL,
    target TEXT NOT NULL,
    at REAL NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: The table of a report's findings, kept apart from the report's meta value (`HistoryFile.set_report`):
#: a row per finding, in the report's order: its scenario's and its check's positions in the
#: report, its check's id, and the finding as JSON text (report.json's form, one line:
#: ``json_extract(finding, '$.key')`` reads it, as ``json_extract`` reads every meta value).
_FINDINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS findings (
    idx INTEGER PRIMARY KEY,
    scenario_pos INTEGER NOT NULL,
    check_pos INTEGER NOT NULL,
    check_id TEXT NOT NULL,
    finding TEXT NOT NULL
);
"""
_SCHEMA += _FINDINGS_SCHEMA
_INSERT_FINDING = "INSERT INTO findings (scenario_pos, check_pos, check_id, finding) VALUES (?, ?, ?, ?)"
#: How much of a large meta value (`HistoryFile.set_meta_json`) goes into its row at a time.
_META_CHUNK_BYTES = 1 << 20

_INSERT_ATTEMPT = (
    "INSERT INTO attempts (idx, scenario, event_id, delivery_id, attempt, business_key, object_id, object_version,"
    " event_type, faults, valid, sent_at, answered_at, status, outcome, completion, latency_ms, response_excerpt,"
    " error, amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_COLUMNS = (
    "scenario", "event_id", "delivery_id", "attempt", "business_key", "object_id",
    "object_version", "event_type", "faults", "valid", "sent_at", "answered_at", "status",
    "outcome", "completion", "latency_ms", "response_excerpt", "error", "amount",
)


class History:
    """An append-only, thread-safe record of attempts and fault operations.

    `History()` keeps it in memory; `History(path)` also writes SQLite in WAL mode.
    Attempt rows are written in batches (one ``executemany``) and committed every
    `COMMIT_EVERY` records or `COMMIT_INTERVAL_S` seconds, whenever the history is read
    (`attempts()`, `ops()`), with every fault operation or meta value, and on
    `flush()`/`close()`: an interrupted run leaves a readable file, and reading a
    history never misses a row in its file. A write SQLite refuses (disk full, a
    locked file) is rolled back whole and raised; what it held stays pending and is
    written by the next commit, never twice.
    """

    COMMIT_EVERY = 256
    COMMIT_INTERVAL_S = 0.25

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._attempts: list[Attempt] = []
        self._ops: list[FaultOp] = []
        self._meta: dict[str, object] = {}
        self._closed = False
        #: Attempts before this index are in the file; those from it on are pending (`_commit`).
        self._written = 0
        self._statements: list[tuple[str, tuple[object, ...]]] = []  # pending fault-op and meta writes
        self._last_commit = time.monotonic()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.commit()
            self._attempts = list(self._read_attempts())
            self._written = len(self._attempts)
            self._ops = list(self._read_ops())
            self._meta = {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}

    # ---- writing ------------------------------------------------------------
    def record(self, attempt: Attempt) -> Attempt:
        """Append `attempt`; returns it with its `index` set.

        An attempt built with ``index=len(history)`` is stored as it is (attempts are
        values: nothing is copied on the dispatcher's path); any other is copied with
        the right index. On disk, rows are written in batches (see the class docstring).
        """
        with self._lock:
            idx = len(self._attempts)
            stored = attempt if attempt.index == idx else replace(attempt, index=idx)
            self._attempts.append(stored)
            if self._db is not None and not self._closed and (
                    idx + 1 - self._written >= self.COMMIT_EVERY
                    or time.monotonic() - self._last_commit >= self.COMMIT_INTERVAL_S):
                self._commit()
            return stored

    def record_new(self, event_id: str, delivery_id: str, attempt: int, business_key: str | None,
                   object_id: str | None, object_version: int | None, event_type: str, faults: tuple[str, ...],
                   valid: bool, sent_at: float, answered_at: float, status: int | None, outcome: Outcome,
                   completion: Completion, latency_ms: float, response_excerpt: str, error: str | None,
                   amount: int | None, scenario: str) -> Attempt:
        """Append the attempt of these fields (`Attempt`'s, in order, all but `index`);
        returns it with its `index` set.

        What ``record(new_attempt(..., index=len(history)))`` stores, in one step for the
        dispatcher's path: the `Attempt` built at its index under the lock; on disk, its
        row is made from it when its batch is written (`_commit`).
        """
        with self._lock:
            idx = len(self._attempts)
            stored = _new_attempt(event_id, delivery_id, attempt, business_key, object_id, object_version, event_type,
                                  faults, valid, sent_at, answered_at, status, outcome, completion, latency_ms,
                                  response_excerpt, error, amount, scenario, idx)
            self._attempts.append(stored)
            if self._db is not None and not self._closed and (
                    idx + 1 - self._written >= self.COMMIT_EVERY
                    or time.monotonic() - self._last_commit >= self.COMMIT_INTERVAL_S):
                self._commit()
            return stored

    def record_op(self, op: FaultOp) -> None:
        """Append a fault-injector operation (written to the file at once, with the
        attempts recorded before it)."""
        with self._lock:
            self._ops.append(op)
            if self._db is not None and not self._closed:
                self._statements.append((
                    "INSERT INTO fault_ops (idx, scenario, op, target, at, detail) VALUES (?, ?, ?, ?, ?, ?)",
                    (len(self._ops) - 1, op.scenario, op.op, op.target, op.at, op.detail),
                ))
                self._commit()

    def set_meta(self, key: str, value: object) -> None:
        """Store a JSON-serialisable run attribute (profile, seed, partial flag…)."""
        with self._lock:
            self._meta[key] = json.loads(json.dumps(value))
            if self._db is not None and not self._closed:
                self._statements.append(("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                         (key, json.dumps(value))))
                self._commit()

    def flush(self) -> None:
        """Write and commit what is recorded so far to the file (no-op in memory)."""
        with self._lock:
            if self._db is not None and not self._closed:
                self._commit()

    def _commit(self) -> None:
        """Write the pending attempt rows (one ``executemany`` over the attempts not yet
        written, each row made as SQLite reads it: no row is held between commits, so the
        rows of a batch are not objects the garbage collector counts and walks while it
        fills), then the pending fault operations and meta values, and commit; lock held.

        All or nothing: if SQLite raises part-way, the transaction is rolled back and
        everything stays pending (a later commit writes it, no row twice), and the error
        is raised.
        """
        db = self._db
        assert db is not None
        try:
            written = len(self._attempts)
            if written > self._written:
                db.executemany(_INSERT_ATTEMPT, map(_row, self._attempts[self._written:written]))
            for sql, params in self._statements:
                db.execute(sql, params)
            db.commit()
        except BaseException:
            db.rollback()
            raise
        self._written = written
        self._statements = []
        self._last_commit = time.monotonic()

    def _flush_rows(self) -> None:
        """Write pending rows before a read, so the file holds everything read; lock held."""
        if (len(self._attempts) > self._written or self._statements) and self._db is not None and not self._closed:
            self._commit()

    # ---- reading ------------------------------------------------------------
    def attempts(self, scenario: str | None = None) -> list[Attempt]:
        """Recorded attempts in order (only `scenario`'s when given)."""
        with self._lock:
            self._flush_rows()
            if scenario is None:
                return list(self._attempts)
            return [a for a in self._attempts if a.scenario == scenario]

    def ops(self, scenario: str | None = None) -> list[FaultOp]:
        with self._lock:
            self._flush_rows()
            return [o for o in self._ops if scenario is None or o.scenario == scenario]

    def meta(self) -> dict[str, object]:
        with self._lock:
            return dict(self._meta)

    def __len__(self) -> int:
        return len(self._attempts)

    def __iter__(self) -> Iterator[Attempt]:
        return iter(self.attempts())

    def close(self) -> None:
        """Commit, checkpoint the WAL into the database file, and close it (closed even
        when the last commit fails; its error is raised)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._db is not None:
                try:
                    self._commit()
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    self._db.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_attempts(self) -> Iterator[Attempt]:
        assert self._db is not None
        cur = self._db.execute(f"SELECT idx, {', '.join(_COLUMNS)} FROM attempts ORDER BY idx")
        for row in cur:
            d = dict(zip(("index", *_COLUMNS), row))
            d["faults"] = tuple(json.loads(d["faults"]))
            d["valid"] = bool(d["valid"])
            d["outcome"] = Outcome(d["outcome"])
            d["completion"] = Completion(d["completion"])
            yield Attempt(**d)

    def _read_ops(self) -> Iterator[FaultOp]:
        assert self._db is not None
        for scenario, op, target, at, detail in self._db.execute(
            "SELECT scenario, op, target, at, detail FROM fault_ops ORDER BY idx"
        ):
            yield FaultOp(op=op, target=target, at=at, detail=detail, scenario=scenario)


#: `Attempt.faults` as stored (JSON), per tuple of tags: few distinct tuples occur.
_FAULTS_JSON: dict[tuple[str, ...], str] = {}


def _faults_json(tags: tuple[str, ...]) -> str:
    """`tags` as stored (JSON), kept for the next attempt with the same tags."""
    faults = _FAULTS_JSON.get(tags)
    if faults is None:
        faults = json.dumps(list(tags))
        if len(_FAULTS_JSON) < 1024:
            _FAULTS_JSON[tags] = faults
    return faults


def _storable(error: str) -> str:
    """An error's text as SQLite can store it. It may quote what a receiver sent, decoded
    with lone surrogates (aiohttp's pure-Python parser does): SQLite cannot store those;
    '?' stands in."""
    return error.encode("utf-8", "replace").decode("utf-8")


def _row(a: Attempt) -> tuple[object, ...]:
    """`a` as a row of `_INSERT_ATTEMPT`."""
    tags = a.faults if isinstance(a.faults, tuple) else tuple(a.faults)
    error = a.error
    if error is not None and not error.isascii():
        error = _storable(error)
    return (a.index, a.scenario, a.event_id, a.delivery_id, a.attempt, a.business_key, a.object_id, a.object_version,
            a.event_type, _faults_json(tags), int(a.valid), a.sent_at, a.answered_at, a.status,
            _OUTCOME_TEXT[a.outcome], _COMPLETION_TEXT[a.completion], a.latency_ms, a.response_excerpt, error,
            a.amount)


#: `Outcome` and `Completion` values as stored (`.value` is a Python-level property).
_OUTCOME_TEXT: dict[Outcome, str] = {o: o.value for o in Outcome}
_COMPLETION_TEXT: dict[Completion, str] = {c: c.value for c in Completion}


#: Rows fetched per step when a `HistoryFile` streams its attempts.
STREAM_ROWS = 4096
_OUTCOMES: dict[str, Outcome] = {o.value: o for o in Outcome}
_COMPLETIONS: dict[str, Completion] = {c.value: c for c in Completion}
_SELECT_ATTEMPTS = (
    "SELECT event_id, delivery_id, attempt, business_key, object_id, object_version, event_type, faults, valid,"
    " sent_at, answered_at, status, outcome, completion, latency_ms, response_excerpt, error, amount, scenario, idx"
    " FROM attempts"
)
#: The fields `HistoryFile.column_chunks` reads, in its order.
CHUNK_COLUMNS: tuple[str, ...] = ("event_id", "business_key", "valid", "completion", "outcome", "status",
                                  "latency_ms", "amount", "object_id", "delivery_id")


class HistoryFile(Sequence[Attempt]):
    """A saved history read from disk, never whole: its attempts as a sequence, and its meta.

    Iterating streams the attempts in history order (``idx``) through one SQLite cursor,
    `STREAM_ROWS` rows at a time, so a million attempts cost the memory of a few
    thousand; `file[i]` and `file[i:j]` read the rows asked for. Each attempt is rebuilt
    as `History` reads it (its `index` is its ``idx``). Unlike `History`, opening the
    file reads nothing: the storm's checks stream a history of millions of attempts
    this way (`scenarios.history_scan.scan_history`, through `column_chunks`). The length is read once at opening:
    attempts recorded afterwards by another writer are not seen. Raises FileNotFoundError
    when `path` is not a file; sqlite3.Error when it is not a history.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no history file at {self.path}")
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        n, low, high = self._db.execute("SELECT count(*), min(idx), max(idx) FROM attempts").fetchone()
        self._len: int = n
        #: True when the attempts' indexes are 0 … len - 1 (as `History` and a storm's
        #: spool write them): attempt `i` is `file[i]`, and its `index` is `i`.
        self.indexes_are_positions = n == 0 or (low == 0 and high == n - 1)
        self._faults: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return int(self._len)

    def __iter__(self) -> Iterator[Attempt]:
        cur = self._db.execute(_SELECT_ATTEMPTS + " ORDER BY idx")
        make = self._attempt
        while rows := cur.fetchmany(STREAM_ROWS):
            for row in rows:
                yield make(row)

    def column_chunks(self, rows: int = STREAM_ROWS) -> Iterator[tuple[tuple[Any, ...], ...]]:
        """The attempts' fields the checks' scan reads, `rows` attempts at a time in
        history order, as columns (no `Attempt` built): per chunk a tuple of `CHUNK_COLUMNS`
        tuples, raw as stored (``valid`` 0/1, ``completion`` and ``outcome`` their values)."""
        cur = self._db.execute(f"SELECT {', '.join(CHUNK_COLUMNS)} FROM attempts ORDER BY idx")
        while chunk := cur.fetchmany(rows):
            yield tuple(zip(*chunk))

    def acked_latencies(self) -> "array[float]":
        """The latency (ms) of every acked attempt (outcome ``acked``, valid or not), in
        history order: what the checks' scan keeps of `column_chunks`' latencies, read again
        from disk on each call (a storm's checks read them only for ``ack_latency``)."""
        out: array[float] = array("d")
        cur = self._db.execute("SELECT latency_ms FROM attempts WHERE outcome = ? ORDER BY idx", (Outcome.ACKED.value,))
        while rows := cur.fetchmany(STREAM_ROWS):
            out.extend([row[0] for row in rows])
        return out

    @overload
    def __getitem__(self, i: int) -> Attempt: ...

    @overload
    def __getitem__(self, i: slice) -> list[Attempt]: ...

    def __getitem__(self, i: int | slice) -> Attempt | list[Attempt]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            if step != 1 or not self.indexes_are_positions:
                return [self[j] for j in range(start, stop, step)]
            rows = self._db.execute(_SELECT_ATTEMPTS + " WHERE idx >= ? AND idx < ? ORDER BY idx", (start, stop))
            return [self._attempt(row) for row in rows]
        n = self._len
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"attempt {i} out of range (the history holds {n})")
        if self.indexes_are_positions:
            row = self._db.execute(_SELECT_ATTEMPTS + " WHERE idx = ?", (j,)).fetchone()
        else:
            row = self._db.execute(_SELECT_ATTEMPTS + " ORDER BY idx LIMIT 1 OFFSET ?", (j,)).fetchone()
        if row is None:
            raise IndexError(f"attempt {i} is not in {self.path.name}")
        return self._attempt(row)

    def _attempt(self, row: tuple[Any, ...]) -> Attempt:
        """The Attempt of one `_SELECT_ATTEMPTS` row (its faults' JSON decoded once per distinct text)."""
        faults = self._faults.get(row[7])
        if faults is None:
            faults = self._faults[row[7]] = tuple(json.loads(row[7]))
        return new_attempt(row[0], row[1], row[2], row[3], row[4], row[5], row[6], faults, bool(row[8]), row[9],
                           row[10], row[11], _OUTCOMES[row[12]], _COMPLETIONS[row[13]], row[14], row[15], row[16],
                           row[17], row[18], row[19])

    def meta(self) -> dict[str, object]:
        """The run attributes stored with the history (`History.set_meta`)."""
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}

    def set_meta(self, key: str, value: object) -> None:
        """Store a JSON-serialisable run attribute, committed at once (as `History.set_meta`)."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def set_meta_json(self, key: str, pieces: Iterable[str]) -> None:
        """Store a run attribute already written as JSON text, given in `pieces` (joined, what
        `json.dumps` writes), committed at once. A large one is neither built as values nor
        held as one text: the pieces go to a temporary file beside the history, then into the
        row a megabyte at a time through SQLite's incremental blob I/O. The value stays TEXT,
        as every other meta value (SQLite builds the zero-filled text of its length once; a
        BLOB would spare it, but outside tools' ``json_extract`` reads a BLOB as JSONB and
        fails): a value of many megabytes (a storm's findings) belongs in rows of its own
        (`set_report`)."""
        with self._spilled(pieces) as (spill, size), self._db:
            self._put_meta_json(key, spill, size)

    def set_report(self, key: str, pieces: Iterable[str],
                   findings: Iterable[tuple[int, int, str, str]] | None) -> int:
        """Store a run's report: its findings as the rows of the ``findings`` table, each
        ``(scenario_pos, check_pos, check_id, finding)`` (the positions of its scenario in the
        report and of its check in the scenario, its check's id, the finding as JSON text),
        inserted as `findings` yields them, in place of the rows stored before (None: the rows
        already stored are the report's, `add_findings`); the rest of it as the meta value
        `key` (JSON text in `pieces`, as `set_meta_json` stores it); and the rows' count as the
        meta value ``<key>_findings``. One transaction, committed at once: a reader sees the
        report and its rows of one call, never a mix. Returns the count."""
        with self._spilled(pieces) as (spill, size):
            self._db.executescript(_FINDINGS_SCHEMA)  # a history written before the table existed
            with self._db:
                if findings is None:
                    count = int(self._db.execute("SELECT count(*) FROM findings").fetchone()[0])
                else:
                    self._db.execute("DELETE FROM findings")
                    count = max(0, self._db.executemany(_INSERT_FINDING, findings).rowcount)
                self._put_meta_json(key, spill, size)
                self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                 (f"{key}_findings", json.dumps(count)))
        return count

    def clear_findings(self) -> None:
        """Delete every row of the ``findings`` table (creating it in a history written before
        it existed), committed at once: before a report's findings are added (`add_findings`)."""
        self._db.executescript(_FINDINGS_SCHEMA)
        with self._db:
            self._db.execute("DELETE FROM findings")

    def findings_stored(self) -> int:
        """How many rows the ``findings`` table holds (0 in a history written before it existed)."""
        try:
            (count,) = self._db.execute("SELECT count(*) FROM findings").fetchone()
        except sqlite3.OperationalError:  # no such table
            return 0
        return int(count)

    def add_findings(self, rows: Iterable[tuple[int, int, str, str]]) -> tuple[int, int]:
        """Append `rows` to the ``findings`` table (as `set_report` takes them), inserted as
        they are yielded, committed at once; (the first row's ``idx``, how many): the rows are
        ``idx`` first … first + count - 1 (`clear_findings` first: the table holds no other
        writer's rows). A report whose findings are stored so is stored with
        ``set_report(key, pieces, None)``."""
        self._db.executescript(_FINDINGS_SCHEMA)
        with self._db:
            (last,) = self._db.execute("SELECT coalesce(max(idx), 0) FROM findings").fetchone()
            count = max(0, self._db.executemany(_INSERT_FINDING, rows).rowcount)
        return int(last) + 1, count

    @contextlib.contextmanager
    def _spilled(self, pieces: Iterable[str]) -> Iterator[tuple[IO[bytes], int]]:
        """`pieces` written (UTF-8) to a temporary file beside the history: (the file, at its
        start, and its size in bytes), removed on leaving."""
        with tempfile.TemporaryFile(dir=self.path.parent, prefix=".meta-") as spill:
            for piece in pieces:
                spill.write(piece.encode("utf-8"))
            size = spill.tell()
            spill.seek(0)
            yield spill, size

    def _put_meta_json(self, key: str, spill: IO[bytes], size: int) -> None:
        """Insert the meta value `key` of `size` bytes of JSON text read from `spill`, a
        megabyte at a time (in the caller's transaction)."""
        row = self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, CAST(zeroblob(?) AS TEXT))",
                               (key, size)).lastrowid
        if size:
            assert row is not None
            with self._db.blobopen("meta", "value", row) as value:
                while chunk := spill.read(_META_CHUNK_BYTES):
                    value.write(chunk)

    def close(self) -> None:
        """Checkpoint the WAL into the database file and close it."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._db.close()

    def __enter__(self) -> "HistoryFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_history(path: str | Path) -> History:
    """Open a saved history file for reading. Raises FileNotFoundError if absent."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no history file at {p}")
    return History(p)


__all__: Sequence[str] = [
    "Attempt", "Completion", "FaultOp", "History", "HistoryFile", "Outcome", "completion_for", "load_history",
    "new_attempt",
]
