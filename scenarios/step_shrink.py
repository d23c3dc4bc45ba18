"""Shrinking a failing schedule by deleting its steps, each candidate judged by running it.

Hypothesis shrinks the choices that drew a schedule. When the receiver's answers depend on
timing (a burst raced through a thread pool, a lost answer), the same choices draw another
schedule or pass on a second run, and its shrinking stops early: a Paddle twin's stale
write, raced, shrank to seven deliveries on one machine and to two on another. This pass
works on the schedule itself (plain `Step`s, as `hookproof replay` runs them): it deletes
one step at a time, newest first, and keeps a deletion whenever the shorter schedule still
fails, until a whole pass deletes nothing or its run budget is spent. A candidate with
concurrent steps (`CONCURRENT_OPS`) is run up to `RACE_RUNS` times before it counts as
passing; one that no longer replays (a step naming an event the shorter schedule never
emits) counts as passing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from hookproof.scenarios.schedules import CONCURRENT_OPS, DELIVERY_OPS, Failure, Step

#: Runs of a candidate with concurrent steps before it counts as passing (a race's
#: interleaving is the receiver's: one passing run does not show the schedule cannot fail).
RACE_RUNS = 4
#: Runs one shrink may make in all (each candidate run counts once per run), and its time (s):
#: in process a run takes milliseconds, against a started receiver up to its settle window.
MAX_RUNS = 200
MAX_SECONDS = 60.0

#: Run a schedule once: its finding, or None when it passed (raises ValueError when a step
#: cannot be applied: `Session.apply`).
Run = Callable[[Sequence[Step]], "Failure | None"]


def size(steps: Sequence[Step]) -> tuple[int, int]:
    """What shrinking makes smaller: the delivery steps, then all steps."""
    return sum(1 for s in steps if s.op in DELIVERY_OPS), len(steps)


@dataclass
class Budget:
    """What a shrink may still spend: runs, and a `time.monotonic()` after which none starts."""

    runs: int = MAX_RUNS
    until: float = float("inf")

    def take(self) -> bool:
        """Spend one run; False when none is left."""
        if self.runs <= 0 or time.monotonic() > self.until:
            return False
        self.runs -= 1
        return True


def judge(run: Run, steps: Sequence[Step], budget: Budget) -> Failure | None:
    """The first finding of up to `RACE_RUNS` runs of `steps` (one run without concurrent
    steps), or None when they passed or `budget` ran out."""
    runs = RACE_RUNS if any(s.op in CONCURRENT_OPS for s in steps) else 1
    for _ in range(runs):
        if not budget.take():
            return None
        try:
            found = run(steps)
        except ValueError:  # a deletion left a step naming what the shorter schedule lacks
            return None
        if found is not None:
            return found
    return None


def shrink_steps(failure: Failure, run: Run, *, smaller: list[Failure] | None = None,
                 max_runs: int = MAX_RUNS, max_seconds: float = MAX_SECONDS) -> Failure:
    """The smallest failing schedule found by deleting `failure`'s steps one at a time
    (`size`), within `max_runs` runs and `max_seconds`: `failure` itself when no deletion
    still fails. Each smaller one found is also appended to `smaller`, so a KeyboardInterrupt
    (which propagates) leaves the caller the smallest so far."""
    best = failure
    budget = Budget(max_runs, time.monotonic() + max_seconds)
    improved = True
    while improved:
        improved = False
        i = len(best.steps) - 1
        while i >= 0 and budget.runs > 0:
            found = judge(run, best.steps[:i] + best.steps[i + 1:], budget)
            if found is not None and size(found.steps) < size(best.steps):
                best = found
                if smaller is not None:
                    smaller.append(found)
                improved = True
                i = min(i, len(best.steps))
            i -= 1
    return best


__all__ = ["Budget", "MAX_RUNS", "MAX_SECONDS", "RACE_RUNS", "Run", "judge", "shrink_steps", "size"]
