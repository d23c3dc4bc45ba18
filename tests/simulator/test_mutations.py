"""One attempt's request (simulator/delivery/mutations.py): the envelope rendered once per event object."""

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


def test_each_attempt_is_the_envelope_signed_at_its_own_second_with_its_secrets() -> None:
    stripe, event = get_profile("stripe"), _event()
    for now, secrets in ((NOW, ["whsec_a"]), (NOW, ["whsec_a"]), (NOW + 1, ["whsec_a"]), (NOW + 1, ["whsec_b", "whsec_a"])):
        built = build_attempt(stripe, event, secrets, (), now=now, attempt=1)
        assert built.request == stripe.request(stripe.envelope(event), secrets, now)
        assert (built.timestamp, built.mutations, built.event_id) == (now, (), event.id)


def test_another_event_object_under_the_same_id_is_rendered_from_itself() -> None:
    stripe, event = get_profile("stripe"), _event()
    first = build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1)
    other = replace(event, api_version="2024-06-20")  # the same id, another world's version
    again = build_attempt(stripe, other, ["whsec_a"], (), now=NOW, attempt=1)
    assert again.request == stripe.request(stripe.envelope(other), ["whsec_a"], NOW)
    assert again.request.body != first.request.body


def test_a_forged_attempt_is_signed_with_another_key() -> None:
    stripe, event = get_profile("stripe"), _event()
    plain = build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1)
    forged = build_attempt(stripe, event, ["whsec_a"], (Mutation.FORGED,), now=NOW, attempt=1)
    assert forged.request.body == plain.request.body
    assert forged.request.headers["Stripe-Signature"] != plain.request.headers["Stripe-Signature"]
