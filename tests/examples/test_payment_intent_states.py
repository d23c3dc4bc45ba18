"""A Stripe payment intent's and checkout session's states, observed with ``[observer.states]``.

When the observer reads payment intents' states, the scenarios that walk one object's states
walk a payment intent whose first confirmation is declined, then paid on its retry
(``requires_payment_method``, ``succeeded``): alone when it reads neither subscriptions' nor
invoices', beside them when it does (a shop reading all three), and `stale-failure-after-success`
delivers the decline after the payment too. tests/examples/payment_intent_states.py never
writes over ``succeeded`` and passes; its twin storing each status as it arrives is left
``requires_payment_method`` by the failure delivered last.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.receivers.db import INVOICE_STATE_QUERY
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.world import World

SCENARIOS = ["reorder", "stale-after-newer"]
STATES = {"payment_intent": "SELECT object_id, status FROM payment_intent_states"}
#: What a shop reads beside its subscriptions (the config's `state`): invoices and payment intents.
SHOP_STATES = {"invoice": INVOICE_STATE_QUERY, **STATES}
ORDERING = ["reorder", "stale-after-newer", "stale-failure-after-success"]


def _phases(scenario: str, kinds: frozenset[str]) -> list[list[tuple[str, str]]]:
    """The (object kind, event type) of each phase of `scenario`'s plan for an observer reading `kinds`."""
    plan = CATALOG[scenario].plan(Context(profile=StripeProfile(), state_kinds=kinds), World(7))
    assert isinstance(plan, Plan)
    return [[(e.object_type, e.type) for e in phase.events] for phase in plan.phases]


def test_the_ordering_scenarios_walk_a_declined_payment_intent_beside_the_other_kinds() -> None:
    """Reading subscriptions, invoices and payment intents, `reorder` sends the intent's two events
    after the subscription's (its fault plan delivers the phase newest first), and `stale-after-newer` and
    `stale-failure-after-success` send its ``payment_intent.payment_failed`` in their last phase,
    after its ``payment_intent.succeeded``; without payment intents among the kinds, no scenario
    sends one of its events (the plans are what they were)."""
    shop = frozenset({"subscription", "invoice", "payment_intent"})
    intents = [("payment_intent", "payment_intent.payment_failed"), ("payment_intent", "payment_intent.succeeded")]
    (reorder,) = _phases("reorder", shop)
    assert [k for k, _ in reorder[:6]] == ["subscription"] * 6 and reorder[6:] == intents
    newer, older = _phases("stale-after-newer", shop)
    assert ("payment_intent", "payment_intent.succeeded") in newer and older[-1] == intents[0]
    assert {k for k, _ in older[:-1]} == {"subscription"}
    paid, failed = _phases("stale-failure-after-success", shop)
    assert failed == [("invoice", "invoice.payment_failed"), intents[0]] and paid[-1] == intents[1]
    for scenario in ORDERING:
        for kinds in (frozenset({"subscription", "invoice"}), frozenset({"subscription"})):
            assert all(k != "payment_intent" for phase in _phases(scenario, kinds) for k, _ in phase), scenario
    assert _phases("reorder", frozenset({"payment_intent"})) == [intents]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "failed"), [
    ({}, {}),
    ({"arrival_order": 1}, {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"],
                            "stale-failure-after-success": ["regressed", "stale"]}),
])
def test_a_blind_payment_intent_status_is_found_beside_subscriptions_and_invoices(
        tmp_path: Path, options: dict[str, float], failed: dict[str, list[str]]) -> None:
    """A shop's observer reads subscriptions (`state`), invoices and payment intents: over the whole
    catalog, the receiver keeping ``succeeded`` passes (or a scenario does not apply), its twin
    storing each intent's status as it arrives fails exactly the three ordering scenarios, on that
    intent alone (its subscriptions and invoices are kept newest version first, as inbox_sync
    keeps them)."""
    cfg = receiver_config("payment_intent_states", tmp_path, "whsec_payment_intent_states_0123", seed=7,
                          settle_window_s=0.15, options=options,
                          module="tests.examples.payment_intent_states", cwd=PROJECT_ROOT)
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"states": SHOP_STATES})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
           if s.verdict not in ("pass", "not_applicable")}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    assert all(f.key.startswith("pi_") for s in report.scenarios for f in s.findings)
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks
             if c.check_id == "stale" and s.id in ORDERING}
    # the walked subscription(s) and the intent; stale-failure-after-success: its subscription, both its
    # invoices (the first paid, the renewal failed then paid) and the intent
    assert stale == {"reorder": 2, "stale-after-newer": 3, "stale-failure-after-success": 4}


@pytest.mark.slow
@pytest.mark.parametrize(("options", "failed"), [
    ({}, {}),
    ({"arrival_order": 1}, {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}),
])
def test_a_payment_intent_s_states_are_walked_and_compared(tmp_path: Path, options: dict[str, float],
                                                            failed: dict[str, list[str]]) -> None:
    cfg = receiver_config("payment_intent_states", tmp_path, "whsec_payment_intent_states_0123", seed=7,
                          scenarios=SCENARIOS, settle_window_s=0.15, options=options,
                          module="tests.examples.payment_intent_states", cwd=PROJECT_ROOT)
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"state": None, "states": STATES})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    assert stale == {"reorder": 1, "stale-after-newer": 1}
    failed_pi = r"requires_payment_method \(event evt_\w+, payment_intent\.payment_failed, created (\d+)\)"
    succeeded = r"succeeded \(event evt_\w+, payment_intent\.succeeded, created (\d+)\)"
    tie = (r"(; both carry created \d+, so a receiver cannot order them by created alone: Stripe advises fetching "
           r"the object from the API when an event arrives \(docs\.stripe\.com/webhooks, Event ordering\))?")
    words = {"stale": f"final state is {failed_pi}, the provider's is {succeeded}{tie}",
             "regressed": f"went back from {succeeded} to {failed_pi}{tie}"}
    findings = [f for s in report.scenarios for f in s.findings]
    matched = [re.fullmatch(words[f.check_id], f.message) for f in findings]
    assert all(f.key.startswith("pi_") and m is not None for f, m in zip(findings, matched)), \
        [(f.key, f.message) for f in findings]
    # the tie is said exactly when the two events carry one created
    assert all((m[1] == m[2]) == (m[3] is not None) for m in matched if m is not None), [f.message for f in findings]


@pytest.mark.slow
def test_checkout_sessions_final_states_are_compared(tmp_path: Path) -> None:
    """A checkout session's ``status`` does not go back between its events (``complete``,
    ``expired``), so only its final state is judged: mass-redelivery compares its four
    sessions (paid by card; a plan bought in subscription mode; by a delayed method, settled; by a delayed method,
    failed) with the provider's, and the receiver keeping them passes."""
    cfg = receiver_config("payment_intent_states", tmp_path, "whsec_payment_intent_states_0123", seed=7,
                          scenarios=["mass-redelivery"], settle_window_s=0.15,
                          module="tests.examples.payment_intent_states", cwd=PROJECT_ROOT)
    sessions = {"checkout.session": "SELECT object_id, status FROM checkout_session_states"}
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"state": None, "states": sessions})})
    (scenario,) = certify(cfg, out_dir=tmp_path / "report").report.scenarios
    assert scenario.verdict == "pass", (scenario.reason, [f.message for f in scenario.findings])
    (stale,) = [c for c in scenario.checks if c.check_id == "stale"]
    assert stale.verdict == "valid" and stale.stats["objects"] == 4
