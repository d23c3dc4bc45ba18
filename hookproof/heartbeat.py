"""Never silent: live progress on a terminal, a one-line heartbeat off one.

`Heartbeat` calls a `line()` function every `interval_s` seconds in a daemon thread and
hands the text to `emit`: on a terminal the commands update their live progress line
with it (every `TERMINAL_INTERVAL_S`), off one they print it as a line of its own on
stderr (every `LOG_INTERVAL_S`, or ``HOOKPROOF_HEARTBEAT_S`` seconds when set), so a
CI log shows that a long run is alive and where it is.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

#: Seconds between live updates on a terminal.
TERMINAL_INTERVAL_S = 0.5
#: Seconds between heartbeat lines off a terminal (CI logs), unless HOOKPROOF_HEARTBEAT_S says otherwise.
LOG_INTERVAL_S = 5.0


def log_interval_s() -> float:
    """Seconds between heartbeat lines off a terminal: ``HOOKPROOF_HEARTBEAT_S`` if it is a
    positive number, else `LOG_INTERVAL_S`."""
    try:
        value = float(os.environ.get("HOOKPROOF_HEARTBEAT_S", ""))
    except ValueError:
        return LOG_INTERVAL_S
    return value if value > 0 else LOG_INTERVAL_S


class Heartbeat:
    """Calls `line()` every `interval_s` seconds and passes the text to `emit`, from a
    daemon thread, between `__enter__` and `__exit__`. A failing `line` or `emit` ends
    the heartbeat, never the run."""

    def __init__(self, line: Callable[[], str], emit: Callable[[str], None], interval_s: float) -> None:
        self.line = line
        self.emit = emit
        self.interval_s = interval_s
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="hookproof-heartbeat", daemon=True)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the heartbeat started."""
        return time.monotonic() - self.started

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.emit(self.line())
            except Exception:  # noqa: BLE001 - the heartbeat must never break the run
                return

    def __enter__(self) -> "Heartbeat":
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
