"""mercadopago_fetch: a Mercado Pago shop written from Mercado Pago's docs and its official SDK.

Mercado Pago's notifications are thin (``{"action", "type": "payment", "data": {"id"}}``):
the docs ("Webhooks", "After receiving the notification") say to validate ``x-signature``,
answer 200/201 quickly and fetch the payment for its state. This receiver:

- validates ``x-signature`` with the SDK's ``WebhookSignatureValidator.validate`` over
  ``data.id`` from the query string, lowercased (as the docs require), and
  ``x-request-id``; a bad signature is answered 401;
- ignores (200) other topics, a notification of another seller (``user_id``) or of the
  other mode (``live_mode``; unchecked with ``MP_LIVE_MODE=any``: the token's mode decides,
  its fetch of another mode's payment answered 404);
- fetches the payment with the SDK (``sdk.payment().get(id)``; 5 s timeout, 2 retries),
  its base URL pointed at the provider API by a custom ``HttpClient`` (the SDK's base
  URL is a private constant, `ProviderApiClient`); an unreachable API or an unknown
  payment is answered 503 so Mercado Pago retries later;
- in one SQLite transaction: claims the notification ``id`` (a second delivery of one
  notification changes nothing), applies the effects the payment implies, each once
  by its business key (``license:{id}`` once approved, ``refund:{id}:{refund id}`` per
  refund, ``chargeback:{id}``), and stores the payment's status unless a newer one
  (``date_last_updated``) is stored.

`create_app(dedupe=False)` is its broken twin (``mercadopago_fetch_no_dedupe``): no claim,
no unique business key, and the effect of the status it reads (approved: a license;
refunded or partially refunded: the newest refund; charged back: a chargeback), so a
redelivered notification repeats its effect. `Settings.ack_fetch_failures` is its other
twin (``mercadopago_fetch_ack_drop``): a failed fetch is answered 200 and nothing is applied,
so Mercado Pago never retries and the effect is lost.

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``WEBHOOK_SECRET``
(or ``HOOKPROOF_SECRET``), ``MP_ACCESS_TOKEN`` (or ``HOOKPROOF_API_KEY``), ``MP_API_BASE``
(or ``HOOKPROOF_API_BASE``), ``MP_USER_ID`` (the seller's user id; unset: any),
``MP_LIVE_MODE`` (``1``: live; ``any``: not checked; else test). Run: ``python -m examples.receivers.mercadopago_fetch``.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from dataclasses import dataclass
from typing import Any

import mercadopago
import uvicorn
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from mercadopago.config import RequestOptions
from mercadopago.http import HttpClient
from mercadopago.webhook import InvalidWebhookSignatureError, WebhookSignatureValidator

#: The SDK's base URL (``mercadopago.config.Config``'s ``api_base_url``), replaced by `ProviderApiClient`.
MERCADOPAGO_API = "https://api.mercadopago.com"

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (id TEXT PRIMARY KEY, received_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, notification_id TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS effects_once ON effects (business_key) WHERE notification_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS payments (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, updated TEXT NOT NULL);
"""


class ProviderApiClient(HttpClient):  # type: ignore[misc]
    """The SDK's HTTP client, sending to `base` instead of api.mercadopago.com."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base.rstrip("/")

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if url.startswith(MERCADOPAGO_API):
            url = self.base + url[len(MERCADOPAGO_API):]
        return super().request(method, url, *args, **kwargs)


#: The payment's status as fetched, unless a newer one (``date_last_updated``) is stored: a
#: slow fetch answered after a newer one must not overwrite it.
STATUS_UPSERT = ("INSERT INTO payments (object_id, status, updated) VALUES (?, ?, ?) ON CONFLICT (object_id) "
                 "DO UPDATE SET status = excluded.status, updated = excluded.updated "
                 "WHERE excluded.updated >= payments.updated")


def sdk_for(api_base: str, access_token: str) -> mercadopago.SDK:
    """The official SDK with its requests sent to `api_base` (5 s timeout, 2 retries)."""
    return mercadopago.SDK(access_token, http_client=ProviderApiClient(api_base),
                           request_options=RequestOptions(connection_timeout=5.0, max_retries=2))


@dataclass(frozen=True)
class Settings:
    """The receiver's configuration (see the module docstring)."""

    database: str
    secret: str
    access_token: str
    api_base: str
    user_id: str | None = None
    live: bool | None = False  # None: any mode (the fetch decides)
    dedupe: bool = True
    ack_fetch_failures: bool = False

    @staticmethod
    def from_env(dedupe: bool = True, ack_fetch_failures: bool = False) -> "Settings":
        env = os.environ
        return Settings(database=env.get("DATABASE", "mercadopago.sqlite"),
                        secret=env.get("WEBHOOK_SECRET") or env["HOOKPROOF_SECRET"],
                        access_token=env.get("MP_ACCESS_TOKEN") or env["HOOKPROOF_API_KEY"],
                        api_base=env.get("MP_API_BASE") or env["HOOKPROOF_API_BASE"],
                        user_id=env.get("MP_USER_ID") or None, live=_mode(env.get("MP_LIVE_MODE")), dedupe=dedupe,
                        ack_fetch_failures=ack_fetch_failures)


def _mode(value: str | None) -> bool | None:
    """``MP_LIVE_MODE``: ``1`` live, ``any`` either (None), anything else test."""
    return None if value == "any" else value == "1"


def cents(amount: float) -> int:
    """Centavos of an amount in reais (the API's decimal amounts)."""
    return int(round(amount * 100))


def effects_of(payment: dict[str, Any]) -> list[tuple[str, int | None]]:
    """``(business key, amount in centavos)`` of every effect the payment's current state
    implies (the correct receiver's rule)."""
    pid, paid = payment["id"], cents(payment["transaction_amount"])
    keys: list[tuple[str, int | None]] = []
    if payment["status"] in ("approved", "refunded", "charged_back"):
        keys.append((f"license:{pid}", paid))
    keys += [(f"refund:{pid}:{r['id']}", cents(r["amount"])) for r in payment.get("refunds") or []]
    if payment["status"] == "charged_back":
        keys.append((f"chargeback:{pid}", paid))
    return keys


def naive_effect(payment: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The effect of the status just read (the broken twin's rule)."""
    pid, status, detail = payment["id"], payment["status"], payment["status_detail"]
    if status == "approved" and detail == "accredited":
        return [(f"license:{pid}", cents(payment["transaction_amount"]))]
    if status == "refunded" or detail == "partially_refunded":
        last = payment["refunds"][-1]
        return [(f"refund:{pid}:{last['id']}", cents(last["amount"]))]
    if status == "charged_back":
        return [(f"chargeback:{pid}", cents(payment["transaction_amount"]))]
    return []


def admit(request: Request, raw: bytes, settings: Settings) -> tuple[dict[str, Any], str] | JSONResponse:
    """The notification `raw` and its payment id (the ``data.id`` query parameter) when its
    ``x-signature`` verifies (the SDK's `WebhookSignatureValidator`) and it is a payment of this
    seller in this mode; else the answer: 401 for a bad signature, 400 for a body that is not
    JSON, 200 ``ignored`` for another topic, seller or mode."""
    data_id = request.query_params.get("data.id")
    try:
        WebhookSignatureValidator.validate(request.headers.get("x-signature"), request.headers.get("x-request-id"),
                                           data_id.lower() if data_id else None, settings.secret)
    except InvalidWebhookSignatureError as exc:
        return JSONResponse({"error": f"signature: {exc.reason}"}, status_code=401)
    try:
        note = json.loads(raw)
    except ValueError:
        return JSONResponse({"error": "not JSON"}, status_code=400)
    if not isinstance(note, dict) or note.get("type") != "payment" or not data_id:
        return JSONResponse({"ignored": True})
    if (settings.live is not None and note.get("live_mode") is not settings.live) or (
            settings.user_id and str(note.get("user_id")) != settings.user_id):
        return JSONResponse({"ignored": "another seller or mode"})
    return note, data_id


def create_app(settings: Settings) -> FastAPI:
    """The receiver's FastAPI app over `settings`."""
    with sqlite3.connect(settings.database) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    sdk = sdk_for(settings.api_base, settings.access_token)
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()  # the raw bytes; the blocking work runs in a worker thread
        return await run_in_threadpool(handle, request, raw)

    def handle(request: Request, raw: bytes) -> JSONResponse:
        admitted = admit(request, raw, settings)
        if isinstance(admitted, JSONResponse):
            return admitted
        note, data_id = admitted
        try:
            answer = sdk.payment().get(data_id)
        except Exception as exc:  # the SDK raises for a body that is not JSON, requests for the network
            answer = {"status": type(exc).__name__}
        if answer.get("status") != 200:
            if settings.ack_fetch_failures:  # the broken twin: acknowledged, nothing applied, never retried
                return JSONResponse({"ignored": f"provider API answered {answer.get('status')}"})
            return JSONResponse({"error": f"provider API answered {answer.get('status')}"}, status_code=503)
        payment = answer["response"]
        notification = str(note.get("id"))
        with Transaction(settings.database) as db:
            if settings.dedupe:
                if db.execute("INSERT OR IGNORE INTO notifications (id) VALUES (?)", (notification,)).rowcount == 0:
                    return JSONResponse({"duplicate": notification})
                for key, amount in effects_of(payment):
                    db.execute("INSERT OR IGNORE INTO effects (business_key, amount, notification_id) VALUES (?, ?, ?)",
                               (key, amount, notification))
            else:
                for key, amount in naive_effect(payment):
                    db.execute("INSERT INTO effects (business_key, amount) VALUES (?, ?)", (key, amount))
            db.execute(STATUS_UPSERT, (str(payment["id"]), payment["status"], payment["date_last_updated"]))
        return JSONResponse({"ok": True})

    return app


class Transaction:
    """A connection of its own to `database` in ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK``
    on error): one writer at a time, the others wait up to 30 s."""

    def __init__(self, database: str) -> None:
        self.db = sqlite3.connect(database, isolation_level=None, timeout=30)

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, *_: object) -> None:
        try:
            self.db.execute("ROLLBACK" if kind else "COMMIT")
        finally:
            self.db.close()


def serve(app: FastAPI) -> None:
    """Serve `app` on 127.0.0.1:$PORT; prints one readiness line once the socket listens."""
    port = int(os.environ.get("PORT", "8000"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"listening on http://127.0.0.1:{port}/webhooks", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def main(dedupe: bool = True, ack_fetch_failures: bool = False) -> None:
    """Run the receiver from its environment (see the module docstring)."""
    serve(create_app(Settings.from_env(dedupe, ack_fetch_failures)))


if __name__ == "__main__":
    main()
