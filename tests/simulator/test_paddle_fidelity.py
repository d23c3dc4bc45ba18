"""Paddle Billing fidelity: the Paddle world's notifications and API, checked with paddle-python-sdk.

The oracle is Paddle's official SDK (1.16.1): every notification parses with
``paddle_billing.Entities.Event.from_dict`` into its notification entity (never the SDK's
``UndefinedEntity`` fallback) and with the entity class itself, which raises on a missing
field; every signature verifies with ``paddle_billing.Notifications.Verifier``; the
provider API's ``GET /transactions/{id}`` and ``/subscriptions/{id}`` answer Paddle's
``{"data", "meta": {"request_id"}}`` with a ``data`` the SDK's API entities parse.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Mapping

import httpx
import pytest
from paddle_billing.Entities.Event import Event as PaddleEvent
from paddle_billing.Entities.Subscription import Subscription as ApiSubscription
from paddle_billing.Entities.Transaction import Transaction as ApiTransaction
from paddle_billing.Notifications import Secret, Verifier
from paddle_billing.Notifications.Entities.Adjustment import Adjustment
from paddle_billing.Notifications.Entities.Subscription import Subscription
from paddle_billing.Notifications.Entities.SubscriptionCreated import SubscriptionCreated
from paddle_billing.Notifications.Entities.Transaction import Transaction
from paddle_billing.Notifications.Entities.UndefinedEntity import UndefinedEntity

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, clock, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY, Switch
from hookproof.simulator.world import World, emit_events, new_world
from hookproof.simulator.world.paddle import PADDLE_EVENT_TYPES, PaddleWorld

ENTITIES = {"transaction": Transaction, "subscription": Subscription, "adjustment": Adjustment}
ID = r"{}_01[0-9a-hjkmnp-tv-z]{{24}}"


@pytest.fixture(autouse=True)
def _paddle_clock_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Paddle SDK skips its ±5 s check when TEST_MODE=1 is set: make sure it is not."""
    monkeypatch.delenv("TEST_MODE", raising=False)


@dataclass
class PaddleRequest:
    """What Paddle's Verifier reads from a framework request: `.headers.get()` and `.body`."""

    headers: Mapping[str, str]
    body: bytes


def lifecycle(seed: int = 7) -> tuple[PaddleWorld, list[dict[str, object]]]:
    world = PaddleWorld(seed)
    profile = get_profile("paddle")
    return world, [json.loads(profile.envelope(e).body) for e in world.lifecycle()]


def test_every_event_type_over_a_lifecycle_parses_with_the_sdk_entities() -> None:
    _, bodies = lifecycle()
    assert {b["event_type"] for b in bodies} == set(PADDLE_EVENT_TYPES)
    for body in bodies:
        event = PaddleEvent.from_dict(body)  # type: ignore[arg-type]
        assert not isinstance(event.data, UndefinedEntity), body["event_type"]
        kind = str(body["event_type"]).split(".")[0]
        entity = SubscriptionCreated if body["event_type"] == "subscription.created" else ENTITIES[kind]
        parsed = entity.from_dict(body["data"])  # raises on a missing field
        assert isinstance(event.data, entity)
        assert parsed.id == body["data"]["id"]  # type: ignore[index]
        assert event.event_id == body["event_id"]


def test_ids_have_paddles_form() -> None:
    _, bodies = lifecycle()
    for body in bodies:
        data = body["data"]
        assert isinstance(data, dict)
        assert re.fullmatch(ID.format("evt"), str(body["event_id"]))
        assert re.fullmatch(ID.format("ntf"), str(body["notification_id"]))
        prefix = {"transaction": "txn", "subscription": "sub", "adjustment": "adj"}[str(body["event_type"]).split(".")[0]]
        assert re.fullmatch(ID.format(prefix), data["id"])
        assert re.fullmatch(ID.format("ctm"), data["customer_id"])
        for item in data.get("items", []):
            if "price" in item:
                assert re.fullmatch(ID.format("pri"), item["price"]["id"])
                assert re.fullmatch(ID.format("pro"), item["price"]["product_id"])


#: Fields of paddle-python-sdk's subscription entities the world leaves out: optional there
#: (``consent_requirements: … | None = None``), and no Paddle page this world follows shows it.
UNSENT_SUBSCRIPTION_FIELDS = {"consent_requirements"}


def test_subscription_events_carry_their_sdk_entitys_fields() -> None:
    """Only ``subscription.created`` has ``transaction_id`` (developer.paddle.com/webhooks/subscriptions/
    subscription-created: "Other subscription events don't include this field"; paddle-python-sdk:
    ``SubscriptionCreated`` alone declares it), the other subscription events the Subscription entity's."""
    world, bodies = lifecycle()
    created = {f.name for f in dataclasses.fields(SubscriptionCreated)} - UNSENT_SUBSCRIPTION_FIELDS
    other = {f.name for f in dataclasses.fields(Subscription)} - UNSENT_SUBSCRIPTION_FIELDS
    assert created - other == {"transaction_id"}
    subs = [b for b in bodies if str(b["event_type"]).startswith("subscription.")]
    assert {str(b["event_type"]) for b in subs} == {t for t in PADDLE_EVENT_TYPES if t.startswith("subscription.")}
    for body in subs:
        data = body["data"]
        assert isinstance(data, dict)
        assert set(data) == (created if body["event_type"] == "subscription.created" else other), body["event_type"]
    first = next(b for b in subs if b["event_type"] == "subscription.created")["data"]
    checkout = next(b for b in bodies if b["event_type"] == "transaction.completed")["data"]
    assert first["transaction_id"] == checkout["id"]  # type: ignore[index]
    assert "transaction_id" not in world.get(first["id"])  # type: ignore[index]  # nor does the API's Subscription


def test_statuses_follow_the_story() -> None:
    _, bodies = lifecycle()
    subs = [(b["event_type"], b["data"]["status"]) for b in bodies  # type: ignore[index]
            if str(b["event_type"]).startswith("subscription.")]
    assert subs == [("subscription.created", "active"), ("subscription.updated", "active"),  # more seats
                    ("subscription.updated", "active"),  # a renewal's new period
                    ("subscription.updated", "active"),  # the next renewal's, then its payment declined:
                    ("subscription.updated", "past_due"), ("subscription.past_due", "past_due"),
                    ("subscription.updated", "active"),  # recovered
                    ("subscription.updated", "canceled"), ("subscription.canceled", "canceled")]
    txns = [b["data"]["status"] for b in bodies if str(b["event_type"]).startswith("transaction.")]  # type: ignore[index]
    assert txns == ["paid", "completed"] * 3
    adjustment = next(b["data"] for b in bodies if b["event_type"] == "adjustment.created")
    assert (adjustment["action"], adjustment["status"]) == ("refund", "approved")  # type: ignore[index]


def test_a_status_change_is_a_subscription_updated_then_its_own_event() -> None:
    """Paddle's webhook simulator scenarios (developer.paddle.com/webhooks/simulator/subscription-canceled):
    ``subscription.updated`` ("Its status changes to canceled") then ``subscription.canceled``
    ("Occurs because the subscription status changes to canceled"); the renewed scenario
    (…/subscription-renewed) puts the subscription's new period before the renewal's transaction.
    The pair is one version of the subscription, the same ``data``, ``occurred_at`` increasing."""
    world = PaddleWorld(7)
    profile = get_profile("paddle")
    sub = world.subscribe()
    start = len(world.events)
    world.renew(sub, pay=False)
    world.recover(sub)
    world.renew(sub)
    world.cancel(sub)
    events = world.events[start:]
    assert [(e.type, e.status) for e in events] == [
        ("subscription.updated", "active"), ("subscription.updated", "past_due"), ("subscription.past_due", "past_due"),
        ("transaction.paid", "paid"), ("transaction.completed", "completed"), ("subscription.updated", "active"),
        ("subscription.updated", "active"), ("transaction.paid", "paid"), ("transaction.completed", "completed"),
        ("subscription.updated", "canceled"), ("subscription.canceled", "canceled")]
    bodies = [json.loads(profile.envelope(e).body) for e in events]
    assert [b["occurred_at"] for b in bodies] == sorted(b["occurred_at"] for b in bodies)
    assert len({b["occurred_at"] for b in bodies}) == len(bodies)
    for i in (2, 10):  # subscription.past_due, subscription.canceled: the update before it, the same version
        assert events[i].version == events[i - 1].version
        assert bodies[i]["data"] == bodies[i - 1]["data"]
        assert events[i].business_key is not None and events[i - 1].business_key is None
    renewal = world.get(events[3].object_id)  # the declined renewal's transaction
    assert renewal["billing_period"] == bodies[0]["data"]["current_billing_period"]  # the period the update moved to


def test_every_signature_verifies_with_the_sdk_verifier() -> None:
    world = PaddleWorld(3)
    profile = get_profile("paddle")
    secret = profile.generate_secret(3)
    now = int(time.time())
    for event in world.lifecycle():
        request = profile.request(profile.envelope(event), [secret], now)
        assert Verifier().verify(PaddleRequest(request.headers, request.body), Secret(secret))
        assert not Verifier().verify(PaddleRequest(request.headers, request.body), Secret(secret + "x"))


def test_every_event_type_can_be_emitted_alone() -> None:
    for event_type in PADDLE_EVENT_TYPES:
        events = emit_events(new_world("paddle", 11), event_type)
        assert [e.type for e in events] == [event_type]


def test_a_billing_world_event_is_refused() -> None:
    event = World(1).lifecycle()[0]
    with pytest.raises(ProfileError) as info:
        get_profile("paddle").envelope(event)
    assert "transaction.completed" in str(info.value)


@pytest.fixture
def served() -> Iterator[tuple[PaddleWorld, ServerState, str]]:
    world = PaddleWorld(21)
    world.lifecycle()
    state = ServerState([World(3), world])
    with run_server(state) as handle:
        yield world, state, handle.url


def get(base: str, path: str, key: str | None = DEFAULT_API_KEY) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(base + path, headers=headers, timeout=5.0)


def test_api_serves_transactions_and_subscriptions_in_paddles_shape(
        served: tuple[PaddleWorld, ServerState, str]) -> None:
    world, _, base = served
    for object_type, parse in (("transaction", ApiTransaction), ("subscription", ApiSubscription)):
        for object_id in world.objects(object_type):
            answer = get(base, f"/{object_type}s/{object_id}")
            assert answer.status_code == 200
            body = answer.json()
            assert set(body) == {"data", "meta"} and re.fullmatch(r"[0-9a-f-]{36}", body["meta"]["request_id"])
            assert body["data"] == world.get(object_id)
            assert parse.from_dict(body["data"]).id == object_id


def test_api_serves_the_truth_as_of_the_deliveries(served: tuple[PaddleWorld, ServerState, str]) -> None:
    world, _, base = served
    sub = world.objects("subscription")[0]
    events = [e for e in world.events if e.object_id == sub]
    for event in events:
        clock.advance(world, [event])
        assert get(base, f"/subscriptions/{sub}").json()["data"]["status"] == event.status


def test_api_errors_and_switches_in_paddles_shape(served: tuple[PaddleWorld, ServerState, str]) -> None:
    world, state, base = served
    txn = world.objects("transaction")[0]
    missing = get(base, "/transactions/txn_01nothing")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "entity_not_found"
    assert get(base, f"/subscriptions/{txn}").status_code == 404  # a transaction is not a subscription
    assert (get(base, f"/transactions/{txn}", key=None).status_code,
            get(base, f"/transactions/{txn}", key=None).json()["error"]["code"]) == (401, "authentication_missing")
    assert get(base, f"/transactions/{txn}", key="pdl_wrong").status_code == 403
    state.switches.set(txn, Switch(not_found=True, times=1))
    assert get(base, f"/transactions/{txn}").status_code == 404
    assert get(base, f"/transactions/{txn}").status_code == 200
    state.switches.set(txn, Switch(status=503, times=1))
    failed = get(base, f"/transactions/{txn}")
    assert (failed.status_code, failed.json()["error"]["type"]) == (503, "api_error")
    state.switches.set(txn, Switch(rate_limit_per_s=0, times=1))
    throttled = get(base, f"/transactions/{txn}")
    assert (throttled.status_code, throttled.json()["error"]["code"]) == (429, "too_many_requests")
    assert int(throttled.headers["Retry-After"]) >= 1
    assert get(base, f"/transactions/{txn}").status_code == 200
