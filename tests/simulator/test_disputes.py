"""Stripe's disputes and a bank refund's later status, told only to an endpoint listing them.

``charge.dispute.*`` (docs.stripe.com/api/disputes/object) and ``refund.updated`` /
``refund.failed`` (docs.stripe.com/refunds, "Refund failures") are optional types of the stripe
profile: a world told the endpoint is sent them (`World.sent_only`) adds a chargeback and two
refunds of an ACH payment to its lifecycle, and the scenarios walking states walk them where the
observer reads ``dispute`` or ``refund`` states; every other world is told what it always was.
"""

from __future__ import annotations

from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.stripe import DISPUTE_EVENT_TYPES, REFUND_UPDATE_TYPES, StripeProfile
from hookproof.simulator.world import World
from hookproof.simulator.world.lifecycle import invoice_payment
from hookproof.simulator.world.world import DISPUTE_TYPES

LISTED = (*DISPUTE_EVENT_TYPES, *REFUND_UPDATE_TYPES)


def _events(sends: tuple[str, ...]) -> list[Event]:
    w = World(11)
    types = set(StripeProfile(subscribed=sends).event_types())  # the default types, and those listed
    w.sent_only(lambda t: t in types)
    return w.lifecycle()


def _lifecycle(sends: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
    return [(e.id, e.type, e.status) for e in _events(sends)]


def test_the_world_s_dispute_types_are_the_profile_s() -> None:
    assert DISPUTE_TYPES == DISPUTE_EVENT_TYPES


def test_a_lifecycle_tells_a_chargeback_and_bank_refunds_only_to_an_endpoint_listing_them() -> None:
    plain = _lifecycle(())
    assert not {t for _, t, _ in plain} & set(LISTED)
    # an endpoint not told: unchanged, but for the invoices' payments' own events (`World.invoice_payment_types`)
    assert [p for p, e in zip(plain, _events(())) if not invoice_payment(e)] == [
        (e.id, e.type, e.status) for e in World(11).lifecycle()]
    told = _lifecycle(LISTED)
    extra = [(t, s) for _, t, s in told if t in LISTED or t == "refund.created"]
    assert extra == [
        ("refund.created", "succeeded"),  # the card payment's third, refunded at once
        ("charge.dispute.created", "needs_response"), ("charge.dispute.funds_withdrawn", "needs_response"),
        ("charge.dispute.updated", "under_review"), ("charge.dispute.closed", "won"),
        ("charge.dispute.funds_reinstated", "won"),
        ("refund.created", "pending"), ("refund.updated", "succeeded"),  # the ACH payment's, by its bank
        ("refund.created", "pending"), ("refund.failed", "failed"),
    ]


def _phases(scenario: str, kinds: set[str], listed: tuple[str, ...] = LISTED) -> list[list[tuple[str, str | None]]]:
    ctx = Context(profile=StripeProfile(subscribed=listed), state_kinds=frozenset(kinds))
    plan = CATALOG[scenario].plan(ctx, World(7))
    assert isinstance(plan, Plan)
    return [[(e.type, e.status) for e in phase.events] for phase in plan.phases]


def test_stale_after_newer_delivers_a_dispute_s_and_each_refund_s_first_status_last() -> None:
    newer, older = _phases("stale-after-newer", {"dispute", "refund"})
    assert newer == [("charge.dispute.funds_withdrawn", "needs_response"), ("charge.dispute.updated", "under_review"),
                     ("charge.dispute.closed", "won"), ("charge.dispute.funds_reinstated", "won"),
                     ("refund.updated", "succeeded"), ("refund.failed", "failed")]
    assert older == [("charge.dispute.created", "needs_response"), ("refund.created", "pending"),
                     ("refund.created", "pending")]
    (reorder,) = _phases("reorder", {"dispute"})
    assert [t for t, _ in reorder] == list(DISPUTE_EVENT_TYPES)


def test_an_observer_reading_disputes_of_an_endpoint_not_sent_them_walks_no_dispute() -> None:
    for kinds in ({"subscription", "dispute"}, {"subscription", "refund"}):
        assert all(not t.startswith(("charge.dispute.", "refund.")) for phase in _phases("reorder", kinds, ())
                   for t, _ in phase)


def test_the_effect_story_charges_back_the_partly_refunded_payment_owing_one_dispute_effect() -> None:
    (phase,) = _phases("duplicate-sequential", set(), DISPUTE_EVENT_TYPES)
    disputes = [t for t, _ in phase if t.startswith("charge.dispute.")]
    assert disputes == list(DISPUTE_EVENT_TYPES)  # its creation among the owed, its later events after them
    ctx = Context(profile=StripeProfile(subscribed=DISPUTE_EVENT_TYPES))
    plan = CATALOG["duplicate-sequential"].plan(ctx, World(7))
    assert isinstance(plan, Plan)
    keys = [e.business_key for e in plan.phases[0].events if e.object_type == "dispute"]
    assert keys[0] is not None and keys[0].startswith("dispute:dp_") and keys[1:] == [None] * 4
