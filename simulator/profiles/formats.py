"""Derived identifiers and time renderings shared by the profiles.

Every id a profile invents (message ids, delivery GUIDs, numeric notification ids)
is derived from the world's event id with a SHA-256, so it is stable across retries
and across runs with the same world, and distinct per profile through a namespace.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timezone

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ULID32 = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase (Paddle ids)

#: Namespace of every UUID a profile derives (uuid5 of ``"<namespace>:<value>"``).
HOOKPROOF_UUID_NAMESPACE = uuid.UUID("5b1f3c4e-8a0d-5c8e-9f57-6b0a3d2e1c47")


def _digest(namespace: str, value: str) -> bytes:
    return hashlib.sha256(f"{namespace}:{value}".encode("utf-8")).digest()


def derived_uuid(namespace: str, value: str) -> str:
    """A lowercase RFC 4122 UUID (version 5) derived from `value` within `namespace`."""
    return str(uuid.uuid5(HOOKPROOF_UUID_NAMESPACE, f"{namespace}:{value}"))


def derived_int(namespace: str, value: str, digits: int) -> int:
    """A positive integer of exactly `digits` decimal digits derived from `value`."""
    low = int(10 ** (digits - 1))
    return low + int.from_bytes(_digest(namespace, value), "big") % (9 * low)


def derived_token(namespace: str, value: str, length: int, alphabet: str = _BASE62) -> str:
    """A string of `length` characters from `alphabet` derived from `value`."""
    number = int.from_bytes(_digest(namespace, value) + _digest(namespace + "+", value), "big")
    chars = []
    for _ in range(length):
        number, rest = divmod(number, len(alphabet))
        chars.append(alphabet[rest])
    return "".join(chars)


def derived_ulid(namespace: str, value: str) -> str:
    """A 26-character lowercase Crockford base32 id starting ``01`` (a ULID's time prefix), the
    shape of Paddle's ids (its webhook pages' examples, developer.paddle.com/webhooks: ``evt_01gks14ge726w50ch2tmaw2a1x``)."""
    return "01" + derived_token(namespace, value, 24, _ULID32)


def _utc(created_us: int) -> datetime:
    return datetime.fromtimestamp(created_us // 1_000_000, tz=timezone.utc)


def rfc3339_us(created_us: int) -> str:
    """``2024-04-12T10:18:49.621022Z``: UTC, always six fractional digits (microseconds)."""
    return _utc(created_us).strftime("%Y-%m-%dT%H:%M:%S") + f".{created_us % 1_000_000:06d}Z"


def rfc3339_ns(created_us: int) -> str:
    """``2023-03-29T18:00:27.877041000Z``: UTC with nine fractional digits (nanoseconds)."""
    return _utc(created_us).strftime("%Y-%m-%dT%H:%M:%S") + f".{created_us % 1_000_000:06d}000Z"


def rfc3339_s(created_us: int) -> str:
    """``2021-11-01T02:02:02Z``: UTC, whole seconds."""
    return _utc(created_us).strftime("%Y-%m-%dT%H:%M:%SZ")
