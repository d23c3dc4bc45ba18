"""explore draws the operations that emit what the endpoint is sent (`world_ops.focused`).

An endpoint listing Checkout's events alone (a shop selling one-off purchases, Stripe's "Fulfill
orders" guide) is sent a delayed payment's ``checkout.session.async_payment_succeeded`` only
after two draws of ``checkout`` (the second session is paid by a delayed method) and one of
``settle_delayed``: among every billing operation, searches of a hundred examples drew none,
and a receiver that never fulfils on the delayed payment passed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hookproof.receivers import ReceiverConfig, make_app
from hookproof.scenarios.explore_targets import ExploreTarget, Prepared
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.statemachine import explore
from hookproof.scenarios.world_ops import focused, new_world_of, ops_for, walk
from hookproof.simulator.delivery import Target
from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState
from hookproof.unsent import world_types

SECRET = "whsec_focus_0123456789abcdef"
#: A one-off shop's endpoint (its refunds and Checkout's three events).
CHECKOUT = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded",
                      "checkout.session.async_payment_failed", "charge.refunded", "refund.created"})


def _fresh(sends):  # type: ignore[no-untyped-def]
    def make():  # type: ignore[no-untyped-def]
        world = new_world_of("billing", 0)
        world.sent_only(sends)
        return world
    return make


def _everything(world_type: str) -> bool:
    return True


def _actions(ops) -> set[str]:  # type: ignore[no-untyped-def]
    world = _fresh(_everything)()
    seen: set[str] = set()
    for delayed in (False, True, False):  # a card session's charge may be refunded, a delayed one settled
        world.complete_checkout(world.open_checkout(world.event(world.create_customer()).object_id,
                                                    world.create_price(interval=None), asynchronous=delayed))
        seen.update(action for action, _ in ops.legal(world))
    return seen


def test_a_checkout_endpoint_is_told_checkouts_delayed_payments_and_refunds_alone() -> None:
    ops = ops_for("billing")
    sends = CHECKOUT.__contains__
    assert _actions(focused(ops, sends, _fresh(sends))) == {"checkout", "settle_delayed", "fail_delayed", "refund"}
    assert "subscribe" in _actions(ops)


def test_operations_stay_all_when_the_sent_types_need_another_first() -> None:
    ops = ops_for("billing")
    refunds = {"refund.created"}.__contains__  # a refund needs a charge: a payment emits none of these
    assert focused(ops, refunds, _fresh(refunds)) is ops
    assert focused(ops, _everything, _fresh(_everything)) is ops


def test_explore_finds_a_shop_that_never_fulfils_a_delayed_payment(tmp_path: Path) -> None:
    from examples.receivers.ignore_async_payment import IgnoreAsyncPayment

    receiver = IgnoreAsyncPayment(ReceiverConfig(db_url=f"sqlite:///{tmp_path / 'shop.db'}", secrets=(SECRET,)))
    prepared = Prepared(Target(app=make_app(receiver)),
                        lambda: observation_from_data(receiver.observe(), time.time(), observer="python"))
    target = ExploreTarget(profile=get_profile("stripe"), secrets=(SECRET,), open=lambda: prepared,
                           describe="in-process ignore_async_payment", enabled=CHECKOUT)
    try:
        result = explore(target, max_examples=30, seed=11, provider_state=ServerState())
    finally:
        receiver.close()
    assert result.failure is not None, result.error
    lost = [f for f in result.failure.findings if f.check_id == "lost"]
    assert lost and all(f.key.startswith("fulfillment:cs_") for f in lost), result.failure.summary()


def _github(sends):  # type: ignore[no-untyped-def]
    def make():  # type: ignore[no-untyped-def]
        world = new_world_of("github", 0)
        world.sent_only(sends)
        return world
    return make


def test_the_walk_reaches_operations_legal_only_after_another_on_the_same_object() -> None:
    """The walk's rounds suspend and uninstall an installation in one round, and merge a pull
    request before its ``rerun_ci`` (closed and reopened) or ``close_pull_request`` comes: those,
    ``remove_repository`` and ``unsuspend`` never played, so the note on unsent types said
    explore's operations never emit ``installation.unsuspend``, ``pull_request.reopened`` and
    ``installation_repositories.removed``, and an App sent only its installations' events was
    never drawn an unsuspension (nor a Stripe endpoint a subscription marked ``unpaid``, nor a
    Paddle one a recovered subscription). Every operation of each world plays now."""
    for kind in ("billing", "github", "mercadopago", "paddle", "shopify"):
        world = _github(_everything)() if kind == "github" else new_world_of(kind, 0)
        ops = ops_for(kind)
        assert set(walk(ops, world)) == set(ops.actions), kind
    emitted = world_types("github")
    assert emitted is not None and {"installation.unsuspend", "pull_request.reopened",
                                    "installation_repositories.removed"} <= emitted


def test_paddle_s_operations_pause_an_active_subscription_and_resume_a_paused_one() -> None:
    """A new user's Paddle endpoint listed ``subscription.paused`` and ``subscription.resumed``;
    explore's note said its operations never emit them. ``pause`` and ``resume`` come last among
    the legal operations (the others keep their places), each only where the world makes it:
    an ``active`` subscription paused, a ``paused`` one resumed (developer.paddle.com/build/
    subscriptions/pause-subscriptions), never a past-due or canceled one paused."""
    ops = ops_for("paddle")
    world = new_world_of("paddle", 0)
    active, late, ended = world.subscribe(), world.subscribe(), world.subscribe()
    world.renew(late, pay=False)
    world.cancel(ended)
    legal = ops.legal(world)
    assert legal[-1:] == [("pause", 0)] and [a for a in legal if a[0] in ("pause", "resume")] == [("pause", 0)]
    start = len(world.events)
    ops.apply(world, "pause", 0)
    assert [(e.type, e.status) for e in world.events[start:]] == [("subscription.updated", "paused"),
                                                                  ("subscription.paused", "paused")]
    assert [a for a in ops.legal(world) if a[0] in ("pause", "resume")] == [("resume", 0)]
    for action, index in (("pause", 0), ("pause", 1), ("pause", 2), ("resume", 1)):
        with pytest.raises(WorldError):
            ops.apply(world, action, index)
    start = len(world.events)
    ops.apply(world, "resume", 0)
    assert [e.type for e in world.events[start:] if e.object_id == active] == [
        "subscription.updated", "subscription.resumed", "subscription.updated", "subscription.activated"]
    assert world.get(active)["status"] == "active"
    assert {ops.moves["pause"], ops.moves["resume"]} == {"subscription"}
    emitted = walk(ops, new_world_of("paddle", 0))
    assert {"subscription.paused", "subscription.updated"} <= emitted["pause"]
    assert "subscription.resumed" in emitted["resume"]
    assert {"subscription.paused", "subscription.resumed"} <= (world_types("paddle") or set())


def test_an_app_sent_its_installations_events_alone_is_drawn_every_installation_operation() -> None:
    installations = {"installation.created", "installation.deleted", "installation.suspend",
                     "installation.unsuspend"}.__contains__
    ops = focused(ops_for("github"), installations, _github(installations))
    world = _github(installations)()
    world.install()
    world.suspend(world.objects("installation")[-1])
    assert {action for action, _ in ops.legal(world)} == {"install", "uninstall", "unsuspend"}
