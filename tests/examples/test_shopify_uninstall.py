"""After a shop uninstalls the app, Shopify sends the app nothing more of it, and the app may
erase the shop's data.

A new user's receiver erased a shop's orders on ``app/uninstalled`` (and, in a second version,
ignored the shop's webhooks after it): explore went on checking out orders in the uninstalled
shop and blamed overlapping deliveries when the late ``orders/create`` of one made its order
again; certify's mass-redelivery told the state story in that shop after its uninstall, then
found the effect story's order "missing" once the receiver had erased it. Now a world's stories
after the uninstall are another shop's (`ShopifyWorld._next_shop`; a config's named shop
installs the app again), the uninstalled shop's objects change no more, and the state checks
judge none of the objects a receiver may have erased (`ShopifyProfile.erasable`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.world_ops import _shopify_legal
from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles.registry import get_profile
from hookproof.simulator.world.shopify import ShopifyWorld, shop_domain
from tests.examples.test_shopify_shops import erasing_config


def test_after_an_uninstall_the_next_stories_are_another_shop_s() -> None:
    world = ShopifyWorld(7)
    first = world.effect_story()
    assert first[-1].type == "app/uninstalled"
    gone, gone_shop = first[-1].account, world.shop_id
    gone_orders = world.objects("order")
    later = world.state_story()
    profile = get_profile("shopify")
    assert {e.account for e in first} == {gone} and {e.account for e in later} == {f"{gone}-2"}
    assert world.shop_id != gone_shop and world.domain == shop_domain(f"{gone}-2")
    for event in later:  # one shop in the header and the body
        envelope = profile.envelope(event)
        assert envelope.headers["X-Shopify-Shop-Domain"] == world.domain
        assert f"/{world.shop_id}/orders/" in json.loads(envelope.body)["order_status_url"]
    assert world.get(str(world.shop_id))["myshopify_domain"] == world.domain
    with pytest.raises(WorldError, match="which uninstalled the app"):
        world.refund(gone_orders[0])
    assert not world.owns(gone_orders[0]) and world.owns(later[0].object_id)
    assert world.uninstalls == 1 and "app/uninstalled" not in {e.type for e in world.effect_story()}  # once


def test_a_named_shop_installs_the_app_again() -> None:
    world = ShopifyWorld(7, account="acme")
    world.effect_story()
    later = world.state_story()
    assert {e.account for e in later} == {"acme"} and world.installed


def test_explore_changes_nothing_of_an_uninstalled_shop() -> None:
    world = ShopifyWorld(3)
    world.place_order()
    before = _shopify_legal(world)
    assert ("uninstall", None) in before and ("refund", 0) in before
    world.uninstall()
    after = _shopify_legal(world)
    assert after == [("sign_up", None), ("checkout", None), ("checkout_manual", None)]
    world.place_order()  # another shop's checkout
    again = _shopify_legal(world)
    assert ("refund", 1) in again and ("refund", 0) not in again and ("uninstall", None) not in again


def test_what_a_receiver_may_have_erased() -> None:
    """The objects of the shop triggered before its uninstall, in the order triggered whatever the
    order sent (a redelivery sent after the next shop's events), and a redacted customer's orders."""
    world = ShopifyWorld(5)
    first = world.effect_story()
    later = world.state_story()
    profile = get_profile("shopify")
    erased = profile.erasable([*later, *reversed(first)])
    assert erased == {e.object_id for e in first}
    assert not erased & {e.object_id for e in later}
    world = ShopifyWorld(5)
    world.sent_only(lambda t: t == "customers/redact")
    order = world.place_order()
    customer = str(world.get(order)["customer"]["id"])
    world.redact_customer(customer)
    assert profile.erasable(world.events) == {order, customer}
    assert get_profile("stripe").erasable(world.events) == frozenset()


@pytest.mark.slow
def test_a_receiver_erasing_a_shop_on_its_uninstall_passes_the_whole_catalog(tmp_path: Path) -> None:
    """`shopify_app` erasing the shop's orders on ``app/uninstalled`` too. (One that then ignores
    every later webhook of the shop is not correct: an order paid before the uninstall whose
    ``orders/paid`` arrives after it, as Shopify may send it, is never credited.)"""
    cfg = erasing_config(tmp_path, None)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(
        "examples.receivers.shopify_app", "examples.receivers.shopify_app_uninstall_erase")})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    ran = [s for s in report.scenarios if s.verdict != "not_applicable"]
    assert [(s.id, [f.message for f in s.findings]) for s in ran if s.verdict != "pass"] == []
    uninstalled = [s for s in ran if any(a.event_type == "app/uninstalled" and a.valid for a in s.attempts)]
    assert len(uninstalled) >= 3
    stories = [s for s in uninstalled if len({a.event_type for a in s.attempts}) > 6]
    assert stories  # a story after the uninstall: another shop's
