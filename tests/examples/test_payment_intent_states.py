"""A Stripe payment intent's and checkout session's states, observed with ``[observer.states]``.

When the observer reads payment intents' states (and neither subscriptions' nor invoices'),
the scenarios that walk one object's states walk a payment intent that fails, then is paid
(``requires_payment_method``, ``succeeded``). tests/examples/payment_intent_states.py never
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

SCENARIOS = ["reorder", "stale-after-newer"]
STATES = {"payment_intent": "SELECT object_id, status FROM payment_intent_states"}


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
    sessions (paid by card; a plan bought in subscription mode; by boleto, settled; by boleto,
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
