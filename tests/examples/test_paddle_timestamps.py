"""Paddle's official verifiers refuse a signature timestamp more than 5 s old; on a future one they
disagree (the Node SDK's ``WebhooksValidator`` checks only the past, paddle-python-sdk's ``Verifier``
refuses one more than 5 s ahead), so refusing a future-dated delivery is not required: applying
one passes, refusing one is an advisory per event naming both verifiers and the offset.
`paddle_billing` verifies with paddle-python-sdk's ``Verifier``: it refuses the future-dated
deliveries (an advisory) and the stale ones; started with the SDK's ``TEST_MODE=1`` (which turns its
time-drift check off, "NOT RECOMMENDED") it applies future-dated and stale deliveries alike:
``unexpected`` in ``stale-timestamp`` only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.examples.test_provider_receivers import config

SCENARIOS = ["future-timestamp", "stale-timestamp"]
STRICTER = (r"1 future-dated [a-z_.]+ event\(s\) refused \d+ time\(s\) with .*; signed 65 s "
            r"ahead; Paddle's Node SDK \(@paddle/paddle-node-sdk's WebhooksValidator\) accepts them \(it checks only "
            r"the past\) while paddle-python-sdk's Verifier refuses a timestamp more than 5 s ahead: .*")


@pytest.mark.slow
@pytest.mark.parametrize("test_mode", [False, True], ids=["sdk-verifier", "sdk-test-mode"])
def test_a_future_dated_paddle_delivery_applied_is_a_finding(tmp_path: Path, test_mode: bool) -> None:
    cfg = config("paddle_billing", tmp_path)
    start = cfg.target.start
    assert start is not None
    if test_mode:
        start = start.model_copy(update={"env": {**start.env, "TEST_MODE": "1"}})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert failed == ({"stale-timestamp": ["unexpected"]} if test_mode else {}), \
        [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    (future,) = [s for s in report.scenarios if s.id == "future-timestamp"]
    advisories = [f for c in future.checks for f in c.findings]
    if test_mode:  # applied: valid, no finding
        assert advisories == []
    else:  # one advisory per event refused, no read named ("seen in the … read")
        assert len(advisories) == 2  # the scenario's two events
        assert all(f.check_id == "valid_not_rejected" and re.fullmatch(STRICTER, f.message)
                   for f in advisories), [f.message for f in advisories]
