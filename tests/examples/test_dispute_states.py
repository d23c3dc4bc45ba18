"""A Stripe Checkout shop of digital goods handling chargebacks and bank refunds.

An endpoint listing Stripe's dispute events (``charge.dispute.*``) and a refund's later
status (``refund.updated``, ``refund.failed``) is told a chargeback (opened, funds withdrawn,
evidence submitted, won, funds reinstated) and two refunds of an ACH payment (``pending``, then
completed or returned by the bank). tests/examples/dispute_states.py records one ``dispute:``
effect per dispute and keeps each dispute's and refund's status newest version first: it
passes. Its twins, storing each status as it arrives or recording an effect on every dispute
event, fail exactly the scenarios that show it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import DISPUTE_EVENT_TYPES, REFUND_UPDATE_TYPES

SECRET = "whsec_dispute_states_0123456789"
STATES = {"dispute": "SELECT object_id, status FROM dispute_states",
          "refund": "SELECT object_id, status FROM refund_states"}
SCENARIOS = ["duplicate-sequential", "reorder", "stale-after-newer"]


def _certify(tmp_path: Path, options: dict[str, float]) -> Any:
    cfg = receiver_config("dispute_states", tmp_path, SECRET, seed=7, scenarios=SCENARIOS, settle_window_s=0.15,
                          options=options, module="tests.examples.dispute_states", cwd=PROJECT_ROOT)
    listed = [*get_profile("stripe").event_types(), *DISPUTE_EVENT_TYPES, *REFUND_UPDATE_TYPES]
    cfg = cfg.model_copy(update={
        "target": cfg.target.model_copy(update={"enabled_events": listed}),
        "observer": cfg.observer.model_copy(update={"state": None, "states": STATES})})
    return certify(cfg, out_dir=tmp_path / "report").report


#: Per twin, (scenario, check, the kind of object found) of every finding: a dispute's key begins
#: ``dp_``, a refund's ``re_``, the dispute's effect ``dispute:dp_``.
STALE_TWIN = sorted([("reorder", "stale", "dp_"), ("reorder", "stale", "re_"), ("reorder", "stale", "re_"),
                     *[("stale-after-newer", check, kind) for check in ("regressed", "stale")
                       for kind in ("dp_", "re_", "re_")]])
EFFECT_TWIN = [("duplicate-sequential", "duplicated", "dispute:dp_")]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "found"), [
    ({}, []),
    ({"arrival_order": 1}, STALE_TWIN),
    ({"effect_per_event": 1}, EFFECT_TWIN),
])
def test_disputes_and_bank_refunds_are_certified(tmp_path: Path, options: dict[str, float],
                                                 found: list[tuple[str, str, str]]) -> None:
    """The receiver passes; storing each status as it arrives leaves the dispute
    ``needs_response`` and both refunds ``pending`` (each created delivered after the newer
    events: reordered, or stale after newer), and an effect on every dispute event applies the
    dispute's five times."""
    report = _certify(tmp_path, options)
    got = sorted((s.id, f.check_id, f.key[:len("dispute:dp_")] if f.key.startswith("dispute:") else f.key[:3])
                 for s in report.scenarios for f in s.findings)
    assert got == found, [(s.id, s.verdict, s.reason, [(f.key, f.message) for f in s.findings])
                          for s in report.scenarios]
    assert {s.id: s.verdict for s in report.scenarios} == {
        scenario: "fail" if any(scenario == f[0] for f in found) else "pass" for scenario in SCENARIOS}
    # the walked dispute and both refunds
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    assert stale == {"reorder": 3, "stale-after-newer": 3}
    if options.get("effect_per_event"):
        (finding,) = [f for s in report.scenarios for f in s.findings]
        assert finding.message.startswith("applied 5 times instead of once; 3 delivery attempt(s) carried it")
    sent = {a.event_type for s in report.scenarios for a in s.attempts}
    assert {*DISPUTE_EVENT_TYPES, *REFUND_UPDATE_TYPES} <= sent
