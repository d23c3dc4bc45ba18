"""Applying a delivery's mutations to one attempt's request (pure)."""

from __future__ import annotations

import json
import weakref
from collections import deque
from dataclasses import dataclass, replace
from typing import Sequence

from hookproof.simulator.errors import SimulatorError
from hookproof.simulator.events import Event
from hookproof.simulator.faults import Mutation
from hookproof.simulator.frozen import fast_init
from hookproof.simulator.profiles.base import Envelope, Profile, SignedRequest
from hookproof.simulator.world.json_instances import with_flags

#: The least size of an oversized delivery's body, in bytes (a world's `big_event` reaches it).
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


#: `AttemptRequest(...)` without its frozen ``__init__`` (one per attempt; `simulator.frozen`).
_new_attempt_request = fast_init(AttemptRequest)


def reserialize(body: bytes) -> bytes:
    """The same JSON value in other bytes: sorted keys, indentation, ASCII escapes."""
    return json.dumps(json.loads(body), indent=2, sort_keys=True, ensure_ascii=True).encode("ascii")


def oversize(body: bytes, size_bytes: int = OVERSIZE_BYTES) -> bytes:
    """`body` itself, checked to be at least `size_bytes`: an oversized delivery is an event
    the world made that big through the provider's own fields (`big_event`: GitHub's push of
    many commits), never a body padded with a field the provider does not send."""
    if len(body) < size_bytes:
        raise SimulatorError(f"an oversized delivery's body is {len(body)} bytes, under {size_bytes}: "
                             "only a world's big_event is sent oversized")
    return body


def flip_livemode(event: Event) -> Event:
    """The event in the other mode (a live event to a test endpoint, or the reverse): its own
    flag and every ``livemode`` of its object, the objects inside it too (a subscription's
    items' prices and plans, an invoice's lines: Stripe's objects of one mode name only that
    mode's, so a live event carries no ``livemode: false`` anywhere). The event's object is
    never changed (`with_flags` copies what it turns). A user catalog's flags are turned where
    its body is rendered (`UserCatalog.body_of`)."""
    obj = with_flags(event.object, "livemode", not event.livemode)
    return replace(event, livemode=not event.livemode, object=obj)


def foreign_account_id(account: str) -> str:
    """The other account a ``foreign-account`` delivery names instead of `account` (the
    provider API serves that account's objects to its tokens only, `ServerState.add_world`)."""
    return "acct_" + "F0REIGN" + account[-9:].rjust(9, "0")


def other_mode_owner(livemode: bool) -> str:
    """The owner a ``test-mode-to-live`` world is served under (`ServerState.add_world`): the
    mode its events are delivered in (`livemode`), whose credentials the endpoint's are not, so
    the provider API answers the endpoint's token 404 for its objects, as a provider with
    separate test and live credentials does (Mercado Pago: a test notification URL "along with
    your test credentials", mercadopago.com.br/developers/en/docs/your-integrations/notifications/webhooks;
    Stripe: "a similar object exists in live mode, but a test mode key was used")."""
    return "mode:live" if livemode else "mode:test"


def foreign_account(event: Event) -> Event:
    """The event as another account's: a Connect event, so Stripe's carries that ``account``."""
    return replace(event, account=foreign_account_id(event.account), connected=True)


#: Envelopes already rendered, per profile (`_Rendered`).
_RENDERED: dict[str, "_Rendered"] = {}
#: Envelopes kept per profile at most, and their bodies' bytes at most: the oldest
#: rendered go first (a redelivery window of thousands of events still finds its own).
ENVELOPES_KEPT = 16384
ENVELOPE_BYTES_KEPT = 16 * 1024 * 1024


class _Rendered:
    """One profile's rendered envelopes: event id -> a weak reference to the event object,
    and its envelope (two flat dicts rather than one of pairs), the ids oldest first, and
    the bytes of the kept bodies.

    The event is referred to weakly: the cache does not keep events alive, nor the world
    objects they hold (a finished run's world, an earlier example's), so they are freed
    when their run lets go of them, not later by an eviction in the middle of another
    run's deliveries (freeing them there cost 2-2.5 us per request in
    `bench/dispatcher_throughput.py`). An event that is gone can never be asked for
    again, so the cache answers exactly as with the event itself."""

    __slots__ = ("body_bytes", "envelopes", "events", "order")

    def __init__(self) -> None:
        self.events: dict[str, weakref.ref[Event]] = {}
        self.envelopes: dict[str, Envelope] = {}
        self.order: deque[str] = deque()
        self.body_bytes = 0

    def keep(self, key: str, event: Event, envelope: Envelope) -> None:
        """Keep `envelope` of `event` under `key`, then drop the oldest kept until at most
        `ENVELOPES_KEPT` envelopes of at most `ENVELOPE_BYTES_KEPT` body bytes remain."""
        events, envelopes, order = self.events, self.envelopes, self.order
        replaced = envelopes.get(key)
        if replaced is None:
            order.append(key)
        else:  # another object of the same id: its place in the order stays
            self.body_bytes -= len(replaced.body)
        events[key] = weakref.ref(event)
        envelopes[key] = envelope
        self.body_bytes += len(envelope.body)
        while order and (len(order) > ENVELOPES_KEPT or self.body_bytes > ENVELOPE_BYTES_KEPT):
            oldest = order.popleft()
            del events[oldest]
            self.body_bytes -= len(envelopes.pop(oldest).body)


def envelope_of(profile: Profile, event: Event) -> Envelope:
    """`profile.envelope(event)`, rendered once per event object.

    An envelope is stable across every attempt of an event (body bytes, dedupe id,
    headers), so copies and retries reuse it; only the signature is made per attempt.
    The cache refers to the event weakly and is only hit by that very object; it keeps the
    latest `ENVELOPES_KEPT` envelopes (and `ENVELOPE_BYTES_KEPT` of bodies) per profile.
    """
    rendered = _RENDERED.get(profile.name)
    if rendered is None:
        rendered = _RENDERED[profile.name] = _Rendered()
    key = event.id
    kept = rendered.events.get(key)
    if kept is not None and kept() is event:
        return rendered.envelopes[key]
    envelope = profile.envelope(event)
    rendered.keep(key, event, envelope)
    return envelope


def build_attempt(profile: Profile, event: Event, secrets: Sequence[str], mutations: Sequence[Mutation],
                  *, now: int, attempt: int, seed: int = 0) -> AttemptRequest:
    """The signed request of one attempt of `event` with `mutations` applied at unix time `now`."""
    muts = tuple(mutations)
    if not muts:  # most attempts: the event's envelope, signed now
        envelope = envelope_of(profile, event)
        return _new_attempt_request(profile.request(envelope, secrets, now), now, muts, envelope.event_id)
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
        timestamp = now + profile.future_offset_s()
    if Mutation.TRANSPORT_FIELDS in muts and attempt > 1:
        timestamp = now + TRANSPORT_SHIFT_S
    keys = list(secrets)
    if Mutation.WRONG_SECRET in muts:
        keys = [profile.generate_secret(seed + 104729)]
    if Mutation.FORGED in muts:
        keys = [profile.generate_secret(seed + 15485863)]
    if Mutation.ROTATION in muts:
        keys = [profile.generate_secret(seed + 7919)] + keys
    if Mutation.ROTATION_OWN_FIRST in muts:
        keys = keys + [profile.generate_secret(seed + 7919)]
    request = profile.request(envelope, keys, timestamp)
    if Mutation.MISSING_SIGNATURE in muts:
        drop = {h.lower() for h in profile.signature_headers}
        request = replace(request, headers={k: v for k, v in request.headers.items() if k.lower() not in drop})
    return AttemptRequest(request=request, timestamp=timestamp, mutations=muts, event_id=envelope.event_id)
