"""Minimal stand-ins for simulator.server's provider API and effect sink, and server threads.

Used until the real `simulator.server` lands: the provider API serves a `World`'s
current objects and events in Stripe's shapes; the sink records effects per
Idempotency-Key (replays the stored answer, 409 while a key is in flight) and can drop
the connection after applying, like the real one.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator
from contextlib import contextmanager

from simulator.errors import WorldError
from simulator.profiles.stripe import StripeProfile
from simulator.world.world import RESOURCES, World
from tests.support import free_port


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 in a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def provider_api_handler(world: World, api_key: str) -> type[BaseHTTPRequestHandler]:
    """``GET /v1/{resource}/{id}`` from `world` (Bearer `api_key`), ``/v1/events/{id}`` as Stripe Events."""
    profile = StripeProfile()

    class ProviderAPI(_Quiet):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {api_key}":
                return self._json(401, {"error": {"message": "Invalid API Key provided"}})
            resource, _, object_id = self.path.removeprefix("/v1/").rpartition("/")
            try:
                if resource == "events":
                    return self._json(200, profile.event_object(world.event(object_id)))
                if RESOURCES.get(resource) == world.object_type(object_id):
                    return self._json(200, world.get(object_id))
            except WorldError:
                pass
            return self._json(404, {"error": {"message": f"No such object: {object_id}"}})

    return ProviderAPI


class SinkState:
    """What the stand-in sink recorded: applied effects, and how many answers to drop."""

    def __init__(self, drop_after_apply: int = 0, apply_delay_s: float = 0.0) -> None:
        self.effects: list[dict[str, Any]] = []
        self.calls = 0
        self.drops_left = drop_after_apply
        self.apply_delay_s = apply_delay_s
        self.lock = threading.Lock()
        self.in_flight: set[str] = set()
        self.done: dict[str, Any] = {}

    def keys(self) -> list[str]:
        return sorted(e["business_key"] for e in self.effects)


def sink_handler(state: SinkState) -> type[BaseHTTPRequestHandler]:
    """``POST /sink/effects`` recording into `state`."""

    class Sink(_Quiet):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            key = self.headers.get("Idempotency-Key")
            if not key:
                return self._json(400, {"error": "Idempotency-Key required"})
            with state.lock:
                state.calls += 1
                if key in state.done:
                    return self._json(200, state.done[key])
                if key in state.in_flight:
                    return self._json(409, {"error": "a request with this key is in flight"})
                state.in_flight.add(key)
            time.sleep(state.apply_delay_s)
            with state.lock:
                state.effects.append(body)
                state.done[key] = {"applied": body}
                state.in_flight.discard(key)
                drop = state.drops_left > 0
                state.drops_left -= drop
            if drop:  # applied, then the connection goes away before the answer
                self.close_connection = True
                return None
            return self._json(200, state.done[key])

    return Sink


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app (uvicorn) or a WSGI app (threaded werkzeug) on 127.0.0.1 in a thread."""
    if hasattr(app, "wsgi_app"):
        from werkzeug.serving import make_server

        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            server.server_close()
        return
    import uvicorn

    port = free_port()
    server_ = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server_.run, daemon=True)
    thread.start()
    wait_until(lambda: server_.started, what="uvicorn to start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server_.should_exit = True
        thread.join(timeout=10)


def wait_until(predicate: Callable[[], Any], *, timeout_s: float = 10.0, what: str = "condition") -> Any:
    """Poll `predicate` until truthy; raises AssertionError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)
