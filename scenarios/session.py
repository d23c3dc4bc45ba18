"""One example of the state machine: a world with fresh ids, the legal next operations,
and the `Session` that interprets schedule steps against a receiver.

The world is the one the profile sends from (`ExploreTarget.profile.world`), driven by
its own operations (`scenarios.world_ops`). Events of a type the receiver's config does
not enable (`ExploreTarget.enabled`) are never sent. With a team's business keys
(`ExploreTarget.keys`) every event is delivered, expected and checked under the team's
key, and its counters are compared as certify compares them (`scenarios.business_keys`).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import secrets as _secrets
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence, TypeVar, cast

from hookproof.scenarios.business_keys import counter_events, counter_keys, counter_truth, money_prefixes, scoped
from hookproof.scenarios.checks import ALL_CHECKS, CheckResult, check_safe, run_checks
from hookproof.scenarios.explore_targets import ExploreTarget
from hookproof.scenarios.observations import Expectations, Observation, attempted, expectations_from
from hookproof.scenarios.observers import settle
from hookproof.scenarios.safety_watch import WATCHED, SafetyWatch
from hookproof.scenarios.schedules import (
    CLOCK_STEP_US,
    UNSENT_MARK,
    Failure,
    Step,
    attempt_outcome,
    clock_start_us,
)
from hookproof.scenarios.search_loop import SearchLoop
from hookproof.scenarios.small_pass import expectations_and_index
from hookproof.scenarios.state_fields import stated
from hookproof.scenarios.world_ops import WorldOps, focused, new_world_of, ops_for
from hookproof.simulator.delivery import Attempt, Dispatcher, History, Outcome
from hookproof.simulator.events import Event
from hookproof.simulator.faults import Delivery, FaultPlan, Mutation, Schedule, schedule
from hookproof.simulator.faults import Step as Release
from hookproof.simulator.server.clock import servable_states
from hookproof.simulator.server.served import served_log
from hookproof.simulator.world import World

T = TypeVar("T")

#: Safety checks run after every step; the final checks after teardown. A 5xx to a valid
#: delivery without an injected fault is a finding, as in certify (a racy get-or-create
#: answers 500 when the first events of a new object arrive together).
SAFETY_CHECKS: tuple[str, ...] = ("duplicated", "regressed")
FINAL_CHECKS: tuple[str, ...] = ("duplicated", "lost", "unexpected", "regressed", "stale", "no_server_error")
#: Whether every safety check is one `SafetyWatch` follows (then a clear watch stands for them).
_WATCHED_ONLY = WATCHED.issuperset(SAFETY_CHECKS)
#: Fault tag of deliveries whose object's fetch the provider API was told to fail (`api_fault`):
#: a 5xx it explains is an advisory, as certify's `provider-api-transient`.
API_FAULT_TAG = "api-transient"
#: Seconds of stability that settle an observation already showing the expected picture.
QUICK_WINDOW_S = 0.005
#: Attempts per pending delivery during teardown, at most.
TEARDOWN_ATTEMPTS = 5


# ---- the world, with fresh ids per example ------------------------------------------------

_SALT_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SALT_LEN = 6


class _SaltedWorld(World):
    """A World whose ids end in a per-example salt: same structure for the same seed, fresh ids."""

    def __init__(self, seed: int, *, salt: str, **kwargs: Any) -> None:
        self._salt = salt
        super().__init__(seed, **kwargs)

    def _new_id(self, object_type: str) -> str:
        base = super()._new_id(object_type)
        return base[: -len(self._salt)] + self._salt


_salts = itertools.count(1)
_RUN_SALT = "".join(_secrets.choice(_SALT_ALPHABET) for _ in range(2))


def _fresh_salt() -> str:
    n = next(_salts)
    digits = []
    for _ in range(_SALT_LEN - 2):
        n, r = divmod(n, len(_SALT_ALPHABET))
        digits.append(_SALT_ALPHABET[r])
    return _RUN_SALT + "".join(digits)


def session_world(kind: str, seed: int, salt: str, **options: Any) -> Any:
    """A fresh world of `kind` for one example: the seed's structure, fresh ids.

    The billing world keeps every draw of the seed and ends its ids in `salt`. The other
    worlds draw ids from the same generator as everything else, so they are built from a
    seed mixed with the salt: fresh ids (and amounts); what each operation emits, and so
    every schedule step, does not depend on the draws.
    """
    if kind == "billing":
        return _SaltedWorld(seed, salt=salt, **options)
    mixed = int.from_bytes(hashlib.blake2b(f"{seed}:{salt}".encode(), digest_size=6).digest(), "big")
    return new_world_of(kind, mixed, **options)


def _told(explore: ExploreTarget, world: Any) -> Any:
    """`world` told what the endpoint is sent (`ExploreTarget.tell`); returns it."""
    explore.tell(world)
    return world


def _search_ops(explore: ExploreTarget, *, priced: bool) -> WorldOps:
    """The operations a search's examples draw from: the world kind's, focused on what the
    endpoint is sent when it lists its types (`world_ops.focused`), made once per search."""
    kind = explore.profile.world
    memo = explore.ops_memo.get((kind, priced))
    if memo is None:
        ops = ops_for(kind, priced=priced)
        if explore.enabled is not None:
            ops = focused(ops, explore.sends_type, lambda: _told(explore, new_world_of(kind, 0)))
        memo = explore.ops_memo[(kind, priced)] = ops
    return memo


# ---- one example ----------------------------------------------------------------------------

class Session:
    """One example: a fresh world, a receiver, a dispatcher, the history, the observations.

    `apply(step)` interprets one schedule step; `safety()` and `finish()` run the checks.
    Used by the state machine and by `replay`. `loop` is the search's event loop, shared
    by its examples (None: the session makes its own and closes it).
    """

    def __init__(self, explore: ExploreTarget, seed: int, *, provider_state: Any = None,
                 on_step: Callable[[Step, str], None] | None = None, loop: SearchLoop | None = None) -> None:
        self.explore = explore
        self.seed = seed
        fields = explore.state_fields
        self.ops = _search_ops(explore, priced=fields is not None and "subscription" in fields.kinds())
        self.world = _told(explore, session_world(self.ops.kind, seed, _fresh_salt(), livemode=explore.live,
                                                  account=explore.account, start_us=clock_start_us(),
                                                  step_us=CLOCK_STEP_US))
        self.provider_state = provider_state
        if provider_state is not None:
            provider_state.set_world(self.world)
        self.prepared = explore.open()
        self.history = History()
        self._own_loop = loop is None
        self._search_loop = loop if loop is not None else SearchLoop()
        self.loop = self._search_loop.loop
        self.dispatcher = Dispatcher(self.prepared.target, explore.profile, explore.secrets, self.history,
                                     retries=False, scenario="explore", seed=seed)
        self.steps: list[Step] = []
        self.marks: list[tuple[int, int]] = []  # (events emitted, attempts made) after each step
        self.attempts_of: dict[int, int] = {}
        self._replays: dict[int, int] = {}  # event index -> the provider's manual replays of it sent so far
        self.acked: set[int] = set()
        self.ack_order: list[int] = []  # events in the order they were first acknowledged
        self.sendable: list[int] = []  # events of the types the receiver is sent (enabled_events)
        self.groups: list[tuple[int, int]] = []  # [start, end) of the events of each emit step
        # the events under the team's keys (with `explore.keys`) and with their combined states
        # (with `explore.state_fields`), as delivered
        self._keyed: list[Event] = []
        self._rekeyed = explore.keys is not None or explore.state_fields is not None
        self._faulted: set[str] = set()  # object and event ids the provider API was told to fail
        self.observations: list[Observation] = []
        self._watch = SafetyWatch()  # what the safety checks could find over `observations`
        self.dirty = False
        self.on_step = on_step
        self._ids: set[str] = set()
        self._scope_size = -1  # how many events `_scope_keys` and `_scope_counters` were taken from
        self._scope_keys: set[str] = set()
        self._scope_counters: frozenset[str] = frozenset()
        self._closed = False
        self._version = 0  # bumped by every change the rules' preconditions read (`memo`)
        self._memos: dict[str, tuple[int, Any]] = {}

    # ---- reading ------------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        return self.world.events

    @property
    def event_types(self) -> list[str]:
        return [e.type for e in self.world.events]

    @property
    def event_names(self) -> list[str]:
        """The events' types in the profile's own names (``payment.succeeded`` under
        standard-webhooks for the world's ``payment_intent.succeeded``)."""
        names = self.explore.profile.event_types()
        return [names.get(e.type, e.type) for e in self.world.events]

    def event(self, index: int) -> Event:
        """Event #`index` as it is delivered (under the team's business key, when mapped)."""
        return self._keyed[index] if self._rekeyed else self.world.events[index]

    def delivered_events(self) -> list[Event]:
        """Every emitted event as it is delivered (the expectations are built from these)."""
        return self._keyed if self._rekeyed else self.world.events

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, remembered until the session next changes (an emit, an attempt, an
        acknowledgement): Hypothesis asks the rules' preconditions before every step, and they
        ask again in the rule. The value is shared: callers must not change it."""
        hit = self._memos.get(name)
        if hit is not None and hit[0] == self._version:
            return cast(T, hit[1])
        value = compute()
        self._memos[name] = (self._version, value)
        return value

    def _changed(self) -> None:
        self._version += 1

    def pending(self) -> list[int]:
        """Indexes of events the receiver is sent and did not ack yet, in emission order."""
        return self.memo("pending", lambda: [i for i in self.sendable if i not in self.acked])

    def acked_events(self) -> list[int]:
        """Indexes of acked events, those with an effect first (their redelivery is the risky one)."""
        return self.memo("acked_events",
                         lambda: sorted(self.acked, key=lambda i: (self.event(i).business_key is None, i)))

    def burst_candidates(self) -> list[int]:
        """Indexes of every event the receiver is sent, those with an effect first."""
        return self.memo("burst_candidates",
                         lambda: sorted(self.sendable, key=lambda i: (self.event(i).business_key is None, i)))

    def related_groups(self) -> list[tuple[int, ...]]:
        """The first events of one new object: per emit step, the first event of each object
        it touched that the receiver is sent and that was never attempted, when there are at
        least two (a subscription's created with its invoice's paid; a payment's intent and
        charge). Later versions of one object are left out: their order is `reorder`'s
        business, and racing them would make a finding depend on thread timing."""
        return self.memo("related_groups", self._related_groups)

    def _related_groups(self) -> list[tuple[int, ...]]:
        out = []
        sendable = set(self.sendable)
        for start, end in self.groups:
            objects: set[str] = set()
            group = []
            for i in range(start, end):
                obj = self.world.events[i].object_id
                if i in sendable and i not in self.attempts_of and obj not in objects:
                    group.append(i)
                objects.add(obj)
            if len(group) >= 2:
                out.append(tuple(group))
        return out

    def key_pairs(self) -> list[tuple[int, int]]:
        """(older, newer): two events of one object, of different types, that the receiver is
        sent, the newer never attempted (the older may have been: the provider retries it, or
        replays it), the newer owing a key the older owes too or would owe had its condition held (`lifecycle.WITHHELD_KEYS`): a delayed checkout's
        ``checkout.session.completed`` (unpaid) and its ``async_payment_succeeded``, both of
        which Stripe's fulfilment guide runs the fulfilment from, "possibly concurrently"
        (docs.stripe.com/checkout/fulfillment). O(events), once per change."""
        return self.memo("key_pairs", self._key_pairs)

    def _key_pairs(self) -> list[tuple[int, int]]:
        from hookproof.simulator.world.lifecycle import WITHHELD_KEYS

        owed: dict[str, list[int]] = {}  # object id -> its unattempted events owing or withholding a key
        pairs: list[tuple[int, int]] = []
        for i in self.sendable:
            e = self.event(i)
            key = e.business_key
            if key is not None and i not in self.attempts_of:
                for j in owed.get(e.object_id, ()):
                    older = self.event(j)
                    withheld = WITHHELD_KEYS.get(older.type)
                    if older.type != e.type and key in (older.business_key,
                                                        withheld[0](older.object_id) if withheld else None):
                        pairs.append((j, i))
            if key is not None or e.type in WITHHELD_KEYS:
                owed.setdefault(e.object_id, []).append(i)
        return pairs

    def same_kind_pairs(self) -> list[tuple[int, int]]:
        """(older, newer): consecutive events of one type about one object the receiver is
        sent (two refunds of one charge), those with an effect first. O(events), once per change."""
        return self.memo("same_kind_pairs", self._same_kind_pairs)

    def _same_kind_pairs(self) -> list[tuple[int, int]]:
        last: dict[tuple[str, str], int] = {}
        pairs: list[tuple[int, int]] = []
        for i in self.sendable:
            e = self.world.events[i]
            key = (e.object_id, e.type)
            if key in last:
                pairs.append((last[key], i))
            last[key] = i
        return sorted(pairs, key=lambda p: (self.event(p[0]).business_key is None, p))

    def repeats(self) -> list[tuple[str, int]]:
        """The legal operations, as (action, object index), that an earlier emit step already
        played on that same object (a second refund of a charge refunded once): played again,
        they make two events of one type about one object for `redeliver_older`. Once per change."""
        return self.memo("repeats", self._repeats)

    def _repeats(self) -> list[tuple[str, int]]:
        played = {(s.action, s.object) for s in self.steps if s.op == "emit" and s.object is not None}
        if not played:
            return []
        legal = self.memo("legal", lambda: self.ops.legal(self.world))
        return [(action, index) for action, index in legal if index is not None and (action, index) in played]

    def late_pairs(self) -> list[tuple[int, int]]:
        """(older, newer): consecutive events about one object the receiver is sent, the
        older one not acknowledged yet (a renewal's failure, then its payment). O(events),
        once per change."""
        return self.memo("late_pairs", self._late_pairs)

    def _late_pairs(self) -> list[tuple[int, int]]:
        last: dict[str, int] = {}
        pairs: list[tuple[int, int]] = []
        for i in self.sendable:
            obj = self.world.events[i].object_id
            if obj in last and last[obj] not in self.acked:
                pairs.append((last[obj], i))
            last[obj] = i
        return pairs

    def newest_first(self) -> list[tuple[int, ...]]:
        """Per object, the indexes of its events the receiver is sent and that were never
        attempted, newest first, where at least two of their states differ (a failed
        renewal's past_due and the active before it): delivered in this order, a receiver
        that writes whatever state arrives ends on an older one. O(events), once per change."""
        return self.memo("newest_first", self._newest_first)

    def _newest_first(self) -> list[tuple[int, ...]]:
        events = self.delivered_events()  # their states: combined with the declared fields, if any
        return [tuple(reversed(group)) for group in self._unsent_states().values()
                if len({events[i].status for i in group}) >= 2]

    def _unsent_states(self) -> dict[str, list[int]]:
        """Object id -> indexes of its events with a state that the receiver is sent and that
        were never attempted, oldest first."""
        def compute() -> dict[str, list[int]]:
            by_object: dict[str, list[int]] = {}
            for i in self.sendable:
                e = self.world.events[i]
                if e.stateful and e.status is not None and i not in self.attempts_of:
                    by_object.setdefault(e.object_id, []).append(i)
            return by_object

        return self.memo("unsent_states", compute)

    def state_moves(self) -> list[tuple[str, int]]:
        """The legal operations that move the state of an object with an event the receiver
        is sent and was never attempted (`WorldOps.moves`), as (action, object index): played
        before that event is delivered, they make an older and a newer state to deliver
        newest first. Once per change."""
        return self.memo("state_moves", self._state_moves)

    def _state_moves(self) -> list[tuple[str, int]]:
        moves = self.ops.moves
        unsent = self._unsent_states()
        if not moves or not unsent:
            return []
        out: list[tuple[str, int]] = []
        for action, index in self.memo("legal", lambda: self.ops.legal(self.world)):
            kind = moves.get(action)
            if kind is None or index is None:
                continue
            ids = self.world.objects(kind)
            if 0 <= index < len(ids) and ids[index] in unsent:
                out.append((action, index))
        return out

    # ---- steps ----------------------------------------------------------------------------
    def apply(self, step: Step) -> str:
        """Run one step; returns a short description of what the provider saw."""
        self.steps.append(step)
        if step.op == "emit":
            start = len(self.world.events)
            self.ops.apply(self.world, step.action or "", step.object)
            self._emitted(start)
            names = self.explore.profile.event_types()
            made = len(self.world.events) - start  # its sendable ones are the last of `sendable`, if any
            sendable = {i for i in self.sendable[-made:] if i >= start} if made else set()
            note = ", ".join(f"#{start + i} {names.get(e.type, e.type)}" + ("" if start + i in sendable else UNSENT_MARK)
                             for i, e in enumerate(self.world.events[start:])) or "no events"
        elif step.op == "advance_clock":
            self.world.advance(int(step.seconds or 1))
            note = "clock moved"
        elif step.op == "burst":
            attempts = self.loop.run_until_complete(self._burst(self._event(step), int(step.copies or 2)))
            note = ", ".join(_outcome(a) for a in attempts)
        elif step.op == "burst_related":
            indexes = [self._event(Step("burst_related", event=i)) for i in step.events or ()]
            attempts = self.loop.run_until_complete(self._release(indexes, "r"))
            note = ", ".join(_outcome(a) for a in attempts)
        elif step.op == "redeliver_window":
            window = self.ack_order[-int(step.count or 1):]
            attempts = self.loop.run_until_complete(self._one_by_one(window, op="replay"))
            note = ", ".join(_outcome(a) for a in attempts) or "nothing acknowledged yet"
        elif step.op == "api_fault":
            note = self._api_fault(self.world.events[self._event(step)], int(step.status or 500))
        else:
            index = self._event(step)
            mutation = (Mutation(step.mutation),) if step.mutation else ()
            a = self.loop.run_until_complete(self._attempt(index, op=step.op, mutations=mutation))
            note = _outcome(a)
        self.marks.append((len(self.world.events), len(self.history)))
        if self.on_step:
            self.on_step(step, note)
        return note

    def _emitted(self, start: int) -> None:
        """Take in the events an emit step made (from position `start`)."""
        new = self.world.events[start:]
        self._ids = set(self.world.objects())
        self._changed()
        self.groups.append((start, start + len(new)))
        keys, enabled = self.explore.keys, self.explore.enabled
        if keys is not None:
            new = [e if (k := keys.key_of(e)) == e.business_key else replace(e, business_key=k) for e in new]
        if self._rekeyed:
            self._keyed += stated(new, self.explore.state_fields)
        self.sendable += [start + i for i, e in enumerate(new) if enabled is None or e.type in enabled]

    def _event(self, step: Step) -> int:
        if step.event is None or not 0 <= step.event < len(self.world.events):
            raise ValueError(f"step {step.op}: no event #{step.event} (the world emitted {len(self.world.events)})")
        enabled = self.explore.enabled
        if enabled is not None and self.world.events[step.event].type not in enabled:
            raise ValueError(f"step {step.op}: event #{step.event} is a {self.world.events[step.event].type}, "
                             f"which the receiver is not sent (enabled_events)")
        return step.event

    def _api_fault(self, event: Event, status: int) -> str:
        """The provider API answers the next fetch of `event`'s object (and of the event) with `status`."""
        if self.provider_state is None:
            return "no provider API"
        for object_id in (event.object_id, event.id):
            self.provider_state.switches.set(object_id, not_found=status == 404,
                                             status=None if status == 404 else status, times=1)
            self._faulted.add(object_id)
        return f"the next fetch of its {event.object_type} answers {status}"

    def _tags(self, event: Event, tags: tuple[str, ...]) -> tuple[str, ...]:
        if self._faulted and (event.object_id in self._faulted or event.id in self._faulted):
            return tags + (API_FAULT_TAG,)
        return tags

    def _acked(self, index: int) -> None:
        if index not in self.acked:
            self._changed()
            self.acked.add(index)
            self.ack_order.append(index)

    async def _attempt(self, index: int, *, op: str = "deliver", mutations: tuple[Mutation, ...] = ()) -> Attempt:
        """One attempt of event #`index`. `op` ``replay``: the provider's manual replay of it
        (`Profile.replayed`: Paddle's is a new notification of the same event), else the
        delivery as it was."""
        event = self.event(index)
        delivery_id = f"dlv_{event.id}_1"
        if op == "replay":
            replay = self._replays.get(index, 0) + 1
            replayed = self.explore.profile.replayed(event, replay)
            if replayed is not event:  # a new delivery entity (Paddle's notification_id)
                self._replays[index] = replay
                event, delivery_id = replayed, f"dlv_{event.id}_r{replay}"
        number = self.attempts_of.get(index, 0) + 1
        self.attempts_of[index] = number
        self._changed()
        tags: tuple[str, ...] = self._tags(event, tuple(m.value for m in mutations))
        delivery = Delivery(
            delivery_id=delivery_id, event=event, copy=1, mutations_first=mutations, mutations_retry=mutations,
            drop_responses=number if op == "drop_response" else 0,
            sender_timeout_s=0.001 if op == "timeout" else None, timeouts=0,
            tags=tags + (("redeliver",) if op in ("redeliver", "replay") else ()),
        )
        attempt = await self.dispatcher.attempt(delivery, number)
        if attempt.outcome is Outcome.ACKED and op != "timeout":
            # A timeout step gives up after 1 ms: whether the answer beat it is the receiver's
            # speed on that run. Counting such an ack would make which rules apply (pending,
            # acked) differ between a run and Hypothesis's replay of it; the event stays
            # pending, and its next delivery is a redelivery a correct receiver acknowledges.
            self._acked(index)
        self.dirty = True
        return attempt

    async def _one_by_one(self, indexes: Sequence[int], *, op: str = "deliver") -> list[Attempt]:
        """One attempt of each event in turn (each answered before the next is sent), in one
        run of the loop rather than one per attempt."""
        return [await self._attempt(i, op=op) for i in indexes]

    async def _drain(self) -> None:
        """Teardown's deliveries: every pending event in emission order, again while some are
        still pending, `TEARDOWN_ATTEMPTS` rounds at most."""
        for _ in range(TEARDOWN_ATTEMPTS):
            pending = self.pending()
            if not pending:
                break
            await self._one_by_one(pending)

    async def _burst(self, index: int, copies: int) -> list[Attempt]:
        event = self.event(index)
        plan = FaultPlan(copies=copies, concurrency=copies)
        sched = schedule([event], plan)
        base = self.attempts_of.get(index, 0)
        self.attempts_of[index] = base + copies
        self._changed()
        deliveries = [Delivery(delivery_id=f"dlv_{event.id}_b{base + k}", event=event, copy=k + 1,
                               tags=self._tags(event, d.tags))
                      for k, d in enumerate(sched.steps[0].deliveries)]
        attempts = await self._together(deliveries)
        if any(a.outcome is Outcome.ACKED for a in attempts):
            self._acked(index)
        self.dirty = True
        return attempts

    async def _release(self, indexes: Sequence[int], mark: str) -> list[Attempt]:
        """Different events released together (one attempt each); their attempts in order."""
        deliveries = []
        for index in indexes:
            event = self.event(index)
            number = self.attempts_of.get(index, 0) + 1
            self.attempts_of[index] = number
            self._changed()
            deliveries.append(Delivery(delivery_id=f"dlv_{event.id}_{mark}{number}", event=event, copy=number,
                                       tags=self._tags(event, (f"burst={len(indexes)}",))))
        attempts = await self._together(deliveries)
        for index, a in zip(indexes, attempts):
            if a.outcome is Outcome.ACKED:
                self._acked(index)
        self.dirty = True
        return attempts

    async def _together(self, deliveries: Sequence[Delivery]) -> list[Attempt]:
        """One attempt of each delivery, released together: concurrent calls in process, the
        race transport (byte-synchronised) over real sockets."""
        if self.prepared.target.in_process:
            return list(await asyncio.gather(*(self.dispatcher.attempt(d, 1) for d in deliveries)))
        results = await self.dispatcher.run(Schedule((Release(tuple(deliveries)),), FaultPlan()), race=True)
        by_id = {r.delivery.delivery_id: r.attempts[0] for r in results}
        return [by_id[d.delivery_id] for d in deliveries]

    # ---- checks ---------------------------------------------------------------------------
    def observe(self) -> Observation:
        """One observation of this example's objects (other examples' rows are ignored)."""
        events = self.delivered_events()
        if len(events) != self._scope_size:  # the keys of the example's events, kept up to date
            self._scope_size = len(events)
            self._scope_keys = {e.business_key for e in events if e.business_key}
            self._scope_counters = counter_keys(events, self.explore.keys)
        result = scoped(self.prepared.observe(), self._ids, self._scope_keys, self._scope_counters)
        self.observations.append(result)
        self._watch.add(result)
        return result

    def _check(self, ids: Sequence[str]) -> list[CheckResult]:
        """The checks `ids` over the example so far: the expectations and the checks' index
        from one pass over the history (`expectations_and_index`; an example's few attempts
        in plain Python, `scenarios.small_pass`), as `run_checks` runs them
        (each guarded by `check_safe`). Should that pass fail, the expectations alone, then
        `run_checks`, which builds its own index or runs each check without one."""
        attempts = self.history.attempts()
        events = self.delivered_events()
        keys = self.explore.keys
        options: dict[str, Any] = {"sender_timeout_s": self.explore.profile.sender_timeout_s,
                                   "max_attempts_per_event": None, "money_prefixes": money_prefixes(keys, self.explore.profile),
                                   "provider": self.explore.profile.words()}
        try:
            expectations, index = expectations_and_index(events, attempts, self.observations, **options)
        except Exception:  # noqa: BLE001 - as before: the expectations alone, then run_checks
            expectations = self._servable(expectations_from(events, attempts, **options), events, attempts)
            if keys is not None and keys.counters:
                expectations = replace(expectations, counters=counter_truth(events, attempts, keys),
                                       counter_events=counter_events(events, keys))
            return run_checks(ids, attempts, expectations, self.observations)
        expectations = index.expectations = self._servable(expectations, events, attempts)
        if keys is not None and keys.counters:
            expectations = index.expectations = replace(expectations, counters=counter_truth(events, attempts, keys),
                                                        counter_events=counter_events(events, keys))
        return [check_safe(i, ALL_CHECKS[i], attempts, expectations, self.observations, index=index) for i in ids]

    def _servable(self, expectations: Expectations, events: Sequence[Event], attempts: Sequence[Attempt]) -> Expectations:
        """`expectations` knowing every version the provider API could have served so far: the
        world is never advanced here, so each object's every version up to its current one
        (a world operation changes an object before its events are delivered); and the objects
        the receiver may have erased among `events` validly sent by `attempts` (`Profile.erasable`: a Shopify shop's after its uninstall)."""
        profile = self.explore.profile
        if profile.account_wide_types and (erased := profile.erasable(attempted(events, attempts))):
            expectations = replace(expectations, erased=erased)
        if not expectations.truth or not getattr(self.world, "serves_api", True):
            return expectations
        servable = servable_states(self.world, expectations.truth.keys())
        if self.explore.state_fields is not None:
            servable = self.explore.state_fields.servable(self.world, servable)
        fetched = served_log(self.provider_state).fetched(servable) if self.provider_state is not None else frozenset()
        return replace(expectations, servable=servable, fetched=fetched)

    def final_checks(self) -> tuple[str, ...]:
        """The checks after teardown: `FINAL_CHECKS`, and ``counter`` when the team maps counters."""
        keys = self.explore.keys
        return FINAL_CHECKS + ("counter",) if keys is not None and keys.counters else FINAL_CHECKS

    def failure(self, checks: list[CheckResult], phase: str) -> Failure | None:
        if not any(c.problems for c in checks):
            return None
        return Failure(self.seed, list(self.steps), self.event_types, checks, self.history.attempts(), phase,
                       event_names=self.event_names, event_ids=self._wire_ids(),
                       marks=list(self.marks), unsent=frozenset(range(len(self.event_types))) - set(self.sendable))

    def _wire_ids(self) -> list[str]:
        """Each event's id as its attempts record it (the profile's: a ``msg_…`` under
        standard-webhooks), for a failure to place its attempts."""
        profile = self.explore.profile
        try:
            return [profile.envelope(e).event_id for e in self.delivered_events()]
        except Exception:  # noqa: BLE001 - only the schedule's text needs them: the world's ids then
            return [e.id for e in self.world.events]

    def safety(self) -> Failure | None:
        """At most once and no regression, over what was observed so far (observes if needed).

        The checks run only when the observations could make them find something
        (`SafetyWatch.clear`): when they cannot, their verdict is known without the pass
        over the history."""
        if not self.dirty:
            return None
        self.dirty = False
        self.observe()
        if _WATCHED_ONLY and self._watch.clear(self.observations):
            return None
        return self.failure(self._check(SAFETY_CHECKS), "step")

    def finish(self) -> Failure | None:
        """Deliver everything pending until acked (bounded), settle, then the final checks."""
        self.loop.run_until_complete(self._drain())
        self._settle()
        return self.failure(self._check(self.final_checks()), "teardown")

    def _settle(self) -> None:
        """Observe until the receiver settles, by certify's rule (`observers.settle`: liveness,
        as in Jepsen, bounded by a deadline).

        Settled means: unchanged for `QUICK_WINDOW_S` while it already shows every acked
        effect and the provider's final states; while it does not, read on while the reads
        change, up to the deadline, or until they stayed unchanged for `settle_stall_s` (a
        receiver that answers first and applies in a worker is waited for), then judged as
        they are. Once an example's reads fell short (`ExploreTarget.fell_short`: the
        receiver keeps something from the truth, the search finds it either way), a read
        that falls short settles after `settle_window_s` unchanged, so a broken receiver
        costs the search one wait. An in-process app that is quiet before the first read
        (`SearchLoop.quiet`: every request answered, nothing left on the loop, no thread but
        anyio's idle workers) cannot change what that read shows, so when it shows
        everything it is final and the quick window is not waited for.
        """
        x = self.explore
        acked_keys, truth = self._picture()
        quiet = self.prepared.target.in_process and self._search_loop.quiet()  # before the read it vouches for
        first = [self.observe()]
        if quiet and _shows(first[0], acked_keys, truth):
            return

        def read() -> Observation:
            return first.pop() if first else self.observe()

        result = settle(read, window_s=x.settle_window_s, deadline_s=x.settle_deadline_s,
                        interval_s=x.settle_interval_s, done=lambda obs: _shows(obs, acked_keys, truth),
                        quiet_s=QUICK_WINDOW_S, stall_s=x.settle_stall_s, patient=lambda: not x.fell_short)
        if result.short:
            x.fell_short = True

    def _picture(self) -> tuple[set[str], dict[str, tuple[str, int]]]:
        """Business keys acked by a valid attempt, and each stateful object's final (status, version)."""
        keys = {a.business_key for a in self.history.attempts()
                if a.outcome is Outcome.ACKED and a.valid and a.business_key}
        truth: dict[str, tuple[str, int]] = {}
        for i, e in enumerate(self.delivered_events()):
            if e.stateful and e.status is not None and i in self.attempts_of:
                if e.object_id not in truth or e.version > truth[e.object_id][1]:
                    truth[e.object_id] = (e.status, e.version)
        return {k for k in keys if k is not None}, truth

    def close(self) -> None:
        """Close the dispatcher and the loop, or leave a shared loop idle (the receiver is the target's to keep
        or close)."""
        if self._closed:
            return
        if self.provider_state is not None:
            for object_id in self._faulted:
                self.provider_state.switches.clear(object_id)
        try:
            self.loop.run_until_complete(self.dispatcher.aclose(drain_s=5.0))
            self._closed = True  # an interrupted close (a signal) is done again by the next call
        finally:
            try:
                if self._own_loop:
                    self._search_loop.close()
                else:
                    self._search_loop.settle_strays()
            finally:
                self.prepared.close()


def _shows(obs: Observation, keys: set[str], truth: Mapping[str, tuple[str, int]]) -> bool:
    """True when `obs` shows every key in `keys` and every object at its final status (and
    version, when the observer exposes versions)."""
    counts = obs.counts()
    if any(k not in counts for k in keys):
        return False
    for obj, (status, version) in truth.items():
        st = obs.state_of(obj)
        if st is None or st.status != status or (st.version is not None and st.version != version):
            return False
    return True


_outcome = attempt_outcome
