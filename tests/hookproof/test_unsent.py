"""The note naming the enabled types a run never sent (certify, explore, storm)."""

from __future__ import annotations

from pathlib import Path

from hookproof.commands.explore import explore_unsent_note
from hookproof.commands.storm import storm_unsent_note
from hookproof.config import load_config
from hookproof.simulator.delivery import History
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.profiles import get_profile
from hookproof.unsent import configured_types, unsent_note, world_types

ENABLED = ["checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.expired",
           "invoice.paid", "customer.subscription.paused"]


def _config(tmp_path: Path, *, keys: str = "", enabled: list[str] | None = ENABLED) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "stripe"', 'secret = "whsec_unsent_0123"',
        f"enabled_events = {enabled!r}".replace("'", '"') if enabled is not None else "", "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"',
        "", keys]), encoding="utf-8")
    return path


def test_explore_operations_emit_checkout_and_the_note_names_only_what_they_never_send(tmp_path: Path) -> None:
    emitted = world_types("billing")
    assert emitted is not None and {"checkout.session.completed", "checkout.session.async_payment_succeeded",
                                    "checkout.session.async_payment_failed", "invoice.paid"} <= emitted
    cfg = load_config(_config(tmp_path))
    sent = {"checkout.session.completed", "checkout.session.async_payment_succeeded", "invoice.paid"}
    assert explore_unsent_note(cfg, get_profile("stripe"), sent) == (
        "enabled types never sent by this explore: checkout.session.expired, customer.subscription.paused: its "
        "verdict says nothing of how the receiver handles them (its operations never emit them)")
    # a new user's search sent no delayed payment's settlement, which its operations can emit: the
    # note said it never sends them; it names them apart, as types a longer search may draw
    assert explore_unsent_note(cfg, get_profile("stripe"), {"checkout.session.completed", "invoice.paid"}) == (
        "enabled types never sent by this explore: checkout.session.async_payment_succeeded, "
        "checkout.session.expired, customer.subscription.paused: its verdict says nothing of how the receiver "
        "handles them (checkout.session.expired, customer.subscription.paused: its operations never emit them; "
        "checkout.session.async_payment_succeeded: its operations can, and this search drew none: more "
        "--max-examples or another --seed may)")
    assert explore_unsent_note(cfg, get_profile("stripe"), ENABLED) is None


def test_the_storm_note_reads_the_types_its_history_holds(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, keys='[business_keys]\n"charge.refunded" = "refund:{data.object.id}"\n'
                                             '"invoice.created" = false\n'))
    assert configured_types(cfg) == [*ENABLED, "charge.refunded"]
    history = History(tmp_path / "history.sqlite")
    for i, event_type in enumerate(("invoice.paid", "checkout.session.completed", "invoice.paid")):
        history.record(Attempt(event_id=f"evt_{i}", delivery_id=f"d{i}", attempt=1, business_key=None, object_id=None,
                               object_version=None, event_type=event_type, faults=(), valid=True, sent_at=1.0,
                               answered_at=1.1, status=200, outcome=Outcome.ACKED, completion=Completion.OK,
                               latency_ms=100.0))
    history.close()
    assert storm_unsent_note(cfg, tmp_path / "history.sqlite") == (
        "enabled types never sent by this storm: checkout.session.async_payment_succeeded, checkout.session.expired, "
        "customer.subscription.paused, charge.refunded: its verdict says nothing of how the receiver handles them")
    assert storm_unsent_note(cfg, tmp_path / "missing.sqlite") is None
    assert unsent_note(["a", "b"], ["b", "a", "c"], "storm") is None


def test_certify_notes_the_enabled_types_no_scenario_sent(tmp_path: Path) -> None:
    """A new user's certify sent 6 of the 12 types enabled (its business-key rule's types among
    those it never sent) and said nothing; explore and storm did."""
    from hookproof.certify import certify_unsent_note

    cfg = load_config(_config(tmp_path))
    history = History(tmp_path / "history.sqlite")
    history.record(Attempt(event_id="evt_1", delivery_id="d1", attempt=1, business_key=None, object_id=None,
                           object_version=None, event_type="invoice.paid", faults=(), valid=True, sent_at=1.0,
                           answered_at=1.1, status=200, outcome=Outcome.ACKED, completion=Completion.OK,
                           latency_ms=100.0))
    history.close()
    assert certify_unsent_note(cfg, tmp_path / "history.sqlite") == (
        "enabled types never sent by this certify: checkout.session.completed, "
        "checkout.session.async_payment_succeeded, checkout.session.expired, customer.subscription.paused: its "
        "verdict says nothing of how the receiver handles them")
    assert certify_unsent_note(cfg, tmp_path / "missing.sqlite") is None


def test_certify_notes_unsent_types_of_every_type_enabled_by_default_and_none_for_chosen_scenarios(
        tmp_path: Path) -> None:
    """With `enabled_events` left out (or the wildcard) the endpoint is sent every type, so the
    types no scenario sent are named (they were not: a default config said nothing of six types
    certify never sent), as the profile's types, not as types the team enabled (a Shopify user
    who set no enabled_events read "enabled types never sent" of customers/update); a run of
    chosen scenarios names none."""
    from hookproof.certify import certify_unsent_note

    history = History(tmp_path / "history.sqlite")
    stripe = get_profile("stripe").event_types()
    for i, sent in enumerate(t for t in stripe.values() if t != "invoice.voided"):
        history.record(Attempt(event_id=f"evt_{i}", delivery_id=f"d{i}", attempt=1, business_key=None,
                               object_id=None, object_version=None, event_type=sent, faults=(), valid=True,
                               sent_at=1.0, answered_at=1.1, status=200, outcome=Outcome.ACKED,
                               completion=Completion.OK, latency_ms=100.0))
    history.close()
    note = ("types the Stripe profile sends that this certify never sent (enabled_events is left out: the endpoint is "
            "sent every one): invoice.voided: its verdict says nothing of how the receiver handles them")
    for enabled in (None, ["*"]):
        cfg = load_config(_config(tmp_path, enabled=enabled))
        assert configured_types(cfg) == list(stripe.values())
        assert certify_unsent_note(cfg, tmp_path / "history.sqlite") == note
        assert certify_unsent_note(cfg, tmp_path / "history.sqlite", whole=False) is None


def test_paddle_s_pause_and_resume_are_no_longer_types_explore_never_emits(tmp_path: Path) -> None:
    """A new user's Paddle endpoint listed ``subscription.paused`` and ``subscription.resumed``:
    explore's note said its operations never emit them (only a storm sent them). Its ``pause``
    and ``resume`` operations emit them now: a search that drew neither says a longer one may."""
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join([
        "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "paddle"', 'secret = "pdl_ntfset_unsent_0123"',
        'enabled_events = ["transaction.completed", "subscription.paused", "subscription.resumed"]', "",
        "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key, amount FROM e"']),
        encoding="utf-8")
    cfg = load_config(path)
    assert explore_unsent_note(cfg, get_profile("paddle"), {"transaction.completed"}) == (
        "enabled types never sent by this explore: subscription.paused, subscription.resumed: its verdict says "
        "nothing of how the receiver handles them (subscription.paused, subscription.resumed: its operations can, "
        "and this search drew none: more --max-examples or another --seed may)")
    assert explore_unsent_note(cfg, get_profile("paddle"), {"transaction.completed", "subscription.paused", "subscription.resumed"}) is None
