"""A Lemon Squeezy store's receiver (an in-process ASGI app) for `tests/fixtures/lemonsqueezy/`.

Written from Lemon Squeezy's docs: it verifies ``X-Signature`` (lowercase hex HMAC-SHA256 of
the raw body; 401 otherwise), reads the event's name from ``X-Event-Name``, acknowledges and
ignores an event of the other mode (``meta.test_mode`` false: this store is in test mode) and
applies, each once, keyed as the provider lets it:

- ``order_created``: one license per order id (``license:{data.id}``);
- ``order_refunded``: one refund per order and cumulative refunded amount
  (``refund:{data.id}:{refunded_amount}``), refused with 422 when the amount is not an integer
  from 1 to the order's ``total`` or ``refunded_amount_usd`` is above ``total_usd`` (an Order's
  refunded amount never exceeds what was paid);
- ``subscription_payment_success``: one payment per invoice id (``payment:{data.id}``);
- ``license_key_created``: one license key per key id (``licensekey:{data.id}``);

and keeps each order's and subscription's status (an order ``paid``, then ``refunded``), written
only by an event whose ``updated_at`` is newer. It answers 200, the one status Lemon Squeezy
counts as received ("Webhook requests").

`reset` forgets everything and sets the store up (`SETUP`), each setting a receiver as the
docs allow or a twin that is not:

- ``mode_field``: the test-mode flag it reads: ``meta`` (``meta.test_mode``) or ``attributes``
  (the order's own ``data.attributes.test_mode``, "A boolean indicating if the object was
  created within test mode", the Order object): both correct; ``none``, a twin reading no
  flag, applies a live event too;
- ``ok_status``: what it answers an event it took (200; a twin's 202, which Lemon Squeezy
  retries);
- ``unique_order_number``: it claims each order by its ``order_number`` too (the store's
  sequential number, unique per store: a second order with one already claimed is taken for
  a redelivery, acknowledged and not licensed), as a store keeping ``UNIQUE(order_number)``.

`observe` is the python observer.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.support import answer_status, hmac_signed_request

SECRET = "lemon-s3cret"
LOCK = threading.Lock()
EFFECTS: list[str] = []
#: order or subscription id -> (updated_at, status)
STATES: dict[str, tuple[str, str]] = {}
#: What a refund was refused for (a body the receiver could not accept), for the tests to show.
REFUSED: list[str] = []
#: The order numbers claimed (``unique_order_number``).
ORDER_NUMBERS: set[int] = set()
#: How the store is set up (`reset`).
SETUP: dict[str, Any] = {"mode_field": "meta", "ok_status": 200, "unique_order_number": False}


def reset(*, mode_field: str = "meta", ok_status: int = 200, unique_order_number: bool = False) -> None:
    """Forget every delivery and set the store up (the module docstring)."""
    with LOCK:
        EFFECTS.clear()
        STATES.clear()
        REFUSED.clear()
        ORDER_NUMBERS.clear()
        SETUP.update(mode_field=mode_field, ok_status=ok_status, unique_order_number=unique_order_number)


def observe() -> dict[str, list[Any]]:
    """The python observer: the business keys applied, the orders' and subscriptions' statuses."""
    with LOCK:
        return {"effects": list(EFFECTS), "states": [{"object_id": k, "status": s} for k, (_, s) in STATES.items()],
                "state_kinds": ["order", "subscription"]}


def _apply(name: str, data: dict[str, Any]) -> int:
    """Apply one verified event of this store's mode; the status to answer."""
    oid, attributes = str(data["id"]), data.get("attributes") or {}
    key = None
    if name == "order_created":
        key = f"license:{oid}"
        number = attributes.get("order_number")
        if SETUP["unique_order_number"] and key not in EFFECTS:
            if number in ORDER_NUMBERS:  # that order number's order is licensed: taken for a redelivery
                return SETUP["ok_status"]
            ORDER_NUMBERS.add(number)
    elif name == "order_refunded":
        amount, total = attributes.get("refunded_amount"), attributes.get("total")
        usd, total_usd = attributes.get("refunded_amount_usd"), attributes.get("total_usd")
        if not (isinstance(amount, int) and isinstance(total, int) and 0 < amount <= total
                and isinstance(usd, int) and isinstance(total_usd, int) and 0 < usd <= total_usd):
            REFUSED.append(f"order {oid}: refunded_amount {amount} of total {total}, {usd} of {total_usd} USD")
            return 422
        key = f"refund:{oid}:{amount}"
    elif name == "subscription_payment_success":
        key = f"payment:{oid}"
    elif name == "license_key_created":
        key = f"licensekey:{oid}"
    if name in ("order_created", "order_refunded") or name.startswith("subscription_") and name != \
            "subscription_payment_success":
        updated, status = str(attributes["updated_at"]), str(attributes["status"])
        if oid not in STATES or STATES[oid][0] < updated:
            STATES[oid] = (updated, status)
    if key is not None and key not in EFFECTS:
        EFFECTS.append(key)
    return SETUP["ok_status"]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body, headers, signed = await hmac_signed_request(scope, receive, SECRET)
    if not signed:
        return await answer_status(send, 401)
    try:
        event = json.loads(body)
        name, data = headers["x-event-name"], event["data"]
        test_mode = (event["meta"]["test_mode"] if SETUP["mode_field"] == "meta" else True if SETUP["mode_field"] ==
                     "none" else data["attributes"]["test_mode"])
    except (ValueError, KeyError, TypeError):
        return await answer_status(send, 400)
    if test_mode is not True:  # a live event reaching the test store: acknowledged, not applied
        return await answer_status(send, SETUP["ok_status"])
    with LOCK:
        status = _apply(name, data)
    await answer_status(send, status)
