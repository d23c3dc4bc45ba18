"""A zoo of hostile and broken HTTP servers on 127.0.0.1, for testing hookproof itself.

None of them is a webhook receiver: each misbehaves at the transport level in one way
(never answers, drips, floods, speaks garbage, resets, redirects forever...). They run
on raw asyncio in a background thread with its own event loop, so a test can point a
subprocess (``hookproof send``/``certify``) or an in-process dispatcher at them.

    with hostile_server("silent") as server:
        run_hookproof("send", "--url", server.url, ...)

Every behaviour is bounded on the server side too: a connection handler stops after
`MAX_LIFETIME_S` seconds or when the client goes away, and `HostileServer.close()`
cancels every handler and waits for the thread (bounded).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterator

#: Seconds a handler lives at most (a safety net: the harness must give up far sooner).
MAX_LIFETIME_S = 120.0
#: Size of the huge answer body, in bytes.
HUGE_BODY_BYTES = 50 * 1024 * 1024

Handler = Callable[["Connection"], Awaitable[None]]


@dataclass
class Connection:
    """One accepted connection and the server it belongs to."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    server: "HostileServer"

    async def read_request(self, timeout_s: float = 5.0) -> bytes:
        """Read a request's head and (by Content-Length) its body; b"" when the client left."""
        try:
            async with asyncio.timeout(timeout_s):
                head = await self.reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or b"0")
                if length and b"100-continue" not in head.lower():
                    await self.reader.readexactly(length)
                self.server.requests += 1
                return head
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, TimeoutError, ValueError):
            return b""

    async def write(self, data: bytes) -> bool:
        """Write and drain; False when the client has gone."""
        try:
            self.writer.write(data)
            await self.writer.drain()
            return True
        except (ConnectionError, RuntimeError):
            return False

    async def hold(self, seconds: float = MAX_LIFETIME_S) -> None:
        """Keep the connection open, doing nothing, until the client closes it."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(seconds):
                while await self.reader.read(65536):
                    pass

    def reset(self) -> None:
        """Abort with a TCP RST (SO_LINGER 0), not a graceful FIN."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


# ---- behaviours -------------------------------------------------------------------

async def silent(c: Connection) -> None:
    """Accepts, reads the request, and never answers."""
    await c.read_request()
    await c.hold()


async def stall_after_headers(c: Connection) -> None:
    """Answers a status line and headers promising a body, then sends nothing more."""
    await c.read_request()
    await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    await c.hold()


async def slowloris_body(c: Connection) -> None:
    """Answers 200 headers at once, then drips the body one byte every 50 ms (defeats per-read timeouts)."""
    await c.read_request()
    if not await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"):
        return
    for _ in range(int(MAX_LIFETIME_S / 0.05)):
        await asyncio.sleep(0.05)
        if not await c.write(b"."):
            return


async def slowloris_headers(c: Connection) -> None:
    """Drips the status line and endless headers, one byte every 50 ms: never a complete head."""
    await c.read_request()
    data = b"HTTP/1.1 200 OK\r\n" + b"X-Drip: " + b"a" * 100_000
    for i in range(len(data)):
        if not await c.write(data[i:i + 1]):
            return
        await asyncio.sleep(0.05)


async def endless_body(c: Connection) -> None:
    """Answers 200 with a chunked body that never ends, as fast as the client reads."""
    await c.read_request()
    if not await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"):
        return
    chunk = b"%x\r\n" % 65536 + b"x" * 65536 + b"\r\n"
    while await c.write(chunk):
        pass


async def huge_body(c: Connection) -> None:
    """Answers 200 with a 50 MB body (Content-Length set), sent as fast as possible."""
    await c.read_request()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % HUGE_BODY_BYTES
    if not await c.write(head):
        return
    block = b"y" * (1024 * 1024)
    for _ in range(HUGE_BODY_BYTES // len(block)):
        if not await c.write(block):
            return
    await c.hold(10)


async def garbage(c: Connection) -> None:
    """Answers bytes that are not HTTP at all, then closes."""
    await c.read_request()
    await c.write(b"\x16\x03\x01\x02\x00SSH-2.0-not-http\x00\xff\xfe garbage garbage\r\n\r\n")
    c.writer.close()


async def reset_mid_answer(c: Connection) -> None:
    """Starts a 200 answer and resets the connection (RST) half-way through the body."""
    await c.read_request()
    await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"recei")
    await asyncio.sleep(0.05)
    c.reset()


async def close_before_reading(c: Connection) -> None:
    """Closes the connection at once, before reading the request."""
    c.reset()


async def redirect_loop(c: Connection) -> None:
    """Answers every request with a 307 redirect to itself (a loop if followed)."""
    while True:
        head = await c.read_request()
        if not head:
            return
        path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b"/"
        location = f"http://127.0.0.1:{c.server.port}".encode() + path
        if not await c.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + location + b"\r\nContent-Length: 0\r\n\r\n"):
            return


async def continue_forever(c: Connection) -> None:
    """Answers ``100 Continue`` and never the final status."""
    await c.read_request()
    await c.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    await c.hold()


async def one_then_refuse(c: Connection) -> None:
    """The first connection gets a 503 and ``Connection: close``; then nothing listens."""
    c.server.stop_listening()
    await c.read_request()
    await c.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy")
    c.writer.close()


async def answer_ok(c: Connection) -> None:
    """A well-behaved keep-alive receiver: 200 with a short body to every request."""
    while await c.read_request():
        if not await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
                             b'{"received":1}\n'):
            return


#: Seconds `answer_late` waits before it answers.
LATE_ANSWER_S = 1.5


async def answer_late(c: Connection) -> None:
    """A receiver slower than a short sender timeout: 200 to every request, `LATE_ANSWER_S` after it."""
    while await c.read_request():
        await asyncio.sleep(LATE_ANSWER_S)
        if not await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
                             b'{"received":1}\n'):
            return


async def server_error(c: Connection) -> None:
    """Answers 500 (keep-alive) to every request."""
    while await c.read_request():
        if not await c.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom"):
            return


async def tls_handshake(c: Connection) -> None:
    """Answers the first bytes of a TLS ServerHello (a TLS port reached over http://), then closes."""
    await c.read_request()
    await c.write(b"\x16\x03\x03\x00\x5a\x02\x00\x00\x56\x03\x03" + bytes(range(32)))
    c.writer.close()


async def http09(c: Connection) -> None:
    """Answers a body with no status line and no headers (HTTP/0.9 style), then closes."""
    await c.read_request()
    await c.write(b"ok\n")
    c.writer.close()


async def bad_status_line(c: Connection) -> None:
    """Answers a status line whose code is not three digits, then closes."""
    await c.read_request()
    await c.write(b"HTTP/1.1 2\xff0 OK\r\nContent-Length: 0\r\n\r\n")
    c.writer.close()


async def continue_then_close(c: Connection) -> None:
    """Answers ``100 Continue`` and closes the connection."""
    await c.read_request()
    await c.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    await asyncio.sleep(0.05)
    c.writer.close()


async def status_line_then_stall(c: Connection) -> None:
    """Answers a status line and one header, then nothing (the head never ends)."""
    await c.read_request()
    await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    await c.hold()


async def status_line_then_close(c: Connection) -> None:
    """Answers a status line and one header, then closes."""
    await c.read_request()
    await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    await asyncio.sleep(0.05)
    c.writer.close()


async def close_mid_answer(c: Connection) -> None:
    """Starts a 200 answer of 100 bytes and closes (FIN) after 7 of them."""
    await c.read_request()
    await c.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"recei")
    await asyncio.sleep(0.05)
    c.writer.close()


async def reset_after_request(c: Connection) -> None:
    """Reads the whole request, then resets the connection (RST) without answering."""
    await c.read_request()
    await asyncio.sleep(0.05)
    c.reset()


async def close_after_request(c: Connection) -> None:
    """Reads the whole request, then closes the connection (FIN) without answering."""
    await c.read_request()
    await asyncio.sleep(0.05)
    c.writer.close()


#: name -> (behaviour, what it does in plain words)
BEHAVIOURS: dict[str, Handler] = {
    "silent": silent,
    "stall-after-headers": stall_after_headers,
    "slowloris-body": slowloris_body,
    "slowloris-headers": slowloris_headers,
    "endless-body": endless_body,
    "huge-body": huge_body,
    "garbage": garbage,
    "reset-mid-answer": reset_mid_answer,
    "close-before-reading": close_before_reading,
    "redirect-loop": redirect_loop,
    "continue-forever": continue_forever,
    "one-then-refuse": one_then_refuse,
}

#: More answers, for the attempt-core table (tests/simulator/test_attempt_core.py): two
#: well-formed ones, and hostile ones each naming one way an answer is not HTTP or stops.
MORE_BEHAVIOURS: dict[str, Handler] = {
    "answer-ok": answer_ok,
    "answer-late": answer_late,
    "server-error": server_error,
    "tls-handshake": tls_handshake,
    "http09": http09,
    "bad-status-line": bad_status_line,
    "continue-then-close": continue_then_close,
    "status-line-then-stall": status_line_then_stall,
    "status-line-then-close": status_line_then_close,
    "close-mid-answer": close_mid_answer,
    "reset-after-request": reset_after_request,
    "close-after-request": close_after_request,
}


# ---- the server -------------------------------------------------------------------

@dataclass
class HostileServer:
    """One behaviour served on 127.0.0.1 from a background thread."""

    behaviour: str
    port: int = 0
    connections: int = 0
    requests: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.AbstractServer | None = None
    _thread: threading.Thread | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhooks"

    def handler(self) -> Handler:
        """The connection handler of `behaviour`."""
        return BEHAVIOURS.get(self.behaviour) or MORE_BEHAVIOURS[self.behaviour]

    def start(self) -> "HostileServer":
        """Start listening; returns once the port is bound."""
        handler = self.handler()
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)  # type: ignore[arg-type]
            try:
                async with asyncio.timeout(MAX_LIFETIME_S):
                    await handler(Connection(reader, writer, self))
            except (Exception, asyncio.CancelledError):
                pass
            finally:
                self._tasks.discard(task)  # type: ignore[arg-type]
                writer.transport.abort()

        async def serve() -> None:
            self._server = await asyncio.start_server(on_connect, "127.0.0.1", 0, limit=1 << 20)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(serve())
            self._loop.run_forever()
            self._loop.run_until_complete(self._shutdown())
            self._loop.close()

        self._thread = threading.Thread(target=run, name=f"hostile-{self.behaviour}", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"hostile server {self.behaviour} did not start")
        return self

    def stop_listening(self) -> None:
        """Close the listening socket (called from the server's loop): new connects are refused."""
        if self._server is not None:
            self._server.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)

    def close(self) -> None:
        """Stop the loop, cancel every handler, and join the thread (bounded)."""
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)


@contextlib.contextmanager
def hostile_server(behaviour: str) -> Iterator[HostileServer]:
    """Serve `behaviour` (a key of `BEHAVIOURS` or `MORE_BEHAVIOURS`) for the duration of the block."""
    server = HostileServer(behaviour).start()
    try:
        yield server
    finally:
        server.close()
