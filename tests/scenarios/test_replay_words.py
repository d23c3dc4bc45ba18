"""A replay named as a replay: a ``duplicated`` finding says which of its attempts were the
provider's manual replay of their event (tagged ``replay``), in the provider's words.
Hand-built histories in, the exact messages out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hookproof.scenarios.answer_checks import injected_fault
from hookproof.scenarios.checks import run_checks
from hookproof.simulator.faults import REPLAY_TAG
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.provider_words import ProviderWords
from tests.scenarios.test_checks import att, exp, hist, obs

PADDLE = "a manual replay: a new notification_id, the same event_id"


def _duplicated(provider: ProviderWords | None, *tags: tuple[str, ...]) -> str:
    """The ``duplicated`` message of key k applied twice, carried by one attempt per `tags`
    (of one event, e1)."""
    history = hist(*(att("e1", "k", faults=t) for t in tags))
    expectations = replace(exp("k"), provider=provider)
    [result] = run_checks(["duplicated"], history, expectations, [obs(20, "k", "k")])
    [finding] = result.findings
    return finding.message


@pytest.mark.parametrize(("profile", "tags", "note"), [
    ("paddle", [(), (REPLAY_TAG,)], f"; attempt 1 was {PADDLE}"),
    ("paddle", [(), ("order=shuffled", REPLAY_TAG), ("redeliver", REPLAY_TAG)], f"; attempts 1, 2 were {PADDLE}"),
    ("paddle", [(), ()], ""),  # automatic retries: the same notification_id
    ("stripe", [(), (REPLAY_TAG,)], ""),  # Stripe's replay is the same delivery again: nothing to read
    (None, [(), (REPLAY_TAG,)], "; attempt 1 was a manual replay of the same event"),
])
def test_a_duplicated_finding_names_the_replays_in_the_providers_words(
        profile: str | None, tags: list[tuple[str, ...]], note: str) -> None:
    provider = get_profile(profile).words() if profile else None
    assert _duplicated(provider, *tags) == (
        f"applied 2 times instead of once; {len(tags)} delivery attempt(s) carried it{note}")


def test_more_replays_than_named_are_counted() -> None:
    message = _duplicated(get_profile("paddle").words(), (), *[(REPLAY_TAG,)] * 6)
    assert message.endswith(f"; attempts 1, 2, 3, 4 and 2 more were {PADDLE}")


def test_a_server_error_on_a_replay_is_not_excused() -> None:
    """A replay cannot make a correct receiver answer 5xx: the tag is benign, so a 5xx on a
    replayed attempt stays a finding, as on any other delivery."""
    assert not injected_fault((REPLAY_TAG,)) and injected_fault((REPLAY_TAG, "forged-signature"))
    history = hist(att("e1", "k"), att("e1", "k", "500", faults=(REPLAY_TAG,)))
    [result] = run_checks(["no_server_error"], history, exp("k"), [obs(20, "k")])
    assert [(f.severity, f.attempts) for f in result.findings] == [("finding", (1,))]
