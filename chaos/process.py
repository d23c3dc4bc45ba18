"""Run a receiver command as a process: start, wait healthy, kill, pause, resume, restart.

Every operation is bounded in time. `ReceiverProcess` is a context manager whose exit
always heals (resumes a paused process) and stops it (SIGTERM, then SIGKILL), even when
the block raised. The process runs in its own process group so its children go too.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import IO, Callable, Mapping, Sequence
from urllib.parse import urlsplit

import httpx

from hookproof.chaos.errors import ProcessError
from hookproof.simulator.secret_forms import Masker
from hookproof.simulator.secret_forms import mask_secrets as mask_secrets  # re-exported
from hookproof.simulator.secret_forms import secret_forms as secret_forms  # re-exported

#: How much of the receiver's log a run keeps (the newest bytes), and how many lines a finding quotes.
KEEP_BYTES = 1 << 20
TAIL_LINES = 40


class ReceiverLog:
    """The output of every receiver process of one run, in one private temporary file.

    Processes write to it in append mode (a restarted or replicated receiver adds to it);
    `mark` gives the current end (a byte offset), `tail` the last lines between two marks,
    `keep` the newest `KEEP_BYTES` into a file of the report folder. Everything read out is
    masked (every form of each secret, `simulator.secret_forms`); the temporary file goes on `close` (also at exit).
    """

    def __init__(self, masked: Sequence[str] = ()) -> None:
        self._mask = Masker(masked)
        handle = tempfile.NamedTemporaryFile(prefix="hookproof-receiver-", suffix=".log", delete=False)
        handle.close()
        self.path = Path(handle.name)
        self._remove = weakref.finalize(self, self.path.unlink, missing_ok=True)

    def open(self) -> IO[bytes]:
        """A handle a process writes to (append mode: writes land at the end)."""
        return open(self.path, "ab", buffering=0)

    def mark(self) -> int:
        """The log's current size in bytes (0 once it is gone)."""
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def _read(self, start: int, end: int | None) -> str:
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                data = f.read(-1 if end is None else max(0, end - start))
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")

    def tail(self, start: int = 0, end: int | None = None, lines: int = TAIL_LINES) -> str:
        """The last `lines` lines written between byte offsets `start` and `end`, masked."""
        if end is None or end - start > KEEP_BYTES:
            start = max(start, (end if end is not None else self.mark()) - KEEP_BYTES)
        text = self._read(start, end)
        return self._mask("\n".join(text.splitlines()[-lines:]))

    def keep(self, dest: Path) -> bool:
        """Write the newest `KEEP_BYTES` of the log, masked, to `dest` (with a first line saying
        what was cut); False when the receiver wrote nothing (then no file is made)."""
        size = self.mark()
        if size == 0:
            return False
        start = max(0, size - KEEP_BYTES)
        text = self._read(start, size)
        if start:
            text = text.split("\n", 1)[1] if "\n" in text else text  # start at a whole line
            text = f"[hookproof: the first {start} byte(s) of the receiver's output are not kept]\n" + text
        dest.write_text(self._mask(text), encoding="utf-8")
        return True

    def close(self) -> None:
        """Delete the temporary file. Safe to call twice."""
        self._remove()


def wait_healthy(*, health_url: str | None = None, port: int | None = None, host: str = "127.0.0.1",
                 timeout_s: float = 20.0, alive: Callable[[], bool] | None = None) -> None:
    """Wait until `health_url` answers 2xx (or `port` accepts). Raises TimeoutError.

    `alive` is asked on every poll; when it says False the wait ends with ProcessError.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise ProcessError("the receiver exited before it became healthy")
        try:
            if health_url:
                if httpx.get(health_url, timeout=1.0).status_code < 300:
                    return
            elif port:
                socket.create_connection((host, port), timeout=0.5).close()
                return
            else:
                return
        except (httpx.HTTPError, OSError):
            pass
        time.sleep(0.05)
    raise TimeoutError(f"not healthy within {timeout_s:g} s ({health_url or f'{host}:{port}'})")


def _accepts(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts a connection on `host`:`port` now."""
    try:
        socket.create_connection((host, port), timeout=0.5).close()
    except OSError:
        return False
    return True


#: The file hookproof's own container image holds (the top-level Dockerfile writes it). Not
#: ``/.dockerenv``: a venv on a machine that is itself a container (a dev container, a CI
#: runner) has that file too, and there the program may well be installed beside hookproof.
IMAGE_MARKER = Path("/opt/hookproof/image")


def not_installed(program: str, command: str, *, cwd: str | None = None, in_image: bool | None = None) -> str:
    """The message of a receiver command whose program `program` is not found: where it was
    looked for (a relative path: in `cwd`, the config's folder or its table's ``cwd``; a bare
    name: on the PATH), and, run from hookproof's image (`in_image`; default: `IMAGE_MARKER`
    exists), that the image holds Python and hookproof alone, so a receiver in another language
    is started outside it, with no ``[target.start]``/``[target.process]``."""
    if os.sep in program:
        folder = os.path.abspath(cwd or os.getcwd())
        where = (f"{program!r} is not in {folder} (relative commands are looked for in the config's folder, or "
                 "the cwd its table sets)" if not os.path.isabs(program) else f"{program!r} does not exist")
    else:
        where = f"{program!r} is not installed where hookproof runs (not on its PATH)"
    message = f"cannot start the receiver: {where}: {command}"
    if in_image if in_image is not None else IMAGE_MARKER.exists():
        message += ("; hookproof runs in its container image, which holds Python and hookproof alone: start the "
                    "receiver on the host (or in its own container) before certify, and leave [target.start] "
                    "and [target.process] out of the config")
    return message


#: prctl's option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def _die_with(parent: int, sig: int) -> Callable[[], None]:
    """What a child runs before its command (`subprocess.Popen`'s ``preexec_fn``): ask the kernel
    for `sig` when its parent dies; if `parent` is already gone (the child was handed to
    init), send it to itself now."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)
    return arm


class Supervised:
    """One child process in a session of its own, so signals reach its whole group.

    The one process supervisor of hookproof: receivers under chaos (`ReceiverProcess`) and
    the storm's Locust master and workers run through it. `stop` is SIGTERM, a bounded
    wait, then SIGKILL and a bounded reap; every method is safe on a process that is gone.
    `parent_death_signal`: on Linux, the signal the child gets when this process dies, however
    it dies (SIGKILL included: ``prctl(PR_SET_PDEATHSIG)``; a child whose parent died before
    the call sends it to itself); elsewhere nothing. Raises OSError from `subprocess.Popen`
    when the command cannot be started.
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 output: IO[bytes] | None = None, parent_death_signal: int | None = None) -> None:
        preexec = (_die_with(os.getpid(), parent_death_signal)
                   if parent_death_signal is not None and sys.platform.startswith("linux") else None)
        self.popen: subprocess.Popen[bytes] = subprocess.Popen(
            list(argv), env=dict(env) if env is not None else None, cwd=cwd, stdout=output,
            stderr=subprocess.STDOUT if output is not None else None, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=preexec)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        return self.popen.poll()

    def running(self) -> bool:
        return self.popen.poll() is None

    def wait(self, timeout_s: float | None = None) -> int:
        """Wait for the exit (raises subprocess.TimeoutExpired after `timeout_s`)."""
        return self.popen.wait(timeout_s)

    def signal(self, sig: int) -> None:
        """Send `sig` to the whole process group (nothing if it is gone)."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def send_signal(self, sig: int) -> None:
        """Send `sig` to the process itself (nothing if it is gone)."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(sig)

    def kill(self, reap_s: float = 5.0) -> None:
        """SIGKILL the group and reap it (bounded)."""
        self.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(reap_s)

    def stop(self, timeout_s: float = 5.0, *, group: bool = True) -> None:
        """SIGTERM (to the group, or the process alone), wait `timeout_s`, then SIGKILL the group."""
        if self.popen.poll() is not None:
            return
        if group:
            self.signal(signal.SIGTERM)
        else:
            self.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()


class ReceiverProcess:
    """A receiver command under hookproof's control.

    Args:
        command: the command line (a string is split with shlex) or an argv list.
        env: extra environment variables (added to the current environment).
        cwd: working directory.
        health_url / port: how to know it is ready (a URL answering 2xx, or a port).
        startup_timeout_s: seconds to wait for health after each start.
        masked: strings to mask in messages and logs (secrets in the command line).
        log: the run's `ReceiverLog` to write the output to (it outlives this process and
            is kept in the report folder); default: a private file deleted with this object.
    """

    def __init__(self, command: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 health_url: str | None = None, port: int | None = None, startup_timeout_s: float = 20.0,
                 masked: Sequence[str] = (), log: ReceiverLog | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.env = {**os.environ, **(env or {})}
        self.cwd = cwd
        self.health_url = health_url
        self.port = port or (urlsplit(health_url).port if health_url else None)
        self.startup_timeout_s = startup_timeout_s
        self._masker = Masker(masked)
        self._child: Supervised | None = None
        # The receiver's output, read back (masked) for error messages. It may hold
        # secrets the receiver prints, so it goes when this object does: on `close`, on
        # leaving the `with` block, when collected, or when the interpreter exits.
        self._remove_log: Callable[[], object]
        self._shared = log
        if log is not None:  # the run's log: this process appends, the run keeps or deletes it
            self._log: IO[bytes] = log.open()
            self.log_path = log.path
            self._remove_log = weakref.finalize(self, self._log.close)
        else:
            self._log = tempfile.NamedTemporaryFile(prefix="hookproof-receiver-", suffix=".log", delete=False)
            self.log_path = Path(self._log.name)
            self._remove_log = weakref.finalize(self, _remove_log, self._log, self.log_path)
        self.paused = False

    def describe(self) -> str:
        """The command line with secrets masked."""
        return self._mask(shlex.join(self.argv))

    def _mask(self, text: str) -> str:
        """`text` with every masked string hidden in every form a program prints it in
        (`simulator.secret_forms`)."""
        return self._masker(text)

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return self._mask("\n".join(text.splitlines()[-lines:]))

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child else None

    def running(self) -> bool:
        return self._child is not None and self._child.running()

    def exit_code(self) -> int | None:
        """The code the started process exited with; None while it runs or before it started."""
        return self._child.poll() if self._child is not None else None

    def start(self) -> None:
        """Start and wait healthy. Raises ProcessError with the log tail on failure: with the
        run's shared log, only what was written since this start (not another copy's output)."""
        mark = self._shared.mark() if self._shared is not None else 0
        if self._child is None and self.port and _accepts(self.port):
            raise ProcessError(f"port {self.port} already has a listener before the receiver started (another run's "
                               "receiver, or one left running): its answers would be certified in this receiver's "
                               f"place; stop it or give this receiver another port: {self.describe()}",
                               command=self.describe())
        try:
            self._child = Supervised(self.argv, env=self.env, cwd=self.cwd, output=self._log)
        except FileNotFoundError:
            raise ProcessError(not_installed(self.argv[0], self.describe(), cwd=self.cwd),
                               command=self.describe()) from None
        except OSError as exc:
            raise ProcessError(f"cannot start the receiver ({exc.strerror}): {self.describe()}",
                               command=self.describe()) from None
        self.paused = False
        try:
            wait_healthy(health_url=self.health_url, port=self.port, timeout_s=self.startup_timeout_s, alive=self.running)
        except (TimeoutError, ProcessError) as exc:
            code = self._child.poll()
            self.stop()
            tail = self._mask(self._shared.tail(mark)) if self._shared is not None else self.log_tail()
            raise ProcessError(f"the receiver did not become healthy: {exc}: {self.describe()}", command=self.describe(),
                               returncode=code, log_tail=tail) from None

    def _signal(self, sig: int) -> None:
        if self._child is not None:
            self._child.signal(sig)

    def kill(self) -> None:
        """SIGKILL the process group and reap it (bounded)."""
        if self._child is not None:
            self._child.kill()
        self.paused = False

    def pause(self) -> None:
        """SIGSTOP the process group."""
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT the process group."""
        self._signal(signal.SIGCONT)
        self.paused = False

    def restart(self) -> None:
        """Kill, then start again and wait healthy."""
        self.kill()
        self.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Heal (resume), SIGTERM, wait, then SIGKILL. Safe to call twice."""
        if self._child is None:
            return
        if self.paused:
            self.resume()
        self._child.stop(timeout_s)
        self.paused = False

    def __enter__(self) -> "ReceiverProcess":
        self.start()
        return self

    def close(self) -> None:
        """Stop the receiver and delete its log. Safe to call twice."""
        self.stop()
        self._remove_log()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_log(log: IO[bytes], path: Path) -> None:
    log.close()
    path.unlink(missing_ok=True)
