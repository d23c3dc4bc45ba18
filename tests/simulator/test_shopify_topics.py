"""Shopify's real webhook topics (`simulator.profiles.shopify_topics`), and what a config enabling
one hookproof does not model gets: a note, not a config error; a misspelt one stays an error
naming the nearest."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError, UsageError
from hookproof.send import resolve_event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.shopify_topics import SHOPIFY_WEBHOOK_TOPICS
from hookproof.simulator.world.shopify import SHOPIFY_COMPLIANCE_TOPICS, SHOPIFY_EVENT_TYPES
from hookproof.unsent import configured_types, unmodelled_note


def test_every_topic_the_profile_sends_is_in_shopifys_enum_and_the_compliance_ones_are_not() -> None:
    """The enum lists the topics an app subscribes to through the Admin API; the mandatory
    compliance topics are configured apart ("You don't create webhook subscriptions to mandatory
    webhooks"), so the profile's optional types are not in it."""
    assert set(SHOPIFY_EVENT_TYPES) <= SHOPIFY_WEBHOOK_TOPICS
    assert not set(SHOPIFY_COMPLIANCE_TOPICS) & SHOPIFY_WEBHOOK_TOPICS
    assert {"orders/fulfilled", "orders/partially_fulfilled", "products/create", "fulfillments/create",
            "customer.tags_added"} <= SHOPIFY_WEBHOOK_TOPICS
    assert len(SHOPIFY_WEBHOOK_TOPICS) == 164
    assert all("/" in t or t.startswith("customer.tags_") for t in SHOPIFY_WEBHOOK_TOPICS)


def _config(tmp_path: Path, enabled: list[str]) -> Path:
    path = tmp_path / "hookproof.toml"
    listed = ", ".join(f'"{e}"' for e in enabled)
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "shopify"',
        'secret = "shpss_0123456789abcdef0123456789abcdef"', f"enabled_events = [{listed}]", "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"',
        ""]), encoding="utf-8")
    return path


def test_a_real_topic_hookproof_does_not_model_is_a_note_not_a_config_error(tmp_path: Path) -> None:
    enabled = ["orders/paid", "fulfillments/create", "products/create", "fulfillments/create", "customers/redact"]
    cfg = load_config(_config(tmp_path, enabled))
    assert cfg.target.unmodelled_types() == ["fulfillments/create", "products/create"]
    assert unmodelled_note(cfg) == ("enabled but not modelled: fulfillments/create, products/create; their handling "
                                    "is not certified")
    assert configured_types(cfg) == ["orders/paid", "customers/redact"]
    assert cfg.subscribed_types() == ["customers/redact"]


def test_the_fulfilment_topics_are_modelled_and_sent_to_an_endpoint_naming_them(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, ["orders/paid", "orders/fulfilled", "orders/updated"]))
    assert cfg.target.unmodelled_types() == [] and unmodelled_note(cfg) is None
    assert configured_types(cfg) == ["orders/paid", "orders/fulfilled", "orders/updated"]
    assert cfg.subscribed_types() == ["orders/fulfilled"]
    assert list(get_profile("shopify", subscribed=cfg.subscribed_types()).event_types())[-1] == "orders/fulfilled"
    assert "orders/fulfilled" not in get_profile("shopify").event_types()  # unnamed: not sent
    assert resolve_event(get_profile("shopify"), "orders/partially_fulfilled") == "orders/partially_fulfilled"
    assert unmodelled_note(load_config(_config(tmp_path, ["orders/paid"]))) is None


@pytest.mark.parametrize(("name", "hint"), [
    ("orders/fulfiled", "did you mean orders/fulfilled, orders/partially_fulfilled or orders/cancelled?"),
    ("customers/redcat", "did you mean customers/redact, customers/create or customers/update?"),
    ("invoice.paid", "Shopify's topics: shopify.dev/docs/api/admin-graphql/latest/enums/WebhookSubscriptionTopic"),
])
def test_a_topic_shopify_does_not_have_stays_a_config_error_naming_the_nearest(tmp_path: Path, name: str,
                                                                              hint: str) -> None:
    path = _config(tmp_path, ["orders/paid", name])
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}:5: target.enabled_events: Shopify has no webhook topic {name!r} ({hint})"


def test_send_refuses_an_unmodelled_topic_saying_shopify_sends_it() -> None:
    shopify = get_profile("shopify")
    with pytest.raises(UsageError) as caught:
        resolve_event(shopify, "fulfillments/create")
    assert str(caught.value).startswith("--event: Shopify sends 'fulfillments/create', and hookproof does not model "
                                        "it yet (it sends: app/uninstalled, customers/create, ")
    with pytest.raises(UsageError, match="the Shopify profile sends no event 'orders/fulfiled'"):
        resolve_event(shopify, "orders/fulfiled")
    assert resolve_event(shopify, "shop/redact") == "shop/redact"
