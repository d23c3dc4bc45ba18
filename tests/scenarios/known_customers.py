"""A receiver that needs its customer rows first, and its seed command (for the seed hook's tests).

`KnownCustomers` is `inbox_sync` (dedupe by event id, effect in the same transaction) that
also refuses, with 400, an event whose object names a customer it has no row for in
``known_customers``, as a shop does whose customers sign up before they pay.
``python -m tests.scenarios.known_customers`` is its seed command: it reads the seed
document (`hookproof.scenarios.seeding`) on stdin and inserts every customer's id into
``known_customers`` of the SQLite database ``DATABASE_URL`` names. With
``SEED_FAIL=1`` it prints a line naming ``HOOKPROOF_SECRET`` on stderr and exits with 3.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from sqlalchemy import create_engine, text

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app
from hookproof.receivers.inbox_sync import InboxSync

TABLE = "CREATE TABLE IF NOT EXISTS known_customers (id TEXT PRIMARY KEY)"


class KnownCustomers(InboxSync):
    """inbox_sync that refuses events about customers it does not know."""

    name = "known_customers"

    def admit(self, event: WebhookEvent) -> str | None:
        refusal = super().admit(event)
        customer = event.object.get("customer")
        if refusal is None and isinstance(customer, str):
            with self.store.engine.connect() as conn:
                conn.execute(text(TABLE))
                if conn.execute(text("SELECT 1 FROM known_customers WHERE id = :id"), {"id": customer}).first() is None:
                    return f"unknown customer {customer}"
        return refusal


_apps: dict[str, Any] = {}


async def app(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI app, built on first use from ``DATABASE_URL`` and ``WEBHOOK_SECRET``."""
    key = os.environ["DATABASE_URL"]
    if key not in _apps:
        _apps[key] = make_app(KnownCustomers(ReceiverConfig.from_env()))
    await _apps[key](scope, receive, send)


def seed() -> int:
    """The seed command: every customer of the document on stdin becomes known."""
    if os.environ.get("SEED_FAIL") == "1":
        print(f"cannot seed: refused by the shop with key {os.environ.get('HOOKPROOF_SECRET')}\nsee above",
              file=sys.stderr)
        return 3
    document = json.load(sys.stdin)
    engine = create_engine(os.environ["DATABASE_URL"])
    with engine.begin() as conn:
        conn.execute(text(TABLE))
        for customer in document["objects"].get("customer", []):
            conn.execute(text("INSERT OR IGNORE INTO known_customers (id) VALUES (:id)"), {"id": customer["id"]})
    engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(seed())
