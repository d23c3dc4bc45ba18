"""A Stripe shop's Checkout modes (`[target] checkout_modes`): a SaaS selling plans opens
subscription-mode sessions alone, so Stripe never sends it a payment-mode session's completion
and a receiver that ignores one is right (tests/examples/plans_only.py). Told so, certify,
explore and storm open sessions of those modes alone; not told, certify's lost fulfilments come
with a note saying how to tell it."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.config import ConfigError, parse_config
from hookproof.demo import receiver_config
from hookproof.scenarios.world_ops import apply_action, legal_actions
from hookproof.simulator.world import World

SECRET = "whsec_plans_only_0123456789"
#: What a SaaS selling plans subscribes its endpoint to (Stripe's "Using webhooks with subscriptions").
ENABLED = ["checkout.session.completed", "customer.subscription.created", "customer.subscription.updated",
           "customer.subscription.deleted", "invoice.paid", "invoice.payment_failed"]
#: Scenarios whose story completes a payment-mode session among others.
SCENARIOS = ["duplicate-sequential", "mass-redelivery"]
NOTE = ("lost finding(s) are payment-mode Checkout Sessions' fulfilments (fulfillment:cs_…): hookproof's stories "
        "open Checkout Sessions in both modes, as a shop selling one-off purchases and plans does; if yours opens "
        "only subscription-mode sessions (a SaaS selling plans), Stripe never sends it one: say so with "
        "checkout_modes = [\"subscription\"] under [target] and certify again")


def _certify(tmp_path: Path, modes: list[str] | None):  # type: ignore[no-untyped-def]
    cfg = receiver_config("plans_only", tmp_path, SECRET, seed=5, scenarios=SCENARIOS, settle_window_s=0.15,
                          module="tests.examples.plans_only", cwd=PROJECT_ROOT)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": ENABLED,
                                                                         "checkout_modes": modes})})
    return certify(cfg, out_dir=tmp_path / "report").report


@pytest.mark.slow
def test_a_saas_selling_plans_passes_once_its_checkout_modes_are_said(tmp_path: Path) -> None:
    told = _certify(tmp_path, ["subscription"])
    assert {s.id: s.verdict for s in told.scenarios} == {s: "pass" for s in SCENARIOS}, told.notes
    sent = {a.event_type for s in told.scenarios for a in s.attempts}
    assert "checkout.session.completed" in sent
    assert not any(NOTE in n for n in told.notes)


@pytest.mark.slow
def test_not_told_its_lost_payment_mode_fulfilments_come_with_a_note_saying_how(tmp_path: Path) -> None:
    report = _certify(tmp_path, None)
    assert {s.id: "lost" in {f.check_id for f in s.findings} for s in report.scenarios} == {s: True for s in SCENARIOS}
    assert all(f.key.startswith("fulfillment:cs_") for s in report.scenarios for f in s.findings if f.check_id == "lost")
    (note,) = [n for n in report.notes if NOTE in n]
    assert note.split(" ", 1)[0].isdigit()


def test_the_world_of_a_plans_only_shop_opens_subscription_mode_sessions_alone() -> None:
    world = World(3)
    world.checkout_modes = frozenset({"subscription"})
    world.lifecycle()
    for _ in range(3):
        apply_action(world, "checkout", None)
    modes = [world.peek(cs)["mode"] for cs in world.objects("checkout.session")]
    assert modes == ["subscription"] * 4
    plain = World(3)
    plain.lifecycle()
    assert sorted({plain.peek(cs)["mode"] for cs in plain.objects("checkout.session")}) == ["payment", "subscription"]


def test_a_shop_selling_nothing_through_checkout_has_no_checkout_operation() -> None:
    world = World(3)
    world.checkout_modes = frozenset()
    world.lifecycle()
    assert world.objects("checkout.session") == []
    assert "checkout" not in {action for action, _ in legal_actions(world)}
    payment_only = World(3)
    payment_only.checkout_modes = frozenset({"payment"})
    for _ in range(4):
        apply_action(payment_only, "checkout", None)
    assert [payment_only.peek(cs)["mode"] for cs in payment_only.objects("checkout.session")] == ["payment"] * 4


BASE = """
[target]
url = "http://127.0.0.1:9/webhooks"
secret = "whsec_x"
{target}
[observer]
kind = "sink"
"""


def test_checkout_modes_is_checked_where_it_is_written(tmp_path: Path) -> None:
    def parse(target: str):  # type: ignore[no-untyped-def]
        path = tmp_path / "hookproof.toml"
        path.write_text(BASE.format(target=target), encoding="utf-8")
        return parse_config(path.read_text(encoding="utf-8"), source=str(path))

    assert parse('checkout_modes = ["subscription"]').target.shop_checkout_modes() == frozenset({"subscription"})
    with pytest.raises(ConfigError, match="payment or subscription mode, not 'setup'"):
        parse('checkout_modes = ["setup"]')
    with pytest.raises(ConfigError, match="checkout_modes: Stripe Checkout's session modes, not the 'paddle'"):
        parse('profile = "paddle"\ncheckout_modes = ["subscription"]')
    with pytest.raises(ConfigError, match="checkout.session.completed is listed while checkout_modes = \\[\\]"):
        parse('checkout_modes = []\nenabled_events = ["checkout.session.completed"]')
    with pytest.raises(ConfigError, match="give the shop's Checkout modes once"):
        parse('checkout_modes = ["subscription"]\n[target.seed]\nurl = "http://127.0.0.1:9/seed"\n'
              'creates = ["checkout.session"]\ncheckout_modes = ["subscription"]')


def _explore(tmp_path: Path, modes: frozenset[str] | None, seed: int):  # type: ignore[no-untyped-def]
    import time

    from hookproof.receivers import ReceiverConfig, make_app
    from hookproof.scenarios.explore_targets import ExploreTarget, Prepared
    from hookproof.scenarios.observers import observation_from_data
    from hookproof.scenarios.statemachine import explore
    from hookproof.simulator.delivery import Target
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.server import ServerState
    from tests.examples.plans_only import PlansOnly

    receiver = PlansOnly(ReceiverConfig(db_url=f"sqlite:///{tmp_path / f'plans-{seed}-{bool(modes)}.db'}",
                                        secrets=(SECRET,)))
    prepared = Prepared(Target(app=make_app(receiver)),
                        lambda: observation_from_data(receiver.observe(), time.time(), observer="python"))
    target = ExploreTarget(profile=get_profile("stripe"), secrets=(SECRET,), open=lambda: prepared,
                           describe="in-process plans_only", enabled=frozenset(ENABLED), checkout_modes=modes)
    try:
        return explore(target, max_examples=40, seed=seed, provider_state=ServerState())
    finally:
        receiver.close()


@pytest.mark.slow
def test_explore_opens_the_shop_s_checkout_modes_alone(tmp_path: Path) -> None:
    told = _explore(tmp_path, frozenset({"subscription"}), 4)
    assert told.failure is None and told.acked, told.error
    untold = _explore(tmp_path, None, 4)
    assert untold.failure is not None
    assert {f.key.split(":")[0] for f in untold.failure.findings if f.check_id == "lost"} == {"fulfillment"}, (
        untold.failure.summary())


def test_a_storm_s_stories_open_the_shop_s_checkout_modes_alone(tmp_path: Path) -> None:
    from hookproof.commands.storm import build_spec
    from hookproof.loadtests.stories import play_stories, template_world

    path = tmp_path / "hookproof.toml"
    path.write_text(BASE.format(target='checkout_modes = ["subscription"]'), encoding="utf-8")
    spec = build_spec(parse_config(path.read_text(encoding="utf-8"), source=str(path)), users=1, rate=1.0,
                      duration_s=1.0, shape="steady", duplicates=0.0, burst=1, reorder_window=1, waves=0,
                      out=tmp_path / "out", sink_url=None, progress_path=None)
    assert spec.checkout_modes == ("subscription",)
    world = template_world("billing", 7, checkout_modes=spec.checkout_modes)
    play_stories(world, 4)
    assert {world.peek(cs)["mode"] for cs in world.objects("checkout.session")} == {"subscription"}
