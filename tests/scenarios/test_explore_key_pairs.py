"""explore races a delayed checkout's completion against its payment's success.

Stripe's fulfilment guide runs one ``fulfill_checkout`` from ``checkout.session.completed`` and
from ``checkout.session.async_payment_succeeded``, retrieving the session and fulfilling once it
is paid, and warns it must be safe "possibly concurrently, for the same Checkout Session"
(docs.stripe.com/checkout/fulfillment). A receiver that checks its fulfilment table, then
inserts, ships twice when the completion (retried late, or delayed) meets the payment's
success: explore's bursts released copies of one event only, so searches passed it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from examples.receivers.fetch_state import FetchState
from examples.receivers.pool import observation_of
from hookproof.receivers import OK, Reply, WebhookEvent, handles, make_app
from hookproof.receivers.config import ReceiverConfig
from hookproof.receivers.web import receiver_of
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.statemachine import PROVIDER_API_BASE, ExploreTarget, Prepared, Step, explore, replay
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.state import DEFAULT_API_KEY, ServerState

SECRET = "whsec_key_pairs_0123456789"
#: A one-off shop's endpoint: Checkout's three events.
CHECKOUT = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded",
                      "checkout.session.async_payment_failed"})
#: A delayed checkout (#0 customer.created, #1 its checkout.session.completed, unpaid), then its
#: payment settled (#2 charge.succeeded, #3 async_payment_succeeded, #4 payment_intent.succeeded).
DELAYED_THEN_PAID = [Step("emit", action="checkout", object=1), Step("emit", action="settle_delayed", object=0)]


class FulfilCheckThenInsert(FetchState):
    """fetch_state, deduplicating on the event id, whose fulfilment checks its table, then
    inserts (no claim of the fulfilment's key): copies of one event apply once, the session's
    two events together twice."""

    __test__ = False
    name = "fetch_fulfil_check_then_insert"

    def process(self, event: WebhookEvent) -> Reply:
        if not handles(event.type):
            return Reply(200, {"ignored": event.type})
        with self.store.transaction() as conn:
            if not self.store.claim(conn, f"event:{event.id}", event.id):
                return Reply(200, {"duplicate": event.id})
        confirmed = self._confirmed(event)
        effect = self.effect_of(confirmed) if confirmed is not None else None
        if effect is None:
            return OK
        with self.store.transaction() as conn:
            done = self.store.has_effect(conn, effect.business_key)
        if not done:
            time.sleep(0.05)  # the fulfilment service
            with self.store.transaction() as conn:
                self.store.apply_effect(conn, effect, event.id)
        return OK


def _target(tmp_path: Path, racy: bool) -> tuple[ExploreTarget, Any]:
    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / f'shop-{racy}.db'}", secrets=(SECRET,),
                            api_base=PROVIDER_API_BASE, api_key=DEFAULT_API_KEY)
    app = make_app((FulfilCheckThenInsert if racy else FetchState)(config))
    receiver = receiver_of(app)

    def observe() -> Observation:
        return observation_of(receiver)
    prepared = Prepared(Target(app=app), observe)
    return ExploreTarget(profile=get_profile("stripe"), secrets=(SECRET,), open=lambda: prepared,
                         describe="in-process shop", enabled=CHECKOUT), receiver


def _replayed(tmp_path: Path, racy: bool, steps: list[Step]) -> set[str]:
    target, receiver = _target(tmp_path, racy)
    provider = ServerState()
    try:
        found = replay(target, steps, 3, provider_state=provider)
    finally:
        receiver.close()
    return set() if found is None else {f.check_id for f in found.findings}


def test_the_completion_and_the_payment_s_success_released_together(tmp_path: Path) -> None:
    steps = [*DELAYED_THEN_PAID, Step("burst_related", events=(1, 3))]
    assert _replayed(tmp_path, True, steps) == {"duplicated"}
    assert _replayed(tmp_path, False, steps) == set()


@pytest.mark.parametrize("racy", [True, False], ids=["check_then_insert", "claimed"])
def test_explore_finds_the_racy_fulfilment_and_passes_the_claimed_one(racy: bool, tmp_path: Path) -> None:
    target, receiver = _target(tmp_path, racy)
    try:
        result = explore(target, max_examples=60, seed=7, provider_state=ServerState())
    finally:
        receiver.close()
    if not racy:
        assert result.failure is None and result.error is None, result.failure.summary() if result.failure else ""
        assert "checkout.session.async_payment_succeeded" in result.sent_types
        return
    assert result.failure is not None, f"no finding in {result.examples} examples"
    assert "duplicated" in {f.check_id for f in result.failure.findings}, result.failure.summary()
