"""A module's light storms run side by side, a few at a time; each test reads its own.

The low-rate storms of these tests (a few events per second for 6-8 s, then the settle
window) mostly wait: on process start-up, on the rate limiter, on the settle reads. Run
one after the other they cost a module minutes; started together when the module's first
storm test asks, they cost about the longest few. Nothing a storm sends or checks changes:
each job is the same ``hookproof storm`` subprocess in its own directory, with its own
receiver, port and database, and each test asserts only on its own jobs' results (a job
that raised re-raises in its test, and only there).

`storm_batch(request, tmp_path_factory, jobs)` starts the jobs of the tests pytest selected
in the calling module (a job's key is ``"<test name>/<label>"``, the test name as
``request.node.name`` spells it, parameters included); `StormBatch.result(key)` waits for one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

import pytest

__all__ = ["STORM_WORKERS", "StormBatch", "storm_batch"]

T = TypeVar("T")

#: Storms running at a time. One of these storms (the storm process, its Locust worker and
#: the receiver) uses about 0.15 of a core over its run (5 s of CPU in 30 s), so two leave
#: most of two cores idle. Not more: shopify_app_fetch, which fetches from the provider API
#: for every event, already nears the sender's 5 s timeout on a loaded machine when alone.
STORM_WORKERS = 2


class StormBatch(Generic[T]):
    """Jobs (``run(directory) -> T``) started in a bounded thread pool, keyed by name."""

    def __init__(self, root: Path, workers: int = STORM_WORKERS) -> None:
        self._root = root
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="storm")
        self._futures: dict[str, Future[T]] = {}

    def submit(self, key: str, run: Callable[[Path], T]) -> None:
        """Queue `run` with a fresh directory of its own (under the batch's root)."""
        directory = self._root / key.replace("/", "-").replace("[", "-").replace("]", "")
        directory.mkdir(parents=True, exist_ok=False)
        self._futures[key] = self._pool.submit(run, directory)

    def result(self, key: str) -> T:
        """The result of job `key`, once it ended; re-raises what the job raised.

        Raises KeyError for a job never submitted (its test was not selected, or the key is
        misspelt). Each job bounds itself (its subprocess has a timeout), so this wait is bounded.
        """
        return self._futures[key].result()

    def close(self) -> None:
        """Cancel the jobs not started yet and wait for the running ones."""
        self._pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def storm_batch(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                jobs: Mapping[str, Callable[[Path], T]]) -> Iterator[StormBatch[T]]:
    """A batch running the `jobs` whose test is selected in `request`'s module, in the jobs' order."""
    selected = {item.name for item in request.session.items if getattr(item, "module", None) is request.module}
    batch: StormBatch[T] = StormBatch(tmp_path_factory.mktemp("storms"))
    try:
        for key, run in jobs.items():
            if key.split("/", 1)[0] in selected:
                batch.submit(key, run)
        yield batch
    finally:
        batch.close()
