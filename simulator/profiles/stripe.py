"""Stripe: `Stripe-Signature: t=<s>,v1=<hex>` over ``{t}.{raw body}`` (and a fake ``v0`` in test mode).

Sources: stripe-python `stripe/_webhook.py` (`WebhookSignature.verify_header`,
`Webhook.DEFAULT_TOLERANCE = 300`, past-only check); docs.stripe.com/webhooks
(signatures, event object); docs.stripe.com/webhooks/process-undelivered-events
(resends for up to 3 days with exponential backoff).

Objects: every ``data.object`` is the world's object, field for field in Stripe's shape
(`hookproof.simulator.world.stripe_shapes`, checked against Stripe's OpenAPI fixtures
``fixtures3.json`` by ``tests/simulator/test_stripe_fidelity.py``), rendered at the
event's API version (`target.api_version`; default `LATEST_API_VERSION`). The fields
whose shape changed between versions follow it, as Stripe's changelog for
2025-03-31.basil says (docs.stripe.com/changelog/basil): before that version an
invoice links its subscription as ``invoice.subscription`` and its payment as
``invoice.payment_intent`` / ``invoice.charge`` / ``invoice.paid``, and a subscription
carries ``current_period_start/end``; from it, the link is
``invoice.parent.subscription_details.subscription``, the payment fields are gone and
the period is on each subscription item (table in
`hookproof.simulator.profiles.stripe_versions`). From 2022-11-15 a charge no longer carries
its ``refunds`` list (docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand:
only when expanded, which a webhook never is): a ``charge.refunded`` event's charge has
``amount_refunded`` and ``refunded``, not the list.

The event's ``account`` is sent only for Connect events (docs.stripe.com/connect/webhooks:
"``account``: the connected account that originated the event"), that is when the
target config names the account the receiver listens to (`target.account`).

The differences from Stripe's own objects that remain, and why, are listed in
`DOCUMENTED_DIFFERENCES`.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

from hookproof.simulator.events import LATEST_API_VERSION, Event
from hookproof.simulator.profiles.base import (
    Envelope,
    Profile,
    SignedRequest,
    Tolerance,
    hmac_sha256,
    new_envelope,
    new_signed_request,
    require_secrets,
)
from hookproof.simulator.profiles.provider_words import EventClock
from hookproof.simulator.profiles.stripe_json import stripe_json
from hookproof.simulator.profiles.stripe_versions import (
    at_version,
    has_event_context,
    names_shaped_kind,
    previous_at_version,
    shaped_kinds,
)

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

#: Stripe event types only the Stripe profile sends (subscription statuses other
#: providers do not model; a declined payment's failed charge).
STRIPE_ONLY_EVENT_TYPES: tuple[str, ...] = (
    "customer.subscription.paused",
    "customer.subscription.resumed",
    "charge.failed",
    "refund.created",
)

#: Stripe event types the stripe profile sends a Connect endpoint alone (``[target] connect``), about
#: a connected account (a seller onboarded: `World.onboard_account`): Stripe's "Connect webhooks" page names
#: ``account.updated`` the event to watch for a connected account. Not among `event_types`: an
#: account endpoint is sent its own account's, which hookproof does not model.
CONNECT_EVENT_TYPES: tuple[str, ...] = ("account.updated",)

#: Stripe event types sent only to an endpoint whose ``enabled_events`` lists them by name
#: (`StripeProfile.optional_types`): ``invoice.payment_succeeded``, which Stripe sends right after
#: ``invoice.paid`` for every invoice paid by a payment, with the same invoice data
#: (docs.stripe.com/invoicing/integration, "Handle payment events"; stripe-python's and
#: stripe-node's ``InvoicePaymentSucceededEvent``); ``customer.subscription.trial_will_end``, which
#: Stripe sends three days before a trial ends, with the subscription (status ``trialing``;
#: docs.stripe.com/billing/subscriptions/trials; stripe-python's
#: ``CustomerSubscriptionTrialWillEndEvent``): an endpoint listing it is a shop with free trials,
#: and its effect and state stories then walk one (`scenarios.catalog.effect_events`); a card
#: chargeback's ``charge.dispute.created``, ``.funds_withdrawn``, ``.updated``, ``.closed`` and
#: ``.funds_reinstated`` (`DISPUTE_EVENT_TYPES`, `World.dispute`), and a delayed method's refund
#: answered by its bank, ``refund.updated`` and ``refund.failed`` (`REFUND_UPDATE_TYPES`,
#: `World.settle_refund`): an endpoint listing them is told a dispute, a refund of an ACH payment
#: that succeeds and one that fails. Left out of every other endpoint's stories (enabled_events
#: left out, or ``"*"``), so those stay as they were.
DISPUTE_EVENT_TYPES: tuple[str, ...] = ("charge.dispute.created", "charge.dispute.funds_withdrawn",
                                        "charge.dispute.updated", "charge.dispute.closed",
                                        "charge.dispute.funds_reinstated")
REFUND_UPDATE_TYPES: tuple[str, ...] = ("refund.updated", "refund.failed")
STRIPE_OPTIONAL_EVENT_TYPES: tuple[str, ...] = ("invoice.payment_succeeded", "customer.subscription.trial_will_end",
                                                *DISPUTE_EVENT_TYPES, *REFUND_UPDATE_TYPES)

#: Where hookproof's Stripe objects knowingly differ from Stripe's (path -> reason). A path
#: is ``<object type>.<field>[.<field>…]`` (``[]`` for list items); ``*.field`` is any object.
DOCUMENTED_DIFFERENCES: Mapping[str, str] = {
    "*.hookproof_version": "the world's version counter of the object, which state observers order by; "
                           "Stripe has no such field and clients ignore unknown fields",
    "event.account": "sent only on Connect events (target.account set), as Stripe does; the fixture is a "
                     "platform event",
    "event.data.previous_attributes": "sent on *.updated events, only the attributes whose value changed, as "
                                      "the Event reference says (docs.stripe.com/api/events/object), and on "
                                      "charge.refunded (amount_refunded and, when it changes, refunded before "
                                      "the refund), which the reference does not list; the fixture is a "
                                      "plan.created event",
    "invoice.subscription": "removed from the invoice at 2025-03-31.basil (changelog; stripe-python 16 has no "
                            "Invoice.subscription); the fixture still lists it as null. Sent before basil",
    "line_item.pricing.price_details": "Stripe sends the price of a subscription line here since basil "
                                       "(docs.stripe.com/api/invoice-line-item/object); the fixture's line is "
                                       "an invoice item without a price",
    "payment_intent.last_payment_error": "Stripe's error object (docs.stripe.com/api/errors: code, decline_code, "
                                         "doc_url, message, payment_method); the fixture shows only `type`",
    "payment_intent.payment_method_options.card": "Stripe sends the card options of an intent paid by card "
                                                  "(docs.stripe.com/api/payment_intents/object); the fixture's "
                                                  "intent has no payment method yet",
    "invoice_payment.payment.payment_intent": "the payment intent of a payment of type payment_intent "
                                              "(docs.stripe.com/api/invoice-payment/object); the fixture "
                                              "shows only `type`",
    "charge.refunds": "not in the charge from 2022-11-15 on unless expanded (docs.stripe.com/changelog/2022-11-15/"
                      "deprecates-charges-auto-expand; stripe-node types it `refunds?`, stripe-python Optional): "
                      "the provider API adds it for expand[]=refunds; the fixture shows it expanded. Sent before "
                      "2022-11-15",
    "checkout.session.customer_details.tax_ids": "an empty list once the customer paid; the fixture has null",
    "refund.failure_reason": "sent on a failed refund alone (docs.stripe.com/api/refunds/object: \"Only present "
                             "when the refund has failed\"); the fixture's refund succeeded",
    "refund.failure_balance_transaction": "sent on a failed refund alone, the balance transaction giving its amount "
                                          "back (docs.stripe.com/api/refunds/object); the fixture's refund succeeded",
    "refund.destination_details": "a bank refund's destination is its bank transfer (us_bank_transfer, "
                                  "eu_bank_transfer, gb_bank_transfer, br_bank_transfer: stripe-python's "
                                  "Refund.DestinationDetails); the fixture's is a card's",
}


#: The headers of every Stripe envelope, in their order, as (name, value) pairs: what a Stripe
#: delivery carries before its ``Stripe-Signature`` (a receiver's logged WSGI environ of one:
#: ``Content-Type``, ``Cache-Control``, ``User-Agent``, ``Accept``, in that order, and no
#: ``Accept-Encoding``).
_ENVELOPE_PAIRS: tuple[tuple[str, str], ...] = (
    ("Content-Type", "application/json; charset=utf-8"),
    ("Cache-Control", "no-cache"),
    ("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"),
    ("Accept", "*/*; q=0.5, application/xml"),
)


def stripe_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of ``{timestamp}.{body}`` keyed by the whole secret (with `whsec_`).

    Source: stripe-python `WebhookSignature._compute_signature`. The HMAC of RFC 2104
    (what `hmac.digest` computes) from the secret's keyed SHA-256 states, made once per
    secret (`profiles.base.hmac_sha256`): each signature hashes only its message.
    """
    return hmac_sha256(secret.encode("utf-8"), b"%d." % timestamp, body).hex()


#: The test-mode flag of a Stripe Event body, pretty-printed (`stripe_json`) or compact (a
#: re-serialized body): every object in an event shares its mode, so any occurrence says it.
_TEST_MODE_MARKS = (b'"livemode": false', b'"livemode":false')
#: The key of hookproof's stand-in for Stripe's ``v0`` digest (Stripe never published its own).
_V0_KEY = b"hookproof: the fake v0 scheme of Stripe's test-mode events"


def fake_v0(v1: str) -> str:
    """The ``v0`` signature hookproof adds to a test-mode event's ``Stripe-Signature``: 64 hex
    digits no receiver can verify, as Stripe's own (docs.stripe.com/webhooks/signature: "To aid
    with testing, Stripe sends an extra signature with a fake v0 scheme, for test mode events";
    its secret is unpublished). Ours is an HMAC-SHA256 of the ``v1`` digest under a fixed key."""
    return hmac_sha256(_V0_KEY, b"", v1.encode("ascii")).hex()


class StripeProfile(Profile):
    """Stripe v1 snapshot events.

    Delivery contract: any 2xx succeeds; live mode retries with exponential backoff for
    up to 3 days (docs.stripe.com/webhooks/process-undelivered-events; intervals are not
    published, so the schedule below is exponential over ~3 days). The sender timeout is
    not published (docs say "timed out"); 20 s is the harness default.

    Another mode's or another account's event reaches only a Connect endpoint: an account
    endpoint receives its own account's events in its own mode, while a live Connect endpoint
    also receives the connected accounts' test events (stripe.com/docs/connect/webhooks;
    support.stripe.com/questions/connect-account-webhook-configurations), hence Stripe's
    advice to check ``livemode`` there.
    """

    name = "stripe"
    event_id_name = "the event's `id`"
    title = "Stripe"
    no_big_body = ("no Stripe event is several megabytes: an object's metadata holds at most 50 keys of 40 "
                   "characters with values of 500 (docs.stripe.com/metadata) and an invoice carries only the first "
                   "handful of its lines (docs.stripe.com/api/invoices), and Stripe sends no field to pad one with")
    signature_headers = ("Stripe-Signature",)
    sender_timeout_s = 20.0
    retry_schedule_s = (60.0, 300.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 57600.0, 86400.0, 86400.0)
    # the event's ``created`` (unix seconds: changes in one second tie); when order matters Stripe
    # advises fetching the object (docs.stripe.com/webhooks, "Event ordering")
    event_clock = EventClock("created", "unix_s", 1_000_000,
                             "Stripe advises fetching the object from the API when an event arrives "
                             "(docs.stripe.com/webhooks, Event ordering)", advises_fetch=True)
    # live mode retries for up to 3 days; then Stripe e-mails about an endpoint failing for days and may
    # disable it (docs.stripe.com/webhooks/process-undelivered-events; providers.md, Stripe [DOC/2ND])
    retrying = "Stripe would keep retrying it for up to 3 days (live mode)"
    gives_up = ("Stripe retries it no more, and e-mails about an endpoint failing for days, then may "
                "disable it")
    tolerance = Tolerance(past_s=300.0, future_s=None)
    default_event = "payment_intent.succeeded"
    has_livemode = True
    has_account = True
    other_mode_needs_connect = ("Stripe sends an endpoint another mode's or another account's events only when "
                                "it is a Connect endpoint (stripe.com/docs/connect/webhooks); the config does not "
                                "declare one (target.connect)")
    live_event_mirrored = (
        "Stripe sends a test-mode Connect endpoint test events only, and a live one the connected accounts' "
        "test events beside the live ones (docs.stripe.com/connect/webhooks): this test-mode endpoint was sent "
        "live-mode events in place of that case, so a receiver applying them would apply test events on its live "
        "endpoint (target.environment = \"live\" plays the case itself)")
    foreign_account_never_sent = (
        "a Connect endpoint is sent the events of every account connected to the platform, each naming its "
        "account, and Stripe never sends it an event of an account the platform is not connected to "
        "(docs.stripe.com/connect/webhooks): no event it receives is of a foreign account, and a receiver "
        "cannot refuse one by its account")
    multiple_signatures = True
    #: `STRIPE_OPTIONAL_EVENT_TYPES`: sent only to an endpoint whose ``target.enabled_events``
    #: lists them (`optional_listed_only`; ``"*"`` and leaving enabled_events out do not).
    optional_types = STRIPE_OPTIONAL_EVENT_TYPES
    optional_listed_only = True
    optional_noun = "optional Stripe type"

    def event_types(self) -> Mapping[str, str]:
        """Every type the world emits to this endpoint, mapped to itself (Stripe's own names):
        of the optional types, only those it subscribed to (`subscribed`)."""
        return {t: t for t in STRIPE_EVENT_TYPES + STRIPE_ONLY_EVENT_TYPES + self.subscribed}

    def event_object(self, event: Event, api_version: str | None = None, *, shared: bool = False) -> dict[str, Any]:
        """The Stripe Event object (docs.stripe.com/api/events/object) for `event`.

        Objects are rendered at `api_version` (default: the event's own, as Stripe renders
        a webhook at its endpoint's version); ``account`` only on Connect events. With
        `shared`, an object already in that version's shape is the event's own, not a
        copy (`at_version`): for rendering it to bytes at once, never to keep or change.
        """
        version = api_version or event.api_version or LATEST_API_VERSION
        previous = event.previous_attributes
        obj = at_version(event.object, version, shared=shared)
        return self._event_dict(event, version, obj,
                                None if previous is None else previous_at_version(previous, obj, version))

    def _event_dict(self, event: Event, version: str, obj: Any, previous: Any) -> dict[str, Any]:
        """The Event object of `event` at `version` around `obj` (and `previous`, its
        ``previous_attributes``, when not None), as given."""
        data: dict[str, Any] = {"object": obj}
        if previous is not None:
            data["previous_attributes"] = previous
        out: dict[str, Any] = {
            "id": event.id,
            "object": "event",
            "account": event.account,
            "api_version": version,
            "created": event.created,
            "data": data,
            "livemode": event.livemode,
            "pending_webhooks": 1,
            "request": {"id": event.request_id, "idempotency_key": None},
            "type": event.type,
        }
        if not event.connected:  # the others keep their order
            del out["account"]
        elif has_event_context(version):  # a Connect event's context is its account, after api_version
            out = {**dict(list(out.items())[:4]), "context": event.account, **dict(list(out.items())[4:])}
        return out

    def event_body(self, event: Event) -> bytes:
        """The bytes of `event`'s Event object at its API version (`event_object`), as sent:
        pretty-printed as Stripe sends it (`stripe_json`).

        Rendered from the stored objects as they are when no object in them is of a kind
        whose fields the version cuts (`names_shaped_kind`: the same bytes `at_version`
        gives, without walking the objects first); else from `event_object`.
        """
        version = event.api_version or LATEST_API_VERSION
        obj, previous = event.object, event.previous_attributes
        kinds = shaped_kinds(version)
        if type(obj) is dict and obj.get("object") not in kinds and (previous is None or type(previous) is dict):
            try:
                body = stripe_json(self._event_dict(event, version, obj, previous))
            except (TypeError, ValueError):  # a value json refuses: at_version's copy decides
                pass
            else:
                if not names_shaped_kind(body, kinds):
                    return body
        return stripe_json(self.event_object(event, shared=True))

    def envelope(self, event: Event) -> Envelope:
        return new_envelope(event.id, event.type, self.event_body(event), dict(_ENVELOPE_PAIRS))

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        return {"Stripe-Signature": self._signature(envelope.body, secrets, timestamp)}

    def request(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> SignedRequest:
        """`Profile.request`: the envelope's headers, then ``Stripe-Signature``."""
        headers = dict(envelope.headers)
        headers["Stripe-Signature"] = self._signature(envelope.body, secrets, timestamp)
        return new_signed_request(headers, envelope.body, dict(envelope.query))

    def request_headers(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> list[tuple[str, str]] | None:
        """`Profile.request_headers`: the envelope's headers, then ``Stripe-Signature``, as
        `request` sets them."""
        headers = envelope.headers
        if "Stripe-Signature" in headers:  # never from `envelope`: replaced in place by `request`
            return list(self.request(envelope, secrets, timestamp).headers.items())
        signature = ("Stripe-Signature", self._signature(envelope.body, secrets, timestamp))
        pairs = tuple(headers.items())
        if pairs == _ENVELOPE_PAIRS:  # every envelope's own: the kept pairs, no new ones to hold in flight
            return [*_ENVELOPE_PAIRS, signature]
        return [*pairs, signature]

    def _signature(self, body: bytes, secrets: Sequence[str], timestamp: int) -> str:
        """``t=<timestamp>,v1=<hex>`` with one ``v1`` per secret, in order, then for a test-mode
        event (its body says ``livemode`` false) Stripe's fake ``v0`` (`fake_v0`), which a
        verifier must ignore (stripe-python `WebhookSignature._get_signatures` keeps ``v1``)."""
        if len(secrets) == 1 and secrets[0]:  # one secret, as `require_secrets` wants it
            v1 = stripe_signature(secrets[0], timestamp, body)
            header = f"t={timestamp},v1={v1}"
        else:
            require_secrets(secrets, self.name)
            v1s = [stripe_signature(s, timestamp, body) for s in secrets]
            v1, header = v1s[0], ",".join([f"t={timestamp}", *(f"v1={v}" for v in v1s)])
        if _TEST_MODE_MARKS[0] in body or _TEST_MODE_MARKS[1] in body:
            return f"{header},v0={fake_v0(v1)}"
        return header

    def generate_secret(self, seed: int) -> str:
        rng = random.Random(seed)
        return "whsec_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(32))
