"""A Shopify app's hookproof.toml: ``target.api_version`` under the shopify profile.

The shopify profile shapes every body at Shopify's Admin API 2024-10 and says so in
``X-Shopify-API-Version``: that version is accepted (it is what the app is sent), any other is
refused naming the profile and what it sends, never as "a Stripe API version".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import SHOPIFY_API_VERSION


def _config(tmp_path: Path, profile: str, version: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', f'profile = "{profile}"', 'secret = "shpss_0123"',
        f'api_version = "{version}"', ""]), encoding="utf-8")
    return path


def test_the_version_the_shopify_profile_sends_is_accepted(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "shopify", "2024-10"), secrets=False)
    assert cfg.target.api_version == SHOPIFY_API_VERSION == "2024-10"
    event = cfg.profile().envelope(new_world("shopify", 1, api_version=cfg.target.api_version).lifecycle()[0])
    assert event.headers["X-Shopify-API-Version"] == cfg.target.api_version


@pytest.mark.parametrize("version", ["2025-01", "2024-06-20", "unstable"])
def test_another_shopify_version_is_refused_saying_what_the_profile_sends(tmp_path: Path, version: str) -> None:
    path = _config(tmp_path, "shopify", version)
    with pytest.raises(ConfigError) as caught:
        load_config(path, secrets=False)
    assert str(caught.value) == (
        f"{path}:5: target.api_version: the shopify profile sends Shopify's Admin API 2024-10 resources alone "
        f"(X-Shopify-API-Version: 2024-10), got {version!r}: a subscription at another version would be sent other "
        "shapes, which hookproof does not make; set 2024-10 or leave api_version out")
    assert "Stripe" not in str(caught.value)


def test_a_profile_without_versions_is_named_and_stripe_keeps_its_own_check(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, "paddle", "2024-10"), secrets=False)
    assert "not 'paddle': the paddle profile sends its provider's one shape" in str(caught.value)
    assert "Stripe API version" not in str(caught.value)
    with pytest.raises(ConfigError, match="must be a Stripe API version like 2024-06-20"):
        load_config(_config(tmp_path, "stripe", "2024-10"), secrets=False)
