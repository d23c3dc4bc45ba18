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
from datetime import datetime
from typing import Any, Mapping

import httpx
import pytest
from paddle_billing.Entities.Address import Address as ApiAddress
from paddle_billing.Entities.Customer import Customer as ApiCustomer
from paddle_billing.Entities.Event import Event as PaddleEvent
from paddle_billing.Entities.Subscription import Subscription as ApiSubscription
from paddle_billing.Entities.Transaction import Transaction as ApiTransaction
from paddle_billing.Notifications import Secret, Verifier
from paddle_billing.Notifications.Entities.Address import Address
from paddle_billing.Notifications.Entities.Adjustment import Adjustment
from paddle_billing.Notifications.Entities.Customer import Customer
from paddle_billing.Notifications.Entities.Shared import AdjustmentActionType
from paddle_billing.Notifications.Entities.Subscription import Subscription
from paddle_billing.Notifications.Entities.SubscriptionCreated import SubscriptionCreated
from paddle_billing.Notifications.Entities.Transaction import Transaction
from paddle_billing.Notifications.Entities.UndefinedEntity import UndefinedEntity
from paddle_billing.PaddleStrEnum import PaddleStrEnum
from paddle_billing.Undefined import Undefined

from hookproof.simulator.errors import ProfileError, WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, clock, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY, Switch
from hookproof.simulator.world import World, emit_events, new_world
from hookproof.simulator.world.paddle import PADDLE_EVENT_TYPES, PaddleWorld

ENTITIES = {"transaction": Transaction, "subscription": Subscription, "adjustment": Adjustment,
            "customer": Customer, "address": Address}
#: The event types added with the subscription lifecycle (Paddle's webhook simulator scenarios:
#: developer.paddle.com/webhooks/simulator/subscription-created, -renewed, -paused, -resumed).
LIFECYCLE_TYPES = {"subscription.activated", "subscription.trialing", "subscription.paused", "subscription.resumed",
                   "transaction.created", "transaction.updated", "transaction.ready", "transaction.billed",
                   "transaction.payment_failed", "transaction.past_due"}
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


def agree(parsed: object, raw: object, path: str) -> None:
    """`parsed` (what the SDK made of `raw`) holds `raw` field for field: every field of every
    SDK dataclass present in `raw` (optional ones may be absent), every enum a member the SDK
    knows (not its ``Undefined``), every time the same instant, every other value equal."""
    if dataclasses.is_dataclass(parsed) and not isinstance(parsed, type):
        assert isinstance(raw, dict), path
        if set(raw) == {"data"} and not any(f.name != "data" for f in dataclasses.fields(parsed)):
            raw = raw["data"]  # CustomData
        for field in dataclasses.fields(parsed):
            value = getattr(parsed, field.name)
            name = re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), field.name)  # the SDK's ``lineItems``
            if name not in raw:  # type: ignore[operator]
                assert value in (None, []) or isinstance(value, Undefined), \
                    f"{path}.{field.name}: the SDK reads {value!r} for a field not sent"
                continue
            agree(value, raw[name], f"{path}.{name}")  # type: ignore[index]
    elif isinstance(parsed, PaddleStrEnum):
        assert (parsed.value, parsed.name) == (raw, parsed.name) and parsed.name != "Undefined", \
            f"{path}: {raw!r} is no {type(parsed).__name__} the SDK knows"
    elif isinstance(parsed, datetime):
        assert isinstance(raw, str) and parsed == datetime.fromisoformat(raw), path
    elif isinstance(parsed, list):
        assert isinstance(raw, list) and len(raw) == len(parsed), path
        for i, (one, other) in enumerate(zip(parsed, raw)):
            agree(one, other, f"{path}[{i}]")
    elif parsed is None:
        assert raw in (None, {}, []), f"{path}: {raw!r} sent, the SDK read nothing"
    else:
        assert parsed == raw, f"{path}: {parsed!r} != {raw!r}"


def test_every_type_agrees_field_for_field_with_its_sdk_entity() -> None:
    """Every type the profile lists, in every body a lifecycle sends: the notification entity
    paddle-python-sdk picks for the event type holds the body's ``data`` field for field, and
    the SDK's ``Event`` its envelope."""
    _, bodies = lifecycle()
    assert set(get_profile("paddle").event_types()) == set(PADDLE_EVENT_TYPES) >= LIFECYCLE_TYPES
    assert {str(b["event_type"]) for b in bodies} == set(PADDLE_EVENT_TYPES)
    for body in bodies:
        event = PaddleEvent.from_dict(body)  # type: ignore[arg-type]
        assert str(event.event_type) == body["event_type"] and event.event_type.name != "Undefined"
        assert event.occurred_at == datetime.fromisoformat(str(body["occurred_at"]))
        agree(event.data, body["data"], str(body["event_type"]))


def test_ids_have_paddles_form() -> None:
    _, bodies = lifecycle()
    for body in bodies:
        data = body["data"]
        assert isinstance(data, dict)
        assert re.fullmatch(ID.format("evt"), str(body["event_id"]))
        assert re.fullmatch(ID.format("ntf"), str(body["notification_id"]))
        kind = str(body["event_type"]).split(".")[0]
        prefix = {"transaction": "txn", "subscription": "sub", "adjustment": "adj", "customer": "ctm",
                  "address": "add"}[kind]
        assert re.fullmatch(ID.format(prefix), data["id"])
        if kind == "customer":  # the customer itself: no customer_id
            continue
        if data["status"] == "draft":  # a checkout's transaction before the customer's details
            assert (data["customer_id"], data["address_id"]) == (None, None)
            continue
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
    assert subs == [("subscription.created", "trialing"), ("subscription.trialing", "trialing"),
                    ("subscription.updated", "trialing"),  # more seats
                    # the trial's end: its payment, then the new period with the status (no period moved
                    # on a subscription still trialing):
                    ("subscription.updated", "active"), ("subscription.activated", "active"),
                    ("subscription.updated", "active"),  # the next renewal's period, then its payment declined:
                    ("subscription.updated", "past_due"), ("subscription.past_due", "past_due"),
                    ("subscription.updated", "active"),  # recovered
                    ("subscription.updated", "paused"), ("subscription.paused", "paused"),
                    ("subscription.updated", "active"), ("subscription.resumed", "active"),  # then its payment:
                    ("subscription.updated", "active"), ("subscription.activated", "active"),
                    ("subscription.updated", "active"),  # its cancellation scheduled, then at the period's end:
                    ("subscription.updated", "canceled"), ("subscription.canceled", "canceled")]
    txns = [(b["event_type"], b["data"]["status"]) for b in bodies  # type: ignore[index]
            if str(b["event_type"]).startswith("transaction.")]
    paid = [("transaction.updated", "paid"), ("transaction.paid", "paid"),
            ("transaction.updated", "completed"), ("transaction.completed", "completed")]
    billed = [("transaction.created", "billed"), ("transaction.billed", "billed")]
    assert txns == [("transaction.created", "draft"), ("transaction.updated", "ready"), ("transaction.ready", "ready"),
                    *paid[:2], ("transaction.updated", "paid"), *paid[2:],  # the checkout (the subscription's id)
                    *billed, *paid,  # the trial's end
                    *billed, ("transaction.updated", "past_due"), ("transaction.payment_failed", "past_due"),
                    ("transaction.past_due", "past_due"), *paid,  # declined, recovered
                    *billed, *paid]  # the resume
    adjustments = [(b["event_type"], b["data"]["action"], b["data"]["status"]) for b in bodies  # type: ignore[index]
                   if str(b["event_type"]).startswith("adjustment.")]
    assert adjustments == [("adjustment.created", "refund", "pending_approval"),  # a refund approved,
                           ("adjustment.updated", "refund", "approved"),
                           ("adjustment.created", "refund", "pending_approval"),  # then another rejected
                           ("adjustment.updated", "refund", "rejected")]
    adjustment = next(b["data"] for b in bodies if b["event_type"] == "adjustment.created")
    # a partial refund says so (a new user's Node SDK declares `type` required: full or partial)
    assert adjustment["type"] == "partial"  # type: ignore[index]
    assert Adjustment.from_dict(adjustment).type == AdjustmentActionType.Partial  # type: ignore[arg-type]


def test_a_refund_is_created_pending_approval_then_approved_or_rejected() -> None:
    """developer.paddle.com/webhooks/adjustments/adjustment-updated: refund adjustments "are created
    as pending_approval initially. On review, they move to approved or rejected and
    adjustment.updated occurs"; …/build/transactions/create-transaction-adjustments: the money is
    returned once approved; …/errors/adjustments/adjustment_pending_refund_request: no other
    adjustment of a transaction while a refund is pending. The SDK parses every status; the refund
    is owed (``refund:{adj}``, its total) on the approval alone; ``updated_at`` moves, ``created_at``
    does not."""
    world = PaddleWorld(9)
    profile = get_profile("paddle")
    txn = world.buy()
    start = len(world.events)
    first = world.refund(txn, review=None)
    assert world.pending_refund(txn) == first
    with pytest.raises(WorldError, match="pending approval"):
        world.refund(txn)
    world.review_refund(first, approve=True)
    with pytest.raises(WorldError, match="approved, not pending_approval"):
        world.review_refund(first, approve=False)
    second = world.refund(txn, review="rejected")
    events = world.events[start:]
    total = int(world.get(first)["totals"]["total"])
    assert [(e.type, e.object_id, e.status, e.version, e.business_key, e.amount) for e in events] == [
        ("adjustment.created", first, "pending_approval", 1, None, None),
        ("adjustment.updated", first, "approved", 2, f"refund:{first}", total),
        ("adjustment.created", second, "pending_approval", 1, None, None),
        ("adjustment.updated", second, "rejected", 2, None, None)]
    bodies = [json.loads(profile.envelope(e).body) for e in events]
    for body in bodies:
        event = PaddleEvent.from_dict(body)
        assert isinstance(event.data, Adjustment) and str(event.event_type) == body["event_type"]
        agree(event.data, body["data"], str(body["event_type"]))
    for created, updated in (bodies[:2], bodies[2:]):
        assert created["data"]["created_at"] == created["data"]["updated_at"] == updated["data"]["created_at"]
        assert updated["data"]["updated_at"] > created["data"]["updated_at"]
        assert updated["occurred_at"] > created["occurred_at"]
        assert {k: v for k, v in updated["data"].items() if k not in ("status", "updated_at")} == \
            {k: v for k, v in created["data"].items() if k not in ("status", "updated_at")}


def test_a_trial_checkout_charges_nothing_and_its_end_bills_the_plan() -> None:
    """A price with a ``trial_period`` (developer.paddle.com/build/trials/extend-activate-change-date-trials:
    the customer is charged on ``next_billed_at``, then the subscription is ``active``)."""
    world = PaddleWorld(5)
    sub = world.subscribe(trial=True)
    checkout = next(e for e in world.events if e.type == "transaction.completed").object
    assert checkout["details"]["totals"]["grand_total"] == "0"
    assert checkout["items"][0]["price"]["trial_period"] == {"interval": "day", "frequency": 14,
                                                             "requires_payment_method": True}
    trialing = world.get(sub)
    assert trialing["items"][0]["trial_dates"] == trialing["current_billing_period"]
    renewal = world.get(world.renew(sub))
    assert int(renewal["details"]["totals"]["grand_total"]) > 0
    active = world.get(sub)
    assert (active["status"], active["items"][0]["status"], active["items"][0]["trial_dates"]) == ("active", "active",
                                                                                                   None)


def test_a_status_change_is_an_updated_event_then_its_own_events() -> None:
    """Paddle's webhook simulator scenarios (developer.paddle.com/webhooks/simulator/subscription-created,
    -renewed, -paused, -resumed, -canceled): an ``.updated`` event ("Its status changes to canceled"), then
    the status's own events ("Occurs because the subscription status changes to canceled"), all one
    version of the entity, the same ``data``, ``occurred_at`` increasing; the renewed scenario puts the
    subscription's new period before the renewal's transaction."""
    world = PaddleWorld(7)
    profile = get_profile("paddle")
    sub = world.subscribe()
    start = len(world.events)
    world.renew(sub, pay=False)
    world.recover(sub)
    world.renew(sub)
    world.pause(sub)
    world.resume(sub)
    world.cancel(sub)
    events = world.events[start:]
    paid = [("transaction.updated", "paid"), ("transaction.paid", "paid"),
            ("transaction.updated", "completed"), ("transaction.completed", "completed")]
    billed = [("transaction.created", "billed"), ("transaction.billed", "billed")]
    assert [(e.type, e.status) for e in events] == [
        ("subscription.updated", "active"), *billed, ("transaction.updated", "past_due"),
        ("transaction.payment_failed", "past_due"), ("transaction.past_due", "past_due"),
        ("subscription.updated", "past_due"), ("subscription.past_due", "past_due"),
        *paid, ("subscription.updated", "active"),
        ("subscription.updated", "active"), *billed, *paid,
        ("subscription.updated", "paused"), ("subscription.paused", "paused"),
        ("subscription.updated", "active"), ("subscription.resumed", "active"), *billed, *paid,
        ("subscription.updated", "active"), ("subscription.activated", "active"),
        ("subscription.updated", "canceled"), ("subscription.canceled", "canceled")]
    bodies = [json.loads(profile.envelope(e).body) for e in events]
    assert [b["occurred_at"] for b in bodies] == sorted(b["occurred_at"] for b in bodies)
    assert len({b["occurred_at"] for b in bodies}) == len(bodies)
    for i, event in enumerate(events):
        if event.type.endswith(".updated") or event.type == "transaction.created":
            continue  # a change's first event
        first = max(j for j in range(i) if events[j].object_id == event.object_id
                    and (events[j].type.endswith(".updated") or events[j].type == "transaction.created"))
        assert (events[first].version, bodies[first]["data"]) == (event.version, bodies[i]["data"]), event.type
        assert all(e.object_id == event.object_id and e.version == event.version for e in events[first:i + 1])
    assert [e.type for e in events if e.business_key] == ["subscription.past_due", "transaction.completed",
                                                           "transaction.completed", "transaction.completed",
                                                           "subscription.canceled"]
    renewal = world.get(events[1].object_id)  # the declined renewal's transaction
    assert renewal["billing_period"] == bodies[0]["data"]["current_billing_period"]  # the period the update moved to


def test_every_signature_verifies_with_the_sdk_verifier() -> None:
    world = PaddleWorld(3)
    profile = get_profile("paddle")
    secret = profile.generate_secret(3)
    now = int(time.time())
    events = world.lifecycle()
    assert {e.type for e in events} == set(PADDLE_EVENT_TYPES)
    for event in events:
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


def test_api_serves_customers_and_their_addresses_in_paddles_shape(
        served: tuple[PaddleWorld, ServerState, str]) -> None:
    """developer.paddle.com/api-reference/customers/get-customer (``GET /customers/{customer_id}``)
    and …/addresses/get-address (``GET /customers/{customer_id}/addresses/{address_id}``): the
    entities the notifications carry, parsed by paddle-python-sdk's API entities; an address asked
    for under another customer is not found."""
    world, _, base = served
    (customer,), (address,) = world.objects("customer"), world.objects("address")
    answer = get(base, f"/customers/{customer}")
    assert answer.status_code == 200 and answer.json()["data"] == world.get(customer)
    agree(ApiCustomer.from_dict(answer.json()["data"]), answer.json()["data"], "customer")
    answer = get(base, f"/customers/{customer}/addresses/{address}")
    assert answer.status_code == 200 and answer.json()["data"] == world.get(address)
    agree(ApiAddress.from_dict(answer.json()["data"]), answer.json()["data"], "address")
    other = get(base, f"/customers/ctm_01{'0' * 24}/addresses/{address}")
    assert (other.status_code, other.json()["error"]["code"]) == (404, "entity_not_found")
    assert get(base, f"/customers/{address}").status_code == 404  # an address is not a customer
    assert get(base, f"/customers/{customer}", key=None).status_code == 401


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
    wrong = get(base, f"/transactions/{txn}", key="pdl_wrong")  # Paddle: a wrong or revoked key is invalid_token
    assert (wrong.status_code, wrong.json()["error"]["code"], wrong.json()["error"]["detail"]) == (
        403, "invalid_token", "Invalid or revoked API key.")
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


@pytest.mark.parametrize("seed", range(12))
def test_a_lifecycle_is_dated_in_order_and_repeats_from_its_seed(seed: int) -> None:
    """Every event after the one before it (Paddle's ``occurred_at`` orders an entity's events), and
    the same seed the same events, byte for byte."""
    profile = get_profile("paddle")
    events = PaddleWorld(seed, start_us=1_700_000_000_000_000).lifecycle()
    times = [e.created_us for e in events]
    assert times == sorted(times) and len(set(times)) == len(times)
    again = PaddleWorld(seed, start_us=1_700_000_000_000_000).lifecycle()
    assert [profile.envelope(e).body for e in events] == [profile.envelope(e).body for e in again]


def test_the_effect_story_and_the_lifecycle_send_every_type() -> None:
    """A team's key on any type the profile lists finds its event in the catalog's effect story."""
    assert {e.type for e in PaddleWorld(2).effect_story()} == set(PADDLE_EVENT_TYPES)
    assert {e.type for e in PaddleWorld(2).lifecycle()} == set(PADDLE_EVENT_TYPES)


def test_a_payment_s_method_details_has_every_field_the_sdk_declares() -> None:
    """Paddle sends every key of a payment's ``method_details``, null where it does not apply
    (``south_korea_local_card``, ``paypal``): the Node SDK's types declare them required and
    nullable, and a new user's ``tsc --strict`` check of captured bodies found two missing.
    The oracle is paddle-python-sdk's ``MethodDetails`` dataclass: its fields are the keys."""
    from paddle_billing.Notifications.Entities.Shared import MethodDetails

    declared = {re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), f.name) for f in dataclasses.fields(MethodDetails)}
    _, bodies = lifecycle()
    details = [p["method_details"] for b in bodies if b["event_type"].startswith("transaction.")
               for p in b["data"].get("payments") or ()]
    assert details and all(set(d) == declared for d in details), [sorted(declared ^ set(d)) for d in details][:1]


def test_a_new_customers_checkout_creates_the_customer_and_address_first() -> None:
    """developer.paddle.com/webhooks/simulator/subscription-created, a new customer: "Customer opens
    checkout" (``transaction.created``, ``draft``, no customer), then "Customer adds their details and
    address": ``customer.created`` ("The customer's status is active"), ``address.created`` ("Paddle
    always creates a new address related to this customer"), ``transaction.updated`` with both ids and
    ``transaction.ready``; then the payment. Each new body is the entity paddle-python-sdk's
    notification entity (``Customer``, ``Address``) parses, field for field and with every field
    the entity declares sent (the API reference's Customer and Address entities list them all,
    nullable ones as null); the subscription and every later transaction event carry the same ids."""
    world = PaddleWorld(4)
    profile = get_profile("paddle")
    sub = world.subscribe()
    events = world.events
    assert [e.type for e in events[:5]] == ["transaction.created", "customer.created", "address.created",
                                            "transaction.updated", "transaction.ready"]
    txn, customer, address = (e.object for e in events[:3])
    assert (txn["customer_id"], txn["address_id"], txn["status"]) == (None, None, "draft")
    ready = events[3].object
    assert (ready["customer_id"], ready["address_id"], ready["status"]) == (customer["id"], address["id"], "ready")
    assert address["customer_id"] == customer["id"]
    assert (customer["status"], address["status"]) == ("active", "active")
    assert all((e.object["customer_id"], e.object["address_id"]) == (customer["id"], address["id"])
               for e in events[3:] if e.object_type in ("transaction", "subscription"))
    assert (world.get(sub)["customer_id"], world.get(sub)["address_id"]) == (customer["id"], address["id"])
    assert [e.created_us for e in events] == sorted(e.created_us for e in events)
    for event, entity in ((events[1], Customer), (events[2], Address)):
        body = json.loads(profile.envelope(event).body)
        parsed = PaddleEvent.from_dict(body)
        assert isinstance(parsed.data, entity) and str(parsed.event_type) == event.type
        assert parsed.event_type.name != "Undefined"
        assert set(body["data"]) == {f.name for f in dataclasses.fields(entity)}, event.type
        agree(parsed.data, body["data"], event.type)
        agree(entity.from_dict(body["data"]), body["data"], event.type)
        assert (event.status, event.business_key, event.version) == ("active", None, 1)
        assert re.fullmatch(ID.format({"customer": "ctm", "address": "add"}[event.object_type]), body["data"]["id"])


def test_a_customers_details_changed_is_customer_updated() -> None:
    """developer.paddle.com/webhooks/customers/customer-updated ("Occurs when a customer is updated"):
    the customer entity after the change, ``updated_at`` moved, ``created_at`` and the status kept;
    parsed by paddle-python-sdk's ``Customer``; no effect owed. A change of nothing is refused."""
    world = PaddleWorld(6)
    profile = get_profile("paddle")
    customer = world.customer_of(world.buy())
    created = world.get(customer)
    world.update_customer(customer, name="Sam Miller", email="sam.miller@example.com")
    event = world.events[-1]
    assert (event.type, event.object_id, event.version, event.status, event.business_key) == (
        "customer.updated", customer, 2, "active", None)
    body = json.loads(profile.envelope(event).body)
    parsed = PaddleEvent.from_dict(body)
    assert isinstance(parsed.data, Customer)
    agree(parsed.data, body["data"], "customer.updated")
    assert (parsed.data.name, parsed.data.email) == ("Sam Miller", "sam.miller@example.com")
    assert body["data"]["created_at"] == created["created_at"] < body["data"]["updated_at"]
    assert {k: v for k, v in body["data"].items() if k not in ("name", "email", "updated_at")} == \
        {k: v for k, v in created.items() if k not in ("name", "email", "updated_at")}
    with pytest.raises(WorldError, match="no detail changed"):
        world.update_customer(customer, name="Sam Miller")
    with pytest.raises(WorldError, match="not a customer"):
        world.update_customer(world.objects("address")[0], name="Jo")


#: paddle-node-sdk's notification mocks (src/__tests__/mocks/notifications/): the fields of the
#: subscription and of its first item that say which state it is in, as Paddle's examples have them.
NODE_MOCKS: dict[str, dict[str, object]] = {
    "subscription-trialing": {"status": "trialing", "first_billed_at": None, "paused_at": None,
                              "period": True, "next_billed_at": True, "item_status": "trialing",
                              "item_trial_dates": True, "item_previously_billed_at": None, "item_next_billed_at": True},
    "subscription-paused": {"status": "paused", "first_billed_at": True, "paused_at": True,
                            "next_billed_at": None, "item_status": "inactive", "item_trial_dates": None,
                            "item_previously_billed_at": True, "item_next_billed_at": None},
    "subscription-resumed": {"status": "active", "first_billed_at": True, "paused_at": None, "period": True,
                             "next_billed_at": True, "item_status": "active", "item_trial_dates": None,
                             "item_previously_billed_at": True, "item_next_billed_at": True},
    "subscription-activated": {"status": "active", "first_billed_at": True, "paused_at": None, "period": True,
                               "next_billed_at": True, "item_status": "active", "item_trial_dates": None,
                               "item_previously_billed_at": True, "item_next_billed_at": True},
    # its items keep their status: Paddle's canceled example has them "active"
    "subscription-canceled": {"status": "canceled", "period": None, "next_billed_at": None,
                              "item_status": "active", "item_next_billed_at": None},
}


def _state_of(data: Mapping[str, object]) -> dict[str, object]:
    item = data["items"][0]  # type: ignore[index]
    seen = {"status": data["status"], "first_billed_at": data["first_billed_at"], "paused_at": data["paused_at"],
            "period": data["current_billing_period"], "next_billed_at": data["next_billed_at"],
            "item_status": item["status"], "item_trial_dates": item["trial_dates"],
            "item_previously_billed_at": item["previously_billed_at"], "item_next_billed_at": item["next_billed_at"]}
    return {k: (v if v is None or isinstance(v, str) and k.endswith("status") else True) for k, v in seen.items()}


def _matches(state: Mapping[str, object], mock: Mapping[str, object]) -> bool:
    return all(state[k] == v for k, v in mock.items())


#: A subscription's status -> the mock whose state its every body has.
STATE_MOCK = {"trialing": "subscription-trialing", "paused": "subscription-paused",
              "active": "subscription-activated", "canceled": "subscription-canceled"}


@pytest.mark.parametrize("seed", range(4))
def test_every_subscription_body_is_in_a_state_paddles_examples_show(seed: int) -> None:
    """Every subscription notification of a lifecycle and of the effect story (a trial paused and
    resumed) is self-consistent as Paddle's examples are (paddle-node-sdk's notification mocks):
    trialing, billed nothing yet (``first_billed_at`` and items' ``previously_billed_at`` null, items
    ``trialing`` with ``trial_dates``); paused, items ``inactive`` without ``trial_dates`` and no
    next billing; active (or past due) items ``active`` without ``trial_dates``, a period, billed;
    canceled, no period and no next billing. A trialing body never carries a post-trial period."""
    world = PaddleWorld(seed)
    events = [*world.lifecycle(), *world.effect_story()]
    seen = set()
    last: dict[str, dict[str, object]] = {}
    for event in events:
        if event.object_type != "subscription":
            continue
        state = _state_of(event.object)
        mock = {**NODE_MOCKS[STATE_MOCK.get(str(event.status), "subscription-activated")], "status": event.status}
        if event.status == "paused":  # billed as much as before the pause (a trial paused: never)
            mock.update({k: last[event.object_id][k] for k in ("first_billed_at", "item_previously_billed_at")})
        assert _matches(state, mock), (event.type, event.status, state)
        last[event.object_id] = state
        if event.status == "trialing":
            item = event.object["items"][0]
            assert item["trial_dates"] == event.object["current_billing_period"], event.type
        seen.add(event.status)
    assert seen == {"trialing", "active", "past_due", "paused", "canceled"}


def test_a_pause_makes_the_items_inactive_and_a_resume_bills_a_new_period() -> None:
    """paddle-node-sdk's ``subscription-paused.mock.ts``: items ``inactive``, ``next_billed_at`` null on
    the subscription and its items, ``previously_billed_at`` kept; the billing period is kept
    (developer.paddle.com/changelog/2024/resume-subscription-billing-period-options: "Paddle retains the
    billing period against the subscription when you pause"); ``subscription-resumed.mock.ts``: items
    ``active`` again, ``previously_billed_at`` the new period's start, ``paused_at`` null."""
    world = PaddleWorld(8)
    sub = world.subscribe()
    before = world.get(sub)
    world.pause(sub)
    paused = world.get(sub)
    assert [(i["status"], i["next_billed_at"], i["previously_billed_at"], i["trial_dates"])
            for i in paused["items"]] == [("inactive", None, before["items"][0]["previously_billed_at"], None)]
    assert (paused["status"], paused["next_billed_at"], paused["current_billing_period"]) == (
        "paused", None, before["current_billing_period"])
    world.resume(sub)
    resumed = next(e for e in reversed(world.events) if e.type == "subscription.resumed").object
    period = resumed["current_billing_period"]
    assert period["starts_at"] > before["current_billing_period"]["starts_at"]
    assert [(i["status"], i["previously_billed_at"], i["next_billed_at"]) for i in resumed["items"]] == [
        ("active", period["starts_at"], period["ends_at"])]
    assert (resumed["paused_at"], resumed["first_billed_at"]) == (None, before["first_billed_at"])
    agree(Subscription.from_dict(resumed), resumed, "subscription.resumed")


def test_only_an_active_or_trialing_subscription_is_paused() -> None:
    """A paused subscription paused again, or a canceled one, raised nothing and emitted a second
    ``subscription.paused`` (only explore's operations guarded it); a past-due one's pause is not
    modelled. Each is a WorldError naming the status, and nothing is emitted."""
    world = PaddleWorld(8)
    sub = world.subscribe()
    world.pause(sub)
    count = len(world.events)
    with pytest.raises(WorldError, match=f"subscription {sub} is paused: only an active or trialing one is paused"):
        world.pause(sub)
    world.resume(sub)
    world.cancel(sub)
    with pytest.raises(WorldError, match="is canceled: only an active or trialing one"):
        world.pause(sub)
    assert [e.type for e in world.events[count:]].count("subscription.paused") == 0


def test_a_trial_is_billed_nothing_until_its_end() -> None:
    """paddle-node-sdk's ``subscription-trialing.mock.ts``: ``first_billed_at`` null and the items'
    ``previously_billed_at`` null while trialing (the subscription entity: ``first_billed_at`` "may be
    different from started_at if the subscription started in trial"); the trial's end sets both to the
    first paid period's start, with the subscription ``active``."""
    world = PaddleWorld(5)
    sub = world.subscribe(trial=True)
    trialing = next(e for e in world.events if e.type == "subscription.trialing").object
    assert (trialing["first_billed_at"], trialing["items"][0]["previously_billed_at"]) == (None, None)
    assert trialing["started_at"] == trialing["current_billing_period"]["starts_at"]
    created = next(e for e in world.events if e.type == "subscription.created").object
    assert created["first_billed_at"] is None
    start = len(world.events)
    world.renew(sub)
    subs = [e for e in world.events[start:] if e.object_type == "subscription"]
    assert [(e.type, e.status) for e in subs] == [("subscription.updated", "active"),
                                                  ("subscription.activated", "active")]
    active = subs[0].object
    period = active["current_billing_period"]
    assert active["first_billed_at"] == period["starts_at"] == trialing["current_billing_period"]["ends_at"]
    assert [(i["status"], i["trial_dates"], i["previously_billed_at"]) for i in active["items"]] == [
        ("active", None, period["starts_at"])]


def test_a_trial_is_paused_at_its_end_after_a_scheduled_change() -> None:
    """developer.paddle.com/changelog/2024/pause-trialing-subscriptions: "Trialing subscriptions can only
    be paused at the end of the billing period"; …/webhooks/simulator/subscription-paused, paused at the end
    of the billing period: "Subscription is scheduled to pause" (``subscription.updated``: "Paddle updates
    the ``scheduled_change`` object against the subscription"), then "Subscription pauses"
    (``subscription.updated``, ``subscription.paused``) on that date. The scheduled change parses with
    paddle-python-sdk's ``Subscription`` entity; the pause clears it."""
    world = PaddleWorld(6)
    profile = get_profile("paddle")
    sub = world.subscribe(trial=True)
    trial_end = world.get(sub)["current_billing_period"]["ends_at"]
    start = len(world.events)
    world.pause(sub)
    events = world.events[start:]
    assert [(e.type, e.status) for e in events] == [("subscription.updated", "trialing"),
                                                    ("subscription.updated", "paused"), ("subscription.paused", "paused")]
    scheduled = events[0].object
    assert scheduled["scheduled_change"] == {"action": "pause", "effective_at": trial_end, "resume_at": None}
    assert [i["status"] for i in scheduled["items"]] == ["trialing"]
    body = json.loads(profile.envelope(events[0]).body)
    parsed = PaddleEvent.from_dict(body)
    assert isinstance(parsed.data, Subscription)
    agree(parsed.data, body["data"], "subscription.updated")
    assert parsed.data.scheduled_change is not None and str(parsed.data.scheduled_change.action) == "pause"
    paused = events[1].object
    assert paused["scheduled_change"] is None and paused["paused_at"] >= trial_end
    assert events[1].created_us >= _parse_us(trial_end) > events[0].created_us
    active = PaddleWorld(6)
    plain = active.subscribe()
    start = len(active.events)
    active.pause(plain)  # an active one: at once, as before
    assert [e.type for e in active.events[start:]] == ["subscription.updated", "subscription.paused"]


def _parse_us(value: str) -> int:
    moment = datetime.fromisoformat(value)
    return int(moment.timestamp()) * 1_000_000 + moment.microsecond


def _bodies(events: list[Event]) -> list[dict[str, Any]]:
    profile = get_profile("paddle")
    return [json.loads(profile.envelope(e).body) for e in events]


def _sdk_agrees(bodies: list[dict[str, Any]]) -> None:
    for body in bodies:
        event = PaddleEvent.from_dict(body)
        assert not isinstance(event.data, UndefinedEntity) and event.event_type.name != "Undefined"
        agree(event.data, body["data"], str(body["event_type"]))


def test_a_one_time_purchase_is_a_transaction_with_no_subscription() -> None:
    """A licence bought once: a price with ``billing_cycle`` null (developer.paddle.com/api-reference/prices;
    paddle-python-sdk's ``transaction.completed`` fixture, its "One-time addon"), in a checkout creating no
    subscription (developer.paddle.com/webhooks/subscriptions/subscription-created: subscriptions are created
    "for recurring items"): every transaction body's ``subscription_id`` and ``billing_period`` null, its item's
    price one-time, parsed field for field by the SDK; its ``transaction.completed`` owes ``fulfil:{txn}``."""
    world = PaddleWorld(3)
    txn = world.buy()
    events = world.events
    assert [e.type for e in events] == ["transaction.created", "customer.created", "address.created",
                                        "transaction.updated", "transaction.ready", "transaction.updated",
                                        "transaction.paid", "transaction.updated", "transaction.completed"]
    assert world.objects("subscription") == []
    txns = [e for e in events if e.object_type == "transaction"]
    for event in txns:
        data = event.object
        assert (data["subscription_id"], data["billing_period"], data["origin"]) == (None, None, "web")
        (item,) = data["items"]
        assert item["price"] == world.licence_price and item["price"]["billing_cycle"] is None
        assert item["price"]["trial_period"] is None
        assert data["details"]["line_items"][0]["product"] == world.licence
        assert data["details"]["line_items"][0]["price_id"] == world.licence_price["id"]
    done = txns[-1]
    assert (done.type, done.object_id, done.status, done.business_key) == (
        "transaction.completed", txn, "completed", f"fulfil:{txn}")
    assert int(done.object["details"]["totals"]["subtotal"]) == int(world.licence_price["unit_price"]["amount"])
    assert [e.business_key for e in events if e.business_key] == [f"fulfil:{txn}"]
    bodies = _bodies(events)
    _sdk_agrees(bodies)
    parsed = Transaction.from_dict(bodies[-1]["data"])
    assert parsed.subscription_id is None and parsed.billing_period is None
    assert parsed.items[0].price.billing_cycle is None
    with pytest.raises(WorldError, match="one-time purchase"):
        world.buy(annual=True)


def test_an_annual_plan_bills_a_calendar_year_a_period() -> None:
    """A price with ``billing_cycle`` ``{"interval": "year", "frequency": 1}`` (developer.paddle.com/api-reference/
    prices): the subscription's ``billing_cycle`` the same, each period a calendar year (the same instant a year
    on), its renewal billing the next contiguous year at the yearly price; every body parsed field for field by
    paddle-python-sdk."""
    world = PaddleWorld(5, start_us=1_709_208_000_123_456)  # 2024-02-29T12:00:00.123456Z
    sub = world.subscribe(annual=True)
    created = world.get(sub)
    assert created["billing_cycle"] == {"interval": "year", "frequency": 1}
    assert created["items"][0]["price"] == world.annual_price
    assert world.annual_price["billing_cycle"] == {"interval": "year", "frequency": 1}
    assert int(world.annual_price["unit_price"]["amount"]) == 10 * int(world.price["unit_price"]["amount"])
    period = created["current_billing_period"]
    start = datetime.fromisoformat(period["starts_at"])
    assert (start.month, start.day) == (2, 29)
    assert datetime.fromisoformat(period["ends_at"]) == start.replace(year=2025, day=28)
    assert created["next_billed_at"] == period["ends_at"] == created["items"][0]["next_billed_at"]
    checkout = world.get(world.objects("transaction")[0])
    assert checkout["billing_period"] == period and checkout["subscription_id"] == sub
    renewal = world.get(world.renew(sub))
    moved = world.get(sub)["current_billing_period"]
    assert moved["starts_at"] == period["ends_at"]
    assert datetime.fromisoformat(moved["ends_at"]) == datetime.fromisoformat(moved["starts_at"]).replace(year=2026)
    assert renewal["billing_period"] == moved
    assert renewal["items"][0]["price"] == world.annual_price
    assert renewal["details"]["totals"]["subtotal"] == world.annual_price["unit_price"]["amount"]
    _sdk_agrees(_bodies(world.events))


def test_a_cancellation_at_the_period_s_end_is_scheduled_first() -> None:
    """developer.paddle.com/webhooks/simulator/subscription-canceled, canceled at the end of the billing period
    (Paddle's default, developer.paddle.com/build/subscriptions/cancel-subscriptions): "Subscription is scheduled
    to cancel" (``subscription.updated``, still ``active``, ``scheduled_change`` ``{"action": "cancel",
    "effective_at": <period end>, "resume_at": null}``), then at that end "Subscription cancels"
    (``subscription.updated``, ``subscription.canceled``: ``canceled_at``, ``scheduled_change`` null, no period,
    items ``active`` as Paddle's example, paddle-node-sdk's ``subscription-canceled.mock.ts``). A past-due one
    has no period to end: canceled at once only."""
    world = PaddleWorld(6)
    sub = world.subscribe()
    end = world.get(sub)["current_billing_period"]["ends_at"]
    start = len(world.events)
    world.cancel(sub, at_period_end=True)
    events = world.events[start:]
    assert [(e.type, e.status, e.business_key) for e in events] == [
        ("subscription.updated", "active", None), ("subscription.updated", "canceled", None),
        ("subscription.canceled", "canceled", f"deprovision:{sub}")]
    scheduled, canceled = events[0].object, events[2].object
    assert scheduled["scheduled_change"] == {"action": "cancel", "effective_at": end, "resume_at": None}
    assert (scheduled["canceled_at"], scheduled["current_billing_period"]["ends_at"]) == (None, end)
    assert events[0].created_us < _parse_us(end) <= events[1].created_us
    assert canceled["scheduled_change"] is None and canceled["canceled_at"] >= end
    assert (canceled["current_billing_period"], canceled["next_billed_at"]) == (None, None)
    assert [(i["status"], i["next_billed_at"]) for i in canceled["items"]] == [("active", None)]
    assert canceled["items"][0]["previously_billed_at"] == scheduled["items"][0]["previously_billed_at"]
    bodies = _bodies(events)
    _sdk_agrees(bodies)
    parsed = PaddleEvent.from_dict(bodies[0]).data
    assert isinstance(parsed, Subscription) and parsed.scheduled_change is not None
    assert str(parsed.scheduled_change.action) == "cancel"
    with pytest.raises(WorldError, match="canceled already"):
        world.cancel(sub)
    late = PaddleWorld(6)
    due = late.subscribe()
    late.renew(due, pay=False)
    with pytest.raises(WorldError, match="past_due: it cannot be canceled at its period's end"):
        late.cancel(due, at_period_end=True)
    late.cancel(due)  # at once
    assert late.get(due)["status"] == "canceled"


def test_the_effect_story_sells_a_licence_and_a_yearly_plan() -> None:
    """The catalog's effect story holds a one-time purchase (``transaction.completed`` with no subscription,
    owing ``fulfil:{txn}``) and a yearly plan canceled at its period's end; every effect key once, every body
    parsed field for field by paddle-python-sdk."""
    world = PaddleWorld(4)
    events = world.effect_story()
    keys = [e.business_key for e in events if e.business_key]
    assert len(keys) == len(set(keys))
    licence = next(e for e in events if e.type == "transaction.completed")
    assert (licence.object["subscription_id"], licence.object["billing_period"]) == (None, None)
    assert licence.business_key == f"fulfil:{licence.object_id}"
    assert licence.object["items"][0]["price"]["billing_cycle"] is None
    yearly = [s for s in world.objects("subscription") if world.get(s)["billing_cycle"]["interval"] == "year"]
    assert len(yearly) == 1 and world.get(yearly[0])["status"] == "canceled"
    assert [(e.type, e.object["scheduled_change"] and e.object["scheduled_change"]["action"]) for e in events
            if e.object_id == yearly[0]][-3:] == [("subscription.updated", "cancel"), ("subscription.updated", None),
                                                 ("subscription.canceled", None)]
    assert f"deprovision:{yearly[0]}" in keys and f"provision:{yearly[0]}" in keys
    _sdk_agrees(_bodies(events))
