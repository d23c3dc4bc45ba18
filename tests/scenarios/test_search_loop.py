"""`SearchLoop`: one loop for a search, whose anyio worker threads outlive each step."""

from __future__ import annotations

import asyncio
import threading

import anyio.to_thread

from hookproof.scenarios.search_loop import SearchLoop


def _worker() -> threading.Thread:
    return threading.current_thread()


async def _step() -> threading.Thread:
    """What a synchronous endpoint does: its work in anyio's worker thread."""
    return await anyio.to_thread.run_sync(_worker)


def test_steps_share_one_worker_thread_until_the_search_closes() -> None:
    loop = SearchLoop()
    try:
        workers = [loop.run(_step()) for _ in range(5)]
        assert len({id(w) for w in workers}) == 1 and workers[0] is not threading.current_thread()
        assert workers[0].is_alive()
    finally:
        loop.close()
    workers[0].join(timeout=10)
    assert not workers[0].is_alive()  # released with the root


def test_without_a_search_loop_each_run_starts_its_own_worker() -> None:
    """What the search loop saves: a loop driven step by step gets a new worker per step."""
    loop = asyncio.new_event_loop()
    try:
        workers = [loop.run_until_complete(_step()) for _ in range(3)]
    finally:
        loop.close()
    assert len({id(w) for w in workers}) == 3


def test_what_an_interrupted_step_left_running_is_cancelled_before_the_next() -> None:
    loop = SearchLoop()
    try:
        started = loop.loop.create_future()

        async def hangs() -> None:
            started.set_result(None)
            await asyncio.sleep(3600)

        stray = loop.loop.create_task(hangs())
        loop.run(asyncio.wait_for(asyncio.shield(started), 5))
        loop.settle_strays()
        assert stray.cancelled()
        assert loop.run(_step()).is_alive()  # the loop goes on
    finally:
        loop.close()
    assert loop.loop.is_closed()
