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
of a few kilobytes (`bench/dispatcher_throughput.py` signs and sends such bodies). An
empty container's opened form depends only on what follows it (the next line's indent
gives its own), so one ``re.split`` per kind finds them all with what follows each, in
C, and each is replaced by a table lookup: no Python call per container.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

#: An empty object / array that is a whole value, and what follows it: it ends its line
#: (``,`` then a newline, or a newline, and the next line's indent), or the whole body. A
#: string cannot end a line (its closing quote comes first, and JSON escapes a newline
#: in it), so no match lies inside one. One literal each: the regex engine finds a literal
#: faster than ``bytes.find`` or ``bytes.split`` do a two-byte one.
_EMPTY_OBJECT = re.compile(rb"\{\}(,?\n *|\Z)")
_EMPTY_ARRAY = re.compile(rb"\[\](,?\n *|\Z)")
#: What follows an empty container -> the container opened, then that (`_opened`), per kind.
_OPENED_OBJECTS: dict[bytes, bytes] = {}
_OPENED_ARRAYS: dict[bytes, bytes] = {}
#: Entries each table keeps at most: a body holds one per indent and line end it uses.
_OPENED_KEPT = 1024


def _opened(after: bytes, head: bytes, tail: bytes) -> bytes:
    """An empty container written as `head`, its line's indent, `tail`, then `after`,
    what followed it (a group of `_EMPTY_OBJECT`): before a sibling (``,`` and a newline)
    the next line's indent is its own; before its container's closing bracket, its own
    less one level; at the end of the body, it is the body, at no indent."""
    if after[:1] == b",":
        indent = after[2:]
    elif after:
        indent = after[1:] + b"  "
    else:
        indent = b""
    return head + indent + tail + after


def _open_empty(body: bytes, pattern: re.Pattern[bytes], opened: dict[bytes, bytes], head: bytes,
                tail: bytes) -> bytes:
    """`body` with each match of `pattern` opened (`_opened`), the forms kept in `opened`."""
    parts = pattern.split(body)  # the pieces between the matches, each match's group between them
    if len(parts) == 1:
        return body
    found = opened.get
    for i in range(1, len(parts), 2):
        after = parts[i]
        form = found(after)
        if form is None:
            form = _opened(after, head, tail)
            if len(opened) < _OPENED_KEPT:
                opened[after] = form
        parts[i] = form
    return b"".join(parts)


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
    body = _open_empty(body, _EMPTY_OBJECT, _OPENED_OBJECTS, b"{\n", b"}")
    body = _open_empty(body, _EMPTY_ARRAY, _OPENED_ARRAYS, b"[\n\n", b"]")
    if b"&" in body:  # only ever inside a string: JSON has no other `&`
        body = body.replace(b"&", b"\\u0026")
    return body
