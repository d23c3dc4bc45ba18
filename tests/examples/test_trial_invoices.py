"""A shop with free trials: an endpoint listing ``customer.subscription.trial_will_end`` is told
a trial, started with Stripe's $0 invoice paid ("An immediate invoice is still created, but for
$0": docs.stripe.com/billing/subscriptions/trials), told three days before its end, then billed.
inbox_sync, which extends access once per paid invoice (the $0 one too), passes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.simulator.profiles import get_profile

SECRET = "whsec_trial_invoices_0123456789"


@pytest.mark.slow
def test_a_receiver_extending_access_on_every_paid_invoice_passes_a_trial(tmp_path: Path) -> None:
    cfg = receiver_config("inbox_sync", tmp_path, SECRET, seed=7,
                          scenarios=["duplicate-sequential", "reorder", "stale-after-newer"], settle_window_s=0.15)
    listed = [*get_profile("stripe").event_types(), "customer.subscription.trial_will_end"]
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": listed})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    assert {s.id: s.verdict for s in report.scenarios} == {
        "duplicate-sequential": "pass", "reorder": "pass", "stale-after-newer": "pass"}
    with sqlite3.connect(tmp_path / "inbox_sync.sqlite") as db:
        renewals = db.execute("SELECT business_key, amount FROM effects WHERE business_key LIKE 'renewal:%'").fetchall()
    # the first plan's, the trial's $0 invoice and its trial's end: once each
    assert len(renewals) == len(set(renewals)) == 3 and [a for _, a in renewals].count(0) == 1
    (reorder,) = [s for s in report.scenarios if s.id == "reorder"]
    assert [a.event_type for a in reorder.attempts].count("customer.subscription.trial_will_end") == 1
