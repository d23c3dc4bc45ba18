"""Shopify fidelity: the Shopify world's webhooks and Admin REST answers, checked against Shopify's own examples.

The oracle is the resource Shopify's Admin REST API answers at 2024-10, as Shopify's own
``@shopify/shopify-api`` tests replay it (``tests/fixtures/shopify/``, see its README): a
webhook's body is the REST resource of its topic. Every payload of a whole lifecycle is
compared with the example of its resource key for key, JSON type for JSON type,
recursively (`compare`); the only differences accepted are the null fields of `NULLABLE`,
each with its reason, and the lists no story fills are listed in `UNEXERCISED`. Signatures are checked with the algorithm shopify.dev documents (base64
HMAC-SHA256 of the raw body); the official Node validator runs in
``test_profiles_node.py``. The mandatory compliance topics carry no REST resource: their oracle is
the payloads shopify.dev's "Privacy law compliance" page and Shopify's app template give
(``tests/fixtures/shopify/README.md``), compared the same way.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Mapping

import httpx
import pytest

from hookproof.simulator.errors import ProfileError, WorldError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, clock, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY, Switch
from hookproof.simulator.world import World, emit_events, new_world
from hookproof.simulator.world.shopify import (
    ORDER_TRANSITIONS,
    SHOP_REDACT_DELAY_S,
    SHOPIFY_COMPLIANCE_TOPICS,
    SHOPIFY_EVENT_TYPES,
    SHOPIFY_FULFILMENT_TOPICS,
    ShopifyWorld,
)
from tests.simulator.stripe_oracle import _json_type  # one JSON-type naming for every oracle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shopify"

#: topic -> the resource its body is (the fixture's name).
RESOURCE = {"orders/create": "order", "orders/paid": "order", "orders/updated": "order",
            "orders/cancelled": "order", "orders/fulfilled": "order", "orders/partially_fulfilled": "order",
            "refunds/create": "refund", "customers/create": "customer",
            "customers/update": "customer", "app/uninstalled": "shop",
            "customers/data_request": "customers_data_request", "customers/redact": "customers_redact",
            "shop/redact": "shop_redact"}

#: Where Shopify's example has a value and ours is null, with the reason (the only
#: differences the comparison accepts). Shopify documents each as nullable (shopify.dev,
#: Admin REST 2024-10, "Order" and "Customer" properties).
NULLABLE: Mapping[str, str] = {
    "last_order_id": "a customer who has not ordered yet (``customers/create``) has no last order",
    "last_order_name": "likewise, no last order's name before the first order",
    "landing_site_ref": "the buyer came with no ``ref`` parameter on the landing URL",
    "po_number": "online store checkouts carry no purchase order number",
    "reference": "set only for orders an app or the POS creates with a reference",
    "source_identifier": "likewise, only for orders with a source reference",
}

#: Lists that stay empty in every story, so nothing in them is compared: (resource, path). An order's
#: ``fulfillments`` stay empty unless the endpoint is sent a fulfilment topic (compared below).
UNEXERCISED: tuple[tuple[str, str], ...] = (
    ("order", "fulfillments"), ("order", "discount_codes"), ("order", "discount_applications"),
    ("order", "note_attributes"),
)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))[name]


def compare(ours: Any, ref: Any, where: str) -> list[str]:
    """Every difference between `ours` and Shopify's example `ref` (empty: the same shape).

    Where the example is null it carries no type, and nothing is asserted there; where ours
    is null and the example's is not, the field must be in `NULLABLE`. A list is compared
    item by item with the example's first item.
    """
    out: list[str] = []
    if ref is None:
        return out
    if ours is None:
        key = where.rsplit(".", 1)[-1]
        return [] if key in NULLABLE else [f"{where}: null where Shopify sends {_json_type(ref)}"]
    if _json_type(ours) != _json_type(ref):
        return [f"{where}: {_json_type(ours)} where Shopify sends {_json_type(ref)} ({json.dumps(ref)[:60]})"]
    if isinstance(ours, dict):
        out += [f"{where}.{k}: missing (Shopify sends it)" for k in sorted(set(ref) - set(ours))]
        out += [f"{where}.{k}: not in Shopify's resource" for k in sorted(set(ours) - set(ref))]
        for key in sorted(set(ours) & set(ref)):
            out += compare(ours[key], ref[key], f"{where}.{key}")
    elif isinstance(ours, list):
        for item in ours if ref else ():  # an empty example list has no item to compare with
            out += compare(item, ref[0], f"{where}[]")
    return out


def lifecycle(seed: int = 7) -> tuple[ShopifyWorld, list[tuple[str, dict[str, Any], Mapping[str, str]]]]:
    world = ShopifyWorld(seed)
    profile = get_profile("shopify")
    rendered = []
    for event in world.lifecycle():
        envelope = profile.envelope(event)
        rendered.append((envelope.type, json.loads(envelope.body), envelope.headers))
    return world, rendered


def test_every_topic_over_a_lifecycle_has_shopifys_shape() -> None:
    _, rendered = lifecycle()
    assert {topic for topic, _, _ in rendered} == set(SHOPIFY_EVENT_TYPES)
    problems = []
    for topic, body, _ in rendered:
        problems += [f"{topic}: {p}" for p in compare(body, fixture(RESOURCE[topic]), RESOURCE[topic])]
    assert problems == []


def test_the_unexercised_lists_are_empty_in_every_order() -> None:
    _, rendered = lifecycle()
    for topic, body, _ in rendered:
        for resource, key in UNEXERCISED:
            if RESOURCE[topic] == resource:
                assert body[key] == [], (topic, key)


def test_an_order_with_refunds_has_shopifys_shape_in_its_refunds_list() -> None:
    world = ShopifyWorld(5)
    order = world.place_order()
    world.refund(order, [0])
    world.refund(order, [1])
    body = world.get(order)
    assert [len(r["refund_line_items"]) for r in body["refunds"]] == [1, 1]
    assert compare(body, fixture("order"), "order") == []


def test_the_comparison_sees_a_wrong_type_a_missing_key_and_an_extra_one() -> None:
    body = fixture("order")
    broken = {**{k: v for k, v in body.items() if k != "token"}, "total_price": 598.94, "hookproof": True}
    assert compare(broken, body, "order") == ["order.token: missing (Shopify sends it)",
                                              "order.hookproof: not in Shopify's resource",
                                              "order.total_price: number where Shopify sends string (\"598.94\")"]


def test_ids_money_and_times_have_shopifys_form() -> None:
    _, rendered = lifecycle()
    kinds = {"order": "Order", "refund": "Refund", "customer": "Customer"}
    for topic, body, headers in rendered:
        resource = RESOURCE[topic]
        assert isinstance(body["id"], int) and body["id"] < 2**53, topic
        if resource in kinds:
            assert body["admin_graphql_api_id"] == f"gid://shopify/{kinds[resource]}/{body['id']}"
        for key in ("created_at", "updated_at", "processed_at"):
            if key in body:
                assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-05:00", body[key]), (topic, key, body[key])
        if resource == "order":
            assert re.fullmatch(r"\d+\.\d\d", body["total_price"])
            assert body["total_price_set"]["shop_money"] == {"amount": body["total_price"], "currency_code": "USD"}
            assert all(isinstance(li["id"], int) and li["admin_graphql_api_id"].endswith(f"/LineItem/{li['id']}")
                       for li in body["line_items"])
        assert headers["X-Shopify-Topic"] == topic
        assert headers["User-Agent"] == "Shopify-Captain-Hook"
        assert headers["X-Shopify-API-Version"] == "2024-10"
        assert re.fullmatch(r"hookproof-[0-9a-f]{8}\.myshopify\.com", headers["X-Shopify-Shop-Domain"])
        assert re.fullmatch(r"[0-9a-f-]{36}", headers["X-Shopify-Event-Id"])
        assert re.fullmatch(r"[0-9a-f-]{36}", headers["X-Shopify-Webhook-Id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", headers["X-Shopify-Triggered-At"])


def test_an_orders_status_follows_the_story_and_only_moves_forward() -> None:
    _, rendered = lifecycle()
    orders = [(topic, body["financial_status"], body["cancelled_at"] is not None) for topic, body, _ in rendered
              if topic.startswith("orders/")]
    assert orders == [("orders/create", "pending", False), ("orders/paid", "paid", False),
                      ("orders/updated", "paid", False), ("orders/updated", "partially_refunded", False),
                      ("orders/updated", "refunded", False), ("orders/cancelled", "refunded", True)]
    stamps = [body["updated_at"] for topic, body, _ in rendered if topic.startswith("orders/")]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    for (_, old, _), (_, new, _) in zip(orders, orders[1:]):
        assert new in ORDER_TRANSITIONS[old]


def test_refund_amounts_are_what_the_transactions_move() -> None:
    world = ShopifyWorld(9)
    order = world.place_order()
    world.refund(order, [0])
    world.cancel(order)
    refunds = [e for e in world.events if e.type == "refunds/create"]
    total = int(round(float(world.get(order)["total_price"]) * 100))
    assert sum(e.amount or 0 for e in refunds) == total
    for e in refunds:
        assert e.amount == sum(int(round(float(t["amount"]) * 100)) for t in e.object["transactions"])
        assert e.business_key == f"refund:{e.object_id}"
    assert world.get(order)["current_total_price"] == "0.00"


def test_business_keys_of_the_effect_story() -> None:
    world = ShopifyWorld(3)
    story = world.effect_story()  # every event of the story; the catalog sends the effectful ones
    events = [e for e in story if e.business_key]
    assert {e.type for e in story if not e.business_key} == {"orders/create", "orders/updated"}
    prefixes = [str(e.business_key).split(":")[0] for e in events]
    assert prefixes == ["welcome", "fulfil", "refund", "refund", "restock", "purge"]
    assert len({e.business_key for e in events}) == len(events)


def test_the_same_seed_makes_the_same_world() -> None:
    start = 1_796_000_000_000_000  # one clock start: a world's clock starts now, and its objects carry its times
    first = [(e.id, e.type, e.object) for e in ShopifyWorld(12, start_us=start).lifecycle()]
    again = [(e.id, e.type, e.object) for e in ShopifyWorld(12, start_us=start).lifecycle()]
    assert first == again
    assert first != [(e.id, e.type, e.object) for e in ShopifyWorld(13, start_us=start).lifecycle()]


def test_every_signature_is_the_documented_base64_hmac() -> None:
    world = ShopifyWorld(3)
    profile = get_profile("shopify")
    secret = profile.generate_secret(3)
    for event in world.lifecycle():
        request = profile.request(profile.envelope(event), [secret], 0)
        digest = base64.b64encode(hmac.new(secret.encode(), request.body, hashlib.sha256).digest()).decode()
        assert hmac.compare_digest(digest, request.headers["X-Shopify-Hmac-Sha256"])


def test_a_redelivery_keeps_the_event_and_webhook_ids_and_the_body() -> None:
    profile = get_profile("shopify")
    event = emit_events(new_world("shopify", 4), "orders/paid")[0]
    first, again = profile.envelope(event), profile.envelope(event)
    assert first == again
    assert first.event_id == f"orders/paid:{first.headers['X-Shopify-Event-Id']}"
    assert first.headers["X-Shopify-Webhook-Id"] != event.id


def _headers(events: list[Any]) -> list[tuple[str, str, str]]:
    """(topic, X-Shopify-Event-Id, X-Shopify-Webhook-Id) of each event's first delivery."""
    profile = get_profile("shopify")
    return [(h["X-Shopify-Topic"], h["X-Shopify-Event-Id"], h["X-Shopify-Webhook-Id"])
            for h in (profile.envelope(e).headers for e in events)]


def test_one_merchant_actions_topics_share_the_event_id() -> None:
    """shopify.dev/docs/apps/build/webhooks/delivery-structure: ``X-Shopify-Event-Id`` is "a unique
    ID shared across all deliveries produced by the same merchant action", ``X-Shopify-Webhook-Id``
    "a unique composite key per delivery". A checkout (its new customer, the order, its payment), a
    refund (the refund, the order's update) and a cancellation of a paid order (its refund, the
    order's update, the cancellation) are one action each: one Event-Id per action, each distinct,
    and one Webhook-Id per topic's delivery."""
    world = ShopifyWorld(7)
    order = world.place_order()
    checkout = list(world.events)
    world.refund(order)
    refund = world.events[len(checkout):]
    world.cancel(order)
    cancel = world.events[len(checkout) + len(refund):]
    actions = [_headers(checkout), _headers(refund), _headers(cancel)]
    assert [[t for t, _, _ in a] for a in actions] == [
        ["customers/create", "orders/create", "orders/paid"], ["refunds/create", "orders/updated"],
        ["refunds/create", "orders/updated", "orders/cancelled"]]
    assert [len({e for _, e, _ in a}) for a in actions] == [1, 1, 1]
    assert len({a[0][1] for a in actions}) == 3
    webhook_ids = [w for a in actions for _, _, w in a]
    assert len(set(webhook_ids)) == len(webhook_ids) == 8
    # the action's Event-Id is its first event's world id; each topic's identity is its own
    assert [a[0][1] for a in actions] == [checkout[0].id, refund[0].id, cancel[0].id]
    identities = [get_profile("shopify").envelope(e).event_id for e in world.events]
    assert len(set(identities)) == 8


def test_operations_of_one_topic_are_actions_of_their_own() -> None:
    """Marking an order paid, editing its note, tagging a customer, the uninstall: one topic each,
    each its own merchant action and Event-Id; a story's Event-Ids are drawn from the seed."""
    world = ShopifyWorld(3)
    order = world.place_order(paid=False)
    start = len(world.events)
    world.mark_paid(order)
    world.add_note(order)
    world.tag_customer(str(world.get(order)["customer"]["id"]))
    world.uninstall()
    singles = _headers(world.events[start:])
    assert [t for t, _, _ in singles] == ["orders/paid", "orders/updated", "customers/update", "app/uninstalled"]
    assert len({e for _, e, _ in singles}) == 4
    assert {e for _, e, _ in singles}.isdisjoint({e for _, e, _ in _headers(world.events[:start])})
    again = ShopifyWorld(3)
    again.place_order(paid=False)
    again.mark_paid(order)
    again.add_note(order)
    again.tag_customer(str(again.get(order)["customer"]["id"]))
    again.uninstall()
    assert _headers(again.events) == _headers(world.events)


def test_one_action_never_emits_a_topic_twice() -> None:
    """(topic, X-Shopify-Event-Id) names one event: an action that would emit one topic twice is refused."""
    world = ShopifyWorld(5)
    order = world.place_order()
    with pytest.raises(WorldError, match="emits refunds/create twice"):
        with world.merchant_action():
            world.refund(order, [0])
            world.refund(order, [1])


def test_a_retry_and_a_second_subscription_keep_the_event_id() -> None:
    """A retry is the same delivery (the same Webhook-Id); a second subscription's delivery of one
    event a new Webhook-Id with the same Event-Id (shopify.dev, "Ignore duplicate webhooks"), and
    both the same event identity."""
    profile = get_profile("shopify")
    world = ShopifyWorld(9)
    world.place_order()
    paid = world.events[-1]
    first, retry, second = profile.envelope(paid), profile.envelope(paid), profile.envelope(profile.replayed(paid, 1))
    assert retry.headers == first.headers
    assert second.headers["X-Shopify-Event-Id"] == first.headers["X-Shopify-Event-Id"] == world.events[0].id
    assert second.headers["X-Shopify-Webhook-Id"] != first.headers["X-Shopify-Webhook-Id"]
    assert second.event_id == first.event_id == f"orders/paid:{world.events[0].id}"


def test_every_topic_can_be_emitted_alone() -> None:
    for topic in SHOPIFY_EVENT_TYPES:
        events = emit_events(new_world("shopify", 11), topic)
        assert [e.type for e in events] == [topic]


def test_a_billing_world_event_is_refused() -> None:
    event = World(1).lifecycle()[0]
    with pytest.raises(ProfileError) as info:
        get_profile("shopify").envelope(event)
    assert "orders/paid" in str(info.value)


def test_the_profile_lists_shopifys_topics() -> None:
    assert dict(get_profile("shopify").event_types()) == {t: t for t in SHOPIFY_EVENT_TYPES}
    assert get_profile("shopify").default_event == "orders/paid"


# ---- the Admin REST API -----------------------------------------------------------------

@pytest.fixture
def served() -> Iterator[tuple[ShopifyWorld, ServerState, str]]:
    world = ShopifyWorld(21)
    world.lifecycle()
    state = ServerState([World(3), world])
    with run_server(state) as handle:
        yield world, state, handle.url


def get(base: str, path: str, token: str | None = DEFAULT_API_KEY) -> httpx.Response:
    headers = {"X-Shopify-Access-Token": token} if token else {}
    return httpx.get(base + path, headers=headers, timeout=5.0)


def test_api_serves_orders_and_customers_in_shopifys_shape(served: tuple[ShopifyWorld, ServerState, str]) -> None:
    world, _, base = served
    for object_type in ("order", "customer"):
        for object_id in world.objects(object_type):
            answer = get(base, f"/admin/api/2024-10/{object_type}s/{object_id}.json")
            assert answer.status_code == 200
            assert answer.headers["X-Shopify-API-Version"] == "2024-10"
            assert answer.json() == {object_type: world.get(object_id)}
            assert compare(answer.json()[object_type], fixture(object_type), object_type) == []


def test_api_serves_the_truth_as_of_the_deliveries(served: tuple[ShopifyWorld, ServerState, str]) -> None:
    world, _, base = served
    order = world.objects("order")[0]
    for event in [e for e in world.events if e.object_id == order]:
        clock.advance(world, [event])
        assert get(base, f"/admin/api/2024-10/orders/{order}.json").json()["order"]["financial_status"] == event.status


def test_api_errors_and_switches_in_shopifys_shape(served: tuple[ShopifyWorld, ServerState, str]) -> None:
    world, state, base = served
    order = world.objects("order")[0]
    path = f"/admin/api/2024-10/orders/{order}.json"
    assert (get(base, "/admin/api/2024-10/orders/1.json").status_code,
            get(base, "/admin/api/2024-10/orders/1.json").json()) == (404, {"errors": "Not Found"})
    assert get(base, f"/admin/api/2024-10/customers/{order}.json").status_code == 404  # an order is no customer
    assert get(base, f"/admin/api/latest/orders/{order}.json").status_code == 404
    for unserved in (f"/admin/api/2024-10/orders/{order}/refunds/1.json", "/admin/api/2024-10/shop.json"):
        # paths it does not serve: Shopify's shape too, not another provider's
        assert (get(base, unserved).status_code, get(base, unserved).json()) == (404, {"errors": "Not Found"})
        assert get(base, unserved, token=None).status_code == 401
    unauthorized = get(base, path, token=None)
    assert unauthorized.status_code == 401 and "Invalid API key or access token" in unauthorized.json()["errors"]
    assert get(base, path, token="shpat_wrong").status_code == 401
    state.switches.set(order, Switch(not_found=True, times=1))
    assert get(base, path).status_code == 404
    assert get(base, path).status_code == 200
    state.switches.set(order, Switch(status=503, times=1))
    assert get(base, path).status_code == 503
    state.switches.set(order, Switch(rate_limit_per_s=0, times=1))
    throttled = get(base, path)
    assert throttled.status_code == 429 and int(throttled.headers["Retry-After"]) >= 1
    assert "Exceeded 2 calls per second" in throttled.json()["errors"]


def test_the_stories_the_catalog_tells_over_a_shop() -> None:
    world = ShopifyWorld(6)
    groups = world.related_groups()
    assert [[e.type for e in g] for g in groups] == [["customers/create", "orders/create", "orders/paid"]] * 2
    r1, r2 = world.refund_pair()
    assert (r1.type, r2.type) == ("refunds/create", "refunds/create")
    assert r1.object["order_id"] == r2.object["order_id"] and r1.object_id != r2.object_id
    state = world.state_story()
    assert [e.status for e in state] == ["pending", "paid", "paid", "partially_refunded", "refunded", "refunded"]
    assert {e.object_id for e in state} == {state[0].object_id}
    with pytest.raises(WorldError):
        world.mark_paid(state[0].object_id)  # a refunded order is never paid again
    world.uninstall()
    assert not world.installed and [e.type for e in world.effect_story()][-1] == "orders/cancelled"


# ---- the mandatory compliance topics ------------------------------------------------------

def compliance_lifecycle(seed: int = 7) -> tuple[ShopifyWorld, list[tuple[str, dict[str, Any], Mapping[str, str]]]]:
    """A lifecycle told to an endpoint subscribed to every compliance topic, rendered."""
    world = ShopifyWorld(seed)
    world.sent_only(lambda topic: topic in SHOPIFY_COMPLIANCE_TOPICS)
    profile = get_profile("shopify", subscribed=SHOPIFY_COMPLIANCE_TOPICS)
    rendered = []
    for event in world.lifecycle():
        envelope = profile.envelope(event)
        rendered.append((envelope.type, json.loads(envelope.body), envelope.headers))
    return world, rendered


def test_the_compliance_topics_have_shopifys_shape() -> None:
    world, rendered = compliance_lifecycle()
    topics = [topic for topic, _, _ in rendered]
    assert set(topics) == set(SHOPIFY_EVENT_TYPES) | set(SHOPIFY_COMPLIANCE_TOPICS)
    assert topics[-4:] == ["customers/data_request", "customers/redact", "app/uninstalled", "shop/redact"]
    problems = []
    for topic, body, _ in rendered:
        problems += [f"{topic}: {p}" for p in compare(body, fixture(RESOURCE[topic]), RESOURCE[topic])]
    assert problems == []
    # the shape alone would pass an empty list: compare the compliance lists' items too
    request, redact, shop = (body for topic, body, _ in rendered if topic in SHOPIFY_COMPLIANCE_TOPICS)
    assert request["orders_requested"] and redact["orders_to_redact"]


def test_the_compliance_payloads_name_the_shop_the_customer_and_their_orders() -> None:
    world, rendered = compliance_lifecycle()
    customer = world.get(world.objects("customer")[0])
    orders = [int(o) for o in world.objects("order")]
    bodies = {topic: (body, headers) for topic, body, headers in rendered if topic in SHOPIFY_COMPLIANCE_TOPICS}
    for topic, (body, headers) in bodies.items():
        assert body["shop_id"] == world.shop_id and isinstance(body["shop_id"], int)
        assert body["shop_domain"] == headers["X-Shopify-Shop-Domain"] == world.domain
        assert headers["X-Shopify-Topic"] == topic
        assert re.fullmatch(r"[0-9a-f-]{36}", headers["X-Shopify-Event-Id"])
    who = {"id": customer["id"], "email": customer["email"], "phone": customer["phone"]}
    request, redact = bodies["customers/data_request"][0], bodies["customers/redact"][0]
    assert request["customer"] == redact["customer"] == who
    assert request["orders_requested"] == redact["orders_to_redact"] == orders
    assert isinstance(request["data_request"]["id"], int) and request["data_request"]["id"] < 2**53


def test_shop_redact_comes_48_hours_after_the_uninstall_and_once() -> None:
    world = ShopifyWorld(4)
    with pytest.raises(WorldError, match="still installed"):
        world.redact_shop()
    world.uninstall()
    world.redact_shop()
    uninstalled, redacted = world.events[-2:]
    assert (uninstalled.type, redacted.type) == ("app/uninstalled", "shop/redact")
    assert SHOP_REDACT_DELAY_S <= (redacted.created_us - uninstalled.created_us) / 1e6 < SHOP_REDACT_DELAY_S + 3
    with pytest.raises(WorldError, match="erased already"):
        world.redact_shop()


def test_compliance_business_keys_one_report_per_request_one_erasure_per_customer_and_shop() -> None:
    world = ShopifyWorld(8)
    customer = world.create_customer()
    first, second = world.request_customer_data(customer), world.request_customer_data(customer)
    world.redact_customer(customer)
    with pytest.raises(WorldError, match="erased already"):
        world.redact_customer(customer)
    world.uninstall()
    world.redact_shop()
    keys = [(e.type, e.business_key) for e in world.events if e.type in SHOPIFY_COMPLIANCE_TOPICS]
    assert keys == [("customers/data_request", f"report:{first}"), ("customers/data_request", f"report:{second}"),
                    ("customers/redact", f"redact:{customer}"), ("shop/redact", f"erase:{world.shop_id}")]
    assert first != second


def test_an_endpoint_not_subscribed_is_told_the_stories_it_always_was() -> None:
    """The compliance topics are told only to an endpoint subscribed to them: every story of a
    world not sent them is event for event the story of a world never told what it is sent."""
    for story in ("effect_story", "lifecycle", "state_story"):
        plain, told = ShopifyWorld(5), ShopifyWorld(5)
        told.sent_only(lambda topic: topic in SHOPIFY_EVENT_TYPES)
        ours = [(e.id, e.type, e.object, e.created_us) for e in getattr(told, story)()]
        assert ours == [(e.id, e.type, e.object, e.created_us) for e in getattr(plain, story)()]
        assert not {t for _, t, _, _ in ours} & set(SHOPIFY_COMPLIANCE_TOPICS)


def test_the_effect_story_tells_only_the_compliance_topics_the_endpoint_is_sent() -> None:
    world = ShopifyWorld(5)
    world.sent_only(lambda topic: topic != "customers/data_request")
    told = [e.type for e in world.effect_story()]
    assert told[-3:] == ["customers/redact", "app/uninstalled", "shop/redact"]
    assert "customers/data_request" not in told
    assert [e.type for e in world.effect_story()][-1] == "customers/redact"  # uninstalled once: no shop/redact again


def test_the_profile_sends_the_compliance_topics_only_to_a_subscribed_endpoint() -> None:
    assert not set(get_profile("shopify").event_types()) & set(SHOPIFY_COMPLIANCE_TOPICS)
    assert get_profile("shopify").optional_types == SHOPIFY_COMPLIANCE_TOPICS + SHOPIFY_FULFILMENT_TOPICS
    subscribed = get_profile("shopify", subscribed=["shop/redact", "customers/redact"])
    assert list(subscribed.event_types())[-2:] == ["customers/redact", "shop/redact"]
    with pytest.raises(ProfileError, match="no optional type 'orders/paid'"):
        get_profile("shopify", subscribed=["orders/paid"])
    with pytest.raises(ProfileError, match="no optional type"):
        get_profile("paddle", subscribed=["shop/redact"])


def test_every_compliance_topic_can_be_emitted_alone() -> None:
    for topic in SHOPIFY_COMPLIANCE_TOPICS:
        events = emit_events(new_world("shopify", 11), topic)
        assert [e.type for e in events] == [topic]


#: The ``products/update`` example of shopify.dev's "Webhooks delivery structure" page: a product
#: has at least one variant, its keys (with those of the variant) a subset of a delivery's.
DELIVERY_STRUCTURE_PRODUCT: Mapping[str, Any] = {
    "id": 9554194432293, "title": "T-Shirt", "status": "active", "vendor": "My Store", "product_type": "Shirts",
    "updated_at": "2025-04-22T14:30:00-05:00",
    "variants": [{"id": 123456789, "title": "Default Title", "price": "29.99", "sku": "TSHIRT-001", "taxable": True,
                  "updated_at": "2025-04-22T14:30:00-05:00"}],
    "tags": "cotton, comfortable"}


def test_the_unknown_topics_product_has_its_variant_as_shopifys_example_does() -> None:
    world = ShopifyWorld(3)
    order = world.get(world.place_order(lines=len(world.products)))  # a line of each product
    body = json.loads(get_profile("shopify").envelope(world.unknown_event()).body)
    example = DELIVERY_STRUCTURE_PRODUCT
    assert {k: _json_type(body[k]) for k in example} == {k: _json_type(v) for k, v in example.items()}
    (variant,) = body["variants"]
    assert {k: _json_type(variant[k]) for k in example["variants"][0]} == {
        k: _json_type(v) for k, v in example["variants"][0].items()}
    (line,) = [li for li in order["line_items"] if li["product_id"] == body["id"]]  # the variant orders name
    assert (variant["id"], variant["title"], variant["product_id"]) == (line["variant_id"], line["variant_title"],
                                                                        line["product_id"]) == (
        variant["id"], body["options"][0]["values"][0], body["id"])
    assert variant["admin_graphql_api_id"] == f"gid://shopify/ProductVariant/{variant['id']}"
    assert body["variant_gids"] == [{"admin_graphql_api_id": variant["admin_graphql_api_id"],
                                     "updated_at": body["variant_gids"][0]["updated_at"]}]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", body["variant_gids"][0]["updated_at"])


def test_the_unknown_topic_draws_nothing_from_the_worlds_random_state() -> None:
    """`unknown-event-type` tells the effect story after it: the product's variant and option take
    no draw, so what follows is what followed a product without them (one clock step, one id)."""
    told, plain = ShopifyWorld(6), ShopifyWorld(6)
    told.unknown_event()
    plain._tick()  # the unknown event's clock step and X-Shopify-Event-Id, nothing more
    plain._uuid()
    assert [(e.id, e.object) for e in told.effect_story()] == [(e.id, e.object) for e in plain.effect_story()]


# ---- fulfilment: orders/partially_fulfilled, orders/fulfilled ----------------------------------

def fulfilment_lifecycle(seed: int = 7) -> tuple[ShopifyWorld, list[tuple[str, dict[str, Any], Mapping[str, str]]]]:
    """A lifecycle told to an endpoint subscribed to both fulfilment topics, rendered."""
    world = ShopifyWorld(seed)
    world.sent_only(lambda topic: topic in SHOPIFY_FULFILMENT_TOPICS)
    profile = get_profile("shopify", subscribed=SHOPIFY_FULFILMENT_TOPICS)
    rendered = []
    for event in world.lifecycle():
        envelope = profile.envelope(event)
        rendered.append((envelope.type, json.loads(envelope.body), envelope.headers))
    return world, rendered


def shipped_order_example() -> dict[str, Any]:
    """Shopify's example order, its fulfilment's ``receipt`` that of a manual shipment: the
    example order lists a failed fulfilment whose receipt is a payment gateway's
    (``{"testcase": true, "authorization": "123456"}``); a successful manual one's is ``{}``
    (``fulfillment.test.ts`` test_2, test_6, test_7)."""
    order = fixture("order")
    assert fixture("fulfillment")["receipt"] == {}
    return {**order, "fulfillments": [{**f, "receipt": {}} for f in order["fulfillments"]]}


def test_the_fulfilment_topics_carry_the_order_with_its_fulfilments_in_shopifys_shape() -> None:
    world, rendered = fulfilment_lifecycle()
    topics = [topic for topic, _, _ in rendered]
    assert set(topics) == set(SHOPIFY_EVENT_TYPES) | set(SHOPIFY_FULFILMENT_TOPICS)
    assert topics[-7:] == ["orders/create", "orders/paid", "orders/updated", "orders/partially_fulfilled",
                           "orders/updated", "orders/fulfilled", "app/uninstalled"]
    problems = []
    for topic, body, _ in rendered:
        example = shipped_order_example() if RESOURCE[topic] == "order" else fixture(RESOURCE[topic])
        problems += [f"{topic}: {p}" for p in compare(body, example, RESOURCE[topic])]
    assert problems == []
    shipped = [body for topic, body, _ in rendered if topic in SHOPIFY_FULFILMENT_TOPICS]
    assert [len(b["fulfillments"]) for b in shipped] == [1, 2]  # compared item by item above, not only the shape
    for fulfillment in world.objects("fulfillment"):  # the Fulfillment resource itself
        assert compare(world.get(fulfillment), fixture("fulfillment"), "fulfillment") == []


def test_a_shipment_moves_the_orders_and_its_lines_fulfilment_state_and_its_updated_at() -> None:
    world, rendered = fulfilment_lifecycle()
    order = [(topic, body) for topic, body, _ in rendered if topic.startswith("orders/")][-5:]
    assert [(t, b["financial_status"], b["fulfillment_status"]) for t, b in order] == [
        ("orders/paid", "paid", None), ("orders/updated", "paid", "partial"),
        ("orders/partially_fulfilled", "paid", "partial"), ("orders/updated", "paid", "fulfilled"),
        ("orders/fulfilled", "paid", "fulfilled")]
    assert [[(li["fulfillment_status"], li["fulfillable_quantity"]) for li in b["line_items"]] for _, b in order] == [
        [(None, 1), (None, 1)], [("fulfilled", 0), (None, 1)], [("fulfilled", 0), (None, 1)],
        [("fulfilled", 0), ("fulfilled", 0)], [("fulfilled", 0), ("fulfilled", 0)]]
    paid, partial_update, partial, full_update, full = (b for _, b in order)
    assert partial == partial_update and full == full_update  # one change: the update and its topic
    assert paid["updated_at"] < partial["updated_at"] < full["updated_at"]
    first, second = full["fulfillments"]
    assert (first["name"], second["name"]) == (f"{paid['name']}.1", f"{paid['name']}.2")
    assert [li["id"] for li in first["line_items"]] == [paid["line_items"][0]["id"]]
    assert [li["id"] for li in second["line_items"]] == [paid["line_items"][1]["id"]]
    for shipment in (first, second):
        assert (shipment["status"], shipment["service"], shipment["order_id"]) == ("success", "manual", paid["id"])
        assert shipment["updated_at"] == shipment["created_at"]
        assert shipment["admin_graphql_api_id"] == f"gid://shopify/Fulfillment/{shipment['id']}"
        assert shipment["location_id"] == world.location_id
        assert re.fullmatch(r"1Z[0-9A-Z]{16}", shipment["tracking_number"])
        assert shipment["tracking_numbers"] == [shipment["tracking_number"]]
        assert shipment["tracking_urls"] == [shipment["tracking_url"]] and shipment["tracking_url"].endswith(
            shipment["tracking_number"])
        full_resource = world.get(str(shipment["id"]))
        assert [li["fulfillment_line_item_id"] for li in full_resource["line_items"]] != []
        assert {k: v for k, v in full_resource.items() if k != "line_items"} == {
            k: v for k, v in shipment.items() if k != "line_items"}


def test_a_shipment_is_one_merchant_action_and_owes_no_key() -> None:
    world = ShopifyWorld(7)
    order = world.place_order()
    start = len(world.events)
    world.fulfil(order)
    shipped = world.events[start:]
    assert [(e.type, e.status, e.business_key) for e in shipped] == [
        ("orders/updated", "paid", None), ("orders/fulfilled", "paid", None)]
    assert len({h[1] for h in _headers(shipped)}) == 1


def test_what_shopify_does_not_do_with_a_fulfilment_is_refused() -> None:
    world = ShopifyWorld(7)
    pending = world.place_order(paid=False)
    with pytest.raises(WorldError, match=f"order {pending} is pending: nothing to fulfil"):
        world.fulfil(pending)
    order = world.place_order()
    world.fulfil(order, [1])
    with pytest.raises(WorldError, match=r"lines \[1\] are not left to ship \(left: \[0\]\)"):
        world.fulfil(order, [1])
    with pytest.raises(WorldError, match="is partial: Shopify cancels no order with fulfilments"):
        world.cancel(order)
    with pytest.raises(WorldError):
        world.quick_cancel(order)
    cancelled = world.place_order()
    world.cancel(cancelled)
    with pytest.raises(WorldError, match="is cancelled: nothing to fulfil"):
        world.fulfil(cancelled)


def test_the_state_story_of_an_endpoint_sent_a_fulfilment_topic_ships_its_order() -> None:
    world = ShopifyWorld(5)
    world.sent_only(lambda topic: topic == "orders/fulfilled")
    story = world.state_story()
    assert [(e.type, e.status, e.object["fulfillment_status"]) for e in story] == [
        ("orders/create", "pending", None), ("orders/paid", "paid", None), ("orders/updated", "paid", None),
        ("orders/updated", "paid", "partial"), ("orders/partially_fulfilled", "paid", "partial"),
        ("orders/updated", "paid", "fulfilled"), ("orders/fulfilled", "paid", "fulfilled"),
        ("orders/updated", "partially_refunded", "fulfilled")]
    stamps = [e.object["updated_at"] for e in story]
    assert stamps == sorted(stamps)


def test_every_fulfilment_topic_can_be_emitted_alone() -> None:
    for topic in SHOPIFY_FULFILMENT_TOPICS:
        events = emit_events(new_world("shopify", 11), topic)
        assert [e.type for e in events] == [topic]


def test_api_serves_a_shipped_orders_fulfilment_state_as_of_the_deliveries() -> None:
    """``GET orders/{id}.json`` answers the order as the deliveries so far left it: null before its
    first shipment, ``partial`` with one fulfilment after ``orders/partially_fulfilled``,
    ``fulfilled`` with two after ``orders/fulfilled``, in Shopify's shape."""
    world = ShopifyWorld(21)
    world.sent_only(lambda topic: topic in SHOPIFY_FULFILMENT_TOPICS)
    world.lifecycle()
    order = world.objects("order")[-1]
    state = ServerState([world])
    seen = []
    with run_server(state) as handle:
        for event in [e for e in world.events if e.object_id == order]:
            clock.advance(world, [event])
            body = get(handle.url, f"/admin/api/2024-10/orders/{order}.json").json()["order"]
            assert body == event.object
            seen.append((event.type, body["fulfillment_status"], len(body["fulfillments"]),
                         [li["fulfillable_quantity"] for li in body["line_items"]]))
    assert seen == [("orders/create", None, 0, [1, 1]), ("orders/paid", None, 0, [1, 1]),
                    ("orders/updated", "partial", 1, [0, 1]), ("orders/partially_fulfilled", "partial", 1, [0, 1]),
                    ("orders/updated", "fulfilled", 2, [0, 0]), ("orders/fulfilled", "fulfilled", 2, [0, 0])]
    assert compare(body, shipped_order_example(), "order") == []
