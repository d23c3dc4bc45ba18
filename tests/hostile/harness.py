"""Running `hookproof` in a subprocess with a hard bound, and measuring it.

`run_hookproof(*args)` starts ``python -m hookproof.cli ARGS`` from the repository root,
waits for it with ``os.wait4`` (so the child's own peak RSS is known, not the maximum over
every child of the test session), kills it if it outlives `timeout_s`, and returns what
it printed, its exit code, how long it took and its peak RSS.
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
from typing import Callable, Mapping

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

    def __str__(self) -> str:  # shown by pytest on a failed assertion
        return (f"hookproof {' '.join(self.args)} -> exit {self.returncode} in {self.elapsed_s:.1f} s "
                f"(rss {self.max_rss_bytes >> 20} MiB, killed={self.killed})\n--- stdout\n{self.stdout[-3000:]}"
                f"\n--- stderr\n{self.stderr[-3000:]}")


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a hookproof subprocess: the repo importable, wide terminal, no colour."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb",
           "PYTHONUNBUFFERED": "1"}
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
        out.seek(0)
        err.seek(0)
        return CliRun(tuple(args), proc.returncode, out.read().decode("utf-8", "replace"),
                      err.read().decode("utf-8", "replace"), elapsed, peak, killed)


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
