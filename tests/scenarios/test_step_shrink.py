"""Shrinking a failing schedule by deleting its steps (`scenarios.step_shrink`), each candidate
judged by running it: a race judged over several runs, a schedule that no longer replays as
passing, the run budget kept."""

from __future__ import annotations

import itertools
from typing import Sequence

from hookproof.scenarios.schedules import Failure, Step
from hookproof.scenarios.step_shrink import RACE_RUNS, Budget, judge, shrink_steps, size

EMIT = Step("emit", action="subscribe")
CLOCK = Step("advance_clock", seconds=1)


def deliver(i: int) -> Step:
    return Step("deliver", event=i)


def failure(steps: Sequence[Step]) -> Failure:
    return Failure(seed=1, steps=list(steps), event_types=[], checks=[], attempts=[], phase="teardown")


def test_deletes_every_step_the_finding_does_not_need() -> None:
    runs: list[list[Step]] = []

    def run(steps: Sequence[Step]) -> Failure | None:
        runs.append(list(steps))
        return failure(steps) if EMIT in steps and deliver(3) in steps else None

    start = failure([EMIT, deliver(0), CLOCK, deliver(1), deliver(3), deliver(2)])
    smaller: list[Failure] = []
    best = shrink_steps(start, run, smaller=smaller)
    assert best.steps == [EMIT, deliver(3)]
    assert smaller[-1] is best and len(smaller) == 4  # deliver 2, deliver 1, the clock, deliver 0
    assert size(best.steps) == (1, 2)


def test_a_race_counts_as_passing_only_after_every_run_passed() -> None:
    calls = itertools.count(1)
    burst = Step("burst_related", events=[1, 0])

    def run(steps: Sequence[Step]) -> Failure | None:  # the race is won on every third run
        return failure(steps) if burst in steps and next(calls) % 3 == 0 else None

    best = shrink_steps(failure([EMIT, deliver(2), burst, deliver(4)]), run)
    assert best.steps == [burst]


def test_judge_runs_a_race_up_to_race_runs_and_a_plain_schedule_once() -> None:
    runs = []

    def passing(steps: Sequence[Step]) -> Failure | None:
        runs.append(steps)
        return None

    assert judge(passing, [EMIT, Step("burst", event=0, copies=2)], Budget()) is None
    assert len(runs) == RACE_RUNS
    runs.clear()
    assert judge(passing, [EMIT, deliver(0)], Budget()) is None
    assert len(runs) == 1


def test_a_schedule_that_no_longer_replays_counts_as_passing() -> None:
    def run(steps: Sequence[Step]) -> Failure | None:
        if steps and steps[0] != EMIT:
            raise ValueError("step deliver: no event #0 (the world emitted 0)")
        return failure(steps) if deliver(0) in steps else None

    assert shrink_steps(failure([EMIT, CLOCK, deliver(0)]), run).steps == [EMIT, deliver(0)]


def test_the_run_budget_is_kept() -> None:
    runs = []

    def run(steps: Sequence[Step]) -> Failure | None:
        runs.append(steps)
        return failure(steps)

    start = failure([EMIT, deliver(0), deliver(1), deliver(2)])
    best = shrink_steps(start, run, max_runs=2)
    assert len(runs) == 2
    assert best.steps == [EMIT, deliver(0)]
    runs.clear()
    assert shrink_steps(start, run, max_seconds=-1.0) is start and runs == []
