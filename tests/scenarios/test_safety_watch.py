"""`SafetyWatch`: explore skips its per-step safety checks only when they could find nothing.

A table of observation sequences (clear or not, and why), a property over random
sequences (a clear watch never hides a finding of ``duplicated`` or ``regressed``), and
the search itself: with and without the watch, explore finds the same failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios import session as session_module
from hookproof.scenarios.checks import CheckResult, run_checks
from hookproof.scenarios.observations import Effect, Expectations, ExpectedEffect, ObjectState, ObjectTruth, Observation
from hookproof.scenarios.safety_watch import WATCHED, SafetyWatch
from hookproof.scenarios.state_words import NamedState
from hookproof.scenarios.statemachine import Step, explore, replay
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.server.state import ServerState

T0 = 1_700_000_000.0
OBJECTS = ("sub_1", "sub_2")
KEYS = ("renewal:in_1", "renewal:in_2", "license:pi_1")
#: sub_1 went active (v1) → past_due (v2) → active (v3) → canceled (v4); sub_2 active (v1).
TRUTH = {"sub_1": ObjectTruth("sub_1", ((1, "active"), (2, "past_due"), (3, "active"), (4, "canceled")),
                              ("e1", "e2", "e3", "e4")),
         "sub_2": ObjectTruth("sub_2", ((1, "active"),), ("e5",))}


def _obs(at: float, keys: tuple[str, ...] = (), states: tuple[tuple[str, str, int | None], ...] = ()) -> Observation:
    return Observation(T0 + at, tuple(Effect(k) for k in keys), tuple(ObjectState(*s) for s in states))


def _history() -> list[Attempt]:
    out = []
    for i, (event, key, obj, version) in enumerate([("e1", "renewal:in_1", "sub_1", 1), ("e2", None, "sub_1", 2),
                                                     ("e3", "renewal:in_2", "sub_1", 3), ("e4", None, "sub_1", 4),
                                                     ("e5", "license:pi_1", "sub_2", 1)]):
        out.append(Attempt(event, f"dlv_{event}", 1, key, obj, version, "test.event", (), True, T0 + i, T0 + i + 0.1,
                           200, Outcome.ACKED, Completion.OK, 100.0, index=i))
    return out


def _expectations() -> Expectations:
    return Expectations(expected={k: ExpectedEffect(k, f"e_{k}") for k in KEYS}, forbidden=frozenset(), truth=TRUTH,
                        money={}, sender_timeout_s=10.0, max_attempts_per_event=None)


def _watched(observations: list[Observation]) -> SafetyWatch:
    watch = SafetyWatch()
    for o in observations:
        watch.add(o)
    return watch


def _found(observations: list[Observation]) -> bool:
    """Whether the safety checks, run in full, find something."""
    results = run_checks(sorted(WATCHED), _history(), _expectations(), observations)
    return any(r.problems for r in results)


CASES: dict[str, tuple[list[Observation], bool]] = {
    "nothing observed": ([], True),
    "each key once, versions rise": ([_obs(1, ("renewal:in_1",), (("sub_1", "active", 1),)),
                                      _obs(2, ("renewal:in_1", "renewal:in_2"), (("sub_1", "active", 3),))], True),
    "a version seen again": ([_obs(1, (), (("sub_1", "past_due", 2),)), _obs(2, (), (("sub_1", "past_due", 2),))],
                             True),
    "a key applied twice": ([_obs(1, ("renewal:in_1",)), _obs(2, ("renewal:in_1", "renewal:in_1"))], False),
    "a key applied twice, then once": ([_obs(1, ("renewal:in_1", "renewal:in_1")), _obs(2, ("renewal:in_1",))],
                                       False),
    "a version went down": ([_obs(1, (), (("sub_1", "active", 3),)), _obs(2, (), (("sub_1", "past_due", 2),))],
                            False),
    "a version went down within one read": ([_obs(1, (), (("sub_1", "active", 3), ("sub_1", "past_due", 2)))], False),
    "a state without a version": ([_obs(1, (), (("sub_1", "active", None),))], False),
    "time went back": ([_obs(2, (), (("sub_1", "active", 1),)), _obs(1, (), (("sub_1", "active", 1),))], False),
}


@pytest.mark.parametrize("name", CASES)
def test_the_watch_is_clear_only_when_nothing_can_be_found(name: str) -> None:
    observations, clear = CASES[name]
    assert _watched(observations).clear(observations) is clear
    if clear:
        assert not _found(observations)


def test_the_watch_needs_exactly_the_observations_it_saw() -> None:
    seen = [_obs(1, ("renewal:in_1",)), _obs(2, ("renewal:in_1",))]
    watch = _watched(seen)
    assert watch.clear(seen)
    assert not watch.clear(seen[:1])
    assert not watch.clear([*seen, _obs(3)])
    assert not watch.clear([seen[0], _obs(2, ("renewal:in_1",))])  # the same count, another last read


def test_a_tripped_watch_stays_tripped() -> None:
    seen = [_obs(1, ("renewal:in_1", "renewal:in_1"))]
    watch = _watched(seen)
    for at in (2, 3):
        seen.append(_obs(at, ("renewal:in_1",)))
        watch.add(seen[-1])
        assert not watch.clear(seen)


_STATE = st.tuples(st.sampled_from(OBJECTS), st.sampled_from(("active", "past_due", "canceled", "trialing")),
                   st.one_of(st.none(), st.integers(0, 5)))
_OBSERVATION = st.builds(_obs, st.integers(0, 6).map(float), st.lists(st.sampled_from(KEYS), max_size=4).map(tuple),
                         st.lists(_STATE, max_size=3).map(tuple))


@settings(max_examples=300, deadline=None)
@given(st.lists(_OBSERVATION, max_size=5))
def test_a_clear_watch_never_hides_a_finding(observations: list[Observation]) -> None:
    if _watched(observations).clear(observations):
        assert not _found(observations)


def _results(checks: list[CheckResult]) -> list[object]:
    """The checks' results without the ids (each example's ids are fresh: a state finding's
    expected and actual by their status, their words naming the events) and with a finding's
    attempts by their count: the attempts of a concurrent burst are recorded in the order they
    completed, so which index an effect's attempt has varies between two runs of one schedule."""
    def plain(value: object) -> object:
        return value.status if isinstance(value, NamedState) else value

    return [(c.check_id, c.verdict, c.detail, dict(c.stats),
             [(f.check_id, plain(f.expected), plain(f.actual), len(f.attempts), f.severity, f.count) for f in c.findings])
            for c in checks]


@pytest.mark.parametrize("name", ["no_dedupe", "inbox_sync"])
def test_the_search_finds_the_same_with_and_without_the_watch(name: str, tmp_path: Path) -> None:
    """The same seed searched twice, the safety checks run after every step or only when the
    watch is not clear: the same examples and steps, and the same shrunk failure."""
    outcomes = []
    for watched in (False, True):
        provider = ServerState()
        (tmp_path / str(watched)).mkdir()
        receivers = ReceiverPool(name, tmp_path / str(watched), provider_state=provider)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(session_module, "_WATCHED_ONLY", watched)
            try:
                result = explore(receivers.target(), max_examples=40, seed=20240601, provider_state=provider)
            finally:
                receivers.close()
        failure = result.failure
        outcomes.append((result.examples, result.steps, result.attempts, result.acked,
                         None if failure is None else (failure.phase, failure.steps, failure.event_types,
                                                       _results(failure.checks))))
    assert outcomes[0] == outcomes[1]
    if name != "inbox_sync":
        assert outcomes[1][-1] is not None




def _first_update(seed: int) -> int:
    """The number of a subscription's first ``customer.subscription.updated`` in the world of
    `seed` told every type, as the replay's is (its first invoice's payment's own events before it)."""
    from hookproof.scenarios.world_ops import apply_action
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    world = World(seed)
    stripe = get_profile("stripe")
    world.sent_only(lambda t: stripe.provider_type(t) is not None)
    apply_action(world, "subscribe", None)
    return [e.type for e in world.events].index("customer.subscription.updated")


#: blind_overwrite's regression: the subscription's update acknowledged, then its creation.
REGRESSION = [Step("emit", action="subscribe"), Step("deliver", event=0), Step("advance_clock", seconds=1),
              Step("deliver", event=_first_update(20240601)), Step("deliver", event=1), Step("deliver", event=2)]


@pytest.mark.parametrize("name", ["blind_overwrite", "inbox_sync"])
def test_a_replay_finds_the_same_regression_with_and_without_the_watch(name: str, tmp_path: Path) -> None:
    """Step by step (replay's order: a step, then the safety checks), the same answer whether
    the checks run after every step or only when the watch is not clear."""
    outcomes = []
    for watched in (False, True):
        provider = ServerState()
        (tmp_path / str(watched)).mkdir()
        receivers = ReceiverPool(name, tmp_path / str(watched), provider_state=provider)
        notes: list[str] = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(session_module, "_WATCHED_ONLY", watched)
            try:
                found = replay(receivers.target(), REGRESSION, 20240601, provider_state=provider,
                               on_step=lambda step, note: notes.append(note))
            finally:
                receivers.close()
        outcomes.append((notes, None if found is None else (found.phase, found.steps, _results(found.checks))))
    assert outcomes[0] == outcomes[1]
    if name == "blind_overwrite":
        found_steps = outcomes[1][1]
        assert found_steps is not None and found_steps[0] == "step" and len(found_steps[1]) == 5
        assert [c[0] for c in found_steps[2] if c[4]] == ["regressed"]
    else:
        assert outcomes[1][1] is None
