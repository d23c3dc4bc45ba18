"""The Customer Portal's cancellation at the period's end.

tests/examples/subscription_cancellations.py keeps each subscription's status and
``cancel_at_period_end``, newest version wins; declared as a state field, the state story
cancels as the Portal does (scheduled, taken back, scheduled again, made at the period's end):
the receiver passes, its twin overwriting the flag with whichever event arrives last is left
with the wrong flag by ``reorder`` and ``stale-after-newer``; without the field declared it
passes, told the immediate cancellation as before.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config_model import Config
from tests.examples.subscription_cancellations import CANCEL_PATH, SubscriptionCancellations
from tests.examples.subscription_field import field_config

SECRET = "whsec_subscription_cancellations_0"
TWIN = {"cancel_arrival_order": 1}
SCENARIOS = ["reorder", "stale-after-newer", "distinct-updates-same-object"]
#: "final state is canceled, cancel_at_period_end=false, the provider's is canceled, cancel_at_period_end=true (…)"
STALE_FLAG = re.compile(r"final state is canceled, cancel_at_period_end=false, the provider's is canceled, "
                        r"cancel_at_period_end=true \(event evt_\w+, customer\.subscription\.deleted, created \d+\)")


def cancel_config(tmp_path: Path, options: dict[str, float], *, fields: bool = True) -> Config:
    return field_config(SubscriptionCancellations, tmp_path, SECRET, options, path=CANCEL_PATH, scenarios=SCENARIOS,
                        fields=fields)


@pytest.mark.slow
@pytest.mark.parametrize(("options", "failed"), [
    ({}, {}),
    (TWIN, {"reorder": ["stale"], "stale-after-newer": ["stale"]}),
])
def test_the_portal_s_cancellation_is_compared_when_a_field_reads_it(tmp_path: Path, options: dict[str, float],
                                                                      failed: dict[str, list[str]]) -> None:
    report = certify(cancel_config(tmp_path, options), out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
           if s.verdict not in ("pass", "not_applicable")}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    (reorder,) = [s for s in report.scenarios if s.id == "reorder"]
    # created, its first invoice named, renewed, past due, recovered, moved to a new price (a declared field);
    # scheduled, taken back, scheduled again; canceled at the period's end
    assert len(reorder.attempts) == 10
    for finding in (f for s in report.scenarios for f in s.findings):
        assert finding.key.startswith("sub_") and STALE_FLAG.fullmatch(finding.message), finding.message


@pytest.mark.slow
def test_without_the_field_the_twin_passes_the_status_story(tmp_path: Path) -> None:
    report = certify(cancel_config(tmp_path, TWIN, fields=False), out_dir=tmp_path / "report").report
    assert {s.id: s.verdict for s in report.scenarios} == {s: "pass" for s in SCENARIOS}
    (reorder,) = [s for s in report.scenarios if s.id == "reorder"]
    assert len(reorder.attempts) == 6  # canceled at once, as before
