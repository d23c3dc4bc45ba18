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
from hookproof.scenarios.fetched_states import with_fetch_advice, with_fetched
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


def _report(message: str, check_id: str = "lost") -> ScenarioReport:
    from hookproof.reports.model import AttemptView

    attempt = AttemptView(index=4, event_id="e1", event_type="payment.updated", delivery_id="d1", attempt=1,
                          business_key="credit:123", object_id="123", faults=(), valid=True, sent_at=1.0,
                          answered_at=1.1, status=200, outcome="acked", completion="ok", latency_ms=3.0)
    finding = FindingView(check_id=check_id, key="credit:123", message=message, severity="finding", attempts=(4,),
                          expected=1, actual=0)
    return ScenarioReport("thin-event", "t", "d", "fail", (), checks=(
        CheckView(check_id=check_id, verdict="invalid", detail="1 finding(s)", stats={}, findings=(finding,)),),
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


HURRIED = ("; this scenario settled on the window alone ([settle] window_s = 0.3 s), not waiting for what the receiver "
           "owes, because another scenario of this run (duplicate-sequential), which settled before this one, fell "
           "short of it: an effect or a state a receiver applies later than that after it answers (a worker, a queue) "
           "reads as missing here; certify this scenario alone (hookproof certify thin-event --seed 7) "
           "with a fresh database, not the one this run kept, which already holds its business keys, to tell late "
           "from lost")


@pytest.mark.parametrize(("check_id", "message", "expected"), [
    ("lost", "acknowledged 1 time(s) but not applied by the end of settling",
     "acknowledged 1 time(s) but not applied by the end of settling" + HURRIED),
    ("stale", "object missing after settling", "object missing after settling" + HURRIED),
    # an object held in an older state: no lag told of (an arrival-order receiver's)
    ("stale", "final state is active (event evt_1, ...)", "final state is active (event evt_1, ...)"),
    ("lost", "never applied and never acknowledged: ...", "never applied and never acknowledged: ..."),
    ("duplicated", "acknowledged twice, applied twice", "acknowledged twice, applied twice"),
])
def test_a_hurried_scenario_s_lost_and_missing_findings_say_how_to_tell_late_from_lost(
        check_id: str, message: str, expected: str) -> None:
    from dataclasses import replace

    from hookproof.scenarios.fetched_states import with_hurried

    report = _report(message)
    check = report.checks[0]
    report = replace(report, checks=(replace(check, check_id=check_id, findings=tuple(
        replace(f, check_id=check_id) for f in check.findings)),))
    report = with_hurried(report, 0.3, "duplicate-sequential", "hookproof certify thin-event --seed 7")
    assert report.checks[0].findings[0].message == expected


def _lost_after(outcome: str, answered_at: float, object_id: str | None = "123") -> ScenarioReport:
    """`_report`'s acknowledged lost finding (attempt 4 of e1, sent at 1.0), beside an earlier
    attempt 2 of another event e0 of `object_id` that ended `outcome` at `answered_at`."""
    from dataclasses import replace

    from hookproof.reports.model import AttemptView

    report = _report("acknowledged 1 time(s) but not applied by the end of settling")
    earlier = AttemptView(index=2, event_id="e0", event_type="payment.created", delivery_id="d0", attempt=1,
                          business_key="credit:122", object_id=object_id, faults=(), valid=True, sent_at=0.5,
                          answered_at=answered_at, status=200, outcome=outcome, completion="ok", latency_ms=3.0)
    return replace(report, attempts=(earlier, *report.attempts))


UNEXPLAINED = ("; the receiver answered 2xx and applied nothing{}: a receiver does that when it takes the event for one "
               "it already handled (deduplicating on something other than `X-GitHub-Delivery`), skips it, or answers "
               "before its work commits")


@pytest.mark.parametrize(("report", "added"), [
    # an earlier event of the same object acknowledged before the first attempt was sent: named
    (_lost_after("acked", 0.9), ", after e0 (payment.created), an earlier event of the same object, was acknowledged"),
    (_lost_after("acked", 1.05), ""),  # answered after the lost one was sent
    (_lost_after("server_error", 0.9), ""),  # not acknowledged
    (_lost_after("acked", 0.9, object_id="999"), ""),  # another object
    (_lost_after("acked", 0.9, object_id=None), ""),
])
def test_an_unexplained_acknowledged_lost_finding_says_what_applies_nothing(report: ScenarioReport, added: str) -> None:
    from hookproof.scenarios.fetched_states import with_unexplained

    (finding,) = with_unexplained(report, "`X-GitHub-Delivery`").checks[0].findings
    assert finding.message == "acknowledged 1 time(s) but not applied by the end of settling" + UNEXPLAINED.format(added)


def test_an_unexplained_lost_finding_quotes_what_the_receiver_answered() -> None:
    """A twin deduplicating on the wrong id answered ``200 duplicate``: the finding quotes it."""
    from hookproof.scenarios.fetched_states import with_unexplained

    report = _lost_after("server_error", 0.9)
    answers = {4: '{"status": "duplicate", "note": "seen  before"}', 2: "ignored"}
    (finding,) = with_unexplained(report, "`X-GitHub-Delivery`", answers=lambda i: answers.get(i, "")).checks[0].findings
    assert finding.message.startswith("acknowledged 1 time(s) but not applied by the end of settling; the receiver "
                                      'answered 200 "{"status": "duplicate", "note": "seen before"}" and applied '
                                      "nothing: a receiver does that"), finding.message
    (plain,) = with_unexplained(report, "`X-GitHub-Delivery`", answers=lambda i: "").checks[0].findings
    assert "; the receiver answered 2xx and applied nothing: " in plain.message
    (restarted,) = with_unexplained(report, "`X-GitHub-Delivery`", restarted=True,
                                    answers=lambda i: answers.get(i, "")).checks[0].findings
    assert '; the receiver answered 200 "{"status": "duplicate", "note": "seen before"}" and nothing was applied ' \
           "by the end: this scenario restarted the receiver" in restarted.message
    # a queue's worker killed mid-job gets it back only once its lock expires, after settling may have ended
    assert restarted.message.endswith("applies it after settling ended (raise [settle] stall_s above that delay)")


@pytest.mark.parametrize("message", [
    "acknowledged 1 time(s) but not applied by the end of settling (when the receiver fetched 123, the provider API "
    "served it as charged_back)",
    "acknowledged 1 time(s) but not applied by the end of settling; settling reached its deadline ([settle] "
    "deadline_s = 15 s) before the receiver's reads showed it: ...",
    "never applied and never acknowledged: ...",
])
def test_a_lost_finding_something_else_explains_is_left_alone(message: str) -> None:
    from hookproof.scenarios.fetched_states import with_unexplained

    report = _report(message)
    assert with_unexplained(report, "`X-GitHub-Delivery`") is report


@pytest.mark.slow
@pytest.mark.parametrize(("name", "profile", "identity"), [
    ("dedupe_by_object_id", "stripe", "the event's `id`"),
])
def test_a_receiver_deduplicating_by_object_is_told_which_earlier_event_it_took_this_one_for(
        tmp_path: Path, name: str, profile: str, identity: str) -> None:
    from examples.receivers import config as receiver_config

    cfg = receiver_config(name, tmp_path, "whsec_unexplained_lost_0123456789", seed=11, settle_window_s=0.15)
    assert cfg.target.profile == profile
    [scenario] = certify(cfg, scenarios=["distinct-events-same-object"], out_dir=tmp_path / "out").report.scenarios
    assert scenario.verdict == "fail", scenario
    lost = [f for f in scenario.findings if f.check_id == "lost"]
    assert lost, scenario.findings
    for f in lost:
        assert f.message.startswith("acknowledged ") and (
            ", an earlier event of the same object, was acknowledged: a receiver does that when it takes the event for "
            f"one it already handled (deduplicating on something other than {identity})") in f.message, f.message


def _lost_after_topic(first: str, answered_at: float, object_id: str = "999") -> ScenarioReport:
    """An acknowledged lost ``orders/paid`` of one Shopify merchant action (attempt 4, sent at 1.0),
    beside attempt 2 of event `first` (its identity, ``{topic}:{X-Shopify-Event-Id}``) acknowledged at
    `answered_at`, about `object_id`."""
    from dataclasses import replace

    from hookproof.reports.model import AttemptView

    report = _report("acknowledged 1 time(s) but not applied by the end of settling")
    (lost,) = report.attempts
    earlier = AttemptView(index=2, event_id=first, event_type=first.split(":")[0], delivery_id="d0", attempt=1,
                          business_key=None, object_id=object_id, faults=(), valid=True, sent_at=0.5,
                          answered_at=answered_at, status=200, outcome="acked", completion="ok", latency_ms=3.0)
    return replace(report, attempts=(earlier, replace(lost, event_id="orders/paid:ev-1", event_type="orders/paid")))


SHOPIFY_UNEXPLAINED = ("; the receiver answered 2xx and applied nothing{}: a receiver does that when it takes the event "
                       "for one it already handled (deduplicating on something other than `X-Shopify-Topic` with "
                       "`X-Shopify-Event-Id`), skips it, or answers before its work commits{}")
SHOPIFY_WORDS = ('; X-Shopify-Event-Id is "a unique ID shared across all deliveries produced by the same merchant '
                 'action" (shopify.dev, "Webhooks delivery structure"): deduplicate on X-Shopify-Topic with it; '
                 '"Ignore duplicate webhooks"\' "the same value across more than one webhook indicates a duplicate" '
                 'holds within one topic')


@pytest.mark.parametrize(("report", "added", "words"), [
    # another topic of the same merchant action, acknowledged before: named, in Shopify's words,
    # before an earlier event of the same object would be
    (_lost_after_topic("customers/create:ev-1", 0.9),
     ", after customers/create:ev-1 (customers/create), another event sharing its id, was acknowledged", SHOPIFY_WORDS),
    (_lost_after_topic("orders/create:ev-1", 0.9, object_id="123"),
     ", after orders/create:ev-1 (orders/create), another event sharing its id, was acknowledged", SHOPIFY_WORDS),
    (_lost_after_topic("customers/create:ev-1", 1.05), "", ""),  # answered after the lost one was sent
    (_lost_after_topic("customers/create:ev-2", 0.9), "", ""),  # another action
    (_lost_after_topic("orders/create:ev-2", 0.9, object_id="123"),  # another action, the same object
     ", after orders/create:ev-2 (orders/create), an earlier event of the same object, was acknowledged", ""),
])
def test_a_receiver_deduplicating_on_a_shared_id_is_told_which_event_shared_it(report: ScenarioReport, added: str,
                                                                              words: str) -> None:
    from hookproof.scenarios.fetched_states import with_unexplained
    from hookproof.simulator.profiles import get_profile

    profile = get_profile("shopify")
    (finding,) = with_unexplained(report, profile.event_id_name, shared_id=profile.shared_id).checks[0].findings
    assert finding.message == ("acknowledged 1 time(s) but not applied by the end of settling"
                               + SHOPIFY_UNEXPLAINED.format(added, words))


@pytest.mark.parametrize("name", ["stripe", "paddle", "github", "mercadopago", "standard-webhooks"])
def test_no_other_provider_shares_an_event_id(name: str) -> None:
    from hookproof.simulator.profiles import get_profile

    assert get_profile(name).shared_id("customers/create:ev-1") is None


@pytest.mark.parametrize(("unowed", "added"), [
    # a Connect platform's twin keyed its sale by the platform, not the event's account: named, nothing guessed
    ({"credit:platform:123"}, "; the receiver applied credit:platform:123 instead, a key no event owed that names "
                              "the same 123: its key is made from other fields than the config's template says"),
    ({"credit:b:123", "credit:a:123"}, "; the receiver applied credit:a:123 (and 1 more) instead, a key no event owed "
                                       "that names the same 123: its key is made from other fields than the "
                                       "config's template says"),
    ({"credit:1234", "refund:9"}, UNEXPLAINED.format("")),  # another object's id: the usual words
    (set(), UNEXPLAINED.format("")),
])
def test_a_lost_key_applied_under_another_key_is_named(unowed: set[str], added: str) -> None:
    from hookproof.scenarios.fetched_states import with_unexplained

    (finding,) = with_unexplained(_report("acknowledged 1 time(s) but not applied by the end of settling"),
                                  "`X-GitHub-Delivery`", unowed=frozenset(unowed)).checks[0].findings
    assert finding.message == "acknowledged 1 time(s) but not applied by the end of settling" + added


def _missing(*answers: tuple[int, int | None, str, float]) -> ScenarioReport:
    """A scenario whose ``stale`` finding says sub_1 is missing, naming attempts (index, status,
    outcome, sent at) of one event."""
    from hookproof.reports.model import AttemptView

    attempts = tuple(AttemptView(index=i, event_id="evt_1", event_type="customer.subscription.updated",
                                 delivery_id="d1", attempt=n, business_key=None, object_id="sub_1", faults=(),
                                 valid=True, sent_at=at, answered_at=at + 0.1, status=status, outcome=outcome,
                                 completion="ok" if outcome == "acked" else "fail", latency_ms=3.0)
                     for n, (i, status, outcome, at) in enumerate(answers, 1))
    finding = FindingView(check_id="stale", key="sub_1", message="object missing after settling", severity="finding",
                          attempts=tuple(a.index for a in attempts))
    return ScenarioReport("provider-api-transient", "t", "d", "fail", (), checks=(
        CheckView(check_id="stale", verdict="invalid", detail="1 finding(s)", stats={}, findings=(finding,)),),
        attempts=attempts)  # type: ignore[call-arg]


def test_a_missing_object_s_finding_quotes_its_answers_and_names_a_handled_first_receiver() -> None:
    """A receiver marking an event processed before its work: its first attempt failed (500), the
    provider's retry was answered "duplicate" and nothing was stored. The finding said only "object
    missing after settling (attempts #188, #189)"."""
    from hookproof.scenarios.fetched_states import with_missing_answers

    bodies = {188: "internal error", 189: '{"received":true,"duplicate":true}'}
    report = with_missing_answers(_missing((188, 500, "server_error", 1.0), (189, 200, "acked", 2.0)),
                                  lambda i: bodies.get(i, ""))
    assert report.checks[0].findings[0].message == (
        'object missing after settling; its attempts: 500 "internal error" (#188), '
        '200 "{"received":true,"duplicate":true}" (#189): the retry of a failed attempt was acknowledged and nothing '
        "was stored, as a receiver that records an event as handled before its work commits does: the retry finds it "
        "handled")
    acked_once = with_missing_answers(_missing((7, 200, "acked", 1.0)), lambda i: "")
    assert acked_once.checks[0].findings[0].message == "object missing after settling; its attempts: 200 (#7)"
    timed_out = with_missing_answers(_missing(*[(i, None, "timeout", float(i)) for i in range(1, 7)]), lambda i: "")
    assert timed_out.checks[0].findings[0].message == (
        "object missing after settling; its attempts: timeout (#1), timeout (#2), timeout (#3), "
        "timeout (#4) and 2 more")


ADVICE = "Stripe advises fetching the object from the API when an event arrives (docs.stripe.com/webhooks, Event ordering)"
STALE = "final state is past_due (...), the provider's is active (...); the deliveries overlapped; "


@pytest.mark.parametrize(("check_id", "served", "expected"), [
    ("stale", ["active", "past_due", "past_due", "active"],
     STALE + "the receiver did fetch it from the provider API (123, served as active, then past_due, then active), "
     "and an earlier fetch's answer was written last: fetch and write under one lock per object (a row lock, "
     "select_for_update, or an advisory lock), so the answer of the latest fetch is the one kept"),
    ("regressed", ["active"], STALE + "the receiver did fetch it from the provider API (123, served as active), and an "
     "earlier fetch's answer was written last: fetch and write under one lock per object (a row lock, "
     "select_for_update, or an advisory lock), so the answer of the latest fetch is the one kept"),
    ("stale", [], STALE + ADVICE),  # never fetched: Stripe's advice stands
    ("lost", ["active"], STALE + ADVICE),  # not a state finding
])
def test_a_state_finding_of_a_fetched_object_replaces_the_advice_to_fetch(check_id: str, served: list[str],
                                                                          expected: str) -> None:
    report = with_fetch_advice(_report(STALE + ADVICE, check_id), {"123": served}.get, ADVICE)  # type: ignore[arg-type]
    assert report.checks[0].findings[0].message == expected
