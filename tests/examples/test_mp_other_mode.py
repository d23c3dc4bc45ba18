"""``test-mode-to-live`` on Mercado Pago: another mode's payment is not the endpoint's token's to read.

Mercado Pago's test notification URL is used along with the test credentials, the production
one with the productive credentials ("Webhooks": "configure a test URL that, along with your
test credentials..."), so a live payment is never served to a test token: the provider API
answers it 404 ``Payment not found``, as it answers another seller's (`test_mp_foreign_account`).
A receiver written from the docs that fetches each notified payment with its test token and
trusts what it reads, never looking at the notification's ``live_mode``, applies nothing and
must pass; a receiver trusting the notification applies the live payment and fails with
``unexpected``.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hookproof.certify import certify
from hookproof.simulator.delivery.mutations import other_mode_owner
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import emit_events, new_world
from tests.examples.test_mp_foreign_account import NOT_FOUND
from tests.examples.test_provider_receivers import ACCOUNT, config


def test_a_live_payment_is_answered_404_to_the_endpoints_test_token() -> None:
    own, live = new_world("mercadopago", 7, account=ACCOUNT), new_world("mercadopago", 8, account=ACCOUNT)
    (mine,) = emit_events(own, "payment.created")
    (theirs,) = emit_events(live, "payment.created")
    state = ServerState()
    state.add_world(own)
    state.add_world(live, account=other_mode_owner(True))
    with run_server(state) as api:
        def get(payment: str) -> httpx.Response:
            return httpx.get(f"{api.url}/v1/payments/{payment}", headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"})

        assert get(mine.object_id).json()["id"] == int(mine.object_id)
        refused = get(theirs.object_id)
        assert (refused.status_code, refused.json()) == (404, NOT_FOUND)
    assert state.refused_foreign({theirs.object_id}) == {theirs.object_id}


@pytest.mark.parametrize(("module", "mode", "verdict", "checks"), [
    ("examples.receivers.mercadopago_fetch", "any", "pass", set()),  # trusts its fetch, never reads live_mode
    ("examples.receivers.mercadopago_fetch", "0", "pass", set()),  # ignores the other mode's notification
    ("tests.examples.mp_trusting", "any", "fail", {"unexpected"}),  # applies the notification, never fetches
])
def test_test_mode_to_live_judges_what_the_receiver_applied_from_its_own_fetch(
        tmp_path: Path, module: str, mode: str, verdict: str, checks: set[str]) -> None:
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    start = base.target.start.model_copy(update={
        "command": base.target.start.command.replace("examples.receivers.mercadopago_fetch", module),
        "env": {**base.target.start.env, "MP_LIVE_MODE": mode}})
    cfg = base.model_copy(update={"target": base.target.model_copy(update={"start": start})})
    (scenario,) = certify(cfg, scenarios=["test-mode-to-live"], out_dir=tmp_path / "report").report.scenarios
    blocking = [f for f in scenario.findings if f.severity == "finding"]
    assert (scenario.verdict, {f.check_id for f in blocking}) == (verdict, checks), [f.message for f in scenario.findings]
    if verdict == "fail":
        assert blocking and all(f.key.startswith("license:") for f in blocking)
        assert all("applied a live-mode event on a test-mode endpoint (livemode)" in f.message for f in blocking)
    elif mode == "any":  # each fetch answered 404, each notification answered 503: right, nothing advised
        assert {a.status for a in scenario.attempts} == {503}, [a.status for a in scenario.attempts]
        assert scenario.findings == (), [f.message for f in scenario.findings]
