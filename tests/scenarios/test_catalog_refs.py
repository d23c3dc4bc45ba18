"""References between a user catalog's object kinds (`EventSpec.refs`, ``refs`` in the
config, ``x-hookproof-refs`` in a document).

A field holding another object's id used to get a fresh value per object (or keep the
example's): a Clerk membership's ``data.public_user_data.user_id`` and a session's
``data.user_id`` named no user that was sent, every Lemon Squeezy renewal carried the
example's ``subscription_id``. A receiver answering 404 until the parent is synced (so the
provider retries) was failed on a correct design. Now each referenced path names an object
of its kind the world made before, whose creating event the endpoint was sent earlier (made
first when none is): in certify's plans (a first plain phase delivering what a plan names
and does not send itself), in explore's world and in a storm's replayed stories (renamed
with the objects they name). Reordering scenarios may still send a child first, as the
provider does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from hookproof.certify import certify
from hookproof.config import load_config
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.events import Event
from hookproof.simulator.world import new_world
from hookproof.simulator.world.json_instances import get_path, parse_path
from hookproof.simulator.world.user_catalog import BODY, REFS, UserCatalogWorld

SECRET = "s3cret"

#: Lemon Squeezy's shapes, cut down: a subscription (JSON:API string id), its renewals (an
#: invoice naming it by an integer ``subscription_id``), and an order whose first item names
#: the order itself (a self reference, an integer).
SHOP = """
[catalog]
type_field = "meta.event_name"

[catalog.events."subscription_created"]
example = { meta = { event_name = "subscription_created" }, data = { type = "subscriptions", id = "2470311", attributes = { status = "active", customer_id = 1500001 } } }
object_type = "subscription"
key = "subscription:{data.id}"

[catalog.events."subscription_payment_success"]
example = { meta = { event_name = "subscription_payment_success" }, data = { type = "subscription-invoices", id = "811005", attributes = { subscription_id = 2470311, total = 999 } } }
object_type = "invoice"
key = "renewal:{data.id}"
refs = { "data.attributes.subscription_id" = "subscription" }

[catalog.events."order_created"]
example = { meta = { event_name = "order_created" }, data = { type = "orders", id = "1900001", attributes = { total = 999, first_order_item = { id = 3300001, order_id = 1900001 } } } }
object_type = "order"
key = "order:{data.id}"
refs = { "data.attributes.first_order_item.order_id" = "order" }
"""

#: Clerk's shapes, cut down (svix): users (with states), organizations, memberships naming both,
#: sessions naming a user; the membership and session types come first in the catalog.
CLERK = """
[catalog.events."organizationMembership.created"]
example = { type = "organizationMembership.created", data = { id = "orgmem_2abcdefghijklmnopqrstuvw", role = "admin", organization = { id = "org_2abcdefghijklmnopqrstuvwxy", name = "Acme" }, public_user_data = { user_id = "user_2abcdefghijklmnopqrstuvwxy", identifier = "ada@example.com" } } }
object_type = "membership"
key = "member:{data.id}"
refs = { "data.organization.id" = "organization", "data.public_user_data.user_id" = "user" }

[catalog.events."session.created"]
example = { type = "session.created", data = { id = "sess_2abcdefghijklmnopqrstuvwxy", user_id = "user_2abcdefghijklmnopqrstuvwxy", status = "active" } }
object_type = "session"
refs = { "data.user_id" = "user" }

[catalog.events."user.created"]
example = { type = "user.created", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada", updated_at = 1733130000000 } }
object_type = "user"
ordering = "data.updated_at"
state = "active"
key = "welcome:{data.id}"

[catalog.events."user.updated"]
example = { type = "user.updated", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Grace", updated_at = 1733130000000 } }
object_type = "user"
ordering = "data.updated_at"
state = "active"

[catalog.events."user.deleted"]
example = { type = "user.deleted", data = { id = "user_2abcdefghijklmnopqrstuvwxy", deleted = true } }
object_type = "user"
state = "deleted"

[catalog.events."organization.created"]
example = { type = "organization.created", data = { id = "org_2abcdefghijklmnopqrstuvwxy", name = "Acme" } }
object_type = "organization"
"""


def shop_config(port: int, db: Path, *, seed: int = 4) -> str:
    return f"""[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "generic-hmac"
secret = "{SECRET}"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT 'subscription:' || id AS business_key FROM subscriptions UNION ALL SELECT 'renewal:' || i.id FROM invoices i JOIN subscriptions s ON s.id = i.subscription_id UNION ALL SELECT 'order:' || id FROM orders"

[run]
seed = {seed}

[settle]
window_s = 0.15
{SHOP}"""


def clerk_config() -> str:
    return f"""[target]
url = "http://127.0.0.1:9/webhooks"
profile = "svix"
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

[observer]
kind = "sql"
url = "sqlite:///x.sqlite"
effects = "SELECT business_key FROM emails"

[observer.states]
user = "SELECT id AS object_id, CASE WHEN deleted = 1 THEN 'deleted' ELSE 'active' END AS status FROM users"
{CLERK}"""


def context_and_world(tmp_path: Path, text: str, seed: int = 4) -> tuple[Context, UserCatalogWorld]:
    path = tmp_path / "hookproof.toml"
    path.write_text(text, encoding="utf-8")
    loaded = load_config(path)
    profile = loaded.profile()
    world = new_world(profile.world, seed)
    assert isinstance(world, UserCatalogWorld)
    states = frozenset(loaded.observer.states or ()) if loaded.observer is not None else frozenset()
    return Context(profile=profile, keys=loaded.key_mapping(), state_kinds=states), world


def refs_of(world: UserCatalogWorld, event: Event) -> dict[str, Any]:
    """Each reference path of `event`'s type -> the value its body carries there (none for a type
    the catalog lacks: the unknown type a scenario sends)."""
    if event.type not in world.catalog.types:
        return {}
    spec = world.catalog.spec(event.type)
    return {path: get_path(event.extra[BODY], parse_path(path)) for path in spec.refs or {}}


def dangling(world: UserCatalogWorld, sent: list[Event]) -> list[str]:
    """Every reference in `sent` (in delivery order) that names no object whose creating event
    was sent before it (the object itself, for a self reference), with its kind's id type."""
    out = []
    made: dict[str, str] = {}  # object id -> its kind, from the creating events sent so far
    for event in sent:
        if event.type not in world.catalog.types:
            continue
        spec = world.catalog.spec(event.type)
        first = world.creating_event(event.object_id)
        if first is not None and first.id == event.id:
            made[event.object_id] = event.object_type
        for path, value in refs_of(world, event).items():
            kind = (spec.refs or {})[path]
            if kind == spec.kind:
                if str(value) != event.object_id:
                    out.append(f"{event.type} {path}: {value!r} is not the object's own id {event.object_id}")
            elif made.get(str(value)) != kind:
                out.append(f"{event.type} {path}: {value!r} names no {kind} sent before it")
    return out


# ---- the world ------------------------------------------------------------------------

def test_a_renewal_names_a_subscription_sent_before_it_in_the_example_s_id_type(tmp_path: Path) -> None:
    """Each renewal names a subscription the world made (first when none is), as an integer as
    the example has it; an order's first item names the order itself."""
    _, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    first = world.emit("subscription_payment_success")
    assert [e.type for e in world.events] == ["subscription_created", "subscription_payment_success"]
    subscription = world.events[0].object_id
    assert refs_of(world, first) == {"data.attributes.subscription_id": int(subscription)}
    assert first.extra[REFS] == {"data.attributes.subscription_id": subscription}
    again = world.emit("subscription_payment_success", first.object_id)  # the same invoice: the same subscription
    other = world.emit("subscription_payment_success")  # a new one: the subscription made before
    assert len(world.events) == 4
    assert refs_of(world, again) == refs_of(world, other) == refs_of(world, first)
    assert other.object_id != first.object_id
    order = world.emit("order_created")
    assert refs_of(world, order) == {"data.attributes.first_order_item.order_id": int(order.object_id)}
    assert REFS not in order.extra  # it names no other object
    assert not dangling(world, world.events)


def test_several_subscriptions_are_each_named_and_the_draw_is_the_seed_s(tmp_path: Path) -> None:
    _, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    subscriptions = {world.emit("subscription_created").object_id for _ in range(3)}
    named = [str(refs_of(world, world.emit("subscription_payment_success"))["data.attributes.subscription_id"])
             for _ in range(12)]
    assert set(named) == subscriptions  # every one of them renewed, none made anew
    assert [e.type for e in world.events].count("subscription_created") == 3
    _, again = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    for _ in range(3):
        again.emit("subscription_created")
    assert [str(refs_of(again, again.emit("subscription_payment_success"))["data.attributes.subscription_id"])
            for _ in range(12)] == named


def test_a_membership_names_a_user_and_an_organization_made_first(tmp_path: Path) -> None:
    """Clerk's membership, first in its catalog: a user and an organization are made before it;
    a session then names a user sent before it, and a user's later events keep their own ids."""
    _, world = context_and_world(tmp_path, clerk_config())
    membership = world.emit("organizationMembership.created")
    assert [e.type for e in world.events] == ["organization.created", "user.created",
                                              "organizationMembership.created"]
    org, user = world.events[0].object_id, world.events[1].object_id
    assert refs_of(world, membership) == {"data.organization.id": org, "data.public_user_data.user_id": user}
    session = world.emit("session.created")
    assert refs_of(world, session) == {"data.user_id": user}
    assert len(world.events) == 4
    assert not dangling(world, world.events)


def test_the_lifecycle_names_its_own_objects(tmp_path: Path) -> None:
    """A storm replays each lifecycle with its ids renamed: the objects a lifecycle names are its own."""
    _, world = context_and_world(tmp_path, clerk_config())
    stories = [world.lifecycle() for _ in range(3)]
    for story in stories:
        assert not dangling(world, story), story


def test_an_unrecorded_event_s_object_is_never_named(tmp_path: Path) -> None:
    """The unknown type's event (`unknown_event`: a catalog type's, not recorded) makes an object
    no event sent: a later reference names another one, made and sent first."""
    _, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    unknown = world.emit_new(world.catalog.spec("subscription_created"), record=False)
    assert world.events == [] and world.creating_event(unknown.object_id) is None
    renewal = world.emit("subscription_payment_success")
    assert [e.type for e in world.events] == ["subscription_created", "subscription_payment_success"]
    assert refs_of(world, renewal)["data.attributes.subscription_id"] == int(world.events[0].object_id)
    assert world.events[0].object_id != unknown.object_id


DOCUMENT = """openapi: 3.1.0
info: {title: Sessions, version: "1"}
webhooks:
  user.created:
    post:
      requestBody:
        content:
          application/json:
            example: {type: user.created, data: {id: user_2abcdefghijklmnopqrstuvwxy}}
      responses: {"200": {description: ok}}
  session.created:
    post:
      x-hookproof-refs: {data.user_id: user}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [type, data]
              properties:
                type: {type: string}
                data:
                  type: object
                  required: [id, user_id]
                  properties:
                    id: {type: string, pattern: "^sess_[a-z0-9]{26}$"}
                    user_id: {type: string, pattern: "^user_[a-z0-9]{26}$"}
            example: {type: session.created, data: {id: sess_2abcdefghijklmnopqrstuvwxy, user_id: user_2abcdefghijklmnopqrstuvwxy}}
      responses: {"200": {description: ok}}
"""


def test_a_document_s_extension_names_the_user_a_session_belongs_to(tmp_path: Path) -> None:
    """``x-hookproof-refs`` on a webhook's operation: the session names the user made before it,
    in the user id's shape (its schema's pattern holds)."""
    (tmp_path / "webhooks.yaml").write_text(DOCUMENT, encoding="utf-8")
    text = shop_config(9, tmp_path / "x.sqlite").split("\n[catalog]", 1)[0] + '\n[catalog]\nopenapi = "webhooks.yaml"\n'
    _, world = context_and_world(tmp_path, text)
    assert world.catalog.spec("session.created").refs == {"data.user_id": "user"}
    session = world.emit("session.created")
    assert [e.type for e in world.events] == ["user.created", "session.created"]
    assert refs_of(world, session) == {"data.user_id": world.events[0].object_id}
    assert not dangling(world, world.events)


# ---- certify's plans -------------------------------------------------------------------

#: Scenarios that deliver a story's events in another order than the provider made them, on
#: purpose (a child may come before its parent there, as the provider may send it).
REORDERING = {"reorder", "stale-after-newer", "related-burst"}


@pytest.mark.parametrize("text", ["shop", "clerk"])
def test_every_plain_plan_sends_each_parent_before_the_events_naming_it(tmp_path: Path, text: str) -> None:
    """Every catalog scenario planned over the catalog's world: in the order its phases deliver,
    each referenced path names an object whose creating event was sent before (the plans lacking
    it get a first plain phase with it); the reordering ones name only objects they send."""
    planned = 0
    for scenario in CATALOG.values():
        ctx, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite") if text == "shop"
                                       else clerk_config())
        plan = scenario.plan(ctx, world)
        if not isinstance(plan, Plan):
            continue
        planned += 1
        sent = [e for phase in plan.phases for e in phase.events]
        if scenario.id in REORDERING:
            ids = {e.object_id for e in sent}
            assert all(str(v) in ids for e in sent for v in refs_of(world, e).values()), scenario.id
            continue
        assert not dangling(world, sent), (scenario.id, dangling(world, sent))
    assert planned >= 8


def test_a_plan_lacking_the_parent_gets_it_in_a_first_plain_phase(tmp_path: Path) -> None:
    """The effect story's membership named a user and an organization made for it, which the
    story (one event per effectful type) does not send: they come first, in a plain phase; a
    plan sending each parent itself keeps its phases (the shop's, the users' walk)."""
    ctx, world = context_and_world(tmp_path, clerk_config())
    plan = CATALOG["duplicate-sequential"].plan(ctx, world)
    assert isinstance(plan, Plan)
    first, rest = plan.phases
    assert [e.type for e in first.events] == ["organization.created", "user.created"]
    assert first.plan.copies == 1 and not first.race and not first.together
    membership = next(e for e in rest.events if e.type == "organizationMembership.created")
    assert set(membership.extra[REFS].values()) == {e.object_id for e in first.events}
    ctx, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    plan = CATALOG["duplicate-sequential"].plan(ctx, world)
    assert isinstance(plan, Plan) and [[e.type for e in p.events] for p in plan.phases] == [
        ["subscription_created", "subscription_payment_success", "order_created"]]
    ctx, world = context_and_world(tmp_path, clerk_config())
    plan = CATALOG["reorder"].plan(ctx, world)  # the users' walk: nothing it sends names another object
    assert isinstance(plan, Plan) and len(plan.phases) == 1


def test_another_mode_s_plan_gets_no_parents_of_the_endpoint_s_mode(tmp_path: Path) -> None:
    """`test-mode-to-live` sends the other mode's events alone (`Plan.world_account`): the
    subscription its renewal names is that mode's too, which the provider never sends the
    endpoint; `forged-signature`, over the endpoint's own events, sends it first (here a
    subscription owes no effect, so the effect story lacks it)."""
    text = shop_config(9, tmp_path / "x.sqlite").replace('type_field = "meta.event_name"',
                                                           'type_field = "meta.event_name"\ntest_mode = "meta.test_mode"')
    text = text.replace("meta = { event_name", "meta = { test_mode = false, event_name")
    text = text.replace('key = "subscription:{data.id}"\n', "")
    ctx, world = context_and_world(tmp_path, text)
    plan = CATALOG["test-mode-to-live"].plan(ctx, world)
    assert isinstance(plan, Plan) and plan.world_account is not None
    (phase,) = plan.phases
    assert [e.type for e in phase.events] == ["subscription_payment_success", "order_created"]
    ctx, world = context_and_world(tmp_path, text)
    plan = CATALOG["forged-signature"].plan(ctx, world)
    assert isinstance(plan, Plan) and plan.world_account is None
    assert [[e.type for e in p.events] for p in plan.phases] == [
        ["subscription_created"], ["subscription_payment_success", "order_created"]]
    assert plan.phases[0].plan.mutations == () and plan.phases[1].plan.mutations != ()


# ---- a storm's replayed stories ---------------------------------------------------------

@pytest.mark.parametrize("text", ["shop", "clerk"])
def test_a_storm_s_replays_rename_references_with_the_objects_they_name(tmp_path: Path, text: str) -> None:
    from hookproof.loadtests.stories import StoryBook, storm_sends, template_world

    path = tmp_path / "hookproof.toml"
    path.write_text(shop_config(9, tmp_path / "x.sqlite") if text == "shop" else clerk_config(), encoding="utf-8")
    profile = load_config(path).profile()
    world = template_world(profile.world, 3)
    assert isinstance(world, UserCatalogWorld)
    book = StoryBook(world, profile, storm_sends(profile), stories=3)
    checked = 0
    for s, story in enumerate(book.templates):
        for copy_no in (1, 2, 7):
            sent = [book.render(s, i, copy_no).event for i in range(len(story))]
            ids = {e.object_id for e in sent}
            assert not ids & {e.object_id for e in story}  # every object renamed
            for event in sent:
                for value in refs_of(world, event).values():
                    assert str(value) in ids, (event.type, value)
                    checked += 1
            made: set[str] = set()
            for event in sent:  # each named object's first event comes before the one naming it
                assert all(str(v) in made | {event.object_id} for v in refs_of(world, event).values()), event.type
                made.add(event.object_id)
    assert checked >= 6


def test_a_storm_s_processes_get_the_references_with_the_catalog(tmp_path: Path) -> None:
    """The catalog as data (a storm's spec, `catalog_to_plain`) keeps each type's references."""
    from hookproof.scenarios.business_keys import render
    from hookproof.simulator.world.user_catalog import catalog_from_plain, catalog_to_plain

    _, world = context_and_world(tmp_path, clerk_config())
    again = catalog_from_plain(json.loads(json.dumps(catalog_to_plain(world.catalog))), render)
    assert again.spec("organizationMembership.created").refs == {
        "data.organization.id": "organization", "data.public_user_data.user_id": "user"}
    assert again.kind == world.catalog.kind


# ---- explore's world --------------------------------------------------------------------

def test_explore_names_an_existing_parent_or_makes_it_first(tmp_path: Path) -> None:
    from hookproof.scenarios.catalog_ops import catalog_ops

    _, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite"))
    ops = catalog_ops(world.catalog.kind)
    ops.apply(world, "subscription_payment_success", None)  # no subscription yet: one is made first
    assert [e.type for e in world.events] == ["subscription_created", "subscription_payment_success"]
    ops.apply(world, "subscription_created", None)
    ops.apply(world, "subscription_payment_success", None)
    assert [e.type for e in world.events].count("subscription_created") == 2  # an existing one was named
    ops.apply(world, "subscription_payment_success", 0)
    assert not dangling(world, world.events)


@pytest.mark.parametrize("text", ["shop", "clerk"])
def test_explore_s_random_steps_never_name_an_object_not_sent_before(tmp_path: Path, text: str) -> None:
    """Forty legal steps drawn at random, five seeds: every event the world emitted (what explore
    delivers, in order) names only objects whose creating event it emitted before."""
    import random

    from hookproof.scenarios.catalog_ops import catalog_ops

    for seed in range(5):
        _, world = context_and_world(tmp_path, shop_config(9, tmp_path / "x.sqlite") if text == "shop"
                                     else clerk_config(), seed=seed)
        ops, draw = catalog_ops(world.catalog.kind), random.Random(seed)
        for _ in range(40):
            action, index = draw.choice(ops.legal(world))
            ops.apply(world, action, index)
        assert len(world.events) >= 40
        assert sum(bool(refs_of(world, e)) for e in world.events) >= 5
        assert not dangling(world, world.events), (seed, dangling(world, world.events))


# ---- certify, end to end -----------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS invoices (id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY);
"""


def shop_receiver(db: Path, *, wrong_parent: bool = False) -> FastAPI:
    """Verifies ``X-Signature`` (hex HMAC-SHA256 of the body), then keeps each subscription,
    order and renewal once (their ids as primary keys). A renewal is linked to the subscription
    its ``data.attributes.subscription_id`` names, answered 404 while that subscription is not
    synced yet (the provider retries it). `wrong_parent`: its twin links a renewal to
    ``data.id`` (the invoice's own id, taken for the subscription's) without checking it."""
    with sqlite3.connect(db) as setup:
        setup.executescript(SCHEMA)
    app = FastAPI()

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        expected = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, request.headers.get("x-signature", "")):
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        event = json.loads(raw)
        name, data = event["meta"]["event_name"], event["data"]
        with sqlite3.connect(db, isolation_level=None, timeout=10) as conn:
            conn.execute("BEGIN IMMEDIATE")
            if name == "subscription_created":
                conn.execute("INSERT OR IGNORE INTO subscriptions VALUES (?)", (data["id"],))
            elif name == "order_created":
                conn.execute("INSERT OR IGNORE INTO orders VALUES (?)", (data["id"],))
            elif name == "subscription_payment_success":
                parent = str(data["id"] if wrong_parent else data["attributes"]["subscription_id"])
                if not wrong_parent and conn.execute("SELECT 1 FROM subscriptions WHERE id = ?",
                                                     (parent,)).fetchone() is None:
                    conn.execute("ROLLBACK")
                    return JSONResponse({"error": "unknown subscription"}, status_code=404)
                conn.execute("INSERT OR IGNORE INTO invoices VALUES (?, ?)", (data["id"], parent))
            conn.execute("COMMIT")
        return JSONResponse({"ok": True})

    return app


SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "distinct-events-same-object", "mass-redelivery"]


def _certify(tmp_path: Path, name: str, **mode: bool) -> dict[str, tuple[str, list[str], set[str]]]:
    from hookproof.simulator.serving import serve_app

    folder = tmp_path / name
    folder.mkdir()
    db = folder / "receiver.sqlite"
    with serve_app(shop_receiver(db, **mode)) as server:
        path = folder / "hookproof.toml"
        path.write_text(shop_config(server.port, db), encoding="utf-8")
        report = certify(load_config(path), scenarios=SCENARIOS, out_dir=folder / "report").report
    return {s.id: (s.verdict, sorted({f.check_id for f in s.findings}), {f.key.split(":")[0] for f in s.findings})
            for s in report.scenarios}


def test_a_receiver_needing_the_subscription_first_passes_and_its_twin_linking_elsewhere_fails(
        tmp_path: Path) -> None:
    """The receiver refusing a renewal of a subscription it has not synced gets every renewal
    after its subscription and passes (each renewal named the example's subscription before:
    404 until its retries ran out); its twin keeping each renewal under the invoice's own id
    loses every renewal (``lost``, on the renewal keys alone)."""
    correct = _certify(tmp_path, "correct")
    applicable = [s for s, (verdict, _, _) in correct.items() if verdict != "not_applicable"]
    assert len(applicable) >= 3, correct
    assert {s: correct[s] for s in applicable} == {s: ("pass", [], set()) for s in applicable}, correct
    wrong = _certify(tmp_path, "wrong-parent", wrong_parent=True)
    assert {s: wrong[s] for s in applicable} == {s: ("fail", ["lost"], {"renewal"}) for s in applicable}, wrong
