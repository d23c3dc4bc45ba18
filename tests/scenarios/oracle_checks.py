"""The checks as they were before they read the index's columns by key code: a Python
step per key and per effect. Kept as the oracle the vectorised checks
(`scenarios.effect_checks`, `scenarios.answer_checks`) must agree with: the same
verdicts, stats and findings, text, order and attempts included (`test_check_columns.py`)."""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

from typing import Mapping, Sequence

from hookproof.scenarios.check_index import CheckIndex, grouped_findings, index_for
from hookproof.scenarios.findings import ADVISORY, FINDING, CheckResult, Finding, Verdict, nothing_observed, result_of
from hookproof.scenarios.observations import Expectations, ObjectTruth, Observation
from hookproof.scenarios.key_loops import OtherTypes, gone_words, moved_words, replay_note
from hookproof.scenarios.state_words import regressed_words, stale_words
from hookproof.scenarios.effect_checks import UNMOVED_COUNTER
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome

_UNREAD: ObjectTruth | None = ObjectTruth("", ((0, ""),))  # an object whose truth was not read yet

#: Fault tags of invalid deliveries that must have no effect but may be acknowledged:
#: a genuine event of the other mode (test/live) or of another account.
NO_EFFECT_TAGS: frozenset[str] = frozenset({"livemode-mismatch", "foreign-account"})


def _seen_in(read: int) -> str:
    """`key_loops.seen_in`, spelled out again: which read first showed the key, in words."""
    n = read + 1
    word = {1: "first", 2: "second", 3: "third"}.get(n)
    if word is None:
        word = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return f"seen in the {word} read after delivering"


def check_duplicated(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: no observation ever shows a business key applied more than once."""
    if not observations:
        return nothing_observed("duplicated")
    idx = index_for(history, expectations, observations, index)
    findings = []
    others = OtherTypes(idx.history)  # the note naming another type's events of the same object
    for key, (n, oi) in idx.peak.items():
        if n > 1:
            positions = idx.by_key.get(key, ())
            attempts = idx.attempt_ids(positions)
            findings.append(Finding(
                "duplicated", key,
                f"applied {n} times instead of once; {len(positions)} delivery attempt(s) carried it"
                + _distinct_events_note(idx.history, positions)
                + replay_note(idx, positions)  # a manual replay named as one, in the provider's words
                + others.note(positions, n),
                expected=1, actual=n, attempts=attempts))
    return result_of("duplicated", findings, {"keys_observed": len(idx.peak), "observations": len(observations)})


def _distinct_events_note(history: Sequence[Attempt], positions: Sequence[int]) -> str:
    """``", of 2 distinct events (evt_a, evt_b): ..."`` when the attempts at `positions`
    carried more than one event id (the key maps several events, not one redelivered), else ""."""
    ids = list(dict.fromkeys(history[p].event_id for p in positions if history[p].event_id))
    if len(ids) < 2:
        return ""
    shown = ", ".join(ids[:4]) + (", ..." if len(ids) > 4 else "")
    return f", of {len(ids)} distinct events ({shown}) that share this business key, so it is owed once for them all"


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
        return nothing_observed("lost")
    idx = index_for(history, expectations, observations, index)
    findings = []
    never_acked = 0
    for key in expectations.expected:
        if idx.settled_counts.get(key, 0):
            continue
        positions = idx.by_key.get(key, [])
        acked = idx.acked(positions)
        gone = gone_words(idx, positions, idx.peak.get(key))  # a read showed it applied, the last did not
        if acked:
            findings.append(Finding("lost", key, f"acknowledged {len(acked)} time(s) "
                                    + (f"and applied, then gone by the end of settling: {gone}" if gone
                                       else "but not applied by the end of settling"),
                                    expected=1, actual=0, attempts=idx.attempt_ids(positions)))
        else:
            never_acked += 1
            provider = expectations.provider
            if provider is None:
                after = "the provider would retry it on its schedule"
            else:
                valid = [idx.history[p].attempt for p in positions if idx.history[p].valid]
                after = provider.retrying if max(valid, default=0) < provider.attempts else (
                    provider.gives_up if provider.attempts == 1
                    else f"all {provider.attempts} of {provider.title}'s attempts failed: {provider.gives_up}")
            findings.append(Finding("lost", key, (
                f"never acknowledged, applied, then gone by the end of settling: every valid delivery went unanswered "
                f"or was refused ({idx.answer_summary(positions)}); {gone}") if gone else (
                "never applied and never acknowledged: every valid delivery "
                f"went unanswered or was refused ({idx.answer_summary(positions)}); " + after),
                expected=1, actual=0, attempts=idx.attempt_ids(positions)))
    stats = {"expected_keys": len(expectations.expected), "lost": len(findings) - never_acked,
             "never_acknowledged": never_acked}
    if not expectations.expected and idx.acked_events:
        return CheckResult("lost", Verdict.VALID, (), {**stats, "applicability": "not applicable"},
                           f"not applicable: {len(idx.acked_events)} acknowledged event(s) map to no business key, "
                           "so no effect is owed")
    return result_of("lost", findings, stats)


def check_unexpected(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: no effect for a key never validly sent; every invalid delivery refused.

    An invalid delivery acked with a 2xx, or not refused with a 4xx (no answer, a 5xx, a
    refused connection), is a finding: the contract is a 4xx, and only a 4xx shows the
    receiver checked and refused it. Except for a mode or account mismatch
    (`NO_EFFECT_TAGS`): the signature is genuine, so a 2xx that applies nothing is as
    correct as a 4xx (Stripe's docs advise acknowledging and ignoring such events); only
    its effect is a finding.
    """
    idx = index_for(history, expectations, observations, index)
    findings = []
    for key, (n, oi) in idx.peak.items():
        if key in expectations.forbidden:
            invalidating = {"forged", "missing-signature", "stale-timestamp", "wrong-secret", "livemode-mismatch",
                            "foreign-account"}
            why = {frozenset(invalidating.intersection(history[p].faults)) for p in idx.by_key.get(key, ())
                   if not history[p].valid}
            future = [history[p] for p in idx.by_key.get(key, ()) if not history[p].valid]
            if future and all("future-timestamp" in a.faults for a in future):
                message = ("applied although every delivery of it was signed with a future timestamp the "
                           "profile's official verifier rejects")
            elif why == {frozenset({"livemode-mismatch"})}:
                message = ("applied an event of the other mode than the endpoint's (livemode: a live-mode event on "
                           "a test-mode endpoint, or a test-mode event on a live-mode one)")
            elif why == {frozenset({"foreign-account"})}:
                message = "applied an event of another account than the endpoint's (account: not target.account)"
            else:
                message = "applied although every delivery of it was invalid (forged, stale or foreign)"
        elif key not in expectations.expected:
            message = ("applied, but no validly sent event carries this key (an effect for an event that owes "
                       "none, or a key of the receiver's own shape that hookproof's key templates do not produce: "
                       "map each event type to the receiver's key under [business_keys], and set "
                       "builtin_keys = false to judge by those alone)")
        else:
            continue
        findings.append(Finding("unexpected", key, f"{message} ({_seen_in(oi)})", expected=0, actual=n,
                                attempts=idx.attempt_ids(idx.by_key.get(key, ()))))
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if a.valid:
            continue
        if a.outcome is Outcome.ACKED:
            if not NO_EFFECT_TAGS.intersection(a.faults):
                groups.setdefault((a.event_id, "invalid-acked"), []).append(pos)
        elif a.outcome is not Outcome.DROPPED and not (a.status is not None and 400 <= a.status < 500):
            groups.setdefault((a.event_id, "invalid-unrefused"), []).append(pos)
    findings += grouped_findings("unexpected", groups, history, idx, {
        "invalid-acked": (FINDING, "4xx", "{events} {types} event(s) accepted {n} time(s) with {statuses} when "
                                   "invalid; the provider's official verifier rejects them"),
        "invalid-unrefused": (FINDING, "4xx", "{events} {types} event(s) not refused with a 4xx when invalid "
                                       "({statuses}, {n} time(s)); a receiver that is unreachable, crashes or hangs "
                                       "proves nothing"),
    })
    stats = {"keys_observed": len(idx.peak), "invalid_acked_events": len(groups)}
    return result_of("unexpected", findings, stats, unknown=None if observations else "nothing was observed")


def check_recovered(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Count applied keys whose valid attempts were indeterminate (fine, as stats).

    A key applied although every valid attempt of it *failed* (4xx, or never reached
    the receiver) is a finding: a rejection must be a no-op.
    """
    if not observations:
        return nothing_observed("recovered")
    idx = index_for(history, expectations, observations, index)
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
    return result_of("recovered", findings, stats)


def check_regressed(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: per object, over observations in time order, the version never goes down.

    A state without a version is mapped to one through the provider's truth
    (`ObjectTruth.version_for`, the reading most favourable to monotonicity); a status
    the provider never emitted is counted in the stats and skipped. Not applicable
    (valid, `NO_STATE_QUERY`) when the observer reads no state by design. Unknown, with the
    reason, when no object of the observed kinds was validly sent or no state of one
    was ever observed: a check over zero objects proves nothing.
    """
    if not observations:
        return nothing_observed("regressed")
    idx = index_for(history, expectations, observations, index)
    if (not_applicable := _no_state_query("regressed", idx)) is not None:
        return not_applicable
    if not expectations.truth_of_kinds(idx.state_kinds):
        return result_of("regressed", [], {"objects": 0}, unknown=_no_objects(idx))
    high: dict[str, tuple[int, str]] = {}
    flagged: set[str] = set()
    findings = []
    unmapped = 0
    truths: dict[str, ObjectTruth | None] = {}  # each object's truth, read once (the pass builds it on each lookup)
    for oi in sorted(range(len(observations)), key=lambda i: observations[i].at):
        for st in observations[oi].states:
            obj = st.object_id
            prev = high.get(obj)
            version = st.version
            truth = truths.get(obj, _UNREAD)
            if truth is _UNREAD and (version is None or (prev is not None and version < prev[0])):
                truth = truths[obj] = expectations.truth.get(obj)
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
                if truth is not None and truth is not _UNREAD:
                    for v in (version, prev[0]):
                        event_id = truth.event_id_at(v)
                        positions += idx.by_event.get(event_id, []) if event_id else []
                message, expected, actual = regressed_words(
                    prev, st, version, truth if truth is not _UNREAD else None, idx, expectations)
                findings.append(Finding("regressed", obj, message, expected=expected, actual=actual,
                                        attempts=idx.attempt_ids(sorted(positions))))
    stats = {"objects_observed": len(high), "unmapped_states": unmapped}
    if not high and not findings:
        return result_of("regressed", [], stats, unknown="no state of a validly sent object was ever observed")
    return result_of("regressed", findings, stats)


#: `CheckResult.detail` of a state check when the observer reads no state at all by design.
NO_STATE_QUERY = "not applicable: no state query configured"


def _no_state_query(check_id: str, idx: CheckIndex) -> CheckResult | None:
    """The not-applicable result of state check `check_id` when the observer declares it
    reads no state (an sql observer with an effects query only: ``state_kinds`` empty),
    else None. A configured state query that returns nothing is not this: its objects are
    missing (a finding)."""
    if idx.state_kinds is None or idx.state_kinds or idx.has_states:
        return None
    return CheckResult(check_id, Verdict.VALID, (), {"applicability": "not applicable", "objects": 0},
                       NO_STATE_QUERY)


def _no_objects(idx: CheckIndex) -> str:
    """Why a state check has nothing to compare: no object of the observed kinds was sent."""
    kinds = ", ".join(sorted(idx.state_kinds)) if idx.state_kinds is not None else "subscription"
    return f"no object whose state the observer reads ({kinds}) was validly sent: nothing to compare"


def check_stale(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, each object's state equals the truth's final state.

    A status must equal the final status; a version, when exposed, the final version.
    Only objects of the kinds the observer reads (`Observation.state_kinds`; else
    subscriptions) are compared. Not applicable (valid, `NO_STATE_QUERY`) when the observer
    reads no state by design (no state query configured). Unknown, with the reason, when no such object was
    validly sent, or when the observer reported no state at all without declaring a
    state query (it may not expose states); with a state query configured, no state at
    all is every object missing.
    """
    if not observations:
        return nothing_observed("stale")
    idx = index_for(history, expectations, observations, index)
    if (not_applicable := _no_state_query("stale", idx)) is not None:
        return not_applicable
    wanted = expectations.truth_of_kinds(idx.state_kinds)
    if not wanted:
        return result_of("stale", [], {"objects": 0}, unknown=_no_objects(idx))
    if not idx.has_states and idx.state_kinds is None:
        return result_of("stale", [], {"objects": len(wanted)},
                         unknown="the observer reported no state at all")
    settled = idx.settled
    assert settled is not None
    findings = []
    for obj, truth in wanted.items():
        st = settled.state_of(obj)
        if st is not None and st.status == truth.final_status and st.version in (None, truth.final_version):
            continue
        final_event = truth.final_event_id
        attempts = idx.attempt_ids(idx.by_event.get(final_event, ())) if final_event else ()
        message, expected, actual = stale_words(st, truth, idx, expectations)
        findings.append(Finding("stale", obj, message, expected=expected, actual=actual, attempts=attempts))
    return result_of("stale", findings, {"objects": len(wanted)})


def _stripe_refunded_total(key: str) -> int | None:
    """The cumulative amount a built-in Stripe key ``refund:ch_…:<amount_refunded>`` carries."""
    parts = key.split(":")
    if len(parts) == 3 and parts[1].startswith(("ch_", "py_")) and parts[2].isdigit():
        return int(parts[2])
    return None


def check_counter(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, money moved per money-like key equals its event's amount.

    A row's own `amount` is used when present, else the expected amount. Per key:
    applied must equal the expected amount (0 for keys never validly sent); a key
    never acked and never applied is an advisory. Stats carry both totals.

    With a counter query (`Observation.counters`) and mapped counters
    (`Expectations.counters`), each counter (a customer's balance…) must equal the sum
    the provider's truth implies; a counter the receiver shows that nothing moved must
    be 0.
    """
    if not observations:
        return nothing_observed("counter")
    idx = index_for(history, expectations, observations, index)
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
        if got == want or (got and got == _stripe_refunded_total(key)):
            continue
        positions = idx.by_key.get(key, [])
        if got == 0 and not idx.acked(positions):
            findings.append(Finding("counter", key, f"{want} never moved: never acknowledged, still being retried",
                                    expected=want, actual=0, attempts=idx.attempt_ids(positions), severity=ADVISORY))
        else:
            times = max((sum(1 for e in o.effects if e.business_key == key) for o in observations), default=0)
            findings.append(Finding("counter", key, moved_words(key, got, want, times),
                                    expected=want, actual=got, attempts=idx.attempt_ids(positions)))
    stats: dict[str, object] = {"expected_total": expected_total, "applied_total": sum(applied.values()),
                                "money_keys": len(keys), "unpriced": unpriced}
    if expectations.counters is not None and settled.counters is not None:
        findings += _counter_findings(expectations.counters, settled.counters, idx,
                                                  expectations.counter_events)
        stats["counters"] = len(set(expectations.counters) | set(settled.counters))
        # the counters' own totals: expected_total and applied_total are the money keys' alone
        stats["counters_expected_total"] = sum(expectations.counters.values())
        stats["counters_applied_total"] = sum(settled.counters.values())
    return result_of("counter", findings, stats,
                     unknown=f"{unpriced} money effect(s) without a known amount" if unpriced else None)


def _counter_findings(want: Mapping[str, int], got: Mapping[str, int], idx: CheckIndex,
                      moved: Mapping[str, tuple[str, ...]] | None = None) -> list[Finding]:
    """One finding per counter whose observed amount differs from the truth's sum, with the
    attempts of the events that move it when its key is not a business key's."""
    moved = moved or {}
    findings = []
    for key in dict.fromkeys([*want, *got]):
        expected, actual = want.get(key, 0), got.get(key)
        if actual == expected or (actual is None and expected == 0):
            continue
        shown = "missing" if actual is None else str(actual)
        unmoved = UNMOVED_COUNTER if key not in want and not moved.get(key) else ""
        findings.append(Finding("counter", key, f"counter is {shown}; the provider's truth implies {expected}{unmoved}",
                                expected=expected, actual=actual, attempts=idx.attempt_ids(
                                    list(idx.by_key.get(key, ())) or sorted(
                                        p for e in moved.get(key, ()) for p in idx.by_event.get(e, ())))))
    return findings


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
        return result_of("downstream_idempotency", [], {"applicability": "not applicable"})
    idx = index_for(history, expectations, observations, index)
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
    return result_of("downstream_idempotency", findings,
                     {"business_keys": len(idem_of_key), "idempotency_keys": len(key_of_idem)})




import math
from hookproof.scenarios.findings import ALL_KEYS, MAX_LISTED_ATTEMPTS
from hookproof.scenarios.history_scan import scan_history


def _percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile `p` (0–100) of ascending `sorted_values`."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def check_retry_storm(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """No event takes more attempts (all deliveries and retries) than allowed."""
    limit = expectations.max_attempts_per_event
    if limit is None:
        return result_of("retry_storm", [], {"applicability": "not applicable"})
    idx = index_for(history, expectations, observations, index)
    findings = []
    most = 0
    for event_id, n in idx.by_event.sizes():
        if n > most:
            most = n
        if n > limit:
            positions = idx.by_event[event_id]
            findings.append(Finding("retry_storm", idx.label(history[positions[0]]),
                                    f"event {event_id} took {len(positions)} attempts, more than {limit}",
                                    expected=limit, actual=len(positions), attempts=idx.attempt_ids(positions)))
    return result_of("retry_storm", findings, {"max_attempts_per_event": limit, "most_attempts": most})


def check_ack_latency(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """p50/p95/p99 of acked attempts' latency (ms); p99 must stay under the sender timeout.

    p99 above the profile's sender timeout is a finding; above half of it, an advisory.
    The finding lists up to `MAX_LISTED_ATTEMPTS` acked attempts above the threshold.
    """
    timeout_ms = expectations.sender_timeout_s * 1000.0
    idx = index_for(history, expectations, observations, index)
    scan = idx.scan
    if scan is None or scan.sender_timeout_s != expectations.sender_timeout_s:  # an index of other expectations
        scan = scan_history(history, sender_timeout_s=expectations.sender_timeout_s)
    latencies = sorted(scan.acked_latencies)
    if not latencies:
        return result_of("ack_latency", [], {"acked": 0, "applicability": "not applicable",
                                             "sender_timeout_ms": timeout_ms})
    p50, p95, p99 = (_percentile(latencies, p) for p in (50, 95, 99))
    stats: dict[str, object] = {"acked": len(latencies), "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
                                "max_ms": latencies[-1], "sender_timeout_ms": timeout_ms}
    findings = []
    if p99 > timeout_ms / 2:
        threshold = timeout_ms if p99 > timeout_ms else timeout_ms / 2
        slow = scan.over_half if threshold < timeout_ms else [
            pos for pos, ms in zip(scan.over_half, scan.over_half_ms) if ms > threshold]
        ids = idx.attempt_ids(slow[:MAX_LISTED_ATTEMPTS])
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
    return result_of("ack_latency", findings, stats)


