"""A sender-bound storm's stale object whose events went unanswered is unknown, whatever ids its attempts record.

A Shopify delivery records its event as ``{topic}:{X-Shopify-Event-Id}`` (one merchant action's
topics share the Event-Id), not the world's own id: the storm looked the world's id up among the
attempts, found none, and kept as a finding the ``stale`` of an order whose cancellation never got
an answer while its ``lost`` keys, judged by their message, were unknown. A correct receiver
working through a backlog failed the storm.
"""

from __future__ import annotations

from hookproof.loadtests.cut import unanswered_of
from hookproof.scenarios.findings import CheckResult, Finding, Verdict
from hookproof.simulator.delivery.history import Completion
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world

WHY = "the storm was sender-bound"


def _order_cancelled():  # type: ignore[no-untyped-def]
    world = new_world("shopify", 3)
    order = world.place_order()
    world.cancel(order)
    return world, order


def test_an_order_whose_shopify_events_went_unanswered_is_unknown() -> None:
    world, order = _order_cancelled()
    profile = get_profile("shopify")
    events = [e for e in world.events if e.object_id == order]
    wire = [profile.envelope(e).event_id for e in events]
    assert all(w != e.id for w, e in zip(wire, events))  # the attempts' ids are not the world's
    by_event = {w: [n] for n, w in enumerate(wire)}
    completions = [Completion.OK] * (len(wire) - 1) + [Completion.UNKNOWN]  # the last event: no answer
    stale = CheckResult("stale", Verdict.INVALID, (Finding("stale", order, "final state is paid"),))
    judged = unanswered_of([stale], events, completions, by_event, WHY,
                           wire_id=lambda e: profile.envelope(e).event_id)
    assert judged.objects == frozenset({order})
    assert unanswered_of([stale], events, completions, by_event, WHY).objects == frozenset()  # before: no attempts found


def test_an_order_whose_events_were_answered_stays_a_finding() -> None:
    world, order = _order_cancelled()
    profile = get_profile("shopify")
    events = [e for e in world.events if e.object_id == order]
    by_event = {profile.envelope(e).event_id: [n] for n, e in enumerate(events)}
    stale = CheckResult("stale", Verdict.INVALID, (Finding("stale", order, "final state is paid"),))
    judged = unanswered_of([stale], events, [Completion.OK] * len(events), by_event, WHY,
                           wire_id=lambda e: profile.envelope(e).event_id)
    assert judged.objects == frozenset()
