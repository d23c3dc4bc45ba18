"""Applying a delivery's mutations to one attempt's request (pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

from simulator.events import Event
from simulator.faults import Mutation
from simulator.profiles.base import Envelope, Profile, SignedRequest

#: Size an oversized body is padded to, in bytes.
OVERSIZE_BYTES = 3 * 1024 * 1024
#: Seconds a stale timestamp lies beyond the profile's past tolerance.
STALE_MARGIN_S = 60
#: Seconds a retry's transport fields move forward (inside Paddle's ±5 s window).
TRANSPORT_SHIFT_S = 2


@dataclass(frozen=True)
class AttemptRequest:
    """One attempt's signed request and whether the receiver must apply it."""

    request: SignedRequest
    timestamp: int
    mutations: tuple[Mutation, ...]
    event_id: str


def reserialize(body: bytes) -> bytes:
    """The same JSON value in other bytes: sorted keys, indentation, ASCII escapes."""
    return json.dumps(json.loads(body), indent=2, sort_keys=True, ensure_ascii=True).encode("ascii")


def oversize(body: bytes, size_bytes: int = OVERSIZE_BYTES) -> bytes:
    """The JSON object padded with a ``padding`` field to about `size_bytes`."""
    value: Any = json.loads(body)
    if isinstance(value, dict):
        value["padding"] = "x" * max(0, size_bytes - len(body))
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    return body + b" " * max(0, size_bytes - len(body))


def flip_livemode(event: Event) -> Event:
    """The event in the other mode (a live event to a test endpoint, or the reverse)."""
    obj = dict(event.object)
    if "livemode" in obj:
        obj["livemode"] = not event.livemode
    return replace(event, livemode=not event.livemode, object=obj)


def foreign_account(event: Event) -> Event:
    return replace(event, account="acct_" + "F0REIGN" + event.account[-9:].rjust(9, "0"))


#: Envelopes already rendered: (profile, event id) -> (the event object, its envelope).
_ENVELOPES: dict[tuple[str, str], tuple[Event, Envelope]] = {}
_ENVELOPES_MAX = 4096


def envelope_of(profile: Profile, event: Event) -> Envelope:
    """`profile.envelope(event)`, rendered once per event object.

    An envelope is stable across every attempt of an event (body bytes, dedupe id,
    headers), so copies and retries reuse it; only the signature is made per attempt.
    The cache holds the event itself and is only hit by that very object.
    """
    key = (profile.name, event.id)
    hit = _ENVELOPES.get(key)
    if hit is not None and hit[0] is event:
        return hit[1]
    envelope = profile.envelope(event)
    if len(_ENVELOPES) >= _ENVELOPES_MAX:
        _ENVELOPES.clear()
    _ENVELOPES[key] = (event, envelope)
    return envelope


def build_attempt(profile: Profile, event: Event, secrets: Sequence[str], mutations: Sequence[Mutation],
                  *, now: int, attempt: int, seed: int = 0) -> AttemptRequest:
    """The signed request of one attempt of `event` with `mutations` applied at unix time `now`."""
    muts = tuple(mutations)
    if Mutation.LIVEMODE_MISMATCH in muts:
        event = flip_livemode(event)
    if Mutation.FOREIGN_ACCOUNT in muts:
        event = foreign_account(event)
    envelope = envelope_of(profile, event)
    if Mutation.RESERIALIZE in muts:
        envelope = envelope.with_body(reserialize(envelope.body))
    if Mutation.OVERSIZE in muts:
        envelope = envelope.with_body(oversize(envelope.body))
    timestamp = now
    tol = profile.tolerance
    if Mutation.STALE_TIMESTAMP in muts:
        timestamp = now - int(tol.past_s if tol.past_s is not None else 300) - STALE_MARGIN_S
    if Mutation.FUTURE_TIMESTAMP in muts:
        timestamp = now + int(tol.future_s if tol.future_s is not None else 3600) + STALE_MARGIN_S
    if Mutation.TRANSPORT_FIELDS in muts and attempt > 1:
        timestamp = now + TRANSPORT_SHIFT_S
    keys = list(secrets)
    if Mutation.WRONG_SECRET in muts:
        keys = [profile.generate_secret(seed + 104729)]
    if Mutation.FORGED in muts:
        keys = [profile.generate_secret(seed + 15485863)]
    if Mutation.ROTATION in muts:
        keys = [profile.generate_secret(seed + 7919)] + keys
    request = profile.request(envelope, keys, timestamp)
    if Mutation.MISSING_SIGNATURE in muts:
        drop = {h.lower() for h in profile.signature_headers}
        request = replace(request, headers={k: v for k, v in request.headers.items() if k.lower() not in drop})
    return AttemptRequest(request=request, timestamp=timestamp, mutations=muts, event_id=envelope.event_id)
