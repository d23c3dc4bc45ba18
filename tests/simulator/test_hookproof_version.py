"""`hookproof_version` is hookproof's own field: where it is sent is what the README says.

Stripe's own example objects (`stripe-fixtures3.json`) have no such field anywhere; the
billing world puts it on every object it renders (``data.object`` and the objects nested in
it), so it reaches Stripe and, without a catalog, Standard Webhooks bodies; the other
providers' worlds never send it. The README's Stripe section says so, and how a receiver
orders events with the fields each provider really sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import DOCUMENTED_DIFFERENCES
from hookproof.simulator.world import emit_events, new_world
from tests.simulator.stripe_oracle import resources

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def paths(value: Any, at: str = "") -> Iterator[str]:
    """Every path (``.a.b[].c``) of a ``hookproof_version`` key in `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "hookproof_version":
                yield f"{at}.{key}"
            yield from paths(item, f"{at}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from paths(item, f"{at}[]")


def test_stripe_s_own_objects_have_no_such_field() -> None:
    assert not list(paths(dict(resources())))
    assert "*.hookproof_version" in DOCUMENTED_DIFFERENCES


@pytest.mark.parametrize(("profile", "event_type", "expected"), [
    ("stripe", "customer.subscription.updated", {".data.object.hookproof_version",
                                                 ".data.object.items.data[].price.hookproof_version"}),
    ("stripe", "invoice.paid", {".data.object.hookproof_version"}),
    ("standard-webhooks", "customer.subscription.updated", {".data.hookproof_version",
                                                            ".data.items.data[].price.hookproof_version"}),
    ("shopify", "orders/paid", set()),
    ("github", "issues.opened", set()),
    ("paddle", "subscription.updated", set()),
    ("mercadopago", "payment.updated", set()),
])
def test_where_hookproof_sends_it(profile: str, event_type: str, expected: set[str]) -> None:
    p = get_profile(profile)
    (event,) = emit_events(new_world(p.world, 3), event_type)[:1]
    assert set(paths(json.loads(p.envelope(event).body))) == expected


def test_the_readme_says_what_it_is_and_how_to_order_per_provider() -> None:
    section = README.split("### Stripe: objects, API versions and the provider API", 1)[1].split("\n### ", 1)[0]
    assert "Stripe's own\nobjects have no such field" in section
    for profile in ("stripe", "standard-webhooks, svix", "shopify", "paddle", "mercadopago", "github"):
        assert f"\n| {profile} | " in section, profile
