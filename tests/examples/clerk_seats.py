"""A Clerk-like seat counter (Clerk delivers through Svix): users, organizations and their
memberships, each organization's seats counted from its memberships' events.

It verifies ``svix-id``/``svix-timestamp``/``svix-signature`` with the official ``svix``
library over the raw body (401 otherwise), then in one SQLite transaction claims the
``svix-id`` (a redelivery changes nothing) and applies the event: a welcome per new user
(``welcome:{id}``, a row of ``emails``), each user's deleted flag, and per organization its
seats: +1 on ``organizationMembership.created``, -1 on ``organizationMembership.deleted``
(``data.organization.id``; a membership's event may come before its organization's, so the
row is made by whichever comes first). ``LEAK=1`` is its broken twin: it moves the seats
before it claims the delivery, so every redelivery of a membership's event moves them again
(its other effects stay deduplicated).

Environment: ``PORT``, ``DATABASE``, ``WEBHOOK_SECRET``, ``LEAK``. Run:
``python -m tests.examples.clerk_seats``.
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
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, deleted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS orgs (id TEXT PRIMARY KEY, seats INTEGER NOT NULL DEFAULT 0);
"""

#: event type -> how it moves its organization's seats
SEATS = {"organizationMembership.created": 1, "organizationMembership.deleted": -1}


def create_app(database: str, secret: str, *, leak: bool = False) -> FastAPI:
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

    def seats(db: sqlite3.Connection, kind: str, data: dict[str, object]) -> None:
        org = data.get("organization")
        if kind in SEATS and isinstance(org, dict):
            db.execute("INSERT INTO orgs (id, seats) VALUES (?, ?) ON CONFLICT (id) DO UPDATE "
                       "SET seats = seats + excluded.seats", (org["id"], SEATS[kind]))

    def handle(headers: dict[str, str], raw: bytes) -> JSONResponse:
        try:
            hook.verify(raw, headers)
        except WebhookVerificationError:
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        event = json.loads(raw)
        kind, data = event.get("type"), event.get("data") or {}
        db = sqlite3.connect(database, isolation_level=None, timeout=30)
        try:
            db.execute("BEGIN IMMEDIATE")
            if leak:  # the twin: the seats move before the delivery is claimed
                seats(db, kind, data)
            if db.execute("INSERT OR IGNORE INTO deliveries (svix_id) VALUES (?)",
                          (headers["svix-id"],)).rowcount == 0:
                db.execute("COMMIT")
                return JSONResponse({"duplicate": True})
            if not leak:
                seats(db, kind, data)
            if kind == "user.created":
                db.execute("INSERT OR IGNORE INTO emails (business_key) VALUES (?)", (f"welcome:{data['id']}",))
                db.execute("INSERT OR IGNORE INTO users (id) VALUES (?)", (data["id"],))
            elif kind == "user.deleted":
                db.execute("INSERT INTO users (id, deleted) VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET deleted = 1",
                           (data["id"],))
            elif kind == "organization.created":
                db.execute("INSERT OR IGNORE INTO orgs (id) VALUES (?)", (data["id"],))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        finally:
            db.close()
        return JSONResponse({"ok": True})

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    return app


def main() -> None:
    """Serve on 127.0.0.1:$PORT (one readiness line once the socket listens)."""
    serve(create_app(os.environ["DATABASE"], os.environ["WEBHOOK_SECRET"], leak=os.environ.get("LEAK") == "1"))


if __name__ == "__main__":
    main()
