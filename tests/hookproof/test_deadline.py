"""`run_deadline`: the whole-run deadline certify, send and explore share (in the main thread)."""

from __future__ import annotations

import time

import pytest

from hookproof import deadline
from hookproof.deadline import DEADLINE_NOTE, run_deadline
from tests.support import LATE_S


def test_the_deadline_interrupts_the_block_and_says_why() -> None:
    notes: list[str] = []
    with pytest.raises(KeyboardInterrupt), run_deadline(0.2, notes, source="--max-duration", after="nothing more"):
        time.sleep(30)
    assert notes == [f"{DEADLINE_NOTE} (0.2 s, --max-duration); nothing more"]


def test_a_disarmed_deadline_never_fires() -> None:
    notes: list[str] = []
    with run_deadline(0.2, notes) as disarm:
        disarm()
        time.sleep(0.5)
    assert notes == []


def test_an_interruption_swallowed_on_its_way_is_repeated_after_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that absorbs the first interruption (a cancellation lost inside an event loop) and
    would then wait out a long timeout is interrupted again once the grace has passed."""
    monkeypatch.setattr(deadline, "GRACE_S", 0.3)
    notes: list[str] = []
    swallowed = 0
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), run_deadline(0.1, notes):
        try:
            time.sleep(30)
        except KeyboardInterrupt:
            swallowed += 1
        time.sleep(30)  # the 600 s sender timeout it would otherwise wait out
    # the limit and the grace (+ LATE_S), far short of the 30 s it would otherwise wait out
    assert swallowed == 1 and time.monotonic() - started < 0.1 + 0.3 + LATE_S
    assert len(notes) == 1  # one reason, however many interruptions it took


@pytest.mark.parametrize("start", ["ignored", "default"])
def test_a_process_started_with_sigint_ignored_or_default_still_stops_at_its_deadline(start: str) -> None:
    """A `&` or `nohup` job of a CI script starts with SIGINT ignored: the deadline must still
    stop the run (it once never fired there); any other SIGINT keeps its old meaning, and the
    old handler is back after the block."""
    import subprocess
    import sys
    import textwrap

    program = textwrap.dedent(f"""
        import signal, time
        from hookproof.deadline import run_deadline
        signal.signal(signal.SIGINT, signal.{'SIG_IGN' if start == 'ignored' else 'SIG_DFL'})
        before = signal.getsignal(signal.SIGINT)
        notes = []
        try:
            with run_deadline(0.3, notes):
                time.sleep(60)
            print("not stopped")
        except KeyboardInterrupt:
            print("stopped", len(notes))
        print("restored", signal.getsignal(signal.SIGINT) == before)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=30 + LATE_S)
    assert done.stdout.split("\n")[:2] == ["stopped 1", "restored True"], done.stderr


def test_a_stray_sigint_stays_ignored_while_the_deadline_is_armed() -> None:
    """With SIGINT ignored at start, a SIGINT that is not the deadline's changes nothing."""
    import subprocess
    import sys
    import textwrap

    program = textwrap.dedent("""
        import os, signal, time
        from hookproof.deadline import run_deadline
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with run_deadline(30, []) as disarm:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
            disarm()
        print("still running")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=30 + LATE_S)
    assert done.stdout.strip() == "still running", done.stderr
