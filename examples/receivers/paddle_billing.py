"""paddle_billing: a SaaS's Paddle Billing webhook, written from Paddle's docs and paddle-python-sdk.

Paddle's docs ("Verify webhook signatures", "Handle webhook delivery") say to verify
``Paddle-Signature`` over the raw body, answer 200 within 5 s, expect the same event more
than once (dedupe on ``event_id``) and out of order (compare ``occurred_at``). This
receiver:

- verifies with the SDK's ``Verifier().verify(request, Secret(secret))`` (±5 s); a bad
  or missing signature is answered 401;
- parses the notification with the SDK (``paddle_billing.Entities.Event.from_dict``);
- in one SQLite transaction: claims ``event_id`` (a redelivery changes nothing), applies
  the event's effect (``fulfil:{txn}`` on ``transaction.completed``, ``provision:{sub}`` on
  ``subscription.created``, ``dunning:{sub}:{period start}`` on ``subscription.past_due``,
  ``deprovision:{sub}`` on ``subscription.canceled``, ``refund:{adj}`` once a refund is
  approved), and stores a subscription's, a transaction's, an adjustment's or a customer's
  status (``customer.created``, ``customer.updated``: developer.paddle.com/webhooks/customers)
  unless a newer ``occurred_at`` is stored;
- answers 200 to every other event type.

A refund is created ``pending_approval`` and approved or rejected by Paddle later
(developer.paddle.com/webhooks/adjustments/adjustment-updated: "On review, they move to approved
or rejected and adjustment.updated occurs"): the receiver records it on the ``adjustment.updated``
saying ``approved``, or on an ``adjustment.created`` already ``approved`` ("some are
automatically approved"), never on one pending or rejected.

`create_app(dedupe=False)` is its broken twin (``paddle_billing_no_dedupe``): no claim, so
a redelivered event repeats its effect. `create_app(ordered=False)` stores each status as it
arrives (a test twin: an older event delivered last leaves the older status).

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``WEBHOOK_SECRET`` (or
``HOOKPROOF_SECRET``). Run: ``python -m examples.receivers.paddle_billing``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from paddle_billing.Entities.Event import Event
from paddle_billing.Notifications import Secret, Verifier

from examples.receivers.mercadopago_fetch import Transaction, serve

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, received_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, event_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscriptions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, occurred_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS transactions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, occurred_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS adjustments (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, occurred_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS customers (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, occurred_at TEXT NOT NULL);
"""

#: Event type prefix -> the table of the entity's status (``object_id, status, occurred_at``).
STATE_TABLES: Mapping[str, str] = {"subscription.": "subscriptions", "transaction.": "transactions",
                                   "adjustment.": "adjustments", "customer.": "customers"}


def _approved_refund(data: Mapping[str, Any]) -> str | None:
    """``refund:{adj}`` for a refund adjustment Paddle approved, else None (pending, rejected, a credit)."""
    return f"refund:{data['id']}" if data["action"] == "refund" and data["status"] == "approved" else None


#: Event type -> the business key of its effect, from the notification's ``data``.
EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "transaction.completed": lambda d: f"fulfil:{d['id']}",
    "subscription.created": lambda d: f"provision:{d['id']}",
    "subscription.past_due": lambda d: f"dunning:{d['id']}:{d['current_billing_period']['starts_at']}",
    "subscription.canceled": lambda d: f"deprovision:{d['id']}",
    "adjustment.created": _approved_refund,
    "adjustment.updated": _approved_refund,
}


@dataclass(frozen=True)
class SignedBody:
    """What the SDK's Verifier reads from a request: ``.headers.get()`` and ``.body``."""

    headers: Any
    body: bytes


def create_app(database: str, secret: str, *, dedupe: bool = True, dedupe_on: str = "event_id",
               ordered: bool = True, effects: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None
               ) -> FastAPI:
    """The receiver's FastAPI app (see the module docstring); `dedupe_on` is the body's field it
    claims (a test twin claims ``notification_id``, which a replay renews); `ordered`: a status
    is stored only over an older ``occurred_at`` (False: as it arrives); `effects`: event type ->
    its effect's key (default: the module's `EFFECTS` as it is when called; a test twin provisions
    on ``subscription.activated`` instead)."""
    effect_of = EFFECTS if effects is None else effects
    with sqlite3.connect(database) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        return await run_in_threadpool(handle, request.headers, raw)

    def handle(headers: Any, raw: bytes) -> JSONResponse:
        try:
            valid = Verifier().verify(SignedBody(headers, raw), Secret(secret))
        except (ValueError, UnicodeDecodeError):  # a header with other keys, a body that is not UTF-8
            valid = False
        if not valid:
            return JSONResponse({"error": "invalid Paddle-Signature"}, status_code=401)
        try:
            body = json.loads(raw)
            event = Event.from_dict(body)
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "not a Paddle notification"}, status_code=400)
        data = body["data"]
        key_of = effect_of.get(body["event_type"])
        with Transaction(database) as db:
            if dedupe and db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)",
                                     (str(body[dedupe_on]),)).rowcount == 0:
                return JSONResponse({"duplicate": event.event_id})
            key = key_of(data) if key_of else None
            if key is not None:  # a refund's amount: its total in minor units (Paddle's amounts are strings)
                amount = int(data["totals"]["total"]) if body["event_type"].startswith("adjustment.") else None
                db.execute("INSERT INTO effects (business_key, amount, event_id) VALUES (?, ?, ?)",
                           (key, amount, event.event_id))
            table = next((t for prefix, t in STATE_TABLES.items() if body["event_type"].startswith(prefix)), None)
            if table is not None:
                newer = f" WHERE excluded.occurred_at > {table}.occurred_at" if ordered else ""
                db.execute(f"INSERT INTO {table} (object_id, status, occurred_at) VALUES (?, ?, ?) "
                           "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                           f"occurred_at = excluded.occurred_at{newer}",
                           (data["id"], data["status"], body["occurred_at"]))
        return JSONResponse({"ok": True})

    return app


def main(dedupe: bool = True, dedupe_on: str = "event_id", ordered: bool = True,
         effects: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None) -> None:
    """Run the receiver from its environment (see the module docstring)."""
    secret = os.environ.get("WEBHOOK_SECRET") or os.environ["HOOKPROOF_SECRET"]
    serve(create_app(os.environ.get("DATABASE", "paddle.sqlite"), secret, dedupe=dedupe, dedupe_on=dedupe_on,
                     ordered=ordered, effects=effects))


if __name__ == "__main__":
    main()
