"""Checker scaling: time every check on synthetic histories of growing size.

    python bench/checks_scaling.py                     # 10k, 100k and 1M attempts
    python bench/checks_scaling.py --sizes 10000 50000

Each run builds a synthetic world (a quarter as many events as attempts: licences,
refunds and subscription status changes), a history of four attempts per event
(a timeout, an ack, an acked copy, one more copy; a few redeliveries refused with 409)
and three observations (a third, two thirds, then all effects and states). It times
`expectations_and_index` (the expectations and the checks' index from one pass over the
history, as a storm builds them), `key_table` (the index by key code the per-key checks
share: the observations' counts, the expectations and completions per key, built once on
first use, here timed anew) and every check with that index, then prints the best
of three runs in milliseconds per size and the growth ratio between consecutive sizes: a
linear check grows about as much as the size does (~10x per 10x). `total` is their sum;
the rows after it time `expectations_from` and `build_index` alone (a pass each, as
certify's `run_checks` does), outside the total. The garbage
collector is off while timing (as in pyperf), so a gen-2 collection does not land on one
check; the previous run's result is freed before the clock starts.

The baseline row is Python's own growth on the same history: one pass doing one dict
insert per attempt (event id -> position). Once the history outgrows the CPU caches,
every pass over it and every large dict misses them, so even that loop grows faster than
the size; "total / baseline" stays flat when our growth is only that.

The last rows time what the one pass reads of its inputs, and nothing else: the
attempts' fields a chunk at a time as the pass reads them (`history_scan._chunks`: event
id, key and latency, and valid, completion, outcome and status graded together, nothing
coded) and the events' fields as `world_columns` reads them (a tuple per event,
transposed per chunk, nothing coded). "reads / baseline" is the share of "total /
baseline" that reading Python objects takes before any id is coded or any check runs.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Callable, TypeVar

from bench_args import parser, positive_int

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hookproof.scenarios.check_index import CheckIndex, expectations_and_index  # noqa: E402
from hookproof.scenarios.checks import ALL_CHECKS, build_index  # noqa: E402
from hookproof.scenarios.history_scan import _chunks  # noqa: E402
from hookproof.scenarios.key_table import KeyTable  # noqa: E402
from hookproof.scenarios.observations import Effect, ObjectState, Observation, expectations_from  # noqa: E402
from hookproof.scenarios.world_columns import _FIELDS, chunk_of  # noqa: E402
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome  # noqa: E402
from hookproof.simulator.events import Event  # noqa: E402

R = TypeVar("R")
T0 = 1_700_000_000.0
STATUSES = ("active", "past_due", "canceled")
ATTEMPTS_PER_EVENT = 4


def synthetic(n_attempts: int) -> tuple[list[Event], list[Attempt], list[Observation]]:
    """A world, a history of `n_attempts` attempts and three observations."""
    n_events = n_attempts // ATTEMPTS_PER_EVENT
    events: list[Event] = []
    history: list[Attempt] = []
    keys: list[str] = []
    final: dict[str, str] = {}
    for i in range(n_events):
        eid = f"evt_{i}"
        if i % 5 == 0:  # a subscription status change: three versions per object
            obj, version = f"sub_{i // 15}", (i // 5) % 3 + 1
            status = STATUSES[version - 1]
            events.append(Event(eid, "customer.subscription.updated", 0, 0, "subscription", obj, version,
                                {}, status=status))
            final[obj] = status
            key, amount = None, None
        else:
            money = i % 10 == 1
            obj, version = (f"re_{i}" if money else f"pi_{i}"), 1
            key = f"refund:{obj}" if money else f"license:{obj}"
            amount = 100 if money else None
            events.append(Event(eid, "charge.refunded" if money else "payment_intent.succeeded", 0, 0,
                                "refund" if money else "payment_intent", obj, version, {},
                                business_key=key, amount=amount))
            keys.append(key)
        base = T0 + i * 0.01
        for n in range(ATTEMPTS_PER_EVENT):
            if n == 0:
                outcome, completion, status_code, latency = Outcome.TIMEOUT, Completion.UNKNOWN, None, 10_000.0
            elif n == 3 and i % 1000 == 7:  # a rare redelivery refused after the ack
                outcome, completion, status_code, latency = Outcome.REJECTED, Completion.FAIL, 409, 12.0
            else:
                outcome, completion, status_code, latency = Outcome.ACKED, Completion.OK, 200, 20.0 + (i * 7 + n) % 200
            sent = base + n * 30.0
            history.append(Attempt(
                eid, f"dlv_{i}_{n}", 1, key, obj, version, "synthetic", ("copies=3",), True, sent,
                sent + latency / 1000, status_code, outcome, completion, latency, amount=amount,
                index=len(history),
            ))
    effects = tuple(Effect(k, idempotency_key=f"idem_{k}") for k in keys)
    third = len(effects) // 3
    states = tuple(ObjectState(obj, status) for obj, status in final.items())
    observations = [
        Observation(T0 + 1e6, effects[:third], states[:third]),
        Observation(T0 + 2e6, effects[:2 * third], states[:2 * third]),
        Observation(T0 + 3e6, effects, states),
    ]
    return events, history, observations


def _time(fn: Callable[[], R], repeat: int) -> tuple[float, R]:
    """Best of `repeat` (>= 1) runs of `fn`, milliseconds, and its last result.

    The previous result is dropped before each timed run, so freeing it is not timed.
    """
    best = float("inf")
    out = fn()  # warm-up run, not timed
    for _ in range(repeat):
        del out
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000, out


def one_dict_insert_per_attempt(history: list[Attempt]) -> dict[str, int]:
    """The baseline: one pass over the history, one dict insert per attempt."""
    out: dict[str, int] = {}
    for pos, a in enumerate(history):
        out[a.event_id] = pos
    return out


def attempts_read(history: list[Attempt]) -> int:
    """What the one pass reads of the attempts, alone: the history's chunks as columns
    (`history_scan._chunks`), nothing coded; returns how many chunks."""
    return sum(1 for _ in _chunks(history))


def events_read(events: list[Event]) -> int:
    """What the one pass reads of the events, alone: the fields `world_columns` reads of
    each, a tuple per event, transposed a chunk at a time, nothing coded; returns how many
    events."""
    n = 0
    it = iter(events)
    while chunk := list(islice(it, chunk_of(events))):
        columns = list(zip(*map(_FIELDS, chunk)))
        n += len(columns[0])
    return n


def fresh_key_table(index: CheckIndex) -> KeyTable:
    """The index's table by key code, built anew (the checks share the one built last)."""
    index.__dict__.pop("keys", None)
    return index.keys


def bench(n_attempts: int, repeat: int = 3) -> dict[str, float]:
    """Best-of-`repeat` milliseconds per step for one size; prints the verdicts."""
    gc.collect()
    start = time.perf_counter()
    events, history, observations = synthetic(n_attempts)
    t_build = (time.perf_counter() - start) * 1000
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        times: dict[str, float] = {}
        times["expectations_and_index"], (expectations, index) = _time(lambda: expectations_and_index(
            events, history, observations, sender_timeout_s=30.0, max_attempts_per_event=ATTEMPTS_PER_EVENT), repeat)
        times["key_table"], _ = _time(lambda: fresh_key_table(index), repeat)
        verdicts = {}
        for check_id, check in ALL_CHECKS.items():
            times[check_id], result = _time(
                lambda c=check: c(history, expectations, observations, index=index), repeat)  # type: ignore[misc]
            verdicts[check_id] = f"{result.verdict.value}({len(result.findings)})"
        times["total"] = sum(times.values())
        times["share of one pass"] = times["expectations_and_index"] / times["total"]
        times["expectations_from alone"], _ = _time(lambda: expectations_from(
            events, history, sender_timeout_s=30.0, max_attempts_per_event=ATTEMPTS_PER_EVENT), repeat)
        times["build_index alone"], _ = _time(lambda: build_index(history, expectations, observations), repeat)
        times["baseline"], _ = _time(lambda: one_dict_insert_per_attempt(history), repeat)
        times["total / baseline"] = times["total"] / times["baseline"]
        times["attempts read alone"], _ = _time(lambda: attempts_read(history), repeat)
        times["events read alone"], _ = _time(lambda: events_read(events), repeat)
        times["reads / baseline"] = (times["attempts read alone"] + times["events read alone"]) / times["baseline"]
    finally:
        gc.enable()
        gc.unfreeze()
    print(f"  {n_attempts:>9,} attempts: data built in {t_build / 1000:.1f} s; "
          f"{sum(len(o.effects) for o in observations):,} effect rows observed", file=sys.stderr)
    print("    " + " ".join(f"{k}={v}" for k, v in verdicts.items()), file=sys.stderr)
    return times


def main(argv: list[str] | None = None) -> None:
    cli = parser(__doc__)
    cli.add_argument("--sizes", type=positive_int, nargs="+", default=[10_000, 100_000, 1_000_000],
                     help="history sizes, attempts (default: 10000 100000 1000000)")
    cli.add_argument("--repeat", type=positive_int, default=3, help="runs per step, best kept (default: 3)")
    args = cli.parse_args(argv)
    sizes = args.sizes
    load_before = os.getloadavg()[0]
    results = [bench(n, args.repeat) for n in sizes]
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs")
    names = list(results[0])
    header = f"{'step':<24}" + "".join(f"{f'{n:,} (ms)':>16}" for n in sizes)
    header += "".join(f"{f'x {b // a}x size':>14}" for a, b in zip(sizes, sizes[1:]))
    print(header)
    for label, step in (("total, us/attempt", "total"), ("baseline, us/attempt", "baseline")):
        print(f"{label:<24}" + "".join(f"{r[step] * 1000 / n:>16.2f}" for r, n in zip(results, sizes)))
    for name in names:
        digits = 2 if name in ("total / baseline", "share of one pass", "reads / baseline") else 1
        row = f"{name:<24}" + "".join(f"{r[name]:>16.{digits}f}" for r in results)
        row += "".join(f"{(b[name] / a[name] if a[name] > 0 else float('nan')):>14.1f}"
                       for a, b in zip(results, results[1:]))
        print(row)


if __name__ == "__main__":
    main()
