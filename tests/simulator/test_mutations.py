"""One attempt's request (simulator/delivery/mutations.py): rendered and signed once, reused only when equal."""

from __future__ import annotations

from dataclasses import replace

from hookproof.simulator.delivery.mutations import build_attempt
from hookproof.simulator.faults import Mutation
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, events_of_type

NOW = 1_790_000_000
START_US = 1_780_000_000_000_000


def _event():
    return events_of_type(World(21, start_us=START_US), "payment_intent.succeeded", 1)[0]


def test_copies_and_retries_in_the_same_second_reuse_one_signed_request() -> None:
    stripe, event = get_profile("stripe"), _event()
    first = build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1)
    assert build_attempt(stripe, event, ("whsec_a",), (), now=NOW, attempt=2) is first
    assert first.request == stripe.request(stripe.envelope(event), ["whsec_a"], NOW)
    assert (first.timestamp, first.mutations, first.event_id) == (NOW, (), event.id)


def test_another_second_other_secrets_or_another_event_object_are_signed_afresh() -> None:
    stripe, event = get_profile("stripe"), _event()
    first = build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1)
    later = build_attempt(stripe, event, ["whsec_a"], (), now=NOW + 1, attempt=1)
    assert later.timestamp == NOW + 1 and later.request == stripe.request(stripe.envelope(event), ["whsec_a"], NOW + 1)
    rotated = build_attempt(stripe, event, ["whsec_b", "whsec_a"], (), now=NOW + 1, attempt=1)
    assert rotated.request.headers["Stripe-Signature"].count("v1=") == 2
    # the same id, another object (another world at another version): rendered and signed from it
    other = replace(event, api_version="2024-06-20")
    again = build_attempt(stripe, other, ["whsec_a"], (), now=NOW, attempt=1)
    assert again.request == stripe.request(stripe.envelope(other), ["whsec_a"], NOW)
    assert again.request.body != first.request.body


def test_a_mutated_attempt_is_never_the_cached_plain_one() -> None:
    stripe, event = get_profile("stripe"), _event()
    plain = build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1)
    forged = build_attempt(stripe, event, ["whsec_a"], (Mutation.FORGED,), now=NOW, attempt=1)
    assert forged.request.headers["Stripe-Signature"] != plain.request.headers["Stripe-Signature"]
    assert build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=2) is plain
