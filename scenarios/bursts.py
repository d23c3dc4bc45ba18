"""The statistical tier: real-socket bursts repeated R times, reported as a hit rate with
the seeds (DESIGN.md, "Two tiers of search")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from hookproof.scenarios.business_keys import counter_keys
from hookproof.scenarios.explore_targets import ExploreTarget
from hookproof.scenarios.findings import Finding
from hookproof.scenarios.observations import world_event_id
from hookproof.scenarios.schedules import Step
from hookproof.scenarios.session import Session
from hookproof.simulator.delivery import Outcome
from hookproof.simulator.faults import FaultPlan, schedule

# ---- the statistical tier --------------------------------------------------------------------

@dataclass
class HitRate:
    """Real-socket bursts repeated R times: how often the receiver applied twice."""

    hits: int
    repeats: int
    copies: int
    seeds: list[int] = field(default_factory=list)  # seeds of the runs that double-applied
    keys: list[str] = field(default_factory=list)
    #: per key of `keys`, the check that saw it applied twice: ``duplicated`` (an effect twice)
    #: or ``counter`` (a counter moved past the provider's truth, the effect itself single)
    kinds: list[str] = field(default_factory=list)
    attempts: int = 0  # burst copies sent, over all runs
    acked: int = 0  # of which the receiver acknowledged (a hit rate over no acknowledged copy proves nothing)
    #: the event type each run raced, in run order (`burst_hit_rate` rotates over the effectful types)
    types: list[str] = field(default_factory=list)
    #: the event type of each run that applied twice, in the order of `seeds`
    hit_types: list[str] = field(default_factory=list)
    #: the event types of the valid attempts the bursts' sessions sent (the provider's names, as
    #: `scenarios.statemachine` counts its own: explore's note of the types it never sent reads both)
    sent_types: set[str] = field(default_factory=set)

    @property
    def raced(self) -> list[str]:
        """The types raced, each once, in the order of their first run."""
        return list(dict.fromkeys(self.types))

    def per_type(self) -> str:
        """Each raced type with its runs that applied twice over its runs, in words:
        ``orders/create 0/10, orders/paid 10/10`` (empty when no run recorded its type)."""
        return ", ".join(f"{t} {self.hit_types.count(t)}/{self.types.count(t)}" for t in self.raced)

    @property
    def rate(self) -> float:
        return self.hits / self.repeats if self.repeats else 0.0


def burst_hit_rate(target: ExploreTarget, *, repeats: int = 20, copies: int = 8, seed: int = 0,
                   provider_state: Any = None, on_run: Callable[[int], None] | None = None) -> HitRate:
    """Release `copies` concurrent copies of an effectful event `repeats` times (race
    amplification over real sockets for URLs); count the runs that applied it twice,
    and the copies sent and acknowledged. `on_run(done)` hears of each finished run.

    Run ``r`` races an event of the ``r``-th effectful type (modulo their number) the receiver
    is sent of the profile's world, made by its simplest operations (`_effectful`: with the
    team's counters, the types that move one), so a race confined to one type's handler (a
    Shopify app's ``orders/paid`` beside a keyed ``orders/create``) is raced too; the first
    run's is the first such type, as before. `HitRate.types` records each run's type. Raises
    ValueError when the receiver is sent no event at all.
    """
    from hookproof.simulator.server.state import ServerState

    state = provider_state if provider_state is not None else ServerState()
    result = HitRate(0, repeats, copies)
    for r in range(repeats):
        run_seed = seed + r
        session = Session(target, run_seed, provider_state=state)
        try:
            candidates = _effectful(session)
            index = candidates[r % len(candidates)]
            event = session.event(index)
            result.types.append(event.type)
            plan = FaultPlan(copies=copies, concurrency=copies)

            async def go() -> None:
                await session.dispatcher.run(schedule([event], plan), race=True)

            session.loop.run_until_complete(go())
            # the world's id, not the envelope's: Standard Webhooks and Svix send their own ``msg_`` ids
            sent = [a for a in session.history.attempts() if event.id in (a.event_id, world_event_id(a))]
            result.attempts += len(sent)
            result.acked += sum(a.outcome is Outcome.ACKED for a in sent)
            result.sent_types |= {a.event_type for a in session.history.attempts() if a.valid}
            session.dirty = True
            session._settle()
            keys = session.explore.keys
            counters = keys is not None and bool(keys.counters)
            checks = session._check(("duplicated", "counter") if counters else ("duplicated",))
            bad = [(f.key, c.check_id) for c in checks for f in c.problems if _applied_twice(f)]
            if bad:
                result.hits += 1
                result.seeds.append(run_seed)
                result.hit_types.append(event.type)
                result.keys.extend(key for key, _ in bad)
                result.kinds.extend(kind for _, kind in bad)
        finally:
            session.close()
        if on_run is not None:
            on_run(r + 1)
    return result


def _applied_twice(finding: Finding) -> bool:
    """True when `finding` says the burst applied more than once: a duplicated effect, or a
    counter (or a money key) that moved more than the provider's truth implies."""
    if finding.check_id != "counter":
        return True
    return isinstance(finding.actual, int) and isinstance(finding.expected, int) and finding.actual > finding.expected


#: Rounds of the world's operations `_effectful` applies: the objects one round makes open the
#: next round's operations on them (a checkout's order, then its refund and cancellation).
EFFECTFUL_ROUNDS = 3


def _effectful(session: Session) -> list[int]:
    """Indexes of one event of each effectful type the receiver is sent, in the order the
    world's operations first make them: each operation once, those on no object first (a
    payment first, else an opened issue…), then, over `EFFECTFUL_ROUNDS` rounds, those on an
    object an earlier one made (a refund of the checkout's order), each on its first object;
    those closing the world (`WorldOps.closing`: Shopify's uninstall) after every other.
    With the team's counters, of each type that moves one (where any does), else of each
    effectful type; else the first event the receiver is sent at all. Raises ValueError when
    it is sent none."""
    keys = session.explore.keys
    movers: dict[str, int] = {}
    effectful: dict[str, int] = {}
    applied: set[str] = set()
    closing = session.ops.closing
    for round_no in range(EFFECTFUL_ROUNDS + 1):  # the operations closing the world (an uninstall) last
        legal = session.ops.legal(session.world)
        fresh = [a for a in dict.fromkeys(action for action, _ in legal) if a not in applied
                 and (a in closing) == (round_no == EFFECTFUL_ROUNDS)]
        on_none = {action for action, obj in legal if obj is None}
        # those on no object first, a payment first among them, where the world has one
        for action in sorted(fresh, key=lambda a: (a not in on_none, a != "pay")):
            now = [obj for a, obj in session.ops.legal(session.world) if a == action]
            if not now:  # made illegal by an earlier one (an uninstall, a cancellation)
                continue
            applied.add(action)
            session.apply(Step("emit", action=action, object=now[0]))
            for i in session.sendable:
                event = session.event(i)
                if not event.business_key:
                    continue
                effectful.setdefault(event.type, i)
                if keys is not None and keys.counters and counter_keys((event,), keys):
                    movers.setdefault(event.type, i)  # with the team's counters: the events that move one
    if movers or effectful:
        return list((movers or effectful).values())
    if session.sendable:  # no enabled type has an effect: the bursts still show what is acknowledged
        return session.sendable[:1]
    raise ValueError(f"no operation of the {session.ops.kind} world makes an event the receiver is sent "
                     "(enabled_events)")
