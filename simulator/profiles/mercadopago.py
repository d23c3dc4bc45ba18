"""Mercado Pago: thin payment notifications, ``x-signature: ts=<ts>,v1=<hex>`` over a manifest.

Sources: PyPI ``mercadopago`` 3.6.0 ``mercadopago/webhook/validator.py``
(``WebhookSignatureValidator.validate``: manifest ``id:{data.id};request-id:{x-request-id};ts:{ts};``,
absent pairs dropped, HMAC-SHA256 lowercase hex keyed by the secret as UTF-8, optional
tolerance in seconds); mercadopago/sdk-python ``tests/test_webhook_signature_validator.py``;
Mercado Pago developers, "Webhooks" (mercadopago/devsite-docs
``guides/additional-content/your-integrations/webhooks.en.md``: the events table, whose
"Commercial orders" event is topic ``topic_merchant_order_wh``, fetched at
``/merchant_orders/[ID]``; ``data.id``, "ID of the payment, ``merchant_order``, or claim",
taken from the query for the manifest; "After receiving the notification": answer 200 or
201; 22 s on the first attempt, 5 s on retries; retries 15 min, 30 min, 6 h, 48 h, 96 h after
the first dispatch; alphanumeric ``data.id`` signed lowercase). The "IPN" page: IPN
notifications (query ``id``/``topic``, body ``{"resource", "topic"}``) carry ``x-signature``
but cannot be validated with the secret, so hookproof sends Webhooks only.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from typing import Any, ClassVar, Literal, Mapping, Sequence

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_int, derived_uuid
from hookproof.simulator.world.mercadopago import MERCADOPAGO_EVENT_TYPES, mp_date

#: The ``type`` (and query ``type``) of a merchant order's Webhooks notification: the "Commercial
#: orders" event of the "Webhooks" page's events table ("Creation, closure, or expiration of
#: commercial orders"; Checkout Pro, QR Code).
MERCHANT_ORDER_TOPIC = "topic_merchant_order_wh"


def user_agent(notification_type: str) -> str:
    """``MercadoPago WebHook v1.0 <type>``: the User-Agent of a Webhooks notification of `notification_type`.

    Not in Mercado Pago's docs: it is what Webhooks deliveries carry in receivers' published
    logs (``MercadoPago WebHook v1.0 payment`` beside query ``data.id``/``type``, and
    ``… v1.0 order`` for type ``order``; IPN deliveries carry ``MercadoPago Feed v2.0 <topic>``),
    the type being the body's ``type``.
    """
    return f"MercadoPago WebHook v1.0 {notification_type}"


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
    """Mercado Pago Webhooks for payments and merchant orders (thin notifications).

    Events come from the payments world (`simulator.world.mercadopago.MercadoPagoWorld`,
    ``world = "mercadopago"``); hookproof's event names are the world's own
    (``payment.created``, ``payment.updated``, ``merchant_order``). A billing-world event
    raises ProfileError: Mercado Pago sends no such thing.

    Payment body: ``{"id","live_mode","type":"payment","date_created","user_id",
    "api_version":"v1","action","data":{"id"}}`` with query ``data.id=<id>&type=payment``
    (the "Webhooks" page's example; ``date_created`` with milliseconds and the
    seller's offset, ``2015-03-25T10:04:58.396-04:00``, as the API writes its dates);
    ``data.id`` is the payment's numeric id as a string, and the receiver must fetch the
    payment (``GET /v1/payments/{id}``) for its state. ``id`` (the numeric notification id,
    the world's event id) is the dedupe key (``Envelope.event_id``, as a string);
    ``live_mode`` is the test/live flag and ``user_id`` the seller's user id (the event's
    account when it is digits, else derived from it).

    Merchant order (event ``merchant_order``): a Webhooks notification of type
    ``topic_merchant_order_wh`` (`MERCHANT_ORDER_TOPIC`), query ``data.id=<order id>&type=
    topic_merchant_order_wh`` (the docs: ``data.id`` is the id of the payment or
    ``merchant_order`` and comes from the query), signed like a payment's, the order's id in
    the manifest. Its body is not in the docs; it is the one receivers have published as
    received (2024-2025): ``{"action": "create"|"update", "application_id": "<digits>",
    "data": {"currency_id": "", "marketplace": "NONE", "status"}, "date_created", "id":
    "<order id>", "live_mode", "status", "type": "topic_merchant_order_wh", "user_id",
    "version"}``, keys sorted: ``id`` is the order's id (no notification id, no ``data.id``
    in the body), ``status`` the order's (``opened``, ``closed``), ``action`` ``create`` on
    the order's first notification and ``update`` after, ``version`` counting from 0. The
    receiver fetches the order (``GET /merchant_orders/{id}``). ``Envelope.event_id`` is the
    world's notification id (hookproof's own: the body names none). Another topic (an event
    the world does not record, e.g. ``subscription_preapproval``) is sent in the payment
    form with its own ``type``.

    Headers: ``Content-Type: application/json`` and ``User-Agent: MercadoPago WebHook v1.0
    <type>`` (`user_agent`). Signing: ``x-request-id`` is a UUID per request (derived from
    the notification id and the attempt timestamp, so copies and retries signed in one
    second share it; whether Mercado Pago keeps it across retries is not documented) and
    ``x-signature: ts=<ts>,v1=<hex>``. The id in the manifest is ``data.id`` lowercased, as
    the docs require and as real ``ORD01…`` ids show: a receiver that signs the id as
    received fails on every id with capitals (the SDK's validator uses the ``data_id`` it is
    given as given). One secret per application: only the first secret signs. ``ts`` is unix
    seconds by default (docs examples); ``timestamp_unit="ms"`` sends milliseconds like the
    SDK's test constants, which the SDK's optional tolerance check (seconds) rejects. No
    tolerance by default.

    Delivery contract: only 200 and 201 succeed; 22 s on the first attempt, 5 s on
    retries; retries 15 min, 30 min, 6 h, 48 h and 96 h after the first dispatch, i.e.
    delays of 15 min, 15 min, 5.5 h, 42 h and 48 h between attempts.
    """

    name = "mercadopago"
    event_id_name = "the notification's `id`"
    title = "Mercado Pago"
    no_big_body = ("Mercado Pago's notifications carry only the resource's type and id (a few hundred bytes) and the "
                   "receiver fetches the rest, so none is several megabytes")
    world = "mercadopago"
    signature_headers = ("x-signature",)
    sender_timeout_s = 22.0
    retry_timeout_s: ClassVar[float] = 5.0
    retry_schedule_s = (900.0, 900.0, 19800.0, 151200.0, 172800.0)
    # retries at 15 min, 30 min, 6 h, 48 h, 96 h after the first dispatch; nothing after is documented
    # (the IPN "After receiving the notification" page; providers.md, Mercado Pago [DOC])
    retrying = "Mercado Pago would keep retrying it, for up to 4 days"
    gives_up = "Mercado Pago retries it no more (its last retry is 96 h after the first)"
    default_event = "payment.created"
    untimed_reason: ClassVar[str] = (
        "Mercado Pago signs its ts (inside x-signature's manifest) but documents no tolerance: the official SDK's "
        "validator checks one only when given tolerance_seconds, which has no default, so an old or future ts is not "
        "a documented rejection; replay is stopped by dedupe")
    has_livemode = True
    has_account = True
    thin = True
    body_unsigned: ClassVar[str | None] = (
        "Mercado Pago signs a manifest of the notification's ids and ts (x-signature), not the body: other body "
        "bytes verify alike")
    signature_inputs: ClassVar[str | None] = (
        "Mercado Pago's manifest takes its id from the query string's data.id (PHP's $_GET names it data_id) and "
        "its request-id from the x-request-id header")

    def __init__(self, timestamp_unit: Literal["s", "ms"] = "s") -> None:
        if timestamp_unit not in ("s", "ms"):
            raise ProfileError(f"timestamp_unit must be 's' or 'ms', not {timestamp_unit!r}", field="timestamp_unit")
        self.timestamp_unit = timestamp_unit

    def event_types(self) -> Mapping[str, str]:
        """Every event type the payments world emits, mapped to itself (Mercado Pago's own names)."""
        return {t: t for t in MERCADOPAGO_EVENT_TYPES}

    def notification_id(self, event: Event) -> int:
        """The numeric notification id: the event id when it is digits, else derived (11 digits)."""
        return int(event.id) if event.id.isdigit() else derived_int("mercadopago-notification", event.id, 11)

    def user_id(self, account: str) -> int:
        """The seller's user id: `account` when it is digits, else derived from it (10 digits)."""
        return int(account) if account.isdigit() else derived_int("mercadopago-user", account, 10)

    def _check(self, event: Event) -> None:
        if event.api_version != "v1":
            raise ProfileError(f"Mercado Pago sends no {event.type!r} notification: the mercadopago profile renders "
                               f"the payments world's events (known: {', '.join(MERCADOPAGO_EVENT_TYPES)})",
                               field="event")

    def payload(self, event: Event) -> dict[str, Any]:
        """The notification body (see the class docstring). Raises ProfileError for a
        billing-world event."""
        self._check(event)
        if event.object_type == "merchant_order":
            status = str(event.object.get("status") or "opened")
            return {
                "action": "create" if event.version <= 1 else "update",
                "application_id": str(event.extra.get("application_id") or ""),
                "data": {"currency_id": "", "marketplace": "NONE", "status": status},
                "date_created": mp_date(event.created_us),
                "id": event.object_id,
                "live_mode": event.livemode,
                "status": status,
                "type": MERCHANT_ORDER_TOPIC,
                "user_id": self.user_id(event.account),
                "version": max(event.version - 1, 0),
            }
        topic = "payment" if event.object_type == "payment" else event.type
        return {
            "id": self.notification_id(event),
            "live_mode": event.livemode,
            "type": topic,
            "date_created": mp_date(event.created_us),  # as the documented example: ms and the offset
            "user_id": self.user_id(event.account),
            "api_version": "v1",
            "action": event.type if topic == "payment" else str(event.extra.get("action") or "updated"),
            "data": {"id": event.object_id},
        }

    def envelope(self, event: Event) -> Envelope:
        body = self.payload(event)
        kind = str(body["type"])
        return Envelope(
            event_id=str(self.notification_id(event)),
            type=event.type,
            body=canonical_json(body),
            headers={"Content-Type": "application/json", "User-Agent": user_agent(kind)},
            query={"data.id": event.object_id, "type": kind},
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

    def success_words(self) -> str:
        """``200 or 201``: what `is_success` takes."""
        return "200 or 201"

    def attempt_timeout_s(self, attempt: int) -> float:
        """22 s for the first attempt, 5 s for every retry."""
        return self.sender_timeout_s if attempt <= 1 else self.retry_timeout_s
