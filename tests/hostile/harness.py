"""Running `hookproof` in a subprocess with a hard bound, and measuring it.

`run_hookproof(*args)` starts ``python -m hookproof.cli ARGS`` from the repository root,
waits for it with ``os.wait4`` (so the child's own peak RSS is known, not the maximum over
every child of the test session), kills it if it outlives `timeout_s`, and returns what
it printed, its exit code, how long it took and its peak RSS.

`attempts_unbounded` says which of a run's recorded attempts were not bounded by what the
run was asked to do (the sender timeout, the scaled retry delays): the behaviour the
hostile tests check, read from the run's own timestamps rather than from the wall time of
a subprocess, most of which is interpreter start-up when the machine is loaded.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tests.support import LATE_S

#: The repository root (the subprocess's cwd and PYTHONPATH).
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CliRun:
    """One finished `hookproof` subprocess."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    max_rss_bytes: int
    killed: bool = False
    #: Wall-clock unix seconds when the process was reaped (the attempts' `sent_at` clock).
    ended_at: float = 0.0

    def __str__(self) -> str:  # shown by pytest on a failed assertion
        return (f"hookproof {' '.join(self.args)} -> exit {self.returncode} in {self.elapsed_s:.1f} s "
                f"(rss {self.max_rss_bytes >> 20} MiB, killed={self.killed})\n--- stdout\n{self.stdout[-3000:]}"
                f"\n--- stderr\n{self.stderr[-3000:]}")


#: Seconds between heartbeat lines in a subprocess unless a test sets ``HOOKPROOF_HEARTBEAT_S``:
#: once an hour, so a test reading a run's exact output reads the run's lines however long a
#: loaded machine takes (a line of its own every 5 s off a terminal is right for a user's run;
#: it was the first line of a one-line error on a machine at load 9). Tests of the heartbeat
#: set their own.
CHILD_HEARTBEAT_S = "3600"


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a hookproof subprocess: the repo importable, wide terminal, no colour,
    heartbeat lines only when `extra` asks for them (`CHILD_HEARTBEAT_S`)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb",
           "PYTHONUNBUFFERED": "1", "HOOKPROOF_HEARTBEAT_S": CHILD_HEARTBEAT_S}
    env.update(extra or {})
    return env


def run_hookproof(*args: str, timeout_s: float, env: Mapping[str, str] | None = None, cwd: Path | None = None,
                  during: Callable[[subprocess.Popen[bytes]], None] | None = None) -> CliRun:
    """Run ``python -m hookproof.cli ARGS``; kill it after `timeout_s` (then `killed` is True).

    `during`, when given, is called with the running process (e.g. to signal it) and
    must return quickly or within the timeout.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "hookproof.cli", *args], stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=child_env(env), cwd=str(cwd or ROOT))
        if during is not None:
            during(proc)
        killed = False
        status, usage = 0, None
        peak = 0
        while True:
            peak = max(peak, _high_water_bytes(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout_s:
                killed = True
                os.kill(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - started
        ended_at = time.time()
        out.seek(0)
        err.seek(0)
        return CliRun(tuple(args), proc.returncode, out.read().decode("utf-8", "replace"),
                      err.read().decode("utf-8", "replace"), elapsed, peak, killed, ended_at)



def on_a_terminal(args: list[str], cwd: Path, timeout_s: float = 120) -> tuple[int, str]:
    """Run ``hookproof ARGS`` under a pseudo-terminal; (exit code, everything it showed)."""
    import pty

    leader, follower = pty.openpty()
    env = {**child_env({"HOOKPROOF_HEARTBEAT_S": "0.1"}), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "hookproof", *args], stdin=follower, stdout=follower,
                            stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout_s)
    os.close(leader)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def attempts_unbounded(attempts: Sequence[Mapping[str, Any]], *, sender_timeout_s: float,
                       delays_s: Sequence[float], ended_at: float | None = None) -> list[str]:
    """What in `attempts` (JSON attempts: ``delivery_id``, ``attempt``, ``sent_at``,
    ``answered_at`` in unix seconds) was not bounded by the run's own limits, one line each;
    [] when everything was.

    Each attempt must end within `sender_timeout_s` + `LATE_S` of being sent; attempt k+1 of
    a delivery must start within ``delays_s[k-1]`` (the scaled retry delay before it) +
    `LATE_S` of attempt k's end; and, when `ended_at` (the process's exit, unix seconds) is
    given, the run must end within `LATE_S` of its last answer. `LATE_S` (10 s) is far short of
    what an ignored limit costs here: an attempt its sender timeout did not cut lives as long
    as the hostile server holds it (`servers.MAX_LIFETIME_S`, 120 s), and an unscaled retry
    delay waits the provider's real 60 s or more.
    """
    problems: list[str] = []
    for a in attempts:
        took = a["answered_at"] - a["sent_at"]
        if took > sender_timeout_s + LATE_S:
            problems.append(f"{a['delivery_id']} attempt {a['attempt']} took {took:.1f} s "
                            f"(sender timeout {sender_timeout_s:g} s + {LATE_S:g} s)")
    by_delivery: dict[str, list[Mapping[str, Any]]] = {}
    for a in attempts:
        by_delivery.setdefault(a["delivery_id"], []).append(a)
    for delivery, tries in by_delivery.items():
        tries = sorted(tries, key=lambda a: a["attempt"])
        for before, after in zip(tries, tries[1:]):
            delay = delays_s[before["attempt"] - 1] if before["attempt"] <= len(delays_s) else 0.0
            waited = after["sent_at"] - before["answered_at"]
            if waited > delay + LATE_S:
                problems.append(f"{delivery} attempt {after['attempt']} came {waited:.1f} s after the one before "
                                f"(retry delay {delay:.3g} s + {LATE_S:g} s)")
    if ended_at is not None and attempts:
        tail = ended_at - max(a["answered_at"] for a in attempts)
        if tail > LATE_S:
            problems.append(f"the run ended {tail:.1f} s after its last answer (+{LATE_S:g} s allowed)")
    return problems


def _high_water_bytes(pid: int) -> int:
    """The peak resident size of `pid`'s own memory since its exec (VmHWM), 0 once it is gone.

    Not wait4's ru_maxrss: Linux carries the forking process's resident size into the
    child's across exec, so a child of a large pytest process reads as large as pytest.
    """
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def empty_effects_db(path: Path) -> str:
    """A SQLite database with an empty ``effects`` table; returns its SQLAlchemy URL."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE IF NOT EXISTS effects (business_key TEXT NOT NULL, amount INTEGER)")
    return f"sqlite:///{path}"


def history_attempts(path: Path) -> int:
    """How many attempts a history file holds (read-only; 0 when it has no table yet)."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return 0
    try:
        return int(db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        db.close()
