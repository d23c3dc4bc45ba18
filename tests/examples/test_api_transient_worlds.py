"""`provider-api-transient` over the worlds whose provider API hookproof serves, with real receivers.

The provider API answers 404 ("not visible yet") or 500 to the first fetch of each object
the scenario delivers, then recovers. `mercadopago_fetch` (the official SDK's
``payment().get``) and `shopify_app_fetch` (the Admin API's order), each answering a failed
fetch 503 so the provider retries, must pass; their twins `*_ack_drop` (a failed fetch
answered 200, nothing applied) must fail with `lost`, and with `stale` for the payment or
order they never recorded (Mercado Pago's license also moves the amounts' `counter`). A
receiver that never fetches gets the scenario not applicable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config

SCENARIO = "provider-api-transient"


@pytest.mark.parametrize("kind", ["github", "mercadopago", "paddle", "shopify"])
def test_the_scenario_applies_to_every_world_the_provider_api_serves(kind: str) -> None:
    profile = get_profile(kind)
    world = new_world(kind, 4242)
    plan = CATALOG[SCENARIO].plan(Context(profile=profile), world)
    assert isinstance(plan, Plan), plan
    delivered = [e for phase in plan.phases for e in phase.events]
    assert delivered and set(plan.api_faults) == {e.object_id for e in delivered}
    assert {a.not_found for a in plan.api_faults.values()} == ({True, False} if len(plan.api_faults) > 1 else {True})
    if not profile.retry_schedule_s:  # GitHub: the first attempts, then the manual redelivery
        assert len(plan.phases) == 2 and plan.phases[0].events == plan.phases[1].events
    no_api = CATALOG[SCENARIO].plan(Context(profile=profile, fetches_state=False), new_world(kind, 4242))
    assert no_api == NotApplicable("the receiver has no provider API to fetch from")


CASES = [
    ("mercadopago_fetch", "mercadopago_fetch", {}),
    ("mercadopago_fetch", "mercadopago_fetch_ack_drop", {SCENARIO: ["counter", "lost", "stale"]}),
    ("paddle_billing_fetch", "paddle_billing_fetch", {}),
    ("paddle_billing_fetch", "paddle_billing_fetch_ack_drop", {SCENARIO: ["lost", "stale"]}),
    ("shopify_app_fetch", "shopify_app_fetch", {}),
    ("shopify_app_fetch", "shopify_app_fetch_ack_drop", {SCENARIO: ["lost", "stale"]}),
]


def test_every_scenario_twin_is_certified_here() -> None:
    from examples.receivers import SCENARIO_TWINS

    assert {name for _, name, failed in CASES if failed} == set(SCENARIO_TWINS)


@pytest.mark.parametrize(("base", "name", "failed"), CASES)
def test_a_fetching_receiver_must_not_ack_a_failed_fetch(tmp_path: Path, base: str, name: str,
                                                          failed: dict[str, list[str]]) -> None:
    cfg = config(base, tmp_path)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(base, name)})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    report = certify(cfg, scenarios=[SCENARIO], out_dir=tmp_path / "report").report
    (scenario,) = report.scenarios
    assert scenario.verdict != "not_applicable", scenario.reason
    got = {scenario.id: sorted({f.check_id for f in scenario.findings})} if scenario.verdict != "pass" else {}
    assert got == failed
