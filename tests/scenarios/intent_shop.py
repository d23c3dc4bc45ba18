"""A shop that creates its own PaymentIntents, no Checkout (FastAPI; for the tests of a seed that
creates the story's payment intents, `[target.seed] creates = ["payment_intent"]`).

``python -m tests.scenarios.intent_shop`` is its seed command, the shop's order page: for each
payment intent the seed document's ``create`` asks for it inserts an ``orders`` row
(``<scenario>-<n>``, 2500 cents and 100 more per order, ``pending``) and creates the order's
intent with stripe-python (``payment_intents.create`` at ``HOOKPROOF_API_BASE`` with
``HOOKPROOF_API_KEY``, the order's id as ``Idempotency-Key``): its amount, ``usd``,
``metadata.order_id`` the order's id, automatic payment methods; its front end would confirm
it with Stripe.js. With ``SHOP_INTENTS=N`` it creates N instead.

`app` is its webhook endpoint (docs.stripe.com/payments/handling-payment-events): verifies
with ``stripe.Webhook.construct_event`` and looks the order up by the object's
``metadata.order_id`` (a charge carries its intent's), answering 404 when no order has that id
or the order's intent is another; on ``payment_intent.succeeded`` it fulfils the order once
(``pending`` or ``failed`` to ``paid`` and a ``fulfilments`` row keyed ``order:<order id>`` in
one transaction), on ``payment_intent.payment_failed`` marks a pending order ``failed`` (an
unpaid order's ``intent_status`` follows its intent's: `STATES`, never back from ``succeeded``), and on
``charge.refunded`` records the refund once per cumulative amount (``refunds``, keyed
``refund:<charge>:<amount_refunded>``). Its broken twins: ``SHOP_FULFIL=every`` fulfils on every
delivery; ``SHOP_LOOKUP=intent`` looks the order up as ``ord_<intent id>``, an id the shop never
set, so it finds none; ``SHOP_STATE=payload`` takes a failure's status even after the payment. ``DATABASE_URL`` is ``sqlite:///<file>``; ``WEBHOOK_SECRET`` the
endpoint's signing secret.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import stripe
from fastapi import FastAPI, Request, Response

TABLES = ("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, intent TEXT, amount INTEGER NOT NULL, "
          "status TEXT NOT NULL, intent_status TEXT)",
          "CREATE TABLE IF NOT EXISTS fulfilments (business_key TEXT NOT NULL, order_id TEXT NOT NULL)",
          "CREATE TABLE IF NOT EXISTS refunds (business_key TEXT PRIMARY KEY)")
TIMEOUT_S = 10
#: The effects the observer reads: each fulfilment and each refund.
EFFECTS = "SELECT business_key FROM fulfilments UNION ALL SELECT business_key FROM refunds"
#: The payment intents' states the observer reads.
STATES = "SELECT intent AS object_id, intent_status AS status FROM orders WHERE intent IS NOT NULL"
app = FastAPI()


def connect() -> sqlite3.Connection:
    """The shop's database (``DATABASE_URL``), its tables made."""
    conn = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), timeout=TIMEOUT_S,
                           isolation_level=None)
    for table in TABLES:
        conn.execute(table)
    return conn


def handle(event: stripe.Event) -> int:
    """The answer status for one verified event."""
    obj = event.data.object
    intent = obj.id if event.type.startswith("payment_intent.") else obj.to_dict().get("payment_intent")
    order_id = f"ord_{intent}" if os.environ.get("SHOP_LOOKUP") == "intent" else obj.metadata.to_dict().get("order_id")
    conn = connect()
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT intent FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None or row[0] != intent:
            conn.execute("ROLLBACK")
            return 404
        if event.type == "payment_intent.succeeded":
            first = conn.execute("UPDATE orders SET status = 'paid', intent_status = 'succeeded' "
                                 "WHERE id = ? AND status != 'paid'", (order_id,)).rowcount == 1
            if first or os.environ.get("SHOP_FULFIL") == "every":
                conn.execute("INSERT INTO fulfilments VALUES (?, ?)", (f"order:{order_id}", order_id))
        elif event.type == "payment_intent.payment_failed":
            guard = "" if os.environ.get("SHOP_STATE") == "payload" else " AND status != 'paid'"
            conn.execute("UPDATE orders SET intent_status = ?, status = CASE status WHEN 'pending' THEN 'failed' "
                         f"ELSE status END WHERE id = ?{guard}", (obj.status, order_id))
        elif event.type == "charge.refunded":
            conn.execute("INSERT OR IGNORE INTO refunds VALUES (?)", (f"refund:{obj.id}:{obj.amount_refunded}",))
        conn.execute("COMMIT")
        return 200
    finally:
        conn.close()


@app.post("/webhooks")
async def stripe_webhook(request: Request) -> Response:
    """The webhook endpoint: the raw body verified, then `handle` in a worker thread."""
    import anyio.to_thread

    body = await request.body()
    try:
        event = stripe.Webhook.construct_event(body, request.headers.get("stripe-signature", ""),
                                               os.environ["WEBHOOK_SECRET"])
    except (stripe.SignatureVerificationError, ValueError):
        return Response(status_code=400)
    return Response(status_code=await anyio.to_thread.run_sync(handle, event))


def seed() -> None:
    """The order page: one order and its payment intent per intent the document asks for."""
    document = json.load(sys.stdin)
    wanted = int(os.environ.get("SHOP_INTENTS", document.get("create", {}).get("payment_intent", 0)))
    client = stripe.StripeClient(os.environ["HOOKPROOF_API_KEY"],
                                 base_addresses={"api": os.environ["HOOKPROOF_API_BASE"]},
                                 http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
    conn = connect()
    for i in range(wanted):
        order, amount = f"{document['scenario']}-{i + 1}", 2500 + 100 * i
        conn.execute("INSERT INTO orders VALUES (?, NULL, ?, 'pending', NULL)", (order, amount))
        intent = client.v1.payment_intents.create(
            params={"amount": amount, "currency": "usd", "metadata": {"order_id": order},
                    "description": f"Order {order}", "automatic_payment_methods": {"enabled": True}},
            options={"idempotency_key": order})
        conn.execute("UPDATE orders SET intent = ?, intent_status = ? WHERE id = ?", (intent.id, intent.status, order))
    conn.close()


if __name__ == "__main__":
    seed()
