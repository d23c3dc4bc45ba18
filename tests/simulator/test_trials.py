"""Stripe's free trials: the $0 first invoice and ``customer.subscription.trial_will_end``.

Stripe: "When creating a subscription with a trial period, no payment method is required for
the customer. An immediate invoice is still created, but for $0"
(docs.stripe.com/billing/subscriptions/trials); ``customer.subscription.trial_will_end`` "Occurs
three days before a subscription's trial period is scheduled to end". Each body is read by
stripe-python as Stripe's own (``construct_event``: an Invoice, a Subscription).
"""

from __future__ import annotations

import stripe

from hookproof.scenarios.catalog import Context, effect_events, state_events
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.world import World

TRIAL_WILL_END = "customer.subscription.trial_will_end"
SECRET = "whsec_trials_0123456789"
DAY = 86400


def _read(profile: StripeProfile, event: object) -> stripe.Event:
    envelope = profile.envelope(event)  # type: ignore[arg-type]
    header = profile.sign(envelope, [SECRET], event.created)["Stripe-Signature"]  # type: ignore[attr-defined]
    return stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)


def test_a_trial_starts_with_a_zero_invoice_paid_owing_its_renewal() -> None:
    w = World(3)
    cus = w.event(w.create_customer()).object_id
    sub = w.subscribe(cus, trial=True)
    types = [e.type for e in w.events[1:]]
    assert types == ["customer.subscription.created", "invoice.created", "invoice.paid"]
    created, _, paid = w.events[1:]
    assert created.status == "trialing" and created.object["latest_invoice"] == paid.object_id
    profile = StripeProfile()
    invoice = _read(profile, paid).data.object
    assert isinstance(invoice, stripe.Invoice)
    assert (invoice.billing_reason, invoice.status, invoice.amount_due, invoice.amount_paid,
            invoice.amount_remaining) == ("subscription_create", "paid", 0, 0, 0)
    assert invoice.parent.subscription_details.subscription == sub
    (line,) = invoice.lines.data
    assert line.amount == 0 and line.description.startswith("Trial period for ")
    assert (line.period.start, line.period.end) == (created.object["trial_start"], created.object["trial_end"])
    assert (paid.business_key, paid.amount) == (f"renewal:{paid.object_id}", 0)  # owed, for 0
    assert isinstance(_read(profile, created).data.object, stripe.Subscription)


def test_its_payment_succeeded_follows_to_an_endpoint_listing_it_and_the_trial_end_bills_a_cycle() -> None:
    w = World(4)
    w.sent_only(lambda t: True)
    cus = w.event(w.create_customer()).object_id
    sub = w.subscribe(cus, trial=True)
    start = len(w.events)
    w.end_trial(sub)
    zero = [e for e in w.events[:start] if e.type.startswith("invoice.paid") or e.type == "invoice.payment_succeeded"]
    assert [(e.type, e.business_key, e.amount) for e in zero] == [
        ("invoice.paid", f"renewal:{zero[0].object_id}", 0), ("invoice.payment_succeeded", zero[0].business_key, 0)]
    told = w.events[start:]
    assert [e.type for e in told] == [TRIAL_WILL_END, "invoice.created", "invoice.paid", "invoice.payment_succeeded",
                                      "charge.succeeded", "payment_intent.succeeded",  # the invoice's payment's own
                                      "customer.subscription.updated"]
    notice = told[0]
    trial_end = w.get(sub)["trial_end"]
    assert (notice.status, notice.business_key, notice.created, notice.request_id) == (
        "trialing", None, trial_end - 3 * DAY, None)
    body = _read(StripeProfile(subscribed=[TRIAL_WILL_END]), notice)
    assert body.type == TRIAL_WILL_END and isinstance(body.data.object, stripe.Subscription)
    assert body.data.object.status == "trialing" and "previous_attributes" not in body.data
    assert told[2].object["billing_reason"] == "subscription_cycle" and told[2].amount > 0
    assert told[-1].status == "active"


def test_an_endpoint_not_sent_the_notice_is_told_no_trial_will_end() -> None:
    w = World(4)
    w.sent_only(lambda t: t != TRIAL_WILL_END)
    w.end_trial(w.subscribe(w.event(w.create_customer()).object_id, trial=True))
    assert TRIAL_WILL_END not in {e.type for e in w.events}


def _context(listed: bool) -> Context:
    subscribed = [TRIAL_WILL_END] if listed else []
    profile = get_profile("stripe", subscribed=subscribed)
    return Context(profile=profile, enabled=frozenset({*get_profile("stripe").event_types(), *subscribed}))


def test_the_stories_walk_a_trial_only_for_an_endpoint_listing_trial_will_end() -> None:
    def told(listed: bool) -> tuple[list[str], list[str]]:
        ctx = _context(listed)
        w, v = World(5), World(5)
        w.sent_only(ctx.sends)
        v.sent_only(ctx.sends)
        return ([f"{e.type}:{e.amount}:{e.object.get('amount_paid')}" for e in effect_events(ctx, w)],
                [f"{e.type}:{e.status}" for e in state_events(ctx, v)])

    plain_effects, plain_states = told(False)
    effects, states = told(True)
    assert not any(e.startswith("invoice.paid:") and e.endswith(":0") for e in plain_effects) and TRIAL_WILL_END + ":trialing" not in plain_states
    # the trial's $0 invoice, its provisioning (nothing paid: no amount), then its trial's end billed
    assert effects[:5] == plain_effects[:5]
    paid = effects[7].split(":")[1]
    assert [e.split(":") for e in effects[5:8]] == [["invoice.paid", "0", "0"],
                                                    ["checkout.session.completed", "None", "None"],
                                                    ["invoice.paid", paid, paid]]
    assert int(paid) > 0
    # and the two invoices' invoice.created among the rest, and the trial end's payment's own
    # payment_intent.succeeded (an invoice's intent: "Subscription update")
    assert len(effects) == len(plain_effects) + 3 + 2 + 1
    intents = "payment_intent.succeeded:None:None"  # intents owing no key: a Checkout session's, an invoice's
    assert effects.count(intents) == plain_effects.count(intents) + 1
    assert states[:len(plain_states)] == plain_states
    assert states[len(plain_states):] == ["customer.subscription.created:trialing", f"{TRIAL_WILL_END}:trialing",
                                          "customer.subscription.updated:active"]
