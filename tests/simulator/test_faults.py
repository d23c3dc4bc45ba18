"""Fault plans are pure: (events, plan) -> the exact schedule."""

from __future__ import annotations

import pytest

from hookproof.simulator.errors import FaultPlanError
from hookproof.simulator.faults import FaultPlan, Mutation, applicable, is_valid, order_events, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, events_of_type


@pytest.fixture(scope="module")
def events():
    w = World(1, start_us=1_700_000_000_000_000)
    sub = w.subscribe(w.event(w.create_customer()).object_id)
    w.renew(sub)
    w.cancel(sub)
    return [e for e in w.events if e.object_type == "subscription"]


def test_identity_plan_delivers_each_event_once_in_order(events) -> None:
    s = schedule(events)
    assert [d.event.id for d in s.deliveries()] == [e.id for e in events]
    assert all(len(step.deliveries) == 1 and step.wait_s == 0 for step in s.steps)
    assert FaultPlan().tags() == ()


def test_copies_bursts_and_spacing(events) -> None:
    s = schedule(events[:2], FaultPlan(copies=4, concurrency=2, spacing_s=0.5))
    assert [len(step.deliveries) for step in s.steps] == [2, 2, 2, 2]
    assert [step.wait_s for step in s.steps] == [0.0, 0.5, 0.5, 0.5]
    assert [d.copy for d in s.deliveries()] == [1, 2, 3, 4] * 2
    assert len({d.delivery_id for d in s.deliveries()}) == 8
    assert FaultPlan(copies=4, concurrency=2).tags() == ("copies=4", "burst=2")


def test_orders(events) -> None:
    ids = [e.id for e in events]
    assert [e.id for e in order_events(events, "reversed")] == ids[::-1]
    shuffled = [e.id for e in order_events(events, "shuffled", seed=7)]
    assert sorted(shuffled) == sorted(ids) and shuffled == [e.id for e in order_events(events, "shuffled", seed=7)]


def test_per_object_reversal_keeps_objects_interleaved() -> None:
    w = World(2, start_us=1_700_000_000_000_000)
    cus = w.event(w.create_customer()).object_id
    a, b = w.subscribe(cus), w.subscribe(cus)
    w.cancel(a)
    w.cancel(b)
    subs = [e for e in w.events if e.object_type == "subscription"]
    out = order_events(subs, "per-object-reversed")
    assert [e.object_id for e in out] == [e.object_id for e in subs]
    for oid in (a, b):
        assert [e.version for e in out if e.object_id == oid] == sorted(
            (e.version for e in subs if e.object_id == oid), reverse=True)


def test_mutations_apply_to_the_selected_attempts(events) -> None:
    first = schedule(events[:1], FaultPlan(copies=2, mutations=(Mutation.FORGED,), mutate="first")).deliveries()
    assert [(d.mutations(1), d.mutations(2)) for d in first] == [((Mutation.FORGED,), ()), ((), ())]
    retries = schedule(events[:1], FaultPlan(copies=2, mutations=(Mutation.RESERIALIZE,), mutate="retries")).deliveries()
    assert [(d.mutations(1), d.mutations(2)) for d in retries] == [
        ((), (Mutation.RESERIALIZE,)), ((Mutation.RESERIALIZE,), (Mutation.RESERIALIZE,))]


def test_injected_timeouts_apply_to_the_first_attempts_only(events) -> None:
    d = schedule(events[:1], FaultPlan(sender_timeout_s=0.01, timeouts=1)).deliveries()[0]
    assert (d.timeout_for(1), d.timeout_for(2)) == (0.01, None)
    assert schedule(events[:1], FaultPlan(sender_timeout_s=0.01)).deliveries()[0].timeout_for(5) == 0.01


@pytest.mark.parametrize("kwargs, field", [
    ({"copies": 0}, "copies"), ({"concurrency": 0}, "concurrency"), ({"spacing_s": -1}, "spacing_s"),
    ({"drop_responses": -1}, "drop_responses"), ({"sender_timeout_s": 0}, "sender_timeout_s"),
    ({"sender_timeout_s": float("inf")}, "sender_timeout_s"), ({"sender_timeout_s": float("nan")}, "sender_timeout_s"),
    ({"spacing_s": float("inf")}, "spacing_s"),
    ({"copies": 2, "concurrency": 3}, "concurrency"), ({"order": "sideways"}, "order"),
])
def test_bad_plans_name_the_field(kwargs, field: str) -> None:
    with pytest.raises(FaultPlanError) as info:
        FaultPlan(**kwargs)
    assert info.value.field == field


@pytest.mark.parametrize("profile, mutation, valid", [
    ("stripe", Mutation.FUTURE_TIMESTAMP, True),  # Stripe's SDK accepts future timestamps
    ("standard-webhooks", Mutation.FUTURE_TIMESTAMP, False),
    ("stripe", Mutation.STALE_TIMESTAMP, False),
    ("github", Mutation.STALE_TIMESTAMP, True),  # no timestamp is signed
    ("github", Mutation.LIVEMODE_MISMATCH, True),  # no test/live flag to mismatch
    ("stripe", Mutation.LIVEMODE_MISMATCH, False),
    ("stripe", Mutation.ROTATION, True),
    ("stripe", Mutation.RESERIALIZE, True),
    ("paddle", Mutation.FORGED, False),
])
def test_validity_follows_the_official_verifier(profile: str, mutation: Mutation, valid: bool) -> None:
    assert is_valid((mutation,), get_profile(profile)) is valid


def test_applicability_explains_itself() -> None:
    assert applicable(Mutation.STALE_TIMESTAMP, get_profile("stripe")) is None
    assert "no timestamp" in (applicable(Mutation.STALE_TIMESTAMP, get_profile("shopify")) or "")
    assert "one signature" in (applicable(Mutation.ROTATION, get_profile("github")) or "")


def test_schedule_is_deterministic() -> None:
    events = events_of_type(World(4, start_us=1_700_000_000_000_000), "invoice.paid", 3)
    plan = FaultPlan(copies=2, order="shuffled", seed=3)
    assert schedule(events, plan) == schedule(events, plan)
