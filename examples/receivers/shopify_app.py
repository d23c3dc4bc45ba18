"""shopify_app: a Shopify app's webhook endpoint, written from Shopify's docs.

Shopify's docs (shopify.dev/docs/apps/build/webhooks: "Verify webhooks", "Ignore duplicate
webhooks", "Respond to webhooks") say to verify ``X-Shopify-Hmac-Sha256`` (base64
HMAC-SHA256 of the raw body with the app's client secret, compared in constant time),
answer a 200-series status within 5 s, expect the same event more than once (its
``X-Shopify-Event-Id`` is the same on every delivery; "the same value across more than one
webhook indicates a duplicate") and out of order (compare the
payload's ``updated_at``, or ``X-Shopify-Triggered-At``, "when Shopify triggered the
delivery"). ``updated_at`` counts whole seconds, and an order paid, refunded and cancelled
within one second carries one ``updated_at`` in each event: the trigger time, nine fractional
digits, tells them apart. Shopify ships no Python verifier; this is the docs' Python
check. The Event-Id is "a unique ID shared across all deliveries produced by the same merchant
action" (shopify.dev/docs/apps/build/webhooks/delivery-structure): a checkout's ``orders/create``
and ``orders/paid``, a refund's ``refunds/create`` and ``orders/updated`` carry one, so the
duplicate key is the shop, the topic and the Event-Id. This receiver:

- answers 401 to a missing or wrong HMAC;
- in one SQLite transaction: claims ``(X-Shopify-Shop-Domain, X-Shopify-Topic,
  X-Shopify-Event-Id)`` (a redelivery changes nothing; another topic of one action is applied),
  applies the topic's effect (``welcome:{customer id}`` on ``customers/create``,
  ``fulfil:{order id}`` on ``orders/paid``, ``refund:{refund id}`` with the refunded amount
  in cents on ``refunds/create``, ``restock:{order id}`` on ``orders/cancelled``,
  ``purge:{shop id}`` on ``app/uninstalled``; the mandatory compliance topics, whose HMAC is
  checked like every other's: ``report:{data_request.id}`` on ``customers/data_request``,
  ``redact:{customer.id}`` on ``customers/redact``, ``erase:{shop_id}`` on ``shop/redact``), credits a paid order's customer its
  ``total_price`` in cents (a store credit balance, ``credits``: ``"60.42"`` is 6042, read as a
  `Decimal`), and stores an order's ``financial_status`` and ``fulfillment_status`` (null,
  ``partial``, ``fulfilled``: ``orders/partially_fulfilled`` and ``orders/fulfilled`` carry the
  order too) unless a newer one is stored: a later ``updated_at``, or the same second and a later
  ``X-Shopify-Triggered-At``; on ``shop/redact`` erases the shop's stored orders (the shop it
  names, ``shop_domain``: "erase data for that store from your database", shopify.dev, "Privacy
  law compliance");
- with ``SHOP_DOMAIN`` set, acknowledges another shop's webhooks without acting on them;
- answers 200 to every other topic.

`create_app(dedupe=False)` is its broken twin (``shopify_app_no_dedupe``): no claim, so a
redelivered event repeats its effect. `create_app(dedupe_by_object=True)` is another
(``shopify_app_dedupe_by_object``): it claims the topic and the order (a refund's
``order_id``, else the resource's ``id``) instead of the event, so an order's second
``orders/updated`` is taken for a duplicate and its state stays behind.
`create_app(dedupe_by_webhook_id=True)` is a third (``shopify_app_dedupe_by_webhook_id``): it
claims ``X-Shopify-Webhook-Id`` instead of ``X-Shopify-Event-Id``, so a retry is caught but the
same event through a second subscription to its topic (a new Webhook-Id, the same Event-Id:
shopify.dev, "Ignore duplicate webhooks") repeats its effect.
`create_app(dedupe_by_event_id_alone=True)` is another (``shopify_app_dedupe_by_event_id_alone``): it
claims ``X-Shopify-Event-Id`` without the topic, so the second topic of one merchant action (a
checkout's ``orders/paid`` after its ``orders/create``, a refund's ``orders/updated`` after its
``refunds/create``) is taken for a duplicate and never applied.
`create_app(claim_compliance=False)` is another (``shopify_app_redact_every_delivery``): it
claims the event of every topic but the compliance ones, taking an erasure to be harmless to
repeat, so a redelivered ``customers/redact`` (or data request, or ``shop/redact``) erases again.
`create_app(verify_compliance=False)` is another (``shopify_app_compliance_unverified``): it
answers the compliance topics without checking their HMAC, so a forged ``customers/redact`` erases
a customer's data (shopify.dev "Privacy law compliance": an invalid HMAC must get 401).
`create_app(same_second="overwrite")` is a fourth (``shopify_app_same_second_overwrite``): it
guards an order's state with ``stored updated_at <= incoming`` alone, so an older payload of the
same ``updated_at`` second overwrites a newer one; ``same_second="keep"`` (``>`` alone) drops a
newer one instead.
`create_app(fulfillment_by_arrival=True)` is another (``shopify_app_fulfillment_by_arrival``): it
keeps ``financial_status`` newest-first but writes ``fulfillment_status`` from whichever order
event arrives last, so an older ``orders/create`` (null) delivered after ``orders/fulfilled``
leaves a shipped order unfulfilled (``stale``).
`create_app(erase_on_uninstall=True)` is a variant as correct (``shopify_app_uninstall_erase``): on
``app/uninstalled`` it also erases the stored orders of the shop named by ``X-Shopify-Shop-Domain``
(the shop's session and data dropped as apps do on uninstall: the domain is the shop's key,
``shopify.webhooks.validate`` returns it, and Shopify's Remix app template's uninstall handler
deletes ``db.session.deleteMany({ where: { shop } })``).
`create_app(admin=AdminApi(...))` is its fetching variant (``shopify_app_fetch``): on an
``orders/*`` topic it reads the order through the Admin REST API
(``GET /admin/api/2024-10/orders/{id}.json`` with ``X-Shopify-Access-Token``, 5 s timeout)
and stores the state it reads; when the API fails it answers 503 before claiming anything, so Shopify's retry applies the event;
with ``ack_fetch_failures`` (``shopify_app_fetch_ack_drop``, a broken twin) it answers 200
instead and applies nothing, so the event is lost.

Configuration (environment): ``PORT``, ``DATABASE`` (SQLite file), ``SHOPIFY_API_SECRET``
(or ``WEBHOOK_SECRET``, ``HOOKPROOF_SECRET``), ``SHOP_DOMAIN`` (optional); the fetching
variant also ``SHOPIFY_ADMIN_URL`` and ``SHOPIFY_ACCESS_TOKEN`` (or ``HOOKPROOF_API_BASE``
and ``HOOKPROOF_API_KEY``, which ``certify`` gives). Run:
``python -m examples.receivers.shopify_app``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Mapping

import httpx
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from examples.receivers.mercadopago_fetch import Transaction, serve

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, received_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER, event_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS credits (customer_id TEXT PRIMARY KEY, amount INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, updated_ts INTEGER NOT NULL,
                                   triggered_ns INTEGER NOT NULL DEFAULT 0, fulfillment_status TEXT,
                                   shop TEXT NOT NULL DEFAULT '');
"""

#: How an order's stored state is guarded, by `create_app`'s ``same_second``: the stored row is
#: replaced when the incoming ``(updated_at, X-Shopify-Triggered-At)`` is later (``triggered_at``,
#: the correct one), when its ``updated_at`` is the same or later (``overwrite``: ``<=``, a broken
#: twin), or only when its ``updated_at`` is later (``keep``: ``<``, another).
GUARDS: Mapping[str, str] = {
    "triggered_at": "excluded.updated_ts > orders.updated_ts OR (excluded.updated_ts = orders.updated_ts "
                    "AND excluded.triggered_ns > orders.triggered_ns)",
    "overwrite": "excluded.updated_ts >= orders.updated_ts",
    "keep": "excluded.updated_ts > orders.updated_ts",
}


def triggered_ns(value: str | None) -> int:
    """``X-Shopify-Triggered-At`` (RFC 3339, UTC, up to nine fractional digits) as unix
    nanoseconds; 0 when absent or unreadable (then ``updated_at`` alone orders)."""
    if not value:
        return 0
    main, _, rest = value.partition(".")
    digits = "".join(c for c in rest if c.isdigit())
    zone = rest[len(digits):] if rest else ""
    try:
        seconds = datetime.fromisoformat((main + zone).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0
    return int(seconds) * 1_000_000_000 + int((digits + "0" * 9)[:9])


def _cents(amount: str) -> int:
    return int(Decimal(amount) * 100)


#: Topic -> the business key of its effect (and its amount in cents), from the payload.
EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], tuple[str, int | None]]] = {
    "customers/create": lambda b: (f"welcome:{b['id']}", None),
    "orders/paid": lambda b: (f"fulfil:{b['id']}", None),
    "refunds/create": lambda b: (f"refund:{b['id']}", sum(_cents(t["amount"]) for t in b["transactions"]
                                                           if t["kind"] == "refund" and t["status"] == "success")),
    "orders/cancelled": lambda b: (f"restock:{b['id']}", None),
    "app/uninstalled": lambda b: (f"purge:{b['id']}", None),
    "customers/data_request": lambda b: (f"report:{b['data_request']['id']}", None),
    "customers/redact": lambda b: (f"redact:{b['customer']['id']}", None),
    "shop/redact": lambda b: (f"erase:{b['shop_id']}", None),
}

#: The mandatory compliance topics (shopify.dev "Privacy law compliance").
COMPLIANCE_TOPICS = frozenset({"customers/data_request", "customers/redact", "shop/redact"})


def verified(secret: str, raw: bytes, header: str | None) -> bool:
    """shopify.dev's check: base64 HMAC-SHA256 of the raw body, compared in constant time."""
    digest = base64.b64encode(hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).digest()).decode("ascii")
    return header is not None and hmac.compare_digest(digest, header)


@dataclass(frozen=True)
class AdminApi:
    """Where the fetching variant reads orders: the shop's Admin API base URL and access token."""

    base_url: str
    access_token: str

    def order(self, order_id: int) -> dict[str, Any] | None:
        """The order as the Admin API answers it now, or None when it cannot be read."""
        url = f"{self.base_url.rstrip('/')}/admin/api/2024-10/orders/{order_id}.json"
        try:
            answer = httpx.get(url, headers={"X-Shopify-Access-Token": self.access_token}, timeout=5.0)
        except httpx.HTTPError:
            return None
        if answer.status_code != 200:
            return None
        found = answer.json().get("order")
        return found if isinstance(found, dict) else None


def create_app(database: str, secret: str, *, dedupe: bool = True, shop_domain: str | None = None,
               admin: AdminApi | None = None, ack_fetch_failures: bool = False,
               dedupe_by_object: bool = False, dedupe_by_webhook_id: bool = False,
               same_second: str = "triggered_at", claim_compliance: bool = True,
               verify_compliance: bool = True, dedupe_by_event_id_alone: bool = False,
               fulfillment_by_arrival: bool = False, erase_on_uninstall: bool = False) -> FastAPI:
    """The receiver's FastAPI app (see the module docstring; `same_second`: a key of `GUARDS`)."""
    guard = GUARDS[same_second]
    with sqlite3.connect(database) as setup:
        setup.executescript(SCHEMA)
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
        checks = verify_compliance or headers.get("x-shopify-topic") not in COMPLIANCE_TOPICS
        if checks and not verified(secret, raw, headers.get("x-shopify-hmac-sha256")):
            return JSONResponse({"error": "invalid X-Shopify-Hmac-Sha256"}, status_code=401)
        topic, event_id = headers.get("x-shopify-topic"), headers.get("x-shopify-event-id")
        if not topic or not event_id:
            return JSONResponse({"error": "missing X-Shopify-Topic or X-Shopify-Event-Id"}, status_code=400)
        if shop_domain and headers.get("x-shopify-shop-domain") != shop_domain:
            return JSONResponse({"ignored": "another shop"})
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse({"error": "not JSON"}, status_code=400)
        effect = EFFECTS.get(topic)
        order = body
        if admin is not None and topic.startswith("orders/"):
            order = admin.order(body["id"])
            if order is None and ack_fetch_failures:  # the broken twin: acknowledged, nothing applied
                return JSONResponse({"ignored": "the Admin API could not be read"})
            if order is None:  # not claimed: Shopify retries, and the retry applies the event
                return JSONResponse({"error": "the Admin API could not be read"}, status_code=503)
        # one merchant action's topics share the Event-Id: the event is the shop's topic and Event-Id
        claimed = f"{headers.get('x-shopify-shop-domain')}:{topic}:{event_id}"
        if dedupe_by_object:  # the broken twin: the topic and the order, not the event
            claimed = f"{topic}:{body.get('order_id') or body.get('id')}"
        if dedupe_by_event_id_alone:  # the broken twin: the merchant action, not its topic's event
            claimed = event_id
        if dedupe_by_webhook_id:  # the broken twin: one subscription's delivery, not the event
            claimed = headers.get("x-shopify-webhook-id") or event_id
        with Transaction(database) as db:
            claims = dedupe and (claim_compliance or topic not in COMPLIANCE_TOPICS)
            if claims and db.execute("INSERT OR IGNORE INTO events (event_id) VALUES (?)", (claimed,)).rowcount == 0:
                return JSONResponse({"duplicate": event_id})
            if effect is not None:
                key, amount = effect(body)
                db.execute("INSERT INTO effects (business_key, amount, event_id) VALUES (?, ?, ?)",
                           (key, amount, event_id))
            if topic == "orders/paid" and isinstance(body.get("customer"), dict):  # the customer's store credit
                db.execute("INSERT INTO credits (customer_id, amount) VALUES (?, ?) ON CONFLICT (customer_id) "
                           "DO UPDATE SET amount = credits.amount + excluded.amount",
                           (str(body["customer"]["id"]), _cents(body["total_price"])))
            if topic.startswith("orders/"):
                updated = int(datetime.fromisoformat(order["updated_at"]).timestamp())
                db.execute("INSERT INTO orders (object_id, status, updated_ts, triggered_ns, fulfillment_status, shop) "
                           "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, "
                           "updated_ts = excluded.updated_ts, triggered_ns = excluded.triggered_ns, "
                           f"fulfillment_status = excluded.fulfillment_status WHERE {guard}",
                           (str(order["id"]), order["financial_status"], updated,
                            triggered_ns(headers.get("x-shopify-triggered-at")), order.get("fulfillment_status"),
                            headers.get("x-shopify-shop-domain") or ""))
                if fulfillment_by_arrival:  # the broken twin: the last to arrive, whatever its age
                    db.execute("UPDATE orders SET fulfillment_status = ? WHERE object_id = ?",
                               (order.get("fulfillment_status"), str(order["id"])))
            if topic == "shop/redact":  # the shop's data erased: its orders
                db.execute("DELETE FROM orders WHERE shop = ?", (body.get("shop_domain") or "",))
            if topic == "app/uninstalled" and erase_on_uninstall:  # the shop that uninstalled the app, by its domain
                db.execute("DELETE FROM orders WHERE shop = ?", (headers.get("x-shopify-shop-domain") or "",))
        return JSONResponse({"ok": True})

    return app


def main(dedupe: bool = True, fetch: bool = False, ack_fetch_failures: bool = False,
         dedupe_by_object: bool = False, dedupe_by_webhook_id: bool = False, same_second: str = "triggered_at",
         claim_compliance: bool = True, verify_compliance: bool = True, dedupe_by_event_id_alone: bool = False,
         fulfillment_by_arrival: bool = False, erase_on_uninstall: bool = False) -> None:
    """Run the receiver from its environment (see the module docstring)."""
    env = os.environ
    secret = env.get("SHOPIFY_API_SECRET") or env.get("WEBHOOK_SECRET") or env["HOOKPROOF_SECRET"]
    admin = AdminApi(env.get("SHOPIFY_ADMIN_URL") or env["HOOKPROOF_API_BASE"],
                     env.get("SHOPIFY_ACCESS_TOKEN") or env["HOOKPROOF_API_KEY"]) if fetch else None
    serve(create_app(env.get("DATABASE", "shopify.sqlite"), secret, dedupe=dedupe,
                     shop_domain=env.get("SHOP_DOMAIN") or None, admin=admin, ack_fetch_failures=ack_fetch_failures,
                     dedupe_by_object=dedupe_by_object, dedupe_by_webhook_id=dedupe_by_webhook_id,
                     same_second=same_second, claim_compliance=claim_compliance,
                     verify_compliance=verify_compliance, dedupe_by_event_id_alone=dedupe_by_event_id_alone,
                     fulfillment_by_arrival=fulfillment_by_arrival, erase_on_uninstall=erase_on_uninstall))


if __name__ == "__main__":
    main()
