"""Kept-alive connections: a receiver that closes its idle connections is not charged for it.

After a receiver answers (a 500, say) and then closes the kept-alive connection, the
next attempt may meet that connection in the pool. Nothing of it reached a handler, so
it must not be recorded as "the receiver reset the connection before answering": the
attempt is sent once more on a fresh connection. A connection whose answer said
``Connection: close`` is never reused. And a receiver that really resets a request it
read on a fresh connection is still recorded as such, never silently resent.

Real servers on 127.0.0.1: a raw asyncio server that closes the kept-alive connection the
moment the next request arrives (the race, made deterministic), Python's threaded
``http.server`` closing after each 500 with and without saying so, and uvicorn with a
tiny ``timeout_keep_alive``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from hookproof.simulator.delivery import Completion, Dispatcher, History, Outcome, Target
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, events_of_type
from tests.hostile.harness import ROOT, child_env
from tests.hostile.servers import Connection, HostileServer
from tests.support import read_body

pytestmark = pytest.mark.timeout(60)

STRIPE = get_profile("stripe")
SECRET = "whsec_keepalive_secret"
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
BOOM = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom"
#: What a delivery answered 500 once, then 200 records: its attempts, exactly.
FIVE_HUNDRED_THEN_OK = [(500, Outcome.SERVER_ERROR, Completion.UNKNOWN, None), (200, Outcome.ACKED, Completion.OK, None)]


def deliver(url: str, events: int = 1, *, time_scale: float = 1e-5, max_attempts: int = 3) -> History:
    """Deliver `events` events one after another, with retries, over one dispatcher."""
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(url=url), STRIPE, [SECRET], history, time_scale=time_scale,
                              max_attempts=max_attempts, sender_timeout_s=5.0) as d:
            await d.run(schedule(events_of_type(World(5), "payment_intent.succeeded", events), FaultPlan()))

    asyncio.run(go())
    return history


def records(history: History) -> list[tuple[int | None, Outcome, Completion, str | None]]:
    return [(a.status, a.outcome, a.completion, a.error) for a in history.attempts()]


# ---- the race, made deterministic -----------------------------------------------------------

class _ClosingOnNext(HostileServer):
    """Answers the first request of a connection 500 and keeps the connection alive; when
    the next request arrives on it, closes it without reading it (the receiver's
    keep-alive timer firing as the request was in flight). A connection's first request
    after that is answered 200."""

    def handler(self) -> Any:
        async def handle(c: Connection) -> None:
            if not await c.read_request():
                return
            first = self.requests == 1
            if not await c.write(BOOM if first else OK):
                return
            if first:
                await c.reader.read(1)  # the next request's first byte: the rest is never read
                c.reset()  # unread data: the kernel resets, as a closed idle socket does
                return
            while await c.read_request():
                if not await c.write(OK):
                    return
        return handle


def test_a_connection_closed_as_the_next_request_arrives_is_not_charged_to_the_receiver() -> None:
    server = _ClosingOnNext("closing-on-next").start()
    try:
        history = deliver(server.url)
    finally:
        server.close()
    assert records(history) == FIVE_HUNDRED_THEN_OK
    assert (server.connections, server.requests) == (2, 2)  # the resend went on a fresh connection


def test_the_storm_does_not_charge_it_either() -> None:
    """The storm's geventhttpclient path (in a subprocess: gevent), two attempts on one client."""
    server = _ClosingOnNext("closing-on-next").start()
    try:
        run = subprocess.run([sys.executable, "-m", "tests.hostile.storm_exchange", "--attempts", "2", "5", "65536",
                              server.url], capture_output=True, text=True, timeout=60, cwd=ROOT, env=child_env())
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [{"completion": "unknown", "reason": None, "status": 500},
                                      {"completion": "ok", "reason": None, "status": 200}]
    assert (server.connections, server.requests) == (2, 2)


class _ResetEveryRequest(HostileServer):
    """Reads each request whole, then resets the connection: a receiver that fails."""

    def handler(self) -> Any:
        async def handle(c: Connection) -> None:
            if await c.read_request():
                c.reset()
        return handle


def test_a_reset_on_a_fresh_connection_is_charged_and_never_silently_resent() -> None:
    server = _ResetEveryRequest("reset-every-request").start()
    try:
        history = deliver(server.url, max_attempts=2)
    finally:
        server.close()
    reset = (None, Outcome.CONNECTION_ERROR, Completion.UNKNOWN, "the receiver reset the connection before answering")
    assert records(history) == [reset, reset]
    assert server.requests == 2


# ---- http.server closing after each 500 ------------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers an event's first delivery 500 and closes the connection after it (saying
    so or not, as the server's `say_close` tells); every later one 200, kept alive."""

    protocol_version = "HTTP/1.1"
    server: "_ThreadedServer"

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        event_id = json.loads(body)["id"]
        with self.server.lock:
            self.server.seen[event_id] += 1
            first = self.server.seen[event_id] == 1
            self.server.ports.add(self.client_address[1])
        self.send_response(500 if first else 200)
        self.send_header("Content-Length", "2")
        if first and self.server.say_close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"{}")
        if first:
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


class _ThreadedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, say_close: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.say_close = say_close
        self.lock = threading.Lock()
        self.seen: Counter[str] = Counter()
        self.ports: set[int] = set()


@contextlib.contextmanager
def threaded_server(say_close: bool) -> Iterator[_ThreadedServer]:
    server = _ThreadedServer(say_close)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("say_close", [False, True], ids=["silently", "saying-connection-close"])
def test_http_server_closing_after_each_500(say_close: bool) -> None:
    with threaded_server(say_close) as server:
        history = deliver(f"http://127.0.0.1:{server.server_address[1]}/webhooks", events=10)
    assert records(history) == FIVE_HUNDRED_THEN_OK * 10
    assert sum(server.seen.values()) == 20
    # every 500 closed its connection: each event's 200 came on a connection of its own
    assert len(server.ports) >= 10


# ---- uvicorn closing idle connections ----------------------------------------------------------

class _FiveHundredFirst:
    """ASGI: an event's first delivery 500, every later one 200."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        event_id = json.loads(body)["id"]
        self.seen[event_id] += 1
        status = 500 if self.seen[event_id] == 1 else 200
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})


def test_uvicorn_closing_idle_connections_is_not_charged_to_the_receiver() -> None:
    """uvicorn closes a connection idle for `timeout_keep_alive`; the retry comes about then."""
    app = _FiveHundredFirst()
    keep_alive_s = 0.02
    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_level="error", access_log=False,
                            timeout_keep_alive=keep_alive_s)  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        history = deliver(f"http://127.0.0.1:{port}/webhooks", events=20,
                          time_scale=keep_alive_s / STRIPE.retry_schedule_s[0])
    finally:
        server.should_exit = True
        thread.join(10)
    assert records(history) == FIVE_HUNDRED_THEN_OK * 20
    assert sum(app.seen.values()) == 40
