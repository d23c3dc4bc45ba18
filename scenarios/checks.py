"""Checks: pure functions from (history, expectations, observations) to a verdict.

Modelled on Jepsen's checkers (``checker.clj``): each check returns a `CheckResult`
with a three-valued `Verdict` and its `Finding`s; `compose` merges verdicts by priority
(invalid beats unknown beats valid); `run_checks` guards every check so that one that
raises yields ``unknown`` with the error attached instead of crashing the run.

Safety checks (``duplicated``, ``unexpected``, ``regressed``) look at every
observation; liveness checks (``lost``, ``stale``, ``counter``) look at the last one,
the *settled* observation taken after the receiver settled. Advisories are findings
with ``severity="advisory"``: reported, never making a verdict invalid.

Every check is O(n) in the history plus the observations: the per-key and per-event
indexes (`CheckIndex`) are built in one pass and shared by `run_checks`; nothing loops
over the history inside a loop over the history, and the checks about answers scan only
the attempts the index marked `notable` (invalid, or answered 4xx/5xx). Two exceptions,
both in C and small: ``ack_latency`` sorts the acked latencies (exact quantiles,
O(n log n)), and ``regressed`` maps a status seen without a version by bisection
(O(log v) per state, v = versions of that object). At a million attempts the time is
dominated by memory traffic (every pass touches every attempt object), so the hot loops
make few passes and allocate per key or per event, never per attempt.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from enum import StrEnum
from typing import Callable, Iterable, Mapping, Sequence

from scenarios.observations import Expectations, Observation
from simulator.delivery.history import Attempt, Completion, Outcome

#: Severity of a finding that makes a verdict invalid.
FINDING = "finding"
#: Severity of a finding that is only reported.
ADVISORY = "advisory"
#: `Finding.key` of findings about the run as a whole (latency).
ALL_KEYS = "*"
#: Most attempt indexes listed in one whole-run finding.
MAX_LISTED_ATTEMPTS = 20

_ANSWERED_NON_SUCCESS = (Outcome.REJECTED, Outcome.SERVER_ERROR)

#: Fault tags (as `simulator.faults` records them) that only shape deliveries: they
#: cannot make a correct receiver answer 5xx, so they do not excuse one.
BENIGN_FAULT_TAGS: frozenset[str] = frozenset({
    "drop-response", "sender-timeout", "reserialize", "transport-fields", "rotation", "future-timestamp",
})
#: Prefixes of parameterised benign tags (``copies=3``, ``burst=8``, ``order=reversed``).
BENIGN_FAULT_PREFIXES: tuple[str, ...] = ("copies=", "burst=", "order=")


def injected_fault(tags: Sequence[str]) -> bool:
    """True when `tags` hold a fault that may explain a 5xx (any tag not known benign)."""
    return any(t not in BENIGN_FAULT_TAGS and not t.startswith(BENIGN_FAULT_PREFIXES) for t in tags)


class Verdict(StrEnum):
    """Jepsen's three-valued ``:valid?``."""

    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


_PRIORITY = {Verdict.VALID: 0, Verdict.UNKNOWN: 1, Verdict.INVALID: 2}


@dataclass(frozen=True)
class Finding:
    """One violation (or, with ``severity="advisory"``, one remark).

    Attributes:
        check_id: the check that found it.
        key: the business key, object id or event id concerned (``"*"``: the run).
        message: one line a person understands.
        expected / actual: what should have been seen, and what was.
        attempts: history indexes of the attempts involved, in history order.
        severity: ``"finding"`` or ``"advisory"``.
    """

    check_id: str
    key: str
    message: str
    expected: object = None
    actual: object = None
    attempts: tuple[int, ...] = ()
    severity: str = FINDING

    @property
    def advisory(self) -> bool:
        return self.severity == ADVISORY

    def to_dict(self) -> dict[str, object]:
        return {
            "check_id": self.check_id, "key": self.key, "message": self.message,
            "expected": self.expected, "actual": self.actual,
            "attempts": list(self.attempts), "severity": self.severity,
        }


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: verdict, findings (advisories included) and stats."""

    check_id: str
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    stats: Mapping[str, object] = field(default_factory=dict)
    detail: str = ""

    @property
    def problems(self) -> tuple[Finding, ...]:
        """The findings that are not advisories."""
        return tuple(f for f in self.findings if not f.advisory)

    @property
    def advisories(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.advisory)

    def to_dict(self) -> dict[str, object]:
        return {
            "check_id": self.check_id, "verdict": self.verdict.value, "detail": self.detail,
            "stats": dict(self.stats), "findings": [f.to_dict() for f in self.findings],
        }


def compose(results: Iterable[CheckResult]) -> Verdict:
    """Merge verdicts by priority: invalid > unknown > valid (valid when empty)."""
    verdict = Verdict.VALID
    for result in results:
        if _PRIORITY[result.verdict] > _PRIORITY[verdict]:
            verdict = result.verdict
    return verdict


# ---- shared index --------------------------------------------------------------------


@dataclass
class CheckIndex:
    """Indexes over one run, built in one pass over the history and shared by the checks.

    Positions are indexes into `history`; every list of positions is in history order.

    Attributes:
        history: the attempts the positions point into.
        expectations: the run's expectations (for `key_of_event`).
        by_key: business key → positions of the attempts filed under it: those carrying
            it, and those carrying no key whose event has it (`key_of_event`).
        by_event: event id → positions.
        completions: position → the completion of a valid attempt, None for an invalid one.
        acked_events: the events with at least one valid attempt that completed ok
            (`ack_window` gives their timing).
        notable: positions of the attempts that are invalid, or got a 4xx/5xx status or a
            rejected or server-error outcome; the per-attempt checks scan these only.
        settled: the last observation, or None when nothing was observed.
        settled_counts: effect rows per key in `settled`.
        peak: key → (highest count in any observation, position of that observation).
        has_states: True when any observation reported any state.
    """

    history: Sequence[Attempt]
    expectations: Expectations
    by_key: dict[str, list[int]]
    by_event: dict[str, list[int]]
    completions: list[Completion | None]
    acked_events: set[str]
    notable: list[int]
    settled: Observation | None
    settled_counts: dict[str, int]
    peak: dict[str, tuple[int, int]]
    has_states: bool
    _ack_windows: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)  # ack_window's memo

    def attempt_ids(self, positions: Iterable[int]) -> tuple[int, ...]:
        """History indexes of the attempts at `positions` (see `_history_id`)."""
        history = self.history
        return tuple(_history_id(history[p], p) for p in positions)

    def acked(self, positions: Iterable[int]) -> list[int]:
        """Positions among `positions` of valid attempts that completed ok."""
        completions, ok = self.completions, Completion.OK
        return [p for p in positions if completions[p] is ok]

    @cached_property
    def expected_keys(self) -> dict[str, str]:
        """Event id → the first expected key listing it (in `ExpectedEffect.event_ids`,
        or as its `event_id` when those are empty). Built on first use."""
        out: dict[str, str] = {}
        for key, exp in self.expectations.expected.items():
            for event_id in exp.event_ids or (exp.event_id,):
                if event_id not in out:
                    out[event_id] = key
        return out

    def ack_window(self, event_id: str) -> tuple[float, float] | None:
        """(earliest send, earliest answer) among the event's valid acked attempts, unix
        seconds, or None when none was acked. Computed on first use and remembered."""
        if event_id not in self.acked_events:
            return None
        window = self._ack_windows.get(event_id)
        if window is None:
            history, completions, ok = self.history, self.completions, Completion.OK
            acked = [history[p] for p in self.by_event[event_id] if completions[p] is ok]
            window = self._ack_windows[event_id] = (min(a.sent_at for a in acked), min(a.answered_at for a in acked))
        return window

    def key_of_event(self, event_id: str) -> str | None:
        """The business key of an event: the expected key listing it (`expected_keys`),
        else the key of its first attempt that carries one, else None."""
        key = self.expected_keys.get(event_id)
        if key is None:
            history = self.history
            for p in self.by_event.get(event_id, ()):
                key = history[p].business_key
                if key is not None:
                    break
        return key

    def label(self, a: Attempt) -> str:
        """The key a per-attempt finding is filed under: business key, object or event."""
        if a.business_key is not None:
            return a.business_key
        return self.key_of_event(a.event_id) or a.object_id or a.event_id


def _history_id(a: Attempt, pos: int) -> int:
    """The history index of `a` at position `pos` (its recorded index, else `pos`)."""
    return a.index if a.index >= 0 else pos


def build_index(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation]
) -> CheckIndex:
    """Build the shared `CheckIndex`: one pass over the history, one over the observations.

    The pass does a few dictionary operations per attempt and creates one list per key
    and per event, nothing per attempt. Attempts without a business key are filed
    under their event's key afterwards (the key may come from a later attempt), then
    the lists that received them are re-sorted (two sorted runs: a linear merge).
    """
    by_key: dict[str, list[int]] = {}
    by_event: dict[str, list[int]] = {}
    completions: list[Completion | None] = [None] * len(history)
    acked_events: set[str] = set()
    notable: list[int] = []
    unkeyed: list[str] = []  # the event id of each attempt without a business key
    ok = Completion.OK
    for pos, a in enumerate(history):
        event_id = a.event_id
        positions = by_event.get(event_id)  # get-or-create without allocating when present
        if positions is None:
            by_event[event_id] = [pos]
        else:
            positions.append(pos)
        key = a.business_key
        if key is None:
            unkeyed.append(event_id)
        else:
            positions = by_key.get(key)
            if positions is None:
                by_key[key] = [pos]
            else:
                positions.append(pos)
        if not a.valid:
            notable.append(pos)
            continue
        completion = completions[pos] = a.completion
        if completion is ok:
            acked_events.add(event_id)
        status = a.status
        if (status is not None and status >= 400) or a.outcome in _ANSWERED_NON_SUCCESS:
            notable.append(pos)

    peak: dict[str, tuple[int, int]] = {}
    counts: dict[str, int] = {}
    has_states = False
    for oi, obs in enumerate(observations):
        counts = obs.counts()
        has_states = has_states or bool(obs.states)
        for key, n in counts.items():
            best = peak.get(key)
            if best is None or n > best[0]:
                peak[key] = (n, oi)
    settled = observations[-1] if observations else None
    index = CheckIndex(history, expectations, by_key, by_event, completions, acked_events, notable, settled,
                       counts if settled is not None else {}, peak, has_states)
    if unkeyed:
        _file_unkeyed(index, unkeyed)
    return index


def _file_unkeyed(index: CheckIndex, unkeyed: Sequence[str]) -> None:
    """File the attempts without a business key under their event's key (`key_of_event`).

    `unkeyed` holds the event id of each such attempt. An event none of whose attempts
    carries a key is looked up in the expectations only. Each list of `index.by_key`
    that receives positions is sorted once (a few sorted runs: a merge).
    """
    history, by_event = index.history, index.by_event
    late: dict[str, list[int]] = {}
    for event_id, n_unkeyed in Counter(unkeyed).items():
        positions = by_event[event_id]
        if n_unkeyed == len(positions):  # no attempt of it carries a key
            key = index.expected_keys.get(event_id)
        else:
            key = index.key_of_event(event_id)
        if key is not None:
            late.setdefault(key, []).extend(p for p in positions if history[p].business_key is None)
    by_key = index.by_key
    for key, positions in late.items():
        filed = by_key.setdefault(key, [])
        filed += positions
        filed.sort()


# ---- helpers ------------------------------------------------------------------------


def _result(
    check_id: str, findings: list[Finding], stats: Mapping[str, object] | None = None,
    *, unknown: str | None = None,
) -> CheckResult:
    problems = sum(1 for f in findings if not f.advisory)
    if problems:
        verdict = Verdict.INVALID
    elif unknown is not None:
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.VALID
    detail = f"{problems} finding(s), {len(findings) - problems} advisory(ies)"
    if unknown is not None:
        detail = f"{unknown}; {detail}"
    return CheckResult(check_id, verdict, tuple(findings), dict(stats or {}), detail)


def _no_observation(check_id: str) -> CheckResult:
    return _result(check_id, [], {"observations": 0}, unknown="nothing was observed")


def _index(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    index: CheckIndex | None,
) -> CheckIndex:
    return index if index is not None else build_index(history, expectations, observations)


def _after_ack(a: Attempt, window: tuple[float, float] | None) -> bool:
    """True when `a` was sent after another copy of its event had been acked."""
    return window is not None and a.sent_at >= window[1]


def _overlaps_ack(a: Attempt, window: tuple[float, float] | None) -> bool:
    """True when `a` ran while a copy of its event that got acked was in flight."""
    return window is not None and a.sent_at < window[1] and window[0] <= a.answered_at


def _statuses(history: Sequence[Attempt], positions: Sequence[int]) -> str:
    """The distinct answers the attempts got: status codes, or the outcome when none came."""
    seen = dict.fromkeys(str(history[p].status) if history[p].status is not None
                         else history[p].outcome.value.replace("_", " ") for p in positions)
    return ", ".join(seen)


def _grouped(
    check_id: str, groups: Mapping[tuple[str, str], list[int]], history: Sequence[Attempt],
    idx: CheckIndex, messages: Mapping[str, tuple[str, str, str]],
) -> list[Finding]:
    """One finding per (event id, category); `messages[category]` = (severity, expected, text).

    The text may use ``{statuses}`` (the statuses the attempts got) and ``{n}``.
    """
    out = []
    for (_, category), positions in groups.items():
        severity, expected, text = messages[category]
        statuses = _statuses(history, positions)
        out.append(Finding(
            check_id, idx.label(history[positions[0]]),
            text.format(statuses=statuses, n=len(positions)),
            expected=expected, actual=statuses,
            attempts=idx.attempt_ids(positions), severity=severity,
        ))
    return out


def _percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile `p` (0–100) of ascending `sorted_values`."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


# ---- the checks ---------------------------------------------------------------------


def check_duplicated(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: no observation ever shows a business key applied more than once."""
    if not observations:
        return _no_observation("duplicated")
    idx = _index(history, expectations, observations, index)
    findings = []
    for key, (n, oi) in idx.peak.items():
        if n > 1:
            attempts = idx.attempt_ids(idx.by_key.get(key, ()))
            findings.append(Finding(
                "duplicated", key,
                f"applied {n} times instead of once; {len(idx.by_key.get(key, ()))} delivery attempt(s) carried it",
                expected=1, actual=n, attempts=attempts))
    return _result("duplicated", findings, {"keys_observed": len(idx.peak), "observations": len(observations)})


def check_lost(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, every validly sent key shows its effect.

    A key acked but never applied is lost. A key never acked and never applied is a
    finding too: the receiver answered none of its valid deliveries with a success, so
    the provider would still be retrying it (a certification run delivers until acked
    or the schedule is exhausted).
    """
    if not observations:
        return _no_observation("lost")
    idx = _index(history, expectations, observations, index)
    findings = []
    never_acked = 0
    for key in expectations.expected:
        if idx.settled_counts.get(key, 0):
            continue
        positions = idx.by_key.get(key, [])
        acked = idx.acked(positions)
        if acked:
            findings.append(Finding("lost", key, f"acknowledged {len(acked)} time(s) but never applied",
                                    expected=1, actual=0, attempts=idx.attempt_ids(positions)))
        else:
            never_acked += 1
            findings.append(Finding("lost", key, "never applied and never acknowledged: every valid delivery "
                                    f"went unanswered or was refused ({_statuses(history, positions)}), so the "
                                    "provider would keep retrying it for days",
                                    expected=1, actual=0, attempts=idx.attempt_ids(positions)))
    stats = {"expected_keys": len(expectations.expected), "lost": len(findings) - never_acked,
             "never_acknowledged": never_acked}
    return _result("lost", findings, stats)


def check_unexpected(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: no effect for a key never validly sent; every invalid delivery refused.

    An invalid delivery acked with a 2xx, or not refused with a 4xx (no answer, a 5xx, a
    refused connection), is a finding: the contract is a 4xx, and only a 4xx shows the
    receiver checked and refused it.
    """
    idx = _index(history, expectations, observations, index)
    findings = []
    for key, (n, oi) in idx.peak.items():
        if key in expectations.forbidden:
            message = "applied although every delivery of it was invalid (forged, stale or foreign)"
        elif key not in expectations.expected:
            message = "applied but never validly sent"
        else:
            continue
        findings.append(Finding("unexpected", key, f"{message} (observation {oi})", expected=0, actual=n,
                                attempts=idx.attempt_ids(idx.by_key.get(key, ()))))
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if a.valid:
            continue
        if a.outcome is Outcome.ACKED:
            groups.setdefault((a.event_id, "invalid-acked"), []).append(pos)
        elif a.outcome is not Outcome.DROPPED and not (a.status is not None and 400 <= a.status < 500):
            groups.setdefault((a.event_id, "invalid-unrefused"), []).append(pos)
    findings += _grouped("unexpected", groups, history, idx, {
        "invalid-acked": (FINDING, "4xx", "an invalid delivery was accepted with {statuses}; "
                                   "the provider's official verifier rejects it"),
        "invalid-unrefused": (FINDING, "4xx", "an invalid delivery was not refused with a 4xx ({statuses}); "
                                       "a receiver that is unreachable, crashes or hangs proves nothing"),
    })
    stats = {"keys_observed": len(idx.peak), "invalid_acked_events": len(groups)}
    return _result("unexpected", findings, stats, unknown=None if observations else "nothing was observed")


def check_recovered(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Count applied keys whose valid attempts were indeterminate (fine, as stats).

    A key applied although every valid attempt of it *failed* (4xx, or never reached
    the receiver) is a finding: a rejection must be a no-op.
    """
    if not observations:
        return _no_observation("recovered")
    idx = _index(history, expectations, observations, index)
    findings = []
    recovered_keys = unknown_applied = 0
    completions, ok, indeterminate = idx.completions, Completion.OK, Completion.UNKNOWN
    for key in idx.peak:
        if key not in expectations.expected:
            continue
        positions = idx.by_key.get(key, [])
        has_ok = False
        unknown = failed = 0
        for p in positions:
            completion = completions[p]
            if completion is None:  # an invalid attempt
                continue
            if completion is ok:
                has_ok = True
            elif completion is indeterminate:
                unknown += 1
            else:
                failed += 1
        unknown_applied += unknown
        if has_ok:
            continue
        if unknown:
            recovered_keys += 1
        elif failed:
            findings.append(Finding("recovered", key,
                                    f"applied although all {failed} valid attempt(s) failed "
                                    "(4xx or never reached the receiver)",
                                    expected=0, actual=idx.peak[key][0], attempts=idx.attempt_ids(positions)))
    stats = {"recovered_keys": recovered_keys, "unknown_attempts_applied": unknown_applied}
    return _result("recovered", findings, stats)


def check_regressed(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: per object, over observations in time order, the version never goes down.

    A state without a version is mapped to one through the provider's truth
    (`ObjectTruth.version_for`, the reading most favourable to monotonicity); a status
    the provider never emitted is counted in the stats and skipped.
    """
    if not observations:
        return _no_observation("regressed")
    idx = _index(history, expectations, observations, index)
    high: dict[str, tuple[int, str]] = {}
    flagged: set[str] = set()
    findings = []
    unmapped = 0
    for oi in sorted(range(len(observations)), key=lambda i: observations[i].at):
        for st in observations[oi].states:
            obj = st.object_id
            truth = expectations.truth.get(obj)
            prev = high.get(obj)
            version = st.version
            if version is None:
                if truth is None:
                    continue
                version = truth.version_for(st.status, prev[0] if prev else 0)
                if version is None:
                    unmapped += 1
                    continue
            if prev is None or version > prev[0]:
                high[obj] = (version, st.status)
            elif version < prev[0] and obj not in flagged:
                flagged.add(obj)
                positions: list[int] = []
                if truth is not None:
                    for v in (version, prev[0]):
                        event_id = truth.event_id_at(v)
                        positions += idx.by_event.get(event_id, []) if event_id else []
                findings.append(Finding(
                    "regressed", obj,
                    f"went back from v{prev[0]} ({prev[1]}) to v{version} ({st.status}) at observation {oi}",
                    expected=f">= v{prev[0]}", actual=f"v{version}", attempts=idx.attempt_ids(sorted(positions)),
                ))
    return _result("regressed", findings, {"objects_observed": len(high), "unmapped_states": unmapped})


def check_stale(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, each object's state equals the truth's final state.

    A status must equal the final status; a version, when exposed, the final version.
    Unknown when the observer never reported any state (it may not expose states).
    """
    if not observations:
        return _no_observation("stale")
    idx = _index(history, expectations, observations, index)
    if expectations.truth and not idx.has_states:
        return _result("stale", [], {"objects": len(expectations.truth)},
                       unknown="the observer reported no state at all")
    settled = idx.settled
    assert settled is not None
    findings = []
    for obj, truth in expectations.truth.items():
        st = settled.state_of(obj)
        if st is not None and st.status == truth.final_status and st.version in (None, truth.final_version):
            continue
        want = f"{truth.final_status} (v{truth.final_version})"
        final_event = truth.final_event_id
        attempts = idx.attempt_ids(idx.by_event.get(final_event, ())) if final_event else ()
        if st is None:
            findings.append(Finding("stale", obj, "object missing after settling", expected=want,
                                    actual=None, attempts=attempts))
        else:
            got = st.status if st.version is None else f"{st.status} (v{st.version})"
            findings.append(Finding("stale", obj, f"final state is {got}, the provider's is {want}",
                                    expected=want, actual=got, attempts=attempts))
    return _result("stale", findings, {"objects": len(expectations.truth)})


def check_counter(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, money moved per money-like key equals its event's amount.

    A row's own `amount` is used when present, else the expected amount. Per key:
    applied must equal the expected amount (0 for keys never validly sent); a key
    never acked and never applied is an advisory. Stats carry both totals.
    """
    if not observations:
        return _no_observation("counter")
    idx = _index(history, expectations, observations, index)
    settled = idx.settled
    assert settled is not None
    applied: dict[str, int] = {}
    unpriced = 0
    for effect in settled.effects:
        key = effect.business_key
        if not expectations.is_money(key):
            continue
        amount = effect.amount if effect.amount is not None else expectations.money.get(key)
        if amount is None:
            unpriced += 1
            amount = 0
        applied[key] = applied.get(key, 0) + amount
    findings = []
    expected_total = 0
    keys = dict.fromkeys(k for k in expectations.expected if expectations.is_money(k))
    keys.update(dict.fromkeys(applied))
    for key in keys:
        if key in expectations.expected:
            want = expectations.money.get(key)
            if want is None:
                unpriced += 1
                continue
        else:
            want = 0
        expected_total += want
        got = applied.get(key, 0)
        if got == want:
            continue
        positions = idx.by_key.get(key, [])
        if got == 0 and not idx.acked(positions):
            findings.append(Finding("counter", key, f"{want} never moved: never acknowledged, still being retried",
                                    expected=want, actual=0, attempts=idx.attempt_ids(positions), severity=ADVISORY))
        else:
            findings.append(Finding("counter", key, f"moved {got} instead of {want}",
                                    expected=want, actual=got, attempts=idx.attempt_ids(positions)))
    stats = {"expected_total": expected_total, "applied_total": sum(applied.values()),
             "money_keys": len(keys), "unpriced": unpriced}
    return _result("counter", findings, stats,
                   unknown=f"{unpriced} money effect(s) without a known amount" if unpriced else None)


def check_duplicate_acked(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A redelivery of an already-acked event must be acked too (2xx, not 409).

    Redelivery: a valid attempt sent after another copy of its event was acked; if it
    got an answer that is not a success (409, any 4xx or 5xx), the provider keeps
    retrying it for days: a finding. A copy that overlapped the acked one in time and
    was refused (e.g. 409 "in progress") is an advisory.
    """
    idx = _index(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if not a.valid or a.outcome not in _ANSWERED_NON_SUCCESS:
            continue
        window = idx.ack_window(a.event_id)
        if _after_ack(a, window):
            groups.setdefault((a.event_id, "after"), []).append(pos)
        elif _overlaps_ack(a, window):
            groups.setdefault((a.event_id, "overlap"), []).append(pos)
    findings = _grouped("duplicate_acked", groups, history, idx, {
        "after": (FINDING, "2xx", "{n} redelivery(ies) of an acknowledged event got {statuses}; "
                           "the provider retries them for days"),
        "overlap": (ADVISORY, "2xx", "{n} concurrent copy(ies) refused with {statuses} while another was "
                              "processed; the provider will retry them"),
    })
    return _result("duplicate_acked", findings, {"acked_events": len(idx.acked_events)})


def check_retry_storm(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """No event takes more attempts (all deliveries and retries) than allowed."""
    limit = expectations.max_attempts_per_event
    if limit is None:
        return _result("retry_storm", [], {"applicability": "not applicable"})
    idx = _index(history, expectations, observations, index)
    findings = []
    most = 0
    for event_id, positions in idx.by_event.items():
        n = len(positions)
        if n > most:
            most = n
        if n > limit:
            findings.append(Finding("retry_storm", idx.label(history[positions[0]]),
                                    f"event {event_id} took {len(positions)} attempts, more than {limit}",
                                    expected=limit, actual=len(positions), attempts=idx.attempt_ids(positions)))
    return _result("retry_storm", findings, {"max_attempts_per_event": limit, "most_attempts": most})


def check_valid_not_rejected(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A valid delivery must not get a 4xx (e.g. a receiver verifying re-serialized JSON).

    429 is an advisory (throttling). Copies sent after, or overlapping, an acked copy
    of the same event are left to ``duplicate_acked``.
    """
    idx = _index(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if not a.valid or a.status is None or not 400 <= a.status < 500:
            continue
        window = idx.ack_window(a.event_id)
        if _after_ack(a, window) or _overlaps_ack(a, window):
            continue
        groups.setdefault((a.event_id, "throttled" if a.status == 429 else "rejected"), []).append(pos)
    findings = _grouped("valid_not_rejected", groups, history, idx, {
        "rejected": (FINDING, "2xx", "{n} valid delivery(ies) rejected with {statuses}"),
        "throttled": (ADVISORY, "2xx", "{n} valid delivery(ies) throttled with {statuses}"),
    })
    return _result("valid_not_rejected", findings, {"events": len(groups)})


def check_no_server_error(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A valid delivery with no injected fault must not get a 5xx.

    A 5xx on an attempt carrying an injected fault tag (`injected_fault`: any tag but
    the benign delivery-shaping ones, e.g. ``oversize`` or a chaos tag) is an advisory,
    as is a 5xx to an invalid delivery (it should have been a 4xx). Duplicates,
    bursts, reordering and re-serialised bodies excuse nothing.
    """
    idx = _index(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if a.status is None or a.status < 500:
            continue
        category = "invalid" if not a.valid else ("faulted" if a.faults and injected_fault(a.faults) else "plain")
        groups.setdefault((a.event_id, category), []).append(pos)
    findings = _grouped("no_server_error", groups, history, idx, {
        "plain": (FINDING, "2xx", "{n} valid delivery(ies) without injected fault got {statuses}"),
        "faulted": (ADVISORY, "2xx", "{n} valid delivery(ies) with an injected fault got {statuses}"),
        "invalid": (ADVISORY, "4xx", "{n} invalid delivery(ies) got {statuses}; a 4xx is expected"),
    })
    return _result("no_server_error", findings, {"server_errors": sum(len(p) for p in groups.values())})


def check_ack_latency(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """p50/p95/p99 of acked attempts' latency (ms); p99 must stay under the sender timeout.

    p99 above the profile's sender timeout is a finding; above half of it, an advisory.
    The finding lists up to `MAX_LISTED_ATTEMPTS` acked attempts above the threshold.
    """
    timeout_ms = expectations.sender_timeout_s * 1000.0
    acked = Outcome.ACKED
    latencies = [a.latency_ms for a in history if a.outcome is acked]
    if not latencies:
        return _result("ack_latency", [], {"acked": 0, "applicability": "not applicable",
                                           "sender_timeout_ms": timeout_ms})
    latencies.sort()
    p50, p95, p99 = (_percentile(latencies, p) for p in (50, 95, 99))
    stats: dict[str, object] = {"acked": len(latencies), "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
                                "max_ms": latencies[-1], "sender_timeout_ms": timeout_ms}
    findings = []
    if p99 > timeout_ms / 2:
        threshold = timeout_ms if p99 > timeout_ms else timeout_ms / 2
        slow = [pos for pos, a in enumerate(history) if a.outcome is acked and a.latency_ms > threshold]
        ids = tuple(_history_id(history[p], p) for p in slow[:MAX_LISTED_ATTEMPTS])
        if p99 > timeout_ms:
            findings.append(Finding("ack_latency", ALL_KEYS,
                                    f"ack p99 {p99:.0f} ms exceeds the sender timeout {timeout_ms:.0f} ms",
                                    expected=f"<= {timeout_ms:.0f} ms", actual=f"{p99:.0f} ms", attempts=ids))
        else:
            findings.append(Finding("ack_latency", ALL_KEYS,
                                    f"ack p99 {p99:.0f} ms is over half the sender timeout {timeout_ms:.0f} ms",
                                    expected=f"<= {timeout_ms / 2:.0f} ms", actual=f"{p99:.0f} ms",
                                    attempts=ids, severity=ADVISORY))
        stats["slow_acked"] = len(slow)
    return _result("ack_latency", findings, stats)


def check_downstream_idempotency(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Sink calls: one Idempotency-Key per business key, distinct keys for distinct keys.

    Needs the sink observer (effects carrying `idempotency_key`); when none was seen
    the verdict is valid with the stat ``applicability: not applicable``. A sink call
    without a key, next to calls with one, counts as a distinct key (``None``).
    """
    # Per business key, the first Idempotency-Key seen, and per Idempotency-Key the first
    # business key; the (rare) keys seen with a second distinct value get an ordered set
    # of all their values. Nothing is allocated per effect.
    idem_of_key: dict[str, str | None] = {}
    idems_of_key: dict[str, dict[str | None, None]] = {}
    key_of_idem: dict[str, str] = {}
    keys_of_idem: dict[str, dict[str, None]] = {}
    for obs in observations:
        for effect in obs.effects:
            key, idem = effect.business_key, effect.idempotency_key
            first_idem = idem_of_key.setdefault(key, idem)
            if idem != first_idem:
                idems_of_key.setdefault(key, {first_idem: None})[idem] = None
            if idem is None:
                continue
            first_key = key_of_idem.setdefault(idem, key)
            if key != first_key:
                keys_of_idem.setdefault(idem, {first_key: None})[key] = None
    if not key_of_idem:
        return _result("downstream_idempotency", [], {"applicability": "not applicable"})
    idx = _index(history, expectations, observations, index)
    findings = []
    for key in idem_of_key if idems_of_key else ():  # first-seen order
        idems = idems_of_key.get(key)
        if idems is not None:
            findings.append(Finding("downstream_idempotency", key,
                                    f"{len(idems)} different Idempotency-Keys for one business key",
                                    expected=1, actual=tuple(idems), attempts=idx.attempt_ids(idx.by_key.get(key, ()))))
    for idem in key_of_idem if keys_of_idem else ():  # first-seen order
        keys = keys_of_idem.get(idem)
        if keys is not None:
            first = next(iter(keys))
            findings.append(Finding("downstream_idempotency", first,
                                    f"Idempotency-Key {idem!r} shared by {len(keys)} business keys "
                                    f"({', '.join(keys)}): the sink drops all but the first",
                                    expected="distinct", actual=idem,
                                    attempts=idx.attempt_ids(sorted(p for k in keys for p in idx.by_key.get(k, ())))))
    return _result("downstream_idempotency", findings,
                   {"business_keys": len(idem_of_key), "idempotency_keys": len(key_of_idem)})


Check = Callable[..., CheckResult]

#: Every check by id, in report order.
ALL_CHECKS: dict[str, Check] = {
    "duplicated": check_duplicated,
    "lost": check_lost,
    "unexpected": check_unexpected,
    "recovered": check_recovered,
    "regressed": check_regressed,
    "stale": check_stale,
    "counter": check_counter,
    "duplicate_acked": check_duplicate_acked,
    "retry_storm": check_retry_storm,
    "valid_not_rejected": check_valid_not_rejected,
    "no_server_error": check_no_server_error,
    "ack_latency": check_ack_latency,
    "downstream_idempotency": check_downstream_idempotency,
}


def _accepts_index(check: Check) -> bool:
    try:
        params = inspect.signature(check).parameters
    except (TypeError, ValueError):
        return False
    return "index" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def check_safe(
    check_id: str, check: Check, history: Sequence[Attempt], expectations: Expectations,
    observations: Sequence[Observation], *, index: CheckIndex | None = None,
) -> CheckResult:
    """Run one check; an exception becomes an ``unknown`` result carrying the error.

    The shared `index` is passed only to checks that take an ``index`` keyword, so a
    plain three-argument check can be registered in `ALL_CHECKS` too.
    """
    try:
        if index is None or not _accepts_index(check):
            return check(history, expectations, observations)
        return check(history, expectations, observations, index=index)
    except Exception as exc:  # noqa: BLE001 - Jepsen's check-safe: never crash the run
        error = f"{type(exc).__name__}: {exc}"
        return CheckResult(check_id, Verdict.UNKNOWN, (), {"error": error}, f"check crashed: {error}")


def run_checks(
    ids: Iterable[str], history: Sequence[Attempt], expectations: Expectations,
    observations: Sequence[Observation],
) -> list[CheckResult]:
    """Run the checks named by `ids` (keys of `ALL_CHECKS`), each guarded by `check_safe`.

    The shared index is built once; if building it fails, every check runs alone.
    Raises ValueError for an id that names no check (a programming error).
    """
    wanted = list(ids)
    missing = [i for i in wanted if i not in ALL_CHECKS]
    if missing:
        raise ValueError(f"no such check(s): {', '.join(missing)}; known: {', '.join(ALL_CHECKS)}")
    try:
        index: CheckIndex | None = build_index(history, expectations, observations)
    except Exception:  # noqa: BLE001 - each check then reports its own error
        index = None
    return [check_safe(i, ALL_CHECKS[i], history, expectations, observations, index=index) for i in wanted]


__all__: Sequence[str] = [
    "ADVISORY",
    "ALL_CHECKS",
    "ALL_KEYS",
    "BENIGN_FAULT_PREFIXES",
    "BENIGN_FAULT_TAGS",
    "CheckIndex",
    "CheckResult",
    "FINDING",
    "Finding",
    "Verdict",
    "build_index",
    "check_ack_latency",
    "check_counter",
    "check_downstream_idempotency",
    "check_duplicate_acked",
    "check_duplicated",
    "check_lost",
    "check_no_server_error",
    "check_recovered",
    "check_regressed",
    "check_retry_storm",
    "check_safe",
    "check_stale",
    "check_unexpected",
    "check_valid_not_rejected",
    "compose",
    "injected_fault",
    "run_checks",
]
