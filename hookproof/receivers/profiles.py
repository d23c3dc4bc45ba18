"""Verification and decoding per provider profile: the only provider-specific code.

Each `Verifier` checks a request with the provider's official SDK and decodes it into
a provider-neutral `WebhookEvent` whose `type` uses Stripe's event names (the business
code speaks one vocabulary). Supported profiles: ``stripe`` (PyPI ``stripe``: the check
``Webhook.construct_event`` makes, ``WebhookSignature.verify_header``, 300 s past
tolerance) and ``standard-webhooks`` (PyPI
``standardwebhooks``: ``Webhook.verify``, ±300 s) and ``generic-hmac`` with its default
settings (hookproof's own sender: no SDK; a lowercase hex HMAC-SHA256 of the body in
``X-Signature``, compared in constant time). Adding a profile is one subclass registered
in `VERIFIERS`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, ClassVar, Mapping, Sequence

#: Sentinel: use the official verifier's default timestamp tolerance.
DEFAULT_TOLERANCE: float = -1.0


class SignatureError(Exception):
    """The request is not authentic (bad, missing or stale signature) or not decodable."""


@dataclass(frozen=True)
class WebhookEvent:
    """One decoded event, whatever the provider.

    Attributes:
        id: the provider's dedupe id (Stripe: body ``id``; Standard Webhooks: ``webhook-id``).
        type: the event type in Stripe's names (``invoice.paid``); unknown types verbatim.
        created: event time, unix seconds.
        object: the object snapshot (``data.object`` / ``data``).
        previous_attributes: changed fields' old values, when the provider sends them.
        livemode: True/False, or None when the provider has no test/live flag.
        account: the provider account, or None when the envelope carries none.
        raw: the request body exactly as received (not serialised by `to_json`).
    """

    id: str
    type: str
    created: int
    object: Mapping[str, Any]
    previous_attributes: Mapping[str, Any] | None = None
    livemode: bool | None = None
    account: str | None = None
    raw: bytes = field(default=b"", repr=False, compare=False)

    @property
    def object_id(self) -> str | None:
        return self.object.get("id")

    def to_json(self) -> str:
        """JSON text of the event (for queues and inbox rows)."""
        fields = {k: v for k, v in self.__dict__.items() if k != "raw"}
        return json.dumps(fields | {"object": dict(self.object)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "WebhookEvent":
        return cls(**json.loads(text))


class Verifier(ABC):
    """Checks and decodes one provider's webhook requests. `headers` keys are lowercase."""

    name: ClassVar[str]

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = tuple(secrets)

    @abstractmethod
    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance_s: float | None = DEFAULT_TOLERANCE) -> WebhookEvent:
        """The decoded event when a secret signed `body`; raises SignatureError.

        `tolerance_s`: DEFAULT_TOLERANCE for the official default, None for no timestamp check.
        """

    @abstractmethod
    def decode(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        """The decoded event without any authenticity check; raises SignatureError if unreadable."""


class StripeVerifier(Verifier):
    """Stripe: ``Stripe-Signature`` checked as ``stripe.Webhook.construct_event`` checks it."""

    name = "stripe"

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance_s: float | None = DEFAULT_TOLERANCE) -> WebhookEvent:
        """With the default tolerance, what ``stripe.Webhook.construct_event`` accepts and
        refuses: its signature check (``WebhookSignature.verify_header`` at the SDK's default
        tolerance), then the body parsed as JSON. The SDK's event object is built only for a
        body it would refuse while building it (not an object, or a thin ``v2.core.event``),
        so such a body gets the SDK's own answer: the receiver decodes the JSON itself (the
        SDK's objects turn ``*_decimal`` strings into Decimal, which JSON cannot store), and
        building the object it never read was half of each request's time."""
        import stripe

        header = headers.get("stripe-signature", "")
        errors = []
        for secret in self.secrets:
            try:
                if tolerance_s == DEFAULT_TOLERANCE:
                    stripe.WebhookSignature.verify_header(body, header, secret, stripe.Webhook.DEFAULT_TOLERANCE)
                    raw = json.loads(body)
                    if not isinstance(raw, dict) or raw.get("object") == "v2.core.event":
                        stripe.Webhook.construct_event(body, header, secret)  # raises as the SDK does
                    return self.decode_object(raw, body)
                stripe.WebhookSignature.verify_header(body.decode("utf-8"), header, secret, tolerance=tolerance_s)
                return self.decode(body, headers)
            except stripe.SignatureVerificationError as exc:
                errors.append(str(exc))
            except ValueError as exc:  # not JSON / not UTF-8
                raise SignatureError(f"unreadable body: {exc}") from exc
        raise SignatureError(errors[-1] if errors else "no secret configured")

    def decode_object(self, raw: Any, body: bytes) -> WebhookEvent:
        """`decode` of a body already parsed into `raw`."""
        try:
            return replace(self.from_event_object(raw), raw=body)
        except (ValueError, KeyError, TypeError) as exc:
            raise SignatureError(f"not a Stripe event: {exc}") from exc

    def decode(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        try:
            raw = json.loads(body)
        except ValueError as exc:
            raise SignatureError(f"not a Stripe event: {exc}") from exc
        return self.decode_object(raw, body)

    @staticmethod
    def from_event_object(raw: Mapping[str, Any]) -> WebhookEvent:
        """Decode a Stripe Event object (a webhook body or `GET /v1/events/{id}`)."""
        data = raw["data"]
        return WebhookEvent(
            id=raw["id"], type=raw["type"], created=int(raw["created"]), object=data["object"],
            previous_attributes=data.get("previous_attributes"), livemode=bool(raw.get("livemode")),
            account=raw.get("account"),
        )


#: Standard Webhooks event names (as hookproof's sender names them by default) -> Stripe's names;
#: a type the config lists in Stripe's spelling arrives so, and is read as it is.
STANDARD_TYPES: Mapping[str, str] = {
    "checkout.completed": "checkout.session.completed",
    "checkout.payment_succeeded": "checkout.session.async_payment_succeeded",
    "checkout.payment_failed": "checkout.session.async_payment_failed",
    "checkout.expired": "checkout.session.expired",
    "payment.succeeded": "payment_intent.succeeded",
    "payment.failed": "payment_intent.payment_failed",
    "subscription.created": "customer.subscription.created",
    "subscription.updated": "customer.subscription.updated",
    "subscription.deleted": "customer.subscription.deleted",
}


class StandardWebhooksVerifier(Verifier):
    """Standard Webhooks: ``webhook-id``/``-timestamp``/``-signature`` checked by ``standardwebhooks``."""

    name = "standard-webhooks"

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance_s: float | None = DEFAULT_TOLERANCE) -> WebhookEvent:
        from standardwebhooks.webhooks import Webhook, WebhookVerificationError

        for secret in self.secrets:
            try:
                if tolerance_s == DEFAULT_TOLERANCE:
                    Webhook(secret).verify(body, dict(headers), json_parse=False)
                    return self.decode(body, headers)
                if self._hmac_matches(Webhook(secret), body, headers):
                    return self.decode(body, headers)
            except (WebhookVerificationError, ValueError):
                continue
        raise SignatureError("no matching webhook-signature")

    @staticmethod
    def _hmac_matches(webhook: Any, body: bytes, headers: Mapping[str, str]) -> bool:
        """The HMAC check alone, whatever the timestamp's age."""
        ts = datetime.fromtimestamp(float(headers.get("webhook-timestamp", "")), tz=timezone.utc)
        expected = webhook.sign(headers.get("webhook-id", ""), ts, body.decode("utf-8")).split(",", 1)[1]
        entries = headers.get("webhook-signature", "").split(" ")
        return any(e.startswith("v1,") and hmac.compare_digest(base64.b64decode(e[3:]), base64.b64decode(expected))
                   for e in entries)

    def decode(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        try:
            raw = json.loads(body)
            created = datetime.fromisoformat(raw["timestamp"].replace("Z", "+00:00"))
            return WebhookEvent(
                id=headers["webhook-id"], type=STANDARD_TYPES.get(raw["type"], raw["type"]),
                created=int(created.timestamp()), object=raw["data"], raw=body,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SignatureError(f"not a Standard Webhooks message: {exc}") from exc


class GenericHmacVerifier(Verifier):
    """hookproof's ``generic-hmac`` sender at its default settings (`GenericHmacSettings`):
    ``X-Signature`` is the lowercase hex HMAC-SHA256 of the raw body with the first secret
    that signed; the body is the envelope ``{id, type, created, livemode, account, data}``
    in Stripe's event names. No timestamp is signed, so `tolerance_s` changes nothing."""

    name = "generic-hmac"

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance_s: float | None = DEFAULT_TOLERANCE) -> WebhookEvent:
        given = headers.get("x-signature", "")
        for secret in self.secrets:
            expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
            if hmac.compare_digest(given, expected):
                return self.decode(body, headers)
        raise SignatureError("no matching X-Signature")

    def decode(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        try:
            raw = json.loads(body)
            data = raw["data"]
            livemode = raw.get("livemode")
            return WebhookEvent(
                id=raw["id"], type=raw["type"], created=int(raw["created"]), object=data["object"],
                previous_attributes=data.get("previous_attributes"),
                livemode=None if livemode is None else bool(livemode), account=raw.get("account"), raw=body,
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SignatureError(f"not a generic-hmac event: {exc}") from exc


VERIFIERS: Mapping[str, type[Verifier]] = {
    v.name: v for v in (StripeVerifier, StandardWebhooksVerifier, GenericHmacVerifier)
}


def get_verifier(profile: str, secrets: Sequence[str]) -> Verifier:
    """The verifier of `profile`; raises ValueError naming the supported profiles."""
    if profile not in VERIFIERS:
        raise ValueError(f"unsupported profile {profile!r} (supported: {', '.join(sorted(VERIFIERS))})")
    return VERIFIERS[profile](secrets)
