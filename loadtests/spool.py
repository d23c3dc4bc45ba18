"""The master's spool: the workers' attempts and events, on disk as they arrive.

Workers stream their records in chunks while the storm runs (`loadtests.storm_worker`);
the master appends each chunk to the storm's ``history.sqlite`` at once (a staging table
and an events table beside the history's own), so its memory stays flat however long
the storm runs. When the storm ends, `Spool.finalize` moves the staged attempts into the
history's ``attempts`` table in send order (``sent_at``, delivery id, attempt number:
the order a local storm records them in), inside SQLite; the checks then read the
history from disk in one pass (`simulator.delivery.history.HistoryFile`).

Events are kept once per id (a retry, a duplicate or another worker sending the same
event adds nothing): each chunk's events are staged as they come, in a table with no
index (appending is a few times cheaper than inserting into the id index at random
places, a cost that grew with the storm and was paid while the storm sends), and
`Spool.finalize` keeps the first one received of each id in ``storm_events``, inserted
in id order. Pure: no Locust import; one SQLite connection, used from one
greenlet or thread at a time.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import orjson

from hookproof.loadtests.records import COLUMNS, EVENT_FIELDS, event_from_wire
from hookproof.simulator.delivery.history import Attempt, History
from hookproof.simulator.events import Event

_FAULTS = COLUMNS.index("faults")
_VALID = COLUMNS.index("valid")
_FLOATS = tuple(COLUMNS.index(name) for name in ("sent_at", "answered_at", "latency_ms"))
_ERROR = COLUMNS.index("error")
#: Distinct fault-tag lists whose stored JSON `_stored` keeps (a storm has a few dozen).
_FAULTS_KEPT = 4096

#: `json.dumps(..., sort_keys=True)` of an event's wire dict, the encoder built once.
_ENCODE = json.JSONEncoder(sort_keys=True).encode


def _encoded(event: Mapping[str, Any]) -> str:
    """An event's wire dict as stored: JSON with sorted keys, by orjson (several times
    faster: the master stores every distinct event a storm sends), or by `_ENCODE` for
    what orjson refuses (an integer past 64 bits, a lone surrogate). Raises TypeError or
    ValueError for what neither encodes."""
    try:
        return orjson.dumps(event, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except orjson.JSONEncodeError:
        return _ENCODE(event)

#: Event fields whose values repeat across a storm's events (`Spool.events` shares them).
_FEW_VALUES: tuple[str, ...] = ("type", "object_type", "currency", "status", "account", "api_version")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS storm_incoming ({", ".join(COLUMNS)});
CREATE TABLE IF NOT EXISTS storm_events (id TEXT PRIMARY KEY, wire TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS storm_events_incoming (id TEXT NOT NULL, wire TEXT NOT NULL);
"""
_STAGE = f"INSERT INTO storm_incoming ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_MOVE = (f"INSERT INTO attempts (idx, {', '.join(COLUMNS)}) "
         f"SELECT row_number() OVER (ORDER BY sent_at, delivery_id, attempt) - 1, {', '.join(COLUMNS)} "
         f"FROM storm_incoming ORDER BY sent_at, delivery_id, attempt")
#: The staged events, the first received of each id (`rowid` order within an id), into the events table.
_MOVE_EVENTS = ("INSERT OR IGNORE INTO storm_events (id, wire) "
                "SELECT id, wire FROM storm_events_incoming ORDER BY id, rowid")


def _row(wire: Mapping[str, Any], faults_json: dict[tuple[str, ...], str]) -> list[object]:
    """A staged row of an `Attempt.to_dict` dict. Raises KeyError/TypeError/ValueError on a bad one."""
    return _stored([wire[name] for name in COLUMNS], faults_json)


def _stored(row: list[Any], faults_json: dict[tuple[str, ...], str]) -> list[object]:
    """`row` (the `COLUMNS` values, `records.attempt_row`'s shape) as staged: the faults
    as JSON (kept per distinct tag list in `faults_json`), valid as 0/1, times as floats.
    Raises TypeError/ValueError on a bad one."""
    if len(row) != len(COLUMNS):
        raise ValueError(f"{len(row)} values, not {len(COLUMNS)}")
    faults = row[_FAULTS]
    if not isinstance(faults, (list, tuple)):
        raise TypeError("faults: not a list of strings")
    key = tuple(faults)
    text = faults_json.get(key)
    if text is None:
        if not all(isinstance(t, str) for t in key):
            raise TypeError("faults: not a list of strings")
        if len(faults_json) >= _FAULTS_KEPT:
            faults_json.clear()
        text = faults_json[key] = json.dumps(list(key))
    row[_FAULTS] = text
    row[_VALID] = int(bool(row[_VALID]))
    for i in _FLOATS:
        row[i] = float(row[i])
    error = row[_ERROR]
    if isinstance(error, str) and not error.isascii():
        row[_ERROR] = error.encode("utf-8", "replace").decode("utf-8")  # as the history stores it
    return row


class Spool:
    """The storm's attempts and events, appended to `path` (the history file) as they come.

    Creating a spool removes any older file at `path` and creates the history's tables.
    Raises sqlite3.Error when the file cannot be written.
    """

    #: Whether `add` staged events since they were last merged into ``storm_events``.
    _events_staged = False

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(path.name + "*"):
            stale.unlink()
        History(path).close()  # the history's own schema
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()
        self.attempts = 0  # staged so far
        self._finalized = False
        self._faults_json: dict[tuple[str, ...], str] = {}

    def add(self, attempts: Iterable[Mapping[str, Any]], events: Iterable[Mapping[str, Any]], *,
            rows: Iterable[Sequence[Any]] = ()) -> list[str]:
        """Append one chunk: attempts as `Attempt.to_dict` dicts and/or `rows` (the
        `records.COLUMNS` values of each, `records.attempt_row`), events as `event_to_wire`
        dicts. Returns the problems of malformed records (skipped, never raised), each
        naming the record's kind and the error."""
        problems: list[str] = []
        staged: list[list[object]] = []
        faults_json = self._faults_json
        for raw in attempts:
            try:
                staged.append(_row(raw, faults_json))
            except (KeyError, TypeError, ValueError) as exc:
                problems.append(f"bad attempt record ({type(exc).__name__}: {exc})")
        for values in rows:
            try:
                if not isinstance(values, (list, tuple)):
                    raise TypeError(f"a row is a list, not {type(values).__name__}")
                staged.append(_stored(list(values), faults_json))
            except (TypeError, ValueError) as exc:
                problems.append(f"bad attempt record ({type(exc).__name__}: {exc})")
        evs: list[tuple[str, str]] = []
        for raw in events:
            try:
                if type(raw) is dict:  # checked as `event_from_wire` does, without building the Event
                    missing = next((name for name in EVENT_FIELDS if name not in raw), None)
                    if missing is not None:
                        raise KeyError(missing)
                    evs.append((raw["id"], _encoded(raw)))
                else:
                    evs.append((event_from_wire(raw).id, _encoded(dict(raw))))
            except (KeyError, TypeError, ValueError) as exc:
                problems.append(f"bad event record ({type(exc).__name__}: {exc})")
        with self._db:
            if staged:
                self._db.executemany(_STAGE, staged)
            if evs:
                self._db.executemany("INSERT INTO storm_events_incoming (id, wire) VALUES (?, ?)", evs)
                self._events_staged = True
        self.attempts += len(staged)
        return problems

    def finalize(self) -> None:
        """Move the staged attempts into the history's ``attempts`` table in send order,
        and the staged events into ``storm_events``, the first received of each id; the
        staging tables go (once; later calls do nothing)."""
        if self._finalized:
            return
        with self._db:
            self._db.execute(_MOVE)
            self._db.execute("DROP TABLE storm_incoming")
            self._db.execute(_MOVE_EVENTS)
            self._db.execute("DROP TABLE storm_events_incoming")
        self._events_staged = False
        self._finalized = True

    def events(self) -> Iterator[Event]:
        """Every event received, once each (slim, as `records.event_from_wire`).

        The values few events differ in (type, object type, currency, status, account,
        API version) are shared between the events rather than decoded once per event:
        a storm keeps every event until its checks ran. Before `finalize`, the events staged
        so far are merged into ``storm_events`` first (the staging kept for later chunks).
        """
        if self._events_staged and not self._finalized:
            with self._db:
                self._db.execute(_MOVE_EVENTS)
                self._db.execute("DELETE FROM storm_events_incoming")
            self._events_staged = False
        shared: dict[str, str] = {}
        for (wire,) in self._db.execute("SELECT wire FROM storm_events ORDER BY id"):
            fields = json.loads(wire)
            for name in _FEW_VALUES:
                value = fields.get(name)
                if isinstance(value, str):
                    fields[name] = shared.setdefault(value, value)
            yield event_from_wire(fields)

    def event_count(self) -> int:
        """How many events the spool holds (distinct ids)."""
        return int(self._db.execute("SELECT count(*) FROM storm_events").fetchone()[0])

    def close(self) -> None:
        """Checkpoint the WAL and close the connection."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._db.close()


def attempts_on_disk(path: Path) -> list[Attempt]:
    """The history's attempts at `path`, read in one pass, in order."""
    from hookproof.simulator.delivery.history import load_history

    history = load_history(path)
    try:
        return history.attempts()
    finally:
        history.close()


__all__ = ["COLUMNS", "Spool", "attempts_on_disk"]
