"""A catalog's JSON Schemas as generators write them: ``$defs`` and ``$ref``s, recursive ones
(a filter whose clauses are filters or conditions, as pydantic's ``model_json_schema()``
writes Polar's), in files beside each other.

The oracle is the user's own schema file, validated by `jsonschema` as the user does:
every body the world makes must pass it. A recursive ``$ref`` stays one (`_Refs.bundle`),
is followed at most `MAX_RECURSION` more times inside itself, then the value is made
without it (another ``anyOf`` branch, an empty array); a body that a schema refuses is
never made (`UserCatalog.check_body`). The last test uses the schema Polar's SDK (polar-sdk
0.32) gives ``subscription.updated``: 75 KB, 100 definitions, its filter recursive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from hookproof.catalog_file import CatalogConfig, CatalogEventConfig, _check_schema, load_catalog
from hookproof.errors import ConfigError
from hookproof.simulator.world.json_instances import InstanceMaker, schema_at
from hookproof.simulator.world.user_catalog import (
    BODY,
    EventSpec,
    InvalidBody,
    UserCatalog,
    UserCatalogWorld,
    user_events_of_type,
)

POLAR = Path(__file__).resolve().parents[1] / "fixtures" / "polar" / "subscription.updated.json"

#: Polar's meter filter, as pydantic writes it: clauses are filters or conditions.
FILTER_DEFS: dict[str, Any] = {
    "Filter": {"type": "object", "required": ["conjunction", "clauses"], "properties": {
        "conjunction": {"$ref": "#/$defs/Conjunction"},
        "clauses": {"type": "array", "items": {"$ref": "#/$defs/Clauses"}}}},
    "Clauses": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"$ref": "#/$defs/FilterClause"}]},
    "FilterClause": {"type": "object", "required": ["property", "operator", "value"], "properties": {
        "property": {"type": "string"}, "operator": {"enum": ["eq", "ne"]},
        "value": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
    "Conjunction": {"enum": ["and", "or"]},
}


def _event_schema(data: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["type", "timestamp", "data"], "properties": {
        "type": {"type": "string"}, "timestamp": {"type": "string", "format": "date-time"}, "data": data},
        "$defs": defs}


def _meter_schema() -> dict[str, Any]:
    data = {"type": "object", "required": ["id", "status", "meter"], "properties": {
        "id": {"type": "string"}, "status": {"enum": ["active", "canceled"]},
        "meter": {"type": "object", "required": ["filter"], "properties": {"filter": {"$ref": "#/$defs/Filter"}}}}}
    return _event_schema(data, FILTER_DEFS)


def _load(tmp_path: Path, files: dict[str, Any], events: dict[str, CatalogEventConfig]) -> UserCatalog:
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    return load_catalog(CatalogConfig(events=events), tmp_path)


def _oracle(path: Path) -> Draft202012Validator:
    """The user's own check: their file as it is, $refs and all."""
    return Draft202012Validator(json.loads(path.read_text()), format_checker=Draft202012Validator.FORMAT_CHECKER)


def test_a_recursive_ref_is_followed_once_inside_itself_then_its_other_branch(tmp_path: Path) -> None:
    user = _load(tmp_path, {"meter.json": _meter_schema()}, {
        "subscription.updated": CatalogEventConfig(json_schema="meter.json", status="data.status", state="active")})
    world = UserCatalogWorld(3, catalog=user)
    events = user_events_of_type(world, "subscription.updated", 3)
    oracle = _oracle(tmp_path / "meter.json")
    for event in events:
        body = event.extra[BODY]
        assert [e.message for e in oracle.iter_errors(body)] == []
        outer = body["data"]["meter"]["filter"]
        assert sorted(outer) == ["clauses", "conjunction"] and len(outer["clauses"]) == 1
        inner = outer["clauses"][0]  # a filter in the filter's clauses: the recursion, once
        assert sorted(inner) == ["clauses", "conjunction"] and len(inner["clauses"]) == 1
        clause = inner["clauses"][0]  # then, at the bound, the non-recursive branch: a condition
        assert sorted(clause) == ["operator", "property", "value"] and clause["operator"] in ("eq", "ne")


def test_the_recursive_ref_stays_a_ref_in_the_bundled_schema(tmp_path: Path) -> None:
    user = _load(tmp_path, {"meter.json": _meter_schema()}, {
        "subscription.updated": CatalogEventConfig(json_schema="meter.json")})
    schema = user.spec("subscription.updated").schema
    assert schema is not None
    assert schema["$defs"]["Clauses"] == {"anyOf": [{"$ref": "#/$defs/Filter"}, {"$ref": "#/$defs/FilterClause"}]}
    assert sorted(schema["$defs"]) == ["Clauses", "Conjunction", "Filter", "FilterClause"]
    # a string where a clause must be an object, as the inlined cycle ({}: anything) let through
    bad = {"type": "subscription.updated", "timestamp": "2026-01-01T00:00:00Z", "data": {
        "id": "s", "status": "active", "meter": {"filter": {"conjunction": "and", "clauses": ["6LVmiEfQpXRG6Lo0"]}}}}
    assert [e.message for e in Draft202012Validator(schema).iter_errors(bad)] != []
    assert schema_at(schema, ("data", "meter", "filter", "clauses", "0", "clauses", "0", "operator")) == {
        "enum": ["eq", "ne"]}


def test_an_array_of_a_recursive_item_ends_empty_at_the_bound(tmp_path: Path) -> None:
    defs = {"Node": {"type": "object", "required": ["name", "children"], "properties": {
        "name": {"const": "n"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
    schema = _event_schema({"type": "object", "required": ["id", "tree"], "properties": {
        "id": {"type": "string"}, "tree": {"$ref": "#/$defs/Node"}}}, defs)
    user = _load(tmp_path, {"tree.json": schema}, {"tree.created": CatalogEventConfig(json_schema="tree.json")})
    body = user_events_of_type(UserCatalogWorld(1, catalog=user), "tree.created")[0].extra[BODY]
    assert body["data"]["tree"] == {"name": "n", "children": [{"name": "n", "children": []}]}
    assert [e.message for e in _oracle(tmp_path / "tree.json").iter_errors(body)] == []


def test_an_optional_recursive_property_is_left_out_at_the_bound() -> None:
    schema = {"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "required": ["v"], "properties": {
        "v": {"const": 1}, "next": {"$ref": "#/$defs/Node"}}}}}
    assert InstanceMaker(__import__("random").Random(1), 0).make(schema) == {"v": 1, "next": {"v": 1}}


def test_a_schema_without_a_finite_body_is_one_config_error(tmp_path: Path) -> None:
    defs = {"Node": {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/$defs/Node"}}}}
    schema = _event_schema({"type": "object", "required": ["id", "node"], "properties": {
        "id": {"type": "string"}, "node": {"$ref": "#/$defs/Node"}}}, defs)
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, {"loop.json": schema}, {"loop.made": CatalogEventConfig(json_schema="loop.json")})
    assert str(raised.value) == (
        'catalog.events."loop.made": hookproof cannot make a body from the schema '
        "(#/$defs/Node needs itself past 1 nesting: no other branch, optional property or empty array ends it): "
        "give an example")


def test_refs_into_a_file_beside_it_and_to_the_root_are_bundled(tmp_path: Path) -> None:
    common = {"$defs": {"Money": {"type": "object", "required": ["amount", "currency"], "properties": {
        "amount": {"type": "integer", "minimum": 1}, "currency": {"enum": ["usd"]}}}}}
    schema = _event_schema({"type": "object", "required": ["id", "total", "parent"], "properties": {
        "id": {"type": "string"}, "total": {"$ref": "common.json#/$defs/Money"},
        "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}}, {})
    del schema["$defs"]
    user = _load(tmp_path, {"common.json": common, "order.json": schema}, {
        "order.created": CatalogEventConfig(json_schema="order.json")})
    bundled = user.spec("order.created").schema
    assert bundled is not None and bundled["$defs"] == {"Money": common["$defs"]["Money"]}
    assert bundled["properties"]["data"]["properties"]["parent"] == {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
    body = user_events_of_type(UserCatalogWorld(2, catalog=user), "order.created")[0].extra[BODY]
    assert body["data"]["total"]["currency"] == "usd"
    inner = body["data"]["parent"]  # the whole event inside itself once, then null
    assert sorted(inner) == ["data", "timestamp", "type"] and inner["data"]["parent"] is None
    registry_free = Draft202012Validator(bundled, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert [e.message for e in registry_free.iter_errors(body)] == []


def test_a_state_is_checked_against_a_status_enum_behind_a_ref(tmp_path: Path) -> None:
    schema = _event_schema({"type": "object", "required": ["id", "status"], "properties": {
        "id": {"type": "string"}, "status": {"$ref": "#/$defs/Status"}}},
        {"Status": {"enum": ["active", "canceled"]}})
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, {"sub.json": schema}, {"subscription.canceled": CatalogEventConfig(
            json_schema="sub.json", status="data.status", state="cancelled")})
    assert str(raised.value) == (
        "catalog.events.\"subscription.canceled\": state: 'cancelled' is not a status the schema allows at "
        "data.status: 'cancelled' is not one of ['active', 'canceled']")


def test_a_body_its_schema_refuses_is_never_made() -> None:
    schema = _event_schema({"type": "object", "required": ["id", "plan"], "properties": {
        "id": {"type": "string"}, "plan": {"$ref": "#/$defs/Plan"}}},
        {"Plan": {"type": "object", "required": ["seats"], "properties": {"seats": {"type": "integer"}}}})
    example = {"type": "seat.added", "timestamp": "2026-01-01T00:00:00Z", "data": {"id": "s_1", "plan": {"seats": "2"}}}
    # built by hand (a storm's worker gets its catalog as data): nothing checked it before the world
    user = UserCatalog((EventSpec(type="seat.added", schema=schema, example=example, source="catalog"),))
    world = UserCatalogWorld(1, catalog=user)
    with pytest.raises(InvalidBody) as raised:
        world.emit("seat.added")
    assert str(raised.value) == ("catalog: the body hookproof made for seat.added does not match its schema at "
                                 "data.plan.seats: '2' is not of type 'integer' (hookproof sends no such body; "
                                 "please report it)")
    assert (raised.value.event_type, raised.value.at) == ("seat.added", "data.plan.seats")
    assert world.events == []  # never recorded: no story, no delivery carries it


def test_a_made_body_the_schema_refuses_is_a_config_error_naming_the_place(tmp_path: Path) -> None:
    # a required pattern hookproof does not solve: the load says where, and asks for an example
    schema = _event_schema({"type": "object", "required": ["id", "code"], "properties": {
        "id": {"type": "string"}, "code": {"$ref": "#/$defs/Code"}}}, {"Code": {"type": "string", "pattern": "^C-[0-9]{4}$"}})
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, {"code.json": schema}, {"code.issued": CatalogEventConfig(json_schema="code.json")})
    assert str(raised.value).startswith(
        'catalog.events."code.issued": the body hookproof made (give an example) does not match the schema '
        "at data.code: ")


def test_schemas_sharing_definitions_are_checked_once_per_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof import catalog_file

    seen: list[Any] = []
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)

    class Counting:
        def iter_errors(self, part: Any) -> Any:
            seen.append(part)
            return meta.iter_errors(part)

    monkeypatch.setitem(catalog_file._META, "validator", Counting())
    checked: set[str] = set()
    _check_schema(_meter_schema(), checked, None, "a")
    _check_schema({**_meter_schema(), "title": "another"}, checked, None, "b")
    assert len(seen) == 1 + len(FILTER_DEFS) + 1  # each definition once, each root once
    bad = {**_meter_schema(), "$defs": {**FILTER_DEFS, "Conjunction": {"type": "strin"}}}
    with pytest.raises(ConfigError) as raised:
        _check_schema(bad, checked, None, 'catalog.events."x"')
    assert str(raised.value).startswith('catalog.events."x": schema: not a JSON Schema at $defs/Conjunction/type: ')


def test_polar_subscription_updated_bodies_pass_polars_own_schema(tmp_path: Path) -> None:
    user = load_catalog(CatalogConfig(events={"subscription.updated": CatalogEventConfig(
        json_schema=str(POLAR), status="data.status", ordering="data.modified_at")}), tmp_path)
    oracle = _oracle(POLAR)
    world = UserCatalogWorld(11, catalog=user)
    for event in user_events_of_type(world, "subscription.updated", 4):
        body = event.extra[BODY]
        assert [e.message for e in oracle.iter_errors(body)] == []
        for meter in body["data"]["meters"]:
            clauses = meter["meter"]["filter"]["clauses"]
            assert clauses and all(isinstance(c, dict) for c in clauses)
