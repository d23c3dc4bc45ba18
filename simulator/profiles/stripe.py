"""Stripe: `Stripe-Signature: t=<s>,v1=<hex>` over ``{t}.{raw body}``.

Sources: stripe-python `stripe/_webhook.py` (`WebhookSignature.verify_header`,
`Webhook.DEFAULT_TOLERANCE = 300`, past-only check); docs.stripe.com/webhooks
(signatures, event object); docs.stripe.com/webhooks/process-undelivered-events
(resends for up to 3 days with exponential backoff).
"""

from __future__ import annotations

import hmac
import random
from typing import Any, Mapping, Sequence

from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, Tolerance, canonical_json, require_secrets

#: Every Stripe event type the world emits (the world speaks Stripe's names).
STRIPE_EVENT_TYPES: tuple[str, ...] = (
    "customer.created",
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.async_payment_failed",
    "checkout.session.expired",
    "payment_intent.succeeded",
    "payment_intent.payment_failed",
    "charge.succeeded",
    "charge.refunded",
    "invoice.created",
    "invoice.paid",
    "invoice.payment_failed",
    "invoice.voided",
    "customer.subscription.created",
    "customer.subscription.updated",
    "customer.subscription.deleted",
)


def stripe_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of ``{timestamp}.{body}`` keyed by the whole secret (with `whsec_`).

    Source: stripe-python `WebhookSignature._compute_signature`.
    """
    return hmac.digest(secret.encode("utf-8"), b"%d.%b" % (timestamp, body), "sha256").hex()


class StripeProfile(Profile):
    """Stripe v1 snapshot events.

    Delivery contract: any 2xx succeeds; live mode retries with exponential backoff for
    up to 3 days (docs.stripe.com/webhooks/process-undelivered-events; intervals are not
    published, so the schedule below is exponential over ~3 days). The sender timeout is
    not published (docs say "timed out"); 20 s is the harness default.
    """

    name = "stripe"
    title = "Stripe"
    signature_headers = ("Stripe-Signature",)
    sender_timeout_s = 20.0
    retry_schedule_s = (60.0, 300.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 57600.0, 86400.0, 86400.0)
    tolerance = Tolerance(past_s=300.0, future_s=None)
    default_event = "payment_intent.succeeded"
    has_livemode = True
    has_account = True
    multiple_signatures = True

    def event_types(self) -> Mapping[str, str]:
        return {t: t for t in STRIPE_EVENT_TYPES}

    def event_object(self, event: Event) -> dict[str, Any]:
        """The Stripe Event object (docs.stripe.com/api/events/object) for `event`."""
        data: dict[str, Any] = {"object": dict(event.object)}
        if event.previous_attributes is not None:
            data["previous_attributes"] = dict(event.previous_attributes)
        return {
            "id": event.id,
            "object": "event",
            "account": event.account,
            "api_version": event.api_version,
            "created": event.created,
            "data": data,
            "livemode": event.livemode,
            "pending_webhooks": 1,
            "request": {"id": event.request_id, "idempotency_key": None},
            "type": event.type,
        }

    def envelope(self, event: Event) -> Envelope:
        return Envelope(
            event_id=event.id,
            type=event.type,
            body=canonical_json(self.event_object(event)),
            headers={
                "Content-Type": "application/json; charset=utf-8",
                "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
            },
        )

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        require_secrets(secrets, self.name)
        parts = [f"t={timestamp}"] + [f"v1={stripe_signature(s, timestamp, envelope.body)}" for s in secrets]
        return {"Stripe-Signature": ",".join(parts)}

    def generate_secret(self, seed: int) -> str:
        rng = random.Random(seed)
        return "whsec_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(32))
