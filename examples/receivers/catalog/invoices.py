"""invoices: Acme Billing's webhook receiver, written from its OpenAPI document alone.

`examples/openapi/webhooks.yaml` describes five webhooks: ``invoice.created``,
``invoice.payment_failed``, ``invoice.paid``, ``refund.created`` and ``customer.updated``,
each body ``{"id", "type", "created_at", "data"}``. This receiver:

- verifies the signature over the raw body: with ``SCHEME=generic-hmac`` (the default)
  ``X-Signature`` is the lowercase hex HMAC-SHA256 of the body keyed by the secret,
  compared in constant time; with ``SCHEME=standard-webhooks`` the official
  ``standardwebhooks`` library verifies ``webhook-id``/``webhook-timestamp``/``webhook-signature``
  (±5 min); a bad or missing signature is answered 401;
- in one SQLite transaction: claims the event ``id`` (a redelivery changes nothing), applies
  the event's effect (``fulfil:{invoice}`` when an invoice is paid, ``dunning:{invoice}:{attempt}``
  per declined attempt: a reminder, ``refund:{refund}`` with its amount), and stores an
  invoice's status unless a newer ``updated_at`` is stored;
- answers 200 to every other event type (and applies nothing).

`create_app(dedupe=False)` is its broken twin (``invoices_no_dedupe``): no claim, so a
redelivered event repeats its effect (``duplicated``).

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``WEBHOOK_SECRET`` (or
``HOOKPROOF_SECRET``), ``SCHEME``. Run: ``python -m examples.receivers.catalog.invoices``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import sqlite3
from typing import Any, Callable, Mapping

import uvicorn
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, received_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, event_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS invoices (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, updated_at TEXT NOT NULL);
"""

#: Event type -> (business key, amount) of its effect, from the body's ``data`` (the document's keys).
EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], tuple[str, int | None]]] = {
    "invoice.paid": lambda d: (f"fulfil:{d['id']}", None),
    "invoice.payment_failed": lambda d: (f"dunning:{d['id']}:{d['attempt']}", None),
    "refund.created": lambda d: (f"refund:{d['id']}", int(d["amount"])),
}


def verifier(scheme: str, secret: str) -> Callable[[Mapping[str, str], bytes], bool]:
    """A function telling whether a request's headers sign its raw body."""
    if scheme == "standard-webhooks":
        from standardwebhooks.webhooks import Webhook, WebhookVerificationError

        hook = Webhook(secret)

        def standard(headers: Mapping[str, str], raw: bytes) -> bool:
            try:
                hook.verify(raw, dict(headers))
            except (WebhookVerificationError, ValueError):
                return False
            return True
        return standard

    def generic(headers: Mapping[str, str], raw: bytes) -> bool:
        expected = hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, headers.get("x-signature", ""))
    return generic


def create_app(database: str, secret: str, *, scheme: str = "generic-hmac", dedupe: bool = True) -> FastAPI:
    """The receiver's FastAPI app (see the module docstring)."""
    with sqlite3.connect(database) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    verify = verifier(scheme, secret)
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        return await run_in_threadpool(handle, dict(request.headers), raw)

    def handle(headers: Mapping[str, str], raw: bytes) -> JSONResponse:
        if not verify(headers, raw):
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        try:
            body = json.loads(raw)
            event_id, event_type, data = str(body["id"]), str(body["type"]), body["data"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "not an Acme Billing event"}, status_code=400)
        db = sqlite3.connect(database, isolation_level=None, timeout=30)
        try:
            db.execute("BEGIN IMMEDIATE")  # the claim, the effect and the state commit together
            if dedupe and db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)",
                                     (event_id,)).rowcount == 0:
                db.execute("ROLLBACK")
                return JSONResponse({"duplicate": event_id})
            effect = EFFECTS.get(event_type)
            if effect is not None:
                key, amount = effect(data)
                db.execute("INSERT INTO effects (business_key, amount, event_id) VALUES (?, ?, ?)",
                           (key, amount, event_id))
            if event_type.startswith("invoice."):
                db.execute("INSERT INTO invoices (object_id, status, updated_at) VALUES (?, ?, ?) "
                           "ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                           "updated_at = excluded.updated_at WHERE excluded.updated_at > invoices.updated_at",
                           (data["id"], data["status"], data["updated_at"]))
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
    serve(create_app(os.environ.get("DATABASE", "invoices.sqlite"), secret,
                     scheme=os.environ.get("SCHEME", "generic-hmac"), dedupe=dedupe))


if __name__ == "__main__":
    main()
