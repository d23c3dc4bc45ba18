"""Properties of the billing world (Hypothesis): versions, transitions, keys, determinism."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookproof.simulator.errors import WorldError
from hookproof.simulator.world import SCRIPTS, TRANSITIONS, World, events_of_type, referenced_ids

#: One step of a customer's life: (operation, argument).
STEPS = st.lists(st.sampled_from(["pay", "refund", "renew-ok", "renew-fail", "retry-ok", "retry-fail", "plan",
                                  "checkout", "async-checkout", "expire", "cancel", "fail-payment",
                                  "fail-then-pay"]),
                 min_size=1, max_size=12)


def play(seed: int, steps: list[str], locale: str = "en_US") -> World:
    """Apply `steps` to a fresh world, skipping the ones the world says are illegal now."""
    w = World(seed, start_us=1_700_000_000_000_000)
    cus = w.event(w.create_customer(locale)).object_id
    sub = w.subscribe(cus)
    charges: list[str] = []
    open_invoice: str | None = None
    for step in steps:
        try:
            if step == "pay":
                charges.append(w.get(w.pay(cus))["latest_charge"])
            elif step == "refund" and charges:
                ch = w.get(charges[-1])
                if ch["amount"] > ch["amount_refunded"]:
                    w.refund(charges[-1], max(1, (ch["amount"] - ch["amount_refunded"]) // 2))
            elif step in ("renew-ok", "renew-fail"):
                inv = w.renew(sub, pay=step == "renew-ok")
                open_invoice = None if step == "renew-ok" else inv
            elif step in ("retry-ok", "retry-fail") and open_invoice:
                w.retry_invoice(open_invoice, pay=step == "retry-ok")
                if step == "retry-ok":
                    open_invoice = None
            elif step == "plan":
                w.change_plan(sub, w.create_price(currency=w.get(cus)["currency"]))
            elif step in ("checkout", "async-checkout", "expire"):
                cs = w.open_checkout(cus, w.create_price(interval=None), asynchronous=step == "async-checkout")
                if step == "expire":
                    w.expire_checkout(cs)
                else:
                    w.complete_checkout(cs)
                    if step == "async-checkout":
                        w.settle_async_checkout(cs)
            elif step == "cancel":
                w.cancel(sub)
            elif step == "fail-payment":
                w.fail_payment(cus)
            elif step == "fail-then-pay":
                charges.append(w.retry_payment(w.fail_payment(cus)))
        except WorldError:
            pass  # illegal now (e.g. renewing a canceled subscription): the world refused, nothing changed
    return w


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_versions_strictly_increase_and_every_version_is_announced(seed: int, steps: list[str]) -> None:
    w = play(seed, steps)
    last: dict[str, int] = {}
    for e in w.events:
        assert e.version > last.get(e.object_id, 0), (e.type, e.object_id)
        assert e.object["hookproof_version"] == e.version
        last[e.object_id] = e.version
    for sub in w.objects("subscription"):
        versions = [e.version for e in w.events if e.object_id == sub]
        assert versions == list(range(1, w.version(sub) + 1))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_only_allowed_transitions_occur(seed: int, steps: list[str]) -> None:
    w = play(seed, steps)
    for oid in w.objects():
        kind = w.object_type(oid)
        if kind not in TRANSITIONS:
            continue
        statuses = [w.get(oid, v)["status"] for v in range(1, w.version(oid) + 1)]
        for old, new in zip(statuses, statuses[1:]):
            assert new == old or new in TRANSITIONS[kind][old], (kind, old, new)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_business_keys_are_unique_per_effect(seed: int, steps: list[str]) -> None:
    w = play(seed, steps)
    keys = Counter(e.business_key for e in w.events if e.business_key)
    assert all(n == 1 for n in keys.values()), keys.most_common(3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_same_seed_same_world(seed: int, steps: list[str]) -> None:
    a, b = play(seed, steps, "pt_BR"), play(seed, steps, "pt_BR")
    assert [(e.id, e.type, e.object) for e in a.events] == [(e.id, e.type, e.object) for e in b.events]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_every_id_inside_an_event_is_an_object_of_the_world(seed: int, steps: list[str]) -> None:
    w = play(seed, steps)
    for e in w.events:
        for ref in referenced_ids(e.object):
            assert w.has(ref), (e.type, ref)


def test_illegal_transition_is_refused_and_changes_nothing() -> None:
    w = World(1)
    cus = w.event(w.create_customer()).object_id
    sub = w.subscribe(cus)
    w.cancel(sub)
    before = (len(w.events), w.version(sub))
    with pytest.raises(WorldError, match="canceled -> canceled"):
        w.cancel(sub)
    assert (len(w.events), w.version(sub)) == before


def test_refunds_carry_the_cumulative_amount_in_their_keys() -> None:
    w = World(3)
    cus = w.event(w.create_customer()).object_id
    charge = w.get(w.pay(cus, amount=1000))["latest_charge"]
    w.refund(charge, 300)
    w.refund(charge, 700)
    refunds = [e for e in w.events if e.type == "charge.refunded"]
    assert [(e.business_key, e.amount) for e in refunds] == [
        (f"refund:{charge}:300", 300), (f"refund:{charge}:1000", 700)]
    with pytest.raises(WorldError, match="cannot refund"):
        w.refund(charge, 1)


def test_async_checkout_fulfils_on_the_async_event_only() -> None:
    w = World(5)
    cus = w.event(w.create_customer()).object_id
    cs = w.open_checkout(cus, w.create_price(interval=None), asynchronous=True)
    w.complete_checkout(cs)
    w.settle_async_checkout(cs)
    by_type = {e.type: e.business_key for e in w.events if e.object_id == cs}
    assert by_type == {"checkout.session.completed": None,
                       "checkout.session.async_payment_succeeded": f"fulfillment:{cs}"}


@pytest.mark.parametrize(("currency", "method"), [("usd", "us_bank_account"), ("eur", "sepa_debit"),
                                                  ("brl", "boleto")])
def test_a_delayed_session_is_paid_by_a_method_of_its_currency(currency: str, method: str) -> None:
    """Boleto takes BRL alone (docs.stripe.com/payments/boleto); a USD session paid later is ACH
    Direct Debit's (docs.stripe.com/payments/ach-direct-debit), a EUR one SEPA Direct Debit's."""
    w = World(5)
    cus = w.event(w.create_customer()).object_id
    cs = w.open_checkout(cus, w.create_price(interval=None, currency=currency), asynchronous=True)
    w.complete_checkout(cs)
    session = w.get(cs)
    assert (session["payment_method_types"], session["currency"], session["payment_status"]) == (
        [method], currency, "unpaid")


def test_a_session_the_receiver_opens_for_a_bank_debit_completes_unpaid() -> None:
    from hookproof.simulator.server.writes import create_checkout_session

    w = World(5)
    price = w.create_price(interval=None, currency="eur")
    for methods, status in ((["sepa_debit"], "unpaid"), (["card"], "paid")):
        cs = create_checkout_session(w, {"mode": "payment", "line_items": [{"price": price, "quantity": "1"}],
                                         "payment_method_types": methods})
        w.complete_checkout(cs)
        assert (w.get(cs)["payment_method_types"], w.get(cs)["payment_status"]) == (methods, status)


@pytest.mark.parametrize("event_type", sorted(SCRIPTS))
def test_every_scripted_event_type_is_emitted(event_type: str) -> None:
    events = events_of_type(World(9), event_type, 2)
    assert len(events) >= 2 and {e.type for e in events} == {event_type}


def test_locales_give_their_currency_and_names() -> None:
    w = World(2)
    br = w.get(w.event(w.create_customer("pt_BR")).object_id)
    us = w.get(w.event(w.create_customer("en_US")).object_id)
    assert (br["currency"], br["address"]["country"]) == ("brl", "BR")
    assert (us["currency"], us["address"]["country"]) == ("usd", "US")


def test_a_trial_without_a_payment_method_pauses_and_resumes() -> None:
    w = World(5)
    sub = w.subscribe(w.event(w.create_customer()).object_id, trial=True)
    w.pause(sub)
    assert w.get(sub)["status"] == "paused"
    w.resume(sub)
    assert w.get(sub)["status"] == "active"
    assert [(e.type, e.status) for e in w.events if e.object_id == sub] == [
        ("customer.subscription.created", "trialing"),
        ("customer.subscription.paused", "paused"),
        ("customer.subscription.resumed", "active"),
        ("customer.subscription.updated", "active"),
    ]
    with pytest.raises(WorldError, match="not paused"):
        w.resume(sub)


def test_a_session_opened_without_a_customer_gets_one_and_keeps_what_the_shop_set() -> None:
    w = World(6)
    cs = w.open_checkout(None, w.create_price(interval=None), quantity=2, client_reference_id="order-9",
                         metadata={"cart": "9"}, customer_email="ada@example.com")
    events = w.complete_checkout(cs)
    assert [e.type for e in events] == ["customer.created", "charge.succeeded", "checkout.session.completed",
                                        "payment_intent.succeeded"]
    done = events[2].object
    assert (done["client_reference_id"], done["metadata"], done["payment_status"]) == ("order-9", {"cart": "9"}, "paid")
    assert w.get(done["customer"])["email"] == "ada@example.com"
    # the session's metadata is not copied there: the intent's is the story's shop's payment_intent_data
    assert w.get(done["payment_intent"])["metadata"] == {"channel": "checkout"}
    with pytest.raises(WorldError, match="not open"):
        w.complete_checkout(cs)


def test_a_payment_mode_session_s_intent_carries_payment_intent_data_metadata_alone() -> None:
    """Stripe copies no metadata from a session to its payment intent: ``payment_intent_data.metadata``
    sets the intent's (docs.stripe.com/api/checkout/sessions/create). A receiver reading the intent's
    metadata for the session's must fail here as it does in production."""
    w = World(6)
    cs = w.open_checkout(None, w.create_price(interval=None), metadata={"cart": "9"},
                         payment_intent_metadata={"order": "o-9"})
    done = next(e.object for e in w.complete_checkout(cs) if e.type == "checkout.session.completed")
    assert (done["metadata"], w.get(done["payment_intent"])["metadata"]) == ({"cart": "9"}, {"order": "o-9"})
    charge = w.get(w.get(done["payment_intent"])["latest_charge"])
    assert charge["metadata"] == {"order": "o-9"}  # the intent's charge carries the intent's metadata
    with pytest.raises(WorldError, match="only a payment-mode session makes a payment intent"):
        w.open_checkout(None, w.create_price(), mode="subscription", payment_intent_metadata={"order": "o-9"})


def test_a_paid_payment_mode_session_sends_its_payment_intent_s_events_owing_one_fulfilment() -> None:
    """Completing a paid payment-mode session sends its intent's ``charge.succeeded`` and
    ``payment_intent.succeeded`` beside ``checkout.session.completed`` (the Stripe CLI's
    ``stripe trigger checkout.session.completed``: charge.succeeded, checkout.session.completed,
    payment_intent.succeeded), and a delayed method's later success likewise beside
    ``async_payment_succeeded``; the purchase owes one effect, the session's ``fulfillment:``,
    the intent's events none (docs.stripe.com/checkout/fulfillment)."""
    w = World(6)
    customer = w.event(w.create_customer()).object_id
    cs = w.open_checkout(customer, w.create_price(interval=None))
    events = w.complete_checkout(cs)
    pi = w.get(cs)["payment_intent"]
    charge = w.get(pi)["latest_charge"]
    assert [(e.type, e.object_id, e.business_key) for e in events] == [
        ("charge.succeeded", charge, None), ("checkout.session.completed", cs, f"fulfillment:{cs}"),
        ("payment_intent.succeeded", pi, None)]
    assert events[2].object["status"] == "succeeded" and events[2].object["amount_received"] == events[1].amount
    assert [e.created_us for e in events] == sorted(e.created_us for e in events)
    delayed = w.open_checkout(customer, w.create_price(interval=None), asynchronous=True)
    assert [e.type for e in w.complete_checkout(delayed)] == ["checkout.session.completed"]  # unpaid: nothing paid
    settled = w.settle_async_checkout(delayed)
    intent = w.get(delayed)["payment_intent"]
    assert [(e.type, e.object_id, e.business_key) for e in settled] == [
        ("charge.succeeded", w.get(intent)["latest_charge"], None),
        ("checkout.session.async_payment_succeeded", delayed, f"fulfillment:{delayed}"),
        ("payment_intent.succeeded", intent, None)]
    failed = w.open_checkout(customer, w.create_price(interval=None), asynchronous=True)
    w.complete_checkout(failed)
    assert [e.type for e in w.settle_async_checkout(failed, succeeded=False)] == [
        "checkout.session.async_payment_failed"]
    # a payment intent of the shop's own (not a session's) still owes its license
    own = w.pay(customer)
    assert w.events[-2].type == "payment_intent.succeeded" and w.events[-2].business_key == f"license:{own}"


def test_a_subscription_mode_session_starts_its_subscription() -> None:
    w = World(7)
    customer = w.event(w.create_customer()).object_id
    cs = w.open_checkout(customer, w.create_price(), mode="subscription", metadata={"cart": "4"},
                         subscription_metadata={"plan": "pro"})
    events = w.complete_checkout(cs)
    assert [e.type for e in events] == ["customer.subscription.created", "invoice.created", "invoice.paid",
                                        "customer.subscription.updated", "checkout.session.completed"]
    done = events[-1].object
    assert w.get(done["subscription"])["metadata"] == {"plan": "pro"}  # subscription_data's, not the session's
    assert done["metadata"] == {"cart": "4"}
    assert done["invoice"] == w.get(done["subscription"])["latest_invoice"]
    assert (done["mode"], done["payment_status"], done["payment_intent"], done["status"]) == \
        ("subscription", "paid", None, "complete")
    assert w.get(done["subscription"])["status"] == "active"
    assert w.get(done["invoice"])["status"] == "paid"
    assert done["amount_total"] == w.get(done["invoice"])["amount_paid"]
    assert [e.business_key for e in events] == [None, None, f"renewal:{done['invoice']}", None, f"provision:{cs}"]
    with pytest.raises(WorldError, match="one_time: it cannot be sold in subscription mode"):
        w.open_checkout(customer, w.create_price(interval=None), mode="subscription")


def test_a_trial_subscription_mode_session_completes_with_nothing_to_pay() -> None:
    """A trial bought through Checkout: the subscription starts ``trialing``, its first invoice
    for $0 is paid ("An immediate invoice is still created, but for $0":
    docs.stripe.com/billing/subscriptions/trials), and the session says ``no_payment_required``,
    naming that invoice; it still provisions (its key)."""
    w = World(7)
    cs = w.open_checkout(None, w.create_price(), mode="subscription", trial=True, customer_email="t@example.com")
    assert (w.get(cs)["amount_total"], w.get(cs)["customer_creation"]) == (0, "always")
    events = w.complete_checkout(cs)
    assert [e.type for e in events] == ["customer.created", "customer.subscription.created", "invoice.created",
                                        "invoice.paid", "checkout.session.completed"]
    done = events[-1].object
    assert (done["payment_status"], done["invoice"], done["payment_intent"]) == (
        "no_payment_required", events[3].object_id, None)
    assert (events[3].object["amount_paid"], events[3].business_key, events[3].amount) == (
        0, f"renewal:{done['invoice']}", 0)
    assert w.get(done["subscription"])["status"] == "trialing"
    assert events[-1].business_key == f"provision:{cs}"
    with pytest.raises(WorldError, match="only a subscription-mode session has a trial"):
        w.open_checkout(None, w.create_price(interval=None), trial=True)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=STEPS)
def test_peek_is_the_latest_snapshot_get_copies(seed: int, steps: list[str]) -> None:
    """`peek` reads the very snapshot `get` hands out a copy of, for every object, latest
    or at each of its versions."""
    world = play(seed, steps)
    for object_id in world.objects():
        assert world.peek(object_id) == world.get(object_id)
        assert world.peek(object_id) is world.peek(object_id) and world.get(object_id) is not world.get(object_id)
        top = world.version(object_id)
        for version in range(1, top + 1):
            assert world.peek(object_id, version) == world.get(object_id, version)
        assert world.peek(object_id, top) is world.peek(object_id)
        for missing in (0, top + 1):
            with pytest.raises(WorldError, match="has no version"):
                world.peek(object_id, missing)
    with pytest.raises(WorldError):
        world.peek("cus_missing")


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32), lengths=st.lists(st.integers(0, 40), max_size=8))
def test_tokens_draw_as_random_choice_draws(seed: int, lengths: list[int]) -> None:
    """A world's ids and tokens are the characters `random.Random.choice` would draw from the
    same generator, and leave it in the same state: a seed's ids did not change when
    `_token` stopped calling `choice` once per character."""
    import random

    from hookproof.simulator.world import world as world_module

    world = World(seed)
    reference = random.Random()
    reference.setstate(world._rng.getstate())
    for n in lengths:
        assert world._token(n) == "".join(reference.choice(world_module._ALPHABET) for _ in range(n))
    assert world._rng.getstate() == reference.getstate()


def test_a_failed_payment_paid_on_retry_moves_its_payment_intent_to_succeeded() -> None:
    w = World(7, start_us=1_700_000_000_000_000)
    cus = w.event(w.create_customer("en_US")).object_id
    pi = w.fail_payment(cus)
    start = len(w.events)
    charge = w.retry_payment(pi)
    assert [(e.type, e.object_id, e.status) for e in w.events[start:]] == [
        ("payment_intent.succeeded", pi, "succeeded"), ("charge.succeeded", charge, "succeeded")]
    intent = w.get(pi)
    assert intent["latest_charge"] == charge and intent["last_payment_error"] is None
    assert intent["amount_received"] == intent["amount"] == w.get(charge)["amount"]
    assert w.get(charge)["payment_intent"] == pi
    with pytest.raises(WorldError, match="not requires_payment_method"):
        w.retry_payment(pi)


def test_stripe_order_puts_id_and_object_first_and_copies_every_container() -> None:
    """id, object, then the other keys alphabetically; a metadata hash in the shop's order."""
    from collections import OrderedDict

    from hookproof.simulator.world.stripe_shapes import stripe_order

    inner = {"b": 1, "object": "price", "id": "price_1", "a": [{"x": None, "id": "li_1"}, 2.5, True]}
    value = {"z": inner, "object": "subscription", "id": "sub_1", "items": [inner], "more": OrderedDict(b=1, id="x")}
    out = stripe_order(value)
    assert list(out) == ["id", "object", "items", "more", "z"]  # the rest alphabetically
    assert list(out["z"]) == ["id", "object", "a", "b"] and list(out["z"]["a"][0]) == ["id", "x"]
    assert out == value and type(out["more"]) is dict and list(out["more"]) == ["id", "b"]
    assert out["z"] is not inner and out["items"][0] is not inner and out["z"]["a"] is not inner["a"]
    assert stripe_order("cus_1") == "cus_1" and stripe_order(None) is None
    meta = {"zone": "b", "cart": "a"}
    ordered = stripe_order({"metadata": meta, "amount": 1})
    assert list(ordered) == ["amount", "metadata"] and list(ordered["metadata"]) == ["zone", "cart"]
    assert ordered["metadata"] is not meta


def test_an_endpoint_not_sent_the_checkout_events_owes_the_purchase_on_its_intent() -> None:
    """A Checkout purchase owes its fulfilment on the session's events; an endpoint enabled for
    payment_intent.succeeded without them (a shop fulfilling on the intent alone) is owed the
    intent's own license instead, or a receiver licensing every intent there was `unexpected`."""
    from hookproof.scenarios.catalog import CATALOG, Context, Plan
    from hookproof.simulator.profiles import get_profile

    stripe = get_profile("stripe")
    for enabled, keyed in ((None, False), (frozenset({"payment_intent.succeeded", "charge.succeeded"}), True)):
        world = World(8)
        plan = CATALOG["duplicate-sequential"].plan(Context(profile=stripe, enabled=enabled), world)
        assert isinstance(plan, Plan)
        session_intents = {e.object["payment_intent"] for e in world.events if e.type == "checkout.session.completed"}
        intents = [e for e in world.events if e.type == "payment_intent.succeeded" and e.object_id in session_intents]
        assert intents, [e.type for e in world.events]
        assert {e.business_key for e in intents} == ({f"license:{e.object_id}" for e in intents} if keyed else {None})
