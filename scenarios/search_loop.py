"""One event loop for a whole explore search, whose worker threads outlive each step.

The state machine's rules are synchronous (Hypothesis has no async rules), so each step
runs the loop until its deliveries complete (`run_until_complete`). An in-process app
with synchronous endpoints (FastAPI, Starlette) answers from anyio's worker threads, and
anyio ties those threads to the *root task* it finds: the task `run_until_complete` is
running. Every step was therefore a new root, so every step started a worker thread and
stopped it when the step ended (about 0.25 ms of thread start-up and hand-over per step,
more on a loaded machine), and every example made and closed its own loop.

`SearchLoop` keeps one loop for the search and a long-lived task anyio takes as the root,
so the receiver's worker threads are started once and reused, as they are under a real
server. Nothing else changes: each step still runs until its own deliveries complete.
Where anyio's internals differ (another version), the loop is still shared and only the
thread reuse is lost.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")

#: Names of the run's own threads that never touch an app: the run's deadline and its
#: progress lines (`hookproof.deadline`, `hookproof.heartbeat`).
BYSTANDER_THREADS = frozenset({"hookproof-deadline", "hookproof-heartbeat"})
#: Seconds to wait for what an interrupted step left running, once cancelled (as long as
#: the dispatcher waits for the requests it gave up on).
STRAY_WAIT_S = 5.0


class SearchLoop:
    """An event loop shared by the sessions of one search (`run` a coroutine to completion,
    `close` once at the end). Not thread-safe: one search drives it from one thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._release: asyncio.Future[None] = self.loop.create_future()
        self._root = self.loop.create_task(self._hold())
        self._closed = False
        self.loop.run_until_complete(self._pin())

    async def _hold(self) -> None:
        await self._release

    async def _pin(self) -> None:
        """Make the long-lived task the root anyio ties its worker threads to."""
        try:
            from anyio._backends._asyncio import _root_task
        except ImportError:  # another anyio: threads are then per step, as without this class
            return
        try:
            _root_task.set(self._root)
        except Exception:  # noqa: BLE001 - a changed RunVar: the same fallback
            return

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the loop until it completes; its result (or its exception)."""
        return self.loop.run_until_complete(coro)

    def quiet(self) -> bool:
        """True when nothing can change an in-process app's state until the loop runs again:
        no task but the root is unfinished, no callback is ready or timed on the loop, and
        every other thread of the process is one of anyio's worker threads, idle (it has
        handed back its last call; an app's call in a worker thread outlives a cancelled
        request), or one of the run's own `BYSTANDER_THREADS`. Call it with the loop stopped
        (between steps). Any other thread (an app's own background worker, a WSGI app's
        executor, a caller's thread, a provider API served on a socket) makes it False, as
        does an anyio without the worker class this reads."""
        loop = self.loop
        if any(not t.done() for t in asyncio.all_tasks(loop) if t is not self._root):
            return False
        ready, scheduled = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None)
        if ready is None or scheduled is None or ready or any(not h.cancelled() for h in scheduled):
            return False
        worker = _anyio_worker_class()
        me = threading.current_thread()
        for thread in threading.enumerate():
            if thread is me or thread.name in BYSTANDER_THREADS:
                continue
            if worker is None or not isinstance(thread, worker):
                return False
            idle = getattr(thread, "idle_workers", None)
            if idle is None or thread not in idle:
                return False
        return True

    def settle_strays(self, timeout_s: float = STRAY_WAIT_S) -> None:
        """Cancel what a step left running on the loop (an interrupted step's deliveries)
        and wait for it, `timeout_s` at most (an app's call already in a worker thread
        runs to its end), so that the next example starts on an idle loop."""
        strays = [t for t in asyncio.all_tasks(self.loop) if t is not self._root and not t.done()]
        for t in strays:
            t.cancel()
        if strays:
            self.loop.run_until_complete(asyncio.wait(strays, timeout=timeout_s))

    def close(self) -> None:
        """Release the root (anyio stops its worker threads, each after its current call),
        then close the loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.settle_strays()  # an interrupted step's requests unwind before the generators are closed
            if not self._release.done():
                self._release.set_result(None)
            self.loop.run_until_complete(self._root)
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()


def _anyio_worker_class() -> type | None:
    """anyio's worker thread class (asyncio backend), or None where it is not found."""
    try:
        from anyio._backends._asyncio import WorkerThread
    except ImportError:
        return None
    return WorkerThread if isinstance(WorkerThread, type) else None


__all__ = ["BYSTANDER_THREADS", "STRAY_WAIT_S", "SearchLoop"]
