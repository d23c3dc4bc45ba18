"""``storm --rate`` is events per second, as ``--help`` and the README say, whatever a group carries.

A user's turns were counted in groups: a related burst (a new object's first events released
together, `StormPlan.related`, 0.2 of the groups by default) carried 2 to 4 new events in one
turn, so ``--rate 10`` offered about 18 events/s (a Polar storm of 20 s at rate 10 sent 353
events). `shape.Pacer` moves a user's schedule by the events each group carries for the first
time: the counts below are over known storm lengths, no clock is read.
"""

from __future__ import annotations

from collections import Counter

import pytest

from hookproof.loadtests.plan import StormPlan
from hookproof.loadtests.shape import LoadShape, Pacer, make_shape


def _offered(shape: LoadShape, users: int, sizes: list[int]) -> tuple[int, int]:
    """(new events, groups) `users` pacers release over `shape`, their groups carrying `sizes` in turn."""
    pacers = [Pacer(shape, users, shape.first_send_s(i, users)) for i in range(users)]
    events = groups = 0
    for pacer in pacers:
        turns = []
        while (due := pacer.claim()) is not None:  # a user's senders claim turns ahead of their groups
            assert 0 <= due < shape.duration_s
            turns.append(due)
        for _ in turns:
            if pacer.due_now():
                size = sizes[groups % len(sizes)]
                pacer.drew(size)
                events += size
                groups += 1
    return events, groups


@pytest.mark.parametrize("users", [1, 4, 8])
def test_groups_of_several_new_events_take_as_many_turns(users: int) -> None:
    shape = make_shape("steady", 10.0, 5.0)
    events, groups = _offered(shape, users, [3, 1, 2, 1])
    # 10 events/s for 5 s; each user's last group may carry past its last turn (at most 2 more events)
    assert 50 <= events <= 50 + 2 * users and groups < events
    assert _offered(shape, users, [1]) == (50, 50)  # a group of one event is one turn, as before


def test_a_ramp_still_offers_its_integral() -> None:
    shape = make_shape("ramp", 20.0, 10.0)
    events, _ = _offered(shape, 2, [2, 1, 3])
    assert shape.expected_events() <= events <= shape.expected_events() + 2 * 2


def test_a_storm_plans_new_events_at_the_rate() -> None:
    """A stripe storm's plan with the CLI's default patterns (related bursts 0.2, duplicates 0.2 in
    bursts of 4, reordering over 8, older-after-newer and late 0.05) over 5 s at 10 events/s:
    40 to 60 events sent a first time (50 asked for)."""
    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    shape = make_shape("steady", 10.0, 5.0)
    first = Counter[str]()
    related = 0
    for user in range(2):
        book = StoryBook(World(3 + user), profile, lambda e: e.business_key is not None or e.stateful)
        plan = StormPlan(book.stream(max_events=2000), duplicates=0.2, burst=4, reorder_window=8, related=0.2,
                         older_redelivery=0.05, late=0.05, seed=7 + user)
        pacer = Pacer(shape, 2, shape.first_send_s(user, 2))
        while (due := pacer.claim()) is not None:
            if not pacer.due_now():
                continue
            group = drawn = plan.next_group(due)
            while drawn and not any(s.copy == 1 for s in drawn):  # as the storm's user draws on
                drawn = plan.next_group(due)
                group = (*group, *drawn)
            related += any(t.startswith("burst=related") for s in group for t in s.tags)
            new = [s for s in group if s.copy == 1]
            pacer.drew(len(new))
            first.update(s.event.id for s in new)
    assert related >= 5  # the groups that made the rate overshoot are there
    assert 40 <= sum(first.values()) <= 60 and max(first.values()) == 1


@pytest.mark.slow
def test_a_5_s_storm_at_rate_10_sends_about_50_events(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A real storm (Locust, the default patterns: related bursts, duplicates, reordering) at
    ``--rate 10`` for 5 s: 40 to 60 distinct events (a count over the storm's known length; the
    same storm sent 96 when a related burst took one turn)."""
    import json

    from tests.loadtests.test_storm_command import _config, _storm

    out = tmp_path / "out"
    result = _storm(_config(tmp_path, "inbox_sync"), out, "--users", "2", "--rate", "10", "--duration", "5s",
                    "--workers", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    (latency,) = [c for c in json.loads((out / "report.json").read_text())["scenarios"][0]["checks"]
                  if c["check_id"] == "ack_latency"]
    assert 40 <= latency["stats"]["events"] <= 60, latency["stats"]
