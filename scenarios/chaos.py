"""Chaos scenarios: the receiver's own failures (DESIGN.md, the "(chaos)" rows).

A crash right after answering 200, a restart between two copies of an event, a pause
longer than the provider's timeout, a connection cut after the answer left, kills at
random moments, and replicas that do not share memory. Each scenario is a `Scenario`
of tier ``"chaos"`` whose phases carry `before`/`after` hooks; the hooks drive the
fault injector the runner holds (`chaos.nemesis.Nemesis`, reached only through the
`ChaosContext`, so this module does not import the chaos package). The runner heals
every fault after the scenario, whatever happened.

Without a controllable target (hookproof starts the receiver as a process or a
container) every chaos scenario is not applicable, with that reason.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from hookproof.scenarios.catalog import (
    ChaosContext,
    Context,
    NotApplicable,
    Phase,
    Plan,
    Scenario,
    effect_events,
    with_optional,
    with_twins,
)
from hookproof.simulator.events import Event
from hookproof.simulator.faults import FaultPlan
from hookproof.simulator.world import World

CHAOS_CHECKS = ("duplicated", "lost", "unexpected")


@dataclass(frozen=True)
class ChaosSettings:
    """How hard the chaos scenarios push (the ``[chaos]`` config section).

    Attributes:
        backend: ``"process"`` or ``"docker"`` (reported).
        events: effectful events per scenario (per trial for kill-during-processing).
        sender_timeout_s: the provider's timeout in pause-past-timeout.
        pause_s: how long the receiver stays paused (longer than `sender_timeout_s`).
        kill_trials: kills in kill-during-processing.
        kill_window_s: each kill lands uniformly within this many seconds of its
            trial's first delivery.
        replicas: receivers behind the proxy in replicas-duplicates.
        time_scale: factor on the provider's retry schedule during chaos (slower than
            the catalog's, so retries outlast a restart).
        drop_after_bytes: answer bytes that get through before network-drop-response
            cuts the connection.
    """

    backend: str = "process"
    events: int = 4
    sender_timeout_s: float = 0.5
    pause_s: float = 1.5
    kill_trials: int = 3
    kill_window_s: float = 0.15
    replicas: int = 3
    time_scale: float = 1e-4
    drop_after_bytes: int = 12

    def __post_init__(self) -> None:
        if self.pause_s <= self.sender_timeout_s:
            raise ValueError(f"pause_s ({self.pause_s}) must exceed sender_timeout_s ({self.sender_timeout_s})")
        if self.events < 1 or self.kill_trials < 1 or self.replicas < 2:
            raise ValueError("events and kill_trials must be at least 1, replicas at least 2")


NO_TARGET = ("hookproof does not control the receiver: configure [target.process] or [target.docker] "
             "and run with --chaos")


def _settings(ctx: Context) -> ChaosSettings | None:
    return ctx.chaos if isinstance(ctx.chaos, ChaosSettings) else None


def _events(ctx: Context, w: World, count: int) -> tuple[Event, ...] | NotApplicable:
    """The first `count` effectful events of a fresh effect story, then the first of each
    optional type owing an effect (`catalog.with_optional`: Shopify's compliance topics the
    endpoint is subscribed to, told after the order's topics), or why there are none."""
    events = effect_events(ctx, w)
    if not events:
        return NotApplicable("the receiver is sent no effectful events (enabled_events)")
    return tuple(with_optional(ctx, events, count))


# ---- hooks ------------------------------------------------------------------------

def _kill_after_acks(count: int) -> Callable[[ChaosContext], None]:
    def before(c: ChaosContext) -> None:
        c.nemesis.kill_after_ack(count, restart=True)
    return before


def _ensure_running(c: ChaosContext) -> None:
    c.nemesis.ensure_running()


def _restart(c: ChaosContext) -> None:
    c.nemesis.restart()


def _wait_scheduled(c: ChaosContext) -> None:
    c.nemesis.wait_scheduled()
    c.nemesis.ensure_running()


def _pause_for(pause_s: float) -> Callable[[ChaosContext], None]:
    def before(c: ChaosContext) -> None:
        c.nemesis.pause()
        c.nemesis.resume_after(pause_s)
    return before


def _crash_at(delay_s: float) -> Callable[[ChaosContext], None]:
    def before(c: ChaosContext) -> None:
        c.nemesis.crash_restart_after(delay_s)
    return before


def _drop_answer(after_bytes: int) -> Callable[[ChaosContext], None]:
    def before(c: ChaosContext) -> None:
        c.nemesis.drop_answers(after_bytes, connections=1)
    return before


def _scale(count: int) -> Callable[[ChaosContext], None]:
    def before(c: ChaosContext) -> None:
        c.nemesis.scale(count)
    return before


# ---- plans ------------------------------------------------------------------------

def _crash_after_ack(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    first = _events(ctx, w, 1)
    if isinstance(first, NotApplicable):
        return first
    warm = first[:1]  # the burst below holds the optional types' events (`effect_events` tells them)
    burst: list[Event] = []
    while len(burst) < 2 * s.events:  # fresh objects per round: effect_events yields a handful
        more = effect_events(ctx, w)
        burst.extend(more[:2 * s.events - len(burst)])
    # One event to warm the receiver up, then the rest in flight together: the kill lands
    # right after the last 2xx, while a receiver that acknowledges first still has work queued.
    # The burst's count is taken once a paid invoice's two events are in it (`with_twins`).
    plan = with_twins(Plan(w, (Phase(warm, time_scale=s.time_scale),
                               Phase(tuple(burst), after=_wait_scheduled, time_scale=s.time_scale, together=True))),
                      ctx)
    assert isinstance(plan, Plan)
    warmed, sent = plan.phases
    return replace(plan, phases=(warmed, replace(sent, before=_kill_after_acks(len(sent.events)))))


def _restart_between(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    events = _events(ctx, w, s.events)
    if isinstance(events, NotApplicable):
        return events
    return Plan(w, (Phase(events, after=_restart, time_scale=s.time_scale),
                    Phase(events, time_scale=s.time_scale)))


def _pause_past_timeout(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    events = _events(ctx, w, min(s.events, 2))
    if isinstance(events, NotApplicable):
        return events
    timed = math.ceil(s.pause_s / s.sender_timeout_s) + 1  # every attempt made while paused times out
    plan = FaultPlan(sender_timeout_s=s.sender_timeout_s, timeouts=timed)
    # the first event and the optional types' (Shopify's compliance topics) go through the pause
    paused = (*events[:1], *events[min(s.events, 2):])
    after = tuple(e for e in events[1:min(s.events, 2)])
    # in flight together, so each of them is made while the receiver is frozen (one event: as it was)
    together = len(paused) > 1
    return Plan(w, (Phase(paused, plan, before=_pause_for(s.pause_s), after=_wait_scheduled,
                          time_scale=s.time_scale, together=together),
                    Phase(after, time_scale=s.time_scale)) if after else
                (Phase(paused, plan, before=_pause_for(s.pause_s), after=_wait_scheduled, time_scale=s.time_scale,
                       together=together),))


def _network_drop_response(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    events = _events(ctx, w, s.events)
    if isinstance(events, NotApplicable):
        return events
    return Plan(w, tuple(Phase((e,), before=_drop_answer(s.drop_after_bytes), time_scale=s.time_scale)
                         for e in events))


def _kill_during_processing(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    rng = random.Random(w.seed)
    phases = []
    for _ in range(s.kill_trials):
        events = _events(ctx, w, s.events)  # fresh objects for every trial
        if isinstance(events, NotApplicable):
            return events
        delay_s = round(rng.uniform(0.0, s.kill_window_s), 4)
        phases.append(Phase(events, before=_crash_at(delay_s), after=_wait_scheduled, time_scale=s.time_scale))
    return Plan(w, tuple(phases))


def _replicas_duplicates(ctx: Context, w: World) -> Plan | NotApplicable:
    s = _settings(ctx)
    if s is None:
        return NotApplicable(NO_TARGET)
    events = _events(ctx, w, s.events)
    if isinstance(events, NotApplicable):
        return events
    # One copy per phase, copies of an event back to back: each phase opens a new
    # connection, which the proxy sends to the next replica.
    phases = [Phase((e,), time_scale=s.time_scale) for e in events for _ in range(s.replicas)]
    phases[0] = replace(phases[0], before=_scale(s.replicas))
    return Plan(w, tuple(phases))


def _redelivered_by_hand(build: Callable[[Context, World], Plan | NotApplicable]
                         ) -> Callable[[Context, World], Plan | NotApplicable]:
    """`build`, and where the provider never retries by itself (GitHub: no automatic
    redelivery, docs.github.com "Handling failed webhook deliveries") a last phase that
    redelivers by hand, once the receiver is back, every event of the plan that no attempt
    delivered (`Phase.failed_only`), as its team would after an outage following that guide:
    an event whose every attempt the fault cut off is then still owed, and one the receiver
    acknowledged is never sent again (it redelivered those too, so a receiver acknowledging
    before it persists got its lost work back and passed ``crash-after-ack``)."""
    def plan(ctx: Context, w: World) -> Plan | NotApplicable:
        built = build(ctx, w)
        if isinstance(built, NotApplicable) or ctx.profile.retry_schedule_s:
            return built
        events = tuple({e.id: e for phase in built.phases for e in phase.events}.values())
        last = built.phases[-1]
        return replace(built, phases=(*built.phases, Phase(events, time_scale=last.time_scale, failed_only=True)))
    return plan


def _chaos(id: str, title: str, description: str, checklist: tuple[str, ...],
           build: Callable[[Context, World], Plan | NotApplicable]) -> Scenario:
    return Scenario(id, title, description, CHAOS_CHECKS, checklist, _redelivered_by_hand(build), tier="chaos")


CHAOS_SCENARIOS: tuple[Scenario, ...] = (
    _chaos("crash-after-ack", "Killed right after answering 200",
           "A few events arrive together; the receiver is killed (SIGKILL) the moment it has written "
           "the last 2xx answer, then restarted. The provider saw every 2xx and will never resend: "
           "every effect must appear anyway. A receiver that acknowledges before it persists (an "
           "in-memory queue) loses what was still queued.",
           ("persists-before-ack",), _crash_after_ack),
    _chaos("restart-between-duplicates", "A restart between two copies",
           "Every event is delivered, the receiver restarts, and every event comes again. Dedupe kept "
           "in process memory is gone after the restart and applies the copies again.",
           ("duplicates-tested",), _restart_between),
    _chaos("pause-past-timeout", "Paused longer than the provider waits",
           "The receiver is frozen (SIGSTOP or the cgroup freezer) longer than the provider's timeout, "
           "then resumed: the first request and the provider's retries, all queued meanwhile, are "
           "processed together. The effect must happen once.",
           ("timeouts-tested", "unique-under-concurrency"), _pause_past_timeout),
    _chaos("network-drop-response", "The connection is cut after the answer starts",
           "A fault proxy closes the connection once the receiver's answer has begun: the receiver "
           "applied the event, the provider saw no complete answer and retries. One effect.",
           ("timeouts-tested", "duplicates-tested"), _network_drop_response),
    _chaos("kill-during-processing", "Killed at random moments",
           "Over a few trials the receiver is killed at a random moment while events arrive and is "
           "restarted at once; the provider keeps retrying. Afterwards every event must be applied "
           "exactly once: nothing acknowledged lost, nothing applied twice.",
           ("persists-before-ack", "duplicates-tested"), _kill_during_processing),
    _chaos("replicas-duplicates", "Copies spread over replicas",
           "Several replicas share one database behind a round-robin proxy; each copy of an event "
           "lands on another replica. Dedupe kept in one replica's memory does not see the others.",
           ("duplicates-tested",), _replicas_duplicates),  # copies one after another: no race, no concurrency
)

#: Chaos scenario id -> scenario (run with ``hookproof certify --chaos``).
CHAOS_CATALOG: Mapping[str, Scenario] = {s.id: s for s in CHAOS_SCENARIOS}

__all__ = ["CHAOS_CATALOG", "CHAOS_CHECKS", "CHAOS_SCENARIOS", "ChaosSettings", "NO_TARGET"]
