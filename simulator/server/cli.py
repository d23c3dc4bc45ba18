"""``hookproof serve``: the provider server in the foreground, over a fresh world.

The main CLI wires its ``serve`` command to `serve`; this module has no CLI framework.
"""

from __future__ import annotations

import socket

import uvicorn

from hookproof.simulator.errors import SimulatorError
from hookproof.simulator.server.app import create_app
from hookproof.simulator.server.state import DEFAULT_API_KEY, ServerState
from hookproof.simulator.world import World


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on `host`:`port` (0: any free port).

    Raises SimulatorError ``cannot listen on HOST:PORT: reason`` (address in use, not an
    address of this machine, unknown host).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise SimulatorError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise SimulatorError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None
    return sock


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def serve(port: int, host: str, seed: int) -> None:
    """Build ``World(seed).lifecycle()`` and serve it on `host`:`port` until interrupted.

    The API accepts `DEFAULT_API_KEY`; the effect sink is at ``/sink/effects``. The
    socket is bound before anything is printed, so the printed address is the real one
    (port 0 picks a free port) and a port that cannot be had is a SimulatorError, not a
    success line followed by uvicorn's error.
    """
    sock = listen(host, port)
    port = sock.getsockname()[1]
    world = World(seed)
    events = world.lifecycle()
    state = ServerState([world])
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    print(f"hookproof provider API at {base}/v1 (key {DEFAULT_API_KEY}), effect sink at {base}/sink/effects (sink base URL {base})")
    print(f"world seed {seed}: {len(world.objects())} objects, {len(events)} events, account {world.account}")
    config = uvicorn.Config(create_app(state), log_level="info", http="h11", lifespan="off")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
