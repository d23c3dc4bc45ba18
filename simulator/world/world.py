"""The provider's truth: a deterministic billing world that emits events.

`World(seed)` holds customers, products, prices, checkout sessions, payment intents,
charges, refunds, disputes, invoices and subscriptions in Stripe's documented shapes
(docs.stripe.com/api), each with a version that every change bumps. Each operation
applies an allowed transition and returns the events a real provider would emit, each
carrying the object snapshot at that version. The same seed gives the same world.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import re
import string
import time
from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event, changed_attributes
from hookproof.simulator.world import stripe_shapes as shapes
from hookproof.simulator.world.fake import FakeData
from hookproof.simulator.world.lifecycle import (
    CHECKOUT_INTENT_METADATA,
    SUBSCRIPTION_PAYMENT_DESCRIPTIONS,
    business_key,
    check_transition,
)
from hookproof.simulator.world.records import Record, RecordReads
from hookproof.simulator.world.snapshot import copy_snapshot

_ALPHABET = string.ascii_letters + string.digits
#: Characters after ``cs_test_`` in a Checkout Session id (Stripe's OpenAPI fixtures, `reference/`).
_SESSION_TAIL = 58
_ALPHABET_SIZE = len(_ALPHABET)
#: Bits of one draw of a character (`random.Random._randbelow`: the size's bit length).
_TOKEN_BITS = _ALPHABET_SIZE.bit_length()
#: Each output's top byte (of a 32-bit output of the generator) as the character whose draw
#: it is (its top `_TOKEN_BITS` bits index `_ALPHABET`), or 0xFF where that draw is past the
#: alphabet's end and is drawn again (`World._token`).
_TOKEN_CHARS = bytes(ord(_ALPHABET[b >> (8 - _TOKEN_BITS)]) if b >> (8 - _TOKEN_BITS) < _ALPHABET_SIZE else 0xFF
                     for b in range(256))

#: The business name of the world's Stripe account (invoices' ``account_name``).
ACCOUNT_NAME = "hookproof test account"
#: The platform's own account, the one every world and every run is of (a Stripe secret key
#: belongs to one account for good: dj-stripe's ``APIKey.refresh_account`` caches it and names
#: it in ``Stripe-Account`` from then on), and when it was created (2019-01-01, Unix seconds).
PLATFORM_ACCOUNT = "acct_1HookproofTest00"
PLATFORM_CREATED = 1_546_300_800

#: Faker locale -> (currency, typical amounts in minor units).
LOCALES: Mapping[str, tuple[str, tuple[int, ...]]] = {
    "en_US": ("usd", (900, 1500, 2900, 4900, 9900, 19900)),
    "pt_BR": ("brl", (2990, 4990, 9990, 14990, 29990)),
}

#: Currency -> the delayed-notification payment method a Checkout Session in it is paid by
#: (completed ``unpaid``, its payment settled days later: docs.stripe.com/payments/payment-methods,
#: "delayed notification"): ACH Direct Debit for USD (docs.stripe.com/payments/ach-direct-debit),
#: SEPA Direct Debit for EUR, Bacs for GBP, Boleto for BRL (docs.stripe.com/payments/boleto:
#: BRL alone). A currency not named: ACH's.
DELAYED_METHODS: Mapping[str, str] = {"usd": "us_bank_account", "eur": "sepa_debit", "gbp": "bacs_debit",
                                      "brl": "boleto"}
#: Every delayed-notification method a session the receiver opens may name alone
#: (`delayed_session`): `DELAYED_METHODS`' and the other debits and bank transfers.
DELAYED_KINDS: frozenset[str] = frozenset({*DELAYED_METHODS.values(), "acss_debit", "au_becs_debit",
                                           "customer_balance"})


def delayed_session(session: Mapping[str, Any]) -> bool:
    """True when a Checkout Session is paid by one delayed-notification method alone
    (`DELAYED_KINDS`): it completes ``unpaid`` and its payment settles later."""
    methods = session["payment_method_types"]
    return len(methods) == 1 and methods[0] in DELAYED_KINDS

#: Stripe API resource path -> object type, for the provider API.
RESOURCES: Mapping[str, str] = {
    "customers": "customer",
    "payment_methods": "payment_method",
    "products": "product",
    "prices": "price",
    "checkout/sessions": "checkout.session",
    "payment_intents": "payment_intent",
    "charges": "charge",
    "refunds": "refund",
    "invoices": "invoice",
    "subscriptions": "subscription",
    "balance_transactions": "balance_transaction",
    "disputes": "dispute",
    "events": "event",
}

_PREFIX: Mapping[str, str] = {
    "customer": "cus",
    "payment_method": "pm",
    "product": "prod",
    "price": "price",
    "checkout.session": "cs",
    "payment_intent": "pi",
    "charge": "ch",
    "refund": "re",
    "invoice": "in",
    "subscription": "sub",
    "balance_transaction": "txn",
    "dispute": "dp",
    "event": "evt",
}


class UnboundReceiverObject(WorldError):
    """A story creates an object of a kind the receiver creates (`World.bind_receiver_creates`)
    and none of the receiver's objects of that kind is left to bind it to; `kind` is the
    object type (``"checkout.session"``, ``"customer"``, ``"subscription"``, ``"payment_intent"``)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class UnboundCheckout(UnboundReceiverObject):
    """A story opens a checkout session and no open session of the receiver is left to bind it to."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "checkout.session")


#: An invoice's payment's own event types, sent beside the invoice's (`World._emit_payment_beside`).
INVOICE_PAYMENT_TYPES: tuple[str, ...] = ("charge.succeeded", "payment_intent.succeeded",
                                          "payment_intent.payment_failed")


def _invoice_payment_description(invoice: Mapping[str, Any]) -> str:
    """The ``description`` Stripe gives a subscription invoice's payment intent: "Subscription
    creation" for its first invoice (``billing_reason: subscription_create``), "Subscription
    update" for the others. Since API version 2025-03-31.basil no field of the intent or its
    charge names the invoice (docs.stripe.com/changelog/basil/2025-03-31/add-support-for-multiple-partial-payments-on-invoices:
    "Removed the invoice field from the PaymentIntent and Charge objects")."""
    reason = "subscription_create" if invoice.get("billing_reason") == "subscription_create" else "other"
    return SUBSCRIPTION_PAYMENT_DESCRIPTIONS[reason]


#: Stripe's events about a Dispute, in the order it sends them for a chargeback won (`World.dispute`).
DISPUTE_TYPES: tuple[str, ...] = ("charge.dispute.created", "charge.dispute.funds_withdrawn", "charge.dispute.updated",
                                  "charge.dispute.closed", "charge.dispute.funds_reinstated")


#: Object kinds a story can bind to the receiver's own (`World.bind_receiver_creates`).
BINDABLE: tuple[str, ...] = ("checkout.session", "customer", "subscription", "payment_intent")


#: Microseconds `World.within_second` keeps free in a second: its changes step one each.
SECOND_ROOM_US = 10_000


class World(RecordReads):
    """A billing world in Stripe's shapes, deterministic from `seed`.

    Args:
        seed: drives ids, names, amounts and the clock's steps.
        livemode: events and objects carry this flag (``cs_live_…`` vs ``cs_test_…``).
        account: the connected account the receiver listens to (Stripe Connect): given,
            the world's events are Connect events and carry it; None, the world's own
            account is `PLATFORM_ACCOUNT` and events are the platform's own.
        api_version: the Stripe API version events are rendered at (``YYYY-MM-DD[.name]``;
            default `stripe_shapes.LATEST_API_VERSION`).
        start_us: the provider clock's start, unix microseconds (default: the current whole
            second, so which events share a second is decided by the seed alone).
        step_us: the largest clock step between two changes, in microseconds; steps are
            drawn in [1, step_us], so several events can share one second.
    """

    #: Stripe's API never hides an object an event names: its 404 is ``resource_missing``,
    #: "no such object" (docs.stripe.com/error-handling), which dj-stripe takes as deleted;
    #: a transient there is a 5xx ("something went wrong on Stripe's end").
    api_hides_new_objects: ClassVar[bool] = False

    def __init__(
        self,
        seed: int = 0,
        *,
        livemode: bool = False,
        account: str | None = None,
        api_version: str | None = None,
        start_us: int | None = None,
        step_us: int = 400_000,
    ) -> None:
        self.seed = seed
        self.livemode = livemode
        self.api_version = api_version or shapes.LATEST_API_VERSION
        self.connected = account is not None
        self._rng = random.Random(seed)
        self._fake = FakeData(seed)
        if account is None:
            self._token(16)  # once the platform's account id: drawn still, so the ids after it do not move
        self.account = account or PLATFORM_ACCOUNT
        # A whole second by default, so which events share a second depends on the seed only.
        self._now_us = start_us if start_us is not None else int(time.time()) * 1_000_000
        self.created = self._now_us // 1_000_000
        self._step_us = max(1, step_us)
        self._within_second = False  # `within_second`: the clock steps one microsecond
        self._second_ticks = 0  # changes made inside the current `within_second` block
        self._objects: dict[str, Record] = {}
        self.events: list[Event] = []
        self._event_index: dict[str, Event] = {}
        self._session_lines: dict[str, tuple[str, int]] = {}  # checkout session -> (price, quantity)
        #: Subscription-mode sessions -> what their subscription starts with (``subscription_data``:
        #: its trial, its metadata).
        self._session_subscriptions: dict[str, tuple[bool, dict[str, str]]] = {}
        #: a payment-mode session's ``payment_intent_data.metadata``: its payment intent's metadata
        self._session_intent_metadata: dict[str, dict[str, str]] = {}
        #: the payment intents payment-mode sessions made: their events owe no key of their own
        #: (the session's purchase is fulfilled once, on the session's events)
        self._checkout_intents: set[str] = set()
        #: whether the endpoint is sent the session's own Checkout events (`sent_only`)
        self.checkout_events_sent = True
        #: whether the endpoint is sent ``invoice.payment_succeeded`` (`sent_only`): then each
        #: invoice paid by a payment emits it right after its ``invoice.paid`` (`_emit_beside`)
        self.payment_succeeded_sent = False
        #: The invoice payment's own types the endpoint is sent (`sent_only`: ``charge.succeeded``
        #: and ``payment_intent.succeeded`` where it is sent ``invoice.paid`` or
        #: ``invoice.payment_succeeded``, ``payment_intent.payment_failed`` where it is sent
        #: ``invoice.payment_failed``): an invoice paid by a payment, or its payment failing, emits
        #: them beside the invoice's event (`_emit_payment_beside`); none to a world never told.
        self.invoice_payment_types: frozenset[str] = frozenset()
        #: whether the endpoint is sent ``customer.subscription.trial_will_end`` (`sent_only`): then
        #: each trial's end is preceded by it, three days before (`trial_will_end`)
        self.trial_will_end_sent = False
        #: whether the endpoint is sent Stripe's dispute events (`sent_only`: ``charge.dispute.created``
        #: or another of them): then `lifecycle` ends with a chargeback, won (`dispute`)
        self.disputes_sent = False
        #: whether the endpoint is sent ``refund.updated`` or ``refund.failed`` (`sent_only`): then
        #: `lifecycle` refunds an ACH payment twice, its bank completing one refund and returning the other
        self.refund_updates_sent = False
        #: trialing subscriptions whose ``customer.subscription.trial_will_end`` was emitted
        self._trial_end_told: set[str] = set()
        #: The modes the shop's Checkout opens sessions in (``[target] checkout_modes``): `lifecycle`
        #: and explore's ``checkout`` operation open sessions of these modes alone; a plan is
        #: started through ``POST /v1/subscriptions`` where ``subscription`` is not one of them.
        self.checkout_modes: frozenset[str] = frozenset({"payment", "subscription"})
        #: The kind of each checkout session a story (not the receiver) opened, in order: ``(mode,
        #: payment method)`` (``("payment", "card")``, ``("subscription", "card")``, ``("payment", "us_bank_account")``).
        self.story_session_kinds: list[tuple[str, str]] = []
        #: Sessions the receiver opened through the API (`simulator.server.writes`), oldest first.
        self.receiver_sessions: list[str] = []
        #: The story's `open_checkout` binds to the receiver's open sessions (`bind_receiver_sessions`).
        self.binds_receiver_sessions = False
        #: Checkout sessions the story (not the receiver) opened so far.
        self.story_sessions = 0
        self._bound: set[str] = set()  # receiver sessions a story took
        #: Customers and subscriptions the receiver created through the API, oldest first.
        self.receiver_customers: list[str] = []
        self.receiver_subscriptions: list[str] = []
        #: Customers and subscriptions the story (not the receiver, not the world itself) created so far.
        self.story_customers = 0
        self.story_subscriptions = 0
        self._holds: frozenset[str] = frozenset()  # kinds whose receiver creations' events wait for the story
        self._binds: frozenset[str] = frozenset()  # kinds a story's creation binds to the receiver's
        self._held: dict[str, list[Event]] = {}  # receiver's object -> the events its creation emitted
        self._holding: list[Event] | None = None  # where `_emit` puts events while a creation is held
        self._automatic = 0  # > 0 while Stripe acts on its own (`_on_its_own`): events name no API request
        self._taken: set[str] = set()  # receiver customers, subscriptions and payment intents a story took
        #: Payment intents the receiver created through the API (``POST /v1/payment_intents``), oldest first.
        self.receiver_intents: list[str] = []
        #: One-off payments (`pay`, `fail_payment`) the story (not the receiver) made so far.
        self.story_intents = 0

    def line_items(self, session: str) -> list[dict[str, Any]]:
        """The line items of checkout session `session` (Stripe ``item`` objects)."""
        self._typed(session, "checkout.session")
        price, quantity = self._session_lines[session]
        pr = self.get(price)
        name = self.get(pr["product"])["name"]
        return [shapes.item(id="li_" + session[-24:], pr=pr, quantity=quantity, description=name)]

    # ---- customers and catalog ---------------------------------------------
    def create_customer(self, locale: str = "en_US", *, email: str | None = None, name: str | None = None,
                        metadata: Mapping[str, str] | None = None, description: str | None = None,
                        by_receiver: bool = False) -> str:
        """A customer with an attached card payment method; emits ``customer.created``.

        `email`, `name`, `metadata` and `description` are what a receiver set through
        ``POST /v1/customers`` (default: the seed's fake person; `by_receiver`: the receiver
        created it, it is kept in `receiver_customers`). Returns the event id.

        A story's call (not `by_receiver`) once customers are bound (`bind_receiver_creates`)
        creates nothing: it takes the receiver's oldest customer no story took yet, releases
        the ``customer.created`` its creation held back and returns that event's id. Raises
        `UnboundReceiverObject` when none is left.
        """
        if by_receiver:
            with self._held_back("customer") as held:
                event = self._new_customer(locale, email=email, name=name, metadata=metadata,
                                           description=description)
            self.receiver_customers.append(cus_id := self._event_of(event).object_id)
            if held is not None:
                self._held[cus_id] = held
            return event
        self.story_customers += 1
        if "customer" in self._binds:
            cus_id = self._take(self.receiver_customers, "customer", lambda _: True,
                                f"the story needs customer #{self.story_customers}")
            return next(e.id for e in self._release(cus_id) if e.type == "customer.created")
        return self._new_customer(locale, email=email, name=name, metadata=metadata, description=description)

    def _new_customer(self, locale: str = "en_US", *, email: str | None = None, name: str | None = None,
                      metadata: Mapping[str, str] | None = None, description: str | None = None) -> str:
        """`create_customer`'s creation itself (never bound). Returns the event id."""
        if locale not in LOCALES:
            raise WorldError(f"unknown locale {locale!r} (known: {', '.join(LOCALES)})")
        cus_id = self._new_id("customer")
        pm_id = self._new_id("payment_method")
        with self._fake(locale) as fk:
            name = name if name is not None else fk.name()
            email = email if email is not None else fk.email()
            addr = {"line1": fk.street_address(), "city": fk.city(), "postal_code": fk.postcode(),
                    "country": "US" if locale == "en_US" else "BR"}
        self._create(pm_id, "payment_method", shapes.payment_method(
            id=pm_id, customer=cus_id, name=name, email=email, addr=addr, brand="visa",
            last4=f"{self._rng.randint(0, 9999):04d}", exp_month=self._rng.randint(1, 12),
            exp_year=2030 + self._rng.randint(0, 5), fingerprint=self._token(16), created=self._now_s(),
            livemode=self.livemode))
        self._create(cus_id, "customer", shapes.customer(
            id=cus_id, name=name, email=email, addr=addr, locales=[locale.replace("_", "-")],
            currency=LOCALES[locale][0], payment_method=pm_id, invoice_prefix=self._token(8).upper(),
            created=self._now_s(), livemode=self.livemode, metadata=metadata or {}, description=description))
        return self._emit("customer.created", cus_id)

    def create_product(self, *, name: str, description: str | None = None,
                       metadata: Mapping[str, str] | None = None) -> str:
        """A product without a price yet (``POST /v1/products``). Returns the product id."""
        prod_id = self._new_id("product")
        snapshot = shapes.product(id=prod_id, name=name, default_price=None, created=self._now_s(),
                                  livemode=self.livemode)
        snapshot.update(description=description, metadata=dict(metadata or {}))
        self._create(prod_id, "product", snapshot)
        return prod_id

    def create_price(self, *, currency: str | None = None, amount: int | None = None, interval: str | None = "month",
                     product: str | None = None, product_name: str | None = None) -> str:
        """A price (recurring when `interval` is given) of `product`, or of a new product (named
        `product_name`, else a made-up name) whose default price it is. Returns the price id.

        Raises WorldError when `product` is not a product of this world."""
        currency = currency or "usd"
        amounts = next((a for c, a in LOCALES.values() if c == currency), LOCALES["en_US"][1])
        amount = amount if amount is not None else self._rng.choice(amounts)
        if product is not None:
            self._typed(product, "product")
            prod_id = product
            price_id = self._new_id("price")
        else:
            prod_id = self._new_id("product")
            price_id = self._new_id("price")
            if product_name is None:
                with self._fake("en_US") as fk:
                    product_name = fk.catch_phrase()
            self._create(prod_id, "product", shapes.product(id=prod_id, name=product_name, default_price=price_id,
                                                            created=self._now_s(), livemode=self.livemode))
        self._create(price_id, "price", shapes.price(id=price_id, product=prod_id, currency=currency,
                                                     unit_amount=amount, interval=interval, created=self._now_s(),
                                                     livemode=self.livemode))
        return price_id

    # ---- one-off payments ---------------------------------------------------
    def create_payment_intent(self, *, amount: int, currency: str, customer: str | None = None,
                              metadata: Mapping[str, str] | None = None, description: str | None = None,
                              receipt_email: str | None = None, payment_method_types: list[str] | None = None) -> str:
        """A payment intent the receiver created (``POST /v1/payment_intents``), unconfirmed:
        ``requires_payment_method``, as Stripe creates one without ``confirm``
        (docs.stripe.com/api/payment_intents/create). `amount` in minor units of `currency`;
        `payment_method_types` given, those; else card under ``automatic_payment_methods``
        (``{"enabled": true}``). It is kept in `receiver_intents`
        for a story to take (`pay`, `fail_payment`); its creation emits no event (the world
        does not model ``payment_intent.created``). Returns its id. Raises WorldError for a
        `customer` that is not one of this world's customers."""
        if customer is not None:
            self._typed(customer, "customer")
        pi_id = self._new_id("payment_intent")
        snapshot = shapes.payment_intent(
            id=pi_id, customer=customer, amount=amount, currency=currency, payment_method=None,
            status="requires_payment_method", client_secret=f"{pi_id}_secret_{self._token(25)}",
            created=self._now_s(), livemode=self.livemode, description=description, metadata=metadata)
        snapshot["receipt_email"] = receipt_email
        if payment_method_types:
            snapshot["payment_method_types"] = list(payment_method_types)
            options = {"card": snapshot["payment_method_options"]["card"]} if "card" in payment_method_types else {}
            snapshot["payment_method_options"] = options
        else:
            snapshot["automatic_payment_methods"] = {"enabled": True}  # as Stripe's OpenAPI fixture has it
        self._create(pi_id, "payment_intent", snapshot)
        self.receiver_intents.append(pi_id)
        return pi_id

    def _story_intent(self, customer: str, amount: int | None, currency: str | None,
                      status: str = "requires_payment_method") -> tuple[str | None, str]:
        """The payment intent a story's one-off payment (`pay`, `fail_payment`) confirms: once
        payment intents are bound (`bind_receiver_creates`), the receiver's oldest no story took
        yet that is unconfirmed and payable by card, with its own customer (None: a guest),
        amount, currency and metadata, whatever the story asked; else a new one of `customer`
        (`amount` default: one of the seed's typical amounts; `currency`: the customer's) in `status`.
        Returns ``(customer, intent id)``. Raises `UnboundReceiverObject` when none is left."""
        self.story_intents += 1
        if "payment_intent" in self._binds:
            pi_id = self._take(self.receiver_intents, "payment_intent",
                               lambda pi: pi["status"] == "requires_payment_method" and pi["latest_charge"] is None
                               and "card" in pi["payment_method_types"],
                               f"the story needs payment intent #{self.story_intents} (unconfirmed, payable by card)")
            return self.get(pi_id)["customer"], pi_id
        cus = self._typed(customer, "customer")
        amount = amount if amount is not None else self._rng.choice(LOCALES["en_US"][1])
        return customer, self._new_payment_intent(customer, amount, currency or cus["currency"], status)

    def _card_of(self, customer: str | None) -> str:
        """The card a payment is confirmed with: `customer`'s default payment method, or for a
        guest's payment intent (no customer) a new card attached to no customer, as Stripe.js
        confirming a card element makes. Returns the payment method id."""
        if customer is not None:
            return str(self._typed(customer, "customer")["invoice_settings"]["default_payment_method"])
        pm_id = self._new_id("payment_method")
        with self._fake("en_US") as fk:
            name, email = fk.name(), fk.email()
            addr = {"line1": fk.street_address(), "city": fk.city(), "postal_code": fk.postcode(), "country": "US"}
        self._create(pm_id, "payment_method", shapes.payment_method(
            id=pm_id, customer=None, name=name, email=email, addr=addr, brand="visa",
            last4=f"{self._rng.randint(0, 9999):04d}", exp_month=self._rng.randint(1, 12),
            exp_year=2030 + self._rng.randint(0, 5), fingerprint=self._token(16), created=self._now_s(),
            livemode=self.livemode))
        return pm_id

    def pay(self, customer: str, *, amount: int | None = None, currency: str | None = None) -> str:
        """A payment that succeeds: emits ``payment_intent.succeeded`` and ``charge.succeeded``.

        Once payment intents are bound, it confirms the receiver's own (`_story_intent`).
        Returns the payment intent id.
        """
        customer_of, pi_id = self._story_intent(customer, amount, currency)
        pi = self.get(pi_id)
        pm_id = self._card_of(customer_of)
        ch_id = self._charge(customer_of, pi["amount"], pi["currency"], payment_intent=pi_id, payment_method=pm_id)
        self._update(pi_id, {"status": "succeeded", "latest_charge": ch_id, "amount_received": pi["amount"],
                             "payment_method": pm_id})
        self._emit("payment_intent.succeeded", pi_id)
        self._emit("charge.succeeded", ch_id)
        return pi_id

    def fail_payment(self, customer: str, *, amount: int | None = None) -> str:
        """A payment intent whose first confirmation is declined by the card's issuer: emits
        ``charge.failed`` (a failed charge, ``failure_code: card_declined``) and
        ``payment_intent.payment_failed`` (no effect), in the order the Stripe CLI logs them
        for ``stripe trigger payment_intent.payment_failed``. The intent goes back to
        ``requires_payment_method`` naming that charge as its ``latest_charge`` and as its
        ``last_payment_error.charge`` (stripe-python ``PaymentIntent.latest_charge``: null
        "until PaymentIntent confirmation is attempted"; ``LastPaymentError.charge``: "For card
        errors, the ID of the failed charge"). Once payment intents are bound, the receiver's
        own is declined (`_story_intent`). Returns the payment intent id.
        """
        customer_of, pi_id = self._story_intent(customer, amount, None, "processing")
        pi = self.get(pi_id)
        pm_id = self._card_of(customer_of)
        ch_id = self._charge(customer_of, pi["amount"], pi["currency"], payment_intent=pi_id, payment_method=pm_id,
                             declined=True)
        error = {"charge": ch_id, "type": "card_error", "code": "card_declined", "decline_code": "generic_decline",
                 "doc_url": "https://stripe.com/docs/error-codes/card-declined",
                 "message": "Your card was declined.", "payment_method": self.get(pm_id)}
        self._update(pi_id, {"status": "requires_payment_method", "last_payment_error": error,
                             "latest_charge": ch_id, "payment_method": None})
        self._emit("charge.failed", ch_id)
        self._emit("payment_intent.payment_failed", pi_id)
        return pi_id

    def retry_payment(self, payment_intent: str) -> str:
        """A failed payment confirmed again, and paid (Stripe's payment intent goes from
        ``requires_payment_method`` to ``succeeded``): emits ``payment_intent.succeeded`` and
        ``charge.succeeded``. Returns the charge id. Raises WorldError unless it had failed."""
        pi = self._typed(payment_intent, "payment_intent")
        if pi["status"] != "requires_payment_method":
            raise WorldError(f"payment intent {payment_intent} is {pi['status']}, not requires_payment_method",
                             object_id=payment_intent)
        customer = pi["customer"]
        error = pi["last_payment_error"] or {}
        pm_id = (self._card_of(customer) if customer is not None or not error.get("payment_method")
                 else error["payment_method"]["id"])  # a guest pays again with the card it gave
        ch_id = self._charge(customer, pi["amount"], pi["currency"], payment_intent=payment_intent,
                             payment_method=pm_id)
        self._update(payment_intent, {"status": "succeeded", "latest_charge": ch_id, "amount_received": pi["amount"],
                                      "last_payment_error": None, "payment_method": pm_id})
        self._emit("payment_intent.succeeded", payment_intent)
        self._emit("charge.succeeded", ch_id)
        return ch_id

    def refund(self, charge: str, amount: int | None = None, *, metadata: Mapping[str, str] | None = None,
               reason: str | None = "requested_by_customer") -> str:
        """Refund `amount` (default: the rest) of a charge: emits ``charge.refunded``, then the
        refund's own ``refund.created`` (Stripe's changelog 2024-10-28.acacia, "Adds created,
        updated, and failed events for all refund types"; a card refund succeeds at once, so no
        ``refund.updated`` follows; Stripe promises no order between the two). The refund of a
        payment a delayed method made (a Checkout Session paid by one of `DELAYED_METHODS`) is
        ``pending`` until the bank answers: `settle_refund`.

        Each partial refund raises the charge's cumulative `amount_refunded`, which the
        business key carries. `metadata` and `reason` are what a receiver set through
        ``POST /v1/refunds``. Returns the refund id. Raises WorldError past the amount.
        """
        ch = self._typed(charge, "charge")
        left = ch["amount"] - ch["amount_refunded"]
        amount = left if amount is None else amount
        if amount <= 0 or amount > left:
            raise WorldError(f"charge {charge}: cannot refund {amount} (refundable {left})", object_id=charge)
        re_id = self._new_id("refund")
        txn_id = self._balance_txn(-amount, ch["currency"], "refund", re_id)
        self._create(re_id, "refund", shapes.refund(
            id=re_id, amount=amount, currency=ch["currency"], charge=charge, payment_intent=ch["payment_intent"],
            customer=ch["customer"], payment_method=ch["payment_method"], balance_transaction=txn_id, reason=reason,
            created=self._now_s(), metadata=metadata or {}, method=self._paid_by(ch["payment_intent"])))
        refunded = ch["amount_refunded"] + amount
        refunds = copy_snapshot(ch["refunds"])
        refunds["data"].insert(0, self.get(re_id))
        self._update(charge, {"amount_refunded": refunded, "refunded": refunded == ch["amount"], "refunds": refunds})
        self._emit("charge.refunded", charge, amount=amount,
                   previous={"amount_refunded": ch["amount_refunded"], "refunded": ch["refunded"]})
        self._emit("refund.created", re_id)
        return re_id

    #: Seconds a delayed method's refund stays ``pending`` before the bank's answer (`settle_refund`):
    #: bank refunds take days (docs.stripe.com/payments/ach-direct-debit, "Refunds").
    REFUND_SETTLE_S: ClassVar[int] = 3 * 86400

    def _paid_by(self, payment_intent: str | None) -> str:
        """The payment method type that paid `payment_intent`: a Checkout Session's delayed method
        when a session paid by one alone made it (`delayed_session`), else ``card``."""
        if payment_intent is not None:
            for session in self.objects("checkout.session"):
                cs = self.peek(session)
                if cs.get("payment_intent") == payment_intent and delayed_session(cs):
                    return str(cs["payment_method_types"][0])
        return "card"

    def settle_refund(self, refund: str, *, succeeded: bool = True, failure_reason: str = "unknown") -> str:
        """The bank's answer to a ``pending`` refund (`refund` of a delayed method's payment),
        `REFUND_SETTLE_S` later, Stripe's own doing: ``refund.updated``, ``succeeded``; or
        ``refund.failed``, ``failed`` with `failure_reason` (``unknown`` by default; the amount back
        in the balance by a ``refund_failure`` balance transaction). Source: docs.stripe.com/refunds,
        "Refund failures" ("a refund can fail if the customer's bank or card issuer can't process
        it ... we send the refund.failed event"), docs.stripe.com/api/refunds/object. Returns the
        event id. Raises WorldError for a refund not pending."""
        rf = self._typed(refund, "refund")
        check_transition("refund", rf["status"], "succeeded" if succeeded else "failed", refund)
        self.advance(self.REFUND_SETTLE_S)
        with self._on_its_own():
            if succeeded:
                self._update(refund, shapes.settled_refund(rf, self._token(12).upper()))
                return self._emit("refund.updated", refund, previous=rf)
            txn_id = self._balance_txn(rf["amount"], rf["currency"], "refund_failure", refund,
                                       description="REFUND FAILURE")
            self._update(refund, shapes.failed_refund(rf, failure_reason, txn_id))
            return self._emit("refund.failed", refund)

    # ---- disputes -----------------------------------------------------------
    #: The fee Stripe takes when a chargeback opens, in minor units (docs.stripe.com/disputes/how-disputes-work,
    #: "Dispute fees": 15.00 USD; the world charges 1500 of any currency).
    DISPUTE_FEE: ClassVar[int] = 1500
    #: Seconds from a chargeback to the merchant's evidence, and from the evidence to the card
    #: network's decision (docs.stripe.com/disputes/how-disputes-work: "it can take up to 75 days").
    EVIDENCE_AFTER_S: ClassVar[int] = 2 * 86400
    DECISION_AFTER_S: ClassVar[int] = 60 * 86400

    def dispute(self, charge: str, *, won: bool = True, reason: str = "fraudulent") -> str:
        """A chargeback of a paid card charge, through to the network's decision, in the order Stripe
        sends its events (docs.stripe.com/disputes/how-disputes-work, docs.stripe.com/api/events/types):
        ``charge.dispute.created`` (``needs_response``, the charge's rest disputed, the charge
        ``disputed``); ``charge.dispute.funds_withdrawn`` (the amount and `DISPUTE_FEE` out of the
        balance: an ``adjustment`` reported as ``dispute``, in ``balance_transactions``);
        `EVIDENCE_AFTER_S` later the merchant's evidence submitted (``charge.dispute.updated``,
        ``under_review``, ``evidence_details.has_evidence``); `DECISION_AFTER_S` later
        ``charge.dispute.closed`` (``won`` or ``lost``, Stripe's own doing); when `won`,
        ``charge.dispute.funds_reinstated`` (the amount back: a ``dispute_reversal``). Each event
        carries the Dispute (docs.stripe.com/api/disputes/object). Returns the dispute id.
        Raises WorldError for a charge not paid, already disputed or wholly refunded."""
        ch = self._typed(charge, "charge")
        amount = ch["amount"] - ch["amount_refunded"]
        if ch["status"] != "succeeded" or ch["disputed"] or amount <= 0:
            raise WorldError(f"charge {charge} cannot be disputed (status {ch['status']}, disputed {ch['disputed']}, "
                             f"{amount} not refunded)", object_id=charge)
        dp_id = self._new_id("dispute")
        currency = ch["currency"]
        self._create(dp_id, "dispute", shapes.dispute(
            id=dp_id, amount=amount, currency=currency, charge=charge, payment_intent=ch["payment_intent"],
            brand=ch["payment_method_details"]["card"]["brand"], reason=reason, created=self._now_s(),
            livemode=self.livemode))
        self._update(charge, {"disputed": True})
        with self._on_its_own():  # the card network's chargeback: no request of the merchant's
            self._emit("charge.dispute.created", dp_id)
            withdrawn = self._balance_txn(-amount, currency, "adjustment", dp_id, fee=self.DISPUTE_FEE,
                                          category="dispute", description=f"Chargeback withdrawal for {charge}")
            self._update(dp_id, {"balance_transactions": [self.get(withdrawn)]})
            self._emit("charge.dispute.funds_withdrawn", dp_id)
        self.advance(self.EVIDENCE_AFTER_S)
        before = self.get(dp_id)
        evidence = {**before["evidence"], "product_description": "Digital goods, delivered at purchase",
                    "uncategorized_text": "The customer downloaded the purchase after paying."}
        details = {**before["evidence_details"], "has_evidence": True, "submission_count": 1}
        self._transition(dp_id, "under_review", {"evidence": evidence, "evidence_details": details})
        self._emit("charge.dispute.updated", dp_id, previous=before)
        self.advance(self.DECISION_AFTER_S)
        with self._on_its_own():
            self._transition(dp_id, "won" if won else "lost", {})
            self._emit("charge.dispute.closed", dp_id)
            if won:
                back = self._balance_txn(amount, currency, "adjustment", dp_id, category="dispute_reversal",
                                         description=f"Chargeback reversal for {charge}")
                self._update(dp_id, {"balance_transactions": [*self.get(dp_id)["balance_transactions"],
                                                              self.get(back)]})
                self._emit("charge.dispute.funds_reinstated", dp_id)
        return dp_id

    # ---- checkout -----------------------------------------------------------
    def open_checkout(self, customer: str | None, price: str, *, asynchronous: bool = False, quantity: int = 1,
                      mode: str = "payment", client_reference_id: str | None = None,
                      metadata: Mapping[str, str] | None = None, customer_email: str | None = None,
                      success_url: str | None = "https://example.com/success",
                      cancel_url: str | None = "https://example.com/cancel", trial: bool = False,
                      subscription_metadata: Mapping[str, str] | None = None,
                      payment_intent_metadata: Mapping[str, str] | None = None, by_receiver: bool = False,
                      delayed_method: str | None = None) -> str:
        """An open checkout session for `quantity` units of `price` (``payment`` or ``subscription`` mode).

        The keyword arguments are what a receiver set through ``POST /v1/checkout/sessions``
        (`by_receiver`: the receiver opened it; it is kept in `receiver_sessions`); the world's
        later events about the session carry them. A subscription-mode session takes a
        recurring price; `trial` and `subscription_metadata` are its ``subscription_data``
        (``trial_period_days``, ``metadata``): the subscription it starts is ``trialing`` and
        carries that metadata, not the session's (Stripe copies no metadata from the session to
        the subscription: docs.stripe.com/api/checkout/sessions/create,
        ``subscription_data.metadata``). A trial session costs nothing now
        (``amount_total`` 0). In payment mode the payment intent it makes carries
        `payment_intent_metadata` (``payment_intent_data.metadata``), never the session's own
        metadata (the same page, ``payment_intent_data.metadata``). Returns the session id.
        Raises WorldError for another mode, a price of the other kind, `trial` or
        `subscription_metadata` in payment mode, or `payment_intent_metadata` in subscription mode.

        A story's call (not `by_receiver`) once `bind_receiver_sessions` was called opens
        nothing: it returns the receiver's oldest unbound open session of the same mode and
        payment method (card, or when `asynchronous` the delayed one of the price's currency,
        `DELAYED_METHODS`, or `delayed_method` if given), whatever `customer`, `price`
        and the other arguments say, so the story completes, pays, refunds or expires the
        session the receiver created. Raises `UnboundCheckout` when none is left. Each story
        call's kind is kept in `story_session_kinds`.
        """
        method = "card"
        if asynchronous:
            method = delayed_method or DELAYED_METHODS.get(self._typed(price, "price")["currency"], "us_bank_account")
        if not by_receiver:
            self.story_sessions += 1
            self.story_session_kinds.append((mode, method))
            if self.binds_receiver_sessions:
                return self._bind_receiver_session(mode, asynchronous)
        if mode not in ("payment", "subscription"):
            raise WorldError(f"checkout mode {mode!r} is not simulated (payment, subscription)")
        if trial and mode != "subscription":
            raise WorldError("only a subscription-mode session has a trial")
        if payment_intent_metadata and mode != "payment":
            raise WorldError("only a payment-mode session makes a payment intent (payment_intent_data)")
        pr = self._typed(price, "price")
        if (mode == "subscription") != (pr["type"] == "recurring"):
            raise WorldError(f"price {price} is {pr['type']}: it cannot be sold in {mode} mode", object_id=price)
        if customer is not None:
            self._typed(customer, "customer")
        cs_id = self._new_id("checkout.session")
        self._create(cs_id, "checkout.session", shapes.checkout_session(
            id=cs_id, mode=mode, customer=customer, customer_email=customer_email, currency=pr["currency"],
            amount=0 if trial else pr["unit_amount"] * quantity,
            payment_method_types=[method],
            client_reference_id=client_reference_id, metadata=metadata or {}, success_url=success_url,
            cancel_url=cancel_url, created=self._now_s(), livemode=self.livemode))
        self._session_lines[cs_id] = (price, quantity)
        if mode == "subscription":
            self._session_subscriptions[cs_id] = (trial, dict(subscription_metadata or {}))
        else:
            # a story's session: its shop marks the intent as Checkout's (`CHECKOUT_INTENT_METADATA`)
            default = {} if by_receiver else CHECKOUT_INTENT_METADATA
            self._session_intent_metadata[cs_id] = dict(payment_intent_metadata or default)
        if by_receiver:
            self.receiver_sessions.append(cs_id)
        return cs_id

    def bind_receiver_sessions(self) -> None:
        """From now on a story's `open_checkout` takes the receiver's sessions (see there)."""
        self.binds_receiver_sessions = True

    def _bind_receiver_session(self, mode: str, asynchronous: bool) -> str:
        delayed = delayed_session
        for cs_id in self.receiver_sessions:
            cs = self._record(cs_id).current
            if (cs_id not in self._bound and cs["status"] == "open" and cs["mode"] == mode
                    and delayed(cs) == asynchronous):
                self._bound.add(cs_id)
                return cs_id
        kinds = [self._record(cs_id).current for cs_id in self.receiver_sessions]
        fits = sum(cs["mode"] == mode and delayed(cs) == asynchronous for cs in kinds)
        paid_by = "a delayed method" if asynchronous else "card"
        opened: dict[str, int] = {}
        for cs in kinds:
            kind = f"{cs['mode']}-mode paid by {'a delayed method' if delayed(cs) else 'card'}"
            opened[kind] = opened.get(kind, 0) + 1
        others = ", ".join(f"{n} {kind}" for kind, n in opened.items() if kind != f"{mode}-mode paid by {paid_by}")
        raise UnboundCheckout(f"the story needs {mode}-mode checkout session #{len(self._bound) + 1} (paid by "
                              f"{paid_by}) and the receiver opened {fits} of that kind"
                              + (f" (and {others})" if others else ""))

    def hold_receiver_creates(self, kinds: Iterable[str]) -> None:
        """From now on the events of a customer or subscription the receiver creates (`kinds`:
        ``"customer"``, ``"subscription"``; others are ignored) are held back, not emitted, until a
        story binds to the object (`bind_receiver_creates`): a shop's seed creates them before
        the story is told, and the story then tells (and delivers) their creation.

        Raises ValueError for a kind not in `BINDABLE`."""
        kinds = frozenset(kinds)
        if unknown := sorted(kinds - set(BINDABLE)):
            raise ValueError(f"a story binds only {', '.join(BINDABLE)}, not {unknown[0]!r}")
        self._holds = kinds & {"customer", "subscription"}

    def bind_receiver_creates(self, kinds: Iterable[str]) -> None:
        """From now on a story's creation of an object of `kinds` (`BINDABLE`) takes the
        receiver's own, oldest first (`open_checkout`, `create_customer`, `subscribe`; a one-off
        payment, `pay` and `fail_payment`, the receiver's payment intent), and the receiver's
        later creations are emitted at once again.

        Raises ValueError for a kind not in `BINDABLE`."""
        kinds = frozenset(kinds)
        if unknown := sorted(kinds - set(BINDABLE)):
            raise ValueError(f"a story binds only {', '.join(BINDABLE)}, not {unknown[0]!r}")
        self._binds = kinds
        self._holds = frozenset()
        if "checkout.session" in kinds:
            self.bind_receiver_sessions()

    @contextlib.contextmanager
    def _held_back(self, kind: str) -> Iterator[list[Event] | None]:
        """Inside, `_emit` puts events in the yielded list instead of `events` when `kind` is held
        (`hold_receiver_creates`); yields None (and emits as usual) when it is not."""
        if kind not in self._holds or self._holding is not None:
            yield None
            return
        held: list[Event] = []
        self._holding = held
        try:
            yield held
        finally:
            self._holding = None

    def _release(self, object_id: str) -> list[Event]:
        """Emit the events the receiver's creation of `object_id` held back, in their order."""
        held = self._held.pop(object_id, [])
        self.events.extend(held)
        return held

    def _take(self, mine: list[str], kind: str, fits: Any, needs: str) -> str:
        """The oldest of the receiver's objects `mine` no story took and `fits` (a predicate on its
        current snapshot) accepts; raises `UnboundReceiverObject` saying `needs` when none is left."""
        for object_id in mine:
            if object_id not in self._taken and fits(self._record(object_id).current):
                self._taken.add(object_id)
                return object_id
        count = sum(bool(fits(self._record(i).current)) for i in mine)
        raise UnboundReceiverObject(f"{needs} and the receiver created {count} of that kind", kind)

    def complete_checkout(self, session: str) -> list[Event]:
        """Complete a session: paid at once for cards; unpaid for asynchronous methods.

        A session opened without a customer gets one (emits ``customer.created``); a
        subscription-mode session starts its subscription (``customer.subscription.created``,
        its first invoice created and paid, ``invoice.created``, ``invoice.paid``, the
        subscription ``active`` with it, ``customer.subscription.updated``) before
        ``checkout.session.completed``, which then says ``payment_status: paid``,
        ``payment_intent: null`` and names the subscription and its first invoice (Stripe's
        Checkout Session object, docs.stripe.com/api/checkout/sessions/object: ``subscription``,
        ``invoice``: "ID of the invoice created by the Checkout Session, if it exists"); Stripe
        promises no order among them (docs.stripe.com/webhooks, "Event ordering"), the session comes last as
        in Stripe's subscription guides, which provision on it once the subscription exists
        (docs.stripe.com/billing/subscriptions/build-subscriptions). A trial session
        (`open_checkout`'s `trial`) starts the subscription ``trialing`` with its $0 first invoice
        paid (as `subscribe`'s trials: `_trial_invoice`), and completes ``no_payment_required``,
        naming that invoice. A completed session's ``url`` is null (the object's ``url``: "This
        value is only present when the session is active", docs.stripe.com/api/checkout/sessions/object).
        """
        cs = self._typed(session, "checkout.session")
        if cs["status"] != "open":
            raise WorldError(f"checkout session {session} is {cs['status']}, not open", object_id=session)
        start = len(self.events)
        customer = cs["customer"]
        if customer is None:
            customer = self._event_of(self._new_customer(email=cs["customer_email"])).object_id
        details = shapes.customer_details(self.get(customer))
        price, quantity = self._session_lines[session]
        if cs["mode"] == "subscription":
            trial, sub_metadata = self._session_subscriptions[session]
            sub_id = self._start_subscription(customer, price, trial=trial, quantity=quantity, metadata=sub_metadata)
            sub = self.get(sub_id)
            self._transition(session, "complete", {  # `url`: "only present when the session is active"
                "url": None, "payment_status": "no_payment_required" if trial else "paid", "customer": customer,
                "customer_details": details, "subscription": sub_id, "invoice": sub["latest_invoice"]})
            self._emit("checkout.session.completed", session)
            return self.events[start:]
        asynchronous = delayed_session(cs)
        status = "processing" if asynchronous else "succeeded"
        pi_id = self._new_payment_intent(customer, cs["amount_total"], cs["currency"], status,
                                         metadata=self._session_intent_metadata.get(session, {}))
        self._checkout_intents.add(pi_id)
        ch_id = None
        if not asynchronous:
            ch_id = self._charge(customer, cs["amount_total"], cs["currency"], payment_intent=pi_id)
            self._update(pi_id, {"latest_charge": ch_id, "amount_received": cs["amount_total"]})
        self._transition(session, "complete", {"url": None, "payment_status": "unpaid" if asynchronous else "paid",
                                               "payment_intent": pi_id, "customer": customer,
                                               "customer_details": details})
        self._emit_session_payment(session, "checkout.session.completed", pi_id, ch_id)
        return self.events[start:]

    def _emit_session_payment(self, session: str, event_type: str, payment_intent: str, charge: str | None) -> None:
        """A payment-mode session's event, with its payment intent's when it was paid: Stripe sends
        the intent's ``charge.succeeded`` and ``payment_intent.succeeded`` beside the session's
        ``checkout.session.completed`` (or ``async_payment_succeeded``), in the order the Stripe
        CLI logs them for ``stripe trigger checkout.session.completed``: ``charge.succeeded``,
        the session's, ``payment_intent.succeeded`` (Stripe promises no order among them:
        docs.stripe.com/webhooks, "Event ordering"). The intent's ``payment_intent.succeeded``
        owes no ``license:`` of its own: it is the session's purchase, fulfilled once
        (docs.stripe.com/checkout/fulfillment; `lifecycle.WITHHELD_KEYS`)."""
        if charge is not None:
            self._emit("charge.succeeded", charge)
        self._emit(event_type, session)
        if charge is not None:
            self._emit("payment_intent.succeeded", payment_intent)

    def settle_async_checkout(self, session: str, *, succeeded: bool = True) -> list[Event]:
        """The asynchronous payment of a completed session succeeds (with its payment intent's
        ``charge.succeeded`` and ``payment_intent.succeeded``: `_emit_session_payment`) or fails."""
        cs = self._typed(session, "checkout.session")
        if cs["status"] != "complete" or cs["payment_status"] != "unpaid":
            raise WorldError(f"checkout session {session} has no pending asynchronous payment", object_id=session)
        pi_id = cs["payment_intent"]
        with self._on_its_own():  # the bank's answer, days later
            if succeeded:
                ch_id = self._charge(cs["customer"], cs["amount_total"], cs["currency"], payment_intent=pi_id)
                self._update(pi_id, {"status": "succeeded", "latest_charge": ch_id,
                                     "amount_received": cs["amount_total"]})
                self._update(session, {"payment_status": "paid"})
                start = len(self.events)
                self._emit_session_payment(session, "checkout.session.async_payment_succeeded", pi_id, ch_id)
                return self.events[start:]
            self._update(pi_id, {"status": "requires_payment_method"})
            self._update(session, {"payment_status": "unpaid"})
            return [self._event_of(self._emit("checkout.session.async_payment_failed", session))]

    def expire_checkout(self, session: str) -> list[Event]:
        """An open session expires: emits ``checkout.session.expired``."""
        self._typed(session, "checkout.session")
        self._transition(session, "expired", {"url": None})
        with self._on_its_own():
            return [self._event_of(self._emit("checkout.session.expired", session))]

    # ---- subscriptions ------------------------------------------------------
    def subscribe(self, customer: str, price: str | None = None, *, trial: bool = False, quantity: int = 1,
                  metadata: Mapping[str, str] | None = None, incomplete: bool = False,
                  default_incomplete: bool = False, by_receiver: bool = False) -> str:
        """Start a subscription. Without trial the first invoice is paid at once; with `trial`
        (14 days) its first invoice is for $0, paid at once too (`_trial_invoice`).

        Emits ``customer.subscription.created`` (and ``invoice.created``, ``invoice.paid``,
        a trial's for $0). `metadata` is what a receiver set through ``POST
        /v1/subscriptions``. With `incomplete`, the first payment fails
        (``payment_behavior=allow_incomplete``, docs.stripe.com/billing/subscriptions/overview
        "Subscription statuses"): the subscription starts ``incomplete`` with its first invoice
        open (``invoice.payment_failed``); `retry_invoice` paying it makes it ``active``,
        `expire_incomplete` ends it. With `default_incomplete` (``payment_behavior=default_incomplete``,
        Stripe's recommended flow) the first invoice is finalized and not attempted: the
        subscription is ``incomplete`` until the customer pays it (`retry_invoice`), its payment
        intent ``requires_payment_method``. Returns the subscription id.

        `by_receiver`: the receiver created it (``POST /v1/subscriptions``); it is kept in
        `receiver_subscriptions`. A story's call (not `by_receiver`) once subscriptions are
        bound (`bind_receiver_creates`) creates nothing: it takes the receiver's oldest
        subscription no story took yet that is ``trialing`` when `trial` (else ``active`` or
        ``incomplete``), whatever the other arguments say, and releases the events its
        creation held back; an ``incomplete`` one (``default_incomplete``) then has its first
        invoice paid (``invoice.paid``, the subscription ``active``), as the customer paying
        it does. Raises `UnboundReceiverObject` when none is left.
        """
        if by_receiver:
            with self._held_back("subscription") as held:
                sub_id = self._start_subscription(customer, price, trial=trial, quantity=quantity, metadata=metadata,
                                                  incomplete=incomplete, default_incomplete=default_incomplete)
            self.receiver_subscriptions.append(sub_id)
            if held is not None:
                self._held[sub_id] = held
            return sub_id
        self.story_subscriptions += 1
        if "subscription" in self._binds:
            wanted = ("trialing",) if trial else ("active", "incomplete")
            sub_id = self._take(self.receiver_subscriptions, "subscription", lambda sub: sub["status"] in wanted,
                                f"the story needs subscription #{self.story_subscriptions} "
                                f"({'on trial' if trial else 'active or incomplete'})")
            self._release(sub_id)
            sub = self.get(sub_id)
            if sub["status"] == "incomplete" and sub["latest_invoice"] \
                    and self.get(sub["latest_invoice"])["status"] == "open":
                self.retry_invoice(sub["latest_invoice"], pay=True)
            return sub_id
        return self._start_subscription(customer, price, trial=trial, quantity=quantity, metadata=metadata,
                                        incomplete=incomplete, default_incomplete=default_incomplete)

    def _start_subscription(self, customer: str, price: str | None = None, *, trial: bool = False,
                            quantity: int = 1, metadata: Mapping[str, str] | None = None,
                            incomplete: bool = False, default_incomplete: bool = False) -> str:
        """`subscribe`'s creation itself (never bound). Returns the subscription id."""
        incomplete = incomplete or default_incomplete
        if trial and incomplete:
            raise WorldError("a trial has no first payment to fail", object_id=customer)
        cus = self._typed(customer, "customer")
        price = price or self.create_price(currency=cus["currency"])
        pr = self._typed(price, "price")
        if pr["type"] != "recurring":
            raise WorldError(f"price {price} is not recurring", object_id=price)
        sub_id = self._new_id("subscription")
        now = self._now_s()
        end = now + (14 if trial else 30) * 86400
        item = shapes.subscription_item(id="si_" + self._token(14), subscription=sub_id, pr=pr, quantity=quantity,
                                        created=now, period_start=now, period_end=end)
        self._create(sub_id, "subscription", shapes.subscription(
            id=sub_id, customer=customer, status="trialing" if trial else "incomplete" if incomplete else "active",
            items=[item],
            currency=pr["currency"], payment_method=cus["invoice_settings"]["default_payment_method"], created=now,
            period_start=now, period_end=end, trial_start=now if trial else None, trial_end=end if trial else None,
            livemode=self.livemode, metadata=metadata or {}))
        if trial:
            self._trial_invoice(sub_id)
            return sub_id
        self._emit("customer.subscription.created", sub_id)
        self._invoice_cycle(sub_id, pay=not incomplete, attempt=not default_incomplete)
        return sub_id

    def _trial_invoice(self, subscription: str) -> str:
        """A new trialing subscription's first invoice, for $0, paid at once: "When creating a
        subscription with a trial period, no payment method is required for the customer. An
        immediate invoice is still created, but for $0" (docs.stripe.com/billing/subscriptions/trials).
        The subscription names it as its ``latest_invoice`` from its creation, so
        ``customer.subscription.created`` (status ``trialing``) carries it; then the invoice's
        ``invoice.created`` and ``invoice.paid`` (``billing_reason: subscription_create``,
        ``amount_due`` and ``amount_paid`` 0, no charge and no payment intent: nothing was
        charged), which owes its ``renewal:`` as every paid invoice's does, for an amount of 0
        (a money key's amount known, so ``counter`` compares it; and to an endpoint sent it,
        ``invoice.payment_succeeded`` beside it: `_emit_beside`).
        Its one line is the trial period (``Trial period for <product>``, amount 0, from now to
        the trial's end); the invoice's own period is the instant of its creation (a first
        invoice looks back on no period). Returns the invoice id."""
        sub = self._typed(subscription, "subscription")
        item = sub["items"]["data"][0]
        price = self._typed(item["price"]["id"], "price")
        cus = self.get(sub["customer"])
        in_id = self._new_id("invoice")
        now = self._now_s()
        line = shapes.invoice_line(id="il_" + self._token(24), invoice=in_id, subscription=subscription,
                                   subscription_item=item["id"], pr=price, quantity=item["quantity"],
                                   period_start=now, period_end=sub["trial_end"], livemode=self.livemode)
        line.update(amount=0, subtotal=0, description=f"Trial period for {self.get(price['product'])['name']}")
        snapshot = shapes.invoice(
            id=in_id, cus=cus, subscription=subscription, lines=[line], currency=price["currency"], amount=0,
            billing_reason="subscription_create", number=f"{cus['invoice_prefix']}-{self._rng.randint(1, 9999):04d}",
            period_start=now, period_end=now, created=now, livemode=self.livemode, account_name=ACCOUNT_NAME)
        snapshot["parent"]["subscription_details"]["metadata"] = dict(sub["metadata"])
        snapshot["subscription_details"]["metadata"] = dict(sub["metadata"])
        self._create(in_id, "invoice", snapshot)
        self._update(subscription, {"latest_invoice": in_id})
        self._emit("customer.subscription.created", subscription)
        self._emit("invoice.created", in_id)
        transitions = {**snapshot["status_transitions"], "paid_at": self._now_s()}
        self._transition(in_id, "paid", {"attempted": True, "paid": True, "amount_paid": 0, "amount_remaining": 0,
                                         "status_transitions": transitions, "next_payment_attempt": None})
        paid = self._emit("invoice.paid", in_id, amount=0)
        if self.payment_succeeded_sent:
            self._emit_beside("invoice.payment_succeeded", paid)
        return in_id

    def trial_will_end(self, subscription: str) -> str:
        """Three days before a trialing subscription's trial ends (at once when less is left),
        Stripe sends ``customer.subscription.trial_will_end`` with the subscription as it is,
        status ``trialing`` ("Occurs three days before a subscription's trial period is scheduled
        to end, or when a trial is ended immediately": the API reference's event types;
        docs.stripe.com/billing/subscriptions/trials): the clock moves there, the event is
        Stripe's own (no API request), changes nothing and owes no effect. Returns the event id.
        Raises WorldError for a subscription that is not ``trialing`` or was told so already."""
        sub = self._typed(subscription, "subscription")
        if sub["status"] != "trialing" or sub["trial_end"] is None:
            raise WorldError(f"subscription {subscription} is {sub['status']}, not on a trial", object_id=subscription)
        if subscription in self._trial_end_told:
            raise WorldError(f"subscription {subscription}'s trial_will_end was sent already", object_id=subscription)
        self._trial_end_told.add(subscription)
        self._reach(sub["trial_end"] - self.TRIAL_NOTICE_S)
        with self._on_its_own():
            return self._emit("customer.subscription.trial_will_end", subscription)

    #: How long before a trial's end Stripe sends ``customer.subscription.trial_will_end`` (3 days).
    TRIAL_NOTICE_S: ClassVar[int] = 3 * 86400

    def _trial_ends(self, subscription: str) -> None:
        """Before a trialing subscription's trial ends: its ``trial_will_end``, to an endpoint sent
        it (`trial_will_end_sent`) and not yet told."""
        if self.trial_will_end_sent and subscription not in self._trial_end_told \
                and self.peek(subscription)["status"] == "trialing":
            self.trial_will_end(subscription)

    def expire_incomplete(self, subscription: str) -> str:
        """An ``incomplete`` subscription's first invoice went unpaid for 23 hours: the invoice
        is voided (``invoice.voided``) and the subscription becomes ``incomplete_expired``, for
        good (``customer.subscription.updated``; docs.stripe.com/billing/subscriptions/overview)."""
        sub = self._typed(subscription, "subscription")
        if sub["status"] != "incomplete":
            raise WorldError(f"subscription {subscription} is {sub['status']}, not incomplete", object_id=subscription)
        with self._on_its_own():
            if sub["latest_invoice"] and self.get(sub["latest_invoice"])["status"] == "open":
                self.void_invoice(sub["latest_invoice"])
            self._transition(subscription, "incomplete_expired", {"ended_at": self._now_s()})
            return self._emit("customer.subscription.updated", subscription, previous={"status": "incomplete"})

    def mark_unpaid(self, subscription: str) -> str:
        """Every retry of a ``past_due`` subscription's invoice failed and the account's setting
        is to mark it unpaid: the subscription becomes ``unpaid`` (its invoice stays open, no
        payment is attempted any more; a later payment makes it ``active``): emits
        ``customer.subscription.updated`` (docs.stripe.com/billing/subscriptions/overview)."""
        sub = self._typed(subscription, "subscription")
        self._transition(subscription, "unpaid", {})
        with self._on_its_own():
            return self._emit("customer.subscription.updated", subscription, previous={"status": sub["status"]})

    def renew(self, subscription: str, *, pay: bool = True) -> str:
        """Bill the next period: a new invoice, paid or failed. Returns the invoice id.

        A paid renewal emits ``invoice.paid`` (renewal effect) and a subscription update to
        the new period (and to ``active``); a failed one emits ``invoice.payment_failed``
        (dunning effect) and moves the subscription to ``past_due``.
        """
        if self._typed(subscription, "subscription")["cancel_at_period_end"]:
            raise WorldError(f"subscription {subscription} cancels at its period's end: it is not renewed "
                             "(end_period)", object_id=subscription)
        self._trial_ends(subscription)
        with self._on_its_own():
            return self._invoice_cycle(subscription, pay=pay)

    def retry_invoice(self, invoice: str, *, pay: bool = True) -> str:
        """Retry an open invoice: paid (``invoice.paid``) or failed again (dunning, next attempt)."""
        inv = self._typed(invoice, "invoice")
        if inv["status"] != "open":
            raise WorldError(f"invoice {invoice} is {inv['status']}, not open", object_id=invoice)
        # dunning retries a renewal at its scheduled attempt; an incomplete subscription's
        # first invoice is paid whenever its customer pays it
        scheduled = bool(inv["next_payment_attempt"]) and self.peek(inv["subscription"])["status"] != "incomplete"
        if scheduled:
            self._reach(inv["next_payment_attempt"])
        with self._on_its_own() if scheduled else contextlib.nullcontext():  # a scheduled retry is Stripe's own
            self._attempt_invoice(invoice, pay=pay)
        return invoice

    def void_invoice(self, invoice: str) -> str:
        """Void an open invoice: emits ``invoice.voided`` (no effect)."""
        inv = self._typed(invoice, "invoice")
        transitions = {**inv["status_transitions"], "voided_at": self._now_s()}
        self._transition(invoice, "void", {"status_transitions": transitions, "amount_remaining": 0,
                                           "next_payment_attempt": None})
        return self._emit("invoice.voided", invoice)

    def change_plan(self, subscription: str, price: str) -> str:
        """Switch the subscription to `price` (its first item's ``price`` and ``plan``; the
        status stays): emits ``customer.subscription.updated``.

        Its ``previous_attributes`` is ``{"items": {"data": [<every item before>]}}``: only the
        list's changed ``data``, and that array whole (Stripe's Event reference,
        docs.stripe.com/api/events/object, ``data.previous_attributes``: "If an array
        attribute has any updated elements, this object contains the entire array"); the
        list's ``object``, ``url`` and ``has_more`` did not change and are not in it.
        """
        sub = self._typed(subscription, "subscription")
        pr = self._typed(price, "price")
        items = copy_snapshot(sub["items"])
        prev_data = copy_snapshot(sub["items"]["data"])
        items["data"][0]["price"] = copy_snapshot(pr)
        items["data"][0]["plan"] = shapes.plan(pr)
        self._transition(subscription, sub["status"], {"items": items})
        return self._emit("customer.subscription.updated", subscription, previous={"items": {"data": prev_data}})

    def cancel(self, subscription: str) -> str:
        """Cancel now: emits ``customer.subscription.deleted`` with status ``canceled``."""
        self._typed(subscription, "subscription")
        now = self._now_s()
        details = {"comment": None, "feedback": None, "reason": "cancellation_requested"}
        self._transition(subscription, "canceled", {"canceled_at": now, "ended_at": now,
                                                    "cancellation_details": details})
        return self._emit("customer.subscription.deleted", subscription)  # previous_attributes: *.updated only

    def cancel_at_period_end(self, subscription: str, cancel: bool = True) -> str:
        """Schedule the subscription's cancellation at its period's end (`cancel`), as the Customer
        Portal's default cancellation and ``POST /v1/subscriptions/{id}`` with
        ``cancel_at_period_end=true`` do, or take a scheduled one back (``false``): emits
        ``customer.subscription.updated``, the status unchanged. Scheduled: ``cancel_at_period_end``
        true, ``cancel_at`` the period's end, ``canceled_at`` now, ``cancellation_details.reason``
        ``cancellation_requested``; taken back: all four as before (docs.stripe.com/billing/
        subscriptions/cancel, "Cancel at the end of the current billing cycle"). `end_period` then
        ends it. Raises WorldError for a subscription that is not ``active``, ``trialing`` or
        ``past_due``, or is already (or not) scheduled."""
        sub = self._typed(subscription, "subscription")
        if sub["status"] not in ("active", "trialing", "past_due"):
            raise WorldError(f"subscription {subscription} is {sub['status']}: only an active, trialing or "
                             "past_due subscription's cancellation is scheduled", object_id=subscription)
        if bool(sub["cancel_at_period_end"]) == cancel:
            raise WorldError(f"subscription {subscription} is {'already' if cancel else 'not'} scheduled to cancel "
                             "at its period's end", object_id=subscription)
        previous = {k: sub[k] for k in ("cancel_at", "cancel_at_period_end", "canceled_at", "cancellation_details")}
        if cancel:
            changes = {"cancel_at": sub["items"]["data"][0]["current_period_end"], "cancel_at_period_end": True,
                       "canceled_at": self._now_s(),
                       "cancellation_details": {"comment": None, "feedback": None, "reason": "cancellation_requested"}}
        else:
            changes = {"cancel_at": None, "cancel_at_period_end": False, "canceled_at": None,
                       "cancellation_details": {"comment": None, "feedback": None, "reason": None}}
        self._transition(subscription, sub["status"], changes)
        return self._emit("customer.subscription.updated", subscription, previous=previous)

    def end_period(self, subscription: str) -> str:
        """A subscription scheduled to cancel (`cancel_at_period_end`) reaches its ``cancel_at``:
        the clock moves there and Stripe cancels it on its own, billing nothing more:
        ``customer.subscription.deleted``, status ``canceled``, ``ended_at`` then (its
        ``canceled_at`` and ``cancellation_details`` kept from the request that scheduled it)."""
        sub = self._typed(subscription, "subscription")
        if not sub["cancel_at_period_end"]:
            raise WorldError(f"subscription {subscription} is not scheduled to cancel at its period's end",
                             object_id=subscription)
        self._reach(sub["cancel_at"])
        with self._on_its_own():
            self._transition(subscription, "canceled", {"ended_at": self._now_s()})
            return self._emit("customer.subscription.deleted", subscription)  # previous_attributes: *.updated only

    def end_trial(self, subscription: str) -> str:
        """The trial ends and the first invoice is paid: the subscription becomes active (to an
        endpoint sent it, its ``trial_will_end`` first, three days before: `trial_will_end`)."""
        self._typed(subscription, "subscription")
        self._trial_ends(subscription)
        with self._on_its_own():
            return self._invoice_cycle(subscription, pay=True)

    def pause(self, subscription: str) -> str:
        """The trial ends with no payment method and the subscription pauses
        (``trial_settings.end_behavior.missing_payment_method = pause``): emits
        ``customer.subscription.paused`` with status ``paused``."""
        self._typed(subscription, "subscription")
        settings = {"end_behavior": {"missing_payment_method": "pause"}}
        self._transition(subscription, "paused", {"trial_settings": settings})
        with self._on_its_own():  # the trial's end
            return self._emit("customer.subscription.paused", subscription)  # previous_attributes: *.updated only

    def resume(self, subscription: str) -> str:
        """Resume a paused subscription (``POST /v1/subscriptions/{id}/resume``): emits
        ``customer.subscription.resumed`` and bills the new period (paid)."""
        sub = self._typed(subscription, "subscription")
        if sub["status"] != "paused":
            raise WorldError(f"subscription {subscription} is {sub['status']}, not paused", object_id=subscription)
        self._transition(subscription, "active", {})
        event = self._emit("customer.subscription.resumed", subscription)  # previous_attributes: *.updated only
        self._invoice_cycle(subscription, pay=True)
        return event

    # ---- scripts ------------------------------------------------------------
    def lifecycle(self, *, locale: str = "en_US") -> list[Event]:
        """A typical customer's life: pay once, buy through Checkout (a card session paid at
        once, then two delayed-method (ACH Direct Debit) sessions completed unpaid, one whose payment
        succeeds and one whose payment fails: docs.stripe.com/checkout/fulfillment), subscribe
        through a subscription-mode Checkout Session (`subscribe_through_checkout`), renew,
        fail, recover, refund, cancel. Sessions only of the shop's `checkout_modes`: without
        ``payment`` no purchase goes through Checkout, without ``subscription`` the plan starts
        through ``POST /v1/subscriptions`` (`subscribe`). To an endpoint sent the refunds' updates
        (`refund_updates_sent`), the ACH payment that succeeded is then refunded twice, its bank
        completing the first refund and returning the second (`settle_refund`); to one sent the
        disputes (`disputes_sent`), the one-off payment's rest is charged back, and won (`dispute`)."""
        start = len(self.events)
        cus = self.create_customer(locale)
        customer = self._event_of(cus).object_id
        pi = self.pay(customer)
        settled: str | None = None  # the delayed-method session whose payment succeeded
        if "payment" in self.checkout_modes:
            self.complete_checkout(self.open_checkout(customer, self.create_price(interval=None)))
            for succeeded in (True, False):
                delayed = self.open_checkout(customer, self.create_price(interval=None), asynchronous=True)
                self.complete_checkout(delayed)
                self.settle_async_checkout(delayed, succeeded=succeeded)
                settled = delayed if succeeded else settled
        sub = (self.subscribe_through_checkout(customer) if "subscription" in self.checkout_modes
               else self.subscribe(customer))
        self.renew(sub)
        inv = self.renew(sub, pay=False)
        self.retry_invoice(inv, pay=True)
        charge = self.get(pi)["latest_charge"]
        amount = self.get(charge)["amount"]
        self.refund(charge, amount // 3)
        if self.disputes_sent:  # the rest of the payment charged back
            self.dispute(charge)
        else:
            self.refund(charge)
        if self.refund_updates_sent and settled is not None:
            bank_charge = self.get(self.get(settled)["payment_intent"])["latest_charge"]
            half = self.get(bank_charge)["amount"] // 2
            self.settle_refund(self.refund(bank_charge, half))
            self.settle_refund(self.refund(bank_charge), succeeded=False)
        self.cancel(sub)
        return self.events[start:]

    def subscribe_through_checkout(self, customer: str | None, price: str | None = None, *,
                                   trial: bool = False) -> str:
        """A subscription bought through a subscription-mode Checkout Session for `customer`
        (None: Checkout creates one) to `price` (default: a new monthly price in the customer's
        currency): opened, then completed (`complete_checkout`). Returns the subscription id."""
        currency = self.get(customer)["currency"] if customer is not None else None
        session = self.open_checkout(customer, price or self.create_price(currency=currency), mode="subscription",
                                     trial=trial)
        self.complete_checkout(session)
        return str(self.get(session)["subscription"])

    # ---- internals ----------------------------------------------------------
    def _invoice_cycle(self, subscription: str, *, pay: bool, attempt: bool = True) -> str:
        """A new invoice for the subscription's next period, attempted (paid or failed as `pay`
        says), or, without `attempt`, finalized with a payment intent waiting for the customer's
        payment method (an ``incomplete`` subscription's first invoice). Returns its id.

        A renewal (the subscription was invoiced before) and a trial's end happen when the
        current period ends: the clock moves there first (`_reach`) and the new period starts
        at that end and lasts one interval (30 days), so periods are contiguous and never
        overlap. Its line item carries the new period; the invoice's own ``period_start`` and
        ``period_end`` look back one period, to the one that ended (Stripe's Invoice object:
        "This looks back one period for a subscription invoice. Use the line item period to get
        the service period for each price"). A first invoice covers the period starting now."""
        sub = self._typed(subscription, "subscription")
        item = sub["items"]["data"][0]
        price = self._typed(item["price"]["id"], "price")
        boundary = bool(sub["latest_invoice"]) or sub["status"] == "trialing"
        if boundary:
            self._reach(item["current_period_end"])
            start = item["current_period_end"]
            looked_back = (item["current_period_start"], item["current_period_end"])
        else:
            start = self._now_s()
            looked_back = (start, start + 30 * 86400)
        in_id = self._new_id("invoice")
        now = self._now_s()
        line = shapes.invoice_line(id="il_" + self._token(24), invoice=in_id, subscription=subscription,
                                   subscription_item=item["id"], pr=price, quantity=item["quantity"],
                                   period_start=start, period_end=start + 30 * 86400, livemode=self.livemode)
        snapshot = shapes.invoice(
            id=in_id, cus=self.get(sub["customer"]), subscription=subscription, lines=[line],
            currency=price["currency"], amount=line["amount"],
            billing_reason="subscription_cycle" if sub["latest_invoice"] else "subscription_create",
            number=f"{self.get(sub['customer'])['invoice_prefix']}-{self._rng.randint(1, 9999):04d}",
            period_start=looked_back[0], period_end=looked_back[1], created=now, livemode=self.livemode,
            account_name=ACCOUNT_NAME)
        # Stripe snapshots the subscription's metadata on each of its invoices (``subscription_details``)
        snapshot["parent"]["subscription_details"]["metadata"] = dict(sub["metadata"])
        snapshot["subscription_details"]["metadata"] = dict(sub["metadata"])
        if not attempt:
            snapshot["payment_intent"] = self._new_payment_intent(sub["customer"], snapshot["amount_due"],
                                                                  snapshot["currency"], "requires_payment_method",
                                                                  description=_invoice_payment_description(snapshot))
        self._create(in_id, "invoice", snapshot)
        self._emit("invoice.created", in_id)
        if attempt:
            self._attempt_invoice(in_id, pay=pay, new_invoice=True)
        else:
            self._transition(subscription, sub["status"], {"latest_invoice": in_id})
            self._emit("customer.subscription.updated", subscription, previous={"latest_invoice": None})
        return in_id

    def _attempt_invoice(self, invoice: str, *, pay: bool, new_invoice: bool = False) -> None:
        """Charge an invoice. Every change of the subscription (status, period, its
        `latest_invoice`) is one version with one ``customer.subscription.updated``."""
        inv = self._typed(invoice, "invoice")
        sub_id = inv["subscription"]
        sub = self._typed(sub_id, "subscription")
        attempt = inv["attempt_count"] + 1
        latest = {"latest_invoice": invoice} if new_invoice else {}
        # what a paid attempt may change; `_emit` keeps only what did (`changed_attributes`)
        previous: dict[str, Any] = {"status": sub["status"], "current_period_start": sub["current_period_start"],
                                    "current_period_end": sub["current_period_end"],
                                    "items": {"data": sub["items"]["data"]}}
        if new_invoice:
            previous["latest_invoice"] = sub["latest_invoice"]
        pi_id = inv["payment_intent"] or self._new_payment_intent(inv["customer"], inv["amount_due"], inv["currency"],
                                                                  "requires_payment_method",
                                                                  description=_invoice_payment_description(inv))
        if pay:
            ch_id = self._charge(inv["customer"], inv["amount_due"], inv["currency"], payment_intent=pi_id,
                                 invoice=invoice)
            self._update(pi_id, {"status": "succeeded", "latest_charge": ch_id, "amount_received": inv["amount_due"]})
            transitions = {**inv["status_transitions"], "paid_at": self._now_s()}
            self._transition(invoice, "paid", {"attempt_count": attempt, "attempted": True, "paid": True,
                                               "amount_paid": inv["amount_due"], "amount_remaining": 0,
                                               "charge": ch_id, "payment_intent": pi_id,
                                               "status_transitions": transitions, "next_payment_attempt": None})
            paid = self._emit("invoice.paid", invoice)
            if self.payment_succeeded_sent:
                self._emit_beside("invoice.payment_succeeded", paid)
            self._emit_payment_beside(paid, pi_id, ch_id)
            self._transition(sub_id, "active", {**self._period_of(sub, inv), **latest})
            self._emit("customer.subscription.updated", sub_id, previous=previous)
        else:
            error = {"type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds",
                     "doc_url": "https://stripe.com/docs/error-codes/card-declined",
                     "message": "Your card has insufficient funds."}
            self._update(pi_id, {"status": "requires_payment_method", "last_payment_error": error})
            self._transition(invoice, "open", {"attempt_count": attempt, "attempted": True, "payment_intent": pi_id,
                                               "next_payment_attempt": self._now_s() + 3 * 86400})
            self._emit_payment_beside(self._emit("invoice.payment_failed", invoice), pi_id, None)
            if sub["status"] == "incomplete":  # a first payment failing: it stays incomplete
                if new_invoice:
                    self._transition(sub_id, "incomplete", latest)
                    self._emit("customer.subscription.updated", sub_id, previous={"latest_invoice": None})
            elif sub["status"] != "past_due" or new_invoice:
                # the period moves on at the renewal whether or not its payment succeeds
                period = self._period_of(sub, inv) if new_invoice else {}
                self._transition(sub_id, "past_due", {**period, **latest})
                self._emit("customer.subscription.updated", sub_id, previous=previous)

    @staticmethod
    def _period_of(sub: Mapping[str, Any], inv: Mapping[str, Any]) -> dict[str, Any]:
        """The subscription's changes for the period invoice `inv` bills (its line item's
        period): its ``current_period_*`` and each item's (where API 2025-03-31.basil and later
        keep them)."""
        period = inv["lines"]["data"][0]["period"]
        items = copy_snapshot(sub["items"])
        for item in items["data"]:
            item["current_period_start"], item["current_period_end"] = period["start"], period["end"]
        return {"current_period_start": period["start"], "current_period_end": period["end"], "items": items}

    def _new_payment_intent(self, customer: str, amount: int, currency: str, status: str, *,
                            metadata: Mapping[str, str] | None = None, description: str | None = None) -> str:
        cus = self._typed(customer, "customer")
        pi_id = self._new_id("payment_intent")
        self._create(pi_id, "payment_intent", shapes.payment_intent(
            id=pi_id, customer=customer, amount=amount, currency=currency,
            payment_method=cus["invoice_settings"]["default_payment_method"], status=status,
            client_secret=f"{pi_id}_secret_{self._token(25)}", created=self._now_s(), livemode=self.livemode,
            metadata=metadata, description=description))
        return pi_id

    def _charge(self, customer: str | None, amount: int, currency: str, *, payment_intent: str | None = None,
                invoice: str | None = None, declined: bool = False, payment_method: str | None = None) -> str:
        """A charge of `payment_method` (default: the customer's default card; a guest's charge,
        `customer` None, names it), paid (with its balance transaction), or with `declined`
        failed by the issuer (no money moved: no balance transaction). A payment intent's charge
        carries the intent's ``metadata``, ``description`` and ``receipt_email`` (Stripe copies
        them at confirmation: support.stripe.com/questions/how-metadata-works-with-related-objects;
        the API reference's PaymentIntent ``receipt_email``, "the receipt for the resulting
        payment"). Returns its id."""
        if payment_method is None:
            assert customer is not None, "a guest's charge names its card"
            payment_method = self._typed(customer, "customer")["invoice_settings"]["default_payment_method"]
        pm = self.get(payment_method)
        ch_id = self._new_id("charge")
        txn_id = None if declined else self._balance_txn(amount, currency, "charge", ch_id)
        snapshot = shapes.charge(id=ch_id, customer=customer, amount=amount, currency=currency,
                                 payment_intent=payment_intent, pm=pm, balance_transaction=txn_id,
                                 receipt_url=f"https://pay.stripe.com/receipts/payment/{self._token(40)}",
                                 created=self._now_s(), livemode=self.livemode)
        if declined:
            snapshot.update(shapes.declined_charge(amount))
            snapshot["payment_method_details"]["card"]["amount_authorized"] = None
        snapshot["invoice"] = invoice
        if payment_intent is not None:  # a payment intent's charge carries its metadata (Checkout's payment_intent_data)
            pi = self.get(payment_intent)
            snapshot["metadata"] = dict(pi["metadata"])
            snapshot["description"] = pi["description"]
            snapshot["receipt_email"] = pi["receipt_email"]
        self._create(ch_id, "charge", snapshot)
        return ch_id

    def _balance_txn(self, amount: int, currency: str, kind: str, source: str, *, fee: int | None = None,
                     category: str | None = None, description: str | None = None) -> str:
        """A balance transaction of `kind` for `source`: a charge's fee Stripe's 2.9% + 30, else
        `fee` (default 0); `category` its ``reporting_category`` (default: `kind`). Returns its id."""
        txn_id = self._new_id("balance_transaction")
        if fee is None:
            fee = max(0, round(abs(amount) * 0.029) + 30) if kind == "charge" else 0
        self._create(txn_id, "balance_transaction", shapes.balance_transaction(
            id=txn_id, amount=amount, fee=fee, currency=currency, kind=kind, source=source, created=self._now_s(),
            description=description or ("REFUND FOR CHARGE" if kind == "refund" else None), category=category))
        return txn_id

    def _token(self, n: int) -> str:
        """`n` characters of `_ALPHABET`, each drawn exactly as ``self._rng.choice(_ALPHABET)``
        draws it (CPython's `random.Random.choice`: ``getrandbits`` of the alphabet size's bit
        length, the top bits of one 32-bit output, drawn again while past its end), so a seed
        gives the same ids and leaves the generator in the same state.

        The outputs still needed are drawn in one call (``getrandbits(32 * m)`` is `m` outputs,
        the first in the lowest 32 bits), each output's top byte mapped to its character or
        to a rejection (`_TOKEN_CHARS`), the rejected ones drawn again: about two C calls per
        token instead of one Python step per character (a 24-character id in 6 µs instead of
        15 here; a world draws a few dozen ids per example of `explore`)."""
        draw = self._rng.getrandbits
        out = b""
        while len(out) < n:
            m = n - len(out)
            out += draw(32 * m).to_bytes(4 * m, "little")[3::4].translate(_TOKEN_CHARS).replace(b"\xff", b"")
        return out.decode("ascii")

    def sent_only(self, sends: Callable[[str], bool]) -> None:
        """The endpoint is sent only the types `sends` accepts (world type names). A Checkout
        purchase owes its fulfilment on the session's events; at an endpoint not sent them (one
        enabled for payment_intent.succeeded alone) it is fulfilled on the intent's event, which
        then owes its ``license:`` as any intent's does (docs.stripe.com/checkout/fulfillment).
        Call before the stories are played: the events' keys are drawn as they are emitted."""
        self.checkout_events_sent = sends("checkout.session.completed") or sends(
            "checkout.session.async_payment_succeeded")
        self.payment_succeeded_sent = sends("invoice.payment_succeeded")
        paid_sent = sends("invoice.paid") or self.payment_succeeded_sent
        self.invoice_payment_types = frozenset(t for t in INVOICE_PAYMENT_TYPES if sends(t) and (
            sends("invoice.payment_failed") if t == "payment_intent.payment_failed" else paid_sent))
        self.trial_will_end_sent = sends("customer.subscription.trial_will_end")
        self.disputes_sent = any(sends(t) for t in DISPUTE_TYPES)
        self.refund_updates_sent = sends("refund.updated") or sends("refund.failed")

    def _new_id(self, object_type: str) -> str:
        """``prefix_<24 characters>``; a Checkout Session's ``cs_test_``/``cs_live_`` and 58
        (Stripe's own, e.g. the OpenAPI fixtures' ``cs_test_a1YS…OLY``): 24 drawn as every id's,
        the rest from a generator seeded by them, so the ids drawn after it do not move."""
        prefix = _PREFIX[object_type]
        token = self._token(24)
        if object_type == "checkout.session":
            prefix += "_live" if self.livemode else "_test"
            rest = random.Random(token)
            token += "".join(rest.choice(_ALPHABET) for _ in range(_SESSION_TAIL - 24))
        return f"{prefix}_{token}"

    def _now_s(self) -> int:
        return self._now_us // 1_000_000

    #: Seconds between a connected account's details submitted and Stripe's verification
    #: enabling it (`onboard_account`): its two ``account.updated`` never share a ``created``.
    VERIFICATION_S: ClassVar[int] = 3600

    def onboard_account(self) -> str:
        """A new seller onboarded onto the Connect platform (Stripe Connect:
        docs.stripe.com/connect/webhooks names ``account.updated`` the event to watch for a
        connected account; the onboarding guides watch its ``details_submitted``,
        ``charges_enabled``, ``payouts_enabled`` and ``requirements``): a connected account of its
        own (``acct_`` and 16 characters, as Stripe's example Account's id; fresh in each world,
        so no scenario's seller is another's), `restricted` when created (``stripe_shapes.account``'s
        stages, version 1, told by no event), submits its details through Stripe's hosted
        onboarding (``account.updated``, ``pending``), then, `VERIFICATION_S` later, Stripe's
        verification enables charges and payouts on its own (``account.updated``, ``enabled``, no
        API request). Each event carries the seller's id as its ``account`` (a Connect event of
        that account) and the Account as ``data.object`` (``object: "account"``, the same id) with
        ``previous_attributes``; its `Event.status` is the status a platform derives
        (`stripe_shapes.account_status`). The provider API serves the account as of the
        deliveries made (`simulator.server.clock`). Returns the seller's account id. Raises
        WorldError for a world of no connected account (`connected`: the platform's own world)."""
        if not self.connected:
            raise WorldError("account.updated is about a connected account: only a Connect world (one given a "
                             "connected account, target.account) onboards one")
        seller = "acct_" + self._token(16)
        customers = self.objects("customer")
        currency = (self.peek(customers[0]).get("currency") or "usd") if customers else "usd"
        created = self._now_s()

        def made(stage: str, submitted: int | None = None) -> dict[str, Any]:
            return shapes.account(id=seller, name=ACCOUNT_NAME, currency=currency, created=created, email=None,
                                  stage=stage, submitted=submitted)

        self._create(seller, "account", made("restricted"))
        before = self.get(seller)
        self._tick()
        submitted = self._now_s()
        self._update(seller, made("pending", submitted))
        self._emit("account.updated", seller, previous=before, status=shapes.account_status(self.peek(seller)),
                   account=seller)
        before = self.get(seller)
        self.advance(self.VERIFICATION_S)
        with self._on_its_own():
            self._update(seller, made("enabled", submitted))
            self._emit("account.updated", seller, previous=before, status=shapes.account_status(self.peek(seller)),
                       account=seller)
        return seller

    def advance(self, seconds: int) -> None:
        """Move the provider's clock forward by whole `seconds` (< 0 counts as 0): time passing
        between two operations, as a Stripe test clock advances. Draws nothing from the seed."""
        self._now_us += max(0, seconds) * 1_000_000

    def _reach(self, at_s: int) -> None:
        """Move the clock to unix second `at_s` unless it is there already: Stripe performs the
        coming change at that time (a renewal at its period's end, a dunning retry at the
        invoice's ``next_payment_attempt``). Inside `within_second`, once the block has made a
        change the clock stays: its changes share one second on purpose."""
        if self._within_second and self._second_ticks:
            return
        self._now_us = max(self._now_us, at_s * 1_000_000)

    def _tick(self) -> None:
        if self._within_second:
            self._second_ticks += 1
            self._now_us += 1
        else:
            self._now_us += self._rng.randint(1, self._step_us)

    @contextlib.contextmanager
    def within_second(self) -> Iterator[None]:
        """The changes made inside happen in one second of the provider's clock, a microsecond
        apart, so their events carry one ``created`` (Stripe's counts whole seconds: a renewal
        that fails and the cancellation that follows it at once share it). The clock first
        moves to the next whole second when less than `SECOND_ROOM_US` is left of this one;
        nothing is drawn from the seed. A renewal or retry opening the block first moves the
        clock to its time (`_reach`: its period's end); after the block's first change the
        clock stays in the second."""
        left = 1_000_000 - self._now_us % 1_000_000
        if left < SECOND_ROOM_US:
            self._now_us += left
        self._within_second = True
        self._second_ticks = 0
        try:
            yield
        finally:
            self._within_second = False

    def _create(self, object_id: str, object_type: str, snapshot: dict[str, Any]) -> None:
        self._tick()
        snapshot = shapes.stripe_order({**snapshot, "hookproof_version": 1})  # id, object, the rest alphabetically
        self._objects[object_id] = Record(object_type, [snapshot])

    def _update(self, object_id: str, changes: Mapping[str, Any]) -> None:
        rec = self._record(object_id)
        self._tick()
        snap = dict(rec.current)  # stored versions are never changed in place, so they may share parts
        snap.update(shapes.stripe_order(dict(changes)))  # a copy, in Stripe's key order
        snap["hookproof_version"] = len(rec.versions) + 1
        if len(snap) != len(rec.current):  # a key the object lacked: in its alphabetical place
            snap = shapes.stripe_order_keys(snap)
        rec.versions.append(snap)

    def _transition(self, object_id: str, status: str, changes: Mapping[str, Any]) -> None:
        rec = self._record(object_id)
        check_transition(rec.object_type, rec.current["status"], status, object_id)
        self._update(object_id, {**changes, "status": status})

    def _emit(self, event_type: str, object_id: str, *, amount: int | None = None,
              previous: Mapping[str, Any] | None = None, status: str | None = None,
              account: str | None = None) -> str:
        rec = self._record(object_id)
        obj = copy_snapshot(rec.current)
        self._tick()
        ev_id = self._new_id("event")
        key = (None if object_id in self._checkout_intents and self.checkout_events_sent
               else business_key(event_type, obj))
        if amount is None and key is not None:
            amount = obj.get("amount_total") or obj.get("amount_paid") or obj.get("amount")
        event = Event(
            id=ev_id, type=event_type, created=self._now_s(), created_us=self._now_us,
            object_type=rec.object_type, object_id=object_id, version=len(rec.versions), object=obj,
            previous_attributes=None if previous is None else changed_attributes(previous, obj), business_key=key,
            amount=amount if key is not None else None, currency=obj.get("currency"),
            status=status if status is not None else obj.get("status"), livemode=self.livemode,
            account=account or self.account, connected=self.connected,
            api_version=self.api_version, request_id=self._request_id(),
        )
        (self.events if self._holding is None else self._holding).append(event)
        self._event_index[ev_id] = event
        return ev_id

    def _emit_payment_beside(self, first: str, payment_intent: str, charge: str | None) -> None:
        """Beside an invoice's ``invoice.paid`` or ``invoice.payment_failed`` (event `first`),
        its payment's own events, those of `INVOICE_PAYMENT_TYPES` the endpoint is sent
        (`invoice_payment_types`): paid, the charge's ``charge.succeeded`` then the intent's
        ``payment_intent.succeeded``; failed, the intent's ``payment_intent.payment_failed``
        ("Invoices automatically create PaymentIntents", docs.stripe.com/invoicing/payment-intents;
        a subscription's first payment and each renewal: docs.stripe.com/billing/subscriptions/overview).
        Stripe promises no order among one change's events (docs.stripe.com/webhooks, "Event
        ordering"). They go only to an endpoint sent the invoice's own event (`sent_only`): a shop
        that hears of invoices has subscriptions, and one hearing of none (one-off payments alone)
        has none of the stories' subscriptions' payments to receive. The intent's
        ``payment_intent.succeeded`` owes no ``license:`` of its own: one payment, the invoice's
        ``renewal:`` (`lifecycle.WITHHELD_KEYS`)."""
        if not self.invoice_payment_types:
            return
        if charge is not None:
            if "charge.succeeded" in self.invoice_payment_types:
                self._emit_beside("charge.succeeded", first, about=charge)
            if "payment_intent.succeeded" in self.invoice_payment_types:
                self._emit_beside("payment_intent.succeeded", first, about=payment_intent, owes=False)
        elif "payment_intent.payment_failed" in self.invoice_payment_types:
            self._emit_beside("payment_intent.payment_failed", first, about=payment_intent)

    def _emit_beside(self, event_type: str, first: str, *, about: str | None = None, owes: bool = True) -> str:
        """Emit `event_type` about the object of event `first`, a microsecond after it, with its
        snapshot, its version and its request: Stripe's second event of one change (an invoice
        paid by a payment: ``invoice.paid`` and ``invoice.payment_succeeded``, "Both event types
        contain the same invoice data", docs.stripe.com/invoicing/integration, "Handle payment
        events"). With `about`, the event is about that object instead (the invoice's payment
        intent or charge: `_emit_payment_beside`), with its current snapshot and version; without
        `owes`, it owes no key. Its id is drawn from a generator seeded by `first`'s (and, with
        `about`, by `event_type`), not from the world's seed, so the ids drawn after it do not
        move. Returns its id."""
        before = self._event_of(first)
        self._now_us += 1
        draws = random.Random(first if about is None else f"{first} {event_type}")
        ev_id = f"{_PREFIX['event']}_" + "".join(draws.choice(_ALPHABET) for _ in range(24))
        if about is None:
            obj = copy_snapshot(before.object)
            key = business_key(event_type, obj) if owes else None
            event = dataclasses.replace(before, id=ev_id, type=event_type, created=self._now_s(),
                                        created_us=self._now_us, object=obj, business_key=key,
                                        amount=before.amount if key is not None else None)
        else:
            rec = self._record(about)
            obj = copy_snapshot(rec.current)
            key = business_key(event_type, obj) if owes else None
            event = dataclasses.replace(
                before, id=ev_id, type=event_type, created=self._now_s(), created_us=self._now_us,
                object_type=rec.object_type, object_id=about, version=len(rec.versions), object=obj,
                previous_attributes=None, business_key=key, amount=obj.get("amount") if key is not None else None,
                currency=obj.get("currency"), status=obj.get("status"))
        (self.events if self._holding is None else self._holding).append(event)
        self._event_index[ev_id] = event
        return ev_id

    def _request_id(self) -> str | None:
        """The ``req_…`` id of the API request behind an event, or None for one Stripe made on its
        own: ``request.id`` "If null, the event was automatic (e.g., Stripe's automatic
        subscription handling)" (API reference, the Event object). Drawn either way, so the
        world's later ids do not depend on which events were automatic."""
        request = "req_" + self._token(14)
        return None if self._automatic else request

    @contextlib.contextmanager
    def _on_its_own(self) -> Iterator[None]:
        """Events emitted inside are Stripe's own doing (a renewal, a dunning retry, a session
        or an incomplete subscription expiring, a trial ending): no API request caused them."""
        self._automatic += 1
        try:
            yield
        finally:
            self._automatic -= 1

    def _event_of(self, event_id: str) -> Event:
        return self._event_index[event_id]


def referenced_ids(value: Any) -> Iterable[str]:
    """Every string inside `value` that is a world id (``prefix_<token>``, ``cs_test_<token>``)."""
    if isinstance(value, str):
        if _ID.match(value):
            yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if k not in ("id", "number"):
                yield from referenced_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from referenced_ids(v)


_ID = re.compile(rf"^(?:{'|'.join(sorted(set(_PREFIX.values())))})_(?:test_|live_)?[A-Za-z0-9]{{14,}}$")
