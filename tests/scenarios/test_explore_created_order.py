"""explore's clock: a receiver ordering subscription status by ``event.created`` is not a finding.

Stripe's operations happen at different times: a subscription is renewed (or fails its
renewal) when its period ends, a month after it started, and a cancellation is a later
request than the subscription's creation. explore's billing world moves its clock at least
a second before each operation (`world_ops.apply_action`) and a renewal to its period's end
(`World.renew`), so a receiver that keeps a stored status unless the new event's ``created``
is newer (``>``: `timestamp_seconds_order`) or as new (``>=``: the test twin
`created_or_equal_order`), read by its status alone, passes explore, as it would pass
against Stripe, while its arrival-order twin (`blind_overwrite`) still fails.

The events of one operation still share a second, as Stripe's do (a subscription's creation
and the update its first paid invoice makes): `timestamp_seconds_order` read with the
version it stores drops that update and is still found (`test_statemachine.BROKEN`); three
changes of different status in one second are certify's deliberate story
(`stale-after-newer`, `tests/scenarios/test_same_second_order.py`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.schedules import CLOCK_STEP_US, clock_start_us
from hookproof.scenarios.statemachine import Prepared, Step, explore, replay
from hookproof.scenarios.world_ops import apply_action
from hookproof.simulator.server.state import ServerState
from hookproof.simulator.world import World
from tests.scenarios import created_or_equal_order


def _late(action: str, late_type: str) -> list[Step]:
    """A subscription, then `action` on it, whose last `late_type` event is delivered before the
    subscription's first update (active): the events' numbers found by type in a world of the
    replay's seed told as the replay's is (every type: an invoice's payment's own events among them)."""
    from hookproof.simulator.profiles import get_profile

    emits = [Step("emit", action="subscribe"), Step("emit", action=action, object=0)]
    world = World(3)
    stripe = get_profile("stripe")
    world.sent_only(lambda t: stripe.provider_type(t) is not None)
    for step in emits:
        apply_action(world, step.action or "", step.object)
    types = [e.type for e in world.events]
    late = len(types) - 1 - types[::-1].index(late_type)
    return [*emits, Step("deliver", event=late), Step("deliver", event=types.index("customer.subscription.updated"))]


#: The schedules of the report: a failed renewal's past-due update delivered before the
#: subscription's first update (active); a cancellation delivered before it.
LATE_ACTIVE = _late("fail_renewal", "customer.subscription.updated")
LATE_AFTER_CANCEL = _late("cancel", "customer.subscription.deleted")


class StatusOnlyPool(ReceiverPool):
    """A pool whose receivers are read by status alone, the versions they store unread: a
    receiver keeping only a subscription's status, as the report's did."""

    def _make(self) -> tuple[Any, Prepared]:
        receiver, prepared = super()._make()
        observe = prepared.observe

        def status_only() -> Observation:
            seen = observe()
            return replace(seen, states=tuple(replace(st, version=None) for st in seen.states))

        return receiver, replace(prepared, observe=status_only)


def _pool(name: str, tmp_path: Path, provider: ServerState) -> ReceiverPool:
    if name == "blind_overwrite":
        return StatusOnlyPool(name, tmp_path, provider_state=provider)
    receivers = StatusOnlyPool("timestamp_seconds_order", tmp_path, provider_state=provider)
    if name == "created_or_equal_order":  # a test twin, not one of examples/receivers
        receivers.module, receivers.name = created_or_equal_order, name
    return receivers


def _explore_world() -> World:
    return World(5, start_us=clock_start_us(), step_us=CLOCK_STEP_US)


def test_each_operation_happens_in_a_later_second() -> None:
    w = _explore_world()
    seconds: list[set[int]] = []
    for action, index in [("subscribe", None), ("pay", None), ("cancel", 0), ("subscribe", None),
                          ("change_plan", 1), ("fail_renewal", 1), ("retry_invoice", 2), ("refund", 0)]:
        start = len(w.events)
        apply_action(w, action, index)
        seconds.append({e.created for e in w.events[start:]})
    assert all(len(s) == 1 for s in seconds), seconds  # one operation's events share a second
    firsts = [min(s) for s in seconds]
    assert firsts == sorted(firsts) and len(set(firsts)) == len(firsts), firsts


@pytest.mark.parametrize("steps", [LATE_ACTIVE, LATE_AFTER_CANCEL], ids=["late-active", "late-after-cancel"])
@pytest.mark.parametrize(("name", "finds"), [("timestamp_seconds_order", False), ("created_or_equal_order", False),
                                             ("blind_overwrite", True)])
def test_the_reported_schedules(steps: list[Step], name: str, finds: bool, tmp_path: Path) -> None:
    provider = ServerState()
    receivers = _pool(name, tmp_path, provider)
    try:
        found = replay(receivers.target(), steps, 3, provider_state=provider)
    finally:
        receivers.close()
    checks = set() if found is None else {f.check_id for f in found.findings}
    assert bool(checks & {"regressed", "stale"}) == finds, found.summary() if found else None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["timestamp_seconds_order", "created_or_equal_order"])
def test_receivers_ordering_by_created_survive_the_search(name: str, tmp_path: Path) -> None:
    provider = ServerState()
    receivers = _pool(name, tmp_path, provider)
    try:
        result = explore(receivers.target(), max_examples=200, seed=7, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is None, result.failure.summary() if result.failure else ""
    assert result.error is None
