"""Bodies made from a catalog's JSON Schemas alone are coherent as the provider's are.

The schemas are Polar's: ``order.paid.json`` as polar-sdk 0.32's pydantic models dump it
(``model_json_schema()``: no ``format`` on ids), and ``order.paid.formats.json``, the same
order trimmed, with the formats Polar's OpenAPI document gives (ids ``uuid4``, ``email``,
``uri``, ``date-time``). The oracles: the schema itself (`jsonschema`, every body valid), and
Polar's own bodies, where an order's ``customer_id`` is its ``customer.id`` (polar-sdk's
``Order``: "customer_id" and "customer" describe one customer).
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlparse

from jsonschema import Draft202012Validator

from hookproof.catalog_file import CatalogConfig, CatalogEventConfig, load_catalog
from hookproof.simulator.world.json_instances import InstanceMaker, uuid_version
from hookproof.simulator.world.user_catalog import BODY, UserCatalogWorld, user_events_of_type

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "polar"
EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


def _world(schema: Path, seed: int = 11, **extra: Any) -> UserCatalogWorld:
    events = {"order.paid": CatalogEventConfig(json_schema=str(schema), object_type="order", status="data.status",
                                               state="paid", **extra)}
    return UserCatalogWorld(seed, catalog=load_catalog(CatalogConfig(type_field="type", events=events), schema.parent))


def _beside(node: Any, at: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, X_id, X.id) of every field X_id beside an object X holding an id."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _beside(item, f"{at}[{i}]")
    elif isinstance(node, dict):
        for name, value in node.items():
            other = node.get(name[:-3]) if name.endswith("_id") else None
            if isinstance(other, dict) and "id" in other:
                yield f"{at}.{name}", value, other["id"]
            yield from _beside(value, f"{at}.{name}")


def test_an_x_id_beside_x_is_its_id_in_polars_dumped_schema() -> None:
    oracle = Draft202012Validator(json.loads((FIXTURES / "order.paid.json").read_text()))
    bodies = [e.extra[BODY] for e in user_events_of_type(_world(FIXTURES / "order.paid.json"), "order.paid", 3)]
    for body in bodies:
        assert [e.message for e in oracle.iter_errors(body)] == []
        pairs = list(_beside(body))
        assert sorted(p for p, _, _ in pairs) == [".data.customer_id", ".data.discount_id", ".data.product_id",
                                                  ".data.subscription_id"]
        assert [(p, mine) for p, mine, theirs in pairs if mine != theirs] == []
        data = body["data"]
        assert data["customer_id"] == data["customer"]["id"] and data["product_id"] == data["product"]["id"]
    assert len({b["data"]["id"] for b in bodies}) == 3  # three orders


def test_formats_are_honoured_and_ids_tied() -> None:
    schema = json.loads((FIXTURES / "order.paid.formats.json").read_text())
    oracle = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for event in user_events_of_type(_world(FIXTURES / "order.paid.formats.json"), "order.paid", 3):
        body, data = event.extra[BODY], event.extra[BODY]["data"]
        assert [e.message for e in oracle.iter_errors(body)] == []
        customer, product = data["customer"], data["product"]
        ids = [data["id"], data["customer_id"], customer["id"], customer["organization_id"], data["product_id"],
               product["id"]]
        assert [uuid.UUID(i).version for i in ids] == [4] * 6 and all(i == i.lower() and len(i) == 36 for i in ids)
        assert data["customer_id"] == customer["id"] and data["product_id"] == product["id"]
        assert event.object_id == data["id"]
        for text in (customer["email"], data["billing_email"]):
            assert EMAIL.fullmatch(text), text
        for url in (customer["avatar_url"], data["checkout_url"]):
            assert urlparse(url).scheme == "https" and urlparse(url).netloc == "example.com", url
        for moment in (body["timestamp"], data["created_at"], customer["created_at"]):
            assert datetime.fromisoformat(moment.replace("Z", "+00:00")).tzinfo is not None, moment


def test_a_declared_reference_at_x_id_is_written_to_x_id_too(tmp_path: Path) -> None:
    customer = {"type": "object", "required": ["type", "data"], "properties": {
        "type": {"const": "customer.created"},
        "data": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "format": "uuid4"}}}}}
    (tmp_path / "customer.created.json").write_text(json.dumps(customer))
    (tmp_path / "order.paid.json").write_text((FIXTURES / "order.paid.formats.json").read_text())
    events = {"customer.created": CatalogEventConfig(json_schema="customer.created.json", object_type="customer"),
              "order.paid": CatalogEventConfig(json_schema="order.paid.json", object_type="order",
                                               refs={"data.customer_id": "customer"})}
    world = UserCatalogWorld(5, catalog=load_catalog(CatalogConfig(type_field="type", events=events), tmp_path))
    order = world.emit("order.paid")
    made = [e for e in world.events if e.type == "customer.created"]
    data = order.extra[BODY]["data"]
    assert len(made) == 1 and data["customer_id"] == data["customer"]["id"] == made[0].object_id


def test_uuid_formats() -> None:
    assert [uuid_version(f) for f in ("uuid", "uuid4", "uuid1", "uuid5", "uri", None, "uuid9")] == [4, 4, 1, 5, None,
                                                                                                    None, None]
    maker = InstanceMaker(__import__("random").Random(3), 0)
    made = maker.make({"type": "string", "format": "uuid1"})
    assert uuid.UUID(made).version == 1
