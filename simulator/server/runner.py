"""Run the provider server: in a background thread for certify, explore and tests
(`run_server`), or in the foreground for ``hookproof serve`` (`serve`)."""

from __future__ import annotations

from hookproof.simulator.server.app import create_app
from hookproof.simulator.server.state import DEFAULT_API_KEY, ServerState
from hookproof.simulator.serving import ServerHandle, listen, serve_app, serve_forever
from hookproof.simulator.world import World


def run_server(state: ServerState, host: str = "127.0.0.1", port: int = 0, *, startup_timeout_s: float = 10.0,
               graceful_s: float = 2.0) -> ServerHandle:
    """Start the provider server for `state` on `host`:`port` (0: a free port) in a thread.

    Returns a started `ServerHandle`, usable as a context manager that stops it.
    Raises ListenError (an OSError) when the port cannot be had, SimulatorError when
    startup times out.
    """
    return serve_app(create_app(state), host, port, startup_timeout_s=startup_timeout_s, graceful_s=graceful_s,
                     state=state)


def serve(port: int, host: str, seed: int) -> None:
    """``hookproof serve``: build ``World(seed).lifecycle()`` and serve it on `host`:`port`
    until interrupted.

    The API accepts `DEFAULT_API_KEY`; the effect sink is at ``/sink/effects``. The
    socket is bound before anything is printed, so the printed address is the real one
    (port 0 picks a free port) and a port that cannot be had is a ListenError, not a
    success line followed by uvicorn's error.
    """
    sock = listen(host, port)
    port = sock.getsockname()[1]
    world = World(seed)
    events = world.lifecycle()
    state = ServerState([world])
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    print(f"hookproof provider API at {base}/v1 (key {DEFAULT_API_KEY}), effect sink at {base}/sink/effects "
          f"(sink base URL {base})")
    print(f"world seed {seed}: {len(world.objects())} objects, {len(events)} events, account {world.account}")
    serve_forever(create_app(state), sock)
