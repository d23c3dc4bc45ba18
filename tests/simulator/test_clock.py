"""The provider's clock: the provider API serves each object as of the deliveries made so far."""

from __future__ import annotations

from dataclasses import replace

import httpx

from hookproof.simulator.events import Event
from hookproof.simulator.server import DEFAULT_API_KEY, ServerState, clock, run_server
from hookproof.simulator.world import World


def subscription_story(seed: int = 7) -> tuple[World, str]:
    """A subscription created (v1), renewed (v2), past due (v3), recovered (v4), canceled (v5)."""
    world = World(seed)
    customer = world.event(world.create_customer()).object_id
    sub = world.subscribe(customer)
    inv = world.renew(sub, pay=False)
    world.retry_invoice(inv)
    world.cancel(sub)
    return world, sub


def events_of(world: World, object_id: str) -> list[Event]:
    return [e for e in world.events if e.object_id == object_id]


def test_a_world_never_advanced_is_served_current() -> None:
    world, sub = subscription_story()
    assert clock.horizon(world) is None
    assert clock.served_version(world, sub) == world.version(sub) == 5


def test_each_object_is_served_as_of_the_newest_delivered_event() -> None:
    world, sub = subscription_story()
    sub_events = events_of(world, sub)
    assert [e.version for e in sub_events] == [1, 2, 3, 4, 5]
    assert clock.advance(world, []) == -1
    assert clock.served_version(world, sub) == 1  # nothing sent yet: before its first event, at least v1
    served = []
    for e in sub_events:
        clock.advance(world, [e])
        served.append(clock.served_version(world, sub))
    assert served == [1, 2, 3, 4, 5]


def test_the_clock_never_goes_back_and_ignores_fabricated_events() -> None:
    world, sub = subscription_story()
    first, *_, last = events_of(world, sub)
    top = clock.advance(world, [last])
    assert clock.served_version(world, sub) == 5
    assert clock.advance(world, [first]) == top  # an old event redelivered: the provider's clock stays
    assert clock.advance(world, [replace(first, id="evt_not_in_the_world")]) == top
    assert clock.served_version(world, sub) == 5


def test_other_objects_follow_the_same_clock() -> None:
    world, sub = subscription_story()
    renewal_failed = next(e for e in world.events if e.type == "invoice.payment_failed")
    clock.advance(world, [renewal_failed])
    # The failure is sent right after the invoice's attempt and before the subscription
    # moves to past_due: the subscription is still at its renewal version (v2).
    assert clock.served_version(world, sub) == 2
    assert clock.served_version(world, renewal_failed.object_id) == renewal_failed.version


def test_the_provider_api_serves_the_clocked_version_over_http() -> None:
    world, sub = subscription_story()
    state = ServerState([world])
    headers = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}
    created = events_of(world, sub)[0]
    with run_server(state) as server, httpx.Client(base_url=server.api_base, headers=headers, timeout=5) as api:
        assert api.get(f"/v1/subscriptions/{sub}").json()["status"] == "canceled"  # not clocked: current
        clock.advance(world, [created])
        first = api.get(f"/v1/subscriptions/{sub}").json()
        assert (first["status"], first["hookproof_version"]) == ("active", 1)
        clock.advance(world, events_of(world, sub)[-1:])
        last = api.get(f"/v1/subscriptions/{sub}").json()
        assert (last["status"], last["hookproof_version"]) == ("canceled", 5)
        state.switches.set(sub, stale=True, times=1)
        stale = api.get(f"/v1/subscriptions/{sub}").json()
        assert stale["hookproof_version"] == 4  # the switch serves the version before the clock's


def test_servable_states_are_every_version_the_api_could_have_served_so_far() -> None:
    world, sub = subscription_story()
    statuses = [(e.version, e.status) for e in events_of(world, sub)]
    # never advanced (explore): every version up to the current one, delivered or not
    assert clock.servable_states(world, [sub]) == {sub: tuple(statuses)}
    first, second, third, *_ = events_of(world, sub)
    clock.advance(world, [third])  # certify: up to the version served at the newest delivery
    assert clock.servable_states(world, [sub]) == {sub: tuple(statuses[:3])}
    assert clock.servable_states(world, ["sub_not_in_the_world"]) == {}


def test_an_event_the_scenario_never_delivers_has_not_happened_for_the_api() -> None:
    world, sub = subscription_story()
    later = world.event(world.create_customer())  # a later story, delivered after the subscription's first event
    created, renewed, past_due, recovered, canceled = events_of(world, sub)
    clock.plan(world, [created, later])  # the subscription's later events are never delivered
    assert clock.horizon(world) is None  # a plan does not move the clock
    assert clock.served_version(world, sub) == 5  # nor clocks a world never advanced
    clock.advance(world, [created])
    assert clock.served_version(world, sub) == 1
    clock.advance(world, [later])  # the horizon passes the undelivered renewal, past due, ...: not served
    assert clock.served_version(world, sub) == 1
    assert clock.served_version(world, later.object_id) == later.version
    assert clock.servable_states(world, [sub]) == {sub: ((1, created.status),)}
    # a planned event after an unplanned one carries its change: served as of the planned one
    clock.plan(world, [created, past_due, later])
    assert clock.served_version(world, sub) == 3
    assert clock.servable_states(world, [sub]) == {sub: ((1, created.status), (2, renewed.status), (3, past_due.status))}
    clock.plan(world, world.events)  # every event planned: as without a plan
    assert clock.served_version(world, sub) == 5


def test_hookproof_serve_s_world_is_dated_up_to_now_and_the_api_creates_objects_now() -> None:
    """A trial's PaymentIntent created through `hookproof serve` was dated two months ahead: the
    served world started now and its lifecycle's renewals ran on. Its story now ends by now."""
    import time

    from hookproof.simulator.server.runner import served_world

    world = served_world(0)
    now = time.time()
    assert world.events and max(e.created_us for e in world.events) <= now * 1_000_000
    assert min(e.created_us for e in world.events) < (now - 20 * 86_400) * 1_000_000  # months of story, in the past
    headers = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}
    with run_server(ServerState([world])) as server, httpx.Client(base_url=server.api_base, headers=headers,
                                                                   timeout=5) as api:
        made = api.post("/v1/payment_intents", data={"amount": 2000, "currency": "usd"})
        assert made.status_code == 200, made.text
    assert abs(made.json()["created"] - now) < 120, (made.json()["created"], now)
