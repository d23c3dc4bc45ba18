"""Standard Webhooks and Svix: ``webhook-signature: v1,<b64>`` over ``{id}.{ts}.{raw body}``.

Sources: Standard Webhooks spec v1.0.0 (github.com/standard-webhooks/standard-webhooks,
``spec/standard-webhooks.md``); PyPI ``standardwebhooks`` 1.1.0
``standardwebhooks/webhooks.py`` (``Webhook.__init__`` strips ``whsec_`` and
base64-decodes, ``Webhook.verify``, ``Webhook.sign``); PyPI ``svix`` 2.9.1
``svix/webhooks.py`` (maps ``svix-*`` onto ``webhook-*``); docs.svix.com/retries.
A sender keying its HMAC with the secret's own bytes (Polar: polar-sdk 0.32
``polar_sdk/_webhooks.py`` ``validate_event`` hands ``Webhook`` the base64 of the secret
string) is `StandardWebhooksSettings.secret_encoding` ``"raw"``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import random
from typing import Any, ClassVar, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from hookproof.simulator.errors import SecretError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import (
    Envelope,
    Profile,
    Tolerance,
    canonical_json,
    require_secrets,
    validated_settings,
)
from hookproof.simulator.profiles.formats import derived_token, rfc3339_us
from hookproof.simulator.profiles.provider_words import EventClock
from hookproof.simulator.world.user_catalog import BODY, UserCatalog

#: Stripe event type -> Standard Webhooks event type (dotted, ``<noun>.<verb>``).
#: Stripe's object names are shortened to the noun a generic sender would use
#: (``payment_intent`` -> ``payment``, ``checkout.session`` -> ``checkout``,
#: ``customer.subscription`` -> ``subscription``); verbs keep Stripe's meaning.
STANDARD_EVENT_TYPES: Mapping[str, str] = {
    "customer.created": "customer.created",
    "checkout.session.completed": "checkout.completed",
    "checkout.session.async_payment_succeeded": "checkout.payment_succeeded",
    "checkout.session.async_payment_failed": "checkout.payment_failed",
    "checkout.session.expired": "checkout.expired",
    "payment_intent.succeeded": "payment.succeeded",
    "payment_intent.payment_failed": "payment.failed",
    "charge.succeeded": "charge.succeeded",
    "charge.refunded": "charge.refunded",
    "invoice.created": "invoice.created",
    "invoice.paid": "invoice.paid",
    "invoice.payment_failed": "invoice.payment_failed",
    "invoice.voided": "invoice.voided",
    "customer.subscription.created": "subscription.created",
    "customer.subscription.updated": "subscription.updated",
    "customer.subscription.deleted": "subscription.deleted",
}

SECRET_PREFIX = "whsec_"

#: What the refusal of a secret that is not ``whsec_`` + base64 adds: the setting of a sender
#: keying with the secret as given.
RAW_HINT = ("; a provider keying its HMAC with the secret as given, as Polar does, is signed with "
            "[target.signing] secret_encoding = \"raw\" (send: --secret-encoding raw)")


class StandardWebhooksSettings(BaseModel):
    """How a Standard Webhooks sender turns its secret into the HMAC key (``[target.signing]``
    of the standard-webhooks and svix profiles).

    Attributes:
        secret_encoding: ``"base64"`` (the default, the spec's): the secret is ``whsec_`` and
            base64, the key its decoded bytes (``standardwebhooks`` ``Webhook.__init__``);
            ``"raw"``: the key is the secret's UTF-8 bytes as given, whatever its shape, as
            Polar signs (polar-sdk 0.32 ``polar_sdk/_webhooks.py`` ``validate_event``:
            ``Webhook(base64.b64encode(secret.encode()))``; Polar's secrets read ``polar_whs_…``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    secret_encoding: Literal["base64", "raw"] = "base64"


def load_standard_settings(raw: StandardWebhooksSettings | Mapping[str, Any] | None,
                           profile: str = "standard-webhooks") -> StandardWebhooksSettings:
    """Validated settings from a model, a mapping (a config table) or None (defaults).
    Raises ProfileError whose `field` names the failing setting (an unknown key included)."""
    def explain(error: Mapping[str, Any]) -> str:
        if error["type"] == "extra_forbidden":
            return f"unknown key (the {profile} profile takes one: secret_encoding)"
        return f"\"base64\" (whsec_ and base64, the spec's) or \"raw\" (the secret's own bytes), got {error['input']!r}"

    settings: StandardWebhooksSettings = validated_settings(StandardWebhooksSettings, raw, profile, explain)
    return settings


def spelled(names: Mapping[str, str] | None) -> Mapping[str, str]:
    """`STANDARD_EVENT_TYPES` with `names` (Stripe type -> the name to send instead, e.g.
    ``{"payment_intent.succeeded": "payment_intent.succeeded"}``: the spec fixes no catalog,
    so the names are the user's). Raises ProfileError for a type the profile does not send
    or two types sent under one name."""
    if not names:
        return STANDARD_EVENT_TYPES
    from hookproof.simulator.errors import ProfileError

    out = dict(STANDARD_EVENT_TYPES)
    for world_type, name in names.items():
        if world_type not in out:
            raise ProfileError(f"the Standard Webhooks profile sends no event {world_type!r}", field="names")
        if not name:
            raise ProfileError(f"an empty name for {world_type!r}", field="names")
        out[world_type] = name
    if len(set(out.values())) != len(out):
        twice = sorted(n for n in set(out.values()) if list(out.values()).count(n) > 1)
        raise ProfileError(f"two event types would be sent as {twice[0]!r}", field="names")
    return out


def signing_key(secret: str, secret_encoding: str = "base64") -> bytes:
    """The HMAC key of `secret`: with ``secret_encoding="base64"``, a ``whsec_<base64>`` secret
    decoded exactly as the official library does; with ``"raw"``, the secret's UTF-8 bytes
    (Polar, `StandardWebhooksSettings`).

    The library strips ``whsec_`` and decodes ``secret + "=="`` with lenient base64
    (unpadded secrets work). Raises SecretError when nothing usable remains.
    """
    if secret_encoding == "raw":
        if not secret:
            raise SecretError("a signing secret is empty", field="secret")
        return secret.encode("utf-8")
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded + "==")
    except (binascii.Error, ValueError):
        raise SecretError("a Standard Webhooks secret must be whsec_ followed by base64" + RAW_HINT,
                          field="secret") from None
    if not key:
        raise SecretError("a Standard Webhooks secret decodes to an empty key", field="secret")
    return key


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes, secret_encoding: str = "base64") -> str:
    """One ``v1,<base64>`` entry: HMAC-SHA256 of ``{msg_id}.{timestamp}.{body}``, padded base64,
    keyed by `signing_key` (`secret_encoding`: ``"base64"`` or ``"raw"``)."""
    signed = f"{msg_id}.{timestamp}.".encode("utf-8") + body
    digest = hmac.new(signing_key(secret, secret_encoding), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


class StandardWebhooksProfile(Profile):
    """A Standard Webhooks v1 sender (symmetric ``v1`` signatures).

    Wire contract (spec v1.0.0; verified with ``standardwebhooks.webhooks.Webhook.verify``):
    headers ``webhook-id`` (message id, identical on every retry: the dedupe key),
    ``webhook-timestamp`` (attempt time, integer unix seconds) and ``webhook-signature``
    (space-separated ``v1,<b64>`` entries, one per secret during rotation). The verifier
    accepts timestamps within 300 s both ways.

    Envelope: the spec's recommended ``{"type","timestamp","data"}``; ``timestamp`` is the
    event time (ISO 8601, UTC, microseconds), ``data`` the world's object snapshot.
    There is no test/live flag and no account in the envelope. The spec fixes no event
    catalog: with a user `catalog` (`simulator.world.user_catalog`) the events, their
    type names and bodies are the user's.

    Delivery contract: 2xx succeeds, 3xx fails (default `is_success`); the spec's
    example schedule is immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h,
    20 h, 24 h; the spec asks for a 15-30 s request timeout (15 s here, the strict end).
    """

    name = "standard-webhooks"
    event_id_name = "`webhook-id`"
    title = "Standard Webhooks"
    no_big_body = ("its events are the billing world's objects, which hookproof does not grow to several megabytes "
                   "through their own fields; padding one with a field it never carries would test its schema, not a "
                   "body limit")
    header_prefix: ClassVar[str] = "webhook"
    signature_headers = ("webhook-signature",)
    #: The User-Agent every delivery carries, or None: the spec names none.
    user_agent: ClassVar[str | None] = None
    sender_timeout_s = 15.0
    retry_schedule_s: ClassVar[tuple[float, ...]] = (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 50400.0, 72000.0, 86400.0)
    # the body's ``timestamp`` (the event's own time, RFC 3339 with microseconds), never the
    # ``webhook-timestamp`` header (the attempt's) (spec, "Payload structure")
    event_clock: ClassVar[EventClock | None] = EventClock(
        "timestamp", "rfc3339_us", 1,
        "the spec says nothing of ordering; fetch the object from the sender's API and keep what it answers",
        advises_fetch=True)
    # the spec's example schedule runs about 3 days; then it advises notifying and disabling an
    # endpoint that keeps failing (spec, "Delivery behavior"; providers.md, Standard Webhooks [DOC])
    retrying: ClassVar[str] = "the sender would keep retrying it with backoff, about 3 days on the spec's schedule"
    gives_up: ClassVar[str] = ("the sender retries it no more; the spec advises notifying and disabling an endpoint "
                               "that keeps failing")
    tolerance = Tolerance(past_s=300.0, future_s=300.0)
    default_event = "payment_intent.succeeded"
    multiple_signatures = True

    def __init__(self, *, catalog: UserCatalog | None = None, names: Mapping[str, str] | None = None,
                 settings: StandardWebhooksSettings | Mapping[str, Any] | None = None) -> None:
        self.settings = load_standard_settings(settings, self.name)
        self.catalog = catalog
        self.names: Mapping[str, str] = spelled(names)
        if catalog is not None:  # the user's events and names (Standard Webhooks has no fixed catalog)
            from hookproof.simulator.profiles.generic_hmac import bind_catalog

            bind_catalog(self, catalog)

    def event_types(self) -> Mapping[str, str]:
        """Stripe type -> the name sent (`STANDARD_EVENT_TYPES`, but the `names` given; unmapped
        types are sent verbatim: unknown-event-type); with a user catalog, its types, each
        its own name."""
        if self.catalog is not None:
            return {t: t for t in self.catalog.types}
        return self.names

    def message_id(self, event: Event) -> str:
        """The message id for `event`: ``msg_`` + 27 base62 characters derived from the event id."""
        return "msg_" + derived_token(self.name, event.id, 27)

    def payload(self, event: Event) -> dict[str, Any]:
        """The JSON payload: ``{"type", "timestamp", "data"}`` (spec, "Payload structure"), or
        a user catalog event's own body."""
        if BODY in event.extra:
            assert self.catalog is not None  # a catalog event's profile sends that catalog
            return self.catalog.body_of(event)
        return {
            "type": self.names.get(event.type, event.type),
            "timestamp": rfc3339_us(event.created_us),
            "data": dict(event.object),
        }

    def envelope(self, event: Event) -> Envelope:
        msg_id = self.message_id(event)
        return Envelope(
            event_id=msg_id,
            type=event.type if BODY in event.extra else self.names.get(event.type, event.type),
            body=canonical_json(self.payload(event)),
            headers=({"Content-Type": "application/json", f"{self.header_prefix}-id": msg_id}
                     | ({"User-Agent": self.user_agent} if self.user_agent else {})),
        )

    def check_secrets(self, secrets: Sequence[str]) -> None:
        """Raise SecretError unless every secret gives a key (`signing_key`, as the settings'
        ``secret_encoding`` says)."""
        require_secrets(secrets, self.name)
        for secret in secrets:
            signing_key(secret, self.settings.secret_encoding)

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """Timestamp and signature headers; every secret adds one ``v1,`` entry (rotation)."""
        require_secrets(secrets, self.name)
        msg_id = envelope.headers[f"{self.header_prefix}-id"]
        encoding = self.settings.secret_encoding
        entries = [standard_signature(s, msg_id, timestamp, envelope.body, encoding) for s in secrets]
        return {
            f"{self.header_prefix}-timestamp": str(timestamp),
            f"{self.header_prefix}-signature": " ".join(entries),
        }

    def generate_secret(self, seed: int) -> str:
        """``whsec_`` + base64 of 24 random bytes (the spec allows 24-64 bytes); with
        ``secret_encoding = "raw"``, Polar's shape: ``polar_whs_`` + 43 base64url characters."""
        if self.settings.secret_encoding == "raw":
            return "polar_whs_" + base64.urlsafe_b64encode(random.Random(seed).randbytes(32)).decode("ascii").rstrip("=")
        return SECRET_PREFIX + base64.b64encode(random.Random(seed).randbytes(24)).decode("ascii")


#: The User-Agent of Svix's deliveries: the open-source server's worker sends
#: ``Svix-Webhooks/<version>`` (svix/svix-webhooks, ``server/svix-server/src/worker.rs``, ``USER_AGENT``);
#: Svix's cloud adds its sender and a page about it, as published receiver logs show it
#: (``Svix-Webhooks/1.81.0 (sender-9YMgn; +https://www.svix.com/http-sender/)``).
SVIX_USER_AGENT = "Svix-Webhooks/1.81.0 (sender-9YMgn; +https://www.svix.com/http-sender/)"


class SvixProfile(StandardWebhooksProfile):
    """Svix: the Standard Webhooks scheme with ``svix-id``/``svix-timestamp``/``svix-signature``.

    Sources: PyPI ``svix`` 2.9.1 ``svix.webhooks.Webhook.verify`` (maps ``svix-*`` headers
    onto the standardwebhooks verifier, ±300 s); docs.svix.com/retries (attempts
    immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; 2xx within 15 s).
    """

    name = "svix"
    event_id_name = "`svix-id`"
    title = "Svix"
    header_prefix = "svix"
    signature_headers = ("svix-signature",)
    user_agent = SVIX_USER_AGENT
    sender_timeout_s = 15.0
    retry_schedule_s = (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0)
    # 8 attempts over about 27.5 h; then the message is Failed for the endpoint, and an endpoint whose
    # attempts all fail for 5 days is disabled (docs.svix.com/retries; providers.md, Svix [DOC])
    retrying = "Svix would keep retrying it, 8 attempts over about 27 hours"
    gives_up = ("Svix marks the message Failed for this endpoint (a replay resends it), and disables an "
                "endpoint failing for 5 days")
