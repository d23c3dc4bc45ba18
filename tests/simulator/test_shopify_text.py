"""Shopify's bodies carry text past U+007F as raw UTF-8, and the HMAC covers those bytes.

Real shops have buyers named "José Sáez" on "Königstraße"; Shopify sends such text unescaped in
the JSON body (a delivered body quoted in Shopify/shopify-api-js issue #320: "lână merinos și
mătase"). A share of the Shopify world's new customers (`NON_ASCII_SHARE`) are named, and live
on a street named, in another locale, drawn from the seed: the same seed, the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import NON_ASCII_SHARE


def _customers(seed: int, count: int = 12) -> list[dict[str, object]]:
    world = new_world("shopify", seed)
    for _ in range(count):
        world.create_customer()
    return [e.object for e in world.events if e.type == "customers/create"]


def test_a_share_of_customers_are_named_past_ascii() -> None:
    """Of the customers named in another locale (`NON_ASCII_SHARE` of them), some names and
    streets are ASCII all the same ("Margot"): about one customer in six carries text past U+007F
    (19 of 120 over seeds 0 to 9), never more than the share."""
    customers = [c for seed in range(10) for c in _customers(seed)]
    text = [f"{c['first_name']}{c['last_name']}{c['default_address']['address1']}" for c in customers]  # type: ignore[index]
    share = sum(not t.isascii() for t in text) / len(customers)
    assert 0.1 < share <= NON_ASCII_SHARE, share


def test_the_body_is_raw_utf8_and_signed_over_its_bytes() -> None:
    profile = get_profile("shopify")
    world = new_world("shopify", 3)
    for _ in range(10):
        world.place_order()
    seen = 0
    for event in world.events:
        request = profile.request(profile.envelope(event), ["shpss_s3cret"], 0)
        text = request.body.decode("utf-8")  # valid UTF-8
        assert request.headers["X-Shopify-Hmac-Sha256"] == base64.b64encode(
            hmac.new(b"shpss_s3cret", request.body, hashlib.sha256).digest()).decode()
        if not text.isascii():
            seen += 1
            assert "\\u00" not in text  # raw, not escaped
            parsed = json.loads(text)
            strings = [v for v in _strings(parsed) if not v.isascii()]
            assert strings and all(v.encode("utf-8") in request.body for v in strings)
    assert seen >= 3


def _strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_same_seed_sends_the_same_bytes() -> None:
    profile = get_profile("shopify")
    bodies = []
    for _ in range(2):
        world = new_world("shopify", 7)
        for _ in range(12):
            world.place_order()
        bodies.append([profile.envelope(e).body for e in world.events])
    assert bodies[0] == bodies[1] and any(not b.isascii() for b in bodies[0])
