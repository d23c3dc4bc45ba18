"""Race amplification: release N copies of a request so that they truly overlap.

A receiver with a check-then-act window ("seen this event id?" ... "insert it") applies an
event twice only when two copies reach that window at the same moment. Sending copies
"concurrently" from N tasks is not enough: their arrival is scattered by scheduling and
network jitter. Two techniques make the copies land together (Kettle 2023, "Smashing the
state machine"; see ``methods.md`` §3):

``h1-last-byte``
    HTTP/1.1, one TCP connection per copy (TCP_NODELAY). Every request is written except
    its final byte; after ``gate_wait_s`` the final bytes are written back to back, so the
    server can complete all requests in the same instant.
``h2-single-packet``
    HTTP/2 over cleartext with prior knowledge (h2c), one connection. Every stream gets
    its HEADERS and all of its body except the last byte. After ``gate_wait_s``,
    TCP_NODELAY is switched off, a PING is written (it leaves at once and makes Nagle hold
    what follows), then every stream's final DATA frame (END_STREAM) is written in one
    write, so they travel in a single TCP packet. Bursts bigger than the server's
    SETTINGS_MAX_CONCURRENT_STREAMS are split into several packets, released one after
    the other.
``auto``
    ``h2-single-packet`` when :func:`speaks_h2c` says the target speaks h2c, else
    ``h1-last-byte``.
``plain``
    N concurrent ordinary HTTP/1.1 requests, one connection each, no gate (the baseline
    the benchmark compares against).

Only ``http://`` targets are supported (plain TCP). Everything is asyncio streams, so a
burst composes with the dispatcher's event loop.

Bounds: connecting and pre-sending share one deadline of ``timeout_s``; after the release
(per packet, for HTTP/2), reading the answers has a deadline of ``timeout_s``. So one
packet takes at most about ``2 * timeout_s + gate_wait_s``. At most ``read_cap_bytes`` of
each body are kept: a bigger answer is truncated and its connection (HTTP/1.1) or stream
(HTTP/2) is closed. Response heads are bounded by h11's and h2's own limits (16 KiB and
64 KiB). Sockets are always closed, also on cancellation.

Failures never raise: each copy gets a :class:`RaceResponse` whose ``error`` is one of
these plain phrases (a detail may follow a colon):

- ``"connection refused"``, ``"connect timed out"``, ``"connect failed: ..."``
- ``"timed out before the request was fully sent"``,
  ``"connection reset before the request was fully sent"``,
  ``"connection closed before the request was fully sent"``
- ``"read timed out after the request was sent"``
- ``"connection reset after sending"``
- ``"connection closed after sending, before any response"``
- ``"connection closed mid-response"``
- ``"invalid HTTP response: ..."`` (garbage or a protocol violation from the server)
- ``"server does not speak h2c: ..."`` (``h2-single-packet`` against an HTTP/1-only server)
- ``"stream reset by the server: ..."``, ``"connection closed by the server (GOAWAY): ..."``

``request_sent`` tells whether the whole request, final byte included, was handed to the
kernel: when it is False the receiver cannot have run the handler on it (a ``fail`` in the
history); an error with ``request_sent=True`` is an ``unknown``.

Only caller mistakes raise: a non-http URL or an unusable request (``ValueError``; a
bad URL is a :class:`simulator.errors.TargetError`), or bad parameters (``ValueError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence
from urllib.parse import urlsplit

import h11
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

from hookproof.simulator.errors import TargetError

__all__ = [
    "RaceMode",
    "RaceRequest",
    "RaceResponse",
    "race",
    "speaks_h2c",
    "clear_h2c_cache",
]

RaceMode = Literal["auto", "h1-last-byte", "h2-single-packet", "plain"]
_MODES: tuple[str, ...] = ("auto", "h1-last-byte", "h2-single-packet", "plain")

#: Bytes asked from the socket per read.
_READ_CHUNK = 65536
#: Seconds allowed for a graceful close before the socket is aborted.
_CLOSE_GRACE_S = 0.5
#: Headers that belong to one HTTP/1.1 hop and are never sent over HTTP/2 (RFC 9113 §8.2.2).
_H2_DROPPED_HEADERS = frozenset(
    {"connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"}
)
#: Framing headers the race computes itself.
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding"})
#: Opaque data of the warming PING of the single-packet release.
_PING_DATA = b"hkproof!"

# (host, port) -> answer of the h2c probe; only definite answers are cached.
_H2C_CACHE: dict[tuple[str, int], bool] = {}


@dataclass(frozen=True)
class RaceRequest:
    """One request of a burst.

    Attributes:
        method: HTTP method, e.g. ``"POST"``.
        path_query: request target, e.g. ``"/webhooks?x=1"``; must start with ``/``.
            An empty string means the path and query of the ``url`` given to :func:`race`.
        headers: header names and values. ``Host`` is added when absent; ``Content-Length``
            is always computed from ``body`` (any given ``Content-Length`` or
            ``Transfer-Encoding`` is replaced).
        body: the request body bytes (may be empty).
    """

    method: str
    path_query: str
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class RaceResponse:
    """What came back for one request of a burst.

    Attributes:
        status: HTTP status code, or None when no response head was read.
        body: the first ``read_cap_bytes`` bytes of the response body (possibly partial
            when ``error`` is set or ``truncated`` is True).
        error: None on a complete response, else a plain phrase (see the module doc).
        request_sent: True when the whole request, final byte included, was written.
        sent_at: wall-clock unix seconds when the final bytes were written (the release),
            or when the attempt stopped if the request was never fully sent.
        answered_at: wall-clock unix seconds when the response completed or the attempt
            ended in an error.
        truncated: True when the body was longer than ``read_cap_bytes`` and was cut.
    """

    status: int | None
    body: bytes
    error: str | None
    request_sent: bool
    sent_at: float
    answered_at: float
    truncated: bool = False


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class _Target:
    host: str  # for connect(): no brackets around IPv6
    port: int
    authority: str  # for Host / :authority
    default_target: str  # path?query of the URL, "/" when empty
    key: tuple[str, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.host.lower(), self.port))


def _parse_url(url: str) -> _Target:
    """Parse an ``http://`` URL.

    Raises:
        TargetError: any other scheme (``https`` included), no host, or a bad port.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https":
        raise TargetError(
            "race bursts use plain TCP and support only http:// URLs; "
            "https targets cannot be raced (no TLS support)",
            target=url,
        )
    if scheme != "http":
        raise TargetError(f"race bursts need an http:// URL, got scheme {scheme!r}", target=url)
    try:
        port = parts.port or 80
    except ValueError as exc:
        raise TargetError(f"bad port in URL: {exc}", target=url) from None
    host = parts.hostname
    if not host:
        raise TargetError("the URL has no host", target=url)
    authority = parts.netloc.rpartition("@")[2]
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return _Target(host=host, port=port, authority=authority, default_target=target)


# --------------------------------------------------------------------------- requests


@dataclass
class _Prepared:
    """A request turned into bytes (HTTP/1.1) and header lists (HTTP/2)."""

    method: str
    target: str
    h1_bytes: bytes
    h2_headers: list[tuple[bytes, bytes]]
    body: bytes


def _prepare(req: RaceRequest, tgt: _Target) -> _Prepared:
    """Validate one request and serialize it.

    Raises:
        ValueError: a request h11 refuses to write (bad method, target or header).
    """
    target = req.path_query or tgt.default_target
    if not target.startswith("/"):
        raise ValueError(f"path_query must start with '/', got {target!r}")
    headers: list[tuple[str, str]] = []
    has_host = False
    for name, value in req.headers.items():
        lname = name.lower()
        if lname in _FRAMING_HEADERS:
            continue
        if lname == "host":
            has_host = True
        headers.append((name, value))
    if not has_host:
        headers.insert(0, ("Host", tgt.authority))
    headers.append(("Content-Length", str(len(req.body))))
    conn = h11.Connection(h11.CLIENT)
    try:
        raw = conn.send(h11.Request(method=req.method, target=target, headers=headers)) or b""
        if req.body:
            raw += conn.send(h11.Data(data=req.body)) or b""
        raw += conn.send(h11.EndOfMessage()) or b""
    except (h11.LocalProtocolError, ValueError, TypeError) as exc:
        raise ValueError(f"cannot write request {req.method} {target!r}: {exc}") from None
    authority = next((v for n, v in headers if n.lower() == "host"), tgt.authority)
    h2_headers = [
        (b":method", req.method.encode("ascii")),
        (b":scheme", b"http"),
        (b":authority", authority.encode("latin-1")),
        (b":path", target.encode("ascii")),
    ]
    for name, value in headers:
        lname = name.lower()
        if lname in _H2_DROPPED_HEADERS:
            continue
        h2_headers.append((lname.encode("ascii"), value.encode("latin-1")))
    return _Prepared(req.method, target, raw, h2_headers, req.body)


# --------------------------------------------------------------------------- helpers


@dataclass
class _Outcome:
    """Mutable result of one request while the burst runs."""

    status: int | None = None
    body: bytearray = field(default_factory=bytearray)
    error: str | None = None
    request_sent: bool = False
    sent_at: float = 0.0
    answered_at: float = 0.0
    truncated: bool = False
    done: bool = False

    def finish(self, error: str | None = None) -> None:
        """Mark the request finished (first call wins), with an optional error phrase."""
        if self.done:
            return
        self.done = True
        self.error = error
        self.answered_at = time.time()
        if not self.sent_at:
            self.sent_at = self.answered_at

    def freeze(self) -> RaceResponse:
        if not self.done:
            self.finish("read timed out after the request was sent")
        return RaceResponse(
            status=self.status,
            body=bytes(self.body),
            error=self.error,
            request_sent=self.request_sent,
            sent_at=self.sent_at,
            answered_at=self.answered_at,
            truncated=self.truncated,
        )


def _connect_error(exc: BaseException) -> str:
    """Plain phrase for a failed connect."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError):
        return "connect timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return f"connect failed: {exc.strerror.lower()}"
    return f"connect failed: {exc!r}"


def _presend_error(exc: BaseException) -> str:
    """Plain phrase for a failure before the request was fully written."""
    if isinstance(exc, TimeoutError):
        return "timed out before the request was fully sent"
    if isinstance(exc, ConnectionResetError):
        return "connection reset before the request was fully sent"
    return "connection closed before the request was fully sent"


async def _open(tgt: _Target, deadline: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a TCP connection with TCP_NODELAY before the loop-time ``deadline``.

    Raises:
        OSError, TimeoutError: the connection could not be made in time.
    """
    async with asyncio.timeout_at(deadline):
        reader, writer = await asyncio.open_connection(tgt.host, tgt.port, limit=_READ_CHUNK * 2)
    _set_nodelay(writer, True)
    return reader, writer


def _set_nodelay(writer: asyncio.StreamWriter, on: bool) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if on else 0)


async def _close(writer: asyncio.StreamWriter | None, *, abort: bool = False) -> None:
    """Close a connection without ever blocking for long; abort when asked or when stuck."""
    if writer is None:
        return
    transport = writer.transport
    if abort:
        transport.abort()
    else:
        writer.close()
    try:
        async with asyncio.timeout(_CLOSE_GRACE_S):
            await writer.wait_closed()
    except (TimeoutError, OSError, asyncio.IncompleteReadError):
        transport.abort()
    except asyncio.CancelledError:
        transport.abort()
        raise


def _write_now(writer: asyncio.StreamWriter, data: bytes) -> bool:
    """Write ``data`` without awaiting; True when the transport was open before and after.

    asyncio hands the bytes to the kernel at once when its buffer is empty; a send error
    closes the transport, which this reports as False.
    """
    if writer.transport.is_closing():
        return False
    try:
        writer.write(data)
    except (OSError, RuntimeError):
        return False
    return not writer.transport.is_closing()


# --------------------------------------------------------------------------- HTTP/1.1


@dataclass
class _H1Conn:
    prepared: _Prepared
    outcome: _Outcome
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    tail: bytes = b""


async def _h1_presend(c: _H1Conn, tgt: _Target, deadline: float, split: bool) -> None:
    """Connect and write the request, all but the final byte when ``split``."""
    try:
        c.reader, c.writer = await _open(tgt, deadline)
    except (OSError, TimeoutError) as exc:
        c.outcome.finish(_connect_error(exc))
        return
    raw = c.prepared.h1_bytes
    head, c.tail = (raw[:-1], raw[-1:]) if split else (raw, b"")
    try:
        async with asyncio.timeout_at(deadline):
            c.writer.write(head)
            await c.writer.drain()
    except (OSError, TimeoutError) as exc:
        c.outcome.finish(_presend_error(exc))
        return
    if not split:
        c.outcome.request_sent = True
        c.outcome.sent_at = time.time()


def _h1_release(c: _H1Conn) -> None:
    """Write the withheld final byte (no await: callers loop over all connections)."""
    if c.outcome.done or c.writer is None:
        return
    if _write_now(c.writer, c.tail):
        c.outcome.request_sent = True
        c.outcome.sent_at = time.time()
    else:
        c.outcome.finish("connection closed before the request was fully sent")


async def _h1_read(c: _H1Conn, timeout_s: float, read_cap: int) -> None:
    """Finish sending (drain), then read one response with h11 within ``timeout_s``."""
    out = c.outcome
    if out.done or c.reader is None or c.writer is None:
        return
    conn = h11.Connection(h11.CLIENT)
    # Put h11 in the state "our request was sent" so it accepts the response.
    conn.send(h11.Request(method=c.prepared.method, target=c.prepared.target,
                          headers=[("Host", "x"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    got_bytes = False
    got_eof = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    try:
        async with asyncio.timeout_at(deadline):
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                # The last byte is tiny; a failed drain means the peer went away after the
                # byte was handed to the kernel. Reading below reports what happened.
                await c.writer.drain()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await c.reader.read(_READ_CHUNK)
                    if data:
                        got_bytes = True
                    else:
                        got_eof = True
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    out.status = event.status_code
                elif isinstance(event, h11.InformationalResponse):
                    continue
                elif isinstance(event, h11.Data):
                    room = read_cap - len(out.body)
                    if len(event.data) > room:
                        out.body += event.data[:room]
                        out.truncated = True
                        out.finish()
                        return
                    out.body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    out.finish()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    out.finish("connection closed after sending, before any response")
                    return
    except TimeoutError:
        out.finish("read timed out after the request was sent")
    except ConnectionResetError:
        out.finish("connection reset after sending")
    except OSError as exc:
        out.finish(f"connection reset after sending: {exc.strerror or exc!r}")
    except h11.RemoteProtocolError as exc:
        if got_eof and out.status is not None:
            out.finish("connection closed mid-response")
        elif got_eof and not got_bytes:
            out.finish("connection closed after sending, before any response")
        else:
            out.finish(f"invalid HTTP response: {exc}")


async def _h1_burst(
    tgt: _Target,
    prepared: Sequence[_Prepared],
    *,
    gated: bool,
    timeout_s: float,
    read_cap: int,
    gate_wait_s: float,
) -> list[RaceResponse]:
    """Run an HTTP/1.1 burst: last-byte sync when ``gated``, else plain concurrent requests."""
    loop = asyncio.get_running_loop()
    conns = [_H1Conn(p, _Outcome()) for p in prepared]
    try:
        deadline = loop.time() + timeout_s
        if gated:
            await asyncio.gather(*(_h1_presend(c, tgt, deadline, True) for c in conns))
            if any(not c.outcome.done for c in conns):
                await asyncio.sleep(gate_wait_s)
            for c in conns:  # the release: back to back, no await in between
                _h1_release(c)
            await asyncio.gather(*(_h1_read(c, timeout_s, read_cap) for c in conns))
        else:

            async def one(c: _H1Conn) -> None:
                await _h1_presend(c, tgt, deadline, False)
                await _h1_read(c, timeout_s, read_cap)

            await asyncio.gather(*(one(c) for c in conns))
    finally:
        await asyncio.gather(
            *(_close(c.writer, abort=c.outcome.truncated or c.outcome.error is not None)
              for c in conns),
            return_exceptions=True,
        )
    return [c.outcome.freeze() for c in conns]


# --------------------------------------------------------------------------- HTTP/2


class _H2Gone(Exception):
    """The HTTP/2 connection can carry nothing more; ``phrase`` says why."""

    def __init__(self, phrase: str) -> None:
        super().__init__(phrase)
        self.phrase = phrase


@dataclass
class _H2Stream:
    prepared: _Prepared
    outcome: _Outcome
    stream_id: int = 0


class _H2Session:
    """One prior-knowledge h2c client connection driven by the ``h2`` state machine."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 read_cap: int) -> None:
        self.reader = reader
        self.writer = writer
        self.read_cap = read_cap
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        codes = h2.settings.SettingCodes
        self.conn.local_settings = h2.settings.Settings(
            client=True,
            initial_values={
                codes.MAX_CONCURRENT_STREAMS: 100,
                codes.MAX_HEADER_LIST_SIZE: self.conn.DEFAULT_MAX_HEADER_LIST_SIZE,
                codes.ENABLE_PUSH: 0,
            },
        )
        self.streams: dict[int, _H2Stream] = {}
        self.got_settings = False
        self.head = bytearray()  # the first 9 bytes from the server: a SETTINGS frame header

    def flush(self) -> None:
        """Hand pending frames to the transport (no await)."""
        data = self.conn.data_to_send()
        if data and not _write_now(self.writer, data):
            raise _H2Gone("connection closed")

    async def start(self) -> None:
        """Send the preface and SETTINGS; read until the server's SETTINGS arrive.

        Raises:
            _H2Gone: the server closed, reset, or answered with something that is not h2.
        """
        self.conn.initiate_connection()
        self.flush()
        while not self.got_settings:
            await self.pump()

    async def pump(self) -> None:
        """Read one chunk, feed it to h2, apply the events, flush replies.

        Raises:
            _H2Gone: EOF, reset, or bytes that are not valid HTTP/2.
        """
        try:
            data = await self.reader.read(_READ_CHUNK)
        except ConnectionResetError:
            raise _H2Gone("connection reset") from None
        except OSError as exc:
            raise _H2Gone(f"connection reset: {exc.strerror or exc!r}") from None
        if not data:
            raise _H2Gone("connection closed")
        if len(self.head) < 9:
            self.head += data[: 9 - len(self.head)]
            if not _could_be_settings_header(bytes(self.head)):
                what = "it answered in HTTP/1" if self.head.startswith(b"HTTP/"[: len(self.head)]) \
                    else "its first bytes are not an HTTP/2 SETTINGS frame"
                raise _H2Gone(f"server does not speak h2c: {what}")
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
            if not self.got_settings:
                raise _H2Gone(f"server does not speak h2c: {detail}") from None
            raise _H2Gone(f"invalid HTTP response: {detail}") from None
        for event in events:
            self._apply(event)
        with contextlib.suppress(_H2Gone):
            self.flush()

    def _apply(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RemoteSettingsChanged):
            self.got_settings = True
            return
        if isinstance(event, h2.events.ConnectionTerminated):
            code = _code_name(event.error_code)
            last = event.last_stream_id
            for sid, st in self.streams.items():
                if not st.outcome.done and (last is None or sid > last):
                    st.outcome.finish(f"connection closed by the server (GOAWAY): {code}, "
                                      "stream not processed")
            raise _H2Gone(f"connection closed by the server (GOAWAY): {code}")
        sid = getattr(event, "stream_id", None)
        st = self.streams.get(sid) if sid else None
        if st is None:
            return
        out = st.outcome
        if isinstance(event, h2.events.ResponseReceived):
            for name, value in event.headers:
                if name == b":status":
                    try:
                        out.status = int(value)
                    except ValueError:
                        out.finish(f"invalid HTTP response: bad :status {value!r}")
        elif isinstance(event, h2.events.InformationalResponseReceived):
            pass
        elif isinstance(event, h2.events.DataReceived):
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if out.done:
                return
            room = self.read_cap - len(out.body)
            if len(event.data) > room:
                out.body += event.data[:room]
                out.truncated = True
                out.finish()
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.conn.reset_stream(event.stream_id, h2.errors.ErrorCodes.CANCEL)
            else:
                out.body += event.data
        elif isinstance(event, h2.events.StreamEnded):
            if out.status is None:
                out.finish("invalid HTTP response: stream ended without a status")
            else:
                out.finish()
        elif isinstance(event, h2.events.StreamReset):
            out.finish(f"stream reset by the server: {_code_name(event.error_code)}")

    def cancel(self, st: _H2Stream) -> None:
        """Reset a stream that is still open on our side (RST_STREAM CANCEL), if any."""
        if not st.stream_id:
            return
        with contextlib.suppress(h2.exceptions.ProtocolError, KeyError):
            self.conn.reset_stream(st.stream_id, h2.errors.ErrorCodes.CANCEL)

    async def send_body(self, st: _H2Stream, data: bytes, deadline: float) -> None:
        """Send ``data`` on a stream (no END_STREAM), waiting for flow-control credit.

        Raises:
            _H2Gone, TimeoutError: the connection died, or no credit came before ``deadline``.
        """
        sid = st.stream_id
        view = memoryview(data)
        while view:
            if st.outcome.done:  # reset or answered early: stop sending
                return
            room = min(self.conn.local_flow_control_window(sid),
                       self.conn.max_outbound_frame_size, len(view))
            if room <= 0:
                self.flush()
                async with asyncio.timeout_at(deadline):
                    await self.pump()
                continue
            self.conn.send_data(sid, bytes(view[:room]))
            view = view[room:]

    async def ensure_credit(self, finals: list[tuple[_H2Stream, bytes]], deadline: float) -> None:
        """Wait until every withheld final frame fits the flow-control windows."""

        def short() -> bool:
            need = sum(len(b) for st, b in finals if not st.outcome.done)
            if need > self.conn.outbound_flow_control_window:
                return True
            return any(
                len(b) > self.conn.local_flow_control_window(st.stream_id)
                for st, b in finals
                if not st.outcome.done
            )

        while short():
            self.flush()
            async with asyncio.timeout_at(deadline):
                await self.pump()


def _could_be_settings_header(head: bytes) -> bool:
    """True while ``head`` (up to 9 bytes) can still be the header of a SETTINGS frame.

    A server's connection preface is a SETTINGS frame: type 0x4, stream 0, a length that is
    a multiple of 6 and at most 16,384 (RFC 9113 §3.4, §6.5).
    """
    if len(head) >= 3:
        length = int.from_bytes(head[:3], "big")
        if length % 6 or length > 16384:
            return False
    if len(head) >= 4 and head[3] != 0x4:
        return False
    if len(head) >= 9 and int.from_bytes(head[5:9], "big") & 0x7FFFFFFF:
        return False
    return True


def _code_name(code: object) -> str:
    try:
        return h2.errors.ErrorCodes(int(code)).name  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return f"error code {code}"


async def _h2_packet(
    sess: _H2Session,
    batch: list[_H2Stream],
    *,
    timeout_s: float,
    gate_wait_s: float,
) -> None:
    """Pre-send one packet's worth of streams, release them together, read the answers.

    Raises:
        _H2Gone: the connection died; unfinished streams must be failed by the caller.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    _set_nodelay(sess.writer, True)
    finals: list[tuple[_H2Stream, bytes]] = []
    try:
        for st in batch:
            body = st.prepared.body
            try:
                st.stream_id = sess.conn.get_next_available_stream_id()
                sess.streams[st.stream_id] = st
                sess.conn.send_headers(st.stream_id, st.prepared.h2_headers, end_stream=False)
                await sess.send_body(st, body[:-1], deadline)
            except h2.exceptions.ProtocolError as exc:
                # e.g. a header HTTP/2 forbids, or the server reset the stream meanwhile.
                st.outcome.finish(f"stream failed before the request was fully sent: "
                                  f"{type(exc).__name__}")
                continue
            finals.append((st, body[-1:]))
        sess.flush()
        async with asyncio.timeout_at(deadline):
            await sess.writer.drain()
        await sess.ensure_credit(finals, deadline)
    except TimeoutError:
        for st in batch:
            st.outcome.finish("timed out before the request was fully sent")
        raise _H2Gone("timed out before the request was fully sent") from None
    except (ConnectionError, OSError):
        raise _H2Gone("connection closed") from None

    await asyncio.sleep(gate_wait_s)

    # The release: Nagle on, a PING that leaves at once, then every final frame in one write.
    _set_nodelay(sess.writer, False)
    sess.conn.ping(_PING_DATA)
    sess.flush()
    releasing: list[_H2Stream] = []
    for st, last in finals:
        if st.outcome.done:  # answered or reset before the release: never fully sent
            sess.cancel(st)
            continue
        try:
            sess.conn.send_data(st.stream_id, last, end_stream=True)
        except h2.exceptions.StreamClosedError:
            st.outcome.finish("stream reset by the server before the request was fully sent")
            continue
        releasing.append(st)
    data = sess.conn.data_to_send()
    if releasing and _write_now(sess.writer, data):
        now = time.time()
        for st in releasing:
            st.outcome.request_sent = True
            st.outcome.sent_at = now
    elif releasing:
        raise _H2Gone("connection closed")

    deadline = loop.time() + timeout_s
    try:
        async with asyncio.timeout_at(deadline):
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                await sess.writer.drain()
            while any(not st.outcome.done for st in batch):
                await sess.pump()
    except TimeoutError:
        for st in batch:
            if not st.outcome.done:
                st.outcome.finish("read timed out after the request was sent")
                sess.cancel(st)  # frees its slot for the next packet
        with contextlib.suppress(_H2Gone):
            sess.flush()


async def _h2_burst(
    tgt: _Target,
    prepared: Sequence[_Prepared],
    *,
    timeout_s: float,
    read_cap: int,
    gate_wait_s: float,
) -> list[RaceResponse]:
    """Run a single-packet HTTP/2 burst over one prior-knowledge h2c connection."""
    loop = asyncio.get_running_loop()
    streams = [_H2Stream(p, _Outcome()) for p in prepared]
    writer: asyncio.StreamWriter | None = None
    clean = False
    try:
        deadline = loop.time() + timeout_s
        try:
            reader, writer = await _open(tgt, deadline)
        except (OSError, TimeoutError) as exc:
            for st in streams:
                st.outcome.finish(_connect_error(exc))
            return [st.outcome.freeze() for st in streams]
        sess = _H2Session(reader, writer, read_cap)
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    await sess.start()
            except TimeoutError:
                raise _H2Gone("server does not speak h2c: no SETTINGS before the timeout") from None
            except _H2Gone as gone:
                if not gone.phrase.startswith("server does not speak h2c"):
                    raise _H2Gone(f"server does not speak h2c: {gone.phrase}") from None
                raise
            pending = list(streams)
            while pending:
                limit = sess.conn.remote_settings.max_concurrent_streams
                room = max(1, limit - sess.conn.open_outbound_streams)
                batch, pending = pending[:room], pending[room:]
                await _h2_packet(sess, batch, timeout_s=timeout_s, gate_wait_s=gate_wait_s)
            clean = True
            with contextlib.suppress(h2.exceptions.ProtocolError, _H2Gone):
                sess.conn.close_connection()
                sess.flush()
        except _H2Gone as gone:
            for st in streams:
                if st.outcome.done:
                    continue
                if not st.outcome.request_sent:
                    phrase = gone.phrase
                    if phrase in ("connection closed", "connection reset"):
                        phrase = f"{phrase} before the request was fully sent"
                    st.outcome.finish(phrase)
                elif gone.phrase == "connection reset":
                    st.outcome.finish("connection reset after sending")
                elif gone.phrase == "connection closed":
                    st.outcome.finish(
                        "connection closed mid-response" if st.outcome.status is not None
                        else "connection closed after sending, before any response"
                    )
                else:
                    st.outcome.finish(gone.phrase)
    finally:
        await _close(writer, abort=not clean)
    return [st.outcome.freeze() for st in streams]


# --------------------------------------------------------------------------- public API


def clear_h2c_cache() -> None:
    """Forget every cached :func:`speaks_h2c` answer."""
    _H2C_CACHE.clear()


async def speaks_h2c(url: str, timeout_s: float) -> bool:
    """Tell whether the server behind ``url`` speaks HTTP/2 cleartext with prior knowledge.

    Opens one connection, sends the HTTP/2 preface and SETTINGS, and answers True when a
    valid SETTINGS frame comes back within ``timeout_s`` seconds. Definite answers are
    cached per host:port (see :func:`clear_h2c_cache`); a refused or timed-out probe
    returns False and is not cached.

    Raises:
        TargetError (ValueError): not an ``http://`` URL.
        ValueError: ``timeout_s`` is not positive.
    """
    tgt = _parse_url(url)
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    cached = _H2C_CACHE.get(tgt.key)
    if cached is not None:
        return cached
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    writer: asyncio.StreamWriter | None = None
    answer: bool | None = None
    try:
        reader, writer = await _open(tgt, deadline)
        sess = _H2Session(reader, writer, 0)
        async with asyncio.timeout_at(deadline):
            await sess.start()
        answer = True
        with contextlib.suppress(h2.exceptions.ProtocolError, _H2Gone):
            sess.conn.close_connection()
            sess.flush()
    except _H2Gone as gone:
        # Definitely not h2 when the server sent bytes h2 rejects, or closed on our preface.
        answer = False if (gone.phrase.startswith("server does not speak h2c")
                           or gone.phrase == "connection closed") else None
    except (OSError, TimeoutError):
        answer = None
    finally:
        await _close(writer, abort=answer is not True)
    if answer is not None:
        _H2C_CACHE[tgt.key] = answer
    return bool(answer)


async def race(
    url: str,
    requests: Sequence[RaceRequest],
    *,
    mode: RaceMode = "auto",
    timeout_s: float,
    read_cap_bytes: int = 65536,
    gate_wait_s: float = 0.1,
) -> list[RaceResponse]:
    """Send ``requests`` to ``url`` so that they reach the server at the same instant.

    Args:
        url: ``http://host[:port][/path?query]``; the path is used for requests whose
            ``path_query`` is empty.
        requests: the burst (usually N copies of one signed delivery).
        mode: ``"h1-last-byte"``, ``"h2-single-packet"``, ``"plain"`` or ``"auto"`` (h2
            single-packet when :func:`speaks_h2c`, else h1 last-byte). See the module doc.
        timeout_s: seconds; bounds connect + pre-send together, and separately the wait
            for the answers after each release. In ``auto`` mode the first contact with a
            host:port adds the h2c probe (at most ``timeout_s`` more).
        read_cap_bytes: bytes of each response body kept; a longer body is truncated.
        gate_wait_s: seconds between the pre-send and the release of the final bytes.

    Returns:
        One :class:`RaceResponse` per request, in the order of ``requests``. Network and
        protocol failures are reported in ``error``, never raised.

    Raises:
        TargetError (ValueError): not an ``http://`` URL (``https`` is not supported).
        ValueError: unknown mode, a non-positive timeout, a negative cap or gate wait, or
            a request that cannot be written as HTTP/1.1.
    """
    if mode not in _MODES:
        raise ValueError(f"unknown race mode {mode!r}; expected one of {', '.join(_MODES)}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    if read_cap_bytes < 0:
        raise ValueError(f"read_cap_bytes must be >= 0, got {read_cap_bytes!r}")
    if not gate_wait_s >= 0:
        raise ValueError(f"gate_wait_s must be >= 0 seconds, got {gate_wait_s!r}")
    tgt = _parse_url(url)
    prepared = [_prepare(r, tgt) for r in requests]
    if not prepared:
        return []
    if mode == "auto":
        mode = "h2-single-packet" if await speaks_h2c(url, timeout_s) else "h1-last-byte"
    if mode == "h2-single-packet":
        return await _h2_burst(tgt, prepared, timeout_s=timeout_s, read_cap=read_cap_bytes,
                               gate_wait_s=gate_wait_s)
    return await _h1_burst(tgt, prepared, gated=(mode == "h1-last-byte"), timeout_s=timeout_s,
                           read_cap=read_cap_bytes, gate_wait_s=gate_wait_s)
