"""`ahead_of` pinned against the rule it implements: every sent object's template story
renamed whole to its copy, then read event by event.

The storms here are seeded replays as a storm's processes send them (`StoryBook.stream`,
each user its own copy numbers, a seeded share of events never sent, every user cut off
mid-story), over each kind of world renaming (the billing world's pattern, numbers,
ULIDs, GitHub's names and node ids), with the built-in keys and with a team's templates.
The reference below is the former implementation, kept verbatim in substance.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from hookproof.loadtests.ahead import Ahead, ahead_of
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import StoryBook, process_seed, template_world
from hookproof.loadtests.storm_truth import renamer_of, template_worlds
from hookproof.loadtests.team_keys import storm_keys
from hookproof.scenarios.business_keys import KeyMapping
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile

START_US = 1_790_000_000_000_000


def reference_ahead_of(sent: Sequence[Event], templates: Sequence[Any], *, keys: KeyMapping | None = None) -> Ahead:
    """The `Ahead` by renaming each sent object's whole story to its copy (the slow, sure way)."""
    renamers = [(renamer_of(w), w) for w in templates]
    sent_ids = {e.id for e in sent}
    ahead = Ahead()
    for object_id in {e.object_id for e in sent}:
        for renamer, world in renamers:
            found = renamer.original(object_id)
            if found is None:
                continue
            template_id, copy_no = found
            story = renamer.events([t for t in world.events if t.object_id == template_id], copy_no)
            last_sent = max((i for i, e in enumerate(story) if e.id in sent_ids), default=-1)
            for i, e in enumerate(story):
                if e.id in sent_ids:
                    continue
                key = keys.key_of(e) if keys is not None else e.business_key
                if key is not None:
                    ahead.keys[key] = e.amount
                if e.status is not None and i > last_sent:
                    ahead.statuses.setdefault(e.object_id, set()).add(e.status)
            break
    return ahead


def seeded_storm(spec: StormSpec, processes: int, events_per_user: int, *, users: int = 3,
                 dropped: float = 0.1) -> list[Event]:
    """The events a storm of `spec` over `processes` processes sent: each process's users
    replay its stories on their own copies, a share `dropped` never sent, each user cut
    off at a seeded point."""
    profile = get_profile(spec.profile)
    rnd = random.Random(spec.seed)
    sent = []
    for index in range(processes):  # each process's book, from a fresh world of its seed
        world = template_world(profile.world, process_seed(spec.seed, index), start_us=START_US)
        book = StoryBook(world, profile, lambda e: profile.provider_type(e.type) is not None
                         and (e.business_key is not None or e.stateful))
        for user in range(users):
            first, stride = (1 + user, 1 << 16) if book.renamer is None else (1 + user, users)
            for item in book.stream(first_copy=first, stride=stride,
                                    max_events=events_per_user - rnd.randrange(events_per_user // 3)):
                if rnd.random() >= dropped:
                    sent.append(item.event)
    return sent


def _spec(profile: str, seed: int, keys: dict[str, Any] | None = None) -> StormSpec:
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", profile=profile, users=3, rate_per_s=1.0,
                     duration_s=1.0, seed=seed, world_start_us=START_US, out_dir="unused", keys=keys)


@pytest.mark.parametrize(("profile", "events_per_user"),
                         [("stripe", 400), ("mercadopago", 200), ("paddle", 200), ("github", 30)])
def test_ahead_of_equals_renaming_every_story_whole(profile: str, events_per_user: int) -> None:
    for seed in (3, 11):
        spec = _spec(profile, seed)
        templates = template_worlds(spec, 2)
        sent = seeded_storm(spec, 2, events_per_user)
        got, want = ahead_of(sent, templates), reference_ahead_of(sent, templates)
        assert want.keys and want.statuses  # the storm left stories unfinished
        assert got.keys == want.keys and got.statuses == want.statuses


#: A team's templates over both kinds of key: read from the body and built in.
TEAM = {"paddle": {"transaction.completed": "grant:{data.id}", "subscription.canceled": "revoke:{data.id}",
                   "subscription.past_due": "remind:{data.id}"},
        "shopify": {"orders/paid": "ship:{id}", "refunds/create": "repay:{id}"}}


@pytest.mark.parametrize("profile", ["paddle", "shopify"])
def test_ahead_of_under_a_teams_keys_equals_renaming_every_story_whole(profile: str) -> None:
    types = {v: k for k, v in get_profile(profile).event_types().items()}
    keys = {"builtin": True, "templates": {types.get(t, t): v for t, v in TEAM[profile].items()}, "counters": {}}
    spec = _spec(profile, 5, keys)
    templates = template_worlds(spec, 2)
    mapping = storm_keys(spec, templates)
    assert mapping is not None
    sent = seeded_storm(spec, 2, 200)
    got, want = ahead_of(sent, templates, keys=mapping), reference_ahead_of(sent, templates, keys=mapping)
    prefixes = {v.split(":")[0] for v in TEAM[profile].values()}
    assert any(k.split(":")[0] in prefixes for k in want.keys)  # the team's templates made keys ahead
    assert got.keys == want.keys and got.statuses == want.statuses
