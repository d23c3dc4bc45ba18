"""Shopify's fulfilment, certified: an order shipped, its ``fulfillment_status`` a state field.

A shop back-office subscribed to ``orders/fulfilled`` and ``orders/partially_fulfilled`` keeps each
order's ``financial_status`` and ``fulfillment_status`` newest-first (``[observer.state_fields]
order = { fulfillment_status = "fulfillment_status" }``). The catalog's state stories then ship the
order in two parcels (``partial``, then ``fulfilled``) before a return, and `reorder` and
`stale-after-newer` deliver its older versions last: `shopify_app` (``updated_at``, then
``X-Shopify-Triggered-At``, for both fields) passes; `shopify_app_fulfillment_by_arrival`, writing
``fulfillment_status`` from whichever event arrives last, leaves a shipped order unfulfilled
(``stale``). A config naming no fulfilment topic is told the stories it always was.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, TargetConfig
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import SHOPIFY_EVENT_TYPES, SHOPIFY_FULFILMENT_TOPICS
from tests.examples.test_provider_receivers import SECRETS, config_of

SHIPPING = [*SHOPIFY_EVENT_TYPES, *SHOPIFY_FULFILMENT_TOPICS]
FIELDS = {"order": {"fulfillment_status": "fulfillment_status"}}
STATE_QUERY = {"order": "SELECT object_id, status, fulfillment_status FROM orders"}
SCENARIOS = ["reorder", "stale-after-newer"]


def target(**fields: object) -> TargetConfig:
    return TargetConfig(url="http://127.0.0.1:9/webhooks", profile="shopify", secret=SECRETS["shopify"], **fields)


def _told(cfg: Config, scenario_id: str) -> list[tuple[str, str | None]]:
    ctx = Context(profile=cfg.profile(), enabled=frozenset(cfg.target.enabled_events or ()) or None,
                  state_fields=cfg.state_field_map())
    plan = CATALOG[scenario_id].plan(ctx, new_world("shopify", 3))
    assert isinstance(plan, Plan)
    return [(e.type, e.object.get("fulfillment_status")) for phase in plan.phases for e in phase.events
            if e.object_type == "order"]


def test_the_state_scenarios_ship_the_order_only_for_an_endpoint_sent_a_fulfilment_topic() -> None:
    observer = ObserverConfig(kind="sql", url="sqlite:///x.sqlite", effects="SELECT business_key, amount FROM e",
                              states=STATE_QUERY, state_fields=FIELDS)
    shipping = Config(target=target(enabled_events=SHIPPING), observer=observer)
    plain = Config(target=target(enabled_events=list(SHOPIFY_EVENT_TYPES)), observer=observer)
    assert shipping.subscribed_types() == list(SHOPIFY_FULFILMENT_TOPICS) and plain.subscribed_types() == []
    told = _told(shipping, "stale-after-newer")
    assert ("orders/fulfilled", "fulfilled") in told and ("orders/partially_fulfilled", "partial") in told
    assert told[-2:] == [("orders/create", None), ("orders/updated", None)]  # the pending order, then the tie
    assert {f for _, f in _told(plain, "stale-after-newer")} == {None}
    assert not {t for t, _ in _told(plain, "reorder")} & set(SHOPIFY_FULFILMENT_TOPICS)
    reordered = _told(shipping, "reorder")  # delivered newest first
    assert reordered[0] == ("orders/create", None) and reordered[-1] == ("orders/updated", "fulfilled")


def fulfilment_config(module: str, tmp_path: Path) -> Config:
    cfg = config_of("shopify_app", module, tmp_path)
    assert cfg.observer is not None
    return cfg.model_copy(update={
        "target": cfg.target.model_copy(update={"enabled_events": SHIPPING}),
        "observer": cfg.observer.model_copy(update={"states": STATE_QUERY, "state_fields": FIELDS})})


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("examples.receivers.shopify_app_fulfillment_by_arrival", {"reorder": ["stale"], "stale-after-newer": ["stale"]}),
])
def test_a_shipped_orders_fulfilment_status_is_kept_newest_first(tmp_path: Path, module: str,
                                                                 failed: dict[str, list[str]]) -> None:
    report = certify(fulfilment_config(module, tmp_path), scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    assert {s.id: s.verdict for s in report.scenarios} == {s: "fail" if s in failed else "pass" for s in SCENARIOS}
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    for finding in (f for s in report.scenarios for f in s.findings):
        assert re.search(r"final state is partially_refunded, fulfillment_status=null, the provider's is "
                         r"partially_refunded, fulfillment_status=fulfilled", finding.message), finding.message
