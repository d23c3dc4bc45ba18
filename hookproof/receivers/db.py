"""The receivers' own tables, engine setup, and the writes every strategy shares.

The observer queries (hookproof's ``sql`` observer runs exactly these):

- effects: ``SELECT business_key, amount FROM effects`` (one row per applied effect)
- state:   ``SELECT object_id, status, version FROM subscription_states``

SQLite (a file URL) runs in WAL mode with a busy timeout, and `Store.transaction`
opens ``BEGIN IMMEDIATE`` so concurrent writers queue instead of failing. PostgreSQL
runs at READ COMMITTED; uniqueness is enforced by constraints (``ON CONFLICT``).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from sqlalchemy import (
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from hookproof.receivers.business import Effect, StateChange

#: The two queries hookproof's ``sql`` observer runs.
EFFECTS_QUERY = "SELECT business_key, amount FROM effects"
STATE_QUERY = "SELECT object_id, status, version FROM subscription_states"
#: The invoices' state query (an observer's ``[observer.states] invoice``).
INVOICE_STATE_QUERY = "SELECT object_id, status, version FROM invoice_states"

#: Seconds a SQLite writer waits for the lock before "database is locked".
SQLITE_BUSY_TIMEOUT_S = 30.0

metadata = MetaData()

#: One row per applied effect (deliberately not unique: broken receivers show doubles here).
effects = Table(
    "effects", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("business_key", String(200), nullable=False, index=True),
    Column("amount", Integer, nullable=True),
    Column("event_id", String(200), nullable=True),
    Column("applied_at", Float, nullable=False),
)

#: The latest known state of each subscription.
subscription_states = Table(
    "subscription_states", metadata,
    Column("object_id", String(200), primary_key=True),
    Column("status", String(50), nullable=False),
    Column("version", Integer, nullable=False),
    Column("event_created", Integer, nullable=True),
)

#: The latest known state of each invoice (``business.invoice_state_of``).
invoice_states = Table(
    "invoice_states", metadata,
    Column("object_id", String(200), primary_key=True),
    Column("status", String(50), nullable=False),
    Column("version", Integer, nullable=False),
    Column("event_created", Integer, nullable=True),
)

#: Dedupe keys already processed (UNIQUE). Correct receivers key it by event id.
processed_events = Table(
    "processed_events", metadata,
    Column("dedupe_key", String(200), primary_key=True),
    Column("event_id", String(200), nullable=False),
    Column("processed_at", Float, nullable=False),
)

#: An append-only log of handled events with no uniqueness (check-in-code dedupe).
webhook_log = Table(
    "webhook_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(200), nullable=False, index=True),
    Column("logged_at", Float, nullable=False),
)

#: The durable inbox: verified events waiting for (or done with) processing.
inbox = Table(
    "inbox", metadata,
    Column("event_id", String(200), primary_key=True),
    Column("payload", Text, nullable=False),
    Column("state", String(20), nullable=False, index=True),  # received, processing, retry, processed, dead
    Column("attempts", Integer, nullable=False, default=0),
    Column("available_at", Float, nullable=False),
    Column("claimed_at", Float, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("received_at", Float, nullable=False),
)


def make_engine(url: str, *, pool_size: int = 20) -> Engine:
    """An engine for `url`, tuned for concurrent webhook handlers (SQLite or PostgreSQL)."""
    if url.startswith("sqlite"):
        engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size,
                               connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # let SQLAlchemy's "begin" below emit BEGIN
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlocks

        return engine
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


class Store:
    """The receiver's database: schema, transactions and the shared writes."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        self._statements: dict[tuple[object, ...], Any] = {}  # the shared writes, built once (`_statement`)
        try:
            metadata.create_all(self.engine)
        except (IntegrityError, ProgrammingError):  # another replica created it at the same moment
            metadata.create_all(self.engine)

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction (``BEGIN IMMEDIATE`` on SQLite); commits on success, rolls back on error."""
        with self.engine.begin() as conn:
            yield conn

    def dialect_insert(self, table: Table) -> Any:
        """The dialect's INSERT (it has ``on_conflict_do_nothing``/``on_conflict_do_update``)."""
        return (postgresql.insert if self.dialect == "postgresql" else sqlite.insert)(table)

    def _statement(self, key: tuple[object, ...], build: Callable[[], Any]) -> Any:
        """The statement `build()` makes, made once per `key`: the shared writes run with their
        values as parameters, so SQLAlchemy neither rebuilds them nor derives their cache key
        on every request (building the upsert took about four times its execution on SQLite)."""
        stmt = self._statements.get(key)
        if stmt is None:
            stmt = self._statements[key] = build()
        return stmt

    # ---- dedupe -----------------------------------------------------------
    def claim(self, conn: Connection, dedupe_key: str, event_id: str) -> bool:
        """Insert `dedupe_key` into ``processed_events``; False when it was already there.

        ``INSERT … ON CONFLICT DO NOTHING``: under concurrency the loser waits for the
        winner's transaction and then inserts nothing (PostgreSQL), or never overlaps it
        (SQLite ``BEGIN IMMEDIATE``).
        """
        stmt = self._statement(("claim",), lambda: self.dialect_insert(processed_events).on_conflict_do_nothing(
            index_elements=["dedupe_key"]).returning(processed_events.c.dedupe_key))
        row = conn.execute(stmt, {"dedupe_key": dedupe_key, "event_id": event_id, "processed_at": time.time()}).first()
        return row is not None  # RETURNING, not rowcount: drivers differ on it

    def is_processed(self, conn: Connection, dedupe_key: str) -> bool:
        return conn.execute(select(processed_events.c.dedupe_key).where(processed_events.c.dedupe_key == dedupe_key)).first() is not None

    # ---- effects and state -------------------------------------------------
    def apply_effect(self, conn: Connection, effect: Effect, event_id: str | None = None) -> None:
        """Record one applied effect."""
        conn.execute(self._statement(("effect",), lambda: insert(effects)),
                     {"business_key": effect.business_key, "amount": effect.amount, "event_id": event_id,
                      "applied_at": time.time()})

    def has_effect(self, conn: Connection, business_key: str) -> bool:
        return conn.execute(select(effects.c.id).where(effects.c.business_key == business_key).limit(1)).first() is not None

    def write_state(self, conn: Connection, change: StateChange, *, only_newer: bool = True,
                    event_created: int | None = None, table: Table = subscription_states) -> bool:
        """Upsert an object's state into `table` (``subscription_states``, or ``invoice_states``);
        with `only_newer`, an older or equal version is ignored.

        Returns True when the row was written.
        """
        def build() -> Any:
            stmt = self.dialect_insert(table)
            new = stmt.excluded
            return stmt.on_conflict_do_update(
                index_elements=["object_id"],
                set_={"status": new.status, "version": new.version, "event_created": new.event_created},
                where=(table.c.version < new.version) if only_newer else None,
            ).returning(table.c.object_id)

        values = {"object_id": change.object_id, "status": change.status, "version": change.version,
                  "event_created": event_created}
        return conn.execute(self._statement(("state", table, only_newer), build), values).first() is not None

    def read_state(self, conn: Connection, object_id: str) -> Any:
        """The stored state row of `object_id`, or None."""
        return conn.execute(select(subscription_states).where(subscription_states.c.object_id == object_id)).first()

    # ---- observation ---------------------------------------------------------
    def observe(self) -> dict[str, list[dict[str, Any]]]:
        """Effects and states, exactly as the two observer queries return them:
        ``{"effects": [{"business_key", "amount"}], "states": [{"object_id", "status",
        "version"}]}`` (`observe_rows`, as dicts)."""
        effect_rows, state_rows = self.observe_rows()
        eff = [{"business_key": key, "amount": amount} for key, amount in effect_rows]
        states = [{"object_id": obj, "status": status, "version": version} for obj, status, version in state_rows]
        return {"effects": eff, "states": states}

    def observe_rows(self) -> tuple[Sequence[tuple[str, int | None]], Sequence[tuple[str, str, int]]]:
        """The rows of the two observer queries as the driver returns them: ``(business_key,
        amount)`` per effect, ``(object_id, status, version)`` per state. Read on the
        driver's own cursor (one pooled connection, rolled back after): explore reads after
        every step, and SQLAlchemy's rows cost about three times the read itself once a
        shared receiver holds a few hundred rows."""
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute(EFFECTS_QUERY)
                eff: Sequence[tuple[str, int | None]] = cursor.fetchall()
                cursor.execute(STATE_QUERY)
                states: Sequence[tuple[str, str, int]] = cursor.fetchall()
            finally:
                cursor.close()
            raw.rollback()
        finally:
            raw.close()
        return eff, states

    def dispose(self) -> None:
        self.engine.dispose()


#: Database errors worth retrying (lock timeouts, dropped connections, serialization failures).
TRANSIENT_DB_ERRORS: tuple[type[Exception], ...] = (OperationalError,)
