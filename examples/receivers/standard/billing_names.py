"""billing_names: a Standard Webhooks receiver whose sender names its events as Stripe does.

Standard Webhooks fixes no event catalog: a sender may name a successful payment
``payment_intent.succeeded`` (as here) or ``payment.succeeded``. This receiver knows only
the billing names (``payment_intent.succeeded``, ``invoice.paid``,
``customer.subscription.created|updated|deleted``); certified with a hookproof.toml whose
``enabled_events`` lists those names, hookproof sends them so. Every other type (hookproof's
default renaming included: ``payment.succeeded``) is answered 200 and applies nothing.

It:

- verifies ``webhook-id``/``webhook-timestamp``/``webhook-signature`` over the raw body with
  the official ``standardwebhooks`` library (±5 min); a bad or missing signature is 401;
- in one SQLite transaction: claims the ``webhook-id`` (the message id, the same on every
  retry: a redelivery changes nothing), applies the event's effect (``license:{payment
  intent}`` with its ``amount``, ``renewal:{invoice}`` with its ``amount_paid``) and stores a
  subscription's status unless a newer version (``hookproof_version``) is stored.

`create_app(dedupe=False)` is its broken twin (``billing_names_no_dedupe``): no claim, so a
redelivered event repeats its effect (``duplicated``).

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``WEBHOOK_SECRET`` (or
``HOOKPROOF_SECRET``). Run: ``python -m examples.receivers.standard.billing_names``.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from typing import Any, Callable, Mapping

import uvicorn
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (message_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, message_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscriptions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL);
"""

#: Event type (the billing names) -> (business key, amount) of its effect, from the body's ``data``.
EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], tuple[str | None, int | None]]] = {
    # every intent, a Checkout Session's too: this endpoint is sent no Checkout event, so an
    # intent's payment is the only word of a purchase (`World.checkout_events_sent`); not an
    # invoice's ("Subscription creation" or "Subscription update"): its invoice.paid is the renewal
    "payment_intent.succeeded": lambda d: ((None if d.get("invoice") or d.get("description") in (
        "Subscription creation", "Subscription update") else f"license:{d['id']}"), d.get("amount")),
    "invoice.paid": lambda d: (f"renewal:{d['id']}", d.get("amount_paid")),
}

#: Event types that carry a subscription's state.
SUBSCRIPTION_TYPES = frozenset({"customer.subscription.created", "customer.subscription.updated",
                                "customer.subscription.deleted"})


def create_app(database: str, secret: str, *, dedupe: bool = True) -> FastAPI:
    """The receiver's FastAPI app (see the module docstring)."""
    with sqlite3.connect(database) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    hook = Webhook(secret)
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        return await run_in_threadpool(handle, dict(request.headers), raw)

    def handle(headers: Mapping[str, str], raw: bytes) -> JSONResponse:
        try:
            hook.verify(raw, dict(headers))
        except (WebhookVerificationError, ValueError):
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        try:
            body = json.loads(raw)
            message_id, event_type, data = headers["webhook-id"], str(body["type"]), body["data"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "not a Standard Webhooks message"}, status_code=400)
        effect = EFFECTS.get(event_type)
        if effect is None and event_type not in SUBSCRIPTION_TYPES:
            return JSONResponse({"ignored": event_type})  # a type this receiver does not know
        db = sqlite3.connect(database, isolation_level=None, timeout=30)
        try:
            db.execute("BEGIN IMMEDIATE")  # the claim, the effect and the state commit together
            if dedupe and db.execute("INSERT OR IGNORE INTO messages (message_id) VALUES (?)",
                                     (message_id,)).rowcount == 0:
                db.execute("ROLLBACK")
                return JSONResponse({"duplicate": message_id})
            if effect is not None:
                key, amount = effect(data)
            if effect is not None and key is not None:
                db.execute("INSERT INTO effects (business_key, amount, message_id) VALUES (?, ?, ?)",
                           (key, amount, message_id))
            if event_type in SUBSCRIPTION_TYPES:
                db.execute("INSERT INTO subscriptions (object_id, status, version) VALUES (?, ?, ?) "
                           "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                           "version = excluded.version WHERE excluded.version > subscriptions.version",
                           (data["id"], data["status"], int(data.get("hookproof_version", 0))))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        finally:
            db.close()
        return JSONResponse({"ok": True})

    return app


def serve(app: FastAPI) -> None:
    """Serve `app` on 127.0.0.1:$PORT; prints one readiness line once the socket listens."""
    port = int(os.environ.get("PORT", "8000"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{port}/webhooks", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def main(dedupe: bool = True) -> None:
    """Run the receiver from its environment (see the module docstring)."""
    secret = os.environ.get("WEBHOOK_SECRET") or os.environ["HOOKPROOF_SECRET"]
    serve(create_app(os.environ.get("DATABASE", "billing.sqlite"), secret, dedupe=dedupe))


if __name__ == "__main__":
    main()
