"""Mercado Pago fidelity: the payments world's notifications and API, checked with the official SDK.

The oracle is Mercado Pago's ``mercadopago`` SDK 3.6.0: ``sdk.payment().get(id)`` and
``sdk.merchant_order().get(id)``, sent to the provider API on 127.0.0.1 (the SDK's base
URL replaced by its own ``HttpClient`` extension point), answer every payment in every
status the notifications announce, as of the deliveries made so far; every notification's
signature validates with ``WebhookSignatureValidator.validate``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from mercadopago.webhook import InvalidWebhookSignatureError, WebhookSignatureValidator

from examples.receivers.mercadopago_fetch import sdk_for
from hookproof.simulator.errors import ProfileError, WorldError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, clock, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY, Switch
from hookproof.simulator.world import World, emit_events, new_world
from hookproof.simulator.world.mercadopago import MERCADOPAGO_EVENT_TYPES, MercadoPagoWorld

#: (status, status_detail) of every payment state the lifecycle goes through, in order of first appearance
#: (Mercado Pago's "Get payment status" table: a card in review, an authorization captured or released,
#: a Pix expired, a disputed chargeback reimbursed).
STATES = [("approved", "accredited"), ("pending", "pending_waiting_transfer"), ("approved", "partially_refunded"),
          ("refunded", "refunded"), ("rejected", "cc_rejected_insufficient_amount"), ("charged_back", "settled"),
          ("in_process", "pending_contingency"), ("authorized", "pending_capture"), ("cancelled", "expired"),
          ("cancelled", "by_collector"), ("charged_back", "in_process"), ("charged_back", "reimbursed")]


@pytest.fixture
def served() -> Iterator[tuple[MercadoPagoWorld, ServerState, str]]:
    world = MercadoPagoWorld(21)
    world.lifecycle()
    state = ServerState([World(3), world])
    with run_server(state) as handle:
        yield world, state, handle.url


def test_the_sdk_reads_every_payment_state_as_of_each_delivery(
        served: tuple[MercadoPagoWorld, ServerState, str]) -> None:
    world, _, base = served
    sdk = sdk_for(base, DEFAULT_API_KEY)
    seen = []
    for event in world.events:
        clock.advance(world, [event])
        if event.object_type != "payment":
            continue
        answer = sdk.payment().get(event.object_id)
        assert answer["status"] == 200
        payment = answer["response"]
        assert payment["id"] == int(event.object_id) and payment["status"] == event.status
        assert payment["collector_id"] == int(world.account) and payment["currency_id"] == "BRL"
        refunded = round(sum(r["amount"] for r in payment["refunds"]), 2)
        assert payment["transaction_amount_refunded"] == refunded
        if (payment["status"], payment["status_detail"]) not in seen:
            seen.append((payment["status"], payment["status_detail"]))
    assert seen == STATES


def test_only_the_transitions_mercado_pago_makes() -> None:
    world = MercadoPagoWorld(4)
    pix, card = world.pay(method="pix"), world.pay()
    world.expire(pix)
    with pytest.raises(WorldError, match="cancelled -> approved"):
        world.approve_pending(pix)  # an expired Pix is never paid
    with pytest.raises(WorldError, match="no chargeback in dispute"):
        world.settle_dispute(card)
    world.dispute(card)
    with pytest.raises(WorldError, match="already charged back"):
        world.charge_back(card)  # one chargeback per payment, its effect once
    world.settle_dispute(card)
    held = world.pay(capture=False)
    assert (world.get(held)["status"], world.get(held)["captured"]) == ("authorized", False)
    world.approve_pending(held)  # captured
    assert (world.get(held)["status"], world.get(held)["captured"]) == ("approved", True)
    assert [(e.type, e.status, e.object["status_detail"], e.business_key) for e in world.events[-4:-2]] == [
        ("payment.updated", "charged_back", "in_process", f"chargeback:{card}"),
        ("payment.updated", "charged_back", "settled", None)]


def test_refunds_arrive_under_their_payments_id(served: tuple[MercadoPagoWorld, ServerState, str]) -> None:
    world, _, base = served
    refunds = [e for e in world.events if e.business_key and e.business_key.startswith("refund:")]
    assert len(refunds) == 2 and {e.object_id for e in refunds} == {world.objects("payment")[0]}
    payment = sdk_for(base, DEFAULT_API_KEY).payment().get(refunds[0].object_id)["response"]
    assert [f"refund:{payment['id']}:{r['id']}" for r in payment["refunds"]] == [e.business_key for e in refunds]


def test_the_sdk_reads_merchant_orders(served: tuple[MercadoPagoWorld, ServerState, str]) -> None:
    world, _, base = served
    order = world.objects("merchant_order")[0]
    answer = sdk_for(base, DEFAULT_API_KEY).merchant_order().get(order)
    assert answer["status"] == 200
    body = answer["response"]
    assert body["id"] == int(order) and body["status"] == "closed" and body["order_status"] == "reverted"
    assert [p["id"] for p in body["payments"]] == [int(world.objects("payment")[0])]


def test_a_merchant_orders_notification_names_what_the_sdk_reads_then(
        served: tuple[MercadoPagoWorld, ServerState, str]) -> None:
    """Each ``topic_merchant_order_wh`` notification's id (query ``data.id`` and body ``id``)
    fetched with ``sdk.merchant_order().get`` as of its delivery answers the order in the
    notification's ``status``: opened before its payment, closed once the payment is approved."""
    world, _, base = served
    sdk = sdk_for(base, DEFAULT_API_KEY)
    profile = get_profile("mercadopago")
    seen = []
    for event in world.events:
        clock.advance(world, [event])
        if event.type != "merchant_order":
            continue
        request = profile.request(profile.envelope(event), ["s" * 64], 1_764_000_000)
        body = json.loads(request.body)
        assert request.query["data.id"] == body["id"] == event.object_id
        answer = sdk.merchant_order().get(body["id"])
        assert answer["status"] == 200 and answer["response"]["status"] == body["status"]
        seen.append((body["action"], body["status"], [p["status"] for p in answer["response"]["payments"]]))
    assert seen[:2] == [("create", "opened", []), ("update", "closed", ["approved"])]


def test_errors_and_switches_in_mercado_pagos_shape(served: tuple[MercadoPagoWorld, ServerState, str]) -> None:
    world, state, base = served
    sdk = sdk_for(base, DEFAULT_API_KEY)
    missing = sdk.payment().get("1")
    assert (missing["status"], missing["response"]["error"], missing["response"]["cause"][0]["code"]) == (
        404, "not_found", 2000)
    order = world.objects("merchant_order")[0]
    assert sdk.payment().get(order)["status"] == 404  # a merchant order is not a payment
    assert sdk_for(base, "APP_USR-wrong").payment().get(world.objects("payment")[0])["status"] == 401
    payment = world.objects("payment")[0]
    state.switches.set(payment, Switch(not_found=True, times=1))
    assert sdk.payment().get(payment)["status"] == 404
    assert sdk.payment().get(payment)["status"] == 200
    state.switches.set(payment, Switch(stale=True, times=1))
    assert sdk.payment().get(payment)["response"]["status"] == "approved"  # the version before "refunded"
    assert sdk.payment().get(payment)["response"]["status"] == "refunded"
    state.switches.set(payment, Switch(status=503, times=1))
    failed = sdk.payment().get(payment)
    assert (failed["status"], failed["response"]["error"]) == (503, "internal_error")
    state.switches.set(payment, Switch(rate_limit_per_s=0, times=1))
    throttled = sdk.payment().get(payment)
    assert (throttled["status"], throttled["response"]["error"]) == (429, "too_many_requests")
    assert sdk.payment().get(payment)["status"] == 200
    merchant_order = world.objects("merchant_order")[0]
    state.switches.set(merchant_order, Switch(status=503, times=1))
    assert [sdk.merchant_order().get(merchant_order)["status"] for _ in range(2)] == [503, 200]


def test_notifications_are_thin_and_validate_with_the_sdk() -> None:
    world = MercadoPagoWorld(5, livemode=True)
    profile = get_profile("mercadopago")
    secret = profile.generate_secret(5)
    events = world.lifecycle()
    assert {e.type for e in events} == set(MERCADOPAGO_EVENT_TYPES)
    for event in events:
        request = profile.request(profile.envelope(event), [secret], 1_764_000_000)
        body = json.loads(request.body)
        if event.type == "merchant_order":  # a Webhooks topic_merchant_order_wh notification
            assert list(body) == ["action", "application_id", "data", "date_created", "id", "live_mode", "status",
                                  "type", "user_id", "version"]
            assert (body["type"], body["id"], body["live_mode"], body["user_id"]) == (
                "topic_merchant_order_wh", event.object_id, True, int(world.account))
            assert body["action"] == ("create" if event.version == 1 else "update")
            assert body["version"] == event.version - 1
            assert body["status"] == body["data"]["status"] == event.object["status"]
            assert body["data"] == {"currency_id": "", "marketplace": "NONE", "status": event.object["status"]}
            assert body["application_id"] == str(world.application_id)
            assert request.query == {"data.id": event.object_id, "type": "topic_merchant_order_wh"}
            assert request.headers["User-Agent"] == "MercadoPago WebHook v1.0 topic_merchant_order_wh"
        else:
            assert list(body) == ["id", "live_mode", "type", "date_created", "user_id", "api_version", "action", "data"]
            assert (body["type"], body["action"], body["data"], body["live_mode"]) == (
                "payment", event.type, {"id": event.object_id}, True)
            assert body["id"] == int(event.id) and body["user_id"] == int(world.account)
            assert re.fullmatch(r"\d{11}", event.object_id)
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-03:00", body["date_created"])
            assert request.query == {"data.id": event.object_id, "type": "payment"}
            assert request.headers["User-Agent"] == "MercadoPago WebHook v1.0 payment"
        data_id = request.query["data.id"]
        WebhookSignatureValidator.validate(request.headers["x-signature"], request.headers["x-request-id"],
                                           data_id, secret)
        with pytest.raises(InvalidWebhookSignatureError):
            WebhookSignatureValidator.validate(request.headers["x-signature"], request.headers["x-request-id"],
                                               data_id, secret + "0")


def test_every_event_type_can_be_emitted_alone() -> None:
    for event_type in MERCADOPAGO_EVENT_TYPES:
        events = emit_events(new_world("mercadopago", 11), event_type)
        assert [e.type for e in events] == [event_type]


def test_a_billing_world_event_is_refused() -> None:
    with pytest.raises(ProfileError) as info:
        get_profile("mercadopago").envelope(World(1).lifecycle()[0])
    assert "payment.created" in str(info.value)


def test_the_timestamp_scenarios_say_why_they_do_not_apply() -> None:
    """``ts`` is signed (the SDK's manifest ends ``ts:<ts>;``) but the SDK checks a window only
    when given ``tolerance_seconds`` (default None): the scenarios stay not applicable, and
    their reason does not claim that no timestamp is signed."""
    import inspect

    from hookproof.simulator.faults import Mutation, applicable

    assert inspect.signature(WebhookSignatureValidator.validate).parameters["tolerance_seconds"].default is None
    profile = get_profile("mercadopago")
    for mutation in (Mutation.STALE_TIMESTAMP, Mutation.FUTURE_TIMESTAMP):
        reason = applicable(mutation, profile)
        assert reason == profile.untimed_reason and "signs no timestamp" not in reason
        assert "tolerance_seconds" in reason
