"""Attempt deadlines on one event-loop timer.

`asyncio.timeout()` arms a timer handle per use; at thousands of attempts a second,
each one in flight for milliseconds, arming and cancelling those handles (a heap of
Python-compared handles) is a visible share of an attempt's cost. `Deadlines` keeps
the deadlines of the attempts in flight in a set and one loop timer at the earliest
of them: starting or finishing an attempt is a set operation, and the timer, when it
fires, cancels the tasks whose deadline has passed and re-arms itself at the next one.

A `Deadline` behaves like `asyncio.timeout()`: used as ``with deadlines.at(when):``
inside a task, it cancels the task at `when` (loop time; None: not yet) and turns that
cancellation into `TimeoutError` when the block exits; `reschedule` moves it. A
cancellation from elsewhere stays a `CancelledError`.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class Deadline:
    """One block's deadline (see the module docstring); made by `Deadlines.at`."""

    __slots__ = ("when", "expired", "_owner", "_task", "_cancelling", "_active")

    def __init__(self, owner: Deadlines, when: float | None) -> None:
        self.when = when
        self.expired = False
        self._active = False
        self._owner = owner
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a Deadline is used inside a task")
        self._task = task
        self._cancelling = task.cancelling()

    def reschedule(self, when: float | None) -> None:
        """Move the deadline to loop time `when` (None: no deadline). Raises RuntimeError
        outside its ``with`` block."""
        if not self._active:
            raise RuntimeError("a Deadline is rescheduled inside its with block")
        if self.expired:
            return
        self.when = when
        if when is None:
            self._owner._live.discard(self)
        else:
            self._owner._watch(self)

    def __enter__(self) -> Deadline:
        self._active = True
        if self.when is not None:
            self._owner._watch(self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._active = False
        self._owner._live.discard(self)
        if self.expired and self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    def _expire(self) -> None:
        self.expired = True
        self._task.cancel()


class Deadlines:
    """The deadlines of one loop's attempts in flight, on a single timer."""

    def __init__(self) -> None:
        self._live: set[Deadline] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = float("inf")

    def at(self, when: float | None) -> Deadline:
        """A deadline at loop time `when` for the current task (None: armed later by
        `Deadline.reschedule`)."""
        return Deadline(self, when)

    def close(self) -> None:
        """Stop the timer (deadlines still in flight no longer fire)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_when = float("inf")
        self._live.clear()

    def _watch(self, deadline: Deadline) -> None:
        self._live.add(deadline)
        when = deadline.when
        assert when is not None
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first use, or a new loop: the old timer went with its loop
            self._loop = loop
            self._timer = None
            self._timer_when = float("inf")
            self._live = {d for d in self._live if d._task.get_loop() is loop}
        if when < self._timer_when:
            self._arm(loop, when)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(when, self._fire)
        self._timer_when = when

    def _fire(self) -> None:
        self._timer = None
        self._timer_when = float("inf")
        loop = self._loop
        assert loop is not None
        now = loop.time()
        expired = [d for d in self._live if d.when is not None and d.when <= now]
        for deadline in expired:
            self._live.discard(deadline)
            deadline._expire()
        if self._live:
            self._arm(loop, min(d.when for d in self._live if d.when is not None))


__all__ = ["Deadline", "Deadlines"]
