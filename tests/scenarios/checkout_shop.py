"""A shop that creates its own checkout sessions, written from Stripe's Checkout docs (for the
tests of a seed that creates the story's sessions, `[target.seed] creates`).

``python -m tests.scenarios.checkout_shop`` is its seed command, the shop's checkout page:
for each session the seed document's ``create`` asks for it inserts an ``orders`` row and
opens a Checkout Session with stripe-python (``checkout.Session.create``, at
``HOOKPROOF_API_BASE`` with ``HOOKPROOF_API_KEY``), its ``client_reference_id`` the
order's id and ``metadata.order`` the same. With ``SHOP_SESSIONS=N`` it opens N instead.
Each session is of the mode the document's ``create_each`` (else ``create_as``) names: a
one-off order (``payment``) or a monthly plan (``subscription``, a recurring ``price_data``
and ``subscription_data.metadata.order``); ``SHOP_MODE`` forces one mode for every session
(a SaaS that sells only plans).

`app` is its webhook endpoint (docs.stripe.com/checkout/fulfillment): verifies with
``stripe.Webhook.construct_event``, answers 404 for a session whose ``client_reference_id``
names no order of the shop, and on ``checkout.session.completed`` with ``payment_status``
``paid`` fulfils the order: a ``fulfilments`` row keyed ``fulfillment:<session id>``; a
subscription-mode session, ``paid`` or ``no_payment_required`` (a trial), provisions the plan
instead (docs.stripe.com/billing/subscriptions/build-subscriptions): a row keyed
``provision:<session id>``. As the docs ask, it fulfils once (the order moves from ``open`` to
``paid`` in the same transaction); with ``SHOP_FULFIL=every`` it fulfils on every delivery
(the broken twin).
``checkout.session.expired`` marks an open order expired. ``DATABASE_URL`` is
``sqlite:///<file>``; ``WEBHOOK_SECRET`` the endpoint's signing secret.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from typing import Any

import stripe

from tests.support import read_body

TABLES = ("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, session TEXT, status TEXT NOT NULL)",
          "CREATE TABLE IF NOT EXISTS fulfilments (business_key TEXT NOT NULL, reference TEXT NOT NULL)")
TIMEOUT_S = 10


def connect() -> sqlite3.Connection:
    """The shop's database (``DATABASE_URL``), its tables made."""
    conn = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), timeout=TIMEOUT_S,
                           isolation_level=None)
    for table in TABLES:
        conn.execute(table)
    return conn


def handle(body: bytes, signature: str) -> int:
    """The webhook's answer status for one delivery."""
    try:
        event = stripe.Webhook.construct_event(body, signature, os.environ["WEBHOOK_SECRET"])
    except (stripe.SignatureVerificationError, ValueError):
        return 400
    if not event.type.startswith("checkout.session."):
        return 200
    session = event.data.object
    conn = connect()
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT status FROM orders WHERE id = ?", (session.client_reference_id,)).fetchone()
        if row is None or session.metadata.to_dict().get("order") != session.client_reference_id:
            conn.execute("ROLLBACK")
            return 404
        plan = session.mode == "subscription"
        owed = session.payment_status in (("paid", "no_payment_required") if plan else ("paid",))
        if event.type == "checkout.session.completed" and owed:
            first = conn.execute("UPDATE orders SET status = 'paid', session = ? WHERE id = ? AND status = 'open'",
                                 (session.id, session.client_reference_id)).rowcount == 1
            if first or os.environ.get("SHOP_FULFIL") == "every":
                conn.execute("INSERT INTO fulfilments VALUES (?, ?)",
                             (f"{'provision' if plan else 'fulfillment'}:{session.id}", session.client_reference_id))
        elif event.type == "checkout.session.expired":
            conn.execute("UPDATE orders SET status = 'expired' WHERE id = ? AND status = 'open'",
                         (session.client_reference_id,))
        conn.execute("COMMIT")
        return 200
    finally:
        conn.close()


async def app(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI webhook endpoint (any path)."""
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    status = handle(body, headers.get("stripe-signature", ""))
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


def seed() -> None:
    """The checkout page: open the sessions the document asks for (see the module docstring)."""
    document = json.load(sys.stdin)
    wanted = int(os.environ.get("SHOP_SESSIONS", document.get("create", {}).get("checkout.session", 0)))
    client = stripe.StripeClient(os.environ["HOOKPROOF_API_KEY"],
                                 base_addresses={"api": os.environ["HOOKPROOF_API_BASE"]},
                                 http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
    kinds = document.get("create_each", {}).get("checkout.session") \
        or [document.get("create_as", {}).get("checkout.session", {"mode": "payment"})] * wanted
    conn = connect()
    for i in range(wanted):
        order = f"{document['scenario']}-{i + 1}"
        mode = os.environ.get("SHOP_MODE") or (kinds[i] if i < len(kinds) else kinds[-1])["mode"]
        conn.execute("INSERT INTO orders VALUES (?, NULL, 'open')", (order,))
        price: dict[str, Any] = {"currency": "usd", "unit_amount": 2500, "product_data": {"name": f"Order {order}"}}
        params: dict[str, Any] = {"mode": mode, "client_reference_id": order, "metadata": {"order": order},
                                  "customer_email": f"buyer{i + 1}@example.com",
                                  "success_url": "https://shop.example/thanks", "cancel_url": "https://shop.example/cart"}
        if mode == "subscription":
            price["recurring"] = {"interval": "month"}
            params["subscription_data"] = {"metadata": {"order": order}}
        client.v1.checkout.sessions.create(params={**params, "line_items": [{"quantity": 1, "price_data": price}]})
    conn.close()


if __name__ == "__main__":
    seed()
