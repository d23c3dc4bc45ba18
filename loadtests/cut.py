"""Deliveries whose retry schedule a storm's end cut, and what the checks may say of them.

When a storm's load shape ends its senders drain: each delivery not acknowledged yet gets
every retry its schedule still owes (`spec.StormSpec.drain_s` bounds the drain). A delivery
that still had a retry owed, or an attempt waiting for its answer, when the drain ended was
*cut*: the provider would have gone on retrying it, so a receiver that has not applied its
event yet is not known to have lost it. `judge_cut` turns the ``lost`` findings of keys never
acknowledged and the ``stale`` findings of objects whose cut events were never acknowledged
into an ``unknown`` with a note saying how many deliveries the storm's end cut and why; a key
acknowledged and not applied, or refused on every attempt of a schedule that ran to its end,
stays a finding. `CutStories` does the same for a team's counter moved by a story the storm's
end cut (an event of an object sent, an earlier one of it never), within what that explains.

Pure: no Locust, no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any, Callable, ClassVar, Iterable, Mapping, Sequence

from hookproof.scenarios.findings import CheckResult, Finding, Verdict, kept_findings
from hookproof.scenarios.key_loops import NEVER_ACKNOWLEDGED
from hookproof.simulator.events import Event


@dataclass(frozen=True)
class CutDelivery:
    """One delivery whose schedule the storm's end cut.

    Attributes:
        event_id: its world event's id (`simulator.events.Event.id`).
        sent_event_id: the event id its attempts carried (the history's ``event_id``).
        delivery_id: the delivery's id (the history's ``delivery_id``).
        attempts: attempts it sent (the last one, with `in_flight`, unanswered).
        in_flight: its last attempt was still waiting for its answer when the drain ended
            (else a retry was owed).
    """

    event_id: str
    sent_event_id: str
    delivery_id: str
    attempts: int
    in_flight: bool = False

    def to_wire(self) -> list[Any]:
        """``[event_id, sent_event_id, delivery_id, attempts, in_flight]``, as a worker sends it."""
        return [self.event_id, self.sent_event_id, self.delivery_id, self.attempts, self.in_flight]

    @classmethod
    def from_wire(cls, row: Any) -> "CutDelivery":
        """Read `to_wire`'s list. Raises ValueError for anything else."""
        if not isinstance(row, (list, tuple)) or len(row) != 5:
            raise ValueError(f"a cut delivery must be a list of 5 fields, got {row!r}")
        event_id, sent_event_id, delivery_id, attempts, in_flight = row
        if not (isinstance(event_id, str) and isinstance(sent_event_id, str) and isinstance(delivery_id, str)
                and isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 1
                and isinstance(in_flight, bool)):
            raise ValueError(f"a malformed cut delivery: {row!r}")
        return cls(event_id, sent_event_id, delivery_id, attempts, in_flight)


@dataclass(frozen=True)
class Cut:
    """What the storm's end cut, as the checks' judge reads it (`cut_of`).

    Attributes:
        deliveries: the deliveries cut (their count and kind go into the note).
        keys: business keys of their events, none of whose deliveries was acknowledged.
        objects: object ids of those events.
        drain_s: the drain's bound, seconds.
        stopped: the workers stopped before the storm's end, in words ("worker 2"): theirs cut
            their schedules when they stopped, not when the drain ended.
    """

    deliveries: tuple[CutDelivery, ...]
    keys: frozenset[str]
    objects: frozenset[str]
    drain_s: float
    stopped: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.deliveries)

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """Whether `finding` of check `check_id` is one this cut leaves unknown: a ``lost`` key
        never acknowledged, a ``stale`` object of its events."""
        return _unacknowledged(self, check_id, finding)

    def note(self) -> str:
        """One sentence: how many deliveries the storm's end cut and why."""
        in_flight = sum(d.in_flight for d in self.deliveries)
        owed = len(self.deliveries) - in_flight
        parts = [p for p in (f"{owed} with a retry owed" if owed else "",
                             f"{in_flight} with an attempt still unanswered" if in_flight else "") if p]
        when = f"when its drain ended after {self.drain_s:.0f} s"
        if self.stopped:
            when += f" or, on {' and '.join(self.stopped)} (stopped before the storm's end), when it stopped"
        return (f"the storm's end cut the retry schedule of {len(self.deliveries)} delivery(ies) "
                f"({', '.join(parts)}) {when}: the provider would "
                "still retry them, so whether the receiver applies their events is unknown")


def cut_of(deliveries: Sequence[CutDelivery], events: Iterable[Event], acked_events: AbstractSet[str],
           drain_s: float, stopped: Sequence[str] = ()) -> Cut:
    """The `Cut` of `deliveries`: `events` (the storm's, carrying the business keys the checks
    use) name each one's key and object; an event whose id, as its attempts carried it, is in
    `acked_events` (a delivery of it was acknowledged) excuses nothing; `stopped`: `Cut.stopped`.
    One pass over `events`, none when nothing was cut."""
    if not deliveries:
        return Cut((), frozenset(), frozenset(), drain_s, tuple(stopped))
    unacked = {d.event_id for d in deliveries if d.sent_event_id not in acked_events}
    keys: set[str] = set()
    objects: set[str] = set()
    for event in events:
        if event.id in unacked:
            objects.add(event.object_id)
            if event.business_key is not None:
                keys.add(event.business_key)
    return Cut(tuple(deliveries), frozenset(keys), frozenset(objects), drain_s, tuple(stopped))


#: How a ``lost`` finding of a key every valid attempt of which timed out begins
#: (`key_loops.lost_finding`: the answers' summary is the one outcome, ``timeout``).
ONLY_TIMED_OUT = f"{NEVER_ACKNOWLEDGED}: every valid delivery went unanswered or was refused (timeout);"


@dataclass(frozen=True)
class Unanswered:
    """Keys and objects of a sender-bound storm whose deliveries went unanswered on every
    attempt (`unanswered_of`): the storm's compressed schedule gave up where the provider
    would go on retrying for days, and its senders could not keep up, so the receiver was not
    shown to lose them (`ack_latency` judges the timeouts themselves).

    Attributes:
        keys: business keys none of whose valid attempts got any answer.
        objects: object ids of events none of whose valid attempts got any answer.
        why: why the storm was sender-bound (its loop's lag, its wait for a connection).
        counters: counter key → (the sum of the positive amounts, the sum of the negative ones)
            its counted events none of whose valid attempts got any answer would move it by.
    """

    keys: frozenset[str]
    objects: frozenset[str]
    why: str
    counters: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.keys or self.objects or self.counters)

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """As `Cut.excuses`; and a ``counter`` whose difference from the truth the unanswered
        events explain (it lies between the truth less every unanswered addition and the truth
        less every unanswered subtraction: some of them not applied yet)."""
        if check_id == "counter":
            span = self.counters.get(finding.key)
            want, got = finding.expected, 0 if finding.actual is None else finding.actual
            if span is None or not isinstance(want, int) or isinstance(got, bool) or not isinstance(got, int):
                return False
            return want - span[0] <= got <= want - span[1]
        return _unacknowledged(self, check_id, finding)

    def note(self) -> str:
        """One sentence: why whether the receiver applies them is unknown."""
        return (f"every attempt of their deliveries went unanswered within the sender timeout while {self.why}: "
                "the storm's compressed retry schedule ended where the provider would go on retrying, so whether "
                "the receiver applies them is unknown (ack_latency judges the timeouts)")


def unanswered_of(results: Sequence[CheckResult], events: Iterable[Event], completions: Sequence[Any],
                  by_event: Any, why: str,
                  counted: Callable[[Event], tuple[str, int] | None] | None = None,
                  wire_id: Callable[[Event], str] | None = None) -> Unanswered:
    """The `Unanswered` of a sender-bound storm's `results`: the keys of ``lost`` findings whose
    every valid attempt timed out (`ONLY_TIMED_OUT`), and the objects of ``stale`` findings one of
    whose events was never answered on a valid attempt (`completions` at `by_event`'s positions:
    each ``unknown``, a valid attempt's that got no answer; None marks an invalid one), or the
    events of such a key; and, for each key of a ``counter`` finding, what the events it counts
    (`counted`: an event's counter key and signed amount, `business_keys.counted_move`) that were
    never answered would move it by (each effect once). One pass over `events`, none when no such
    finding is open. `wire_id`: the id an event's attempts record, where it is not the world's
    (Shopify's ``{topic}:{X-Shopify-Event-Id}``, `Envelope.event_id`): looked up when the
    world's id has no attempts."""
    keys = frozenset(f.key for r in results if r.check_id == "lost" for f in r.findings
                     if not f.advisory and f.message.startswith(ONLY_TIMED_OUT))
    stale = {f.key for r in results if r.check_id == "stale" for f in r.findings if not f.advisory}
    short = ({f.key for r in results if r.check_id == "counter" for f in r.findings if not f.advisory}
             if counted is not None else set())
    if not keys and not stale and not short:
        return Unanswered(frozenset(), frozenset(), why)
    from hookproof.simulator.delivery.history import Completion

    unknown = Completion.UNKNOWN
    objects: set[str] = set()
    spans: dict[str, tuple[int, int]] = {}
    effects: set[str] = set()

    def never_answered(event: Event) -> bool:
        positions = by_event.get(event.id, ())
        if not len(positions) and wire_id is not None:
            positions = by_event.get(wire_id(event), ())
        valid = [completions[p] for p in positions if completions[p] is not None]
        return bool(valid) and all(c is unknown for c in valid)

    for event in events:
        if short and counted is not None and (event.business_key or event.id) not in effects:
            moved = counted(event)
            if moved is not None and moved[0] in short and never_answered(event):
                effects.add(event.business_key or event.id)
                up, down = spans.get(moved[0], (0, 0))
                spans[moved[0]] = (up + max(moved[1], 0), down + min(moved[1], 0))
        if event.object_id not in stale or event.object_id in objects:
            continue
        if event.business_key is not None and event.business_key in keys:
            objects.add(event.object_id)
            continue
        if never_answered(event):
            objects.add(event.object_id)
    return Unanswered(keys, frozenset(objects), why, spans)


def _unacknowledged(cut: "Cut | Unanswered", check_id: str, f: Finding) -> bool:
    """A ``lost`` finding of one of `cut`'s keys never acknowledged, or a ``stale`` one of its objects."""
    if check_id == "lost":
        return f.key in cut.keys and f.message.startswith(NEVER_ACKNOWLEDGED)
    return check_id == "stale" and f.key in cut.objects


@dataclass(frozen=True)
class CutStories:
    """A team's counters (`[counters]`) some of whose objects' stories the storm's end cut
    (`ahead.Ahead.counters`): an event moving the counter was never delivered while a later
    event of its object was (the reorder window drew a membership's ``.deleted``, and the storm
    ended before its ``.created`` went out). The truth counts what was delivered (-1); a correct
    receiver that never saw the creation may show the deletion taking nothing back (0), so how
    far the counter may be off is unknown, as a cut delivery's ``lost`` key is.

    Attributes:
        counters: counter key -> (low, high), the range around the truth such objects may leave
            it in (`ahead.Ahead.counters`): a ``counter`` finding within it is unknown, one
            outside (a membership counted twice beside it) stays a finding.
    """

    counters: Mapping[str, tuple[int, int]]

    #: The checks whose findings this judge may leave unknown.
    checks: ClassVar[tuple[str, ...]] = ("counter",)

    def __bool__(self) -> bool:
        return bool(self.counters)

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """Whether `finding` is a ``counter`` of a cut story's key off by no more than the cut explains."""
        span = self.counters.get(finding.key) if check_id == "counter" else None
        want, got = finding.expected, 0 if finding.actual is None else finding.actual
        if span is None or not isinstance(want, int) or isinstance(got, bool) or not isinstance(got, int):
            return False
        return want + span[0] <= got <= want + span[1]

    def note(self) -> str:
        """One sentence: why these counters are unknown."""
        return (f"the storm's end cut the stories of objects moving {len(self.counters)} counter(s): an event of "
                "theirs was delivered while an earlier one of the same object never went out (the reorder window "
                "drew it after the storm's end), so whether the receiver counts the later one without the earlier "
                "is unknown (a deletion of an object it never saw may take nothing back)")


@dataclass(frozen=True)
class SplitKeys:
    """Business keys two events of one object carry, one delivered by the storm and the other,
    of a type it sends, never sent before its end (`ahead.Ahead.split`: the reorder window held
    Stripe's ``invoice.paid`` while its ``invoice.payment_succeeded`` went out). The effect is owed
    once across both, and a receiver may apply it on either type alone (Stripe's docs advise one):
    one that applies on the undelivered type has not applied it yet, so the key's ``lost`` and
    its ``counter`` short of the truth (none, or nothing moved) are unknown. A key applied twice,
    or moved by another amount, stays a finding.

    Attributes:
        keys: the split business keys.
    """

    keys: frozenset[str]

    #: The checks whose findings this judge may leave unknown.
    checks: ClassVar[tuple[str, ...]] = ("lost", "counter")

    def __bool__(self) -> bool:
        return bool(self.keys)

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """Whether `finding` is a split key's ``lost``, or its ``counter`` with nothing applied."""
        if finding.key not in self.keys:
            return False
        return check_id == "lost" or (check_id == "counter" and finding.actual in (None, 0))

    def note(self) -> str:
        """One sentence: why these keys are unknown."""
        return (f"the storm's end cut {len(self.keys)} key(s) two events of one object carry: one was delivered, "
                "the other never went out, so a receiver applying the effect on the other type alone has not "
                "applied it yet")


@dataclass(frozen=True)
class Unsettled:
    """A storm whose receiver was still changing what it shows when the settle deadline came
    (`unsettled_of`): a receiver that stores each delivery, answers, and applies it from a queue
    slower than the storm offered was still working through its backlog, so what it had not
    applied yet is not shown lost, nor an object short of its last state stale.

    Attributes:
        applied: effect rows that appeared over the last `over_s` seconds of reads.
        over_s: the span of those reads, seconds.
        deadline_s: the settle deadline (`[settle] deadline_s`), seconds.
    """

    applied: int
    over_s: float
    deadline_s: float

    def __bool__(self) -> bool:
        return True

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """Every ``lost`` and ``stale`` finding, and a ``counter`` short of the truth (missing, or
        between 0 and it): none is known while the receiver still applies (a counter past the
        truth, or on the wrong side of 0, stays a finding)."""
        if check_id == "counter":
            want, got = finding.expected, finding.actual
            return isinstance(want, int) and want > 0 and (got is None or (isinstance(got, int) and 0 <= got < want))
        return check_id in ("lost", "stale")

    def note(self) -> str:
        """One sentence: what the reads showed at the deadline, and what to raise."""
        pace = (f": {self.applied} effect(s) appeared in the last {self.over_s:.1f} s of reads "
                f"(about {self.applied / self.over_s:.1f}/s)" if self.applied and self.over_s > 0 else "")
        return (f"the receiver was still changing what it shows when the settle deadline came after "
                f"{self.deadline_s:g} s{pace}, so what it had not applied yet is not known lost (a backlog it "
                "applies more slowly than the storm offered); raise [settle] deadline_s to wait for it")


@dataclass(frozen=True)
class Unrecorded:
    """A storm some of whose records may be missing: a worker that sent no closing message (it
    was killed, or its master lost it) may have sent deliveries the history never got. What the
    receiver did with those is not known, so no finding they could explain may fail the run:

    - a team's ``counter`` (`aggregated`: ``[counters]``, each summing the events of its key)
      differs from the truth of the recorded events (an unrecorded event of its key moves it, by an
      amount of either sign); a built-in money key's counter is its one event's amount, which a
      missing record of another delivery of that event does not change, and stays;
    - an ``unexpected`` effect (a key whose only deliveries went unrecorded);
    - a ``lost`` key never acknowledged (its next retries may have gone unrecorded);
    - a ``stale`` or ``regressed`` object (its newer events may have gone unrecorded).

    What they cannot explain stays a finding: a key applied more than once (``duplicated``:
    exactly once whatever was recorded), a key acknowledged and not applied, and every check of
    the recorded answers (refusals, 5xx, latency).

    Attributes:
        workers: each worker whose records may be missing, in words (its name, its address
            when the master knows it).
        aggregated: whether the run's counters are the team's (`[counters]`), which sum events.
    """

    workers: tuple[str, ...]
    aggregated: bool = False

    #: The checks whose findings this judge may leave unknown.
    checks: ClassVar[tuple[str, ...]] = ("lost", "stale", "counter", "unexpected", "regressed")

    def __bool__(self) -> bool:
        return bool(self.workers)

    def excuses(self, check_id: str, finding: Finding) -> bool:
        """Whether unrecorded deliveries could explain `finding` of check `check_id` (above)."""
        if check_id == "lost":
            return finding.message.startswith(NEVER_ACKNOWLEDGED)
        if check_id == "counter":
            return self.aggregated
        return check_id in ("stale", "unexpected", "regressed")

    def note(self) -> str:
        """One sentence: whose records may be missing, and why that leaves these unknown."""
        return (f"the records of {', '.join(self.workers)} may be missing (no closing message came): deliveries "
                "it sent that never reached the history could explain these, so they are unknown")


#: Seconds of the last reads over which `unsettled_of` counts the effects that appeared.
PACE_WINDOW_S = 2.0


def unsettled_of(observations: Sequence[Any], deadline_s: float) -> Unsettled:
    """The `Unsettled` of a storm's reads (`Observation`s, oldest first; at least one), whose
    settle ended at `deadline_s` with reads still changing: the effect rows that appeared over
    about the last `PACE_WINDOW_S` seconds of them."""
    last = observations[-1]
    earlier = last
    for obs in reversed(observations):
        earlier = obs
        if last.at - obs.at >= PACE_WINDOW_S:
            break
    return Unsettled(max(0, len(last.effects) - len(earlier.effects)), last.at - earlier.at, deadline_s)


#: The checks a judge leaves findings of unknown unless it says otherwise (`Unrecorded.checks`).
JUDGED_CHECKS = ("lost", "stale", "counter")


def judge_cut(results: Sequence[CheckResult],
              cut: "Cut | Unanswered | Unsettled | Unrecorded | CutStories | SplitKeys") -> list[CheckResult]:
    """`results` with the findings `cut` excuses left out (`Cut.excuses`: the ``lost`` findings
    of keys never acknowledged and the ``stale`` findings of its objects; `Unsettled`'s, every
    ``lost`` and ``stale`` one and the counters short of the truth): such a check with no other finding is ``unknown``, its detail
    `Cut.note` (a check with others stays invalid, the note added). An `Unanswered` and an
    `Unsettled` are judged the same way; an `Unrecorded` also over ``unexpected`` and
    ``regressed`` (`Unrecorded.checks`); a `CutStories` over ``counter`` alone, a `SplitKeys` over
    ``lost`` and ``counter``."""
    if not cut:
        return list(results)
    judged = getattr(cut, "checks", JUDGED_CHECKS)
    out = []
    for r in results:
        if r.check_id not in judged:
            out.append(r)
            continue

        def is_excused(f: Finding, check_id: str = r.check_id) -> bool:
            return not f.advisory and cut.excuses(check_id, f)
        # counted, not held: an `Unanswered` may excuse every key of a storm
        excused = sum(f.count for f in r.findings if is_excused(f))
        if not excused:
            out.append(r)
            continue
        # a tuple, or a per-key check's findings still made when read (`kept_findings`)
        kept = kept_findings(r.findings, lambda f: not is_excused(f))
        problems = sum(f.count for f in kept if not f.advisory)
        what = {"lost": "key(s) not applied", "stale": "object(s) not current", "unexpected": "unexpected effect(s)",
                "regressed": "object(s) gone back",
                "counter": "counter(s) off" if isinstance(cut, (Unrecorded, CutStories))
                else "counter(s) short"}[r.check_id]
        detail = (f"{excused} {what} unknown: {cut.note()}; {problems} finding(s), "
                  f"{sum(f.count for f in kept) - problems} advisory(ies)")
        verdict = Verdict.INVALID if problems else Verdict.UNKNOWN
        out.append(replace(r, verdict=verdict, findings=kept, detail=detail,
                           stats={**r.stats, "cut_short": excused}))
    return out


__all__ = ["JUDGED_CHECKS", "ONLY_TIMED_OUT", "PACE_WINDOW_S", "Cut", "CutDelivery", "CutStories", "SplitKeys",
           "Unanswered", "Unrecorded", "Unsettled", "cut_of", "judge_cut", "unanswered_of", "unsettled_of"]
