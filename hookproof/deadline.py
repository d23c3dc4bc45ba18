"""A run's whole-run deadline (``--max-duration``): certify, send, explore and replay share it.

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
    certify, send, explore and replay share it.

    A process started with SIGINT ignored (a `&` or `nohup` job of a CI script) or left at
    the system default gets, for the block, a handler that raises only for this deadline's
    own interruption (any other SIGINT stays ignored, or ends the process, as before); the
    previous handler is restored after it."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    done = threading.Event()  # the block exited or was disarmed
    fired = threading.Event()  # this deadline sent its interruption
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL, or a handler not installed from Python

        def on_sigint(signum: int, frame: object) -> None:
            if fired.is_set():
                raise KeyboardInterrupt
            if previous == signal.SIG_DFL:  # what the system default would have done
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.raise_signal(signal.SIGINT)

        signal.signal(signal.SIGINT, on_sigint)

    def interrupt() -> None:
        main = threading.main_thread().ident
        fired.set()
        if main is not None:
            # A real SIGINT, as Ctrl-C: it also wakes a main thread blocked in a system call
            # (an event loop waiting on a 600 s answer), which interrupt_main does not.
            signal.pthread_kill(main, signal.SIGINT)
        else:  # pragma: no cover - the main thread always has an ident while it runs
            import _thread

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
        if not callable(previous):
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
