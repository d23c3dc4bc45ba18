"""Run scenarios against a target: deliver, settle, observe, check, and build the report.

`Runner` holds what every scenario needs (target, profile, secrets, observer, the
provider server's state, the history). `Runner.run(ids)` runs the selected scenarios
one after another, each in a fresh world (fresh ids: no receiver reset is needed), and
returns a `RunReport`. An interrupted run (Ctrl-C) returns what it has, marked partial.
After each scenario the report so far is stored in the history's meta under
`REPORT_META_KEY` (report.json's document), so a saved history can be re-rendered
(`hookproof report --history FILE`) even when the run never got to write its reports.
With `Runner.overlap` above 1, independent scenarios run side by side (`scenarios.overlap`);
the report is the same shape, in catalog order.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Coroutine, Iterable, Sequence

from hookproof.reports.model import RunReport, ScenarioReport
from hookproof.scenarios import report_views as views
from hookproof.scenarios.api_refusals import with_refusals
from hookproof.scenarios.business_keys import (
    KeyMapping,
    TemplateError,
    counter_events,
    counter_keys,
    counter_truth,
    keyed,
    money_prefixes,
    scoped,
)
from hookproof.scenarios.catalog import (
    CANCELLATION_FIELDS,
    CATALOG,
    ChaosContext,
    Context,
    Hook,
    NotApplicable,
    Overlap,
    Phase,
    Plan,
    Scenario,
    unmapped,
)
from hookproof.scenarios.checks import Verdict, compose, nothing_compared, run_checks, unfired_faults, unknown_reason
from hookproof.scenarios.errors import ScenarioError
from hookproof.scenarios.fetched_states import (
    RESTARTING_OPS,
    with_fetch_advice,
    with_fetched,
    with_hurried,
    with_missing_answers,
    with_mode,
    with_unexplained,
    with_unsettled,
)
from hookproof.scenarios.findings import CheckResult
from hookproof.scenarios.key_loops import other_mode_message
from hookproof.scenarios.leftovers import leftovers
from hookproof.scenarios.observations import Expectations, Observation, attempted, expectations_from
from hookproof.scenarios.observers import settle, unchanged_since
from hookproof.scenarios.overlap import Stopped, own_refusals, run_overlapped
from hookproof.scenarios.seeding import SeedHook, run_seed, seed_document
from hookproof.scenarios.state_fields import StateFields, stated
from hookproof.simulator.delivery import Attempt, Dispatcher, History, Outcome, Target
from hookproof.simulator.events import Event
from hookproof.simulator.faults import REFUSABLE, Schedule, Step, schedule
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.server import clock
from hookproof.simulator.server.holds import after_phases
from hookproof.simulator.server.refusals import refusal_log
from hookproof.simulator.server.served import served_log
from hookproof.simulator.world import AnyWorld, World, new_world, story_start_us
from hookproof.simulator.world.world import UnboundReceiverObject

#: Called with (scenario id, index, total) when a scenario starts; for progress bars.
Progress = Callable[[str, int, int], None]

#: Once retry schedules are compressed (`Runner.scaled_time_scale`), the least wall time one
#: delivery's retries are spread over, however many deliveries share the scenario's budget:
#: a receiver that rejects for a moment (503 while busy, then recovers) still gets the
#: provider's retries over seconds, never squeezed into milliseconds. A `retry_budget_s`
#: below it is the floor itself.
RETRY_FLOOR_S = 2.0
#: During chaos a compressed delivery's schedule spans at least the receiver's longest start
#: times this, plus `RESTART_SLACK_S` (`Runner.restart_outlast_s`): a kill lands within the
#: first retries' window, and a start under load takes longer than the one measured.
RESTART_MARGIN = 2.0
#: Seconds added to twice the longest start: a receiver starting in 0.8 s once restarted in
#: 1.77 s under load, outlasting a schedule of twice its start (1.59 s) and reported ``lost``.
RESTART_SLACK_S = 1.0


@dataclass
class Runner:
    """Everything needed to run catalog scenarios against one receiver.

    Attributes:
        target: where deliveries go.
        profile: the provider profile.
        secrets: the receiver's signing secrets (never reported).
        observe: returns one Observation of the receiver (I/O at the edge).
        history: where every attempt is recorded.
        server_state: the provider API/effect sink state, to serve each scenario's world
            and arm sink faults (None: no provider server).
        live / account / enabled: the receiver's environment, account and subscription.
        connect: the endpoint is a Connect endpoint (`target.connect`, `catalog.Context`).
        api_version: the Stripe API version the worlds render at (None: the profile's latest).
        seed: base seed; each scenario's world is seeded from it and the scenario's id
            (`scenario_seed`), whatever else runs and in what order.
        time_scale: factor on the profile's retry delays.
        burst: copies released together in concurrent scenarios.
        settle_window_s / settle_deadline_s / settle_interval_s: liveness settle.
        settle_stall_s: how long reads missing something owed may stay unchanged (`observers.settle`).
        has_sink: effects go through the effect sink.
        nemesis: the fault injector for chaos scenarios (`chaos.nemesis.Nemesis`), or
            None; chaos scenarios deliver to `nemesis.target` and are always healed.
        started: the receiver process hookproof started (`[target.start]`, `[target.process]`),
            or None; a note on a receiver that stopped answering names its exit code once it exited.
        chaos_settings: the chaos scenarios' settings (`scenarios.chaos.ChaosSettings`).
        keys: the team's business keys and counters (`scenarios.business_keys`), or
            None: hookproof's built-in keys.
        attempt_timeout_s: the provider's sender timeout for this run, instead of the
            profile's (None: the profile's); bounds every attempt.
        redelivery_window: events `mass-redelivery-window` delivers and then replays.
        keep_going: run every scenario even after the receiver stopped answering, or refused
            every valid delivery of a scenario with 401/403 before acknowledging any of the run
            (else the rest are unknown, `receiver_down`, `refused_valid`).
        notes: why the run went as it did (stopped early, receiver down), for the report.
        retry_budget_s: once the receiver has rejected valid events (4xx/5xx, never
            acknowledged), the retry schedules of each later scenario are compressed to
            share this many seconds of wall time: each delivery sent one after another
            gets budget / their number, at least `retry_floor_s`; the provider's count and
            order of retries stay, their spacing shrinks (`scaled_time_scale`); the
            report's notes say so, per scenario.
        retry_floor_s: the least a compressed delivery's schedule spans (`RETRY_FLOOR_S`).
        overlap: scenarios run side by side at most (`scenarios.overlap`; 1: one after
            another). Used only where it cannot change what a scenario sends or how it is
            judged (`may_overlap`), else the run is sequential.
        on_finish: called with a scenario's id as it ends (after its checks).
        stopped_by: what interrupted the run, asked when KeyboardInterrupt stops it (e.g.
            ``"SIGTERM"``; None: not known). Unless a note already says why the run stopped
            (a note beginning ``stopped``, as the deadline's), a note says so, and every
            scenario not finished is in the report as unknown with that reason.
        state_kinds: the object kinds whose states the observer reads (`Context.state_kinds`;
            None: only its answers tell).
        config_file: the hookproof.toml the run read, as given, named by the report (None: none).
    """

    target: Target
    profile: Profile
    secrets: Sequence[str]
    observe: Callable[[], Observation]
    history: History
    server_state: object | None = None
    live: bool = False
    account: str | None = None
    connect: bool = False
    api_version: str | None = None
    enabled: frozenset[str] | None = None
    seed: int = 0
    time_scale: float = 1e-6
    burst: int = 8
    settle_window_s: float = 0.3
    settle_deadline_s: float = 15.0
    settle_stall_s: float | None = 5.0
    settle_interval_s: float = 0.05
    has_sink: bool = False
    sender_timeout_s: float = 0.001
    attempt_timeout_s: float | None = None
    progress: Progress | None = None
    results: list[ScenarioReport] = field(default_factory=list)
    nemesis: object | None = None
    #: the receiver process hookproof started (`chaos.process.ReceiverProcess`, with
    #: `exit_code()`), whose exit the note on a receiver that stopped answering names; or None
    started: object | None = None
    chaos_settings: object | None = None
    keys: KeyMapping | None = None
    redelivery_window: int = 200
    keep_going: bool = False
    notes: list[str] = field(default_factory=list)
    retry_budget_s: float = 10.0
    retry_floor_s: float = RETRY_FLOOR_S
    rejecting: str | None = None
    #: the team's seed hook (`scenarios.seeding.SeedHook`): each scenario's world objects before its
    #: first delivery; a failed seed makes the scenario unknown with the reason (None: no seed).
    seeder: SeedHook | None = None
    #: the modes the stories open Checkout Sessions in without a seeder (`[target] checkout_modes`;
    #: None: both); a seeder's own say so (`SeedHook.story_checkout_modes`)
    checkout_modes: frozenset[str] | None = None
    overlap: int = 1
    on_finish: Callable[[str], None] | None = None
    stopped_by: Callable[[], str | None] | None = None
    state_kinds: frozenset[str] | None = None
    #: the observer's declared state fields (`scenarios.state_fields`): the events carry each
    #: object's combined state; None: states are statuses
    state_fields: StateFields | None = None
    config_file: str | None = None
    _observe_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _live: dict[int, tuple[asyncio.AbstractEventLoop, "asyncio.Task[None]"]] = field(
        default_factory=dict, init=False, repr=False)
    _worlds: dict[str, AnyWorld] = field(default_factory=dict, init=False, repr=False)
    _overlapping: bool = field(default=False, init=False, repr=False)
    _whole: object = field(default=None, init=False, repr=False)
    _whole_changed_at: float = field(default=0.0, init=False, repr=False)
    _delivering: int = field(default=0, init=False, repr=False)
    _delivered_at: float = field(default=0.0, init=False, repr=False)
    #: a settle of this run waited for what its reads owed (to the deadline, or `settle_stall_s`
    #: unchanged) and they still fell short (`_settle`)
    _fell_short: bool = field(default=False, init=False, repr=False)
    #: the first scenario whose settle fell short (`_fell_short`), which later findings name
    _short_in: str | None = field(default=None, init=False, repr=False)
    #: the scenarios whose settle fell short, not judged yet: the run learns of it (`_fell_short`)
    #: only from one that then fails (a read between phases may fall short, the final read not)
    _short_pending: set[str] = field(default_factory=set, init=False, repr=False)
    _documents: dict[int, tuple[ScenarioReport, dict[str, Any]]] = field(default_factory=dict, init=False, repr=False)
    #: the compression note of each original time scale: its index in `notes`, the scenarios it names
    _compressed: dict[str, tuple[int, set[str]]] = field(default_factory=dict, init=False, repr=False)
    _stretched_for: set[str] = field(default_factory=set, init=False, repr=False)
    _stretched_note: int | None = field(default=None, init=False, repr=False)  # its index in `notes`
    #: each business key and object id the scenarios of this run built so far send: the
    #: scenarios that send it (`_leftovers` leaves out what another one sends)
    _claimed: dict[str, set[str]] = field(default_factory=dict, init=False, repr=False)
    #: the object kinds whose states some scenario of this run had a truth for (`walked_kinds`)
    _walked: set[str] = field(default_factory=set, init=False, repr=False)
    #: some scenario of this run that ended had a valid delivery acknowledged (`_stop_after`)
    _acked_valid: bool = field(default=False, init=False, repr=False)
    #: the scenarios whose deliveries stopped early, every valid one refused as a wrong secret's
    #: (`_refused_so_far`): the events sent, the events planned, the statuses (``"401"``)
    _cut: dict[str, tuple[int, int, str]] = field(default_factory=dict, init=False, repr=False)

    @property
    def walked_kinds(self) -> frozenset[str]:
        """The object kinds some judged scenario of this run walked the states of (its
        expectations held a truth about an object of that kind), for certify's note on an
        ``[observer.states]`` query nothing compared."""
        return frozenset(self._walked)

    def context(self) -> Context:
        return Context(profile=self.profile, live=self.live, account=self.account, connect=self.connect,
                       enabled=self.enabled,
                       burst=self.burst, has_sink=self.has_sink, fetches_state=self.server_state is not None,
                       sender_timeout_s=self.sender_timeout_s,
                       chaos=self.chaos_settings if self.nemesis is not None else None,
                       redelivery_window=self.redelivery_window, keys=self.keys,
                       shop_sessions=self.seeder is not None and "checkout.session" in self.seeder.creates,
                       **({"checkout_modes": modes} if (modes := self._checkout_modes()) is not None else {}),
                       state_kinds=self.state_kinds,
                       state_fields=self.state_fields.columns() if self.state_fields is not None else None,
                       state_of=self.state_fields.state_of if self.state_fields is not None else None,
                       reads_cancellation=self.state_fields is not None and self.state_fields.reads(
                           "subscription", CANCELLATION_FIELDS))

    def _checkout_modes(self) -> frozenset[str] | None:
        """The modes the stories open Checkout Sessions in: the seeder's
        (`SeedHook.story_checkout_modes`) within the shop's `checkout_modes`; None: the default."""
        modes = self.seeder.story_checkout_modes() if self.seeder is not None else None
        if self.checkout_modes is not None:
            modes = self.checkout_modes if modes is None else modes & self.checkout_modes
        return modes

    def run(self, ids: Iterable[str] | None = None) -> RunReport:
        """Run the scenarios `ids` (default: the whole catalog) and build the report.

        KeyboardInterrupt stops the run; the report then holds the scenarios finished
        so far, the others as unknown with the reason (`unfinished`), and says it is partial.
        """
        chosen = [_lookup(i) for i in ids] if ids is not None else list(CATALOG.values())
        profile = self.profile
        chosen = [s.for_world(profile.world, profile.after_refusal(), profile.no_event_id)  # in the provider's words
                  for s in chosen]
        order = list(chosen)
        started = time.time()
        partial = False
        self.results = []
        self._documents.clear()
        self._claimed.clear()  # what this run's scenarios send (`_leftovers`)
        self._acked_valid = False
        self._cut.clear()
        self._stopping.clear()
        try:
            if self.overlap > 1 and len(chosen) > 1 and self.may_overlap():
                self._run_overlapped(chosen, started)
                chosen = []  # done
            for i, scenario in enumerate(chosen):
                if self.progress:
                    self.progress(scenario.id, i, len(chosen))
                refusals = refusal_log(self.server_state).mark() if self.server_state is not None else None
                result = self.run_one(scenario, i)
                if refusals is not None:  # what the provider API refused meanwhile: why a fetch failed
                    result = with_refusals(result, refusal_log(self.server_state).since(refusals))
                self.results.append(result)
                if self.on_finish:
                    self.on_finish(scenario.id)
                attempts = self.history.attempts(scenario.id)
                if self.rejecting is None and rejects_valid(attempts):
                    self.rejecting = scenario.id
                stop = self._stop_after(scenario, attempts)
                if stop is not None and i + 1 < len(chosen):
                    self.results += self._not_run_after(stop, chosen[i + 1:])
                    break
                self.checkpoint(self.report(started, partial=i + 1 < len(chosen)))
        except KeyboardInterrupt:
            partial = True
            self.unfinished(order)
        report = self.report(started, partial=partial)
        self.checkpoint(report)
        return report

    def _stop_after(self, scenario: Scenario, attempts: Sequence[Attempt]) -> tuple[str, str, str] | None:
        """Why no scenario starts after `scenario` ended (its `attempts`), unless `keep_going` or
        it is a chaos one: the receiver stopped answering (`receiver_down`), or, while no valid
        delivery of the run was acknowledged, it refused every valid delivery of `scenario` as a
        wrong signing secret does (`refused_valid`). (the note's cause, the not-run scenarios'
        reason, what to do) or None. Called once per scenario, as it ends."""
        if not self._acked_valid:  # the run's so far, those beside `scenario` too (once true, never read again)
            self._acked_valid = any(a.valid and a.outcome is Outcome.ACKED for a in self.history.attempts())
        if self.keep_going or scenario.tier == "chaos":
            return None
        if (down := receiver_down(attempts)) is not None:
            return (f"the receiver stopped answering in {scenario.id} ({down}){self._exited()}",
                    f"not run: the receiver stopped answering in {scenario.id}", "")
        refused = None if self._acked_valid else refused_valid(attempts, scenario.checks)
        if refused is None:
            return None
        codes, n = refused
        cut = (f" (its deliveries stopped after {sent} of its {planned} events)"
               if (counts := self._cut.get(scenario.id)) is not None and (sent := counts[0]) < (planned := counts[1])
               else "")
        return (f"every valid delivery of {scenario.id} was refused with {codes} ({n} attempt(s)) and none was "
                f"acknowledged, as with {refusal_cause(codes)}{cut}",
                f"not run: every valid delivery of {scenario.id} was refused with {codes}",
                ": fix the secret (or verify the body as received) and run certify again"
                if self.profile.signature_inputs is None else ": fix the secret and run certify again")

    def _refused_so_far(self, scenario: Scenario, attempts: Sequence[Attempt]) -> str | None:
        """The statuses (``"401"``, ``"401 or 403"``, ``"400"``) when `scenario`'s deliveries should
        stop before its next step (`_deliver`; `attempts`: those of its steps sent so far, each step's
        retries used up): the stop `_stop_after` would make once it ended holds already, every
        valid attempt refused with 400, 401 or 403 (`refused_valid`: at least `REFUSED_AT_LEAST`) and
        nothing of the run acknowledged; its other events would only be refused the same way, each
        through the provider's whole retry schedule (Paddle's: 61 attempts); else None. Never with
        `keep_going` or in a chaos scenario. Cheap while the receiver acknowledges: `refused_valid`
        stops at the first valid attempt answered otherwise, and the run's history is read only
        once every attempt was refused."""
        if self.keep_going or scenario.tier == "chaos" or self._acked_valid:
            return None
        if (refused := refused_valid(attempts, scenario.checks)) is None:
            return None
        return None if any(a.valid and a.outcome is Outcome.ACKED for a in self.history.attempts()) else refused[0]

    def _not_run_after(self, stop: tuple[str, str, str], never: Sequence[Scenario]) -> list[ScenarioReport]:
        """Note why the scenarios `never` were not run (`_stop_after`'s `stop`); their reports, unknown."""
        cause, reason, advice = stop
        self.notes.append(f"{cause}; the {len(never)} scenario(s) after it were not run{advice} "
                          "(--keep-going runs them anyway)")
        return [_not_run(s, reason) for s in never]

    def unfinished(self, order: Sequence[Scenario]) -> None:
        """After an interruption: `results` in `order`, each scenario without a result unknown
        with the reason the run stopped. The reason is the last note beginning ``stopped``
        (the deadline's), else `stopped_by`'s (``stopped by SIGTERM``), which is then noted."""
        done = {r.id: r for r in self.results}
        missing = [s for s in order if s.id not in done]
        said = next((n for n in reversed(self.notes) if n.startswith("stopped")), None)
        if said is not None:
            cause = said.split(";", 1)[0].split(" (", 1)[0].removeprefix("stopped: ")
        else:
            by = self.stopped_by() if self.stopped_by is not None else None
            cause = f"the run was stopped by {by}" if by else "the run was interrupted"
            self.notes.append(f"stopped by {by}" if by else "stopped: interrupted")
            if missing:
                self.notes[-1] += (f"; the {len(missing)} scenario(s) not finished by then are unknown "
                                   f"({', '.join(s.id for s in missing)})")
        self.results = [done.get(s.id) or _not_run(s, f"not finished: {cause}{self._so_far(s.id)}") for s in order]

    def _so_far(self, scenario_id: str) -> str:
        """What an unfinished scenario's attempts came to (``""`` when it made none): their
        number and, when every valid one timed out or could not connect (`receiver_down`), that
        the receiver looks stopped: a hung receiver's scenario never ends, its retries each
        waiting out the sender timeout, and its reason would otherwise hide why."""
        attempts = self.history.attempts(scenario_id)
        if not attempts:
            return ""
        down = receiver_down(attempts)
        return f" ({len(attempts)} attempt(s) so far" + (f"; {down}: the receiver stopped answering)" if down else ")")

    def may_overlap(self) -> bool:
        """True when scenarios may run side by side here: deliveries go to a URL (an in-process
        app keeps one event loop), no seed hook runs per scenario (a team's command need not
        take them concurrently), no retry schedule can be compressed (`scaled_time_scale`:
        which scenarios ran before one would change its spacing), and the worlds do not share
        one named account the receiver is sent whole-account events of
        (`Profile.account_wide_types`: one Shopify shop's ``shop/redact`` in one scenario would
        erase the orders of those beside it; unnamed, each world is a shop of its own)."""
        span_s = sum(self.profile.retry_schedule_s) * self.time_scale
        context = self.context()
        shared = bool(self.account) and any(context.sends(t) for t in self.profile.account_wide_types)
        return (not self.target.in_process and self.seeder is None and span_s <= self.retry_budget_s
                and not shared)

    def _run_overlapped(self, chosen: Sequence[Scenario], started: float) -> None:
        """Run `chosen` side by side (`scenarios.overlap.run_overlapped`); `results` in catalog
        order, as they end, and the same notes and not-run reports as a sequential run."""
        slots: list[ScenarioReport | None] = [None] * len(chosen)
        marks: dict[int, int] = {}
        stops: dict[int, tuple[str, str, str]] = {}  # why nothing started after a scenario (`_stop_after`)

        def start(i: int) -> None:
            if self.rejecting is None and chosen[i].overlap in (Overlap.ALONE, Overlap.FLOODS):
                # It runs with nothing beside it, after every scenario that may overlap (and the
                # alone ones before it) ended: which of them rejected valid events is known, as
                # in a sequential run, so its retry schedule is compressed as there.
                self.rejecting = next((s.id for j, s in enumerate(chosen) if slots[j] is not None
                                       and rejects_valid(self.history.attempts(s.id))), None)
            if self.progress:
                self.progress(chosen[i].id, i, len(chosen))
            if self.server_state is not None:
                marks[i] = refusal_log(self.server_state).mark()

        def finish(i: int, result: object) -> str | None:
            assert isinstance(result, ScenarioReport)
            scenario = chosen[i]
            if i in marks:  # what the provider API refused meanwhile, about this scenario's objects
                result = with_refusals(result, self._own_refusals(scenario.id, marks[i]))
            slots[i] = result
            self.results = [r for r in slots if r is not None]
            if self.on_finish:
                self.on_finish(scenario.id)
            self.checkpoint(self.report(started, partial=True))
            stop = self._stop_after(scenario, self.history.attempts(scenario.id))
            if stop is not None:
                stops[i] = stop
            return stop[0] if stop is not None else None

        def proven(i: int) -> bool:  # never called down after it (`finish`), whatever it does next
            if self.keep_going or chosen[i].tier == "chaos":
                return True
            # a receiver refusing every valid delivery with 400/401/403 so far (a wrong secret) keeps the
            # first scenario alone, so that nothing else is under way if it then stops the run
            attempts = self.history.attempts(chosen[i].id)
            return answered_valid(attempts) and not only_refused(attempts)

        self._overlapping = True
        try:
            _, never, down = run_overlapped(chosen, self.overlap, start=start, run=lambda i: self.run_one(chosen[i], i),
                                            finish=finish, stop=self._stop, proven=proven)
        finally:
            self._overlapping = False
        for scenario in chosen:  # in catalog order, as a sequential run finds it
            if self.rejecting is None and rejects_valid(self.history.attempts(scenario.id)):
                self.rejecting = scenario.id
        if down is not None and never:
            for i, report in zip(never, self._not_run_after(stops[down], [chosen[i] for i in never])):
                slots[i] = report
        self.results = [r for r in slots if r is not None]

    def _own_refusals(self, scenario_id: str, mark: int) -> list[Any]:
        """The provider API's refusals since `mark` that are about `scenario_id`'s world."""
        world = self._worlds.get(scenario_id)
        refusals = refusal_log(self.server_state).since(mark)
        if world is None or not refusals:
            return refusals
        ids = frozenset(world.objects()) | {e.id for e in world.events}
        known = set().union(*(set(w.objects()) | {e.id for e in w.events} for w in self._worlds.values()))
        return own_refusals(refusals, ids, known.__contains__)

    def _stop(self) -> None:
        """Cancel the scenarios in flight (their event loops; their settle reads raise `Stopped`)."""
        self._stopping.set()
        for loop, task in list(self._live.values()):
            loop.call_soon_threadsafe(task.cancel)

    def _run_async(self, coro: Coroutine[Any, Any, None]) -> None:
        """`asyncio.run(coro)` in this thread, cancellable by `_stop` (then `Stopped` is raised)."""
        if self._stopping.is_set():
            coro.close()
            raise Stopped()
        key = threading.get_ident()

        async def main() -> None:
            task = asyncio.current_task()
            assert task is not None
            self._live[key] = (asyncio.get_running_loop(), task)
            try:
                if self._stopping.is_set():
                    raise Stopped()
                await coro
            finally:
                self._live.pop(key, None)

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            if self._stopping.is_set():
                raise Stopped() from None
            raise
        finally:
            coro.close()  # never awaited when stopped before it began

    def _read(self) -> Observation:
        """One observation of the receiver (one read at a time across scenarios); `Stopped` once
        the run is interrupted."""
        if self._stopping.is_set():
            raise Stopped()
        with self._observe_lock:
            obs = self.observe()
            if self._overlapping:  # when anything the receiver shows last changed (`_settle`)
                whole = (Counter(obs.effects), Counter(obs.states),
                         None if obs.counters is None else tuple(sorted(obs.counters.items())))
                if whole != self._whole:
                    self._whole, self._whole_changed_at = whole, time.monotonic()
            return obs

    def scaled_time_scale(self, time_scale: float, scenario_id: str, deliveries: int = 1,
                          outlast_s: float = 0.0) -> float:
        """The factor on the retry delays of a delivery in `scenario_id`, which sends
        `deliveries` one after another (a step's deliveries released together count once):
        `time_scale`, or, once the receiver rejected valid events (`rejecting`), the factor
        that spreads each delivery's whole schedule over max(floor, `retry_budget_s` /
        `deliveries`) seconds when that is shorter, so the scenario's schedules together
        take about `retry_budget_s` (never less than `retry_floor_s` per delivery; the floor
        is the budget when the budget is smaller). Side by side (`may_overlap`: every
        delivery's schedule already fits the budget) a schedule that fits is kept, so which
        scenarios ran before never changes it there. The provider's retry count and order
        never change. One note per original time scale says how, naming each scenario's
        deliveries, span and factor. A compressed schedule spans at least `outlast_s` seconds
        too (a chaos scenario's: `restart_outlast_s`), so the retries of a delivery the
        receiver's kill cut off still reach it once it is back."""
        total_s = sum(self.profile.retry_schedule_s)
        span_s = total_s * time_scale
        if total_s <= 0:
            return time_scale
        if self.rejecting is None or (self._overlapping and span_s <= self.retry_budget_s):
            return time_scale if span_s >= outlast_s else self._stretched(scenario_id, time_scale, span_s, outlast_s)
        floor_s = min(self.retry_floor_s, self.retry_budget_s)
        per_s = max(floor_s, self.retry_budget_s / max(1, deliveries), outlast_s)
        if span_s <= per_s:
            return time_scale
        scaled = per_s / total_s
        with self._observe_lock:
            key = f"{time_scale:.3g}"
            least = (" (the floor)" if per_s == floor_s else
                     f" (twice the receiver's start plus {RESTART_SLACK_S:g} s)" if per_s == outlast_s else "")
            entry = (f"{scenario_id} {deliveries} x {per_s:.3g} s{least} "
                     f"(time scale {scaled:.3g})")
            if key not in self._compressed:
                self.notes.append(
                    f"retry schedule compressed from {scenario_id} on, because the receiver rejected valid events in "
                    f"{self.rejecting}: each delivery keeps the provider's {len(self.profile.retry_schedule_s)} "
                    f"retries in order; a scenario's deliveries sent one after another share "
                    f"{self.retry_budget_s:g} s (run.retry_budget_s), each spread over the budget / their number "
                    f"but at least {floor_s:g} s, instead of {span_s:.3g} s (time scale {time_scale:.3g}); "
                    f"deliveries x span per scenario: {entry}")
                self._compressed[key] = (len(self.notes) - 1, {scenario_id})
            else:
                index, named = self._compressed[key]
                if scenario_id not in named:
                    named.add(scenario_id)
                    self.notes[index] += f", {entry}"
        return scaled

    def _stretched(self, scenario_id: str, time_scale: float, span_s: float, outlast_s: float) -> float:
        """The factor making a chaos delivery's schedule (`span_s` seconds at `time_scale`) span
        `outlast_s`, twice the receiver's longest start plus a second: the provider's real schedule spans hours
        and outlasts any restart, so a compressed one must too. One note names every scenario
        stretched, each with its spans and time scale."""
        scale = outlast_s / span_s * time_scale
        entry = f"{scenario_id} from {span_s:.3g} s to {outlast_s:.3g} s (time scale {scale:.3g})"
        with self._observe_lock:
            if scenario_id not in self._stretched_for:
                self._stretched_for.add(scenario_id)
                if self._stretched_note is None:
                    self._stretched_note = len(self.notes)
                    self.notes.append(f"retry schedules stretched to twice the receiver's longest start plus "
                                      f"{RESTART_SLACK_S:g} s, as the "
                                      "provider's real schedule outlasts a kill's restart: " + entry)
                else:
                    self.notes[self._stretched_note] += f", {entry}"
        return scale

    def restart_outlast_s(self) -> float:
        """Seconds a chaos delivery's compressed retry schedule spans at least: the nemesis's
        longest start of the receiver (`chaos.nemesis.Nemesis.longest_start_s`) times
        `RESTART_MARGIN` plus `RESTART_SLACK_S` (0.0 when it has no start measured), so a
        kill's restart (a migrate and a server's start: seconds) never outlasts the retries of
        the deliveries it cut off, which would report a correct receiver ``lost``."""
        longest = float(getattr(self.nemesis, "longest_start_s", 0.0) or 0.0)
        return longest * RESTART_MARGIN + RESTART_SLACK_S if longest > 0 else 0.0

    def checkpoint(self, report: RunReport) -> None:
        """Store `report` in the history's meta under `REPORT_META_KEY` (committed at once):
        report.json's document (`reports.report_document`), each scenario's part encoded once
        per run however often the report so far is stored."""
        from hookproof.reports import report_document

        self.history.set_meta(views.REPORT_META_KEY, report_document(report, self._scenario_document))

    def _scenario_document(self, s: ScenarioReport) -> dict[str, Any]:
        """`s`'s part of report.json's document, remembered by identity (reports are frozen)."""
        from hookproof.reports import scenario_document

        kept = self._documents.get(id(s))
        if kept is None or kept[0] is not s:
            kept = self._documents[id(s)] = (s, scenario_document(s))
        return kept[1]

    def report(self, started: float, *, partial: bool) -> RunReport:
        """The run's report so far; its notes end with the provider API's one note on the
        Stripe-Versions it served in an older modelled shape (`ServerState.api_version_note`)."""
        version_note = self.server_state.api_version_note() if self.server_state is not None else None  # type: ignore[attr-defined]
        notes = self.notes if version_note is None else [*self.notes, version_note]
        return views.run_report(self.results, target=self.target.describe(), profile=self.profile.name,
                                live=self.live, seed=self.seed, started_at=started, partial=partial,
                                history_file=str(self.history.path) if self.history.path else None,
                                notes=notes, config=self.config_file)

    def run_one(self, scenario: Scenario, index: int) -> ScenarioReport:
        """Run one scenario in a fresh world; never raises for a receiver's fault."""
        t0 = time.monotonic()
        world = self._world(scenario.id, start_us=story_start_us(
            lambda start: self._world(scenario.id, start_us=start), lambda w: scenario.plan(self.context(), w)))
        self._worlds[scenario.id] = world
        binds = self.seeder is not None and bool(self.seeder.creates) and isinstance(world, World)
        before = self._read_before() if binds else None  # before the seed creates the story's objects
        if (binds and isinstance(world, World)  # (the isinstance again narrows `world` for mypy)
                and (seed_failed := self._seed_first(scenario, world, t0)) is not None):
            return seed_failed
        try:
            ctx = self.context()
            plan = scenario.plan(ctx, world)
        except UnboundReceiverObject as exc:  # the shop's seed created fewer objects than the story needs
            what = {"checkout.session": "checkout sessions", "customer": "customers",
                    "payment_intent": "payment intents"}.get(exc.kind, f"{exc.kind}s")
            return ScenarioReport(scenario.id, scenario.title, scenario.description, "unknown", scenario.checklist,
                                  reason=f"the seed hook's {what} do not cover the story: {exc}",
                                  duration_s=time.monotonic() - t0)
        except TemplateError as exc:  # a team key over a field some event of the story lacks
            return _error(scenario, f"could not read a field the config names: {exc}{self._metadata_hint(exc)}", t0)
        except Exception as exc:  # a scenario that cannot be built is an error in its report, not a crash
            return _error(scenario, f"could not build the scenario: {type(exc).__name__}: {exc}", t0)
        if isinstance(plan, NotApplicable):
            return ScenarioReport(scenario.id, scenario.title, scenario.description, "not_applicable",
                                  scenario.checklist, reason=plan.reason, duration_s=time.monotonic() - t0)
        try:
            if self.keys is not None:  # the team's business keys travel with the events (history, checks)
                plan = replace(plan, phases=tuple(replace(p, events=keyed(p.events, self.keys)) for p in plan.phases))
            if self.state_fields is not None:  # each object's combined state travels with the events likewise
                plan = replace(plan, phases=tuple(replace(p, events=stated(p.events, self.state_fields))
                                                  for p in plan.phases))
        except TemplateError as exc:  # the config's checks read a sample story; this one's events lack a field
            return _error(scenario, f"could not read a field the config names: {exc}", t0)
        if not binds:  # before the seed hook hands the receiver this world's objects
            before = self._read_before()
        if before is not None and (held := self._leftovers(scenario.id, before, world, plan)) is not None:
            return _error(scenario, held, t0)
        self._serve(world, plan)
        if self.seeder is not None and not binds and (failed := run_seed(self.seeder, seed_document(
                world, scenario=scenario.id, profile=self.profile.name, api_version=self.api_version))) is not None:
            return ScenarioReport(scenario.id, scenario.title, scenario.description, "unknown", scenario.checklist,
                                  reason=f"the seed hook failed before the first delivery: {failed}",
                                  duration_s=time.monotonic() - t0)
        unhealed: str | None = None
        try:
            events, between = self._deliver(scenario, plan)
        except ScenarioError as exc:  # the observer broke between two phases
            return _error(scenario, f"observing the receiver failed: {exc}", t0)
        except Exception as exc:
            return _error(scenario, f"delivery failed: {type(exc).__name__}: {exc}", t0)
        finally:
            unhealed = self._heal(scenario)  # a final heal always runs (STYLE.md, Faults)
        if unhealed:
            return _error(scenario, f"the faults could not be healed: {unhealed}", t0)
        try:
            observations, settled, hurried = self._settle(world, events, scenario.id,
                                                          patient=scenario.tier == "chaos")
        except ScenarioError as exc:  # the observer broke mid-run: this scenario cannot be judged
            return _error(scenario, f"observing the receiver failed: {exc}", t0)
        observations = between + observations  # reads after each phase, then the settled ones
        if plan.api_faults and not self._api_faults_fired(plan):
            return ScenarioReport(scenario.id, scenario.title, scenario.description, "not_applicable",
                                  scenario.checklist, duration_s=time.monotonic() - t0,
                                  reason=unfetched_reason(plan))
        if plan.held_fetch is not None and self.server_state is not None:
            holds = self.server_state.holds  # type: ignore[attr-defined]
            fetched = holds.taken(plan.held_fetch)
            holds.disarm(plan.held_fetch)
            if not fetched:
                return ScenarioReport(scenario.id, scenario.title, scenario.description, "not_applicable",
                                      scenario.checklist, duration_s=time.monotonic() - t0,
                                      reason=f"the receiver did not fetch {plan.held_fetch} from the provider API "
                                             "while handling its event, so no fetch could be overtaken")
        attempts = self.history.attempts(scenario.id)
        expectations = expectations_from(
            events, attempts, sender_timeout_s=self.profile.sender_timeout_s,
            max_attempts_per_event=None, money_prefixes=money_prefixes(self.keys, self.profile),
            provider=self.profile.words(),
        )
        if self.server_state is not None and expectations.truth and getattr(plan.world, "serves_api", True):
            # what the provider API could have served
            servable = clock.servable_states(plan.world, expectations.truth.keys())
            if self.state_fields is not None:
                servable = self.state_fields.servable(plan.world, servable)
            expectations = replace(expectations, servable=servable,
                                   fetched=served_log(self.server_state).fetched(expectations.truth.keys()))
        self._walked.update(truth.kind for truth in expectations.truth.values())
        if self.profile.account_wide_types and (erased := self.profile.erasable(attempted(events, attempts))):
            expectations = replace(expectations, erased=erased)
        if self.keys is not None and self.keys.counters:
            expectations = replace(expectations, counters=counter_truth(events, attempts, self.keys),
                                   counter_events=counter_events(events, self.keys))
        if self.server_state is not None and plan.world_account is not None:  # another account's objects it asked for
            expectations = replace(expectations, checked_foreign=self.server_state.refused_foreign(  # type: ignore[attr-defined]
                {a.object_id for a in attempts if a.object_id}))
        counters = self.keys is not None and bool(self.keys.counters)
        checks = run_checks(plan.judged(scenario.checks_for(counters=counters)), attempts, expectations, observations)
        verdict = {Verdict.VALID: "pass", Verdict.INVALID: "fail", Verdict.UNKNOWN: "unknown"}[compose(checks)]
        reason = None if settled else "the receiver's effects did not settle before the deadline"
        unfired = unfired_faults(self.history.ops(scenario.id)) if scenario.tier == "chaos" else None
        if unfired is not None and verdict == "pass":
            verdict = "unknown"
        if (verdict == "unknown" or (verdict == "pass" and _judged_nothing(checks))) and unfired is None \
                and (unjudged := unmapped(ctx, plan)) is not None:
            # nothing owed an effect or a state under the team's keys, and no answer was wrong
            verdict, reason = "not_applicable", unjudged.reason
        elif verdict == "pass" and (compared_nothing := nothing_compared(checks)) is not None:
            verdict, reason = "not_applicable", compared_nothing
        elif verdict == "unknown":
            reason = "; ".join(r for r in (reason, unfired, unknown_reason(checks)) if r)
        if plan.note is not None and verdict != "not_applicable":  # a half of its story that did not apply
            reason = "; ".join(r for r in (reason, plan.note) if r)
        if (cut := self._cut.get(scenario.id)) is not None and cut[0] < cut[1]:
            reason = "; ".join(r for r in (reason, f"its deliveries stopped after {cut[0]} of its {cut[1]} events: "
                                                   f"every valid one was refused with {cut[2]} through the provider's "
                                                   f"whole retry schedule, as with {refusal_cause(cut[2])}")
                               if r)
        report = ScenarioReport(
            scenario.id, scenario.title, scenario.description, verdict, scenario.checklist,
            checks=tuple(views.check_view(c) for c in checks),
            attempts=tuple(views.attempt_view(a) for a in attempts),
            effects=views.effect_points(observations, {f.key for c in checks for f in c.findings}),
            duration_s=time.monotonic() - t0, settled=settled, reason=reason,
        )
        self._fell_short_if_failed(scenario.id, verdict)
        if verdict == "fail":  # the endpoint's mode is the runner's to tell
            report = with_mode(report, other_mode_message(self.live))
        if self.server_state is not None and verdict == "fail":  # what a fetching receiver decided on
            report = with_fetched(report, served_log(self.server_state).statuses)
            if (event_clock := self.profile.event_clock) is not None and event_clock.advises_fetch:
                report = with_fetch_advice(report, served_log(self.server_state).statuses, event_clock.advice)
        if verdict == "fail":  # acknowledged, not applied, no fetched status: what it answered, and what does that
            restarted = scenario.tier == "chaos" and any(
                op.op in RESTARTING_OPS for op in self.history.ops(scenario.id))
            excerpts = {a.index: a.response_excerpt for a in attempts}
            applied = {e.business_key for e in observations[-1].effects} if observations else set()
            report = with_unexplained(report, self.profile.event_id_name, restarted=restarted,
                                      answers=lambda i: excerpts.get(i, ""), shared_id=self.profile.shared_id,
                                      unowed=frozenset(applied - set(expectations.expected)))
            report = with_missing_answers(report, lambda i: excerpts.get(i, ""))
        # then a settle's deadline or window that may have cut a late effect short, after those words
        if verdict == "fail":  # an effect not shown yet when the settle's deadline came
            report = with_unsettled(report, self.settle_deadline_s)
        if verdict == "fail" and hurried and self._short_in not in (None, scenario.id):
            # nor when the window alone ended it, another scenario short (this one's own earlier
            # phase falling short is no lag of its own: certifying it alone would hurry it again)
            report = with_hurried(report, self.settle_window_s, self._short_in, self._alone(scenario.id))
        return report

    def _alone(self, scenario_id: str) -> str:
        """The command that certifies scenario `scenario_id` alone, in the world it had here."""
        config = ([] if self.config_file in (None, "hookproof.toml") else ["-c", shlex.quote(str(self.config_file))])
        return " ".join(["hookproof certify", *config, scenario_id, "--seed", str(self.seed)])

    # ---- steps ------------------------------------------------------------------
    def _read_before(self) -> Observation | None:
        """One read of the receiver before a scenario's first delivery (and before its seed
        hook), for `_leftovers`; None when the observer failed (a receiver's tables that
        its first delivery creates; the settle after the deliveries reports a broken observer,
        as it would have without this read)."""
        try:
            return self._read()
        except Exception:  # (`Stopped` is no Exception: an interrupted run still stops here)
            return None

    def _leftovers(self, scenario_id: str, before: Observation, world: AnyWorld, plan: Plan) -> str | None:
        """Why scenario `scenario_id` is not judged when `before`, a read before its first
        delivery, shows its business keys' effects or its objects' states
        (`scenarios.leftovers`: a database kept from a run of the same seed); else None.

        Its keys and objects are claimed for this runner first; those another scenario of it
        sends too (a team's key over a field every story shares) are left out, as is
        `account`'s own object (GitHub's installation): neither is drawn from the seed."""
        keys = {e.business_key for p in plan.phases for e in p.events if e.business_key}
        ids = set(world.objects())
        ids.discard(self.account or "")
        with self._observe_lock:
            for name in keys | ids:
                self._claimed.setdefault(name, set()).add(scenario_id)
            shared = {name for name in keys | ids if len(self._claimed[name]) > 1}
        held = leftovers(before, ids - shared, keys - shared)
        return held.reason(self.seed) if held is not None else None

    def _world(self, scenario_id: str, *, start_us: int | None = None) -> AnyWorld:
        """Scenario `scenario_id`'s fresh world (its seed: `scenario_seed`), its clock starting
        at `start_us` (run_one: so that its story ends before it is delivered; None: now)."""
        return new_world(self.profile.world, scenario_seed(self.seed, scenario_id), livemode=self.live,
                         account=self.account or None, start_us=start_us,
                         **({"api_version": self.api_version} if self.api_version else {}))

    def _metadata_hint(self, exc: TemplateError) -> str:
        """Why a key over the shop's own metadata (`exc`'s path ``data.object.metadata.<key>``) met an
        event without it when the seed creates objects: an object the story made, not the shop (a
        Checkout Session's payment intent); else ""."""
        if self.seeder is None or not self.seeder.creates or not (exc.path or "").startswith("data.object.metadata."):
            return ""
        return ("; the shop's seed sets that metadata, but an object the story made itself carries none (a Checkout "
                "Session's payment intent: with creates = [\"payment_intent\"], checkout_modes = [] says the shop "
                "sells nothing through Checkout; else key that type with a when rule)")

    def _seed_first(self, scenario: Scenario, world: World, t0: float) -> ScenarioReport | None:
        """A seed that creates objects for the story (`SeedHook.creates`, `scenarios.seeding`):
        counts the checkout sessions, customers, subscriptions and payment intents the story creates (in a
        scratch world of the same seed), serves `world`, runs the seed (it creates them
        through the provider API; the events of its customers and subscriptions are held
        back), then binds the story to them. The scenario's report when the seed failed, else None."""
        assert self.seeder is not None
        creates = self.seeder.creates
        try:
            scratch = self._world(scenario.id)
            try:
                plan = scenario.plan(self.context(), scratch)
            except TemplateError:  # a team key over the shop's own metadata, which the scratch's objects lack:
                scratch = self._world(scenario.id)  # counted again under the built-in keys
                plan = scenario.plan(replace(self.context(), keys=None, state_of=None), scratch)
            if isinstance(plan, NotApplicable):
                return None  # nothing is delivered: no seed, the build says why
            assert isinstance(scratch, World)
            told = {"checkout.session": scratch.story_sessions, "customer": scratch.story_customers,
                    "subscription": scratch.story_subscriptions, "payment_intent": scratch.story_intents}
            kinds = list(scratch.story_session_kinds)
        except Exception:  # the real build below reports it
            return None
        if self.server_state is not None:
            self.server_state.add_world(world)  # type: ignore[attr-defined]
        world.hold_receiver_creates(creates)
        failed = run_seed(self.seeder, seed_document(world, scenario=scenario.id, profile=self.profile.name,
                                                     api_version=self.api_version,
                                                     create={kind: told[kind] for kind in creates},
                                                     session_kinds=kinds))
        world.bind_receiver_creates(creates)
        if failed is not None:
            return ScenarioReport(scenario.id, scenario.title, scenario.description, "unknown", scenario.checklist,
                                  reason=f"the seed hook failed before the story was told: {failed}",
                                  duration_s=time.monotonic() - t0)
        return None

    def _serve(self, world: AnyWorld, plan: Plan) -> None:
        state = self.server_state
        if state is None:
            return
        if plan.world_account is not None or not any(w is world for w in state.worlds):  # type: ignore[attr-defined]
            state.add_world(world, account=plan.world_account)  # type: ignore[attr-defined]  # (a seed may have served it)
        # the provider API serves no change whose event the plan never delivers (`clock.plan`)
        clock.plan(world, (e for phase in plan.phases for e in phase.events))
        for key, fault in plan.sink_faults.items():
            if fault == "drop-after-apply":
                state.sink.fault(key, drop_times=1)  # type: ignore[attr-defined]
        for object_id, api in plan.api_faults.items():
            state.switches.set(object_id, not_found=api.not_found, status=api.status,  # type: ignore[attr-defined]
                               times=api.times)

    def _api_faults_fired(self, plan: Plan) -> bool:
        """True when any of the plan's provider-API faults fired; clears the rest."""
        switches = self.server_state.switches  # type: ignore[attr-defined]
        left = {object_id: remaining for object_id, _, remaining in switches.items()}
        fired = False
        for object_id, api in plan.api_faults.items():
            if object_id not in left or left[object_id] != api.times:
                fired = True
            if object_id in left:
                switches.clear(object_id)
        return fired

    def _deliver(self, scenario: Scenario, plan: Plan) -> tuple[list[Event], list[Observation]]:
        """Deliver the plan's phases; returns the events and the reads taken between phases.

        The provider API's clock (`simulator.server.clock`) passes each step's events as
        the step is sent (and serves no change of an event the plan leaves out: `_serve`). After every phase but the last the receiver is settled and read
        (catalog scenarios only: a chaos phase may leave the receiver down), so a state
        that goes back and then recovers is seen, as Jepsen interleaves reads with the
        history.
        """
        events: list[Event] = []
        between: list[Observation] = []
        observe_between = scenario.tier == "catalog"
        chaos = scenario.tier == "chaos" and self.nemesis is not None
        target = self.nemesis.target if chaos else self.target  # type: ignore[attr-defined]
        if chaos:
            self.nemesis.scenario = scenario.id  # type: ignore[attr-defined]

        schedules = [_schedule(phase) for phase in plan.phases]
        in_turn = sum(len(planned.steps) for planned in schedules)  # each waits out its schedule before the next

        holds: Any = self.server_state.holds if self.server_state is not None else None  # type: ignore[attr-defined]
        planned_events = {e.id for phase in plan.phases for e in phase.events}
        sent: dict[str, None] = {}  # the events whose steps were sent, in order
        answered: list[Attempt] = []  # their attempts (`_refused_so_far`)

        async def send(phase: Phase, planned: Schedule, shown: asyncio.Event | None = None,
                       settled: asyncio.Event | None = None) -> None:
            """Send `phase`; with `settled`, its first step waits until `shown` is set and is
            then pre-sent, released (and the provider API's clock advanced) once `settled` is."""
            async with Dispatcher(target, self.profile, self.secrets, self.history,
                                  time_scale=self.scaled_time_scale(phase.time_scale or self.time_scale,
                                                                    scenario.id, in_turn,
                                                                    self.restart_outlast_s() if chaos else 0.0),
                                  max_attempts=phase.max_attempts,
                                  sender_timeout_s=self.attempt_timeout_s,
                                  scenario=scenario.id, seed=plan.world.seed) as d:
                for n, step in enumerate(planned.steps):
                    gate = None
                    if n == 0 and shown is not None and settled is not None:
                        await shown.wait()
                        gate = _released_on(settled, partial(self._advance, plan.world, step))
                    else:
                        self._advance(plan.world, step)
                    results = await d.run(Schedule((step,), planned.plan), race=phase.race, gate=gate)
                    sent.update((x.event.id, None) for x in step.deliveries)
                    answered.extend(a for r in results for a in r.attempts)
                    if plan.held_fetch is None and (codes := self._refused_so_far(scenario, answered)) is not None:
                        self._cut[scenario.id] = (len(sent.keys() & planned_events), len(planned_events), codes)
                        raise _CutShort

        async def go() -> None:
            try:
                await phases()
            except _CutShort:  # the phase under way sent the events of its steps sent
                events.extend(e for e in cutting if e.id in sent)

        cutting: list[Event] = []  # the events of the phase under way

        async def between_read(n: int) -> asyncio.Task[None] | None:
            """After phase `n` but the last, settle and read the receiver. A next phase that is a
            race burst (`_presends`) is pre-sent once a read shows everything expected (its
            connections hold their requests but the final bytes while the read's quiet period
            runs) and released when the read has settled, instead of waiting out its gate after
            it. Returns that phase's task."""
            if not observe_between or n == len(plan.phases) - 1:
                return None
            ahead = None
            shown, settled = asyncio.Event(), asyncio.Event()
            if _presends(plan, n + 1, chaos):
                ahead = asyncio.create_task(send(plan.phases[n + 1], schedules[n + 1], shown, settled))
            loop = asyncio.get_running_loop()

            def on_shown() -> None:  # called in the settle's thread
                loop.call_soon_threadsafe(shown.set)

            try:
                read, _, _ = await asyncio.to_thread(self._settle, plan.world, list(events), scenario.id, True,
                                                     on_shown=on_shown)
            except BaseException:
                if ahead is not None:
                    ahead.cancel()
                    with contextlib.suppress(BaseException):
                        await ahead
                raise
            between.extend(read)
            shown.set()
            settled.set()
            return ahead

        async def phases() -> None:
            held: asyncio.Task[None] | None = None  # a phase whose fetch's answer is held, still in flight
            ahead: asyncio.Task[None] | None = None  # the next phase, pre-sent while this one's read settles
            for n, (phase, planned) in enumerate(zip(plan.phases, schedules)):
                cutting[:] = phase.events
                if ahead is not None:
                    task, ahead = ahead, None
                    await task
                    events.extend(phase.events)
                    self._hook(phase.after, scenario)
                    ahead = await between_read(n)
                    continue
                self._hook(phase.before, scenario)
                if phase.failed_only:
                    delivered = {a.event_id for a in self.history.attempts(scenario.id) if a.outcome is Outcome.ACKED}
                    phase = replace(phase, events=tuple(e for e in phase.events if e.id not in delivered))
                    if not phase.events:
                        self._hook(phase.after, scenario)
                        continue
                    planned = _schedule(phase)
                if phase.held and holds is not None and plan.held_fetch is not None:
                    held = await _while_held(holds, plan.held_fetch, send(phase, planned))
                    events.extend(phase.events)
                    continue  # the next phase goes out while the answer is held: no read between
                await send(phase, planned)
                if held is not None:  # the newer event was answered: the held fetch's answer goes now
                    holds.release(plan.held_fetch)
                    await held
                    held = None
                events.extend(phase.events)
                self._hook(phase.after, scenario)
                ahead = await between_read(n)
            if held is not None:
                holds.release(plan.held_fetch)
                await held
            if holds is not None and plan.held_fetch is not None:  # a fetch made after its answer: out before reads
                await after_phases(holds, plan.held_fetch)

        with self._observe_lock:
            self._delivering += 1
        try:
            self._run_async(go())
        finally:
            with self._observe_lock:
                self._delivering -= 1
                self._delivered_at = time.monotonic()
        return events, between

    def _advance(self, world: AnyWorld, step: Step) -> None:
        """The provider API's clock passes `step`'s events (`simulator.server.clock`) as it is sent."""
        if self.server_state is not None:
            clock.advance(world, (x.event for x in step.deliveries))

    def _hook(self, hook: Hook | None, scenario: Scenario) -> None:
        if hook is None:
            return
        if self.nemesis is None:
            raise RuntimeError(f"scenario {scenario.id} has chaos hooks but the runner has no fault injector")
        hook(ChaosContext(self.nemesis, self.history, scenario.id, self.chaos_settings))

    def _exited(self) -> str:
        """``: the receiver hookproof started exited with code 3 (its output: receiver.log)`` when
        the process hookproof started (`[target.process]`) is no longer running; else empty."""
        code = getattr(self.started, "exit_code", lambda: None)()
        if code is None:
            return ""
        return f": the receiver hookproof started exited with code {code} (its output: receiver.log)"

    def _heal(self, scenario: Scenario) -> str | None:
        """Heal every fault of a chaos scenario; the reason when healing failed."""
        if scenario.tier != "chaos" or self.nemesis is None:
            return None
        try:
            self.nemesis.heal()  # type: ignore[attr-defined]
        except Exception as exc:  # reported as the scenario's error, never a crashed run
            return f"{type(exc).__name__}: {exc}"
        return None

    def _fell_short_if_failed(self, scenario_id: str, verdict: str) -> None:
        """Once a scenario is judged: had one of its settles fallen short and it failed, the run
        knows the receiver keeps something from the truth (`_fell_short`, naming it first in
        `_short_in`); had it passed, the read that fell short was made good later (a read between
        its phases, a receiver applying late), so no other scenario is hurried on its account."""
        with self._observe_lock:
            short = scenario_id in self._short_pending
            self._short_pending.discard(scenario_id)
            if short and verdict == "fail":
                self._fell_short = True
                self._short_in = self._short_in or scenario_id

    def _settle(self, world: AnyWorld, events: Sequence[Event], scenario_id: str,
                delivering: bool = False, patient: bool = False,
                on_shown: Callable[[], None] | None = None) -> tuple[list[Observation], bool, bool]:
        """Read the receiver until it settles (`observers.settle`): once a read shows every
        effect and state the history so far implies (`_shows_expected`), unchanged for
        settle's short quiet period; while none does, up to the settle deadline (a receiver
        that answers first and applies later, a worker or a queue, is waited for), then
        settled short when its reads were unchanged for the window, or earlier once they stayed
        unchanged for `settle_stall_s` still short of it. Without an expected
        picture (`_expected_picture` None), unchanged for the window.

        Once one settle of the run has waited that long and still fell short, in a scenario
        that then failed (the receiver keeps an effect or a state from the truth: the run fails
        on it either way; `_fell_short_if_failed`),
        the others give a read that falls short the window only, as before settling on
        evidence, so a broken receiver costs the run about one such wait, not one per
        scenario. A chaos scenario (`patient`) is not hurried so: its kill, pause or restart
        delays what a receiver applying after it answers (a queue, a worker) shows, and a read
        judged on the window alone would charge an effect still to come to this scenario as
        lost (and the next scenario's kill might then destroy it for good); each settles on
        evidence, so a broken receiver costs each chaos scenario it falls short in about
        `settle_stall_s`. Beside other scenarios, such a read settles only once, for the window,
        nothing the receiver shows changed and no other scenario delivered (`delivering`:
        this one is between two of its phases), as when it runs alone after the others.
        Returns every read (only this world's objects), whether it settled before the
        deadline, and whether it was hurried so: it settled on the window alone, short of what
        the receiver owes, because an earlier scenario fell short (its findings say so,
        `with_hurried`). `on_shown()` is called once a read shows everything expected
        (`observers.settle`)."""
        ids = set(world.objects())
        keys = {e.business_key for e in events if e.business_key}
        counters = counter_keys(events, self.keys)
        done, owed = self._expected_picture(events, scenario_id)
        started = time.monotonic()
        observations: list[Observation] = []
        while True:
            left_s = max(0.0, self.settle_deadline_s - (time.monotonic() - started))
            result = settle(lambda: scoped(self._read(), ids, keys, counters), window_s=self.settle_window_s,
                            deadline_s=left_s, interval_s=self.settle_interval_s, done=done, owed=owed,
                            stall_s=self.settle_stall_s, patient=lambda: patient or not self._fell_short,
                            on_shown=on_shown)
            observations += result.observations
            if result.short:  # the run learns of it once this scenario fails (`_fell_short_if_failed`)
                with self._observe_lock:
                    self._short_pending.add(scenario_id)
                return observations, True, False
            hurried = result.settled and not patient and self._fell_short and not owed(observations[-1])
            # Beside other scenarios, this world's part unchanged for the window is not enough
            # unless it shows everything expected: the receiver may still be working through
            # the others' deliveries with this scenario's queued behind them (a queue, a
            # background write), which no read shows while they change nothing.
            if not (self._overlapping and result.settled and not result.early):
                return observations, result.settled, hurried
            with self._observe_lock:
                others = self._delivering - (1 if delivering else 0)
                quiet_since = max(self._whole_changed_at, self._delivered_at)
            if others == 0 and time.monotonic() - quiet_since >= self.settle_window_s - 1e-9:
                return observations, True, hurried
            # A receiver already known to keep something from the truth (`_fell_short`) gets
            # a read short of what it owes the stall bound, not the whole deadline, beside others.
            final = observations[-1]
            if (self._fell_short and self.settle_stall_s is not None and not owed(final)
                    and final.at - unchanged_since(observations) >= self.settle_stall_s - 1e-9):
                return observations, True, False  # waited for `settle_stall_s`, as alone

    def _expected_picture(self, events: Sequence[Event], scenario_id: str
                          ) -> tuple[Callable[[Observation], bool] | None, Callable[[Observation], bool]]:
        """What a read must show, from the scenario's history so far: an effect for every key
        the receiver acknowledged a valid attempt of, the provider's final states and
        counters (`_shows_expected`). Returned twice, as settle's `done` and `owed`: `done`
        (settling on evidence, after the short quiet period) is None (the whole window once
        it shows) when the history leaves the receiver possibly still at work on something
        no read can prove done: an attempt the provider gave up waiting for, or a 2xx to an
        attempt whose effect must never appear (forged, foreign…: only its absence would
        show); what it owes is waited for all the same."""
        attempts = self.history.attempts(scenario_id)
        expectations = expectations_from(events, attempts, sender_timeout_s=self.profile.sender_timeout_s,
                                         max_attempts_per_event=None, money_prefixes=money_prefixes(self.keys, self.profile))
        if self.keys is not None and self.keys.counters:
            expectations = replace(expectations, counters=counter_truth(events, attempts, self.keys))
        if self.profile.account_wide_types and (erased := self.profile.erasable(attempted(events, attempts))):
            expectations = replace(expectations, erased=erased)
        success = self.profile.is_success  # a dropped answer the provider would have counted as delivered
        answered_2xx = [a for a in attempts if a.outcome is Outcome.ACKED
                        or (a.outcome is Outcome.DROPPED and a.status is not None and success(a.status))]
        acked = {a.business_key for a in answered_2xx if a.valid and a.business_key}
        keys = frozenset(k for k in expectations.expected if k in acked)

        def shows(obs: Observation) -> bool:
            return _shows_expected(obs, keys, expectations)

        unprovable = (any(a.outcome is Outcome.TIMEOUT for a in attempts)
                      or any(a.business_key in expectations.forbidden for a in answered_2xx))
        return (None if unprovable else shows), shows


def scenario_seed(seed: int, scenario_id: str) -> int:
    """The seed of scenario `scenario_id`'s world in a run of `seed`: the run's seed plus a
    multiple of 1000 drawn from the id (CRC-32), so a scenario run alone (`certify ID --seed N`)
    gets the world it had in the whole run of that seed, and the scenarios of one run get
    distinct worlds (`tests/scenarios/test_scenario_seeds.py` checks every id)."""
    return seed + 1000 * (1 + zlib.crc32(scenario_id.encode("utf-8")) % 1_000_000)


async def _while_held(holds: Any, object_id: str, delivery: Coroutine[Any, Any, None]) -> "asyncio.Task[None] | None":
    """Arm the provider API's hold on `object_id`'s next fetch (`simulator.server.holds`) and start
    `delivery`; once that fetch came (its answer now held) the delivery's task, still in flight;
    None when the delivery ended without it (the receiver did not fetch the object)."""
    holds.arm(object_id)
    task = asyncio.ensure_future(delivery)
    while not task.done() and not holds.taken(object_id):
        await asyncio.sleep(0.002)
    if holds.taken(object_id) and not task.done():
        return task
    await task
    return None


def _presends(plan: Plan, n: int, chaos: bool) -> bool:
    """Whether phase `n` of `plan` may be pre-sent while the read after the phase before it
    settles (`Runner._deliver`): a race burst of a catalog scenario with no hook before it, no
    re-send of failed deliveries (they are known after the read) and no held fetch."""
    phase = plan.phases[n]
    return (phase.race and not chaos and phase.before is None and not phase.failed_only and not phase.held
            and plan.held_fetch is None)


def _released_on(settled: asyncio.Event, then: Callable[[], None]) -> Callable[[], Coroutine[Any, Any, None]]:
    """A race's gate (`race.race`): done once `settled` is set and `then()` has run."""
    async def gate() -> None:
        await settled.wait()
        then()
    return gate


def _schedule(phase: Phase) -> Schedule:
    """The phase's schedule; with `together`, every delivery in one step; with `batch`,
    `batch` deliveries per step."""
    planned = schedule(phase.events, phase.plan)
    if len(planned.steps) < 2 or not (phase.together or phase.batch > 1):
        return planned
    deliveries = tuple(planned.deliveries())
    size = len(deliveries) if phase.together else phase.batch
    return Schedule(tuple(Step(deliveries[i:i + size]) for i in range(0, len(deliveries), size)), planned.plan)


def _judged_nothing(checks: Sequence[CheckResult]) -> bool:
    """True when a passing scenario's ``lost`` had nothing to judge (events acknowledged, none
    with a business key: `key_loops.lost_not_applicable`); with a plan `unmapped` under the
    team's keys, the scenario does not apply (as when ``lost`` was left undecided)."""
    return any(c.check_id == "lost" and c.stats.get("applicability") == "not applicable" for c in checks)


def _lookup(scenario_id: str) -> Scenario:
    """A scenario of the catalog or of the chaos catalog. Raises KeyError."""
    if scenario_id in CATALOG:
        return CATALOG[scenario_id]
    from hookproof.scenarios.chaos import CHAOS_CATALOG

    return CHAOS_CATALOG[scenario_id]


def _shows_expected(obs: Observation, keys: frozenset[str], expectations: Expectations) -> bool:
    """True when `obs` shows an effect for each of `keys`, each object of the kinds it
    observes at the provider's final status (and version, when it reads versions), and
    the counters at the provider's sums. Extra effects or duplicates do not matter here:
    they are the checks' findings, already visible."""
    counts = obs.counts()
    if any(k not in counts for k in keys):
        return False
    if obs.state_kinds is not None or obs.states:
        for object_id, truth in expectations.truth_of_kinds(obs.state_kinds).items():
            if object_id in expectations.erased:  # may never show again (a Shopify shop's app/uninstalled)
                continue
            st = obs.state_of(object_id)
            if st is None or st.status != truth.final_status or (
                    st.version is not None and st.version != truth.final_version):
                return False
    if expectations.counters is not None and obs.counters is not None:
        if any(obs.counters.get(k, 0) != v for k, v in expectations.counters.items()):
            return False
    return True


#: Objects `unfetched_reason` names (the rest are counted).
UNFETCHED_SHOWN = 4


def unfetched_reason(plan: Plan) -> str:
    """Why a plan whose provider-API faults never fired does not apply: the objects whose
    first fetch was set to fail (a few named), and that the receiver fetched none of them."""
    delivered = {e.id for p in plan.phases for e in p.events}
    objects = [k for k in plan.api_faults if k not in delivered]
    shown = ", ".join(objects[:UNFETCHED_SHOWN])
    if len(objects) > UNFETCHED_SHOWN:
        shown += f" and {len(objects) - UNFETCHED_SHOWN} more"
    events = " and of their events" if len(objects) < len(plan.api_faults) else ""
    return (f"the provider API was set to fail the first fetch of each of the {len(objects)} delivered objects "
            f"({shown}){events}; the receiver fetched none of them, so no fault fired")


#: Fault tags of a valid request a receiver may refuse with a 4xx as a pass (`simulator.faults.REFUSABLE`).
_REFUSABLE_TAGS: frozenset[str] = frozenset(m.value for m in REFUSABLE)


def rejects_valid(attempts: Sequence[Attempt]) -> bool:
    """True when some valid event was answered 4xx/5xx and never acknowledged: the receiver
    rejects valid events, so each of them runs through the provider's whole retry schedule.

    A 4xx to a request the receiver may refuse as a pass (a fault tag of
    `simulator.faults.REFUSABLE`: the oversized body of oversized-payload) does not count:
    that is a correct answer, not a receiver that rejects valid events."""
    acked = {a.event_id for a in attempts if a.outcome.value == "acked"}
    return any(a.valid and a.outcome.value in ("rejected", "server_error") and a.event_id not in acked
               and not (a.outcome.value == "rejected" and _REFUSABLE_TAGS.intersection(a.faults))
               for a in attempts)


#: What a receiver verifying with another signing secret answers a valid delivery ("not
#: authenticated"): the statuses `hookproof.headline` blames on the secret, and `refused_valid` keys on.
AUTH_REFUSALS: tuple[int, ...] = (401, 403)

#: What a receiver answers a delivery it could not verify or could not parse, as Stripe's docs'
#: example answers a bad signature ("Webhook Error: …", docs.stripe.com/webhooks/quickstart):
#: counted with `AUTH_REFUSALS` by `refused_valid` once it spans `BAD_REQUEST_TYPES` event types.
BAD_REQUEST = 400

#: Event types a scenario's 400s must span before they stop it (`refused_valid`): a receiver
#: answering 400 to the one type it does not handle (wrong, but not a wrong secret) is not
#: stopped by its first event; one refusing two types and acknowledging nothing handles none.
BAD_REQUEST_TYPES = 2

#: Fault tags of a valid delivery a correct receiver may refuse (a pass or an advisory, never a
#: wrong secret): `simulator.faults.REFUSABLE`'s, and a future-dated one (stricter than Stripe's SDK).
_MAY_REFUSE_TAGS: frozenset[str] = _REFUSABLE_TAGS | {"future-timestamp"}

#: Fewer refused valid attempts than this in a scenario stop nothing (the headline's ``AT_LEAST``).
REFUSED_AT_LEAST = 3


def refused_valid(attempts: Sequence[Attempt], checks: Sequence[str]) -> tuple[str, int] | None:
    """How the receiver refused a scenario that holds its valid deliveries to a 2xx (`checks`
    holds ``valid_not_rejected``), when it answered every one of them (at least
    `REFUSED_AT_LEAST` attempts) with 401 or 403, or 400 (over at least `BAD_REQUEST_TYPES`
    event types), and acknowledged none, as a receiver with a wrong signing secret does (or one
    verifying a body its framework re-serialised): (the statuses, ``"401"``, ``"401 or 403"``,
    ``"400"``; the attempts); else None. Forged and other invalid attempts are meant to be
    refused and deliveries a correct receiver may refuse (`_MAY_REFUSE_TAGS`) are not counted;
    any other answer, an acknowledgement or a timeout, means None."""
    if "valid_not_rejected" not in checks:
        return None
    statuses: set[int] = set()
    types: set[str] = set()
    refused = 0
    for a in attempts:
        if not a.valid or _MAY_REFUSE_TAGS.intersection(a.faults):
            continue
        if a.status not in AUTH_REFUSALS and a.status != BAD_REQUEST:
            return None
        statuses.add(a.status)
        types.add(a.event_type)
        refused += 1
    if refused < REFUSED_AT_LEAST or (BAD_REQUEST in statuses and len(types) < BAD_REQUEST_TYPES):
        return None
    return " or ".join(str(s) for s in sorted(statuses)), refused


def refusal_cause(codes: str) -> str:
    """What refusals with `codes` (`refused_valid`'s statuses) look like: a wrong signing secret,
    and with a 400 also a receiver that cannot parse the provider's requests."""
    return ("a wrong signing secret, or a receiver that cannot parse the provider's requests"
            if str(BAD_REQUEST) in codes.split(" or ") else "a wrong signing secret")


def only_refused(attempts: Sequence[Attempt]) -> bool:
    """True when the receiver answered some valid attempt of `attempts` and every valid one it
    answered got 400, 401 or 403 (so far: a wrong secret's first scenario, `run_overlapped`'s `proven`)."""
    answered = [a.status for a in attempts if a.valid and a.status is not None]
    return bool(answered) and all(s in AUTH_REFUSALS or s == BAD_REQUEST for s in answered)


#: Outcomes of an attempt the receiver never answered (`receiver_down`).
_GONE = ("timeout", "connection_error")


def answered_valid(attempts: Sequence[Attempt]) -> bool:
    """True when the receiver answered some valid attempt of `attempts` (any outcome but a
    timeout or a refused connection): then `receiver_down` is None for them, and stays None
    whatever attempts are added."""
    return any(a.valid and a.outcome.value not in _GONE for a in attempts)


def receiver_down(attempts: Sequence[Attempt]) -> str | None:
    """Why the receiver looks down after a scenario: every valid attempt (at least one)
    timed out or could not connect; None when any valid attempt got an answer."""
    valid = [a for a in attempts if a.valid]
    if not valid or answered_valid(valid):
        return None
    timeouts = sum(a.outcome.value == "timeout" for a in valid)
    return (f"all {len(valid)} valid attempt(s) failed: {timeouts} timed out, "
            f"{len(valid) - timeouts} could not connect")


class _CutShort(Exception):
    """A scenario's deliveries stop before its next step (`Runner._refused_so_far`)."""


def _not_run(scenario: Scenario, reason: str) -> ScenarioReport:
    return ScenarioReport(scenario.id, scenario.title, scenario.description, "unknown", scenario.checklist,
                          reason=reason)


def _error(scenario: Scenario, reason: str, t0: float) -> ScenarioReport:
    return ScenarioReport(scenario.id, scenario.title, scenario.description, "error", scenario.checklist,
                          reason=reason, duration_s=time.monotonic() - t0)
