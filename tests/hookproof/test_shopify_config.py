"""A Shopify app's hookproof.toml: ``target.api_version`` under the shopify profile, and the note on
the types a run never sent when the config lists no ``enabled_events``.

The shopify profile shapes every body at Shopify's Admin API 2024-10 and says so in
``X-Shopify-API-Version``: that version is accepted (it is what the app is sent), any other is
refused naming the profile and what it sends, never as "a Stripe API version". A config without
``enabled_events`` enabled nothing by name: the note names the profile's types the run never sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.simulator.delivery import History
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import SHOPIFY_API_VERSION, SHOPIFY_EVENT_TYPES


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


def _history(path: Path, types: list[str]) -> Path:
    history = History(path)
    for i, sent in enumerate(types):
        history.record(Attempt(event_id=f"evt_{i}", delivery_id=f"d{i}", attempt=1, business_key=None,
                               object_id=None, object_version=None, event_type=sent, faults=(), valid=True,
                               sent_at=1.0, answered_at=1.1, status=200, outcome=Outcome.ACKED,
                               completion=Completion.OK, latency_ms=100.0))
    history.close()
    return path


def test_a_config_without_enabled_events_is_told_the_profiles_types_the_run_never_sent(tmp_path: Path) -> None:
    """A new user set no enabled_events and read "enabled types never sent by this certify:
    customers/update"; listing them, the same type is an enabled one."""
    from hookproof.certify import certify_unsent_note

    history = _history(tmp_path / "history.sqlite", [t for t in SHOPIFY_EVENT_TYPES if t != "customers/update"])
    plain = tmp_path / "plain.toml"
    plain.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "shopify"', 'secret = "shpss_0123"', "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"',
        ""]), encoding="utf-8")
    assert certify_unsent_note(load_config(plain, secrets=False), history) == (
        "types the Shopify profile sends that this certify never sent (enabled_events is left out: the endpoint is "
        "sent every one): customers/update: its verdict says nothing of how the receiver handles them")
    listed = tmp_path / "listed.toml"
    topics = ", ".join(f'"{t}"' for t in SHOPIFY_EVENT_TYPES)
    listed.write_text(plain.read_text(encoding="utf-8").replace(
        'secret = "shpss_0123"', f'secret = "shpss_0123"\nenabled_events = [{topics}]'), encoding="utf-8")
    assert certify_unsent_note(load_config(listed, secrets=False), history) == (
        "enabled types never sent by this certify: customers/update: its verdict says nothing of how the receiver "
        "handles them")
