"""The plain-Python pass over a small history (`scenarios.small_pass`, explore's) gives what
the columnar pass gives (`scenarios.check_index.expectations_and_index`): the same
expectations in the same order, the same index, and every check the same result, stats
and findings (text, order, attempts) over either."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from hookproof.scenarios import key_table, small_pass
from hookproof.scenarios.check_index import CheckIndex
from hookproof.scenarios.check_index import expectations_and_index as columnar
from hookproof.scenarios.checks import ALL_CHECKS, CheckResult, check_safe
from hookproof.scenarios.history_scan import HistoryScan
from hookproof.scenarios.observations import Effect, Expectations, ObjectState, Observation
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from tests.scenarios.test_history_scan import T0, run_of


def _same_index(got: CheckIndex, want: CheckIndex, history: list[Attempt]) -> None:
    assert [(k, list(v)) for k, v in got.by_key.items()] == [(k, list(v)) for k, v in want.by_key.items()]
    assert [(k, list(v)) for k, v in got.by_event.items()] == [(k, list(v)) for k, v in want.by_event.items()]
    assert list(got.completions) == list(want.completions)
    assert got.notable == want.notable
    assert set(got.acked_events) == set(want.acked_events)
    assert dict(got.settled_counts) == dict(want.settled_counts)
    assert list(got.peak.items()) == list(want.peak.items())
    assert (got.settled, got.has_states, got.state_kinds, got.columnar) == \
        (want.settled, want.has_states, want.state_kinds, want.columnar)
    assert dict(got.expected_keys) == dict(want.expected_keys)
    assert got.scan is not None and want.scan is not None
    assert list(got.scan.acked_latencies) == list(want.scan.acked_latencies)
    assert (got.scan.over_half, got.scan.over_half_ms) == (want.scan.over_half, want.scan.over_half_ms)
    for event_id in want.by_event:
        assert got.key_of_event(event_id) == want.key_of_event(event_id)
        assert got.ack_window(event_id) == want.ack_window(event_id)
    assert [got.label(a) for a in history] == [want.label(a) for a in history]


def _same_expectations(got: Expectations, want: Expectations) -> None:
    assert got == want
    assert list(got.expected) == list(want.expected) and list(got.truth) == list(want.truth)
    assert list(got.money.items()) == list(want.money.items())
    assert sorted(got.forbidden) == sorted(want.forbidden)
    assert [got.expected[k] for k in got.expected] == [want.expected[k] for k in want.expected]
    assert [got.truth[o] for o in got.truth] == [want.truth[o] for o in want.truth]


def _results(history: list[Attempt], expectations: Expectations, observations: list[Observation],
             index: CheckIndex) -> list[CheckResult]:
    return [check_safe(i, ALL_CHECKS[i], history, expectations, observations, index=index) for i in ALL_CHECKS]


def _agree(events: list[Event], history: list[Attempt], observations: list[Observation],
           timeout_s: float = 10.0, max_attempts: int | None = 3) -> list[CheckResult]:
    """Both passes over one run agree; the checks' results."""
    options = {"sender_timeout_s": timeout_s, "max_attempts_per_event": max_attempts}
    want_exp, want_index = columnar(iter(events), history, observations, **options)  # type: ignore[arg-type]
    got_exp, got_index = small_pass.expectations_and_index(iter(events), history, observations,
                                                           **options)  # type: ignore[arg-type]
    _same_expectations(got_exp, want_exp)
    _same_index(got_index, want_index, history)
    want = _results(history, want_exp, observations, want_index)
    got = _results(history, got_exp, observations, got_index)
    assert got == want
    assert [r.stats for r in got] == [r.stats for r in want]
    assert [f.to_dict() for r in got for f in r.findings] == [f.to_dict() for r in want for f in r.findings]
    return got


def small_run(seed: int) -> tuple[list[Event], list[Attempt], list[Observation]]:
    """A run of explore's size (1 to 14 events, every kind of attempt `run_of` makes: keyed
    and unkeyed, invalid, renamed ``msg_`` ids, forged keys, money, states, slow acks),
    its attempts shuffled or in send order, observed none, once or several times (the
    effects of some reads a prefix of the next: counts that rise and fall)."""
    rnd = random.Random(seed)
    events, attempts, observations = run_of(seed, n_events=rnd.randint(1, 14))
    if rnd.random() < 0.5:
        attempts.sort(key=lambda a: a.sent_at)
    reads = rnd.choice([0, 1, 2, 3, 4])
    effects = observations[1].effects
    states = observations[1].states
    observations = [Observation(T0 + 1000 + i, effects[: rnd.randint(0, len(effects))],
                                states[: rnd.randint(0, len(states))], observations[1].state_kinds)
                    for i in range(reads)]
    return events, attempts, observations


@pytest.mark.parametrize("block", range(8))
def test_explore_sized_histories_give_the_same_expectations_index_and_findings(block: int) -> None:
    """1,600 generated runs of explore's size: every check gives, over the plain-Python
    pass, what it gives over the columnar one; between them they find something of every
    kind the checks look for."""
    found: set[str] = set()
    for seed in range(block * 200, (block + 1) * 200):
        events, attempts, observations = small_run(seed)
        results = _agree(events, attempts, observations, timeout_s=random.Random(seed).choice([10.0, 0.02, 60.0]),
                         max_attempts=random.Random(-seed).choice([3, None]))
        found |= {r.check_id for r in results if r.findings}
    assert found >= {"duplicated", "lost", "unexpected", "stale", "duplicate_acked", "valid_not_rejected",
                     "no_server_error", "ack_latency"}


def test_an_empty_history_and_no_observation_agree() -> None:
    events, _, _ = run_of(5, n_events=3)
    _agree(events, [], [])
    _agree([], [], [])


def test_a_history_of_one_event_renamed_and_joined_through_its_delivery_id_agrees() -> None:
    """An envelope's own id (``msg_…``, Standard Webhooks) is joined to its world event
    through the delivery id, by its first attempt that names one, by both passes."""
    events, attempts, observations = run_of(3, n_events=6)
    renamed = [replace(a, event_id=f"msg_{a.event_id}", delivery_id=d)
               for a, d in zip(attempts, [f"other_{i}" if i % 2 == 0 else f"dlv_{a.event_id}_{i}"
                                          for i, a in enumerate(attempts)])]
    _agree(events, renamed, observations)


def test_a_long_history_read_in_plain_python_agrees() -> None:
    """The plain-Python pass at a size it is not used for (1,500 events, its bound and the
    key table's raised): the same as the columnar pass, whose index then walks its keys
    too."""
    events, attempts, observations = run_of(13, n_events=1500)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(small_pass, "SMALL_HISTORY", 10 ** 9)
        m.setattr(key_table, "SMALL", 10 ** 9)
        got_exp, got_index = small_pass.expectations_and_index(events, attempts, observations, sender_timeout_s=10.0,
                                                               max_attempts_per_event=3)
        assert not isinstance(got_index.scan, HistoryScan)
        _agree(events, attempts, observations)


def test_a_history_past_the_bound_or_with_many_keys_takes_the_columnar_pass() -> None:
    """`SMALL_HISTORY` attempts or more, or observations and keys past the key table's
    `SMALL` (the index then reads its keys as columns): the columnar pass itself."""
    events, attempts, observations = run_of(9, n_events=40)
    options = {"sender_timeout_s": 10.0, "max_attempts_per_event": 3}
    _, index = small_pass.expectations_and_index(events, attempts, observations, **options)  # type: ignore[arg-type]
    assert not isinstance(index.scan, HistoryScan)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(small_pass, "SMALL_HISTORY", len(attempts))
        _, index = small_pass.expectations_and_index(events, attempts, observations, **options)  # type: ignore[arg-type]
        assert isinstance(index.scan, HistoryScan)
    many = [Observation(T0 + 3000, tuple(Effect(f"license:many_{i}") for i in range(key_table.SMALL)), (), None)]
    got_exp, index = small_pass.expectations_and_index(events, attempts, many, **options)  # type: ignore[arg-type]
    assert isinstance(index.scan, HistoryScan)
    want_exp, want_index = columnar(events, attempts, many, **options)  # type: ignore[arg-type]
    assert _results(attempts, got_exp, many, index) == _results(attempts, want_exp, many, want_index)


def test_states_read_in_every_order_agree() -> None:
    """Objects read at versions above, at and below the truth, in reads that regress."""
    for seed in range(40):
        rnd = random.Random(seed)
        events, attempts, observations = run_of(seed, n_events=12)
        objects = sorted({e.object_id for e in events if e.status is not None})
        reads = [Observation(T0 + 1000 + i, (), tuple(ObjectState(o, rnd.choice(["active", "canceled", "past_due"]),
                                                                   rnd.choice([None, 1, 2, 5, 9])) for o in objects),
                             frozenset({"subscription"}) if seed % 2 else None) for i in range(3)]
        _agree(events, attempts, reads)


def test_it_takes_every_argument_the_columnar_pass_takes() -> None:
    """Explore calls it with the columnar pass's arguments and falls back to the slow path on
    any error: an argument only one of them knows would silently cost that fallback."""
    import inspect

    assert inspect.signature(small_pass.expectations_and_index).parameters.keys() == \
        inspect.signature(columnar).parameters.keys()
