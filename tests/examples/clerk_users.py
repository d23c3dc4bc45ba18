"""A Clerk-like user sync (Clerk delivers through Svix), written for `tests/fixtures/clerk/webhooks.yaml`.

It verifies ``svix-id``/``svix-timestamp``/``svix-signature`` with the official ``svix``
library over the raw body (401 otherwise), then in one SQLite transaction: claims the
``svix-id`` (a redelivery changes nothing), sends one welcome per user (``welcome:{id}``,
a row of ``emails``), and keeps each user's row: its names, its primary email address (unique:
Clerk gives no two users one address) and deleted flag, written only by an event newer than the
stored one (``data.updated_at``; a deletion, whose stub carries the id alone, only sets the flag,
for good). ``ARRIVAL=1`` is its broken twin: each event's fields
overwrite the row in arrival order (the last to arrive wins).

Environment: ``PORT``, ``DATABASE``, ``WEBHOOK_SECRET``, ``ARRIVAL``. Run:
``python -m tests.examples.clerk_users``.
"""

from __future__ import annotations

import json
import os
import sqlite3

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from svix.webhooks import Webhook, WebhookVerificationError

from examples.receivers.catalog.invoices import serve

SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (svix_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS emails (business_key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, first_name TEXT, email TEXT UNIQUE, updated_at INTEGER NOT NULL,
                                  deleted INTEGER NOT NULL DEFAULT 0);
"""


def create_app(database: str, secret: str, *, arrival: bool = False) -> FastAPI:
    """The receiver's app (see the module docstring)."""
    with sqlite3.connect(database) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    hook = Webhook(secret)
    app = FastAPI()

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        return await run_in_threadpool(handle, dict(request.headers), raw)

    def handle(headers: dict[str, str], raw: bytes) -> JSONResponse:
        try:
            hook.verify(raw, headers)
        except WebhookVerificationError:
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        event = json.loads(raw)
        kind, user = event.get("type"), event.get("data") or {}
        db = sqlite3.connect(database, isolation_level=None, timeout=30)
        try:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("INSERT OR IGNORE INTO deliveries (svix_id) VALUES (?)",
                          (headers["svix-id"],)).rowcount == 0:
                db.execute("ROLLBACK")
                return JSONResponse({"duplicate": True})
            if kind == "user.created":
                db.execute("INSERT OR IGNORE INTO emails (business_key) VALUES (?)", (f"welcome:{user['id']}",))
            if kind in ("user.created", "user.updated"):
                guard = "" if arrival else " WHERE excluded.updated_at > users.updated_at AND users.deleted = 0"
                primary = next((e["email_address"] for e in user.get("email_addresses") or []
                                if e.get("id") == user.get("primary_email_address_id")), None)
                db.execute("INSERT INTO users (id, first_name, email, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) "
                           "DO UPDATE SET first_name = excluded.first_name, email = excluded.email, "
                           "updated_at = excluded.updated_at" + guard,
                           (user["id"], user["first_name"], primary, user["updated_at"]))
            elif kind == "user.deleted":
                db.execute("INSERT INTO users (id, updated_at, deleted) VALUES (?, 0, 1) ON CONFLICT (id) DO UPDATE "
                           "SET deleted = 1", (user["id"],))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        finally:
            db.close()
        return JSONResponse({"ok": True})

    return app


def main() -> None:
    """Serve on 127.0.0.1:$PORT (one readiness line once the socket listens)."""
    serve(create_app(os.environ["DATABASE"], os.environ["WEBHOOK_SECRET"], arrival=os.environ.get("ARRIVAL") == "1"))


if __name__ == "__main__":
    main()
