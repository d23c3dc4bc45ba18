"""The format of Stripe's webhook bodies, for tests: a sample body and an independent writer.

Raw bodies of real Stripe deliveries (captured by Stripe integrators between 2020 and
2024) are pretty-printed: two-space indentation, ``"key": value``, ``\\n`` line ends and
no newline after the last ``}``; an empty object is ``{`` then ``}`` on the next line at
the line's indent, an empty array has an empty line between its brackets; ``&`` is
escaped as ``\\u0026``; other text is raw UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

#: A body in the format of Stripe's captured deliveries (values of our own): the nesting,
#: empty containers, escapes and last line are those the captures show.
STRIPE_FORMAT = (
    b'{\n'
    b'  "id": "evt_1PrettyFormat",\n'
    b'  "object": "event",\n'
    b'  "api_version": "2024-06-20",\n'
    b'  "created": 1724344914,\n'
    b'  "data": {\n'
    b'    "object": {\n'
    b'      "id": "cs_test_a1",\n'
    b'      "object": "checkout.session",\n'
    b'      "customer_details": {\n'
    b'        "tax_ids": [\n'
    b'\n'
    b'        ]\n'
    b'      },\n'
    b'      "discounts": [\n'
    b'\n'
    b'      ],\n'
    b'      "metadata": {\n'
    b'      },\n'
    b'      "payment_method_types": [\n'
    b'        "card"\n'
    b'      ],\n'
    b'      "success_url": "https://example.com/ok?session_id={CHECKOUT_SESSION_ID}\\u0026acct=acct_1",\n'
    b'      "description": "Caf\xc3\xa9 \xe2\x98\x95"\n'
    b'    }\n'
    b'  },\n'
    b'  "livemode": false,\n'
    b'  "pending_webhooks": 1,\n'
    b'  "request": {\n'
    b'    "id": null,\n'
    b'    "idempotency_key": null\n'
    b'  },\n'
    b'  "type": "checkout.session.completed"\n'
    b'}'
)


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False).replace("&", "\\u0026")


def stripe_reference(value: Any, depth: int = 0) -> str:
    """`value` written by the format rule of the module docstring, one value at a time."""
    pad = "  " * depth
    inner = pad + "  "
    if isinstance(value, dict):
        if not value:
            return "{\n" + pad + "}"
        members = [f"{inner}{_scalar(str(k))}: {stripe_reference(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[\n\n" + pad + "]"
        return "[\n" + ",\n".join(inner + stripe_reference(v, depth + 1) for v in value) + "\n" + pad + "]"
    return _scalar(value)
