"""Every catalog scenario over the GitHub repository world: a plan of GitHub's own events,
or not applicable with the reason; never a billing event sent as GitHub."""

from __future__ import annotations

import pytest

from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.scenarios.chaos import CHAOS_SCENARIOS, ChaosSettings
from hookproof.scenarios.world_plans import OWN_PLANS, STORY_SCENARIOS
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GITHUB_EVENT_TYPES, new_world

GITHUB = get_profile("github")
ALL = {**CATALOG, **{s.id: s for s in CHAOS_SCENARIOS}}
#: Scenarios over billing objects with no GitHub story (their reason says so; a scenario
#: added later without a GitHub story is not applicable the same way).
BILLING_ONLY = {"related-burst", "older-after-newer-redelivery", "stale-failure-after-success"}


@pytest.mark.parametrize("scenario_id", sorted(ALL))
def test_each_scenario_sends_only_githubs_events_or_says_why_not(scenario_id: str) -> None:
    ctx = Context(profile=GITHUB, has_sink=True, chaos=ChaosSettings(), redelivery_window=20)
    plan = ALL[scenario_id].plan(ctx, new_world("github", 7))  # type: ignore[arg-type]
    if isinstance(plan, NotApplicable):
        untold = "no equivalent story" in plan.reason  # an own plan for another world (Shopify's) says so too
        told = (scenario_id in STORY_SCENARIOS or scenario_id in OWN_PLANS) and not untold
        assert told or "no equivalent story" in plan.reason, plan.reason
        assert not told or scenario_id in {"stale-timestamp", "future-timestamp", "secret-rotation",
                                           "test-mode-to-live", "foreign-account", "thin-event",
                                           "reserialized-retry"}, plan.reason  # a redelivery: the same bytes
        return
    assert scenario_id not in BILLING_ONLY
    assert isinstance(plan, Plan)
    types = {e.type for phase in plan.phases for e in phase.events}
    assert types and types <= set(GITHUB_EVENT_TYPES) | {"star.created"}, types
    for phase in plan.phases:
        for event in phase.events:
            GITHUB.envelope(event)  # renders: a GitHub payload, not a billing object


def test_without_retries_a_timeout_is_followed_by_a_manual_redelivery() -> None:
    plan = CATALOG["sender-timeout"].plan(Context(profile=GITHUB), new_world("github", 3))  # type: ignore[arg-type]
    assert isinstance(plan, Plan)
    first, again = plan.phases
    assert first.max_attempts == 1 and first.plan.timeouts == 1
    assert [e.id for e in again.events] == [e.id for e in first.events]  # the same X-GitHub-Delivery
