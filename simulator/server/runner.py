"""Run the provider server (or any ASGI app) in a background thread, for tests and scenarios.

``with run_server(state) as server: ...`` binds 127.0.0.1 on a free port (or the port
given), starts uvicorn's h11 server in a daemon thread, waits until it accepts
connections, and on exit asks it to stop (``should_exit``), joining with a timeout
(then ``force_exit``). The socket is bound before the thread starts, so the port is
known at once and never raced for. `serve_asgi` does the same for any ASGI app (a
small receiver, an observer endpoint in tests).
"""

from __future__ import annotations

from typing import Any

from hookproof.simulator.server.app import create_app
from hookproof.simulator.server.state import ServerState
from hookproof.simulator.serving import ServerHandle, serve_app


def serve_asgi(app: Any, host: str = "127.0.0.1", port: int = 0, *, startup_timeout_s: float = 10.0,
               graceful_s: float = 2.0, state: ServerState | None = None) -> ServerHandle:
    """Serve any app like the provider server (see `simulator.serving.serve_app`)."""
    return serve_app(app, host, port, startup_timeout_s=startup_timeout_s, graceful_s=graceful_s, state=state)


def run_server(state: ServerState, host: str = "127.0.0.1", port: int = 0, *, startup_timeout_s: float = 10.0,
               graceful_s: float = 2.0) -> ServerHandle:
    """Start the provider server for `state` on `host`:`port` (0: a free port).

    Returns a started `ServerHandle`, usable as a context manager that stops it.
    Raises OSError when the port cannot be bound, SimulatorError when startup times out.
    """
    return serve_asgi(create_app(state), host, port, startup_timeout_s=startup_timeout_s, graceful_s=graceful_s,
                      state=state)
