"""Applying a delivery's mutations to one attempt's request (pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

from hookproof.simulator.events import Event
from hookproof.simulator.faults import Mutation
from hookproof.simulator.profiles.base import Envelope, Profile, SignedRequest

#: Size an oversized body is padded to, in bytes.
OVERSIZE_BYTES = 3 * 1024 * 1024
#: Seconds a stale timestamp lies beyond the profile's past tolerance.
STALE_MARGIN_S = 60
#: Seconds a retry's transport fields move forward (inside Paddle's ±5 s window).
TRANSPORT_SHIFT_S = 2


@dataclass(frozen=True, slots=True)
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
    """The event as another account's: a Connect event, so Stripe's carries that ``account``."""
    return replace(event, account="acct_" + "F0REIGN" + event.account[-9:].rjust(9, "0"), connected=True)


class _Rendered:
    """One profile's envelopes already rendered: event id -> the event object, its
    envelope, and its last plain attempt with the envelope and secrets it was signed
    from (flat dicts keyed by id: a cached envelope adds few objects of its own for the
    garbage collector to count and walk)."""

    __slots__ = ("envelopes", "events", "signed")

    def __init__(self) -> None:
        self.events: dict[str, Event] = {}
        self.envelopes: dict[str, Envelope] = {}
        self.signed: dict[str, tuple[Envelope, tuple[str, ...], AttemptRequest]] = {}


_RENDERED: dict[str, _Rendered] = {}
_ENVELOPES_MAX = 4096


def envelope_of(profile: Profile, event: Event) -> Envelope:
    """`profile.envelope(event)`, rendered once per event object.

    An envelope is stable across every attempt of an event (body bytes, dedupe id,
    headers), so copies and retries reuse it; only the signature is made per attempt.
    The cache holds the event itself and is only hit by that very object.
    """
    cache = _RENDERED.get(profile.name)
    if cache is None:
        cache = _RENDERED[profile.name] = _Rendered()
    events = cache.events
    key = event.id
    if events.get(key) is event:
        return cache.envelopes[key]
    envelope = profile.envelope(event)
    if len(events) >= _ENVELOPES_MAX:
        events.clear()
        cache.envelopes.clear()
        cache.signed.clear()
    events[key] = event
    cache.envelopes[key] = envelope
    return envelope


def _plain_attempt(profile: Profile, event: Event, secrets: Sequence[str], now: int) -> AttemptRequest:
    """The attempt of `event` without mutations at unix time `now`: the event's envelope
    signed with `secrets`. A profile is pure, so the copies and retries of one event
    sent within the same second are the same request: it is signed once and reused."""
    keys = tuple(secrets)
    envelope = envelope_of(profile, event)
    cache = _RENDERED[profile.name]
    key = event.id
    last = cache.signed.get(key)
    if last is not None and last[0] is envelope and last[2].timestamp == now and last[1] == keys:
        return last[2]
    built = AttemptRequest(profile.request(envelope, keys, now), now, (), envelope.event_id)
    cache.signed[key] = (envelope, keys, built)
    return built


def build_attempt(profile: Profile, event: Event, secrets: Sequence[str], mutations: Sequence[Mutation],
                  *, now: int, attempt: int, seed: int = 0) -> AttemptRequest:
    """The signed request of one attempt of `event` with `mutations` applied at unix time `now`."""
    muts = tuple(mutations)
    if not muts:  # most attempts: the event's envelope, signed now
        return _plain_attempt(profile, event, secrets, now)
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
