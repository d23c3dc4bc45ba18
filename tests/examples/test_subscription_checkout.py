"""A SaaS provisioning plans bought through subscription-mode Stripe Checkout.

Stripe's subscriptions guide provisions access on ``checkout.session.completed`` once the
session, in ``subscription`` mode, names its subscription (docs.stripe.com/billing/subscriptions/
build-subscriptions): the built-in key of such a completion is ``provision:{session}``. The
reference receivers (`hookproof.receivers.business`) provision once per key; ``no_dedupe``
provisions on every delivery. An endpoint subscribed to a SaaS's events (the session's
completion, the subscription's, its invoices') is certified over the scenarios whose stories
now buy a plan through Checkout: the correct receiver passes them, the twin fails
``duplicated`` on the provisioning of a subscription-mode session among its other keys. A
team's own rule keyed on the mode (``when = { "data.object.mode" = "subscription" }``) judges
the same deliveries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.config_model import Config
from hookproof.reports.model import ScenarioReport

pytestmark = pytest.mark.timeout(600)

SECRET = "whsec_subscription_checkout_0123"
SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "related-burst"]
#: What a SaaS selling plans through Checkout subscribes its endpoint to.
SAAS_EVENTS = ["checkout.session.completed", "customer.subscription.created", "customer.subscription.updated",
               "customer.subscription.deleted", "invoice.paid", "invoice.payment_failed"]


def _config(name: str, tmp_path: Path) -> Config:
    cfg = receiver_config(name, tmp_path, SECRET, seed=31, scenarios=SCENARIOS, settle_window_s=0.15)
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": SAAS_EVENTS})})


def _run(cfg: Config, tmp_path: Path) -> dict[str, ScenarioReport]:
    return {s.id: s for s in certify(cfg, out_dir=tmp_path / "report").report.scenarios}


def _provisions(report: ScenarioReport) -> set[str]:
    """The ``provision:`` keys the scenario's deliveries carried."""
    return {a.business_key for a in report.attempts if a.business_key and a.business_key.startswith("provision:")}


def test_a_receiver_provisioning_once_passes_every_story_buying_a_plan_through_checkout(tmp_path: Path) -> None:
    by_id = _run(_config("inbox_sync", tmp_path), tmp_path)
    assert {i: (s.verdict, s.reason) for i, s in by_id.items()} == {i: ("pass", None) for i in SCENARIOS}
    for scenario in SCENARIOS:  # each story delivered a subscription-mode completion, as a subscription-mode one
        sent = [a for a in by_id[scenario].attempts if a.event_type == "checkout.session.completed"]
        assert sent and len(_provisions(by_id[scenario])) == 1, scenario
    concurrent = [a for a in by_id["duplicate-concurrent"].attempts if a.business_key in
                  _provisions(by_id["duplicate-concurrent"])]
    assert len(concurrent) == 8  # the burst's copies of the completed session
    burst = by_id["related-burst"]
    session_events = {a.event_id for a in burst.attempts if a.event_type == "checkout.session.completed"}
    assert len(session_events) == 1  # released together with its subscription's first events


def test_a_receiver_provisioning_on_every_delivery_fails_duplicated_on_the_session(tmp_path: Path) -> None:
    by_id = _run(_config("no_dedupe", tmp_path), tmp_path)
    for scenario in ("duplicate-sequential", "duplicate-concurrent"):
        report = by_id[scenario]
        (provision,) = _provisions(report)
        found = {f.key: (f.expected, f.actual) for f in report.findings if f.check_id == "duplicated"}
        assert report.verdict == "fail" and provision in found, (scenario, report.findings)
        copies = 3 if scenario == "duplicate-sequential" else 8
        assert found[provision] == (1, copies)


def test_a_team_rule_on_the_session_s_mode_judges_the_same_deliveries(tmp_path: Path) -> None:
    """The team keys completions itself, a subscription-mode one by its mode (``when`` on
    ``data.object.mode``), a paid one otherwise, here as the built-in keys do: the correct
    receiver still passes, the twin still fails ``duplicated`` on the provisioning. (With the
    first rule alone, a payment-mode completion owes nothing, and fulfilling it is ``unexpected``.)"""
    from hookproof.config import parse_config

    mode_rule = ('[[business_keys."checkout.session.completed"]]\nkey = "provision:{data.object.id}"\n'
                 'when = { "data.object.mode" = "subscription" }\n')
    paid_rule = ('[[business_keys."checkout.session.completed"]]\nkey = "fulfillment:{data.object.id}"\n'
                 'when = { "data.object.payment_status" = "paid" }\n')
    head = '[target]\nurl = "http://127.0.0.1:9/h"\nsecret = "s"\n[observer]\nkind = "sink"\n'
    keys = parse_config(head + mode_rule + paid_rule).business_keys
    for name, verdict in (("inbox_sync", "pass"), ("no_dedupe", "fail")):
        cfg = _config(name, tmp_path / name).model_copy(update={"business_keys": keys})
        cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"scenarios": ["duplicate-sequential"]})})
        report = _run(cfg, tmp_path / name)["duplicate-sequential"]
        assert report.verdict == verdict, (name, report.reason, report.findings)
        if verdict == "fail":
            (provision,) = _provisions(report)
            assert provision in {f.key for f in report.findings if f.check_id == "duplicated"}
    # the mode's rule alone: the subscription-mode completion owes its provisioning, a payment-mode one nothing
    alone = parse_config(head + mode_rule).business_keys
    cfg = _config("inbox_sync", tmp_path / "alone").model_copy(update={"business_keys": alone})
    cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"scenarios": ["duplicate-sequential"]})})
    report = _run(cfg, tmp_path / "alone")["duplicate-sequential"]
    assert len(_provisions(report)) == 1
    assert {(f.check_id, f.key.split(":")[0]) for f in report.findings} == {("unexpected", "fulfillment")}
