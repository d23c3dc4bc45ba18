"""Checks over what the receiver applied: effects, object states, money, sink calls.

Safety checks (``duplicated``, ``unexpected``, ``regressed``) look at every
observation; liveness checks (``lost``, ``stale``, ``counter``) look at the last one,
the *settled* observation taken after the receiver settled. ``recovered`` tells
applied keys whose deliveries were indeterminate from those that were refused, and
``downstream_idempotency`` reads the Idempotency-Keys the receiver sent to the sink.

Each is O(n) in the history plus the observations, through the shared `CheckIndex`;
``regressed`` maps a status seen without a version by bisection (O(log v) per state,
v = versions of that object).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Mapping, Sequence

from hookproof.scenarios import key_table as key_tables
from hookproof.scenarios.check_index import CheckIndex, grouped_findings, index_for
from hookproof.scenarios.effect_columns import idempotency_consistent, monotonic_counts, stale_objects
from hookproof.scenarios.findings import (
    ADVISORY,
    FINDING,
    CheckResult,
    Finding,
    MadeFindings,
    Verdict,
    nothing_observed,
    result_of,
)
from hookproof.scenarios.key_loops import (
    OtherTypes,
    Unowed,
    distinct_events_note,
    duplicated_by_key,
    forbidden_message,
    lost_by_key,
    lost_finding,
    lost_not_applicable,
    money_agrees,
    money_by_key,
    moved_words,
    recovered_by_key,
    replay_note,
    seen_in,
    unexpected_keys_by_key,
)
from hookproof.scenarios.observations import (
    CounterEvents,
    EffectRows,
    Expectations,
    ObjectTruth,
    Observation,
    world_event_id,
)
from hookproof.scenarios.state_words import regressed_words, stale_words
from hookproof.simulator.delivery.history import Attempt, Outcome

_KEY = attrgetter("business_key")
_AMOUNT = attrgetter("amount")
#: The counter finds each key's first row by code (a column per key) once its rows are at
#: least 1 / this of the keys; below, by a sort of its rows (`np.unique`).
_FIRST_BY_CODE = 4
_UNREAD: ObjectTruth | None = ObjectTruth("", ((0, ""),))  # an object whose truth was not read yet

#: Fault tags of invalid deliveries that must have no effect but may be acknowledged:
#: a genuine event of the other mode (test/live) or of another account.
NO_EFFECT_TAGS: frozenset[str] = frozenset({"livemode-mismatch", "foreign-account"})


def check_duplicated(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: no observation ever shows a business key applied more than once."""
    if not observations:
        return nothing_observed("duplicated")
    idx = index_for(history, expectations, observations, index)
    if not idx.columnar:
        return duplicated_by_key(history, expectations, observations, idx)
    table = idx.keys
    others = OtherTypes(idx.history)

    def duplicated(code: int) -> Finding:
        key, n = table.name(code), int(table.peak[code])
        positions = table.positions(code)
        return Finding("duplicated", key,
                       f"applied {n} times instead of once; {len(positions)} delivery attempt(s) carried it"
                       + distinct_events_note(idx.history, positions) + replay_note(idx, positions)
                       + others.note(positions, n),
                       expected=1, actual=n, attempts=idx.attempt_ids(positions))

    # in order of first sight; each finding made when read (`MadeFindings`: a Python step per finding only)
    findings = MadeFindings(table.seen(table.peak > 1), duplicated)
    return result_of("duplicated", findings, {"keys_observed": int((table.peak > 0).sum()),
                                              "observations": len(observations)})


def check_lost(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, every validly sent key shows its effect.

    A key acked but never applied is lost. A key never acked and never applied is a
    finding too: the receiver answered none of its valid deliveries with a success, so
    the provider would still be retrying it (a certification run delivers until acked
    or the schedule is exhausted). Not applicable (valid, `lost_not_applicable`) when
    events were acknowledged and none maps to a business key: none owes an effect.
    """
    if not observations:
        return nothing_observed("lost")
    idx = index_for(history, expectations, observations, index)
    if not idx.columnar:
        return lost_by_key(history, expectations, observations, idx)
    table = idx.keys
    order = table.expected_order
    codes = order[table.settled[order] == 0]  # the expected keys not applied, in order
    never_acked = 0
    for start in range(0, len(codes), MadeFindings.STEP):
        never_acked += sum(not idx.acked(table.positions(code)) for code in codes[start:start + MadeFindings.STEP].tolist())

    def lost(code: int) -> Finding:
        return lost_finding(idx, table.name(code), table.positions(code),  # the table's peak: no lookup by name
                            (int(table.peak[code]), int(table.peak_obs[code])))[0]

    findings = MadeFindings(codes, lost)  # each made when read: no object per lost key held
    stats = {"expected_keys": len(order), "lost": len(findings) - never_acked,
             "never_acknowledged": never_acked}
    if not len(order) and idx.acked_events:
        return lost_not_applicable(len(idx.acked_events), stats)
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
    its effect is a finding. Another account's or the other mode's event whose object the
    receiver fetched and the provider API refused it (`Expectations.checked_foreign`) may also be answered with
    an error: it checked, and cannot tell that 404 from an object not visible yet.
    """
    idx = index_for(history, expectations, observations, index)
    findings = _unexpected_keys(idx) if idx.columnar else unexpected_keys_by_key(expectations, idx)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if a.valid:
            continue
        if a.outcome is Outcome.ACKED:
            if not NO_EFFECT_TAGS.intersection(a.faults):
                groups.setdefault((a.event_id, "invalid-acked"), []).append(pos)
        elif a.outcome is not Outcome.DROPPED and not (a.status is not None and 400 <= a.status < 500):
            if (a.status is not None and NO_EFFECT_TAGS.intersection(a.faults)
                    and a.object_id in expectations.checked_foreign):
                continue  # it fetched the object and was refused it as another account's or mode's (Expectations)
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
    if not idx.columnar:
        return recovered_by_key(history, expectations, observations, idx)
    table = idx.keys
    ok, failed, unknown = table.completion_counts()  # valid attempts per key (invalid ones are not counted)
    applied = table.expected & (table.peak > 0)
    no_ok = applied & (ok == 0)
    findings = []
    for code in table.seen(no_ok & (unknown == 0) & (failed > 0)).tolist():
        positions = table.positions(code)
        findings.append(Finding("recovered", table.name(code),
                                f"applied although all {failed[code]} valid attempt(s) failed "
                                "(4xx or never reached the receiver)",
                                expected=0, actual=int(table.peak[code]), attempts=idx.attempt_ids(positions)))
    stats = {"recovered_keys": int((no_ok & (unknown > 0)).sum()),
             "unknown_attempts_applied": int(unknown[applied].sum())}
    return result_of("recovered", findings, stats)


def check_regressed(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Safety: per object, over observations in time order, the version never goes down.

    A state without a version is mapped to one through the provider's truth
    (`ObjectTruth.version_for`, the reading most favourable to monotonicity), which knows
    the versions whose events were delivered and, when the run says (`Expectations.servable`),
    every version the provider API could have served the receiver: a receiver that fetches
    the object stores the API's current status even on an older event's arrival. A status
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
    states = sum(len(obs.states) for obs in observations)
    servable = expectations.servable or {}
    if states >= key_tables.SMALL and not servable \
            and (counted := monotonic_counts(expectations.truth, observations)) is not None:
        objects_observed, unmapped_states = counted
        stats = {"objects_observed": objects_observed, "unmapped_states": unmapped_states}
        if not objects_observed:
            return result_of("regressed", [], stats, unknown="no state of a validly sent object was ever observed")
        return result_of("regressed", [], stats)
    high: dict[str, tuple[int, str]] = {}
    flagged: set[str] = set()
    findings = []
    unmapped = 0
    truths: dict[str, ObjectTruth | None] = {}  # each object's truth, read once (the pass builds it on each lookup)
    erased = expectations.erased  # objects the receiver may have erased, then made again from a late event
    skipped: set[str] = set()  # of them, those observed: not compared, yet a state was read
    for oi in sorted(range(len(observations)), key=lambda i: observations[i].at):
        for st in observations[oi].states:
            obj = st.object_id
            if erased and obj in erased:
                skipped.add(obj)
                continue
            prev = high.get(obj)
            version = st.version
            truth = truths.get(obj, _UNREAD)
            if truth is _UNREAD and (version is None or (prev is not None and version < prev[0])):
                truth = expectations.truth.get(obj)
                truths[obj] = truth = truth.with_servable(servable.get(obj)) if truth is not None else None
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
    stats = {"objects_observed": len(high) + len(skipped), "unmapped_states": unmapped}
    if not high and not findings and not skipped:
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
    failing = stale_objects(wanted, settled) if len(wanted) >= key_tables.SMALL else None
    erased = expectations.erased
    for obj, truth in wanted.items() if failing is None else ((obj, wanted[obj]) for obj in failing):
        if erased and obj in erased:  # the receiver may have erased it (a Shopify shop's app/uninstalled)
            continue
        st = settled.state_of(obj)
        if st is not None and st.status == truth.final_status and st.version in (None, truth.final_version):
            continue
        final_event = truth.final_event_id
        attempts = idx.attempt_ids(idx.by_event.get(final_event, ())) if final_event else ()
        message, expected, actual = stale_words(st, truth, idx, expectations)
        findings.append(Finding("stale", obj, message, expected=expected, actual=actual, attempts=attempts))
    return result_of("stale", findings, {"objects": len(wanted)})


def check_counter(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Liveness: after settling, money moved per money-like key equals its event's amount.

    A row's own `amount` is used when present, else the expected amount. Per key:
    applied must equal the expected amount (0 for keys never validly sent); a key
    never acked and never applied is an advisory. Stats carry both totals of the money
    keys (``expected_total``, ``applied_total``: 0 and 0 when the run has none).

    With a counter query (`Observation.counters`) and mapped counters
    (`Expectations.counters`), each counter (a customer's balance…) must equal the sum
    the provider's truth implies; a counter the receiver shows that nothing moved must
    be 0. Stats then carry ``counters`` (how many) and their own totals,
    ``counters_expected_total`` and ``counters_applied_total``.
    """
    if not observations:
        return nothing_observed("counter")
    idx = index_for(history, expectations, observations, index)
    settled = idx.settled
    assert settled is not None
    findings: Sequence[Finding]
    findings, stats, unpriced = _money_by_code(idx) if idx.columnar else money_by_key(expectations, idx)
    if expectations.counters is not None and settled.counters is not None:
        findings = [*findings, *_counter_findings(expectations.counters, settled.counters, idx,
                                                  expectations.counter_events)]
        stats["counters"] = len(set(expectations.counters) | set(settled.counters))
        # the counters' own totals: expected_total and applied_total are the money keys' alone
        stats["counters_expected_total"] = sum(expectations.counters.values())
        stats["counters_applied_total"] = sum(settled.counters.values())
    return result_of("counter", findings, stats,
                     unknown=f"{unpriced} money effect(s) without a known amount" if unpriced else None)


def _money_by_code(idx: CheckIndex) -> tuple[Sequence[Finding], dict[str, object], int]:
    """``counter``'s money per key over the index's `KeyTable`, every key at once: its
    findings (in the order `money_by_key` gives), stats and how many amounts were unknown."""
    import numpy as np

    settled = idx.settled
    assert settled is not None
    table = idx.keys
    codes = table.settled_codes if len(table.settled_codes) == len(settled.effects) else \
        np.fromiter(map(table.code, map(_KEY, settled.effects)), np.int64, len(settled.effects))
    rows = np.flatnonzero(table.money_like[codes])  # the settled effect rows of money-like keys
    every = len(rows) == len(codes)
    if every:  # every row (a storm's million): no copy of the codes, no list of rows
        rows = np.zeros(0, np.int64)
    else:
        codes = codes[rows]
    effects = settled.effects
    if isinstance(effects, EffectRows) and not effects.has_amounts:
        amount = table.amount[codes]  # no row's own amount: the expected ones
    else:
        if every:
            rows = np.arange(len(codes))
        own = effects.amounts() if isinstance(effects, EffectRows) else \
            np.array([effects[r].amount for r in rows.tolist()] if len(rows) < len(effects) // 2
                     else list(map(_AMOUNT, effects)), np.float64)  # None: NaN
        if len(own) != len(rows):
            own = own[rows]
        # the row's own amount, else the expected one (in place: a storm's rows are a million)
        amount = own
        del own
        np.copyto(amount, table.amount[codes], where=np.isnan(amount))
    del rows
    unpriced_rows = np.isnan(amount)
    amount[unpriced_rows] = 0
    unpriced = int(unpriced_rows.sum())
    del unpriced_rows
    n = len(table)
    applied = np.bincount(codes, weights=amount, minlength=n)  # exact: sums of integers below 2**53
    applied_total = int(amount.sum())
    del amount  # each column dropped once read: a storm's are megabytes each
    order = table.expected_order
    owed = order[table.money_like[order]]  # the expected money-like keys, in order
    # the applied keys, in order of first row (numpy: no Python int per row of a storm's million)
    if _FIRST_BY_CODE * len(codes) >= n:  # rows of many keys: each key's first row by code, no sort of every row
        row_type = np.int32 if len(codes) < 2**31 else np.int64  # a row's index
        first = np.full(max(n, int(codes.max()) + 1 if len(codes) else 0), len(codes), row_type)
        rows = np.arange(len(codes), dtype=row_type)
        np.minimum.at(first, codes, rows)
        # each key at its first row, in row order: no sort, and no column of keys beside the rows'
        applied_keys = codes[first[codes] == rows].astype(np.int64)
        del rows
    else:  # rows of a few keys: a sort of those rows, no column per key
        seen, first = np.unique(codes, return_index=True)
        applied_keys = seen[np.argsort(first, kind="stable")].astype(np.int64)  # the codes may be int32
        del seen
    del first, codes
    others = applied_keys[~table.expected[applied_keys]]
    del applied_keys
    n_owed, n_others = len(owed), len(others)
    keys = np.concatenate([owed, others])
    del owed, others
    want = table.amount[keys]
    want[n_owed:] = 0
    priced = ~np.isnan(want)
    unpriced += int((~priced).sum())
    keys, want = keys[priced], want[priced]
    expected_total = int(want.sum())
    differ = applied[keys] != want
    keys, want = keys[differ], want[differ]
    del differ
    agree = np.fromiter((money_agrees(table.name(code), int(applied[code]), int(want_n))
                         for code, want_n in zip(keys.tolist(), want.tolist())), dtype=bool, count=len(keys))
    keys, want = keys[~agree], want[~agree]
    del agree

    def counter(at: int) -> Finding:
        code, want_i = int(keys[at]), int(want[at])
        key, got = table.name(code), int(applied[code])
        positions = table.positions(code)
        if got == 0 and not idx.acked(positions):
            return Finding("counter", key, f"{want_i} never moved: never acknowledged, still being retried",
                           expected=want_i, actual=0, attempts=idx.attempt_ids(positions), severity=ADVISORY)
        return Finding("counter", key, moved_words(key, got, want_i, int(table.peak[code])),
                       expected=want_i, actual=got, attempts=idx.attempt_ids(positions))

    # each made when read (`MadeFindings`, by position among the keys that differ): no object per key held
    findings = MadeFindings(np.arange(len(keys)), counter)
    stats: dict[str, object] = {"expected_total": expected_total, "applied_total": applied_total,
                                "money_keys": n_owed + n_others, "unpriced": unpriced}
    return findings, stats, unpriced


def _unexpected_keys(idx: CheckIndex) -> list[Finding]:
    """``unexpected``'s findings about keys over the index's `KeyTable` (as
    `unexpected_keys_by_key`): observed keys forbidden or never validly sent, first seen first."""
    table = idx.keys
    findings = []
    unowed = Unowed(idx.history)
    for code in table.seen(table.forbidden | ~table.expected).tolist():
        message = (forbidden_message(idx.history, table.positions(code)) if table.forbidden[code]
                   else unowed.message(table.name(code)))
        findings.append(Finding("unexpected", table.name(code), f"{message} ({seen_in(int(table.peak_obs[code]))})",
                                expected=0, actual=int(table.peak[code]),
                                attempts=idx.attempt_ids(table.positions(code))))
    return findings


#: What a counter finding adds when the receiver shows a counter no sent event moves: the
#: config declares no counter event keyed so ([counters] templates, a catalog's amounts), so the
#: receiver keeps a counter the config does not declare, or moved one for an event that moves none.
UNMOVED_COUNTER = (": no event sent moves this key under the declared counters ([counters]): a counter the "
                   "receiver keeps that the config does not declare, or one it moved for an event that moves none")


def _counter_findings(want: Mapping[str, int], got: Mapping[str, int], idx: CheckIndex,
                      moved: CounterEvents | None = None) -> list[Finding]:
    """One finding per counter whose observed amount differs from the truth's sum, naming the
    attempts of the events that move it (`moved`: counter key → its `business_keys.CounterMove`s,
    or bare event ids, or a `business_keys.CounterEventsOf` asked for the keys found off alone;
    a counter keyed like a business key names that key's attempts) and, when its moves add up
    to the truth, what they are (``+3266 transaction.completed evt_…, -816 adjustment.updated
    evt_…``: a truth the receiver disputes shows where it comes from)."""
    off = [key for key in dict.fromkeys([*want, *got])
           if not (got.get(key) == want.get(key, 0) or (got.get(key) is None and want.get(key, 0) == 0))]
    if moved is None:
        moved = {}
    elif not isinstance(moved, Mapping):
        moved = moved.only(off)
    findings = []
    for key in off:
        expected, actual = want.get(key, 0), got.get(key)
        shown = "missing" if actual is None else str(actual)
        moves = moved.get(key, ())
        ids = [m if isinstance(m, str) else m.event_id for m in moves]
        if any(i not in idx.by_event for i in ids):  # moves name the world's events: say what was sent
            wire = _sent_ids(idx.history, ids)
            ids = [wire.get(i, i) for i in ids]
            moves = tuple(m if isinstance(m, str) else m._replace(event_id=wire.get(m.event_id, m.event_id))
                          for m in moves)
        positions = list(idx.by_key.get(key, ())) or sorted(p for event_id in ids for p in idx.by_event.get(event_id, ()))
        message = f"counter is {shown}; the provider's truth implies {expected}"
        if key not in want and not moves:
            message += UNMOVED_COUNTER
        amounts = [m for m in moves if not isinstance(m, str)]
        if amounts and len(amounts) == len(moves) and sum(m.amount for m in amounts) == expected:
            message += " (" + ", ".join(f"{m.amount:+d} {m.event_type} {m.event_id}" for m in amounts) + ")"
        findings.append(Finding("counter", key, message, expected=expected, actual=actual,
                                attempts=idx.attempt_ids(positions)))
    return findings


def _sent_ids(history: Sequence[Attempt], world_ids: Sequence[str]) -> dict[str, str]:
    """World event id -> the event id its attempts carried (the id the receiver saw: Standard
    Webhooks' ``msg_…`` webhook-id, a GitHub delivery's GUID), for those of `world_ids` that
    `history` delivered (`world_event_id`); read until each is found."""
    want = set(world_ids)
    found: dict[str, str] = {}
    for attempt in history:
        wid = world_event_id(attempt)
        if wid in want and wid not in found:
            found[wid] = attempt.event_id
            if len(found) == len(want):
                break
    return found


def check_downstream_idempotency(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """Sink calls: one Idempotency-Key per business key, distinct keys for distinct keys.

    Needs the sink observer (effects carrying `idempotency_key`); when none was seen
    the verdict is valid with the stat ``applicability: not applicable``. A sink call
    without a key, next to calls with one, counts as a distinct key (``None``).
    """
    effects = sum(len(obs.effects) for obs in observations)
    if effects >= key_tables.SMALL and (fast := idempotency_consistent(observations, index)) is not None:
        n_keys, n_idems = fast
        if not n_idems:
            return result_of("downstream_idempotency", [], {"applicability": "not applicable"})
        return result_of("downstream_idempotency", [], {"business_keys": n_keys, "idempotency_keys": n_idems})
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


__all__: Sequence[str] = [
    "NO_EFFECT_TAGS",
    "NO_STATE_QUERY",
    "check_counter",
    "check_downstream_idempotency",
    "check_duplicated",
    "check_lost",
    "check_recovered",
    "check_regressed",
    "check_stale",
    "check_unexpected",
]
