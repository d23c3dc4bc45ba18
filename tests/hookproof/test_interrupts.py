"""SIGTERM and Ctrl-C reach every command the same way: KeyboardInterrupt, exit 128 + signum."""

from __future__ import annotations

import os
import signal

import pytest

from hookproof.interrupts import Interrupts


def test_sigterm_becomes_keyboard_interrupt_and_names_its_exit_code() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with Interrupts() as caught:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
    assert caught.signalled and caught.received == [signal.SIGTERM]
    assert caught.exit_code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before


def test_without_a_signal_the_exit_code_is_ctrl_cs() -> None:
    caught = Interrupts.install()
    try:
        assert not caught.signalled and caught.exit_code == 130
    finally:
        caught.restore()
