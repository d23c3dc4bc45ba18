"""Values hookproof makes up in a user's catalog bodies are values the field's schema allows.

The shapes are those pydantic writes for Polar's SDK models (polar-sdk 0.32): a nullable enum
is a ``$ref`` to ``anyOf [{$ref: Reason}, {type: null}]``, and Speakeasy's optional nullable
fields carry its ``UNSET`` sentinel string as their ``default``, which their own schema refuses.
The oracle is the document itself, validated by `jsonschema` as the user does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from hookproof.catalog_file import CatalogConfig, load_catalog
from hookproof.errors import ConfigError
from hookproof.simulator.world.json_instances import InstanceMaker
from hookproof.simulator.world.user_catalog import BODY, EventSpec, InvalidBody, UserCatalog, UserCatalogWorld

SENTINEL = "~?~unset~?~sentinel~?~"
REASONS = ["customer_service", "too_expensive", "unused", "other"]
SCHEMAS: dict[str, Any] = {
    "Reason": {"enum": REASONS, "title": "Reason", "type": "string"},
    "Nullable_Reason_": {"anyOf": [{"$ref": "#/components/schemas/Reason"}, {"type": "null"}]},
    "Nullable_int_": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "Unset": {"properties": {}, "title": "Unset", "type": "object"},
    "OptionalNullable_int_": {"anyOf": [{"$ref": "#/components/schemas/Nullable_int_"},
                                        {"$ref": "#/components/schemas/Unset"}, {"type": "null"}]},
    "Subscription": {"type": "object", "required": ["id", "status", "modified_at", "reason", "note"], "properties": {
        "id": {"type": "string", "format": "uuid4"},
        "status": {"enum": ["incomplete", "active", "canceled"], "type": "string"},
        "modified_at": {"type": "string", "format": "date-time"},
        "reason": {"$ref": "#/components/schemas/Nullable_Reason_"},
        "note": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]},
        "seats": {"$ref": "#/components/schemas/OptionalNullable_int_", "default": SENTINEL}}},
    "Payload": {"type": "object", "required": ["type", "timestamp", "data"], "properties": {
        "type": {"type": "string"}, "timestamp": {"type": "string", "format": "date-time"},
        "data": {"$ref": "#/components/schemas/Subscription"}}},
}
TYPES = {"subscription.created": "incomplete", "subscription.active": "active", "subscription.updated": None}


def _doc() -> dict[str, Any]:
    hooks = {}
    for name, state in TYPES.items():
        op: dict[str, Any] = {
            "x-hookproof-object-id": "data.id", "x-hookproof-object-type": "subscription",
            "x-hookproof-ordering": "data.modified_at", "x-hookproof-status": "data.status",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Payload"}}}},
            "responses": {"200": {"description": "ok"}}}
        if state is not None:
            op["x-hookproof-state"] = state
        hooks[name] = {"post": op}
    return {"openapi": "3.1.0", "info": {"title": "polar-like", "version": "1"}, "x-hookproof-type-field": "type",
            "webhooks": hooks, "components": {"schemas": SCHEMAS}}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> UserCatalog:
    folder = tmp_path_factory.mktemp("polar-like")
    (folder / "webhooks.json").write_text(json.dumps(_doc()))
    return load_catalog(CatalogConfig(openapi="webhooks.json"), folder)  # type: ignore[no-any-return]


ORACLE = Draft202012Validator({"$ref": "#/components/schemas/Payload", "components": {"schemas": SCHEMAS}},
                              format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("seed", range(40))
def test_a_repeated_update_keeps_a_nullable_enum_behind_ref_and_anyof_in_its_enum(
        catalog: UserCatalog, seed: int) -> None:
    world = UserCatalogWorld(seed, catalog=catalog)
    story = world.state_story()  # a subscription made active, then updated twice; another walked
    updates = [e for e in story if e.type == "subscription.updated"]
    assert len(updates) == 2 and updates[0].object_id == updates[1].object_id
    for event in story:
        body = event.extra[BODY]
        assert list(ORACLE.iter_errors(body)) == []
        assert body["data"]["reason"] in [*REASONS, None]
        assert SENTINEL not in json.dumps(body)
    first, second = (e.extra[BODY]["data"] for e in updates)
    assert second["reason"] == first["reason"]  # an enum is no free text: never varied
    # the free text the update changes is changed again, within its maxLength
    assert second["note"] != first["note"]
    # (the type's own made text, a space and 4 characters)
    assert re.fullmatch(r"[A-Za-z0-9]{16} [A-Za-z0-9]{4}", second["note"])


def test_a_varied_text_the_schema_refuses_is_left_unchanged() -> None:
    # a name the schema allows no space in (a rule `_varied` does not read): the varied text
    # ("Ada" + a space and 4 characters) is refused, so the repeat keeps the name it had
    schema = {"type": "object", "required": ["type", "data"], "properties": {
        "type": {"type": "string"}, "data": {"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "string"}, "name": {"type": "string", "not": {"pattern": "\\s"}}}}}}
    catalog = UserCatalog(tuple(
        EventSpec(name, schema=schema, example={"type": name, "data": {"id": "cus_1", "name": text}})
        for name, text in (("customer.created", "Ada"), ("customer.updated", "Grace"))))
    for seed in range(20):
        world = UserCatalogWorld(seed, catalog=catalog)
        created = world.emit("customer.created")
        first = world.emit("customer.updated", created.object_id)
        second = world.emit("customer.updated", created.object_id)
        assert first.extra[BODY]["data"]["name"] == second.extra[BODY]["data"]["name"] == "Grace"


def test_a_default_its_own_schema_refuses_is_not_the_value() -> None:
    maker = InstanceMaker(__import__("random").Random(3), 1_790_000_000_000_000)
    made = [maker.make({"type": "object", "required": ["seats"], "properties": {
        "seats": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": SENTINEL}}})["seats"]
        for _ in range(20)]
    assert all(isinstance(s, int) and not isinstance(s, bool) for s in made)
    assert maker.make({"type": "integer", "default": 5}) == 5  # a default its schema allows still is
    assert maker.make({"type": "string", "examples": [7], "default": "x"}) == "x"  # so is an example


def test_the_sentinel_default_never_reaches_a_body(catalog: UserCatalog) -> None:
    world = UserCatalogWorld(5, catalog=catalog)
    for event in world.lifecycle():
        seats = event.extra[BODY]["data"]["seats"]
        assert seats is None or (isinstance(seats, int) and not isinstance(seats, bool))


def _spec() -> EventSpec:
    return EventSpec("subscription.updated", schema={**SCHEMAS["Payload"], "properties": {
        **SCHEMAS["Payload"]["properties"], "data": {"anyOf": [{"$ref": "#/$defs/Subscription"}, {"type": "null"}]}},
        "$defs": {"Subscription": {"type": "object", "properties": {
            "reason": {"$ref": "#/$defs/Nullable_Reason_"}, "seats": {"$ref": "#/$defs/Nullable_int_"}}},
            "Nullable_Reason_": {"anyOf": [{"$ref": "#/$defs/Reason"}, {"type": "null"}]},
            "Reason": {"enum": ["unused", "other"]}, "Nullable_int_": SCHEMAS["Nullable_int_"]}},
        example={"type": "subscription.updated", "timestamp": "2026-01-01T00:00:00Z", "data": {"id": "s"}},
        source="polar.json: webhook subscription.updated")


@pytest.mark.parametrize(("data", "said"), [
    ({"reason": "other FwxT"},
     "at data.reason: 'other FwxT' is not valid under any of the given schemas "
     "('other FwxT' is not one of ['unused', 'other']; 'other FwxT' is not of type 'null')"),
    ({"reason": "other", "seats": SENTINEL},
     "at data.seats: '~?~unset~?~sentinel~?~' is not valid under any of the given schemas "
     "('~?~unset~?~sentinel~?~' is not of type 'integer'; '~?~unset~?~sentinel~?~' is not of type 'null')"),
])
def test_an_invalid_body_says_what_failed_and_where(data: dict[str, Any], said: str) -> None:
    catalog = UserCatalog((_spec(),))
    body = {"type": "subscription.updated", "timestamp": "2026-01-01T00:00:00Z", "data": data}
    with pytest.raises(InvalidBody) as raised:
        catalog.check_body(catalog.events[0], body)
    assert str(raised.value) == (f"polar.json: webhook subscription.updated: the body hookproof made for "
                                 f"subscription.updated does not match its schema {said} "
                                 "(hookproof sends no such body; please report it)")


def test_a_long_instance_is_shortened_never_the_reason() -> None:
    catalog = UserCatalog((_spec(),))
    body = {"type": {"metadata": {}, "created_at": "2026-12-07T01:34:55.399654Z", "currency": "usd" * 40, "id": "x"},
            "timestamp": "2026-01-01T00:00:00Z", "data": None}
    with pytest.raises(InvalidBody) as raised:
        catalog.check_body(catalog.events[0], body)
    assert raised.value.at == "type"
    assert raised.value.reason == ("{'created_at': '2026-12-07T01:34:55.399654Z', 'currency': "
                                   "'usdusdusdusdusdus...usdusdusdusdusdusd', 'id': 'x', ...} is not of type 'string'")


def test_an_example_its_schema_refuses_is_one_config_error_saying_why(tmp_path: Path) -> None:
    doc = _doc()
    doc["webhooks"]["subscription.updated"]["post"]["requestBody"]["content"]["application/json"]["example"] = {
        "type": "subscription.updated", "timestamp": "2026-01-01T00:00:00Z",
        "data": {"id": "0b2a4c1e-6a8f-4f43-9e2d-2f6c5a3b1d7e", "status": "active",
                 "modified_at": "2026-01-01T00:00:00Z", "reason": None, "note": None, "seats": SENTINEL}}
    (tmp_path / "webhooks.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as raised:
        load_catalog(CatalogConfig(openapi="webhooks.json"), tmp_path)
    assert str(raised.value).endswith(
        "webhook subscription.updated: the example does not match the schema at data.seats: "
        "'~?~unset~?~sentinel~?~' is not valid under any of the given schemas "
        "('~?~unset~?~sentinel~?~' is not valid under any of the given schemas; "
        "'~?~unset~?~sentinel~?~' is not of type 'object'; '~?~unset~?~sentinel~?~' is not of type 'null')")
