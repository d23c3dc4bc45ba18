"""Stripe's object shapes: every field Stripe renders, with the value it has for the world's objects.

Each builder returns a complete Stripe object (docs.stripe.com/api, the ``*/object``
page of each resource) at the API version `LATEST_API_VERSION`: the fields the world
drives come from its arguments, every other field carries the value Stripe gives an
object created the way the world creates it (a card payment, no tax, no discount, no
Connect): ``null``, ``[]``, ``{}``, ``false`` or the documented default.

Field lists follow Stripe's OpenAPI fixtures (`stripe/openapi`, ``fixtures3.json``),
checked field by field in ``tests/simulator/test_stripe_fidelity.py``. Expandable
fields hold ids (``customer``, ``latest_charge`` …) except where Stripe always renders
the object: ``subscription.items.data[].price`` and ``.plan`` are full objects.

Fields whose shape depends on the API version (the invoice's subscription link and
payment fields, the subscription's current period) are stored in both shapes here and
cut to one shape by `hookproof.simulator.profiles.stripe_versions.at_version`.
"""

from __future__ import annotations

from typing import Any, Mapping

# The API version whose shapes the builders produce (re-exported).
from hookproof.simulator.events import LATEST_API_VERSION as LATEST_API_VERSION

_ADDRESS_KEYS = ("city", "country", "line1", "line2", "postal_code", "state")

Obj = dict[str, Any]


def stripe_order(value: Any) -> Any:
    """`value` with every object's ``id`` first and ``object`` next, the other keys
    alphabetically: how Stripe renders its objects, lists and events (``{"id": "cus_…",
    "object": "customer", "address": …}``; the API reference's example of every object, and
    recorded deliveries: ``billing_address_collection, cancel_url, client_reference_id, …``).
    A ``metadata`` hash keeps its keys in the order they were set (the shop's own). Containers
    are copied; other values are returned as they are.

    JSON scalars are passed over by their exact type, without a call each (a world's
    invoice is a few hundred values; about a third of the time the plain recursion took)."""
    if type(value) is dict or isinstance(value, dict):
        out: dict[str, Any] = {}
        for k in ("id", "object"):
            if k in value:
                v = value[k]
                out[k] = v if type(v) in _SCALARS else stripe_order(v)
        for k in sorted(value):
            if k not in out:
                v = value[k]
                out[k] = v if type(v) in _SCALARS else dict(v) if k == "metadata" and type(v) is dict \
                    else stripe_order(v)
        return out
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else stripe_order(v) for v in value]
    return value


def stripe_order_keys(value: Obj) -> Obj:
    """`value`'s own keys in `stripe_order`'s order (its values as they are: already ordered)."""
    head = [k for k in ("id", "object") if k in value]
    return {k: value[k] for k in (*head, *sorted(k for k in value if k not in head))}


#: JSON scalars: `stripe_order` returns them as they are.
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def address(values: Mapping[str, Any] | None = None) -> Obj:
    """Stripe's address hash: every key present, unknown ones null."""
    values = values or {}
    return {k: values.get(k) for k in _ADDRESS_KEYS}


def customer(*, id: str, name: str | None, email: str | None, addr: Mapping[str, Any] | None, locales: list[str],
             currency: str | None, payment_method: str | None, invoice_prefix: str, created: int, livemode: bool,
             metadata: Mapping[str, str], description: str | None = None, phone: str | None = None) -> Obj:
    """A customer (docs.stripe.com/api/customers/object)."""
    return {
        "address": address(addr), "balance": 0, "created": created, "currency": currency, "default_source": None,
        "delinquent": False, "description": description, "discount": None, "email": email, "id": id,
        "invoice_prefix": invoice_prefix,
        "invoice_settings": {"custom_fields": None, "default_payment_method": payment_method, "footer": None,
                             "rendering_options": None},
        "livemode": livemode, "metadata": dict(metadata), "name": name, "next_invoice_sequence": 1,
        "object": "customer", "phone": phone, "preferred_locales": locales, "shipping": None, "tax_exempt": "none",
        "test_clock": None,
    }


def payment_method(*, id: str, customer: str | None, name: str | None, email: str | None,
                   addr: Mapping[str, Any] | None, brand: str, last4: str, exp_month: int, exp_year: int,
                   fingerprint: str, created: int, livemode: bool) -> Obj:
    """A card payment method (docs.stripe.com/api/payment_methods/object)."""
    return {
        "allow_redisplay": "unspecified",
        "billing_details": {"address": address(addr), "email": email, "name": name, "phone": None, "tax_id": None},
        "card": {
            "brand": brand, "checks": {"address_line1_check": None, "address_postal_code_check": None,
                                       "cvc_check": "pass"},
            "country": "US", "display_brand": brand, "exp_month": exp_month, "exp_year": exp_year,
            "fingerprint": fingerprint, "funding": "credit", "generated_from": None, "last4": last4,
            "networks": {"available": [brand], "preferred": None},
            "three_d_secure_usage": {"supported": True}, "wallet": None, "regulated_status": "unregulated",
        },
        "created": created, "customer": customer, "id": id, "livemode": livemode, "metadata": {},
        "object": "payment_method", "type": "card", "customer_account": None,
    }


def product(*, id: str, name: str, default_price: str | None, created: int, livemode: bool) -> Obj:
    """A product (docs.stripe.com/api/products/object)."""
    return {
        "active": True, "created": created, "default_price": default_price, "description": None, "id": id,
        "images": [], "livemode": livemode, "marketing_features": [], "metadata": {}, "name": name,
        "object": "product", "package_dimensions": None, "shippable": None, "statement_descriptor": None,
        "tax_code": None, "unit_label": None, "updated": created, "url": None, "type": "service",
    }


def price(*, id: str, product: str, currency: str, unit_amount: int, interval: str | None, created: int,
          livemode: bool) -> Obj:
    """A per-unit price, recurring when `interval` is given (docs.stripe.com/api/prices/object)."""
    return {
        "active": True, "billing_scheme": "per_unit", "created": created, "currency": currency,
        "custom_unit_amount": None, "id": id, "livemode": livemode, "lookup_key": None, "metadata": {},
        "nickname": None, "object": "price", "product": product,
        "recurring": {"interval": interval, "interval_count": 1, "meter": None, "usage_type": "licensed",
                      "trial_period_days": None} if interval else None,
        "tax_behavior": "unspecified", "tiers_mode": None, "transform_quantity": None,
        "type": "recurring" if interval else "one_time", "unit_amount": unit_amount,
        "unit_amount_decimal": str(unit_amount),
    }


def plan(pr: Mapping[str, Any]) -> Obj:
    """The legacy plan Stripe renders beside a recurring price (docs.stripe.com/api/plans/object)."""
    recurring = pr.get("recurring") or {}
    return {
        "active": pr["active"], "amount": pr["unit_amount"], "amount_decimal": pr["unit_amount_decimal"],
        "billing_scheme": pr["billing_scheme"], "created": pr["created"], "currency": pr["currency"], "id": pr["id"],
        "interval": recurring.get("interval"), "interval_count": recurring.get("interval_count"),
        "livemode": pr["livemode"], "metadata": dict(pr["metadata"]), "meter": None, "nickname": None,
        "object": "plan", "product": pr["product"], "tiers_mode": None, "transform_usage": None,
        "trial_period_days": None, "usage_type": recurring.get("usage_type", "licensed"),
    }


def subscription_item(*, id: str, subscription: str, pr: Mapping[str, Any], quantity: int, created: int,
                      period_start: int, period_end: int) -> Obj:
    """A subscription item with its full price and plan (docs.stripe.com/api/subscription_items/object)."""
    return {
        "created": created, "discounts": [], "id": id, "metadata": {}, "object": "subscription_item",
        "price": dict(pr), "quantity": quantity, "subscription": subscription, "tax_rates": [], "plan": plan(pr),
        "current_period_end": period_end, "current_period_start": period_start, "billing_thresholds": None,
    }


def subscription(*, id: str, customer: str, status: str, items: list[Obj], currency: str, payment_method: str | None,
                 created: int, period_start: int, period_end: int, trial_start: int | None, trial_end: int | None,
                 livemode: bool, metadata: Mapping[str, str]) -> Obj:
    """A subscription (docs.stripe.com/api/subscriptions/object). The top-level
    ``current_period_*`` fields are the pre-2025-03-31 shape (cut by version)."""
    return {
        "application": None, "application_fee_percent": None,
        "automatic_tax": {"enabled": False, "liability": None, "disabled_reason": None},
        "billing_cycle_anchor": period_start, "billing_cycle_anchor_config": None, "cancel_at": None,
        "canceled_at": None, "cancellation_details": {"comment": None, "feedback": None, "reason": None},
        "collection_method": "charge_automatically", "created": created, "currency": currency, "customer": customer,
        "days_until_due": None, "default_payment_method": payment_method, "default_source": None,
        "default_tax_rates": [], "description": None, "discounts": [], "ended_at": None, "id": id,
        "invoice_settings": {"account_tax_ids": None, "issuer": {"type": "self"}, "custom_fields": None,
                             "description": None, "footer": None},
        "items": {"data": items, "has_more": False, "object": "list",
                  "url": f"/v1/subscription_items?subscription={id}"},
        "latest_invoice": None, "livemode": livemode, "metadata": dict(metadata),
        "next_pending_invoice_item_invoice": None, "object": "subscription", "on_behalf_of": None,
        "pause_collection": None,
        "payment_settings": {"payment_method_options": None, "payment_method_types": None,
                             "save_default_payment_method": "off"},
        "pending_invoice_item_interval": None, "pending_setup_intent": None, "pending_update": None,
        "schedule": None, "start_date": created, "status": status, "test_clock": None, "transfer_data": None,
        "trial_end": trial_end, "trial_settings": {"end_behavior": {"missing_payment_method": "create_invoice"}},
        "trial_start": trial_start, "cancel_at_period_end": False, "billing_thresholds": None,
        "billing_mode": {"type": "classic", "flexible": None}, "customer_account": None,
        "managed_payments": {"enabled": False}, "billing_schedules": [],
        "current_period_start": period_start, "current_period_end": period_end,
    }


def invoice_line(*, id: str, invoice: str, subscription: str, subscription_item: str, pr: Mapping[str, Any],
                 quantity: int, period_start: int, period_end: int, livemode: bool) -> Obj:
    """A subscription invoice line (docs.stripe.com/api/invoice-line-item/object)."""
    amount = pr["unit_amount"] * quantity
    return {
        "amount": amount, "currency": pr["currency"], "description": f"{quantity} × {pr['product']}",
        "discount_amounts": [], "discountable": True, "discounts": [], "id": id, "invoice": invoice,
        "livemode": livemode, "metadata": {}, "object": "line_item",
        "period": {"end": period_end, "start": period_start}, "quantity": quantity, "subscription": subscription,
        "pretax_credit_amounts": [], "taxes": [],
        "parent": {
            "invoice_item_details": None,
            "subscription_item_details": {"invoice_item": None, "proration": False,
                                          "proration_details": {"credited_items": None},
                                          "subscription": subscription, "subscription_item": subscription_item},
            "type": "subscription_item_details",
        },
        "pricing": {"type": "price_details", "price_details": {"price": pr["id"], "product": pr["product"]},
                    "unit_amount_decimal": pr["unit_amount_decimal"]},
        "subtotal": amount, "quantity_decimal": str(quantity),
        # the pre-2025-03-31 shape
        "price": dict(pr), "plan": plan(pr), "type": "subscription", "proration": False,
        "subscription_item": subscription_item, "invoice_item": None,
    }


def invoice(*, id: str, cus: Mapping[str, Any], subscription: str, lines: list[Obj], currency: str, amount: int,
            billing_reason: str, number: str, period_start: int, period_end: int, created: int,
            livemode: bool, account_name: str) -> Obj:
    """An open subscription invoice (docs.stripe.com/api/invoices/object). ``subscription``,
    ``payment_intent``, ``charge`` and ``paid`` are the pre-2025-03-31 shape (cut by version)."""
    return {
        "account_country": "US", "account_name": account_name, "account_tax_ids": None, "amount_due": amount,
        "amount_paid": 0, "amount_remaining": amount, "amount_shipping": 0, "application": None,
        "attempt_count": 0, "attempted": False, "auto_advance": True,
        "automatic_tax": {"enabled": False, "liability": None, "status": None, "disabled_reason": None,
                          "provider": None},
        "billing_reason": billing_reason, "collection_method": "charge_automatically", "created": created,
        "currency": currency, "custom_fields": None, "customer": cus["id"], "customer_address": dict(cus["address"]),
        "customer_email": cus["email"], "customer_name": cus["name"], "customer_phone": cus["phone"],
        "customer_shipping": None, "customer_tax_exempt": "none", "customer_tax_ids": [],
        "default_payment_method": None, "default_source": None, "default_tax_rates": [], "description": None,
        "discounts": [], "due_date": None, "effective_at": created, "ending_balance": 0, "footer": None,
        "from_invoice": None, "hosted_invoice_url": f"https://invoice.stripe.com/i/{id}",
        "id": id, "invoice_pdf": f"https://pay.stripe.com/invoice/{id}/pdf", "issuer": {"type": "self"},
        "last_finalization_error": None, "latest_revision": None,
        "lines": {"data": lines, "has_more": False, "object": "list", "url": f"/v1/invoices/{id}/lines"},
        "livemode": livemode, "metadata": {}, "next_payment_attempt": created + 3600, "number": number,
        "object": "invoice", "on_behalf_of": None,
        "payment_settings": {"default_mandate": None, "payment_method_options": None, "payment_method_types": None},
        "period_end": period_end, "period_start": period_start, "post_payment_credit_notes_amount": 0,
        "pre_payment_credit_notes_amount": 0, "receipt_number": None, "rendering": None, "shipping_cost": None,
        "shipping_details": None, "starting_balance": 0, "statement_descriptor": None, "status": "open",
        "status_transitions": {"finalized_at": created, "marked_uncollectible_at": None, "paid_at": None,
                               "voided_at": None},
        "subtotal": amount, "subtotal_excluding_tax": amount, "test_clock": None, "total": amount,
        "total_discount_amounts": [], "total_excluding_tax": amount, "webhooks_delivered_at": created,
        "automatically_finalizes_at": None, "total_pretax_credit_amounts": [], "total_taxes": [],
        "amount_overpaid": 0,
        "parent": {"quote_details": None, "subscription_details": {"metadata": {}, "subscription": subscription},
                   "type": "subscription_details"},
        "customer_account": None,
        # the pre-2025-03-31 shape
        "subscription": subscription, "payment_intent": None, "charge": None, "paid": False,
        "subscription_details": {"metadata": {}},
    }


def payment_intent(*, id: str, customer: str | None, amount: int, currency: str, payment_method: str | None,
                   status: str, client_secret: str, created: int, livemode: bool, description: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> Obj:
    """A payment intent (docs.stripe.com/api/payment_intents/object)."""
    return {
        "amount": amount, "amount_capturable": 0, "amount_details": {"tip": {}}, "amount_received": 0,
        "application": None, "application_fee_amount": None, "automatic_payment_methods": None, "canceled_at": None,
        "cancellation_reason": None, "capture_method": "automatic", "client_secret": client_secret,
        "confirmation_method": "automatic", "created": created, "currency": currency, "customer": customer,
        "description": description, "id": id, "last_payment_error": None, "latest_charge": None,
        "livemode": livemode, "metadata": dict(metadata or {}), "next_action": None, "object": "payment_intent",
        "on_behalf_of": None, "payment_method": payment_method, "payment_method_configuration_details": None,
        "payment_method_options": {"card": {"installments": None, "mandate_options": None, "network": None,
                                            "request_three_d_secure": "automatic"}},
        "payment_method_types": ["card"], "processing": None, "receipt_email": None, "review": None,
        "setup_future_usage": None, "shipping": None, "statement_descriptor": None,
        "statement_descriptor_suffix": None, "status": status, "transfer_data": None, "transfer_group": None,
        "source": None, "excluded_payment_method_types": None, "customer_account": None, "managed_payments": None,
    }


def charge(*, id: str, customer: str | None, amount: int, currency: str, payment_intent: str | None,
           pm: Mapping[str, Any], balance_transaction: str | None, receipt_url: str, created: int, livemode: bool,
           description: str | None = None) -> Obj:
    """A succeeded card charge (docs.stripe.com/api/charges/object). ``invoice`` is not in
    Stripe's shape since 2025-03-31 (cut by version)."""
    card = pm["card"]
    return {
        "amount": amount, "amount_captured": amount, "amount_refunded": 0, "application": None,
        "application_fee": None, "application_fee_amount": None, "balance_transaction": balance_transaction,
        "billing_details": dict(pm["billing_details"]), "calculated_statement_descriptor": "HOOKPROOF",
        "captured": True, "created": created, "currency": currency, "customer": customer,
        "description": description, "disputed": False, "failure_balance_transaction": None, "failure_code": None,
        "failure_message": None, "fraud_details": {}, "id": id, "livemode": livemode, "metadata": {},
        "object": "charge", "on_behalf_of": None,
        "outcome": {"advice_code": None, "network_advice_code": None, "network_decline_code": None,
                    "network_status": "approved_by_network", "reason": None, "seller_message": "Payment complete.",
                    "type": "authorized"},
        "paid": True, "payment_intent": payment_intent, "payment_method": pm["id"],
        "payment_method_details": {
            "card": {
                "amount_authorized": amount, "brand": card["brand"], "checks": dict(card["checks"]),
                "country": card["country"], "exp_month": card["exp_month"], "exp_year": card["exp_year"],
                "extended_authorization": {"status": "disabled"}, "fingerprint": card["fingerprint"],
                "funding": card["funding"], "incremental_authorization": {"status": "unavailable"},
                "installments": None, "last4": card["last4"], "mandate": None,
                "multicapture": {"status": "unavailable"}, "network": card["brand"], "network_token": {"used": False},
                "overcapture": {"maximum_amount_capturable": amount, "status": "unavailable"},
                "three_d_secure": None, "wallet": None, "authorization_code": None, "regulated_status": "unregulated",
                "network_transaction_id": None, "transaction_link_id": None,
            },
            "type": "card",
        },
        "receipt_email": None, "receipt_number": None, "receipt_url": receipt_url, "refunded": False,
        "refunds": {"data": [], "has_more": False, "object": "list", "url": f"/v1/charges/{id}/refunds"},
        "review": None, "shipping": None, "source_transfer": None, "statement_descriptor": None,
        "statement_descriptor_suffix": None, "status": "succeeded", "transfer_data": None, "transfer_group": None,
        "source": None,
        # the pre-2025-03-31 shape
        "invoice": None,
    }


def declined_charge(amount: int) -> Obj:
    """What a card charge the issuer declined has instead of a succeeded one's fields
    (docs.stripe.com/api/charges/object: ``status`` ``failed``, ``failure_code``,
    ``failure_message``; ``outcome`` of type ``issuer_declined``, docs.stripe.com/declines):
    nothing paid or captured, no balance transaction, nothing authorized."""
    return {
        "amount_captured": 0, "captured": False, "paid": False, "status": "failed",
        "failure_code": "card_declined", "failure_message": "Your card was declined.",
        "outcome": {"advice_code": None, "network_advice_code": None, "network_decline_code": None,
                    "network_status": "declined_by_network", "reason": "generic_decline",
                    "seller_message": "The bank did not return any further details with this decline.",
                    "type": "issuer_declined"},
    }


#: A delayed-notification payment method (`world.DELAYED_METHODS`) -> the ``destination_details``
#: type its refund goes back by (stripe-python's ``Refund.DestinationDetails``: ``us_bank_transfer``,
#: ``eu_bank_transfer``, ``gb_bank_transfer``, ``br_bank_transfer``, each a ``reference`` and its
#: ``reference_status``). Any other method: ``card``.
REFUND_DESTINATIONS: Mapping[str, str] = {"us_bank_account": "us_bank_transfer", "sepa_debit": "eu_bank_transfer",
                                          "bacs_debit": "gb_bank_transfer", "boleto": "br_bank_transfer"}


def refund(*, id: str, amount: int, currency: str, charge: str, payment_intent: str | None, customer: str | None,
           payment_method: str | None, balance_transaction: str, reason: str | None, created: int,
           metadata: Mapping[str, str], method: str = "card") -> Obj:
    """A refund (docs.stripe.com/api/refunds/object): a card's ``succeeded`` at once; a delayed
    method's (`REFUND_DESTINATIONS`: ACH, SEPA, Bacs, Boleto) ``pending`` while the bank processes
    it (docs.stripe.com/refunds, "Refund failures": such a refund may still fail), its
    destination's reference ``pending``."""
    if method in REFUND_DESTINATIONS:
        kind = REFUND_DESTINATIONS[method]
        destination: Obj = {kind: {"reference": None, "reference_status": "pending"}, "type": kind}
        status = "pending"
    else:
        destination, status = {"card": {"type": "refund"}, "type": "card"}, "succeeded"
    return {
        "amount": amount, "balance_transaction": balance_transaction, "charge": charge, "created": created,
        "currency": currency, "destination_details": destination, "id": id,
        "metadata": dict(metadata), "object": "refund", "payment_intent": payment_intent, "reason": reason,
        "receipt_number": None, "source_transfer_reversal": None, "status": status, "transfer_reversal": None,
        "customer": customer, "customer_account": None, "payment_method": payment_method,
    }


def settled_refund(refund_obj: Mapping[str, Any], reference: str) -> Obj:
    """The changes of a pending refund the bank completed (``status`` ``succeeded``, its
    destination's ``reference`` ``available``: docs.stripe.com/api/refunds/object)."""
    kind = refund_obj["destination_details"]["type"]
    return {"status": "succeeded",
            "destination_details": {kind: {"reference": reference, "reference_status": "available"}, "type": kind}}


def failed_refund(refund_obj: Mapping[str, Any], failure_reason: str, failure_balance_transaction: str) -> Obj:
    """The changes of a pending refund the bank returned (docs.stripe.com/refunds, "Refund
    failures": ``status`` ``failed``, ``failure_reason`` (``expired_or_canceled_card``,
    ``lost_or_stolen_card``, ``unknown``…), the amount back in the balance by
    ``failure_balance_transaction``; docs.stripe.com/api/refunds/object)."""
    kind = refund_obj["destination_details"]["type"]
    return {"status": "failed", "failure_reason": failure_reason,
            "failure_balance_transaction": failure_balance_transaction,
            "destination_details": {kind: {"reference": None, "reference_status": "unavailable"}, "type": kind}}


#: Every status of a Dispute (docs.stripe.com/api/disputes/object ``status``): an inquiry's
#: ``warning_*``, a chargeback's ``needs_response``, ``under_review``, ``won``, ``lost``.
DISPUTE_STATUSES: tuple[str, ...] = ("warning_needs_response", "warning_under_review", "warning_closed",
                                     "needs_response", "under_review", "won", "lost")
#: The fields of a Dispute's ``evidence`` (Stripe's OpenAPI fixtures, ``resources.dispute``), each
#: null until the merchant submits some.
DISPUTE_EVIDENCE: tuple[str, ...] = (
    "access_activity_log", "billing_address", "cancellation_policy", "cancellation_policy_disclosure",
    "cancellation_rebuttal", "customer_communication", "customer_email_address", "customer_name",
    "customer_purchase_ip", "customer_signature", "duplicate_charge_documentation", "duplicate_charge_explanation",
    "duplicate_charge_id", "product_description", "receipt", "refund_policy", "refund_policy_disclosure",
    "refund_refusal_explanation", "service_date", "service_documentation", "shipping_address", "shipping_carrier",
    "shipping_date", "shipping_documentation", "shipping_tracking_number", "uncategorized_file",
    "uncategorized_text")
#: Seconds a merchant has to answer a chargeback in the world: ``evidence_details.due_by`` is the
#: end (23:59:59 UTC) of the seventh day after it opened (docs.stripe.com/disputes/responding: the
#: deadline is set by the card network, typically 7 to 21 days).
DISPUTE_RESPONSE_DAYS = 7


def dispute(*, id: str, amount: int, currency: str, charge: str, payment_intent: str | None, brand: str,
            reason: str, created: int, livemode: bool) -> Obj:
    """A new card chargeback (docs.stripe.com/api/disputes/object): ``needs_response``, no
    evidence yet, due by the end of its `DISPUTE_RESPONSE_DAYS`th day, no money moved yet
    (``balance_transactions`` empty until ``charge.dispute.funds_withdrawn``), the charge no
    longer refundable (``is_charge_refundable``: only an inquiry's charge is)."""
    due_by = (created // 86400 + DISPUTE_RESPONSE_DAYS + 1) * 86400 - 1
    return {
        "amount": amount, "balance_transactions": [], "charge": charge, "created": created, "currency": currency,
        "evidence": {**dict.fromkeys(DISPUTE_EVIDENCE), "enhanced_evidence": {}},
        "evidence_details": {"due_by": due_by, "has_evidence": False, "past_due": False, "submission_count": 0,
                             "enhanced_eligibility": {}},
        "id": id, "is_charge_refundable": False, "livemode": livemode, "metadata": {}, "object": "dispute",
        "payment_intent": payment_intent,
        "payment_method_details": {"card": {"brand": brand, "case_type": "chargeback",
                                            "network_reason_code": "10.4" if reason == "fraudulent" else "13.1",
                                            "network": brand},
                                   "type": "card"},
        "reason": reason, "status": "needs_response", "enhanced_eligibility_types": [],
    }


def balance_transaction(*, id: str, amount: int, fee: int, currency: str, kind: str, source: str, created: int,
                        description: str | None, category: str | None = None) -> Obj:
    """A balance transaction (docs.stripe.com/api/balance_transactions/object) of type `kind`,
    reported under `category` (default: `kind`; a dispute's ``adjustment`` is reported as
    ``dispute`` or ``dispute_reversal``)."""
    return {
        "amount": amount, "available_on": created + 2 * 86400, "created": created, "currency": currency,
        "description": description, "exchange_rate": None, "fee": fee,
        "fee_details": [{"amount": fee, "application": None, "currency": currency,
                         "description": "Dispute fee" if category == "dispute" else "Stripe processing fees",
                         "type": "stripe_fee"}] if fee else [],
        "id": id, "net": amount - fee, "object": "balance_transaction", "reporting_category": category or kind,
        "source": source, "status": "pending", "type": kind, "balance_type": "payments",
    }


def checkout_session(*, id: str, mode: str, customer: str | None, customer_email: str | None, currency: str,
                     amount: int, payment_method_types: list[str], client_reference_id: str | None,
                     metadata: Mapping[str, str], success_url: str | None, cancel_url: str | None, created: int,
                     livemode: bool) -> Obj:
    """An open checkout session (docs.stripe.com/api/checkout/sessions/object).

    In ``subscription`` mode Checkout always creates a customer when none is given
    (``customer_creation: "always"``; ``if_required`` is payment mode's), collects a payment
    method whatever is due (``payment_method_collection: "always"``, the default) and makes
    no one-off invoice (``invoice_creation: null``: payment mode only), as Stripe's own
    subscription-mode sessions say."""
    subscription = mode == "subscription"
    return {
        "after_expiration": None, "allow_promotion_codes": None, "amount_subtotal": amount, "amount_total": amount,
        "automatic_tax": {"enabled": False, "liability": None, "status": None, "provider": None},
        "billing_address_collection": None, "cancel_url": cancel_url, "client_reference_id": client_reference_id,
        "client_secret": None, "consent": None, "consent_collection": None, "created": created, "currency": currency,
        "custom_fields": [],
        "custom_text": {"after_submit": None, "shipping_address": None, "submit": None,
                        "terms_of_service_acceptance": None},
        "customer": customer,
        "customer_creation": None if customer else "always" if subscription else "if_required",
        "customer_details": None,
        "customer_email": customer_email, "expires_at": created + 86400, "id": id, "invoice": None,
        "invoice_creation": {"enabled": False,
                             "invoice_data": {"account_tax_ids": None, "custom_fields": None, "description": None,
                                              "footer": None, "issuer": None, "metadata": {},
                                              "rendering_options": None}} if mode == "payment" else None,
        "livemode": livemode, "locale": None, "metadata": dict(metadata), "mode": mode, "object": "checkout.session",
        "payment_intent": None, "payment_link": None,
        "payment_method_collection": "always" if subscription else "if_required",
        "payment_method_configuration_details": None, "payment_method_options": {},
        "payment_method_types": payment_method_types, "payment_status": "unpaid",
        "phone_number_collection": {"enabled": False}, "recovered_from": None, "saved_payment_method_options": None,
        "setup_intent": None, "shipping_address_collection": None, "shipping_cost": None, "shipping_options": [],
        "status": "open", "submit_type": None, "subscription": None, "success_url": success_url,
        "total_details": {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0}, "ui_mode": "hosted_page",
        "url": f"https://checkout.stripe.com/c/pay/{id}", "adaptive_pricing": {"enabled": False}, "discounts": [],
        "collected_information": None, "permissions": None, "wallet_options": None, "origin_context": None,
        "currency_conversion": None, "customer_account": None, "integration_identifier": None,
        "managed_payments": {"enabled": False},
    }


def item(*, id: str, pr: Mapping[str, Any], quantity: int, description: str) -> Obj:
    """A checkout session's line item (docs.stripe.com/api/checkout/sessions/line_items)."""
    amount = pr["unit_amount"] * quantity
    return {
        "amount_discount": 0, "amount_subtotal": amount, "amount_tax": 0, "amount_total": amount,
        "currency": pr["currency"], "description": description, "id": id, "object": "item", "price": dict(pr),
        "quantity": quantity, "metadata": {}, "adjustable_quantity": None,
    }


def customer_details(cus: Mapping[str, Any]) -> Obj:
    """``checkout.session.customer_details`` once the customer has paid."""
    return {"address": dict(cus["address"]), "email": cus["email"], "name": cus["name"], "phone": cus["phone"],
            "tax_exempt": "none", "tax_ids": [], "business_name": None, "individual_name": None}


#: The stages of a connected account's onboarding (`account`), in order.
ACCOUNT_STAGES: tuple[str, ...] = ("restricted", "pending", "enabled")

#: What a new connected account must provide before it can be enabled: the requirements of
#: Stripe's example Account (OpenAPI fixtures, ``resources.account.requirements.currently_due``).
ONBOARDING_DUE: tuple[str, ...] = ("business_profile.product_description", "business_profile.support_phone",
                                   "business_profile.url", "external_account", "tos_acceptance.date",
                                   "tos_acceptance.ip")

#: What Stripe still verifies once the details are submitted (``requirements.pending_verification``).
ONBOARDING_VERIFIED: tuple[str, ...] = ("business_profile.url",)


def account(*, id: str, name: str, currency: str, created: int, email: str | None, stage: str = "enabled",
            submitted: int | None = None) -> Obj:
    """The Stripe Account `id` (docs.stripe.com/api/accounts/object) at an onboarding `stage`
    (`ACCOUNT_STAGES`): ``restricted``, a new connected account that has submitted nothing
    (``details_submitted``, ``charges_enabled`` and ``payouts_enabled`` false, capabilities
    ``inactive``, `ONBOARDING_DUE` currently due, ``disabled_reason`` ``requirements.past_due``,
    as Stripe's example Account); ``pending``, its details submitted at unix second `submitted`
    (the business profile, the terms of service accepted; ``requirements`` emptied but for
    `ONBOARDING_VERIFIED` pending verification, capabilities ``pending``); ``enabled``, verified:
    charges and payouts enabled, capabilities ``active``, nothing due. An account with no
    `submitted` time accepted the terms when it was `created`. Raises ValueError for an unknown
    stage."""
    if stage not in ACCOUNT_STAGES:
        raise ValueError(f"no account stage {stage!r} (known: {', '.join(ACCOUNT_STAGES)})")
    restricted, enabled = stage == "restricted", stage == "enabled"
    requirements: Obj = {"alternatives": [], "current_deadline": None, "currently_due": [], "disabled_reason": None,
                         "errors": [], "eventually_due": [], "past_due": [], "pending_verification": []}
    future = dict(requirements)
    if restricted:
        requirements.update(currently_due=list(ONBOARDING_DUE), eventually_due=list(ONBOARDING_DUE),
                            disabled_reason="requirements.past_due")
    elif not enabled:
        requirements.update(pending_verification=list(ONBOARDING_VERIFIED),
                            disabled_reason="requirements.pending_verification")
    capability = "inactive" if restricted else "active" if enabled else "pending"
    profiled = not restricted and submitted is not None  # the business profile the onboarding collected
    accepted = None if restricted else submitted if submitted is not None else created
    return {
        "business_profile": {"annual_revenue": None, "estimated_worker_count": None, "mcc": None, "name": name,
                             "product_description": "Goods sold through the platform" if profiled else None,
                             "support_address": None, "support_email": None,
                             "support_phone": "+15555550100" if profiled else None, "support_url": None,
                             "url": "https://hookproof.example" if profiled else None,
                             "minority_owned_business_designation": None},
        "business_type": None, "capabilities": {"card_payments": capability, "transfers": capability},
        "charges_enabled": enabled, "controller": {"type": "account"}, "country": "US", "created": created,
        "default_currency": currency, "details_submitted": not restricted, "email": email,
        "external_accounts": {"data": [], "has_more": False, "object": "list",
                              "url": f"/v1/accounts/{id}/external_accounts"},
        "future_requirements": future, "id": id, "metadata": {}, "object": "account",
        "payouts_enabled": enabled, "requirements": requirements,
        "settings": {
            "bacs_debit_payments": {"display_name": None, "service_user_number": None},
            "branding": {"icon": None, "logo": None, "primary_color": None, "secondary_color": None},
            "card_issuing": {"tos_acceptance": {"date": None, "ip": None}},
            "card_payments": {"decline_on": {"avs_failure": False, "cvc_failure": False},
                              "statement_descriptor_prefix": None, "statement_descriptor_prefix_kana": None,
                              "statement_descriptor_prefix_kanji": None},
            "dashboard": {"display_name": name, "timezone": "Etc/UTC"},
            "invoices": {"default_account_tax_ids": None, "hosted_payment_method_save": "offer"},
            "payments": {"statement_descriptor": "HOOKPROOF", "statement_descriptor_kana": None,
                         "statement_descriptor_kanji": None, "statement_descriptor_prefix_kana": None,
                         "statement_descriptor_prefix_kanji": None},
            "payouts": {"debit_negative_balances": True, "schedule": {"delay_days": 2, "interval": "daily"},
                        "statement_descriptor": None},
            "sepa_debit_payments": {},
        },
        "tos_acceptance": {"date": accepted, "ip": "127.0.0.1" if profiled else None, "user_agent": None},
        "type": "standard",
    }


def account_status(obj: Mapping[str, Any]) -> str:
    """The onboarding status a platform derives from a connected Account's fields (Stripe's
    Account has no ``status``): ``enabled`` when ``charges_enabled`` and ``payouts_enabled``,
    else ``pending`` once ``details_submitted``, else ``restricted`` (`ACCOUNT_STAGES`)."""
    if obj.get("charges_enabled") and obj.get("payouts_enabled"):
        return "enabled"
    return "pending" if obj.get("details_submitted") else "restricted"
