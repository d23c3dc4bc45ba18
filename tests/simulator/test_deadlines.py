"""Attempt deadlines on one loop timer: they cut a block off like `asyncio.timeout()`,
leave other cancellations alone, and share one timer between many blocks."""

from __future__ import annotations

import asyncio

import pytest

from hookproof.simulator.delivery.deadlines import Deadlines


async def test_a_block_past_its_deadline_is_cut_off_with_timeout_error() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimeoutError):
        with deadlines.at(loop.time() + 0.05) as deadline:
            await asyncio.sleep(5)
    assert deadline.expired
    assert 0.04 <= loop.time() - started < 1.0


async def test_a_block_that_ends_in_time_is_untouched() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    with deadlines.at(loop.time() + 0.2) as deadline:
        await asyncio.sleep(0.01)
    assert not deadline.expired
    await asyncio.sleep(0.3)  # the timer fires later and finds nothing to cut off
    assert not deadline.expired


async def test_an_unarmed_deadline_waits_until_rescheduled() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    with pytest.raises(TimeoutError):
        with deadlines.at(None) as deadline:
            await asyncio.sleep(0.1)  # no deadline yet
            deadline.reschedule(loop.time() + 0.05)
            await asyncio.sleep(5)


async def test_rescheduling_later_or_to_none_moves_the_deadline() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    with deadlines.at(loop.time() + 0.05) as deadline:
        deadline.reschedule(loop.time() + 0.3)
        await asyncio.sleep(0.1)
        deadline.reschedule(None)
        await asyncio.sleep(0.3)
    assert not deadline.expired


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()

    async def guarded() -> None:
        with deadlines.at(loop.time() + 5):
            await asyncio.sleep(5)

    task = asyncio.ensure_future(guarded())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_many_blocks_share_the_timer_and_each_gets_its_own_deadline() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def block(deadline_s: float, work_s: float) -> str:
        try:
            with deadlines.at(start + deadline_s):
                await asyncio.sleep(work_s)
        except TimeoutError:
            return f"cut at {loop.time() - start:.2f}"
        return "done"

    results = await asyncio.gather(block(0.3, 0.01), block(0.05, 5), block(0.15, 0.1), block(0.2, 5))
    assert results[0] == "done" and results[2] == "done"
    assert results[1].startswith("cut at 0.0") or results[1].startswith("cut at 0.1")
    assert results[3].startswith("cut at 0.2") or results[3].startswith("cut at 0.3")


async def test_a_timeout_inside_a_cancelled_task_is_still_the_outer_cancellation() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    inner_started = asyncio.Event()

    async def guarded() -> None:
        with deadlines.at(loop.time() + 0.05):
            inner_started.set()
            try:
                await asyncio.sleep(5)
            finally:
                await asyncio.sleep(0.1)  # the deadline passes while the outer cancel unwinds

    task = asyncio.ensure_future(guarded())
    await inner_started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_deadline_outside_a_task_is_misuse() -> None:
    with pytest.raises(RuntimeError):
        Deadlines().at(None)


async def test_deadlines_work_again_in_a_new_loop() -> None:
    deadlines = Deadlines()

    def in_new_loop() -> bool:
        async def go() -> bool:
            loop = asyncio.get_running_loop()
            try:
                with deadlines.at(loop.time() + 0.02):
                    await asyncio.sleep(1)
            except TimeoutError:
                return True
            return False
        return asyncio.run(go())

    assert await asyncio.to_thread(in_new_loop)
    assert await asyncio.to_thread(in_new_loop)


async def test_rescheduling_outside_the_block_is_misuse() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    deadline = deadlines.at(None)
    with pytest.raises(RuntimeError):
        deadline.reschedule(loop.time() + 1)
    with deadline:
        pass
    with pytest.raises(RuntimeError):
        deadline.reschedule(loop.time() + 1)
