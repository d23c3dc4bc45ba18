"""``foreign-account`` on Mercado Pago: another seller's payment is not the endpoint's token's to read.

The real API answers a payment the access token's account cannot see with 404
``{"message": "Payment not found", "error": "not_found", "status": 404, "cause": [{"code":
2000, ...}]}`` (`simulator.server.mercadopago`'s sources). A receiver written from Mercado
Pago's docs fetches each notified payment with its own token: on that 404 it cannot apply
anything, and answers an error so Mercado Pago retries (`mercadopago_fetch`: 503; the
scenario accepts it, and advises no 4xx: the receiver checked) or acknowledges it.
It must pass without checking ``user_id``; a receiver trusting the notification applies
the other seller's payment and fails with ``unexpected``.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hookproof.certify import certify
from hookproof.simulator.delivery.mutations import foreign_account_id
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import emit_events, new_world
from tests.examples.test_provider_receivers import ACCOUNT, config

NOT_FOUND = {"message": "Payment not found", "error": "not_found", "status": 404,
             "cause": [{"code": 2000, "description": "Payment not found", "data": None}]}


def test_a_payment_is_served_only_to_a_token_of_the_account_that_owns_it() -> None:
    own, other = new_world("mercadopago", 7, account=ACCOUNT), new_world("mercadopago", 8, account=ACCOUNT)
    (mine,) = emit_events(own, "payment.created")
    (theirs,) = emit_events(other, "payment.created")
    foreign = foreign_account_id(ACCOUNT)
    state = ServerState()
    state.add_world(own)
    state.add_world(other, account=foreign)
    state.add_api_key("APP_USR-other-seller", account=foreign)
    with run_server(state) as api:
        def get(payment: str, token: str) -> httpx.Response:
            return httpx.get(f"{api.url}/v1/payments/{payment}", headers={"Authorization": f"Bearer {token}"})

        assert get(mine.object_id, DEFAULT_API_KEY).json()["id"] == int(mine.object_id)
        refused = get(theirs.object_id, DEFAULT_API_KEY)
        assert (refused.status_code, refused.json()) == (404, NOT_FOUND)
        assert get(theirs.object_id, "APP_USR-other-seller").json()["id"] == int(theirs.object_id)
        assert get(mine.object_id, "APP_USR-other-seller").status_code == 404


#: An API base nothing listens on: the receiver's fetch never reaches the provider API.
NOWHERE = "http://127.0.0.1:9"


@pytest.mark.parametrize(("module", "api_base", "verdict", "checks"), [
    ("examples.receivers.mercadopago_fetch", None, "pass", set()),
    ("tests.examples.mp_trusting", None, "fail", {"unexpected"}),
    # its 503s come from an API it never reached: nothing shows it checked the payment
    ("examples.receivers.mercadopago_fetch", NOWHERE, "fail", {"unexpected"}),
])
def test_foreign_account_judges_what_the_receiver_applied_from_its_own_fetch(
        tmp_path: Path, module: str, api_base: str | None, verdict: str, checks: set[str]) -> None:
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None and base.target.account == ACCOUNT
    start = base.target.start.model_copy(update={
        "command": base.target.start.command.replace("examples.receivers.mercadopago_fetch", module),
        "env": {**base.target.start.env, "MP_USER_ID": "",  # no seller check: the fetch alone decides
                **({"MP_API_BASE": api_base} if api_base else {})}})
    cfg = base.model_copy(update={"target": base.target.model_copy(update={"start": start})})
    (scenario,) = certify(cfg, scenarios=["foreign-account"], out_dir=tmp_path / "report").report.scenarios
    blocking = [f for f in scenario.findings if f.severity == "finding"]
    assert (scenario.verdict, {f.check_id for f in blocking}) == (verdict, checks), [f.message for f in scenario.findings]
    if api_base:
        assert [f.message.split(";")[0] for f in blocking] == [
            f"1 {t} event(s) not refused with a 4xx when invalid (503, 2 time(s))"
            for t in ("payment.created", "payment.updated")]
    elif verdict == "fail":
        assert len(blocking) == 2 and all(f.key.startswith("license:") for f in blocking)
        assert all("applied an event of another account than the endpoint's" in f.message for f in blocking)
    else:  # each fetch answered 404, each notification answered 503 (retried once): right, and nothing advises a 4xx
        assert all(a.status == 503 for a in scenario.attempts), [a.status for a in scenario.attempts]
        assert scenario.findings == (), [f.message for f in scenario.findings]
