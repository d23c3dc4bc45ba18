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
over the history inside a loop over the history. Two exceptions, both in C and small:
``ack_latency`` sorts the acked latencies (exact quantiles, O(n log n)), and
``regressed`` maps a status seen without a version by bisection (O(log v) per state,
v = versions of that object).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
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
    """Indexes over one run, built in one pass and shared by the checks.

    Attributes:
        ids: history index of each position (``Attempt.index``, or the position
            when the attempt was never recorded).
        event_key: event id → business key (from the attempts, then the expectations).
        by_key / by_event: business key / event id → positions, in history order.
        ack_window: event id → (earliest send, earliest answer) among its valid acked
            attempts, unix seconds.
        settled: the last observation, or None when nothing was observed.
        settled_counts: effect rows per key in `settled`.
        peak: key → (highest count in any observation, position of that observation).
        has_states: True when any observation reported any state.
    """

    ids: list[int]
    event_key: dict[str, str]
    by_key: dict[str, list[int]]
    by_event: dict[str, list[int]]
    ack_window: dict[str, tuple[float, float]]
    settled: Observation | None
    settled_counts: dict[str, int]
    peak: dict[str, tuple[int, int]]
    has_states: bool

    def attempt_ids(self, positions: Iterable[int]) -> tuple[int, ...]:
        ids = self.ids
        return tuple(ids[p] for p in positions)

    def label(self, a: Attempt) -> str:
        """The key a per-attempt finding is filed under: business key, object or event."""
        if a.business_key is not None:
            return a.business_key
        return self.event_key.get(a.event_id) or a.object_id or a.event_id


def _history_id(a: Attempt, pos: int) -> int:
    """The history index of `a` at position `pos` (its recorded index, else `pos`)."""
    return a.index if a.index >= 0 else pos


def build_index(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation]
) -> CheckIndex:
    """Build the shared `CheckIndex`: one pass over the history and the observations."""
    event_key: dict[str, str] = {}
    for bkey, exp in expectations.expected.items():
        for event_id in exp.event_ids or (exp.event_id,):
            event_key.setdefault(event_id, bkey)
    for a in history:
        if a.business_key is not None:
            event_key.setdefault(a.event_id, a.business_key)

    ids: list[int] = []
    by_key: dict[str, list[int]] = {}
    by_event: dict[str, list[int]] = {}
    ack_window: dict[str, tuple[float, float]] = {}
    ok = Completion.OK
    for pos, a in enumerate(history):
        ids.append(_history_id(a, pos))
        event_id = a.event_id
        key = a.business_key if a.business_key is not None else event_key.get(event_id)
        if key is not None:
            by_key.setdefault(key, []).append(pos)
        by_event.setdefault(event_id, []).append(pos)
        if a.valid and a.completion is ok:
            window = ack_window.get(event_id)
            if window is None:
                ack_window[event_id] = (a.sent_at, a.answered_at)
            else:
                ack_window[event_id] = (min(window[0], a.sent_at), min(window[1], a.answered_at))

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
    return CheckIndex(ids, event_key, by_key, by_event, ack_window, settled,
                      counts if settled is not None else {}, peak, has_states)


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


def _acked(history: Sequence[Attempt], positions: Sequence[int]) -> list[int]:
    """Positions among `positions` of valid attempts that completed ok."""
    return [p for p in positions if history[p].valid and history[p].completion is Completion.OK]


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
        acked = _acked(history, positions)
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
    for pos, a in enumerate(history):
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
    for key in idx.peak:
        if key not in expectations.expected:
            continue
        positions = idx.by_key.get(key, [])
        has_ok = False
        unknown = failed = 0
        for p in positions:
            a = history[p]
            if not a.valid:
                continue
            if a.completion is Completion.OK:
                has_ok = True
            elif a.completion is Completion.UNKNOWN:
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
        want = f"{truth.final_status} (v{truth.final_version})"
        final_event = truth.final_event_id
        attempts = idx.attempt_ids(idx.by_event.get(final_event, ())) if final_event else ()
        if st is None:
            findings.append(Finding("stale", obj, "object missing after settling", expected=want,
                                    actual=None, attempts=attempts))
        elif st.status != truth.final_status or (st.version is not None and st.version != truth.final_version):
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
        if got == 0 and not _acked(history, positions):
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
    for pos, a in enumerate(history):
        if not a.valid or a.outcome not in _ANSWERED_NON_SUCCESS:
            continue
        window = idx.ack_window.get(a.event_id)
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
    return _result("duplicate_acked", findings, {"acked_events": len(idx.ack_window)})


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
        most = max(most, len(positions))
        if len(positions) > limit:
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
    for pos, a in enumerate(history):
        if not a.valid or a.status is None or not 400 <= a.status < 500:
            continue
        window = idx.ack_window.get(a.event_id)
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
    for pos, a in enumerate(history):
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
    acked = [(a.latency_ms, pos) for pos, a in enumerate(history) if a.outcome is Outcome.ACKED]
    if not acked:
        return _result("ack_latency", [], {"acked": 0, "applicability": "not applicable",
                                           "sender_timeout_ms": timeout_ms})
    latencies = sorted(lat for lat, _ in acked)
    p50, p95, p99 = (_percentile(latencies, p) for p in (50, 95, 99))
    stats: dict[str, object] = {"acked": len(latencies), "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
                                "max_ms": latencies[-1], "sender_timeout_ms": timeout_ms}
    findings = []
    if p99 > timeout_ms / 2:
        threshold = timeout_ms if p99 > timeout_ms else timeout_ms / 2
        slow = [pos for lat, pos in acked if lat > threshold]
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
    per_key: dict[str, dict[str | None, None]] = {}
    per_idem: dict[str, dict[str, None]] = {}
    seen = False
    for obs in observations:
        for effect in obs.effects:
            idem = effect.idempotency_key
            per_key.setdefault(effect.business_key, {})[idem] = None
            if idem is not None:
                seen = True
                per_idem.setdefault(idem, {})[effect.business_key] = None
    if not seen:
        return _result("downstream_idempotency", [], {"applicability": "not applicable"})
    idx = _index(history, expectations, observations, index)
    findings = []
    for key, idems in per_key.items():
        if len(idems) > 1:
            findings.append(Finding("downstream_idempotency", key,
                                    f"{len(idems)} different Idempotency-Keys for one business key",
                                    expected=1, actual=tuple(idems), attempts=idx.attempt_ids(idx.by_key.get(key, ()))))
    for idem, keys in per_idem.items():
        if len(keys) > 1:
            first = next(iter(keys))
            findings.append(Finding("downstream_idempotency", first,
                                    f"Idempotency-Key {idem!r} shared by {len(keys)} business keys "
                                    f"({', '.join(keys)}): the sink drops all but the first",
                                    expected="distinct", actual=idem,
                                    attempts=idx.attempt_ids(sorted(p for k in keys for p in idx.by_key.get(k, ())))))
    return _result("downstream_idempotency", findings,
                   {"business_keys": len(per_key), "idempotency_keys": len(per_idem)})


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
