"""StoryBook: world stories replayed with fresh ids, each exactly as its profile renders it."""

from __future__ import annotations

import itertools

import pytest

from hookproof.loadtests.stories import (
    MAX_COPIES,
    StoryBook,
    play_stories,
    play_story,
    renamed,
    storm_sends,
    story_events,
    tail,
    template_world,
)
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import PROFILES, get_profile
from hookproof.simulator.world import World
from hookproof.simulator.world.lifecycle import RELATED_TYPES


def _keep_for(profile):  # type: ignore[no-untyped-def]
    return lambda e: profile.provider_type(e.type) is not None and (e.business_key is not None or e.stateful)


#: The worlds' clock start: two books built a second apart are the same book.
START_US = 1_790_000_000_000_000


def _book(name: str, stories: int = 3) -> StoryBook:
    profile = get_profile(name)
    return StoryBook(World(11, start_us=START_US), profile, _keep_for(profile), stories=stories)


@pytest.mark.parametrize("name", PROFILES)
def test_every_replayed_event_is_what_the_profile_renders_for_that_copy(name: str) -> None:
    book = _book(name)
    for s, story in enumerate(book.templates):
        for i, template in enumerate(story):
            for copy_no in (7, 62 ** 3 + 5, 123_456_789):
                fast = book.render(s, i, copy_no)
                slow = book.rendered_by_profile(template, copy_no)
                assert fast.envelope is not None and slow.envelope is not None
                assert (fast.event.id, fast.event.object_id, fast.event.business_key) == (
                    slow.event.id, slow.event.object_id, slow.event.business_key)
                assert (fast.event.version, fast.event.status, fast.event.amount, fast.event.type) == (
                    slow.event.version, slow.event.status, slow.event.amount, slow.event.type)
                assert fast.envelope.body == slow.envelope.body
                assert fast.envelope.event_id == slow.envelope.event_id
                assert dict(fast.envelope.headers) == dict(slow.envelope.headers)
                assert dict(fast.envelope.query) == dict(slow.envelope.query)


def test_stripe_replays_by_joining_segments_and_hashed_ids_fall_back_to_the_profile() -> None:
    assert _book("stripe").shortcut_share == 1.0
    # Standard Webhooks derives its msg_ id with a hash of the event id: never joined.
    assert _book("standard-webhooks").shortcut_share == 0.0


def test_users_of_one_process_get_disjoint_fresh_ids() -> None:
    book = _book("stripe", stories=2)
    per_story = sum(len(s) for s in book.templates)
    streams = [book.stream(first_copy=1 + u, stride=4) for u in range(4)]
    seen: dict[str, int] = {}
    keys: set[str] = set()
    for u, stream in enumerate(streams):
        for item in itertools.islice(stream, 3 * per_story):
            assert seen.setdefault(item.event.id, u) == u and item.event.id not in {
                t.id for story in book.templates for t in story}
            if item.event.business_key:
                assert item.event.business_key not in keys
                keys.add(item.event.business_key)
    assert len(seen) == 4 * 3 * per_story


def test_stream_stops_at_max_events_and_refuses_bad_strides() -> None:
    book = _book("stripe", stories=1)
    assert len(list(book.stream(max_events=5))) == 5
    with pytest.raises(ValueError):
        next(book.stream(stride=0))
    with pytest.raises(ValueError):
        tail(MAX_COPIES)
    assert tail(0) == "000000" and tail(61) == "00000z" and tail(62) == "000010"


def test_story_events_keeps_what_the_filter_accepts() -> None:
    source = story_events(World(5), lambda e: e.business_key is not None)
    first = [next(source) for _ in range(30)]
    assert all(e.business_key for e in first)
    assert len({e.id for e in first}) == 30
    assert list(story_events(World(5), lambda e: False)) == []


def test_renamed_story_keeps_its_truth_about_fresh_objects() -> None:
    original: Event = next(e for e in World(5).lifecycle() if e.business_key)
    copy = renamed([original], 7)[0]
    assert copy.id != original.id and copy.id[:-6] == original.id[:-6] and len(copy.id) == len(original.id)
    assert copy.object["id"] == copy.object_id and copy.version == original.version
    assert copy.status == original.status and copy.amount == original.amount
    assert copy.business_key == original.business_key.replace(original.object_id, copy.object_id)


def test_a_book_built_with_pauses_is_the_same_book() -> None:
    # a Locust worker yields between stories and events while it builds its book, so its
    # heartbeats reach the master; the book is the one built in one go
    profile = get_profile("stripe")
    pauses: list[int] = []
    paused = StoryBook(World(11, start_us=START_US), profile, _keep_for(profile), stories=3,
                       pause=lambda: pauses.append(1))
    whole = _book("stripe", 3)
    events = sum(len(story) for story in whole.templates)
    assert len(pauses) == 3 + events
    for a, b in zip(itertools.islice(paused.stream(first_copy=5), 200),
                    itertools.islice(whole.stream(first_copy=5), 200)):
        assert a.event == b.event and a.envelope == b.envelope


def test_a_github_storm_sends_an_issue_closed_reopened_and_closed_again() -> None:
    """The storm's GitHub stories are its lifecycle and the repeated lifecycles in turn
    (`GitHubWorld.storm_story`): every second story closes one issue twice, comments on it
    twice and closes one pull request twice, each change its own delivery; the storm sends
    them all (states, and effects)."""
    profile = get_profile("github")
    book = StoryBook(template_world("github", 7, start_us=1_790_000_000_000_000), profile, storm_sends(profile),
                     stories=4)
    assert len(book.templates) == 4
    for story in book.templates[1::2]:
        assert [e.type for e in story] == ["issues.opened", "issues.labeled", "issue_comment.created",
                                           "issues.labeled", "issues.closed", "issues.reopened",
                                           "issue_comment.created", "issues.closed", "pull_request.opened",
                                           "pull_request.closed", "pull_request.reopened",
                                           "pull_request.synchronize", "pull_request.closed", "push"]
        assert len({e.object_id for e in story if e.stateful}) == 2  # one issue, one pull request
    for story in book.templates[::2]:
        assert [e.type for e in story].count("issues.closed") == 1  # the lifecycle closes its issue once
    other = play_stories(template_world("github", 7, start_us=1_790_000_000_000_000), 4)[1]
    assert [e.id for e in other] == [e.id for e in book.templates[1]]  # the provider API's template is the same


def test_a_stripe_storm_story_buys_a_plan_through_a_subscription_mode_checkout() -> None:
    """Each billing story (its lifecycle) subscribes through a subscription-mode Checkout Session:
    the storm sends its completion, which owes the provisioning, released with the subscription's
    first events; a renamed copy provisions a session of its own."""
    story = play_story(World(8), 0)
    sends = storm_sends(get_profile("stripe"))
    (plan,) = [e for e in story if e.type == "checkout.session.completed" and e.object["mode"] == "subscription"]
    assert plan.business_key == f"provision:{plan.object_id}" and sends(plan)
    assert any({plan.type, "invoice.paid"} <= group for group in RELATED_TYPES)  # a related burst's member
    assert [e.type for e in story if e.object_id == plan.object["subscription"]][:2] == [
        "customer.subscription.created", "customer.subscription.updated"]
    (copy,) = [e for e in renamed(story, 7) if e.type == "checkout.session.completed"
               and e.object["mode"] == "subscription"]
    assert copy.business_key == f"provision:{copy.object_id}" != plan.business_key


def test_a_catalog_storm_sends_a_keyed_type_without_a_state_whatever_builtin_keys_says() -> None:
    """A user catalog's keys are the team's own (`KeyMapping.key_of` keeps them with
    ``builtin_keys = false``): a storm sends a keyed type that sets no state (the document's
    ``refund.created``, a new user's Clerk ``session.created``) whether or not the built-in keys
    are on; a type with neither a key nor a state stays out."""
    from examples.receivers import PROJECT_ROOT
    from hookproof.catalog_file import CatalogConfig, load_catalog, profile_of, with_renderer
    from hookproof.simulator.world.user_catalog import UserCatalogWorld

    catalog = with_renderer(load_catalog(CatalogConfig(openapi="webhooks.yaml"), PROJECT_ROOT / "examples" / "openapi"))
    profile = profile_of("generic-hmac", catalog)
    events = UserCatalogWorld(3, catalog=catalog).lifecycle()
    (refund,) = [e for e in events if e.type == "refund.created"]
    assert refund.business_key is not None and not refund.stateful
    (quiet,) = [e for e in events if e.type == "customer.updated"]
    assert quiet.business_key is None and not quiet.stateful
    for builtin in (True, False):
        sends = storm_sends(profile, None, {"builtin": builtin, "templates": {}})
        assert (sends(refund), sends(quiet)) == (True, False), builtin
