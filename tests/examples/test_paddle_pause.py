"""A Paddle subscription paused and resumed in the catalog's state story.

An endpoint listing ``subscription.paused`` and ``subscription.resumed`` was never sent them by
certify (only the storm sent them), so a receiver crashing on a pause passed. The Paddle state
story (`PaddleWorld.state_story`) now pauses its subscription at once and resumes it after the
recovered renewal (``active`` -> ``paused`` -> ``active``, a new period billed:
developer.paddle.com/webhooks/simulator/subscription-paused, -resumed), before its cancellation,
so the scenarios walking it send both. `paddle_billing`, which keeps a status only over an older
``occurred_at``, passes the whole catalog; its twin storing each status as it arrives fails
``reorder``, whose reversed story now carries the pause and the resume.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from hookproof.simulator.world.paddle import SUBSCRIPTION_TRANSITIONS
from tests.examples.test_provider_receivers import SEED, config_of

#: What a SaaS lists on its notification destination: its effects' types, the subscription's
#: status changes, and the pause and the resume.
ENABLED = ["transaction.completed", "subscription.created", "subscription.updated", "subscription.past_due",
           "subscription.paused", "subscription.resumed", "subscription.canceled", "adjustment.updated"]
PAUSE_TYPES = ("subscription.paused", "subscription.resumed")
#: The catalog scenarios sending both (seed `SEED`): those walking the state story, and
#: duplicate-sequential's copies of it.
SENDING = ["concurrent-updates-stored-object", "duplicate-sequential", "mass-redelivery", "mass-redelivery-window",
           "reorder", "stale-after-newer"]


def _sending(enabled: list[str] | None) -> dict[str, list[str]]:
    profile = get_profile("paddle")
    ctx = Context(profile=profile, enabled=frozenset(enabled) if enabled is not None else None)
    out: dict[str, list[str]] = {}
    for sid, scenario in CATALOG.items():
        if scenario.tier != "catalog":  # chaos scenarios run with --chaos, over the same stories
            continue
        plan = scenario.plan(ctx, new_world(profile.world, SEED))  # type: ignore[arg-type]
        if isinstance(plan, Plan):
            sent = {e.type for p in plan.phases for e in p.events}
            if found := [t for t in PAUSE_TYPES if t in sent]:
                out[sid] = found
    return out


def test_the_state_story_pauses_and_resumes_with_statuses_paddle_allows() -> None:
    profile = get_profile("paddle")
    plan = CATALOG["reorder"].plan(Context(profile=profile, enabled=frozenset(ENABLED)), new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    (phase,) = plan.phases
    walk = [(e.type, e.status) for e in phase.events if e.object_type == "subscription"]
    assert walk == [
        ("subscription.created", "active"), ("subscription.updated", "active"), ("subscription.updated", "active"),
        ("subscription.updated", "past_due"), ("subscription.past_due", "past_due"), ("subscription.updated", "active"),
        ("subscription.updated", "paused"), ("subscription.paused", "paused"),
        ("subscription.updated", "active"), ("subscription.resumed", "active"),
        ("subscription.updated", "active"),  # the resume's period paid: "Subscription is activated"
        ("subscription.updated", "active"),  # its cancellation scheduled for the period's end
        ("subscription.updated", "canceled"), ("subscription.canceled", "canceled")]
    statuses = [s for _, s in walk]
    # each change one Paddle makes (a change's own event repeats its status)
    assert all(a == b or b in SUBSCRIPTION_TRANSITIONS[a] for a, b in zip(statuses, statuses[1:]))


@pytest.mark.parametrize("enabled", [ENABLED, None])
def test_the_scenarios_walking_the_state_story_send_the_pause_and_the_resume(enabled: list[str] | None) -> None:
    assert _sending(enabled) == {sid: list(PAUSE_TYPES) for sid in SENDING}


def test_an_endpoint_not_listing_them_is_sent_the_pause_as_subscription_updated_alone() -> None:
    listed = [t for t in ENABLED if t not in PAUSE_TYPES]
    assert _sending(listed) == {}
    profile = get_profile("paddle")
    plan = CATALOG["reorder"].plan(Context(profile=profile, enabled=frozenset(listed)), new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    assert ("subscription.updated", "paused") in [(e.type, e.status) for e in plan.phases[0].events]


def _sent_by(history: Path) -> dict[str, list[str]]:
    """Event type -> the scenarios whose attempts sent it, from a run's history."""
    with sqlite3.connect(history) as db:
        rows = db.execute("SELECT DISTINCT event_type, scenario FROM attempts ORDER BY scenario").fetchall()
    out: dict[str, list[str]] = {}
    for event_type, scenario in rows:
        out.setdefault(event_type, []).append(scenario)
    return out


@pytest.mark.slow
def test_certify_sends_the_pause_and_the_resume_and_passes_paddle_billing(tmp_path: Path) -> None:
    cfg = config_of("paddle_billing", "examples.receivers.paddle_billing", tmp_path)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": ENABLED})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    assert {s.id: s.verdict for s in report.scenarios if s.verdict not in ("pass", "not_applicable")} == {}, \
        [(s.id, s.reason, [f.message for f in s.findings]) for s in report.scenarios if s.verdict != "pass"]
    sent = _sent_by(tmp_path / "report" / "history.sqlite")
    assert {t: sent.get(t) for t in PAUSE_TYPES} == {t: SENDING for t in PAUSE_TYPES}
    assert [n for n in report.notes if "never sent" in n] == []  # every listed type was sent


@pytest.mark.slow
def test_an_arrival_order_twin_fails_the_story_carrying_the_pause(tmp_path: Path) -> None:
    cfg = config_of("paddle_billing", "tests.examples.paddle_arrival_order", tmp_path)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": ENABLED})})
    report = certify(cfg, scenarios=["reorder"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == {"reorder": ["stale"]}, [(s.id, s.verdict, s.reason, [f.message for f in s.findings])
                                           for s in report.scenarios]
    sent = _sent_by(tmp_path / "report" / "history.sqlite")
    assert {t: sent.get(t) for t in PAUSE_TYPES} == {t: ["reorder"] for t in PAUSE_TYPES}
    (finding,) = report.scenarios[0].findings
    assert finding.key.startswith("sub_") and "canceled" in finding.message, finding.message
