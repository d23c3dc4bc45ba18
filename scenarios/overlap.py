"""Catalog scenarios run side by side against one receiver: which may, and in what order.

A scenario mostly waits: on the receiver, on settle's quiet reads, on scaled retry delays.
`run_overlapped` runs up to `bound` scenarios at a time, each in a thread of its own with
its own event loop, as `Runner.run_one` runs it alone. Each scenario has its own world (fresh
objects, events and business keys), and everything the runner attributes to it is read by
its own keys: its attempts by their scenario label, its effects, states and counters by its
world's object ids and its events' keys (`business_keys.scoped`), its provider-API refusals
by the ids in their paths (`own_refusals`), and its read before its first delivery by the same
keys, less those another scenario of the run sends too (`scenarios.leftovers`, `Runner._leftovers`).
What may overlap what is the scenario's `catalog.Overlap`:

- the first scenario runs alone, before any other, until the receiver answered one of its
  valid attempts (`run_overlapped`'s `proven`): a receiver that is down from the start is
  called down after it, and nothing else runs, as in a sequential run; one that answered is
  never called down (`runner.receiver_down` needs every valid attempt to have failed), so
  from then on the others may start beside it, as its class allows;
- ``FRESH`` and ``REPEATS`` scenarios overlap each other, in catalog order; then each ``ALONE``
  one runs with nothing else; ``FLOODS`` last, alone: nothing runs beside or after it, so the
  backlog a receiver that applies after answering may still hold of its replays (which no read
  shows: they change nothing) delays no other scenario's effects.

Beside others, a scenario whose reads fall short of what it expects settles only once, for
the settle window, nothing the receiver shows changed and no other scenario delivered
(`Runner._settle`), as if it ran after them: its effects may be queued behind theirs in a
receiver that applies after it answers.

Once a scenario leaves the receiver down (`runner.receiver_down`), or refused every valid
delivery as a wrong signing secret does (`runner.refused_valid`; while every valid answer of
the first is a 400, 401 or 403 it stays alone, `proven`), nothing new starts and the scenarios
never started are reported not run. Reports stay in catalog order. An
interruption (KeyboardInterrupt in the calling thread) cancels the scenarios in flight
(their event loops, their settle reads) and waits for their threads, at most
`STOP_WAIT_S` seconds.
"""

from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable, Mapping, Sequence

from hookproof.scenarios.catalog import Overlap, Scenario
from hookproof.simulator.server.refusals import Refusal

#: Scenarios a certify run lets overlap at most.
DEFAULT_BOUND = 4
#: Seconds an interrupted run waits for the scenarios in flight to stop.
STOP_WAIT_S = 20.0
#: Seconds between looks at whether the first scenario's receiver answered (`run_overlapped`).
FIRST_POLL_S = 0.01
#: Start priority among startable scenarios (lower first).
_PRIORITY: Mapping[Overlap, int] = {Overlap.FRESH: 0, Overlap.REPEATS: 0, Overlap.ALONE: 1, Overlap.FLOODS: 2}


class Stopped(BaseException):
    """Raised inside a scenario in flight when the run is interrupted (not an Exception: the
    runner's error handling must not turn it into the scenario's report)."""


def compatible(kind: Overlap, running: Iterable[Overlap]) -> bool:
    """True when a scenario of `kind` may start while scenarios of `running` kinds run."""
    others = list(running)
    if not others:
        return True
    alone = (Overlap.ALONE, Overlap.FLOODS)
    return kind not in alone and not any(o in alone for o in others)


def next_start(pending: Sequence[int], kinds: Sequence[Overlap], running: Iterable[int], bound: int, *,
               first_alone: bool = True) -> int | None:
    """The catalog index (in `pending`, catalog order) to start next while `running` (indexes)
    run, at most `bound` at a time; None when none may start now. The first scenario (index 0)
    starts before any other, and runs alone while `first_alone`. Pure."""
    active = list(running)
    if len(active) >= bound or not pending:
        return None
    if not active and pending[0] == 0:
        return 0  # the first scenario, before any other
    if 0 in active and first_alone:
        return None
    startable = [i for i in pending if compatible(kinds[i], (kinds[j] for j in active))]
    return min(startable, key=lambda i: (_PRIORITY[kinds[i]], i)) if startable else None


def own_refusals(refusals: Sequence[Refusal], ids: frozenset[str], served: Callable[[str], bool]) -> list[Refusal]:
    """The refusals of one overlapped scenario: those whose path names one of its world's `ids`,
    and those naming no id any served world holds (`served`), which no scenario owns more than
    another (a wrong route, a list call): every scenario overlapping them gets them."""
    out = []
    for r in refusals:
        parts = [p for p in r.path.split("/") if p]
        if any(p in ids for p in parts) or not any(served(p) for p in parts):
            out.append(r)
    return out


def run_overlapped(scenarios: Sequence[Scenario], bound: int, *, start: Callable[[int], None],
                   run: Callable[[int], object], finish: Callable[[int, object], str | None],
                   stop: Callable[[], None], proven: Callable[[int], bool] | None = None,
                   ) -> tuple[dict[int, object], list[int], int | None]:
    """Run `scenarios` (catalog order) `bound` at a time as the module docstring says.

    `start(i)` is called in this thread as scenario `i` starts; `run(i)` in its worker thread
    returns its result; `finish(i, result)` in this thread as it ends, in the order they end,
    returning why the receiver looks down after it (None: not down). `stop()` is called on an
    interruption (KeyboardInterrupt here), to cancel what is in flight; the interruption is
    then raised again once the workers stopped (at most `STOP_WAIT_S`). `proven(0)`, asked
    every `FIRST_POLL_S` while the first scenario runs, is True once its receiver answered a
    valid attempt: the others may then start beside it (None: it runs alone to its end).

    Returns (results by index, the indexes never started, the index that left the receiver down
    or None). Raises what `run` raises (other than `Stopped`).
    """
    kinds = [s.overlap for s in scenarios]
    pending = list(range(len(scenarios)))
    running: dict[Future[object], int] = {}
    results: dict[int, object] = {}
    down: int | None = None
    lock = threading.Lock()
    first_up = False
    pool = ThreadPoolExecutor(max_workers=max(1, bound), thread_name_prefix="scenario")
    try:
        while pending or running:
            while down is None and (i := next_start(pending, kinds, running.values(), bound,
                                                    first_alone=not first_up)) is not None:
                pending.remove(i)
                start(i)
                running[pool.submit(run, i)] = i
            if not running:
                break
            watch = proven is not None and not first_up and 0 in running.values() and len(pending) > 0
            done, _ = wait(list(running), timeout=FIRST_POLL_S if watch else None, return_when=FIRST_COMPLETED)
            if watch and not done and proven is not None and proven(0):
                first_up = True
            for future in sorted(done, key=lambda f: running[f]):
                i = running.pop(future)
                with lock:
                    results[i] = future.result()
                if finish(i, results[i]) is not None and down is None:
                    down = i
    except BaseException:
        stop()
        wait(list(running), timeout=STOP_WAIT_S)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results, pending, down


__all__ = ["DEFAULT_BOUND", "FIRST_POLL_S", "STOP_WAIT_S", "Stopped", "compatible", "next_start", "own_refusals", "run_overlapped"]
