"""Paddle's own stories for three catalog scenarios written over the billing world.

``related-burst``: each checkout's events (its transaction created, its new customer and address
created, the transaction ready, paid and completed, the subscription created and activated:
developer.paddle.com/webhooks/simulator/subscription-created)
released together; ``older-after-newer-redelivery``: two partial
refunds of one transaction approved (``adjustment.updated``, ``approved``), then the older redelivered;
``stale-failure-after-success``: a declined renewal recovered, its ``subscription.past_due``
delivered last. Every event parses with paddle-python-sdk's ``Event.from_dict``.
`paddle_billing` passes all three; its twin storing each status as it arrives ends the
subscription ``past_due`` (``stale``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paddle_billing.Entities.Event import Event as SdkEvent

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config_of

SCENARIOS = ["related-burst", "older-after-newer-redelivery", "stale-failure-after-success"]


def _plan(scenario: str) -> list[list[tuple[str, str | None]]]:
    profile = get_profile("paddle")
    plan = CATALOG[scenario].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan), plan
    for e in (e for p in plan.phases for e in p.events):
        SdkEvent.from_dict(json.loads(profile.envelope(e).body))  # Paddle's own shapes
    return [[(e.type, e.status) for e in p.events] for p in plan.phases]


def test_paddle_tells_each_story() -> None:
    checkout = [("transaction.created", "draft"), ("customer.created", "active"), ("address.created", "active"),
                ("transaction.updated", "ready"), ("transaction.ready", "ready"),
                ("transaction.updated", "paid"), ("transaction.paid", "paid"), ("subscription.created", "active"),
                ("subscription.activated", "active"), ("transaction.updated", "paid"),
                ("transaction.updated", "completed"), ("transaction.completed", "completed")]
    assert _plan("related-burst") == [checkout, checkout]
    # each refund owed on Paddle's approval (created pending_approval first), the second requested
    # once the first was approved
    assert _plan("older-after-newer-redelivery") == [[("adjustment.updated", "approved")] * 2,
                                                     [("adjustment.updated", "approved")]]
    assert _plan("stale-failure-after-success") == [
        [*checkout, ("subscription.updated", "active"), ("transaction.created", "billed"),
         ("transaction.billed", "billed"), ("transaction.updated", "past_due"), ("transaction.payment_failed", "past_due"),
         ("transaction.past_due", "past_due"), ("subscription.updated", "past_due"),
         ("transaction.updated", "paid"), ("transaction.paid", "paid"), ("transaction.updated", "completed"),
         ("transaction.completed", "completed"), ("subscription.updated", "active")],
        [("subscription.past_due", "past_due")]]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_arrival_order", {"stale-failure-after-success": ["stale"]}),
])
def test_paddle_s_stories_pass_a_correct_receiver_and_fail_its_twin(tmp_path: Path, module: str,
                                                                     failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    assert {s.id: s.verdict for s in report.scenarios if s.verdict not in ("pass", "fail")} == {}
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
