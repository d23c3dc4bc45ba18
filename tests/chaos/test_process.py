"""ReceiverProcess: its output log, which may hold secrets, does not outlive it."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from hookproof.chaos.errors import ProcessError
from hookproof.chaos.process import ReceiverProcess
from tests.support import free_port

SECRET = "whsec_process_log_secret_123"
#: Prints the secret, then listens on the port given (a receiver that logs too much).
TALKER = ("import socket, sys, time; print('secret', sys.argv[2], flush=True); s = socket.socket(); "
          "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1]))); "
          "s.listen(); time.sleep(60)")


def test_the_log_is_removed_when_the_receiver_is_done() -> None:
    port = free_port()
    proc = ReceiverProcess([sys.executable, "-c", TALKER, str(port), SECRET], port=port, startup_timeout_s=20,
                           masked=[SECRET])
    with proc:
        assert proc.log_path.is_file()
    assert not proc.running()
    assert not proc.log_path.exists()


def test_a_failed_start_shows_the_masked_tail_and_leaves_no_log() -> None:
    port = free_port()
    proc = ReceiverProcess([sys.executable, "-c", f"print('secret', {SECRET!r}, flush=True)"], port=port,
                           startup_timeout_s=5, masked=[SECRET])
    with pytest.raises(ProcessError) as info:
        proc.start()
    assert "secret ***" in (info.value.log_tail or "") and SECRET not in str(info.value.log_tail)
    path = proc.log_path
    del proc, info
    gc.collect()
    assert not path.exists()


def test_a_copy_that_fails_to_start_shows_its_own_output_not_the_running_ones() -> None:
    """Replicas share the run's log: a copy that dies at start (a receiver ignoring --port and
    binding the first copy's port) shows what it wrote, not the running copy's last lines."""
    from hookproof.chaos.process import ReceiverLog

    log = ReceiverLog(masked=[SECRET])
    port = free_port()
    first = ReceiverProcess([sys.executable, "-c", TALKER, str(port), SECRET], port=port, startup_timeout_s=20,
                            masked=[SECRET], log=log)
    dies = ("import sys; print('listen EADDRINUSE: address already in use', flush=True); "
            f"print('secret', {SECRET!r}, flush=True); sys.exit(1)")
    second = ReceiverProcess([sys.executable, "-c", dies], port=free_port(), startup_timeout_s=20, masked=[SECRET],
                             log=log)
    try:
        with first:
            with pytest.raises(ProcessError) as info:
                second.start()
    finally:
        second.close()
        log.close()
    tail = info.value.log_tail or ""
    assert tail.splitlines() == ["listen EADDRINUSE: address already in use", "secret ***"]
    assert info.value.returncode == 1


#: A Standard Webhooks secret (the spec's test vector) and a receiver's start-up debug line
#: printing the key bytes its verifier decodes it to, as hex, HEX, bytes repr and byte list.
STANDARD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
KEY_PRINTER = ("import base64, sys; raw = base64.b64decode(sys.argv[1].removeprefix('whsec_')); "
               "print('key', raw.hex(), raw.hex().upper(), raw, list(raw), flush=True)")


def test_a_failed_start_masks_the_decoded_key_bytes_in_the_error() -> None:
    """The exception a failed start raises quotes the receiver's output: every printed form
    of the decoded key is masked there, and in its message."""
    proc = ReceiverProcess([sys.executable, "-c", KEY_PRINTER, STANDARD], port=free_port(), startup_timeout_s=5,
                           masked=[STANDARD])
    with pytest.raises(ProcessError) as info:
        proc.start()
    tail = info.value.log_tail or ""
    assert "key *** *** b'***' [***]" in tail, tail
    assert "31f290f6bf06298a" not in f"{info.value} {tail}".lower()  # the key's first bytes, in hex
    proc.close()


@pytest.mark.parametrize("in_image", [False, True])
def test_a_program_that_is_not_installed_is_named_and_in_the_image_says_what_to_do(in_image: bool) -> None:
    """``command = "ruby receiver.rb"`` where Ruby is missing names ``ruby``, never a secret on
    the command line; run from hookproof's image (Python alone, `IMAGE_MARKER`) it says to start
    the receiver outside and leave the start tables out, and nowhere else (a venv on a machine
    that is itself a container has ``/.dockerenv`` too)."""
    proc = ReceiverProcess(["no-such-receiver-program-x1", "--secret", SECRET], port=free_port(), masked=[SECRET])
    with pytest.raises(ProcessError) as caught:
        proc.start()
    message = str(caught.value)
    assert message.startswith("cannot start the receiver: 'no-such-receiver-program-x1' is not installed where "
                              "hookproof runs (not on its PATH): no-such-receiver-program-x1 --secret ***")
    assert SECRET not in message and "container" not in message  # this machine has /.dockerenv, not the image
    import hookproof.chaos.process as process

    hint = process.not_installed("ruby", "ruby receiver.rb", in_image=in_image)
    assert ("leave [target.start] and [target.process] out of the config" in hint) is in_image
    assert ("container" in hint) is in_image


def test_a_relative_command_not_in_the_config_s_folder_says_where_it_was_looked_for(tmp_path: Path) -> None:
    """A new user's ``command = "./run-receiver.sh"`` from a venv on the host was told that
    hookproof runs in a container: now the folder it was looked for in, and no container."""
    proc = ReceiverProcess(["./run-receiver.sh", "--port", "9"], port=free_port(), cwd=str(tmp_path))
    with pytest.raises(ProcessError) as caught:
        proc.start()
    assert str(caught.value) == (f"cannot start the receiver: './run-receiver.sh' is not in {tmp_path} (relative "
                                 "commands are looked for in the config's folder, or the cwd its table sets): "
                                 "./run-receiver.sh --port 9")


def _state(pid: int) -> str:
    """The process's state letter (Linux's /proc), "" once it is reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("asked", [True, False])
def test_a_supervised_child_dies_with_its_parent_when_asked(asked: bool) -> None:
    """A parent killed with SIGKILL (no handler of its own runs) takes its child with it when the
    child was started with a `parent_death_signal`; without one, the child lives on."""
    import os
    import signal
    import subprocess
    import time

    root = Path(__file__).resolve().parents[2]
    script = ("import signal, sys, time\n"
              "from hookproof.chaos.process import Supervised\n"
              "p = Supervised([sys.executable, '-c', 'import time; time.sleep(60)'], "
              f"parent_death_signal={'signal.SIGTERM' if asked else 'None'})\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(root)})
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        parent.kill()
        parent.wait(10)
        deadline = time.monotonic() + (10 if asked else 2)  # the one that lives is watched a while
        while _state(child) not in ("", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (_state(child) in ("", "Z")) is asked
    finally:
        if _state(child) not in ("", "Z"):
            os.kill(child, signal.SIGKILL)
