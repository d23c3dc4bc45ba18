"""Paddle's official verifier rejects a signature timestamp more than 5 s off either way, so a
future-dated delivery is invalid under the paddle profile: a receiver that applies one fails
``unexpected``. `paddle_billing` verifies with paddle-python-sdk's ``Verifier`` and passes;
started with the SDK's ``TEST_MODE=1`` (which turns its time-drift check off, "NOT
RECOMMENDED") it applies future-dated and stale deliveries alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.examples.test_provider_receivers import config

SCENARIOS = ["future-timestamp", "stale-timestamp"]
FUTURE = ("applied although every delivery of it was signed with a future timestamp the profile's official "
          "verifier rejects")


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
    assert failed == ({s: ["unexpected"] for s in SCENARIOS} if test_mode else {}), \
        [(s.id, s.verdict, s.reason) for s in report.scenarios]
    if test_mode:
        (future,) = [s for s in report.scenarios if s.id == "future-timestamp"]
        assert all(f.message.startswith(FUTURE) for f in future.findings if f.message.startswith("applied"))
        assert any(f.message.startswith(FUTURE) for f in future.findings)
