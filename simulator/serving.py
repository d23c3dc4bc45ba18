"""Serve an ASGI or WSGI app with uvicorn: the one place hookproof listens.

``listen(host, port)`` binds a socket (one clear error when it cannot), so a port is
known before anything is printed and never raced for. ``with serve_app(app) as server:
server.url`` listens, starts uvicorn's h11 server in a daemon thread, waits until it
accepts connections, and on exit asks it to stop (``should_exit``), joining with a
timeout (then ``force_exit``); ``serve_forever(app, sock)`` serves in the foreground.
Used for the provider API (`simulator.server.runner`), reference receivers, and demos.
"""

from __future__ import annotations

import fcntl
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import uvicorn

from hookproof.simulator.delivery.transports import is_asgi
from hookproof.simulator.errors import SimulatorError


class ListenError(SimulatorError, OSError):
    """A socket that cannot listen: ``cannot listen on HOST:PORT: reason`` (also an OSError)."""


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on `host`:`port` (0: any free port), inheritable by children.

    Raises ListenError ``cannot listen on HOST:PORT: reason`` (address in use, not an
    address of this machine, unknown host).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None
    sock.set_inheritable(True)
    return sock


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` right now (for commands that take a port number)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


#: The ports this process claimed (`_claim`), held until it ends.
_CLAIMED: dict[int, IO[bytes]] = {}
_CLAIMING = threading.Lock()


def _claim(port: int) -> bool:
    """True when this process holds `port` among hookproof processes on this machine (an
    exclusive ``flock`` on a file in the temp folder, taken once and held until the process
    ends), False when another process holds it. Two runs given overlapping ranges took the
    same free port: the second run's receiver failed to bind, and the first run's receiver
    answered the second run's checks. Within a process, `PortRange`'s own bookkeeping and
    the bind test keep ports apart, as before."""
    with _CLAIMING:
        if port in _CLAIMED:
            return True
        folder = Path(tempfile.gettempdir()) / "hookproof-ports"
        try:
            folder.mkdir(exist_ok=True)
            handle = open(folder / f"{port}.lock", "ab")
        except OSError:
            return True  # no shared folder to claim in: the bind test alone, as before
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        _CLAIMED[port] = handle
        return True


class PortRange:
    """Ports a run may take on 127.0.0.1, first to last inclusive (a shared machine's or a
    CI runner's assigned range: ``[chaos] ports``). `take` hands out each free port once
    (free: it binds now, and no other hookproof process on the machine holds it,
    `_claim`), never one in `exclude` (the receiver's own, not started yet). Thread-safe:
    replicas start concurrently. Raises ListenError naming the range when every port in it
    is taken or bound."""

    def __init__(self, first: int, last: int, *, exclude: "set[int] | frozenset[int]" = frozenset(),
                 what: str = "[chaos] ports") -> None:
        if not 0 < first <= last <= 65535:
            raise ValueError(f"a port range is 1-65535, first <= last: got {first}-{last}")
        self.first, self.last, self.what = first, last, what
        self._given = set(exclude)
        self._lock = threading.Lock()

    def take(self) -> int:
        """A port of the range free now and not handed out before."""
        with self._lock:
            for port in range(self.first, self.last + 1):
                if port in self._given:
                    continue
                try:
                    with socket.socket() as s:
                        s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                if not _claim(port):
                    continue  # another hookproof run's
                self._given.add(port)
                return port
        raise ListenError(f"no free port left in {self.first}-{self.last} ({self.what}): widen the range or free "
                          f"some of its ports")


def base_url(host: str, port: int) -> str:
    """``http://host:port`` (an IPv6 host in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class ServerHandle:
    """A running server.

    Attributes:
        app: the ASGI app it serves.
        state: the provider state it serves (`simulator.server.ServerState`; None for
            other apps); change switches, worlds and the sink through it.
        host, port: where it listens.
        url: ``http://host:port``.
        api_base: the base URL to give SDKs (``stripe`` ``base_addresses={"api": ...}``,
            Mercado Pago); the same as `url`, paths start with ``/v1``.
        sink_url: the effect sink's base URL (what receivers get as ``HOOKPROOF_SINK_URL``;
            they POST to ``{sink_url}/sink/effects``); the same as `url`.
        effects_url: the effect endpoint itself, ``{url}/sink/effects`` (POST, GET, DELETE).
    """

    def __init__(self, app: Any, sock: socket.socket, *, graceful_s: float, state: Any = None) -> None:
        self.app = app
        self.state = state
        self._sock = sock
        self.host, self.port = sock.getsockname()[:2]
        config = uvicorn.Config(
            app, interface="asgi3" if is_asgi(app) else "wsgi", log_level="warning", access_log=False,
            http="h11", loop="asyncio",
            lifespan="off", proxy_headers=False, server_header=False, timeout_graceful_shutdown=max(1, round(graceful_s)),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"hookproof-server-{self.port}", daemon=True)

    @property
    def url(self) -> str:
        return base_url(self.host, self.port)

    @property
    def api_base(self) -> str:
        return self.url

    @property
    def sink_url(self) -> str:
        return self.url

    @property
    def effects_url(self) -> str:
        return f"{self.url}/sink/effects"

    def start(self, timeout_s: float = 10.0) -> ServerHandle:
        """Start serving and wait until a TCP connect succeeds. Raises SimulatorError on timeout."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self._thread.is_alive():
                raise SimulatorError(f"the server on port {self.port} exited during startup")
            if self._server.started:
                try:
                    with socket.create_connection((self.host, self.port), timeout=1.0):
                        return self
                except OSError:
                    pass
            time.sleep(0.01)
        self.stop()
        raise SimulatorError(f"the server on port {self.port} did not start within {timeout_s} s")

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask uvicorn to exit and join its thread (forcing after `timeout_s`)."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout_s)
        try:
            self._sock.close()
        except OSError:
            pass

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def serve_app(app: Any, host: str = "127.0.0.1", port: int = 0, *, startup_timeout_s: float = 10.0,
              graceful_s: float = 2.0, state: Any = None) -> ServerHandle:
    """Start uvicorn for `app` (ASGI, or WSGI through uvicorn's adapter) on `host`:`port`
    (0: a free port) in a thread; returns the started handle, a context manager that
    stops it. Raises ListenError (an OSError) when the port cannot be had, SimulatorError
    when startup times out.
    """
    return ServerHandle(app, listen(host, port), graceful_s=graceful_s, state=state).start(startup_timeout_s)


def serve_forever(app: Any, sock: socket.socket) -> None:
    """Serve `app` on the listening `sock` in the foreground (uvicorn's own logging) until
    interrupted; closes the socket after."""
    config = uvicorn.Config(app, log_level="info", http="h11", lifespan="off")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
