"""The provider server over real HTTP on 127.0.0.1: the official stripe SDK against the
Stripe-shaped API, switches, auth, the Mercado Pago payment, and the effect sink."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import stripe

from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.profiles.stripe_versions import at_version
from hookproof.simulator.server import (
    DEFAULT_API_KEY,
    ConnectionDropped,
    ServerHandle,
    ServerState,
    Switches,
    create_app,
    openapi_schema,
    run_server,
)
from hookproof.simulator.server.refusals import refusal_log
from hookproof.simulator.world import RESOURCES, World, referenced_ids

SEED = 7
PATH_OF = {object_type: path for path, object_type in RESOURCES.items()}
TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def world() -> World:
    """`World(SEED).lifecycle()` plus a completed checkout (the lifecycle has none) and a
    chargeback (told only to an endpoint listing the dispute types)."""
    w = World(SEED)
    w.lifecycle()
    customer = w.objects("customer")[0]
    w.complete_checkout(w.open_checkout(customer, w.create_price(interval=None)))
    w.dispute(w.get(w.pay(customer))["latest_charge"])
    return w


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerHandle]:
    with run_server(ServerState([world])) as handle:
        yield handle


@pytest.fixture
def state(server: ServerHandle) -> Iterator[ServerState]:
    st = server.state
    assert st is not None
    st.switches.clear(everything=True)
    st.sink.clear()
    yield st
    st.switches.clear(everything=True)
    st.sink.clear()


@pytest.fixture
def api(server: ServerHandle, state: ServerState) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                      timeout=TIMEOUT_S) as client:
        yield client


@pytest.fixture
def sdk(server: ServerHandle, state: ServerState) -> stripe.StripeClient:
    return stripe.StripeClient(
        DEFAULT_API_KEY,
        base_addresses={"api": server.api_base},
        http_client=stripe.RequestsClient(timeout=TIMEOUT_S),
        max_network_retries=0,
    )


def _service(sdk: stripe.StripeClient, path: str):  # type: ignore[no-untyped-def]
    service = sdk.v1
    for part in path.split("/"):
        service = getattr(service, part)
    return service


# ---- the stripe SDK against the Stripe-shaped API --------------------------------------

@pytest.mark.parametrize("path", [p for p in RESOURCES if p != "events"])
def test_sdk_retrieves_every_object_as_the_world_has_it(sdk: stripe.StripeClient, world: World, path: str) -> None:
    object_type = RESOURCES[path]
    ids = world.objects(object_type)
    assert ids, f"the lifecycle world has no {object_type}"
    for object_id in ids:
        obj = _service(sdk, path).retrieve(object_id)
        assert obj.id == object_id
        # the SDK sends its own Stripe-Version; the answer is the world's object at that version
        assert json.loads(obj.last_response.body) == at_version(world.get(object_id), stripe.api_version)


@pytest.mark.parametrize("path", list(RESOURCES))
def test_sdk_lists_every_type_newest_first_across_pages(sdk: stripe.StripeClient, world: World, path: str) -> None:
    object_type = RESOURCES[path]
    expected = [e.id for e in reversed(world.events)] if object_type == "event" else list(reversed(world.objects(object_type)))
    page = _service(sdk, path).list(params={"limit": 2})
    assert page.object == "list" and page.url == f"/v1/{path}"
    assert page.has_more == (len(expected) > 2)
    assert [o.id for o in page.auto_paging_iter()] == expected


def test_sdk_lists_filter_by_customer(sdk: stripe.StripeClient, world: World) -> None:
    customer = world.objects("customer")[0]
    charges = sdk.v1.charges.list(params={"customer": customer, "limit": 100})
    assert {c.id for c in charges.data} == set(world.objects("charge"))
    assert sdk.v1.charges.list(params={"customer": "cus_nobody"}).data == []


def test_sdk_expands_nested_fields(sdk: stripe.StripeClient, world: World) -> None:
    pi_id = world.objects("payment_intent")[0]
    pi = sdk.v1.payment_intents.retrieve(pi_id, params={"expand": ["latest_charge.balance_transaction", "customer"]})
    charge_id = world.get(pi_id)["latest_charge"]
    assert pi.latest_charge.id == charge_id
    assert pi.latest_charge.balance_transaction.object == "balance_transaction"
    assert pi.latest_charge.balance_transaction.id == world.get(charge_id)["balance_transaction"]
    assert pi.customer.object == "customer" and pi.customer.email == world.get(world.objects("customer")[0])["email"]

    charges = sdk.v1.charges.list(params={"limit": 3, "expand": ["data.customer"]})
    assert charges.data and all(c.customer.object == "customer" for c in charges.data)

    event = next(e for e in world.events if e.type == "charge.succeeded")
    rendered = sdk.v1.events.retrieve(event.id, params={"expand": ["data.object", "data.object.customer"]})
    assert rendered.data.object.customer.object == "customer"

    sub_id = world.objects("subscription")[0]
    sub = sdk.v1.subscriptions.retrieve(sub_id, params={"expand": ["items.data.price.product"]})
    assert sub["items"].data[0].price.product.object == "product"


def test_expanding_a_plain_field_is_a_stripe_400(api: httpx.Client, world: World) -> None:
    pi_id = world.objects("payment_intent")[0]
    r = api.get(f"/v1/payment_intents/{pi_id}", params={"expand[]": "currency"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error" and r.json()["error"]["param"] == "expand"
    r = api.get("/v1/charges", params={"limit": 0})
    assert r.status_code == 400 and r.json()["error"]["param"] == "limit"


def test_events_render_as_the_stripe_profile_does(sdk: stripe.StripeClient, world: World) -> None:
    profile = StripeProfile()
    for event in world.events:
        assert json.loads(sdk.v1.events.retrieve(event.id).last_response.body) == profile.event_object(event)


def test_every_id_in_every_event_resolves(api: httpx.Client, world: World) -> None:
    profile = StripeProfile()
    lifecycle = World(SEED).lifecycle()  # the same ids as the served world's first events
    referenced = {object_id: event.type for event in lifecycle for object_id in referenced_ids(profile.event_object(event))}
    assert len(referenced) >= 10
    for object_id, event_type in referenced.items():
        path = "events" if object_id.startswith("evt_") else PATH_OF[world.object_type(object_id)]
        r = api.get(f"/v1/{path}/{object_id}")
        assert r.status_code == 200, (event_type, object_id, r.text)
        assert r.json()["id"] == object_id


def test_account(sdk: stripe.StripeClient, world: World) -> None:
    account = sdk.v1.accounts.retrieve_current()
    assert account.id == world.account and account.object == "account"


def test_unknown_id_is_resource_missing(sdk: stripe.StripeClient, api: httpx.Client) -> None:
    with pytest.raises(stripe.InvalidRequestError) as info:
        sdk.v1.customers.retrieve("cus_doesnotexist")
    assert info.value.http_status == 404 and info.value.code == "resource_missing"
    r = api.get("/v1/customers/cus_doesnotexist")
    assert r.status_code == 404
    assert r.json() == {"error": {"type": "invalid_request_error", "message": "No such customer: 'cus_doesnotexist'",
                                  "code": "resource_missing", "param": "id"}}


def test_an_id_of_another_type_is_missing(api: httpx.Client, world: World) -> None:
    assert api.get(f"/v1/charges/{world.objects('customer')[0]}").status_code == 404


# ---- auth -------------------------------------------------------------------------------

def test_auth_failures_are_401_in_stripe_shape(server: ServerHandle, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    with httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as client:
        missing = client.get(f"/v1/customers/{cus}")
        wrong = client.get(f"/v1/customers/{cus}", headers={"Authorization": "Bearer sk_test_wrongwrongwrong"})
        basic_ok = client.get(f"/v1/customers/{cus}", auth=(DEFAULT_API_KEY, ""))
        basic_bad = client.get(f"/v1/customers/{cus}", auth=("sk_test_nope", ""))
        garbage = client.get(f"/v1/customers/{cus}", headers={"Authorization": "Basic !!!"})
    for r in (missing, wrong, basic_bad, garbage):
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "invalid_request_error"
        assert "message" in r.json()["error"]
    assert "wrongwrong" not in wrong.json()["error"]["message"]  # the key is masked
    assert basic_ok.status_code == 200 and basic_ok.json()["id"] == cus
    bad_sdk = stripe.StripeClient("sk_test_bad", base_addresses={"api": server.api_base},
                                  http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
    with pytest.raises(stripe.AuthenticationError) as info:
        bad_sdk.v1.customers.retrieve(cus)
    assert info.value.http_status == 401


def test_keys_can_change_while_running(api: httpx.Client, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    state.add_api_key("rk_test_second")
    try:
        assert api.get(f"/v1/customers/{cus}", headers={"Authorization": "Bearer rk_test_second"}).status_code == 200
    finally:
        state.set_api_keys([DEFAULT_API_KEY])
    assert api.get(f"/v1/customers/{cus}", headers={"Authorization": "Bearer rk_test_second"}).status_code == 401


# ---- switches ----------------------------------------------------------------------------

def test_stale_read_serves_the_previous_version(sdk: stripe.StripeClient, state: ServerState, world: World) -> None:
    sub_id = world.objects("subscription")[0]
    version = world.version(sub_id)
    assert version > 1
    state.switches.set(sub_id, stale=True)
    stale = sdk.v1.subscriptions.retrieve(sub_id)
    assert stale.hookproof_version == version - 1
    assert json.loads(stale.last_response.body) == at_version(world.get(sub_id, version - 1), stripe.api_version)
    assert stale.status != world.get(sub_id)["status"]  # canceled now; the version before was not
    other = world.objects("invoice")[0]
    assert sdk.v1.invoices.retrieve(other).hookproof_version == world.version(other)  # per object only
    state.switches.clear(sub_id)
    assert sdk.v1.subscriptions.retrieve(sub_id).hookproof_version == version


def test_not_found_switch(sdk: stripe.StripeClient, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    state.switches.set(cus, not_found=True)
    with pytest.raises(stripe.InvalidRequestError) as info:
        sdk.v1.customers.retrieve(cus)
    assert info.value.http_status == 404 and info.value.code == "resource_missing"


def test_5xx_switch_heals_after_times(api: httpx.Client, sdk: stripe.StripeClient, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    state.switches.set(None, status=503, times=2)
    first = api.get(f"/v1/customers/{cus}")
    assert first.status_code == 503 and first.json()["error"]["type"] == "api_error"
    with pytest.raises(stripe.APIError) as info:
        sdk.v1.customers.retrieve(cus)
    assert info.value.http_status == 503
    assert api.get(f"/v1/customers/{cus}").status_code == 200
    assert state.switches.items() == []


def test_slow_switch(api: httpx.Client, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    state.switches.set(cus, slow_s=0.4)
    t0 = time.monotonic()
    assert api.get(f"/v1/customers/{cus}").status_code == 200
    assert time.monotonic() - t0 >= 0.4
    with pytest.raises(httpx.ReadTimeout):
        api.get(f"/v1/customers/{cus}", timeout=0.1)


def test_rate_limit_gives_429_with_retry_after(api: httpx.Client, sdk: stripe.StripeClient, state: ServerState,
                                               world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limiter's sliding second on a clock the test moves: the five requests fall in one
    second however slow the machine, and the next second comes without sleeping."""
    now = [1000.0]
    monkeypatch.setattr(state, "switches", Switches(clock=lambda: now[0]))
    cus = world.objects("customer")[0]
    state.switches.set(None, rate_limit_per_s=3)
    statuses = [api.get(f"/v1/customers/{cus}") for _ in range(5)]
    assert [r.status_code for r in statuses[:3]] == [200, 200, 200]
    limited = statuses[3]
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.json()["error"]["code"] == "rate_limit"
    with pytest.raises(stripe.RateLimitError):
        sdk.v1.customers.retrieve(cus)
    now[0] += 0.99
    assert api.get(f"/v1/customers/{cus}").status_code == 429  # still the same second
    now[0] += 0.02
    assert api.get(f"/v1/customers/{cus}").status_code == 200


def test_admin_api_sets_and_clears_switches(api: httpx.Client, state: ServerState, world: World) -> None:
    cus = world.objects("customer")[0]
    r = api.post("/_hookproof/switches", json={"object_id": cus, "status": 500})
    assert r.status_code == 200 and r.json()["switches"][0]["object_id"] == cus
    assert api.get(f"/v1/customers/{cus}").status_code == 500
    assert api.post("/_hookproof/switches", json={"status": 200}).status_code == 400
    assert api.post("/_hookproof/switches", json={"bogus": 1}).status_code == 422
    assert api.delete("/_hookproof/switches", params={"object_id": cus}).json() == {"switches": []}
    assert api.get(f"/v1/customers/{cus}").status_code == 200


# ---- several worlds ----------------------------------------------------------------------

def test_worlds_can_be_added_while_running(api: httpx.Client, state: ServerState, world: World) -> None:
    fresh = World(SEED + 1)
    cus = fresh.create_customer()
    customer = fresh.event(cus).object_id
    state.add_world(fresh)
    try:
        assert api.get(f"/v1/customers/{customer}").json()["id"] == customer
        assert api.get(f"/v1/customers/{world.objects('customer')[0]}").status_code == 200
        listed = [c["id"] for c in api.get("/v1/customers", params={"limit": 100}).json()["data"]]
        assert listed[0] == customer and set(world.objects("customer")) <= set(listed)
        with state.lock:
            pi = fresh.pay(customer)
        assert api.get(f"/v1/payment_intents/{pi}").json()["status"] == "succeeded"
    finally:
        state.set_world(world)
    assert api.get(f"/v1/customers/{customer}").status_code == 404


# ---- Mercado Pago -------------------------------------------------------------------------

def test_billing_world_ids_are_not_mercado_pago_payments(api: httpx.Client, world: World) -> None:
    """Mercado Pago's routes serve the payments world only (tests/simulator/test_mercadopago_fidelity.py)."""
    missing = api.get(f"/v1/payments/{world.objects('payment_intent')[0]}")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found" and missing.json()["status"] == 404
    unauthorized = api.get("/v1/payments/1", headers={"Authorization": "Bearer x"})
    assert unauthorized.status_code == 401 and unauthorized.json()["error"] == "unauthorized"


# ---- OpenAPI ---------------------------------------------------------------------------------

def test_openapi_schema_declares_every_route_and_status(api: httpx.Client) -> None:
    schema = openapi_schema()
    assert api.get("/openapi.json").json()["paths"].keys() == schema["paths"].keys()
    for path in RESOURCES:
        for route in (f"/v1/{path}", f"/v1/{path}/{{id}}"):
            responses = schema["paths"][route]["get"]["responses"]
            assert {"200", "401", "404", "429"} <= responses.keys(), route
    assert {"200", "409", "422", "503"} <= schema["paths"]["/sink/effects"]["post"]["responses"].keys()
    assert not any(p.startswith("/_hookproof") for p in schema["paths"])


def test_a_sink_path_naming_nothing_is_a_documented_404(api: httpx.Client) -> None:
    """A path that leaves the sink's base is refused with 404, a status its route declares
    (the schema fuzz once drew ``..`` and found the 404 undeclared)."""
    declared = openapi_schema()["paths"]["/sink/{path}"]["post"]["responses"].keys()
    for path in ("%2E%2E", "a/%2E%2E/%2E%2E", "%2E"):
        answer = api.post(f"/sink/{path}", json={"business_key": "license:pi_1"})
        assert answer.status_code == 404 and str(answer.status_code) in declared, (path, answer.text)
    assert _effects(api)["effects"] == []


# ---- the effect sink --------------------------------------------------------------------------

def _effects(api: httpx.Client) -> dict:  # type: ignore[type-arg]
    r = api.get("/sink/effects")
    assert r.status_code == 200
    return r.json()


def test_sink_replays_the_same_key_and_body(api: httpx.Client) -> None:
    headers = {"Idempotency-Key": "key-1"}
    first = api.post("/sink/effects", json={"business_key": "renewal:in_1", "amount": 900}, headers=headers)
    second = api.post("/sink/effects", json={"amount": 900, "business_key": "renewal:in_1"}, headers=headers)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert "idempotent-replayed" not in first.headers
    assert second.headers["Idempotent-Replayed"] == "true"
    listing = _effects(api)
    assert listing["counts"] == {"renewal:in_1": 1}
    row = listing["effects"][0]
    assert {k: row[k] for k in ("business_key", "amount", "idempotency_key")} == {
        "business_key": "renewal:in_1", "amount": 900, "idempotency_key": "key-1"}
    assert isinstance(row["at"], float)


def test_sink_rejects_the_same_key_with_another_body(api: httpx.Client) -> None:
    headers = {"Idempotency-Key": "key-2"}
    assert api.post("/sink/effects", json={"business_key": "license:pi_1"}, headers=headers).status_code == 200
    other = api.post("/sink/effects", json={"business_key": "license:pi_2"}, headers=headers)
    assert other.status_code == 422
    assert other.json()["error"]["type"] == "idempotency_error"
    assert _effects(api)["counts"] == {"license:pi_1": 1}


def test_sink_answers_409_while_the_key_is_in_flight(server: ServerHandle, api: httpx.Client, state: ServerState,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    state.sink.fault("renewal:in_slow", delay_s=0.8)
    headers = {"Idempotency-Key": "key-3"}
    body = {"business_key": "renewal:in_slow"}
    answers: list[httpx.Response] = []
    admitted = threading.Event()
    admit = state.sink.admit

    def watched_admit(key: str, params_fingerprint: str) -> Any:
        decided = admit(key, params_fingerprint)
        admitted.set()
        return decided

    # The conflicting request goes once the first is admitted (in flight), not after a fixed
    # sleep that a loaded machine may not have reached the server within.
    monkeypatch.setattr(state.sink, "admit", watched_admit)

    def first() -> None:
        with httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as client:
            answers.append(client.post("/sink/effects", json=body, headers=headers))

    thread = threading.Thread(target=first)
    thread.start()
    assert admitted.wait(TIMEOUT_S), "the first request never reached the sink"
    conflict = api.post("/sink/effects", json=body, headers=headers)
    thread.join(TIMEOUT_S)
    assert conflict.status_code == 409 and conflict.json()["error"]["type"] == "idempotency_error"
    assert [a.status_code for a in answers] == [200]
    replay = api.post("/sink/effects", json=body, headers=headers)
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == answers[0].json()
    assert _effects(api)["counts"] == {"renewal:in_slow": 1}


def test_sink_without_a_key_applies_every_time(api: httpx.Client) -> None:
    for _ in range(3):
        assert api.post("/sink/effects", json={"business_key": "refund:ch_1:300", "amount": 300}).status_code == 200
    assert _effects(api)["counts"] == {"refund:ch_1:300": 3}


def test_sink_fails_n_times_before_applying(api: httpx.Client, state: ServerState) -> None:
    state.sink.fault("renewal:in_503", fail_times=2)
    headers = {"Idempotency-Key": "key-4"}
    body = {"business_key": "renewal:in_503"}
    statuses = [api.post("/sink/effects", json=body, headers=headers).status_code for _ in range(4)]
    assert statuses == [503, 503, 200, 200]
    assert _effects(api)["counts"] == {"renewal:in_503": 1}


def test_sink_applies_then_drops_the_connection(api: httpx.Client, state: ServerState) -> None:
    state.sink.fault("license:pi_drop", drop_times=1)
    headers = {"Idempotency-Key": "key-5"}
    body = {"business_key": "license:pi_drop", "amount": 4900}
    with pytest.raises(httpx.TransportError):
        api.post("/sink/effects", json=body, headers=headers)
    assert _effects(api)["counts"] == {"license:pi_drop": 1}  # applied although unanswered
    retry = api.post("/sink/effects", json=body, headers=headers)
    assert retry.status_code == 200 and retry.headers["Idempotent-Replayed"] == "true"
    assert _effects(api)["counts"] == {"license:pi_drop": 1}


async def test_sink_drop_without_a_transport_raises_in_process() -> None:
    local = ServerState()
    local.sink.fault("k", drop_times=1)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(local)), base_url="http://sink.test",
                                 timeout=TIMEOUT_S) as client:
        with pytest.raises(ConnectionDropped):
            await client.post("/sink/effects", json={"business_key": "k"})
    assert local.sink.counts() == {"k": 1}


def test_sink_validates_the_body(api: httpx.Client) -> None:
    missing = api.post("/sink/effects", json={"amount": 1}, headers={"Idempotency-Key": "key-6"})
    assert missing.status_code == 422 and missing.json()["error"]["param"] == "business_key"
    assert api.post("/sink/effects", content=b"not json", headers={"Content-Type": "application/json"}).status_code == 422
    assert api.post("/sink/effects", json={"business_key": "k"}, headers={"Idempotency-Key": "x" * 256}).status_code == 400
    # a validation failure saves nothing: the key is still free
    assert api.post("/sink/effects", json={"business_key": "k"}, headers={"Idempotency-Key": "key-6"}).status_code == 200
    assert _effects(api)["counts"] == {"k": 1}


def test_sink_admin_faults_and_delete(api: httpx.Client) -> None:
    r = api.post("/_hookproof/sink/faults", json={"business_key": "k", "fail_times": 1, "fail_status": 500})
    assert r.status_code == 200 and r.json()["faults"]["k"]["fail_times"] == 1
    assert api.post("/sink/effects", json={"business_key": "k"}).status_code == 500
    assert api.post("/sink/effects", json={"business_key": "k"}).status_code == 200
    assert api.delete("/sink/effects").json() == {"deleted": 1}
    assert _effects(api) == {"effects": [], "counts": {}}


def test_sink_accepts_the_receiver_s_own_paths_and_records_them(api: httpx.Client, state: ServerState) -> None:
    """A receiver calls its downstream API on its own paths: any path under /sink."""
    from hookproof.simulator.server.sink import sink_path

    headers = {"Idempotency-Key": "idem-own-path"}
    licensed = api.post("/sink/licenses", json={"business_key": "license:pi_9", "amount": 500}, headers=headers)
    assert licensed.status_code == 200 and licensed.json()["path"] == "/licenses"
    again = api.post("/sink/licenses", json={"business_key": "license:pi_9", "amount": 500}, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    elsewhere = api.post("/sink/v1/refunds", json={"business_key": "license:pi_9", "amount": 500}, headers=headers)
    assert elsewhere.status_code == 422  # the same key on another path is other parameters
    assert api.post("/sink/v1/refunds/", json={"business_key": "refund:ch_9:100", "amount": 100}).status_code == 200
    with pytest.raises(ValueError, match="not a path under the sink's base"):
        sink_path("a/../../v1/customers")
    assert sink_path("v1//refunds/") == "/v1/refunds"
    rows = [(r.business_key, r.path) for r in state.sink.records()]
    assert rows == [("license:pi_9", "/licenses"), ("refund:ch_9:100", "/v1/refunds")]
    assert [e["path"] for e in _effects(api)["effects"]] == ["/licenses", "/v1/refunds"]


# ---- Connect: the request's account (Stripe-Account header) -------------------------------

CONNECTED = "acct_1ConnectedTest0001"


@pytest.fixture(scope="module")
def connect_server() -> Iterator[tuple[ServerHandle, World, World]]:
    """A platform world and a Connect world (events of `CONNECTED`) served side by side."""
    platform, connected = World(SEED + 10), World(SEED + 11, account=CONNECTED)
    platform.lifecycle()
    connected.lifecycle()
    with run_server(ServerState([platform, connected])) as handle:
        yield handle, platform, connected


def test_a_connected_account_s_object_fetched_without_its_header_is_refused_with_a_hint(
        connect_server: tuple[ServerHandle, World, World]) -> None:
    """Stripe's 404 names no account (a Connect receiver that forgets ``stripe_account=`` gets
    "No such subscription"); the refusal log, which the report's lost findings quote, says
    whose object it is, so the fix is one look away. A request naming the account is not
    refused, and an id no world holds gets no hint."""
    handle, _platform, connected = connect_server
    sub = connected.objects("subscription")[0]
    log = refusal_log(handle.state)
    mark = log.mark()
    with httpx.Client(base_url=handle.api_base, headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                      timeout=TIMEOUT_S) as api:
        assert api.get(f"/v1/subscriptions/{sub}").status_code == 404
        assert api.get(f"/v1/subscriptions/{sub}", headers={"Stripe-Account": CONNECTED}).status_code == 200
        assert api.get("/v1/subscriptions/sub_1NoSuchOne0000000000").status_code == 404
    assert [r.line() for r in log.since(mark)] == [
        f"404 unknown object (resource_missing) on GET /v1/subscriptions/{sub} (it is connected account "
        f"{CONNECTED}'s, and the request named no Stripe-Account)",
        "404 unknown object (resource_missing) on GET /v1/subscriptions/sub_1NoSuchOne0000000000"]


def _client(handle: ServerHandle) -> stripe.StripeClient:
    return stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": handle.api_base},
                               http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)


def test_a_connected_account_s_objects_need_its_stripe_account_header(
        connect_server: tuple[ServerHandle, World, World]) -> None:
    """docs.stripe.com/connect/authentication: a connected account's objects are reached with
    ``Stripe-Account``; without it the platform's key gets 404 resource_missing, as a Connect
    receiver that forgets the header gets from Stripe. The platform's own objects are not seen
    through a connected account either."""
    handle, platform, connected = connect_server
    sdk = _client(handle)
    sub = connected.objects("subscription")[0]
    with pytest.raises(stripe.InvalidRequestError) as info:
        sdk.v1.subscriptions.retrieve(sub)
    assert info.value.http_status == 404 and info.value.code == "resource_missing"
    got = sdk.v1.subscriptions.retrieve(sub, options={"stripe_account": CONNECTED})
    assert got.id == sub and got.status == connected.get(sub)["status"]
    event = connected.events[0].id
    assert sdk.v1.events.retrieve(event, options={"stripe_account": CONNECTED}).id == event
    with pytest.raises(stripe.InvalidRequestError):
        sdk.v1.events.retrieve(event)

    own = platform.objects("subscription")[0]
    assert sdk.v1.subscriptions.retrieve(own).id == own
    with pytest.raises(stripe.InvalidRequestError) as info:
        sdk.v1.subscriptions.retrieve(own, options={"stripe_account": CONNECTED})
    assert info.value.http_status == 404
    listed = sdk.v1.customers.list(options={"stripe_account": CONNECTED})
    assert {c.id for c in listed.data} == set(connected.objects("customer"))
    assert {c.id for c in sdk.v1.customers.list().data} == set(platform.objects("customer"))
    # The platform retrieves its connected account; through the header it is the account's own.
    assert sdk.v1.accounts.retrieve(CONNECTED).id == CONNECTED
    assert sdk.v1.accounts.retrieve_current(options={"stripe_account": CONNECTED}).id == CONNECTED
    assert sdk.v1.accounts.retrieve_current().id == platform.account
    # Naming the platform's own account is its own view (dj-stripe names it on every request).
    assert sdk.v1.subscriptions.retrieve(own, options={"stripe_account": platform.account}).id == own


def test_an_account_the_platform_has_no_access_to_is_a_403(connect_server: tuple[ServerHandle, World, World],
                                                         server: ServerHandle, world: World) -> None:
    handle, _, connected = connect_server
    with pytest.raises(stripe.PermissionError) as info:
        _client(handle).v1.subscriptions.retrieve(connected.objects("subscription")[0],
                                                  options={"stripe_account": "acct_1NotConnected000"})
    assert info.value.http_status == 403 and "acct_1NotConnected000" in str(info.value)
    # A platform with no connected account at all: Stripe's "Only Stripe Connect platforms …".
    with pytest.raises(stripe.PermissionError) as info:
        _client(server).v1.customers.retrieve(world.objects("customer")[0], options={"stripe_account": CONNECTED})
    assert "Only Stripe Connect platforms" in str(info.value)


def test_the_platform_s_account_is_one_id_in_every_world_and_served_before_any() -> None:
    """A Stripe secret key belongs to one account for good; dj-stripe caches it
    (``APIKey.refresh_account``) and names it in ``Stripe-Account`` on every later request. The
    account id changed with each world's seed, so a receiver that cached it on one run was
    refused "Only Stripe Connect platforms …" on every fetch of the next; and ``GET
    /v1/account`` answered 404 "No account is served" to a receiver registering itself before
    the first scenario. Every platform world is now `PLATFORM_ACCOUNT`, served before any
    world too; a Connect world keeps the account it is given."""
    from hookproof.simulator.world.world import PLATFORM_ACCOUNT

    assert World(SEED).account == World(SEED + 1).account == PLATFORM_ACCOUNT
    assert World(SEED, account=CONNECTED).account == CONNECTED
    with run_server(ServerState([])) as empty:
        sdk = _client(empty)
        assert sdk.v1.accounts.retrieve_current().id == PLATFORM_ACCOUNT
        assert sdk.v1.accounts.retrieve_current(options={"stripe_account": PLATFORM_ACCOUNT}).id == PLATFORM_ACCOUNT
    first, second = World(SEED + 20), World(SEED + 21)  # two runs' worlds, of other seeds
    first.lifecycle()
    second.lifecycle()
    with run_server(ServerState([second])) as handle:
        cached = _client(handle).v1.accounts.retrieve_current().id  # as the first run cached it
        own = second.objects("subscription")[0]
        assert cached == first.account and _client(handle).v1.subscriptions.retrieve(
            own, options={"stripe_account": cached}).id == own


def test_a_route_hookproof_does_not_serve_answers_as_stripe_does(api: httpx.Client) -> None:
    """dj-stripe asked for ``GET /v1/subscription_items``, which hookproof does not serve, and got
    ``{"message": "Not Found"}``, an answer Stripe never gives: Stripe's names the request."""
    answer = api.get("/v1/subscription_items", params={"subscription": "sub_x"})
    assert answer.status_code == 404
    assert answer.json()["error"] == {
        "message": "Unrecognized request URL (GET: /v1/subscription_items). Please see https://stripe.com/docs or "
                   "we can help at https://support.stripe.com/.", "type": "invalid_request_error"}


def test_the_unhandled_type_s_event_is_served_like_every_event_sent() -> None:
    """A dj-stripe receiver retrieves each event it is sent (``GET /v1/events/{id}``) and got 404
    for unknown-event-type's ``payment_method.automatically_updated``: the event is made outside
    the world's stories. Stripe serves every event it sent; the world now holds that one too,
    outside its own history."""
    from hookproof.scenarios.catalog import CATALOG, Context, Plan
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import new_world

    plan = CATALOG["unknown-event-type"].plan(Context(profile=get_profile("stripe")), new_world("billing", 3))
    assert isinstance(plan, Plan)
    [unknown] = plan.phases[0].events
    assert unknown.id not in {e.id for e in plan.world.events}  # no part of the world's own history
    with run_server(ServerState([plan.world])) as handle:
        client = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": handle.api_base},
                                     http_client=stripe.RequestsClient(timeout=TIMEOUT_S), max_network_retries=0)
        got = client.v1.events.retrieve(unknown.id)
    assert (got.id, got.type, got.data.object["id"]) == (unknown.id, "payment_method.automatically_updated",
                                                         unknown.object_id)
