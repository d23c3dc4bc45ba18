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

    @property
    def rate(self) -> float:
        return self.hits / self.repeats if self.repeats else 0.0


def burst_hit_rate(target: ExploreTarget, *, repeats: int = 20, copies: int = 8, seed: int = 0,
                   provider_state: Any = None, on_run: Callable[[int], None] | None = None) -> HitRate:
    """Release `copies` concurrent copies of an effectful event `repeats` times (race
    amplification over real sockets for URLs); count the runs that applied it twice,
    and the copies sent and acknowledged. `on_run(done)` hears of each finished run.

    The event is the first effectful one the receiver is sent of the profile's world,
    made by its simplest operations (`_effectful`). Raises ValueError when none is.
    """
    from hookproof.simulator.server.state import ServerState

    state = provider_state if provider_state is not None else ServerState()
    result = HitRate(0, repeats, copies)
    for r in range(repeats):
        run_seed = seed + r
        session = Session(target, run_seed, provider_state=state)
        try:
            index = _effectful(session)
            event = session.event(index)
            plan = FaultPlan(copies=copies, concurrency=copies)

            async def go() -> None:
                await session.dispatcher.run(schedule([event], plan), race=True)

            session.loop.run_until_complete(go())
            # the world's id, not the envelope's: Standard Webhooks and Svix send their own ``msg_`` ids
            sent = [a for a in session.history.attempts() if event.id in (a.event_id, world_event_id(a))]
            result.attempts += len(sent)
            result.acked += sum(a.outcome is Outcome.ACKED for a in sent)
            session.dirty = True
            session._settle()
            keys = session.explore.keys
            counters = keys is not None and bool(keys.counters)
            checks = session._check(("duplicated", "counter") if counters else ("duplicated",))
            bad = [(f.key, c.check_id) for c in checks for f in c.problems if _applied_twice(f)]
            if bad:
                result.hits += 1
                result.seeds.append(run_seed)
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


def _effectful(session: Session) -> int:
    """Index of the first effectful event the receiver is sent (with the team's counters, the
    first that moves one, else the first effectful one; else the first it is sent at
    all), after as few of the world's operations on no object (a payment first, else an
    opened issue…) as it takes. Raises ValueError when it is sent none."""
    simple = [action for action, obj in session.ops.legal(session.world) if obj is None]
    keys = session.explore.keys
    first: int | None = None
    for action in sorted(simple, key=lambda a: a != "pay"):  # a payment first, where the world has one
        session.apply(Step("emit", action=action))
        for i in session.sendable:
            if not session.event(i).business_key:
                continue
            if not (keys is not None and keys.counters) or counter_keys((session.event(i),), keys):
                return i  # with the team's counters: an event that moves one, where there is one
            first = i if first is None else first
    if first is not None:
        return first
    if session.sendable:  # no enabled type has an effect: the bursts still show what is acknowledged
        return session.sendable[0]
    raise ValueError(f"no operation of the {session.ops.kind} world makes an event the receiver is sent "
                     "(enabled_events)")
