"""Paddle Billing objects in Paddle's own shapes: products, prices, customers, addresses,
transactions, subscriptions and adjustments (pure functions of their fields).

Field for field like Paddle's API reference (developer.paddle.com/api-reference:
"Transaction entity", "Subscription entity", "Adjustment entity", "Price entity",
"Product entity", "Customer entity", "Address entity") and the notification payloads
paddle-python-sdk 1.16.1 parses (`paddle_billing.Notifications.Entities.Transaction`,
``Subscription``, ``Adjustment``, ``Customer``, ``Address``:
amounts are strings of minor units, currency codes upper case, times RFC 3339 as Go's
``time.RFC3339Nano`` writes them: `iso`). Validated in tests by parsing every payload with those entities.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

#: The tax rate of the seller's default tax category (``standard``), as a decimal string.
TAX_RATE = "0.08875"


def iso(at_us: int, *, precision: int = 6) -> str:
    """An entity's time as Paddle renders it: UTC, Go's ``time.RFC3339Nano`` (up to 9 fractional
    digits, trailing zeros trimmed, no fraction on a whole second), of `at_us` kept to `precision`
    digits (6: microseconds; 3: milliseconds; 9: `at_us` plus `sub_us`'s nanoseconds).

    Sources, real notifications kept in the official SDKs' tests:
    - paddle-python-sdk tests/Functional/Resources/Notifications/_fixtures/response/list_default.json:
      a transaction's ``created_at`` ``09:59:09.237822398Z``, a business's ``updated_at``
      ``11:57:47.03542Z``, a customer's ``created_at`` ``10:46:18.533Z``, a product's ``08.3Z``;
      subscriptions, prices, adjustments, payments, billing periods at microseconds.
    - paddle-node-sdk src/__tests__/mocks/notifications/transaction-*.mock.ts: ``updated_at``
      ``07:45:54.81387658Z``, transaction-billed's ``billed_at`` ``07:45:54.783994887Z``.
    - paddle-node-sdk subscription-paused/-canceled.mock.ts: ``paused_at``, ``canceled_at`` and
      ``updated_at`` at nanoseconds; subscription-resumed.mock.ts: ``updated_at`` ``04.45451Z``.
    - paddle-node-sdk address-created.mock.ts: ``created_at`` ``36.9Z``; adjustment-updated.mock.ts:
      ``updated_at`` ``08.42549Z``.
    - ``occurred_at`` is not this: six digits always, a trailing zero kept (paddle-node-sdk
      transaction-billed.mock.ts ``07:45:55.202630Z``): `rfc3339_us`.
    A simplification: a nanosecond time keeps its nanoseconds in later events (Paddle's show
    it at microseconds there)."""
    ns = (at_us % 1_000_000) * 1000 + (sub_us(at_us) if precision == 9 else 0)
    ns -= ns % 10 ** (9 - precision)
    moment = datetime.fromtimestamp(at_us // 1_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return moment + (f".{ns:09d}".rstrip("0") if ns else "") + "Z"


def iso_ns(at_us: int) -> str:
    """`iso` at nanoseconds: a time Paddle writes in the event it sends (a transaction's
    ``created_at``, ``updated_at`` and ``billed_at``, a subscription's ``paused_at``, ``canceled_at``
    and ``updated_at`` with them)."""
    return iso(at_us, precision=9)


def iso_ms(at_us: int) -> str:
    """`iso` at milliseconds: a customer's, an address's and a product's ``created_at``."""
    return iso(at_us, precision=3)


def sub_us(at_us: int) -> int:
    """The nanoseconds below `at_us`'s microsecond a nanosecond time carries: 0..999, a pure
    function of `at_us` (so of the world's seed), one in ten a multiple of ten (trimmed)."""
    return (at_us * 2_654_435_761 >> 7) % 1000


_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z")


def parse(value: str) -> int:
    """Unix microseconds of a time `iso` renders (0 to 9 fractional digits; nanoseconds below
    the microsecond dropped). ValueError for another form."""
    match = _TIME.fullmatch(value)
    if match is None:
        raise ValueError(f"{value!r} is not an RFC 3339 UTC time")
    moment = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(moment.timestamp()) * 1_000_000 + int((match.group(2) or "").ljust(9, "0")[:6])


def product(product_id: str, name: str, description: str, created: str) -> dict[str, Any]:
    return {"id": product_id, "name": name, "type": "standard", "tax_category": "standard",
            "description": description, "image_url": None, "custom_data": None, "status": "active",
            "import_meta": None, "created_at": created, "updated_at": created}


def customer(customer_id: str, *, email: str, name: str | None, created: str) -> dict[str, Any]:
    """A customer as Paddle Checkout creates one (developer.paddle.com/api-reference/customers:
    ``id`` ``ctm_…``, ``name`` (null unless given: checkout asks for an email, a country and a
    postal code), ``email``, ``marketing_consent`` (``false`` unless the customer ticks the box),
    ``status`` ``active`` (or ``archived``), ``custom_data``, ``locale`` (default ``en``),
    ``created_at``, ``updated_at``, ``import_meta`` (null unless imported); the webhook
    simulator's "Subscription created" scenario: "The customer's status is active")."""
    return {"id": customer_id, "name": name, "email": email, "marketing_consent": False, "status": "active",
            "custom_data": None, "locale": "en", "created_at": created, "updated_at": created, "import_meta": None}


def address(address_id: str, *, customer_id: str, country_code: str, postal_code: str | None,
            created: str) -> dict[str, Any]:
    """The address Paddle Checkout creates from the country and ZIP/postal code a customer enters
    (developer.paddle.com/webhooks/simulator/subscription-created: "Paddle always creates a new
    address related to this customer"; developer.paddle.com/api-reference/addresses: ``id``
    ``add_…``, ``customer_id``, ``description``, ``first_line``, ``second_line``, ``city``,
    ``postal_code``, ``region``, ``country_code``, ``custom_data``, ``status`` ``active``,
    ``created_at``, ``updated_at``, ``import_meta``); the lines, city and region the checkout
    does not ask for are null."""
    return {"id": address_id, "customer_id": customer_id, "description": None, "first_line": None,
            "second_line": None, "city": None, "postal_code": postal_code, "region": None,
            "country_code": country_code, "custom_data": None, "status": "active", "created_at": created,
            "updated_at": created, "import_meta": None}


#: A monthly price's ``billing_cycle`` (the Price entity's ``{"interval", "frequency"}``).
MONTHLY: dict[str, Any] = {"interval": "month", "frequency": 1}
#: An annual price's ``billing_cycle`` (developer.paddle.com/api-reference/prices: ``interval``
#: ``day|week|month|year``).
YEARLY: dict[str, Any] = {"interval": "year", "frequency": 1}


def price(price_id: str, product_id: str, name: str, amount: int, currency: str, created: str, *,
          cycle: dict[str, Any] | None = MONTHLY) -> dict[str, Any]:
    """A price of `amount` minor units billed every `cycle` (`MONTHLY`, `YEARLY`), or with `cycle`
    None a one-time price (``billing_cycle`` null: developer.paddle.com/api-reference/prices,
    "null if one-time"; paddle-python-sdk's ``transaction.completed`` fixture's "One-time addon")."""
    return {"id": price_id, "name": name, "type": "standard", "status": "active",
            "quantity": {"maximum": 999, "minimum": 1}, "tax_mode": "account_setting", "created_at": created,
            "product_id": product_id, "unit_price": {"amount": str(amount), "currency_code": currency},
            "updated_at": created, "custom_data": None, "description": name, "import_meta": None,
            "trial_period": None, "billing_cycle": dict(cycle) if cycle else None,
            "unit_price_overrides": []}


def _tax(amount: int) -> int:
    return round(amount * float(TAX_RATE))


def totals(subtotal: int, currency: str, *, paid: bool) -> dict[str, str]:
    """A transaction's ``details.totals`` for `subtotal` minor units (tax added on top)."""
    tax = _tax(subtotal)
    total = subtotal + tax
    fee = round(total * 0.05) + 50 if total else 0
    return {"fee": str(fee), "tax": str(tax), "total": str(total), "credit": "0",
            "balance": "0" if paid else str(total), "discount": "0", "earnings": str(total - tax - fee),
            "subtotal": str(subtotal), "grand_total": str(total), "grand_total_tax": str(tax),
            "currency_code": currency, "credit_to_balance": "0"}


def transaction(txn_id: str, *, customer_id: str | None, address_id: str | None, subscription_id: str | None,
                origin: str, pri: dict[str, Any], prod: dict[str, Any], quantity: int, item_id: str, created: str,
                period: tuple[str, str] | None, checkout_url: str | None, charged: bool = True) -> dict[str, Any]:
    """A new transaction (``ready``: items priced, not yet paid); not `charged`, its totals zero
    (a checkout for a price with a trial: nothing is charged until the trial ends)."""
    currency = pri["unit_price"]["currency_code"]
    unit = int(pri["unit_price"]["amount"]) if charged else 0
    subtotal = unit * quantity
    sums = totals(subtotal, currency, paid=False)
    line_totals = {"tax": sums["tax"], "total": sums["total"], "discount": "0", "subtotal": str(subtotal)}
    return {
        "id": txn_id, "items": [{"price": pri, "quantity": quantity, "proration": None}], "origin": origin,
        "status": "ready",
        "details": {
            "totals": sums,
            "line_items": [{"id": item_id, "totals": line_totals, "product": prod, "price_id": pri["id"],
                            "quantity": quantity, "tax_rate": TAX_RATE,
                            "unit_totals": {"tax": str(_tax(unit)), "total": str(unit + _tax(unit)), "discount": "0",
                                            "subtotal": str(unit)},
                            "proration": None}],
            "payout_totals": None,
            "tax_rates_used": [{"totals": {k: line_totals[k] for k in ("tax", "total", "discount", "subtotal")},
                                "tax_rate": TAX_RATE}],
            "adjusted_totals": {"fee": sums["fee"], "tax": sums["tax"], "total": sums["total"],
                                "earnings": sums["earnings"], "subtotal": sums["subtotal"],
                                "grand_total": sums["grand_total"], "grand_total_tax": sums["tax"],
                                "retained_fee": "0", "currency_code": currency},
            "adjusted_payout_totals": None,
        },
        "checkout": {"url": checkout_url} if checkout_url else None,
        "payments": [], "billed_at": None, "address_id": address_id, "created_at": created, "invoice_id": None,
        "updated_at": created, "revised_at": None, "business_id": None, "custom_data": None,
        "customer_id": customer_id, "discount_id": None, "currency_code": currency,
        "billing_period": {"starts_at": period[0], "ends_at": period[1]} if period else None,
        "invoice_number": None, "billing_details": None, "collection_mode": "automatic",
        "subscription_id": subscription_id,
    }


def with_payouts(details: dict[str, Any]) -> dict[str, Any]:
    """`details` with ``payout_totals`` (the totals in the payout currency: fees, earnings), which
    Paddle adds once the transaction is paid (developer.paddle.com/webhooks/simulator/subscription-created:
    "information about fees, payouts, and earnings")."""
    return {**details, "payout_totals": {**details["totals"], "exchange_rate": "1", "fee_rate": "0.05"}}


def with_trial(pri: dict[str, Any], days: int) -> dict[str, Any]:
    """`pri` with a ``trial_period`` of `days` days, a payment method required at checkout (the
    Price entity's ``{"interval", "frequency", "requires_payment_method"}``,
    developer.paddle.com/api-reference/prices)."""
    return {**pri, "trial_period": {"interval": "day", "frequency": days, "requires_payment_method": True}}


def payment_attempt(amount: str, *, status: str, at: str, attempt_id: str, method_id: str, stored_id: str,
                    last4: str, error_code: str | None) -> dict[str, Any]:
    """One entry of a transaction's ``payments`` (a card attempt)."""
    return {"amount": amount, "status": status, "created_at": at, "error_code": error_code,
            "captured_at": at if status == "captured" else None,
            "method_details": {"card": {"type": "visa", "last4": last4, "expiry_year": 2030, "expiry_month": 1,
                                        "cardholder_name": "Sam Miller"},
                               "type": "card", "underlying_details": None, "south_korea_local_card": None,
                               "paypal": None},
            "payment_method_id": method_id, "payment_attempt_id": attempt_id, "stored_payment_method_id": stored_id}


def subscription(sub_id: str, *, customer_id: str, address_id: str, pri: dict[str, Any],
                 prod: dict[str, Any], quantity: int, created: str, period: tuple[str, str],
                 trial: bool = False) -> dict[str, Any]:
    """A new ``active`` subscription billed every `pri`'s ``billing_cycle`` (its own ``billing_cycle``
    the same) from `period`, or with `trial` a ``trialing``
    one whose `period` is the trial (its items ``trialing`` with their ``trial_dates``), billed
    nothing yet: ``first_billed_at`` and its items' ``previously_billed_at`` null, as in Paddle's
    ``subscription.trialing`` example (paddle-node-sdk's ``subscription-trialing.mock.ts``; the
    subscription entity, developer.paddle.com/webhooks/subscriptions/subscription-updated: ``first_billed_at`` "may be
    different from started_at if the subscription started in trial") (the Subscription entity: no
    ``transaction_id``, which only ``subscription.created`` carries, `subscription_created`)."""
    status = "trialing" if trial else "active"
    billed = None if trial else period[0]
    item = {"price": pri, "product": prod, "status": status, "quantity": quantity, "recurring": True,
            "created_at": created, "updated_at": created,
            "trial_dates": {"starts_at": period[0], "ends_at": period[1]} if trial else None,
            "next_billed_at": period[1], "previously_billed_at": billed}
    return {"id": sub_id, "items": [item], "status": status, "discount": None, "paused_at": None,
            "address_id": address_id, "created_at": created, "started_at": period[0], "updated_at": created,
            "business_id": None, "canceled_at": None, "custom_data": None, "customer_id": customer_id,
            "import_meta": None, "billing_cycle": dict(pri["billing_cycle"]),
            "currency_code": pri["unit_price"]["currency_code"], "next_billed_at": period[1],
            "billing_details": None, "collection_mode": "automatic",
            "first_billed_at": billed, "scheduled_change": None,
            "current_billing_period": {"starts_at": period[0], "ends_at": period[1]}}


def subscription_created(snapshot: dict[str, Any], txn_id: str) -> dict[str, Any]:
    """``subscription.created``'s ``data``: the subscription `snapshot` with the ``transaction_id``
    of the checkout that created it after ``next_billed_at`` (developer.paddle.com/webhooks/
    subscriptions/subscription-created: "Other subscription events don't include this field";
    paddle-python-sdk: only ``Notifications.Entities.SubscriptionCreated`` has it)."""
    data: dict[str, Any] = {}
    for key, value in snapshot.items():
        data[key] = value
        if key == "next_billed_at":
            data["transaction_id"] = txn_id
    return data


def adjustment(adj_id: str, item_id: str, *, txn: dict[str, Any], amount: int, created: str) -> dict[str, Any]:
    """A partial refund of `amount` minor units (tax included) of `txn`'s first line item, as it is
    created: ``pending_approval`` (developer.paddle.com/webhooks/adjustments/adjustment-created: "Most
    refunds for live accounts require Paddle approval and are created as pending_approval");
    its ``type`` ``partial`` (developer.paddle.com changelog 2024-12-05, "full" or "partial")."""
    currency = txn["currency_code"]
    tax = round(amount * float(TAX_RATE) / (1 + float(TAX_RATE)))
    fee = round(amount * 0.05)
    sums = {"fee": str(fee), "tax": str(tax), "total": str(amount), "earnings": str(amount - tax - fee),
            "subtotal": str(amount - tax), "currency_code": currency, "retained_fee": "0"}
    return {"id": adj_id,
            "items": [{"id": item_id, "type": "partial", "amount": str(amount),
                       "totals": {"tax": str(tax), "total": str(amount), "subtotal": str(amount - tax)},
                       "item_id": txn["details"]["line_items"][0]["id"], "proration": None}],
            "action": "refund", "type": "partial", "reason": "Customer asked for a refund",
            "status": "pending_approval",
            "totals": sums,
            "created_at": created, "updated_at": created, "customer_id": txn["customer_id"],
            "currency_code": currency, "payout_totals": {**sums, "chargeback_fee": None},
            "transaction_id": txn["id"], "subscription_id": txn["subscription_id"],
            "credit_applied_to_balance": None, "tax_rates_used": [{"tax_rate": TAX_RATE, "totals": {
                "tax": str(tax), "total": str(amount), "subtotal": str(amount - tax), "discount": "0"}}]}
