"""StormPlan: duplicates, bursts, reordering and redelivery waves, deterministic from a seed."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from hookproof.loadtests.plan import Send, StormPlan
from hookproof.simulator.events import Event


def _events(n: int) -> list[Event]:
    return [Event(id=f"evt_{i:04d}", type="invoice.paid", created=i, created_us=i * 10**6, object_type="invoice",
                  object_id=f"in_{i:04d}", version=1, object={}, business_key=f"renewal:in_{i:04d}") for i in range(n)]


def _drain(plan: StormPlan, limit: int = 100_000) -> list[tuple[Send, ...]]:
    groups = []
    for _ in range(limit):
        group = plan.next_group()
        if not group:
            break
        groups.append(group)
    return groups


def test_no_faults_sends_each_event_once_in_order() -> None:
    groups = _drain(StormPlan(_events(50)))
    assert [g[0].event.id for g in groups] == [e.id for e in _events(50)]
    assert all(len(g) == 1 and g[0].copy == 1 and g[0].tags == () for g in groups)


def test_reorder_window_permutes_but_keeps_every_event_once() -> None:
    groups = _drain(StormPlan(_events(200), reorder_window=8, seed=3))
    ids = [g[0].event.id for g in groups]
    assert sorted(ids) == [e.id for e in _events(200)]
    assert ids != sorted(ids)
    # an event never comes out more than a window early
    for pos, event_id in enumerate(ids):
        assert int(event_id[4:]) <= pos + 7


def test_bursts_are_concurrent_copies_of_one_event() -> None:
    groups = _drain(StormPlan(_events(2000), duplicates=0.2, burst=4, seed=1))
    bursts = [g for g in groups if len(g) > 1]
    assert len(groups) == 2000
    assert 0.15 * 2000 < len(bursts) < 0.25 * 2000
    for g in bursts:
        assert len(g) == 4 and len({s.event.id for s in g}) == 1
        assert [s.copy for s in g] == [1, 2, 3, 4]
        assert len({s.delivery_id for s in g}) == 4
        assert all(s.tags == ("burst=4",) for s in g)


def test_burst_one_sends_a_later_copy() -> None:
    groups = _drain(StormPlan(_events(500), duplicates=0.3, burst=1, reorder_window=5, seed=2))
    assert all(len(g) == 1 for g in groups)
    copies = Counter(g[0].event.id for g in groups)
    duplicated = [e for e, n in copies.items() if n == 2]
    assert set(copies.values()) <= {1, 2} and 0.2 * 500 < len(duplicated) < 0.4 * 500
    position = {}
    for i, g in enumerate(groups):
        send = g[0]
        if send.copy == 2:
            assert send.tags == ("copies=2",)
            assert i > position[send.event.id]
        else:
            position[send.event.id] = i


def test_a_wave_replays_what_was_sent_in_its_window() -> None:
    plan = StormPlan(_events(100), wave_window_s=2.0, seed=4)
    sent = [plan.next_group(elapsed_s=t * 0.1)[0].event.id for t in range(50)]  # 0.0 .. 4.9 s
    assert plan.start_wave(5.0) == 20  # sent at 3.0 .. 4.9 s
    replays = []
    while (r := plan.next_replay()) is not None:
        replays.append(r)
    assert sorted(r.event.id for r in replays) == sorted(sent[30:])
    assert all(r.tags == ("copies=wave-1",) and r.copy == 2 for r in replays)
    assert plan.replays_pending == 0


def test_a_wave_renders_each_replay_when_it_is_released() -> None:
    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    book = StoryBook(World(3), profile, lambda e: e.business_key is not None or e.stateful)
    renders = Counter[str]()
    plan = StormPlan(book.stream(max_events=400), wave_window_s=100.0, seed=5)
    firsts = {s.event.id: s for g in (plan.next_group(elapsed_s=t * 0.01) for t in range(120)) for s in g}
    for i, (t, event_id, object_id, r) in enumerate(plan._sent):  # count what the wave renders again

        def again(r=r, event_id=event_id):  # type: ignore[no-untyped-def]
            renders[event_id] += 1
            return r()

        plan._sent[i] = (t, event_id, object_id, again)
    queued = plan.start_wave(2.0)
    assert queued == len(firsts) and not renders
    replays = [plan.next_replay() for _ in range(queued)]
    assert plan.next_replay() is None and sorted(renders.values()) == [1] * queued
    assert sorted(r.delivery_id for r in replays if r) == sorted(f"dlv_{i}_2" for i in firsts)
    for r in replays:  # the very bytes of its first delivery
        assert r is not None and r.envelope is not None
        first = firsts[r.event.id]
        assert first.envelope is not None and r.event == first.event and r.tags == ("copies=wave-1",)
        assert (r.envelope.body, dict(r.envelope.headers)) == (first.envelope.body, dict(first.envelope.headers))


def test_a_held_event_goes_out_once_when_its_object_is_api_transient() -> None:
    # a held event released right after its object's next event is not sent again when
    # its turn in the later heap comes, whatever tags follow its own
    events = [Event(id=f"evt_{i:04d}", type="invoice.paid", created=i, created_us=i * 10**6, object_type="invoice",
                    object_id=f"in_{i // 2:04d}", version=1 + i % 2, object={}, status="paid") for i in range(400)]
    for api_transient in (0.0, 1.0):
        sends = [s for g in _drain(StormPlan(events, late=0.5, api_transient=api_transient, seed=3)) for s in g]
        late = [s for s in sends if s.tags[:1] == ("order=late",)]
        assert late and all(s.tags[1:] == (("api-transient",) if api_transient else ()) for s in late)
        assert len({s.delivery_id for s in sends}) == len(sends) == len(events)


def test_the_plan_is_deterministic_from_its_seed() -> None:
    def run(seed: int) -> list[tuple[str, ...]]:
        return [tuple(s.delivery_id for s in g) for g in _drain(StormPlan(_events(300), duplicates=0.2, burst=3,
                                                                           reorder_window=6, seed=seed))]
    assert run(9) == run(9)
    assert run(9) != run(10)


@pytest.mark.parametrize("kwargs", [{"duplicates": 1.5}, {"burst": 0}, {"reorder_window": 0}, {"wave_window_s": -1}])
def test_bad_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        StormPlan([], **kwargs)  # type: ignore[arg-type]


def test_sends_carry_the_envelope_their_source_rendered() -> None:
    from hookproof.loadtests.stories import Rendered
    from hookproof.simulator.profiles.base import Envelope

    events = _events(3)
    envelopes = [Envelope(event_id=e.id, type=e.type, body=e.id.encode()) for e in events]
    groups = _drain(StormPlan([Rendered(e, v) for e, v in zip(events, envelopes)], duplicates=1.0, burst=2, seed=1))
    assert [[s.envelope for s in g] for g in groups] == [[v, v] for v in envelopes]
    assert all(s.envelope is None for g in _drain(StormPlan(_events(3))) for s in g)


def _two_keyed_events_per_object(n: int) -> list[Event]:
    out = []
    for i in range(n):
        for version, (key, status) in enumerate((("renewal", "paid"), ("refund", "refunded")), start=1):
            out.append(Event(id=f"evt_{i:05d}_{version}", type="invoice.paid", created=i, created_us=i * 10**6,
                             object_type="invoice", object_id=f"in_{i:05d}", version=version, object={},
                             business_key=f"{key}:in_{i:05d}", status=status))
    return out


@pytest.mark.parametrize("burst", [1, 4])
def test_copy_counts_are_kept_only_while_an_event_may_be_sent_again(burst: int) -> None:
    # every pattern on, over far more events than a wave, a later copy, a held event or
    # an older-after-newer redelivery reaches back to
    plan = StormPlan(_two_keyed_events_per_object(6000), duplicates=0.3, burst=burst, reorder_window=6,
                     wave_window_s=0.5, wave_events=40, related=0.05, older_redelivery=0.3, late=0.3, seed=5)
    sends: list[Send] = []
    for tick in range(100_000):
        if tick % 2000 == 1999:
            plan.start_wave(tick / 100)
        group = plan.next_group(tick / 100)
        replay = plan.next_replay()
        if not group and replay is None:
            break
        sends.extend((*group, replay) if replay is not None else group)
    assert len({s.delivery_id for s in sends}) == len(sends)
    copies: dict[str, list[int]] = {}
    for s in sends:
        copies.setdefault(s.event.id, []).append(s.copy)
        assert s.delivery_id == f"dlv_{s.event.id}_{s.copy}"
    assert len(copies) == 12_000 and all(sorted(c) == list(range(1, len(c) + 1)) for c in copies.values())
    assert sum("copies=older-after-newer" in s.tags for s in sends) > 100
    # what is kept: the events the plan may still send again, no more
    assert len(plan._copies) <= len(plan._sent) + len(plan._keyed) + len(plan._later) < 4096 + 100


def test_what_may_be_sent_again_is_remembered_without_its_body() -> None:
    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    book = StoryBook(World(3), profile, lambda e: e.business_key is not None or e.stateful)
    plan = StormPlan(book.stream(max_events=2000), older_redelivery=0.5, seed=2)
    groups = _drain(plan)
    assert plan._keyed and all(kept.item is None for kept in plan._keyed.values())
    assert plan._sent and all(callable(r) for _, _, _, r in plan._sent)
    sends = [s for g in groups for s in g]
    firsts = {s.event.id: s for s in sends if s.copy == 1}
    older = [s for s in sends if s.tags == ("copies=older-after-newer",)]
    assert older
    for s in older:  # rendered again: the very bytes of its first delivery
        first = firsts[s.event.id]
        assert s.envelope is not None and first.envelope is not None
        assert (s.envelope.body, dict(s.envelope.headers)) == (first.envelope.body, dict(first.envelope.headers))
        assert s.event == first.event


@pytest.mark.parametrize("burst", [1, 2, 4, 6])
def test_no_group_and_its_replay_exceed_the_largest_group(burst: int) -> None:
    from hookproof.loadtests.plan import largest_group
    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    book = StoryBook(World(3), profile, lambda e: e.business_key is not None or e.stateful)
    plan = StormPlan(book.stream(max_events=3000), duplicates=0.3, burst=burst, reorder_window=8, wave_window_s=100.0,
                     wave_events=200, related=0.5, older_redelivery=0.2, late=0.2, seed=4)
    sizes = Counter[int]()
    for t in range(3000):
        if t == 100:
            assert plan.start_wave(t * 0.01) > 0
        group = plan.next_group(elapsed_s=t * 0.01)
        if not group:
            break
        sizes[len(group) + (plan.next_replay() is not None)] += 1
    assert max(sizes) <= largest_group(burst)
    if burst <= 4:  # the bound is met: a related burst of max(3, burst) with its state change, and a replay
        assert largest_group(burst) in sizes


def _two_waves(world: str) -> tuple[dict[str, Any], list[tuple[int, list[Any]]]]:
    """A storm plan over `world`'s stories (seed 3) under its profile's replay: the first sends
    by event id, and two waves' replays, each wave's every first send once (and nothing more)."""
    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import new_world

    profile = get_profile(world)
    book = StoryBook(new_world(world, 3), profile, lambda e: e.business_key is not None or e.stateful)
    plan = StormPlan(book.stream(max_events=60), wave_window_s=100.0, seed=5, replayed=profile.replayed)
    firsts = {s.event.id: s for g in (plan.next_group(elapsed_s=t * 0.01) for t in range(40)) for s in g}
    waves = []
    for wave in (1, 2):
        queued = plan.start_wave(1.0 + wave)
        waves.append((wave, [plan.next_replay() for _ in range(queued)]))
        assert queued == len(firsts) and plan.next_replay() is None
    return firsts, waves


def test_a_paddle_wave_sends_new_notifications_of_the_same_events() -> None:
    """Paddle's replay (POST /notifications/{id}/replay) is a new notification of the same event:
    a new notification_id, the same event_id. A new user's receiver claiming notification_id
    applied a replayed event twice, and the storm's waves, which kept the first notification,
    passed it; a wave now sends what the profile's replay sends, each wave a new notification,
    tagged ``replay`` so that the storm's findings name it."""
    from hookproof.simulator.profiles import get_profile

    profile = get_profile("paddle")
    firsts, waves = _two_waves("paddle")
    notifications: dict[str, set[str]] = {}
    for wave, replays in waves:
        for r in replays:
            # recorded as what it is: a replay (a new delivery entity), on top of its wave
            assert r is not None and r.envelope is None and r.tags == (f"copies=wave-{wave}", "replay")
            body = json.loads(profile.envelope(r.event).body)
            first = firsts[r.event.id]
            assert first.envelope is not None
            assert body["event_id"] == json.loads(first.envelope.body)["event_id"] == r.event.id
            notifications.setdefault(r.event.id, {json.loads(first.envelope.body)["notification_id"]}).add(
                body["notification_id"])
    assert all(len(ids) == 3 for ids in notifications.values())  # the first and one per wave, all different
    stripe = StormPlan(_events(20), wave_window_s=100.0, seed=5, replayed=get_profile("stripe").replayed)
    sent = {s.event.id: s for s in (stripe.next_group(elapsed_s=t * 0.1)[0] for t in range(10))}
    assert stripe.start_wave(1.0) == 10
    for r in iter(stripe.next_replay, None):  # Stripe resends the event as it was: no replay tag
        assert r.event is sent[r.event.id].event and r.envelope is sent[r.event.id].envelope
        assert r.tags == ("copies=wave-1",)



def test_a_shopify_wave_sends_each_event_through_another_subscription() -> None:
    """Shopify has no manual replay: one event comes again as a new delivery through another
    subscription to its topic (shopify.dev, "Ignore duplicate webhooks"). A wave sends that: the
    same body and X-Shopify-Event-Id, a new X-Shopify-Webhook-Id per wave."""
    from hookproof.simulator.profiles.shopify import ShopifyProfile

    profile = ShopifyProfile()
    firsts, waves = _two_waves("shopify")
    webhook_ids: dict[str, set[str]] = {}
    for wave, replays in waves:
        for r in replays:
            assert r is not None and r.envelope is None and r.tags == (f"copies=wave-{wave}", "replay")
            first = firsts[r.event.id].envelope
            again = profile.envelope(r.event)
            assert first is not None and again.body == first.body
            assert {k for k in first.headers if again.headers[k] != first.headers[k]} == {"X-Shopify-Webhook-Id"}
            assert again.headers["X-Shopify-Event-Id"] == first.headers["X-Shopify-Event-Id"] == profile.event_id(r.event)
            assert again.event_id == first.event_id == f"{r.event.type}:{profile.event_id(r.event)}"
            webhook_ids.setdefault(r.event.id, {first.headers["X-Shopify-Webhook-Id"]}).add(
                again.headers["X-Shopify-Webhook-Id"])
    assert webhook_ids and all(len(ids) == 3 for ids in webhook_ids.values())
