"""Shopify: ``X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>`` (no timestamp).

Sources: shopify.dev/docs/apps/build/webhooks/delivery-structure (headers: Topic,
Hmac-Sha256, Shop-Domain, API-Version, Webhook-Id, Triggered-At, Event-Id; the body is
the full REST resource; ``X-Shopify-Webhook-Id``: "A unique composite key per delivery. Use to
identify and deduplicate individual deliveries."; ``X-Shopify-Event-Id``: "A unique ID shared
across all deliveries produced by the same merchant action"), shopify.dev/apps/build/webhooks/ignore-duplicates
(``X-Shopify-Event-Id`` "the same value across more than one webhook indicates a duplicate"; with the
topic, since one merchant action's topics share it), shopify.dev/changelog/updates-to-webhook-retry-mechanism
(8 retries over 4 hours, exponential, since 2024-09-10; retries carry "the original payload from
the time they were triggered"), shopify.dev/docs/apps/build/webhooks/ignore-duplicates' note ("If you
have more than one subscription for the same topic, then you'll receive several webhooks for the same
event (one per subscription)"); npm ``@shopify/shopify-api``
``lib/webhooks/validate.js`` (official verifier: base64 digest, required headers).
``User-Agent: Shopify-Captain-Hook`` is not in Shopify's docs; it is what deliveries carry in
published receiver logs (e.g. tigersandtacos.dev, "Knock Knock, who's there?", 2020).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
from dataclasses import replace
from typing import ClassVar, Iterable, Mapping, Sequence

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_uuid, rfc3339_ns
from hookproof.simulator.profiles.provider_words import BodyTime, EventClock
from hookproof.simulator.world.shopify import (
    SHOPIFY_API_VERSION,
    SHOPIFY_COMPLIANCE_TOPICS,
    SHOPIFY_EVENT_ID,
    SHOPIFY_EVENT_TYPES,
    SHOPIFY_FULFILMENT_TOPICS,
    shop_domain,
)
from hookproof.simulator.world.shopify_shapes import SHOP_TZ

#: The UTC offset of the world's shop, in which its resources write their times (seconds).
SHOP_UTC_OFFSET_S = int(SHOP_TZ.utcoffset(None).total_seconds())


def shopify_hmac(secret: str, body: bytes) -> str:
    """Standard base64 of HMAC-SHA256(body) keyed by the app's client secret as UTF-8."""
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()).decode("ascii")

#: The User-Agent of Shopify's webhook deliveries (see the module docstring).
USER_AGENT = "Shopify-Captain-Hook"

#: `Event.extra` key of the subscription a delivery goes through (`ShopifyProfile.replayed`):
#: absent or 0 for the endpoint's first subscription to the topic, n for its n-th other one.
SUBSCRIPTION = "shopify_subscription"


class ShopifyProfile(Profile):
    """Shopify Admin webhooks over HTTPS.

    Events come from the Shopify world (`simulator.world.shopify.ShopifyWorld`,
    ``world = "shopify"``), named by their topic (``orders/paid``, ``refunds/create``…);
    a billing-world (Stripe) event raises ProfileError: Shopify sends no such thing.

    Envelope: the body is the REST resource itself (the world's snapshot, in
    `simulator.world.shopify_shapes`). Headers: ``X-Shopify-Topic``,
    ``X-Shopify-Shop-Domain`` (the world's shop), ``X-Shopify-API-Version`` (2024-10),
    ``X-Shopify-Event-Id`` ("a unique ID shared across all deliveries produced by the same
    merchant action": the world's `SHOPIFY_EVENT_ID`, one per world operation, so a checkout's
    ``orders/create`` and ``orders/paid``, a refund's ``refunds/create`` and ``orders/updated``
    share it), ``X-Shopify-Webhook-Id`` ("a unique composite key per delivery": derived from the
    world's id of the topic's event, one per delivery to this subscription, unchanged across its
    retries as integrators observe [2ND]), ``X-Shopify-Triggered-At`` (the change's time; retries
    keep the trigger-time payload). No test/live flag.

    The event's identity (``Envelope.event_id``, what the history groups attempts by and findings
    name) is the topic with its Event-Id, ``orders/paid:<X-Shopify-Event-Id>`` (`event_identity`):
    the Event-Id alone names one merchant action, several events; the Webhook-Id names one
    subscription's delivery, and a second subscription's delivery of the same event has another.
    The pair is what a receiver deduplicates on (shopify.dev "Ignore duplicate webhooks" with the
    delivery-structure page), and one event's every attempt, retry or second subscription, has it.

    Shopify has no manual replay; what sends one event to an endpoint again as a new delivery
    is a second subscription to its topic (`replayed`: an app whose webhooks are declared both
    in ``shopify.app.toml`` and through the Admin API, or twice through it): the same body,
    ``X-Shopify-Event-Id`` and ``X-Shopify-Triggered-At``, a new ``X-Shopify-Webhook-Id``.

    Signing: one client secret, no rotation list: only the first secret signs. No
    timestamp, so no tolerance window.

    Delivery contract: 200-series succeeds; 1 s to connect and 5 s in total [2ND];
    8 retries over 4 hours with exponential backoff. Shopify does not publish the
    intervals: here they double from 1 min (1, 2, 4, 8, 16, 32, 64 min) and the
    eighth retry lands exactly 4 h after the first attempt.
    """

    name = "shopify"
    event_id_name = "`X-Shopify-Topic` with `X-Shopify-Event-Id`"
    title = "Shopify"
    no_big_body = ("hookproof makes no Shopify payload of several megabytes in Shopify's own fields yet, and padding "
                   "one with a field Shopify never sends would test its schema, not a body limit")
    signature_headers = ("X-Shopify-Hmac-Sha256",)
    sender_timeout_s = 5.0
    retry_schedule_s = (60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3840.0, 6780.0)
    # ``X-Shopify-Triggered-At`` (the header, nine fractional digits) or the resource's ``updated_at``
    # orders a resource's deliveries (shopify.dev/docs/apps/build/webhooks/delivery-structure)
    # the world's triggers stay in their change's updated_at second (simulator.world.shopify), so two
    # events tie on updated_at exactly when their triggers share a second (`BodyTime`)
    event_clock = EventClock("X-Shopify-Triggered-At", "rfc3339_ns", 1,
                             "compare the resource's updated_at "
                             "(shopify.dev/docs/apps/build/webhooks/delivery-structure)",
                             BodyTime("updated_at", 1_000_000, SHOP_UTC_OFFSET_S,
                                      "it counts whole seconds; break the tie with X-Shopify-Triggered-At, the time "
                                      "Shopify triggered each webhook, to the nanosecond "
                                      "(shopify.dev/docs/apps/build/webhooks/delivery-structure)"))
    # 8 retries over 4 hours since 2024-09-10 [DOC]; after 8 consecutive failures a subscription
    # made through the Admin API is deleted [2ND] (providers.md, Shopify)
    retrying = "Shopify would keep retrying it, 8 times over 4 hours"
    gives_up = "Shopify retries it no more, and deletes a webhook subscription made through the Admin API"
    api_version: ClassVar[str] = SHOPIFY_API_VERSION
    default_event = "orders/paid"
    has_account = True
    #: shopify.dev ("Verify the webhook", "Webhook headers"): an app verifies the HMAC with
    #: its one client secret; X-Shopify-Shop-Domain names the shop, and nothing tells a
    #: public app to refuse other shops' domains.
    foreign_account_valid = ("a Shopify app serves every shop that installs it under one app secret; a delivery "
                             "from another shop (X-Shopify-Shop-Domain) is valid, so there is no foreign account")
    #: shopify.dev/changelog/updates-to-webhook-retry-mechanism: retries are "delivered with the
    #: original payload from the time they were triggered".
    retry_bytes_kept = ("Shopify delivers a retry \"with the original payload from the time they were triggered\" "
                        "(shopify.dev changelog, \"Updates to webhook retry mechanism\"): the same body bytes, never "
                        "re-serialised")
    #: shopify.dev "Ignore duplicate webhooks": one webhook per subscription for the same event; the
    #: delivery-structure page: X-Shopify-Webhook-Id is "a unique composite key per delivery"
    replay_words = ("the same event through a second subscription to its topic: a new X-Shopify-Webhook-Id, "
                    "the same X-Shopify-Event-Id")
    world = "shopify"
    #: shopify.dev "Privacy law compliance": the mandatory compliance topics are subscribed to apart
    #: (the app's compliance webhook URLs), so they are sent to an endpoint that names them alone;
    #: so are the fulfilment topics (``orders/fulfilled``, ``orders/partially_fulfilled``), which
    #: only an app keeping its orders' shipping subscribes to: an endpoint naming neither is told
    #: the stories it always was, without fulfilments.
    optional_types = SHOPIFY_COMPLIANCE_TOPICS + SHOPIFY_FULFILMENT_TOPICS
    #: shopify.dev, "Privacy law compliance": ``shop/redact`` asks the app to "erase data for that
    #: store"; apps drop a shop's data on ``app/uninstalled`` too.
    account_wide_types = ("app/uninstalled", "shop/redact")
    optional_noun = "optional Shopify topic"

    def erasable(self, events: Iterable[Event]) -> frozenset[str]:
        """The objects of a shop triggered before its ``app/uninstalled`` or ``shop/redact`` in
        `events` (in the order Shopify triggered them, whatever the order sent; `account_wide_types`: "erase data for that
        store", shopify.dev "Privacy law compliance"; apps drop a shop's data on its uninstall
        too), and the customer and the orders a ``customers/redact`` names (its
        ``orders_to_redact``). A shop's objects after its reinstall are not."""
        seen: dict[str, set[str]] = {}
        out: set[str] = set()
        for e in sorted(events, key=lambda e: e.created_us):  # as triggered: a redelivery keeps its time
            seen.setdefault(e.account, set()).add(e.object_id)
            if e.type in self.account_wide_types:
                out |= seen[e.account]
            elif e.type == "customers/redact":
                out.update(str(o) for o in e.object.get("orders_to_redact", ()))
                out.add(str(e.object.get("customer", {}).get("id")))
        return frozenset(out)

    def event_types(self) -> Mapping[str, str]:
        """Every topic the Shopify world emits, mapped to itself (Shopify's own names): of the
        compliance and fulfilment topics, only those the endpoint is subscribed to (`subscribed`)."""
        return {t: t for t in SHOPIFY_EVENT_TYPES + self.subscribed}

    def replayed(self, event: Event, replay: int) -> Event:
        """`event` delivered through the endpoint's `replay`-th other subscription to its topic
        (1: the second subscription). shopify.dev "Ignore duplicate webhooks": "If you have more
        than one subscription for the same topic, then you'll receive several webhooks for the
        same event (one per subscription)", each with the event's ``X-Shopify-Event-Id``; the
        delivery-structure page makes ``X-Shopify-Webhook-Id`` "a unique composite key per
        delivery", so each subscription's delivery has its own (kept across that delivery's
        retries). The body, ``X-Shopify-Triggered-At`` and every other header stay: both
        subscriptions are taken at the profile's API version (one at another version would
        serialize the body at that version, ``X-Shopify-API-Version``; the world has 2024-10's
        shapes alone)."""
        return replace(event, extra={**event.extra, SUBSCRIPTION: replay})

    def replay_of(self, event: Event) -> int:
        """The other subscription `event` is delivered through (`replayed`'s number), 0 for the
        endpoint's first subscription to its topic."""
        return int(event.extra.get(SUBSCRIPTION, 0)) if event.extra else 0

    @staticmethod
    def event_id(event: Event) -> str:
        """``X-Shopify-Event-Id`` of `event`: its merchant action's id (the world's
        `SHOPIFY_EVENT_ID`; an event made outside an action, its own id). shopify.dev/docs/apps/
        build/webhooks/delivery-structure: "A unique ID shared across all deliveries produced by the
        same merchant action"."""
        return str(event.extra.get(SHOPIFY_EVENT_ID) or event.id) if event.extra else event.id

    @staticmethod
    def event_identity(topic: str, event_id: str) -> str:
        """One event's identity, ``{topic}:{X-Shopify-Event-Id}`` (``Envelope.event_id``): one merchant
        action's topics share the Event-Id (shopify.dev/docs/apps/build/webhooks/delivery-structure)."""
        return f"{topic}:{event_id}"

    def shared_id(self, event_id: str) -> tuple[str, str] | None:
        """The ``X-Shopify-Event-Id`` in an event's identity (`event_identity`), shared by its
        merchant action's topics, and Shopify's words for it
        (shopify.dev/docs/apps/build/webhooks/delivery-structure)."""
        topic, sep, shared = event_id.partition(":")
        if not sep or "/" not in topic or not shared:
            return None
        return shared, ("X-Shopify-Event-Id is \"a unique ID shared across all deliveries produced by the same "
                        "merchant action\" (shopify.dev, \"Webhooks delivery structure\"): deduplicate on "
                        "X-Shopify-Topic with it; \"Ignore duplicate webhooks\"' \"the same value across more than one "
                        "webhook indicates a duplicate\" holds within one topic")

    @staticmethod
    def webhook_id(event: Event) -> str:
        """``X-Shopify-Webhook-Id`` of `event`'s delivery: a UUID derived from the world's id of the
        topic's event (one per topic even where a merchant action's topics share the Event-Id), and
        for another subscription's delivery (`replayed`) from its number too."""
        subscription = int(event.extra.get(SUBSCRIPTION, 0)) if event.extra else 0
        return derived_uuid("shopify-webhook", event.id if not subscription else f"{event.id}:subscription:{subscription}")

    def envelope(self, event: Event) -> Envelope:
        """The delivery of `event`. Raises ProfileError for a billing-world event."""
        if "/" not in event.type:
            raise ProfileError(f"Shopify sends no {event.type!r} webhook: the shopify profile renders the Shopify "
                               f"world's topics (known: {', '.join(SHOPIFY_EVENT_TYPES + self.optional_types)})",
                               field="event")
        topic = event.type
        event_id = self.event_id(event)
        return Envelope(
            event_id=self.event_identity(topic, event_id),
            type=topic,
            body=canonical_json(dict(event.object)),
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "X-Shopify-Topic": topic,
                "X-Shopify-Shop-Domain": shop_domain(event.account),
                "X-Shopify-API-Version": self.api_version,
                "X-Shopify-Webhook-Id": self.webhook_id(event),
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
