"""Small helpers shared by the project's tests: ``from tests.support import free_port``."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Mapping, NoReturn, Sequence

import pytest

__all__ = [
    "PostgresServer",
    "find_postgres_bin",
    "free_port",
    "in_ci",
    "require_service",
    "run_interrupted",
]


def in_ci() -> bool:
    """True when running under CI (``CI=true``), where missing services are failures."""
    return os.environ.get("CI") == "true"


def require_service(name: str, reason: str) -> NoReturn:
    """Give up on a test whose service is missing: fail under CI, skip elsewhere.

    Call it from a fixture when a server, binary or daemon the test needs is absent.
    CI installs and starts every service, so there a missing one is a broken pipeline,
    never a silently skipped test.
    """
    message = f"{name} is not available: {reason}"
    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing service fails the run)", pytrace=False)
    pytest.skip(message)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the OS picks it; reuse it quickly)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def run_interrupted(args: Sequence[str], signum: int, *, cwd: str | Path, env: Mapping[str, str],
                    under_way: Callable[[subprocess.Popen[str]], None],
                    timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Start `args`, wait with `under_way(proc)` until the run is in progress, send it
    `signum`, and return how it ended (text output). A process still running `timeout_s`
    seconds after the signal, or when `under_way` fails, is killed."""
    proc = subprocess.Popen(list(args), cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        under_way(proc)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


# --- a throwaway PostgreSQL server ------------------------------------------------

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"  # Debian's layout; PATH is searched as well


def find_postgres_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest Debian version first)."""
    candidates = sorted(
        (Path(p) for p in glob.glob(PG_BIN_GLOB)),
        key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")],
        reverse=True,
    )
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


class PostgresServer:
    """initdb + pg_ctl into a temp dir, on 127.0.0.1 with trust auth.

    PostgreSQL refuses to run as root, so as root every server command runs as the
    ``postgres`` OS user (``runuser -u postgres --``).
    """

    def __init__(self, bindir: Path, dbname: str = "hookproof", user: str = "postgres") -> None:
        self.bindir = bindir
        self.dbname = dbname
        self.user = user
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="hookproof-pg-"))
        self.data = self.root / "data"
        self.logfile = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                raise RuntimeError("running as root needs runuser(1) to start PostgreSQL as 'postgres'")
            pw = pwd.getpwnam("postgres")  # KeyError when the OS user is missing
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = [runuser, "-u", "postgres", "--"]

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{self.dbname}"

    def _run(self, tool: str, *args: str, timeout_s: float = 60) -> None:
        exe = self.bindir / tool
        cmd = [*self._as, str(exe if exe.is_file() else shutil.which(tool) or exe), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            log = self.logfile.read_text(errors="replace")[-2000:] if self.logfile.exists() else ""
            raise RuntimeError(
                f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}{proc.stderr}\n{log}"
            )

    def start(self, attempts: int = 3) -> str:
        self._run("initdb", "-D", str(self.data), "-U", self.user, "-A", "trust",
                  "-E", "UTF8", "--no-locale", "--no-sync")
        for attempt in range(attempts):
            self.port = free_port()
            options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=200"
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.logfile),
                          "-o", options, "-w", "-t", "60", "start", timeout_s=90)
                break
            except RuntimeError:  # the port was taken between free_port() and bind
                if attempt == attempts - 1:
                    raise
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, self.dbname)
        return self.url

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
