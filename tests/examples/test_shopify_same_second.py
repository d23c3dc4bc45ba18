"""Shopify's ``updated_at`` counts whole seconds: two changes of one order in one second.

An order paid, partly refunded and cancelled within one second carries one ``updated_at`` in
each event; ``X-Shopify-Triggered-At`` (nine fractional digits) orders them. `stale-after-newer`
under the shopify profile tells that story and delivers the partial refund's ``orders/updated``
after the cancellation: `shopify_app` (``updated_at``, then ``X-Shopify-Triggered-At``) passes;
its twin guarding with ``stored updated_at <= incoming`` lets the older payload overwrite the
newer (``regressed``, ``stale``), with a finding that names the tie and how to break it; a guard
with ``<`` alone keeps the first of the second and misses the cancellation (``stale``).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.scenarios.world_ops import ops_for
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config_of

SCENARIO = "stale-after-newer"


def _second(event_updated_at: str) -> int:
    return int(datetime.fromisoformat(event_updated_at).timestamp())


@pytest.mark.parametrize("seed", range(6))
def test_the_same_second_story_ties_on_updated_at_and_not_on_the_trigger(seed: int) -> None:
    profile = get_profile("shopify")
    events = new_world("shopify", seed).same_second_story()
    assert [(e.type, e.status) for e in events] == [
        ("orders/create", "pending"), ("orders/paid", "paid"), ("orders/updated", "partially_refunded"),
        ("orders/updated", "refunded"), ("orders/cancelled", "refunded")]
    seconds = {_second(e.object["updated_at"]) for e in events[1:]}
    assert len(seconds) == 1 and _second(events[0].object["updated_at"]) < seconds.pop()
    triggered = [profile.envelope(e).headers["X-Shopify-Triggered-At"] for e in events]
    assert triggered == sorted(triggered) and len(set(triggered)) == len(triggered)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", t) for t in triggered)


@pytest.mark.parametrize("seed", range(4))
def test_every_order_event_is_triggered_in_its_updated_at_second(seed: int) -> None:
    """What a ``stale`` finding's tie rests on (`BodyTime`): an order event's trigger falls in
    the second of its body's ``updated_at``, so triggers in one second mean one ``updated_at``."""
    world = new_world("shopify", seed)
    world.lifecycle()
    world.same_second_story()
    world.state_story()
    orders = [e for e in world.events if e.object_type == "order"]
    assert len(orders) > 10
    assert all(e.created_us // 1_000_000 == _second(e.object["updated_at"]) for e in orders)


def test_the_scenario_sends_the_partial_refund_after_the_cancellation() -> None:
    profile = get_profile("shopify")
    plan = CATALOG[SCENARIO].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan)
    newer, older = plan.phases
    (partial,) = [e for e in older.events if e.status == "partially_refunded"]
    tied = [e for e in newer.events if e.object_id == partial.object_id]
    assert [e.status for e in tied] == ["pending", "paid", "refunded", "refunded"]
    assert {e.object["updated_at"] for e in tied[1:]} == {partial.object["updated_at"]}


def test_explore_can_cancel_an_order_within_one_second() -> None:
    ops = ops_for("shopify")
    world = new_world("shopify", 3)
    ops.apply(world, "checkout_manual", None)
    assert ("quick_cancel", 0) in ops.legal(world)
    start = len(world.events)
    ops.apply(world, "quick_cancel", 0)
    order = [e for e in world.events[start:] if e.object_type == "order"]
    assert [e.status for e in order] == ["paid", "partially_refunded", "refunded", "refunded"]
    assert len({e.object["updated_at"] for e in order}) == 1
    assert ("quick_cancel", 0) not in ops.legal(world) and ops.moves["quick_cancel"] == "order"


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("examples.receivers.shopify_app_same_second_overwrite", {SCENARIO: ["regressed", "stale"]}),
    ("tests.examples.shopify_updated_at_strict", {SCENARIO: ["stale"]}),
])
def test_a_same_second_tie_is_broken_by_the_trigger_time(tmp_path: Path, module: str,
                                                         failed: dict[str, list[str]]) -> None:
    report = certify(config_of("shopify_app", module, tmp_path), scenarios=[SCENARIO, "reorder"],
                     out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    for finding in (f for s in report.scenarios for f in s.findings if f.check_id == "stale"):
        assert re.search(r"both carry updated_at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-05:00, so a receiver cannot order "
                         r"them by updated_at alone: it counts whole seconds; break the tie with "
                         r"X-Shopify-Triggered-At", finding.message), finding.message
