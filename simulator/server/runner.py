"""Run the provider server: in a background thread for certify, explore and tests
(`run_server`), or in the foreground for ``hookproof serve`` (`serve`)."""

from __future__ import annotations

import socket
import threading
from types import TracebackType

from hookproof.simulator.server.state import DEFAULT_API_KEY, ServerState
from hookproof.simulator.serving import ServerHandle, base_url, listen, serve_app, serve_forever
from hookproof.simulator.world import World


def run_server(state: ServerState, host: str = "127.0.0.1", port: int = 0, *, startup_timeout_s: float = 10.0,
               graceful_s: float = 2.0) -> ServerHandle:
    """Start the provider server for `state` on `host`:`port` (0: a free port) in a thread.

    Returns a started `ServerHandle`, usable as a context manager that stops it.
    Raises ListenError (an OSError) when the port cannot be had, SimulatorError when
    startup times out.
    """
    from hookproof.simulator.server.app import create_app

    return serve_app(create_app(state), host, port, startup_timeout_s=startup_timeout_s, graceful_s=graceful_s,
                     state=state)


def served_world(seed: int) -> World:
    """``World(seed)`` with its lifecycle told, its clock started so that the story ends now
    (`story_start_us`): the objects it holds are dated in the past and one the API creates
    next is dated now, as Stripe's ``created`` is (a world started now ran months ahead)."""
    from hookproof.simulator.world.registry import story_start_us

    world = World(seed, start_us=story_start_us(lambda start: World(seed, start_us=start), World.lifecycle))
    world.lifecycle()
    return world


def serve(port: int, host: str, seed: int) -> None:
    """``hookproof serve``: build ``World(seed).lifecycle()`` (`served_world`) and serve it on `host`:`port`
    until interrupted.

    The API accepts `DEFAULT_API_KEY`; the effect sink is at ``/sink/effects``. The
    socket is bound before anything is printed, so the printed address is the real one
    (port 0 picks a free port) and a port that cannot be had is a ListenError, not a
    success line followed by uvicorn's error.
    """
    sock = listen(host, port)
    port = sock.getsockname()[1]
    world = served_world(seed)
    events = world.events
    state = ServerState([world])
    base = base_url(host, port)
    print(f"hookproof provider API at {base}/v1 (key {DEFAULT_API_KEY}), effect sink at {base}/sink/effects "
          f"(sink base URL {base})")
    print(f"world seed {seed}: {len(world.objects())} objects, {len(events)} events, account {world.account}")
    from hookproof.simulator.server.app import create_app

    serve_forever(create_app(state), sock)


class StartingServer:
    """The provider server starting in a background thread while the caller starts other
    things (the receiver's process): the socket is bound at once, so the port and URLs are
    known and a port that cannot be had fails here (ListenError); importing and building
    the app (about 0.5-1 s, FastAPI's routes) and uvicorn's start run in the thread.

    `ready()` waits for the start and returns the `ServerHandle`, or raises what the start
    raised (SimulatorError when uvicorn did not start within `startup_timeout_s`). Until
    then the listening socket queues connections, so a receiver calling the API early waits
    instead of being refused. A context manager: leaving it waits for the start, then stops
    the server.
    """

    def __init__(self, state: ServerState, host: str = "127.0.0.1", port: int = 0, *,
                 startup_timeout_s: float = 10.0, graceful_s: float = 2.0) -> None:
        self.state = state
        self._sock: socket.socket = listen(host, port)
        self.host, self.port = self._sock.getsockname()[:2]
        self._handle: ServerHandle | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, args=(startup_timeout_s, graceful_s),
                                        name=f"hookproof-server-start-{self.port}", daemon=True)
        self._thread.start()

    def _start(self, startup_timeout_s: float, graceful_s: float) -> None:
        try:
            from hookproof.simulator.server.app import create_app

            handle = ServerHandle(create_app(self.state), self._sock, graceful_s=graceful_s, state=self.state)
            self._handle = handle.start(startup_timeout_s)
        except BaseException as exc:  # handed to ready(), in the caller's thread
            self._error = exc

    @property
    def url(self) -> str:
        """``http://host:port``: the base URL to give SDKs and the effect sink's (as
        `ServerHandle`'s `api_base` and `sink_url`)."""
        return base_url(self.host, self.port)

    api_base = sink_url = url

    def ready(self) -> ServerHandle:
        """Wait for the start; the started handle. Raises what the start raised."""
        self._thread.join()
        if self._error is not None:
            self._sock.close()
            raise self._error
        assert self._handle is not None
        return self._handle

    def stop(self) -> None:
        """Wait for the start to end, then stop the server (or close the unused socket)."""
        self._thread.join()
        if self._handle is not None:
            self._handle.stop()
        else:
            self._sock.close()

    def __enter__(self) -> StartingServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
