"""Mercado Pago: thin payment notifications, ``x-signature: ts=<ts>,v1=<hex>`` over a manifest.

Sources: PyPI ``mercadopago`` 3.6.0 ``mercadopago/webhook/validator.py``
(``WebhookSignatureValidator.validate``: manifest ``id:{data.id};request-id:{x-request-id};ts:{ts};``,
absent pairs dropped, HMAC-SHA256 lowercase hex keyed by the secret as UTF-8, optional
tolerance in seconds); mercadopago/sdk-python ``tests/test_webhook_signature_validator.py``;
Mercado Pago IPN/Webhooks docs, "After receiving the notification" (answer 200 or 201;
22 s on the first attempt, 5 s on retries; retries 15 min, 30 min, 6 h, 48 h, 96 h after
the first dispatch; alphanumeric ``data.id`` signed lowercase).
"""

from __future__ import annotations

import hashlib
import hmac
import random
from typing import Any, ClassVar, Literal, Mapping, Sequence

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_int, derived_uuid, rfc3339_s

#: Stripe event type -> Mercado Pago notification ``action`` (``type`` is always ``payment``).
#: A payment (intent or charge) reaching its first outcome is ``payment.created`` (Mercado
#: Pago creates a payment already approved or rejected); a later status change (refund)
#: is ``payment.updated``. Checkout sessions, invoices, customers and subscriptions are not
#: payments and are not sent: the world's payment_intent events for a session's payment
#: stand for it.
MERCADOPAGO_ACTIONS: Mapping[str, str] = {
    "payment_intent.succeeded": "payment.created",
    "payment_intent.payment_failed": "payment.created",
    "charge.succeeded": "payment.created",
    "charge.refunded": "payment.updated",
}


def manifest(data_id: str | None, request_id: str | None, ts: str) -> str:
    """``id:{data.id};request-id:{x-request-id};ts:{ts};`` with absent pairs left out.

    `data_id` is used as given: the sender lowercases it before calling.
    """
    parts = []
    if data_id:
        parts.append(f"id:{data_id}")
    if request_id:
        parts.append(f"request-id:{request_id}")
    parts.append(f"ts:{ts}")
    return ";".join(parts) + ";"


def mercadopago_signature(secret: str, data_id: str | None, request_id: str | None, ts: str) -> str:
    """Lowercase hex HMAC-SHA256 of the manifest keyed by the secret signature as UTF-8."""
    return hmac.new(secret.encode("utf-8"), manifest(data_id, request_id, ts).encode("utf-8"), hashlib.sha256).hexdigest()


class MercadoPagoProfile(Profile):
    """Mercado Pago Webhooks for payments (thin notifications).

    Envelope: body ``{"id","live_mode","type":"payment","date_created","user_id",
    "api_version":"v1","action","data":{"id"}}``; query ``data.id=<id>&type=payment``.
    ``data.id`` is the world's payment object id (a payment_intent or charge id) as is;
    the receiver must fetch the payment for its state. ``id`` (numeric notification id,
    derived from the event id) is the dedupe key (``Envelope.event_id``, as a string);
    ``live_mode`` is the test/live flag and ``user_id`` (numeric, derived from the account)
    the seller account.

    Signing: ``x-request-id`` is a UUID per request (derived from the notification id
    and the attempt timestamp; whether Mercado Pago keeps it across retries is not
    documented) and ``x-signature: ts=<ts>,v1=<hex>``. The id in the manifest is
    ``data.id`` lowercased, as the docs require and as real ``ORD01…`` ids show: a receiver
    that signs the id as received fails on every id with capitals. One secret per
    application: only the first secret signs. ``ts`` is unix seconds by default (docs
    examples); ``timestamp_unit="ms"`` sends milliseconds like the SDK's test constants,
    which the SDK's optional tolerance check (seconds) rejects. No tolerance by default.

    Delivery contract: only 200 and 201 succeed; 22 s on the first attempt, 5 s on
    retries; retries 15 min, 30 min, 6 h, 48 h and 96 h after the first dispatch, i.e.
    delays of 15 min, 15 min, 5.5 h, 42 h and 48 h between attempts.
    """

    name = "mercadopago"
    title = "Mercado Pago"
    signature_headers = ("x-signature",)
    sender_timeout_s = 22.0
    retry_timeout_s: ClassVar[float] = 5.0
    retry_schedule_s = (900.0, 900.0, 19800.0, 151200.0, 172800.0)
    default_event = "payment_intent.succeeded"
    has_livemode = True
    has_account = True
    thin = True

    def __init__(self, timestamp_unit: Literal["s", "ms"] = "s") -> None:
        if timestamp_unit not in ("s", "ms"):
            raise ProfileError(f"timestamp_unit must be 's' or 'ms', not {timestamp_unit!r}", field="timestamp_unit")
        self.timestamp_unit = timestamp_unit

    def event_types(self) -> Mapping[str, str]:
        return MERCADOPAGO_ACTIONS

    def notification_id(self, event: Event) -> int:
        """The numeric notification id (11 digits) derived from the event id."""
        return derived_int("mercadopago-notification", event.id, 11)

    def payload(self, event: Event) -> dict[str, Any]:
        """The thin notification body."""
        return {
            "id": self.notification_id(event),
            "live_mode": event.livemode,
            "type": "payment",
            "date_created": rfc3339_s(event.created_us),
            "user_id": derived_int("mercadopago-user", event.account, 10),
            "api_version": "v1",
            "action": MERCADOPAGO_ACTIONS.get(event.type, event.type),
            "data": {"id": event.object_id},
        }

    def envelope(self, event: Event) -> Envelope:
        return Envelope(
            event_id=str(self.notification_id(event)),
            type=MERCADOPAGO_ACTIONS.get(event.type, event.type),
            body=canonical_json(self.payload(event)),
            headers={"Content-Type": "application/json"},
            query={"data.id": event.object_id, "type": "payment"},
        )

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """``x-request-id`` and ``x-signature`` for one attempt, with the first secret."""
        require_secrets(secrets, self.name)
        ts = str(timestamp * 1000 if self.timestamp_unit == "ms" else timestamp)
        request_id = derived_uuid("mercadopago-request", f"{envelope.event_id}:{timestamp}")
        data_id = envelope.query.get("data.id")
        signature = mercadopago_signature(secrets[0], data_id.lower() if data_id else None, request_id, ts)
        return {"x-request-id": request_id, "x-signature": f"ts={ts},v1={signature}"}

    def generate_secret(self, seed: int) -> str:
        """64 lowercase hex characters (the shape of an application's secret signature)."""
        return random.Random(seed).randbytes(32).hex()

    def is_success(self, status: int) -> bool:
        """Only 200 and 201 count as delivered."""
        return status in (200, 201)

    def attempt_timeout_s(self, attempt: int) -> float:
        """22 s for the first attempt, 5 s for every retry."""
        return self.sender_timeout_s if attempt <= 1 else self.retry_timeout_s
