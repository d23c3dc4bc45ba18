"""A configurable HMAC sender for providers without a profile of their own.

Many senders sign ``HMAC(secret, <some of id, timestamp, body>)`` and put the digest,
hex or base64, maybe behind a prefix, in one header (GitHub-like, Slack-like,
Standard-Webhooks-like schemes and their in-house cousins). `GenericHmacSettings`
describes one such scheme; `GenericHmacProfile` signs with it.

Settings are validated by pydantic (so a config file reports the failing field);
`load_settings` turns pydantic's ValidationError into ``ProfileError(field=…)``
(`base.validated_settings`, shared with the standard-webhooks profile).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import re
import string
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import (
    Envelope,
    Profile,
    Tolerance,
    canonical_json,
    require_secrets,
    validated_settings,
)
from hookproof.simulator.profiles.stripe import STRIPE_EVENT_TYPES
from hookproof.simulator.world.user_catalog import BODY, UserCatalog

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 header field name
_PLACEHOLDERS = frozenset({"id", "timestamp", "body"})


def template_fields(template: str) -> list[str]:
    """The placeholders of a signed-content template, in order; ValueError for anything else."""
    fields = []
    for _literal, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if name not in _PLACEHOLDERS or spec or conversion:
            raise ValueError(f"unknown placeholder {{{name}}}: use {{id}}, {{timestamp}} and {{body}} only")
        fields.append(name)
    return fields


class GenericHmacSettings(BaseModel):
    """One HMAC signing scheme.

    Attributes:
        signature_header: header carrying the signature (``X-Signature``).
        signed_content: what is signed: a template over ``{id}``, ``{timestamp}`` and
            ``{body}`` (``"{body}"``, ``"{timestamp}.{body}"``, ``"{id}.{timestamp}.{body}"``);
            ``{{``/``}}`` stand for literal braces. It must contain ``{body}``.
        algorithm: HMAC hash: ``sha1``, ``sha256`` or ``sha512``.
        encoding: digest encoding: lowercase ``hex`` or padded standard ``base64``.
        prefix: text before the digest (``sha256=``, ``v1=``).
        id_header: header carrying the event id (the dedupe key), or None: no id header
            (a receiver then dedupes on a body field). ``False`` (TOML has no null) means None.
        timestamp_header: header carrying the attempt's unix seconds, or None (``False``).
        type_header: header carrying the event's type name as sent (Lemon Squeezy's
            ``X-Event-Name``), or None (``False``, the default): no type header.
        tolerance_past_s / tolerance_future_s: the receiver-side window this sender
            implies, in seconds (None: unchecked); only with a signed timestamp.
        timeout_s: seconds the sender waits for an answer.
        retry_schedule_s: delays in seconds before each retry.
        success_statuses: the HTTP statuses the sender counts as delivered, each a 2xx, or
            None (the default): any 2xx. Any other answer is a failed attempt, retried on
            `retry_schedule_s` (Lemon Squeezy's ``[200]``: "Return a 200 response to show that
            the webhook was successfully received. If the response status is anything else,
            the webhook will be retried", docs.lemonsqueezy.com "Webhook requests").
        rotation_separator: when set, every secret signs and the signatures are joined
            with it (``" "``, ``","``); when None only the first secret signs.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    signature_header: str = "X-Signature"
    signed_content: str = "{body}"
    algorithm: Literal["sha1", "sha256", "sha512"] = "sha256"
    encoding: Literal["hex", "base64"] = "hex"
    prefix: str = ""
    id_header: str | None = "X-Webhook-Id"
    timestamp_header: str | None = None
    type_header: str | None = None
    tolerance_past_s: float | None = Field(default=None, ge=0)
    tolerance_future_s: float | None = Field(default=None, ge=0)
    timeout_s: float = Field(default=10.0, gt=0)
    retry_schedule_s: tuple[float, ...] = ()
    success_statuses: tuple[StrictInt, ...] | None = None
    rotation_separator: str | None = None

    @field_validator("id_header", "timestamp_header", "type_header", mode="before")
    @classmethod
    def _no_header(cls, value: Any) -> Any:
        """``false``: no such header (a config file cannot say None)."""
        return None if value is False else value

    @field_validator("signature_header", "id_header", "timestamp_header", "type_header")
    @classmethod
    def _header_name(cls, value: str | None) -> str | None:
        if value is not None and not _TOKEN.match(value):
            raise ValueError(f"{value!r} is not a valid HTTP header name")
        return value

    @field_validator("signed_content")
    @classmethod
    def _template(cls, value: str) -> str:
        if "body" not in template_fields(value):
            raise ValueError("signed_content must contain {body}")
        return value

    @field_validator("prefix", "rotation_separator")
    @classmethod
    def _header_text(cls, value: str | None) -> str | None:
        if value is not None and not all(" " <= c <= "~" for c in value):
            raise ValueError("only printable ASCII is allowed in a header value")
        return value

    @field_validator("retry_schedule_s")
    @classmethod
    def _schedule(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(delay < 0 for delay in value):
            raise ValueError("retry delays must be >= 0 seconds")
        return value

    @field_validator("success_statuses")
    @classmethod
    def _successes(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one status (leave the key out for any 2xx)")
        for status in value:
            if not 200 <= status <= 299:
                raise ValueError(f"{status} is not a 2xx status: a sender counts only a 2xx answer as delivered")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _headers_for_placeholders(self) -> "GenericHmacSettings":
        fields = template_fields(self.signed_content)
        if "id" in fields and self.id_header is None:
            raise ProfileError("signed_content uses {id}: set id_header", field="id_header")
        if "timestamp" in fields and self.timestamp_header is None:
            raise ProfileError("signed_content uses {timestamp}: set timestamp_header", field="timestamp_header")
        carries = {"signature_header": "the signature", "id_header": "the event id",
                   "timestamp_header": "the timestamp", "type_header": "the event type"}
        seen: dict[str, str] = {"content-type": "the body's Content-Type"}
        for name, what in carries.items():
            header = getattr(self, name)
            if header is None:
                continue
            if header.lower() in seen:  # header names are case-insensitive (RFC 9110)
                raise ProfileError(f"{header!r} already carries {seen[header.lower()]}: one header per thing",
                                   field=name)
            seen[header.lower()] = f"{what} ({name})"
        if "timestamp" not in fields and (self.tolerance_past_s is not None or self.tolerance_future_s is not None):
            raise ProfileError("a tolerance needs {timestamp} in signed_content", field="tolerance_past_s")
        return self


def load_settings(raw: GenericHmacSettings | Mapping[str, Any] | None) -> GenericHmacSettings:
    """Validated settings from a model, a mapping (a config table) or None (defaults).

    Raises ProfileError whose `field` names the first failing setting.
    """
    settings: GenericHmacSettings = validated_settings(GenericHmacSettings, raw, "generic-hmac")
    return settings


def _either(statuses: Sequence[int] | None) -> str | None:
    """``200``, ``200 or 201``, ``200, 201 or 204``; None for None."""
    if not statuses:
        return None
    words = [str(s) for s in statuses]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def generic_signature(settings: GenericHmacSettings, secret: str, event_id: str, timestamp: int, body: bytes) -> str:
    """``prefix + encode(HMAC_alg(secret UTF-8, signed content))`` for one secret."""
    values = {"id": event_id.encode("utf-8"), "timestamp": str(timestamp).encode("ascii"), "body": body}
    signed = b"".join(
        literal.encode("utf-8") + (values[name] if name else b"")
        for literal, name, _spec, _conv in string.Formatter().parse(settings.signed_content)
    )
    digest = hmac.new(secret.encode("utf-8"), signed, getattr(hashlib, settings.algorithm)).digest()
    encoded = digest.hex() if settings.encoding == "hex" else base64.b64encode(digest).decode("ascii")
    return settings.prefix + encoded


#: Why ``oversized-payload`` does not apply to a user catalog's events (`Profile.no_big_body`).
CATALOG_NO_BIG_BODY = ("your catalog's events are the bodies its examples and schemas give, which hookproof does not "
                       "grow to several megabytes; padding one with a field they do not define would test that "
                       "shape, not the receiver's body limit")


def bind_catalog(profile: Profile, catalog: UserCatalog) -> None:
    """Make `profile` (an instance) send `catalog`'s events: its world is the catalog's
    (registered, `simulator.world.registry.register_catalog`), its default event the
    catalog's first type, and its bodies carry no account, a test/live flag only where the catalog
    declares one (`UserCatalog.test_mode`), and no body of several megabytes (`CATALOG_NO_BIG_BODY`)."""
    from hookproof.simulator.world.registry import register_catalog

    profile.world = register_catalog(catalog)  # type: ignore[misc]
    profile.default_event = catalog.types[0]  # type: ignore[misc]
    profile.has_livemode = catalog.test_mode is not None  # type: ignore[misc]  # its test-mode flag, if declared
    profile.has_account = False  # type: ignore[misc]
    profile.event_clock = None  # type: ignore[misc]  # the catalog's own ordering field, if any: not the profile's
    profile.no_big_body = CATALOG_NO_BIG_BODY  # type: ignore[misc]


class GenericHmacProfile(Profile):
    """A sender signing as its `GenericHmacSettings` say.

    Envelope: ``{"id","type","created","livemode","account","data":{"object",
    "previous_attributes"?}}`` with Stripe's event types (the world's own names); the
    event id is the dedupe key, sent in `id_header` when set (else only in the body); the
    event's type, as sent, in `type_header` when set. With a user `catalog`
    (`simulator.world.user_catalog`), the events are the catalog's: its type names, and
    the body each event was made with, as it is. Signing: see
    `generic_signature`; the timestamp header carries the attempt time. Delivery
    contract: any 2xx (or only the settings' `success_statuses`), `timeout_s`,
    `retry_schedule_s` from the settings.

    The class attributes of `Profile` that depend on the settings (signature header,
    timeout, schedule, tolerance, rotation, the id header) are set per instance.
    """

    name = "generic-hmac"
    title = "Generic HMAC"
    no_big_body = ("its events are the billing world's Stripe objects, none of which is several megabytes (metadata "
                   "holds at most 50 keys of 500 characters, docs.stripe.com/metadata), and padding one with a field "
                   "it never carries would test its schema, not a body limit")
    signature_headers = ("X-Signature",)
    sender_timeout_s = 10.0
    retry_schedule_s = ()
    default_event = "payment_intent.succeeded"
    has_livemode = True
    has_account = True

    def __init__(self, settings: GenericHmacSettings | Mapping[str, Any] | None = None, *,
                 catalog: UserCatalog | None = None) -> None:
        self.settings = load_settings(settings)
        self.catalog = catalog
        if catalog is not None:  # the user's events: its own names, bodies and no mode or account flag
            bind_catalog(self, catalog)
        per_instance = {
            "signature_headers": (self.settings.signature_header,),
            "sender_timeout_s": self.settings.timeout_s,
            "retry_schedule_s": self.settings.retry_schedule_s,
            "retrying": "the sender would keep retrying it (target.signing.retry_schedule_s)",
            "gives_up": "the sender retries it no more (target.signing.retry_schedule_s)",
            "tolerance": Tolerance(self.settings.tolerance_past_s, self.settings.tolerance_future_s),
            "multiple_signatures": self.settings.rotation_separator is not None,
            "event_id_name": f"`{self.settings.id_header}`" if self.settings.id_header else "the event's id",
        }
        for attribute, value in per_instance.items():
            setattr(self, attribute, value)
        if self.settings.id_header is None and catalog is not None and not any(s.event_id for s in catalog.events):
            self.dedupe_on([s.key for s in catalog.events if s.key])
        self._successes = frozenset(self.settings.success_statuses or range(200, 300))

    def dedupe_on(self, keys: Sequence[str]) -> None:
        """Say that this sender's events carry no id (no `id_header`, no catalog ``event_id``: Lemon
        Squeezy's, "Webhook requests"), so a receiver dedupes on the business object the key
        templates `keys` name (the catalog's, or the config's ``[business_keys]``): what
        findings and scenario descriptions advise instead of an event id (`Profile.no_event_id`,
        `Profile.event_id_name`)."""
        named = ", ".join(dict.fromkeys(keys))
        words = (f"the business object its keys name ({named}; this sender gives no event id)" if named
                 else "the business object the event is about (this sender gives no event id)")
        self.no_event_id = self.event_id_name = words  # type: ignore[misc]

    def is_success(self, status: int) -> bool:
        """True for a status the settings count as delivered (`success_statuses`; any 2xx
        without them)."""
        return status in self._successes

    def success_words(self) -> str | None:
        """The settings' `success_statuses` as findings name them (``200``, ``200 or 204``), or
        None: any 2xx."""
        return _either(self.settings.success_statuses)

    def event_types(self) -> Mapping[str, str]:
        """Stripe's types (the billing world), or the user catalog's types, each its own name."""
        if self.catalog is not None:
            return {t: t for t in self.catalog.types}
        return {t: t for t in STRIPE_EVENT_TYPES}

    def payload(self, event: Event) -> dict[str, Any]:
        """The JSON body of `event`: a user catalog event's own body, else the envelope below."""
        if BODY in event.extra:
            assert self.catalog is not None  # a catalog event's profile sends that catalog
            return self.catalog.body_of(event)
        data: dict[str, Any] = {"object": dict(event.object)}
        if event.previous_attributes is not None:
            data["previous_attributes"] = dict(event.previous_attributes)
        return {
            "id": event.id,
            "type": event.type,
            "created": event.created,
            "livemode": event.livemode,
            "account": event.account,
            "data": data,
        }

    def envelope(self, event: Event) -> Envelope:
        headers = {"Content-Type": "application/json"}
        if self.settings.id_header is not None:
            headers[self.settings.id_header] = event.id
        if self.settings.type_header is not None:
            headers[self.settings.type_header] = event.type
        return Envelope(event_id=event.id, type=event.type, body=canonical_json(self.payload(event)), headers=headers)

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """The signature header (and the timestamp header when configured)."""
        require_secrets(secrets, self.name)
        separator = self.settings.rotation_separator
        used = secrets if separator is not None else secrets[:1]
        signatures = [generic_signature(self.settings, s, envelope.event_id, timestamp, envelope.body) for s in used]
        headers = {self.settings.signature_header: (separator or "").join(signatures)}
        if self.settings.timestamp_header is not None:
            headers[self.settings.timestamp_header] = str(timestamp)
        return headers

    def generate_secret(self, seed: int) -> str:
        """64 lowercase hex characters."""
        return random.Random(seed).randbytes(32).hex()
