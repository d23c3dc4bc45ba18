"""GitHub redelivers a recorded delivery: `reserialized-retry` does not apply to GitHub.

A new user's GitHub App saw one X-GitHub-Delivery sent compact, then pretty-printed with sorted
keys: GitHub never retries, and its redelivery ("Redelivering webhooks"; the REST API's
"Redeliver a delivery") resends the recorded delivery, payload and all. So the scenario says
why it does not apply; `reserialized-body` (a delivery whose bytes another serialiser wrote,
verified over the raw body) still does.
"""

from __future__ import annotations

from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world


def test_a_reserialized_retry_is_not_github_s() -> None:
    profile = get_profile("github")
    plan = CATALOG["reserialized-retry"].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, NotApplicable)
    assert plan.reason.startswith("GitHub never retries, and a redelivery")
    assert "the same body bytes, never re-serialised" in plan.reason
    assert isinstance(CATALOG["reserialized-body"].plan(Context(profile=profile), new_world(profile.world, 5)), Plan)
