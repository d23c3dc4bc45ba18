"""Paddle Billing: ``Paddle-Signature: ts=<s>;h1=<hex>[;h1=…]`` over ``{ts}:{raw body}``.

Sources: PyPI ``paddle-python-sdk`` 1.16.1 ``paddle_billing/Notifications/Verifier.py``
(``Verifier(maximum_variance=5)``: ±5 s; the Node SDK 3.x ``WebhooksValidator`` checks only
the past, ``MAX_VALID_TIME_DIFFERENCE = 5``, so a future timestamp is not required to be refused), ``PaddleSignature.py`` (``parse``: only ``ts``
and ``h1`` keys, anything else raises ``ValueError``; HMAC-SHA256 of ``{ts}:{body}``
keyed by the secret string as UTF-8, lowercase hex); PaddleHQ/paddle-python-sdk
``tests/Unit/Notification/test_Verifier.py`` (test vector);
developer.paddle.com/webhooks/about/signature-verification,
developer.paddle.com/webhooks/about/respond-to-webhooks (HTTP 200 within 5 s; live: up to
60 retries over 3 days, exponential), developer.paddle.com/api-reference/notifications.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import Any, Mapping, Sequence

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import (
    Envelope,
    FutureDispute,
    Profile,
    Tolerance,
    canonical_json,
    require_secrets,
)
from hookproof.simulator.profiles.formats import derived_token, derived_ulid, rfc3339_us
from hookproof.simulator.profiles.provider_words import EventClock
from hookproof.simulator.world.paddle import PADDLE_EVENT_TYPES


def _live_schedule() -> tuple[float, ...]:
    """60 retries over ~3 days: doubling from 1 min up to 64 min, then every 79 min (71.9 h in all)."""
    doubling = tuple(60.0 * 2**i for i in range(7))
    return doubling + (4740.0,) * (60 - len(doubling))


def paddle_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of ``{timestamp}:{body}`` keyed by the secret string as UTF-8."""
    return hmac.new(secret.encode("utf-8"), f"{timestamp}:".encode("utf-8") + body, hashlib.sha256).hexdigest()


#: The User-Agent of Paddle's deliveries: developer.paddle.com/webhooks/about/respond-to-webhooks
#: ("Update firewall rules") has a WAF match ``Paddle`` as the user agent string and gives no
#: fuller value (no version), so the plain token is sent.
USER_AGENT = "Paddle"

#: `Event.extra` key of a manual replay's number (`PaddleProfile.replayed`).
REPLAY = "paddle_replay"


class PaddleProfile(Profile):
    """Paddle Billing notifications (live account).

    Events come from the Paddle Billing world (`simulator.world.paddle.PaddleWorld`,
    ``world = "paddle"``), named as Paddle names them (``transaction.completed``,
    ``subscription.past_due``, ``adjustment.created``…); a billing-world (Stripe) event
    raises ProfileError: Paddle sends no such thing.

    Envelope: ``{"event_id","event_type","occurred_at","notification_id","data"}``
    (developer.paddle.com/api-reference/events, "Event entity");
    ``event_id`` is the world's ``evt_…`` id and the dedupe key; ``notification_id``
    (``ntf_…``, derived from the event id) is stable across automatic retries, and a manual
    replay (`replayed`: ``POST /notifications/{id}/replay``) gets a new one with the same
    ``event_id``, as a second notification destination would; ``occurred_at`` is RFC 3339 with microseconds;
    ``data`` is the entity as it is after the change (`simulator.world.paddle_shapes`,
    parsed by paddle-python-sdk's notification entities in tests). No test/live flag, no
    account in the body. Headers: ``Content-Type: application/json`` and ``User-Agent: Paddle``
    (`USER_AGENT`: the token Paddle's docs name, no version).

    Signing: ``ts=<unix s>;h1=<hex>`` with one ``h1`` per secret during rotation (in no documented
    order: `rotation_dispute`, the Node SDK compares only the last) and no
    other key ever (the SDK's parser raises on any other key). The SDK verifier accepts
    ±5 s, so every attempt is signed at its send time.

    Delivery contract: 200 within 5 s (any 2xx is treated as success here; the docs
    say "HTTP 200" [?]); live: 60 retries over 3 days with exponential backoff, the
    intervals are not published (see `_live_schedule`); sandbox: 3 retries within
    15 minutes [2ND], not played: every environment gets the live schedule (the README).
    """

    name = "paddle"
    event_id_name = "`event_id`"
    title = "Paddle Billing"
    no_big_body = ("hookproof makes no Paddle event of several megabytes in Paddle's own fields yet, and padding one "
                   "with a field Paddle never sends would test its schema, not a body limit")
    signature_headers = ("Paddle-Signature",)
    sender_timeout_s = 5.0
    retry_schedule_s = _live_schedule()
    # the body's ``occurred_at`` (RFC 3339, microseconds) orders an entity's events (providers.md, Paddle)
    event_clock = EventClock("occurred_at", "rfc3339_us", 1,
                             "Paddle documents no other order; fetch the entity from Paddle's API "
                             "(GET /transactions/{id}, /subscriptions/{id}) and keep what it answers",
                             advises_fetch=True)
    # live: up to 60 retries over 3 days; disabling an endpoint is not documented; a replay is
    # POST /notifications/{id}/replay (providers.md, Paddle [DOC])
    retrying = "Paddle would keep retrying it, up to 60 times over 3 days (live)"
    gives_up = "Paddle retries it no more; it can be replayed with POST /notifications/{id}/replay within 90 days"
    # POST /notifications/{notification_id}/replay: "Paddle creates a new notification entity for
    # the replay, related to the same event_id" (developer.paddle.com/api-reference/notifications/
    # replay-notification), so a receiver deduplicating on notification_id applies it again
    replay_words = "a manual replay: a new notification_id, the same event_id"
    # Paddle's "Verify webhook signatures" page, its header schema: "Signatures contain at least one
    # `h1`" (no order given); @paddle/paddle-node-sdk 3.x WebhooksValidator.extractHeader keeps the
    # last h1 it parses (each overwrites the one before); paddle-python-sdk's PaddleSignature.verify
    # compares every h1 ("Handling multiple Secrets is needed because of key rotation situations")
    rotation_dispute = ("Paddle's docs say a Paddle-Signature carries at least one h1 and give no order; "
                        "@paddle/paddle-node-sdk's WebhooksValidator (3.x) compares only the last h1 of the header, "
                        "while paddle-python-sdk's Verifier accepts any, so a receiver on the Node SDK refuses "
                        "every delivery of a rotation in which Paddle lists its secret's signature before another")
    # the Node SDK (@paddle/paddle-node-sdk WebhooksValidator: `now > (ts + 5) * 1000` only) accepts a
    # future ts; the Python SDK's Verifier also refuses `ts - 5 > now`: refusing one is not required
    tolerance = Tolerance(past_s=5.0, future_s=None)
    future_dispute = FutureDispute(5.0, "Paddle's Node SDK (@paddle/paddle-node-sdk's WebhooksValidator)",
                                   "paddle-python-sdk's Verifier")
    world = "paddle"
    default_event = "transaction.completed"
    multiple_signatures = True

    def event_types(self) -> Mapping[str, str]:
        """Every event type the Paddle world emits, mapped to itself (Paddle's own names)."""
        return {t: t for t in PADDLE_EVENT_TYPES}

    def notification_id(self, event: Event) -> str:
        """``ntf_01`` + 24 lowercase base32 characters, the shape of the world's other Paddle ids,
        derived from the event id (and, for a manual replay, its number: each replay is a new
        notification)."""
        replay = int(event.extra.get(REPLAY, 0))
        return "ntf_" + derived_ulid("paddle-notification", event.id if not replay else f"{event.id}:replay:{replay}")

    def replayed(self, event: Event, replay: int) -> Event:
        """`event` as Paddle's `replay`-th manual replay sends it: a new notification (a new
        ``notification_id``) of the same event (the same ``event_id``, body otherwise equal)."""
        return replace(event, extra={**event.extra, REPLAY: replay})

    def replay_of(self, event: Event) -> int:
        """The manual replay `event` is (`replayed`'s number), 0 for its first notification."""
        return int(event.extra.get(REPLAY, 0)) if event.extra else 0

    def payload(self, event: Event) -> dict[str, Any]:
        """The notification body. Raises ProfileError for a billing-world event."""
        if event.api_version != "1":
            raise ProfileError(f"Paddle sends no {event.type!r} event: the paddle profile renders the Paddle Billing "
                               f"world's events (known: {', '.join(PADDLE_EVENT_TYPES)})", field="event")
        return {
            "event_id": event.id,
            "event_type": event.type,
            "occurred_at": rfc3339_us(event.created_us),
            "notification_id": self.notification_id(event),
            "data": dict(event.object),
        }

    def envelope(self, event: Event) -> Envelope:
        return Envelope(
            event_id=event.id,
            type=event.type,
            body=canonical_json(self.payload(event)),
            headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        )

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """``ts=…;h1=…`` with one ``h1`` per secret (rotation)."""
        require_secrets(secrets, self.name)
        parts = [f"ts={timestamp}"] + [f"h1={paddle_signature(s, timestamp, envelope.body)}" for s in secrets]
        return {"Paddle-Signature": ";".join(parts)}

    def generate_secret(self, seed: int) -> str:
        """``pdl_ntfset_01`` + 24 base32 characters + ``_`` + 32 base62 characters."""
        value = str(seed)
        return f"pdl_ntfset_{derived_ulid('paddle-secret', value)}_{derived_token('paddle-secret-key', value, 32)}"
