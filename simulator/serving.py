"""Serve an ASGI or WSGI app with uvicorn on 127.0.0.1 in a background thread.

Used for the provider API, the reference receivers in tests, and demos:
``with serve_app(app) as served: served.url``. Startup and shutdown are bounded.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import uvicorn

from simulator.delivery.transports import is_asgi
from simulator.errors import SimulatorError


@dataclass(frozen=True)
class ServedApp:
    """A running server: its base URL (no trailing slash), host and port."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_app(app: Any, *, host: str = "127.0.0.1", port: int = 0, startup_timeout_s: float = 10.0,
              shutdown_timeout_s: float = 10.0, limit_concurrency: int | None = None) -> Iterator[ServedApp]:
    """Run `app` (ASGI, or WSGI through uvicorn's WSGI adapter) until the block ends.

    Raises SimulatorError when the server does not accept connections within
    `startup_timeout_s` seconds.
    """
    port = port or free_port(host)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="auto",
        interface="asgi3" if is_asgi(app) else "wsgi", limit_concurrency=limit_concurrency,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise SimulatorError(f"server on {host}:{port} did not start within {startup_timeout_s:g} s")
        time.sleep(0.01)
    try:
        yield ServedApp(host, port)
    finally:
        server.should_exit = True
        thread.join(shutdown_timeout_s)
        if thread.is_alive():
            server.force_exit = True
            thread.join(2.0)
