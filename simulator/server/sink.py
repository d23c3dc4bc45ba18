"""The effect sink's store: applied effects, idempotency keys and per-key faults.

A receiver under test can perform its business effects by calling the simulator's
downstream API (``POST /sink/effects``, or any path under ``/sink/``: a receiver calls
its downstream service on its own paths, ``/sink/licenses``, ``/sink/v1/refunds``),
which records them, with the path, like a real idempotent API. The rules follow Stripe's documented v1 idempotency (docs.stripe.com/api/
idempotent_requests): the status and body of the first request with a key are saved
once the endpoint starts executing, and later requests with the same key and the same
parameters get the saved answer back (flagged ``Idempotent-Replayed: true``) without a
new effect; the same key with other parameters is an error (422 here, as the brief and
the IETF Idempotency-Key draft say); a request arriving while the first one with its
key still executes is a 409 conflict and nothing is saved for it; requests that fail
validation save nothing. Keys are at most 255 characters. Keys never expire here (a
run lasts minutes, Stripe keeps them at least 24 hours).

Faults per business key, consumed one per request in this order:

- ``fail_times``: answer `fail_status` (503) before the endpoint executes, so nothing
  is saved under the idempotency key and a retry with the same key goes through;
- ``delay_s``: hold the request this long while it executes (the key is in flight);
- ``drop_times``: apply the effect, save the answer, then drop the connection without
  answering (the receiver cannot know that it succeeded).

Thread-safe: the server's event loop and the scenario's thread share one store.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Mapping

#: Longest Idempotency-Key accepted (Stripe: "up to 255 characters").
MAX_IDEMPOTENCY_KEY_CHARS = 255
#: The path of the sink's own effect endpoint, under its ``/sink`` base.
DEFAULT_PATH = "/effects"


def sink_path(path: str) -> str:
    """A called path under the ``/sink`` base, normalised: one leading slash, no trailing
    one, no empty, ``.`` or ``..`` segments. Raises ValueError for a path that leaves the
    base or names nothing."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"not a path under the sink's base: {path!r}")
    return "/" + "/".join(parts)


@dataclass(frozen=True)
class SinkRecord:
    """One applied effect.

    Attributes:
        id: ``eff_<n>``, in application order.
        business_key: the effect's business key.
        amount: minor units, or None.
        idempotency_key: the request's ``Idempotency-Key``, or None.
        detail: free JSON the receiver sent along, or None.
        at: unix seconds when it was applied.
        path: the path the receiver called, under the sink's ``/sink`` base
            (``/effects``, ``/licenses``, ``/v1/refunds``).
    """

    id: str
    business_key: str
    amount: int | None
    idempotency_key: str | None
    detail: Any
    at: float
    path: str = DEFAULT_PATH

    def as_json(self) -> dict[str, Any]:
        """``{"id","business_key","amount","idempotency_key","detail","at","path"}``."""
        return {"id": self.id, "business_key": self.business_key, "amount": self.amount,
                "idempotency_key": self.idempotency_key, "detail": self.detail, "at": self.at, "path": self.path}


@dataclass
class SinkFault:
    """Faults armed for one business key (see the module docstring)."""

    fail_times: int = 0
    fail_status: int = 503
    drop_times: int = 0
    delay_s: float = 0.0


class Admission(Enum):
    """What to do with a request that carries an Idempotency-Key."""

    PROCEED = "proceed"      # the key is now in flight: execute, then `finish` or `abandon`
    REPLAY = "replay"        # same key, same parameters: answer the saved response
    MISMATCH = "mismatch"    # same key, other parameters: 422
    IN_FLIGHT = "in_flight"  # the first request with this key still executes: 409


@dataclass(frozen=True)
class SavedAnswer:
    """The saved status and JSON body of the first request with a key."""

    status: int
    body: Mapping[str, Any]


@dataclass
class _KeyEntry:
    fingerprint: str
    answer: SavedAnswer | None  # None while in flight


@dataclass(frozen=True)
class FaultStep:
    """The faults one request meets (consumed from the key's `SinkFault`)."""

    fail_status: int | None = None
    delay_s: float = 0.0
    drop: bool = False


def fingerprint(params: Mapping[str, Any]) -> str:
    """Canonical JSON of the request's parameters (key order and spacing ignored)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class EffectSink:
    """Thread-safe store behind ``/sink/effects``.

    Args:
        clock: unix seconds for the records' `at` (injectable).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._records: list[SinkRecord] = []
        self._keys: dict[str, _KeyEntry] = {}
        self._faults: dict[str, SinkFault] = {}
        self._next = 1

    # ---- faults -----------------------------------------------------------------
    def fault(self, business_key: str, *, fail_times: int = 0, fail_status: int = 503,
              drop_times: int = 0, delay_s: float = 0.0) -> SinkFault:
        """Arm faults for `business_key` (replacing earlier ones). Raises ValueError."""
        if fail_times < 0 or drop_times < 0 or delay_s < 0:
            raise ValueError("fail_times, drop_times and delay_s must be >= 0")
        if not 400 <= fail_status <= 599:
            raise ValueError(f"fail_status must be 4xx or 5xx, not {fail_status}")
        armed = SinkFault(fail_times, fail_status, drop_times, delay_s)
        with self._lock:
            self._faults[business_key] = armed
        return armed

    def clear_faults(self) -> None:
        """Disarm every fault."""
        with self._lock:
            self._faults.clear()

    def faults(self) -> dict[str, SinkFault]:
        """The armed faults by business key (copies)."""
        with self._lock:
            return {k: SinkFault(f.fail_times, f.fail_status, f.drop_times, f.delay_s) for k, f in self._faults.items()}

    def take_fault(self, business_key: str) -> FaultStep:
        """Consume the faults one request with `business_key` meets."""
        with self._lock:
            armed = self._faults.get(business_key)
            if armed is None:
                return FaultStep()
            if armed.fail_times > 0:
                armed.fail_times -= 1
                return FaultStep(fail_status=armed.fail_status)
            drop = armed.drop_times > 0
            if drop:
                armed.drop_times -= 1
            return FaultStep(delay_s=armed.delay_s, drop=drop)

    # ---- idempotency ------------------------------------------------------------
    def admit(self, key: str, params_fingerprint: str) -> tuple[Admission, SavedAnswer | None]:
        """Decide a request with Idempotency-Key `key`; PROCEED marks the key in flight."""
        with self._lock:
            entry = self._keys.get(key)
            if entry is None:
                self._keys[key] = _KeyEntry(params_fingerprint, None)
                return Admission.PROCEED, None
            if entry.answer is None:
                return Admission.IN_FLIGHT, None
            if entry.fingerprint != params_fingerprint:
                return Admission.MISMATCH, None
            return Admission.REPLAY, entry.answer

    def finish(self, key: str, answer: SavedAnswer) -> None:
        """Save the answer of the in-flight request with `key`."""
        with self._lock:
            entry = self._keys.get(key)
            if entry is not None:
                entry.answer = answer

    def abandon(self, key: str) -> None:
        """Forget an in-flight key whose request saved nothing (it may be retried)."""
        with self._lock:
            entry = self._keys.get(key)
            if entry is not None and entry.answer is None:
                del self._keys[key]

    # ---- effects ----------------------------------------------------------------
    def apply(self, business_key: str, *, amount: int | None = None, idempotency_key: str | None = None,
              detail: Any = None, path: str = DEFAULT_PATH) -> SinkRecord:
        """Record one effect, called at `path` (under ``/sink``), and return it."""
        with self._lock:
            record = SinkRecord(f"eff_{self._next}", business_key, amount, idempotency_key, detail, self._clock(),
                                path)
            self._next += 1
            self._records.append(record)
            return record

    def records(self) -> list[SinkRecord]:
        """Every applied effect, in application order (a copy)."""
        with self._lock:
            return list(self._records)

    def counts(self) -> dict[str, int]:
        """Applied effects per business key."""
        out: dict[str, int] = {}
        for record in self.records():
            out[record.business_key] = out.get(record.business_key, 0) + 1
        return out

    def listing(self) -> dict[str, Any]:
        """The body of ``GET /sink/effects``: ``{"effects": [...], "counts": {...}}``."""
        records = self.records()
        counts: dict[str, int] = {}
        for record in records:
            counts[record.business_key] = counts.get(record.business_key, 0) + 1
        return {"effects": [r.as_json() for r in records], "counts": counts}

    def clear(self) -> int:
        """Forget every effect, idempotency key and fault. Returns the effects forgotten."""
        with self._lock:
            n = len(self._records)
            self._records.clear()
            self._keys.clear()
            self._faults.clear()
            return n
