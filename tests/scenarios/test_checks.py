"""Checks: hand-built histories and observations in, the exact findings out."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import pytest

from hookproof.scenarios.checks import (
    ALL_CHECKS,
    CheckResult,
    Verdict,
    check_safe,
    compose,
    run_checks,
    unfired_faults,
    unknown_reason,
)
from hookproof.scenarios.observations import (
    Effect,
    Expectations,
    ExpectedEffect,
    ObjectState,
    ObjectTruth,
    Observation,
    expectations_from,
)
from hookproof.simulator.delivery.history import Attempt, Completion, FaultOp, Outcome
from hookproof.simulator.events import Event

T0 = 1_700_000_000.0


# ---- builders -------------------------------------------------------------------------


def att(
    event: str, key: str | None = None, result: str = "200", *, valid: bool = True, at: float | None = None,
    latency_ms: float = 100.0, faults: tuple[str, ...] = (), obj: str | None = None, version: int | None = None,
    amount: int | None = None,
) -> Attempt:
    """One attempt. `result`: an HTTP status (``"200"``, ``"409"``, ``"500"``), or
    ``"timeout"``, ``"dropped"``, ``"refused"``. `at`: seconds after T0 it was sent
    (default: its position in the history, set by `hist`)."""
    if result == "timeout":
        status, outcome, completion = None, Outcome.TIMEOUT, Completion.UNKNOWN
    elif result == "dropped":
        status, outcome, completion = 200, Outcome.DROPPED, Completion.UNKNOWN
    elif result == "refused":
        status, outcome, completion = None, Outcome.CONNECTION_ERROR, Completion.FAIL
    else:
        status = int(result)
        if status < 300:
            outcome, completion = Outcome.ACKED, Completion.OK
        elif status < 500:
            outcome, completion = Outcome.REJECTED, Completion.FAIL
        else:
            outcome, completion = Outcome.SERVER_ERROR, Completion.UNKNOWN
    sent = T0 + at if at is not None else -1.0
    return Attempt(
        event_id=event, delivery_id=f"dlv_{event}", attempt=1, business_key=key, object_id=obj,
        object_version=version, event_type="test.event", faults=faults, valid=valid, sent_at=sent,
        answered_at=sent + latency_ms / 1000, status=status, outcome=outcome, completion=completion,
        latency_ms=latency_ms, amount=amount,
    )


def hist(*attempts: Attempt) -> list[Attempt]:
    """Number the attempts (index = position) and time unset ones one second apart."""
    out = []
    for i, a in enumerate(attempts):
        if a.sent_at < 0:
            a = replace(a, sent_at=T0 + i, answered_at=T0 + i + a.latency_ms / 1000)
        out.append(replace(a, index=i))
    return out


def obs(at: float, *effects: str | Effect, states: Sequence[ObjectState] = ()) -> Observation:
    """An observation `at` seconds after T0; effects as keys or `Effect`s."""
    rows = tuple(e if isinstance(e, Effect) else Effect(e) for e in effects)
    return Observation(T0 + at, rows, tuple(states))


def exp(
    *keys: str, forbidden: Sequence[str] = (), truth: dict[str, list[tuple[int, str, str]]] | None = None,
    money: dict[str, int] | None = None, timeout_s: float = 10.0, max_attempts: int | None = None,
) -> Expectations:
    """Expectations: expected keys (event id = ``e_<key>``), forbidden keys, truth as
    object → [(version, status, event id)], money amounts."""
    return Expectations(
        expected={k: ExpectedEffect(k, f"e_{k}", None, (money or {}).get(k), (f"e_{k}",)) for k in keys},
        forbidden=frozenset(forbidden),
        truth={o: ObjectTruth(o, tuple((v, s) for v, s, _ in vs), tuple(e for _, _, e in vs))
               for o, vs in (truth or {}).items()},
        money=money or {},
        sender_timeout_s=timeout_s,
        max_attempts_per_event=max_attempts,
    )


def st(obj: str, status: str, version: int | None = None) -> ObjectState:
    return ObjectState(obj, status, version)


@dataclass
class Case:
    """One row: a check over a history, expectations and observations, and what it finds."""

    check: str
    history: list[Attempt]
    expectations: Expectations
    observations: list[Observation]
    verdict: Verdict
    findings: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)  # key, attempts, severity
    stats: dict[str, object] = field(default_factory=dict)  # a subset of the result's stats


SUB = {"sub_1": [(1, "active", "s1"), (2, "past_due", "s2"), (3, "canceled", "s3")]}
SUB_HIST = hist(att("s1", obj="sub_1", version=1), att("s2", obj="sub_1", version=2),
                att("s3", obj="sub_1", version=3))
BOUNCE = {"sub_2": [(1, "active", "b1"), (2, "past_due", "b2"), (3, "active", "b3")]}
F, A = "finding", "advisory"
V, I, U = Verdict.VALID, Verdict.INVALID, Verdict.UNKNOWN  # noqa: E741 - the verdicts, one letter each

CASES: dict[str, Case] = {
    # duplicated (safety: any observation)
    "duplicated/twice-in-an-early-read": Case(
        "duplicated", hist(att("e1", "k1"), att("e1", "k1")), exp("k1"),
        [obs(10, "k1", "k1"), obs(20, "k1")], I, [("k1", (0, 1), F)]),
    "duplicated/once": Case("duplicated", hist(att("e1", "k1"), att("e1", "k1")), exp("k1"),
                            [obs(10, "k1"), obs(20, "k1")], V),
    "duplicated/nothing-observed": Case("duplicated", hist(att("e1", "k1")), exp("k1"), [], U),
    # lost (liveness: the settled observation)
    "lost/acked-then-gone": Case(
        "lost", hist(att("e1", "k1", "500"), att("e1", "k1", "200")), exp("k1"),
        [obs(10, "k1"), obs(20)], I, [("k1", (0, 1), F)], {"lost": 1}),
    "lost/never-acked-is-a-finding": Case(
        "lost", hist(att("e2", "k2", "500"), att("e2", "k2", "timeout")), exp("k2"), [obs(20)], I,
        [("k2", (0, 1), F)], {"never_acknowledged": 1}),
    "lost/applied": Case("lost", hist(att("e1", "k1")), exp("k1"), [obs(20, "k1")], V),
    "lost/invalid-ack-does-not-count": Case(
        "lost", hist(att("e1", "k1", "200", valid=False), att("e1", "k1", "503")), exp("k1"), [obs(20)], I,
        [("k1", (0, 1), F)]),
    # unexpected (safety)
    "unexpected/forged-applied": Case(
        "unexpected", hist(att("f1", "kf", "401", valid=False)), exp(forbidden=["kf"]), [obs(10, "kf"), obs(20)], I,
        [("kf", (0,), F)]),
    "unexpected/never-sent": Case("unexpected", hist(att("e1", "k1")), exp("k1"), [obs(20, "k1", "ghost")], I,
                                  [("ghost", (), F)]),
    "unexpected/invalid-acked": Case(
        "unexpected", hist(att("e1", "k1"), att("f1", "kf", "200", valid=False), att("f1", "kf", "202", valid=False)),
        exp("k1", forbidden=["kf"]), [obs(20, "k1")], I, [("kf", (1, 2), F)]),
    "unexpected/invalid-unanswered": Case(
        "unexpected", hist(att("e1", "k1"), att("f1", "kf", "timeout", valid=False)), exp("k1", forbidden=["kf"]),
        [obs(20, "k1")], I, [("kf", (1,), F)]),
    "unexpected/forged-rejected": Case(
        "unexpected", hist(att("e1", "k1"), att("f1", "kf", "401", valid=False)), exp("k1", forbidden=["kf"]),
        [obs(20, "k1")], V),
    # recovered
    "recovered/unknown-applied-is-fine": Case(
        "recovered", hist(att("e1", "k1", "timeout"), att("e1", "k1", "dropped")), exp("k1"), [obs(20, "k1")], V,
        [], {"recovered_keys": 1, "unknown_attempts_applied": 2}),
    "recovered/rejected-yet-applied": Case(
        "recovered", hist(att("e1", "k1", "400"), att("e1", "k1", "refused")), exp("k1"), [obs(20, "k1")], I,
        [("k1", (0, 1), F)]),
    "recovered/acked": Case("recovered", hist(att("e1", "k1", "500"), att("e1", "k1")), exp("k1"),
                            [obs(20, "k1")], V, [], {"recovered_keys": 0, "unknown_attempts_applied": 1}),
    # regressed (safety, time order)
    "regressed/versions-go-down": Case(
        "regressed", SUB_HIST, exp(truth=SUB), [obs(10, states=[st("sub_1", "past_due", 2)]),
                                                obs(20, states=[st("sub_1", "active", 1)])],
        I, [("sub_1", (0, 1), F)]),
    "regressed/status-only-goes-down": Case(
        "regressed", SUB_HIST, exp(truth=SUB), [obs(10, states=[st("sub_1", "canceled")]),
                                                obs(20, states=[st("sub_1", "active")])],
        I, [("sub_1", (0, 2), F)]),
    "regressed/repeated-status-maps-forward": Case(
        "regressed", hist(att("b1"), att("b2"), att("b3")), exp(truth=BOUNCE),
        [obs(t, states=[st("sub_2", s)]) for t, s in ((1, "active"), (2, "past_due"), (3, "active"))], V),
    "regressed/observations-sorted-by-time": Case(
        "regressed", SUB_HIST, exp(truth=SUB), [obs(20, states=[st("sub_1", "canceled", 3)]),
                                                obs(10, states=[st("sub_1", "active", 1)])], V),
    "regressed/unmapped-status-skipped": Case(
        "regressed", SUB_HIST, exp(truth=SUB), [obs(10, states=[st("sub_1", "weird")])], U, [],
        {"unmapped_states": 1}),
    # a fetching receiver stores what the provider API served: v3 (active) was served but its
    # events never delivered; the status it shows maps there, not back to v1
    "regressed/status-the-api-served-ahead-maps-forward": Case(
        "regressed", hist(att("s1", obj="sub_1", version=1), att("s2", obj="sub_1", version=2)),
        replace(exp(truth={"sub_1": SUB["sub_1"][:2]}), servable={"sub_1": ((1, "active"), (2, "past_due"),
                                                                           (3, "active"))}),
        [obs(10, states=[st("sub_1", "past_due")]), obs(20, states=[st("sub_1", "active")])], V),
    "regressed/status-the-api-never-served-after-still-regresses": Case(
        "regressed", hist(att("s1", obj="sub_1", version=1), att("s2", obj="sub_1", version=2)),
        replace(exp(truth={"sub_1": SUB["sub_1"][:2]}), servable={"sub_1": ((1, "active"), (2, "past_due"))}),
        [obs(10, states=[st("sub_1", "past_due")]), obs(20, states=[st("sub_1", "active")])], I,
        [("sub_1", (0, 1), F)]),
    # stale (liveness)
    "stale/old-status": Case("stale", SUB_HIST, exp(truth=SUB), [obs(20, states=[st("sub_1", "past_due")])], I,
                             [("sub_1", (2,), F)]),
    "stale/old-version-same-status": Case(
        "stale", hist(att("b1"), att("b2"), att("b3")), exp(truth=BOUNCE), [obs(20, states=[st("sub_2", "active", 1)])],
        I, [("sub_2", (2,), F)]),
    "stale/missing": Case("stale", SUB_HIST, exp(truth=SUB), [obs(10, states=[st("sub_1", "active")]), obs(20)], I,
                          [("sub_1", (2,), F)]),
    "stale/final": Case("stale", SUB_HIST, exp(truth=SUB), [obs(20, states=[st("sub_1", "canceled", 3)])], V),
    "stale/no-state-exposed": Case("stale", SUB_HIST, exp(truth=SUB), [obs(20)], U),
    # counter (money, liveness)
    "counter/double-credit": Case(
        "counter", hist(att("e1", "refund:r1"), att("e1", "refund:r1")), exp("refund:r1", money={"refund:r1": 500}),
        [obs(20, "refund:r1", "refund:r1")], I, [("refund:r1", (0, 1), F)],
        {"expected_total": 500, "applied_total": 1000}),
    "counter/wrong-row-amount": Case(
        "counter", hist(att("e1", "credit:c1")), exp("credit:c1", money={"credit:c1": 500}),
        [obs(20, Effect("credit:c1", amount=400))], I, [("credit:c1", (0,), F)]),
    "counter/exact": Case(
        "counter", hist(att("e1", "refund:r1"), att("e2", "refund:r2"), att("e3", "license:l1")),
        exp("refund:r1", "refund:r2", "license:l1", money={"refund:r1": 500, "refund:r2": 250}),
        [obs(20, "refund:r1", Effect("refund:r2", amount=250), "license:l1")], V, [],
        {"expected_total": 750, "applied_total": 750}),
    "counter/never-acked-is-advisory": Case(
        "counter", hist(att("e1", "refund:r1", "503")), exp("refund:r1", money={"refund:r1": 500}), [obs(20)], V,
        [("refund:r1", (0,), A)]),
    "counter/unpriced": Case("counter", hist(), exp(), [obs(20, "credit:ghost")], U, [], {"unpriced": 1}),
    # duplicate_acked
    "duplicate_acked/409-after-ack": Case(
        "duplicate_acked", hist(att("e1", "k1", "200", at=0), att("e1", "k1", "409", at=5)), exp("k1"), [], I,
        [("k1", (1,), F)]),
    "duplicate_acked/500-after-ack": Case(
        "duplicate_acked", hist(att("e1", "k1", "200", at=0), att("e1", "k1", "500", at=5),
                                att("e1", "k1", "500", at=9)), exp("k1"), [], I, [("k1", (1, 2), F)]),
    "duplicate_acked/concurrent-409-advisory": Case(
        "duplicate_acked", hist(att("e1", "k1", "409", at=0.5, latency_ms=100),
                                att("e1", "k1", "200", at=0, latency_ms=1000)), exp("k1"), [], V,
        [("k1", (0,), A)]),
    "duplicate_acked/acked-again": Case(
        "duplicate_acked", hist(att("e1", "k1", "200", at=0), att("e1", "k1", "200", at=5)), exp("k1"), [], V),
    "duplicate_acked/rejected-before-any-ack": Case(
        "duplicate_acked", hist(att("e1", "k1", "400", at=0), att("e1", "k1", "200", at=5)), exp("k1"), [], V),
    # retry_storm
    "retry_storm/too-many": Case(
        "retry_storm", hist(*(att("e1", "k1", "500") for _ in range(4)), att("e2", "k2")), exp("k1", "k2",
                                                                                              max_attempts=3),
        [], I, [("k1", (0, 1, 2, 3), F)]),
    "retry_storm/within": Case("retry_storm", hist(*(att("e1", "k1", "500") for _ in range(3))),
                               exp("k1", max_attempts=3), [], V),
    "retry_storm/no-limit": Case("retry_storm", hist(*(att("e1", "k1", "500") for _ in range(30))), exp("k1"), [], V,
                                 [], {"applicability": "not applicable"}),
    # valid_not_rejected
    "valid_not_rejected/400-then-ok": Case(
        "valid_not_rejected", hist(att("e1", "k1", "400", at=0), att("e1", "k1", "200", at=5)), exp("k1"), [], I,
        [("k1", (0,), F)]),
    "valid_not_rejected/throttled": Case(
        "valid_not_rejected", hist(att("e1", "k1", "429")), exp("k1"), [], V, [("k1", (0,), A)]),
    "valid_not_rejected/invalid-rejected": Case(
        "valid_not_rejected", hist(att("e1", "k1"), att("f1", "kf", "401", valid=False)), exp("k1", forbidden=["kf"]),
        [], V),
    "valid_not_rejected/409-after-ack-left-to-duplicate_acked": Case(
        "valid_not_rejected", hist(att("e1", "k1", "200", at=0), att("e1", "k1", "409", at=5)), exp("k1"), [], V),
    # no_server_error
    "no_server_error/plain-500": Case(
        "no_server_error", hist(att("e1", "k1", "500"), att("e1", "k1")), exp("k1"), [], I, [("k1", (0,), F)]),
    "no_server_error/burst-does-not-excuse": Case(
        "no_server_error", hist(att("e1", "k1", "500", faults=("burst=8",)), att("e1", "k1", faults=("burst=8",))),
        exp("k1"), [], I, [("k1", (0,), F)]),
    "no_server_error/injected-fault-advisory": Case(
        "no_server_error", hist(att("e1", "k1", "502", faults=("oversize",)), att("f1", "kf", "500", valid=False)),
        exp("k1", forbidden=["kf"]), [], V, [("k1", (0,), A), ("kf", (1,), A)]),
    "no_server_error/none": Case("no_server_error", hist(att("e1", "k1"), att("e2", "k2", "400")), exp("k1", "k2"),
                                 [], V),
    # ack_latency (timeout 10 s; with 10 acked attempts p99 is the slowest)
    "ack_latency/p99-over-timeout": Case(
        "ack_latency", hist(*(att(f"e{i}", f"k{i}") for i in range(9)), att("e9", "k9", latency_ms=12_000)),
        exp(timeout_s=10), [], I, [("*", (9,), F)], {"acked": 10, "p50_ms": 100.0, "p99_ms": 12_000}),
    "ack_latency/p99-over-half": Case(
        "ack_latency", hist(*(att(f"e{i}", f"k{i}") for i in range(9)), att("e9", "k9", latency_ms=6_000)),
        exp(timeout_s=10), [], V, [("*", (9,), A)]),
    "ack_latency/fast": Case(
        "ack_latency", hist(*(att(f"e{i}", f"k{i}") for i in range(9)), att("e9", "k9", "timeout", latency_ms=10_000)),
        exp(timeout_s=10), [], V, [], {"acked": 9, "p99_ms": 100.0}),
    "ack_latency/nothing-acked": Case("ack_latency", hist(att("e1", "k1", "500")), exp(), [], V, [],
                                      {"applicability": "not applicable"}),
    # downstream_idempotency (sink observer)
    "downstream_idempotency/two-keys-for-one-effect": Case(
        "downstream_idempotency", hist(att("e1", "k1"), att("e1", "k1")), exp("k1"),
        [obs(10, Effect("k1", idempotency_key="a")), obs(20, Effect("k1", idempotency_key="a"),
                                                          Effect("k1", idempotency_key="b"))],
        I, [("k1", (0, 1), F)]),
    "downstream_idempotency/one-key-for-two-effects": Case(
        "downstream_idempotency", hist(att("e1", "k1"), att("e2", "k2")), exp("k1", "k2"),
        [obs(20, Effect("k1", idempotency_key="x"), Effect("k2", idempotency_key="x"))], I, [("k1", (0, 1), F)]),
    "downstream_idempotency/ok": Case(
        "downstream_idempotency", hist(att("e1", "k1"), att("e2", "k2")), exp("k1", "k2"),
        [obs(t, Effect("k1", idempotency_key="a"), Effect("k2", idempotency_key="b")) for t in (10, 20)], V),
    "downstream_idempotency/not-applicable": Case(
        "downstream_idempotency", hist(att("e1", "k1")), exp("k1"), [obs(20, "k1")], V, [],
        {"applicability": "not applicable"}),
}


def _declared(at: float, *effects: str, states: Sequence[ObjectState] = (),
              kinds: frozenset[str] = frozenset({"subscription"})) -> Observation:
    """An observation from an observer with a state query for `kinds`."""
    return replace(obs(at, *effects, states=states), state_kinds=kinds)


def _tagged(event: str, result: str, tag: str, *, valid: bool, key: str | None = None) -> Attempt:
    return replace(att(event, key, result, valid=valid), faults=(tag,))


INVOICE = ObjectTruth("in_1", ((1, "open"), (2, "paid")), ("i1", "i2"), kind="invoice")

CASES.update({
    # no false alarms: a genuine event of the other mode or account may be acked, never applied
    "unexpected/livemode-mismatch-acked-no-effect": Case(
        "unexpected", hist(_tagged("e1", "200", "livemode-mismatch", valid=False, key="k1")), exp(forbidden=["k1"]),
        [obs(20)], V),
    "unexpected/foreign-account-refused": Case(
        "unexpected", hist(_tagged("e1", "400", "foreign-account", valid=False, key="k1")), exp(forbidden=["k1"]),
        [obs(20)], V),
    "unexpected/livemode-mismatch-applied": Case(
        "unexpected", hist(_tagged("e1", "200", "livemode-mismatch", valid=False, key="k1")), exp(forbidden=["k1"]),
        [obs(20, "k1")], I, [("k1", (0,), F)]),
    "unexpected/foreign-account-500": Case(
        "unexpected", hist(_tagged("e1", "500", "foreign-account", valid=False, key="k1")), exp(forbidden=["k1"]),
        [obs(20)], I, [("k1", (0,), F)]),
    # future-dated deliveries the official verifier accepts: refusing them is stricter (advisory)
    "valid_not_rejected/future-timestamp-refused-is-advisory": Case(
        "valid_not_rejected", hist(_tagged("e1", "400", "future-timestamp", valid=True, key="k1")), exp("k1"),
        [obs(20)], V, [("k1", (0,), A)]),
    "unexpected/future-timestamp-accepted-where-verifier-rejects": Case(
        "unexpected", hist(_tagged("e1", "200", "future-timestamp", valid=False, key="k1")), exp(forbidden=["k1"]),
        [obs(20)], I, [("k1", (0,), F)]),
    # vacuous passes are unknown
    "stale/zero-objects": Case("stale", hist(att("e1", "k1")), exp("k1"), [obs(20, "k1")], U, [], {"objects": 0}),
    "regressed/zero-objects": Case("regressed", hist(att("e1", "k1")), exp("k1"), [obs(20, "k1")], U, [],
                                   {"objects": 0}),
    "regressed/no-state-observed": Case("regressed", SUB_HIST, exp(truth=SUB), [obs(20)], U),
    # acked events none of which carries a business key owe no effect: lost does not apply
    "lost/nothing-expected-but-acked": Case("lost", hist(att("e1", None)), exp(), [obs(20)], V, [],
                                            {"applicability": "not applicable"}),
    "lost/nothing-sent": Case("lost", [], exp(), [obs(20)], V),
    # a configured state query that shows nothing: every object is missing, not unknown
    "stale/state-query-shows-nothing": Case("stale", SUB_HIST, exp(truth=SUB), [_declared(20)], I,
                                            [("sub_1", (2,), F)]),
    # several state queries: an invoice is compared when the observer reads invoices
    "stale/invoice-kind-final": Case(
        "stale", hist(att("i1", obj="in_1"), att("i2", obj="in_1")),
        replace(exp(), truth={"in_1": INVOICE}),
        [_declared(20, states=[st("in_1", "paid")], kinds=frozenset({"invoice"}))], V),
    "stale/invoice-kind-regressed-to-open": Case(
        "stale", hist(att("i1", obj="in_1"), att("i2", obj="in_1")),
        replace(exp(), truth={"in_1": INVOICE}),
        [_declared(20, states=[st("in_1", "open")], kinds=frozenset({"invoice"}))], I, [("in_1", (1,), F)]),
    "regressed/invoice-paid-then-open": Case(
        "regressed", hist(att("i1", obj="in_1"), att("i2", obj="in_1")),
        replace(exp(), truth={"in_1": INVOICE}),
        [_declared(t, states=[st("in_1", s)], kinds=frozenset({"invoice"})) for t, s in ((10, "paid"), (20, "open"))],
        I, [("in_1", (0, 1), F)]),
    # a counter query (a customer's balance) against the sum the provider's truth implies
    "counter/balance-matches-the-truth": Case(
        "counter", hist(att("i1", "renewal:in_1")), replace(exp("renewal:in_1"), counters={"cus_1": 900}),
        [replace(obs(20, "renewal:in_1"), counters={"cus_1": 900})], V, [],
        {"counters": 1, "counters_expected_total": 900, "counters_applied_total": 900}),
    "counter/balance-credited-twice": Case(
        "counter", hist(att("i1", "renewal:in_1")), replace(exp("renewal:in_1"), counters={"cus_1": 900}),
        [replace(obs(20, "renewal:in_1"), counters={"cus_1": 1800, "cus_2": 0})], I, [("cus_1", (), F)],
        {"counters": 2, "counters_expected_total": 900, "counters_applied_total": 1800}),
    "counter/balance-missing": Case(
        "counter", hist(att("i1", "renewal:in_1")), replace(exp("renewal:in_1"), counters={"cus_1": 900}),
        [replace(obs(20, "renewal:in_1"), counters={})], I, [("cus_1", (), F)]),
    "stale/invoice-not-read-by-a-subscription-observer": Case(
        "stale", hist(att("i1", obj="in_1"), att("i2", obj="in_1")),
        replace(exp(), truth={"in_1": INVOICE}), [_declared(20)], U),
})


@pytest.mark.parametrize("name", list(CASES))
def test_check_table(name: str) -> None:
    case = CASES[name]
    result = ALL_CHECKS[case.check](case.history, case.expectations, case.observations)
    assert result.check_id == case.check
    got = sorted((f.key, f.attempts, f.severity) for f in result.findings)
    assert got == sorted(case.findings), [f.message for f in result.findings]
    assert result.verdict is case.verdict, result.detail
    for stat, value in case.stats.items():
        assert result.stats[stat] == value, stat
    for f in result.findings:
        assert f.check_id == case.check and f.message and "\n" not in f.message


def test_every_check_has_a_true_positive_and_a_true_negative() -> None:
    positives = {c.check for c in CASES.values() if c.verdict is Verdict.INVALID}
    negatives = {c.check for c in CASES.values() if c.verdict is Verdict.VALID and not any(
        sev == "finding" for _, _, sev in c.findings)}
    assert positives == set(ALL_CHECKS) == negatives


def test_shared_index_gives_the_same_results() -> None:
    for name, case in CASES.items():
        alone = ALL_CHECKS[case.check](case.history, case.expectations, case.observations)
        [shared] = run_checks([case.check], case.history, case.expectations, case.observations)
        assert shared == alone, name


# ---- compose and the guard --------------------------------------------------------------


def _r(verdict: Verdict) -> CheckResult:
    return CheckResult("x", verdict)


@pytest.mark.parametrize(("verdicts", "want"), [
    ([], V), ([V, V], V), ([V, U], U), ([U, V, U], U), ([V, I], I), ([U, I, V], I), ([I, U], I),
])
def test_compose_priority(verdicts: list[Verdict], want: Verdict) -> None:
    assert compose(_r(v) for v in verdicts) is want


def test_a_crashing_check_is_unknown_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> CheckResult:
        raise ZeroDivisionError("the checker divided by zero")

    monkeypatch.setitem(ALL_CHECKS, "lost", boom)
    history = hist(att("e1", "k1"))
    lost, duplicated = run_checks(["lost", "duplicated"], history, exp("k1"), [obs(20, "k1")])
    assert lost.verdict is Verdict.UNKNOWN and lost.check_id == "lost"
    assert "ZeroDivisionError: the checker divided by zero" in lost.detail
    assert lost.stats["error"] == "ZeroDivisionError: the checker divided by zero"
    assert duplicated.verdict is Verdict.VALID
    assert compose([lost, duplicated]) is Verdict.UNKNOWN
    assert check_safe("lost", boom, history, exp("k1"), []).verdict is Verdict.UNKNOWN


def test_a_broken_input_is_unknown_for_every_check() -> None:
    broken = [Observation(T0, effects=None, states=None)]  # type: ignore[arg-type]
    results = run_checks(list(ALL_CHECKS), hist(att("e1", "k1")), exp("k1", max_attempts=2), broken)
    assert [r.check_id for r in results] == list(ALL_CHECKS)
    assert {r.verdict for r in results} <= {Verdict.UNKNOWN, Verdict.VALID}
    assert any(r.verdict is Verdict.UNKNOWN for r in results)


def test_unknown_check_id_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no such check"):
        run_checks(["lots"], [], exp(), [])


def test_a_correct_run_passes_every_check() -> None:
    history = hist(
        att("e1", "k1", "timeout"), att("e1", "k1"), att("e1", "k1"),
        att("r1", "refund:r1", amount=500), att("f1", "kf", "401", valid=False),
        att("s1", obj="sub_1", version=1), att("s2", obj="sub_1", version=2), att("s3", obj="sub_1", version=3),
    )
    expectations = exp("k1", "refund:r1", forbidden=["kf"], truth=SUB, money={"refund:r1": 500}, max_attempts=3)
    observations = [obs(10, "k1", states=[st("sub_1", "past_due")]),
                    obs(20, "k1", "refund:r1", states=[st("sub_1", "canceled", 3)])]
    results = run_checks(list(ALL_CHECKS), history, expectations, observations)
    assert {r.check_id: r.verdict for r in results} == dict.fromkeys(ALL_CHECKS, Verdict.VALID)
    assert compose(results) is Verdict.VALID
    assert all(isinstance(r.to_dict()["findings"], list) for r in results)


# ---- expectations_from -------------------------------------------------------------------


def ev(event_id: str, obj: str, version: int = 1, *, key: str | None = None, amount: int | None = None,
       status: str | None = None, object_type: str = "payment_intent") -> Event:
    return Event(id=event_id, type=f"{object_type}.updated", created=1_700_000_000, created_us=1_700_000_000_000_000,
                 object_type=object_type, object_id=obj, version=version, object={"id": obj},
                 business_key=key, amount=amount, status=status)


def test_expectations_from_events_and_history() -> None:
    events = [
        ev("e1", "pi_1", key="license:pi_1"),
        ev("e2", "pi_2", key="license:pi_2"),
        ev("e3", "re_1", key="refund:re_1", amount=500),
        ev("e8", "re_2", key="refund:re_2", amount=300),
        ev("s1", "sub_1", 1, status="active", object_type="subscription"),
        ev("s2", "sub_1", 2, status="past_due", object_type="subscription"),
        ev("s3", "sub_1", 3, status="canceled", object_type="subscription"),
        ev("s4", "sub_1", 4, status="active", object_type="subscription"),
        ev("e7", "pi_7", key="license:pi_7"),  # never attempted: filtered by enabled_events
    ]
    history = hist(
        att("e1", None, "500"), att("e1", None, "401", valid=False), att("e1", None),  # key from the event
        att("e2", "license:pi_2", "401", valid=False),
        att("e3", "refund:re_1"), att("e8", "refund:re_2", "401", valid=False),
        att("s3", None), att("s1", None), att("s2", None), att("s4", None, "401", valid=False),
        att("x1", "license:forged", "401", valid=False, amount=9),
    )
    e = expectations_from(events, history, sender_timeout_s=20, max_attempts_per_event=5)
    assert set(e.expected) == {"license:pi_1", "refund:re_1"}
    assert e.expected["license:pi_1"] == ExpectedEffect("license:pi_1", "e1", "pi_1", None, ("e1",))
    assert e.expected["refund:re_1"].amount == 500
    assert e.forbidden == {"license:pi_2", "refund:re_2", "license:forged"}
    assert dict(e.money) == {"refund:re_1": 500, "refund:re_2": 300}
    truth = e.truth["sub_1"]
    assert truth.versions == ((1, "active"), (2, "past_due"), (3, "canceled"))  # s4 only forged
    assert (truth.final_status, truth.final_version, truth.final_event_id) == ("canceled", 3, "s3")
    assert set(e.truth) == {"sub_1"}
    assert (e.sender_timeout_s, e.max_attempts_per_event) == (20, 5)
    assert e.is_money("credit:x") and not e.is_money("license:x")


def test_version_for_takes_the_earliest_version_consistent_with_monotonicity() -> None:
    t = ObjectTruth("sub", ((1, "active"), (2, "past_due"), (3, "active"), (5, "canceled")), ("a", "b", "c", "d"))
    assert t.version_for("active") == 1
    assert t.version_for("active", floor=2) == 3
    assert t.version_for("active", floor=3) == 3
    assert t.version_for("active", floor=5) == 3  # only below the floor: the latest such (a regression)
    assert t.version_for("trialing") is None
    assert t.event_id_at(5) == "d" and t.event_id_at(4) is None
    with pytest.raises(ValueError):
        ObjectTruth("empty", ())


def test_observation_helpers() -> None:
    o = obs(1, "a", "b", "a", states=[st("s", "active", 1), st("t", "canceled")])
    assert o.counts() == {"a": 2, "b": 1}
    assert o.state_of("s") == st("s", "active", 1) and o.state_of("nope") is None


def test_a_plain_three_argument_check_can_be_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    def plain(history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation]) -> CheckResult:
        return CheckResult("plain", Verdict.VALID, (), {"attempts": len(history)})

    monkeypatch.setitem(ALL_CHECKS, "plain", plain)
    [result] = run_checks(["plain"], hist(att("e1", "k1")), exp("k1"), [])
    assert result.verdict is Verdict.VALID and result.stats == {"attempts": 1}


# ---- merged findings, reasons, run verdicts ---------------------------------------------


def test_identical_findings_of_several_events_merge_with_a_count() -> None:
    """reorder once showed six identical no_server_error lines: one finding, count 6."""
    history = hist(*(replace(att(f"s{i}", obj="sub_1", result="500"), event_type="customer.subscription.updated")
                     for i in range(6)),
                   replace(att("d1", obj="sub_1", result="500"), event_type="customer.subscription.deleted"))
    [result] = run_checks(["no_server_error"], history, exp(), [obs(20)])
    assert [(f.count, f.attempts, f.message) for f in result.findings] == [
        (6, (0, 1, 2, 3, 4, 5),
         "6 valid customer.subscription.updated event(s) without injected fault answered 500 6 time(s)"),
        (1, (6,), "1 valid customer.subscription.deleted event(s) without injected fault answered 500 1 time(s)"),
    ]
    assert result.detail == "7 finding(s), 0 advisory(ies)"
    assert result.findings[0].to_dict()["count"] == 6


CSRF_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <title>403 Forbidden</title>
  <style>body { font-family: sans-serif; }</style>
</head>
<body>
<div id="summary">
  <h1>Forbidden <span>(403)</span></h1>
  <p>CSRF verification failed. Request aborted.</p>
  <p>You are seeing this message because this site requires a CSRF cookie when submitting forms.</p>
</div>
</body>
</html>
"""


def test_a_grouped_finding_counts_events_and_attempts_and_quotes_the_answer() -> None:
    """The trial's Django receiver without csrf_exempt: four subscription.updated events of one
    subscription, each refused ten times with 403, showed "10 valid … delivery(ies) rejected"
    beside 40 attempts. The finding counts both, and quotes the answer's visible text."""
    history = hist(*(replace(att(f"e{i}", obj="sub_1", result="403"), event_type="customer.subscription.updated",
                             response_excerpt=CSRF_PAGE)
                     for _ in range(10) for i in range(4)))
    [result] = run_checks(["valid_not_rejected"], history, exp(), [obs(60)])
    (finding,) = result.findings
    assert finding.count == 4 and finding.attempts == tuple(range(40)) and finding.actual == "403"
    assert finding.message == (
        "4 valid customer.subscription.updated event(s) refused 40 time(s) with 403; the receiver answered "
        "\"Forbidden (403) CSRF verification failed. Request aborted. You are seeing this message because this "
        "site requires a CSRF…\"")
    assert result.detail == "4 finding(s), 0 advisory(ies)"


def test_an_answer_quote_is_one_bounded_line() -> None:
    from hookproof.scenarios.answer_quote import QUOTE_CHARS, answer_quote

    assert answer_quote("") == "" and answer_quote('  {"error":\n "no signature"}\n') == '{"error": "no signature"}'
    assert answer_quote("x" * 500) == "x" * QUOTE_CHARS + "…"
    assert answer_quote("<html><head><title>t</title></head><body><p>a &amp; b</p><script>x()</script>") == "a & b"


@pytest.mark.parametrize(("verdicts", "partial", "want"), [
    ([], False, "unknown"),  # nothing ran: nothing is certified
    (["not_applicable"], False, "unknown"),
    (["pass", "not_applicable"], False, "pass"),
    (["pass"], True, "unknown"),
    (["pass", "unknown"], False, "unknown"),
    (["unknown", "fail"], False, "fail"),
    (["pass", "error"], False, "fail"),
    (["fail"], True, "fail"),
])
def test_one_run_verdict_rule(verdicts: list[str], partial: bool, want: str) -> None:
    from hookproof.scenarios.findings import run_verdict

    assert run_verdict(verdicts, partial=partial) == want


def _op(op: str, detail: str = "") -> FaultOp:
    return FaultOp(op=op, target="process:1", at=T0, detail=detail, scenario="crash-after-ack")


@pytest.mark.parametrize(("ops", "want"), [
    ([], None),
    ([_op("arm", "kill after the next 8 2xx answer(s)"), _op("kill"), _op("start"), _op("heal")], None),
    ([_op("arm", "kill after the next 8 2xx answer(s)"), _op("heal")],
     "the armed fault never fired (kill after the next 8 2xx answer(s)): the receiver did not answer enough 2xx"),
    ([_op("arm", "kill after the next 2 2xx answer(s)")],
     "the armed fault never fired (kill after the next 2 2xx answer(s)): the receiver did not answer enough 2xx"),
    ([_op("pause"), _op("resume"), _op("heal")], None),
])
def test_an_armed_fault_that_never_fired_is_named(ops: list[FaultOp], want: str | None) -> None:
    assert unfired_faults(ops) == want


def test_every_unknown_check_gives_its_reason() -> None:
    results = run_checks(["stale", "regressed", "duplicated"], hist(att("e1", "k1")), exp("k1"), [obs(20, "k1")])
    assert unknown_reason(results) == (
        "stale: no object whose state the observer reads (subscription) was validly sent: nothing to compare; "
        "0 finding(s), 0 advisory(ies); regressed: no object whose state the observer reads (subscription) was "
        "validly sent: nothing to compare; 0 finding(s), 0 advisory(ies)")
    assert unknown_reason(results[2:]) is None


def test_expectations_join_envelope_ids_to_the_world_s_events() -> None:
    """Standard Webhooks records the envelope's msg_ id; the world's events are evt_…."""
    events = [ev("evt_1", "sub_1", 1, status="active", object_type="subscription"),
              ev("evt_2", "sub_1", 2, status="canceled", object_type="subscription")]
    history = hist(replace(att("msg_a", None), delivery_id="dlv_evt_2_0"),
                   replace(att("msg_b", None), delivery_id="dlv_evt_1_0"))
    e = expectations_from(events, history, sender_timeout_s=5, max_attempts_per_event=None)
    truth = e.truth["sub_1"]
    assert (truth.versions, truth.event_ids) == (((1, "active"), (2, "canceled")), ("msg_b", "msg_a"))


def test_a_concurrent_copy_failing_on_the_provider_api_s_refusal_names_that_cause() -> None:
    """A copy of an event overlapping its acked copy got a 500 while the provider API refused
    the receiver's fetch of its object (an injected transient): the advisory names the
    refusal, not the concurrency; without the fault tag it still blames the concurrent copy."""
    from hookproof.loadtests.plan import API_TRANSIENT_TAG
    from hookproof.scenarios.answer_checks import PROVIDER_API_FAULT_TAG, check_duplicate_acked
    from hookproof.scenarios.session import API_FAULT_TAG

    assert PROVIDER_API_FAULT_TAG == API_TRANSIENT_TAG == API_FAULT_TAG

    def advisory(faults: tuple[str, ...]) -> str:
        history = hist(att("e1", "k1", "500", at=0.5, latency_ms=100, faults=faults),
                       att("e1", "k1", "200", at=0, latency_ms=1000, faults=faults))
        result = check_duplicate_acked(history, exp("k1"), [])
        (finding,) = result.findings
        assert finding.advisory and result.verdict is V
        return finding.message

    transient = advisory((PROVIDER_API_FAULT_TAG,))
    assert "while the provider API refused the receiver's fetch of its object" in transient
    assert "not because of the concurrent copy" in transient and "refused with" not in transient
    assert advisory(()) == ("1 test.event event(s) whose concurrent copies were refused 1 time(s) with 500 while "
                            "another copy was processed; the provider will retry them")


def test_unexpected_names_the_read_that_showed_the_key_in_words() -> None:
    from hookproof.scenarios.checks import check_unexpected
    from hookproof.scenarios.key_loops import UNEXPECTED_UNOWED, seen_in

    assert [seen_in(i) for i in (0, 1, 2, 3, 10, 11, 20, 21, 111, 122)] == [
        f"seen in the {word} read after delivering"
        for word in ("first", "second", "third", "4th", "11th", "12th", "21st", "22nd", "112th", "123rd")]
    # the ghost key shows from the second read on: named by that read, never by hookproof's index of it
    result = check_unexpected(hist(att("e1", "k1")), exp("k1"), [obs(10, "k1"), obs(20, "k1", "ghost")])
    assert [(f.key, f.message) for f in result.findings] == [
        ("ghost", f"{UNEXPECTED_UNOWED} (seen in the second read after delivering)")]
    # a key of the team's own shape: the message says how to judge by the team's own keys
    assert UNEXPECTED_UNOWED == (
        "applied, but no validly sent event carries this key (an effect for an event that owes none, or a key of "
        "the receiver's own shape that hookproof's key templates do not produce: map each event type to the "
        "receiver's key under [business_keys], and set builtin_keys = false to judge by those alone)")


@pytest.mark.parametrize("others", [0, 140])  # a few keys (key by key), many (the key table's columns)
def test_unexpected_names_the_sent_event_whose_condition_withheld_the_key(others: int) -> None:
    """A fulfilment applied for a session whose ``checkout.session.completed`` was validly sent
    unpaid (so it carried no key) names that event and why it owed none; a key no sent event
    would carry keeps the generic message."""
    from hookproof.scenarios.checks import check_unexpected
    from hookproof.scenarios.key_loops import UNEXPECTED_UNOWED

    def completed(event: str, key: str | None, session: str, *, valid: bool = True) -> Attempt:
        return replace(att(event, key, obj=session, valid=valid), event_type="checkout.session.completed")

    padding = [f"k{i}" for i in range(others)]
    history = hist(completed("evt_paid", "fulfillment:cs_paid", "cs_paid"), completed("evt_unpaid", None, "cs_late"),
                   completed("evt_forged", None, "cs_forged", valid=False), *(att(f"e_{k}", k) for k in padding))
    seen = obs(10, "fulfillment:cs_paid", "fulfillment:cs_late", "fulfillment:cs_forged", "ghost", *padding)
    result = check_unexpected(history, exp("fulfillment:cs_paid", *padding), [seen])
    assert {f.key: f.message for f in result.findings if f.key != "cs_forged"} == {  # cs_forged: accepted forged
        "fulfillment:cs_late": "applied, but no validly sent event owes this key: evt_unpaid checkout.session.completed "
                               "was validly sent about cs_late, and it owed no fulfilment: its payment_status was not "
                               "paid (a delayed payment method completes the session unpaid; Stripe's fulfilment guide "
                               "fulfils it only once paid, on checkout.session.async_payment_succeeded: "
                               "docs.stripe.com/checkout/fulfillment) (seen in the first read after delivering)",
        "fulfillment:cs_forged": f"{UNEXPECTED_UNOWED} (seen in the first read after delivering)",
        "ghost": f"{UNEXPECTED_UNOWED} (seen in the first read after delivering)"}


@pytest.mark.parametrize("others", [0, 140])  # a few keys (key by key), many (the key table's columns)
def test_unexpected_names_a_checkout_session_s_intent_licensed_as_a_double_fulfilment(others: int) -> None:
    """A license applied for a Checkout Session's payment intent (its ``payment_intent.succeeded``
    validly sent without a key: the session's purchase, fulfilled on the session's events) names
    that event and the double fulfilment; a payment intent of the shop's own keeps its license."""
    from hookproof.scenarios.checks import check_unexpected

    def succeeded(event: str, key: str | None, intent: str) -> Attempt:
        return replace(att(event, key, obj=intent), event_type="payment_intent.succeeded")

    padding = [f"k{i}" for i in range(others)]
    history = hist(succeeded("evt_own", "license:pi_own", "pi_own"), succeeded("evt_cs", None, "pi_cs"),
                   att("evt_done", "fulfillment:cs_1"), *(att(f"e_{k}", k) for k in padding))
    seen = obs(10, "license:pi_own", "license:pi_cs", "fulfillment:cs_1", *padding)
    result = check_unexpected(history, exp("license:pi_own", "fulfillment:cs_1", *padding), [seen])
    assert [(f.key, f.message) for f in result.findings] == [
        ("license:pi_cs", "applied, but no validly sent event owes this key: evt_cs payment_intent.succeeded was validly "
                          "sent about pi_cs, and it owed no license of its own: a payment-mode Checkout Session made "
                          "this payment intent, and Stripe sends its payment_intent.succeeded beside the session's "
                          "checkout.session.completed (or async_payment_succeeded) for the same purchase, fulfilled "
                          "once, on the session's events (docs.stripe.com/checkout/fulfillment); acting on both "
                          "fulfils the order twice. Or it is an invoice's payment intent (a subscription's payment, "
                          "its description \"Subscription creation\" or \"Subscription update\"): the invoice owes "
                          "the effect, once, on its invoice.paid, which Stripe sends beside it "
                          "(docs.stripe.com/invoicing/payment-intents); acting on both grants each payment twice "
                          "(seen in the first read after delivering)")]


def test_a_counter_finding_names_the_ids_the_receiver_was_sent() -> None:
    """Where the provider's event id is not the world's (Standard Webhooks' ``msg_…`` webhook-id),
    a counter finding adds up the moves under the ids the receiver saw, and names their attempts."""
    from hookproof.scenarios.business_keys import CounterMove

    sent = [replace(att("msg_2Yb7", "renewal:in_1"), delivery_id="dlv_evt_1_0"),
            replace(att("msg_2Yb7", "renewal:in_1"), delivery_id="dlv_evt_1_1"),
            replace(att("msg_9Qx4", "renewal:in_2"), delivery_id="dlv_evt_2_0")]
    expectations = replace(exp("renewal:in_1", "renewal:in_2"), counters={"cus_1": 1500},
                           counter_events={"cus_1": (CounterMove("evt_1", "invoice.paid", 900),
                                                     CounterMove("evt_2", "invoice.paid", 600))})
    observed = replace(obs(20, "renewal:in_1", "renewal:in_2"), counters={"cus_1": 2400})
    result = ALL_CHECKS["counter"](hist(*sent), expectations, [observed])
    [finding] = [f for f in result.findings if f.key == "cus_1"]
    assert finding.message == ("counter is 2400; the provider's truth implies 1500 "
                               "(+900 invoice.paid msg_2Yb7, +600 invoice.paid msg_9Qx4)")
    assert finding.attempts == (0, 1, 2)


def test_a_counter_no_sent_event_moves_says_the_config_declares_none() -> None:
    """A counter the receiver shows that no declared counter event moves (a GitHub App counting
    comments per issue in the table the counter query reads, under a config declaring only its
    check suites' counter) is told as such, not only as a count the truth puts at 0."""
    from hookproof.scenarios.business_keys import CounterMove

    expectations = replace(exp("renewal:in_1"), counters={"cus_1": 900},
                           counter_events={"cus_1": (CounterMove("evt_1", "invoice.paid", 900),)})
    observed = replace(obs(20, "renewal:in_1"), counters={"cus_1": 900, "comments:acme/app#4": 2})
    result = ALL_CHECKS["counter"](hist(att("i1", "renewal:in_1")), expectations, [observed])
    [finding] = result.findings
    assert (finding.key, finding.expected, finding.actual) == ("comments:acme/app#4", 0, 2)
    assert finding.message == ("counter is 2; the provider's truth implies 0: no event sent moves this key under the "
                               "declared counters ([counters]): a counter the receiver keeps that the config does "
                               "not declare, or one it moved for an event that moves none")


@pytest.mark.parametrize("columns", [False, True])
def test_money_moved_once_per_duplicate_says_it_is_the_duplicated_finding(
        columns: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver that refunded twice shows one fault under two checks: ``counter``'s finding
    says its money moved once per time the key was applied (``duplicated``'s count); money off
    by anything else is worded as before."""
    from hookproof.scenarios import key_table

    monkeypatch.setattr(key_table, "SMALL", 0 if columns else 10 ** 9)
    history = hist(att("evt_r1", "refund:re_1"), att("evt_r1", "refund:re_1"), att("evt_r2", "refund:re_2"))
    expectations = exp("refund:re_1", "refund:re_2", money={"refund:re_1": 500, "refund:re_2": 700})
    observed = obs(20, "refund:re_1", "refund:re_1", Effect("refund:re_2", amount=600))
    result = ALL_CHECKS["counter"](history, expectations, [observed])
    assert [(f.key, f.message) for f in result.findings] == [
        ("refund:re_1", "moved 1000 instead of 500: its 500 once for each of the 2 times it was applied (duplicated)"),
        ("refund:re_2", "moved 600 instead of 700")]
