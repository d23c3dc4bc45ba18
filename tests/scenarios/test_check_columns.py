"""The per-key checks read as columns by key code (`scenarios.key_table`) give what their
Python loop per key gave (`oracle_checks`): verdict, stats and every finding (text,
order, attempts), over the columnar pass's index and over the dict pass's."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.scenarios import key_table
from hookproof.scenarios.check_index import build_index, expectations_and_index
from hookproof.scenarios.checks import ALL_CHECKS, CheckResult
from hookproof.scenarios.observations import Effect, Expectations, ExpectedEffect, ObjectState, Observation
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from tests.scenarios import oracle_checks
from tests.scenarios.oracle_scan import old_expectations_and_index
from tests.scenarios.test_history_scan import T0, recorded, run_of


@pytest.fixture(autouse=True, params=["numpy", "walked"])
def small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test twice: every key, row, state and event read in numpy (no run is small),
    and every one walked one by one (every run is small)."""
    monkeypatch.setattr(key_table, "SMALL", 0 if request.param == "numpy" else 10 ** 9)


#: The checks whose inner loop now runs over the key table, and their old loops.
REWRITTEN = {name: getattr(oracle_checks, f"check_{name}") for name in (
    "duplicated", "lost", "unexpected", "recovered", "counter", "downstream_idempotency", "retry_storm",
    "ack_latency", "stale", "regressed")}


def both(history: list[Attempt], expectations: Expectations, observations: list[Observation],
         index: object) -> list[tuple[CheckResult, CheckResult]]:
    return [(ALL_CHECKS[name](history, expectations, observations, index=index),
             old(history, expectations, observations, index=index)) for name, old in REWRITTEN.items()]


def assert_same(pairs: list[tuple[CheckResult, CheckResult]]) -> None:
    for new, old in pairs:
        assert new == old, new.check_id
        assert [f.to_dict() for f in new.findings] == [f.to_dict() for f in old.findings]
        assert repr(new.stats) == repr(old.stats), new.check_id


@pytest.mark.parametrize("seed", range(8))
def test_every_rewritten_check_agrees_with_its_loop(seed: int) -> None:
    events, attempts, observations = run_of(seed, n_events=400)
    for make in (expectations_and_index, old_expectations_and_index):
        expectations, index = make(events, attempts, observations, sender_timeout_s=10.0, max_attempts_per_event=3)
        assert_same(both(attempts, expectations, observations, index))


def test_a_storm_sized_run_with_every_fault_agrees(tmp_path: Path) -> None:
    """6,000 events with every fault, the index over the history file's attempts too."""
    events, attempts, observations = run_of(13, n_events=6000)
    in_memory = recorded(tmp_path / "history.sqlite", attempts)
    expectations, index = expectations_and_index(events, in_memory, observations, sender_timeout_s=10.0,
                                                 max_attempts_per_event=3)
    pairs = both(in_memory, expectations, observations, index)
    assert {new.check_id for new, _ in pairs if new.findings} >= {
        "duplicated", "lost", "unexpected", "recovered", "counter", "downstream_idempotency", "retry_storm"}
    assert_same(pairs)


@pytest.mark.parametrize("seed", range(4))
def test_reads_that_grow_or_repeat_agree(seed: int) -> None:
    """Reads whose rows and states only grow, a read repeated (its very tuples), one with an
    object the world never named after them, and one going back on a state: each check
    gives what its loop gives."""
    events, attempts, observations = run_of(seed, n_events=400)
    last = observations[-1]
    effects, states = tuple(last.effects), tuple(last.states)
    assert states
    half = Observation(last.at + 1, effects[:len(effects) // 2], states[:len(states) // 2])
    full = Observation(last.at + 2, effects, states)
    unknown = Observation(last.at + 4, (*effects, Effect("refund:nobody")),
                          (*states, ObjectState("sub_nobody", "active", 1)))
    back = replace(states[0], version=(states[0].version or 2) - 1)
    went_back = Observation(last.at + 5, effects, (*states[1:], back) if len(states) > 1 else (back,))
    grown = [*observations, half, full, replace(full, at=last.at + 3), unknown]
    for reads in (grown, [*grown, went_back]):
        for make in (expectations_and_index, old_expectations_and_index):
            expectations, index = make(events, attempts, reads, sender_timeout_s=10.0, max_attempts_per_event=3)
            assert_same(both(attempts, expectations, reads, index))


def _attempt(event: str, key: str | None, *, valid: bool = True, ok: bool = True, amount: int | None = None,
             pos: int = 0) -> Attempt:
    outcome, completion, status = ((Outcome.ACKED, Completion.OK, 200) if ok else
                                   (Outcome.REJECTED, Completion.FAIL, 400))
    return Attempt(event, f"dlv_{event}_0", 1, key, None, 1, "charge.refunded", (), valid, T0 + pos,
                   T0 + pos + 0.01, status, outcome, completion, 10.0, amount=amount, index=pos)


@pytest.mark.parametrize("seed", range(3))
def test_effects_a_later_read_lost_agree(seed: int) -> None:
    """Effects a read showed and the last read did not (a restart emptying the database): each
    lost key is "gone" with the read that showed it, over the table's peak and over the loop's."""
    events, attempts, observations = run_of(seed, n_events=400)
    last = observations[-1]
    effects = tuple(last.effects)
    assert effects
    shown = Observation(last.at + 1, effects, tuple(last.states))
    emptied = Observation(last.at + 2, effects[: len(effects) // 3], tuple(last.states))
    reads = [*observations, shown, emptied]
    expectations, index = expectations_and_index(events, attempts, reads, sender_timeout_s=10.0,
                                                 max_attempts_per_event=3)
    pairs = both(attempts, expectations, reads, index)
    assert_same(pairs)
    lost = next(new for new, _ in pairs if new.check_id == "lost")
    assert any("then gone by the end of settling" in f.message for f in lost.findings), lost.findings


def test_hand_built_expectations_agree() -> None:
    """Dict expectations (a user's own): expected keys no attempt carried, forbidden and
    unpriced money keys, effects of keys nothing names, mixed Idempotency-Keys, None among them."""
    history = [_attempt("e1", "refund:a", amount=100), _attempt("e2", "refund:b", ok=False, pos=1),
               _attempt("e3", "refund:c", valid=False, pos=2), _attempt("e4", None, pos=3)]
    expectations = Expectations(
        expected={"refund:a": ExpectedEffect("refund:a", "e1", amount=100),
                  "refund:b": ExpectedEffect("refund:b", "e2"),
                  "license:z": ExpectedEffect("license:z", "e9")},
        forbidden=frozenset({"refund:c"}), truth={}, money={"refund:a": 100, "refund:c": 30},
        sender_timeout_s=10.0, max_attempts_per_event=1)
    effects = (Effect("refund:a", 60, "i1"), Effect("refund:a", None, "i1"), Effect("refund:c", None, None),
               Effect("refund:ghost", 5, "i2"), Effect("license:y", None, "i2"), Effect("refund:b", None, None))
    observations = [Observation(T0 + 10, effects[:2]), Observation(T0 + 20, effects)]
    for variant in (expectations, replace(expectations, money_prefixes=("license:",))):
        assert_same(both(history, variant, observations, build_index(history, variant, observations)))
        assert_same(both(history, variant, observations[:1], build_index(history, variant, observations[:1])))
    quiet = [Observation(T0 + 10, (Effect("refund:a", 100, None),))]
    assert_same(both(history, expectations, quiet, build_index(history, expectations, quiet)))


@pytest.mark.parametrize(("seed", "id_small"), [(seed, None) for seed in range(6)] + [(0, 0), (3, 0)])
def test_states_read_in_order_agree(seed: int, id_small: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads whose versions only go up (with or without a version, statuses the provider
    never emitted, objects it never sent), then one that goes back: ``regressed`` and
    ``stale`` read as columns agree with their walk over the states. `id_small` 0: the
    objects held as bytes (`IdCodes` past `SMALL`, a storm's), the states' objects looked
    up together (`codes_in`)."""
    if id_small is not None:
        from hookproof.scenarios.id_codes import IdCodes

        monkeypatch.setattr(IdCodes, "SMALL", id_small)
    rnd = random.Random(seed)
    events, attempts, observations = run_of(seed, n_events=400)
    expectations, index = expectations_and_index(events, attempts, observations, sender_timeout_s=10.0,
                                                 max_attempts_per_event=3)
    truths = list(expectations.truth.values())
    reads: list[list[ObjectState]] = [[], [], []]
    for truth in truths:
        steps = sorted(rnd.randrange(len(truth.versions)) for _ in range(3))
        for read, step in zip(reads, steps):
            if rnd.random() < 0.9:
                version, status = truth.versions[step]
                read.append(ObjectState(truth.object_id, status if rnd.random() < 0.95 else "paused",
                                        version if rnd.random() < 0.4 else None))
    reads[1].append(ObjectState("sub_never_sent", "active", 2))
    reads[2].append(ObjectState("sub_never_sent", "active", 3))
    kinds = observations[0].state_kinds
    ordered = [Observation(T0 + 100 * (i + 1), observations[-1].effects, tuple(read), kinds)
               for i, read in enumerate(reads)]
    for observed in (ordered, ordered[::-1], [*ordered, Observation(T0 + 900, (), tuple(reads[0]), kinds)]):
        index = build_index(attempts, expectations, observed)
        assert_same(both(attempts, expectations, observed, index))


def test_reads_that_extend_the_last_read_code_as_fresh_reads_do() -> None:
    """Reads whose rows begin with the last read's rows (the same rows, or equal copies) are
    coded by their new rows only: the same codes, keys nothing expected included (coded
    after the index's own, in order of first sight), as reads coded whole; a read that
    drops or reorders rows is coded whole. The checks then agree with their loops."""
    import numpy as np

    from hookproof.scenarios.check_index import CheckIndex

    events, attempts, observations = run_of(4, n_events=400)
    rows = list(observations[-1].effects) + [Effect("refund:ghost", 5, "i9"), Effect("license:stray", None, None)]
    rng = random.Random(4)
    rng.shuffle(rows)
    cuts = sorted(rng.sample(range(1, len(rows)), 3))
    grown = [tuple(rows[:cut]) for cut in cuts] + [tuple(rows)]
    grown.insert(2, tuple(replace(e) for e in grown[1]) + tuple(rows[cuts[1]:cuts[1] + 2]))  # equal copies, and more
    reads = grown + [tuple(rows[:cuts[0]]), tuple(reversed(rows))]  # shorter, then reordered
    extended = [Observation(T0 + 1000 + i, effects, observations[-1].states) for i, effects in enumerate(reads)]
    fresh = [replace(o, effects=tuple(replace(e) for e in o.effects)) for o in extended]  # no read shares a row
    expectations, index = expectations_and_index(events, attempts, extended, sender_timeout_s=10.0,
                                                 max_attempts_per_event=3)
    assert isinstance(index, CheckIndex)
    coder = key_table._Coder(index.by_key.codes, len(index.by_key.codes))
    twin = key_table._Coder(index.by_key.codes, len(index.by_key.codes))
    got = key_table._coded_rows(coder, extended)
    want = [twin.code_all([e.business_key for e in o.effects]) for o in fresh]
    assert [r.tolist() for r in got] == [w.tolist() for w in want] and coder.extra == twin.extra
    assert all(isinstance(r, np.ndarray) and r.dtype == np.int32 for r in got)
    assert_same(both(attempts, expectations, extended, index))
