"""A shop that creates its own customers and subscriptions, written from Stripe's Billing docs
("Build a subscriptions integration": create the customer, create the subscription with
``payment_behavior=default_incomplete``, provision access on ``invoice.paid``), for the tests
of a seed that creates the story's subscriptions (`[target.seed] creates`).

``python -m tests.scenarios.subscription_shop`` is its seed command, the shop's sign-up page:
for each subscription the seed document's ``create`` asks for (and at least one per customer
it asks for) it inserts an ``accounts`` row (user ``<scenario>-<n>``), creates the customer
with stripe-python (``customers.create``, ``metadata.user``) and then the subscription
(``subscriptions.create`` with ``default_incomplete`` and the same ``metadata.user``, its
first invoice's ``confirmation_secret`` expanded as the docs do to collect the payment),
at ``HOOKPROOF_API_BASE`` with ``HOOKPROOF_API_KEY``. With ``SHOP_SUBSCRIPTIONS=N`` it
creates N subscriptions instead.

``python -m tests.scenarios.subscription_shop serve PORT`` is its webhook endpoint, over
HTTP on 127.0.0.1 (`serve`): verifies with ``stripe.Webhook.construct_event``, answers 404
for a customer, subscription or invoice whose ``metadata.user`` (an invoice's
``parent.subscription_details.metadata.user``) names no account of the shop or whose
subscription is not that account's, so every delivery it acknowledges is about its own
objects. ``invoice.paid`` provisions access: a ``grants`` row keyed ``renewal:<invoice id>``.
As the docs ask, it handles each event once (``processed_events`` by event id, in the same
transaction); with ``SHOP_DEDUPE=off`` it handles every delivery (the broken twin).
``customer.subscription.*`` records the subscription's status on the account as the provider
API serves it (``subscriptions.retrieve``, as Stripe advises for events that arrive out of order).
``DATABASE_URL`` is ``sqlite:///<file>``; ``WEBHOOK_SECRET`` the endpoint's signing secret.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import stripe

TABLES = ("CREATE TABLE IF NOT EXISTS accounts (user TEXT PRIMARY KEY, customer TEXT, subscription TEXT, "
          "status TEXT)",
          "CREATE TABLE IF NOT EXISTS grants (business_key TEXT NOT NULL, user TEXT NOT NULL)",
          "CREATE TABLE IF NOT EXISTS processed_events (id TEXT PRIMARY KEY)")
TIMEOUT_S = 10


def connect() -> sqlite3.Connection:
    """The shop's database (``DATABASE_URL``), its tables made."""
    conn = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), timeout=TIMEOUT_S,
                           isolation_level=None)
    for table in TABLES:
        conn.execute(table)
    return conn


def _client() -> stripe.StripeClient:
    """stripe-python's client at hookproof's provider API (``HOOKPROOF_API_BASE``, ``HOOKPROOF_API_KEY``)."""
    return stripe.StripeClient(os.environ["HOOKPROOF_API_KEY"], base_addresses={"api": os.environ["HOOKPROOF_API_BASE"]},
                               http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)


def _owner(conn: sqlite3.Connection, event: Any) -> str | None:
    """The account the event's object belongs to, or None when it is none of the shop's."""
    obj = event.data.object
    if event.type == "customer.created":
        user = obj.metadata.to_dict().get("user")
        row = conn.execute("SELECT user FROM accounts WHERE user = ? AND customer = ?", (user, obj.id)).fetchone()
    elif event.type.startswith("customer.subscription."):
        user = obj.metadata.to_dict().get("user")
        row = conn.execute("SELECT user FROM accounts WHERE user = ? AND subscription = ?", (user, obj.id)).fetchone()
    else:  # an invoice: its subscription's metadata, as Stripe snapshots it on the invoice
        details = obj.parent.subscription_details
        row = conn.execute("SELECT user FROM accounts WHERE user = ? AND subscription = ?",
                           (details.metadata.to_dict().get("user"), details.subscription)).fetchone()
    return None if row is None else str(row[0])


def handle(body: bytes, signature: str) -> int:
    """The webhook's answer status for one delivery."""
    try:
        event = stripe.Webhook.construct_event(body, signature, os.environ["WEBHOOK_SECRET"])
    except (stripe.SignatureVerificationError, ValueError):
        return 400
    if not (event.type in ("customer.created", "invoice.paid") or event.type.startswith("customer.subscription.")):
        return 200
    status = None
    if event.type.startswith("customer.subscription."):  # its state now, whatever order events come in
        status = _client().v1.subscriptions.retrieve(event.data.object.id).status
    conn = connect()
    try:
        conn.execute("BEGIN IMMEDIATE")
        user = _owner(conn, event)
        if user is None:
            conn.execute("ROLLBACK")
            return 404
        if os.environ.get("SHOP_DEDUPE") != "off" and conn.execute(
                "INSERT OR IGNORE INTO processed_events VALUES (?)", (event.id,)).rowcount == 0:
            conn.execute("COMMIT")  # handled before: acknowledge, do nothing
            return 200
        obj = event.data.object
        if event.type == "invoice.paid":
            conn.execute("INSERT INTO grants VALUES (?, ?)", (f"renewal:{obj.id}", user))
        elif event.type.startswith("customer.subscription."):
            conn.execute("UPDATE accounts SET status = ? WHERE user = ?", (status, user))
        conn.execute("COMMIT")
        return 200
    finally:
        conn.close()


class _Webhook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status = handle(body, self.headers.get("Stripe-Signature", ""))
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def serve(port: int) -> None:
    """The webhook endpoint over HTTP on 127.0.0.1:`port` (any path), until killed."""
    ThreadingHTTPServer(("127.0.0.1", port), _Webhook).serve_forever()


def seed() -> None:
    """The sign-up page: create the customers and subscriptions the document asks for (see the module docstring)."""
    document = json.load(sys.stdin)
    create = document.get("create", {})
    subscriptions = int(os.environ.get("SHOP_SUBSCRIPTIONS", create.get("subscription", 0)))
    users = max(subscriptions, int(create.get("customer", 0)))
    client = _client()
    conn = connect()
    membership = client.v1.products.create(params={"name": "Membership"}) if subscriptions else None
    for i in range(users):
        user = f"{document['scenario']}-{i + 1}"
        customer = client.v1.customers.create(params={"email": f"member{i + 1}@example.com",
                                                      "metadata": {"user": user}})
        conn.execute("INSERT INTO accounts VALUES (?, ?, NULL, 'none')", (user, customer.id))
        if i >= subscriptions:
            continue
        assert membership is not None
        subscription = client.v1.subscriptions.create(params={
            "customer": customer.id, "payment_behavior": "default_incomplete", "metadata": {"user": user},
            "items": [{"price_data": {"currency": "usd", "unit_amount": 1500, "product": membership.id,
                                      "recurring": {"interval": "month"}}}],
            "payment_settings": {"save_default_payment_method": "on_subscription"},
            "expand": ["latest_invoice.confirmation_secret"],
        })
        assert subscription.status == "incomplete" and subscription.latest_invoice.confirmation_secret is not None
        conn.execute("UPDATE accounts SET subscription = ? WHERE user = ?", (subscription.id, user))
    conn.close()


if __name__ == "__main__":
    serve(int(sys.argv[2])) if sys.argv[1:2] == ["serve"] else seed()
