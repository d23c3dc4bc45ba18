"""A fetching receiver's acknowledged ``lost`` finding says what the provider API served it.

`mercadopago_fetch_no_dedupe` applies the effect of the status (and status detail) it fetches;
in `thin-event` the notifications arrive newest first, so what it fetches is the payment's
latest state and the license of its approval is never applied. The finding says what it was
served ("when the receiver fetched <id>, the provider API served it as ..."), from the provider
API's log (`simulator.server.served`); the correct `mercadopago_fetch` passes.
The table tests pin the log and the note."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.reports.model import CheckView, FindingView, ScenarioReport
from hookproof.scenarios.fetched_states import with_fetched
from hookproof.simulator.server.served import ServedLog
from tests.examples.test_provider_receivers import config


def test_the_log_keeps_text_statuses_in_order_and_is_bounded() -> None:
    log = ServedLog(capacity=2)
    for object_id, status in [("1", "approved"), ("1", "charged_back"), ("1", None), ("2", "pending"), ("3", "x")]:
        log.add(object_id, status)
    assert log.statuses("1") == [] and log.statuses("2") == ["pending"] and log.statuses("3") == ["x"]
    log = ServedLog()
    log.add("1", "approved")
    log.add("1", "charged_back")
    assert log.statuses("1") == ["approved", "charged_back"] and log.statuses("9") == []


def _report(message: str) -> ScenarioReport:
    from hookproof.reports.model import AttemptView

    attempt = AttemptView(index=4, event_id="e1", event_type="payment.updated", delivery_id="d1", attempt=1,
                          business_key="credit:123", object_id="123", faults=(), valid=True, sent_at=1.0,
                          answered_at=1.1, status=200, outcome="acked", completion="ok", latency_ms=3.0)
    finding = FindingView(check_id="lost", key="credit:123", message=message, severity="finding", attempts=(4,),
                          expected=1, actual=0)
    return ScenarioReport("thin-event", "t", "d", "fail", (), checks=(
        CheckView(check_id="lost", verdict="invalid", detail="1 finding(s)", stats={}, findings=(finding,)),),
        attempts=(attempt,))  # type: ignore[call-arg]


@pytest.mark.parametrize(("message", "served", "expected"), [
    ("acknowledged 1 time(s) but not applied by the end of settling", ["charged_back", "charged_back"],
     "acknowledged 1 time(s) but not applied by the end of settling (when the receiver fetched 123, the provider API served it as "
     "charged_back)"),
    ("acknowledged 2 time(s) but not applied by the end of settling", ["approved", "refunded"],
     "acknowledged 2 time(s) but not applied by the end of settling (when the receiver fetched 123, the provider API served it as "
     "approved, then refunded)"),
    ("acknowledged 1 time(s) but not applied by the end of settling", [], "acknowledged 1 time(s) but not applied by the end of settling"),
    ("never applied and never acknowledged: ...", ["charged_back"], "never applied and never acknowledged: ..."),
])
def test_an_acknowledged_lost_finding_names_what_was_served(message: str, served: list[str], expected: str) -> None:
    report = with_fetched(_report(message), {"123": served}.get)  # type: ignore[arg-type]
    assert report.checks[0].findings[0].message == expected


@pytest.mark.slow
@pytest.mark.parametrize(("name", "verdict"), [("mercadopago_fetch", "pass"), ("mercadopago_fetch_no_dedupe", "fail")])
def test_a_receiver_deciding_on_the_fetched_status_is_told_what_it_was_served(
        tmp_path: Path, name: str, verdict: str) -> None:
    base = "mercadopago_fetch"
    cfg = config(base, tmp_path)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(base, name)})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    [scenario] = certify(cfg, scenarios=["thin-event"], out_dir=tmp_path / "out").report.scenarios
    assert scenario.verdict == verdict, scenario
    lost = [f for c in scenario.checks if c.check_id == "lost" for f in c.findings]
    assert bool(lost) == (verdict == "fail")
    for f in lost:
        payment = f.key.split(":")[1]
        assert f.message.startswith("acknowledged") and (
            f"(when the receiver fetched {payment}, the provider API served it as ") in f.message, f


@pytest.mark.parametrize(("settled", "message", "expected"), [
    (False, "acknowledged 1 time(s) but not applied by the end of settling",
     "acknowledged 1 time(s) but not applied by the end of settling; settling reached its deadline ([settle] "
     "deadline_s = 15 s) before the receiver's reads showed it: a receiver that applies after it answers (a worker, "
     "a queue) needs a deadline above its lag"),
    (True, "acknowledged 1 time(s) but not applied by the end of settling",
     "acknowledged 1 time(s) but not applied by the end of settling"),
    (False, "never applied and never acknowledged: ...", "never applied and never acknowledged: ..."),
])
def test_an_unsettled_scenario_s_lost_finding_names_the_deadline(settled: bool, message: str, expected: str) -> None:
    from dataclasses import replace

    from hookproof.scenarios.fetched_states import with_unsettled

    report = with_unsettled(replace(_report(message), settled=settled), 15.0)
    assert report.checks[0].findings[0].message == expected
