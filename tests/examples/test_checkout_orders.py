"""One Checkout purchase, one order: a paid payment-mode session's intent's events are the same purchase.

Stripe sends a paid payment-mode Checkout Session's ``payment_intent.succeeded`` and
``charge.succeeded`` beside ``checkout.session.completed`` (and a delayed method's beside
``checkout.session.async_payment_succeeded``). A team keying its orders by the payment intent
(``order:{data.object.payment_intent}`` on the session's events, ``order:{data.object.id}`` on
the intent's) owes one order per purchase: a shop fulfilling on the session's events alone
passes, one fulfilling on ``payment_intent.succeeded`` alone passes, one fulfilling on both
fails ``duplicated`` on each Checkout order (tests/examples/checkout_orders.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.config import parse_config
from hookproof.demo import receiver_config

SCENARIOS = ["duplicate-sequential", "dropped-response"]
EVENTS = ["checkout.session.completed", "checkout.session.async_payment_succeeded", "payment_intent.succeeded",
          "charge.succeeded"]
#: Every purchase keyed by its payment intent: a Checkout Session's by the intent it made, a one-off
#: payment (its own payment intent, no session) by its intent.
KEYS = ('[business_keys]\n"checkout.session.async_payment_succeeded" = "order:{data.object.payment_intent}"\n'
        '"payment_intent.succeeded" = "order:{data.object.id}"\n'
        '[[business_keys."checkout.session.completed"]]\nkey = "order:{data.object.payment_intent}"\n'
        'when = { "data.object.mode" = "payment", "data.object.payment_status" = "paid" }\n')


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("fulfil_on", "failed"), [
    (0, {}), (1, {}), (2, {"duplicate-sequential": ["duplicated"], "dropped-response": ["duplicated"]}),
])
def test_a_checkout_purchase_owes_one_order_under_the_team_s_keys(tmp_path: Path, fulfil_on: int,
                                                                  failed: dict[str, list[str]]) -> None:
    cfg = receiver_config("checkout_orders", tmp_path, "whsec_checkout_orders_0123", seed=11, scenarios=SCENARIOS,
                          settle_window_s=0.15, options={"fulfil_on": fulfil_on},
                          module="tests.examples.checkout_orders", cwd=PROJECT_ROOT)
    head = '[target]\nurl = "http://127.0.0.1:9/h"\nsecret = "s"\n[observer]\nkind = "sink"\n'
    cfg = cfg.model_copy(update={"business_keys": parse_config(head + KEYS).business_keys,
                                 "target": cfg.target.model_copy(update={"enabled_events": EVENTS})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    sent = {s.id: {a.event_type for a in s.attempts if a.business_key} for s in report.scenarios}
    assert all({"checkout.session.completed", "payment_intent.succeeded"} <= types for types in sent.values()), sent
    if failed:
        orders = {f.key for s in report.scenarios for f in s.findings if f.check_id == "duplicated"}
        assert orders and all(key.startswith("order:pi_") for key in orders)
