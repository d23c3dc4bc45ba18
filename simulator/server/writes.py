"""Objects a receiver creates through the provider API enter the world.

``POST /v1/customers``, ``/v1/products``, ``/v1/checkout/sessions``, ``/v1/subscriptions``,
``/v1/payment_intents`` and ``/v1/refunds`` take Stripe's parameters (docs.stripe.com/api, the "create" call of each
resource; form-encoded as the SDKs send them, decoded by `simulator.server.forms`) and
call the world's operation, so the world's later events about the object carry what the
receiver set (``client_reference_id``, ``metadata`` …); a session, customer,
subscription or payment intent is kept as the receiver's (`World.receiver_sessions`,
`receiver_customers`, `receiver_subscriptions`, `receiver_intents`), for a story to bind to (a shop's seed, `scenarios.seeding`).
Each function returns the id
of the created object; bad parameters raise `ParamError` naming the parameter.

Only the parameters the world models are read; others are accepted and ignored, as a
test double of the API should not refuse a real integration's call for a field it
does not simulate. A checkout session with ``line_items[0][price_data]`` creates its
price (and, with ``product_data``, its product); one without ``customer`` gets a customer when it is completed.
"""

from __future__ import annotations

from typing import Any, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.world import World
from hookproof.simulator.world.world import DELAYED_KINDS

#: Largest number of metadata keys Stripe accepts (docs.stripe.com/metadata: 50 keys).
MAX_METADATA_KEYS = 50


class ParamError(ValueError):
    """A parameter Stripe would refuse; `param` names it (Stripe's ``error.param``)."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


def _str(params: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise ParamError(f"Missing required param: {name}.", name)
        return None
    if not isinstance(value, str):
        raise ParamError(f"Invalid string: {name}", name)
    return value


def _int(params: Mapping[str, Any], name: str, *, default: int | None = None) -> int | None:
    value = params.get(name)
    if value is None or value == "":
        return default
    if not isinstance(value, str) or not value.isdigit():
        raise ParamError(f"Invalid integer: {value!r}", name)
    return int(value)


def _metadata(params: Mapping[str, Any], name: str = "metadata") -> dict[str, str]:
    value = params.get(name, {})
    if value == "":
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ParamError("Invalid hash: metadata must be a hash of strings", name)
    if len(value) > MAX_METADATA_KEYS:
        raise ParamError(f"metadata can have at most {MAX_METADATA_KEYS} keys", name)
    return dict(value)


def _typed(world: World, object_id: str, object_type: str, param: str) -> str:
    if not world.has(object_id) or world.object_type(object_id) != object_type:
        raise ParamError(f"No such {object_type}: '{object_id}'", param)
    return object_id


def create_customer(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/customers``: ``email``, ``name``, ``description``, ``metadata``. Returns the customer id."""
    event = world.create_customer(email=_str(params, "email"), name=_str(params, "name"),
                                  description=_str(params, "description"), metadata=_metadata(params),
                                  by_receiver=True)
    return world.event(event).object_id


def create_product(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/products``: ``name`` (required), ``description``, ``metadata``. Returns the product id."""
    return world.create_product(name=_str(params, "name", required=True) or "", description=_str(params, "description"),
                                metadata=_metadata(params))


def _price_of(world: World, item: Mapping[str, Any], param: str, *, subscription: bool = False) -> str:
    """The price of a line item or subscription item: ``price``, or a new one from ``price_data``.

    ``price_data`` as Stripe takes it (stripe-python ``SubscriptionCreateParamsItemPriceData``,
    ``SessionCreateParamsLineItemPriceData``): ``currency`` and ``unit_amount``; ``product``
    (an existing product) or, in a checkout session only, ``product_data`` (``name``: a new
    product); for a subscription item ``product`` and ``recurring[interval]`` are required."""
    price = item.get("price")
    if isinstance(price, str) and price:
        return _typed(world, price, "price", f"{param}[price]")
    data = item.get("price_data")
    if not isinstance(data, dict):
        raise ParamError("You must specify either `price` or `price_data`.", param)
    at = f"{param}[price_data]"
    currency = _str(data, "currency", required=True)
    amount = _int(data, "unit_amount")
    if amount is None:
        raise ParamError(f"Missing required param: {at}[unit_amount].", f"{at}[unit_amount]")
    product = _str(data, "product")
    product_data = data.get("product_data")
    product_name = None
    if subscription and product_data is not None:
        raise ParamError(f"Received unknown parameter: {at}[product_data]", f"{at}[product_data]")
    if product is not None and product_data is not None:
        raise ParamError("You may only specify one of these parameters: product, product_data.", at)
    if product is not None:
        _typed(world, product, "product", f"{at}[product]")
    elif subscription:
        raise ParamError(f"Missing required param: {at}[product].", f"{at}[product]")
    elif isinstance(product_data, dict):
        product_name = _str(product_data, "name", required=True)
    else:
        raise ParamError("You must specify either `product` or `product_data` when creating a price.", at)
    recurring = data.get("recurring")
    interval = recurring.get("interval") if isinstance(recurring, dict) else None
    if subscription and interval is None:
        raise ParamError(f"Missing required param: {at}[recurring].", f"{at}[recurring]")
    if interval is not None and interval not in ("day", "week", "month", "year"):
        raise ParamError(f"Invalid interval: {interval!r}", f"{at}[recurring][interval]")
    return world.create_price(currency=(currency or "usd").lower(), amount=amount, interval=interval,
                              product=product, product_name=product_name)


def _first_item(params: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    items = params.get(name)
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise ParamError(f"Missing required param: {name}.", name)
    if len(items) > 1:
        raise ParamError(f"hookproof simulates one {name} entry per object, not {len(items)}", name)
    return items[0]


def create_checkout_session(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/checkout/sessions``: ``mode``, ``line_items[0]`` (``price`` or
    ``price_data``, ``quantity``), ``customer``, ``customer_email``, ``client_reference_id``,
    ``metadata``, ``success_url``, ``cancel_url``, ``payment_method_types``, in payment mode
    ``payment_intent_data[metadata]`` (its payment intent's metadata: the session's own is not
    copied there), and in subscription mode ``subscription_data[metadata]`` and
    ``subscription_data[trial_period_days]`` (a trial: the subscription starts ``trialing``; each
    is refused in the other mode, as Stripe refuses them,
    docs.stripe.com/api/checkout/sessions/create). Returns the session id."""
    mode = _str(params, "mode") or "payment"
    if mode not in ("payment", "subscription"):
        raise ParamError(f"hookproof simulates checkout modes payment and subscription, not {mode!r}", "mode")
    data = params.get("subscription_data", {})
    if data in ("", None):
        data = {}
    if not isinstance(data, dict):
        raise ParamError("Invalid hash: subscription_data", "subscription_data")
    if data and mode != "subscription":
        raise ParamError("You can only specify `subscription_data` in `subscription` mode.", "subscription_data")
    trial = (_int(data, "trial_period_days", default=0) or 0) > 0
    sub_metadata = _metadata(data) if "metadata" in data else {}
    intent = params.get("payment_intent_data", {})
    if intent in ("", None):
        intent = {}
    if not isinstance(intent, dict):
        raise ParamError("Invalid hash: payment_intent_data", "payment_intent_data")
    if intent and mode != "payment":
        raise ParamError(f"You can not pass `payment_intent_data` in `{mode}` mode.", "payment_intent_data")
    intent_metadata = _metadata(intent) if "metadata" in intent else {}
    item = _first_item(params, "line_items")
    price = _price_of(world, item, "line_items[0]")
    quantity = _int(item, "quantity", default=1) or 1
    customer = _str(params, "customer")
    if customer is not None:
        _typed(world, customer, "customer", "customer")
    methods = params.get("payment_method_types")
    delayed = methods[0] if isinstance(methods, list) and len(methods) == 1 and methods[0] in DELAYED_KINDS else None
    try:
        return world.open_checkout(customer, price, asynchronous=delayed is not None, delayed_method=delayed,
                                   quantity=quantity, mode=mode,
                                   client_reference_id=_str(params, "client_reference_id"),
                                   metadata=_metadata(params), customer_email=_str(params, "customer_email"),
                                   success_url=_str(params, "success_url"), cancel_url=_str(params, "cancel_url"),
                                   trial=trial, subscription_metadata=sub_metadata,
                                   payment_intent_metadata=intent_metadata, by_receiver=True)
    except WorldError as exc:
        raise ParamError(str(exc), "line_items[0][price]") from None


#: ``payment_behavior`` values Stripe takes (docs.stripe.com/api/subscriptions/create).
PAYMENT_BEHAVIORS = ("allow_incomplete", "default_incomplete", "error_if_incomplete", "pending_if_incomplete")


def create_subscription(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/subscriptions``: ``customer``, ``items[0][price]``, ``items[0][quantity]``,
    ``trial_period_days``, ``metadata``, ``payment_behavior`` (``default_incomplete``: the
    subscription waits ``incomplete`` for the customer to pay its first invoice; the others
    charge the customer's card, which the world's customers' cards pay). Returns the
    subscription id."""
    customer = _typed(world, _str(params, "customer", required=True) or "", "customer", "customer")
    item = _first_item(params, "items")
    price = _price_of(world, item, "items[0]", subscription=True)
    trial = (_int(params, "trial_period_days", default=0) or 0) > 0
    behavior = _str(params, "payment_behavior") or "allow_incomplete"
    if behavior not in PAYMENT_BEHAVIORS:
        raise ParamError(f"Invalid payment_behavior: must be one of {', '.join(PAYMENT_BEHAVIORS)}", "payment_behavior")
    try:
        return world.subscribe(customer, price, trial=trial, quantity=_int(item, "quantity", default=1) or 1,
                               metadata=_metadata(params), default_incomplete=behavior == "default_incomplete" and not trial,
                               by_receiver=True)
    except WorldError as exc:
        raise ParamError(str(exc), "items[0][price]") from None


def create_refund(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/refunds``: ``charge`` or ``payment_intent``, ``amount``, ``reason``,
    ``metadata``. Returns the refund id."""
    charge = _str(params, "charge")
    intent = _str(params, "payment_intent")
    if (charge is None) == (intent is None):
        raise ParamError("Specify exactly one of charge or payment_intent.", "charge")
    if intent is not None:
        pi = world.get(_typed(world, intent, "payment_intent", "payment_intent"))
        charge = pi.get("latest_charge")
        if not charge:
            raise ParamError(f"PaymentIntent {intent} has no successful charge to refund.", "payment_intent")
    assert charge is not None
    _typed(world, charge, "charge", "charge")
    reason = _str(params, "reason")
    if reason not in (None, "duplicate", "fraudulent", "requested_by_customer"):
        raise ParamError(f"Invalid reason: {reason!r}", "reason")
    try:
        return world.refund(charge, _int(params, "amount"), metadata=_metadata(params), reason=reason)
    except WorldError as exc:
        raise ParamError(str(exc), "amount") from None


#: Currency -> the smallest amount Stripe charges in it, in minor units (docs.stripe.com/currencies,
#: "Minimum and maximum charge amounts"); another currency's smallest is 1.
MIN_AMOUNTS: Mapping[str, int] = {"usd": 50, "eur": 50, "brl": 50, "gbp": 30, "jpy": 50}


def _flag(params: Mapping[str, Any], name: str) -> bool | None:
    value = params.get(name)
    if value is None or value == "":
        return None
    if value not in ("true", "false"):
        raise ParamError(f"Invalid boolean: {value!r}", name)
    return bool(value == "true")


def create_payment_intent(world: World, params: Mapping[str, Any]) -> str:
    """``POST /v1/payment_intents`` (docs.stripe.com/api/payment_intents/create): ``amount``
    (required, minor units, at least `MIN_AMOUNTS`' for its currency), ``currency`` (required),
    ``customer``, ``metadata``, ``description``, ``receipt_email``, ``payment_method_types[]``
    or ``automatic_payment_methods[enabled]`` (not both, as Stripe refuses). The intent is
    created ``requires_payment_method`` for a story to confirm; ``confirm=true`` and
    ``capture_method=manual`` are refused naming the parameter (hookproof confirms the intent
    in the stories, capturing at once). Returns the payment intent id."""
    raw = params.get("amount")
    if raw is None or raw == "":
        raise ParamError("Missing required param: amount.", "amount")
    currency = _str(params, "currency", required=True) or ""
    if len(currency) != 3 or not currency.isalpha():
        raise ParamError(f"Invalid currency: {currency.lower()}. Stripe currently supports these currencies: "
                         "docs.stripe.com/currencies", "currency")
    currency = currency.lower()
    amount = _int(params, "amount") or 0
    smallest = MIN_AMOUNTS.get(currency, 1)
    if amount < smallest:
        raise ParamError(f"Amount must be at least {smallest} {currency} in minor units", "amount")
    if _flag(params, "confirm"):
        raise ParamError("hookproof's provider API does not confirm payment intents: the scenarios confirm the "
                         "intent your seed creates (leave out confirm)", "confirm")
    capture = _str(params, "capture_method")
    if capture not in (None, "automatic", "automatic_async"):
        raise ParamError(f"hookproof simulates capture_method automatic, not {capture!r}", "capture_method")
    methods = params.get("payment_method_types")
    if methods in (None, ""):
        methods = None
    elif not isinstance(methods, list) or not methods or not all(isinstance(m, str) and m for m in methods):
        raise ParamError("Invalid array: payment_method_types", "payment_method_types")
    automatic = params.get("automatic_payment_methods")
    if automatic in (None, ""):
        automatic = None
    elif not isinstance(automatic, dict):
        raise ParamError("Invalid hash: automatic_payment_methods", "automatic_payment_methods")
    enabled = _flag(automatic, "enabled") if automatic is not None else None
    if automatic is not None and enabled is None:
        raise ParamError("Missing required param: automatic_payment_methods[enabled].",
                         "automatic_payment_methods[enabled]")
    if methods is not None and automatic is not None:
        raise ParamError("You may only specify one of these parameters: automatic_payment_methods, "
                         "payment_method_types.", "payment_method_types")
    if enabled is False:  # Stripe then takes the types the account's payment method configuration lists
        methods = ["card"]
    customer = _str(params, "customer")
    if customer is not None:
        _typed(world, customer, "customer", "customer")
    return world.create_payment_intent(amount=amount, currency=currency, customer=customer,
                                       metadata=_metadata(params), description=_str(params, "description"),
                                       receipt_email=_str(params, "receipt_email"), payment_method_types=methods)


def _only(params: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    """Raise ParamError naming the first parameter of `params` not in `allowed` (``expand``
    always allowed): Stripe refuses an unknown one; hookproof also one it does not simulate."""
    for name in params:
        if name not in allowed and name != "expand":
            raise ParamError(f"hookproof's provider API {what} only with {', '.join(allowed)}: "
                             f"{name} is not simulated", name)


def update_subscription(world: World, subscription: str, params: Mapping[str, Any]) -> str:
    """``POST /v1/subscriptions/{id}`` (docs.stripe.com/api/subscriptions/update, stripe-python
    ``stripe.Subscription.modify``): ``cancel_at_period_end`` (``true`` schedules its
    cancellation at the period's end, ``false`` takes a scheduled one back:
    `World.cancel_at_period_end`, a ``customer.subscription.updated``). Returns the id."""
    _only(params, ("cancel_at_period_end",), "updates a subscription")
    cancel = _flag(params, "cancel_at_period_end")
    _typed(world, subscription, "subscription", "id")
    if cancel is None:
        return subscription
    if bool(world.get(subscription)["cancel_at_period_end"]) == cancel:
        return subscription  # nothing changes: Stripe answers the subscription as it is, no event
    try:
        world.cancel_at_period_end(subscription, cancel)
    except WorldError as exc:
        raise ParamError(str(exc), "cancel_at_period_end") from None
    return subscription


def cancel_subscription(world: World, subscription: str, params: Mapping[str, Any]) -> str:
    """``DELETE /v1/subscriptions/{id}`` (docs.stripe.com/api/subscriptions/cancel, stripe-python
    ``stripe.Subscription.cancel``): cancels it now (`World.cancel`, a
    ``customer.subscription.deleted``, status ``canceled``). Returns the id."""
    _only(params, (), "cancels a subscription")
    _typed(world, subscription, "subscription", "id")
    if world.get(subscription)["status"] in ("canceled", "incomplete_expired"):
        raise ParamError(f"A canceled subscription can only update its cancellation_details and metadata: "
                         f"{subscription} is {world.get(subscription)['status']}", "id")
    try:
        world.cancel(subscription)
    except WorldError as exc:
        raise ParamError(str(exc), "id") from None
    return subscription
