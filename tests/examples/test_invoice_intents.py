"""A subscription's payments, certified: Stripe sends each invoice's ``payment_intent.succeeded``
(and ``charge.succeeded``) beside its ``invoice.paid`` ("Invoices automatically create
PaymentIntents", docs.stripe.com/invoicing/payment-intents). One payment, one effect: the
invoice's ``renewal:``. A receiver granting a license on every ``payment_intent.succeeded`` as
well as the renewal on ``invoice.paid`` (fulfil_from_both) grants each subscription payment
twice and fails ``unexpected`` on the intents' licenses; the reference receiver, which skips an
invoice's intent (``made_by_invoice``), passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify

SECRET = "whsec_invoice_intents_0123456789"
SCENARIOS = ["duplicate-sequential"]


def _certify(name: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """`name` certified with no Checkout story (``checkout_modes = []``): every intent of the run is
    an invoice's or the shop's own one-off payment."""
    cfg = receiver_config(name, tmp_path, SECRET, seed=5, scenarios=SCENARIOS, settle_window_s=0.15)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"checkout_modes": []})})
    return certify(cfg, out_dir=tmp_path / "report").report


@pytest.mark.slow
def test_a_receiver_granting_on_every_intent_and_on_invoice_paid_is_unexpected_on_the_invoices_intents(
        tmp_path: Path) -> None:
    report = _certify("fulfil_from_both", tmp_path)
    (scenario,) = report.scenarios
    assert scenario.verdict == "fail"
    assert {f.check_id for f in scenario.findings} == {"unexpected"}
    sent = {a.event_id: a for a in scenario.attempts}
    intents = {a.object_id for a in sent.values() if a.event_type == "payment_intent.succeeded" and a.business_key is None}
    assert intents  # the invoices' intents were sent, owing no key of their own
    assert sorted(f.key for f in scenario.findings) == sorted(f"license:{pi}" for pi in intents)
    assert all("invoice's payment intent" in f.message and "the invoice owes the effect" in f.message
               for f in scenario.findings)
    # the invoices' renewals were applied once each: the payment is the invoice's
    assert any(a.event_type == "invoice.paid" and (a.business_key or "").startswith("renewal:")
               for a in sent.values())


@pytest.mark.slow
def test_the_reference_receiver_skipping_an_invoice_s_intent_passes(tmp_path: Path) -> None:
    report = _certify("inbox_sync", tmp_path)
    assert {s.id: s.verdict for s in report.scenarios} == {s: "pass" for s in SCENARIOS}, [
        f.message for s in report.scenarios for f in s.findings]
    sent = {(a.event_type, a.business_key is None) for s in report.scenarios for a in s.attempts}
    assert ("payment_intent.succeeded", True) in sent and ("charge.succeeded", True) in sent
