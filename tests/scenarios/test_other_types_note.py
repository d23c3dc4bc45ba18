"""`duplicated`'s note on another event of the same object (`key_loops.OtherTypes`): named
for sure when the key was applied more times than deliveries carried it; otherwise offered
only for an event of the same resource (Paddle's ``transaction.paid`` beside the
``transaction.completed`` a team fulfils on), not for any event of the object (GitHub's
``issues.closed`` beside a comment's key)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hookproof.scenarios.key_loops import OtherTypes, family
from hookproof.simulator.delivery import Attempt, Completion, Outcome

BASE = Attempt(event_id="evt_1", delivery_id="dlv_1", attempt=1, business_key=None, object_id="obj_1",
               object_version=1, event_type="t", faults=(), valid=True, sent_at=1.0, answered_at=1.1, status=200,
               outcome=Outcome.ACKED, completion=Completion.OK, latency_ms=1.0)


def history(keyed_type: str, copies: int, other_type: str) -> list[Attempt]:
    keyed = [replace(BASE, event_id="evt_keyed", delivery_id=f"dlv_{n}", business_key="key:1",
                     event_type=keyed_type) for n in range(copies)]
    return [*keyed, replace(BASE, event_id="evt_other", delivery_id="dlv_other", event_type=other_type)]


@pytest.mark.parametrize(("event_type", "resource"), [
    ("transaction.paid", "transaction"), ("customer.subscription.updated", "customer.subscription"),
    ("orders/paid", "orders"), ("issue_comment.created", "issue_comment"), ("push", "push"),
])
def test_family_is_the_resource(event_type: str, resource: str) -> None:
    assert family(event_type) == resource


def test_the_same_resources_other_event_is_offered_when_copies_may_explain_it() -> None:
    h = history("transaction.completed", 2, "transaction.paid")
    assert OtherTypes(h).note([0, 1], 2) == ("; the same object's transaction.paid (evt_other) was delivered too "
                                             "and owes no effect (it may have applied it as well)")


def test_another_resources_event_is_not_offered_when_copies_may_explain_it() -> None:
    h = history("issue_comment.created", 2, "issues.closed")
    assert OtherTypes(h).note([0, 1], 2) == ""


def test_any_other_event_is_named_when_the_key_was_applied_more_times_than_carried() -> None:
    h = history("issue_comment.created", 1, "issues.closed")
    assert OtherTypes(h).note([0], 2) == (
        "; more times than deliveries carried it: other events of the same object were delivered too "
        "(issues.closed (evt_other)), so one of them, or an event of another object naming it, applied it as well")


def test_a_keyed_event_of_the_same_type_is_named_when_the_key_was_applied_more_times_than_carried() -> None:
    """A Mercado Pago payment's refund notification (payment.updated, carrying its refund's key)
    read as approved again by a receiver fulfilling on every approved payment it fetches."""
    h = history("payment.updated", 2, "payment.updated")
    h[-1] = replace(h[-1], business_key="refund:1:2")
    assert OtherTypes(h).note([0, 1], 4) == (
        "; more times than deliveries carried it: other events of the same object were delivered too "
        "(payment.updated (evt_other)), so one of them, or an event of another object naming it, applied it as well")
    assert OtherTypes(h).note([0, 1], 2) == ""  # its own copies explain it; a keyed event is not offered


@pytest.mark.parametrize("other", ["user.updated", "user.deleted", "orders/updated"])
def test_an_update_or_an_end_of_the_object_is_not_offered_when_copies_may_explain_it(other: str) -> None:
    """Two copies of a Clerk user.created each sending a welcome email were said to be perhaps
    the user's user.updated's or user.deleted's doing: no receiver makes a creation's effect on
    those, and the copies explain it."""
    creation = "orders/create" if other.startswith("orders") else "user.created"
    assert OtherTypes(history(creation, 2, other)).note([0, 1], 2) == ""
