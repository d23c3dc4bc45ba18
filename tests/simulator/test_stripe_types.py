"""Stripe's real event types (`simulator.profiles.stripe_types`), checked against stripe-python,
and what a config enabling one hookproof does not model gets: a note, not a config error."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from stripe.params._webhook_endpoint_create_params import WebhookEndpointCreateParams

from hookproof.config import load_config
from hookproof.errors import ConfigError, UsageError
from hookproof.send import resolve_event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe_types import STRIPE_WEBHOOK_TYPES
from hookproof.unsent import configured_types, unmodelled_note, unmodelled_version_note


def _sdk_types() -> set[str]:
    """stripe-python's values of ``WebhookEndpointCreateParams.enabled_events`` (a list of a
    ``Literal``), the wildcard aside: the event types a Stripe endpoint may enable."""
    (literal,) = typing.get_args(WebhookEndpointCreateParams.__annotations__["enabled_events"])
    return set(typing.get_args(literal)) - {"*"}


def test_the_list_is_stripe_pythons() -> None:
    assert STRIPE_WEBHOOK_TYPES == _sdk_types()


def test_every_type_the_stripe_profile_sends_is_a_real_stripe_type() -> None:
    assert set(get_profile("stripe").event_types().values()) <= STRIPE_WEBHOOK_TYPES


def _config(tmp_path: Path, enabled: list[str]) -> Path:
    path = tmp_path / "hookproof.toml"
    listed = ", ".join(f'"{e}"' for e in enabled)
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "stripe"', 'secret = "whsec_types_0123"',
        f"enabled_events = [{listed}]", "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"',
        ""]), encoding="utf-8")
    return path


def test_a_real_type_hookproof_does_not_model_is_a_note_not_a_config_error(tmp_path: Path) -> None:
    """A team copies its endpoint's enabled_events: the types Stripe sends and hookproof does not
    model load, are named in one note, and are not among the types the runs' unsent note names."""
    enabled = ["invoice.paid", "invoice.finalized", "customer.updated", "invoice.finalized", "charge.failed"]
    cfg = load_config(_config(tmp_path, enabled))
    assert cfg.target.unmodelled_types() == ["invoice.finalized", "customer.updated"]
    assert unmodelled_note(cfg) == ("enabled but not modelled: invoice.finalized, customer.updated; their handling "
                                    "is not certified")
    assert configured_types(cfg) == ["invoice.paid", "charge.failed"]
    assert cfg.target.stripe_types() == {"invoice.paid", "invoice.finalized", "customer.updated", "charge.failed"}
    assert unmodelled_note(load_config(_config(tmp_path, ["invoice.paid"]))) is None


def test_an_endpoint_pinned_past_the_latest_modelled_version_is_told_its_events_are_not_that_version(
        tmp_path: Path) -> None:
    """stripe-node 23 pins 2026-11-18.endive, and a team creates its endpoint at its SDK's version:
    the events say that version and carry the latest modelled one's shapes, which the runs' notes
    now say (the provider API's note spoke of its answers alone)."""
    from hookproof.simulator.events import LATEST_API_VERSION

    text = _config(tmp_path, ["invoice.paid"]).read_text(encoding="utf-8")
    later = tmp_path / "later.toml"
    later.write_text(text.replace('profile = "stripe"', 'profile = "stripe"\napi_version = "2026-11-18.endive"'),
                     encoding="utf-8")
    note = unmodelled_version_note(load_config(later))
    assert note == (f"target.api_version 2026-11-18.endive is later than {LATEST_API_VERSION}, the latest Stripe API "
                    f"version hookproof models: the events say \"api_version\": \"2026-11-18.endive\" but carry "
                    f"{LATEST_API_VERSION}'s shapes, without the fields 2026-11-18.endive added or changed, so a "
                    f"receiver's handling of those is not certified (the same config with api_version = "
                    f"\"{LATEST_API_VERSION}\" and the receiver's SDK pinned to it certifies what hookproof models)")
    modelled = tmp_path / "modelled.toml"
    modelled.write_text(text.replace('profile = "stripe"', f'profile = "stripe"\napi_version = "{LATEST_API_VERSION}"'),
                        encoding="utf-8")
    assert unmodelled_version_note(load_config(modelled)) is None
    assert unmodelled_version_note(load_config(_config(tmp_path, ["invoice.paid"]))) is None


@pytest.mark.parametrize(("name", "hint"), [
    ("invoice.finalised", "did you mean invoice.finalized, invoice.paid or invoice.finalization_failed?"),
    ("order.shipped", "Stripe's event types: docs.stripe.com/api/events/types"),
])
def test_a_type_stripe_does_not_have_stays_a_config_error_naming_the_nearest(tmp_path: Path, name: str,
                                                                            hint: str) -> None:
    path = _config(tmp_path, ["invoice.paid", name])
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}:5: target.enabled_events: Stripe has no event type {name!r} ({hint})"


def test_send_refuses_an_unmodelled_type_saying_stripe_sends_it() -> None:
    stripe = get_profile("stripe")
    with pytest.raises(UsageError) as caught:
        resolve_event(stripe, "invoice.finalized")
    assert str(caught.value).startswith("--event: Stripe sends 'invoice.finalized', and hookproof does not model it "
                                        "yet (it sends: charge.dispute.closed, charge.dispute.created, ")
    with pytest.raises(UsageError, match="the Stripe profile sends no event 'invoice.finalised'"):
        resolve_event(stripe, "invoice.finalised")
    with pytest.raises(UsageError, match=r"sends no event 'invoice\.payed' \(did you mean invoice\.paid, "
                                         r"invoice\.created or invoice\.payment_failed\? known: charge\.dispute\.closed, "):
        resolve_event(stripe, "invoice.payed")
    assert resolve_event(stripe, "charge.failed") == "charge.failed"
    assert resolve_event(stripe, "charge.dispute.created") == "charge.dispute.created"  # optional: sent when asked


@pytest.mark.parametrize("name", ["svix", "standard-webhooks", "generic-hmac"])
def test_a_profile_without_a_catalog_points_to_one_for_your_own_types(name: str) -> None:
    """`send --profile svix --event user.created` (a Clerk type) listed the billing world's types
    alone: a profile that sends a user's own events once a config's [catalog] names them says so."""
    with pytest.raises(UsageError) as caught:
        resolve_event(get_profile(name), "user.created")
    assert str(caught.value).endswith("; your own event types (a provider hookproof does not ship) are sent from a "
                                      "config's [catalog]: --config hookproof.toml")
    with pytest.raises(UsageError) as stripe:
        resolve_event(get_profile("stripe"), "user.created")
    assert "[catalog]" not in str(stripe.value)


@pytest.mark.slow
def test_certify_notes_the_unmodelled_types_the_endpoint_enables(tmp_path: Path) -> None:
    """Every type the profile sends and two it does not model enabled: the run passes as it would
    without them, and its report says which enabled types it could not certify."""
    from examples.receivers import config as receiver_config
    from hookproof.certify import certify

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_types_0123456789", seed=11,
                          scenarios=["duplicate-sequential"], settle_window_s=0.15)
    enabled = [*get_profile("stripe").event_types().values(), "invoice.finalized", "payment_intent.created"]
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": enabled})})
    report = certify(cfg, out_dir=tmp_path / "out").report
    assert [s.verdict for s in report.scenarios] == ["pass"]
    assert ("enabled but not modelled: invoice.finalized, payment_intent.created; their handling is not "
            "certified") in report.notes, report.notes
