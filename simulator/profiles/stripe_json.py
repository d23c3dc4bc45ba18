"""Stripe's webhook body bytes: the Event object pretty-printed as Stripe sends it.

Stripe signs and sends each webhook body as indented JSON, not compact JSON: its
engineers say "every space, new line, indentation, etc. matters" (stripe-php#884), and
the body's lines end in ``\\n`` (stripe-dotnet#1506, stripe-node#1981). Raw bodies of
Stripe deliveries captured from 2020 to 2024 and kept as test fixtures by Stripe
integrators show the rest of the format, byte for byte:

- two spaces per level, ``"key": value``, one member or element per line, ``\\n`` line
  ends, no newline after the closing ``}``;
- an empty object opened on its line and closed on the next at the line's indent
  (``"metadata": {\\n      }``), an empty array with an empty line between its brackets
  (``"tax_rates": [\\n\\n      ]``), never ``{}`` or ``[]``;
- ``&`` in a string escaped as ``\\u0026`` (``success_url": "...?session_id=...\\u0026acct=...``);
  other non-ASCII text is sent as raw UTF-8 (no fixture shows it escaped).

`stripe_json` renders that with orjson's 2-space indentation (``"key": value``, raw
UTF-8), then opens the empty containers and escapes ``&``: a few microseconds on a body
of a few kilobytes (`bench/dispatcher_throughput.py` signs and sends such bodies).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

#: An empty array / object that is a whole value: ending its line. A string cannot end a
#: line (its closing quote comes first), so no match lies inside one. One literal each:
#: the regex engine finds a literal faster than ``bytes.find`` does a two-byte one.
_EMPTY_ARRAY = re.compile(rb"\[\](?=,?\n|,?\Z)")
_EMPTY_OBJECT = re.compile(rb"\{\}(?=,?\n|,?\Z)")


def _indent(body: bytes, at: int) -> bytes:
    """The spaces that begin the line of `body` holding offset `at`."""
    line = body[body.rfind(b"\n", 0, at) + 1:at]
    return line[:len(line) - len(line.lstrip(b" "))]


def _opened_array(match: re.Match[bytes]) -> bytes:
    return b"[\n\n" + _indent(match.string, match.start()) + b"]"


def _opened_object(match: re.Match[bytes]) -> bytes:
    return b"{\n" + _indent(match.string, match.start()) + b"}"


def stripe_json(value: Any) -> bytes:
    """`value` as the UTF-8 bytes of a Stripe webhook body (module docstring).

    Key order is kept. Values orjson refuses (integers past 64 bits, keys that are not
    strings) are written as ``json.dumps(value, indent=2, ensure_ascii=False)`` writes
    them, then given the same empty containers and escapes.
    Raises TypeError/ValueError for a value json cannot write either.
    """
    try:
        body = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        try:
            body = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:
            body = json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")
    body = _EMPTY_OBJECT.sub(_opened_object, body)
    body = _EMPTY_ARRAY.sub(_opened_array, body)
    if b"&" in body:  # only ever inside a string: JSON has no other `&`
        body = body.replace(b"&", b"\\u0026")
    return body
