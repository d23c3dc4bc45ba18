"""Stripe fidelity: every object the Stripe profile sends or the provider API serves has
Stripe's own shape (its OpenAPI fixtures and stripe-python's types), at the API version
asked for, and the official stripe SDK works against both."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import threading
import typing
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import stripe
from fastapi import FastAPI, Request, Response

from hookproof.simulator.delivery import Dispatcher, History, Outcome, Target
from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import LATEST_API_VERSION
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles.stripe import DOCUMENTED_DIFFERENCES, STRIPE_OPTIONAL_EVENT_TYPES, StripeProfile
from hookproof.simulator.profiles.stripe_json import stripe_json
from hookproof.simulator.profiles.stripe_versions import at_version, names_shaped_kind, shaped_kinds
from hookproof.simulator.server import DEFAULT_API_KEY, ServerHandle, ServerState, run_server
from hookproof.simulator.server.provider import INCLUDABLE
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world import RESOURCES, SCRIPTS, World
from hookproof.simulator.world.world import INVOICE_PAYMENT_TYPES, UnboundReceiverObject
from tests.simulator.stripe_oracle import compare, resources

SEED = 21
SECRET = "whsec_fidelity_test_secret_0123456789"
TIMEOUT_S = 10.0
PROFILE = StripeProfile()
OLD_VERSION = "2024-06-20"  # before 2025-03-31.basil: the invoice links its subscription and payment directly


def full_world(api_version: str | None = None, account: str | None = None) -> World:
    """A world that has run every operation: the lifecycle, every event type's script,
    a trial that ends, a plan change, a failed payment paid on retry, a pause and resume, a
    voided invoice, subscriptions whose first payment fails (then paid, or expired) and one
    marked unpaid, one canceled at its period's end, and checkout
    sessions opened as a receiver opens them (with and without a customer, both modes, a
    subscription-mode one on trial); each invoice's payment sends its own events beside the
    invoice's (`World.invoice_payment_types`)."""
    w = World(SEED, api_version=api_version, account=account)
    # each invoice paid (or failed) by a payment sends its intent's and charge's own events beside it
    w.invoice_payment_types = frozenset(INVOICE_PAYMENT_TYPES)
    w.lifecycle()
    for script in SCRIPTS.values():
        script(w)
    customer = w.objects("customer")[0]
    trial = w.subscribe(customer, trial=True)
    w.end_trial(trial)
    w.change_plan(trial, w.create_price())
    w.cancel(trial)
    recovered = w.subscribe(customer, incomplete=True)  # its first payment fails, then succeeds
    w.retry_invoice(w.get(recovered)["latest_invoice"], pay=True)
    w.expire_incomplete(w.subscribe(customer, incomplete=True))
    dunning = w.subscribe(customer)
    w.retry_invoice(w.renew(dunning, pay=False), pay=False)
    w.mark_unpaid(dunning)
    w.retry_invoice(w.get(dunning)["latest_invoice"], pay=True)
    w.retry_payment(w.fail_payment(customer))
    paid = w.open_checkout(None, w.create_price(interval=None), quantity=2, client_reference_id="order-7",
                           metadata={"order": "7"}, customer_email="shopper@example.com")
    w.complete_checkout(paid)
    subscribed = w.open_checkout(customer, w.create_price(), mode="subscription", client_reference_id="plan-3")
    w.complete_checkout(subscribed)
    w.complete_checkout(w.open_checkout(None, w.create_price(), mode="subscription", trial=True,
                                        customer_email="trial@example.com", subscription_metadata={"seat": "2"}))
    scheduled = w.subscribe(customer)  # the Customer Portal's default cancellation: at the period's end
    w.cancel_at_period_end(scheduled)
    w.end_period(scheduled)
    return w


@pytest.fixture(scope="module")
def world() -> World:
    return full_world()


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerHandle]:
    with run_server(ServerState([world])) as handle:
        yield handle


@pytest.fixture
def api(server: ServerHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                      timeout=TIMEOUT_S) as client:
        yield client


@pytest.fixture
def sdk(server: ServerHandle) -> stripe.StripeClient:
    return stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": server.api_base},
                               http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)


def _event_differences(event: dict[str, Any]) -> list[str]:
    """The envelope against Stripe's event, and ``data.object`` against its resource."""
    obj = event["data"]["object"]
    envelope = copy.deepcopy(event)
    envelope["data"]["object"] = resources()["event"]["data"]["object"]  # compared on its own below
    return compare(envelope, "event") + compare(obj, obj["object"])


# ---- the oracle itself ------------------------------------------------------------------

def test_the_oracle_reports_a_price_id_where_stripe_sends_a_price_object(world: World) -> None:
    sub = PROFILE.event_object(next(e for e in world.events if e.type == "customer.subscription.created"))
    obj = sub["data"]["object"]
    assert compare(obj, "subscription") == []
    obj["items"]["data"][0]["price"] = obj["items"]["data"][0]["price"]["id"]  # the shape issue 15 reported
    del obj["items"]["data"][0]["subscription"]
    obj["status"] = None
    assert {d.split(" (")[0] for d in compare(obj, "subscription")} == {
        "subscription.status: null where Stripe sends string and stripe-python types it not Optional",
        "subscription_item.subscription: missing",
        "subscription_item.price: string where Stripe sends object",
    }


def test_every_documented_difference_names_a_reason() -> None:
    assert DOCUMENTED_DIFFERENCES and all(len(reason) > 20 for reason in DOCUMENTED_DIFFERENCES.values())


# ---- events -------------------------------------------------------------------------------

def test_the_world_emits_every_event_type_the_profile_sends(world: World) -> None:
    """invoice.payment_succeeded too: its script tells it as to an endpoint listing it."""
    assert {e.type for e in world.events} == set(StripeProfile(subscribed=STRIPE_OPTIONAL_EVENT_TYPES).event_types())


def test_subscriptions_go_through_every_status_stripe_has(world: World) -> None:
    """Every value stripe-python's ``Subscription.status`` takes, each in an event, and each
    move one Stripe makes (``incomplete`` to ``active`` once paid, to ``incomplete_expired``;
    ``past_due`` to ``unpaid`` and back to ``active`` once paid)."""
    literal = next(a for a in typing.get_args(stripe.Subscription.__annotations__["status"])
                   if typing.get_origin(a) is typing.Literal)
    subs = [e for e in world.events if e.object_type == "subscription"]
    assert {e.status for e in subs} == set(typing.get_args(literal))
    moves = {(e.previous_attributes or {}).get("status", e.status) + ">" + str(e.status)
             for e in subs if e.type == "customer.subscription.updated"}
    assert {"incomplete>active", "incomplete>incomplete_expired", "past_due>unpaid", "unpaid>active"} <= moves
    expired = next(e for e in subs if e.status == "incomplete_expired")
    invoice = world.get(world.get(expired.object_id)["latest_invoice"])
    assert (invoice["status"], expired.object["ended_at"] is not None) == ("void", True)


def test_every_event_has_stripes_shape(world: World) -> None:
    found: dict[str, str] = {}
    for event in world.events:
        for difference in _event_differences(PROFILE.event_object(event)):
            found.setdefault(difference, event.type)
    assert found == {}


def test_an_invoice_s_payment_events_have_stripes_shape_and_description(world: World) -> None:
    """Each invoice paid by a payment sends its charge's ``charge.succeeded`` and its intent's
    ``payment_intent.succeeded`` beside ``invoice.paid``, a failed one its intent's
    ``payment_intent.payment_failed`` beside ``invoice.payment_failed``: Stripe's shapes, the
    description Stripe gives a subscription's payment."""
    beside = [e for e in world.events if e.object_type in ("payment_intent", "charge")
              and e.object["description"] in ("Subscription creation", "Subscription update")]
    assert {e.type for e in beside} == set(INVOICE_PAYMENT_TYPES)
    assert {e.object["description"] for e in beside} == {"Subscription creation", "Subscription update"}
    for event in beside:
        rendered = PROFILE.event_object(event)
        assert _event_differences(rendered) == [], event.type
        if event.object_type == "charge":
            assert "invoice" not in rendered["data"]["object"]  # no field names the invoice from basil on


def test_every_event_has_stripes_shape_at_an_older_version() -> None:
    old = full_world(OLD_VERSION)
    found: dict[str, str] = {}
    for event in old.events:
        rendered = PROFILE.event_object(event)
        assert rendered["api_version"] == OLD_VERSION
        for difference in _event_differences(rendered):
            found.setdefault(difference, event.type)
    # the fields an older version has in place of the basil ones are not in the (latest) fixtures
    assert set(found) == {
        "charge.invoice: not in Stripe's object",
        "invoice.charge: not in Stripe's object",
        "invoice.paid: not in Stripe's object",
        "invoice.payment_intent: not in Stripe's object",
        "invoice.subscription_details: not in Stripe's object",
        "invoice.parent: missing (Stripe sends it)",
        "line_item.invoice_item: not in Stripe's object",
        "line_item.parent: missing (Stripe sends it)",
        "line_item.plan: not in Stripe's object",
        "line_item.price: not in Stripe's object",
        "line_item.pricing: missing (Stripe sends it)",
        "line_item.proration: not in Stripe's object",
        "line_item.subscription_item: not in Stripe's object",
        "line_item.type: not in Stripe's object",
        "subscription.current_period_end: not in Stripe's object",
        "subscription.current_period_start: not in Stripe's object",
        "subscription_item.current_period_end: missing (Stripe sends it)",
        "subscription_item.current_period_start: missing (Stripe sends it)",
    }


@pytest.mark.parametrize("api_version", ["2020-08-27", "2022-11-15", OLD_VERSION, "2025-02-24.acacia",
                                         "2025-03-31.basil", None])
def test_an_envelope_body_is_its_event_object_cut_to_its_version_byte_for_byte(api_version: str | None) -> None:
    # event_body renders the stored objects as they are unless one of them is of a kind the
    # version cuts: every event type of a full world, as copies of at_version would render it
    w = full_world(api_version)
    kinds = set()
    for event in w.events:
        assert PROFILE.event_body(event) == stripe_json(PROFILE.event_object(event)), event.type
        kinds.add(event.object["object"])
    assert {"payment_intent", "invoice", "subscription", "charge", "customer", "checkout.session"} <= kinds


@pytest.mark.parametrize(("api_version", "ui_mode"), [
    ("2024-06-20", "hosted"), ("2025-03-31.basil", "hosted"), ("2026-02-25.clover", "hosted"),
    ("2026-03-25.dahlia", "hosted_page"), (None, "hosted_page")])
def test_a_checkout_session_s_ui_mode_is_its_api_version_s(api_version: str | None, ui_mode: str) -> None:
    """2026-03-25.dahlia replaced ``hosted`` with ``hosted_page`` (and ``embedded``, ``custom`` with
    ``embedded_page``, ``elements``), removing the old values (docs.stripe.com/changelog/dahlia/
    2026-03-25/updates-available-checkout-session-ui-modes): stripe-node's types at dahlia refuse
    ``hosted``. Every session event and the provider API's answer carry the version's value."""
    w = full_world(api_version)
    sessions = [e for e in w.events if e.object["object"] == "checkout.session"]
    assert sessions
    for event in sessions:
        assert json.loads(PROFILE.event_body(event))["data"]["object"]["ui_mode"] == ui_mode, event.type
    served = at_version(w.get(sessions[0].object_id), api_version or LATEST_API_VERSION)
    assert served["ui_mode"] == ui_mode


def test_names_shaped_kind_finds_objects_of_the_kind_only() -> None:
    kinds = shaped_kinds(LATEST_API_VERSION)
    assert names_shaped_kind(stripe_json({"a": [{"object": "charge", "id": "ch_1"}]}), kinds)
    assert not names_shaped_kind(stripe_json({"object": "payment_intent", "latest_charge": "ch_1"}), kinds)
    # a string that spells the kind is not an object of it (JSON escapes its quotes)
    assert not names_shaped_kind(stripe_json({"note": '"object": "charge"', "object": "refund"}), kinds)
    assert not names_shaped_kind(stripe_json({"note": '"object":"charge"', "object": "refund"}), kinds)
    assert not names_shaped_kind(stripe_json({"xobject": "charge", "object": "charge_x"}), kinds)
    assert names_shaped_kind(stripe_json({"object": "subscription_item"}), shaped_kinds(OLD_VERSION))
    assert not names_shaped_kind(stripe_json({"object": "subscription_item"}), kinds)


def test_an_object_with_a_field_json_refuses_outside_the_version_is_still_rendered() -> None:
    # a value only at_version's cut removes: the envelope is rendered from the cut copy, as before
    w = World(SEED)
    event = w.lifecycle()[0]
    odd = dataclasses.replace(event, object={**event.object, "x_charge": {"object": "charge", "invoice": object()}})
    assert json.loads(PROFILE.event_body(odd))["data"]["object"] == {**event.object, "x_charge": {"object": "charge"}}


def test_invoice_links_follow_the_api_version() -> None:
    for version, old_shape in ((OLD_VERSION, True), ("2025-03-31.basil", False), (LATEST_API_VERSION, False)):
        w = World(SEED, api_version=version)
        customer = w.event(w.create_customer()).object_id
        sub = w.subscribe(customer)
        paid = next(e for e in w.events if e.type == "invoice.paid")
        invoice = PROFILE.event_object(paid)["data"]["object"]
        subscription = PROFILE.event_object(w.events[-1])["data"]["object"]
        if old_shape:
            assert invoice["subscription"] == sub and invoice["paid"] is True
            assert invoice["payment_intent"].startswith("pi_") and invoice["charge"].startswith("ch_")
            assert "parent" not in invoice
            assert subscription["current_period_end"] > subscription["current_period_start"]
            assert "current_period_end" not in subscription["items"]["data"][0]
        else:
            assert invoice["parent"]["subscription_details"]["subscription"] == sub
            assert not {"subscription", "payment_intent", "charge", "paid"} & set(invoice)
            assert "current_period_end" not in subscription
            assert subscription["items"]["data"][0]["current_period_end"] > 0


def test_account_is_sent_only_on_connect_events() -> None:
    platform = World(SEED)
    platform.create_customer()
    assert "account" not in PROFILE.event_object(platform.events[0])
    connected = World(SEED, account="acct_1ConnectedAccount00")
    connected.create_customer()
    assert PROFILE.event_object(connected.events[0])["account"] == "acct_1ConnectedAccount00"


@pytest.mark.parametrize(("version", "context"), [("2025-04-30.basil", True), (LATEST_API_VERSION, True),
                                                  ("2025-03-31.basil", False), ("2024-06-20", False)])
def test_a_connect_event_carries_context_from_2025_04_30(version: str, context: bool) -> None:
    """docs.stripe.com/changelog/basil/2025-04-30/additional-context-organization-events:
    "Connect events include both the context and account fields" (stripe-python's Event
    declares ``context``); a platform's own event has neither."""
    assert "context" in stripe.Event.__annotations__
    connected = World(SEED, account="acct_1ConnectedAccount00")
    connected.create_customer()
    body = json.loads(PROFILE.event_body(dataclasses.replace(connected.events[0], api_version=version)))
    assert body.get("context") == ("acct_1ConnectedAccount00" if context else None)
    assert list(body)[:5] == ["id", "object", "account", "api_version", "context" if context else "created"]
    parsed = stripe.Event.construct_from(body, "sk_test_x")
    assert (parsed["context"] if "context" in parsed else None) == body.get("context")
    platform = World(SEED)
    platform.create_customer()
    assert "context" not in PROFILE.event_object(platform.events[0], api_version=version)


def test_the_stripe_sdk_parses_every_event(world: World) -> None:
    for event in world.events:
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        parsed = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)
        assert (parsed.id, parsed.type) == (event.id, event.type)
        obj = parsed.data.object
        assert obj.id == event.object_id
        if obj.object == "subscription":
            price = obj["items"].data[0].price
            assert price.id.startswith("price_") and price.object == "price" and price.unit_amount > 0


def _literals(annotation: Any) -> set[str]:
    """The string values a stripe-python field annotation's ``Literal`` lists."""
    out: set[str] = set()
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Literal:
            out |= set(typing.get_args(arg))
    return out


def test_a_subscription_mode_session_completes_as_stripe_types_it(world: World) -> None:
    """Every completed subscription-mode session, parsed by stripe-python from its webhook body:
    its enum fields take values stripe-python's ``checkout.Session`` lists, it names its
    subscription and (when paid) that subscription's first invoice, has no payment intent, and
    says ``paid``, or ``no_payment_required`` on a trial."""
    sessions = [e for e in world.events if e.type == "checkout.session.completed"
                and e.object["mode"] == "subscription"]
    assert len(sessions) >= 3  # the lifecycle's, the receiver-style one and the trial
    annotations = stripe.checkout.Session.__annotations__
    seen = set()
    for event in sessions:
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        session = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None).data.object
        assert isinstance(session, stripe.checkout.Session)
        for field in ("mode", "payment_status", "customer_creation", "payment_method_collection", "status"):
            value = session[field]
            assert value is None or value in _literals(annotations[field]), (field, value)
        sub = world.get(session.subscription)
        assert (session.mode, session.status, session.payment_intent) == ("subscription", "complete", None)
        assert session.subscription.startswith("sub_") and session.customer == sub["customer"]
        assert session.customer_details.email == world.get(session.customer)["email"]
        assert session.payment_method_collection == "always" and session.invoice_creation is None
        if session.payment_status == "paid":
            first = world.get(session.invoice)  # the subscription's first invoice, paid
            assert (first["subscription"], first["billing_reason"], first["status"]) == (
                session.subscription, "subscription_create", "paid")
            assert session.amount_total == first["amount_paid"] > 0
            assert event.business_key == f"provision:{session.id}"
        else:
            # Stripe's trial: "An immediate invoice is still created, but for $0" (billing/subscriptions/trials)
            first = world.get(session.invoice)
            assert (session.payment_status, session.amount_total) == ("no_payment_required", 0)
            assert (first["subscription"], first["billing_reason"], first["status"], first["amount_due"],
                    first["amount_paid"], first["charge"], first["payment_intent"]) == (
                session.subscription, "subscription_create", "paid", 0, 0, None, None)
            assert sub["status"] == "trialing" and sub["metadata"] == {"seat": "2"}
            assert sub["latest_invoice"] == first["id"]
        seen.add(session.payment_status)
    assert seen == {"paid", "no_payment_required"}


def test_only_an_open_session_has_a_url(world: World) -> None:
    """stripe-python's ``checkout.Session.url``: "This value is only present when the session is
    active": every session event of the world (both modes, paid, delayed, expired) carries its
    ``url`` while ``open`` alone; a completed session's was still there."""
    import inspect

    doc = inspect.getsource(stripe.checkout.Session).split("\n    url: Optional[str]\n", 1)[1].split('"""')[1]
    assert "This value is only present when the session is active" in " ".join(doc.split())
    sessions = [e.object for e in world.events if e.object_type == "checkout.session"]
    statuses = {s["status"] for s in sessions}
    assert {"complete", "expired"} <= statuses and len(sessions) >= 5
    assert [(s["status"], s["url"] is not None) for s in sessions if (s["url"] is not None) != (s["status"] == "open")] \
        == []


def test_a_subscription_mode_session_a_saas_opens_through_the_sdk_is_provisioned() -> None:
    """A SaaS opens a subscription-mode session with stripe-python (``client_reference_id``, its
    ``subscription_data``); completing it delivers a ``checkout.session.completed`` naming the
    subscription that carries ``subscription_data.metadata``, which the SDK then retrieves."""
    world = World(SEED + 2)
    price = world.create_price()
    receiver = ShopReceiver()
    with run_server(ServerState([world])) as provider, serve_app(receiver.app) as shop:
        client = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": provider.api_base},
                                     http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
        session = client.v1.checkout.sessions.create(params={
            "mode": "subscription", "customer_email": "ada@example.com", "client_reference_id": "user-42",
            "metadata": {"cart": "c-1"}, "line_items": [{"price": price, "quantity": 1}],
            "subscription_data": {"metadata": {"user": "42"}},
            "success_url": "https://saas.example/ok", "cancel_url": "https://saas.example/cancel",
        })
        assert (session.mode, session.status, session.customer_creation, session.subscription) == (
            "subscription", "open", "always", None)
        with pytest.raises(stripe.InvalidRequestError, match="subscription_data"):
            client.v1.checkout.sessions.create(params={
                "mode": "payment", "line_items": [{"price": world.create_price(interval=None)}],
                "subscription_data": {"trial_period_days": 7}})
        with pytest.raises(stripe.InvalidRequestError, match="You can not pass `payment_intent_data` in `subscription`"):
            client.v1.checkout.sessions.create(params={
                "mode": "subscription", "line_items": [{"price": price}],
                "payment_intent_data": {"metadata": {"order": "o-1"}}})
        one_off = client.v1.checkout.sessions.create(params={
            "mode": "payment", "line_items": [{"price": world.create_price(interval=None)}],
            "metadata": {"cart": "c-2"}, "payment_intent_data": {"metadata": {"order": "o-2"}}})
        assert provider.state is not None
        with provider.state.lock:
            events = world.complete_checkout(session.id)
        completed = [e for e in events if e.type == "checkout.session.completed"]
        history = History()

        async def deliver() -> None:
            async with Dispatcher(Target(url=shop.url + "/webhooks"), PROFILE, [SECRET], history) as d:
                await d.run(schedule(completed, FaultPlan()))

        asyncio.run(deliver())
        assert [a.outcome for a in history] == [Outcome.ACKED]
        assert receiver.completed == {session.id: ("user-42", {"cart": "c-1"})}
        again = client.v1.checkout.sessions.retrieve(session.id, params={"expand": ["subscription"]})
        assert (again.payment_status, again.payment_intent) == ("paid", None)
        assert (again.subscription.status, again.subscription.metadata.to_dict()) == ("active", {"user": "42"})
        with provider.state.lock:
            world.complete_checkout(one_off.id)
        paid = client.v1.checkout.sessions.retrieve(one_off.id, params={"expand": ["payment_intent"]})
        assert (paid.metadata.to_dict(), paid.payment_intent.metadata.to_dict()) == ({"cart": "c-2"}, {"order": "o-2"})
        assert again.invoice == again.subscription.latest_invoice
        assert [e.type for e in events] == ["customer.created", "customer.subscription.created", "invoice.created",
                                            "invoice.paid", "customer.subscription.updated",
                                            "checkout.session.completed"]


@pytest.mark.parametrize(("api_version", "has_refunds"), [
    ("2020-08-27", True), ("2022-08-01", True), ("2022-11-15", False), (OLD_VERSION, False), (None, False)])
def test_a_charge_carries_its_refunds_list_only_before_2022_11_15(api_version: str | None,
                                                                   has_refunds: bool) -> None:
    """Stripe's changelog for 2022-11-15 ("The ``Charge`` object no longer auto-expands
    refunds", docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand); stripe-node
    types the field ``refunds?`` and stripe-python ``Optional``, as the other fields present only
    when expanded. A ``charge.refunded`` webhook, never expanded, has no ``refunds`` from that
    version on (a receiver reads ``amount_refunded``); before it the list is in the charge,
    newest refund first, in the shape of Stripe's example charge's list."""
    w = World(SEED, api_version=api_version)
    w.lifecycle()
    events = [e for e in w.events if e.type == "charge.refunded"]
    assert len(events) == 2
    for event in events:
        envelope = PROFILE.envelope(event)
        body = json.loads(envelope.body)
        charge = body["data"]["object"]
        assert ("refunds" in charge) is has_refunds
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        parsed = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)
        assert parsed.data.object.amount_refunded == charge["amount_refunded"] > 0
        assert ("refunds" in parsed.data.object) is has_refunds
        if has_refunds:
            fixture = resources()["charge"]["refunds"]
            assert set(charge["refunds"]) == set(fixture) and charge["refunds"]["url"].endswith("/refunds")
            refunds = charge["refunds"]["data"]
            assert sum(r["amount"] for r in refunds) == charge["amount_refunded"]
            assert [compare(r, "refund") for r in refunds] == [[]] * len(refunds)
            assert parsed.data.object.refunds.data[0].id == refunds[0]["id"]


def test_a_charge_from_the_api_has_its_refunds_only_when_expanded(api: httpx.Client, sdk: stripe.StripeClient,
                                                                   world: World) -> None:
    """``GET /v1/charges/{id}`` at the world's version (from 2022-11-15) has no ``refunds``;
    ``expand[]=refunds`` adds the list, in the shape of Stripe's example charge's, each refund
    of Stripe's shape; an older ``Stripe-Version`` has it unasked."""
    charge = next(c for c in world.objects("charge") if world.get(c)["amount_refunded"])
    plain = api.get(f"/v1/charges/{charge}").json()
    assert "refunds" not in plain and plain["amount_refunded"] > 0
    expanded = api.get(f"/v1/charges/{charge}", params={"expand[]": "refunds"}).json()
    refunds = expanded.pop("refunds")
    assert expanded == plain
    assert set(refunds) == set(resources()["charge"]["refunds"]) and refunds["object"] == "list"
    assert [r["id"] for r in refunds["data"]] == [r["id"] for r in world.get(charge)["refunds"]["data"]]
    assert sum(r["amount"] for r in refunds["data"]) == plain["amount_refunded"]
    assert all(compare(r, "refund") == [] for r in refunds["data"])
    listed = api.get("/v1/charges", params={"expand[]": "data.refunds"}).json()["data"]
    assert all(c["refunds"]["object"] == "list" for c in listed)
    old = api.get(f"/v1/charges/{charge}", headers={"Stripe-Version": "2020-08-27"}).json()
    assert [r["id"] for r in old["refunds"]["data"]] == [r["id"] for r in refunds["data"]]
    by_sdk = sdk.v1.charges.retrieve(charge, params={"expand": ["refunds"]})
    assert [r.id for r in by_sdk.refunds.data] == [r["id"] for r in refunds["data"]]
    assert "refunds" not in sdk.v1.charges.retrieve(charge)


def test_a_plan_change_is_an_update_whose_previous_attributes_hold_the_old_items_whole(world: World) -> None:
    """A plan change (``World.change_plan``) is a ``customer.subscription.updated`` whose
    ``previous_attributes`` holds only ``items.data``, that array whole, each item a full
    ``subscription_item`` of Stripe's shape with the old price (Stripe's Event reference: "If an
    array attribute has any updated elements, this object contains the entire array"; the
    list's ``object``, ``url``, ``has_more`` did not change). The SDK reads the old price where a
    receiver would: ``event.data.previous_attributes["items"]["data"][0]["price"]["id"]``."""
    changes = [e for e in world.events if e.type == "customer.subscription.updated"  # not a renewal's items
               and "items" in (e.previous_attributes or {})
               and e.previous_attributes["items"]["data"][0]["price"]["id"] != e.object["items"]["data"][0]["price"]["id"]]
    assert changes
    for event in changes:
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        parsed = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)
        previous = parsed.data.previous_attributes.to_dict()
        assert set(previous) == {"items"} and set(previous["items"]) == {"data"}
        (old,) = json.loads(envelope.body)["data"]["previous_attributes"]["items"]["data"]
        assert compare(old, "subscription_item") == []
        now = parsed.data.object["items"].data[0]
        assert previous["items"]["data"][0]["id"] == now.id  # the same item, moved to another price
        assert previous["items"]["data"][0]["price"]["id"] != now.price.id
        assert old["plan"]["id"] == old["price"]["id"] and now.plan.id == now.price.id


def _unchanged(before: Any, now: Any, path: str) -> list[str]:
    """The paths of `before` (a ``previous_attributes`` value) equal to `now` (the object's)."""
    if isinstance(before, dict) and isinstance(now, dict):
        if not before:
            return [f"{path}: an empty hash"]
        return [p for key, value in before.items()
                for p in (_unchanged(value, now[key], f"{path}.{key}") if key in now else [f"{path}.{key}: absent"])]
    return [f"{path}: unchanged ({json.dumps(before)[:40]})"] if before == now else []


def _previous_attribute_problems(events: Any) -> list[str]:
    """Every way the sent ``previous_attributes`` differ from Stripe's Event reference
    (docs.stripe.com/api/events/object: "Object containing the names of the updated attributes
    and their values prior to the event (only included in events of type ``*.updated``)"): an
    entry whose value did not change, a field the object does not have, an update without
    one, another type with one (``charge.refunded`` is `DOCUMENTED_DIFFERENCES`'s exception)."""
    problems = []
    for event in events:
        data = json.loads(PROFILE.event_body(event))["data"]
        previous = data.get("previous_attributes")
        if previous is None:
            if event.type.endswith(".updated"):
                problems.append(f"{event.type}: no previous_attributes")
            continue
        if not event.type.endswith(".updated") and event.type != "charge.refunded":
            problems.append(f"{event.type}: previous_attributes on an event that is not an update")
        problems += [f"{event.type} {p}" for p in _unchanged(previous, data["object"], "previous_attributes")]
    return problems


@pytest.mark.parametrize("api_version", ["2020-08-27", OLD_VERSION, None])
def test_previous_attributes_hold_only_what_changed(api_version: str | None) -> None:
    w = full_world(api_version)
    assert {e.type for e in w.events if e.previous_attributes} >= {"customer.subscription.updated",
                                                                    "charge.refunded"}
    assert _previous_attribute_problems(w.events) == []


def test_previous_attributes_hold_only_what_changed_in_every_catalog_story() -> None:
    from hookproof.scenarios.catalog import CATALOG, Context

    ctx = Context(profile=PROFILE)
    events = []
    for number, scenario in enumerate(CATALOG.values()):
        w = World(100 + number)
        scenario.plan(ctx, w)
        events += w.events
    assert sum(1 for e in events if e.type == "customer.subscription.updated") > 10
    assert _previous_attribute_problems(events) == []


def test_a_renewal_update_names_what_a_renewal_changes_at_each_version() -> None:
    """A paid renewal leaves the status ``active``: its ``customer.subscription.updated`` has
    no ``status`` in ``previous_attributes``, but the new invoice and the period, where the
    version keeps the period: on the subscription before basil, on each item (the items array
    whole) from it (docs.stripe.com/changelog/basil)."""
    for version, period_keys in ((OLD_VERSION, {"current_period_start", "current_period_end"}), (None, {"items"})):
        w = World(SEED, api_version=version)
        customer = w.create_customer()
        sub = w.subscribe(w._event_of(customer).object_id)
        invoice = w.renew(sub)
        event = w.events[-1]
        assert (event.type, event.status) == ("customer.subscription.updated", "active")
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        parsed = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)
        previous = parsed.data.previous_attributes.to_dict()
        assert set(previous) == {"latest_invoice"} | period_keys, version
        assert previous["latest_invoice"] != invoice == parsed.data.object.latest_invoice


def test_only_update_events_and_charge_refunded_carry_previous_attributes(world: World) -> None:
    """Stripe's Event reference: ``previous_attributes`` is "only included in events of type
    ``*.updated``": a deleted, paused or resumed subscription has none. ``charge.refunded`` keeps
    the refund's ``amount_refunded`` before it (`DOCUMENTED_DIFFERENCES`)."""
    carrying = {e.type for e in world.events if "previous_attributes" in json.loads(PROFILE.event_body(e))["data"]}
    assert carrying == {"customer.subscription.updated", "charge.dispute.updated", "refund.updated", "charge.refunded"}
    for event in (e for e in world.events if e.type == "charge.refunded"):
        before = event.previous_attributes["amount_refunded"]
        assert 0 <= before < event.object["amount_refunded"]


# ---- the provider API ---------------------------------------------------------------------

def test_every_api_answer_has_stripes_shape(api: httpx.Client, world: World) -> None:
    found: dict[str, str] = {}
    for path, object_type in RESOURCES.items():
        if object_type == "event":
            continue
        for object_id in world.objects(object_type):
            answer = api.get(f"/v1/{path}/{object_id}")
            assert answer.status_code == 200, answer.text
            for difference in compare(answer.json(), object_type):
                found.setdefault(difference, object_id)
        listed = api.get(f"/v1/{path}", params={"limit": 100})
        assert listed.status_code == 200 and len(listed.json()["data"]) == len(world.objects(object_type))
    account = api.get(f"/v1/accounts/{world.account}")
    assert account.status_code == 200
    assert compare(account.json(), "account") == []
    assert found == {}


def test_api_answers_follow_the_stripe_version_header(api: httpx.Client, world: World) -> None:
    invoice = world.objects("invoice")[0]
    sub = world.get(invoice)["subscription"]
    old = api.get(f"/v1/invoices/{invoice}", headers={"Stripe-Version": "2020-08-27"}).json()
    new = api.get(f"/v1/invoices/{invoice}").json()
    assert old["subscription"] == sub and "parent" not in old
    assert new["parent"]["subscription_details"]["subscription"] == sub and "subscription" not in new
    bad = api.get(f"/v1/invoices/{invoice}", headers={"Stripe-Version": "latest please"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "Stripe-Version"


@pytest.mark.parametrize(("path", "kind", "expand", "check"), [
    ("invoices", "invoice", ["discounts", "lines.data.discounts"], lambda o: o["discounts"] == []),
    ("invoices", "invoice", ["payments.data.payment.payment_intent"],
     lambda o: o["payments"]["data"][0]["payment"]["payment_intent"]["object"] == "payment_intent"),
    ("prices", "price", ["currency_options", "product", "tiers"],
     lambda o: o["product"]["object"] == "product" and o["currency_options"][o["currency"]]["unit_amount"] > 0),
    ("subscriptions", "subscription", ["items.data.price.product", "latest_invoice", "customer"],
     lambda o: o["items"]["data"][0]["price"]["product"]["object"] == "product"
     and o["latest_invoice"]["object"] == "invoice" and o["customer"]["object"] == "customer"),
    ("checkout/sessions", "checkout.session", ["line_items", "payment_intent.latest_charge"],
     lambda o: o["line_items"]["data"][0]["object"] == "item"),
    ("checkout/sessions", "checkout.session",  # what dj-stripe asks for every session
     ["line_items.data.discounts", "line_items.data.taxes", "total_details.breakdown"],
     lambda o: o["line_items"]["data"][0]["discounts"] == [] and o["total_details"]["breakdown"] == {
         "discounts": [], "taxes": []}),
    ("customers", "customer", ["subscriptions", "invoice_settings.default_payment_method", "tax_ids"],
     lambda o: o["subscriptions"]["object"] == "list"
     and o["invoice_settings"]["default_payment_method"]["object"] == "payment_method"),
])
def test_expand_as_receivers_ask_for_it(api: httpx.Client, world: World, path: str, kind: str,
                                        expand: list[str], check: Any) -> None:
    object_id = next(oid for oid in world.objects(kind) if kind != "checkout.session"
                     or world.get(oid)["payment_intent"])
    answer = api.get(f"/v1/{path}/{object_id}", params=[("expand[]", e) for e in expand])
    assert answer.status_code == 200, answer.text
    obj = answer.json()
    assert check(obj)
    differences = []
    for field in INCLUDABLE.get(kind, ()):  # fields Stripe adds only when asked: not in the fixtures
        included = obj.pop(field, None)
        for item in included.get("data", []) if isinstance(included, dict) else []:
            for extra in INCLUDABLE.get(item["object"], ()):
                item.pop(extra, None)
            differences += compare(item, item["object"])
    if isinstance(obj.get("total_details"), dict):  # an includable hash inside the session
        obj["total_details"].pop("breakdown", None)
    assert compare(obj, kind) + differences == []


def test_sub_lists_page_the_parents_own_items(api: httpx.Client, world: World) -> None:
    invoice = world.objects("invoice")[0]
    lines = api.get(f"/v1/invoices/{invoice}/lines", params={"limit": 1}).json()
    assert (lines["object"], lines["url"], lines["has_more"]) == ("list", f"/v1/invoices/{invoice}/lines", False)
    assert lines["data"] == api.get(f"/v1/invoices/{invoice}").json()["lines"]["data"]
    charge = next(c for c in world.objects("charge") if world.get(c)["amount_refunded"])
    refunds = api.get(f"/v1/charges/{charge}/refunds").json()["data"]
    assert [r["id"] for r in refunds] == [r["id"] for r in world.get(charge)["refunds"]["data"]] and refunds
    session = world.objects("checkout.session")[0]
    items = api.get(f"/v1/checkout/sessions/{session}/line_items").json()["data"]
    assert [compare(i, "item") for i in items] == [[]]
    assert api.get(f"/v1/products/{world.objects('product')[0]}/features").json()["data"] == []
    missing = api.get("/v1/invoices/in_nope0000000000000000/lines")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "resource_missing"


def _sdk_annotation(cls: type | None, key: str) -> Any:
    for klass in cls.__mro__ if cls is not None else ():
        annotation = vars(klass).get("__annotations__", {}).get(key)
        if annotation is not None:
            return annotation
    return None


def _leaves(annotation: Any) -> list[Any]:
    todo, out = [annotation], []
    while todo:
        t = todo.pop()
        args = typing.get_args(t)
        todo.extend(args) if args else out.append(t)
    return out


def _id_fields(obj: dict[str, Any], cls: type | None, at: str = "") -> Iterator[tuple[str, str, bool]]:
    """(dotted path, value, expandable per stripe-python) of every string field of `obj`
    (and of the hashes and first list items inside it): ``ExpandableField[...]`` is
    ``Union[str, <resource>]``, a plain id is ``str``."""
    for key, value in obj.items():
        leaves = _leaves(_sdk_annotation(cls, key))
        path = f"{at}.{key}" if at else key
        classes = [getattr(stripe, c.__forward_arg__, None) if isinstance(c, typing.ForwardRef) else c for c in leaves]
        inner = next((c for c in classes if isinstance(c, type) and issubclass(c, stripe.StripeObject)
                      and c is not stripe.ListObject), None)
        if isinstance(value, str) and key != "id":
            yield path, value, str in leaves and any(isinstance(c, typing.ForwardRef) for c in leaves)
        elif isinstance(value, dict) and inner is not None:
            items = value.get("data", [])[:1] if value.get("object") == "list" else [value]
            for item in items:
                yield from _id_fields(item, inner, path + ".data" if value.get("object") == "list" else path)


def test_a_field_expands_exactly_where_stripe_python_types_it_expandable(api: httpx.Client, world: World) -> None:
    """Every field of every served object that holds another object's id (up to Stripe's four
    levels): expanded where stripe-python types it ``ExpandableField``, a 400 where it is a
    plain id string (a charge's ``payment_method``, a subscription item's ``subscription``)."""
    from tests.simulator.stripe_oracle import _sdk_class

    ids = {oid for kind in set(RESOURCES.values()) - {"event"} for oid in world.objects(kind)}
    wrong: set[tuple[str, str, bool, int]] = set()
    checked = 0
    for path, kind in RESOURCES.items():
        if kind == "event":
            continue
        for object_id in world.objects(kind):
            obj = api.get(f"/v1/{path}/{object_id}").json()
            for field, value, expandable in _id_fields(obj, _sdk_class(kind)):
                if value not in ids or len(field.split(".")) > 4:
                    continue
                answer = api.get(f"/v1/{path}/{object_id}", params={"expand[]": field})
                checked += 1
                if (answer.status_code == 200) != expandable:
                    wrong.add((kind, field, expandable, answer.status_code))
    assert checked > 100 and wrong == set()


def test_a_field_that_is_not_expandable_is_refused(api: httpx.Client, world: World) -> None:
    answer = api.get(f"/v1/prices/{world.objects('price')[0]}", params={"expand[]": "unit_amount"})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "expand"
    lines = f"/v1/invoices/{world.objects('invoice')[0]}/lines"  # a hash's plain id, in a list's items
    assert api.get(lines, params={"expand[]": "data.pricing.price_details.price"}).status_code == 200
    refused = api.get(lines, params={"expand[]": "data.pricing.price_details.product"})
    assert (refused.status_code, refused.json()["error"]["message"]) == (
        400, "This property cannot be expanded (data.pricing.price_details.product).")


def test_the_sdk_pages_lists_and_expands(sdk: stripe.StripeClient, world: World) -> None:
    subs = list(sdk.v1.subscriptions.list(params={"limit": 2}).auto_paging_iter())
    assert [s.id for s in subs] == list(reversed(world.objects("subscription")))
    sub = sdk.v1.subscriptions.retrieve(subs[-1].id, params={"expand": ["items.data.price.product"]})
    assert sub["items"].data[0].price.product.object == "product"
    invoice = sdk.v1.invoices.retrieve(world.objects("invoice")[0], params={"expand": ["discounts",
                                                                                        "lines.data.discounts"]})
    assert invoice.lines.data[0].pricing.price_details.price.startswith("price_")
    account = sdk.v1.accounts.retrieve(world.account)
    assert account.id == world.account and account.charges_enabled is True
    paid = next(s.id for s in subs if s.latest_invoice and world.get(s.latest_invoice)["status"] == "paid")
    by_sub = sdk.v1.invoices.list(params={"subscription": paid, "status": "paid"})
    assert by_sub.data and all(i.parent.subscription_details.subscription == paid for i in by_sub.data)


# ---- objects a receiver creates -----------------------------------------------------------

class ShopReceiver:
    """A shop's webhook endpoint written from Stripe's docs: verifies with the SDK and
    records the ``client_reference_id`` and metadata of each completed session."""

    def __init__(self) -> None:
        self.completed: dict[str, tuple[str | None, dict[str, str]]] = {}
        self.lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/webhooks")(self.handle)

    async def handle(self, request: Request) -> Response:
        try:
            event = stripe.Webhook.construct_event(await request.body(),
                                                   request.headers.get("stripe-signature", ""), SECRET)
        except (stripe.SignatureVerificationError, ValueError):
            return Response(status_code=400)
        if event.type == "checkout.session.completed":
            session = event.data.object
            with self.lock:
                self.completed[session.id] = (session.client_reference_id, session.metadata.to_dict())
        return Response(status_code=200)


def test_a_session_the_shop_creates_through_the_sdk_is_completed_and_delivered() -> None:
    world = World(SEED + 1)
    price = world.create_price(interval=None)
    receiver = ShopReceiver()
    with run_server(ServerState([world])) as provider, serve_app(receiver.app) as shop:
        client = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": provider.api_base},
                                     http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
        customer = client.v1.customers.create(params={"email": "ada@example.com", "metadata": {"crm": "42"}})
        session = client.v1.checkout.sessions.create(params={
            "mode": "payment", "customer": customer.id, "client_reference_id": "order-1001",
            "metadata": {"cart": "c-9"}, "line_items": [{"price": price, "quantity": 3}],
            "success_url": "https://shop.example/ok", "cancel_url": "https://shop.example/cancel",
        })
        assert (session.status, session.client_reference_id, session.amount_total) == (
            "open", "order-1001", 3 * world.get(price)["unit_amount"])
        assert world.get(customer.id)["metadata"] == {"crm": "42"}
        assert provider.state is not None
        with provider.state.lock:  # hookproof completes the session the shop opened
            events = world.complete_checkout(session.id)
        completed = [e for e in events if e.type == "checkout.session.completed"]
        history = History()

        async def deliver() -> None:
            async with Dispatcher(Target(url=shop.url + "/webhooks"), PROFILE, [SECRET], history) as d:
                await d.run(schedule(completed, FaultPlan()))

        asyncio.run(deliver())
        assert [a.outcome for a in history] == [Outcome.ACKED]
        assert receiver.completed == {session.id: ("order-1001", {"cart": "c-9"})}
        again = client.v1.checkout.sessions.retrieve(session.id, params={"expand": ["payment_intent"]})
        assert (again.status, again.payment_status, again.payment_intent.status) == ("complete", "paid", "succeeded")
        charge = again.payment_intent.latest_charge
        refund = client.v1.refunds.create(params={"charge": charge, "amount": 100, "metadata": {"ticket": "t-1"}})
        assert (refund.amount, refund.metadata.to_dict()) == (100, {"ticket": "t-1"})
        refunded = [e for e in world.events if e.type == "charge.refunded"]
        assert [(e.object_id, e.object["amount_refunded"]) for e in refunded] == [(charge, 100)]
        sub = client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price":
                                                     world.create_price()}], "metadata": {"seat": "5"}})
        assert sub.status == "active" and sub["items"].data[0].price.object == "price"
        created = next(e for e in world.events if e.type == "customer.subscription.created")
        assert created.object["metadata"] == {"seat": "5"}


def test_a_default_incomplete_subscription_waits_for_its_first_payment() -> None:
    """Stripe's recommended subscription flow (docs.stripe.com/billing/subscriptions/build-subscriptions):
    ``payment_behavior=default_incomplete`` creates the subscription ``incomplete`` with its first
    invoice open and unattempted, and hands the client the invoice's ``confirmation_secret``
    (before basil, ``latest_invoice.payment_intent``); paying it makes the subscription active."""
    world = World(SEED + 2)
    with run_server(ServerState([world])) as provider:
        client = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": provider.api_base},
                                     http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
        customer = client.v1.customers.create(params={"email": "ada@example.com"}).id
        before = len(world.events)
        sub = client.v1.subscriptions.create(params={
            "customer": customer, "items": [{"price": world.create_price()}], "payment_behavior": "default_incomplete",
            "expand": ["latest_invoice.confirmation_secret"]})
        invoice = sub.latest_invoice
        assert (sub.status, invoice.status, invoice.attempt_count) == ("incomplete", "open", 0)
        intent = world.get(world.get(invoice.id)["payment_intent"])
        assert (intent["status"], invoice.confirmation_secret.to_dict()) == (
            "requires_payment_method", {"client_secret": intent["client_secret"], "type": "payment_intent"})
        assert [e.type for e in world.events[before:]] == [
            "customer.subscription.created", "invoice.created", "customer.subscription.updated"]
        old = httpx.get(f"{provider.url}/v1/subscriptions/{sub.id}", params={"expand[]": "latest_invoice.payment_intent"},
                        headers={"Authorization": f"Bearer {DEFAULT_API_KEY}", "Stripe-Version": OLD_VERSION},
                        timeout=TIMEOUT_S).json()
        assert old["latest_invoice"]["payment_intent"]["client_secret"] == intent["client_secret"]
        refused = httpx.get(f"{provider.url}/v1/invoices/{invoice.id}", params={"expand[]": "confirmation_secret"},
                            headers={"Authorization": f"Bearer {DEFAULT_API_KEY}", "Stripe-Version": OLD_VERSION},
                            timeout=TIMEOUT_S)
        assert refused.status_code == 400  # a basil field
        assert provider.state is not None
        with provider.state.lock:
            world.retry_invoice(invoice.id, pay=True)  # the customer confirms the payment
        assert client.v1.subscriptions.retrieve(sub.id).status == "active"
        bad = httpx.post(f"{provider.url}/v1/subscriptions", headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                         data={"customer": customer, "items[0][price]": world.create_price(),
                               "payment_behavior": "sometimes"}, timeout=TIMEOUT_S)
        assert (bad.status_code, bad.json()["error"]["param"]) == (400, "payment_behavior")
    for event in world.events[before:]:
        assert _event_differences(PROFILE.event_object(event)) == []


def test_a_payment_intent_the_shop_creates_through_the_sdk_is_confirmed_by_the_story() -> None:
    """A shop creating its own intents (stripe-python ``payment_intents.create``, form-encoded as
    the SDK sends it): the intent is ``requires_payment_method`` in Stripe's shape, an
    ``Idempotency-Key`` replays it, ``confirm=true`` is refused naming the parameter, and once
    bound the story's payment confirms *that* intent: its events and its charge carry the
    shop's metadata, description and receipt email (Stripe copies them to the charge at
    confirmation)."""
    world = World(SEED + 3)
    with run_server(ServerState([world])) as provider:
        client = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": provider.api_base},
                                     http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
        customer = client.v1.customers.create(params={"email": "ada@example.com"}).id
        params: dict[str, Any] = {"amount": 2500, "currency": "usd", "customer": customer,
                                  "metadata": {"order_id": "ord-1"}, "description": "Order ord-1",
                                  "automatic_payment_methods": {"enabled": True}, "receipt_email": "ada@example.com"}
        intent = client.v1.payment_intents.create(params=params, options={"idempotency_key": "ord-1"})
        assert (intent.status, intent.amount, intent.currency, intent.customer, intent.metadata.to_dict(),
                intent.latest_charge, intent.automatic_payment_methods.enabled) == (
            "requires_payment_method", 2500, "usd", customer, {"order_id": "ord-1"}, None, True)
        assert intent.client_secret.startswith(f"{intent.id}_secret_")
        again = client.v1.payment_intents.create(params=params, options={"idempotency_key": "ord-1"})
        assert again.id == intent.id and world.receiver_intents == [intent.id]
        guest = client.v1.payment_intents.create(params={"amount": 900, "currency": "brl",
                                                         "payment_method_types": ["card"],
                                                         "metadata": {"order_id": "ord-2"}})
        assert (guest.customer, guest.payment_method_types, guest.automatic_payment_methods) == (None, ["card"], None)
        refused = httpx.post(f"{provider.url}/v1/payment_intents", headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                             data={"amount": "2500", "currency": "usd", "confirm": "true"}, timeout=TIMEOUT_S)
        assert (refused.status_code, refused.json()["error"]["param"]) == (400, "confirm")
        assert world.receiver_intents == [intent.id, guest.id]
        assert provider.state is not None
        with provider.state.lock:
            before = len(world.events)
            world.bind_receiver_creates(["payment_intent"])
            paid = world.pay(world.objects("customer")[0])
            declined = world.fail_payment(world.objects("customer")[0])
            charge = world.retry_payment(declined)
        assert (paid, declined) == (intent.id, guest.id)
        retrieved = client.v1.payment_intents.retrieve(intent.id, params={"expand": ["latest_charge"]})
        assert (retrieved.status, retrieved.latest_charge.metadata.to_dict(), retrieved.latest_charge.description,
                retrieved.latest_charge.receipt_email, retrieved.latest_charge.amount) == (
            "succeeded", {"order_id": "ord-1"}, "Order ord-1", "ada@example.com", 2500)
        assert client.v1.charges.retrieve(charge).customer is None  # a guest's payment
    events = world.events[before:]
    assert [(e.type, e.object.get("metadata")) for e in events] == [
        ("payment_intent.succeeded", {"order_id": "ord-1"}), ("charge.succeeded", {"order_id": "ord-1"}),
        ("charge.failed", {"order_id": "ord-2"}), ("payment_intent.payment_failed", {"order_id": "ord-2"}),
        ("payment_intent.succeeded", {"order_id": "ord-2"}), ("charge.succeeded", {"order_id": "ord-2"})]
    assert [e.business_key for e in events if e.business_key] == [f"license:{intent.id}", f"license:{guest.id}"]
    for event in events:
        assert _event_differences(PROFILE.event_object(event)) == []
    with pytest.raises(UnboundReceiverObject, match=r"the story needs payment intent #3 \(unconfirmed, payable by "
                                                     r"card\) and the receiver created 0 of that kind"):
        world.pay(world.objects("customer")[0])


def test_bad_create_parameters_name_the_parameter(api: httpx.Client, world: World) -> None:
    cases = [
        ("checkout/sessions", {"mode": "payment"}, "line_items"),
        ("checkout/sessions", {"line_items[0][price]": "price_nope00000000000000"}, "line_items[0][price]"),
        ("subscriptions", {"items[0][price]": world.objects("price")[0]}, "customer"),
        ("refunds", {"amount": "5"}, "charge"),
        ("refunds", {"charge": world.objects("charge")[0], "amount": "999999999"}, "amount"),
        ("customers", {"metadata": "not-a-hash"}, "metadata"),
        ("payment_intents", {"currency": "usd"}, "amount"),
        ("payment_intents", {"amount": "2500"}, "currency"),
        ("payment_intents", {"amount": "49", "currency": "usd"}, "amount"),
        ("payment_intents", {"amount": "2500", "currency": "usd", "capture_method": "manual"}, "capture_method"),
        ("payment_intents", {"amount": "2500", "currency": "usd", "customer": "cus_nope000000000000000000"}, "customer"),
        ("payment_intents", {"amount": "2500", "currency": "usd", "payment_method_types[]": "card",
                             "automatic_payment_methods[enabled]": "true"}, "payment_method_types"),
    ]
    for path, form, param in cases:
        answer = api.post(f"/v1/{path}", data=form)
        assert answer.status_code == 400, (path, form, answer.text)
        assert answer.json()["error"]["param"] == param, (path, form, answer.text)


def test_price_data_takes_what_stripe_requires(api: httpx.Client, world: World) -> None:
    """``price_data`` as stripe-python's params types require it: a subscription item names an
    existing ``product`` and ``recurring``, and takes no ``product_data``; a checkout line item
    takes ``product`` or ``product_data``. ``POST /v1/products`` makes the product."""
    customer = world.objects("customer")[0]
    product = api.post("/v1/products", data={"name": "Membership", "metadata[tier]": "gold"}).json()
    assert (product["object"], product["name"], product["metadata"], product["default_price"]) == (
        "product", "Membership", {"tier": "gold"}, None)
    item = {"items[0][price_data][currency]": "usd", "items[0][price_data][unit_amount]": "1500",
            "items[0][price_data][recurring][interval]": "month"}
    sub = api.post("/v1/subscriptions", data={"customer": customer, **item,
                                              "items[0][price_data][product]": product["id"]}).json()
    price = sub["items"]["data"][0]["price"]
    assert (price["product"], price["unit_amount"], price["recurring"]["interval"]) == (product["id"], 1500, "month")
    refused = [
        ({"customer": customer, **item}, "items[0][price_data][product]"),
        ({"customer": customer, **item, "items[0][price_data][product_data][name]": "Gold"},
         "items[0][price_data][product_data]"),
        ({"customer": customer, **{k: v for k, v in item.items() if "recurring" not in k},
          "items[0][price_data][product]": product["id"]}, "items[0][price_data][recurring]"),
        ({"customer": customer, **item, "items[0][price_data][product]": "prod_nope000000000000"},
         "items[0][price_data][product]"),
    ]
    for form, param in refused:
        answer = api.post("/v1/subscriptions", data=form)
        assert (answer.status_code, answer.json()["error"]["param"]) == (400, param), (form, answer.text)
    line = {"mode": "payment", "line_items[0][quantity]": "1", "line_items[0][price_data][currency]": "usd",
            "line_items[0][price_data][unit_amount]": "2500"}
    missing = api.post("/v1/checkout/sessions", data=line)
    assert (missing.status_code, missing.json()["error"]["param"]) == (400, "line_items[0][price_data]")
    named = api.post("/v1/checkout/sessions", data={**line, "line_items[0][price_data][product_data][name]": "Order 7"})
    assert named.status_code == 200, named.text
    lines = api.get(f"/v1/checkout/sessions/{named.json()['id']}/line_items", params={"expand[]": "data.price.product"})
    assert lines.json()["data"][0]["price"]["product"]["name"] == "Order 7"
    by_id = api.post("/v1/checkout/sessions", data={**line, "line_items[0][price_data][product]": product["id"]})
    assert by_id.status_code == 200, by_id.text


def test_an_idempotency_key_replays_the_first_create(api: httpx.Client, world: World) -> None:
    before = len(world.objects("customer"))
    first = api.post("/v1/customers", data={"email": "x@example.com"}, headers={"Idempotency-Key": "k-1"})
    again = api.post("/v1/customers", data={"email": "x@example.com"}, headers={"Idempotency-Key": "k-1"})
    other = api.post("/v1/customers", data={"email": "y@example.com"}, headers={"Idempotency-Key": "k-1"})
    assert first.json() == again.json() and again.headers["Idempotent-Replayed"] == "true"
    assert other.status_code == 400 and other.json()["error"]["type"] == "idempotency_error"
    assert len(world.objects("customer")) == before + 1


def test_the_default_api_key_has_stripes_form() -> None:
    assert DEFAULT_API_KEY.startswith("sk_test_") and len(DEFAULT_API_KEY) - len("sk_test_") >= 24
    assert json.dumps(DEFAULT_API_KEY).isascii()


def test_target_api_version_is_a_config_key_checked_where_it_is_written() -> None:
    from hookproof.config import parse_config
    from hookproof.errors import ConfigError

    base = '[target]\nurl = "http://127.0.0.1:8000/webhooks"\nsecret = "whsec_x"\nprofile = "{profile}"\n{line}\n[observer]\nkind = "sink"\n'
    config = parse_config(base.format(profile="stripe", line='api_version = "2024-06-20"'))
    assert config.target.api_version == "2024-06-20"
    assert parse_config(base.format(profile="stripe", line="")).target.api_version is None
    for profile, line, words in (("stripe", 'api_version = "last week"', "target.api_version"),
                                 ("github", 'api_version = "2024-06-20"', "only the stripe profile")):
        with pytest.raises(ConfigError) as caught:
            parse_config(base.format(profile=profile, line=line))
        assert words in str(caught.value)


def test_the_sdks_module_level_calls_work_against_the_provider_api(server: ServerHandle, world: World) -> None:
    """The calls integrations written for the SDK's global client make (dj-stripe, drf-stripe)."""
    saved = (stripe.api_key, stripe.api_base, stripe.max_network_retries)
    stripe.api_key, stripe.api_base, stripe.max_network_retries = DEFAULT_API_KEY, server.api_base, 0
    try:
        sub_id = world.objects("subscription")[0]
        sub = stripe.Subscription.retrieve(sub_id, expand=["customer", "items.data.price.product"])
        assert (sub.id, sub.customer.object, sub["items"].data[0].price.product.object) == (
            sub_id, "customer", "product")
        price = stripe.Price.retrieve(world.objects("price")[0], expand=["currency_options", "product", "tiers"])
        assert price.product.object == "product"
        invoice = stripe.Invoice.retrieve(world.objects("invoice")[0], expand=["discounts", "lines.data.discounts"])
        assert invoice.lines.data[0].object == "line_item"
        assert stripe.Account.retrieve(world.account).id == world.account
        assert [c.id for c in stripe.Customer.list(limit=3).auto_paging_iter()] == list(
            reversed(world.objects("customer")))
    finally:
        stripe.api_key, stripe.api_base, stripe.max_network_retries = saved


def test_an_event_stripe_made_on_its_own_names_no_api_request() -> None:
    """``request.id``: "If null, the event was automatic (e.g., Stripe's automatic subscription
    handling)" (the Event object's reference). A renewal's, a scheduled dunning retry's, an
    expiring session's or incomplete subscription's events are null, read through
    stripe-python's Event; those an API call caused (a customer, a subscription created, a
    refund, a cancellation) keep their ``req_`` id."""
    w = World(7)
    cus = w.event(w.create_customer()).object_id
    start = len(w.events)
    sub = w.subscribe(cus)
    caused = w.events[start:]
    start = len(w.events)
    inv = w.renew(sub, pay=False)
    w.retry_invoice(inv)
    session = w.open_checkout(cus, w.create_price(interval=None))
    automatic = w.events[start:]
    start = len(w.events)
    w.cancel(sub)
    caused += w.events[start:]
    w.expire_checkout(session)
    automatic.append(w.events[-1])

    def request_id(event: Any) -> Any:
        body = json.loads(PROFILE.event_body(event))
        return stripe.Event.construct_from(body, "sk_test_x").request.id

    assert {e.type for e in automatic} >= {"invoice.created", "invoice.payment_failed", "invoice.paid",
                                           "customer.subscription.updated", "checkout.session.expired"}
    assert [request_id(e) for e in automatic] == [None] * len(automatic)
    assert {e.type for e in caused} >= {"customer.subscription.created", "customer.subscription.deleted"}
    assert all(str(request_id(e)).startswith("req_") for e in caused)


def test_every_object_begins_with_its_id_and_kind_as_stripe_renders_it(world: World) -> None:
    """Stripe renders an object ``{"id": …, "object": …, then the rest alphabetically}`` (every
    object's example in the API reference; an event's envelope likewise; recorded deliveries):
    in every body, every nested object or list that has an ``id`` or an ``object`` starts with
    them, in that order, and every object's other keys follow in alphabetical order (a
    ``metadata`` hash aside: the shop's keys, as it set them)."""
    misplaced: dict[str, str] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            head = [k for k in ("id", "object") if k in value]
            rest = list(value)[len(head):]
            if list(value)[:len(head)] != head or rest != sorted(rest):
                misplaced.setdefault(where, str([k for k, s in zip(rest, sorted(rest)) if k != s][:3] or list(value)[:3]))
            for k, v in value.items():
                if k != "metadata":  # the shop's own keys, in the order it set them
                    walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for v in value:
                walk(v, f"{where}[]")

    for event in world.events:
        body = json.loads(PROFILE.event_body(event))
        assert list(body)[:3] == ["id", "object", "api_version"]
        walk(body, event.type)
    assert misplaced == {}
    subscription = next(e for e in world.events if e.type == "customer.subscription.created")
    item = json.loads(PROFILE.event_body(subscription))["data"]["object"]["items"]["data"][0]
    assert list(item)[:2] == ["id", "object"] and list(item["price"])[:2] == ["id", "object"]


def test_a_declined_payment_names_its_failed_charge_as_stripe_types_it() -> None:
    """A payment intent whose first confirmation the issuer declines, then paid on its retry, read
    through stripe-python from its webhook bodies: Stripe creates a failed charge
    (``charge.failed``, before the intent's ``payment_intent.payment_failed``), whose id is the
    intent's ``latest_charge`` ("null until PaymentIntent confirmation is attempted") and its
    ``last_payment_error.charge`` ("For card errors, the ID of the failed charge"); the charge's
    ``status``, ``failure_code`` and ``outcome.type`` take values stripe-python's ``Charge``
    lists or documents; the retry's ``payment_intent.succeeded`` names its new charge and no
    error."""
    w = World(SEED)
    cus = w.event(w.create_customer()).object_id
    start = len(w.events)
    pi = w.fail_payment(cus)
    w.retry_payment(pi)
    story = w.events[start:]
    assert [e.type for e in story] == ["charge.failed", "payment_intent.payment_failed", "payment_intent.succeeded",
                                       "charge.succeeded"]

    def parsed(event: Any) -> Any:
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        return stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None).data.object

    failed_charge, declined, paid, charge = (parsed(e) for e in story)
    assert isinstance(failed_charge, stripe.Charge) and isinstance(declined, stripe.PaymentIntent)
    assert failed_charge.status in _literals(stripe.Charge.__annotations__["status"]) and failed_charge.status == "failed"
    assert (failed_charge.paid, failed_charge.captured, failed_charge.amount_captured) == (False, False, 0)
    assert (failed_charge.failure_code, failed_charge.balance_transaction) == ("card_declined", None)
    assert (failed_charge.outcome.type, failed_charge.outcome.network_status) == ("issuer_declined",
                                                                                 "declined_by_network")
    assert failed_charge.payment_intent == pi
    assert declined.status == "requires_payment_method"
    assert declined.latest_charge == failed_charge.id == declined.last_payment_error.charge
    assert declined.last_payment_error.code == "card_declined"
    assert paid.status == "succeeded" and paid.latest_charge == charge.id != failed_charge.id
    assert paid.last_payment_error is None and charge.status == "succeeded"
    assert _event_differences(PROFILE.event_object(story[0])) == []


def test_every_refund_is_its_own_refund_created_beside_its_charge_refunded(api: httpx.Client,
                                                                            world: World) -> None:
    """Stripe's 2024-10-28.acacia changelog: "Adds created, updated, and failed events for all refund
    types": each refund of the world is one ``refund.created`` of its Refund object (``re_…``,
    parsed by stripe-python as a ``Refund``), right after its charge's ``charge.refunded``, naming
    that charge and its payment intent; the provider API serves it at ``GET /v1/refunds/{id}``."""
    refunds = [e for e in world.events if e.type == "refund.created"]
    assert len(refunds) == len(world.objects("refund")) > 0
    for event in refunds:
        before = world.events[world.events.index(event) - 1]
        envelope = PROFILE.envelope(event)
        header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        refund = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None).data.object
        # a card's refund succeeds at once; an ACH payment's is pending until its bank answers
        assert isinstance(refund, stripe.Refund) and refund.id.startswith("re_")
        assert (refund.destination_details.type, refund.status) in {("card", "succeeded"),
                                                                    ("us_bank_transfer", "pending")}
        assert (before.type, before.object_id) == ("charge.refunded", refund.charge)
        assert refund.payment_intent == world.get(refund.charge)["payment_intent"]
        assert event.business_key is None  # the refund is owed once, on charge.refunded (refund:{charge}:{total})
        assert _event_differences(PROFILE.event_object(event)) == []
        served = api.get(f"/v1/refunds/{refund.id}").json()
        assert (served["id"], served["object"], served["amount"]) == (refund.id, "refund", refund.amount)


def _read(event: Any) -> stripe.Event:
    """The event's body as stripe-python's ``construct_event`` reads it, signed as sent."""
    envelope = PROFILE.envelope(event)
    header = PROFILE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
    return stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)


def test_a_bank_refund_is_pending_then_its_bank_answers_by_refund_updated_or_refund_failed(world: World) -> None:
    """docs.stripe.com/refunds, "Refund failures", and docs.stripe.com/api/refunds/object: an ACH
    payment's refund is created ``pending``; its bank then completes it (``refund.updated``,
    ``succeeded``) or returns it (``refund.failed``, ``failed``, ``failure_reason``, the amount
    back by ``failure_balance_transaction``), each read by stripe-python as a Refund of that
    status, owing no key of its own (the refund is owed once, on ``charge.refunded``)."""
    told = {e.type: e for e in world.events if e.type in ("refund.updated", "refund.failed")}
    assert set(told) == {"refund.updated", "refund.failed"}
    for event_type, status in (("refund.updated", "succeeded"), ("refund.failed", "failed")):
        event = told[event_type]
        created = next(e for e in world.events if e.type == "refund.created" and e.object_id == event.object_id)
        body = _read(event)
        refund = body.data.object
        assert isinstance(refund, stripe.Refund) and body.type == event_type
        assert (created.status, event.status, refund.status, event.business_key) == ("pending", status, status, None)
        assert (event.version, event.request_id, event.created - created.created) == (2, None, World.REFUND_SETTLE_S)
        assert refund.destination_details.type == "us_bank_transfer"
        assert _event_differences(PROFILE.event_object(event)) == []
    failed = _read(told["refund.failed"]).data.object
    assert failed.failure_reason == "unknown"
    back = world.get(failed.failure_balance_transaction)
    assert (back["amount"], back["type"], back["source"]) == (failed.amount, "refund_failure", failed.id)
    assert "previous_attributes" not in _read(told["refund.failed"]).data  # not a *.updated type
    assert _read(told["refund.updated"]).data.previous_attributes["status"] == "pending"


def test_a_chargeback_is_told_in_stripes_order_each_event_a_dispute_stripe_python_reads(world: World) -> None:
    """docs.stripe.com/api/disputes/object and docs.stripe.com/disputes/how-disputes-work: a card
    payment charged back, its events in Stripe's order, each carrying the Dispute (``dp_…``, a
    stripe-python ``Dispute``) at its status; one ``dispute:`` effect, on its creation; the
    withdrawal and the reinstatement as ``adjustment`` balance transactions in
    ``balance_transactions``."""
    dp = next(e.object_id for e in world.events if e.type == "charge.dispute.created")
    told = [e for e in world.events if e.object_id == dp]
    assert [(e.type, e.status, e.business_key) for e in told] == [
        ("charge.dispute.created", "needs_response", f"dispute:{dp}"),
        ("charge.dispute.funds_withdrawn", "needs_response", None),
        ("charge.dispute.updated", "under_review", None),
        ("charge.dispute.closed", "won", None),
        ("charge.dispute.funds_reinstated", "won", None),
    ]
    assert [e.version for e in told] == [1, 2, 3, 4, 5]
    assert [e.request_id is None for e in told] == [True, True, False, True, True]  # the evidence: a request
    for event in told:
        dispute = _read(event).data.object
        assert isinstance(dispute, stripe.Dispute) and dispute.id == dp and dispute.status == event.status
        assert _event_differences(PROFILE.event_object(event)) == []
    created = told[0].object
    charge = world.get(created["charge"])
    assert (created["amount"], created["currency"], charge["disputed"]) == (
        charge["amount"] - charge["amount_refunded"], charge["currency"], True)
    assert (created["evidence_details"]["due_by"] + 1) % 86400 == 0 and created["is_charge_refundable"] is False
    moves = [(t["amount"], t["fee"], t["type"], t["reporting_category"])
             for t in told[-1].object["balance_transactions"]]
    assert moves == [(-created["amount"], World.DISPUTE_FEE, "adjustment", "dispute"),
                     (created["amount"], 0, "adjustment", "dispute_reversal")]
    updated = _read(told[2]).data
    assert updated.previous_attributes["status"] == "needs_response"
    assert updated.object.evidence_details.has_evidence is True


def test_a_lost_dispute_is_closed_lost_and_reinstates_nothing() -> None:
    w = World(SEED)
    charge = w.get(w.pay(w.event(w.create_customer()).object_id))["latest_charge"]
    start = len(w.events)
    w.dispute(charge, won=False)
    assert [(e.type, e.status) for e in w.events[start:]] == [
        ("charge.dispute.created", "needs_response"), ("charge.dispute.funds_withdrawn", "needs_response"),
        ("charge.dispute.updated", "under_review"), ("charge.dispute.closed", "lost")]
    with pytest.raises(WorldError, match="cannot be disputed"):
        w.dispute(charge)
