"""A broken Mercado Pago receiver: `mercadopago_fetch` checking for an effect, then inserting it.

It verifies, fetches and records each notification id like the reference receiver, but its
effects table has no unique key and no transaction holds the database: for each effect the
payment implies it looks the business key up, and inserts it when absent. Sequentially that
is once per key; two notifications of one payment handled together (a Pix payment's
``payment.created`` and ``payment.updated`` arriving at once: both fetches read it approved)
both find no license and both insert one (the window between check and insert widened to
50 ms, as a slow database makes it). Run as ``python -m tests.examples.mp_check_then_insert``
with the reference receiver's environment.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import examples.receivers.mercadopago_fetch as reference

#: The check-then-insert window (seconds).
WINDOW_S = 0.05


class _CheckThenInsert:
    """A connection whose effect inserts look the key up first, outside any transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        if sql.startswith("INSERT OR IGNORE INTO effects"):
            key = params[0]
            if self.db.execute("SELECT 1 FROM effects WHERE business_key = ?", (key,)).fetchone() is None:
                time.sleep(WINDOW_S)
                return self.db.execute("INSERT INTO effects (business_key, amount, notification_id) VALUES (?, ?, ?)",
                                       params)
            return self.db.execute("SELECT 0")
        return self.db.execute(sql, params)


class Unlocked:
    """`reference.Transaction` without ``BEGIN IMMEDIATE``: each statement commits alone."""

    def __init__(self, database: str) -> None:
        self.db = sqlite3.connect(database, isolation_level=None, timeout=30)

    def __enter__(self) -> _CheckThenInsert:
        return _CheckThenInsert(self.db)

    def __exit__(self, *_: object) -> None:
        self.db.close()


if __name__ == "__main__":
    reference.SCHEMA = reference.SCHEMA.replace(
        "CREATE UNIQUE INDEX IF NOT EXISTS effects_once ON effects (business_key) WHERE notification_id IS NOT NULL;\n",
        "")
    reference.Transaction = Unlocked  # type: ignore[assignment,misc]
    reference.main()
