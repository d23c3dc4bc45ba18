"""A Stripe receiver written from Stripe's docs (Flask, SQLite, stripe-python), for the
counter tests: each paid invoice grants a renewal and credits its customer's balance.

The grants table holds one row per invoice (a primary key: a redelivery never adds a
second row), so the effects alone look exactly-once. ``BALANCE`` decides the balance:

- ``with-grant`` (correct): the event id is claimed, the grant inserted and the balance
  credited in one ``BEGIN IMMEDIATE`` transaction, the credit only for a new grant;
- ``every-delivery`` (broken): the grant is unique, but every delivery of ``invoice.paid``
  credits the balance again (the receiver a team writes when only the grant is deduped).

A ``charge.refunded`` (when the config sends it) reverses the refund's own amount, the change
of the charge's cumulative ``amount_refunded`` since ``data.previous_attributes``, and records
its row ``refund:<charge>:<amount_refunded>``. ``REFUNDS`` decides the reversal:

- ``netted`` (correct): in the event's transaction, once per new refund row;
- ``every-delivery`` (broken): the row is unique, but every delivery debits the balance again.

Run: ``python balance_shop.py PORT`` with ``STRIPE_WEBHOOK_SECRET``, ``DB`` (SQLite file)
and ``BALANCE`` in the environment. ``GET /healthz`` answers 200 once it listens.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from typing import Any

import stripe
from flask import Flask, request

DB = os.environ.get("DB", "shop.db")
SECRET = os.environ.get("STRIPE_WEBHOOK_SECRET", "")
BALANCE = os.environ.get("BALANCE", "with-grant")
REFUNDS = os.environ.get("REFUNDS", "netted")
SCHEMA = """
CREATE TABLE IF NOT EXISTS processed_events (event_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS grants (business_key TEXT PRIMARY KEY, amount INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS balances (customer TEXT PRIMARY KEY, amount INTEGER NOT NULL);
"""
CREDIT = ("INSERT INTO balances VALUES (?, ?) ON CONFLICT (customer) "
          "DO UPDATE SET amount = amount + excluded.amount")

app = Flask(__name__)


def grant(db: sqlite3.Connection, invoice: Any) -> None:
    """The renewal grant of a paid invoice, and its balance credit as `BALANCE` says."""
    new = db.execute("INSERT OR IGNORE INTO grants VALUES (?, ?)",
                     (f"inv:{invoice['id']}", invoice["amount_paid"])).rowcount
    if new or BALANCE == "every-delivery":
        db.execute(CREDIT, (invoice["customer"], invoice["amount_paid"]))


def reverse(db: sqlite3.Connection, charge: Any, previous: Any) -> None:
    """A refund's row, and its debit of the charge's customer as `REFUNDS` says."""
    refunded = charge["amount_refunded"] - previous["amount_refunded"]  # the cumulative total's change
    new = db.execute("INSERT OR IGNORE INTO grants VALUES (?, ?)",
                     (f"refund:{charge['id']}:{charge['amount_refunded']}", refunded)).rowcount
    if new or REFUNDS == "every-delivery":
        db.execute(CREDIT, (charge["customer"], -refunded))


@app.post("/webhooks")
def webhooks() -> tuple[str, int]:
    try:
        event = stripe.Webhook.construct_event(request.get_data(), request.headers.get("Stripe-Signature", ""),
                                               SECRET)
    except (ValueError, stripe.SignatureVerificationError):
        return "bad signature", 400
    if event["livemode"] or event["type"] not in ("invoice.paid", "charge.refunded"):
        return "ignored", 200
    db = sqlite3.connect(DB, timeout=30, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        claimed = db.execute("INSERT OR IGNORE INTO processed_events VALUES (?)", (event["id"],)).rowcount
        if event["type"] == "charge.refunded":
            if claimed or REFUNDS == "every-delivery":
                reverse(db, event["data"]["object"], event["data"]["previous_attributes"])
        elif claimed or BALANCE == "every-delivery":
            grant(db, event["data"]["object"])
        db.execute("COMMIT")
    finally:
        db.close()
    return "ok", 200


@app.get("/healthz")
def healthz() -> tuple[str, int]:
    return "ok", 200


if __name__ == "__main__":
    with sqlite3.connect(DB) as setup:
        setup.execute("PRAGMA journal_mode=WAL")
        setup.executescript(SCHEMA)
    app.run(host="127.0.0.1", port=int(sys.argv[1]), threaded=True)
