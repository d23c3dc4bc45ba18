"""The Shopify world: one shop's customers, orders and refunds, and the app installed on it.

`ShopifyWorld(seed)` emits the webhook topics Shopify sends an app (shopify.dev/docs/api/webhooks,
2024-10: ``customers/create``, ``customers/update``, ``orders/create``, ``orders/paid``,
``orders/updated``, ``orders/cancelled``, ``refunds/create``, ``app/uninstalled``; the fulfilment
topics ``orders/fulfilled`` and ``orders/partially_fulfilled`` to an endpoint subscribed to them), each
with the REST resource as it is after the change (`simulator.world.shopify_shapes`). Ids
are Shopify's: JSON integers (12 digits for orders, customers and refunds, 13 for
transactions, 14 for line items: exact in JavaScript, with room for a storm's renamed
copies), each with its ``admin_graphql_api_id``; ``Event.object_id`` is the id
in decimal; ``Event.id`` is the ``X-Shopify-Event-Id`` (a UUID, shared by every delivery
of one change).

Stories follow Shopify's order flow (help.shopify.com, "Order status"; shopify.dev,
"Order" resource ``financial_status``): a card checkout creates an order already paid
(``orders/create`` and ``orders/paid`` about one version), a manual payment creates it
``pending`` and marking it paid sends ``orders/paid``; a refund is its own resource
(``refunds/create``) and changes its order (``orders/updated``: ``partially_refunded``,
then ``refunded``); cancelling a paid order refunds what is left and sets ``cancelled_at``
(``orders/updated``, then ``orders/cancelled``: ``refunded``), cancelling an unpaid one voids it
(``voided``); a first checkout creates its customer (``customers/create``). The merchant fulfils a
paid order (`fulfil`: a manual shipment, Shopify's Fulfillment resource): its lines'
``fulfillment_status`` become ``fulfilled`` and their ``fulfillable_quantity`` 0, the order's
``fulfillments`` lists the shipment (``#1001.1``, ``#1001.2``…) and its ``fulfillment_status`` becomes
``partial`` while a line is left to ship, ``fulfilled`` once none is; each shipment changes the order
(``orders/updated``) and is told by its topic (``orders/partially_fulfilled`` or ``orders/fulfilled``:
shopify.dev, Admin GraphQL ``WebhookSubscriptionTopic``, "Occurs whenever an order is partially
fulfilled" / "is fulfilled"), one merchant action. A fulfilled order is not cancelled (Shopify's
admin offers no cancellation until its fulfilments are cancelled: WorldError).

State: an order's ``financial_status`` (`Event.status`), which only moves forward
(`ORDER_TRANSITIONS`), and its ``fulfillment_status`` (null, ``partial``, ``fulfilled``: never back),
a field a team declares (``[observer.state_fields] order = { fulfillment_status = "fulfillment_status" }``);
``updated_at`` orders an order's versions (whole seconds, each change a
second after the last at least, except inside `same_second`: several changes of one order in one
``updated_at`` second, told apart only by their ``X-Shopify-Triggered-At``). An event's own time
(`Event.created_us`, ``X-Shopify-Triggered-At``) follows its change within the change's
``updated_at`` second, so two events share an ``updated_at`` second exactly when their
triggers fall in one second. Business keys (what a shop app does once): ``welcome:{customer id}`` per new
customer (a welcome e-mail), ``fulfil:{order id}`` per paid order (the app's own fulfilment of it,
owed on ``orders/paid``; the fulfilment topics that follow tell its outcome, a state, and owe no
key: a team that e-mails on shipping keys ``orders/fulfilled`` itself), ``refund:{refund id}``
per refund (its amount in cents, `Event.amount`), ``restock:{order id}`` per cancelled
order, ``purge:{shop id}`` when the app is uninstalled (the shop's data erased). ``Event.account`` is the shop
(its ``<name>.myshopify.com`` is `shop_domain`); Shopify sends no test/live flag (an
order's ``test`` field says whether it was a test order).

The mandatory compliance topics (shopify.dev "Privacy law compliance": every App Store app
subscribes to them) are `SHOPIFY_COMPLIANCE_TOPICS`: ``customers/data_request`` (a customer
asks the merchant for their data: one report per ``data_request.id``, ``report:{id}``),
``customers/redact`` (the merchant erases a customer's data: ``redact:{customer id}``, once per
customer) and ``shop/redact`` (48 hours after the uninstall, `SHOP_REDACT_DELAY_S`: the shop's
data erased, ``erase:{shop id}``). Their bodies are Shopify's small payloads, not REST
resources (`shopify_shapes.customers_data_request`…). The stories tell them only to an endpoint
subscribed to them (`sent_only`): an endpoint that is not sees the stories it always saw. Likewise
the fulfilment topics (`SHOPIFY_FULFILMENT_TOPICS`): only an endpoint subscribed to one is told
stories with fulfilments (`lifecycle`, `effect_story`, `state_story`).
"""

from __future__ import annotations

import random
import re
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Callable, Iterator, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world import shopify_shapes as ss
from hookproof.simulator.world.fake import FakeData
from hookproof.simulator.world.records import RecordWorld

#: The Admin API version the world's resources are shaped at (and the profile claims).
SHOPIFY_API_VERSION = "2024-10"

#: Every topic the world emits, in catalog order.
SHOPIFY_EVENT_TYPES: tuple[str, ...] = (
    "orders/create", "orders/paid", "orders/updated", "orders/cancelled", "refunds/create", "customers/create",
    "customers/update", "app/uninstalled",
)

#: `Event.extra` key of an event's ``X-Shopify-Event-Id``: the id shared by every event of one
#: merchant action (shopify.dev/docs/apps/build/webhooks/delivery-structure), the id of the
#: action's first event (`ShopifyWorld.merchant_action`).
SHOPIFY_EVENT_ID = "shopify_event_id"

#: The mandatory compliance topics (shopify.dev "Privacy law compliance"), in the order the
#: stories tell them. Sent only to an endpoint subscribed to them by name (`sent_only`).
SHOPIFY_COMPLIANCE_TOPICS: tuple[str, ...] = ("customers/data_request", "customers/redact", "shop/redact")

#: The fulfilment topics (shopify.dev, Admin GraphQL ``WebhookSubscriptionTopic``: ``ORDERS_FULFILLED``,
#: ``ORDERS_PARTIALLY_FULFILLED``). Told only to an endpoint subscribed to one by name (`sent_only`):
#: an endpoint that is not sees the stories it always saw, without fulfilments.
SHOPIFY_FULFILMENT_TOPICS: tuple[str, ...] = ("orders/fulfilled", "orders/partially_fulfilled")

#: How long after the app's uninstall Shopify sends ``shop/redact`` (shopify.dev "Privacy law
#: compliance": "48 hours after a store owner uninstalls your app"), in seconds.
SHOP_REDACT_DELAY_S = 48 * 3600

#: financial_status -> the statuses an order may move to (it never goes back).
ORDER_TRANSITIONS: Mapping[str, frozenset[str]] = {
    "pending": frozenset({"pending", "paid", "voided"}),
    "paid": frozenset({"paid", "partially_refunded", "refunded"}),
    "partially_refunded": frozenset({"partially_refunded", "refunded"}),
    "refunded": frozenset({"refunded"}),
    "voided": frozenset({"voided"}),
}

#: Inside `ShopifyWorld.same_second`: where the block's first change lands past the whole second
#: (at most), the step between its changes, and the most an event's trigger follows its change
#: (microseconds): triggers keep the changes' order, and the block leaves room for a dozen changes.
SECOND_START_US = 100_000
SECOND_STEP_US = 50_000
SECOND_TRIGGER_US = 20_000

#: The share of new customers named in another locale (`CUSTOMER_LOCALES`), whose names and street
#: mostly carry letters past U+007F ("José Sáez", "Königstraße"): shops have such buyers, and
#: Shopify sends their text as raw UTF-8 in the JSON body, not as ``\u`` escapes (delivered bodies
#: quoted in Shopify/shopify-api-js issue #320: "lână merinos și mătase"; the `@shopify/shopify-api`
#: tests' example customer is tagged "Léon, Noël", tests/fixtures/shopify/customer.json).
NON_ASCII_SHARE = 0.3
CUSTOMER_LOCALES: tuple[str, ...] = ("es_ES", "de_DE", "fr_FR", "pt_BR")

_STATES = (("Kentucky", "KY"), ("New York", "NY"), ("Oregon", "OR"), ("Texas", "TX"), ("Vermont", "VT"))
_CATALOGUE = (("Canvas Tote", "Natural", 2400, 450), ("Ceramic Mug", "Sand", 1800, 520),
              ("Linen Apron", "Olive", 3900, 300), ("Wool Beanie", "Charcoal", 2900, 120))


def shop_domain(account: str) -> str:
    """The ``<shop>.myshopify.com`` domain standing for a world account (``acct_hookproof`` -> ``hookproof``)."""
    shop = re.sub(r"[^a-z0-9]+", "-", account.lower().removeprefix("acct_")).strip("-")
    return f"{shop or 'shop'}.myshopify.com"


def own_shop(seed: int) -> str:
    """The shop of a world whose config names none: one of its own per seed, ``hookproof-`` and
    8 hex digits (as a Partner dashboard names a new development store ``quickstart-`` and 8), so
    the worlds of one run, each its own shop id, never share a domain: an app erasing a shop's
    data on ``shop/redact`` or ``app/uninstalled`` erases one scenario's (shopify.dev, "Privacy law
    compliance": ``shop_id`` and ``shop_domain`` name the store to erase). Drawn apart from the
    world's own draws, so no other id of a seed moves."""
    return f"hookproof-{random.Random(f'shop:{seed}').getrandbits(32):08x}"


class ShopifyWorld(RecordWorld):
    """A Shopify shop with an app installed, deterministic from `seed` (see the module docstring).

    `account` names the shop (``acme`` is ``acme.myshopify.com``; default `own_shop`'s);
    `api_version` is accepted for the engine's sake and ignored: the resources are 2024-10's.
    Operations raise WorldError for an unknown object or a change Shopify does not make.
    """

    provider = "shopify"

    def __init__(self, seed: int = 0, *, livemode: bool = False, account: str | None = None,
                 start_us: int | None = None, step_us: int = 400_000, api_version: str = SHOPIFY_API_VERSION) -> None:
        super().__init__(seed, livemode=livemode, account=account or own_shop(seed), start_us=start_us,
                         step_us=step_us, api_version=SHOPIFY_API_VERSION)
        self.domain = shop_domain(self.account)
        self._fake = FakeData(seed)
        self._owner: dict[str, int] = {}  # object id -> the id of the shop it belongs to (`_create`)
        self._named = account is not None  # a config's shop: its app's one shop (`_next_shop`)
        self._first_account = self.account
        self._shops = 1  # the shops the app was installed on so far (`_next_shop`)
        self.uninstalls = 0  # the app's uninstalls so far (`uninstall`: the stories tell the first only)
        self.shop_id = self.new_id(11)
        # a shop of its own (no account named): a storm's copy, its shop id renamed, is another shop,
        # its domain renamed with it (a domain names one shop id); a named shop is every copy's, its id kept
        if account:
            self.shared_ids.add(str(self.shop_id))
        else:
            self.copied_accounts.append(self.account)
        self.location_id = self.new_id(11)
        self.staff_id = self.new_id(11)
        self._next_number = 1001
        with self._fake() as fk:
            owner = fk.name()
        self._create_shop(owner)
        self.products = [ss.Product(self.new_id(13), self.new_id(14), title, variant, f"SKU-{i + 1:03d}", cents, grams)
                         for i, (title, variant, cents, grams) in enumerate(_CATALOGUE)]
        self.fresh_ids.clear()  # the shop, its location, staff and products are every story's
        self.installed = True  # the app is installed on the shop (until `uninstall`)
        self._sales: dict[str, int] = {}  # order id -> its sale transaction id
        self._buyers: dict[str, ss.Person] = {}  # customer id -> the person
        self._second: int | None = None  # inside `same_second`: the changes made in the block so far
        self._compliance: frozenset[str] = frozenset()  # the compliance topics the endpoint is sent (`sent_only`)
        self._fulfilment: frozenset[str] = frozenset()  # the fulfilment topics the endpoint is sent (`sent_only`)
        self._redacted: set[str] = set()  # customers whose data the merchant had erased (`redact_customer`)
        self.shop_redacted = False  # ``shop/redact`` was sent (`redact_shop`)
        self._action: list[str] | None = None  # inside `merchant_action`: its events' topics so far
        self._action_id: str | None = None  # inside `merchant_action`: its X-Shopify-Event-Id, once it emitted

    def _create_shop(self, owner: str) -> None:
        """The Shop resource of the shop the app is installed on now (`shop_id`, `domain`)."""
        created = ss.shop_time(self._now_us - 400 * 86_400_000_000)
        self._create(str(self.shop_id), "shop", ss.shop(
            self.shop_id, name=self.domain.split(".")[0].replace("-", " ").title(), domain=self.domain, owner=owner,
            email=f"owner@{self.domain}", created=created, updated=created, primary_location_id=self.location_id))

    def _next_shop(self) -> None:
        """After the app's uninstall, the next change is another shop's that installed it: Shopify
        sends an app nothing more of a shop that uninstalled it (its webhook subscriptions go with
        it), so a world telling more stories tells them of a new shop, ``<first shop>-2``, its own
        id drawn apart from the world's draws (the ids of the stories after it do not move). A
        config's named shop (an app of one shop) installs the app again instead: Shopify sends no
        webhook of an install, and the shop's webhooks resume."""
        if self._named:
            self.installed = True
            self.shop_redacted = False
            return
        self._shops += 1
        self.account = f"{self._first_account}-{self._shops}"
        self.copied_accounts.append(self.account)  # a storm's copy renames it with its shop id
        self.domain = shop_domain(self.account)
        draw = random.Random(f"shop:{self.seed}:{self._shops}")
        while str(shop_id := draw.randrange(10 ** 10, 10 ** 11)) in self._objects:
            pass
        self.shop_id = shop_id
        self.installed = True
        self.shop_redacted = False
        self._create_shop(f"Owner of {self.domain.split('.')[0]}")

    def _installed_shop(self) -> None:
        """A change about to be made belongs to a shop the app is installed on (`_next_shop`)."""
        if not self.installed:
            self._next_shop()

    def owns(self, object_id: str) -> bool:
        """True when `object_id` belongs to the shop the app is installed on now (the objects of a
        shop that uninstalled it change no more: Shopify would tell the app nothing of it)."""
        return self.installed and self._owner.get(object_id) == self.shop_id

    def _create(self, object_id: str, object_type: str, snapshot: dict[str, Any]) -> None:
        super()._create(object_id, object_type, snapshot)
        self._owner[object_id] = self.shop_id

    def _typed(self, object_id: str, object_type: str) -> dict[str, Any]:
        current = super()._typed(object_id, object_type)
        if object_type in ("order", "customer") and not self.owns(object_id):
            raise WorldError(f"{object_type} {object_id} is shop {self._owner.get(object_id)}'s, which uninstalled "
                             "the app: Shopify sends the app nothing more of it", object_id=object_id)
        return current

    @contextmanager
    def merchant_action(self) -> Iterator[None]:
        """The events emitted inside are one merchant action's: they share one
        ``X-Shopify-Event-Id`` (`SHOPIFY_EVENT_ID`, the id of the first), "a unique ID shared
        across all deliveries produced by the same merchant action"
        (shopify.dev/docs/apps/build/webhooks/delivery-structure). Nested, the outer action holds
        (a checkout's new customer is the checkout's). An action emitting one topic twice raises
        WorldError: (topic, ``X-Shopify-Event-Id``) would not name one event."""
        if self._action is not None:
            yield
            return
        self._action, self._action_id = [], None
        try:
            yield
        finally:
            self._action, self._action_id = None, None

    def sent_only(self, sends: Callable[[str], bool]) -> None:
        """The stories tell the compliance topics `sends` accepts (`SHOPIFY_COMPLIANCE_TOPICS`), and
        fulfil orders when it accepts a fulfilment topic (`SHOPIFY_FULFILMENT_TOPICS`): an endpoint
        subscribed to none of them is told the stories it always was."""
        self._compliance = frozenset(t for t in SHOPIFY_COMPLIANCE_TOPICS if sends(t))
        self._fulfilment = frozenset(t for t in SHOPIFY_FULFILMENT_TOPICS if sends(t))

    @contextmanager
    def same_second(self) -> Iterator[None]:
        """The changes made inside share one ``updated_at`` second (Shopify's counts whole seconds):
        the block's first change lands in the next whole second (at most `SECOND_START_US` past
        it), each next one `SECOND_STEP_US` later, and each event's trigger
        (``X-Shopify-Triggered-At``) at most `SECOND_TRIGGER_US` after its change, so the triggers
        keep the changes' order. Raises WorldError when the block's changes outrun its second."""
        self._second = 0
        try:
            yield
        finally:
            self._second = None

    def _tick(self) -> int:
        """The clock moved for the next change (`RecordWorld._tick`; inside `same_second`, a step
        within the block's second)."""
        if self._second is None:
            return super()._tick()
        if self._second == 0:
            self._now_us = (self._now_us // 1_000_000 + 1) * 1_000_000 + self._rng.randrange(SECOND_START_US)
        else:
            self._now_us += SECOND_STEP_US
        self._second += 1
        if (self._now_us + SECOND_TRIGGER_US) % 1_000_000 < self._now_us % 1_000_000:
            raise WorldError("same_second: more changes than one second holds")
        return self._now_us

    def new_id(self, digits: int = 13) -> int:
        """A fresh numeric id of `digits` digits (Shopify's ids are 64-bit integers)."""
        while True:
            value = self._rng.randrange(10 ** (digits - 1), 10 ** digits)
            if str(value) not in self._objects:
                self.fresh_ids.append(str(value))
                return value

    def _uuid(self) -> str:
        h = "%032x" % self._rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

    def _hex(self, n: int = 32) -> str:
        return "%0*x" % (n, self._rng.getrandbits(4 * n))

    # ---- operations -----------------------------------------------------------------
    def create_customer(self) -> str:
        """A customer signs up: emits ``customers/create``. Returns the customer id. A share
        (`NON_ASCII_SHARE`) are named, and live on a street named, in another locale
        (`CUSTOMER_LOCALES`), drawn from the seed like the rest."""
        self._installed_shop()
        abroad = self._rng.random() < NON_ASCII_SHARE
        locale = CUSTOMER_LOCALES[self._rng.randrange(len(CUSTOMER_LOCALES))] if abroad else None
        with self._fake() as fk:
            province, code = _STATES[self._rng.randrange(len(_STATES))]
            person = ss.Person(fk.first_name(), fk.last_name(), fk.email(safe=True), f"+1212555{fk.numerify('####')}",
                               fk.street_address(), fk.city(), province, code, fk.postcode(),
                               float(round(fk.latitude(), 4)), float(round(fk.longitude(), 4)))
        if locale is not None:
            with self._fake(locale) as lk:
                person = replace(person, first_name=lk.first_name(), last_name=lk.last_name(),
                                 address1=lk.street_address())
        cid = self.new_id(12)
        at = ss.shop_time(self._tick())
        self._create(str(cid), "customer", ss.customer(cid, person, address_id=self.new_id(13), created=at, updated=at,
                                                       orders_count=0, total_spent_cents=0, last_order_id=None,
                                                       last_order_name=None))
        self._buyers[str(cid)] = person
        self._emit("customers/create", str(cid), key=f"welcome:{cid}")
        return str(cid)

    def tag_customer(self, customer: str, tags: str = "VIP") -> None:
        """The merchant tags a customer: emits ``customers/update``."""
        self._typed(customer, "customer")
        self._update(customer, {"tags": tags, "updated_at": ss.shop_time(self._tick())})
        self._emit("customers/update", customer)

    def place_order(self, customer: str | None = None, *, paid: bool = True, lines: int = 2) -> str:
        """A checkout of `lines` products (one each): a new customer first when none is given
        (``customers/create``); ``orders/create``, then, paid by card, ``orders/paid`` about the
        same version. Returns the order id."""
        self._installed_shop()
        if customer is not None:
            self._typed(customer, "customer")
        with self.merchant_action():
            cid = customer or self.create_customer()
            person = self._buyers[cid]
            oid = self.new_id(12)
            number = self._next_number
            self._next_number += 1
            with self._fake() as fk:
                ip = fk.ipv4_public()
                confirmation = fk.bothify("?????????", letters="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
            ids = ss.OrderIds(oid, number, self.new_id(14), self._hex(), self._hex(), self._hex(), confirmation, ip)
            start = number % len(self.products)
            products = [self.products[(start + i) % len(self.products)] for i in range(lines)]
            items = [ss.line_item(self.new_id(14), p, 1) for p in products]
            at_us = self._tick()
            snapshot = ss.order(ids, shop_domain=self.domain, shop_id=self.shop_id, buyer=person, cust=self.get(cid),
                                lines=items, shipping_line_id=self.new_id(14), created=ss.shop_time(at_us),
                                test=not self.livemode)
            if paid:
                snapshot.update(financial_status="paid", total_outstanding="0.00")
                self._sales[str(oid)] = self.new_id(13)
            self._create(str(oid), "order", snapshot)
            self._emit("orders/create", str(oid))
            if paid:
                self._emit("orders/paid", str(oid), key=f"fulfil:{oid}")
            spent = int(round(float(snapshot["total_price"]) * 100)) if paid else 0
            c = self.get(cid)
            self._update(cid, {"orders_count": c["orders_count"] + 1, "last_order_id": oid, "last_order_name": f"#{number}",
                               "total_spent": ss.money(int(round(float(c["total_spent"]) * 100)) + spent)})
            return str(oid)

    def mark_paid(self, order: str) -> None:
        """The merchant marks a pending (manual payment) order paid: emits ``orders/paid``."""
        self._transition(order, "paid", {"total_outstanding": "0.00"})
        self._sales[order] = self.new_id(13)
        self._emit("orders/paid", order, key=f"fulfil:{order}")

    def add_note(self, order: str, note: str = "Gift wrap, please") -> None:
        """The merchant edits the order's note: emits ``orders/updated``."""
        o = self._typed(order, "order")
        self._transition(order, o["financial_status"], {"note": note})
        self._emit("orders/updated", order)

    def fulfil(self, order: str, lines: list[int] | None = None) -> str:
        """The merchant ships lines of a paid, uncancelled order (default: every line left to ship; a
        line refunded is not): a manual fulfilment (Shopify's Fulfillment resource, kept as a
        ``fulfillment`` object) of one UPS parcel. The lines become ``fulfillment_status``
        ``fulfilled`` with ``fulfillable_quantity`` 0, the order lists the shipment in its
        ``fulfillments`` and its ``fulfillment_status`` becomes ``partial`` (a line left to ship)
        or ``fulfilled``; emits ``orders/updated``, then ``orders/partially_fulfilled`` or
        ``orders/fulfilled`` (one merchant action). Returns the fulfilment's id. WorldError for an
        unpaid or cancelled order, or lines not left to ship."""
        with self.merchant_action():
            o = self._typed(order, "order")
            if o["financial_status"] not in ("paid", "partially_refunded") or o["cancelled_at"] is not None:
                why = "cancelled" if o["cancelled_at"] is not None else o["financial_status"]
                raise WorldError(f"order {order} is {why}: nothing to fulfil", object_id=order)
            left = [i for i, li in enumerate(o["line_items"]) if li["fulfillable_quantity"] > 0]
            chosen = left if lines is None else lines
            if not chosen or any(i not in left for i in chosen):
                raise WorldError(f"order {order}: lines {chosen} are not left to ship (left: {left})", object_id=order)
            at = ss.shop_time(self._tick())
            fid = self.new_id(13)
            items = [dict(li) for li in o["line_items"]]
            for i in chosen:
                items[i] = {**items[i], "fulfillable_quantity": 0, "fulfillment_status": "fulfilled"}
            shipped = [items[i] for i in chosen]
            number = "1Z" + "".join(self._rng.choice("0123456789ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(16))
            full = ss.fulfillment(fid, order_id=int(order), name=f"{o['name']}.{len(o['fulfillments']) + 1}", at=at,
                                  location_id=self.location_id, lines=shipped,
                                  line_ids=[self.new_id(13) for _ in chosen], tracking_number=number)
            self._create(str(fid), "fulfillment", full)
            status = "partial" if len(chosen) < len(left) else "fulfilled"
            self._transition(order, o["financial_status"], {
                "line_items": items, "fulfillment_status": status,
                "fulfillments": [*o["fulfillments"], ss.order_fulfillment(full, shipped)]}, tick=False, at=at)
            self._emit("orders/updated", order)
            self._emit("orders/fulfilled" if status == "fulfilled" else "orders/partially_fulfilled", order)
            return str(fid)

    def refund(self, order: str, lines: list[int] | None = None, *, note: str = "Returned by the customer") -> str:
        """Refund whole lines of a paid order (default: its first line still not refunded):
        emits ``refunds/create``, then ``orders/updated``. Returns the refund id."""
        with self.merchant_action():
            refund_id = self._refund(order, lines, note)
            self._emit("orders/updated", order)
            return refund_id

    def cancel(self, order: str) -> None:
        """Cancel an order: a paid one is refunded what is left (``refunds/create``,
        ``orders/updated``) and ends ``refunded``; a pending one ends ``voided``. Emits
        ``orders/cancelled``."""
        with self.merchant_action():
            o = self._typed(order, "order")
            status = o["financial_status"]
            if o["cancelled_at"] is not None:
                raise WorldError(f"order {order} is cancelled already", object_id=order)
            if o["fulfillments"]:
                raise WorldError(f"order {order} is {o['fulfillment_status']}: Shopify cancels no order with "
                                 "fulfilments (they are cancelled first)", object_id=order)
            if status in ("paid", "partially_refunded"):
                left = [i for i, li in enumerate(o["line_items"]) if li["current_quantity"] > 0]
                self.refund(order, left, note="Order cancelled")
                status = "refunded"
            elif status == "pending":
                status = "voided"
            at = ss.shop_time(self._tick())
            self._transition(order, status, {"cancelled_at": at, "cancel_reason": "customer", "closed_at": at,
                                             "total_outstanding": "0.00"}, tick=False, at=at)
            self._emit("orders/cancelled", order, key=f"restock:{order}")

    def uninstall(self) -> None:
        """The merchant uninstalls the app: emits ``app/uninstalled`` (the Shop resource).
        Once: the app hears nothing from the shop afterwards (WorldError on a second call)."""
        if not self.installed:
            raise WorldError(f"the app is not installed on {self.domain}", object_id=str(self.shop_id))
        self.installed = False
        self.uninstalls += 1
        self._update(str(self.shop_id), {"updated_at": ss.shop_time(self._tick())})
        self._emit("app/uninstalled", str(self.shop_id), key=f"purge:{self.shop_id}")

    def request_customer_data(self, customer: str) -> str:
        """The customer asks the merchant for their data: emits ``customers/data_request`` with
        the customer's orders (``orders_requested``). Returns the data request's id."""
        c = self._typed(customer, "customer")
        request_id = self.new_id(12)
        self._tick()
        self._create(str(request_id), "customer_data_request", ss.customers_data_request(
            shop_id=self.shop_id, shop_domain=self.domain, customer=c, orders=self._orders_of(customer),
            request_id=request_id))
        self._emit("customers/data_request", str(request_id), key=f"report:{request_id}")
        return str(request_id)

    def redact_customer(self, customer: str) -> str:
        """The merchant erases a customer's data: emits ``customers/redact`` with the customer's
        orders (``orders_to_redact``). Once per customer (WorldError on a second). Returns the
        redaction's object id (the body carries none of its own)."""
        c = self._typed(customer, "customer")
        if customer in self._redacted:
            raise WorldError(f"customer {customer}'s data is erased already", object_id=customer)
        self._redacted.add(customer)
        redaction = self.new_id(12)
        self._tick()
        self._create(str(redaction), "customer_redaction", ss.customers_redact(
            shop_id=self.shop_id, shop_domain=self.domain, customer=c, orders=self._orders_of(customer)))
        self._emit("customers/redact", str(redaction), key=f"redact:{customer}")
        return str(redaction)

    def redact_shop(self) -> str:
        """`SHOP_REDACT_DELAY_S` after the uninstall, Shopify asks the app to erase the shop's data:
        the clock moves on 48 hours and ``shop/redact`` is emitted. Once, and only once the app
        is uninstalled (WorldError otherwise). Returns the redaction's object id."""
        if self.installed or self.shop_redacted:
            why = "the app is still installed" if self.installed else "its data is erased already"
            raise WorldError(f"no shop/redact for {self.domain}: {why}", object_id=str(self.shop_id))
        self.shop_redacted = True
        self.advance(SHOP_REDACT_DELAY_S)
        redaction = self.new_id(12)
        self._tick()
        self._create(str(redaction), "shop_redaction", ss.shop_redact(shop_id=self.shop_id, shop_domain=self.domain))
        self._emit("shop/redact", str(redaction), key=f"erase:{self.shop_id}")
        return str(redaction)

    def _shipped_order(self, customer: str) -> str:
        """`customer` checks out two products by card, shipped one parcel each: ``orders/create``,
        ``orders/paid``, then ``orders/updated`` with ``orders/partially_fulfilled``, then with
        ``orders/fulfilled``. Returns the order id."""
        order = self.place_order(customer)
        self.fulfil(order, [0])
        self.fulfil(order)
        return order

    def _orders_of(self, customer: str) -> list[int]:
        """The ids of `customer`'s orders, oldest first."""
        return [int(o) for o in self.objects("order") if self.get(o)["customer"]["id"] == int(customer)]

    def _compliance_requests(self, customer: str) -> None:
        """The compliance requests about `customer` the endpoint is sent (`sent_only`): their data
        asked for, then erased."""
        if "customers/data_request" in self._compliance:
            self.request_customer_data(customer)
        if "customers/redact" in self._compliance and customer not in self._redacted:
            self.redact_customer(customer)

    def _uninstall_story(self) -> None:
        """The app uninstalled (the first time only), then, when the endpoint is sent it, the
        shop's ``shop/redact`` 48 hours later."""
        if self.installed and not self.uninstalls:
            self.uninstall()
            if "shop/redact" in self._compliance:
                self.redact_shop()

    # ---- stories ----------------------------------------------------------------------
    def storm_story(self, index: int) -> list[Event]:
        """Story `index` of a storm's mix (`loadtests.stories.play_story`), each storm copy's
        shops its own (`copied_accounts`). A shop of the world's own: story 0 is its app
        uninstalled (``app/uninstalled``, ``shop/redact`` 48 hours later when the endpoint is sent
        it), after which the app is installed on the world's next shop (`_next_shop`), whose
        lifecycles, never uninstalled, are the other stories: Shopify sends an app nothing from a
        shop after its uninstall (shopify.dev, "Uninstall a Shopify app with an API request":
        uninstalling "triggers cleanup tasks in Shopify. This includes deleting any registered
        webhooks"), and an app erasing a shop's orders on ``app/uninstalled`` (by
        ``X-Shopify-Shop-Domain``) erases none the storm goes on telling. A named shop
        (``target.account``) is every copy's: its lifecycle without the uninstall, every story (one
        shop is uninstalled once, and its uninstall would end what the storm tells of it)."""
        if index == 0 and self._shops == 1 and self.copied_accounts:
            start = len(self.events)
            self._uninstall_story()
            told = self.events[start:]
            self._next_shop()
            return told
        return self.lifecycle(uninstall=False)

    def lifecycle(self, *, uninstall: bool = True) -> list[Event]:
        """A shop's week in brief: every topic, in a legal order (``app/uninstalled`` the
        first time only: the app is uninstalled once; never with `uninstall` False); to an endpoint
        sent a fulfilment topic (`sent_only`), the customer's second order shipped in two parcels (`_shipped_order`); the
        compliance topics the endpoint is sent about its customer before the uninstall,
        ``shop/redact`` 48 hours after it."""
        start = len(self.events)
        cid = self.create_customer()
        self.tag_customer(cid)
        order = self.place_order(cid, paid=False)
        self.mark_paid(order)
        self.add_note(order)
        self.refund(order)
        self.cancel(order)
        if self._fulfilment:
            self._shipped_order(cid)
        self._compliance_requests(cid)
        if uninstall:
            self._uninstall_story()
        return self.events[start:]

    def effect_story(self) -> list[Event]:
        """One event of each effectful topic: a new customer, a paid order, a refund, a
        cancellation (with the refund of what was left), the compliance requests the endpoint is
        sent (`sent_only`: the buyer's data asked for, then erased), the app uninstalled (the first
        time only: told again, the story has no uninstall) and, when sent, ``shop/redact`` 48 hours
        later; to an endpoint sent a fulfilment topic, the buyer's second order shipped in two
        parcels (`_shipped_order`: its topics owe no key of the world's, a team's own may). The
        story's every event, effectful or not: the catalog sends those the receiver's keys make
        effectful."""
        start = len(self.events)
        order = self.place_order()
        self.refund(order)
        self.cancel(order)
        if self._fulfilment:
            self._shipped_order(str(self.get(order)["customer"]["id"]))
        self._compliance_requests(str(self.get(order)["customer"]["id"]))
        self._uninstall_story()
        return self.events[start:]

    def state_story(self) -> list[Event]:
        """An order's life: created pending, paid, noted, partly refunded, cancelled. To an endpoint
        sent a fulfilment topic (`sent_only`), a shipped order's instead (a fulfilled order is not
        cancelled): created pending, paid, noted, its first line shipped (``partial``), the rest
        shipped (``fulfilled``), then one line returned and refunded (``partially_refunded``)."""
        start = len(self.events)
        order = self.place_order(paid=False)
        self.mark_paid(order)
        self.add_note(order)
        if self._fulfilment:
            self.fulfil(order, [0])
            self.fulfil(order)
            self.refund(order)
        else:
            self.refund(order)
            self.cancel(order)
        return [e for e in self.events[start:] if e.object_id == order]

    def distinct_story(self) -> list[Event]:
        """Several effects about one order: its two lines refunded one at a time (two refunds)."""
        start = len(self.events)
        order = self.place_order()
        self.refund(order, [0])
        self.refund(order, [1])
        return [e for e in self.events[start:] if e.type == "refunds/create"]

    def related_groups(self, count: int = 2) -> list[tuple[Event, ...]]:
        """`count` card checkouts by new buyers; each one's first events (``customers/create``,
        ``orders/create``, ``orders/paid``), which Shopify sends at once."""
        groups = []
        for _ in range(count):
            start = len(self.events)
            self.place_order()
            groups.append(tuple(self.events[start:]))
        return groups

    def same_second_story(self) -> list[Event]:
        """A manual order paid, partly refunded and cancelled in one ``updated_at`` second
        (`same_second`): its ``orders/create`` (pending), then ``orders/paid`` (paid), the partial
        refund's ``orders/updated`` (partially_refunded), the cancellation's refund
        ``orders/updated`` and ``orders/cancelled`` (refunded), all but the first with one
        ``updated_at``, in the order of their ``X-Shopify-Triggered-At``. The order's events."""
        start = len(self.events)
        order = self.place_order(paid=False)
        self.quick_cancel(order)
        return [e for e in self.events[start:] if e.object_id == order]

    def quick_cancel(self, order: str) -> None:
        """Two changes of an order and its cancellation in one ``updated_at`` second
        (`same_second`): a pending order marked paid, a paid one with two open lines or more
        refunded one line, then cancelled (refunded). Raises WorldError for any other order."""
        o = self._typed(order, "order")
        status = o["financial_status"]
        open_lines = [li for li in o["line_items"] if li["current_quantity"] > 0]
        if o["cancelled_at"] is not None or o["fulfillments"] or not (
                status == "pending" or (status in ("paid", "partially_refunded") and len(open_lines) >= 2)):
            raise WorldError(f"order {order} is {status} with {len(open_lines)} open line(s): no second change "
                             "before its cancellation", object_id=order)
        with self.same_second():
            if status == "pending":
                self.mark_paid(order)
            self.refund(order)
            self.cancel(order)

    def refund_pair(self) -> tuple[Event, Event]:
        """Two refunds of one order, one line each: their ``refunds/create`` events R1, R2."""
        r1, r2 = self.distinct_story()
        return r1, r2

    def unknown_event(self) -> Event:
        """A ``products/update`` (an app that handles orders has no such handler): not recorded. The
        product has its one variant (a product always has one; the one its orders' lines name)
        and its option; drawn from no random state, so the stories told after it are unchanged."""
        self._installed_shop()
        at = self._tick()
        p = self.products[0]
        created, updated = ss.shop_time(at - 86_400_000_000), ss.shop_time(at)
        variant = ss.product_variant(p, created=created, updated=updated, inventory_item_id=p.variant_id + 1)
        product = {"id": p.product_id, "admin_graphql_api_id": ss.gid("Product", p.product_id), "title": p.title,
                   "body_html": "", "vendor": "Acme", "product_type": "", "handle": p.title.lower().replace(" ", "-"),
                   "created_at": created, "updated_at": updated, "published_at": created, "template_suffix": None,
                   "status": "active", "published_scope": "global", "tags": "", "variants": [variant],
                   "options": [ss.product_option(p, p.product_id + 1)], "images": [], "image": None, "media": [],
                   "variant_gids": [ss.variant_gid(variant, at)],
                   "has_variants_that_requires_components": False, "category": None}
        return Event(id=self._uuid(), type="products/update", created=at // 1_000_000, created_us=at,
                     object_type="product", object_id=str(p.product_id), version=1, object=product,
                     livemode=self.livemode, account=self.account, api_version=SHOPIFY_API_VERSION)

    def quiet_event(self) -> Event:
        """A stateless, effectless event of the catalog (``customers/update``), e.g. to oversize."""
        cid = self.create_customer()
        self.tag_customer(cid)
        return self.events[-1]

    # ---- internals --------------------------------------------------------------------
    def _refund(self, order: str, lines: list[int] | None, note: str) -> str:
        o = self._typed(order, "order")
        if o["financial_status"] not in ("paid", "partially_refunded") or order not in self._sales:
            raise WorldError(f"order {order} is {o['financial_status']}: nothing to refund", object_id=order)
        open_lines = [i for i, li in enumerate(o["line_items"]) if li["current_quantity"] > 0]
        chosen = open_lines[:1] if lines is None else lines
        if not chosen or any(i not in open_lines for i in chosen):
            raise WorldError(f"order {order}: lines {chosen} are not refundable (open: {open_lines})", object_id=order)
        at_us = self._tick()
        at = ss.shop_time(at_us)
        refund_id = self.new_id(12)
        items = [dict(li) for li in o["line_items"]]
        refunded = [ss.refund_line(self.new_id(13), items[i], self.location_id) for i in chosen]
        for i in chosen:
            items[i] = {**items[i], "current_quantity": 0, "fulfillable_quantity": 0}
        cents = sum(int(round(r["subtotal"] * 100)) + int(round(r["total_tax"] * 100)) for r in refunded)
        tx = ss.refund_transaction(self.new_id(13), order_id=int(order), parent_id=self._sales[order], cents=cents,
                                   at=at, payment_id=f"{o['confirmation_number']}.{len(o['refunds']) + 2}",
                                   authorization=self._hex(24), test=not self.livemode)
        full = ss.refund(refund_id, order_id=int(order), at=at, note=note, user_id=self.staff_id, lines=refunded,
                         transactions=[tx])
        self._create(str(refund_id), "refund", full)
        self._emit("refunds/create", str(refund_id), key=f"refund:{refund_id}", amount=cents)
        status = "refunded" if len(open_lines) == len(chosen) else "partially_refunded"
        changed = {**o, "line_items": items}
        self._transition(order, status, {"line_items": items, "refunds": [*o["refunds"], ss.order_refund(full)],
                                         **ss.current_totals(changed)}, tick=False, at=at)
        return str(refund_id)

    def _transition(self, order: str, status: str, changes: Mapping[str, Any], *, tick: bool = True,
                    at: str | None = None) -> None:
        old = self._typed(order, "order")["financial_status"]
        if status not in ORDER_TRANSITIONS[old]:
            raise WorldError(f"order {order}: {old} -> {status} is not a change Shopify makes", object_id=order)
        when = ss.shop_time(self._tick()) if tick or at is None else at
        self._update(order, {**changes, "financial_status": status, "updated_at": when})

    def _emit(self, topic: str, object_id: str, *, key: str | None = None, amount: int | None = None) -> Event:
        rec = self._record(object_id)
        if self._second is not None:  # the trigger follows its change closely, keeping the block's order
            at = self._now_us + self._rng.randrange(1, SECOND_TRIGGER_US)
        else:  # within the change's updated_at second
            at = self._now_us + self._rng.randrange(min(900_000, 1_000_000 - self._now_us % 1_000_000))
        snapshot = self.get(object_id)
        stateful = rec.object_type == "order"
        event_id = self._uuid()
        if self._action is not None:
            if topic in self._action:
                raise WorldError(f"one merchant action emits {topic} twice: (topic, X-Shopify-Event-Id) would name "
                                 "two events", object_id=object_id)
            self._action.append(topic)
            self._action_id = self._action_id or event_id
        return self._record_event(Event(
            id=event_id, type=topic, created=at // 1_000_000, created_us=at, object_type=rec.object_type,
            object_id=object_id, version=len(rec.versions), object=snapshot, business_key=key, amount=amount,
            currency=ss.CURRENCY.lower(), status=str(snapshot["financial_status"]) if stateful else None,
            livemode=self.livemode, account=self.account, api_version=SHOPIFY_API_VERSION,
            extra={SHOPIFY_EVENT_ID: self._action_id or event_id}))


def _uninstalled(world: ShopifyWorld) -> ShopifyWorld:
    """`world` with its app uninstalled (``shop/redact`` follows an uninstall)."""
    world.uninstall()
    return world


#: Topic -> a story that makes a fresh world emit it (``hookproof send``).
SHOPIFY_SCRIPTS: Mapping[str, Callable[[ShopifyWorld], object]] = {
    "orders/create": lambda w: w.place_order(paid=False),
    "orders/paid": lambda w: w.place_order(),
    "orders/updated": lambda w: w.add_note(w.place_order()),
    "orders/cancelled": lambda w: w.cancel(w.place_order()),
    "refunds/create": lambda w: w.refund(w.place_order()),
    "orders/fulfilled": lambda w: w.fulfil(w.place_order()),
    "orders/partially_fulfilled": lambda w: w.fulfil(w.place_order(), [0]),
    "customers/create": lambda w: w.create_customer(),
    "customers/update": lambda w: w.tag_customer(w.create_customer()),
    "app/uninstalled": lambda w: w.uninstall(),
    "customers/data_request": lambda w: w.request_customer_data(w.create_customer()),
    "customers/redact": lambda w: w.redact_customer(w.create_customer()),
    "shop/redact": lambda w: _uninstalled(w).redact_shop(),
}


def shopify_events_of_type(world: ShopifyWorld, event_type: str, count: int = 1) -> list[Event]:
    """Run the story for topic `event_type` `count` times; the emitted events of that topic.

    Raises WorldError naming the known topics for one Shopify does not send here.
    """
    script = SHOPIFY_SCRIPTS.get(event_type)
    if script is None:
        known = SHOPIFY_EVENT_TYPES + SHOPIFY_COMPLIANCE_TOPICS + SHOPIFY_FULFILMENT_TOPICS
        raise WorldError(f"Shopify sends no topic {event_type!r} here (known: {', '.join(known)})")
    start = len(world.events)
    for _ in range(count):
        script(world)
    return [e for e in world.events[start:] if e.type == event_type]
