"""A small but complete hand-built `RunReport` for the renderer tests.

Three scenarios: one that passes (with an advisory), one that fails on a business key
(a timeout, a lost answer and an ack, with effects seen at counts 1 and 2, and an
undecided check), and one that does not apply. Its texts carry characters every format
must escape (``<``, ``&``, ``"``, ``|``, ``*``).
"""

from __future__ import annotations

from hookproof.reports.model import (
    AttemptView,
    ChecklistItem,
    CheckView,
    EffectPoint,
    FindingView,
    RunReport,
    ScenarioReport,
)

T0 = 1717243200.0  # 2024-06-01 12:00:00 UTC


def _attempt(index: int, delivery: str, attempt: int, key: str, sent: float, latency_ms: float,
             status: int | None, outcome: str, completion: str, *, event: str = "evt_1",
             event_type: str = "invoice.paid", faults: tuple[str, ...] = (), error: str | None = None,
             ) -> AttemptView:
    return AttemptView(
        index=index, event_id=event, event_type=event_type, delivery_id=delivery, attempt=attempt,
        business_key=key, object_id="in_1001", faults=faults, valid=True, sent_at=T0 + sent,
        answered_at=T0 + sent + latency_ms / 1000, status=status, outcome=outcome, completion=completion,
        latency_ms=latency_ms, error=error,
    )


def passing() -> ScenarioReport:
    key = "renewal:in_1001"
    attempts = tuple(
        _attempt(i, f"dlv_seq_{i}", 1, key, 0.1 + 0.05 * i, 12.5, 200, "acked", "ok", faults=("copy",) if i else ())
        for i in range(3)
    )
    return ScenarioReport(
        id="duplicate-sequential",
        title="Duplicate deliveries, one after another",
        description="The provider delivers the same event three times, a moment apart.",
        verdict="pass",
        checklist=("duplicates-tested", "retries-bounded"),
        checks=(
            CheckView("duplicated", "valid", stats={"keys_observed": 1, "observations": 4}),
            CheckView("lost", "valid", stats={"keys_acked": 1}),
            CheckView("unexpected", "valid"),
            CheckView("duplicate_acked", "valid", stats={"acked": 3, "rejected": 0}),
            CheckView("ack_latency", "valid", findings=(
                FindingView("ack_latency", "*", "p99 ack latency 12.5 ms; fine, but the handler does work "
                            "before answering", "advisory"),
            ), stats={"p99_ms": 12.5}),
        ),
        attempts=attempts,
        effects=(),
        duration_s=0.84,
    )


def failing() -> ScenarioReport:
    key = "license:pay_2002"
    attempts = (
        _attempt(3, "dlv_pay_a", 1, key, 1.0, 1000.0, None, "timeout", "unknown",
                 event="evt_2", event_type="payment_intent.succeeded", faults=("sender-timeout",),
                 error="read timed out after 1.000 s"),
        _attempt(4, "dlv_pay_a", 2, key, 2.2, 180.0, 200, "dropped", "unknown",
                 event="evt_2", event_type="payment_intent.succeeded", faults=("drop-response",)),
        _attempt(5, "dlv_pay_a", 3, key, 3.4, 95.0, 200, "acked", "ok",
                 event="evt_2", event_type="payment_intent.succeeded"),
        _attempt(6, "dlv_pay_b", 1, key, 3.45, 40.0, 500, "server_error", "unknown",
                 event="evt_2", event_type="payment_intent.succeeded", faults=("copy",)),
    )
    effects = (
        EffectPoint(key, T0 + 1.6, 1),
        EffectPoint(key, T0 + 2.5, 2),
    )
    duplicated = FindingView(
        "duplicated", key,
        'applied 2 times (observation 3 at 1717243202.500); expected <= 1 & "once"',
        "finding", attempts=(3, 4, 5), expected=1, actual=2,
    )
    return ScenarioReport(
        id="sender-timeout",
        title="The provider gives up before the answer",
        description="The provider stops waiting before the receiver answers and retries.",
        verdict="fail",
        checklist=("timeouts-tested", "persists-before-ack"),
        checks=(
            CheckView("duplicated", "invalid", findings=(duplicated,), stats={"keys_observed": 1},
                      detail="1 key applied more than once"),
            CheckView("lost", "valid", stats={"keys_acked": 1}),
            CheckView("unexpected", "valid"),
            CheckView("counter", "unknown", detail="the receiver did not settle within 5 s"),
        ),
        attempts=attempts,
        effects=effects,
        duration_s=4.25,
        settled=False,
    )


def not_applicable() -> ScenarioReport:
    return ScenarioReport(
        id="test-mode-to-live",
        title="A test-mode event sent to a live receiver",
        description="A livemode mismatch must have no effect.",
        verdict="not_applicable",
        checklist=("refuses-foreign",),
        reason="the receiver runs in test mode | set environment = \"live\" to run it",
    )


def sample_report() -> RunReport:
    """The run every golden file is rendered from."""
    return RunReport(
        tool_version="0.1.0",
        target="http://127.0.0.1:8000/webhooks/stripe?x=<1>&y=2",
        profile="stripe",
        environment="test",
        seed=20240601,
        started_at=T0,
        finished_at=T0 + 6.5,
        verdict="fail",
        scenarios=(passing(), failing(), not_applicable()),
        checklist=(
            ChecklistItem("duplicates-tested", "Survives duplicate deliveries", "pass", ("duplicate-sequential",)),
            ChecklistItem("timeouts-tested", "Survives sender timeouts and lost answers", "fail",
                          ("sender-timeout",)),
            ChecklistItem("persists-before-ack", "Persists before acknowledging", "fail", ("sender-timeout",)),
            ChecklistItem("refuses-foreign", "Ignores other accounts', the other mode's and unknown events", "untested",
                          ("test-mode-to-live",)),
            ChecklistItem("retries-bounded", "Answers so that retries stay bounded", "pass",
                          ("duplicate-sequential",)),
        ),
        history_file="history.sqlite",
    )
