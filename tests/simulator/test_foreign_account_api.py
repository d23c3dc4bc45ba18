"""The Stripe-shaped provider API hands another account's object to no key but that
account's: a ``foreign-account`` scenario's world (generic-hmac sends Stripe's envelope,
``account`` included, and its receivers fetch from this API) is answered with Stripe's own
404 ``resource_missing`` (``No such customer: 'cus_…'``, param ``id``: what Stripe answers an
object its key's account cannot see, stripe-python's ``InvalidRequestError``), and the
refusal is remembered (`ServerState.refused_foreign`) so ``unexpected`` accepts the
receiver's error answer to that event (it fetched, and was refused)."""

from __future__ import annotations

from pathlib import Path

import httpx
import stripe

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable
from hookproof.simulator.delivery.mutations import foreign_account_id
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import World

OTHER_KEY = "sk_test_other_account_0123456789"


def test_another_account_s_objects_are_stripe_s_404_to_the_endpoint_s_key() -> None:
    own, other = World(7), World(8)
    own.lifecycle()
    other.lifecycle()
    mine, theirs = own.objects("customer")[0], other.objects("customer")[0]
    assert not own.has(theirs) and not other.has(mine)
    foreign = foreign_account_id(own.account)
    state = ServerState()
    state.add_world(own)
    state.add_world(other, account=foreign)
    state.add_api_key(OTHER_KEY, account=foreign)
    with run_server(state) as api:
        def get(path: str, key: str = DEFAULT_API_KEY) -> httpx.Response:
            return httpx.get(f"{api.url}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=10.0)

        assert get(f"/v1/customers/{mine}").json()["id"] == mine
        refused = get(f"/v1/customers/{theirs}")
        assert (refused.status_code, refused.json()) == (404, {"error": {
            "type": "invalid_request_error", "message": f"No such customer: '{theirs}'", "code": "resource_missing",
            "param": "id"}})
        assert theirs not in [c["id"] for c in get("/v1/customers?limit=100").json()["data"]]
        invoice = other.objects("invoice")[0]
        assert get(f"/v1/invoices/{invoice}/lines").status_code == 404
        # the endpoint's key was refused the other account's objects; its own were served
        assert state.refused_foreign({mine, theirs, invoice}) == {theirs, invoice}
        # the other account's key reads its own objects, never the endpoint's
        assert get(f"/v1/customers/{theirs}", OTHER_KEY).json()["id"] == theirs
        assert get(f"/v1/customers/{mine}", OTHER_KEY).status_code == 404
        # what the official SDK raises on it
        sdk = stripe.StripeClient(DEFAULT_API_KEY, base_addresses={"api": api.api_base},
                                  http_client=stripe.RequestsClient(timeout=10.0), max_network_retries=0)
        try:
            sdk.v1.customers.retrieve(theirs)
        except stripe.InvalidRequestError as exc:
            assert (exc.http_status, exc.code) == (404, "resource_missing")
        else:
            raise AssertionError("another account's customer was served")


def test_a_fetch_naming_the_other_account_is_stripe_s_403_and_noted_refused() -> None:
    """A receiver passing the event's ``account`` as ``Stripe-Account`` (Connect's pattern) is
    answered 403 for an account its platform cannot reach; for another account's object that is
    a refusal too (its error answer to the event was the API's doing), while a bogus header on
    the endpoint's own object is the receiver's mistake and noted as nothing."""
    own, other = World(7), World(8)
    own.lifecycle()
    other.lifecycle()
    mine, theirs = own.objects("customer")[0], other.objects("customer")[0]
    invoice = other.objects("invoice")[0]
    foreign = foreign_account_id(own.account)
    state = ServerState()
    state.add_world(own)
    state.add_world(other, account=foreign)
    with run_server(state) as api:
        def get(path: str) -> httpx.Response:
            return httpx.get(f"{api.url}{path}", headers={"Authorization": f"Bearer {DEFAULT_API_KEY}",
                                                          "Stripe-Account": foreign}, timeout=10.0)

        for path in (f"/v1/customers/{theirs}", f"/v1/invoices/{invoice}/lines", f"/v1/customers/{mine}"):
            refused = get(path)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.json()["error"]["message"].startswith("Only Stripe Connect platforms")
    assert state.refused_foreign({mine, theirs, invoice}) == {theirs, invoice}


def test_a_generic_hmac_receiver_fetching_with_its_own_key_passes_foreign_account(tmp_path: Path) -> None:
    """generic-hmac sends another account's events (Stripe never does: `foreign-account` does
    not apply to it, Connect endpoint or not); a receiver that checks no account but
    fetches each object with its own key is refused it (404) and applies nothing: it passes,
    its 503s included (it checked, and cannot tell that 404 from an object not visible yet)."""
    cfg = receiver_config("generic_fetch", tmp_path, "generic_secret_0123456789", seed=7,
                          scenarios=["foreign-account"], profile="generic-hmac", module="tests.examples.generic_fetch",
                          cwd=PROJECT_ROOT)
    (scenario,) = certify(cfg, out_dir=tmp_path / "report").report.scenarios
    assert scenario.verdict == "pass", [(f.check_id, f.message) for f in scenario.findings]
    assert scenario.findings == ()
    assert {a.status for a in scenario.attempts} == {503}, [a.status for a in scenario.attempts]


def test_stripe_and_standard_webhooks_send_no_foreign_account_event() -> None:
    """Stripe never sends an endpoint an account's events it is not connected to; Standard
    Webhooks' events carry no account: no foreign-account scenario to raise a false alarm."""
    for name, connect in (("stripe", False), ("stripe", True), ("standard-webhooks", False)):
        plan = CATALOG["foreign-account"].plan(Context(profile=get_profile(name), account="acct_1Mine",
                                                       connect=connect), World(3))
        assert isinstance(plan, NotApplicable), (name, connect)
