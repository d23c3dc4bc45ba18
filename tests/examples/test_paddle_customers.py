"""A Paddle receiver's customers, observed with ``[observer.states] customer``.

A new customer's checkout sends ``customer.created`` (``active``) and ``address.created``
before the transaction is ready (developer.paddle.com/webhooks/simulator/subscription-created).
`paddle_billing` keeps each customer's status and passes; its twin answering 200 to the
customer's events and storing nothing leaves every customer of the run missing (``stale``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.examples.test_provider_receivers import config_of

CUSTOMERS = {"customer": "SELECT object_id, status FROM customers"}


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_no_customers", {"related-burst": ["stale"]}),
])
def test_a_checkout_s_customers_are_compared(tmp_path: Path, module: str, failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"states": CUSTOMERS})})
    report = certify(cfg, scenarios=["related-burst"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    assert stale == {"related-burst": 2}  # the two checkouts' customers
    findings = [f for s in report.scenarios for f in s.findings]
    # each quoting the answers: acknowledged, nothing stored
    assert all(f.key.startswith("ctm_") and f.message.startswith("object missing after settling; its attempts: 200") for f in findings), \
        [(f.key, f.message) for f in findings]
