"""explore races two states of one object (`burst_states`) and finds the unlocked state check.

certify's `related-burst` races a new subscription's events of two statuses
(tests/scenarios/test_related_burst_states.py); explore's `burst_related` releases only an
object's first events, so a state read, compared in code and written without a lock
(`tests/scenarios/unlocked_state_check.py`) passed every search. The `burst_states` rule
releases two never-sent events of one object whose states differ together, the newer one
first, as a `burst_related` step (it shrinks and replays as the other bursts do).

Measured in process (a loaded 2-core machine): the three-step schedule below fails the
unlocked receiver in 19 of 30 replays (the older state written last; released oldest
first, 3 of 30), and a search at the default budget found it at each of seeds 1-10 (the
first finding after 32-119 examples) and at none of them before the rule; its locked
twin and inbox_sync passed seeds 1-5. The replay test asks for a finding in at most 6
replays, the search test in one of two seeds.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Mapping

import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.statemachine import (
    Step,
    _state_pairs,
    explore,
    format_steps,
    machine_for,
    provider_api,
    replay,
)
from hookproof.simulator.server.state import ServerState

#: explore's default budget (`hookproof explore --max-examples`).
DEFAULT_EXAMPLES = 100
RECEIVER = "unlocked_state_check"


def subscription_updates(steps: list[Step]) -> tuple[int, int]:
    """(the last, the first) ``customer.subscription.updated`` of `steps`' story, by number, in a
    world of the replays' seed told as they are (every type: an invoice's payment's own events
    among them, beside its invoice's)."""
    from hookproof.scenarios.world_ops import apply_action
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    world = World(5)
    stripe = get_profile("stripe")
    world.sent_only(lambda t: stripe.provider_type(t) is not None)
    for step in steps:
        apply_action(world, step.action or "", step.object)
    updates = [i for i, e in enumerate(world.events) if e.type == "customer.subscription.updated"]
    return updates[-1], updates[0]


#: A subscription (created, then updated: active), its renewal failing (updated: past_due), and
#: the two states released together, the newer first (NEWER, OLDER: their numbers).
_EMITS = [Step("emit", action="subscribe"), Step("emit", action="fail_renewal", object=0)]
NEWER, OLDER = subscription_updates(_EMITS)
STATE_BURST = [*_EMITS, Step("burst_related", events=(NEWER, OLDER))]


def _pool(name: str, directory: Path, options: Mapping[str, float] | None = None) -> ReceiverPool:
    """In-process receivers `name`: inbox_sync, or the test receiver of that name under tests/scenarios."""
    directory.mkdir(parents=True, exist_ok=True)
    pool = ReceiverPool("inbox_sync", directory, options=options)
    if name != "inbox_sync":
        pool.module, pool.name = importlib.import_module(f"tests.scenarios.{name}"), name
    return pool


def _replay(name: str, directory: Path, steps: list[Step], **options: float) -> set[str] | None:
    pool = _pool(name, directory, options)
    try:
        found = replay(pool.target(), steps, 5, provider_state=ServerState())
    finally:
        pool.close()
    return None if found is None else {f.check_id for f in found.findings}


def test_the_rule_pairs_an_object_s_newer_state_with_the_last_older_one(tmp_path: Path) -> None:
    pool = _pool("inbox_sync", tmp_path)
    state = ServerState()
    try:
        with provider_api(state):
            session = machine_for(pool.target(), seed=5, provider_state=state)().session
            try:
                session.apply(STATE_BURST[0])
                assert _state_pairs(session) == []  # created and updated are both active
                session.apply(STATE_BURST[1])
                assert _state_pairs(session) == [(NEWER, OLDER)]
                names = session.event_types
                assert (names[OLDER], names[NEWER]) == ("customer.subscription.updated", "customer.subscription.updated")
                assert (session.events[OLDER].status, session.events[NEWER].status) == ("active", "past_due")
                session.apply(STATE_BURST[2])
                assert _state_pairs(session) == []  # both sent
            finally:
                session.close()
    finally:
        pool.close()


@pytest.mark.slow
def test_the_raced_states_fail_the_unlocked_check_and_pass_its_locked_twin(tmp_path: Path) -> None:
    found = [_replay(RECEIVER, tmp_path / str(n), STATE_BURST) for n in range(6)]
    assert {"stale"} in found, found
    assert all(f in (None, {"stale"}) for f in found), found
    assert _replay(RECEIVER, tmp_path / "locked", STATE_BURST, locked=1) is None
    assert _replay("inbox_sync", tmp_path / "inbox", STATE_BURST) is None


@pytest.mark.slow
def test_a_search_at_the_default_budget_finds_the_unlocked_state_check(tmp_path: Path) -> None:
    results = []
    for seed in (1, 2):
        pool = _pool(RECEIVER, tmp_path / str(seed))
        try:
            result = explore(pool.target(), max_examples=DEFAULT_EXAMPLES, seed=seed, provider_state=ServerState())
        finally:
            pool.close()
        results.append(result)
        if result.failure is not None:
            break
    failure = results[-1].failure
    assert failure is not None, [(r.seed, r.examples) for r in results]
    lines = "\n".join(format_steps(failure.steps, failure.event_types))
    assert {(f.check_id, f.key[:4]) for f in failure.findings} == {("stale", "sub_")}, lines
    assert any(s.op == "burst_related" for s in failure.steps), lines


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), [(RECEIVER, {"locked": 1}), ("inbox_sync", {})])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_locked_twin_and_a_conditional_upsert_survive_the_search(
        tmp_path: Path, name: str, options: dict[str, float], seed: int) -> None:
    pool = _pool(name, tmp_path, options)
    try:
        result = explore(pool.target(), max_examples=DEFAULT_EXAMPLES, seed=seed, provider_state=ServerState())
    finally:
        pool.close()
    assert result.failure is None, "\n".join(format_steps(result.failure.steps, result.failure.event_types)) \
        if result.failure else ""
    assert result.error is None and result.acked > 0
