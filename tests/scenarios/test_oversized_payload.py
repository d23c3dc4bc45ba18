"""oversized-payload sends a body the provider really sends at that size, never a padded one.

Two new users found the padded 3 MB body wrong: GitHub's was a ``ping`` with a top-level
``padding`` field its schema rejects, so a Django receiver's 400 (its default 2.5 MB
``DATA_UPLOAD_MAX_MEMORY_SIZE``) passed, although GitHub delivers payloads up to 25 MB and
never retries; Stripe's carried a field Stripe never sends. Now the world grows the body
through the provider's own fields (GitHub: a push of many commits), of an effectful type;
a refusal is a ``valid_not_rejected`` finding naming GitHub's cap, an advisory where the
provider would retry the same bytes; and a provider with no such body is not applicable,
saying why.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hookproof.scenarios.answer_checks import check_valid_not_rejected
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable
from hookproof.scenarios.findings import ADVISORY, FINDING
from hookproof.simulator.delivery.mutations import OVERSIZE_BYTES, build_attempt
from hookproof.simulator.faults import Mutation
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world.github import MAX_PUSH_COMMITS
from hookproof.simulator.world.registry import new_world
from tests.scenarios.test_checks import att, exp, hist


def test_github_sends_a_push_of_many_commits_that_owes_a_run() -> None:
    profile = get_profile("github")
    ctx = Context(profile=profile)
    plan = CATALOG["oversized-payload"].plan(ctx, new_world("github", 5))
    assert not isinstance(plan, NotApplicable), plan.reason
    (big,) = plan.phases[0].events
    assert plan.phases[0].plan.mutations == (Mutation.OVERSIZE,) and plan.phases[0].max_attempts == 1
    assert big.type == "push" and ctx.key_of(big) == big.business_key
    assert big.business_key is not None and big.business_key.startswith("ci:")
    body = build_attempt(profile, big, ("gh_secret",), (Mutation.OVERSIZE,), now=1_700_000_000, attempt=1).request.body
    assert body == profile.envelope(big).body  # sent as the world made it
    payload = json.loads(body)
    assert OVERSIZE_BYTES <= len(body) < 25 * 1000 * 1000
    assert "padding" not in payload and payload["head_commit"] == payload["commits"][-1]
    assert 1 < len(payload["commits"]) <= MAX_PUSH_COMMITS
    assert payload["after"] == payload["head_commit"]["id"] and all(c["modified"] for c in payload["commits"])
    assert [e.type for e in plan.phases[1].events] and all(ctx.key_of(e) for e in plan.phases[1].events)


def test_github_without_push_enabled_is_not_applicable() -> None:
    ctx = Context(profile=get_profile("github"), enabled=frozenset({"issues.opened", "issues.closed"}))
    plan = CATALOG["oversized-payload"].plan(ctx, new_world("github", 5))
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("the receiver is sent no push events (enabled_events), and those are GitHub's "
                           "deliveries of several megabytes (it sends no other body that large)")


@pytest.mark.parametrize("name", ["stripe", "generic-hmac", "standard-webhooks", "svix", "mercadopago", "paddle",
                                  "shopify"])
def test_a_provider_without_such_a_body_is_not_applicable_saying_why(name: str) -> None:
    profile = get_profile(name)
    plan = CATALOG["oversized-payload"].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, NotApplicable)
    assert plan.reason == profile.no_big_body
    assert "megabytes" in plan.reason


def _refused(profile: str) -> tuple[str, str]:
    history = hist(att("e_big", "ci:big", "400", faults=("oversize",)), att("e_k1", "k1"))
    expectations = replace(exp("ci:big", "k1"), provider=get_profile(profile).words())
    result = check_valid_not_rejected(history, expectations, [])
    (finding,) = result.findings
    return finding.severity, finding.message


def test_a_refused_push_under_github_s_25_mb_cap_is_a_finding_naming_the_cap() -> None:
    severity, message = _refused("github")
    assert severity == FINDING
    assert message == (
        '1 valid test.event event(s) of over 3 MiB refused 1 time(s) with 400; GitHub delivers payloads up to 25 MB '
        '(docs.github.com "Webhook events and payloads": "Payloads are capped at 25 MB") and never retries, so the '
        'delivery is lost unless redelivered by hand')


def test_a_refusal_the_provider_would_retry_is_an_advisory_naming_the_size() -> None:
    severity, message = _refused("stripe")
    assert severity == ADVISORY
    assert message == ("1 valid test.event event(s) of over 3 MiB refused 1 time(s) with 400; Stripe retries the "
                       "same bytes, each refused alike, so the event is never applied: raise the receiver's body "
                       "limit above the largest payload it is sent")


@pytest.mark.parametrize("name", ["generic-hmac", "standard-webhooks", "svix"])
def test_a_user_catalog_is_told_it_is_its_own_bodies_not_stripe_s(name: str) -> None:
    """A new user's Lemon Squeezy catalog under generic-hmac read that its events were the
    billing world's Stripe objects (metadata limits); a catalog's reason speaks of its bodies."""
    from examples.receivers import PROJECT_ROOT
    from hookproof.catalog_file import CatalogConfig, load_catalog, profile_of

    profile = profile_of(name, load_catalog(CatalogConfig(openapi="webhooks.yaml"), PROJECT_ROOT / "examples" / "openapi"))
    plan = CATALOG["oversized-payload"].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, NotApplicable)
    assert plan.reason.startswith("your catalog's events are the bodies its examples and schemas give") and \
        "Stripe" not in plan.reason and "stripe" not in plan.reason
