"""Fault plans: a pure model from (events, plan) to an ordered delivery schedule.

A `FaultPlan` says what the provider does to deliveries: how many copies, how far apart,
how many released together (a race burst), in which order, how many answers it
discards, how long it waits, and what it changes on each attempt (`Mutation`).
`schedule(events, plan)` turns it into `Step`s the dispatcher runs in order; each step
releases its deliveries together. No I/O, no clock: the same input, the same schedule.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Sequence

from hookproof.simulator.errors import FaultPlanError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Profile


class Mutation(StrEnum):
    """A change the provider (or an attacker) makes to one attempt."""

    RESERIALIZE = "reserialize"  # same event, other JSON bytes (key order, spaces, \\u escapes)
    TRANSPORT_FIELDS = "transport-fields"  # new timestamp and signature on the retry
    FORGED = "forged"  # signature made with a key the receiver does not know, same format
    MISSING_SIGNATURE = "missing-signature"  # signature headers omitted
    STALE_TIMESTAMP = "stale-timestamp"  # valid signature over a timestamp past the tolerance
    FUTURE_TIMESTAMP = "future-timestamp"  # valid signature over a timestamp in the future
    WRONG_SECRET = "wrong-secret"  # signed with another endpoint's secret
    ROTATION = "rotation"  # signed with an unknown new secret and the receiver's secret
    # the receiver's secret first, an unknown new one last (`Profile.rotation_dispute`: a verifier
    # reading only the last signature refuses it)
    ROTATION_OWN_FIRST = "rotation-own-first"
    LIVEMODE_MISMATCH = "livemode-mismatch"  # a live event to a test receiver (or the reverse)
    FOREIGN_ACCOUNT = "foreign-account"  # an event of another account
    OVERSIZE = "oversize"  # a body of several megabytes, grown by the world through its own fields


#: Mutations that make a request one the receiver must refuse (4xx, no effect).
INVALIDATING: frozenset[Mutation] = frozenset({
    Mutation.FORGED, Mutation.MISSING_SIGNATURE, Mutation.STALE_TIMESTAMP, Mutation.WRONG_SECRET,
    Mutation.LIVEMODE_MISMATCH, Mutation.FOREIGN_ACCOUNT,
})

#: Mutations that leave a request valid whose refusal (4xx) ``valid_not_rejected`` judges on its
#: own terms: a body of several megabytes (oversized-payload: a finding under a documented cap the
#: provider does not retry, else an advisory), a rotation's two signatures with the receiver's
#: own first where an official verifier reads only the last (secret-rotation, an advisory). Such
#: a refusal is not a rejected valid event for the retry budget (`scenarios.runner.rejects_valid`).
REFUSABLE: frozenset[Mutation] = frozenset({Mutation.OVERSIZE, Mutation.ROTATION_OWN_FIRST})

#: The tag of an attempt that was the provider's manual replay of an event, a new delivery
#: entity (`Profile.replay_of`: Paddle's new ``notification_id`` with the same ``event_id``),
#: recorded with its other tags in `Attempt.faults`: the dispatcher adds it to every such
#: attempt (certify's ``mass-redelivery``, explore's window redelivery), a storm's plan to its
#: waves' replays. A provider whose replay is the same delivery again has none to add.
REPLAY_TAG = "replay"

Order = Literal["emitted", "reversed", "shuffled", "per-object-reversed"]


@dataclass(frozen=True)
class FaultPlan:
    """What the provider does to deliveries. The default plan is the identity.

    Attributes:
        copies: deliveries per event (each is retried on its own until acked).
        spacing_s: seconds between two consecutive steps.
        concurrency: copies released together in one burst (1 = one after another).
        order: order of events: as emitted, reversed, a seeded shuffle, or reversed
            within each object while objects keep their order.
        drop_responses: per delivery, how many first attempts' answers are discarded
            (the receiver answered; the provider treats the attempt as failed).
        sender_timeout_s: seconds the provider waits for an answer (None: the profile's).
        timeouts: how many first attempts of each delivery use `sender_timeout_s`
            (0: every attempt); later attempts wait the profile's timeout.
        mutations: applied to attempts selected by `mutate`.
        mutate: which attempts get `mutations`: every attempt, only the first attempt
            of the first copy, or every attempt except the first copy's first.
        seed: drives the shuffle.
    """

    copies: int = 1
    spacing_s: float = 0.0
    concurrency: int = 1
    order: Order = "emitted"
    drop_responses: int = 0
    sender_timeout_s: float | None = None
    timeouts: int = 0
    mutations: tuple[Mutation, ...] = ()
    mutate: Literal["all", "first", "retries"] = "all"
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("copies", "concurrency"):
            if getattr(self, name) < 1:
                raise FaultPlanError(f"{name} must be at least 1, got {getattr(self, name)}", field=name)
        for name in ("spacing_s", "drop_responses", "timeouts"):
            if not 0 <= getattr(self, name) < math.inf:
                raise FaultPlanError(f"{name} must be a finite number, not negative, got {getattr(self, name)}", field=name)
        if self.sender_timeout_s is not None and not 0 < self.sender_timeout_s < math.inf:
            raise FaultPlanError(f"sender_timeout_s must be a positive finite number, got {self.sender_timeout_s}",
                                 field="sender_timeout_s")
        if self.concurrency > self.copies:
            raise FaultPlanError(f"concurrency {self.concurrency} exceeds copies {self.copies}", field="concurrency")
        if self.order not in ("emitted", "reversed", "shuffled", "per-object-reversed"):
            raise FaultPlanError(f"unknown order {self.order!r}", field="order")

    def tags(self) -> tuple[str, ...]:
        """Short fault tags for the history (empty for the identity plan)."""
        tags: list[str] = []
        if self.copies > 1:
            tags.append(f"copies={self.copies}")
        if self.concurrency > 1:
            tags.append(f"burst={self.concurrency}")
        if self.order != "emitted":
            tags.append(f"order={self.order}")
        if self.drop_responses:
            tags.append("drop-response")
        if self.sender_timeout_s is not None:
            tags.append("sender-timeout")
        tags.extend(m.value for m in self.mutations)
        return tuple(tags)


@dataclass(frozen=True)
class Delivery:
    """One delivery of one event: retried by the dispatcher until acked or exhausted.

    Attributes:
        delivery_id: unique id of this delivery (``dlv_<event>_<copy>``).
        event: the event delivered.
        copy: 1-based copy number among the event's deliveries.
        mutations_first: mutations for this delivery's first attempt.
        mutations_retry: mutations for its later attempts.
        drop_responses: answers to discard, counting from the first attempt.
        sender_timeout_s: seconds to wait for an answer (None: the profile's timeout).
        timeouts: first attempts that use `sender_timeout_s` (0: all).
        tags: fault tags recorded with every attempt.
    """

    delivery_id: str
    event: Event
    copy: int
    mutations_first: tuple[Mutation, ...] = ()
    mutations_retry: tuple[Mutation, ...] = ()
    drop_responses: int = 0
    sender_timeout_s: float | None = None
    timeouts: int = 0
    tags: tuple[str, ...] = ()

    def timeout_for(self, attempt: int) -> float | None:
        """The injected sender timeout of the 1-based `attempt`, or None (the profile's)."""
        if self.sender_timeout_s is None or (self.timeouts and attempt > self.timeouts):
            return None
        return self.sender_timeout_s

    def mutations(self, attempt: int) -> tuple[Mutation, ...]:
        """Mutations of the 1-based `attempt`."""
        return self.mutations_first if attempt == 1 else self.mutations_retry


@dataclass(frozen=True)
class Step:
    """Deliveries released together after waiting `wait_s` seconds."""

    deliveries: tuple[Delivery, ...]
    wait_s: float = 0.0

    @property
    def burst(self) -> bool:
        return len(self.deliveries) > 1


@dataclass(frozen=True)
class Schedule:
    """The ordered steps of a fault plan over some events."""

    steps: tuple[Step, ...]
    plan: FaultPlan = field(default_factory=FaultPlan)

    def deliveries(self) -> list[Delivery]:
        return [d for s in self.steps for d in s.deliveries]


def order_events(events: Sequence[Event], order: Order, seed: int = 0) -> list[Event]:
    """Events in the plan's order (see `FaultPlan.order`)."""
    if order == "emitted":
        return list(events)
    if order == "reversed":
        return list(reversed(events))
    if order == "shuffled":
        out = list(events)
        random.Random(seed).shuffle(out)
        return out
    by_object: dict[str, list[Event]] = {}
    for e in events:
        by_object.setdefault(e.object_id, []).append(e)
    slots = {oid: list(reversed(evs)) for oid, evs in by_object.items()}
    return [slots[e.object_id].pop(0) for e in events]


def schedule(events: Sequence[Event], plan: FaultPlan = FaultPlan()) -> Schedule:
    """The ordered delivery steps of `plan` over `events` (pure; raises FaultPlanError)."""
    steps: list[Step] = []
    tags = plan.tags()
    muts = plan.mutations
    for event in order_events(events, plan.order, plan.seed):
        copies: list[Delivery] = []
        for copy_no in range(1, plan.copies + 1):
            first = muts if plan.mutate == "all" or (plan.mutate == "first" and copy_no == 1) else ()
            retry = muts if plan.mutate in ("all", "retries") else ()
            if plan.mutate == "retries" and copy_no > 1:
                first = muts
            copies.append(Delivery(
                delivery_id=f"dlv_{event.id}_{copy_no}", event=event, copy=copy_no,
                mutations_first=first, mutations_retry=retry, drop_responses=plan.drop_responses,
                sender_timeout_s=plan.sender_timeout_s, timeouts=plan.timeouts, tags=tags,
            ))
        for i in range(0, len(copies), plan.concurrency):
            group = tuple(copies[i:i + plan.concurrency])
            steps.append(Step(group, wait_s=plan.spacing_s if steps else 0.0))
    return Schedule(tuple(steps), plan)


def is_valid(mutations: Sequence[Mutation], profile: Profile) -> bool:
    """True when a request with `mutations` must be accepted and applied by a receiver
    held to `profile`'s official verifier (DESIGN.md, "What a receiver is held to").

    A stale timestamp is invalid only where the verifier checks the past; a future one
    only where it checks the future (Stripe's SDK accepts future timestamps); livemode
    and account mismatches only where the envelope carries them.
    """
    for m in mutations:
        if m is Mutation.STALE_TIMESTAMP and profile.tolerance.past_s is None:
            continue
        if m is Mutation.FUTURE_TIMESTAMP:
            if profile.tolerance.future_s is not None:
                return False
            continue
        if m is Mutation.LIVEMODE_MISMATCH and not profile.has_livemode:
            continue
        if m is Mutation.FOREIGN_ACCOUNT and (not profile.has_account or profile.foreign_account_valid):
            continue
        if m in INVALIDATING:
            return False
    return True


def applicable(mutation: Mutation, profile: Profile, *, connect: bool = False) -> str | None:
    """None when `mutation` means something for `profile`, else the reason it does not.

    `connect`: the endpoint is a Connect endpoint (`target.connect`), the only kind a profile
    with `Profile.other_mode_needs_connect` sends another mode's or another account's events.
    An account the provider never sends an endpoint (`Profile.foreign_account_never_sent`:
    Stripe's) makes ``foreign-account`` not applicable, Connect endpoint or not.
    """
    if mutation in (Mutation.STALE_TIMESTAMP, Mutation.FUTURE_TIMESTAMP) and (
        profile.tolerance.past_s is None and profile.tolerance.future_s is None
    ):
        return profile.untimed_reason or f"{profile.title} signs no timestamp, so replay is stopped only by dedupe"
    if mutation is Mutation.LIVEMODE_MISMATCH and not profile.has_livemode:
        return f"{profile.title} events carry no test/live flag"
    if mutation is Mutation.FOREIGN_ACCOUNT and not profile.has_account:
        return f"{profile.title} events carry no account"
    if mutation is Mutation.FOREIGN_ACCOUNT and profile.foreign_account_valid:
        return profile.foreign_account_valid
    if (mutation in (Mutation.LIVEMODE_MISMATCH, Mutation.FOREIGN_ACCOUNT) and profile.other_mode_needs_connect
            and not connect):
        return profile.other_mode_needs_connect
    if mutation is Mutation.FOREIGN_ACCOUNT and profile.foreign_account_never_sent:
        return profile.foreign_account_never_sent
    if mutation is Mutation.ROTATION and not profile.multiple_signatures:
        return f"{profile.title} sends one signature per request (no rotation list)"
    if mutation is Mutation.ROTATION_OWN_FIRST and (not profile.multiple_signatures or not profile.rotation_dispute):
        return f"{profile.title}'s official verifiers read every signature of a rotation, in any order"
    return None

