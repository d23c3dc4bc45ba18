"""Shopify Admin REST resources in Shopify's own shapes: orders, refunds, customers, the shop.

Field for field like the Admin REST API at version 2024-10 (shopify.dev/docs/api/admin-rest/2024-10:
"Order", "Refund", "Customer", "Shop", "Fulfillment" resources), whose ``GET`` answers Shopify's own
``@shopify/shopify-api`` tests replay (Shopify/shopify-app-js,
``packages/apps/shopify-api/rest/admin/__tests__/2024-10/{order,refund,customer,shop,fulfillment}.test.ts``;
copies in ``tests/fixtures/shopify/``). A webhook's body is that same resource
(shopify.dev/docs/apps/build/webhooks: "the payload is the REST resource of the topic").

Value types as Shopify renders them: ids are JSON integers (64-bit), with an
``admin_graphql_api_id`` ``gid://shopify/<Type>/<id>``; money is a string with two
decimals (``"10.00"``) beside a ``*_set`` of ``shop_money``/``presentment_money``; a
refund line's ``subtotal`` and ``total_tax`` are JSON numbers; times are ISO 8601 with
the shop's UTC offset and whole seconds (``2024-10-02T08:59:11-05:00``). Pure functions
of their fields; amounts are given in cents.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

#: The shop's time zone: Bogotá (UTC-05:00 all year, so offsets never change under DST).
SHOP_TZ = timezone(timedelta(hours=-5))
IANA_TIMEZONE = "America/Bogota"
#: The tax every line bears (one "State Tax" line, as in Shopify's example order).
TAX_RATE = 0.06
CURRENCY = "USD"


def shop_time(at_us: int) -> str:
    """``2024-10-02T08:59:11-05:00``: the shop's offset, whole seconds."""
    return datetime.fromtimestamp(at_us // 1_000_000, tz=SHOP_TZ).strftime("%Y-%m-%dT%H:%M:%S-05:00")


def money(cents: int) -> str:
    """``"10.00"`` for 1000 cents."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def money_set(cents: int, currency: str = CURRENCY) -> dict[str, Any]:
    """``{"shop_money": {...}, "presentment_money": {...}}`` (one currency: the shop's)."""
    amount = {"amount": money(cents), "currency_code": currency}
    return {"shop_money": dict(amount), "presentment_money": dict(amount)}


def gid(kind: str, object_id: int) -> str:
    """``gid://shopify/Order/450789469``."""
    return f"gid://shopify/{kind}/{object_id}"


def tax_of(cents: int) -> int:
    return round(cents * TAX_RATE)


@dataclass(frozen=True)
class Person:
    """A buyer: name, contact and one address (United States)."""

    first_name: str
    last_name: str
    email: str
    phone: str
    address1: str
    city: str
    province: str
    province_code: str
    zip: str
    latitude: float
    longitude: float


@dataclass(frozen=True)
class Product:
    """A product variant of the shop's catalogue."""

    product_id: int
    variant_id: int
    title: str
    variant_title: str
    sku: str
    price_cents: int
    grams: int


def address(p: Person) -> dict[str, Any]:
    """An order's ``billing_address``/``shipping_address``."""
    return {"first_name": p.first_name, "address1": p.address1, "phone": p.phone, "city": p.city, "zip": p.zip,
            "province": p.province, "country": "United States", "last_name": p.last_name, "address2": "",
            "company": None, "latitude": p.latitude, "longitude": p.longitude,
            "name": f"{p.first_name} {p.last_name}", "country_code": "US", "province_code": p.province_code}


def customer_address(p: Person, address_id: int, customer_id: int) -> dict[str, Any]:
    """A customer's ``default_address`` (and entry of ``addresses``)."""
    return {"id": address_id, "customer_id": customer_id, "first_name": p.first_name, "last_name": p.last_name,
            "company": None, "address1": p.address1, "address2": "", "city": p.city, "province": p.province,
            "country": "United States", "zip": p.zip, "phone": p.phone, "name": f"{p.first_name} {p.last_name}",
            "province_code": p.province_code, "country_code": "US", "country_name": "United States", "default": True}


def _consents(at: str) -> tuple[dict[str, Any], dict[str, Any]]:
    email = {"state": "not_subscribed", "opt_in_level": "single_opt_in", "consent_updated_at": at}
    sms = {"state": "not_subscribed", "opt_in_level": "single_opt_in", "consent_updated_at": at,
           "consent_collected_from": "OTHER"}
    return email, sms


def customer(customer_id: int, p: Person, *, address_id: int, created: str, updated: str, orders_count: int,
             total_spent_cents: int, last_order_id: int | None, last_order_name: str | None,
             tags: str = "") -> dict[str, Any]:
    """The Customer resource (``customers/create``, ``customers/update``, ``GET customers/{id}.json``)."""
    email, sms = _consents(created)
    home = customer_address(p, address_id, customer_id)
    return {"id": customer_id, "email": p.email, "created_at": created, "updated_at": updated,
            "first_name": p.first_name, "last_name": p.last_name, "orders_count": orders_count, "state": "disabled",
            "total_spent": money(total_spent_cents), "last_order_id": last_order_id, "note": None,
            "verified_email": True, "multipass_identifier": None, "tax_exempt": False, "tags": tags,
            "last_order_name": last_order_name, "currency": CURRENCY, "phone": p.phone, "addresses": [home],
            "tax_exemptions": [], "email_marketing_consent": email, "sms_marketing_consent": sms,
            "admin_graphql_api_id": gid("Customer", customer_id), "default_address": dict(home)}


def order_customer(full: dict[str, Any]) -> dict[str, Any]:
    """The ``customer`` an order embeds: the Customer resource without its order statistics."""
    keys = ("id", "email", "created_at", "updated_at", "first_name", "last_name", "state", "note", "verified_email",
            "multipass_identifier", "tax_exempt", "phone", "email_marketing_consent", "sms_marketing_consent", "tags",
            "currency", "tax_exemptions", "admin_graphql_api_id", "default_address")
    return {k: full[k] for k in keys}


def _line_tax(cents: int) -> list[dict[str, Any]]:
    return [{"channel_liable": False, "price": money(tax_of(cents)), "price_set": money_set(tax_of(cents)),
             "rate": TAX_RATE, "title": "State Tax"}]


def line_item(item_id: int, product: Product, quantity: int) -> dict[str, Any]:
    """One line of an order (``current_quantity`` falls as the line is refunded)."""
    cents = product.price_cents * quantity
    return {"id": item_id, "admin_graphql_api_id": gid("LineItem", item_id), "current_quantity": quantity,
            "fulfillable_quantity": quantity, "fulfillment_service": "manual", "fulfillment_status": None,
            "gift_card": False, "grams": product.grams, "name": f"{product.title} - {product.variant_title}",
            "price": money(product.price_cents), "price_set": money_set(product.price_cents), "product_exists": True,
            "product_id": product.product_id, "properties": [], "quantity": quantity, "requires_shipping": True,
            "sku": product.sku, "taxable": True, "title": product.title, "total_discount": "0.00",
            "total_discount_set": money_set(0), "variant_id": product.variant_id,
            "variant_inventory_management": "shopify", "variant_title": product.variant_title, "vendor": "Acme",
            "tax_lines": _line_tax(cents), "duties": [], "discount_allocations": []}


def shipping_line(line_id: int) -> dict[str, Any]:
    """Free standard shipping."""
    return {"id": line_id, "carrier_identifier": None, "code": "Standard", "discounted_price": "0.00",
            "discounted_price_set": money_set(0), "phone": None, "price": "0.00", "price_set": money_set(0),
            "requested_fulfillment_service_id": None, "source": "shopify", "title": "Standard", "tax_lines": [],
            "discount_allocations": []}


@dataclass(frozen=True)
class OrderIds:
    """The identifiers an order is born with."""

    order_id: int
    number: int
    checkout_id: int
    token: str
    cart_token: str
    checkout_token: str
    confirmation_number: str
    browser_ip: str


def totals(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """An order's money fields for `lines` at their ``current_quantity`` (``current_*``) and
    ``quantity`` (the originals)."""
    def sums(field: str) -> tuple[int, int]:
        sub = sum(round(float(li["price"]) * 100) * li[field] for li in lines)
        return sub, sum(tax_of(round(float(li["price"]) * 100) * li[field]) for li in lines)
    sub, tax = sums("quantity")
    cur_sub, cur_tax = sums("current_quantity")
    return {"subtotal": sub, "tax": tax, "total": sub + tax, "current_subtotal": cur_sub, "current_tax": cur_tax,
            "current_total": cur_sub + cur_tax}


def order(ids: OrderIds, *, shop_domain: str, shop_id: int, buyer: Person, cust: dict[str, Any],
          lines: list[dict[str, Any]], shipping_line_id: int, created: str, test: bool) -> dict[str, Any]:
    """A new order (``pending``: not yet paid); the world changes it as it is paid, fulfilled, refunded,
    cancelled."""
    t = totals(lines)
    order_tax = [{"price": money(t["tax"]), "rate": TAX_RATE, "title": "State Tax", "price_set": money_set(t["tax"]),
                  "channel_liable": False}]
    return {
        "id": ids.order_id, "admin_graphql_api_id": gid("Order", ids.order_id), "app_id": 580111,
        "browser_ip": ids.browser_ip, "buyer_accepts_marketing": False, "cancel_reason": None, "cancelled_at": None,
        "cart_token": ids.cart_token, "checkout_id": ids.checkout_id, "checkout_token": ids.checkout_token,
        "client_details": {"accept_language": "en-US,en;q=0.9", "browser_height": 900, "browser_ip": ids.browser_ip,
                           "browser_width": 1440, "session_hash": None,
                           "user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
        "closed_at": None, "confirmation_number": ids.confirmation_number, "confirmed": True,
        "contact_email": buyer.email, "created_at": created, "currency": CURRENCY,
        "current_subtotal_price": money(t["current_subtotal"]),
        "current_subtotal_price_set": money_set(t["current_subtotal"]),
        "current_total_additional_fees_set": None, "current_total_discounts": "0.00",
        "current_total_discounts_set": money_set(0), "current_total_duties_set": None,
        "current_total_price": money(t["current_total"]), "current_total_price_set": money_set(t["current_total"]),
        "current_total_tax": money(t["current_tax"]), "current_total_tax_set": money_set(t["current_tax"]),
        "customer_locale": "en-US", "device_id": None, "discount_codes": [], "email": buyer.email,
        "estimated_taxes": False, "financial_status": "pending", "fulfillment_status": None, "landing_site": "/",
        "landing_site_ref": None, "location_id": None, "merchant_of_record_app_id": None,
        "name": f"#{ids.number}", "note": None, "note_attributes": [], "number": ids.number - 1000,
        "order_number": ids.number,
        "order_status_url": f"https://{shop_domain}/{shop_id}/orders/{ids.token}/authenticate?key={ids.cart_token}",
        "original_total_additional_fees_set": None, "original_total_duties_set": None,
        "payment_gateway_names": ["shopify_payments"], "phone": buyer.phone, "po_number": None,
        "presentment_currency": CURRENCY, "processed_at": created, "reference": None, "referring_site": "",
        "source_identifier": None, "source_name": "web", "source_url": None,
        "subtotal_price": money(t["subtotal"]), "subtotal_price_set": money_set(t["subtotal"]), "tags": "",
        "tax_exempt": False, "tax_lines": order_tax, "taxes_included": False, "test": test, "token": ids.token,
        "total_discounts": "0.00", "total_discounts_set": money_set(0),
        "total_line_items_price": money(t["subtotal"]), "total_line_items_price_set": money_set(t["subtotal"]),
        "total_outstanding": money(t["total"]), "total_price": money(t["total"]),
        "total_price_set": money_set(t["total"]), "total_shipping_price_set": money_set(0),
        "total_tax": money(t["tax"]), "total_tax_set": money_set(t["tax"]), "total_tip_received": "0.00",
        "total_weight": sum(li["grams"] * li["quantity"] for li in lines), "updated_at": created, "user_id": None,
        "billing_address": address(buyer), "customer": order_customer(cust), "discount_applications": [],
        "fulfillments": [], "line_items": lines, "payment_terms": None, "refunds": [],
        "shipping_address": address(buyer), "shipping_lines": [shipping_line(shipping_line_id)],
    }


def current_totals(o: dict[str, Any]) -> dict[str, Any]:
    """The ``current_*`` money fields of order `o` after its lines' ``current_quantity`` changed."""
    t = totals(o["line_items"])
    return {"current_subtotal_price": money(t["current_subtotal"]),
            "current_subtotal_price_set": money_set(t["current_subtotal"]),
            "current_total_price": money(t["current_total"]), "current_total_price_set": money_set(t["current_total"]),
            "current_total_tax": money(t["current_tax"]), "current_total_tax_set": money_set(t["current_tax"])}


def refund_transaction(tx_id: int, *, order_id: int, parent_id: int, cents: int, at: str, payment_id: str,
                       authorization: str, test: bool) -> dict[str, Any]:
    """The ``refund`` transaction of a refund (as the Refund resource carries it)."""
    return {"id": tx_id, "order_id": order_id, "kind": "refund", "gateway": "shopify_payments", "status": "success",
            "message": "Refunded", "created_at": at, "test": test, "authorization": authorization,
            "location_id": None, "user_id": None, "parent_id": parent_id, "processed_at": at, "device_id": None,
            "error_code": None, "source_name": "1830279", "receipt": {}, "amount": money(cents),
            "currency": CURRENCY, "payment_id": payment_id,
            "total_unsettled_set": {"presentment_money": {"amount": "0.0", "currency": CURRENCY},
                                    "shop_money": {"amount": "0.0", "currency": CURRENCY}},
            "manual_payment_gateway": False, "admin_graphql_api_id": gid("OrderTransaction", tx_id)}


def refund_line(line_id: int, item: dict[str, Any], location_id: int) -> dict[str, Any]:
    """One refunded line (its whole quantity, returned to stock)."""
    cents = round(float(item["price"]) * 100) * item["quantity"]
    return {"id": line_id, "quantity": item["quantity"], "line_item_id": item["id"], "location_id": location_id,
            "restock_type": "return", "subtotal": cents / 100, "total_tax": tax_of(cents) / 100,
            "subtotal_set": money_set(cents), "total_tax_set": money_set(tax_of(cents)),
            "line_item": {k: v for k, v in item.items() if k != "current_quantity"}}


def refund(refund_id: int, *, order_id: int, at: str, note: str, user_id: int, lines: list[dict[str, Any]],
           transactions: list[dict[str, Any]]) -> dict[str, Any]:
    """The Refund resource (``refunds/create``)."""
    return {"id": refund_id, "order_id": order_id, "created_at": at, "note": note, "user_id": user_id,
            "processed_at": at, "restock": True, "duties": [], "total_duties_set": money_set(0),
            "additional_fees": [], "total_additional_fees_set": money_set(0), "return": None,
            "admin_graphql_api_id": gid("Refund", refund_id), "refund_line_items": lines,
            "transactions": transactions, "order_adjustments": []}


def order_refund(full: dict[str, Any]) -> dict[str, Any]:
    """A refund as an order's ``refunds`` lists it: no ``return``, transactions without
    their settlement fields, and each refunded line's ``current_quantity`` (0: refunded whole)."""
    out = {k: v for k, v in full.items() if k != "return"}
    out["refund_line_items"] = [{**r, "line_item": {**r["line_item"], "current_quantity": 0}}
                                for r in full["refund_line_items"]]
    out["transactions"] = [{k: v for k, v in t.items() if k not in ("total_unsettled_set", "manual_payment_gateway")}
                           for t in full["transactions"]]
    return out


#: The carrier of the world's fulfilments and its tracking page (Shopify's example fulfilment,
#: ``fulfillment.test.ts`` test_7: ``"tracking_company": "UPS"``, this URL with the number).
CARRIER = "UPS"
TRACKING_URL = "https://www.ups.com/WebTracking?loc=en_US&requester=ST&trackNums={number}"


def fulfillment(fulfillment_id: int, *, order_id: int, name: str, at: str, location_id: int,
                lines: list[dict[str, Any]], line_ids: list[int], tracking_number: str) -> dict[str, Any]:
    """The Fulfillment resource (``GET orders/{order_id}/fulfillments/{id}.json``): a manual
    shipment (``service`` ``manual``, ``status`` ``success``) of `lines` (the order's line items as
    fulfilled: ``fulfillable_quantity`` 0, ``fulfillment_status`` ``fulfilled``), each with its
    ``fulfillment_line_item_id`` from `line_ids`; `name` is the order's name and the fulfilment's
    number (``#1001.1``); one UPS tracking number. Shopify's example: ``fulfillment.test.ts`` test_2."""
    url = TRACKING_URL.format(number=tracking_number)
    items = [{**{k: v for k, v in li.items() if k != "current_quantity"}, "fulfillment_line_item_id": line_id}
             for li, line_id in zip(lines, line_ids)]
    return {"id": fulfillment_id, "order_id": order_id, "status": "success", "created_at": at, "service": "manual",
            "updated_at": at, "tracking_company": CARRIER, "shipment_status": None, "location_id": location_id,
            "origin_address": {}, "line_items": items, "tracking_number": tracking_number,
            "tracking_numbers": [tracking_number], "tracking_url": url, "tracking_urls": [url], "receipt": {},
            "name": name, "admin_graphql_api_id": gid("Fulfillment", fulfillment_id)}


def order_fulfillment(full: dict[str, Any], lines: list[dict[str, Any]]) -> dict[str, Any]:
    """A fulfilment as an order's ``fulfillments`` lists it (Shopify's example order,
    ``order.test.ts``): the resource's fields, its line items the order's own (with their
    ``current_quantity``, without ``fulfillment_line_item_id``)."""
    keys = ("id", "admin_graphql_api_id", "created_at", "location_id", "name", "order_id", "origin_address",
            "receipt", "service", "shipment_status", "status", "tracking_company", "tracking_number",
            "tracking_numbers", "tracking_url", "tracking_urls", "updated_at")
    return {**{k: full[k] for k in keys}, "line_items": [dict(li) for li in lines]}


def shop(shop_id: int, *, name: str, domain: str, owner: str, email: str, created: str, updated: str,
         primary_location_id: int) -> dict[str, Any]:
    """The Shop resource (the body of ``app/uninstalled``)."""
    return {"id": shop_id, "name": name, "email": email, "domain": domain, "province": "New York", "country": "US",
            "address1": "151 O'Connor Street", "zip": "10001", "city": "New York", "source": None,
            "phone": "2125550100", "latitude": 40.7506, "longitude": -73.9971, "primary_locale": "en",
            "address2": "", "created_at": created, "updated_at": updated, "country_code": "US",
            "country_name": "United States", "currency": CURRENCY, "customer_email": email,
            "timezone": "(GMT-05:00) Bogota", "iana_timezone": IANA_TIMEZONE, "shop_owner": owner,
            "money_format": "${{amount}}", "money_with_currency_format": "${{amount}} USD", "weight_unit": "kg",
            "province_code": "NY", "taxes_included": False, "auto_configure_tax_inclusivity": None,
            "tax_shipping": None, "county_taxes": True, "plan_display_name": "Basic", "plan_name": "basic",
            "has_discounts": False, "has_gift_cards": False, "myshopify_domain": domain, "google_apps_domain": None,
            "google_apps_login_enabled": None, "money_in_emails_format": "${{amount}}",
            "money_with_currency_in_emails_format": "${{amount}} USD", "eligible_for_payments": True,
            "requires_extra_payments_agreement": False, "password_enabled": False, "has_storefront": True,
            "finances": True, "primary_location_id": primary_location_id, "checkout_api_supported": True,
            "multi_location_enabled": True, "setup_required": False, "pre_launch_enabled": False,
            "enabled_presentment_currencies": [CURRENCY], "transactional_sms_disabled": False,
            "marketing_sms_consent_enabled_at_checkout": False}


# ---- the mandatory compliance topics ------------------------------------------------------
# Their bodies are no REST resource: shopify.dev "Privacy law compliance" (mandatory compliance
# webhooks) gives each payload, as does Shopify's app template (Shopify/shopify-app-template-node,
# web/privacy.js); ids are JSON integers, the customer's phone a string.

def compliance_customer(full: dict[str, Any]) -> dict[str, Any]:
    """The ``customer`` of a compliance payload: ``{id, email, phone}`` of the Customer resource."""
    return {"id": full["id"], "email": full["email"], "phone": full["phone"]}


def customers_data_request(*, shop_id: int, shop_domain: str, customer: dict[str, Any], orders: list[int],
                           request_id: int) -> dict[str, Any]:
    """The ``customers/data_request`` body: a customer asked the merchant for their data."""
    return {"shop_id": shop_id, "shop_domain": shop_domain, "orders_requested": list(orders),
            "customer": compliance_customer(customer), "data_request": {"id": request_id}}


def customers_redact(*, shop_id: int, shop_domain: str, customer: dict[str, Any], orders: list[int]) -> dict[str, Any]:
    """The ``customers/redact`` body: the merchant asked to erase a customer's data."""
    return {"shop_id": shop_id, "shop_domain": shop_domain, "customer": compliance_customer(customer),
            "orders_to_redact": list(orders)}


def shop_redact(*, shop_id: int, shop_domain: str) -> dict[str, Any]:
    """The ``shop/redact`` body: 48 hours after the app's uninstall, erase the shop's data."""
    return {"shop_id": shop_id, "shop_domain": shop_domain}


# ---- a product (the body of ``products/update``, which the receiver does not handle) ----------

def product_variant(p: Product, *, created: str, updated: str, inventory_item_id: int,
                    inventory: int = 100) -> dict[str, Any]:
    """The product's one variant (`Product.variant_id`, the variant its orders' line items name): a
    product always has at least one (shopify.dev, "Webhooks delivery structure": its
    ``products/update`` example's one variant), with the keys a ``products/update`` delivery's
    variants carry since 2024-07 (the REST-only ``grams``, ``weight``, ``fulfillment_service``…
    left out, as deliveries leave them)."""
    return {"admin_graphql_api_id": gid("ProductVariant", p.variant_id), "barcode": None, "compare_at_price": None,
            "created_at": created, "id": p.variant_id, "inventory_policy": "deny", "position": 1,
            "price": money(p.price_cents), "product_id": p.product_id, "sku": p.sku, "taxable": True,
            "title": p.variant_title, "updated_at": updated, "option1": p.variant_title, "option2": None,
            "option3": None, "image_id": None, "inventory_item_id": inventory_item_id,
            "inventory_quantity": inventory, "old_inventory_quantity": inventory}


def product_option(p: Product, option_id: int) -> dict[str, Any]:
    """The product's one option, ``Color``, whose only value is its variant's title."""
    return {"name": "Color", "id": option_id, "product_id": p.product_id, "position": 1, "values": [p.variant_title]}


def variant_gid(variant: dict[str, Any], updated_us: int) -> dict[str, Any]:
    """A ``variant_gids`` entry: the variant's gid and its ``updated_at`` in UTC with milliseconds
    (``2024-11-07T03:45:10.000Z``), as ``products/update`` deliveries write it."""
    at = datetime.fromtimestamp(updated_us // 1_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"admin_graphql_api_id": variant["admin_graphql_api_id"], "updated_at": at}
