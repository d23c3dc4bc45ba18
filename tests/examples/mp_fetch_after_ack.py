"""A correct Mercado Pago receiver that answers first and fetches the payment afterwards.

Mercado Pago's SDK advises "respond immediately and process the notification asynchronously".
This receiver verifies ``x-signature`` and filters like `mercadopago_fetch`, then stores the
notification in an inbox table (committed before the answer) and answers 200 at once. A
worker thread takes the inbox in order: it fetches the payment with the SDK, then in one
transaction applies the effects the payment implies, each once by its business key
(`mercadopago_fetch.effects_of`), stores its status unless a newer one is stored, and marks the
notification done. A failed fetch is tried again a moment later; notifications left pending by
a restart are taken up when it starts. So its fetches happen some time after the
notification was answered, possibly after later notifications were delivered. Run as
``python -m tests.examples.mp_fetch_after_ack`` with the reference receiver's environment.
"""

from __future__ import annotations

import sqlite3
import threading
import time

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

import examples.receivers.mercadopago_fetch as reference

INBOX = "CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, payment TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);"
#: Seconds the worker waits before taking up the inbox again (after a failed fetch, or when idle).
POLL_S = 0.05


def create_app(settings: reference.Settings) -> FastAPI:
    """The receiver's app over `settings`; its worker thread starts with it."""
    with sqlite3.connect(settings.database) as setup:
        setup.executescript(reference.SCHEMA + INBOX)
        setup.execute("PRAGMA journal_mode=WAL")
    sdk = reference.sdk_for(settings.api_base, settings.access_token)
    wake = threading.Event()
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        admitted = reference.admit(request, await request.body(), settings)
        if isinstance(admitted, JSONResponse):
            return admitted
        note, data_id = admitted
        with reference.Transaction(settings.database) as db:
            db.execute("INSERT OR IGNORE INTO inbox (id, payment) VALUES (?, ?)", (str(note.get("id")), data_id))
        wake.set()
        return JSONResponse({"queued": True})

    def work() -> None:
        while True:
            wake.wait(POLL_S)
            wake.clear()
            with sqlite3.connect(settings.database, timeout=30) as db:
                pending = db.execute("SELECT id, payment FROM inbox WHERE done = 0 ORDER BY rowid").fetchall()
            for notification, payment_id in pending:
                try:
                    answer = sdk.payment().get(payment_id)
                except Exception as exc:  # the SDK raises for a body that is not JSON, requests for the network
                    answer = {"status": type(exc).__name__}
                if answer.get("status") != 200:
                    time.sleep(POLL_S)
                    break  # tried again, in order, on the next round
                payment = answer["response"]
                with reference.Transaction(settings.database) as db:
                    for key, amount in reference.effects_of(payment):
                        db.execute("INSERT OR IGNORE INTO effects (business_key, amount, notification_id) "
                                   "VALUES (?, ?, ?)", (key, amount, notification))
                    db.execute(reference.STATUS_UPSERT,
                               (str(payment["id"]), payment["status"], payment["date_last_updated"]))
                    db.execute("UPDATE inbox SET done = 1 WHERE id = ?", (notification,))

    threading.Thread(target=work, name="inbox-worker", daemon=True).start()
    return app


if __name__ == "__main__":
    reference.serve(create_app(reference.Settings.from_env()))
