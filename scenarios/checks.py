"""Checks: pure functions from (history, expectations, observations) to a verdict.

Modelled on Jepsen's checkers (``checker.clj``): each check returns a `CheckResult`
with a three-valued `Verdict` and its `Finding`s (`scenarios.findings`); `compose`
merges verdicts by priority (invalid beats unknown beats valid); `run_checks` builds the
shared `CheckIndex` once (`scenarios.check_index`) and guards every check so that one
that raises yields ``unknown`` with the error attached instead of crashing the run.

The checks live in `scenarios.effect_checks` (what the receiver applied: effects,
states, money, sink calls) and `scenarios.answer_checks` (how it answered the
deliveries); `ALL_CHECKS` lists them by id in report order. Every check is O(n) in the
history plus the observations; nothing loops over the history inside a loop over it.
This module re-exports the public names of those modules.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Iterable, Sequence

from hookproof.scenarios.answer_checks import (
    BENIGN_FAULT_PREFIXES,
    BENIGN_FAULT_TAGS,
    check_ack_latency,
    check_duplicate_acked,
    check_no_server_error,
    check_retry_storm,
    check_valid_not_rejected,
    injected_fault,
)
from hookproof.scenarios.check_index import CheckIndex, build_index
from hookproof.scenarios.effect_checks import (
    check_counter,
    check_downstream_idempotency,
    check_duplicated,
    check_lost,
    check_recovered,
    check_regressed,
    check_stale,
    check_unexpected,
)
from hookproof.scenarios.findings import (
    ADVISORY,
    ALL_KEYS,
    FINDING,
    MAX_LISTED_ATTEMPTS,
    CheckResult,
    Finding,
    Verdict,
    compose,
)
from hookproof.scenarios.observations import Expectations, Observation
from hookproof.simulator.delivery.history import Attempt, FaultOp

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


@functools.lru_cache(maxsize=256)
def _accepts_index(check: Check) -> bool:
    """Whether `check` takes the shared ``index`` keyword (its signature read once: explore
    runs the checks after every step, and reading it each time was a tenth to a quarter of their cost)."""
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


#: The checks over the receiver's answers, which every scenario's deliveries feed: they alone
#: compare nothing a scenario is about.
ANSWER_CHECKS: frozenset[str] = frozenset({"no_server_error", "valid_not_rejected"})


def nothing_compared(results: Iterable[CheckResult]) -> str | None:
    """Why a scenario compared nothing (README: "nothing compared is not a pass"): every one of
    its checks but the answer checks (`ANSWER_CHECKS`) is not applicable (its stats say
    ``applicability: not applicable``), e.g. state checks without a state query; the checks
    grouped by their detail. None when any of them compared something."""
    judged = [r for r in results if r.check_id not in ANSWER_CHECKS]
    if not judged or any(r.stats.get("applicability") != "not applicable" for r in judged):
        return None
    why: dict[str, list[str]] = {}
    for r in judged:
        why.setdefault(r.detail.removeprefix("not applicable: ") if r.detail.startswith("not applicable")
                       else "", []).append(r.check_id)
    parts = [f"{', '.join(ids)} not applicable" + (f" ({detail})" if detail else "") for detail, ids in why.items()]
    return "nothing compared: " + "; ".join(parts)


def unknown_reason(results: Iterable[CheckResult]) -> str | None:
    """Why a scenario whose checks compose to ``unknown`` is unknown: each unknown
    check's id and detail, ``; ``-joined (None when no check is unknown)."""
    reasons = [f"{r.check_id}: {r.detail}" for r in results if r.verdict is Verdict.UNKNOWN]
    return "; ".join(reasons) or None


def unfired_faults(ops: Iterable[FaultOp]) -> str | None:
    """Why a chaos scenario proves nothing: an armed fault that never fired.

    An ``arm`` operation (`chaos.nemesis.Nemesis.kill_after_ack`) must be followed by a
    ``kill`` before the next ``heal``: when the receiver answered too few 2xx (4xx/5xx
    to some events) the kill never happened and the scenario tested nothing. Returns the
    reason, or None when every armed fault fired. O(len(ops)).
    """
    armed: str | None = None
    unfired: list[str] = []
    for op in ops:
        if op.op == "arm":
            if armed is not None:
                unfired.append(armed)
            armed = op.detail or "an armed fault"
        elif op.op == "kill":
            armed = None
        elif op.op == "heal" and armed is not None:
            unfired.append(armed)
            armed = None
    if armed is not None:
        unfired.append(armed)
    if not unfired:
        return None
    return f"the armed fault never fired ({'; '.join(unfired)}): the receiver did not answer enough 2xx"


__all__: Sequence[str] = [
    "ADVISORY",
    "ALL_CHECKS",
    "ALL_KEYS",
    "ANSWER_CHECKS",
    "BENIGN_FAULT_PREFIXES",
    "BENIGN_FAULT_TAGS",
    "CheckIndex",
    "CheckResult",
    "FINDING",
    "Finding",
    "MAX_LISTED_ATTEMPTS",
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
    "nothing_compared",
    "run_checks",
    "unfired_faults",
    "unknown_reason",
]
