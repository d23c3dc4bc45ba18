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
#: Seconds a run stopped at its deadline has to unwind (heal, stop what it started, write its
#: report) before it is interrupted again, at most `REPEATS` more times: an interruption
#: swallowed on its way (a cancellation absorbed inside an event loop) must not leave the run
#: waiting out a 600 s sender timeout.
GRACE_S = 60.0
REPEATS = 3


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
    A block still running `GRACE_S` seconds after an interruption (and not disarmed) is
    interrupted again, at most `REPEATS` more times. A no-op off the main thread.
    certify, send and explore share it."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    done = threading.Event()  # the block exited or was disarmed

    def interrupt() -> None:
        import _thread
        import signal

        main = threading.main_thread().ident
        if callable(signal.getsignal(signal.SIGINT)) and main is not None:
            # A real SIGINT, as Ctrl-C: it also wakes a main thread blocked in a system call
            # (an event loop waiting on a 600 s answer), which interrupt_main does not.
            signal.pthread_kill(main, signal.SIGINT)
        else:
            _thread.interrupt_main()

    def expire() -> None:
        if done.wait(limit_s):
            return
        notes.append(deadline_note(limit_s, source, after))
        for _ in range(1 + REPEATS):
            interrupt()
            if done.wait(GRACE_S):
                return

    timer = threading.Thread(target=expire, name="hookproof-deadline", daemon=True)
    timer.start()
    try:
        yield done.set
    finally:
        done.set()
