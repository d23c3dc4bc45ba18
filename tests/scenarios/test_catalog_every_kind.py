"""certify walks every stateful kind of a user's catalog (a new user's Clerk receiver, svix).

The state stories (`UserCatalogWorld.state_story`, `related_groups`) took only the kind with
the most status-setting types: certify never sent ``organization.updated`` or
``organization.deleted``, and a receiver bringing a deleted organization back (a blind
upsert on ``organization.updated``) passed it, found only by explore and storm. They now
walk each kind with a status-setting type the endpoint is sent (`sent_only`), so an
endpoint enabled for the organization types alone gets the organizations' walk, not
"no status-setting events". `distinct-updates-same-object` takes an update changing a
field the observer compares for a change of state (a second ``user.updated`` renaming the
user), so it runs and finds a receiver deduplicating on the type and the user; and
`distinct-events-same-object` gives the catalog's own reason whatever enabled_events says,
its story judged under the team's keys too (a per-update key makes two effects of one user).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from svix.webhooks import Webhook, WebhookVerificationError

from hookproof.certify import certify
from hookproof.config import load_config
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world import new_world
from hookproof.simulator.world.user_catalog import UserCatalogWorld

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
USERS = ("user.created", "user.updated", "user.deleted")
ORGS = ("organization.created", "organization.updated", "organization.deleted")
MEMBERSHIPS = ("organizationMembership.created", "organizationMembership.deleted")


def _event(name: str, kind: str, state: str | None, data: str, *, key: str | None = None,
           ordering: str = "data.updated_at") -> str:
    lines = [f'\n[catalog.events."{name}"]',
             f'example = {{ type = "{name}", timestamp = 1733130000000, data = {{ {data} }} }}',
             'object_id = "data.id"', f'object_type = "{kind}"', f'ordering = "{ordering}"']
    if state is not None:
        lines.append(f'state = "{state}"')
    if key is not None:
        lines.append(f'key = "{key}"')
    return "\n".join(lines) + "\n"


#: The catalog: users and organizations each created, updated (keeping ``active``) and
#: deleted, with as many status-setting types each (the users first in the catalog: the old
#: story walked them alone); memberships set no status; a session is quiet.
CATALOG_TEXT = (
    _event("user.created", "user", "active", 'id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada", '
           'updated_at = 1733130000000', key="welcome:{data.id}")
    + _event("user.updated", "user", "active", 'id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Grace", '
             'updated_at = 1733130000000')
    + _event("user.deleted", "user", "deleted", 'id = "user_2abcdefghijklmnopqrstuvwxy", deleted = true',
             ordering="timestamp")
    + _event("organization.created", "organization", "active", 'id = "org_2abcdefghijklmnopqrstuvwxy", '
             'name = "Acme", updated_at = 1733130000000', key="org-welcome:{data.id}")
    + _event("organization.updated", "organization", "active", 'id = "org_2abcdefghijklmnopqrstuvwxy", '
             'name = "Acme Inc", updated_at = 1733130000000')
    + _event("organization.deleted", "organization", "deleted", 'id = "org_2abcdefghijklmnopqrstuvwxy", '
             'deleted = true', ordering="timestamp")
    + _event("organizationMembership.created", "membership", None, 'id = "orgmem_2abcdefghijklmnopqrstuvw", '
             'role = "admin", updated_at = 1733130000000')
    + _event("organizationMembership.deleted", "membership", None, 'id = "orgmem_2abcdefghijklmnopqrstuvw", '
             'role = "admin", updated_at = 1733130000000')
    + _event("session.created", "session", None, 'id = "sess_2abcdefghijklmnopqrstuvwxy", status = "active"',
             ordering="timestamp")
)


#: The team's own keys for the two welcomes, the catalog's built-in ones left (``builtin_keys``).
TEAM_KEYS = """
[business_keys]
"user.created" = "welcome:{data.id}"
"organization.created" = "org-welcome:{data.id}"
"""


def config_text(port: int, db: Path, *, enabled: tuple[str, ...] | None = None, seed: int = 4,
                team_keys: bool = False, more_keys: str = "") -> str:
    listed = f"enabled_events = {json.dumps(list(enabled))}\n" if enabled is not None else ""
    return ("builtin_keys = false\n" if team_keys else "") + f"""[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "svix"
secret = "{SECRET}"
{listed}
[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM emails"

[observer.states]
user = "SELECT id AS object_id, CASE WHEN deleted = 1 THEN 'deleted' ELSE 'active' END AS status, first_name FROM users"
organization = "SELECT id AS object_id, CASE WHEN deleted = 1 THEN 'deleted' ELSE 'active' END AS status FROM orgs"

[observer.state_fields]
user = {{ first_name = "data.first_name" }}

[run]
seed = {seed}

[settle]
window_s = 0.15
{CATALOG_TEXT}""" + (TEAM_KEYS + more_keys if team_keys else "")


#: One clock start (unix µs, a whole second) for worlds a test compares.
START_US = 1_796_000_000_000_000


def profile_and_world(tmp_path: Path, enabled: tuple[str, ...] | None = None, team_keys: bool = False,
                      more_keys: str = "", start_us: int | None = None) -> tuple[Context, UserCatalogWorld]:
    """The context certify plans with (no state fields) and a world of seed 4 (its clock from
    `start_us`, default now)."""
    path = tmp_path / "hookproof.toml"
    path.write_text(config_text(9, tmp_path / "x.sqlite", enabled=enabled, team_keys=team_keys, more_keys=more_keys),
                    encoding="utf-8")
    loaded = load_config(path)
    profile = loaded.profile()
    world = new_world(profile.world, 4) if start_us is None else new_world(profile.world, 4, start_us=start_us)
    assert isinstance(world, UserCatalogWorld)
    enabled = frozenset(loaded.target.enabled_events) if loaded.target.enabled_events is not None else None
    return Context(profile=profile, enabled=enabled, keys=loaded.key_mapping(),
                   state_kinds=frozenset({"user", "organization"})), world


SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (claim TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS emails (business_key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, first_name TEXT, updated_at INTEGER NOT NULL,
                                  deleted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS orgs (id TEXT PRIMARY KEY, name TEXT, updated_at INTEGER NOT NULL,
                                 deleted INTEGER NOT NULL DEFAULT 0);
"""


def receiver(db: Path, *, revives: bool = False, per_object: bool = False, profiles: bool = False) -> FastAPI:
    """Verifies with the official ``svix`` library, then in one SQLite transaction claims the
    ``svix-id``, sends one welcome per user and per organization, and keeps each user's and
    organization's row, written only by a newer event (``data.updated_at``), a deletion for
    good. `revives`: its twin upserts an organization on ``organization.updated`` blindly,
    bringing a deleted one back. `per_object`: its twin claims the type and the object id
    instead of the ``svix-id`` (a second ``user.updated`` of one user is taken for a copy).
    `profiles`: each ``user.updated`` also records the profile change it is
    (``profile:{id}:{updated_at}``, the team's key in `PER_UPDATE`)."""
    with sqlite3.connect(db) as setup:
        setup.executescript(SCHEMA)
    hook = Webhook(SECRET)
    app = FastAPI()

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        headers = dict(request.headers)
        try:
            hook.verify(raw, headers)
        except WebhookVerificationError:
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        event = json.loads(raw)
        kind, data = event["type"], event["data"]
        claim = f"{kind}:{data['id']}" if per_object else headers["svix-id"]
        with sqlite3.connect(db, isolation_level=None, timeout=10) as conn:
            conn.execute("BEGIN IMMEDIATE")
            if not conn.execute("INSERT OR IGNORE INTO deliveries VALUES (?)", (claim,)).rowcount:
                conn.execute("COMMIT")
                return JSONResponse({"duplicate": True})
            table, field = ("users", "first_name") if kind.startswith("user.") else ("orgs", "name")
            if kind in ("user.created", "organization.created"):
                prefix = "welcome" if table == "users" else "org-welcome"
                conn.execute("INSERT OR IGNORE INTO emails VALUES (?)", (f"{prefix}:{data['id']}",))
            if profiles and kind == "user.updated":
                conn.execute("INSERT OR IGNORE INTO emails VALUES (?)", (f"profile:{data['id']}:{data['updated_at']}",))
            if kind.endswith((".created", ".updated")) and kind.split(".")[0] in ("user", "organization"):
                guard = " WHERE excluded.updated_at > {t}.updated_at AND {t}.deleted = 0".format(t=table)
                revive = ""
                if revives and kind == "organization.updated":
                    guard, revive = "", ", deleted = 0"
                conn.execute(f"INSERT INTO {table} (id, {field}, updated_at) VALUES (?, ?, ?) ON CONFLICT (id) DO "
                             f"UPDATE SET {field} = excluded.{field}, updated_at = excluded.updated_at{revive}{guard}",
                             (data["id"], data[field], data["updated_at"]))
            elif kind in ("user.deleted", "organization.deleted"):
                conn.execute(f"INSERT INTO {table} (id, updated_at, deleted) VALUES (?, 0, 1) ON CONFLICT (id) DO "
                             "UPDATE SET deleted = 1", (data["id"],))
            conn.execute("COMMIT")
        return JSONResponse({"ok": True})

    return app


def _certify(tmp_path: Path, name: str, scenarios: list[str], *, more_keys: str | None = None, **mode: bool
             ) -> dict[str, tuple[str, list[str], set[str]]]:
    """Each scenario's verdict, sorted finding checks and the prefixes of the findings' keys
    (``org``, ``user``, ``profile``) over `receiver(**mode)`; with `more_keys`, under the
    team's keys (`TEAM_KEYS` and those)."""
    folder = tmp_path / name
    folder.mkdir()
    db = folder / "receiver.sqlite"
    with serve_app(receiver(db, profiles=more_keys is not None, **mode)) as server:
        path = folder / "hookproof.toml"
        keys = {"team_keys": True, "more_keys": more_keys} if more_keys is not None else {}
        path.write_text(config_text(server.port, db, **keys), encoding="utf-8")
        report = certify(load_config(path), scenarios=scenarios, out_dir=folder / "report").report
    return {s.id: (s.verdict, sorted({f.check_id for f in s.findings}), {f.key.split("_")[0] for f in s.findings})
            for s in report.scenarios}


# ---- the world's stories --------------------------------------------------------------

def test_the_state_story_walks_every_stateful_kind_deterministically(tmp_path: Path) -> None:
    # both worlds' clocks from one second: a world's clock starts now, and the bodies carry its times
    _, world = profile_and_world(tmp_path, start_us=START_US)
    story = world.state_story()
    assert [(e.type, e.status) for e in story] == [
        ("user.created", "active"), ("user.updated", "active"), ("user.updated", "active"),
        ("user.created", "active"), ("user.updated", "active"), ("user.deleted", "deleted"),
        ("organization.created", "active"), ("organization.updated", "active"), ("organization.updated", "active"),
        ("organization.created", "active"), ("organization.updated", "active"),
        ("organization.deleted", "deleted")]
    assert [len({e.object_id for e in story[i:i + 3]}) for i in range(0, 12, 3)] == [1, 1, 1, 1]
    assert len({e.object_id for e in story}) == 4
    _, again = profile_and_world(tmp_path, start_us=START_US)
    assert [e.extra["body"] for e in again.state_story()] == [e.extra["body"] for e in story]


def test_related_groups_race_each_stateful_kind(tmp_path: Path) -> None:
    _, world = profile_and_world(tmp_path)
    groups = world.related_groups()
    assert [[(e.type, e.status) for e in g] for g in groups] == [
        [("user.created", "active"), ("user.deleted", "deleted")]] * 2 + [
        [("organization.created", "active"), ("organization.deleted", "deleted")]] * 2
    assert len({e.object_id for g in groups for e in g}) == 4


def test_the_stories_walk_only_the_kinds_the_endpoint_is_sent(tmp_path: Path) -> None:
    ctx, world = profile_and_world(tmp_path, enabled=ORGS + MEMBERSHIPS)
    world.sent_only(ctx.sends)
    assert {e.object_type for e in world.state_story()} == {"organization"}
    assert [e.type for g in world.related_groups() for e in g] == ["organization.created",
                                                                   "organization.deleted"] * 2


# ---- the plans ------------------------------------------------------------------------

def test_state_scenarios_send_the_second_kind(tmp_path: Path) -> None:
    """`reorder` sends both kinds reversed; `stale-after-newer` sends each kind's first event last."""
    ctx, world = profile_and_world(tmp_path)
    plan = CATALOG["reorder"].plan(ctx, world)
    assert isinstance(plan, Plan), plan
    (phase,) = plan.phases
    assert [e.type for e in phase.events].count("organization.deleted") == 1 and len(phase.events) == 12
    ctx, world = profile_and_world(tmp_path)
    plan = CATALOG["stale-after-newer"].plan(ctx, world)
    assert isinstance(plan, Plan), plan
    newer, older = plan.phases
    assert [e.type for e in older.events] == ["user.created", "organization.created"]
    assert len(newer.events) == 10 and older.events[1].object_id == newer.events[5].object_id
    ctx, world = profile_and_world(tmp_path)
    burst = CATALOG["related-burst"].plan(ctx, world)
    assert isinstance(burst, Plan) and [e.object_type for p in burst.phases for e in p.events] == [
        "user"] * 4 + ["organization"] * 4


def test_an_endpoint_enabled_for_the_organizations_gets_their_state_scenarios(tmp_path: Path) -> None:
    for scenario in ("reorder", "stale-after-newer", "related-burst"):
        ctx, world = profile_and_world(tmp_path, enabled=ORGS + MEMBERSHIPS)
        plan = CATALOG[scenario].plan(ctx, world)
        assert isinstance(plan, Plan), (scenario, plan)
        assert {e.object_type for p in plan.phases for e in p.events} == {"organization"}, scenario


def test_an_update_changing_a_compared_field_makes_distinct_updates_run(tmp_path: Path) -> None:
    """A user created, then renamed twice (``active`` throughout): with the first name compared,
    the second ``user.updated`` changes the state; without, there is nothing to tell apart."""
    from hookproof.scenarios.state_fields import StateFields

    ctx, world = profile_and_world(tmp_path, enabled=USERS)
    fields = StateFields({"user": (("first_name", "data.first_name"),)}, ctx.profile).with_absent(
        UserCatalogWorld(1, catalog=world.catalog).lifecycle())
    compared = Context(profile=ctx.profile, enabled=ctx.enabled, keys=ctx.keys, state_kinds=ctx.state_kinds,
                       state_fields=fields.columns(), state_of=fields.state_of)
    plan = CATALOG["distinct-updates-same-object"].plan(compared, world)
    assert isinstance(plan, Plan), plan
    assert [e.type for e in plan.phases[0].events] == ["user.created", "user.updated", "user.updated"]
    ctx, world = profile_and_world(tmp_path, enabled=USERS)
    bare = CATALOG["distinct-updates-same-object"].plan(ctx, world)
    assert isinstance(bare, NotApplicable)
    # every type enabled, the catalog tells none either: enabled_events is not what keeps it out
    assert bare.reason == ("your catalog tells no story with two events of one type about one object, the second "
                           "changing its state (of a kind whose states the observer reads: organization, user)"), bare.reason


@pytest.mark.parametrize("team_keys", [False, True])
@pytest.mark.parametrize("enabled", [None, USERS + ORGS])
def test_distinct_events_gives_the_catalog_s_reason_whatever_is_enabled(
        tmp_path: Path, enabled: tuple[str, ...] | None, team_keys: bool) -> None:
    """Each welcome is one per user or organization, under the catalog's keys or the team's:
    no object gets two effects, and the reason says so with enabled_events set too (it said
    the types sent and the team's keys left no effectful event, while four types had keys)."""
    ctx, world = profile_and_world(tmp_path, enabled, team_keys)
    assert (ctx.keys is not None) is team_keys
    plan = CATALOG["distinct-events-same-object"].plan(ctx, world)
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("no object in your catalog gets two effects of its own: each effectful type's business "
                           "key is the same for every event of one object (one effect per object), so "
                           "deduplicating by object loses nothing"), plan.reason


#: The team's key of a profile change: one per update (two updates of one user, two effects).
PER_UPDATE = '"user.updated" = "profile:{data.id}:{data.updated_at}"\n'


def test_a_team_key_giving_one_object_two_effects_is_sent_or_named(tmp_path: Path) -> None:
    """The team keys each profile change by its time (a key the catalog does not declare): two
    updates of one user are two effects, sent where the endpoint gets them; an endpoint
    enabled for the organizations alone is told which types it is not sent."""
    ctx, world = profile_and_world(tmp_path, USERS, True, PER_UPDATE)
    plan = CATALOG["distinct-events-same-object"].plan(ctx, world)
    assert isinstance(plan, Plan), plan
    (phase,) = plan.phases
    assert [e.type for e in phase.events] == ["user.updated", "user.updated"]
    assert len({e.object_id for e in phase.events}) == 1 and len({ctx.key_of(e) for e in phase.events}) == 2
    ctx, world = profile_and_world(tmp_path, ORGS, True, PER_UPDATE)
    plan = CATALOG["distinct-events-same-object"].plan(ctx, world)
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("the receiver is sent none of the types that give one object two effects in your "
                           "catalog (user.updated) (enabled_events)"), plan.reason


# ---- certify, end to end ---------------------------------------------------------------

SCENARIOS = ["reorder", "stale-after-newer", "related-burst", "distinct-updates-same-object"]


def test_the_correct_receiver_passes_and_its_twins_are_found(tmp_path: Path) -> None:
    """The receiver keeping the newest passes; its twin reviving a deleted organization on a late
    ``organization.updated`` fails `reorder` on the organization (the users, the kind the old
    story walked alone, are kept right by both); its twin claiming type and object fails
    `distinct-updates-same-object` on the renamed user."""
    assert _certify(tmp_path, "correct", SCENARIOS) == {s: ("pass", [], set()) for s in SCENARIOS}
    revived = _certify(tmp_path, "revives", SCENARIOS, revives=True)
    assert revived == {**{s: ("pass", [], set()) for s in SCENARIOS}, "reorder": ("fail", ["stale"], {"org"})}, \
        revived
    per_object = _certify(tmp_path, "per-object", ["distinct-updates-same-object"], per_object=True)
    assert per_object == {"distinct-updates-same-object": ("fail", ["stale"], {"user"})}, per_object


def test_a_team_key_s_two_effects_of_one_user_are_certified(tmp_path: Path) -> None:
    """Under the team's per-update key, `distinct-events-same-object` sends one user's two
    updates (it said no object gets two effects): the receiver recording each passes, its twin
    claiming type and object loses the second (``lost``, on its profile key)."""
    scenario = ["distinct-events-same-object"]
    assert _certify(tmp_path, "keyed", scenario, more_keys=PER_UPDATE) == {scenario[0]: ("pass", [], set())}
    lost = _certify(tmp_path, "keyed-per-object", scenario, more_keys=PER_UPDATE, per_object=True)
    assert lost == {scenario[0]: ("fail", ["lost"], {"profile:user"})}, lost
