"""A user's own event catalog: the world over it and the profiles that send it.

The catalog is `examples/openapi/webhooks.yaml` (an OpenAPI 3.1 document read by
`hookproof.catalog_file`) or one given inline. Every body the world makes, over whole
lifecycles and every story, validates with `jsonschema` against its type's schema from
the document (the oracle is the user's own schema); objects' versions and ordering fields
increase; the generic-hmac and standard-webhooks profiles send those bodies unchanged,
under the user's names, signed as their official verifiers accept.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from standardwebhooks.webhooks import Webhook

from hookproof.catalog_file import CatalogConfig, CatalogEventConfig, load_catalog
from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles.formats import rfc3339_us
from hookproof.simulator.profiles.generic_hmac import GenericHmacProfile
from hookproof.simulator.profiles.standard_webhooks import StandardWebhooksProfile
from hookproof.simulator.world import emit_events, new_world, world_event_types
from hookproof.simulator.world.json_instances import get_path, parse_path
from hookproof.simulator.world.user_catalog import BODY, UserCatalog, UserCatalogWorld

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "examples" / "openapi"
TYPES = ("invoice.created", "invoice.payment_failed", "invoice.paid", "refund.created", "customer.updated")
START_US = 1_790_000_000_000_000


@pytest.fixture(scope="module")
def catalog() -> UserCatalog:
    return load_catalog(CatalogConfig(openapi="webhooks.yaml"), DOC)


def _validators(catalog: UserCatalog) -> dict[str, Draft202012Validator]:
    return {s.type: Draft202012Validator(s.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            for s in catalog.events if s.schema is not None}


def _all_stories(world: UserCatalogWorld) -> list[Any]:
    return [*world.lifecycle(), *world.effect_story(), *world.state_story(), *world.distinct_story(),
            world.quiet_event()]


def test_the_document_gives_its_webhooks_in_order_with_their_extensions(catalog: UserCatalog) -> None:
    assert catalog.types == TYPES and catalog.type_field == "type"
    paid = catalog.spec("invoice.paid")
    assert (paid.kind, paid.object_id, paid.event_id, paid.ordering, paid.state, paid.key) == (
        "invoice", "data.id", "id", "data.updated_at", "paid", "fulfil:{data.id}")
    assert paid.schema is not None  # every $ref bundled: local, to an entry of the schema's own $defs
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(paid.schema))
    assert refs and all(r.startswith("#/$defs/") and r[len("#/$defs/"):] in paid.schema["$defs"] for r in refs)
    assert sorted(paid.schema["$defs"]) == ["Envelope", "Invoice", "InvoiceEvent"]
    assert catalog.spec("refund.created").amount == "data.amount"
    assert catalog.spec("customer.updated").example is None  # made from its schema


@pytest.mark.parametrize("seed", [1, 2, 3, 17, 4242])
def test_every_body_validates_against_its_schema(catalog: UserCatalog, seed: int) -> None:
    validators = _validators(catalog)
    world = UserCatalogWorld(seed, catalog=catalog)
    events = _all_stories(world)
    assert {e.type for e in events} == set(TYPES)
    for event in events:
        errors = [e.message for e in validators[event.type].iter_errors(event.extra[BODY])]
        assert errors == [], (event.type, errors)
        assert event.extra[BODY]["type"] == event.type and event.extra[BODY]["id"] == event.id


def test_the_world_is_deterministic_from_its_seed(catalog: UserCatalog) -> None:
    def bodies(seed: int) -> list[Any]:
        return [e.extra[BODY] for e in _all_stories(UserCatalogWorld(seed, catalog=catalog, start_us=START_US))]

    assert bodies(7) == bodies(7)
    assert bodies(7) != bodies(8)


def test_objects_move_through_their_states_with_increasing_versions_and_ordering(catalog: UserCatalog) -> None:
    world = UserCatalogWorld(5, catalog=catalog, start_us=START_US)
    story = world.state_story()
    assert [(e.type, e.status, e.version) for e in story] == [
        ("invoice.created", "open", 1), ("invoice.payment_failed", "past_due", 2), ("invoice.paid", "paid", 3)]
    assert len({e.object_id for e in story}) == 1 and all(e.stateful for e in story)
    stamps = [e.extra[BODY]["data"]["updated_at"] for e in story]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    assert [e.extra[BODY]["data"]["status"] for e in story] == ["open", "past_due", "paid"]
    assert world.get(story[0].object_id)["status"] == "paid" and world.version(story[0].object_id) == 3
    customers = {e.extra[BODY]["data"]["customer"] for e in story}
    assert len(customers) == 1  # a field the object had keeps its value


def test_business_keys_come_from_the_templates(catalog: UserCatalog) -> None:
    world = UserCatalogWorld(9, catalog=catalog)
    effects = world.effect_story()
    assert [e.type for e in effects] == ["invoice.payment_failed", "invoice.paid", "refund.created"]
    for e in effects:
        data = e.extra[BODY]["data"]
        expected = {"invoice.paid": f"fulfil:{data['id']}", "refund.created": f"refund:{data['id']}",
                    "invoice.payment_failed": f"dunning:{data['id']}:{data.get('attempt')}"}[e.type]
        assert e.business_key == expected
    refund = effects[-1]
    assert refund.amount == refund.extra[BODY]["data"]["amount"] and refund.business_key.startswith("refund:")
    first, second = world.distinct_story()  # two declined attempts of one invoice: two reminders
    assert first.object_id == second.object_id and first.business_key != second.business_key
    assert (first.extra[BODY]["data"]["attempt"], second.extra[BODY]["data"]["attempt"]) == (1, 2)
    assert world.unknown_event().type == "invoice.hookproof_unknown"
    unknown = world.unknown_event()
    assert unknown.extra[BODY]["type"] == "invoice.hookproof_unknown" and unknown.extra[BODY]["id"] == unknown.id
    assert unknown.id not in {e.id for e in world.events}  # not recorded: the world never emitted it
    assert world.quiet_event().type == "customer.updated" and world.quiet_event().business_key is None


def test_a_catalog_is_a_world_kind_that_send_can_emit(catalog: UserCatalog) -> None:
    profile = GenericHmacProfile(catalog=catalog)
    assert profile.world.startswith("catalog:") and world_event_types(profile.world) == TYPES
    assert profile.default_event == "invoice.created" and not profile.has_livemode and not profile.has_account
    world = new_world(profile.world, 3)
    (event,) = emit_events(world, "refund.created")
    assert event.type == "refund.created" and isinstance(world, UserCatalogWorld)
    with pytest.raises(WorldError, match="known: invoice.created"):
        emit_events(world, "payment_intent.succeeded")


def test_generic_hmac_sends_the_body_as_made_under_the_users_names(catalog: UserCatalog) -> None:
    profile = GenericHmacProfile(catalog=catalog)
    (event,) = UserCatalogWorld(2, catalog=catalog).effect_story()[1:2]
    envelope = profile.envelope(event)
    assert json.loads(envelope.body) == event.extra[BODY] and envelope.type == "invoice.paid"
    assert envelope.headers["X-Webhook-Id"] == event.id
    request = profile.request(envelope, ["s3cret"], 1_790_000_000)
    assert request.headers["X-Signature"] == hmac.new(b"s3cret", request.body, hashlib.sha256).hexdigest()
    assert profile.event_types() == {t: t for t in TYPES}


def test_standard_webhooks_uses_the_users_names_and_its_verifier_accepts(catalog: UserCatalog) -> None:
    profile = StandardWebhooksProfile(catalog=catalog)
    secret = profile.generate_secret(3)
    event = UserCatalogWorld(2, catalog=catalog).effect_story()[0]
    envelope = profile.envelope(event)
    assert envelope.type == "invoice.payment_failed" and json.loads(envelope.body) == event.extra[BODY]
    import time

    request = profile.request(envelope, [secret], int(time.time()))
    assert Webhook(secret).verify(request.body, dict(request.headers)) == event.extra[BODY]
    assert StandardWebhooksProfile().event_types()["payment_intent.succeeded"] == "payment.succeeded"  # unchanged


def test_a_catalog_from_schemas_alone_validates(tmp_path: Path) -> None:
    """Inline JSON Schemas (no example): integers, uuids, enums, nested arrays."""
    schema = {
        "type": "object", "required": ["event_id", "kind", "order"],
        "properties": {
            "event_id": {"type": "string", "format": "uuid"},
            "kind": {"type": "string"},
            "order": {"type": "object", "required": ["number", "state", "lines", "seq"], "properties": {
                "number": {"type": "integer", "minimum": 1},
                "state": {"enum": ["placed", "shipped"]},
                "seq": {"type": "integer"},
                "lines": {"type": "array", "minItems": 2, "items": {
                    "type": "object", "properties": {"sku": {"type": "string", "minLength": 3, "maxLength": 8},
                                                     "qty": {"type": "integer", "minimum": 1, "maximum": 9}}}}}}}}
    config = CatalogConfig(type_field="kind", events={
        name: CatalogEventConfig(json_schema=schema, object_id="order.number", event_id="/event_id",
                                 ordering="order.seq", status="order.state", state=state,
                                 key=f"{state}:{{order.number}}" if state == "shipped" else None)
        for name, state in (("order.placed", "placed"), ("order.shipped", "shipped"))})
    user = load_catalog(config, tmp_path)
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    world = UserCatalogWorld(11, catalog=user)
    story = world.state_story()
    for event in [*world.lifecycle(), *story]:
        assert list(validator.iter_errors(event.extra[BODY])) == []
    assert [e.extra[BODY]["order"]["seq"] for e in story] == [1, 2]  # a "seq" integer counts versions
    assert isinstance(story[0].extra[BODY]["order"]["number"], int) and story[0].object_id.isdigit()
    assert get_path(story[1].extra[BODY], parse_path("/event_id")) == story[1].id
    assert story[1].business_key == f"shipped:{story[1].object_id}"


def test_one_effect_per_object_makes_distinct_events_not_applicable_saying_why(tmp_path: Path) -> None:
    """A catalog whose only key names its object (``credit:{order.number}``) has no object with
    two effects: `distinct-events-same-object` says that, not that the world tells no story."""
    from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable

    schema = {"type": "object", "required": ["event_id", "kind", "order"], "properties": {
        "event_id": {"type": "string", "format": "uuid"}, "kind": {"type": "string"},
        "order": {"type": "object", "required": ["number", "seq"], "properties": {
            "number": {"type": "integer", "minimum": 1}, "seq": {"type": "integer"}}}}}
    config = CatalogConfig(type_field="kind", events={"order.paid": CatalogEventConfig(
        json_schema=schema, object_id="order.number", event_id="/event_id", ordering="order.seq",
        key="credit:{order.number}")})
    user = load_catalog(config, tmp_path)
    profile = StandardWebhooksProfile(catalog=user)
    plan = CATALOG["distinct-events-same-object"].plan(Context(profile=profile), UserCatalogWorld(3, catalog=user))
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("no object in your catalog gets two effects of its own: each effectful "
                           "type's business key is the same for every event of one object (one effect per object), "
                           "so deduplicating by object loses nothing")
    effects = CATALOG["duplicate-sequential"].plan(Context(profile=profile), UserCatalogWorld(3, catalog=user))
    assert not isinstance(effects, NotApplicable)  # the effect itself is still tested


def test_an_examples_top_level_time_is_each_events_own(tmp_path: Path) -> None:
    """Standard Webhooks' payload ``timestamp`` given only by an example is the event's time,
    not the example's on every message; a time inside the object keeps the object's value."""
    example = {"type": "invoice.paid", "timestamp": "2026-01-01T00:00:00Z",
               "data": {"id": "inv_1", "updated_at": "2026-01-01T00:00:00Z", "note": "2026-01-01T00:00:00Z"}}
    config = CatalogConfig(events={"invoice.paid": CatalogEventConfig(
        example=example, object_id="data.id", ordering="data.updated_at", key="credit:{data.id}")})
    world = UserCatalogWorld(4, catalog=load_catalog(config, tmp_path), start_us=START_US)
    events = world.effect_story() + world.effect_story()
    stamps = [e.extra[BODY]["timestamp"] for e in events]
    assert len(set(stamps)) == len(events) and stamps == sorted(stamps)
    assert all(e.extra[BODY]["data"]["note"] == "2026-01-01T00:00:00Z" for e in events)
    assert "2026-01-01T00:00:00Z" not in stamps


def test_an_update_carries_the_status_its_object_has_not_its_examples(tmp_path: Path) -> None:
    """A trial's ``subscription.updated`` declared where the body carries the status
    (``status``) but no status of its own (an update), its example saying ``past_due``: the
    body said past_due while hookproof judged the object still active, and explore failed a
    receiver storing what the update said. An update's body now carries the object's status."""
    def sub(status: str) -> dict[str, Any]:
        return {"type": "subscription.x", "timestamp": "2026-12-02T09:00:00Z",
                "data": {"id": "sub_01", "status": status, "plan": "pro", "updated_at": "2026-12-02T09:00:00Z"}}

    paths = {"object_id": "data.id", "status": "data.status", "ordering": "data.updated_at"}
    events = {
        "subscription.created": CatalogEventConfig(example=sub("active"), state="active", **paths),
        "subscription.updated": CatalogEventConfig(example=sub("past_due"), **paths),
        "subscription.canceled": CatalogEventConfig(example=sub("canceled"), state="canceled", **paths),
    }
    user = load_catalog(CatalogConfig(type_field="type", events=events), tmp_path)
    world = UserCatalogWorld(5, catalog=user)
    created = world.emit("subscription.created")
    sent = [created, world.emit("subscription.updated", created.object_id),
            world.emit("subscription.canceled", created.object_id)]
    if world.moves_forward("subscription.updated", created.object_id):
        sent.append(world.emit("subscription.updated", created.object_id))
    statuses = [e.extra[BODY]["data"]["status"] for e in sent]
    assert statuses[:3] == ["active", "active", "canceled"]
    assert statuses[3:] in ([], ["canceled"])
    assert [e.status for e in sent[:3]] == ["active", None, "canceled"]
    assert not world.serves_api  # nothing a receiver stores was served by an API


def test_an_objects_last_change_time_is_each_events_own(tmp_path: Path) -> None:
    """A new user's catalog ordered by the envelope's ``timestamp`` while its receiver ordered
    a subscription by ``data.updated_at``, which every event carried at its example's value: the
    receiver kept the first to arrive of two updates and was judged stale. An object's
    ``updated_at`` (``modified_at``, ``updatedAt``…) is now the event's time, its
    ``created_at`` still its first event's."""
    def sub(status: str) -> dict[str, Any]:
        return {"type": "subscription.x", "timestamp": "2026-12-02T09:00:00Z",
                "data": {"id": "sub_01", "status": status, "created_at": "2026-12-01T09:00:00.000000Z",
                         "updated_at": "2026-12-02T09:00:00.000000Z"}}

    paths = {"object_id": "data.id", "status": "data.status", "ordering": "timestamp"}
    events = {"subscription.created": CatalogEventConfig(example=sub("active"), state="active", **paths),
              "subscription.canceled": CatalogEventConfig(example=sub("canceled"), state="canceled", **paths)}
    world = UserCatalogWorld(5, catalog=load_catalog(CatalogConfig(type_field="type", events=events), tmp_path))
    created = world.emit("subscription.created")
    canceled = world.emit("subscription.canceled", created.object_id)
    first, second = (e.extra[BODY]["data"] for e in (created, canceled))
    assert first["updated_at"] < second["updated_at"]
    assert first["created_at"] == second["created_at"] == first["updated_at"]
    assert created.extra[BODY]["timestamp"] < canceled.extra[BODY]["timestamp"]  # the declared ordering, as before


def test_a_number_written_as_a_string_keeps_no_leading_zero(tmp_path: Path) -> None:
    """Lemon Squeezy's JSON:API ids are numbers written as strings (``"2470311"``); about one
    fresh id in ten began with 0 (``"0125687"``), which a receiver storing ids as BIGINT reads as
    another id (``lost: revoke:0788439`` beside its ``revoke:788439``). A fresh id is digits
    only, with a first digit other than 0, nine of them (seven allowed too few ids for a run:
    `test_a_one_digit_example_id_gives_every_object_its_own_id`)."""
    example = {"meta": {"event_name": "order_created"},
               "data": {"type": "orders", "id": "2470311",
                        "attributes": {"first_order_item": {"id": "1056721", "order_id": "2470311"}}}}
    config = CatalogConfig(type_field="meta.event_name", events={"order_created": CatalogEventConfig(
        example=example, object_id="data.id", key="license:{data.id}")})
    world = UserCatalogWorld(5, catalog=load_catalog(config, tmp_path))
    bodies = [e.extra[BODY] for _ in range(60) for e in world.effect_story()]
    ids = [b["data"]["id"] for b in bodies]
    assert len(set(ids)) == len(ids) == 60
    assert all(len(i) == 9 and i.isdigit() and i[0] != "0" for i in ids), [i for i in ids if i[0] == "0"]


def test_a_one_digit_example_id_gives_every_object_its_own_id(tmp_path: Path) -> None:
    """Lemon Squeezy's documented examples give every object ``"id": "1"``; fresh ids of that
    shape were one digit, nine for a whole run, and scenarios' orders collided (a correct
    receiver failed 17 of 30 scenarios: ``unexpected: license:2 applied``). A shape allowing
    fewer than `MIN_ID_SPACE` ids is widened in its own alphabet (``"1"``: nine digits, the
    first other than 0; an ``ord_a1`` hex tail: eight hex characters), an integer id comes from
    the world's increasing sequence of nine digits, and no two objects, events or nested ids of
    a world share one, whatever their kind."""
    from hookproof.simulator.world.json_instances import MIN_ID_SPACE, shape_space, widened

    order = {"meta": {"event_name": "order_created"},
             "data": {"type": "orders", "id": "1", "attributes": {"order_id": 1, "refund_id": "ord_a1"}}}
    key = {"meta": {"event_name": "license_key_created"},
           "data": {"type": "license-keys", "id": 1, "attributes": {"order_id": 1}}}
    config = CatalogConfig(type_field="meta.event_name", events={
        "order_created": CatalogEventConfig(example=order, object_type="order", key="license:{data.id}:"
                                            "{data.attributes.refund_id}", refs={"data.attributes.order_id": "order"}),
        "license_key_created": CatalogEventConfig(example=key, object_type="license_key", key="key:{data.id}",
                                                  refs={"data.attributes.order_id": "order"})})
    world = UserCatalogWorld(5, catalog=load_catalog(config, tmp_path))
    events = [world.emit("order_created") for _ in range(300)] + [world.emit("license_key_created") for _ in range(300)]
    orders = [e.extra[BODY]["data"]["id"] for e in events[:300]]
    keys = [e.extra[BODY]["data"]["id"] for e in events[300:]]
    refunds = [e.extra[BODY]["data"]["attributes"]["refund_id"] for e in events[:300]]
    assert all(isinstance(o, str) and len(o) == 9 and o.isdigit() and o[0] != "0" for o in orders), orders[:5]
    assert all(e.extra[BODY]["data"]["attributes"]["order_id"] == int(e.object_id) for e in events[:300])
    assert all(isinstance(k, int) and 10**8 <= k < 10**9 for k in keys), keys[:5]
    assert all(re.fullmatch(r"ord_[0-9a-f]{8}", r) for r in refunds), refunds[:5]
    every = [*orders, *map(str, keys), *refunds, *(e.id for e in events)]
    assert len(set(every)) == len(every) == 1500
    assert widened("1") == "199999999" and shape_space(widened("1")) == MIN_ID_SPACE == 9 * 10**8
    assert widened("2470311").isdigit() and len(widened("2470311")) == 9 and widened("user_x" * 6) == "user_x" * 6


def test_a_catalog_as_a_storm_s_data_keeps_its_test_mode_flag(catalog: UserCatalog) -> None:
    """A storm hands its processes the catalog as data: `[catalog] test_mode` (Lemon Squeezy's
    ``meta.test_mode``) went missing, so a worker's events carried no mode of their own and its
    worlds were of another kind than the master's."""
    import dataclasses
    import json

    from hookproof.scenarios.business_keys import render
    from hookproof.simulator.world.user_catalog import catalog_from_plain, catalog_to_plain

    flagged = dataclasses.replace(catalog, test_mode="data.test_mode")
    again = catalog_from_plain(json.loads(json.dumps(catalog_to_plain(flagged))), render)
    assert again.test_mode == "data.test_mode" and again.kind == flagged.kind != catalog.kind


def test_an_objects_other_times_move_with_its_creation(tmp_path: Path) -> None:
    """A user's Clerk session was made now while its ``expire_at`` and ``last_active_at`` kept
    the example's 2025 values (expired before it was made), and an email address kept its
    example's ``created_at``. The object's other times now move by as much as its creation
    did, in their own format, and its later events keep them."""
    example = {"type": "session.created", "data": {
        "id": "sess_2abcdefghijklmnopqrstuvwxy", "status": "active", "created_at": 1764000000000,
        "expire_at": 1764604800000, "last_active_at": 1764000060000, "abandon_at": "2025-12-24T16:00:00Z",
        "emails": [{"id": "idn_2abcdefghijk1mnopqrstuvwxy", "created_at": 1763999000000, "verified_at": 1763999100000}],
        "updated_at": 1764000000000}}
    updated = json.loads(json.dumps(example).replace("session.created", "session.updated"))
    updated["data"]["status"] = "ended"
    config = CatalogConfig(events={
        "session.created": CatalogEventConfig(example=example, object_id="data.id", ordering="data.updated_at",
                                              state="active"),
        "session.updated": CatalogEventConfig(example=updated, object_id="data.id", ordering="data.updated_at",
                                              state="ended")})
    world = UserCatalogWorld(4, catalog=load_catalog(config, tmp_path), start_us=START_US)
    first = world.emit("session.created")
    later = world.emit("session.updated", first.object_id)
    data = first.extra[BODY]["data"]
    shift_ms = data["created_at"] - 1764000000000
    assert shift_ms > 0 and data["created_at"] == first.created_us // 1000
    assert (data["expire_at"], data["last_active_at"]) == (1764604800000 + shift_ms, 1764000060000 + shift_ms)
    assert data["emails"][0]["created_at"] == 1763999000000 + shift_ms
    assert data["emails"][0]["verified_at"] == 1763999100000 + shift_ms
    abandon_us = 1766592000 * 1_000_000 + first.created_us - 1764000000000 * 1000  # 2025-12-24T16:00:00Z, moved
    assert data["abandon_at"] == rfc3339_us(abandon_us).split(".")[0] + "Z"  # the example's format: seconds
    kept = later.extra[BODY]["data"]
    assert (kept["created_at"], kept["expire_at"], kept["emails"]) == (data["created_at"], data["expire_at"],
                                                                       data["emails"])
    assert kept["status"] == "ended" and kept["updated_at"] > data["updated_at"]


def test_nothing_happens_to_an_object_after_a_type_ending_it(tmp_path: Path) -> None:
    """explore deleted one Clerk membership twice (its types declare no status, so nothing said the
    deletion ends it), and a counter of seats (-1 per deletion) judged a correct receiver wrong.
    A type whose name ends in ``deleted`` (``removed``, ``destroyed``) now ends its object, with
    or without a status: explore offers nothing more about it, and refuses to be asked."""
    from hookproof.scenarios.catalog_ops import catalog_ops
    from hookproof.simulator.world.registry import register_catalog

    def member(kind: str) -> dict[str, Any]:
        return {"type": f"organizationMembership.{kind}", "data": {"id": "orgmem_2abcdefghijklmnopqrstuvw", "role": "admin"}}

    events = {f"organizationMembership.{k}": CatalogEventConfig(example=member(k), object_id="data.id")
              for k in ("created", "updated", "deleted")}
    user = load_catalog(CatalogConfig(type_field="type", events=events), tmp_path)
    world = UserCatalogWorld(5, catalog=user)
    ops = catalog_ops(register_catalog(user))
    ops.apply(world, "organizationMembership.created", None)
    ops.apply(world, "organizationMembership.updated", 0)
    assert sorted(a for a, i in ops.legal(world) if i == 0) == ["organizationMembership.deleted",
                                                                "organizationMembership.updated"]
    ops.apply(world, "organizationMembership.deleted", 0)
    assert [a for a, i in ops.legal(world) if i == 0] == []
    with pytest.raises(WorldError, match="organizationMembership #0 was ended by its organizationMembership.deleted"):
        ops.apply(world, "organizationMembership.deleted", 0)
    assert [e.type.split(".")[1] for e in world.events] == ["created", "updated", "deleted"]


def test_a_cumulative_amount_a_key_names_stays_within_the_example_and_moves_its_fields(tmp_path: Path) -> None:
    """A key over Lemon Squeezy's cumulative ``refunded_amount`` (one refund per amount refunded
    so far) got "its own value per event" by going up by one: 1200, then 1201, on an order whose
    ``total`` is 1199, while ``refunded_amount_usd`` stayed 1199; a receiver checking
    ``refunded_amount <= total`` refused them. An amount now rises within the example's value,
    each event of the object above the last (600, 900, 1050 of 1199), the fields named after it
    moving with it; a count (``attempt_count``) still goes up by one."""
    attributes = {"total": 1199, "total_usd": 1199, "refunded_amount": 1199, "refunded_amount_usd": 1199,
                  "refunded_amount_formatted": "$11.99", "total_formatted": "$11.99", "attempt_count": 1}
    refunded = {"meta": {"event_name": "order_refunded"},
                "data": {"type": "orders", "id": "1", "attributes": attributes}}
    declined = json.loads(json.dumps(refunded).replace("order_refunded", "order_declined"))
    config = CatalogConfig(type_field="meta.event_name", events={
        "order_refunded": CatalogEventConfig(example=refunded, object_type="order",
                                             key="refund:{data.id}:{data.attributes.refunded_amount}"),
        "order_declined": CatalogEventConfig(example=declined, object_type="order",
                                             key="dunning:{data.id}:{data.attributes.attempt_count}")})
    world = UserCatalogWorld(5, catalog=load_catalog(config, tmp_path))
    first = world.emit("order_refunded")
    events = [first, *(world.emit("order_refunded", first.object_id) for _ in range(2))]
    shown = [{k: e.extra[BODY]["data"]["attributes"][k] for k in attributes} for e in events]
    assert [(a["refunded_amount"], a["refunded_amount_usd"], a["refunded_amount_formatted"]) for a in shown] == [
        (600, 600, "$6.00"), (900, 900, "$9.00"), (1050, 1050, "$10.50")]
    assert all((a["total"], a["total_usd"], a["total_formatted"]) == (1199, 1199, "$11.99") for a in shown)
    assert [e.business_key for e in events] == [f"refund:{first.object_id}:{n}" for n in (600, 900, 1050)]
    attempts = [world.emit("order_declined", first.object_id) for _ in range(2)]
    assert [e.extra[BODY]["data"]["attributes"]["attempt_count"] for e in attempts] == [2, 3]


def test_a_json_api_resource_s_times_and_urls_follow_the_object(tmp_path: Path) -> None:
    """Lemon Squeezy's orders (JSON:API resources): ``data.id`` was renamed but ``links.self``
    and ``relationships.*.links`` still said ``/orders/1``; ``attributes.created_at`` kept the
    example's 2021 date while ``updated_at`` was now, and ``refunded_at`` stayed 2021; and times
    came out as ``13:09:06.354189Z`` where the provider prints ``.000000Z``. A URL's path
    segment equal to the example's id now carries the object's (nothing else: ``store_id`` 1,
    ``/v1/``, the receipt's URL stay), the resource's ``attributes`` hold its creation time
    (when it was made, never after ``updated_at``) and a time the example gives by its last
    change is never after the event, each written in its example's format."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "lemonsqueezy"
    example = {name: json.loads((fixtures / f"{name}.json").read_text(encoding="utf-8"))
               for name in ("order_created", "order_refunded")}
    paths = {"object_type": "order", "ordering": "data.attributes.updated_at", "status": "data.attributes.status"}
    config = CatalogConfig(type_field="meta.event_name", events={
        "order_created": CatalogEventConfig(example=example["order_created"], state="paid", key="license:{data.id}",
                                            **paths),
        "order_refunded": CatalogEventConfig(example=example["order_refunded"], state="refunded", **paths)})
    world = UserCatalogWorld(5, catalog=load_catalog(config, tmp_path), start_us=START_US)
    created = world.emit("order_created")
    refunded = world.emit("order_refunded", created.object_id)
    oid = created.object_id
    for event in (created, refunded):
        data = event.extra[BODY]["data"]
        assert data["links"]["self"] == f"https://api.lemonsqueezy.com/v1/orders/{oid}"
        links = [v for r in data["relationships"].values() for v in r["links"].values()]
        assert len(links) == 12 and all(link.startswith(f"https://api.lemonsqueezy.com/v1/orders/{oid}/")
                                        for link in links), links
        attributes = data["attributes"]
        assert attributes["urls"] == example[event.type]["data"]["attributes"]["urls"]
        assert (attributes["store_id"], attributes["first_order_item"]["product_id"]) == (1, 1)
        assert attributes["created_at"] == rfc3339_us(created.created_us // 1_000_000 * 1_000_000)
        assert attributes["updated_at"] == rfc3339_us(event.created_us // 1_000_000 * 1_000_000)
        times = [v for v in json.dumps(data).split('"') if re.fullmatch(r"\d{4}-\d\d-\d\dT.*", v)]
        assert times and all(t.endswith(".000000Z") and t <= attributes["updated_at"] for t in times), times
    assert refunded.extra[BODY]["data"]["attributes"]["refunded_at"] == rfc3339_us(
        refunded.created_us // 1_000_000 * 1_000_000)


def _lemon_orders(tmp_path: Path, **catalog: Any) -> UserCatalog:
    """Lemon Squeezy's documented ``order_created`` and ``order_refunded`` as a catalog."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "lemonsqueezy"
    example = {name: json.loads((fixtures / f"{name}.json").read_text(encoding="utf-8"))
               for name in ("order_created", "order_refunded")}
    return load_catalog(CatalogConfig(type_field="meta.event_name", events={
        name: CatalogEventConfig(example=example[name], object_type="order", key=f"{name}:{{data.id}}")
        for name in example}, **catalog), tmp_path)


def test_each_order_has_its_own_order_number_kept_across_its_events(tmp_path: Path) -> None:
    """Every order carried the documented ``order_number`` 1 (a store's sequential number,
    unique per store): a receiver keeping it unique took every later order for the first.
    Each object now has its own, greater than the last object's, the same in all its events;
    a number a key names still goes up by one per event (a count)."""
    world = UserCatalogWorld(5, catalog=_lemon_orders(tmp_path), start_us=START_US)
    first, second = world.emit("order_created"), world.emit("order_created")
    refunded = world.emit("order_refunded", first.object_id)
    numbers = [e.extra[BODY]["data"]["attributes"]["order_number"] for e in (first, second, refunded)]
    assert numbers[0] < numbers[1] and numbers[2] == numbers[0] and numbers[0] > 1, numbers
    assert all(isinstance(n, int) for n in numbers)


@pytest.mark.parametrize("livemode", [False, True])
def test_every_test_mode_flag_of_a_body_says_the_event_s_mode(tmp_path: Path, livemode: bool) -> None:
    """Lemon Squeezy's objects carry their own ``test_mode`` beside ``meta.test_mode`` (the
    order's, its first item's): the world's events say its mode in every one, and the other
    mode's event (``test-mode-to-live``, `UserCatalog.body_of`) in every one too, never only at
    the declared path."""
    from dataclasses import replace

    catalog = _lemon_orders(tmp_path, test_mode="meta.test_mode")
    world = UserCatalogWorld(5, catalog=catalog, livemode=livemode, start_us=START_US)
    event = world.emit("order_created")

    def flags(body: Any) -> list[bool]:
        return [v == "true" for v in re.findall(r'"test_mode": (true|false)', json.dumps(body))]

    assert flags(catalog.body_of(event)) == [not livemode] * 3  # meta, the order, its first item
    assert flags(catalog.body_of(replace(event, livemode=not livemode))) == [livemode] * 3
    assert flags(event.extra[BODY]) == [not livemode] * 3  # the world's body unchanged


def test_an_id_the_schema_bounds_keeps_the_example_s_length(tmp_path: Path) -> None:
    """A schema bounding the id (``maxLength``, a ``pattern``) is the user's word on its shape:
    such an id is drawn as long as the example's, never widened past what the schema accepts."""
    schema = {"type": "object", "properties": {"data": {"type": "object", "properties": {
        "id": {"type": "string", "pattern": "^[0-9]{1,4}$"}}}}}
    example = {"data": {"id": "12"}}
    config = CatalogConfig(events={"order.paid": CatalogEventConfig(example=example, json_schema=schema,
                                                                    key="paid:{data.id}")})
    world = UserCatalogWorld(5, catalog=load_catalog(config, tmp_path))
    ids = [world.emit("order.paid").object_id for _ in range(40)]
    assert all(re.fullmatch(r"[1-9][0-9]", i) for i in ids) and len(set(ids)) == 40, ids
