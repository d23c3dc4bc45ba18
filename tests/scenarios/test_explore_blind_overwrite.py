"""explore finds a blind state overwrite in the Shopify and Paddle worlds at its default budget.

certify catches a receiver that stores an object's state from every webhook without
comparing versions at once (`reorder` → stale, `stale-after-newer` → regressed); explore
must too. Its `deliver_newest_first` rule delivers an object's unsent events newest first
where their states differ, after an operation that moves the object's state
(`WorldOps.moves`) when none is waiting. The blind twins (`tests/scenarios/blind_twins.py`,
written from the two receivers) are found within the default 100 examples, the Paddle twin
also at seeds where it passed before that rule; the correct receivers survive the same
searches.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hookproof.scenarios.statemachine import ExploreTarget, Prepared, explore, format_steps
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState
from tests.scenarios.blind_twins import paddle_blind_app, shopify_blind_app
from tests.scenarios.test_explore_worlds import SECRETS, sqlite_observer

#: explore's default budget (`hookproof explore --max-examples`).
DEFAULT_EXAMPLES = 100
#: (world, seed) of each search (deterministic from its seed). The Paddle seeds are ones at which
#: the blind twin passed the default budget before `deliver_newest_first`.
SEARCHES = [("shopify", 20240601), ("paddle", 2), ("paddle", 3), ("paddle", 9)]


def _target(profile: str, blind: bool, directory: Path) -> ExploreTarget:
    count = itertools.count()
    secret = SECRETS[profile]

    def open_() -> Prepared:
        db = directory / f"{profile}-{next(count)}.sqlite"
        if profile == "shopify":
            if blind:
                app = shopify_blind_app(str(db), secret)
            else:
                from examples.receivers.shopify_app import create_app as shop

                app = shop(str(db), secret)
        elif blind:
            app = paddle_blind_app(str(db), secret)
        else:
            from examples.receivers.paddle_billing import create_app as paddle

            app = paddle(str(db), secret)
        return Prepared(Target(app=app), sqlite_observer(db, profile))

    return ExploreTarget(profile=get_profile(profile), secrets=(secret,), open=open_,
                         describe=f"in-process {profile}{' blind' if blind else ''}", settle_window_s=0.02)


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "seed"), SEARCHES)
def test_the_blind_overwrite_twin_is_found_at_the_default_budget(profile: str, seed: int, tmp_path: Path) -> None:
    result = explore(_target(profile, True, tmp_path), max_examples=DEFAULT_EXAMPLES, seed=seed,
                     provider_state=ServerState())
    failure = result.failure
    assert failure is not None, f"{profile} seed {seed}: no finding in {result.examples} examples"
    assert {f.check_id for f in failure.findings} & {"regressed", "stale"}, failure.summary()
    assert "duplicated" not in {f.check_id for f in failure.findings}  # it dedupes: only its states are wrong
    assert failure.delivery_steps <= 4, "\n".join(format_steps(failure.steps, failure.event_types))


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "seed"), SEARCHES)
def test_the_receiver_comparing_versions_survives_the_same_search(profile: str, seed: int, tmp_path: Path) -> None:
    result = explore(_target(profile, False, tmp_path), max_examples=DEFAULT_EXAMPLES, seed=seed,
                     provider_state=ServerState())
    assert result.failure is None, "\n".join([result.failure.summary(), *format_steps(
        result.failure.steps, result.failure.event_types)]) if result.failure else ""
    assert result.error is None and result.acked > 0
