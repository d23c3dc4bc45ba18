"""Stripe's form encoding of request parameters, decoded into nested values.

The stripe SDKs send ``application/x-www-form-urlencoded`` bodies with bracketed keys
(stripe-python `stripe/_encode.py` `_api_encode`): ``metadata[order]=7`` is a hash,
``line_items[0][price]=price_…`` a list of hashes, ``expand[0]=customer`` (or
``expand[]=customer``) a list. `decode` turns those pairs back into dicts and lists.
"""

from __future__ import annotations

import re
from typing import Any, Iterable
from urllib.parse import parse_qsl

#: Largest form body the API reads (bytes).
MAX_FORM_BYTES = 256 * 1024

_PART = re.compile(r"\[([^\[\]]*)\]")


class FormError(ValueError):
    """A parameter that cannot be decoded; `param` names it."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


def decode_body(body: bytes) -> dict[str, Any]:
    """Decode a form body (UTF-8). Raises FormError for a body too large or not UTF-8."""
    if len(body) > MAX_FORM_BYTES:
        raise FormError(f"the request body is larger than {MAX_FORM_BYTES} bytes", "body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError("the request body is not UTF-8", "body") from None
    return decode(parse_qsl(text, keep_blank_values=True))


def decode(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Nested parameters from bracketed ``(key, value)`` pairs. Raises FormError on a clash."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        head, _, tail = key.partition("[")
        parts = [head] + (_PART.findall("[" + tail) if tail else [])
        if not head:
            raise FormError(f"invalid parameter name {key!r}", key)
        _put(root, parts, value, key)
    decoded = _lists(root)
    if not isinstance(decoded, dict):
        raise FormError("parameter names must not be numbers", "body")
    return decoded


def _put(node: dict[str, Any], parts: list[str], value: str, key: str) -> None:
    for i, part in enumerate(parts[:-1]):
        if part == "":
            part = str(len(node))
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise FormError(f"parameter {key!r} clashes with another of the same name", key)
        node = child
    last = parts[-1] if parts[-1] != "" else str(len(node))
    if isinstance(node.get(last), dict):
        raise FormError(f"parameter {key!r} clashes with another of the same name", key)
    node[last] = value


def _lists(value: Any) -> Any:
    """Hashes whose keys are 0..n-1 become lists."""
    if not isinstance(value, dict):
        return value
    out = {k: _lists(v) for k, v in value.items()}
    if out and all(k.isdigit() for k in out) and sorted(int(k) for k in out) == list(range(len(out))):
        return [out[str(i)] for i in range(len(out))]
    return out
