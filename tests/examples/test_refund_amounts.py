"""A Stripe refund's effect may record that refund's own amount or the charge's cumulative
``amount_refunded``, which the built-in key ``refund:{charge}:{amount_refunded}`` carries: both
pass the ``counter`` check. tests/examples/refund_amounts.py records the cumulative amount and
passes the whole catalog; its twin recording the charge's whole amount on a partial refund fails
``counter`` where a charge is partly refunded, and the finding names both accepted amounts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config

SECRET = "whsec_refund_amounts_0123456789"
#: The scenarios refunding one charge twice (each refund partial).
PARTIAL = ["distinct-events-same-object", "older-after-newer-redelivery"]


def _certify(tmp_path: Path, scenarios: list[str] | None, options: dict[str, float]):  # type: ignore[no-untyped-def]
    cfg = receiver_config("refund_amounts", tmp_path, SECRET, seed=11, scenarios=scenarios, settle_window_s=0.15,
                          options=options, module="tests.examples.refund_amounts", cwd=PROJECT_ROOT)
    return certify(cfg, out_dir=tmp_path / "report").report


@pytest.mark.slow
def test_the_charge_s_cumulative_amount_refunded_passes_the_whole_catalog(tmp_path: Path) -> None:
    report = _certify(tmp_path, None, {})
    failed = {s.id: [f.message for f in s.findings] for s in report.scenarios if s.verdict not in ("pass", "not_applicable")}
    assert failed == {}
    counted = [c for s in report.scenarios if s.id in PARTIAL for c in s.checks if c.check_id == "counter"]
    assert [c.verdict for c in counted] == ["valid", "valid"]
    assert all(int(c.stats["money_keys"]) >= 2 for c in counted), [c.stats for c in counted]


def test_a_partial_refund_booked_as_the_whole_charge_fails_counter(tmp_path: Path) -> None:
    report = _certify(tmp_path, PARTIAL, {"whole_charge": 1})
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios}
    assert got == {"distinct-events-same-object": ["counter"], "older-after-newer-redelivery": ["counter"]}
    words = (r"moved (\d+) instead of (\d+)( \(this refund's own amount; the charge's amount_refunded (\d+) "
             r"is accepted too\))?")
    second_refunds = 0
    for finding in (f for s in report.scenarios for f in s.findings):
        found = re.fullmatch(words, finding.message)
        assert found is not None, finding.message
        moved, own = int(found[1]), int(found[2])
        total = int(finding.key.rsplit(":", 1)[1])  # the key carries the charge's amount_refunded
        assert moved > total >= own > 0, finding.message
        # the accepted total is named where it differs from the refund's own amount (a second refund)
        assert (found[4] is not None) == (total != own) and (found[4] is None or int(found[4]) == total)
        second_refunds += total != own
    assert second_refunds == 2
