"""Small helpers shared by the project's tests: ``from tests.support import free_port``."""

from __future__ import annotations

import glob
import hashlib
import hmac
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn, Sequence, TypeVar

import pytest

__all__ = [
    "LATE_S",
    "PostgresServer",
    "answer_status",
    "find_postgres_bin",
    "free_port",
    "hmac_signed_request",
    "in_ci",
    "require_service",
    "run_interrupted",
    "run_side_by_side",
    "selected_params",
    "selected_tests",
]

T = TypeVar("T")


#: Seconds a test allows on top of a limit the code under test was given (a sender timeout, a
#: retry delay, a settle deadline, a cancellation) before it calls the limit ignored: how late a
#: timer may fire, or a step between two timed steps may run, on a loaded 2-core machine shared
#: with other runs. Generous on purpose (a bound, not a timing goal): a limit that is ignored
#: shows as the whole of what it should have cut short (a 60 s retry delay, a 120 s hostile
#: server, a 30 s gate), so each test using it waits out something far longer than this.
LATE_S = 10.0


def in_ci() -> bool:
    """True when running under CI (``CI=true``), where missing services are failures."""
    return os.environ.get("CI") == "true"


#: The local images' tags: chaos/images/build_base.sh's defaults, or the tags it was given
#: (HOOKPROOF_RECEIVERS_IMAGE, HOOKPROOF_IMAGE) on a docker daemon others share.
RECEIVERS_IMAGE = os.environ.get("HOOKPROOF_RECEIVERS_IMAGE") or "hookproof/receivers:latest"
TOOL_IMAGE = os.environ.get("HOOKPROOF_IMAGE") or "hookproof/hookproof:latest"


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


#: Test ports come from this band, below Linux's default ephemeral range (32768-60999), so no
#: outgoing connection and no ``bind(port 0)`` (a receiver's, a storm master's) is ever handed
#: one of them. Each pytest-xdist worker draws from a block of its own; a process outside
#: xdist draws from block 0.
PORT_BAND = (10000, 32000)
PORT_BLOCK = 2000
_port_next: dict[int, int] = {}
#: Threads of one process take turns: two at once would read the same next port (tests start
#: receivers from thread pools, e.g. the storm batches), check it free and both return it.
_port_lock = threading.Lock()


def _port_block() -> tuple[int, int]:
    """``(first, last)`` ports of this process's block (``PYTEST_XDIST_WORKER`` gw0 -> block 1, ...)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) + 1 if worker.startswith("gw") and worker[2:].isdigit() else 0
    blocks = (PORT_BAND[1] - PORT_BAND[0]) // PORT_BLOCK
    first = PORT_BAND[0] + (index % blocks) * PORT_BLOCK
    return first, first + PORT_BLOCK - 1


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


async def read_body(receive: Callable[[], Any]) -> bytes:
    """The whole body of an ASGI HTTP request, read from `receive` until no more comes (the
    test receivers' one reader)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def hmac_signed_request(scope: Mapping[str, Any], receive: Callable[[], Any], secret: str,
                              header: str = "x-signature") -> tuple[bytes, dict[str, str], bool]:
    """An ASGI HTTP request as a receiver signed like Lemon Squeezy reads it: its raw body, its
    headers (names lowercased) and whether `header` holds the lowercase hex HMAC-SHA256 of the
    raw body keyed by `secret`, compared in constant time (docs.lemonsqueezy.com "Signing
    requests"; hookproof's generic-hmac defaults)."""
    body = await read_body(receive)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return body, headers, hmac.compare_digest(headers.get(header, ""), expected)


async def answer_status(send: Callable[[Mapping[str, Any]], Any], status: int) -> None:
    """Answer an ASGI HTTP request `status`, its number as a plain-text body."""
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": str(status).encode()})


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on `host` that is free now and that no other test process will be handed.

    Ports come in turn from this process's block of `PORT_BAND` (one block per pytest-xdist
    worker, starting at an offset drawn from the pid, so a child process that calls this too
    starts elsewhere), each checked by binding it (without ``SO_REUSEADDR``, so a port with
    connections in TIME_WAIT is passed over). Nothing outside the tests binds in the band, so
    the port stays free until the caller's server binds it. Where the band overlaps the
    kernel's ephemeral range (a tuned machine), the kernel picks the port (``bind`` to port 0)
    as before. Raises OSError when every port of the block is taken.
    """
    first, last = _port_block()
    low, high = _ephemeral_range()
    if not (last < low or first > high):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            return int(sock.getsockname()[1])
    size = last - first + 1
    with _port_lock:
        start = _port_next.get(os.getpid(), (os.getpid() * 7919) % size)
        for step in range(size):
            port = first + (start + step) % size
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind((host, port))
                except OSError:
                    continue
            _port_next[os.getpid()] = (start + step + 1) % size
            return port
    raise OSError(f"no free TCP port on {host} in {first}-{last}")


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


def selected_params(request: pytest.FixtureRequest, argname: str) -> list[Any]:
    """The values of parameter `argname` among the tests this session runs (after ``-k``/``-m``
    deselection) that use the requesting fixture in the requesting module, in collection order,
    each once. A module fixture that does every case's slow part up front (`run_side_by_side`)
    uses it to do only the cases that will be looked at."""
    fixture, values = request.fixturename, []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is not request.module or callspec is None:
            continue
        if fixture in getattr(item, "fixturenames", ()) and argname in callspec.params:
            value = callspec.params[argname]
            if value not in values:
                values.append(value)
    return values


def selected_tests(request: pytest.FixtureRequest) -> list[str]:
    """Names (``item.name``) of the tests this session runs that use the requesting fixture in the
    requesting module, in collection order: what a module fixture running each test's slow part
    up front (`run_side_by_side`) has to run."""
    fixture = request.fixturename
    return [item.name for item in request.session.items
            if getattr(item, "module", None) is request.module and fixture in getattr(item, "fixturenames", ())]


def run_side_by_side(keys: Sequence[str], run: Callable[[str], T], *, workers: int) -> dict[str, Future[T]]:
    """``run(key)`` for every key, at most `workers` at a time; returns when all have ended.

    For runs that mostly wait (a certify run waits on its receiver process, its settle reads and
    its scaled retry delays), so several share two cores without changing what each observes.
    Each key's future holds its result or its exception: a test calls ``.result()``, so one
    run's failure fails its own test, not its neighbours'.
    """
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(keys)))) as pool:
        return {key: pool.submit(run, key) for key in keys}


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
