"""One paid invoice, one renewal: ``invoice.paid`` and ``invoice.payment_succeeded`` are the same payment.

Stripe sends both for every invoice paid by a payment, with the same invoice data
(docs.stripe.com/invoicing/integration, "Handle payment events"), so both owe the invoice's one
``renewal:{invoice}``: a SaaS extending access on ``invoice.paid`` alone passes, one extending it
on ``invoice.payment_succeeded`` alone passes, one extending it on both fails ``duplicated`` on
each paid invoice (tests/examples/invoice_access.py). An endpoint whose ``enabled_events`` leaves
``invoice.payment_succeeded`` out is never sent it, so the twin handling both passes there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.simulator.profiles.stripe import STRIPE_EVENT_TYPES, STRIPE_ONLY_EVENT_TYPES

SCENARIOS = ["duplicate-sequential", "dropped-response"]
#: Every type the stripe profile sends but ``invoice.payment_succeeded``.
WITHOUT_SUCCEEDED = [t for t in STRIPE_EVENT_TYPES + STRIPE_ONLY_EVENT_TYPES if t != "invoice.payment_succeeded"]
DUPLICATED = {"duplicate-sequential": ["duplicated"], "dropped-response": ["duplicated"]}


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("extend_on", "enabled", "failed"), [
    (0, None, {}), (1, None, {}), (2, None, DUPLICATED), (2, WITHOUT_SUCCEEDED, {}),
])
def test_a_paid_invoice_owes_one_renewal_on_either_event(tmp_path: Path, extend_on: int, enabled: list[str] | None,
                                                         failed: dict[str, list[str]]) -> None:
    cfg = receiver_config("invoice_access", tmp_path, "whsec_invoice_access_0123", seed=11, scenarios=SCENARIOS,
                          settle_window_s=0.15, options={"extend_on": extend_on},
                          module="tests.examples.invoice_access", cwd=PROJECT_ROOT)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": enabled})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    sent = {s.id: {a.event_type for a in s.attempts if a.business_key} for s in report.scenarios}
    wanted = {"invoice.paid", "invoice.payment_succeeded"} if enabled is None else {"invoice.paid"}
    assert all(wanted <= types for types in sent.values()), sent
    assert enabled is None or not any("invoice.payment_succeeded" in types for types in sent.values()), sent
    if failed:
        renewals = {f.key for s in report.scenarios for f in s.findings if f.check_id == "duplicated"}
        assert renewals and all(key.startswith("renewal:in_") for key in renewals), renewals
