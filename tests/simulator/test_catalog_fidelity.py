"""What a user catalog's world sends is what the provider sends: a Clerk-like catalog.

`tests/fixtures/clerk/webhooks.yaml` describes Clerk's user webhooks (delivered by Svix) in
their documented shape with invented values: the envelope ``{data, object, type, timestamp
(unix ms), instance_id, event_attributes}``, a user with ``created_at``/``updated_at`` in ms
and ids of ``user_`` + 27 characters, and ``user.deleted``'s data a stub. Each test pins one
rule of `simulator.world.user_catalog` against it: fresh ids keep the example's shape, the
body carries no status it lacks, the event's and the object's times are theirs, each event carries its own
type's example and a repeat changes what its type changes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hookproof.catalog_file import CatalogConfig, load_catalog
from hookproof.simulator.events import Event
from hookproof.simulator.world.user_catalog import BODY, UserCatalog, UserCatalogWorld

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "clerk"
START_US = 1_796_000_000_000_000
EXAMPLE_EMAIL_ID = "idn_2Tq7Pa1Sd2Fg3Hj4Kl5Zx6Cv7Bn"


@pytest.fixture(scope="module")
def clerk() -> UserCatalog:
    return load_catalog(CatalogConfig(openapi="webhooks.yaml"), FIXTURE)


def _user_story(catalog: UserCatalog, seed: int = 3) -> list[Event]:
    """One user: created, updated twice, deleted."""
    world = UserCatalogWorld(seed, catalog=catalog, start_us=START_US)
    oid = world.new_object("user")
    return [world.emit(t, oid) for t in ("user.created", "user.updated", "user.updated", "user.deleted")]


def _data(event: Event) -> dict[str, Any]:
    data = event.extra[BODY]["data"]
    assert isinstance(data, dict)
    return data


def test_fresh_ids_keep_the_examples_prefix_length_and_alphabet(clerk: UserCatalog) -> None:
    """``user_`` + 27 letters and digits, as the example (not ``user_`` + 24); the schema's
    ``^user_[A-Za-z0-9]{27}$`` accepts every one, and a storm's renamed copies keep the length."""
    from hookproof.loadtests.renaming import IdRenamer
    from hookproof.simulator.world.json_instances import InstanceMaker

    world = UserCatalogWorld(5, catalog=clerk, start_us=START_US)
    story = world.lifecycle() + world.effect_story()
    ids = {e.object_id for e in story}
    assert len(ids) == 2 and all(re.fullmatch(r"user_[A-Za-z0-9]{27}", oid) for oid in ids)
    assert all(_data(e)["id"] == e.object_id for e in story)
    renamed = IdRenamer.of(world).events(story, 41)
    assert {len(e.object_id) for e in renamed} == {len("user_") + 27} and {e.object_id for e in renamed} != ids
    import random

    maker = InstanceMaker(random.Random(1), 0)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}", maker.like("3fa85f64-5717"))
    assert re.fullmatch(r"[0-9]{6}", maker.like("123456")) and re.fullmatch(r"[a-z0-9]{10}", maker.like("ab12cd34xz"))
    assert maker.like("--") == "--"


def test_no_status_field_is_added_without_a_declared_status_path(clerk: UserCatalog, tmp_path: Path) -> None:
    """Clerk's users have no status: ``x-hookproof-state`` alone sets the state hookproof
    checks, and the body keeps the example's fields (no ``status`` in ``data``). A declared
    ``status`` path still gets the state written."""
    from hookproof.catalog_file import CatalogEventConfig

    story = _user_story(clerk)
    assert [e.status for e in story] == ["active", "active", "active", "deleted"]
    assert all("status" not in _data(e) for e in story)
    assert set(_data(story[-1])) == {"id", "object", "deleted"}
    example = {"type": "order.placed", "data": {"id": "ord_1", "state": "new"}}
    config = CatalogConfig(events={"order.placed": CatalogEventConfig(
        example=example, status="data.state", state="placed", key="ship:{data.id}")})
    (placed,) = UserCatalogWorld(2, catalog=load_catalog(config, tmp_path)).effect_story()
    assert placed.extra[BODY]["data"] == {"id": placed.object_id, "state": "placed"}


def test_the_envelopes_time_is_each_events_and_created_at_the_users(clerk: UserCatalog) -> None:
    """Clerk's envelope ``timestamp`` (unix ms) is the event's own time in every type, not the
    example's (2023 here); ``data.created_at`` is when the user was made, in ms too."""
    story = _user_story(clerk)
    stamps = [e.extra[BODY]["timestamp"] for e in story]
    assert stamps == [e.created_us // 1000 for e in story] and stamps == sorted(stamps) and len(set(stamps)) == 4
    assert all(START_US // 1000 <= s < START_US // 1000 + 60_000 for s in stamps)
    assert [_data(e)["updated_at"] for e in story[:3]] == stamps[:3]
    assert {_data(e)["created_at"] for e in story[:3]} == {stamps[0]}


def test_top_level_times_in_seconds_ms_or_rfc3339_and_nothing_else(tmp_path: Path) -> None:
    """An integer top-level time is judged by its magnitude (s or ms) under a time's name; a
    number under another name, or too small to be a time, is left as the example gives it; a
    schema-only integer described as a unix time is one."""
    from hookproof.catalog_file import CatalogEventConfig

    example = {"type": "order.paid", "created": 1_700_000_000, "sentAt": 1_700_000_000_123,
               "occurred_at": "2023-11-14T22:13:20Z", "amount": 1_700_000_000, "retries": 3,
               "data": {"id": "ord_Ab12Cd34", "created_at": "2023-11-14T22:13:20.000Z", "total": 1_700_000_000}}
    schema = {"type": "object", "properties": {
        "type": {"type": "string"}, "data": {"type": "object", "properties": {"id": {"type": "string"}}},
        "fired_at": {"type": "integer", "description": "Unix time in seconds."},
        "weight": {"type": "integer", "description": "Grams."}}}
    config = CatalogConfig(events={
        "order.paid": CatalogEventConfig(example=example, key="paid:{data.id}"),
        "order.sent": CatalogEventConfig(json_schema=schema, object_type="parcel")})
    world = UserCatalogWorld(6, catalog=load_catalog(config, tmp_path), start_us=START_US)
    paid = world.effect_story()[0]
    body, at = paid.extra[BODY], paid.created_us
    assert (body["created"], body["sentAt"]) == (at // 1_000_000, at // 1000)
    assert body["occurred_at"] != example["occurred_at"] and body["occurred_at"].startswith("2026-")
    assert (body["amount"], body["retries"], body["data"]["total"]) == (1_700_000_000, 3, 1_700_000_000)
    # the object's creation: this event, each in its example's format (whole seconds, ".000Z")
    assert body["data"]["created_at"] == body["occurred_at"].replace("Z", ".000Z")
    sent = world.emit("order.sent")
    assert sent.extra[BODY]["fired_at"] == sent.created_us // 1_000_000
    assert sent.extra[BODY]["weight"] != sent.created_us // 1_000_000


def test_each_event_carries_its_own_types_example_and_keeps_the_users_identity(clerk: UserCatalog) -> None:
    """``user.updated`` says what its example says (renamed, a second email made primary), not
    the ``user.created`` example's fields; the user's id, its creation time and the example's
    consistent nested ids stay; a field neither example changes (``last_name``) is kept."""
    created, updated, again, deleted = _user_story(clerk)
    first, second = _data(created), _data(updated)
    assert (first["first_name"], second["first_name"]) == ("Ada", "Adaline")
    emails = [m["email_address"] for m in second["email_addresses"]]
    assert emails[0] == first["email_addresses"][0]["email_address"]  # the user's own address, kept
    assert re.fullmatch(r"ada\.quill\+[A-Za-z0-9]{10}@example\.test", emails[0]), emails
    assert re.fullmatch(r"adaline\+[A-Za-z0-9]{10}@example\.test", emails[1]), emails
    primary = second["email_addresses"][1]["id"]
    assert second["primary_email_address_id"] == primary != first["primary_email_address_id"]
    assert second["email_addresses"][0]["id"] == first["primary_email_address_id"] == first["email_addresses"][0]["id"]
    assert re.fullmatch(r"idn_[A-Za-z0-9]{27}", primary) and EXAMPLE_EMAIL_ID not in (primary, first["primary_email_address_id"])
    assert {d["id"] for d in (first, second, _data(again), _data(deleted))} == {created.object_id}
    assert first["created_at"] == second["created_at"] and first["updated_at"] < second["updated_at"]
    assert {first["last_name"], second["last_name"], _data(again)["last_name"]} == {"Quill"}
    assert _data(deleted) == {"id": created.object_id, "object": "user", "deleted": True}


def test_a_repeated_update_changes_what_its_type_changes_again(clerk: UserCatalog) -> None:
    """Two successive ``user.updated`` of one user differ in ``first_name`` (the string field
    the type's example changes), so a receiver that keeps the last to arrive, not the newest,
    is seen through a declared state field; ids, emails and unchanged fields do not move.
    Deterministic from the seed."""
    _, updated, again, _ = _user_story(clerk)
    first, second = _data(updated), _data(again)
    assert first["first_name"] == "Adaline" and re.fullmatch(r"Adaline [A-Za-z0-9]{4}", second["first_name"])
    same = {k: v for k, v in second.items() if k not in ("first_name", "updated_at")}
    assert same == {k: v for k, v in first.items() if k not in ("first_name", "updated_at")}
    third = UserCatalogWorld(3, catalog=clerk, start_us=START_US)
    oid = third.new_object("user")
    names = [_data(third.emit(t, oid))["first_name"]
             for t in ("user.created", "user.updated", "user.updated", "user.updated")]
    assert len(set(names)) == 4 and names[:3] == ["Ada", "Adaline", second["first_name"]]


def test_a_type_made_from_its_schema_keeps_the_objects_values_but_what_the_schema_fixes(tmp_path: Path) -> None:
    """With no example of its own, a later type's instance is hookproof's invention: the
    object's values stay (its customer, its currency), but a ``const`` the schema sets is the
    type's."""
    from hookproof.catalog_file import CatalogEventConfig

    example = {"type": "invoice.created", "data": {"id": "in_Ab12Cd34Ef56", "customer": "cus_Zz99Yy88",
                                                    "currency": "eur", "stage": "draft", "memo": "first"}}
    schema = {"type": "object", "required": ["type", "data"], "properties": {
        "type": {"type": "string"}, "data": {"type": "object", "required": ["id", "customer", "currency", "stage"],
                                             "properties": {"id": {"type": "string"}, "customer": {"type": "string"},
                                                            "currency": {"enum": ["eur", "usd"]},
                                                            "stage": {"const": "final"},
                                                            "memo": {"type": "string"}}}}}
    config = CatalogConfig(events={"invoice.created": CatalogEventConfig(example=example),
                                   "invoice.finalized": CatalogEventConfig(json_schema=schema)})
    world = UserCatalogWorld(8, catalog=load_catalog(config, tmp_path))
    created, finalized = world.lifecycle()
    data = finalized.extra[BODY]["data"]
    assert (data["id"], data["customer"], data["currency"], data["stage"]) == (
        created.object_id, created.extra[BODY]["data"]["customer"], "eur", "final")
    assert re.fullmatch(r"cus_[A-Za-z0-9]{8}", data["customer"]) and data["customer"] != "cus_Zz99Yy88"


def test_two_users_never_share_an_email_id_or_address_and_each_keeps_its_own(clerk: UserCatalog) -> None:
    """Every user the example makes had the example's one email id and address: a receiver
    keeping addresses unique (Clerk gives no two users one) failed the second user's
    creation, as one keeping Clerk's external_id unique did. Each user now has its own, in the example's shapes, the same in every event
    of that user (its primary id still names its first address), and a storm renames them per
    copy (they are among the world's `fresh_ids`); the envelope's instance stays shared."""
    world = UserCatalogWorld(4, catalog=clerk, start_us=START_US)
    a, b = world.new_object("user"), world.new_object("user")
    events = [world.emit("user.created", a), world.emit("user.created", b), world.emit("user.updated", a)]
    first, second, later = (_data(e) for e in events)
    ids = [d["email_addresses"][0]["id"] for d in (first, second)]
    addresses = [d["email_addresses"][0]["email_address"] for d in (first, second)]
    assert len(set(ids)) == 2 and len(set(addresses)) == 2 and EXAMPLE_EMAIL_ID not in ids
    assert all(re.fullmatch(r"idn_[A-Za-z0-9]{27}", i) for i in ids)
    assert all(d["primary_email_address_id"] == d["email_addresses"][0]["id"] for d in (first, second))
    assert later["email_addresses"][0] == first["email_addresses"][0]  # the user's own, kept
    assert later["primary_email_address_id"] == later["email_addresses"][1]["id"] not in ids
    tags = [addr.split("+")[1].split("@")[0] for addr in addresses]
    assert set(ids) | set(tags) <= set(world.fresh_ids)
    # a plain value under an id's name (Clerk's external_id, "unique across your instance") too
    externals = [d["external_id"] for d in (first, second)]
    assert len(set(externals)) == 2 and "567772" not in externals and later["external_id"] == externals[0]
    # in the example's shape, widened to nine digits (six allowed too few for a run's users)
    assert all(re.fullmatch(r"[1-9][0-9]{8}", x) for x in externals) and set(externals) <= set(world.fresh_ids)
    assert {e.extra[BODY]["instance_id"] for e in events} == {"ins_Q2w3E4r5T6y7U8i9O0p1A2s3D4f"}
