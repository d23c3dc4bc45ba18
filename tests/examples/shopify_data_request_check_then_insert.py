"""`shopify_app` whose ``customers/data_request`` handler checks, then inserts (a broken twin, for tests).

Every other topic is claimed and applied as `shopify_app` does, in one ``BEGIN IMMEDIATE``
transaction. A data request is not: the handler looks its event up (``SELECT`` in the seen
table, outside any transaction), waits 40 ms (a slow database, `WINDOW_S`), then inserts the
data report (``report:{data_request.id}``) and marks the event seen. One delivery at a time it
sends one report per request; two copies handled together (Shopify retrying a compliance
webhook whose first delivery has not answered yet, or a concurrent duplicate) both find it
unseen and both send a report (``duplicated``). Run as
``python -m tests.examples.shopify_data_request_check_then_insert`` with the reference
receiver's environment.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import examples.receivers.shopify_app as reference

#: The window between the check and the insert (seconds).
WINDOW_S = 0.04

#: The topic whose handler checks, then inserts (`run` sets another: ``orders/paid``).
TOPIC = "customers/data_request"


class _Claimed:
    """A claim's outcome as the reference handler reads it (``rowcount`` 0: a duplicate)."""

    def __init__(self, rowcount: int) -> None:
        self.rowcount = rowcount


class _CheckThenInsert:
    """A connection that opens the reference's transaction at its first statement, except for a
    data request's: its claim is a check, a wait and (after the report) a mark, each alone."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.begun = False
        self.seen: str | None = None  # the data request's event, marked seen after its report

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        # the claim names the shop, the topic and the Event-Id (`shopify_app`)
        if sql.startswith("INSERT OR IGNORE INTO events") and f":{TOPIC}:" in str(params[0]) and not self.begun:
            if self.db.execute("SELECT 1 FROM events WHERE event_id = ?", params).fetchone() is not None:
                return _Claimed(0)
            time.sleep(WINDOW_S)
            self.seen = str(params[0])
            return _Claimed(1)
        if self.seen is None and not self.begun:
            self.db.execute("BEGIN IMMEDIATE")
            self.begun = True
        return self.db.execute(sql, params)


class CheckThenInsert:
    """`reference.Transaction`, but a data request's report checked for, then inserted."""

    def __init__(self, database: str) -> None:
        self.db = sqlite3.connect(database, isolation_level=None, timeout=30)
        self.conn = _CheckThenInsert(self.db)

    def __enter__(self) -> _CheckThenInsert:
        return self.conn

    def __exit__(self, kind: object, *_: object) -> None:
        try:
            if self.conn.begun:
                self.db.execute("ROLLBACK" if kind else "COMMIT")
            elif self.conn.seen is not None and not kind:
                self.db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)", (self.conn.seen,))
        finally:
            self.db.close()


def run(topic: str = TOPIC) -> None:
    """Serve `shopify_app` from its environment, `topic`'s handler checking, then inserting."""
    global TOPIC
    TOPIC = topic
    reference.Transaction = CheckThenInsert  # type: ignore[assignment,misc]
    reference.main()


if __name__ == "__main__":
    run()
