"""``hookproof serve``: the provider server in the foreground, over a fresh world.

The main CLI wires its ``serve`` command to `serve`; this module has no CLI framework.
"""

from __future__ import annotations

import uvicorn

from simulator.server.app import create_app
from simulator.server.state import DEFAULT_API_KEY, ServerState
from simulator.world import World


def serve(port: int, host: str, seed: int) -> None:
    """Build ``World(seed).lifecycle()`` and serve it on `host`:`port` until interrupted.

    The API accepts `DEFAULT_API_KEY`; the effect sink is at ``/sink/effects``. Port 0
    picks a free port, and the printed address is the real one.
    """
    if port == 0:  # say the real address: pick the free port before printing it
        from simulator.serving import free_port

        port = free_port(host)
    world = World(seed)
    events = world.lifecycle()
    state = ServerState([world])
    base = f"http://{host}:{port}"
    print(f"hookproof provider API at {base}/v1 (key {DEFAULT_API_KEY}), effect sink at {base}/sink/effects (sink base URL {base})")
    print(f"world seed {seed}: {len(world.objects())} objects, {len(events)} events, account {world.account}")
    uvicorn.run(create_app(state), host=host, port=port, log_level="info", http="h11", lifespan="off")
