"""``related-burst`` on Mercado Pago: a payment's ``payment.created`` and ``payment.updated`` arrive together.

The race Mercado Pago's receivers meet most: a Pix payment paid at once, its created (pending)
and updated (approved) notifications delivered as one burst (explore's ``burst_related``).
Both fetches read the payment approved, so a receiver that records notification ids and then
checks for the license before inserting it, without a unique key, licenses it twice; the
reference receiver (one transaction, a unique business key) licenses it once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config


def test_related_burst_races_each_payments_created_and_updated_notifications() -> None:
    plan = CATALOG["related-burst"].plan(Context(profile=get_profile("mercadopago")), new_world("mercadopago", 5))
    assert isinstance(plan, Plan), plan
    assert plan.phases and all(p.race and p.together for p in plan.phases)
    for phase in plan.phases:
        created, updated = phase.events
        assert (created.type, created.status, created.business_key) == ("payment.created", "pending", None)
        assert (updated.type, updated.status) == ("payment.updated", "approved")
        assert created.object_id == updated.object_id and updated.business_key == f"license:{created.object_id}"


@pytest.mark.parametrize(("module", "verdict", "checks"), [
    ("examples.receivers.mercadopago_fetch", "pass", set()),
    ("tests.examples.mp_check_then_insert", "fail", {"duplicated"}),
])
def test_related_burst_finds_a_check_then_insert_of_the_license(
        tmp_path: Path, module: str, verdict: str, checks: set[str]) -> None:
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    start = base.target.start.model_copy(update={
        "command": base.target.start.command.replace("examples.receivers.mercadopago_fetch", module)})
    cfg = base.model_copy(update={"target": base.target.model_copy(update={"start": start})})
    (scenario,) = certify(cfg, scenarios=["related-burst"], out_dir=tmp_path / "report").report.scenarios
    blocking = [f for f in scenario.findings if f.severity == "finding"]
    assert (scenario.verdict, {f.check_id for f in blocking}) == (verdict, checks), \
        (scenario.reason, [f.message for f in scenario.findings])
    if verdict == "fail":
        assert all(f.key.startswith("license:") for f in blocking), [f.key for f in blocking]
