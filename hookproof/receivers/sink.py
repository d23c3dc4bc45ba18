"""A client for the downstream effect API (hookproof's effect sink) and a retry helper.

``POST {sink}/sink/effects`` with JSON ``{"business_key", "amount"}`` and an
``Idempotency-Key`` header. The sink answers 200 (a replay of the same key and body
answers the stored result), 409 while the same key is in flight, 503 on injected
failures, and may drop the connection after applying: all of those are transient.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable, TypeVar

import httpx

from hookproof.receivers.business import Effect

T = TypeVar("T")


class SinkError(Exception):
    """The sink refused the call for good (a 4xx other than 409/429)."""


class TransientSinkError(SinkError):
    """Worth retrying: in flight (409), throttled (429), 5xx, timeout or a dropped connection."""


class SinkClient:
    """Calls the effect sink with bounded timeouts (connect 2 s, total 5 s)."""

    def __init__(self, base_url: str, *, timeout_s: float = 5.0) -> None:
        self.client = httpx.Client(base_url=base_url.rstrip("/"), timeout=httpx.Timeout(timeout_s, connect=2.0))

    def post_effect(self, effect: Effect, idempotency_key: str) -> Any:
        """One call; returns the sink's JSON answer, raises TransientSinkError or SinkError."""
        try:
            response = self.client.post("/sink/effects", headers={"Idempotency-Key": idempotency_key},
                                        json={"business_key": effect.business_key, "amount": effect.amount})
        except httpx.TransportError as exc:  # refused, reset, dropped after applying, timed out
            raise TransientSinkError(f"sink call failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code in (409, 429) or response.status_code >= 500:
            raise TransientSinkError(f"sink answered {response.status_code}")
        if response.status_code >= 400:
            raise SinkError(f"sink refused the effect: {response.status_code} {response.text[:200]}")
        return response.json()

    def close(self) -> None:
        self.client.close()


def with_retries(call: Callable[[], T], *, attempts: int = 6, base_delay_s: float = 0.05, max_delay_s: float = 1.0) -> T:
    """`call()` until it succeeds, retrying TransientSinkError with capped exponential backoff and jitter."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except TransientSinkError:
            if attempt == attempts:
                raise
            delay = min(max_delay_s, base_delay_s * 2 ** (attempt - 1))
            time.sleep(delay * random.uniform(0.5, 1.0))
    raise AssertionError("unreachable")
