"""`provider-api-transient` over Stripe: the faults reach the state a receiver fetches.

A receiver that follows Stripe's advice and fetches the subscription on each
``customer.subscription.*`` event, but marks the event processed before the fetch, loses the
state update when that fetch fails: its retry is skipped as already seen. The scenario fails
the first fetch of the effects' objects and of two subscriptions, each sent only its last
event (a later event would fetch it again and hide the loss). `fetch_state` (503 on a failed
fetch, nothing marked) passes; `mark_before_state_fetch` (effects from the payload, the state
fetched after the mark) fails with exactly ``stale``; a receiver that never fetches gets the
scenario not applicable, with the objects that were faulted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.demo import receiver_config as module_config
from hookproof.scenarios.catalog import CATALOG, FETCHED_TYPES, ApiFault, Context, Plan
from hookproof.scenarios.runner import unfetched_reason
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World

SCENARIO = "provider-api-transient"
SECRET = "whsec_api_transient_" + "0" * 20


def _plan(**ctx: object) -> Plan:
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("stripe"), **ctx), World(4242))  # type: ignore[arg-type]
    assert isinstance(plan, Plan), plan
    return plan


def test_each_subscription_is_sent_its_last_event_and_its_first_fetch_fails() -> None:
    plan = _plan()
    (phase,) = plan.phases
    subs = [e for e in phase.events if e.object_type == "subscription"]
    assert [(e.type, e.status, e.version) for e in subs] == [
        ("customer.subscription.updated", "active", 2), ("customer.subscription.deleted", "canceled", 3)]
    assert {e.type for e in phase.events if e.object_type != "subscription"} <= FETCHED_TYPES
    faulted = {e.object_id for e in phase.events} | {e.id for e in phase.events}
    assert set(plan.api_faults) == faulted
    # never a 404: Stripe's is "no such object", which a receiver may take as deleted (dj-stripe does)
    assert sorted((plan.api_faults[e.object_id] for e in subs), key=lambda f: f.status) == [
        ApiFault(status=500), ApiFault(status=503)]  # the two alternate along the story
    assert not any(f.not_found for f in plan.api_faults.values())
    assert "stale" in CATALOG[SCENARIO].checks


def test_the_not_applicable_reason_names_the_faulted_objects() -> None:
    plan = _plan()
    objects = [e.object_id for e in plan.phases[0].events]
    assert unfetched_reason(plan) == (
        f"the provider API was set to fail the first fetch of each of the {len(objects)} delivered objects "
        f"({', '.join(objects[:4])} and {len(objects) - 4} more) and of their events; "
        "the receiver fetched none of them, so no fault fired")


def _certify(cfg: object, out: Path) -> tuple[str, list[str], str | None]:
    (scenario,) = certify(cfg, scenarios=[SCENARIO], out_dir=out).report.scenarios  # type: ignore[arg-type]
    return scenario.verdict, sorted({f.check_id for f in scenario.findings}), scenario.reason


@pytest.mark.parametrize(("name", "verdict", "checks"), [
    ("fetch_state", "pass", []),
    ("mark_before_state_fetch", "fail", ["stale"]),
])
def test_a_state_fetch_must_not_be_marked_before_it_succeeds(tmp_path: Path, name: str, verdict: str,
                                                             checks: list[str]) -> None:
    cfg = (receiver_config(name, tmp_path, SECRET, seed=4242, settle_window_s=0.15) if name == "fetch_state" else
           module_config(name, tmp_path, SECRET, seed=4242, settle_window_s=0.15,
                         module=f"tests.scenarios.{name}", cwd=PROJECT_ROOT))
    got_verdict, got_checks, reason = _certify(cfg, tmp_path / "report")
    assert (got_verdict, got_checks) == (verdict, checks), reason


def test_a_receiver_that_never_fetches_is_told_which_objects_were_faulted(tmp_path: Path) -> None:
    cfg = receiver_config("inbox_sync", tmp_path, SECRET, seed=4242, settle_window_s=0.15)
    verdict, checks, reason = _certify(cfg, tmp_path / "report")
    assert (verdict, checks) == ("not_applicable", [])
    assert reason is not None and reason.startswith("the provider API was set to fail the first fetch of each of the 8 ")
    assert reason.endswith("the receiver fetched none of them, so no fault fired")
