"""Stripe webhook bodies are pretty-printed as Stripe sends them (`profiles.stripe_json`).

The format is pinned against what raw bodies of real Stripe deliveries show (captured by
Stripe integrators between 2020 and 2024; stripe-php#884, stripe-dotnet#1506,
stripe-node#1981): two-space indentation, ``"key": value``, ``\\n`` line ends and no
newline after the last ``}``, an empty object as ``{`` then ``}`` on the next line at the
line's indent, an empty array with an empty line between its brackets, ``&`` escaped as
``\\u0026``, other text in raw UTF-8. `stripe_format.stripe_reference` writes that rule
independently (a recursive writer, no orjson, no regex), and every Stripe body is checked
against it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest
import stripe

from hookproof.simulator.delivery.mutations import build_attempt, oversize, reserialize
from hookproof.simulator.errors import SimulatorError
from hookproof.simulator.faults import Mutation
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import STRIPE_EVENT_TYPES
from hookproof.simulator.profiles.stripe_json import stripe_json
from hookproof.simulator.world import new_world
from tests.simulator.stripe_format import STRIPE_FORMAT, stripe_reference

PROFILE = get_profile("stripe")
SECRET = "whsec_pretty_bodies_0123456789abcdef"

def test_the_format_of_stripe_deliveries_is_what_stripe_json_writes() -> None:
    value = json.loads(STRIPE_FORMAT)
    assert value["data"]["object"]["success_url"].endswith("}&acct=acct_1")
    assert stripe_json(value) == STRIPE_FORMAT
    assert stripe_reference(value).encode() == STRIPE_FORMAT


@pytest.mark.parametrize("value", [
    {}, [], [[]], [{}], {"a": {"b": {"c": []}}}, {"s": "[]", "t": "{}", "u": "[],", "v": "a&b<>"},
    {"k&": [1, 2, {"x": None, "y": True}]}, {"big": 2**70, "x": []}, {"line": "a\nb\"[]\"\n"},
    # empty containers beside siblings and last in theirs, at several depths, and their text in strings
    [[], {}, [[]], {"a": {}, "b": []}], {"a": [{}, {}], "b": {"c": [], "d": {"e": {}}}, "f": []},
    {"s": "{},\n[]\n{}", "t": ["{}", "[]"], "u": {"v": "x{}"}},
])
def test_stripe_json_follows_the_rule_on_edge_values(value: Any) -> None:
    body = stripe_json(value)
    assert body == stripe_reference(value).encode()
    assert json.loads(body) == value


def test_every_stripe_body_of_a_whole_world_follows_the_rule() -> None:
    world = new_world("billing", 11)
    world.lifecycle()
    types = set()
    for event in world.events:
        body = PROFILE.envelope(event).body
        assert body == stripe_reference(json.loads(body)).encode(), event.type
        assert body.startswith(b'{\n  "id": "evt_') and body.endswith(b'"\n}'), event.type
        types.add(event.type)
    assert len(types & set(STRIPE_EVENT_TYPES)) >= 8


def test_a_compact_re_dump_of_a_stripe_body_is_other_bytes_and_fails_its_signature() -> None:
    # the receiver bug Stripe's bodies catch on a first delivery: verifying a re-dump
    world = new_world("billing", 11)
    world.lifecycle()
    for event in world.events[:20]:
        attempt = build_attempt(PROFILE, event, [SECRET], [], now=1_800_000_000, attempt=1)
        body = attempt.request.body
        header = attempt.request.headers["Stripe-Signature"]
        assert stripe.Webhook.construct_event(body.decode(), header, SECRET, tolerance=None).id == event.id
        compact = json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode()
        assert compact != body
        with pytest.raises(stripe.SignatureVerificationError):
            stripe.Webhook.construct_event(compact.decode(), header, SECRET, tolerance=None)


def test_the_reserialized_mutation_still_sends_other_bytes_correctly_signed() -> None:
    world = new_world("billing", 11)
    world.lifecycle()
    for event in world.events:
        plain = build_attempt(PROFILE, event, [SECRET], [], now=1_800_000_000, attempt=1).request
        mutated = build_attempt(PROFILE, event, [SECRET], [Mutation.RESERIALIZE], now=1_800_000_000,
                                attempt=2).request
        assert mutated.body == reserialize(plain.body) != plain.body, event.type
        assert json.loads(mutated.body) == json.loads(plain.body)
        parts = [part.split("=", 1) for part in mutated.headers["Stripe-Signature"].split(",")]
        assert [k for k, _ in parts] == ["t", "v1", "v0"]  # a test-mode event: Stripe's fake v0 last
        timestamp, v1 = parts[0][1], parts[1][1]
        expected = hmac.new(SECRET.encode(), timestamp.encode() + b"." + mutated.body, hashlib.sha256).hexdigest()
        assert v1 == expected


def test_an_oversized_delivery_is_sent_as_made_never_padded() -> None:
    world = new_world("billing", 11)
    world.lifecycle()
    body = PROFILE.envelope(world.events[-1]).body
    assert oversize(body, len(body)) is body
    with pytest.raises(SimulatorError, match=rf"^an oversized delivery's body is {len(body)} bytes, under "
                                             rf"{len(body) + 1}: only a world's big_event is sent oversized$"):
        oversize(body, len(body) + 1)
