"""Attempt records of a storm: built like the dispatcher's, and carried over the wire.

A storm user records every attempt as a `simulator.delivery.history.Attempt`, with the
history's completion semantics (`completion_for`): a 2xx is ``ok``; a 4xx (or 3xx:
providers do not follow redirects) is ``fail``; a 5xx, a timeout after sending, a
broken connection after sending, an answer past the read cap, or an attempt still in
flight when the storm ended are ``unknown``; a refused connection is ``fail`` (it never reached the handler).

Workers send their attempts and the events they sent to the master as plain dicts
(Locust custom messages are msgpack): `attempt_to_wire`/`attempt_from_wire` and
`event_to_wire`/`event_from_wire` (events travel slim: no object snapshot, which the
checks never read). Pure; no Locust import.
"""

from __future__ import annotations

from typing import Any, Iterator, Literal, Mapping, Sequence

from hookproof.simulator.delivery.history import RESPONSE_EXCERPT_BYTES, Attempt, Completion, Outcome, completion_for
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Profile

#: How a request without an HTTP answer ended.
ErrorKind = Literal["refused", "connect", "timeout", "broken", "overflow", "unfinished"]

#: The scenario label of every storm attempt.
STORM_SCENARIO = "storm"

_ERROR_TEXT: Mapping[str, str] = {
    "refused": "connection refused: nothing listens there",
    "connect": "could not connect",
    "timeout": "read timed out after the request was sent",
    "broken": "the connection broke after sending",
    "overflow": "answered with a body longer than the read cap; the provider abandoned the answer",
    "unfinished": "the storm ended before the answer came",
}


def outcome_of(status: int | None, error_kind: ErrorKind | None, profile: Profile) -> tuple[Outcome, bool]:
    """(outcome, request_sent) of one attempt from its status or its error kind.

    Raises ValueError when neither a status nor an error kind is given.
    """
    if status is not None and status > 0:
        if profile.is_success(status):
            return Outcome.ACKED, True
        return (Outcome.SERVER_ERROR if status >= 500 else Outcome.REJECTED), True
    if error_kind in ("refused", "connect"):
        return Outcome.CONNECTION_ERROR, False
    if error_kind in ("timeout", "unfinished"):
        return Outcome.TIMEOUT, True
    if error_kind in ("broken", "overflow"):
        return Outcome.CONNECTION_ERROR, True
    raise ValueError("an attempt needs a status or an error kind")


def make_attempt(
    *,
    event: Event,
    event_id: str,
    delivery_id: str,
    attempt: int,
    tags: Sequence[str],
    profile: Profile,
    sent_at: float,
    latency_ms: float,
    status: int | None,
    error_kind: ErrorKind | None = None,
    detail: str | None = None,
    body: bytes = b"",
    valid: bool = True,
) -> Attempt:
    """The history record of one storm attempt.

    Args:
        event / event_id: the world event and the id its envelope carries.
        sent_at: wall-clock unix seconds when sending started.
        latency_ms: milliseconds from sending to the answer (or the give-up).
        status: the HTTP status, or None (then `error_kind` says what happened).
        detail: a plain-words addition to the error text (an exception's name).
        body: the answer's first bytes (the first 2 KiB are kept).
    """
    outcome, request_sent = outcome_of(status, error_kind, profile)
    error = None
    if status is None or status <= 0:
        error = _ERROR_TEXT[error_kind or "broken"] + (f" ({detail})" if detail else "")
    elif 300 <= status < 400:
        error = f"answered a {status} redirect; a provider does not follow redirects"
    return Attempt(
        event_id=event_id, delivery_id=delivery_id, attempt=attempt, business_key=event.business_key,
        object_id=event.object_id, object_version=event.version,
        event_type=profile.provider_type(event.type) or event.type, faults=tuple(tags), valid=valid,
        sent_at=sent_at, answered_at=sent_at + latency_ms / 1000.0,
        status=status if status is not None and status > 0 else None, outcome=outcome,
        completion=completion_for(outcome, valid=valid, request_sent=request_sent),
        latency_ms=round(latency_ms, 3),
        response_excerpt=body[:RESPONSE_EXCERPT_BYTES].decode("utf-8", "replace"),
        error=error, amount=event.amount, scenario=STORM_SCENARIO,
    )


# ---- wire format ------------------------------------------------------------------------

def attempt_to_wire(a: Attempt) -> dict[str, Any]:
    """A msgpack-friendly dict of `a` (`Attempt.to_dict`)."""
    return a.to_dict()


def attempt_from_wire(d: Mapping[str, Any]) -> Attempt:
    """The Attempt of `attempt_to_wire`'s dict. Raises ValueError/KeyError/TypeError on a bad dict."""
    data = dict(d)
    data["faults"] = tuple(data.get("faults") or ())
    data["outcome"] = Outcome(data["outcome"])
    data["completion"] = Completion(data["completion"])
    data["index"] = -1
    return Attempt(**data)


_EVENT_FIELDS = ("id", "type", "created", "created_us", "object_type", "object_id", "version", "business_key",
                 "amount", "currency", "status", "livemode", "account", "api_version")


def event_to_wire(e: Event) -> dict[str, Any]:
    """The fields of `e` the checks read (no object snapshot)."""
    return {name: getattr(e, name) for name in _EVENT_FIELDS}


def event_from_wire(d: Mapping[str, Any]) -> Event:
    """A slim Event (empty object snapshot) from `event_to_wire`'s dict."""
    return Event(object={}, **{name: d[name] for name in _EVENT_FIELDS})


def chunked(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """`items` in slices of at most `size` (at least one slice, possibly empty)."""
    if size < 1:
        raise ValueError("size must be >= 1")
    if not items:
        yield items
        return
    for i in range(0, len(items), size):
        yield items[i:i + size]


__all__ = [
    "ErrorKind",
    "STORM_SCENARIO",
    "attempt_from_wire",
    "attempt_to_wire",
    "chunked",
    "event_from_wire",
    "event_to_wire",
    "make_attempt",
    "outcome_of",
]
