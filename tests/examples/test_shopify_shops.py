"""Which shop a Shopify delivery comes from, and a receiver erasing a shop's data.

shopify.dev's "Privacy law compliance" asks an app to "erase data for that store" on
``shop/redact`` (``shop_id`` and ``shop_domain`` name it), and order webhooks name their shop by
``X-Shopify-Shop-Domain`` alone, so apps key a shop's data by its domain. With no
``target.account`` each world is a shop of its own (a domain of its own beside its own shop id);
with one named, every scenario's deliveries come from that shop and its scenarios run one after
another. Either way `shopify_app`, which erases the shop's orders on ``shop/redact``, passes the
whole catalog: before, every world shared one domain while drawing its own shop id, and one
scenario's ``shop/redact`` erased the orders of the scenarios beside it (``stale``: object
missing; ``regressed`` where an older event then wrote it back).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from hookproof.scenarios.runner import scenario_seed
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import ShopifyWorld, shop_domain
from tests.examples.test_provider_receivers import config
from tests.examples.test_shopify_compliance import EVERY_TOPIC


def test_each_world_is_a_shop_of_its_own_unless_the_config_names_one() -> None:
    worlds = [new_world("shopify", seed) for seed in range(1, 6)]
    assert isinstance(worlds[0], ShopifyWorld)
    domains = [w.domain for w in worlds]  # type: ignore[attr-defined]
    assert len(set(domains)) == 5 and all(d.startswith("hookproof-") for d in domains)
    for world in worlds:  # the shop's own record and its events name one shop
        shop = world.get(str(world.shop_id))  # type: ignore[attr-defined]
        assert shop["domain"] == world.domain == shop_domain(world.lifecycle()[0].account)  # type: ignore[attr-defined]
    assert new_world("shopify", 1).domain == domains[0]  # type: ignore[attr-defined]  # a seed's shop again
    named = [new_world("shopify", seed, account="acme") for seed in (1, 2)]
    assert {w.domain for w in named} == {"acme.myshopify.com"}  # type: ignore[attr-defined]


def erasing_config(out: Path, account: str | None) -> Config:
    """`shopify_app` sent every topic, the compliance ones too, from `account`'s shop (None: each
    scenario's own), acting on every shop's webhooks."""
    cfg = config("shopify_app", out)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"env": {**cfg.target.start.env, "SHOP_DOMAIN": ""}})
    target = cfg.target.model_copy(update={"enabled_events": EVERY_TOPIC, "account": account, "start": start})
    return cfg.model_copy(update={"target": target})


@pytest.mark.slow
@pytest.mark.parametrize("account", [None, "acme"])
def test_a_receiver_erasing_a_shop_on_shop_redact_passes_the_whole_catalog(tmp_path: Path,
                                                                          account: str | None) -> None:
    cfg = erasing_config(tmp_path, account)
    report = certify(cfg, out_dir=tmp_path / "report").report
    ran = [s for s in report.scenarios if s.verdict != "not_applicable"]
    assert [(s.id, [f.message for f in s.findings]) for s in ran if s.verdict != "pass"] == []
    assert len(ran) == 18
    redacted = [s for s in ran if any(a.event_type == "shop/redact" and a.valid for a in s.attempts)]
    assert len(redacted) >= 6  # the scenarios sending the effect story's compliance topics
    spans = sorted((min(a.sent_at for a in s.attempts), max(a.answered_at for a in s.attempts))
                   for s in ran if s.attempts)
    overlapped = any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:]))
    assert overlapped == (account is None)  # one named shop: its scenarios one after another
    assert cfg.target.start is not None
    with sqlite3.connect(cfg.target.start.env["DATABASE"]) as db:
        kept = {shop for (shop,) in db.execute("SELECT DISTINCT shop FROM orders")}
    if account is None:  # each scenario's own shop: one's erasure never reaches another's orders
        shops = {s.id: new_world("shopify", scenario_seed(cfg.run.seed, s.id)).domain  # type: ignore[attr-defined]
                 for s in ran}
        ordered = {s.id for s in ran if any(a.event_type.startswith("orders/") and a.outcome == "acked"
                                            for a in s.attempts)}
        erased = {s.id for s in redacted}
        assert {shops[i] for i in ordered - erased} <= kept, (kept, shops, ordered, erased)
        assert len(kept) >= len(ordered - erased) >= 5
    else:  # one shop: whatever scenarios after its last erasure stored
        assert kept <= {"acme.myshopify.com"}
