"""Where a certify run is, for its progress line: how many scenarios finished, which are running.

Scenarios may run side by side (`scenarios.overlap`) and start out of catalog order, so the
line counts the scenarios finished (it never goes back) and names those running, rather than
the index of the one started last (``certify: 3/27 scenario(s) done, running reorder,
mass-redelivery, …``).
"""

from __future__ import annotations

import threading
from typing import Callable


class ScenarioProgress:
    """The scenarios of one run started and finished so far (thread-safe: `start` and `finish`
    come from the scenarios' threads, `line` from the heartbeat's). `on_change` is called
    after each `start` and `finish` (e.g. to redraw a live line)."""

    def __init__(self, total: int, on_change: Callable[[], None] | None = None) -> None:
        self.total = total
        self.on_change = on_change
        self.done = 0
        self._running: dict[str, None] = {}  # in the order they started
        self._lock = threading.Lock()

    def start(self, scenario_id: str, index: int, total: int) -> None:
        """Scenario `scenario_id` (catalog position `index` of `total`) starts: the runner's
        `scenarios.runner.Progress` callback."""
        with self._lock:
            self.total = total
            self._running[scenario_id] = None
        if self.on_change is not None:
            self.on_change()

    def finish(self, scenario_id: str) -> None:
        """Scenario `scenario_id` ended (its checks ran): one more done, no longer running."""
        with self._lock:
            if self._running.pop(scenario_id, 0) is None:
                self.done += 1
        if self.on_change is not None:
            self.on_change()

    @property
    def running(self) -> list[str]:
        """The ids of the scenarios running now, in the order they started."""
        with self._lock:
            return list(self._running)

    def line(self, label: str, *extra: str) -> str:
        """``<label>: <done>/<total> scenario(s) done, running <ids>[, <extra>…]`` (``starting``
        before the first scenario starts; no ``running`` part once none is running)."""
        with self._lock:
            done, total, running = self.done, self.total, list(self._running)
        where = f"running {', '.join(running)}" if running else ("starting" if not done else "")
        parts = [f"{done}/{total} scenario(s) done", *([where] if where else []), *extra]
        return f"{label}: " + ", ".join(parts)
