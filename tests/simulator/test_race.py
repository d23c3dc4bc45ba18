"""Tests of simulator.delivery.race against real servers on 127.0.0.1.

Servers: uvicorn (HTTP/1.1 only) and hypercorn (HTTP/1.1 and prior-knowledge h2c), each in
its own thread with its own event loop, on a port the kernel picks, shut down cleanly.
The app has a check-then-act dedupe with one event-loop yield between the check and the
insert, and counts every request it receives. Race hit rates are not asserted here (they
are noisy); ``bench/race_hit_rate.py`` measures them.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
import uuid
from collections import Counter
from typing import Any, Awaitable, Callable, Iterator
from urllib.parse import parse_qs

import httpx
import pytest
import uvicorn
from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config as HypercornConfig

from hookproof.simulator.delivery.race import (
    RaceRequest,
    RaceResponse,
    clear_h2c_cache,
    race,
    speaks_h2c,
)
from hookproof.simulator.errors import TargetError
from tests.support import LATE_S, free_port

pytestmark = pytest.mark.timeout(60)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

BIG_BODY_BYTES = 200_000


# --------------------------------------------------------------------------- the test app


class CheckThenActApp:
    """ASGI receiver with a racy dedupe: ``if key not in seen: yield; seen.add(key); apply``.

    Routes: ``POST /hook?key=K`` (answers JSON ``{"applied", "http_version", "body_len"}``),
    ``GET /big`` (``BIG_BODY_BYTES`` of ``x``). ``received`` and ``applied`` count per key.
    """

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.received: Counter[str] = Counter()
        self.applied: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":  # the request never completed
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"] == "/big":
            await self._answer(send, 200, b"x" * BIG_BODY_BYTES, b"text/plain")
            return
        query = parse_qs(scope["query_string"].decode())
        key = query.get("key", [""])[0]
        self.received[key] += 1
        applied = False
        if key not in self.seen:  # check
            await asyncio.sleep(0)  # the race window
            self.seen.add(key)  # act
            self.applied[key] += 1
            applied = True
        payload = {"applied": applied, "http_version": scope["http_version"],
                   "body_len": len(body)}
        await self._answer(send, 200, json.dumps(payload).encode(), b"application/json")

    @staticmethod
    async def _answer(send: Send, status: int, body: bytes, ctype: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# --------------------------------------------------------------------------- server threads


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def _wait_until_serving(url: str) -> None:
    """Block until the server answers one HTTP/1.1 request (60 s at most: start-up on a loaded machine)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/big", timeout=2.0)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class UvicornThread:
    """A uvicorn server (HTTP/1.1) in a thread; ``stop()`` sets ``should_exit`` and joins."""

    def __init__(self, app: Any) -> None:
        self.sock = _listening_socket()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, lifespan="off", log_level="error", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       name="uvicorn-test-server", daemon=True)

    def start(self) -> "UvicornThread":
        self.thread.start()
        _wait_until_serving(self.url)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


class HypercornThread:
    """A hypercorn server (HTTP/1.1 + h2c) in a thread, stopped through ``shutdown_trigger``."""

    def __init__(self, app: Any, *, max_concurrent_streams: int = 100) -> None:
        self.sock = _listening_socket()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.config = HypercornConfig()
        self.config.bind = [f"fd://{os.dup(self.sock.fileno())}"]  # hypercorn owns the dup
        self.config.h2_max_concurrent_streams = max_concurrent_streams
        self.config.accesslog = None
        self.config.errorlog = None
        self.config.graceful_timeout = 1.0
        self.app = app
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop_event: asyncio.Event | None = None
        self.thread = threading.Thread(target=asyncio.run, args=(self._main(),),
                                       name="hypercorn-test-server", daemon=True)

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop_event = asyncio.Event()
        await hypercorn_serve(self.app, self.config, shutdown_trigger=self.stop_event.wait)

    def start(self) -> "HypercornThread":
        self.thread.start()
        _wait_until_serving(self.url)
        return self

    def stop(self) -> None:
        if self.loop is not None and self.stop_event is not None:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(10)
        self.sock.close()


class SilentServer:
    """Accepts connections, reads everything, never answers (a hung receiver)."""

    def __init__(self, reply: bytes | None = None) -> None:
        self.sock = _listening_socket()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.reply = reply
        self.conns: list[socket.socket] = []
        self.closing = False
        self.thread = threading.Thread(target=self._accept, name="silent-test-server",
                                       daemon=True)

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self.closing:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.conns.append(conn)
            if self.reply is not None:
                try:
                    conn.recv(65536)
                    conn.sendall(self.reply)
                    conn.close()
                except OSError:
                    pass

    def start(self) -> "SilentServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.closing = True
        self.thread.join(5)
        for conn in self.conns:
            conn.close()
        self.sock.close()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def race_app() -> CheckThenActApp:
    return CheckThenActApp()


@pytest.fixture(scope="module")
def uvicorn_server(race_app: CheckThenActApp) -> Iterator[UvicornThread]:
    server = UvicornThread(race_app).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hypercorn_server(race_app: CheckThenActApp) -> Iterator[HypercornThread]:
    server = HypercornThread(race_app).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hypercorn_4_streams(race_app: CheckThenActApp) -> Iterator[HypercornThread]:
    server = HypercornThread(race_app, max_concurrent_streams=4).start()
    yield server
    server.stop()


@pytest.fixture()
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer().start()
    yield server
    server.stop()


@pytest.fixture()
def garbage_server() -> Iterator[SilentServer]:
    server = SilentServer(reply=b"this is not HTTP at all\r\n\r\n\r\n").start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_h2c_cache() -> Iterator[None]:
    clear_h2c_cache()
    yield
    clear_h2c_cache()


def _burst(n: int, body: bytes = b'{"id":"evt_1","type":"invoice.paid"}') -> tuple[str, list[RaceRequest]]:
    key = uuid.uuid4().hex
    req = RaceRequest(method="POST", path_query=f"/hook?key={key}",
                      headers={"Content-Type": "application/json", "X-Signature": "t=1,v1=ab"},
                      body=body)
    return key, [req] * n


def _assert_all_ok(responses: list[RaceResponse], n: int, http_version: str) -> None:
    assert len(responses) == n
    for r in responses:
        assert r.error is None, r
        assert r.status == 200
        assert r.request_sent is True
        assert r.sent_at <= r.answered_at
        assert json.loads(r.body)["http_version"] == http_version


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("mode", ["h1-last-byte", "plain"])
async def test_h1_modes_deliver_every_copy_to_uvicorn(
    uvicorn_server: UvicornThread, race_app: CheckThenActApp, mode: str
) -> None:
    key, requests = _burst(20)
    responses = await race(uvicorn_server.url, requests, mode=mode, timeout_s=5.0)  # type: ignore[arg-type]
    _assert_all_ok(responses, 20, "1.1")
    assert race_app.received[key] == 20
    assert 1 <= race_app.applied[key] <= 20
    assert sum(json.loads(r.body)["applied"] for r in responses) == race_app.applied[key]


@pytest.mark.parametrize("mode", ["h2-single-packet", "h1-last-byte", "plain"])
async def test_every_mode_delivers_every_copy_to_hypercorn(
    hypercorn_server: HypercornThread, race_app: CheckThenActApp, mode: str
) -> None:
    key, requests = _burst(20)
    responses = await race(hypercorn_server.url, requests, mode=mode, timeout_s=5.0)  # type: ignore[arg-type]
    _assert_all_ok(responses, 20, "2" if mode == "h2-single-packet" else "1.1")
    assert race_app.received[key] == 20


async def test_h2_release_time_is_shared_by_the_whole_packet(
    hypercorn_server: HypercornThread,
) -> None:
    _, requests = _burst(10)
    responses = await race(hypercorn_server.url, requests, mode="h2-single-packet",
                           timeout_s=5.0, gate_wait_s=0.05)
    assert len({r.sent_at for r in responses}) == 1


async def test_h2_respects_max_concurrent_streams(
    hypercorn_4_streams: HypercornThread, race_app: CheckThenActApp
) -> None:
    key, requests = _burst(10)
    responses = await race(hypercorn_4_streams.url, requests, mode="h2-single-packet",
                           timeout_s=5.0, gate_wait_s=0.02)
    _assert_all_ok(responses, 10, "2")
    assert race_app.received[key] == 10
    assert len({r.sent_at for r in responses}) == 3  # packets of 4, 4 and 2


async def test_h2_bodies_beyond_the_flow_control_window(
    hypercorn_server: HypercornThread, race_app: CheckThenActApp
) -> None:
    body = b"{" + b" " * 9_998 + b"}"  # 20 x 10 kB > the 65,535-byte initial window
    key, requests = _burst(20, body)
    responses = await race(hypercorn_server.url, requests, mode="h2-single-packet",
                           timeout_s=5.0, gate_wait_s=0.02)
    _assert_all_ok(responses, 20, "2")
    assert {json.loads(r.body)["body_len"] for r in responses} == {10_000}
    assert race_app.received[key] == 20


@pytest.mark.parametrize("mode", ["h2-single-packet", "h1-last-byte"])
async def test_empty_body_is_withheld_and_released(
    hypercorn_server: HypercornThread, race_app: CheckThenActApp, mode: str
) -> None:
    key, requests = _burst(5, b"")
    responses = await race(hypercorn_server.url, requests, mode=mode,  # type: ignore[arg-type]
                           timeout_s=5.0, gate_wait_s=0.02)
    _assert_all_ok(responses, 5, "2" if mode == "h2-single-packet" else "1.1")
    assert race_app.received[key] == 5


async def test_speaks_h2c(uvicorn_server: UvicornThread, hypercorn_server: HypercornThread) -> None:
    assert await speaks_h2c(hypercorn_server.url, 3.0) is True
    assert await speaks_h2c(uvicorn_server.url, 3.0) is False
    # cached answers come back without touching the network
    assert await speaks_h2c(hypercorn_server.url + "/other/path", 3.0) is True


async def test_auto_picks_h2_for_hypercorn_and_h1_for_uvicorn(
    uvicorn_server: UvicornThread, hypercorn_server: HypercornThread
) -> None:
    _, requests = _burst(4)
    on_hypercorn = await race(hypercorn_server.url, requests, timeout_s=5.0, gate_wait_s=0.01)
    _assert_all_ok(on_hypercorn, 4, "2")
    on_uvicorn = await race(uvicorn_server.url, requests, timeout_s=5.0, gate_wait_s=0.01)
    _assert_all_ok(on_uvicorn, 4, "1.1")


@pytest.mark.parametrize("mode", ["h1-last-byte", "h2-single-packet", "plain", "auto"])
async def test_refused_port(mode: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    _, requests = _burst(3)
    responses = await race(url, requests, mode=mode, timeout_s=2.0, gate_wait_s=0.01)  # type: ignore[arg-type]
    assert [(r.status, r.error, r.request_sent) for r in responses] == [
        (None, "connection refused: nothing listens there", False)
    ] * 3


@pytest.mark.parametrize("mode", ["h1-last-byte", "plain"])
async def test_server_that_never_answers_times_out(silent_server: SilentServer, mode: str) -> None:
    _, requests = _burst(3)
    started = time.monotonic()
    responses = await race(silent_server.url, requests, mode=mode,  # type: ignore[arg-type]
                           timeout_s=0.5, gate_wait_s=0.05)
    elapsed = time.monotonic() - started
    assert elapsed < 0.5 + 0.05 + LATE_S  # the timeout and the gate; the server never answers
    for r in responses:
        assert r.status is None
        assert r.request_sent is True
        assert r.error == "no answer within 0.5 s (sender timeout)"


async def test_h2_against_a_server_that_never_answers(silent_server: SilentServer) -> None:
    _, requests = _burst(3)
    started = time.monotonic()
    responses = await race(silent_server.url, requests, mode="h2-single-packet", timeout_s=0.5)
    assert time.monotonic() - started < 0.5 + LATE_S  # the timeout; the server never answers
    for r in responses:
        assert r.status is None and r.request_sent is False
        assert r.error == ("the receiver does not speak HTTP/2 over cleartext (h2c) with prior knowledge "
                           "(no SETTINGS frame before the timeout)")
    assert await speaks_h2c(silent_server.url, 0.3) is False


@pytest.mark.parametrize("mode", ["h1-last-byte", "h2-single-packet", "plain"])
async def test_garbage_from_the_server_is_an_error(garbage_server: SilentServer, mode: str) -> None:
    _, requests = _burst(2)
    responses = await race(garbage_server.url, requests, mode=mode,  # type: ignore[arg-type]
                           timeout_s=2.0, gate_wait_s=0.01)
    for r in responses:
        assert r.status is None
        assert r.error is not None
        if mode == "h2-single-packet":
            assert r.error.startswith("the receiver does not speak HTTP/2 over cleartext (h2c)")
        else:
            assert r.error == ("the answer was not valid HTTP: it has no status line (an HTTP/0.9-style answer): "
                               "'this is not HTTP at all'")


async def test_h2_single_packet_against_http1_only_server(uvicorn_server: UvicornThread) -> None:
    _, requests = _burst(2)
    responses = await race(uvicorn_server.url, requests, mode="h2-single-packet", timeout_s=2.0)
    for r in responses:
        assert r.status is None and r.request_sent is False
        assert r.error == ("the receiver does not speak HTTP/2 over cleartext (h2c) with prior knowledge "
                           "(it answered in HTTP/1)")


@pytest.mark.parametrize("mode", ["h1-last-byte", "h2-single-packet"])
async def test_response_bigger_than_the_cap_is_truncated(
    hypercorn_server: HypercornThread, mode: str
) -> None:
    requests = [RaceRequest("GET", "/big", {}, b"")] * 3
    responses = await race(hypercorn_server.url, requests, mode=mode,  # type: ignore[arg-type]
                           timeout_s=5.0, read_cap_bytes=1000, gate_wait_s=0.01)
    for r in responses:
        assert (r.status, r.error, r.truncated, r.body) == (200, None, True, b"x" * 1000)
    whole = await race(hypercorn_server.url, requests[:1], mode=mode,  # type: ignore[arg-type]
                       timeout_s=5.0, read_cap_bytes=BIG_BODY_BYTES, gate_wait_s=0.01)
    assert len(whole[0].body) == BIG_BODY_BYTES and not whole[0].truncated


async def test_https_and_bad_arguments_raise_value_error() -> None:
    _, requests = _burst(1)
    with pytest.raises(TargetError, match="https"):
        await race("https://127.0.0.1:1/hook", requests, timeout_s=1.0)
    with pytest.raises(ValueError):
        await speaks_h2c("https://127.0.0.1:1/", 1.0)
    with pytest.raises(ValueError, match="mode"):
        await race("http://127.0.0.1:1/", requests, mode="h3", timeout_s=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout_s"):
        await race("http://127.0.0.1:1/", requests, timeout_s=0)
    with pytest.raises(ValueError, match="cannot write request"):
        await race("http://127.0.0.1:1/", [RaceRequest("POST", "/x", {"X": "a\nb"}, b"")],
                   timeout_s=1.0)
    assert await race("http://127.0.0.1:1/", [], timeout_s=1.0) == []


async def test_cancelling_a_burst_during_the_gate_returns_promptly(
    uvicorn_server: UvicornThread, race_app: CheckThenActApp
) -> None:
    key, requests = _burst(5)
    # The gate and the timeout are far longer than LATE_S: a cancellation that waited out
    # either would take 60 s, so the bound below tells promptly from not at all.
    task = asyncio.create_task(race(uvicorn_server.url, requests, mode="h1-last-byte",
                                    timeout_s=60.0, gate_wait_s=60.0))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < LATE_S
    await asyncio.sleep(0.1)
    assert race_app.received[key] == 0  # the final bytes were never released


@pytest.mark.parametrize("mode", ["h2-single-packet", "h1-last-byte", "plain"])
async def test_a_gate_holds_the_release_until_it_is_done_and_runs_once(
    hypercorn_server: HypercornThread, race_app: CheckThenActApp, mode: str
) -> None:
    key, requests = _burst(4)
    opened = asyncio.Event()
    asked: list[int] = []  # the complete requests the server had when the gate was asked, and when it opened

    async def gate() -> None:
        asked.append(race_app.received[key])
        await opened.wait()
        asked.append(race_app.received[key])

    task = asyncio.create_task(race(hypercorn_server.url, requests, mode=mode,  # type: ignore[arg-type]
                                    timeout_s=5.0, gate_wait_s=0.01, gate=gate))
    await asyncio.sleep(0.3)  # thirty gate waits
    assert (race_app.received[key], task.done(), asked) == (0, False, [0])
    opened.set()
    _assert_all_ok(await task, 4, "2" if mode == "h2-single-packet" else "1.1")
    assert (race_app.received[key], asked) == (4, [0, 0])


@pytest.mark.parametrize("mode", ["h1-last-byte", "h2-single-packet", "plain", "auto"])
async def test_a_gate_runs_once_when_no_copy_could_be_sent(mode: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    _, requests = _burst(3)
    runs: list[str] = []

    async def gate() -> None:
        runs.append(mode)

    responses = await race(url, requests, mode=mode, timeout_s=2.0, gate_wait_s=0.01, gate=gate)  # type: ignore[arg-type]
    assert [r.request_sent for r in responses] == [False] * 3
    assert runs == [mode]


async def test_a_plain_burst_s_connect_deadline_starts_after_its_gate(
    uvicorn_server: UvicornThread, race_app: CheckThenActApp
) -> None:
    """Plain mode sends nothing before its gate is done: the gate's wait, here longer than the
    timeout, does not count against connecting and sending."""
    key, requests = _burst(3)

    async def gate() -> None:
        await asyncio.sleep(0.4)

    responses = await race(uvicorn_server.url, requests, mode="plain", timeout_s=0.3, gate_wait_s=0.0, gate=gate)
    _assert_all_ok(responses, 3, "1.1")
    assert race_app.received[key] == 3
