"""One attempt's request (simulator/delivery/mutations.py): the envelope rendered once per event object."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hookproof.simulator.delivery import mutations
from hookproof.simulator.delivery.mutations import build_attempt, envelope_of
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


class _Counting:
    """A profile's `envelope`, counting its renderings."""

    def __init__(self, name: str) -> None:
        self.profile = get_profile("stripe")
        self.name = name
        self.renders = 0

    def envelope(self, event):
        self.renders += 1
        return self.profile.envelope(event)


def _events(n: int):
    return events_of_type(World(22, start_us=START_US), "payment_intent.succeeded", n)


def test_envelopes_are_kept_oldest_first_up_to_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mutations, "ENVELOPES_KEPT", 3)
    counting, events = _Counting("counting-by-count"), _events(5)
    for event in events[:4]:
        envelope_of(counting, event)  # type: ignore[arg-type]
    kept = mutations._RENDERED["counting-by-count"]
    assert list(kept.order) == [e.id for e in events[1:4]] and list(kept.envelopes) == list(kept.order)
    assert kept.body_bytes == sum(len(kept.envelopes[e.id].body) for e in events[1:4])
    renders = counting.renders
    envelope_of(counting, events[3])  # type: ignore[arg-type]  # kept: not rendered again
    assert counting.renders == renders
    envelope_of(counting, events[0])  # type: ignore[arg-type]  # dropped first: rendered again
    assert counting.renders == renders + 1
    assert list(kept.order) == [e.id for e in (events[2], events[3], events[0])]


def test_envelopes_are_kept_up_to_their_bodies_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    counting, events = _Counting("counting-by-bytes"), _events(4)
    size = len(get_profile("stripe").envelope(events[0]).body)
    monkeypatch.setattr(mutations, "ENVELOPE_BYTES_KEPT", 2 * size + size // 2)
    for event in events:
        envelope_of(counting, event)  # type: ignore[arg-type]
    kept = mutations._RENDERED["counting-by-bytes"]
    assert list(kept.order) == [e.id for e in events[2:]]
    assert kept.body_bytes == sum(len(kept.envelopes[e.id].body) for e in events[2:]) <= 2 * size + size // 2
    monkeypatch.setattr(mutations, "ENVELOPE_BYTES_KEPT", size // 2)  # a body past the budget is not kept
    envelope_of(counting, events[0])  # type: ignore[arg-type]
    assert not kept.order and not kept.events and not kept.envelopes and kept.body_bytes == 0


def test_another_object_under_a_kept_id_takes_its_place_and_bytes() -> None:
    counting, event = _Counting("counting-same-id"), _events(1)[0]
    other = replace(event, api_version="2024-06-20")
    envelope_of(counting, event)  # type: ignore[arg-type]
    again = envelope_of(counting, other)  # type: ignore[arg-type]
    kept = mutations._RENDERED["counting-same-id"]
    assert list(kept.order) == [event.id] and kept.events[event.id]() is other and kept.envelopes[event.id] is again
    assert kept.body_bytes == len(again.body) and counting.renders == 2


def _flags(doc: object, name: str) -> list[bool]:
    """Every boolean field called `name` in `doc`, at any depth."""
    if isinstance(doc, dict):
        return [v for k, v in doc.items() if k == name and isinstance(v, bool)] + [
            f for v in doc.values() for f in _flags(v, name)]
    if isinstance(doc, list):
        return [f for v in doc for f in _flags(v, name)]
    return []


@pytest.mark.parametrize("livemode", [False, True])
def test_the_other_mode_s_event_carries_that_mode_in_every_livemode_it_holds(livemode: bool) -> None:
    """A live subscription's items name live prices and plans: the ``test-mode-to-live``
    attempt turns every ``livemode`` of the body (the event's, the subscription's, each item's
    price and plan), never only the top two; the world's object keeps its own mode."""
    import json

    stripe = get_profile("stripe")
    event = events_of_type(World(23, start_us=START_US, livemode=livemode), "customer.subscription.created", 1)[0]
    plain = json.loads(build_attempt(stripe, event, ["whsec_a"], (), now=NOW, attempt=1).request.body)
    other = json.loads(build_attempt(stripe, event, ["whsec_a"], (Mutation.LIVEMODE_MISMATCH,), now=NOW,
                                     attempt=1).request.body)
    flags = _flags(plain, "livemode")
    assert len(flags) >= 4 and set(flags) == {livemode}  # the event, the subscription, an item's price and plan
    assert _flags(other, "livemode") == [not livemode] * len(flags)
    assert set(_flags(dict(event.object), "livemode")) == {livemode}
