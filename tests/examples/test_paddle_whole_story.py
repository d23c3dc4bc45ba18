"""Every event of an effectful object's story is sent: Paddle's ``transaction.paid`` beside its
``transaction.completed``.

Paddle sends both for every successful checkout. A receiver fulfilling on both fulfils each
transaction twice; the catalog sends the transaction's whole story wherever it sends its
``transaction.completed``, so ``duplicated`` shows it (under hookproof's built-in keys and under
a team's keys that key only ``transaction.completed``), naming the ``transaction.paid`` delivery
that carried the second effect. `paddle_billing` (fulfils on ``completed`` only) passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config

#: duplicate-concurrent races the first three events: they owe effects (under the built-in keys and
#: under TEAM_KEYS, three transactions' transaction.completed: the effect story's checkout, its trial's
#: checkout and its resume), so no transaction.paid is among them
SCENARIOS = ["duplicate-sequential", "duplicate-concurrent"]
TEAM_KEYS = {"transaction.completed": "fulfil:{data.id}"}


def test_an_effectful_transaction_s_paid_event_is_sent_beside_its_completed() -> None:
    profile = get_profile("paddle")
    plan = CATALOG["duplicate-sequential"].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan)
    sent = [(e.type, e.object_id) for p in plan.phases for e in p.events]
    completed = [o for t, o in sent if t == "transaction.completed"]
    assert completed and all(("transaction.paid", o) in sent for o in completed)


@pytest.mark.slow
@pytest.mark.parametrize("team_keys", [False, True])
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_paid_too", {"duplicate-sequential": ["duplicated"]}),
])
def test_fulfilling_on_paid_and_completed_is_duplicated(tmp_path: Path, module: str, failed: dict[str, list[str]],
                                                        team_keys: bool) -> None:
    cfg = config("paddle_billing", tmp_path)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(
        "examples.receivers.paddle_billing", module)})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    if team_keys:
        cfg = cfg.model_copy(update={"builtin_keys": False, "business_keys": TEAM_KEYS})
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    for f in (f for s in report.scenarios for f in s.findings):
        assert f.key.startswith("fulfil:txn_")
        assert "transaction.paid (evt_" in f.message, f.message
