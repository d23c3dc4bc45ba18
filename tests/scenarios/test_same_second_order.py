"""`stale-after-newer` over Stripe: events of one second, in order and out of it.

Stripe's ``created`` counts whole seconds. Besides the delayed past-due update, the scenario
tells a second subscription's failed renewal, its paid retry and its cancellation in one
second (`World.within_second`), sends the past-due and canceled events in order and the
recovery after the cancellation. Ordering state by ``created`` fails either way:
`timestamp_seconds_order` (``>``) drops the cancellation, `created_or_equal_order` (``>=``)
brings the canceled subscription back; `inbox_sync` (the object's version) and `fetch_state`
(the provider API) pass. Two seeds: the verdicts do not depend on which events the clock's
random steps happen to put in one second.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT, RECEIVERS
from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.demo import receiver_config as module_config
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World
from hookproof.simulator.world.world import SECOND_ROOM_US

SCENARIO = "stale-after-newer"
SECRET = "whsec_same_second_" + "0" * 22


@pytest.mark.parametrize("seed", [4242, 5242])
def test_the_second_subscription_changes_three_times_in_one_second(seed: int) -> None:
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("stripe")), World(seed))
    assert isinstance(plan, Plan)
    first, last = plan.phases
    tied = first.events[-3:] + last.events[-1:]
    assert [(e.type, e.status, e.version) for e in tied] == [
        ("customer.subscription.created", "active", 1), ("customer.subscription.updated", "past_due", 3),
        ("customer.subscription.deleted", "canceled", 5), ("customer.subscription.updated", "active", 4)]
    assert len({e.object_id for e in tied}) == 1 and len({e.created for e in tied[1:]}) == 1
    assert tied[0].created < tied[1].created
    assert [(e.status, e.version) for e in last.events[:1]] == [("past_due", 4)]  # the first subscription's


def test_within_second_moves_to_the_next_second_when_this_one_is_almost_over() -> None:
    w = World(1)
    cus = w.event(w.create_customer()).object_id
    sub = w.subscribe(cus)
    second = w.events[-1].created + 1
    w._now_us = second * 1_000_000 - SECOND_ROOM_US + 1  # the clock near the end of a second
    before = len(w.events)
    with w.within_second():
        w.cancel(sub)
    (deleted,) = w.events[before:]
    assert deleted.created == second and deleted.created_us % 1_000_000 < SECOND_ROOM_US
    w.create_customer()  # outside: the clock's random steps again
    assert w.events[-1].created_us - deleted.created_us > 1


@pytest.mark.parametrize("seed", [4242, 5242])
@pytest.mark.parametrize(("name", "verdict", "checks"), [
    ("inbox_sync", "pass", []),
    ("fetch_state", "pass", []),
    ("timestamp_seconds_order", "fail", ["stale"]),
    ("created_or_equal_order", "fail", ["regressed", "stale"]),
])
def test_ordering_by_created_seconds_fails_with_either_comparison(tmp_path: Path, seed: int, name: str,
                                                                  verdict: str, checks: list[str]) -> None:
    cfg = (receiver_config(name, tmp_path, SECRET, seed=seed, settle_window_s=0.15) if name in RECEIVERS else
           module_config(name, tmp_path, SECRET, seed=seed, settle_window_s=0.15,
                         module=f"tests.scenarios.{name}", cwd=PROJECT_ROOT))
    (scenario,) = certify(cfg, scenarios=[SCENARIO], out_dir=tmp_path / "report").report.scenarios
    assert (scenario.verdict, sorted({f.check_id for f in scenario.findings})) == (verdict, checks), scenario.reason
