"""Shopify: ``X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>`` (no timestamp).

Sources: shopify.dev/docs/apps/build/webhooks/delivery-structure (headers: Topic,
Hmac-Sha256, Shop-Domain, API-Version, Webhook-Id, Triggered-At, Event-Id; the body is
the full REST resource), shopify.dev/apps/build/webhooks/ignore-duplicates
(``X-Shopify-Event-Id`` is the duplicate key), shopify.dev/changelog/updates-to-webhook-retry-mechanism
(8 retries over 4 hours, exponential, since 2024-09-10); npm ``@shopify/shopify-api``
``lib/webhooks/validate.js`` (official verifier: base64 digest, required headers).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import re
from typing import ClassVar, Mapping, Sequence

from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_uuid, rfc3339_ns

#: Stripe event type -> Shopify webhook topic. Checkout completion creates an order;
#: payments are orders being paid or order transactions; refunds are refunds;
#: subscription invoices are subscription billing attempts; subscriptions are
#: subscription contracts. ``invoice.created`` and ``invoice.voided`` have no Shopify
#: counterpart and are not sent.
SHOPIFY_TOPICS: Mapping[str, str] = {
    "customer.created": "customers/create",
    "checkout.session.completed": "orders/create",
    "checkout.session.async_payment_succeeded": "orders/paid",
    "checkout.session.async_payment_failed": "orders/updated",
    "checkout.session.expired": "checkouts/delete",
    "payment_intent.succeeded": "orders/paid",
    "payment_intent.payment_failed": "order_transactions/create",
    "charge.succeeded": "order_transactions/create",
    "charge.refunded": "refunds/create",
    "invoice.paid": "subscription_billing_attempts/success",
    "invoice.payment_failed": "subscription_billing_attempts/failure",
    "customer.subscription.created": "subscription_contracts/create",
    "customer.subscription.updated": "subscription_contracts/update",
    "customer.subscription.deleted": "subscription_contracts/cancel",
}


def shopify_hmac(secret: str, body: bytes) -> str:
    """Standard base64 of HMAC-SHA256(body) keyed by the app's client secret as UTF-8."""
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()).decode("ascii")


def shop_domain(account: str) -> str:
    """The ``<shop>.myshopify.com`` domain standing for a world account (``acct_hookproof`` -> ``hookproof``)."""
    shop = re.sub(r"[^a-z0-9]+", "-", account.lower().removeprefix("acct_")).strip("-")
    return f"{shop or 'shop'}.myshopify.com"


class ShopifyProfile(Profile):
    """Shopify Admin webhooks over HTTPS.

    Envelope: the body is the resource itself (Shopify sends the full REST resource of
    the topic; here the world's object snapshot). Headers: ``X-Shopify-Topic``,
    ``X-Shopify-Shop-Domain`` (the account), ``X-Shopify-API-Version``,
    ``X-Shopify-Webhook-Id`` (per delivery, unchanged across retries as integrators
    observe), ``X-Shopify-Event-Id`` (shared by every delivery of one merchant action:
    the documented dedupe key, ``Envelope.event_id``), ``X-Shopify-Triggered-At`` (event
    time; retries keep the trigger-time payload). Ids are UUIDs derived from the event id.
    No test/live flag.

    Signing: one client secret, no rotation list: only the first secret signs. No
    timestamp, so no tolerance window.

    Delivery contract: 200-series succeeds; 1 s to connect and 5 s in total [2ND];
    8 retries over 4 hours with exponential backoff. Shopify does not publish the
    intervals: here they double from 1 min (1, 2, 4, 8, 16, 32, 64 min) and the
    eighth retry lands exactly 4 h after the first attempt.
    """

    name = "shopify"
    title = "Shopify"
    signature_headers = ("X-Shopify-Hmac-Sha256",)
    sender_timeout_s = 5.0
    retry_schedule_s = (60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3840.0, 6780.0)
    api_version: ClassVar[str] = "2024-10"
    default_event = "payment_intent.succeeded"
    has_account = True

    def event_types(self) -> Mapping[str, str]:
        return SHOPIFY_TOPICS

    def envelope(self, event: Event) -> Envelope:
        topic = SHOPIFY_TOPICS.get(event.type, event.type)
        event_id = derived_uuid("shopify-event", event.id)
        return Envelope(
            event_id=event_id,
            type=topic,
            body=canonical_json(dict(event.object)),
            headers={
                "Content-Type": "application/json",
                "X-Shopify-Topic": topic,
                "X-Shopify-Shop-Domain": shop_domain(event.account),
                "X-Shopify-API-Version": self.api_version,
                "X-Shopify-Webhook-Id": derived_uuid("shopify-webhook", event.id),
                "X-Shopify-Event-Id": event_id,
                "X-Shopify-Triggered-At": rfc3339_ns(event.created_us),
            },
        )

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """The HMAC header with the first secret; `timestamp` is not used (none is signed)."""
        require_secrets(secrets, self.name)
        return {"X-Shopify-Hmac-Sha256": shopify_hmac(secrets[0], envelope.body)}

    def generate_secret(self, seed: int) -> str:
        """``shpss_`` + 32 lowercase hex characters (the shape of Shopify app client secrets)."""
        return "shpss_" + random.Random(seed).randbytes(16).hex()
