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
only by an event whose ``updated_at`` is newer.
`observe` is the python observer; `reset` forgets everything.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from typing import Any

SECRET = "lemon-s3cret"
LOCK = threading.Lock()
EFFECTS: list[str] = []
#: order or subscription id -> (updated_at, status)
STATES: dict[str, tuple[str, str]] = {}
#: What a refund was refused for (a body the receiver could not accept), for the tests to show.
REFUSED: list[str] = []


def reset() -> None:
    """Forget every delivery."""
    with LOCK:
        EFFECTS.clear()
        STATES.clear()
        REFUSED.clear()


def observe() -> dict[str, list[Any]]:
    """The python observer: the business keys applied, the orders' and subscriptions' statuses."""
    with LOCK:
        return {"effects": list(EFFECTS), "states": [{"object_id": k, "status": s} for k, (_, s) in STATES.items()],
                "state_kinds": ["order", "subscription"]}


async def _answer(send: Any, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": str(status).encode()})


def _apply(name: str, data: dict[str, Any]) -> int:
    """Apply one verified event of this store's mode; the status to answer."""
    oid, attributes = str(data["id"]), data.get("attributes") or {}
    key = None
    if name == "order_created":
        key = f"license:{oid}"
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
    return 200


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(headers.get("x-signature", ""), expected):
        return await _answer(send, 401)
    try:
        event = json.loads(body)
        name, data, test_mode = headers["x-event-name"], event["data"], event["meta"]["test_mode"]
    except (ValueError, KeyError, TypeError):
        return await _answer(send, 400)
    if test_mode is not True:  # a live event reaching the test store: acknowledged, not applied
        return await _answer(send, 200)
    with LOCK:
        status = _apply(name, data)
    await _answer(send, status)
