"""A team's own tests: the hookproof catalog and state machine on every commit."""

import pytest

pytestmark = pytest.mark.hookproof(max_examples=20)


def test_webhooks_survive_the_state_machine(hookproof_checks):
    hookproof_checks.explore()


def test_webhooks_pass_the_catalog(hookproof_checks):
    hookproof_checks.catalog(["duplicate-sequential", "reorder"])
