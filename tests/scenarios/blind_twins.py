"""Blind-overwrite twins of the Shopify and Paddle receivers, for explore's tests.

Each verifies, dedupes and applies the same effects as its receiver
(`examples.receivers.shopify_app`, `examples.receivers.paddle_billing`), but stores an
object's state from every webhook without comparing the payload's ``updated_at`` /
``occurred_at`` with the stored one, although both providers' docs say webhooks arrive out
of order: an older webhook delivered after a newer one puts the object back (``regressed``,
``stale``). In-process FastAPI apps, each on its own SQLite file.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from paddle_billing.Notifications import Secret, Verifier

from examples.receivers.mercadopago_fetch import Transaction
from examples.receivers.paddle_billing import EFFECTS as PADDLE_EFFECTS
from examples.receivers.paddle_billing import SCHEMA as PADDLE_SCHEMA
from examples.receivers.paddle_billing import SignedBody
from examples.receivers.shopify_app import EFFECTS as SHOPIFY_EFFECTS
from examples.receivers.shopify_app import SCHEMA as SHOPIFY_SCHEMA
from examples.receivers.shopify_app import verified


def shopify_blind_app(database: str, secret: str) -> FastAPI:
    """`examples.receivers.shopify_app` writing each order's ``financial_status`` from every
    ``orders/*`` webhook, without comparing ``updated_at`` (see the module docstring)."""
    with sqlite3.connect(database) as setup:
        setup.executescript(SHOPIFY_SCHEMA)
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
        if not verified(secret, raw, headers.get("x-shopify-hmac-sha256")):
            return JSONResponse({"error": "invalid X-Shopify-Hmac-Sha256"}, status_code=401)
        topic, event_id = headers.get("x-shopify-topic"), headers.get("x-shopify-event-id")
        if not topic or not event_id:
            return JSONResponse({"error": "missing X-Shopify-Topic or X-Shopify-Event-Id"}, status_code=400)
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        effect = SHOPIFY_EFFECTS.get(topic)
        with Transaction(database) as db:
            if db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)", (event_id,)).rowcount == 0:
                return JSONResponse({"duplicate": event_id})
            if effect is not None:
                key, amount = effect(body)
                db.execute("INSERT INTO effects (business_key, amount, event_id) VALUES (?, ?, ?)",
                           (key, amount, event_id))
            if topic.startswith("orders/"):  # the mistake: no updated_at comparison
                db.execute("INSERT OR REPLACE INTO orders (object_id, status, updated_ts) VALUES (?, ?, 0)",
                           (str(body["id"]), body["financial_status"]))
        return JSONResponse({"ok": True})

    return app


def paddle_blind_app(database: str, secret: str) -> FastAPI:
    """`examples.receivers.paddle_billing` writing each subscription's status from every
    ``subscription.*`` notification, without comparing ``occurred_at`` (see the module docstring)."""
    with sqlite3.connect(database) as setup:
        setup.executescript(PADDLE_SCHEMA)
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
        except (ValueError, UnicodeDecodeError):
            valid = False
        if not valid:
            return JSONResponse({"error": "invalid Paddle-Signature"}, status_code=401)
        try:
            body = json.loads(raw)
            data, event_type, event_id = body["data"], body["event_type"], body["event_id"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "not a Paddle notification"}, status_code=400)
        key_of = PADDLE_EFFECTS.get(event_type)
        with Transaction(database) as db:
            if db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)", (event_id,)).rowcount == 0:
                return JSONResponse({"duplicate": event_id})
            key = key_of(data) if key_of else None
            if key is not None:
                amount = int(data["totals"]["total"]) if event_type.startswith("adjustment.") else None
                db.execute("INSERT INTO effects (business_key, amount, event_id) VALUES (?, ?, ?)",
                           (key, amount, event_id))
            if event_type.startswith("subscription."):  # the mistake: no occurred_at comparison
                db.execute("INSERT OR REPLACE INTO subscriptions (object_id, status, occurred_at) VALUES (?, ?, ?)",
                           (data["id"], data["status"], body["occurred_at"]))
        return JSONResponse({"ok": True})

    return app
