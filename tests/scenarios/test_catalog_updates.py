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
example = { type = "user.created", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada" } }
object_id = "data.id"
object_type = "user"
ordering = "data.updated_at"
state = "active"
key = "welcome:{data.id}"

[catalog.events."user.updated"]
example = { type = "user.updated", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Grace" } }
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
    assert plan.reason.startswith("no object in the "), plan.reason
