"""A GitHub App's ping owes nothing: GitHub's ping carries ``zen``, ``hook_id`` and ``hook``, no
``installation`` (docs.github.com "Webhook events and payloads", ``ping``; githubkit's
``WebhookPing``), so no receiver can tell which installation it concerns. Before, the world
filed it under the App's own installation with that installation's status, and `mass-redelivery`
owed an observer reading installations the App's installation ``active`` (``stale``: object
missing after settling).
"""

from __future__ import annotations

from hookproof.simulator.world import GitHubWorld, emit_events


def test_a_ping_is_about_the_webhook_and_owes_nothing() -> None:
    """Wherever a ping is sent (certify's stories, a storm's lifecycle, `hookproof send --event
    ping`), its event is about the App's webhook (the hook id, no record), with no status and no
    business key; its body is GitHub's three fields. No event with a status is about the App's
    own installation: no story changes it."""
    world = GitHubWorld(7)
    pings = [e for e in [*world.lifecycle(), *world.effect_story(), *world.storm_story(0),
                         *emit_events(GitHubWorld(7), "ping")] if e.type == "ping"]
    assert len(pings) == 4
    for ping in pings:
        assert (ping.object_type, ping.object_id, ping.status, ping.business_key, ping.version) == (
            "hook", str(world.hook_id), None, None, 1)
        assert sorted(ping.extra["payload"]) == ["hook", "hook_id", "zen"]
        assert ping.object == ping.extra["payload"]["hook"]
    assert not [e.type for e in world.events if e.object_id == world.account and e.status is not None]
    star = world.unknown_event()
    assert (star.object_type, star.object_id, star.status) == ("repository", world.repository()["full_name"], None)
