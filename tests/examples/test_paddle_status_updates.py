"""A Paddle subscription's status changes arrive as ``subscription.updated`` too.

Paddle's webhook simulator scenarios (developer.paddle.com/webhooks/simulator/subscription-canceled,
…/subscription-renewed, …/subscription-resumed) list a ``subscription.updated`` carrying each
new status before the status's own event, and Paddle's webhooks overview calls
``subscription.updated`` the catch-all for subscription state changes. A receiver subscribed
to ``transaction.completed``, ``subscription.created`` and ``subscription.updated`` alone so
sees a subscription go ``past_due``, ``active``, ``paused``, ``active`` and ``canceled``: storing each status as it
arrives (no ``occurred_at`` guard) leaves an older one after a newer (``reorder``,
``stale-after-newer``), while `paddle_billing`, which keeps a status only over an older
``occurred_at``, passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import SEED, config_of

ENABLED = ["transaction.completed", "subscription.created", "subscription.updated"]
SCENARIOS = ["reorder", "stale-after-newer"]


def test_the_updates_alone_walk_every_status() -> None:
    profile = get_profile("paddle")
    ctx = Context(profile=profile, enabled=frozenset(ENABLED))
    plan = CATALOG["reorder"].plan(ctx, new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    (phase,) = plan.phases
    assert [(e.type, e.status) for e in phase.events] == [
        ("subscription.created", "active"), ("subscription.updated", "active"), ("subscription.updated", "active"),
        ("subscription.updated", "past_due"), ("subscription.updated", "active"),
        # paused, resumed (a new period), activated: developer.paddle.com/webhooks/simulator/subscription-resumed
        ("subscription.updated", "paused"), ("subscription.updated", "active"), ("subscription.updated", "active"),
        ("subscription.updated", "active"),  # its cancellation scheduled for the period's end
        ("subscription.updated", "canceled")]
    late = CATALOG["stale-after-newer"].plan(ctx, new_world(profile.world, SEED))
    assert isinstance(late, Plan), late
    assert [(e.type, e.status) for e in late.phases[-1].events] == [("subscription.updated", "past_due")]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_arrival_order", {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}),
])
def test_status_updates_fail_an_arrival_order_receiver(tmp_path: Path, module: str,
                                                       failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": ENABLED})})
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    assert [s.verdict for s in report.scenarios if s.verdict not in ("pass", "fail")] == []
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    findings = [f for s in report.scenarios for f in s.findings]
    assert all(f.key.startswith("sub_") and "subscription.updated" in f.message for f in findings), \
        [(f.key, f.message) for f in findings]
