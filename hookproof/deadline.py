"""A run's whole-run deadline (``--max-duration``): certify, send and explore share it.

`run_deadline` interrupts the main thread as Ctrl-C does once the limit has passed,
after adding the one line that says why (`deadline_note`) to the run's notes. Light on
imports: `send` loads it at every run.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

#: How a deadline-stopped run's note begins (`CertifyResult.timed_out` and the commands look for it).
DEADLINE_NOTE = "stopped: the run reached its maximum duration"


def deadline_note(limit_s: float, source: str, after: str) -> str:
    """The one line a run stopped at its maximum duration says: the limit, where it came
    from (`source`) and what did not happen (`after`)."""
    return f"{DEADLINE_NOTE} ({limit_s:g} s, {source}); {after}"


@contextlib.contextmanager
def run_deadline(limit_s: float, notes: list[str], *, source: str = "--max-duration or run.max_duration_s",
                 after: str = "the scenarios after that did not run") -> Iterator[Callable[[], None]]:
    """Interrupt the main thread (KeyboardInterrupt) once `limit_s` seconds have passed,
    adding the reason to `notes` first (`deadline_note`: where the limit came from,
    `source`, and what was left undone, `after`); yields the function that disarms it.
    A no-op off the main thread. certify, send and explore share it."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    def expire() -> None:
        import _thread
        import signal

        notes.append(deadline_note(limit_s, source, after))
        main = threading.main_thread().ident
        if callable(signal.getsignal(signal.SIGINT)) and main is not None:
            # A real SIGINT, as Ctrl-C: it also wakes a main thread blocked in a system call
            # (an event loop waiting on a 600 s answer), which interrupt_main does not.
            signal.pthread_kill(main, signal.SIGINT)
        else:
            _thread.interrupt_main()

    timer = threading.Timer(limit_s, expire)
    timer.daemon = True
    timer.start()
    try:
        yield timer.cancel
    finally:
        timer.cancel()
