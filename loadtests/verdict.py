"""The end of a storm, on the master: settle, check, report.

Given every attempt and event the workers sent (`finish_spooled`: streamed to disk by
the master's `Spool` as the storm ran; `finish_storm`: in memory), it waits for the receiver
to settle (`scenarios.observers.settle`), builds the expectations
(`scenarios.observations.expectations_from`), runs the storm's checks
(`scenarios.checks.run_checks`: the same exactly-once and ordering checks as certify,
plus ``ack_latency``; what the end of the senders' drain left open is unknown,
`loadtests.cut`), records the merged history in ``history.sqlite`` and writes the
same reports as certify (`reports.write_reports`): one scenario, ``storm``, whose
``ack_latency`` check carries the latency percentiles and the throughput over time.

No Locust import: it runs inside the Locust master, and in tests without one.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import asdict, dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, overload

from hookproof.loadtests.ahead import Ahead, ahead_of, tolerate
from hookproof.loadtests.collect import WorkerTotals
from hookproof.loadtests.cut import (
    CutDelivery,
    CutStories,
    SplitKeys,
    Unrecorded,
    cut_of,
    judge_cut,
    unanswered_of,
    unsettled_of,
)
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.spool import Spool
from hookproof.reports.model import CheckView, RunReport, ScenarioReport
from hookproof.scenarios import report_views as views
from hookproof.scenarios.check_index import expectations_and_index
from hookproof.scenarios.checks import ALL_CHECKS, Verdict, check_safe, compose, unknown_reason
from hookproof.scenarios.findings import ADVISORY, ALL_KEYS, CheckResult, Finding, result_of
from hookproof.scenarios.observations import Expectations, Observation, world_event_id
from hookproof.simulator.delivery.history import Attempt, HistoryFile, Outcome
from hookproof.simulator.events import Event

if TYPE_CHECKING:
    from hookproof.reports.model import FindingView
    from hookproof.scenarios.business_keys import KeyMapping
    from hookproof.scenarios.saved_report import FindingsKeeper

#: The checks a storm must pass (certify's exactly-once, ordering and money checks, and latency).
STORM_CHECKS: tuple[str, ...] = (
    "duplicated", "lost", "unexpected", "valid_not_rejected", "no_server_error", "duplicate_acked",
    "counter", "stale", "regressed", "ack_latency",
)
#: The checks over object states, run when the storm sent an object the observer reads.
STATE_CHECKS: tuple[str, ...] = ("stale", "regressed")
#: Checklist items a storm evidences.
STORM_CHECKLIST: tuple[str, ...] = ("duplicates-tested", "unique-under-concurrency", "reordering-tested",
                                     "accepts-valid")
#: Attempts kept in the report (those of finding keys first); the full history is in history.sqlite.
MAX_REPORT_ATTEMPTS = 2000
#: Points of the throughput series at most (buckets widen for long storms).
MAX_THROUGHPUT_POINTS = 120

#: A sender loop late by this much (ms), or an attempt that waited this long for its
#: connection before its request went on the wire, makes the storm sender-bound.
SENDER_BOUND_LAG_MS = 200.0
SENDER_BOUND_WAIT_MS = 1000.0
#: The share of answered-or-timed-out attempts that may time out on the wire (the p99
#: rule of ``ack_latency``: a timeout is slower than the sender timeout).
TIMED_OUT_SHARE = 0.01

TITLE = "Storm: duplicates, bursts, reordering and redelivery at rate"
DESCRIPTION = ("The provider sends at a production rate, with a share of duplicated events (some as "
               "concurrent bursts), events of one object out of order, and mass-redelivery waves. Every "
               "effect must stay single, every state current, and acks fast enough for the sender timeout.")


def make_observer(observer: Mapping[str, Any], sink_url: str | None) -> Callable[[], Observation]:
    """The observer described by a `hookproof.toml` observer table, as a function: the
    factory certify uses too (`scenarios.observer_factory`; the table's ``base_dir`` is
    the config file's folder, where a python observer's module may live).

    Raises ValueError for an unknown kind or missing field, ObserverError (from
    `scenarios.observers`) for one that cannot be built.
    """
    from hookproof.scenarios.observer_factory import ObserverSpec, build_observer

    return build_observer(ObserverSpec.from_mapping(observer), sink=sink_url)


def state_kinds(observations: Sequence[Observation]) -> frozenset[str] | None:
    """The object kinds whose states `observations` say they read (the union of those that
    say; None: none says, `Observation.state_kinds`)."""
    kinds: frozenset[str] | None = None
    for obs in observations:
        if obs.state_kinds is not None:
            kinds = obs.state_kinds if kinds is None else kinds | obs.state_kinds
    return kinds


def reads_states(observations: Sequence[Observation]) -> bool:
    """Whether a check may read the truth of an object's state over `observations`: False
    only when they say they read the states of no kind (`state_kinds` empty), where
    `storm_checks` leaves the state checks out whatever the storm sent."""
    return state_kinds(observations) != frozenset()


def storm_checks(expectations: Expectations, observations: Sequence[Observation]) -> tuple[str, ...]:
    """`STORM_CHECKS`, without the state checks (`STATE_CHECKS`) when the storm sent no
    object whose state the observer reads: as a catalog scenario without such events
    does not apply, rather than passing over zero objects."""
    if expectations.truth_of_kinds(state_kinds(observations)):
        return STORM_CHECKS
    return tuple(c for c in STORM_CHECKS if c not in STATE_CHECKS)


def only_storm(obs: Observation, object_ids: set[str], keys: frozenset[str] = frozenset(),
               counters: frozenset[str] = frozenset()) -> Observation:
    """The part of `obs` about the storm's objects (`scenarios.business_keys.scoped`): effects
    whose key the storm's events carry (`keys`) or whose key names one of `object_ids`
    second (``refund:<payment>:…``; GitHub's ``ci:<repo>@<sha>`` of a pull request names no
    event's object), counters the storm's events move (`counters`) or named by an object."""
    from hookproof.scenarios.business_keys import scoped

    return scoped(obs, object_ids, keys, counters)


def throughput(attempts: Sequence[Attempt], started_at: float, duration_s: float,
               max_points: int = MAX_THROUGHPUT_POINTS) -> dict[str, Any]:
    """Attempts sent and acked per second over time.

    Returns ``{"bucket_s": b, "series": [[t_s, sent_per_s, acked_per_s], ...]}`` with
    `t_s` the bucket's start in seconds since `started_at`, at most `max_points` points.
    One pass over `attempts` (counts per whole second, then per bucket: a bucket is a
    whole number of seconds).
    """
    per_second: dict[float, list[int]] = {}  # whole seconds since started_at -> [sent, acked]
    latest: float | None = None
    acked_outcome = Outcome.ACKED
    for a in attempts:
        offset = a.sent_at - started_at
        if latest is None or offset > latest:
            latest = offset
        counts = per_second.get(offset // 1.0)
        if counts is None:
            counts = per_second[offset // 1.0] = [0, 0]
        counts[0] += 1
        if a.outcome is acked_outcome:
            counts[1] += 1
    span = max(duration_s, (latest if latest is not None else 0.0) + 1e-9)
    bucket_s = max(1.0, float(math.ceil(span / max_points)))
    n = max(1, math.ceil(span / bucket_s))
    sent = [0] * n
    acked = [0] * n
    for second, (n_sent, n_acked) in per_second.items():
        i = min(n - 1, max(0, int(second // bucket_s)))
        sent[i] += n_sent
        acked[i] += n_acked
    series = [[round(i * bucket_s, 3), round(sent[i] / bucket_s, 2), round(acked[i] / bucket_s, 2)] for i in range(n)]
    return {"bucket_s": bucket_s, "series": series}


class Rekeyed(Sequence[Attempt]):
    """`attempts` carrying the business keys of `events` (already `keyed`), by
    `scenarios.business_keys.rekeyed`'s rule, each rekeyed when read: a history streamed
    from disk stays on disk. An attempt of an event not in `events` keeps its key."""

    def __init__(self, attempts: Sequence[Attempt], events: Iterable[Event]) -> None:
        self._attempts = attempts
        self._key_of = {e.id: e.business_key for e in events}
        #: as the attempts' (`HistoryFile.indexes_are_positions`): rekeying keeps indexes
        self.indexes_are_positions: bool = getattr(attempts, "indexes_are_positions", False)

    def __len__(self) -> int:
        return len(self._attempts)

    @overload
    def __getitem__(self, i: int) -> Attempt: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Attempt]: ...

    def __getitem__(self, i: int | slice) -> Attempt | Sequence[Attempt]:
        if isinstance(i, slice):
            return [self._rekey(a) for a in self._attempts[i]]
        return self._rekey(self._attempts[i])

    def __iter__(self) -> Iterator[Attempt]:
        return map(self._rekey, self._attempts)

    def _rekey(self, a: Attempt) -> Attempt:
        key_of = self._key_of
        wid = a.event_id if a.event_id in key_of else world_event_id(a)
        if wid is None or wid not in key_of or key_of[wid] == a.business_key:
            return a
        return replace(a, business_key=key_of[wid])


class SpooledEvents(Iterable[Event]):
    """A storm's events as its spool holds them on disk, read again on each pass
    (`Spool.events`): the end of a storm keeps no list of its million events, only
    what each pass over them builds (the checks keep a few fields of each,
    `scenarios.history_scan.EventFacts`). Valid while the spool is open."""

    def __init__(self, spool: Spool) -> None:
        self._spool = spool

    def __iter__(self) -> Iterator[Event]:
        return self._spool.events()

    def __length_hint__(self) -> int:
        """How many events the spool holds (`operator.length_hint`: what reads them may size
        its columns once)."""
        return self._spool.event_count()


@dataclass(frozen=True)
class StormOutcome:
    """What `finish_storm` produced: the report, the files, and the process exit code."""

    report: RunReport
    paths: dict[str, Path]

    @property
    def exit_code(self) -> int:
        """0 when every check is valid and the run is whole, else 1."""
        return 0 if self.report.verdict == "pass" and not self.report.partial else 1


def _counted(mapping: Any) -> "Callable[[Event], tuple[str, int] | None] | None":
    """What each event moves the team's counters by (`business_keys.counted_move`; an event
    lacking a field the counter names moves nothing), or None without counters."""
    if mapping is None or not mapping.counters:
        return None
    from hookproof.scenarios.business_keys import TemplateError, counted_move

    def moves(event: Event) -> tuple[str, int] | None:
        try:
            return counted_move(event, mapping)
        except TemplateError:
            return None

    return moves


def sender_bound_why(sender: Mapping[str, Any] | None) -> str | None:
    """Why the storm was sender-bound (its senders' loop lagged `SENDER_BOUND_LAG_MS` or more, or
    an attempt waited `SENDER_BOUND_WAIT_MS` or more for its connection), or None."""
    if sender is None:
        return None
    lag_ms = float(sender.get("lag_max_ms", 0.0))
    wait_ms = float(sender.get("wait_max_ms", 0.0))
    if lag_ms < SENDER_BOUND_LAG_MS and wait_ms < SENDER_BOUND_WAIT_MS:
        return None
    return (f"the storm was sender-bound (its senders' loop lagged up to {lag_ms:.0f} ms, an attempt waited up to "
            f"{wait_ms:.0f} ms for its connection)")


def sender_judged(result: CheckResult, sender: Mapping[str, Any] | None, sender_timeout_s: float, *,
                  rate_per_s: float | None = None) -> CheckResult:
    """``ack_latency`` over what the receiver controls, given how the senders kept up
    (`collect.Collector.sender`; None: not told, `result` as is).

    Each latency already counts from when the request went on the wire to when the
    answer came, less the time the sender's loop was noted late meanwhile
    (`storm_state.SenderLoad`); the stats say whether the storm was sender-bound (loop
    lag of `SENDER_BOUND_LAG_MS`, or a wait for a connection of `SENDER_BOUND_WAIT_MS`).
    A latency finding of a sender-bound storm that its loop lag can still explain (the
    p99 less the longest lag within the finding's threshold) becomes an advisory and
    the check unknown, with that reason. Attempts written whole that got no answer
    within the sender timeout were slower than it: more than `TIMED_OUT_SHARE` of them,
    counting those in which the loop lagged less than half the timeout, is a finding;
    the others only make the check unknown. The finding counts them among the attempts
    acknowledged or timed out and names how many of the others were acknowledged and timed
    out while the loop lagged (an attempt answered with an error, or timed out before it was
    written whole, is in neither). `rate_per_s`: the storm's offered rate (events/s over all
    users), which that finding names with the flag that lowers it.
    """
    if sender is None:
        return result
    timeout_ms = sender_timeout_s * 1000.0
    lag_ms = float(sender.get("lag_max_ms", 0.0))
    wait_ms = float(sender.get("wait_max_ms", 0.0))
    timed_out = int(sender.get("timed_out", 0))
    lagged = int(sender.get("timed_out_lagged", 0))
    bound = lag_ms >= SENDER_BOUND_LAG_MS or wait_ms >= SENDER_BOUND_WAIT_MS
    stats = dict(result.stats)
    stats.update(sender_bound=bound, sender_lag_max_ms=lag_ms, sender_wait_max_ms=wait_ms, timed_out=timed_out,
                 timed_out_sender_lagged=lagged)
    why = (f"the storm was sender-bound: the senders' loop lagged up to {lag_ms:.0f} ms and an attempt waited up to "
           f"{wait_ms:.0f} ms for its connection")
    findings: list[Finding] = []
    unknown: list[str] = []
    p99 = stats.get("p99_ms")
    for f in result.findings:
        threshold = timeout_ms if not f.advisory else timeout_ms / 2
        if bound and isinstance(p99, float) and p99 - lag_ms <= threshold:
            if not f.advisory:
                unknown.append(f"{why}, which can explain ack p99 {p99:.0f} ms: the receiver's own latency is not known")
            findings.append(replace(f, message=f"{f.message} ({why})", severity=ADVISORY))
        else:
            findings.append(f)
    acked = stats.get("acked", 0)
    acked = acked if isinstance(acked, int) else 0
    answered = acked + timed_out + lagged
    if timed_out and timed_out > TIMED_OUT_SHARE * answered:
        rest = [f"{acked} acknowledged"] + ([f"{lagged} timed out while the senders' loop lagged half of it or "
                                             "more"] if lagged else [])
        findings.append(Finding("ack_latency", ALL_KEYS,
                                f"{timed_out} of {answered} attempts sent whole got no answer within the sender "
                                f"timeout {timeout_ms:.0f} ms (besides them: {', '.join(rest)}; an attempt "
                                f"answered with an error, or timed out before it was sent whole, is not counted "
                                f"here){_behind(rate_per_s)}",
                                expected=f"<= {TIMED_OUT_SHARE:.0%} timed out",
                                actual=f"{timed_out} timed out"))
    elif lagged and timed_out + lagged > TIMED_OUT_SHARE * answered:
        unknown.append(f"{timed_out + lagged} of {answered} attempts sent whole got no answer within the sender "
                       f"timeout {timeout_ms:.0f} ms, {lagged} of them while the senders' loop lagged half of it "
                       "or more: not told apart from the sender's delay")
    if timed_out or lagged:
        stats.pop("applicability", None)
    return result_of("ack_latency", findings, stats, unknown="; ".join(unknown) or None)


def _behind(rate_per_s: float | None) -> str:
    """What the timed-out finding adds of the offered load: each attempt left unanswered comes
    back on the storm's compressed retry schedule on top of the new events, so a receiver that
    falls behind the rate falls further (it passes at a lower ``--rate``; one slow at any load
    does not)."""
    if rate_per_s is None:
        return ""
    return (f" at {rate_per_s:g} events/s offered, each unanswered attempt retried on top of them on the storm's "
            "compressed retry schedule (a receiver slow at any load fails at every --rate; one that fell behind "
            "passes at the rate it sustains)")


def storm_scenario(spec: StormSpec, events: Iterable[Event], attempts: Sequence[Attempt],
                   observations: Sequence[Observation], *, settled: bool, started_at: float,
                   duration_s: float, reason: str | None = None, ahead: Ahead | None = None,
                   mapping: "KeyMapping | None" = None, sender: Mapping[str, Any] | None = None,
                   cut: Sequence[CutDelivery] = (), drain_s: float = 0.0, unrecorded: Sequence[str] = (),
                   stopped: Sequence[str] = (),
                   keep: "Callable[[str], Callable[[Iterator[FindingView]], Sequence[FindingView]]] | None" = None,
                   ) -> ScenarioReport:
    """The ``storm`` scenario report: checks over the history and the observations (pure).

    With the team's business keys (``spec.keys``, `scenarios.business_keys`), events and
    attempts carry them and mapped counters are compared, as in certify. `ahead` (the
    undelivered rest of the sent objects' stories, `loadtests.ahead`) explains the effects
    and states a receiver learned from the provider API before the storm delivered them, and
    leaves unknown a team's counter within the range the stories its end cut explain
    (`ahead.Ahead.counters`, `cut.CutStories`).
    `mapping`: the team's keys (`loadtests.team_keys.storm_keys`), `events` already carrying
    them (`keyed`); without it, ``spec.keys`` is read over the profile's rendering of `events`
    (full events). `sender`: how well the senders kept up (`sender_judged`). `cut`: the
    deliveries whose retry schedule the end of the storm's drain (`drain_s` seconds) cut
    (`loadtests.cut`): the ``lost`` and ``stale`` findings they leave open are unknown;
    `stopped`: the workers stopped before the storm's end, in words (`cut.Cut.stopped`).
    `unrecorded`: the workers whose records may be missing, in words (`collect.Collector.unrecorded`):
    the findings deliveries missing from the history could explain are unknown (`cut.Unrecorded`),
    and the scenario is never a pass (unknown, its reason `reason` or the judge's note).
    `keep(check_id)`: what each check's findings go to as their views are made, and what the
    check's view holds of them (`scenarios.saved_report.FindingsKeeper.keep`: a storm's end
    writes them to its history, a row each); by default a tuple of the views.
    """
    if mapping is None and spec.keys:
        from hookproof.scenarios.business_keys import from_plain, keyed

        mapping = from_plain(spec.keys, spec.sending_profile())
        events = keyed(events, mapping)
    if mapping is not None:
        events = events if isinstance(events, Sequence) else tuple(events)
        attempts = Rekeyed(attempts, events)
    from hookproof.scenarios.business_keys import money_prefixes

    # one pass over the history (a storm's is streamed from disk): the expectations and the checks' index
    expectations, index = expectations_and_index(events, attempts, observations, sender_timeout_s=spec.sender_timeout_s,
                                                 max_attempts_per_event=None, money_prefixes=money_prefixes(mapping),
                                                 provider=spec.sending_profile().words(),
                                                 truth=reads_states(observations))
    if mapping is not None and mapping.counters:
        from hookproof.scenarios.business_keys import CounterEventsOf, counter_truth

        # the moves a counter finding names and adds up: made for the counters found off alone
        expectations = replace(expectations, counters=counter_truth(tuple(events), attempts, mapping),
                               counter_events=CounterEventsOf(events, mapping))
    results = [check_safe(c, ALL_CHECKS[c], attempts, expectations, observations, index=index)
               for c in storm_checks(expectations, observations)]
    if ahead:
        results = tolerate(results, ahead)
        if ahead.counters:  # counters whose objects' stories the storm's end cut: how far off is unknown
            results = judge_cut(results, CutStories(ahead.counters))
        if ahead.split:  # keys of two events, one delivered: a receiver applying on the other has not yet
            results = judge_cut(results, SplitKeys(frozenset(ahead.split)))
    if cut:
        results = judge_cut(results, cut_of(cut, events, index.acked_events, drain_s, stopped))
    if unrecorded:
        results = judge_cut(results, Unrecorded(tuple(unrecorded), aggregated=bool(mapping is not None
                                                                                   and mapping.counters)))
    bound = sender_bound_why(sender)
    if bound is not None:  # keys the compressed schedule gave up on while the senders fell behind
        profile = spec.sending_profile()
        results = judge_cut(results, unanswered_of(results, events, index.completions, index.by_event, bound,
                                                   _counted(mapping),
                                                   wire_id=lambda e: profile.envelope(e).event_id))
    if not settled and observations:  # still changing at the deadline: a backlog being applied, not lost
        results = judge_cut(results, unsettled_of(observations, spec.settle_deadline_s))
    results = [sender_judged(r, sender, spec.sender_timeout_s, rate_per_s=spec.rate_per_s)
               if r.check_id == "ack_latency" else r
               for r in results]
    verdict = {Verdict.VALID: "pass", Verdict.INVALID: "fail", Verdict.UNKNOWN: "unknown"}[compose(results)]
    undecided = unknown_reason(results)
    check_views: list[CheckView] = []
    sent = len(attempts)
    # the findings' keys and attempts: one of each across checks (written out by `keep`, none is held)
    shared: dict[object, object] | None = {} if keep is None else None
    while results:  # each result (and each finding) dropped once it has its view: not held twice
        view = views.take_check_view(results, shared, keep(results[0].check_id) if keep is not None else None)
        if view.check_id == "ack_latency":
            stats = dict(view.stats)
            stats.update(sent=sent, events=len(index.by_event),
                         sent_per_s=round(sent / duration_s, 2) if duration_s > 0 else 0.0,
                         throughput=throughput(attempts, started_at, duration_s))
            view = replace(view, stats=stats)
        check_views.append(view)
    del shared, index, expectations  # the checks' columns (freed before the findings' keys are gathered)
    # the findings' keys, and the attempts they name, sorted (one pass: a storm's are read from its history)
    keys: set[str] = set()
    named: list[int] = []
    for v in check_views:
        for f in v.findings:
            keys.add(f.key)
            named.extend(f.attempts)
    named.sort()
    kept: list[Attempt] = []
    if keys or named:  # one more pass, stopped at the report's share
        kept = list(islice((a for a in attempts if a.business_key in keys or a.object_id in keys
                            or _among(named, a.index)), MAX_REPORT_ATTEMPTS))
    if not kept:
        kept = list(attempts[:min(len(attempts), 200)])
    if not settled and reason is None:
        reason = "the receiver's effects did not settle before the deadline"
    if sent == 0:  # no check had anything to object to: nothing was tested
        verdict = "unknown"
        reason = "; ".join(r for r in (reason, "the storm sent no attempt (no worker sent before the storm "
                                                "stopped): nothing was tested") if r)
    if unrecorded and verdict == "pass":  # what it did with the missing records is not known: never a pass
        verdict = "unknown"
        reason = reason or Unrecorded(tuple(unrecorded)).note()
    if verdict == "unknown":
        reason = "; ".join(r for r in (reason, undecided) if r)
    return ScenarioReport(
        "storm", TITLE, DESCRIPTION, verdict, STORM_CHECKLIST, checks=tuple(check_views),
        attempts=tuple(views.attempt_view(a) for a in kept),
        effects=views.effect_points(observations, keys), duration_s=duration_s, settled=settled, reason=reason,
    )


def _among(ordered: Sequence[int], value: int) -> bool:
    """Whether `value` is in `ordered` (ascending), by bisection."""
    at = bisect_left(ordered, value)
    return at < len(ordered) and ordered[at] == value


def _check_and_report(spec: StormSpec, events: Iterable[Event], indexed: Sequence[Attempt], history_path: Path, *,
                      started_at: float, stopped_at: float, partial_reason: str | None,
                      observe: Callable[[], Observation] | None, phase: Callable[[str], None],
                      processes: int = 1, sender: Mapping[str, Any] | None = None,
                      cut: Sequence[CutDelivery] = (), drain_s: float = 0.0, unrecorded: Sequence[str] = (),
                      stopped: Sequence[str] = (), notes: Sequence[str] = (), keeper: "FindingsKeeper | None" = None) -> RunReport:
    """Settle the receiver, run the checks over `indexed`, and make the storm's report
    (`processes`: how many processes sent, for the provider API's truth they replayed;
    `keeper`: where the findings go as they are made, `storm_scenario`'s ``keep``)."""
    from hookproof.loadtests.storm_truth import template_worlds
    from hookproof.loadtests.team_keys import storm_keys
    from hookproof.scenarios.business_keys import counter_keys, keyed
    from hookproof.scenarios.errors import ObserverError
    from hookproof.scenarios.observers import settle
    from hookproof.scenarios.scope import Scope

    templates = template_worlds(spec, processes)
    mapping = storm_keys(spec, templates)  # the team's keys, over the bodies as sent
    if mapping is not None:
        events = keyed(events, mapping)
    # the storm's objects and keys, coded (one pass: a spool's events are read from disk on
    # each), and the counters its events move (another pass only with the team's counters)
    scope = Scope.of_events(events, counter_keys(events, mapping))
    duration_s = max(0.0, stopped_at - started_at)
    phase("settling")
    try:
        read = observe or make_observer(spec.observer, spec.sink_url)
        result = settle(lambda: scope.observation(read()), window_s=spec.settle_window_s,
                        deadline_s=spec.settle_deadline_s, interval_s=spec.settle_interval_s)
    except (ObserverError, ValueError, ImportError, AttributeError, KeyError) as exc:
        scenario = ScenarioReport("storm", TITLE, DESCRIPTION, "error", STORM_CHECKLIST,
                                  attempts=tuple(views.attempt_view(a) for a in indexed[:200]), duration_s=duration_s,
                                  reason=f"could not observe the receiver: {type(exc).__name__}: {exc}")
    else:
        del scope  # the observer's filter: not needed by the checks
        phase("checking")
        ahead = ahead_of(events, templates, keys=mapping)
        scenario = storm_scenario(spec, events, indexed, result.observations, settled=result.settled,
                                  started_at=started_at, duration_s=duration_s, reason=partial_reason, ahead=ahead,
                                  mapping=mapping, sender=sender, cut=cut, drain_s=drain_s, unrecorded=unrecorded,
                                  stopped=stopped, keep=keeper.keep if keeper is not None else None)
    return views.run_report((scenario,), target=spec.target_url, profile=spec.profile, live=spec.live, seed=spec.seed,
                            started_at=started_at, partial=partial_reason is not None,
                            history_file=str(history_path), config=spec.config_file, notes=notes)


def finish_storm(
    spec: StormSpec,
    events: Sequence[Event],
    attempts: Sequence[Attempt],
    *,
    started_at: float,
    stopped_at: float,
    observe: Callable[[], Observation] | None = None,
    partial_reason: str | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> StormOutcome:
    """Settle, check and write the storm's reports into ``spec.out_dir``, from records in memory.

    Args:
        events / attempts: everything the workers sent (any order; merged by send time).
        started_at / stopped_at: unix seconds of the storm's start and of its end.
        observe: the observer (default: built from ``spec.observer``).
        partial_reason: set when some workers' records are missing: the report is partial.
        on_phase: called with ``"reading"`` (the history), ``"settling"``, ``"checking"``,
            ``"writing"`` (progress).

    The records go through a `Spool`, as a distributed storm's do (`finish_spooled`).
    Observer failures do not raise: the scenario becomes ``error`` with the reason.
    Raises ReportWriteError when the reports cannot be written.
    """
    from hookproof.loadtests.records import attempt_to_wire, event_to_wire

    spool = Spool(Path(spec.out_dir) / "history.sqlite")
    spool.add([attempt_to_wire(a) for a in attempts], [event_to_wire(e) for e in events])
    return finish_spooled(spec, spool, started_at=started_at, stopped_at=stopped_at, observe=observe,
                          partial_reason=partial_reason, on_phase=on_phase)


#: glibc's ``mallopt`` parameter M_MMAP_THRESHOLD, and the size the end of a storm sets it to (bytes).
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 256 * 1024


def hand_back_freed_memory() -> bool:
    """Have glibc's malloc serve every block of `MMAP_THRESHOLD_BYTES` or more with a
    mapping of its own, returned to the system when freed, for the rest of the process.

    By default glibc raises that threshold as large blocks are freed (up to 32 MiB), so
    the checks' numpy columns of a million attempts (megabytes each, many alive for one
    step) come from the heap and stay resident after they are freed. Returns True when
    set; False off glibc (nothing changed)."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def workers_note(workers: Sequence[WorkerTotals]) -> tuple[str, ...]:
    """The report's note of a storm's workers (`collect.WorkerTotals.line` each: name, host and
    address, attempts, events, chunks, and a worker stopped or lost), or none for a single local
    process's storm."""
    if not workers or all(w.node in ("", "local") for w in workers):
        return ()
    return ("workers: " + "; ".join(w.line() for w in workers),)


def finish_spooled(
    spec: StormSpec,
    spool: Spool,
    *,
    started_at: float,
    stopped_at: float,
    observe: Callable[[], Observation] | None = None,
    partial_reason: str | None = None,
    on_phase: Callable[[str], None] | None = None,
    workers: Sequence[WorkerTotals] = (),
    sender: Mapping[str, Any] | None = None,
    cut: Sequence[CutDelivery] = (),
    drain_s: float = 0.0,
    unrecorded: Sequence[str] = (),
) -> StormOutcome:
    """Settle, check and write the storm's reports into ``spec.out_dir`` from `spool`
    (the records the workers streamed to disk): the attempts are put in send order in the
    history, which the checks then read from disk in one pass. `workers`' totals are kept
    in the history's meta (``storm_workers``: a list of ``{"index", "attempts", "events",
    "chunks", "node", "host", "address", "closed", "stopped"}``, `collect.WorkerTotals`); `sender`: how well the workers' senders kept up (`collect.Collector.sender`,
    judged by `sender_judged`); `cut`: the deliveries whose schedule the end of the workers'
    drain (`drain_s` seconds) cut (`collect.Collector.cut`, judged by `storm_scenario`);
    `unrecorded`: the workers whose records may be missing, in words (``storm_unrecorded`` in
    the meta; judged by `storm_scenario`). Other arguments and errors as `finish_storm`; closes `spool`.
    """
    from hookproof.reports import write_reports
    from hookproof.scenarios.saved_report import FindingsKeeper, store_report

    phase = on_phase or (lambda _: None)
    out = Path(spec.out_dir)
    history_path = spool.path
    hand_back_freed_memory()  # the checks' columns leave the master's memory when freed
    phase("reading")
    try:
        spool.finalize()
        # the events stay on disk: each pass over them reads them again (`SpooledEvents`)
        history = HistoryFile(history_path)  # reads nothing yet: the checks stream the attempts from disk, once
        try:
            history.set_meta("profile", spec.profile)
            history.set_meta("seed", spec.seed)
            history.set_meta("storm", {"users": spec.users, "rate_per_s": spec.rate_per_s, "shape": spec.shape})
            history.set_meta("storm_workers", [asdict(w) for w in workers])
            history.set_meta("storm_cut", [d.to_wire() for d in cut])  # `cut.CutDelivery.to_wire` lists
            history.set_meta("storm_unrecorded", list(unrecorded))
            indexed: Sequence[Attempt] = history
            # the findings go to the history as their views are made, and the report reads them back
            # from there (`saved_report.StoredFindings`): never a view of each held
            report = _check_and_report(spec, SpooledEvents(spool), indexed, history_path, started_at=started_at,
                                       stopped_at=stopped_at, partial_reason=partial_reason, observe=observe,
                                       phase=phase, processes=max(1, len(workers)), sender=sender, cut=cut,
                                       drain_s=drain_s, unrecorded=unrecorded, notes=workers_note(workers),
                                       stopped=[f"worker {w.index}" for w in workers if w.stopped],
                                       keeper=FindingsKeeper(history))
            # kept with the attempts, so `hookproof report --history` re-renders it, as for certify: its
            # findings the rows written above, the rest in the meta (`saved_report`)
            store_report(history, report)
            history.set_meta("finished", True)
        finally:
            history.close()
    finally:
        spool.close()
    phase("writing")
    paths = write_reports(report, out)
    paths["history"] = history_path
    return StormOutcome(report, paths)


__all__ = [
    "MAX_REPORT_ATTEMPTS",
    "MMAP_THRESHOLD_BYTES",
    "Rekeyed",
    "STORM_CHECKLIST",
    "STATE_CHECKS",
    "STORM_CHECKS",
    "SENDER_BOUND_LAG_MS",
    "SENDER_BOUND_WAIT_MS",
    "SpooledEvents",
    "StormOutcome",
    "finish_spooled",
    "finish_storm",
    "hand_back_freed_memory",
    "make_observer",
    "only_storm",
    "reads_states",
    "state_kinds",
    "storm_checks",
    "sender_judged",
    "storm_scenario",
    "throughput",
    "workers_note",
]
