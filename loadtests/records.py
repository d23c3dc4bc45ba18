"""Attempt records of a storm: graded by the attempt core, and carried over the wire.

A storm user records every attempt as a `simulator.delivery.history.Attempt` graded by
the attempt core (`simulator.delivery.attempt_core.grade`), the same function the
dispatcher and the race transport grade theirs with: one answer, one outcome, one
completion and one reason whichever sender met it. An attempt still in flight when the
storm ended is ``unknown`` ("no answer before the storm ended").

Workers send their attempts to the master as rows (`attempt_row`: one list per attempt,
the history's `COLUMNS` in order, built straight from what the exchange observed and
the event's wire dict, graded by the same core) and the events they sent as plain
dicts (Locust custom messages are msgpack): `event_to_wire`/`event_from_wire` (events
travel slim: no object snapshot, which the checks never read).
`attempt_to_wire`/`attempt_from_wire` carry a whole `Attempt` as a dict (tests and
tools). Pure; no Locust import.
"""

from __future__ import annotations

import operator
from typing import Any, Iterator, Literal, Mapping, Sequence

from hookproof.simulator.delivery.attempt_core import Broke, Grade, Observed, SuccessRule, grade
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Profile

#: How a request without an HTTP answer ended (the short form tests and tools use;
#: a storm user records the full `Observed`).
ErrorKind = Literal["refused", "connect", "timeout", "broken", "overflow", "unfinished"]

#: The scenario label of every storm attempt.
STORM_SCENARIO = "storm"

#: The history's attempt columns (`Attempt` fields but `index`), in the order of a row
#: (`attempt_row`) and of the history's table.
COLUMNS: tuple[str, ...] = (
    "scenario", "event_id", "delivery_id", "attempt", "business_key", "object_id", "object_version", "event_type",
    "faults", "valid", "sent_at", "answered_at", "status", "outcome", "completion", "latency_ms",
    "response_excerpt", "error", "amount",
)

_KINDS: Mapping[str, tuple[bool, Broke | None]] = {
    "refused": (False, Broke.REFUSED),
    "connect": (False, Broke.CONNECT_FAILED),
    "timeout": (True, Broke.TIMEOUT),
    "broken": (True, Broke.OTHER),
    "overflow": (True, None),
    "unfinished": (True, Broke.UNFINISHED),
}


def observed_of(status: int | None, error_kind: ErrorKind | None, *, body: bytes = b"",
                detail: str | None = None) -> Observed:
    """The `Observed` of an attempt told by its status or its error kind.

    Raises ValueError when neither a status nor an error kind is given.
    """
    if error_kind == "overflow":
        return Observed(True, status if status is not None and status > 0 else 200, body, over_cap=True)
    if status is not None and status > 0:
        return Observed(True, status, body)
    if error_kind is None:
        raise ValueError("an attempt needs a status or an error kind")
    sent, broke = _KINDS[error_kind]
    return Observed(sent, body=body, broke=broke, detail=detail)


def outcome_of(status: int | None, error_kind: ErrorKind | None, profile: Profile) -> tuple[Outcome, bool]:
    """(outcome, request_sent) of one attempt from its status or its error kind.

    Raises ValueError when neither a status nor an error kind is given.
    """
    seen = observed_of(status, error_kind)
    return grade(seen, profile).outcome, seen.request_sent


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
    status: int | None = None,
    error_kind: ErrorKind | None = None,
    detail: str | None = None,
    body: bytes = b"",
    valid: bool = True,
    observed: Observed | None = None,
) -> Attempt:
    """The history record of one storm attempt, graded by the attempt core.

    Args:
        event / event_id: the world event and the id its envelope carries.
        sent_at: wall-clock unix seconds when sending started.
        latency_ms: milliseconds from sending to the answer (or the give-up).
        observed: what the transport observed (`loadtests.exchange`); without it,
            `status` or `error_kind` (with `detail` and the answer's first `body` bytes)
            tell it (`observed_of`).
    """
    seen = observed if observed is not None else observed_of(status, error_kind, body=body, detail=detail)
    graded = grade(seen, profile)
    return Attempt(
        event_id=event_id, delivery_id=delivery_id, attempt=attempt, business_key=event.business_key,
        object_id=event.object_id, object_version=event.version,
        event_type=profile.provider_type(event.type) or event.type, faults=tuple(tags), valid=valid,
        sent_at=sent_at, answered_at=sent_at + latency_ms / 1000.0,
        status=graded.status, outcome=graded.outcome, completion=graded.completion,
        latency_ms=round(latency_ms, 3), response_excerpt=graded.excerpt, error=graded.reason,
        amount=event.amount, scenario=STORM_SCENARIO,
    )


def attempt_row(*, event: Mapping[str, Any], event_type: str, event_id: str, delivery_id: str, attempt: int,
                tags: Sequence[str], rule: SuccessRule, sent_at: float, latency_ms: float,
                observed: Observed) -> list[Any]:
    """The history row of one storm attempt: `make_attempt`'s record as a list of the
    `COLUMNS` values, as `attempt_to_wire` gives them (faults a list, outcome and
    completion their values), graded by the attempt core.

    Args:
        event: the event as `event_to_wire` gives it (its business key, object id and
            version, amount).
        event_type: the profile's name of its type (`Profile.provider_type`, else the
            world's type).
        rule: the profile (its success statuses).
        sent_at: wall-clock unix seconds when sending started; `latency_ms`: milliseconds
            from sending to the answer (or the give-up).
    """
    return graded_row(event=event, event_type=event_type, event_id=event_id, delivery_id=delivery_id,
                      attempt=attempt, tags=tags, sent_at=sent_at, latency_ms=latency_ms, graded=grade(observed, rule))


def graded_row(*, event: Mapping[str, Any], event_type: str, event_id: str, delivery_id: str, attempt: int,
               tags: Sequence[str], sent_at: float, latency_ms: float, graded: Grade) -> list[Any]:
    """`attempt_row`'s row of an attempt already graded (`attempt_core.grade` of what it
    observed, by the profile): a storm grades each distinct observation once."""
    return [STORM_SCENARIO, event_id, delivery_id, attempt, event["business_key"], event["object_id"],
            event["version"], event_type, list(tags), True, sent_at, sent_at + latency_ms / 1000.0, graded.status,
            graded.outcome.value, graded.completion.value, round(latency_ms, 3), graded.excerpt, graded.reason,
            event["amount"]]


# ---- wire format ------------------------------------------------------------------------

def attempt_to_wire(a: Attempt) -> dict[str, Any]:
    """A msgpack-friendly dict of `a` (`Attempt.to_dict`'s, built field by field)."""
    d: dict[str, Any] = {name: getattr(a, name) for name in _ATTEMPT_FIELDS}
    d["faults"] = list(a.faults)
    d["outcome"] = a.outcome.value
    d["completion"] = a.completion.value
    return d


def row_of(a: Attempt) -> list[Any]:
    """`a` as a row (`attempt_row`'s shape)."""
    wire = attempt_to_wire(a)
    return [wire[name] for name in COLUMNS]


def attempt_from_wire(d: Mapping[str, Any]) -> Attempt:
    """The Attempt of `attempt_to_wire`'s dict. Raises ValueError/KeyError/TypeError on a bad dict."""
    data = dict(d)
    data["faults"] = tuple(data.get("faults") or ())
    data["outcome"] = Outcome(data["outcome"])
    data["completion"] = Completion(data["completion"])
    data["index"] = -1
    return Attempt(**data)


_ATTEMPT_FIELDS = (*COLUMNS, "index")

#: The fields of an event a storm record carries (`event_to_wire`), in that order.
EVENT_FIELDS = ("id", "type", "created", "created_us", "object_type", "object_id", "version", "business_key",
                "amount", "currency", "status", "livemode", "account", "api_version")


#: The values of `EVENT_FIELDS` of an event, as a tuple, read in one call.
_EVENT_VALUES = operator.attrgetter(*EVENT_FIELDS)


def event_to_wire(e: Event) -> dict[str, Any]:
    """The fields of `e` the checks read (no object snapshot), in `EVENT_FIELDS` order."""
    return dict(zip(EVENT_FIELDS, _EVENT_VALUES(e)))


def event_from_wire(d: Mapping[str, Any]) -> Event:
    """A slim Event (empty object snapshot) from `event_to_wire`'s dict."""
    return Event(object={}, **{name: d[name] for name in EVENT_FIELDS})


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
    "COLUMNS",
    "EVENT_FIELDS",
    "ErrorKind",
    "STORM_SCENARIO",
    "attempt_from_wire",
    "attempt_row",
    "attempt_to_wire",
    "chunked",
    "event_from_wire",
    "event_to_wire",
    "graded_row",
    "make_attempt",
    "observed_of",
    "outcome_of",
    "row_of",
]
