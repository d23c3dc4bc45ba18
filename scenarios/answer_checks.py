"""Checks over how the receiver answered the deliveries.

A redelivery of an acked event must be acked too (``duplicate_acked``); a valid
delivery must get neither a 4xx (``valid_not_rejected``) nor, without an injected
fault, a 5xx (``no_server_error``); no event may take more attempts than allowed
(``retry_storm``); and acks must come well within the sender's timeout
(``ack_latency``).

The per-attempt checks scan only the attempts the shared `CheckIndex` marked notable
(invalid, or answered 4xx/5xx). ``ack_latency`` sorts the acked latencies (exact
quantiles, O(n log n), in C).
"""

from __future__ import annotations

import math
from typing import Sequence

from hookproof.scenarios import key_table as key_tables
from hookproof.scenarios.check_index import ANSWERED_NON_SUCCESS, CheckIndex, grouped_findings, index_for
from hookproof.scenarios.effect_checks import NO_EFFECT_TAGS
from hookproof.scenarios.findings import (
    ADVISORY,
    ALL_KEYS,
    FINDING,
    MAX_LISTED_ATTEMPTS,
    CheckResult,
    Finding,
    result_of,
)
from hookproof.scenarios.history_scan import AckedLatencies, scan_history
from hookproof.scenarios.observations import Expectations, Observation
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.delivery.mutations import OVERSIZE_BYTES
from hookproof.simulator.faults import REPLAY_TAG

#: Fault tags (as `simulator.faults` records them) that only shape deliveries: they
#: cannot make a correct receiver answer 5xx, so they do not excuse one.
BENIGN_FAULT_TAGS: frozenset[str] = frozenset({
    "drop-response", "sender-timeout", "reserialize", "transport-fields", "rotation", "rotation-own-first",
    "future-timestamp", REPLAY_TAG,
})
#: Prefixes of parameterised benign tags (``copies=3``, ``burst=8``, ``order=reversed``).
BENIGN_FAULT_PREFIXES: tuple[str, ...] = ("copies=", "burst=", "order=")
#: The tag of a delivery whose object the provider API refuses on its first fetch (a 404 or
#: a 500, then it recovers: the provider-api-transient scenario, explore's ``api_fault``, a
#: storm's ``--api-transient``; `scenarios.session.API_FAULT_TAG`, `loadtests.plan.API_TRANSIENT_TAG`).
PROVIDER_API_FAULT_TAG = "api-transient"


def injected_fault(tags: Sequence[str]) -> bool:
    """True when `tags` hold a fault that may explain a 5xx (any tag not known benign)."""
    return any(t not in BENIGN_FAULT_TAGS and not t.startswith(BENIGN_FAULT_PREFIXES) for t in tags)


def _after_ack(a: Attempt, window: tuple[float, float] | None) -> bool:
    """True when `a` was sent after another copy of its event had been acked."""
    return window is not None and a.sent_at >= window[1]


def _overlaps_ack(a: Attempt, window: tuple[float, float] | None) -> bool:
    """True when `a` ran while a copy of its event that got acked was in flight."""
    return window is not None and a.sent_at < window[1] and window[0] <= a.answered_at


def _rank(p: float, n: int) -> int:
    """The 0-based position of the nearest-rank percentile `p` (0–100) among `n` ascending values."""
    return max(1, math.ceil(p / 100 * n)) - 1


def check_duplicate_acked(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A redelivery of an already-acked event must be acked too (2xx, not 409; where the provider
    counts only some 2xx as delivered, `ProviderWords.success`, one of those, which the findings
    expect).

    Redelivery: a valid attempt sent after another copy of its event was acked; if it
    got an answer that is not a success (409, any 4xx or 5xx), the provider keeps
    retrying it for days: a finding. A copy that overlapped the acked one in time and
    was refused (e.g. 409 "in progress") is an advisory. A copy that overlapped it and
    got a 5xx while the provider API was refusing the fetch of its object (an injected
    provider-API fault, `PROVIDER_API_FAULT_TAG`) is an advisory naming that cause: the
    receiver failed on the provider's refusal, not on the concurrent copy.
    """
    idx = index_for(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if not a.valid or a.outcome not in ANSWERED_NON_SUCCESS:
            continue
        window = idx.ack_window(a.event_id)
        if _after_ack(a, window):
            groups.setdefault((a.event_id, "after"), []).append(pos)
        elif _overlaps_ack(a, window):
            api = a.status is not None and a.status >= 500 and PROVIDER_API_FAULT_TAG in (a.faults or ())
            groups.setdefault((a.event_id, "overlap_api" if api else "overlap"), []).append(pos)
    ok = _success(idx)
    findings = grouped_findings("duplicate_acked", groups, history, idx, {
        "after": (FINDING, ok, "{events} acknowledged {types} event(s) redelivered and refused {n} time(s) with "
                               "{statuses}{answer}; the provider retries them for days"),
        "overlap": (ADVISORY, ok, "{events} {types} event(s) whose concurrent copies were refused {n} time(s) with "
                                  "{statuses} while another copy was processed{answer}; the provider will retry them"),
        "overlap_api": (ADVISORY, ok, "{events} {types} event(s) answered {statuses} {n} time(s) while the provider API "
                                  "refused the receiver's fetch of its object (an injected transient: a 404 or a 500 on "
                                  "the first fetch, then it recovers), not because of the concurrent copy processed "
                                  "meanwhile; the provider will retry them"),
    })
    return result_of("duplicate_acked", findings, {"acked_events": len(idx.acked_events)})


def check_retry_storm(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """No event takes more attempts (all deliveries and retries) than allowed."""
    limit = expectations.max_attempts_per_event
    if limit is None:
        return result_of("retry_storm", [], {"applicability": "not applicable"})
    import numpy as np

    idx = index_for(history, expectations, observations, index)
    findings = []
    if len(idx.by_event) < key_tables.SMALL:  # a few events: a Python step each is cheaper than numpy
        sizes = np.fromiter((n for _, n in idx.by_event.sizes()), np.int64, len(idx.by_event))
    else:
        sizes = np.diff(idx.by_event.columns()[1])  # attempts per event, in the events' order
    most = int(sizes.max()) if len(sizes) else 0
    over = np.flatnonzero(sizes > limit).tolist()
    names = list(idx.by_event.codes) if over else []
    for code in over:
        event_id = names[code]
        positions = idx.by_event[event_id]
        findings.append(Finding("retry_storm", idx.label(history[positions[0]]),
                                f"event {event_id} took {len(positions)} attempts, more than {limit}",
                                expected=limit, actual=len(positions), attempts=idx.attempt_ids(positions)))
    return result_of("retry_storm", findings, {"max_attempts_per_event": limit, "most_attempts": most})


def check_valid_not_rejected(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A valid delivery must not get a 4xx (e.g. a receiver verifying re-serialized JSON).

    429 is an advisory (throttling), as is a 4xx to a future-dated delivery the
    profile's official verifier accepts (Stripe's SDK checks only the past: refusing it
    is stricter than the provider, DESIGN.md "What a receiver is held to"), and a 4xx to a
    secret rotation's signatures with the receiver's own first where an official verifier
    reads only the last (Paddle's Node SDK: `Profile.rotation_dispute`), named so. This holds
    for event types the receiver does not handle too: 2xx is the contract for those.
    Where the provider counts only some 2xx as delivered (`ProviderWords.success`: Mercado
    Pago's 200 or 201, a generic-hmac sender's ``success_statuses``, Lemon Squeezy's 200), a
    valid delivery answered with another 2xx is refused as far as the provider can tell, which
    retries it and marks it failed: a finding (``unaccepted``), and the other findings expect
    those statuses. Copies sent after, or overlapping, an acked copy of the same event are left to
    ``duplicate_acked``.
    """
    idx = index_for(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if not a.valid or a.status is None or not 200 <= a.status < 500 or 300 <= a.status < 400:
            continue
        window = idx.ack_window(a.event_id)
        if _after_ack(a, window) or _overlaps_ack(a, window):
            continue
        if a.status < 300:  # a 2xx graded a refusal: one the provider does not count as delivered
            category = "unaccepted"
        else:
            category = ("throttled" if a.status == 429 else "stricter" if "future-timestamp" in a.faults
                        else "rotation" if "rotation-own-first" in a.faults
                        else _oversized_category(idx) if "oversize" in a.faults else "rejected")
        groups.setdefault((a.event_id, category), []).append(pos)
    ok = _success(idx)
    findings = grouped_findings("valid_not_rejected", groups, history, idx, {
        "rejected": (FINDING, ok, "{events} valid {types} event(s) refused {n} time(s) with {statuses}{answer}"),
        "unaccepted": (FINDING, ok, "{events} valid {types} event(s) answered {statuses} {n} time(s){answer}; "
                                    + _unaccepted_words(idx)),
        "throttled": (ADVISORY, ok, "{events} valid {types} event(s) throttled {n} time(s) with {statuses}"),
        "stricter": (ADVISORY, ok, "{events} future-dated {types} event(s) refused {n} time(s) with "
                                   "{statuses}{answer}; " + _future_words(idx)),
        "rotation": (ADVISORY, ok, "{events} valid {types} event(s) signed for a secret rotation with the "
                                   "receiver's own signature first refused {n} time(s) with {statuses}{answer}; "
                                   + _rotation_words(idx)),
        "oversized": (FINDING, ok, "{events} valid {types} event(s) of " + _size_words() + " refused {n} "
                                   "time(s) with {statuses}{answer}; " + _cap_words(idx)),
        "oversized_retried": (ADVISORY, ok, "{events} valid {types} event(s) of " + _size_words() + " refused "
                                            "{n} time(s) with {statuses}{answer}; " + _retried_big_words(idx)),
    })
    return result_of("valid_not_rejected", findings, {"events": len(groups)})


def _success(idx: CheckIndex) -> str:
    """What a valid delivery's answer should be: the statuses the provider counts as delivered
    (`ProviderWords.success`: ``200``, ``200 or 201``), else ``2xx``."""
    provider = idx.expectations.provider
    return (provider.success if provider is not None else None) or "2xx"


def _unaccepted_words(idx: CheckIndex) -> str:
    """What the provider does with a 2xx it does not count as delivered, braces escaped for the
    template: it takes only `ProviderWords.success` and retries anything else."""
    provider = idx.expectations.provider
    title = provider.title if provider is not None else "the provider"
    success = _success(idx)
    retries = "retries the event and marks the delivery failed" if provider is None or provider.attempts > 1 \
        else "marks the delivery failed"
    return (f"{title} counts only {success} as delivered: it {retries}; answer {success}").replace(
        "{", "{{").replace("}", "}}")


def _oversized_category(idx: CheckIndex) -> str:
    """How a 4xx to an oversized valid delivery is judged: ``oversized`` (a finding) where the
    provider documents a payload cap above it (`ProviderWords.size_cap`, GitHub's 25 MB) and
    makes no retry, so the event is lost for good; else ``oversized_retried`` (an advisory):
    a provider that retries sends the same bytes on every retry, each refused alike, so the
    event is lost as surely, but whether it sends such a body at all is not documented, and a
    receiver bounding its bodies is a deliberate defence, not a mistake found in a test."""
    provider = idx.expectations.provider
    if provider is not None and provider.size_cap is not None and provider.attempts == 1:
        return "oversized"
    return "oversized_retried"


def _size_words() -> str:
    """``over 3 MiB``: the size of the body oversized-payload sends (at least `OVERSIZE_BYTES`)."""
    return f"over {OVERSIZE_BYTES // (1024 * 1024)} MiB"


def _cap_words(idx: CheckIndex) -> str:
    """The provider's documented cap and what it does with a refused delivery (`ProviderWords.size_cap`),
    braces escaped for the template."""
    provider = idx.expectations.provider
    words = (provider.size_cap if provider is not None else None) or "the provider sends bodies of this size"
    return words.replace("{", "{{").replace("}", "}}")


def _retried_big_words(idx: CheckIndex) -> str:
    """What a provider that retries does with a refused big body, braces escaped for the template."""
    provider = idx.expectations.provider
    title = provider.title if provider is not None else "the provider"
    return (f"{title} retries the same bytes, each refused alike, so the event is never applied: raise the "
            "receiver's body limit above the largest payload it is sent").replace("{", "{{").replace("}", "}}")


def _future_words(idx: CheckIndex) -> str:
    """Why refusing a future-dated delivery is stricter than the run's provider
    (`ProviderWords.future`: its verifier(s), the seconds ahead), braces escaped for the template."""
    provider = idx.expectations.provider
    words = provider.future if provider is not None else None
    words = words or ("the provider's official verifier accepts them, so a real delivery from a sender whose "
                      "clock runs ahead would be refused")
    return words.replace("{", "{{").replace("}", "}}")


def _rotation_words(idx: CheckIndex) -> str:
    """Why refusing a rotation's signatures with the receiver's own first is not required here
    (`ProviderWords.rotation`: the verifier that reads only the last), braces escaped for the
    template."""
    provider = idx.expectations.provider
    words = provider.rotation if provider is not None else None
    words = words or ("an official verifier of the provider reads only the last signature, so the order is not "
                      "required; a receiver refusing it refuses every delivery of a rotation that lists its secret "
                      "first")
    return words.replace("{", "{{").replace("}", "}}")


def check_no_server_error(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    *, index: CheckIndex | None = None,
) -> CheckResult:
    """A valid delivery with no injected fault must not get a 5xx.

    A 5xx on an attempt carrying an injected fault tag (`injected_fault`: any tag but
    the benign delivery-shaping ones, e.g. ``oversize`` or a chaos tag) is an advisory,
    as is a 5xx to an invalid delivery (it should have been a 4xx), except to another
    account's or the other mode's event whose object the receiver fetched and the provider
    API refused it (`Expectations.checked_foreign`): it cannot tell that 404 from an
    object not visible yet, which it must answer with an error so the provider retries
    (``unexpected`` accepts it too), so nothing is said. Duplicates, bursts, reordering
    and re-serialised bodies excuse nothing.
    """
    idx = index_for(history, expectations, observations, index)
    groups: dict[tuple[str, str], list[int]] = {}
    for pos in idx.notable:
        a = history[pos]
        if a.status is None or a.status < 500:
            continue
        if not a.valid and NO_EFFECT_TAGS.intersection(a.faults) and a.object_id in expectations.checked_foreign:
            continue  # it fetched the object and was refused it: its error answer is right (see above)
        category = "invalid" if not a.valid else ("faulted" if a.faults and injected_fault(a.faults) else "plain")
        groups.setdefault((a.event_id, category), []).append(pos)
    ok = _success(idx)
    findings = grouped_findings("no_server_error", groups, history, idx, {
        "plain": (FINDING, ok, "{events} valid {types} event(s) without injected fault answered {statuses} "
                           "{n} time(s){answer}"),
        "faulted": (ADVISORY, ok, "{events} valid {types} event(s) with an injected fault answered {statuses} "
                               "{n} time(s){answer}"),
        "invalid": (ADVISORY, "4xx", "{events} invalid {types} event(s) answered {statuses} {n} time(s); "
                               "a 4xx is expected"),
    })
    return result_of("no_server_error", findings, {"server_errors": sum(len(p) for p in groups.values())})


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
    if not len(scan.acked_latencies):
        return result_of("ack_latency", [], {"acked": 0, "applicability": "not applicable",
                                             "sender_timeout_ms": timeout_ms})
    import numpy as np

    kept = scan.acked_latencies
    read_now = isinstance(kept, AckedLatencies)
    acked = kept.values() if isinstance(kept, AckedLatencies) else kept  # a history file's: read now, for this check alone
    del kept
    n_acked = len(acked)
    ranks = [_rank(p, n_acked) for p in (50, 95, 99)] + [n_acked - 1]
    latencies: Sequence[float]
    if n_acked < key_tables.SMALL:
        latencies = sorted(acked)
    elif read_now:  # this check's own array: partitioned in place (a storm's million latencies not copied)
        own = np.frombuffer(acked, np.float64)
        own.partition(ranks)
        latencies = own  # type: ignore[assignment]
    else:  # in C, as floats: the four ranks read put in place (a partition, O(n)), the rest left unsorted
        latencies = np.partition(np.frombuffer(acked, np.float64), ranks)  # type: ignore[assignment]
    del acked
    p50, p95, p99, most = (float(latencies[r]) for r in ranks)
    stats: dict[str, object] = {"acked": n_acked, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99,
                                "max_ms": most, "sender_timeout_ms": timeout_ms}
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


__all__: Sequence[str] = [
    "BENIGN_FAULT_PREFIXES",
    "BENIGN_FAULT_TAGS",
    "check_ack_latency",
    "check_duplicate_acked",
    "check_no_server_error",
    "check_retry_storm",
    "check_valid_not_rejected",
    "injected_fault",
]
