"""Explore may send an update that keeps an object's status again and again (a user's
``user.updated``: ``active`` as its ``user.created`` left it), so a receiver writing a
user's fields in arrival order is reachable; a type that moves the status (``booking
confirmed``) still happens once, and nothing happens after a final status but what a
provider sends then."""

from __future__ import annotations

from pathlib import Path

from hookproof.config import load_config
from hookproof.scenarios.catalog_ops import catalog_ops
from hookproof.simulator.world import new_world

CONFIG = '''
[target]
url = "http://127.0.0.1:9/webhooks"
profile = "svix"
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

[observer]
kind = "sql"
url = "sqlite:///x.db"
effects = "SELECT business_key FROM emails"

[catalog.events."user.created"]
example = { type = "user.created", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada", updated_at = 1764000000000 } }
object_id = "data.id"
object_type = "user"
ordering = "data.updated_at"
state = "active"
key = "welcome:{data.id}"

[catalog.events."user.updated"]
example = { type = "user.updated", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Grace", updated_at = 1764000000000 } }
object_id = "data.id"
object_type = "user"
ordering = "data.updated_at"
state = "active"

[catalog.events."user.deleted"]
example = { type = "user.deleted", data = { id = "user_2abcdefghijklmnopqrstuvwxy", deleted = true } }
object_id = "data.id"
object_type = "user"
state = "deleted"

[catalog.events."booking.requested"]
example = { type = "booking.requested", data = { id = "bk_1", state = "requested" } }
object_id = "data.id"
object_type = "booking"
status = "data.state"
state = "requested"

[catalog.events."booking.confirmed"]
example = { type = "booking.confirmed", data = { id = "bk_1", state = "confirmed" } }
object_id = "data.id"
object_type = "booking"
status = "data.state"
state = "confirmed"
'''


def test_an_update_keeping_the_status_happens_again_until_the_object_moves_on(tmp_path: Path) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(CONFIG, encoding="utf-8")
    kind = load_config(path).profile().world
    ops = catalog_ops(kind)
    world = new_world(kind, 3)
    ops.apply(world, "user.created", None)
    ops.apply(world, "booking.requested", None)
    assert ("user.updated", 0) in ops.legal(world) and ("user.deleted", 0) in ops.legal(world)
    ops.apply(world, "user.updated", 0)
    ops.apply(world, "user.updated", 0)  # and again
    assert ("user.updated", 0) in ops.legal(world)
    assert [e.type for e in world.events if e.object_type == "user"] == ["user.created", "user.updated",
                                                                         "user.updated"]
    assert ("booking.confirmed", 0) in ops.legal(world)
    ops.apply(world, "booking.confirmed", 0)
    assert ("booking.confirmed", 0) not in ops.legal(world)  # a confirmed booking is not confirmed again
    ops.apply(world, "user.deleted", 0)
    legal = ops.legal(world)
    assert ("user.updated", 0) not in legal and ("user.deleted", 0) not in legal


def test_distinct_events_names_why_no_object_gets_two_effects_under_the_team_s_keys(tmp_path: Path) -> None:
    """A user's welcome is one per user: no object gets two effects of its own, whatever keys
    the team gives; the reason says so, not that the keys make nothing effectful."""
    from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable

    path = tmp_path / "hookproof.toml"
    path.write_text("builtin_keys = false\n" + CONFIG.replace('key = "welcome:{data.id}"\n', "")
                    + '\n[business_keys]\n"user.created" = "welcome:{data.id}"\n', encoding="utf-8")
    config = load_config(path)
    profile = config.profile()
    ctx = Context(profile=profile, keys=config.key_mapping())
    plan = CATALOG["distinct-events-same-object"].plan(ctx, new_world(profile.world, 2))
    assert isinstance(plan, NotApplicable)
    assert plan.reason.startswith("no object in your catalog "), plan.reason


def test_the_state_story_leaves_an_updated_object_in_a_compared_status_before_walking_another(
        tmp_path: Path) -> None:
    """Certify's state scenarios (`reorder`, `stale-after-newer`) replay the state story: a user
    created and updated twice (each update's name varied, its time later) stays ``active``, where
    its first name is compared; only then does another user walk to ``deleted``, whose stub
    carries no name. A story ending each user deleted would never compare a name. The booking
    kind, with fewer status-setting types, is walked after the users (every stateful kind is)."""
    path = tmp_path / "hookproof.toml"
    path.write_text(CONFIG, encoding="utf-8")
    world = new_world(load_config(path).profile().world, 3)
    story = world.state_story()
    assert [(e.type, e.status) for e in story] == [
        ("user.created", "active"), ("user.updated", "active"), ("user.updated", "active"),
        ("user.created", "active"), ("user.updated", "active"), ("user.deleted", "deleted"),
        ("booking.requested", "requested"), ("booking.confirmed", "confirmed")]
    updated, walked = story[:3], story[3:6]
    assert len({e.object_id for e in updated}) == 1 and len({e.object_id for e in walked}) == 1
    assert updated[0].object_id != walked[0].object_id
    names = [e.extra["body"]["data"]["first_name"] for e in updated]
    assert len(set(names)) == 3, names
    times = [e.extra["body"]["data"]["updated_at"] for e in updated]
    assert times == sorted(times) and len(set(times)) == 3, times
    bookings = story[6:]  # the user kind has the most status-setting types: walked first
    assert {e.object_type for e in bookings} == {"booking"} and len({e.object_id for e in bookings}) == 1


def test_state_scenarios_comparing_one_status_are_not_applicable_unless_fields_are_compared(
        tmp_path: Path) -> None:
    """Users created and updated, never deleted: every event says ``active``, so ``reorder``
    and ``stale-after-newer`` would compare ``active`` with ``active`` and pass whatever the
    receiver does; they say why they are not applicable instead, unless the observer compares
    a field of the user's state (its first name), which the updates change."""
    from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan

    users_only = CONFIG.split('[catalog.events."user.deleted"]')[0]
    path = tmp_path / "hookproof.toml"
    path.write_text(users_only, encoding="utf-8")
    profile = load_config(path).profile()
    for scenario in ("reorder", "stale-after-newer"):
        plan = CATALOG[scenario].plan(Context(profile=profile), new_world(profile.world, 2))
        assert isinstance(plan, NotApplicable), scenario
        assert plan.reason == ("your catalog tells no story with two status-setting events of one object in "
                               "different states: each object's events all say active, so any order shows the "
                               "provider's state"), plan.reason
        compared = CATALOG[scenario].plan(Context(profile=profile, state_fields={"user": ("first_name",)}),
                                          new_world(profile.world, 2))
        assert isinstance(compared, Plan), scenario
