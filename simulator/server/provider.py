"""The provider API's answers as pure functions of the served worlds.

Stripe shapes (docs.stripe.com/api): objects are the world's snapshots rendered at the
request's API version (the ``Stripe-Version`` header, else the world's version; see
`hookproof.simulator.profiles.stripe_versions`); events are
`StripeProfile().event_object`, at the version they were created at (Stripe does not
re-render an event for the request's version); lists are ``{"object": "list", "data": [...],
"has_more": bool, "url": "/v1/<resource>"}`` newest first, paged with ``limit``
(1..100, default 10), ``starting_after`` and ``ending_before``; ``expand`` replaces an
id-holding field by the object it names, along dotted paths of at most 4 parts
(``latest_charge.balance_transaction``, ``data.customer`` on a list,
``data.object.customer`` on an event, ``discounts`` and ``lines.data.discounts``: a
list of ids is expanded id by id); a list field along the path is expanded item by
item; a null field stays null; a field Stripe types as a plain id and never expands
(`NOT_EXPANDABLE`: a charge's ``payment_method``, a subscription item's ``subscription``) is
refused; the includable fields Stripe adds only when expanded
(`INCLUDABLE`: a price's ``currency_options`` and ``tiers``, an invoice's ``confirmation_secret``
(from basil on: its payment intent's client secret) and ``payments``
(basil's link from an invoice to its payment intent), a checkout session's
``line_items`` (and their ``discounts``, ``taxes``) and ``total_details.breakdown``, a
customer's ``subscriptions``, ``sources``, ``tax_ids``, and from 2022-11-15 on a charge's
``refunds``, no longer in the charge unless expanded:
docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand) are added; a path through a
field that does not hold an id (or an object) cannot be expanded. Sub-lists
(`SUBLISTS`: an invoice's ``lines``, a charge's ``refunds``, a session's
``line_items``, a product's ``features``) are paged like any list.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.profiles.stripe_versions import at_version, is_basil_or_later
from hookproof.simulator.server import clock
from hookproof.simulator.world import RESOURCES, World
from hookproof.simulator.world import stripe_shapes as shapes
from hookproof.simulator.world.world import ACCOUNT_NAME, PLATFORM_ACCOUNT, PLATFORM_CREATED

#: Largest ``limit`` a list accepts (Stripe: 1 to 100, default 10).
MAX_LIST_LIMIT = 100
DEFAULT_LIST_LIMIT = 10
#: Longest expansion path (Stripe: "up to four levels").
MAX_EXPAND_DEPTH = 4

_STRIPE = StripeProfile()


class ExpandError(ValueError):
    """A property that cannot be expanded; `path` is the dotted path asked for."""

    def __init__(self, path: str) -> None:
        super().__init__(f"This property cannot be expanded ({path}).")
        self.path = path


class ListParamError(ValueError):
    """A list parameter out of range; `param` names it."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


class AccountAccessError(ValueError):
    """A ``Stripe-Account`` header naming no connected account of the served worlds (Stripe
    answers 403: docs.stripe.com/connect/authentication#stripe-account-header)."""


class Catalog:
    """Read-only view of several worlds; an id is looked up newest world first.

    The view is the one of the request's account (docs.stripe.com/connect/authentication):
    with no `stripe_account` (no ``Stripe-Account`` header), the platform's own worlds,
    never a connected account's objects (Stripe answers 404 ``resource_missing`` for them);
    with one, only the worlds of that connected account (a Connect world:
    ``target.account``); the platform's own account id in the header is its own view. Raises `AccountAccessError` for an account no served world is
    connected as. The caller holds the state's lock while using it (worlds are not
    thread-safe).
    """

    def __init__(self, worlds: Sequence[World], api_version: str | None = None, *,
                 stripe_account: str | None = None) -> None:
        # Only billing worlds: another provider's world (GitHub's) is served by its own routes.
        billing = [w for w in reversed(worlds) if isinstance(w, World)]
        if stripe_account == PLATFORM_ACCOUNT or any(not w.connected and w.account == stripe_account for w in billing):
            stripe_account = None  # the platform's own account: its own view (dj-stripe always names it)
        #: a seller a Connect world onboarded, named in ``Stripe-Account``: its own view (no object of the
        #: worlds is its, but its Account)
        self._seller: str | None = None
        if stripe_account is not None and any(w.connected and w.has(stripe_account)
                                              and w.object_type(stripe_account) == "account" for w in billing):
            self._seller = stripe_account
        if stripe_account is not None and self._seller is None \
                and not any(w.connected and w.account == stripe_account for w in billing):
            shown = stripe_account[:64]
            if not any(w.connected for w in billing):
                raise AccountAccessError("Only Stripe Connect platforms can work with other accounts (Stripe-Account: "
                                         f"'{shown}'); this run serves no connected account.")
            raise AccountAccessError(f"The provided key does not have access to account '{shown}' (or that account "
                                     "does not exist). Application access may have been revoked.")
        self._every = billing
        self._worlds = [w for w in billing if (w.connected and w.account == stripe_account if stripe_account is not None
                                               else not w.connected)]
        self.stripe_account = stripe_account
        self.api_version = api_version

    def version_of(self, world: World | None) -> str:
        """The API version answers are rendered at: the request's, else `world`'s."""
        if self.api_version:
            return self.api_version
        return world.api_version if world is not None else shapes.LATEST_API_VERSION

    def connected_accounts(self) -> list[str]:
        """The connected accounts of the served worlds (Connect worlds), newest first."""
        return [w.account for w in self._every if w.connected]

    def other_account_of(self, object_id: str) -> str | None:
        """The connected account whose world holds `object_id` when this view does not (a
        request naming no or another ``Stripe-Account``), or None."""
        if self.world_of(object_id) is not None:
            return None
        for w in self._every:
            if not (w.connected and w.has(object_id)):
                continue
            # a seller's own Account and events (`World.onboard_account`) are the seller's, not the world's account's
            owner = (w.event(object_id).account if object_id.startswith("evt_")
                     else object_id if w.object_type(object_id) == "account" else w.account)
            if owner != self.stripe_account:
                return owner
        return None

    def _onboarded(self, account_id: str) -> World | None:
        """The newest Connect world that onboarded the seller `account_id` (`World.onboard_account`), or None."""
        return next((w for w in self._every if w.connected and w.has(account_id)
                     and w.object_type(account_id) == "account"), None)

    def newest(self) -> World | None:
        """The newest served world (where objects a receiver creates go), or None."""
        return self._worlds[0] if self._worlds else None

    def world_of(self, object_id: str) -> World | None:
        """The newest world holding `object_id` (an object or an event), or None."""
        return next((w for w in self._worlds if w.has(object_id)), None)

    def account(self, account_id: str | None = None) -> Mapping[str, Any] | None:
        """The Stripe Account `account_id` (a platform retrieves its connected accounts), or by
        default the request's own: the ``Stripe-Account`` header's, else the newest platform
        world's, else the newest world's; None when no served world has that account. A
        seller a Connect world onboarded (`World.onboard_account`) is served as of the
        deliveries made so far (`simulator.server.clock`), as every object is; a world's own
        account is served enabled."""
        if account_id is None and self._seller is not None:
            account_id = self._seller  # ``Stripe-Account`` naming a seller a world onboarded: its own account
        if account_id is not None and (seller := self._onboarded(account_id)) is not None:
            served = clock.served_version(seller, account_id)  # as of the deliveries made so far
            return at_version(seller.get(account_id, served), self.version_of(seller))
        scoped = self._worlds or self._every
        world = (next((w for w in self._every if w.account == account_id), None) if account_id is not None
                 else next(iter(scoped), None))
        if world is None:
            if account_id not in (None, PLATFORM_ACCOUNT):
                return None
            # the key's own account, served before any world (a receiver registering itself at start)
            return shapes.account(id=PLATFORM_ACCOUNT, name=ACCOUNT_NAME, currency="usd", created=PLATFORM_CREATED,
                                  email=None)
        currency = "usd"
        for cus in world.objects("customer")[:1]:
            currency = world.get(cus).get("currency") or currency
        created = world.created if world.connected else PLATFORM_CREATED
        return shapes.account(id=world.account, name=ACCOUNT_NAME, currency=currency, created=created, email=None)

    def render(self, object_id: str, object_type: str | None = None, *, stale: bool = False) -> dict[str, Any] | None:
        """The Stripe-shaped object or event `object_id` (of `object_type`, when given), or None.

        An object is served at the version the provider's clock has reached
        (`simulator.server.clock`: the current one for a world never advanced); with
        `stale`, at the version before that (events never change).
        """
        world = self.world_of(object_id)
        if world is None and self._seller is not None and object_id.startswith("evt_"):
            # a seller's own events (its ``account.updated``), retrieved with ``Stripe-Account`` naming it
            world = next((w for w in self._every if w.has(object_id) and w.event(object_id).account == self._seller),
                         None)
        if world is None:
            return None
        try:
            if object_id.startswith("evt_"):
                if object_type not in (None, "event"):
                    return None
                return _STRIPE.event_object(world.event(object_id))  # at the version it was created at
            if object_type is not None and world.object_type(object_id) != object_type:
                return None
            served = clock.served_version(world, object_id)  # as of the deliveries made so far
            return at_version(world.get(object_id, max(1, served - 1) if stale else served), self.version_of(world))
        except WorldError:
            return None

    def items(self, object_type: str, *, customer: str | None = None, event_type: str | None = None,
              subscription: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        """Every object (or event) of `object_type`, newest first, filtered."""
        out: list[dict[str, Any]] = []
        for world in self._worlds:  # newest world first
            if object_type == "event":
                rendered: Iterable[dict[str, Any]] = (
                    _STRIPE.event_object(e) for e in reversed(world.events)
                    if event_type in (None, e.type)
                )
            else:
                version = self.version_of(world)
                rendered = (at_version(world.get(oid), version) for oid in reversed(world.objects(object_type)))
            for obj in rendered:
                if customer is not None and _customer_of(obj) != customer:
                    continue
                if subscription is not None and _subscription_of(obj) != subscription:
                    continue
                if status is not None and obj.get("status") != status:
                    continue
                out.append(obj)
        return out

    def include(self, obj: Mapping[str, Any], field: str) -> Any:
        """The value of includable `field` of `obj` (see `INCLUDABLE`). Raises KeyError."""
        kind = obj.get("object")
        if kind is None and field == "breakdown" and "amount_discount" in obj:  # a total_details hash
            return {"discounts": [], "taxes": []}  # the world has no discounts or taxes
        if not isinstance(kind, str) or field not in INCLUDABLE.get(kind, ()):
            raise KeyError(field)
        world = self.world_of(str(obj.get("id")))
        if kind == "item":
            return []  # a checkout line's discounts and taxes: the world has none
        if kind == "price":
            if field == "tiers":
                return None  # per-unit prices have no tiers
            return {obj["currency"]: {"custom_unit_amount": None, "tax_behavior": obj["tax_behavior"],
                                      "tiers": None, "unit_amount": obj["unit_amount"],
                                      "unit_amount_decimal": obj["unit_amount_decimal"]}}
        if kind == "invoice" and field == "confirmation_secret":
            if world is None or not is_basil_or_later(self.version_of(world)):
                raise KeyError(field)  # basil's (2025-03-31) replacement of the invoice's payment_intent
            intent = world.get(obj["id"]).get("payment_intent")
            return {"client_secret": world.get(intent)["client_secret"], "type": "payment_intent"} if intent else None
        if kind == "invoice" and world is not None:
            return {"object": "list", "data": _invoice_payments(world, obj["id"]), "has_more": False,
                    "url": f"/v1/invoice_payments?invoice={obj['id']}"}
        if kind == "charge":
            if world is None:
                raise KeyError(field)
            return self._charge_refunds(world, obj)
        if kind == "checkout.session" and world is not None:
            items = [at_version(i, self.version_of(world)) for i in world.line_items(obj["id"])]
            return {"object": "list", "data": items, "has_more": False,
                    "url": f"/v1/checkout/sessions/{obj['id']}/line_items"}
        data = self.items("subscription", customer=obj["id"]) if field == "subscriptions" else []
        return {"object": "list", "data": data, "has_more": False, "url": f"/v1/customers/{obj['id']}/{field}"}

    def _charge_refunds(self, world: World, charge: Mapping[str, Any]) -> dict[str, Any]:
        """The ``refunds`` list of `charge` (a rendered charge) as the world holds it at the
        charge's version, at the world's API version: the world keeps the list on every
        charge; the versions from 2022-11-15 on render it only when expanded."""
        version = charge.get("hookproof_version")
        snapshot = world.get(str(charge["id"]), version if isinstance(version, int) else None)
        refunds: dict[str, Any] = at_version(snapshot["refunds"], self.version_of(world))
        return refunds

    def children(self, parent_id: str, parent_type: str, child: str) -> list[dict[str, Any]] | None:
        """The items of sub-list `child` of `parent_id` (`SUBLISTS`), or None when there is no such parent."""
        parent = self.render(parent_id, parent_type)
        world = self.world_of(parent_id)
        if parent is None or world is None:
            return None
        if child == "line_items":
            return [at_version(i, self.version_of(world)) for i in world.line_items(parent_id)]
        if child == "features":
            return []  # the world's products have no features
        if child == "refunds":  # not in the charge from 2022-11-15 on: the world's list
            refunds: list[dict[str, Any]] = self._charge_refunds(world, parent)["data"]
            return refunds
        items: list[dict[str, Any]] = parent[child]["data"]  # lines: the parent's own list
        return items


#: ``/v1/<parent path>/{id}/<child>`` lists -> the parent's object type.
SUBLISTS: Mapping[tuple[str, str], str] = {
    ("invoices", "lines"): "invoice",
    ("charges", "refunds"): "charge",
    ("checkout/sessions", "line_items"): "checkout.session",
    ("products", "features"): "product",
}

#: Object type -> fields Stripe leaves out unless asked for with ``expand[]`` ("includable"),
#: and a checkout session's ``total_details.breakdown``.
INCLUDABLE: Mapping[str, tuple[str, ...]] = {
    "price": ("currency_options", "tiers"),
    "invoice": ("payments", "confirmation_secret"),
    "checkout.session": ("line_items",),
    "item": ("discounts", "taxes"),
    "customer": ("subscriptions", "sources", "tax_ids"),
    "charge": ("refunds",),  # from 2022-11-15 on; before, the charge has them
}


#: Object type (or, for a hash without ``object``, the key it sits under) -> the fields that
#: hold another object's id and that Stripe does not expand (typed ``string`` in Stripe's
#: OpenAPI and stripe-python, not ``ExpandableField``): expanding one is a 400, as on Stripe.
NOT_EXPANDABLE: Mapping[str, frozenset[str]] = {
    "charge": frozenset({"payment_method"}),
    "line_item": frozenset({"invoice"}),
    "last_payment_error": frozenset({"charge"}),
    "subscription_item": frozenset({"subscription"}),
    "price_details": frozenset({"product"}),
    "subscription_item_details": frozenset({"subscription", "subscription_item", "invoice_item"}),
}

def _invoice_payments(world: World, invoice_id: str) -> list[dict[str, Any]]:
    """An invoice's payments (docs.stripe.com/api/invoice-payment/object): its payment intent."""
    inv = world.get(invoice_id)
    if not inv.get("payment_intent"):
        return []
    paid = inv["status"] == "paid"
    return [{
        "amount_paid": inv["amount_paid"] if paid else None, "amount_requested": inv["amount_due"],
        "created": inv["created"], "currency": inv["currency"], "id": "inpay_" + invoice_id[3:],
        "invoice": invoice_id, "is_default": True, "livemode": inv["livemode"], "object": "invoice_payment",
        "payment": {"type": "payment_intent", "payment_intent": inv["payment_intent"]},
        "status": "paid" if paid else "open",
        "status_transitions": {"canceled_at": None, "paid_at": inv["status_transitions"]["paid_at"]},
    }]


def _subscription_of(obj: Mapping[str, Any]) -> Any:
    if obj.get("object") == "invoice":
        parent = obj.get("parent") or {}
        return obj.get("subscription") or (parent.get("subscription_details") or {}).get("subscription")
    return obj.get("subscription")


def _customer_of(obj: Mapping[str, Any]) -> Any:
    if obj.get("object") == "event":
        return obj["data"]["object"].get("customer")
    return obj.get("customer")


def list_page(items: Sequence[Mapping[str, Any]], url: str, *, limit: int | None, starting_after: str | None,
              ending_before: str | None) -> dict[str, Any]:
    """One page of `items` (already newest first) in Stripe's list shape. Raises ListParamError."""
    size = DEFAULT_LIST_LIMIT if limit is None else limit
    if not 1 <= size <= MAX_LIST_LIMIT:
        raise ListParamError(f"Invalid integer: {limit}: must be between 1 and {MAX_LIST_LIMIT}", "limit")
    if starting_after and ending_before:
        raise ListParamError("You may only specify one of these parameters: ending_before, starting_after.",
                             "starting_after")
    ids = [item.get("id") for item in items]
    if starting_after:
        if starting_after not in ids:
            raise ListParamError(f"No such object: '{starting_after}'", "starting_after")
        start = ids.index(starting_after) + 1
        page = list(items[start:start + size])
        has_more = start + size < len(items)
    elif ending_before:
        if ending_before not in ids:
            raise ListParamError(f"No such object: '{ending_before}'", "ending_before")
        end = ids.index(ending_before)
        page = list(items[max(0, end - size):end])
        has_more = end - size > 0
    else:
        page = list(items[:size])
        has_more = size < len(items)
    return {"object": "list", "data": page, "has_more": has_more, "url": url}


Include = Callable[[Mapping[str, Any], str], Any]


def expand(value: dict[str, Any], paths: Iterable[str], resolve: Callable[[str], dict[str, Any] | None],
           include: Include | None = None) -> dict[str, Any]:
    """Expand every dotted path of `paths` in `value` (in place; returned). Raises ExpandError.

    `include(obj, field)` gives an includable field's value (KeyError: not includable).
    """
    for path in paths:
        parts = [p for p in path.split(".")]
        if not path or any(not p for p in parts) or len(parts) > MAX_EXPAND_DEPTH:
            raise ExpandError(path)
        _expand(value, parts, path, resolve, include)
    return value


def _expand(value: Any, parts: list[str], path: str, resolve: Callable[[str], dict[str, Any] | None],
            include: Include | None, owner: str | None = None) -> Any:
    """`owner`: the key of the parent holding `value`, for a hash that names no ``object``."""
    if isinstance(value, list):
        return [_expand(v, parts, path, resolve, include, owner) for v in value]
    if not isinstance(value, dict):
        raise ExpandError(path)
    head, rest = parts[0], parts[1:]
    kind = value.get("object")
    if head in NOT_EXPANDABLE.get(kind if isinstance(kind, str) else owner or "", ()):
        raise ExpandError(path)
    if head not in value:
        if include is None:
            raise ExpandError(path)
        try:
            value[head] = include(value, head)
        except KeyError:
            raise ExpandError(path) from None
    child = value[head]
    if child is None:
        return value
    if isinstance(child, str):
        child = _resolved(child, path, resolve)
    elif isinstance(child, list):
        child = [_resolved(c, path, resolve) if isinstance(c, str) else c for c in child]
    elif not isinstance(child, dict):
        raise ExpandError(path)
    if rest:
        child = _expand(child, rest, path, resolve, include, head)
    value[head] = child
    return value


def _resolved(object_id: str, path: str, resolve: Callable[[str], dict[str, Any] | None]) -> dict[str, Any]:
    obj = resolve(object_id)
    if obj is None:
        raise ExpandError(path)
    return obj


def resource_types() -> Mapping[str, str]:
    """Stripe API path -> object type, for every resource the server serves."""
    return dict(RESOURCES)
