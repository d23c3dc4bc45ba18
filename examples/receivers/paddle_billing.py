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
  unless a newer ``occurred_at`` is stored, compared as instants (unix microseconds of the
  SDK's parsed ``occurred_at``), not as strings: an entity's times carry up to nine fractional
  digits, trailing zeros trimmed (``09:59:09.237822398Z``, ``11:57:47.03542Z``), whose strings
  do not sort as their instants;
- answers 200 to every other event type.

A refund is created ``pending_approval`` and approved or rejected by Paddle later
(developer.paddle.com/webhooks/adjustments/adjustment-updated: "On review, they move to approved
or rejected and adjustment.updated occurs"): the receiver records it on the ``adjustment.updated``
saying ``approved``, or on an ``adjustment.created`` already ``approved`` ("some are
automatically approved"), never on one pending or rejected.

`create_app(dedupe=False)` is its broken twin (``paddle_billing_no_dedupe``): no claim, so
a redelivered event repeats its effect. `create_app(ordered=False)` stores each status as it
arrives (a test twin: an older event delivered last leaves the older status).

`create_app(api=PaddleApi(...))` is its fetching variant (``paddle_billing_fetch``): on a
``subscription.*`` event it reads the subscription as Paddle has it now ("Get a subscription",
``GET /subscriptions/{id}`` with ``Authorization: Bearer``, 5 s timeout) and stores that
status unless a newer ``updated_at`` is stored (parsed with ``datetime.fromisoformat``,
which reads RFC 3339 with up to nine fractional digits); when the API fails it answers 503 before
claiming the event, so Paddle's retry applies it. With ``ack_fetch_failures``
(``paddle_billing_fetch_ack_drop``, a broken twin) it answers 200 to a failed fetch and
applies nothing, so the event is lost.

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``WEBHOOK_SECRET`` (or
``HOOKPROOF_SECRET``); the fetching variant ``PADDLE_API_BASE`` (or ``HOOKPROOF_API_BASE``) and
``PADDLE_API_KEY`` (or ``HOOKPROOF_API_KEY``). Run: ``python -m examples.receivers.paddle_billing``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping

import httpx
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from paddle_billing.Entities.Event import Event
from paddle_billing.Notifications import Secret, Verifier

from examples.receivers.mercadopago_fetch import Transaction, serve

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, received_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, event_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscriptions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, at_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS transactions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, at_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS adjustments (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, at_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS customers (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, at_us INTEGER NOT NULL);
"""

#: Event type prefix -> the table of the entity's status (``object_id, status, at_us``: the unix
#: microseconds of the time it is ordered by).
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
class PaddleApi:
    """Where the fetching variant reads subscriptions: Paddle's API base URL and an API key."""

    base_url: str
    api_key: str

    def subscription(self, subscription_id: str) -> dict[str, Any] | None:
        """The subscription as the API answers it now (its ``data``), or None when it cannot be read."""
        url = f"{self.base_url.rstrip('/')}/subscriptions/{subscription_id}"
        try:
            answer = httpx.get(url, headers={"Authorization": f"Bearer {self.api_key}"}, timeout=5.0)
        except httpx.HTTPError:
            return None
        if answer.status_code != 200:
            return None
        found = answer.json().get("data")
        return found if isinstance(found, dict) else None


@dataclass(frozen=True)
class SignedBody:
    """What the SDK's Verifier reads from a request: ``.headers.get()`` and ``.body``."""

    headers: Any
    body: bytes


def unix_us(moment: datetime) -> int:
    """The unix microseconds of an aware `moment`, the instant a status is ordered by."""
    return (moment - EPOCH) // timedelta(microseconds=1)


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def create_app(database: str, secret: str, *, dedupe: bool = True, dedupe_on: str = "event_id",
               ordered: bool = True, effects: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None,
               api: PaddleApi | None = None, ack_fetch_failures: bool = False,
               clock: Callable[[Mapping[str, Any]], datetime] | None = None) -> FastAPI:
    """The receiver's FastAPI app (see the module docstring); `dedupe_on` is the body's field it
    claims (a test twin claims ``notification_id``, which a replay renews); `ordered`: a status
    is stored only over an older ``occurred_at`` (False: as it arrives); `effects`: event type ->
    its effect's key (default: the module's `EFFECTS` as it is when called; a test twin provisions
    on ``subscription.activated`` instead); `api`: read each subscription an event is about
    from Paddle's API and store that (`ack_fetch_failures`: a failed read answered 200); `clock`:
    the time a notification's status is ordered by (default: its ``occurred_at`` as the SDK
    parses it; a test twin parses ``data.updated_at`` with a fixed six-digit format)."""
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
        state, ordering = data, unix_us(clock(body) if clock else event.occurred_at)
        if api is not None and body["event_type"].startswith("subscription."):
            fetched = api.subscription(data["id"])
            if fetched is None and ack_fetch_failures:  # the broken twin: acknowledged, nothing applied
                return JSONResponse({"ignored": "Paddle's API could not be read"})
            if fetched is None:  # not claimed: Paddle retries, and the retry applies the event
                return JSONResponse({"error": "Paddle's API could not be read"}, status_code=503)
            state, ordering = fetched, unix_us(datetime.fromisoformat(fetched["updated_at"]))
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
                newer = f" WHERE excluded.at_us > {table}.at_us" if ordered else ""
                db.execute(f"INSERT INTO {table} (object_id, status, at_us) VALUES (?, ?, ?) "
                           "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                           f"at_us = excluded.at_us{newer}",
                           (state["id"], state["status"], ordering))
        return JSONResponse({"ok": True})

    return app


def main(dedupe: bool = True, dedupe_on: str = "event_id", ordered: bool = True,
         effects: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None,
         fetch: bool = False, ack_fetch_failures: bool = False,
         clock: Callable[[Mapping[str, Any]], datetime] | None = None) -> None:
    """Run the receiver from its environment (see the module docstring)."""
    env = os.environ
    secret = env.get("WEBHOOK_SECRET") or env["HOOKPROOF_SECRET"]
    api = PaddleApi(env.get("PADDLE_API_BASE") or env["HOOKPROOF_API_BASE"],
                    env.get("PADDLE_API_KEY") or env["HOOKPROOF_API_KEY"]) if fetch else None
    serve(create_app(env.get("DATABASE", "paddle.sqlite"), secret, dedupe=dedupe, dedupe_on=dedupe_on,
                     ordered=ordered, effects=effects, api=api, ack_fetch_failures=ack_fetch_failures,
                     clock=clock))


if __name__ == "__main__":
    main()
