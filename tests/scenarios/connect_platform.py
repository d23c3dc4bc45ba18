"""A Stripe Connect marketplace platform's webhook endpoint: it keeps each connected seller's
onboarding state from ``account.updated`` (docs.stripe.com/connect/webhooks; the onboarding
guides watch ``details_submitted``, ``charges_enabled`` and ``payouts_enabled``).

`app` (FastAPI) verifies with ``stripe.Webhook.construct_event`` and, for ``account.updated``,
stores the seller in ``sellers`` as ``PLATFORM_STATE`` says:

- ``fetch`` (default): retrieves the account from the provider API (``stripe.Account.retrieve``
  of the event's ``account``, at ``HOOKPROOF_API_BASE`` with ``HOOKPROOF_API_KEY``) and stores
  what it serves: the newest state, whatever order the events arrive in;
- ``newest``: stores the event's account unless the row holds a newer event's (by ``created``);
- ``last``: stores the account of whichever event arrived last (the overwrite twin: an older
  event arriving after a newer one regresses the seller's onboarding).

For ``payment_intent.succeeded`` it records the seller's payment once, keyed
``payment:<connected account>:<payment intent>`` (the config's ``payment:{account}:{data.object.id}``);
with ``PAYMENT_OWNER=platform`` (the twin booking every payment to the platform) under
``payment:platform:<payment intent>``. Every other event type is acknowledged and ignored. ``python -m tests.scenarios.connect_platform``
serves it on ``PORT`` (uvicorn), its database at ``DATABASE_URL`` (``sqlite:///…``).
"""

from __future__ import annotations

import os
import sqlite3

import stripe
from fastapi import FastAPI, Request, Response

#: Seconds a database lock or a provider API call may take.
TIMEOUT_S = 10.0

#: The observer's state query: the status a platform derives from the stored flags, as the
#: README's Connect section states it (``restricted``, ``pending``, ``enabled``).
STATES = ("SELECT id AS object_id, CASE WHEN charges_enabled = 1 AND payouts_enabled = 1 THEN 'enabled' "
          "WHEN details_submitted = 1 THEN 'pending' ELSE 'restricted' END AS status FROM sellers")
#: The observer's effects query: the platform owes no effect on ``account.updated``.
EFFECTS = "SELECT business_key, amount FROM effects"

app = FastAPI()


def connect() -> sqlite3.Connection:
    """The platform's database (its tables made if missing)."""
    conn = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), timeout=TIMEOUT_S,
                           isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS sellers (id TEXT PRIMARY KEY, details_submitted INTEGER, "
                 "charges_enabled INTEGER, payouts_enabled INTEGER, event_created INTEGER)")
    conn.execute("CREATE TABLE IF NOT EXISTS effects (business_key TEXT PRIMARY KEY, amount INTEGER)")
    return conn


def _account(event: stripe.Event) -> stripe.Account:
    """The account to store: the event's own, or the provider API's (``fetch``)."""
    if os.environ.get("PLATFORM_STATE", "fetch") != "fetch":
        account: stripe.Account = event.data.object
        return account
    client = stripe.StripeClient(os.environ["HOOKPROOF_API_KEY"],
                                 base_addresses={"api": os.environ["HOOKPROOF_API_BASE"]},
                                 http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
    return client.v1.accounts.retrieve(str(event.account))


def handle(event: stripe.Event) -> None:
    """Store the seller of an ``account.updated`` as ``PLATFORM_STATE`` says; record a payment once."""
    if event.type == "payment_intent.succeeded":
        owner = "platform" if os.environ.get("PAYMENT_OWNER") == "platform" else str(event.account)
        intent = event.data.object
        with connect() as conn:
            conn.execute("INSERT INTO effects VALUES (?, ?) ON CONFLICT(business_key) DO NOTHING",
                         (f"payment:{owner}:{intent.id}", int(intent.amount)))
        return
    if event.type != "account.updated":
        return
    account = _account(event)
    row = (account.id, int(bool(account.details_submitted)), int(bool(account.charges_enabled)),
           int(bool(account.payouts_enabled)), int(event.created))
    guard = " WHERE excluded.event_created >= sellers.event_created" \
        if os.environ.get("PLATFORM_STATE") == "newest" else ""
    with connect() as conn:
        conn.execute("INSERT INTO sellers VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                     "details_submitted = excluded.details_submitted, charges_enabled = excluded.charges_enabled, "
                     "payouts_enabled = excluded.payouts_enabled, event_created = excluded.event_created" + guard,
                     row)


@app.post("/webhooks")
async def stripe_webhook(request: Request) -> Response:
    body = await request.body()
    try:
        event = stripe.Webhook.construct_event(body, request.headers.get("stripe-signature", ""),
                                               os.environ["WEBHOOK_SECRET"])
    except (stripe.SignatureVerificationError, ValueError):
        return Response(status_code=400)
    if event.livemode:  # a live Connect endpoint's test events are not this platform's (and the reverse)
        return Response(status_code=200)
    handle(event)
    return Response(status_code=200)


@app.get("/healthz")
async def healthz() -> Response:
    return Response(status_code=200)


if __name__ == "__main__":
    import uvicorn

    connect().close()
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
