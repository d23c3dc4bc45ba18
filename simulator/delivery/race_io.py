"""What both race techniques share: requests, targets, per-request outcomes, sockets.

`race_h1` (HTTP/1.1 last-byte sync) and `race_h2` (HTTP/2 single packet) build on it;
`race` is the public entry. Each request's `_Outcome` records what was observed (the
answer's first bytes, status, body up to the cap, how the exchange broke) and freezes
into a `RaceResponse` whose `observed` the attempt core grades like any other attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, SupportsIndex
from urllib.parse import urlsplit

import h11

from hookproof.simulator.delivery.attempt_core import (
    ANSWER_START_BYTES,
    Broke,
    Observed,
    grade,
)
from hookproof.simulator.errors import TargetError

#: What a burst's release waits for beside its gate wait (`race.race`'s `gate`).
Gate = Callable[[], Awaitable[None]]


class OnceGate:
    """A `Gate` run at most once however often it is awaited (the release awaits it, and the
    burst's end again, for a burst that never reached its release)."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._task: asyncio.Future[None] | None = None

    async def __call__(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._gate())
        await asyncio.shield(self._task)


async def gate_open(gate_wait_s: float, gate: Gate | None) -> None:
    """Wait `gate_wait_s` seconds and, when given, `gate()` too, side by side."""
    if gate is None:
        await asyncio.sleep(gate_wait_s)
    else:
        await asyncio.gather(asyncio.sleep(gate_wait_s), gate())

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
        error: None on a complete response, else why not, in the attempt core's plain
            words (`attempt_core.grade`'s reason).
        request_sent: True when the whole request, final byte included, was written.
        sent_at: wall-clock unix seconds when the final bytes were written (the release),
            or when the attempt stopped if the request was never fully sent.
        answered_at: wall-clock unix seconds when the response completed or the attempt
            ended in an error.
        truncated: True when the body was longer than ``read_cap_bytes`` and was cut.
        observed: what was observed, for `attempt_core.grade` (which grades a truncated
            answer as abandoned, never as acknowledged).
    """

    status: int | None
    body: bytes
    error: str | None
    request_sent: bool
    sent_at: float
    answered_at: float
    truncated: bool = False
    observed: Observed = field(default_factory=lambda: Observed(False), compare=False, repr=False)


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


class _AnySuccess:
    """2xx is success: the rule `RaceResponse.error` is worded under (the reason of a
    broken exchange does not depend on it)."""

    def is_success(self, status: int) -> bool:
        return 200 <= status < 300


@dataclass
class _Outcome:
    """Mutable result of one request while the burst runs."""

    status: int | None = None
    body: bytearray = field(default_factory=bytearray)
    start: bytearray = field(default_factory=bytearray)
    broke: Broke | None = None
    detail: str | None = None
    request_sent: bool = False
    sent_at: float = 0.0
    answered_at: float = 0.0
    truncated: bool = False
    done: bool = False

    def received(self, data: bytes) -> None:
        """Note bytes of the answer as they came off the wire (the first ones are kept)."""
        room = ANSWER_START_BYTES - len(self.start)
        if room > 0:
            self.start += data[:room]

    def finish(self, broke: Broke | None = None, detail: str | None = None) -> None:
        """Mark the request finished (first call wins), with how it broke, if it did."""
        if self.done:
            return
        self.done = True
        self.broke = broke
        self.detail = detail
        self.answered_at = time.time()
        if not self.sent_at:
            self.sent_at = self.answered_at

    def freeze(self, *, timeout_s: float, read_cap: int) -> RaceResponse:
        if not self.done:
            self.finish(Broke.TIMEOUT)
        observed = Observed(self.request_sent, self.status, bytes(self.body), over_cap=self.truncated,
                            answer_start=bytes(self.start), broke=self.broke, detail=self.detail, timeout_s=timeout_s,
                            read_cap_bytes=read_cap)
        return RaceResponse(
            status=self.status,
            body=observed.body,
            error=grade(observed, _AnySuccess()).reason if self.broke is not None else None,
            request_sent=self.request_sent,
            sent_at=self.sent_at,
            answered_at=self.answered_at,
            truncated=self.truncated,
            observed=observed,
        )


def _connect_error(exc: BaseException) -> tuple[Broke, str | None]:
    """How a failed connect broke."""
    if isinstance(exc, ConnectionRefusedError):
        return Broke.REFUSED, None
    if isinstance(exc, TimeoutError):
        return Broke.CONNECT_TIMEOUT, None
    if isinstance(exc, OSError) and exc.strerror:
        return Broke.CONNECT_FAILED, exc.strerror
    return Broke.CONNECT_FAILED, type(exc).__name__


def _presend_error(exc: BaseException) -> Broke:
    """How an exchange broke before the request was fully written."""
    if isinstance(exc, TimeoutError):
        return Broke.TIMEOUT
    if isinstance(exc, ConnectionResetError):
        return Broke.RESET
    return Broke.CLOSED


class _Reader(asyncio.StreamReader):
    """A stream reader that remembers whether the receiver has sent anything or closed."""

    heard: bool = False

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.heard = True
        super().feed_data(data)

    def feed_eof(self) -> None:
        self.heard = True
        super().feed_eof()


async def _open(tgt: _Target, deadline: float) -> tuple[_Reader, asyncio.StreamWriter]:
    """Open a TCP connection with TCP_NODELAY before the loop-time ``deadline``.

    What `asyncio.open_connection` does, with a `_Reader`.

    Raises:
        OSError, TimeoutError: the connection could not be made in time.
    """
    loop = asyncio.get_running_loop()
    reader = _Reader(limit=_READ_CHUNK * 2, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    async with asyncio.timeout_at(deadline):
        transport, _ = await loop.create_connection(lambda: protocol, tgt.host, tgt.port)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
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


