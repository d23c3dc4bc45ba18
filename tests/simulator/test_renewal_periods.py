"""The billing world's renewals: contiguous periods, dated at their period's end.

In Stripe a subscription renews when its current period ends: the new period starts at that
end and lasts one interval, paid or not; the renewal invoice's line item carries the new
period and the invoice's own ``period_start``/``period_end`` look back one period (Stripe's
Invoice object reference). The world's clock moves to the boundary first, so the renewal's
events carry a ``created`` at least that boundary; a dunning retry happens at the invoice's
``next_payment_attempt``; certify's same-second story (`World.within_second`) keeps its second.
"""

from __future__ import annotations

import pytest

from hookproof.simulator.world import World


@pytest.mark.parametrize("step_us", [1_000, 400_000])  # explore's clock steps, certify's and the storm's
def test_renewals_start_where_the_last_period_ended(step_us: int) -> None:
    w = World(5, step_us=step_us)
    sub = w.subscribe(w.event(w.create_customer()).object_id)
    invoices = [w.get(sub)["latest_invoice"], w.renew(sub)]
    failed = w.renew(sub, pay=False)
    w.retry_invoice(failed)
    invoices += [failed, w.renew(sub)]
    lines = [w.get(i)["lines"]["data"][0]["period"] for i in invoices]
    for before, after in zip(lines, lines[1:]):
        assert after["start"] == before["end"] and after["end"] - after["start"] == 30 * 86400
    for before, after, inv in zip(lines, lines[1:], invoices[1:]):
        renewal = w.get(inv)
        assert renewal["billing_reason"] == "subscription_cycle"
        # Stripe's invoice period looks back one period; the line item carries the new one
        assert (renewal["period_start"], renewal["period_end"]) == (before["start"], before["end"])
        events = [e for e in w.events if e.object_id == inv]
        assert events and all(e.created >= after["start"] for e in events)
    (declined,) = [e for e in w.events if e.object_id == failed and e.type == "invoice.payment_failed"]
    (retried,) = [e for e in w.events if e.object_id == failed and e.type == "invoice.paid"]
    assert retried.created >= declined.object["next_payment_attempt"] > declined.created  # dunning's retry
    current = w.get(sub)
    assert current["items"]["data"][0]["current_period_start"] == lines[-1]["start"]
    assert current["current_period_end"] == lines[-1]["end"]
    past_due = [e for e in w.events if e.object_id == sub and e.status == "past_due"]
    assert past_due[0].object["current_period_start"] == lines[2]["start"]  # moved on though unpaid


def test_a_trials_end_happens_when_the_trial_ends() -> None:
    w = World(8)
    sub = w.subscribe(w.event(w.create_customer()).object_id, trial=True)
    trial_end = w.get(sub)["trial_end"]
    start = len(w.events)
    inv = w.end_trial(sub)
    assert all(e.created >= trial_end for e in w.events[start:])
    assert w.get(inv)["lines"]["data"][0]["period"]["start"] == trial_end


def test_a_same_second_story_keeps_its_second_at_the_period_end() -> None:
    """certify's deliberate tie (`within_second`): the renewal moves the clock to its period's
    end, then its retry and the cancellation stay in that second."""
    w = World(4242)
    sub = w.subscribe(w.event(w.create_customer()).object_id)
    end = w.get(sub)["current_period_end"]
    start = len(w.events)
    with w.within_second():
        inv = w.renew(sub, pay=False)
        w.retry_invoice(inv)
        w.cancel(sub)
    assert {e.created for e in w.events[start:]} == {end}
