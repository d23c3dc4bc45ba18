"""A Paddle transaction's states, observed with ``[observer.states] transaction``.

When the observer reads Paddle's transactions (and not its subscriptions), the scenarios that
walk one object's states walk the subscription story's transactions (the checkout's ``draft``, ``ready``, ``paid``,
``completed``; the renewal's ``billed``, ``past_due``, ``paid``, ``completed``; the resume's ``billed``, ``paid``,
``completed``). `paddle_billing` keeps a transaction's status only over an older
``occurred_at`` and passes; its test twin storing each status as it arrives ends a transaction
in an earlier status when one of its earlier events is delivered after ``transaction.completed``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.examples.test_provider_receivers import config_of

SCENARIOS = ["reorder", "stale-after-newer"]
TRANSACTIONS = {"transaction": "SELECT object_id, status FROM transactions"}


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_arrival_order", {"reorder": ["stale"],
                                             "stale-after-newer": ["regressed", "stale"]}),
])
def test_a_transaction_s_states_are_walked_and_compared(tmp_path: Path, module: str,
                                                         failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"states": TRANSACTIONS})})
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    # the checkout's, the renewal's and the resume's transactions
    assert stale == {"reorder": 3, "stale-after-newer": 3}
    findings = [f for s in report.scenarios for f in s.findings]
    # each state named by its Paddle event and occurred_at (microseconds: the two never tie): an earlier
    # one (draft, ready, billed, paid: developer.paddle.com/webhooks/simulator/subscription-created, -renewed)
    # and the completed one, by the transaction.updated or transaction.completed of that version
    state = r"(?:draft|ready|billed|paid|past_due) \(event evt_\w+, transaction\.\w+, occurred_at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\)"
    completed = state.replace("(?:draft|ready|billed|paid|past_due)", "completed").replace(r"transaction\.\w+",
                                                                                           r"transaction\.(?:updated|completed)")
    words = {"stale": f"final state is {state}, the provider's is {completed}", "regressed": f"went back from {completed} to {state}"}
    assert all(f.key.startswith("txn_") and re.fullmatch(words[f.check_id], f.message) for f in findings), \
        [(f.key, f.message) for f in findings]
