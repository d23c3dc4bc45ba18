"""A storm judges ack latency on what the receiver controls, not on the sender's own delay.

Latencies count from when the request went on the wire, less the time the sender's loop
was noted late meanwhile (`storm_state.SenderLoad`); the workers tell the master how well
they kept up (`collect.Collector.sender`) and `verdict.sender_judged` reads that: a
sender-bound storm is said to be one, a lag that can explain a slow p99 makes the check
unknown (never a failure), and attempts that got no answer within the sender timeout
while the sender kept up fail it.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.loadtests.collect import Collector
from hookproof.loadtests.records import make_attempt
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.storm_state import SenderLoad
from hookproof.loadtests.verdict import sender_judged, storm_scenario
from hookproof.scenarios.checks import Verdict
from hookproof.scenarios.findings import ADVISORY, FINDING, CheckResult, Finding, result_of
from hookproof.scenarios.observations import Effect, Observation
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile

TIMEOUT_S = 10.0


def _latency(p99_ms: float, acked: int = 1000) -> CheckResult:
    """`check_ack_latency`'s result for acked attempts of this p99 (its findings included)."""
    stats: dict[str, object] = {"acked": acked, "p50_ms": 5.0, "p95_ms": 8.0, "p99_ms": p99_ms, "max_ms": p99_ms,
             "sender_timeout_ms": TIMEOUT_S * 1000.0}
    findings = []
    if p99_ms > TIMEOUT_S * 1000.0:
        findings.append(Finding("ack_latency", "*", f"ack p99 {p99_ms:.0f} ms exceeds the sender timeout 10000 ms"))
    elif p99_ms > TIMEOUT_S * 500.0:
        findings.append(Finding("ack_latency", "*", f"ack p99 {p99_ms:.0f} ms is over half the sender timeout 10000 ms",
                                severity=ADVISORY))
    return result_of("ack_latency", findings, stats)


def _sender(lag_ms: float = 0.0, wait_ms: float = 0.0, timed_out: int = 0, lagged: int = 0) -> dict[str, object]:
    return {"attempts": 1000, "lag_max_ms": lag_ms, "wait_max_ms": wait_ms, "timed_out": timed_out,
            "timed_out_lagged": lagged}


def test_a_fast_receiver_behind_a_saturated_sender_passes_and_the_storm_is_called_sender_bound() -> None:
    """The trial's storm: the sender waited 29 s for connections and its loop lagged 6 s;
    the receiver's answers, counted from the wire, came fast."""
    result = sender_judged(_latency(72.0), _sender(lag_ms=6208.0, wait_ms=29252.0), TIMEOUT_S)
    assert result.verdict is Verdict.VALID and result.findings == ()
    assert result.stats["sender_bound"] is True
    assert (result.stats["sender_lag_max_ms"], result.stats["sender_wait_max_ms"]) == (6208.0, 29252.0)


def test_a_slow_p99_the_sender_s_lag_explains_is_unknown_with_that_reason_never_a_failure() -> None:
    result = sender_judged(_latency(12000.0), _sender(lag_ms=6000.0), TIMEOUT_S)
    assert result.verdict is Verdict.UNKNOWN
    assert [f.severity for f in result.findings] == [ADVISORY]
    assert "sender-bound" in result.detail and "receiver's own latency is not known" in result.detail


def test_a_slow_p99_beyond_what_the_lag_explains_still_fails() -> None:
    result = sender_judged(_latency(15000.0), _sender(lag_ms=300.0), TIMEOUT_S)
    assert result.verdict is Verdict.INVALID
    assert [(f.severity, f.message) for f in result.findings] == [
        (FINDING, "ack p99 15000 ms exceeds the sender timeout 10000 ms")]


def test_a_receiver_answering_after_the_sender_timeout_fails_while_the_sender_kept_up() -> None:
    """Its attempts time out (none acked in time): each is slower than the timeout."""
    result = sender_judged(_latency(40.0, acked=900), _sender(lag_ms=30.0, timed_out=100), TIMEOUT_S)
    assert result.verdict is Verdict.INVALID
    assert [f.message for f in result.problems] == [
        "100 of 1000 attempts sent whole got no answer within the sender timeout 10000 ms (besides them: 900 "
        "acknowledged; an attempt answered with an error, or timed out before it was sent whole, is not counted here)"]
    assert result.stats["timed_out"] == 100 and result.stats["sender_bound"] is False
    offered = sender_judged(_latency(40.0, acked=900), _sender(lag_ms=30.0, timed_out=100), TIMEOUT_S, rate_per_s=50.0)
    assert [f.message for f in offered.problems] == [
        "100 of 1000 attempts sent whole got no answer within the sender timeout 10000 ms (besides them: 900 "
        "acknowledged; an attempt answered with an error, or timed out before it was sent whole, is not counted "
        "here) at 50 events/s offered, "
        "each unanswered attempt retried on top of them on the storm's compressed retry schedule (a receiver slow "
        "at any load fails at every --rate; one that fell behind passes at the rate it sustains)"]


def test_nothing_acked_and_everything_timed_out_fails_too() -> None:
    nothing = result_of("ack_latency", [], {"acked": 0, "applicability": "not applicable", "sender_timeout_ms": 1e4})
    result = sender_judged(nothing, _sender(timed_out=12), TIMEOUT_S)
    assert result.verdict is Verdict.INVALID and "applicability" not in result.stats
    assert [f.message for f in result.problems] == [
        "12 of 12 attempts sent whole got no answer within the sender timeout 10000 ms (besides them: 0 acknowledged; "
        "an attempt answered with an error, or timed out before it was sent whole, is not counted here)"]


def test_the_timed_out_finding_says_what_its_count_leaves_out() -> None:
    """A storm's finding read "2702 of 2834 attempts unanswered" beside a history of 16 acked
    and 3008 timed out: its count leaves out the timeouts the senders' lag explains and those
    before a request was sent whole. It now names the others it counts and what it leaves out."""
    result = sender_judged(_latency(40.0, acked=16), _sender(lag_ms=30.0, timed_out=2702, lagged=116), TIMEOUT_S)
    assert [f.message for f in result.problems] == [
        "2702 of 2834 attempts sent whole got no answer within the sender timeout 10000 ms (besides them: 16 "
        "acknowledged, 116 timed out while the senders' loop lagged half of it or more; an attempt answered with an "
        "error, or timed out before it was sent whole, is not counted here)"]


def test_timeouts_while_the_sender_s_loop_lagged_half_the_timeout_are_unknown() -> None:
    result = sender_judged(_latency(40.0, acked=900), _sender(lag_ms=8000.0, lagged=100), TIMEOUT_S)
    assert result.verdict is Verdict.UNKNOWN and result.findings == ()
    assert "100 of them while the senders' loop lagged" in result.detail


def test_a_few_timeouts_within_the_p99_pass() -> None:
    result = sender_judged(_latency(40.0, acked=999), _sender(timed_out=1), TIMEOUT_S)
    assert result.verdict is Verdict.VALID and result.findings == ()


def test_without_the_sender_s_report_the_result_is_unchanged() -> None:
    before = _latency(12000.0)
    assert sender_judged(before, None, TIMEOUT_S) is before


def test_the_collector_sums_the_workers_reports_and_keeps_the_worst_lag_and_wait() -> None:
    collector = Collector()
    assert collector.sender() is None
    collector.done("a", {"attempts": 10, "index": 0, "sender": _sender(lag_ms=10.0, wait_ms=900.0, timed_out=2)})
    collector.done("b", {"attempts": 10, "index": 1, "sender": _sender(lag_ms=250.0, wait_ms=5.0, lagged=1)})
    assert collector.sender() == {"attempts": 2000, "timed_out": 2, "timed_out_lagged": 1, "wait_max_ms": 900.0,
                                  "lag_max_ms": 250.0}


def test_the_lag_within_an_attempt_is_the_run_of_late_loop_up_to_its_end() -> None:
    """Only the loop's lateness that runs up to the attempt's end without a break counts:
    an answer that came before an on-time stretch would have been read in it."""
    load = SenderLoad()
    load.lagged(1.0, 1.005)  # under LAG_NOTED_S: only the maximum
    load.lagged(2.0, 3.5)
    load.lagged(4.0, 4.2)
    assert list(load.stalls) == [(2.0, 3.5), (4.0, 4.2)] and load.lag_max_s == 1.5
    assert load.lag_within(0.0, 1.9) == 0.0
    assert abs(load.lag_within(1.9, 3.55) - 1.5) < 1e-9  # read right after the stall
    assert load.lag_within(1.9, 3.6) == 0.0  # 100 ms of on-time loop after it: the answer came later
    assert abs(load.lag_within(3.0, 4.25) - 0.2) < 1e-9  # the earlier stall is behind an on-time stretch
    load.lagged(5.0, 5.2)
    load.lagged(5.25, 5.5)  # a probe's period apart: one run of lag
    assert abs(load.lag_within(4.9, 5.52) - 0.45) < 1e-9
    load.probing(6.0)  # the probe is overdue at 7.0: the loop is late now
    assert abs(load.lag_within(5.9, 7.0) - 1.0) < 1e-9
    load.waited(0.5)
    load.waited(2.0)
    assert load.report() == {"attempts": 2, "wait_max_ms": 2000.0, "lag_max_ms": 1500.0, "timed_out": 0,
                             "timed_out_lagged": 0}


def test_the_storm_report_carries_the_sender_s_load_and_stays_a_pass(tmp_path: Path) -> None:
    profile = get_profile("stripe")
    events = [Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                    object_id=f"in_{i}", version=1, object={}, business_key=f"renewal:in_{i}", amount=1500)
              for i in range(5)]
    attempts = [make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}", attempt=1, tags=(), profile=profile,
                             sent_at=1000.0 + i, latency_ms=4.0, status=200) for i, e in enumerate(events)]
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", duration_s=2.0, out_dir=str(tmp_path / "out"))
    obs = Observation(2000.0, tuple(Effect(e.business_key or "") for e in events))
    report = storm_scenario(spec, events, attempts, [obs], settled=True, started_at=1000.0, duration_s=5.0,
                            sender=_sender(lag_ms=900.0, wait_ms=4000.0))
    assert report.verdict == "pass"
    latency = next(c for c in report.checks if c.check_id == "ack_latency")
    assert latency.verdict == "valid" and latency.stats["sender_bound"] is True and latency.stats["sent"] == 5
