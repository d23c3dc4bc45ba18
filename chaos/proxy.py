"""An asyncio TCP fault proxy on 127.0.0.1 with Toxiproxy-shaped toxics.

The proxy sits between the provider and the receiver (or several receivers, chosen
round-robin per connection) and runs its own event loop in a daemon thread, so it
stays up across the dispatcher's `asyncio.run` calls and is controlled from any
thread. Toxics follow Toxiproxy's semantics (methods.md §4.1), with one extension:
`connections` limits a toxic to the next N connections, so "lose the answer of the
first attempt" is one value.

    upstream    client (provider) → server (receiver): the request
    downstream  server → client: the answer

| toxic | effect |
|---|---|
| `Latency(latency_ms, jitter_ms)` | each chunk waits latency ± jitter |
| `Bandwidth(rate_kb_s)` | throughput cap |
| `ResetPeer(timeout_ms)` | TCP RST to the client after the timeout (from the first data) |
| `Timeout(timeout_ms)` | black hole: data is dropped; closed after the timeout, 0 = held open until healed |
| `LimitData(bytes)` | closes both sides once that many bytes have passed (``bytes=0`` with downstream: the answer started at the receiver, the provider gets nothing) |
| `Slicer(average_size, size_variation, delay_us)` | fragments the stream |

`on_response` taps complete HTTP/1.1 answers on the downstream stream and calls a
function before forwarding the last bytes of a matching answer: that is how a
receiver is killed "right after it answered 2xx" without racing its next step.
`reset()` removes every toxic and tap and closes held connections (the heal).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

from hookproof.chaos.errors import ProxyError

Stream = Literal["upstream", "downstream"]
#: Bytes read from a socket at once.
CHUNK_BYTES = 65536
#: Seconds to open a connection to the receiver.
CONNECT_TIMEOUT_S = 5.0

_names = itertools.count(1)


@dataclass(frozen=True)
class Toxic:
    """Base of the toxics: which stream, with which probability per connection.

    Attributes:
        stream: ``"downstream"`` (the answer, Toxiproxy's default) or ``"upstream"``.
        toxicity: probability that a new connection gets this toxic (1.0: all).
        connections: apply to at most this many new connections (None: no limit).
        name: a unique name (generated).
    """

    stream: Stream = "downstream"
    toxicity: float = 1.0
    connections: int | None = None
    name: str = field(default_factory=lambda: f"toxic{next(_names)}")

    def __post_init__(self) -> None:
        if self.stream not in ("upstream", "downstream"):
            raise ValueError(f"stream must be 'upstream' or 'downstream', got {self.stream!r}")
        if not 0.0 <= self.toxicity <= 1.0:
            raise ValueError(f"toxicity must be within [0, 1], got {self.toxicity}")


@dataclass(frozen=True)
class Latency(Toxic):
    """Delay every chunk by `latency_ms` ± `jitter_ms` (uniform)."""

    latency_ms: float = 0.0
    jitter_ms: float = 0.0


@dataclass(frozen=True)
class Bandwidth(Toxic):
    """Cap the throughput at `rate_kb_s` kilobytes per second."""

    rate_kb_s: float = 1024.0


@dataclass(frozen=True)
class ResetPeer(Toxic):
    """Reset the client's connection (RST) `timeout_ms` after its first data."""

    timeout_ms: float = 0.0


@dataclass(frozen=True)
class Timeout(Toxic):
    """Drop all data; close after `timeout_ms` (0: hold the connection until healed)."""

    timeout_ms: float = 0.0


@dataclass(frozen=True)
class LimitData(Toxic):
    """Close the connection once `bytes` bytes have passed in the stream."""

    bytes: int = 0


@dataclass(frozen=True)
class Slicer(Toxic):
    """Split data into slices of `average_size` ± `size_variation` bytes, `delay_us` apart."""

    average_size: int = 64
    size_variation: int = 0
    delay_us: float = 0.0


@dataclass
class _Tap:
    callback: Callable[[int], None]
    statuses: range
    times: int | None


class _HttpAnswers:
    """Finds where complete HTTP/1.1 answers end in a downstream byte stream."""

    def __init__(self) -> None:
        self._buf = b""
        self._need: int | None = None  # bytes still missing of the current body
        self._status = 0
        self._chunked = False

    def feed(self, data: bytes) -> list[tuple[int, int]]:
        """(status, offset in `data` where that answer ends) for each answer completed by `data`."""
        done: list[tuple[int, int]] = []
        base = len(self._buf)
        self._buf += data
        pos = 0
        while True:
            if self._need is None and not self._chunked:
                end = self._buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    break
                self._parse_head(self._buf[pos:end])
                pos = end + 4
                if self._need == 0 and not self._chunked:
                    done.append((self._status, pos - base))
                    self._need = None
                continue
            if self._chunked:
                end = self._buf.find(b"0\r\n\r\n", pos)
                if end < 0:
                    break
                pos = end + 5
                self._chunked = False
                self._need = None
                done.append((self._status, pos - base))
                continue
            assert self._need is not None
            have = len(self._buf) - pos
            if have < self._need:
                self._need -= have
                pos = len(self._buf)
                break
            pos += self._need
            self._need = None
            done.append((self._status, pos - base))
        self._buf = self._buf[pos:]
        return [(s, max(0, min(o, len(data)))) for s, o in done]

    def _parse_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        try:
            self._status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            self._status = 0
        length = 0
        self._chunked = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            key = name.strip().lower()
            if key == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = 0
            elif key == b"transfer-encoding" and b"chunked" in value.lower():
                self._chunked = True
        self._need = None if self._chunked else length


class _Conn:
    """One proxied connection: its sockets and the toxics it drew."""

    def __init__(self, client: asyncio.StreamWriter, toxics: Sequence[Toxic]) -> None:
        self.client = client
        self.server: asyncio.StreamWriter | None = None
        self.toxics = list(toxics)
        self.passed = {"upstream": 0, "downstream": 0}
        self.closed = asyncio.Event()
        self.held = False

    def active(self, stream: Stream) -> list[Toxic]:
        return [t for t in self.toxics if t.stream == stream]

    def close(self, *, reset: bool = False) -> None:
        if reset:
            sock = self.client.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            self.client.transport.abort()
        else:
            self.client.close()
        if self.server is not None:
            self.server.close()
        self.closed.set()


class FaultProxy:
    """A TCP proxy with toxics, round-robin upstreams and answer taps.

    Args:
        upstreams: one ``(host, port)`` or several (round-robin per connection).
        listen_port: port on 127.0.0.1 (0: the OS picks; read `port` after `start`).
        seed: drives toxicity and jitter.

    Use as a context manager, or `start()`/`stop()`.
    """

    def __init__(self, upstreams: Sequence[tuple[str, int]] | tuple[str, int], *, listen_port: int = 0,
                 seed: int = 0) -> None:
        self._upstreams: list[tuple[str, int]] = []
        self.set_upstreams(upstreams)
        self._listen_port = listen_port
        self.port = 0
        self._rng = random.Random(seed)
        self._toxics: list[Toxic] = []
        self._left: dict[str, int] = {}
        self._taps: list[_Tap] = []
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()
        self._rr = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self.connections = 0

    def __repr__(self) -> str:
        return f"FaultProxy(127.0.0.1:{self.port} -> {self._upstreams}, toxics={[type(t).__name__ for t in self._toxics]})"

    # ---- lifecycle ---------------------------------------------------------------
    def start(self) -> "FaultProxy":
        """Start listening (bounded: 5 s). Raises ProxyError."""
        if self._thread is not None:
            return self
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._handle, "127.0.0.1", self._listen_port, reuse_address=True))
                self.port = self._server.sockets[0].getsockname()[1]
            except OSError as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="hookproof-fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(5.0) or failure:
            self._thread = None
            raise ProxyError(f"the fault proxy could not listen on 127.0.0.1:{self._listen_port}: "
                             f"{failure[0] if failure else 'timed out'}")
        return self

    def stop(self) -> None:
        """Close every connection and the listener; safe to call twice."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for conn in list(self._conns):
                conn.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5.0)
        except Exception:  # the loop may already be gone; stopping is best effort but bounded
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5.0)
        self._thread = None
        self._loop = None

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def url(self, path: str = "") -> str:
        """``http://127.0.0.1:<port><path>``."""
        return f"http://127.0.0.1:{self.port}{path}"

    # ---- control (any thread) ------------------------------------------------------
    def set_upstreams(self, upstreams: Sequence[tuple[str, int]] | tuple[str, int]) -> None:
        """Where new connections go (several: round-robin). Open connections keep theirs."""
        if isinstance(upstreams, tuple) and len(upstreams) == 2 and isinstance(upstreams[1], int):
            chosen = [upstreams]
        else:
            chosen = list(upstreams)
        if not chosen:
            raise ValueError("the proxy needs at least one upstream")
        for host, _ in chosen:
            if host not in ("127.0.0.1", "localhost"):
                raise ValueError(f"upstreams must be on 127.0.0.1, got {host!r}")
        self._upstreams = chosen

    @property
    def upstreams(self) -> list[tuple[str, int]]:
        return list(self._upstreams)

    def add_toxic(self, toxic: Toxic) -> str:
        """Apply `toxic` to new connections (and to open ones, for the data still to come)."""
        with self._lock:
            self._toxics.append(toxic)
            if toxic.connections is not None:
                self._left[toxic.name] = toxic.connections
        return toxic.name

    @property
    def toxics(self) -> list[Toxic]:
        with self._lock:
            return list(self._toxics)

    def on_response(self, callback: Callable[[int], None], *, statuses: range = range(200, 300),
                    times: int | None = 1) -> None:
        """Call `callback(status)` in the proxy's thread when a receiver has written a
        complete answer with a status in `statuses`, before the provider gets its last
        bytes. `times`: how many answers (None: every one)."""
        with self._lock:
            self._taps.append(_Tap(callback, statuses, times))

    def reset(self) -> None:
        """Heal: remove every toxic and tap; close connections a black hole holds."""
        with self._lock:
            self._toxics = []
            self._left = {}
            self._taps = []
        loop = self._loop
        if loop is not None:
            for conn in list(self._conns):
                if conn.held:
                    loop.call_soon_threadsafe(conn.close)

    # ---- the proxy's own thread ---------------------------------------------------
    def _draw(self) -> list[Toxic]:
        with self._lock:
            chosen = []
            for t in self._toxics:
                if t.name in self._left:
                    if self._left[t.name] <= 0:
                        continue
                if self._rng.random() < t.toxicity:
                    if t.name in self._left:
                        self._left[t.name] -= 1
                    chosen.append(t)
            self._toxics = [t for t in self._toxics if self._left.get(t.name, 1) > 0]
            return chosen

    def _fire(self, status: int) -> None:
        with self._lock:
            due = [tap for tap in self._taps if status in tap.statuses]
            for tap in due:
                if tap.times is not None:
                    tap.times -= 1
            self._taps = [t for t in self._taps if t.times is None or t.times > 0]
        for tap in due:
            tap.callback(status)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        conn = _Conn(writer, self._draw())
        self._conns.add(conn)
        try:
            upstreams = self._upstreams
            host, port = upstreams[next(self._rr) % len(upstreams)]
            try:
                ureader, uwriter = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError):
                conn.close(reset=True)  # as if nothing listened: the provider's request did not get through
                return
            conn.server = uwriter
            up = asyncio.ensure_future(self._pump(conn, reader, uwriter, "upstream"))
            down = asyncio.ensure_future(self._pump(conn, ureader, writer, "downstream"))
            closed = asyncio.ensure_future(conn.closed.wait())
            await asyncio.wait({up, down, closed}, return_when=asyncio.FIRST_COMPLETED)
            for task in (up, down, closed):
                task.cancel()
            await asyncio.gather(up, down, closed, return_exceptions=True)
        finally:
            if not conn.closed.is_set():
                conn.close()
            self._conns.discard(conn)

    async def _pump(self, conn: _Conn, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    stream: Stream) -> None:
        answers = _HttpAnswers() if stream == "downstream" else None
        try:
            while True:
                data = await reader.read(CHUNK_BYTES)
                if not data:
                    return
                toxics = conn.active(stream) + [t for t in self._live(stream) if t not in conn.toxics
                                                  and t.connections is None and t.toxicity >= 1.0]
                if await self._poison(conn, writer, toxics, stream, data):
                    return
                ends = answers.feed(data) if answers is not None else []
                start = 0
                for status, end in ends:
                    hold = max(start, end - 1)  # the answer's last byte waits until its taps have run
                    await self._forward(conn, writer, data[start:hold], toxics, stream)
                    self._fire(status)  # the provider cannot have read this answer yet, nor ended its phase
                    start = hold
                await self._forward(conn, writer, data[start:], toxics, stream)
                conn.passed[stream] += len(data)
        except (ConnectionError, OSError):
            return

    def _live(self, stream: Stream) -> list[Toxic]:
        with self._lock:
            return [t for t in self._toxics if t.stream == stream]

    async def _poison(self, conn: _Conn, writer: asyncio.StreamWriter, toxics: Sequence[Toxic], stream: Stream,
                      data: bytes) -> bool:
        """Apply the toxics that stop data; True when this stream must stop."""
        for t in toxics:
            if isinstance(t, Timeout):
                conn.held = True
                if t.timeout_ms > 0:
                    asyncio.get_running_loop().call_later(t.timeout_ms / 1000.0, conn.close)
                await conn.closed.wait()
                return True
            if isinstance(t, ResetPeer):
                if t.timeout_ms > 0:
                    await asyncio.sleep(t.timeout_ms / 1000.0)
                conn.close(reset=True)
                return True
            if isinstance(t, LimitData) and conn.passed[stream] + len(data) > t.bytes:
                allowed = max(0, t.bytes - conn.passed[stream])
                if allowed:
                    writer.write(data[:allowed])
                    await writer.drain()
                conn.close()
                return True
        return False

    async def _forward(self, conn: _Conn, writer: asyncio.StreamWriter, data: bytes, toxics: Sequence[Toxic],
                       stream: Stream) -> None:
        if not data:
            return
        for t in toxics:
            if isinstance(t, Latency):
                delay = t.latency_ms + (self._rng.uniform(-t.jitter_ms, t.jitter_ms) if t.jitter_ms else 0.0)
                await asyncio.sleep(max(0.0, delay) / 1000.0)
        slicer = next((t for t in toxics if isinstance(t, Slicer)), None)
        pieces = [data]
        if slicer is not None:
            pieces = []
            rest = data
            while rest:
                size = max(1, slicer.average_size + self._rng.randint(-slicer.size_variation, slicer.size_variation))
                pieces.append(rest[:size])
                rest = rest[size:]
        bandwidth = next((t for t in toxics if isinstance(t, Bandwidth)), None)
        for i, piece in enumerate(pieces):
            writer.write(piece)
            await writer.drain()
            if bandwidth is not None:
                await asyncio.sleep(len(piece) / (bandwidth.rate_kb_s * 1024.0))
            if slicer is not None and slicer.delay_us and i < len(pieces) - 1:
                await asyncio.sleep(slicer.delay_us / 1e6)


__all__ = ["Bandwidth", "FaultProxy", "Latency", "LimitData", "ResetPeer", "Slicer", "Timeout", "Toxic"]
