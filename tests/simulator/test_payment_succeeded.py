"""Stripe's ``invoice.payment_succeeded``, sent only to an endpoint whose ``enabled_events`` lists it.

Stripe sends it right after ``invoice.paid`` for every invoice paid by a payment, with the same
invoice data (docs.stripe.com/invoicing/integration, "Handle payment events"); both owe the
invoice's one ``renewal:{invoice}``. hookproof sends it only where ``target.enabled_events``
lists it (`StripeProfile.optional_types`): left out, or ``"*"``, every story is the one it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import stripe

from hookproof.config import load_config
from hookproof.send import resolve_event
from hookproof.simulator.errors import ProfileError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, events_of_type
from hookproof.simulator.world.lifecycle import RELATED_TYPES, invoice_payment
from hookproof.unsent import configured_types, unmodelled_note, world_types

SUCCEEDED = "invoice.payment_succeeded"
SECRET = "whsec_payment_succeeded_0123"


def _story(w: World) -> str:
    """A subscription started and renewed once: two invoices paid by a payment. The renewal's invoice."""
    return w.renew(w.subscribe(w.event(w.create_customer()).object_id))


def test_a_world_not_told_the_endpoint_is_sent_it_emits_none() -> None:
    w = World(7)
    _story(w)
    assert SUCCEEDED not in {e.type for e in w.events}
    w.sent_only(lambda t: t != SUCCEEDED)
    _story(w)
    assert SUCCEEDED not in {e.type for e in w.events}


def test_an_invoice_paid_by_a_payment_sends_invoice_paid_then_invoice_payment_succeeded() -> None:
    """Both carry the same invoice (its snapshot, version and request), a microsecond apart, and
    owe one renewal. The second's id is drawn from the first's, so every other event of the seed
    keeps its id, and the story is otherwise the one an endpoint not sent it is told."""
    w = World(7)
    w.sent_only(lambda t: True)
    invoice = _story(w)
    pairs = [(e.type, e.object_id) for e in w.events if e.type.startswith("invoice.pa")]
    first = pairs[0][1]
    assert pairs == [("invoice.paid", first), (SUCCEEDED, first), ("invoice.paid", invoice), (SUCCEEDED, invoice)]
    paid, succeeded = [e for e in w.events if e.object_id == invoice and e.type.startswith("invoice.pa")]
    assert w.events.index(succeeded) == w.events.index(paid) + 1
    assert succeeded.object == paid.object and succeeded.object["status"] == "paid"
    assert (succeeded.business_key, succeeded.amount, succeeded.version, succeeded.request_id) == (
        f"renewal:{invoice}", paid.amount, paid.version, paid.request_id)
    assert paid.business_key == f"renewal:{invoice}" and paid.amount == paid.object["amount_paid"] > 0
    assert (succeeded.created_us, succeeded.created) == (paid.created_us + 1, paid.created)
    assert succeeded.id != paid.id and succeeded.id.startswith("evt_") and len(succeeded.id) == len(paid.id)
    plain = World(7)
    _story(plain)
    # the invoices' payments' own events aside (`World.invoice_payment_types`, sent beside them too)
    rest = [e for e in w.events if e.type != SUCCEEDED and not invoice_payment(e)]
    assert [e.id for e in rest] == [e.id for e in plain.events]
    assert [e.type for e in rest] == [e.type for e in plain.events]


def test_its_script_sends_it_and_leaves_the_world_as_it_was_told() -> None:
    w = World(9)
    events = events_of_type(w, SUCCEEDED, 2)
    assert [e.type for e in events] == [SUCCEEDED] * 2 and not w.payment_succeeded_sent
    assert len({e.business_key for e in events}) == 2


def test_it_joins_a_new_subscription_s_related_burst() -> None:
    (group,) = [g for g in RELATED_TYPES if "invoice.paid" in g]
    assert SUCCEEDED in group


def test_the_profile_sends_it_only_when_subscribed() -> None:
    assert SUCCEEDED not in get_profile("stripe").event_types()
    assert get_profile("stripe").optional_types == (
        SUCCEEDED, "customer.subscription.trial_will_end", "charge.dispute.created", "charge.dispute.funds_withdrawn",
        "charge.dispute.updated", "charge.dispute.closed", "charge.dispute.funds_reinstated", "refund.updated",
        "refund.failed")
    assert get_profile("stripe").optional_listed_only
    subscribed = get_profile("stripe", subscribed=[SUCCEEDED])
    assert subscribed.provider_type(SUCCEEDED) == SUCCEEDED
    assert set(subscribed.event_types()) == set(get_profile("stripe").event_types()) | {SUCCEEDED}
    with pytest.raises(ProfileError, match="profile 'stripe' has no optional type 'invoice.finalized' to subscribe "
                                           r"to \(optional: invoice.payment_succeeded, customer.subscription.trial_will_end, "
                                           r"charge.dispute.created, .*, refund.updated, refund.failed\)"):
        get_profile("stripe", subscribed=["invoice.finalized"])
    for name in ("standard-webhooks", "svix", "generic-hmac"):  # hookproof's own names: never sent
        assert SUCCEEDED not in get_profile(name).event_types()
    assert resolve_event(get_profile("stripe"), SUCCEEDED) == SUCCEEDED  # send --event sends it


def test_its_body_is_stripe_s_invoice_event_as_stripe_python_reads_it() -> None:
    """stripe-python's ``construct_event`` verifies it and reads ``data.object`` as an Invoice,
    the very invoice ``invoice.paid`` carries."""
    w = World(3)
    w.sent_only(lambda t: True)
    _story(w)
    profile = get_profile("stripe", subscribed=[SUCCEEDED])
    paid, succeeded = [e for e in w.events if e.type.startswith("invoice.pa")][-2:]
    read = {}
    for event in (paid, succeeded):
        envelope = profile.envelope(event)
        headers = profile.sign(envelope, [SECRET], event.created + 5)
        read[event.type] = stripe.Webhook.construct_event(envelope.body, headers["Stripe-Signature"], SECRET,
                                                          tolerance=None)
    got = read[SUCCEEDED]
    assert (got.type, got.id, got.object) == (SUCCEEDED, succeeded.id, "event")
    assert isinstance(got.data.object, stripe.Invoice)
    assert got.data.object.to_dict() == read["invoice.paid"].data.object.to_dict()
    assert got.data.object.status == "paid" and got.data.object.id == paid.object_id
    body = json.loads(profile.envelope(succeeded).body)
    assert set(body) == set(json.loads(profile.envelope(paid).body))


def _config(tmp_path: Path, enabled: str | None, extra: str = "") -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "stripe"', f'secret = "{SECRET}"',
        *([f"enabled_events = {enabled}"] if enabled is not None else []), "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"',
        "", extra]), encoding="utf-8")
    return path


def test_an_endpoint_listing_it_is_sent_it(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, '["invoice.paid", "invoice.payment_succeeded", "invoice.finalized"]'))
    assert cfg.subscribed_types() == [SUCCEEDED]
    assert cfg.profile().provider_type(SUCCEEDED) == SUCCEEDED
    assert cfg.target.unmodelled_types() == ["invoice.finalized"]
    assert unmodelled_note(cfg) == "enabled but not modelled: invoice.finalized; their handling is not certified"
    assert configured_types(cfg) == ["invoice.paid", SUCCEEDED]


@pytest.mark.parametrize("enabled", [None, '["*"]', '["invoice.paid"]'])
def test_an_endpoint_not_listing_it_is_not_sent_it(tmp_path: Path, enabled: str | None) -> None:
    """Left out, ``"*"`` (hookproof's every modelled type, as leaving it out) or a list without it."""
    cfg = load_config(_config(tmp_path, enabled))
    assert cfg.subscribed_types() == [] and cfg.profile().provider_type(SUCCEEDED) is None
    assert SUCCEEDED not in configured_types(cfg) and unmodelled_note(cfg) is None


@pytest.mark.parametrize("enabled", [None, '["invoice.paid"]'])
def test_a_key_rule_for_it_without_listing_it_is_named_with_how_to_be_sent_it(tmp_path: Path,
                                                                          enabled: str | None) -> None:
    """Naming it in ``[business_keys]`` subscribes nothing (a Stripe endpoint's types are its
    ``enabled_events``): the note says it is not sent and how to be sent it."""
    cfg = load_config(_config(tmp_path, enabled, '[business_keys]\n"invoice.payment_succeeded" = '
                                                 '"renewal:{data.object.id}"\n'))
    assert cfg.subscribed_types() == [] and cfg.unsubscribed_named() == [SUCCEEDED]
    assert unmodelled_note(cfg) == (
        "named but not sent: invoice.payment_succeeded; hookproof sends it only to an endpoint whose "
        "target.enabled_events lists it (list it there to certify its handling)")
    assert SUCCEEDED not in configured_types(cfg)


def test_explore_s_operations_emit_it_where_the_endpoint_is_sent_it() -> None:
    subscribed = get_profile("stripe", subscribed=[SUCCEEDED])
    assert SUCCEEDED in (world_types("billing", sends=lambda t: subscribed.provider_type(t) is not None) or ())
    assert SUCCEEDED not in (world_types("billing") or ())


def test_a_storm_s_stories_and_truth_tell_it_where_the_endpoint_is_sent_it(tmp_path: Path) -> None:
    from hookproof.commands.storm import build_spec
    from hookproof.loadtests.storm_truth import template_worlds

    def spec(enabled: str | None):  # type: ignore[no-untyped-def]
        cfg = load_config(_config(tmp_path, enabled))
        return build_spec(cfg, users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.0, burst=1,
                          reorder_window=1, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None, seed=3)

    listed = spec('["invoice.paid", "invoice.payment_succeeded"]')
    assert listed.subscribed == (SUCCEEDED,) and listed.sending_profile().provider_type(SUCCEEDED) == SUCCEEDED
    (world,) = template_worlds(listed, 1)
    paid = [e.business_key for e in world.events if e.type == "invoice.paid"]
    assert paid and [e.business_key for e in world.events if e.type == SUCCEEDED] == paid
    plain = spec(None)
    assert plain.subscribed == () and plain.sending_profile().provider_type(SUCCEEDED) is None
    (told,) = template_worlds(plain, 1)
    assert SUCCEEDED not in {e.type for e in told.events}
    # told every type, its invoices' payments' own events beside the invoices' too (`World.invoice_payment_types`)
    assert [e.id for e in world.events if e.type != SUCCEEDED] == [e.id for e in told.events if not invoice_payment(e)]


def test_events_marks_it_sent_only_to_an_endpoint_listing_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    def lines(*args: str) -> list[str]:
        run = subprocess.run([sys.executable, "-m", "hookproof", "events", *args], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        return run.stdout.splitlines()

    plain = lines("--profile", "stripe")
    optional = get_profile("stripe").optional_types
    assert plain[:-len(optional) - 1] == list(get_profile("stripe").event_types())
    assert plain[-1].split()[0] == "account.updated"  # a Connect endpoint's alone
    assert len(plain[-len(optional) - 1:-1]) == len(optional) == 9
    for line, name in zip(plain[-len(optional) - 1:-1], optional):
        assert line.split() == [name, "sent", "only", "to", "an", "endpoint", "listing", "it", "(target.enabled_events)"]
    _config(tmp_path, '["invoice.paid", "invoice.payment_succeeded"]')
    listed = {line.split()[0]: line for line in lines()}
    assert listed[SUCCEEDED] == SUCCEEDED and listed["invoice.paid"] == "invoice.paid"
    assert listed["invoice.created"].endswith("not sent (not in target.enabled_events)")
