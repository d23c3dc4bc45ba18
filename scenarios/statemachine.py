"""`hookproof explore`: a Hypothesis state machine over delivery schedules.

The machine plays the provider. Its rules change the world (the world decides which
lifecycle operation is legal next) and deliver the resulting events in any order, with
the faults an at-least-once provider produces: a redelivery of an acked event (maybe
re-serialized or with new transport fields), a burst of concurrent copies, a response
the provider never sees, a sender timeout, and a clock that moves on. After every step
it checks the safety properties (at most one effect per business key, no observed state
regression); at the end it delivers whatever is still pending, lets the receiver settle
and checks exactly-once and that the final state equals the provider's truth.

Two tiers (DESIGN.md, "Two tiers of search"):

- deterministic: an in-process ASGI/WSGI app driven on one event loop (Hypothesis has
  no async rules, so each rule runs the loop until its deliveries complete; a burst is
  an ``asyncio.gather`` inside one rule; a lost answer is the app running to completion
  and the provider then seeing a timeout). Failures reproduce, so they shrink, and the
  shrunk schedule is written as JSON that `replay` runs again. A receiver's own threads
  can still race a burst's requests: after Hypothesis's shrink, the schedule's steps are
  deleted one by one, each candidate run again, a race several times (`step_shrink`);
- statistical: a URL or a started process. The machine runs the same rules there (bursts
  go out byte-synchronised through the race transport, a timeout is a real sender
  timeout), so a finding may not shrink or replay as reliably; real-socket bursts are
  also repeated R times by `burst_hit_rate`, which reports a hit rate and the seeds.

The world is the one the profile sends from, changed by its own operations
(`scenarios.world_ops`); the delivery rules are provider-neutral. Besides deliveries,
redeliveries, bursts, lost answers and timeouts, the rules play the delivery patterns of
real bug reports, as the catalog does: the first events of a new object released
together (``burst_related``), an older event of an object redelivered after a newer one,
an event delivered after a newer one of its object was acknowledged, an object's unsent
events delivered newest first where their states differ, after an operation that moves
its state when none is waiting (``deliver_newest_first``, certify's ``reorder``), two
never-sent events of one object whose states differ released together, the newer first
(``burst_states``, certify's ``related-burst`` of a subscription's two statuses), two later
updates of an object whose state the receiver stored released together, the newer first, on a
target whose observer reads states (``burst_stored``, certify's
``concurrent-updates-stored-object``), the last
N acknowledged events replayed (``redeliver_window``), and the provider API failing the
next fetch of an object once (``api_fault``).

A schedule step is plain data (`Step`), so the machine, the JSON file and `replay` share
one interpreter (`Session.apply`). Events are referred to by their index in the world's
event list and objects by their index among the objects of their type, so a schedule
does not depend on the ids a seed draws: ids are salted per example (fresh ids, no
receiver reset) while the seed fixes everything else.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from hookproof.scenarios.bursts import HitRate, burst_hit_rate
from hookproof.scenarios.explore_targets import PROVIDER_API_BASE, ExploreTarget, Prepared, provider_api, shared_target
from hookproof.scenarios.schedules import (
    API_FAULT_STATUSES,
    DELIVERY_OPS,
    NOTHING_ACKNOWLEDGED,
    SCHEDULE_FORMAT,
    Failure,
    FindingError,
    ScheduleError,
    Step,
    format_step,
    format_steps,
    load_schedule,
    schedule_document,
    schedule_lines,
    write_schedule,
)
from hookproof.scenarios.search_loop import SearchLoop
from hookproof.scenarios.session import Session
from hookproof.scenarios.step_shrink import RACE_RUNS, Budget, judge, shrink_steps
from hookproof.scenarios.world_ops import ACTIONS, WORLD_OPS, WorldOps, apply_action, legal_actions, ops_for
from hookproof.simulator.delivery import Outcome
from hookproof.simulator.faults import Mutation

#: Redelivery variants of the `redeliver` rule: the same bytes, or new transport fields (timestamp,
#: signature). A re-serialized body (same event, other bytes) is its own rule, `redeliver_reserialized`.
REDELIVERY_MUTATIONS: tuple[str | None, ...] = (None, Mutation.TRANSPORT_FIELDS.value)
#: The largest window `redeliver_window` replays (an example has a few dozen events at most).
WINDOW_MAX = 8


# ---- the Hypothesis machine ------------------------------------------------------------------

def machine_for(explore: ExploreTarget, *, seed: int = 0, provider_state: Any = None,
                failures: list[Failure] | None = None, counts: _Counts | None = None,
                loop: SearchLoop | None = None) -> type:
    """A RuleBasedStateMachine class exploring `explore`; failures are appended to `failures`,
    and each finished example is added to `counts`. Its examples share `loop` (None: each
    example makes its own).

    The last failure appended is the one of the last failing run, which Hypothesis makes
    the shrunk example when it reports.
    """
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

    sink = failures if failures is not None else []
    index = st.integers(min_value=0, max_value=15)

    class WebhookMachine(RuleBasedStateMachine):
        """Provider operations and faults as rules; at-most-once and monotonic state checked after every step."""

        def __init__(self) -> None:
            super().__init__()
            self.session = Session(explore, seed, provider_state=provider_state, loop=loop)
            if counts is not None:
                counts.open.append(self.session)  # closed at teardown, or by the search if interrupted
            self.failed = False

        def _run(self, step: Step) -> None:
            """Apply one step, then the safety checks, as `replay` does after every step (a
            rule of several steps is judged after each of them, so its schedule replays)."""
            self.session.apply(step)
            self._safe()

        def _safe(self) -> None:
            found = self.session.safety()  # a no-op when nothing was sent since the last one
            if found is not None:
                self.failed = True
                sink.append(found)
                raise FindingError(found)

        # ---- the world ---------------------------------------------------------------
        # Every example begins with an emit. Without it, Hypothesis's swarm testing (each
        # example turns a random subset of rules off) leaves `emit` off in about half the
        # examples, and with no event every other rule but the clock is impossible: those
        # examples only move the clock and test nothing.
        @initialize(choice=index)
        def begin(self, choice: int) -> None:
            self.emit(choice)

        @rule(choice=index)
        def emit(self, choice: int) -> None:
            legal = _legal(self.session)
            action, obj = legal[choice % len(legal)]
            self._run(Step("emit", action=action, object=obj))

        @precondition(lambda self: bool(self.session.groups))
        @rule(choice=index)
        def change(self, choice: int) -> None:
            """An operation on an object the world has (a refund, a renewal, a cancellation…):
            besides `emit`, so that one object's life has several events (two refunds of one
            charge, a failure then a payment) in a short program."""
            legal = _legal(self.session)
            kinds = self.session.ops.kinds  # a checkout of a kind is no object's operation
            on_objects = [a for a in legal if a[1] is not None and a[0] not in kinds] or legal
            action, obj = on_objects[choice % len(on_objects)]
            self._run(Step("emit", action=action, object=obj))

        @rule(seconds=st.integers(min_value=1, max_value=3))
        def advance_clock(self, seconds: int) -> None:
            self._run(Step("advance_clock", seconds=seconds))

        # ---- deliveries ---------------------------------------------------------------
        @precondition(lambda self: bool(self.session.pending()))
        @rule(which=index)
        def deliver(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("deliver", event=pending[which % len(pending)]))

        @precondition(lambda self: bool(self.session.acked))
        @rule(which=index, variant=st.sampled_from(REDELIVERY_MUTATIONS))
        def redeliver(self, which: int, variant: str | None) -> None:
            acked = self.session.acked_events()
            self._run(Step("redeliver", event=acked[which % len(acked)], mutation=variant))

        # A rule of its own, not a third variant of `redeliver`: as a variant it was drawn in
        # about one step in twenty, and under swarm testing whole searches of 200 examples
        # went by without one on an event with an effect (a receiver deduplicating on a hash
        # of the body was then found in some runs only). Only events whose second application
        # can show (an effect or a state) are re-serialized.
        @precondition(lambda self: bool(_applied(self.session)))
        @rule(which=index)
        def redeliver_reserialized(self, which: int) -> None:
            applied = _applied(self.session)
            self._run(Step("redeliver", event=applied[which % len(applied)], mutation=Mutation.RESERIALIZE.value))

        @precondition(lambda self: bool(self.session.sendable))
        @rule(which=index, copies=st.integers(min_value=2, max_value=4))
        def burst(self, which: int, copies: int) -> None:
            candidates = self.session.burst_candidates()
            self._run(Step("burst", event=candidates[which % len(candidates)], copies=copies))

        @precondition(lambda self: bool(self.session.pending()))
        @rule(which=index)
        def drop_response(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("drop_response", event=pending[which % len(pending)]))

        @precondition(lambda self: bool(self.session.pending()))
        @rule(which=index)
        def timeout(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("timeout", event=pending[which % len(pending)]))

        # ---- delivery patterns from real bug reports (the catalog's, issue 16) ------------
        @precondition(lambda self: bool(self.session.related_groups()))
        @rule(which=index)
        def burst_related(self, which: int) -> None:
            """The first events of one new object released together (related-burst)."""
            groups = self.session.related_groups()
            self._run(Step("burst_related", events=groups[which % len(groups)]))

        @precondition(lambda self: bool(self.session.key_pairs()))
        @rule(which=index)
        def burst_key_pair(self, which: int) -> None:
            """Two events of one object owing one key, released together (a delayed checkout's
            completion and its payment's success, from both of which Stripe's guide fulfils:
            a receiver that fetches the session and checks, then inserts, ships twice)."""
            pairs = self.session.key_pairs()
            self._run(Step("burst_related", events=pairs[which % len(pairs)]))

        @precondition(lambda self: bool(self.session.same_kind_pairs()) or bool(self.session.repeats()))
        @rule(which=index)
        def redeliver_older(self, which: int) -> None:
            """Two events of one type about one object delivered, then the older one again
            (older-after-newer-redelivery: R1, R2, R1). When no object has two such events, an
            operation already played on an object is first played on it again (a second refund
            of a charge refunded once). Plain steps, so shrinking keeps only what the finding needs."""
            pairs = self.session.same_kind_pairs()
            if not pairs:
                repeats = self.session.repeats()
                action, obj = repeats[which % len(repeats)]
                start = len(self.session.events)
                self._run(Step("emit", action=action, object=obj))
                pairs = [p for p in self.session.same_kind_pairs() if p[1] >= start]
                if not pairs:  # the operation made no second event of one type about one object
                    return
            older, newer = pairs[which % len(pairs)]
            for i in (older, newer):
                if i not in self.session.acked:
                    self._run(Step("deliver", event=i))
            self._run(Step("redeliver", event=older))

        @precondition(lambda self: bool(self.session.late_pairs()))
        @rule(which=index)
        def deliver_late(self, which: int) -> None:
            """The newer event of an object delivered, then the older one
            (stale-failure-after-success: the failure after the payment)."""
            pairs = self.session.late_pairs()
            older, newer = pairs[which % len(pairs)]
            if newer not in self.session.acked:
                self._run(Step("deliver", event=newer))
            self._run(Step("deliver", event=older))

        @precondition(lambda self: bool(self.session.newest_first()) or bool(self.session.state_moves()))
        @rule(which=index)
        def deliver_newest_first(self, which: int) -> None:
            """One object's events that were never sent, delivered newest first where their
            states differ (reorder: the older state arrives last). When no object has such
            events, an operation first moves the state of an object whose event was not sent
            yet (a failed renewal of a subscription whose creation is pending). Plain steps,
            so shrinking keeps only what the finding needs."""
            groups = self.session.newest_first()
            if not groups:
                moves = self.session.state_moves()
                action, obj = moves[which % len(moves)]
                start = len(self.session.events)
                self._run(Step("emit", action=action, object=obj))
                groups = [g for g in self.session.newest_first() if g[0] >= start]
                if not groups:  # the operation left the states alike: nothing to reorder
                    return
            for i in groups[which % len(groups)]:
                self._run(Step("deliver", event=i))

        @precondition(lambda self: bool(self.session.newest_first()) or bool(self.session.state_moves()))
        @rule(which=index)
        def burst_states(self, which: int) -> None:
            """Two events of one object that carry different states, never sent, released
            together, the newer one first (related-burst's new subscription, ``incomplete``
            then ``active``, raced): a receiver that reads the state, compares it in code and
            writes without a lock can end on the older one. When no object has such events, an
            operation first moves the state of an object whose event was not sent yet, as
            `deliver_newest_first` does. A `burst_related` step, so it shrinks and replays as
            the other bursts do."""
            pairs = _state_pairs(self.session)
            if not pairs:
                moves = self.session.state_moves()
                action, obj = moves[which % len(moves)]
                start = len(self.session.events)
                self._run(Step("emit", action=action, object=obj))
                pairs = [p for p in _state_pairs(self.session) if p[0] >= start]
                if not pairs:  # the operation left the states alike: nothing to race
                    return
            self._run(Step("burst_related", events=pairs[which % len(pairs)]))

        @precondition(lambda self: bool(_stored_pairs(self.session)) or bool(self.session.newest_first()))
        @rule(which=index)
        def burst_stored(self, which: int) -> None:
            """Two later events of an object whose state the receiver already stored (an
            acknowledged event of it), in different states and seconds, never sent, released
            together, the newer one first (certify's ``concurrent-updates-stored-object``: an
            order's orders/paid and orders/updated once its orders/create is stored). Both find
            the stored row, so no unique insert serialises them: a receiver reading it, comparing
            and writing without a lock can end on the older one. When no object has such events,
            the oldest never-sent event of an object whose never-sent events differ in state is
            delivered first (its row stored), and the rest of it raced if two remain. A
            `burst_related` step, so it shrinks and replays as the other bursts do."""
            pairs = _stored_pairs(self.session)
            if not pairs:
                groups = self.session.newest_first()
                group = groups[which % len(groups)]
                self._run(Step("deliver", event=group[-1]))  # its oldest: the row the updates find
                pairs = [p for p in _stored_pairs(self.session) if p[0] in group]
                if not pairs:  # fewer than two later events in different states remain
                    return
            self._run(Step("burst_related", events=pairs[which % len(pairs)]))

        @precondition(lambda self: len(self.session.acked) >= 2)
        @rule(count=st.integers(min_value=2, max_value=WINDOW_MAX))
        def redeliver_window(self, count: int) -> None:
            """The last `count` acknowledged events replayed by the provider (mass-redelivery-window:
            Paddle's replay is a new notification of each event, `Profile.replayed`)."""
            self._run(Step("redeliver_window", count=count))

        @precondition(lambda self: self.session.provider_state is not None and bool(self.session.pending()))
        @rule(which=index, status=st.sampled_from(API_FAULT_STATUSES))
        def api_fault(self, which: int, status: int) -> None:
            """The provider API fails the next fetch of a pending event's object, then recovers
            (provider-api-transient)."""
            pending = self.session.pending()
            if status == 404 and not self.session.world.api_hides_new_objects:
                status = 503  # a 404 there is "no such object", never "not visible yet" (Stripe's)
            self._run(Step("api_fault", event=pending[which % len(pending)], status=status))

        # ---- properties ---------------------------------------------------------------
        # At most once and monotonic state are checked after every step by `_run`, which
        # every rule steps through (no Hypothesis invariant: run after each rule, it only
        # ever found the session checked already).

        def teardown(self) -> None:
            try:
                if not self.failed:
                    found = self.session.finish()
                    if found is not None:
                        sink.append(found)
                        raise FindingError(found)
            finally:
                if counts is not None:
                    counts.add(self.session)
                self.session.close()
                if counts is not None:
                    counts.open[:] = [s for s in counts.open if s is not self.session]

    if not _races_key_pairs(explore):  # a rule drawn at all changes every search's draws: only where it can apply
        del WebhookMachine.burst_key_pair
    if not explore.stored_bursts:  # likewise: only where the observer reads the states it could lose
        del WebhookMachine.burst_stored
    WebhookMachine.__name__ = WebhookMachine.__qualname__ = "WebhookMachine"
    return WebhookMachine


def _races_key_pairs(explore: ExploreTarget) -> bool:
    """True when the endpoint lists its types (`ExploreTarget.enabled`) and among them one whose
    event owes a key only when a condition holds (`lifecycle.WITHHELD_KEYS`: a Checkout
    Session's completion, unpaid by a delayed method, beside its ``async_payment_succeeded``):
    the searches that race two such events of one object (`burst_key_pair`). Other searches
    draw as they did without the rule (Hypothesis draws a flag for every rule a machine has)."""
    from hookproof.simulator.world.lifecycle import WITHHELD_KEYS

    return explore.enabled is not None and any(t in WITHHELD_KEYS for t in explore.enabled)


def _legal(session: Session) -> list[tuple[str, int | None]]:
    """The world operations legal now (`WorldOps.legal`), remembered until the session changes:
    only an emit changes what is legal, and `emit` and `change` both ask."""
    return session.memo("legal", lambda: session.ops.legal(session.world))


def _applied(session: Session) -> list[int]:
    """Indexes of acked events with an effect or a state (`Session.acked_events` order): those
    whose second application a receiver can get wrong."""
    return session.memo("applied", lambda: [i for i in session.acked_events()
                                            if session.event(i).business_key is not None
                                            or session.world.events[i].stateful])


def _state_pairs(session: Session) -> list[tuple[int, int]]:
    """(newer, older): per object with never-sent events whose states differ
    (`Session.newest_first`), its newest event and the newest older one whose state differs
    from it (states as delivered: combined with the declared fields, if any)."""
    def compute() -> list[tuple[int, int]]:
        events = session.delivered_events()
        pairs = []
        for group in session.newest_first():
            newer = group[0]
            older = next((i for i in group[1:] if events[i].status != events[newer].status), None)
            if older is not None:
                pairs.append((newer, older))
        return pairs

    return session.memo("state_pairs", compute)


def _stored_pairs(session: Session) -> list[tuple[int, int]]:
    """(newer, older): per object with an acknowledged event carrying a state (the receiver
    stored its row), its events of a state emitted after the last such one that the receiver is
    sent and that were never attempted: the newest, and the newest older one whose state differs
    from it (as delivered: combined with the declared fields, if any) and whose time is another
    whole second (no clock of a provider ties them: a tie is ``stale-after-newer``'s story, not a
    race's). In the order of the objects' first such event. O(events), once per change."""
    def compute() -> list[tuple[int, int]]:
        world = session.world.events
        stored: dict[str, int] = {}
        for i in session.acked:
            e = world[i]
            if e.stateful and e.status is not None and i > stored.get(e.object_id, -1):
                stored[e.object_id] = i
        if not stored:
            return []
        events = session.delivered_events()
        later: dict[str, list[int]] = {}
        for i in session.sendable:
            e = world[i]
            if e.object_id in stored and i > stored[e.object_id] and e.stateful and e.status is not None \
                    and i not in session.attempts_of:
                later.setdefault(e.object_id, []).append(i)
        pairs = []
        for group in later.values():
            newer = group[-1]
            older = next((i for i in reversed(group[:-1]) if events[i].status != events[newer].status
                          and world[i].created != world[newer].created), None)
            if older is not None:
                pairs.append((newer, older))
        return pairs

    return session.memo("stored_pairs", compute)


@dataclass
class ExploreResult:
    """What `explore` found: the shrunk failure (or None), and how the search went."""

    failure: Failure | None
    examples: int
    steps: int
    duration_s: float
    seed: int
    error: str | None = None
    attempts: int = 0  # valid attempts sent, over every example of the search
    acked: int = 0  # of which the receiver acknowledged (a search nothing was acknowledged in proves nothing)
    statuses: Mapping[int, int] = field(default_factory=dict)  # those answered, by HTTP status (a run's headline)
    interrupted: bool = False  # shrinking was stopped (the run's deadline, Ctrl-C): `failure` is the smallest so far
    restarts: int = 0  # times the search began again with a fresh Hypothesis seed (it could not replay an example)
    cut_short: bool = False  # no finding, and the search ended before `max_examples` examples (`error` says why)
    sent_types: frozenset[str] = frozenset()  # the event types of the valid attempts sent (the provider's names)


#: Hypothesis's own shrink of a finding, at most: the smaller schedules it runs, and seconds (its
#: own caps are 500 successful shrinks and 300 s: a new user's search of 60 examples found a
#: duplicate in 5 s, then shrank it for 275 s over 828 schedules). The count keeps a seed's
#: result the same on any machine; the seconds bound a slow receiver. The deletion of the
#: schedule's own steps (`step_shrink`) follows, within its own budget.
SHRINK_EXAMPLES = 300
SHRINK_SECONDS = 60.0


class ShrinkBudgetSpent(BaseException):
    """Raised after an example once Hypothesis's shrink has run `SHRINK_EXAMPLES` schedules or
    `SHRINK_SECONDS`: not an Exception, so Hypothesis stops at once rather than take it for the
    schedule failing (as with KeyboardInterrupt)."""


def explore(target: ExploreTarget, *, max_examples: int = 100, seed: int | None = None,
            step_count: int = 10, provider_state: Any = None, route_provider_api: bool = True,
            database: Any = None, on_example: Callable[[int, int, int], None] | None = None) -> ExploreResult:
    """Run the state machine against `target` until a finding (shrunk) or `max_examples`.

    A KeyboardInterrupt (Ctrl-C, the run's deadline) before any finding propagates; after one,
    shrinking stops and the result holds the smallest failing schedule found so far
    (`ExploreResult.interrupted`).

    `on_example(examples, attempts)` hears of each finished example: how many so far, and
    the valid attempts they sent (for progress lines).

    Hypothesis's shrink runs at most `SHRINK_EXAMPLES` schedules or `SHRINK_SECONDS` (`error`
    then says so); the deletion of the schedule's steps follows (`step_shrink`).

    `max_examples` is Hypothesis's: the examples it keeps, before shrinking. The examples run
    (`ExploreResult.examples`) also count those Hypothesis discards (too long, overrun), so
    they may be more. When Hypothesis cannot replay an example because the receiver answered
    it differently (`FlakyStrategyDefinition`) before any finding, the search begins again
    with a fresh seed (`restart_seed`) for the examples left of `max_examples` (counting every
    example run), as long as each search runs new examples (`ExploreResult.restarts`);
    otherwise it is cut short (`ExploreResult.cut_short`) and the error says so.

    The active Hypothesis profile is the base (under ``CI=true`` Hypothesis loads its
    ``ci`` profile: derandomized, no database), except that a given `seed` fixes both the
    world seed and Hypothesis's seed, derandomized profile or not. In-process targets get the provider API routed by respx.
    `database` is a Hypothesis example database (None: none; every machine shares one
    test key, so a database is best kept per target).
    """
    import io

    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.stateful import run_state_machine_as_test

    from hookproof.simulator.server.state import ServerState

    world_seed = seed if seed is not None else int.from_bytes(os.urandom(3), "big")
    failures: list[Failure] = []
    counter = _Counts(on_example=on_example, failures=failures)
    state = provider_state if provider_state is not None else ServerState()
    loop = SearchLoop()  # one loop for every example: the receiver's worker threads are reused
    machine = machine_for(target, seed=world_seed, provider_state=state, failures=failures, counts=counter,
                          loop=loop)
    if seed is not None:
        machine = hypothesis_seed(seed)(machine)
    # A given seed decides the search, also where the active profile derandomizes (Hypothesis's
    # ``ci`` profile does, and would then ignore the seed).
    config = settings(max_examples=max_examples, stateful_step_count=step_count, deadline=None,
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False, database=database,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    if seed is not None:
        config = settings(config, derandomize=False)
    out = io.StringIO()
    started = time.monotonic()
    error: str | None = None
    shrink_note: str | None = None  # Hypothesis's shrink stopped at its budget
    restarts = 0  # searches begun again with a fresh Hypothesis seed after a FlakyStrategyDefinition
    cut_short = False
    routing = provider_api(state) if (route_provider_api and target.in_process) else contextlib.nullcontext()
    def stopped(note: str) -> ExploreResult:
        return ExploreResult(failures[-1], counter.examples, counter.steps, time.monotonic() - started, world_seed,
                             note, attempts=counter.attempts, acked=counter.acked, interrupted=True,
                             statuses=dict(counter.statuses), restarts=restarts,
                             sent_types=frozenset(counter.sent_types))

    with routing, contextlib.redirect_stdout(out), contextlib.closing(loop), _older_objects_frozen():
        while True:
            before = counter.examples
            try:
                run_state_machine_as_test(machine, settings=config)
            except FindingError:
                pass
            except BaseException as exc:  # noqa: BLE001 - Flaky and friends: report them, keep the failure
                from hypothesis.errors import FlakyStrategyDefinition

                if isinstance(exc, ShrinkBudgetSpent):  # the finding stands; its steps are deleted next
                    counter.close_open()
                    shrink_note = (f"Hypothesis's shrink stopped after {counter.shrunk} smaller schedule(s) in "
                                   f"{time.monotonic() - counter.shrink_started:.0f} s (at most {SHRINK_EXAMPLES} or "
                                   f"{SHRINK_SECONDS:.0f} s); the schedule's steps were then deleted one at a time")
                    break
                if isinstance(exc, KeyboardInterrupt):
                    counter.close_open()  # no unclosed session left to the interpreter's exit
                    if not failures:
                        raise
                    # Stopped while shrinking (the run's deadline, Ctrl-C): the finding stands, as the
                    # smallest failing schedule found so far; losing it would turn a found bug into silence.
                    shrunk = counter.shrunk
                    return stopped(f"shrinking was stopped after {shrunk} smaller schedule(s) tried: the "
                                   "schedule is the smallest failing one found so far")
                if isinstance(exc, FlakyStrategyDefinition) and not failures:
                    # Which rules apply depends on the receiver's answers (acked, pending): one that
                    # answered a replayed example differently (timing) leaves Hypothesis unable to
                    # replay it. The examples run so far stand; the rest of the budget is searched
                    # with a fresh seed, as long as each search gets further.
                    remaining = max_examples - counter.examples
                    if remaining > 0 and counter.examples > before:
                        restarts += 1
                        machine = hypothesis_seed(restart_seed(world_seed, restarts))(machine)
                        config = settings(config, max_examples=remaining, derandomize=False)
                        continue
                    cut_short = remaining > 0
                elif not failures:
                    raise
                else:
                    error = after_finding_note(exc)
            break
        if failures:
            # Hypothesis shrinks the choices; a schedule whose answers depend on timing stops it early.
            # Deleting the schedule's own steps, each candidate run again, goes on from there.
            found = failures[-1]
            tried = counter.shrunk

            def run_schedule(steps: Sequence[Step]) -> Failure | None:
                nonlocal tried
                try:
                    return replay(target, steps, world_seed, provider_state=state, route_provider_api=False,
                                  loop=loop)
                finally:
                    tried += 1
                    if counter.on_example is not None:  # the progress line: still shrinking
                        counter.on_example(counter.examples, counter.attempts, tried)

            try:
                shrunk_by_steps = shrink_steps(found, run_schedule, smaller=failures)
            except KeyboardInterrupt:
                counter.close_open()
                return stopped(f"shrinking was stopped after {tried} smaller schedule(s) tried: the schedule is "
                               "the smallest failing one found so far")
            if error == FLAKY_FINDING_NOTE:
                # Hypothesis's last run of its schedule passed; say so only if that schedule's runs still do.
                again = shrunk_by_steps if shrunk_by_steps is not found else judge(run_schedule, found.steps,
                                                                                     Budget(RACE_RUNS))
                if again is not None:
                    error = None
                    if again is not shrunk_by_steps:
                        failures.append(again)
    if restarts or cut_short:
        error = flaky_note(counter.examples, max_examples, restarts, cut_short)
    if shrink_note is not None:
        error = f"{error}; {shrink_note}" if error else shrink_note
    return ExploreResult(failures[-1] if failures else None, counter.examples, counter.steps,
                         time.monotonic() - started, world_seed, error,
                         attempts=counter.attempts, acked=counter.acked, restarts=restarts, cut_short=cut_short,
                         statuses=dict(counter.statuses), sent_types=frozenset(counter.sent_types))


def restart_seed(world_seed: int, restart: int) -> int:
    """The Hypothesis seed of a search's `restart`-th new beginning: fresh, and the same for
    the same run seed (a run is repeated by its seed)."""
    return random.Random(f"{world_seed}/{restart}").randrange(2**32)


#: What a search says when Hypothesis could not replay its finding the same way once more.
FLAKY_FINDING_NOTE = ("Hypothesis ran the shrunk schedule once more to confirm it and the receiver did not fail "
                      "the same way that time (its answers depend on timing); the schedule failed when it was "
                      "found: 'hookproof replay' shows whether it reproduces")


def after_finding_note(exc: BaseException) -> str:
    """What stopped a search after its finding, in plain words (never Hypothesis's own
    message: ``FlakyFailure: Inconsistent results from replaying a test case!`` says nothing
    to a user). The finding stands either way."""
    from hypothesis.errors import Flaky

    if isinstance(exc, Flaky):
        return FLAKY_FINDING_NOTE
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (f"the search stopped after its finding on an error inside Hypothesis ({type(exc).__name__}"
            f"{': ' + first if first else ''}); the finding stands")


def flaky_note(examples: int, budget: int, restarts: int, cut_short: bool) -> str:
    """What a search Hypothesis could not replay (`FlakyStrategyDefinition`) says: how often it
    began again with a fresh seed, and whether the budget was still not reached."""
    began = (f"the receiver answered a replayed example differently (timing), so Hypothesis could not replay it; "
             f"the search began again with a fresh seed {restarts} time(s)")
    if not cut_short:
        return f"{began}, {examples} example(s) in all"
    if not restarts:
        began = "the receiver answered a replayed example differently (timing), so Hypothesis could not replay it"
    return (f"the search was cut short after {examples} of {budget} example(s): {began}, "
            "and the last search ran no new example")


@contextlib.contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """Leave the objects that exist before the search (modules, the receiver's app, Hypothesis's
    own) out of the garbage collector's full passes while it runs (`gc.freeze`), and hand them
    back after (`gc.unfreeze`). A full pass over them took about a tenth of a search's CPU time;
    what the search allocates is collected as before. A process that froze objects itself is
    left as it is."""
    import gc

    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass
class _Counts:
    """Examples, steps, and valid attempts sent and acknowledged over a search (for the bench
    and the report); each example's session adds itself at teardown."""

    examples: int = 0
    steps: int = 0
    attempts: int = 0
    acked: int = 0
    statuses: dict[int, int] = field(default_factory=dict)  # the valid attempts answered, by HTTP status
    sent_types: set[str] = field(default_factory=set)  # the event types of the valid attempts sent
    on_example: Callable[[int, int, int], None] | None = None
    failures: list[Failure] = field(default_factory=list)  # the search's: once one is found, it shrinks
    shrinking_from: int = 0  # the example that found the first failure (0: none yet)
    shrink_started: float = 0.0  # when (time.monotonic()) that example was counted
    open: list[Session] = field(default_factory=list)  # sessions made and not closed at their teardown yet

    def close_open(self) -> None:
        """Close the sessions an interruption left open (its example's teardown did not run,
        or was itself cut short): their connections to the receiver, before the loop closes."""
        while self.open:
            session = self.open.pop()
            with contextlib.suppress(Exception):
                session.close()

    def add(self, session: Session) -> None:
        """Count one finished example; `on_example(examples, attempts, shrunk)` hears of it,
        `shrunk` the examples tried since the first finding (0 while searching)."""
        self.examples += 1
        self.steps += len(session.steps)
        valid = [a for a in session.history.attempts() if a.valid]
        self.attempts += len(valid)
        self.acked += sum(a.outcome is Outcome.ACKED for a in valid)
        for a in valid:
            self.sent_types.add(a.event_type)
            if a.status is not None:
                self.statuses[a.status] = self.statuses.get(a.status, 0) + 1
        if self.failures and not self.shrinking_from:
            self.shrinking_from = self.examples
            self.shrink_started = time.monotonic()
        if self.on_example is not None:
            self.on_example(self.examples, self.attempts, self.shrunk)
        if self.shrunk and (self.shrunk >= SHRINK_EXAMPLES or time.monotonic() - self.shrink_started >= SHRINK_SECONDS):
            raise ShrinkBudgetSpent

    @property
    def shrunk(self) -> int:
        """The examples run since the one that found the first failure (0 while searching)."""
        return self.examples - self.shrinking_from if self.shrinking_from else 0


def replay(target: ExploreTarget, steps: Sequence[Step], seed: int, *, provider_state: Any = None,
           route_provider_api: bool = True, on_step: Callable[[Step, str], None] | None = None,
           loop: SearchLoop | None = None) -> Failure | None:
    """Run a saved schedule once, with the same checks; the finding or None. `loop`: the
    search's event loop to run on (None: one of its own)."""
    from hookproof.simulator.server.state import ServerState

    state = provider_state if provider_state is not None else ServerState()
    routing = provider_api(state) if (route_provider_api and target.in_process) else contextlib.nullcontext()
    with routing:
        session = Session(target, seed, provider_state=state, on_step=on_step, loop=loop)
        try:
            for step in steps:
                session.apply(step)
                found = session.safety()
                if found is not None:
                    return found
            return session.finish()
        finally:
            session.close()


__all__ = [
    "ACTIONS",
    "NOTHING_ACKNOWLEDGED",
    "apply_action",
    "DELIVERY_OPS",
    "ExploreResult",
    "SHRINK_EXAMPLES",
    "SHRINK_SECONDS",
    "ShrinkBudgetSpent",
    "ExploreTarget",
    "Failure",
    "FindingError",
    "HitRate",
    "PROVIDER_API_BASE",
    "Prepared",
    "SCHEDULE_FORMAT",
    "Session",
    "Step",
    "burst_hit_rate",
    "explore",
    "format_step",
    "format_steps",
    "legal_actions",
    "ScheduleError",
    "load_schedule",
    "machine_for",
    "provider_api",
    "replay",
    "schedule_document",
    "schedule_lines",
    "shared_target",
    "WORLD_OPS",
    "WorldOps",
    "ops_for",
    "write_schedule",
]

