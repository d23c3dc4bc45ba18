"""httpx's transport API over an aiohttp session: how URL targets are reached.

`AiohttpTransport` is a thin `httpx.AsyncBaseTransport`: each `httpx.Request` becomes
one aiohttp request (its method, URL, headers with their names' case kept, and body
stream; ``Host`` and
``Content-Length`` are set from the URL and the body when the request does not carry
them) and the answer comes back as an `httpx.Response`: the body's bytes when it came
whole with the head (the connection goes back to the pool at once), else a stream of
it. It runs on every attempt, so the conversion is kept to what a webhook provider
sends: the URL is converted once, timeouts once per value, and nothing a provider does
not do happens (no redirects, no cookies, no decompression, no proxies or credentials
from the environment).

Request extensions it honours:

- ``timeout``: httpx's timeouts. ``pool`` bounds acquiring a connection, pool wait and
  connect together (aiohttp's ``connect``), ``connect`` the socket connect, ``read``
  each read of the answer. aiohttp has no write timeout: a caller bounds the whole
  exchange with its own deadline.
- ``trace``: awaited as ``trace("http11.send_request_headers.started", {"request": ...})``
  once the request has its connection (opened or taken from the pool), the event
  httpcore reports at that moment; a caller starts its answer deadline there.
- ``hookproof.answer_start`` (`ANSWER_START`): a ``bytearray`` the transport fills with
  the first bytes the receiver sent for this request (at most
  `attempt_core.ANSWER_START_BYTES`), read off the socket before any parser: what a
  caller names an answer by when it is not HTTP or stops half-way.

Kept-alive connections: a connection whose answer said ``Connection: close`` is never
reused (aiohttp closes it). A pooled connection the receiver closed while it was idle
is not charged to the receiver: when a request on a reused connection fails with a
close or a reset before one byte of an answer came, the receiver's side had closed
before the request reached any handler, and the request is sent once more on a fresh
connection, as browsers do (Chromium's ``ShouldResendRequest``) and aiohttp does for
idempotent methods.

aiohttp's exceptions become httpx's at this one boundary, most specific first, chained
with ``from`` so the cause stays readable (`_ERRORS`):

    ConnectionTimeoutError                         -> httpx.ConnectTimeout
    ClientConnectorError (refused, DNS, TLS...)    -> httpx.ConnectError
    ServerTimeoutError (a read timed out)          -> httpx.ReadTimeout
    ClientPayloadError (body broken mid-way)       -> httpx.ReadError
    ServerDisconnectedError, ClientResponseError,
      HttpProcessingError (not HTTP)               -> httpx.RemoteProtocolError
    ClientConnectionError, OSError (reset, broken) -> httpx.ReadError
    InvalidURL, NonHttpUrlClientError              -> httpx.UnsupportedProtocol
    any other ClientError                          -> httpx.TransportError
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import functools
import inspect
import sys
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence, cast

import aiohttp
import httpx
from aiohttp import hdrs, http_exceptions
from aiohttp.client_proto import ResponseHandler
from aiohttp.helpers import EMPTY_BODY_METHODS, TimerNoop
from aiohttp.http_writer import StreamWriter
from aiohttp.payload import BytesPayload
from multidict import CIMultiDict, istr
from yarl import URL

from hookproof.simulator.delivery.attempt_core import ANSWER_START_BYTES

#: The event reported through the ``trace`` extension once a request has its connection.
CONNECTED_EVENT = "http11.send_request_headers.started"
#: Headers aiohttp would add of its own that a provider's request does not carry: its
#: ``User-Agent`` (``Python/3.x aiohttp/…``), ``Accept`` (``*/*``) and ``Accept-Encoding``
#: (``gzip, deflate``); a profile's own are sent as given, and one without them sends none
#: (as the race and the storm's senders do).
NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding")
#: The request extension the first bytes of the answer are written into (a ``bytearray``).
ANSWER_START = "hookproof.answer_start"

Trace = Callable[[str, Mapping[str, Any]], Awaitable[None]]

#: aiohttp exception -> the httpx exception raised from it, most specific first.
_ERRORS: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ClientPayloadError, httpx.ReadError),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),
    (http_exceptions.HttpProcessingError, httpx.RemoteProtocolError),
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    (aiohttp.NonHttpUrlClientError, httpx.UnsupportedProtocol),
    (aiohttp.ClientConnectionError, httpx.ReadError),
    (TimeoutError, httpx.ReadTimeout),
    (OSError, httpx.ReadError),
    (aiohttp.ClientError, httpx.TransportError),
)
_MAPPED = tuple(source for source, _ in _ERRORS)
#: The exceptions `httpx_error` maps (what a caller of `AiohttpTransport.open` catches to map).
MAPPED_ERRORS: tuple[type[BaseException], ...] = _MAPPED

#: Errors of a request that may have met a connection the receiver closed while idle.
_STALE = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, ConnectionResetError, BrokenPipeError)
_STALE_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED, None})


class WireExchange:
    """One exchange as `_Connector` and `_Protocol` see it: its trace (httpx's, awaited
    once the request has its connection), its request, where the answer's first bytes
    go, whether its connection came from the pool, and whether any byte of an answer
    came on it. A caller that keeps its own state of the exchange may pass a subclass to
    `AiohttpTransport.open` (its `connected_now` called at that moment), so that one
    object per exchange serves both."""

    __slots__ = ("answered", "request", "reused", "start", "trace")

    def __init__(self, start: bytearray | None = None, trace: Trace | None = None,
                 request: httpx.Request | None = None) -> None:
        self.trace = trace
        self.request = request
        self.start = start
        self.reused = False
        self.answered = False

    def connected_now(self) -> None:
        """Called once the request has its connection (opened or taken from the pool),
        before `trace` is awaited; nothing here."""


#: The exchange running in the current task (read by `_Connector`).
_CURRENT: contextvars.ContextVar[WireExchange | None] = contextvars.ContextVar("hookproof_aiohttp_exchange", default=None)


#: aiohttp's own `data_received`, called by `_Protocol` after noting what it needs.
_data_received = ResponseHandler.data_received


class _Protocol(ResponseHandler):
    """aiohttp's response protocol, noting for the exchange it serves whether any byte came
    and the first bytes themselves, before aiohttp's parser reads them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exchange: WireExchange | None = None
        self.used = False

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is not None:
            exchange.answered = True
            start = exchange.start
            if start is not None and len(start) < ANSWER_START_BYTES:
                start += data[:ANSWER_START_BYTES - len(start)]
        _data_received(self, data)  # ResponseHandler's, without a super() object per chunk


def httpx_error(exc: BaseException) -> httpx.TransportError:
    """The httpx exception `exc` (one of aiohttp's, or an OSError) is raised as."""
    for source, target in _ERRORS:
        if isinstance(exc, source):
            return target(str(exc) or type(exc).__name__)
    raise TypeError(f"{type(exc).__name__} is not a transport error")  # pragma: no cover


def _names_as_given(headers: httpx.Headers) -> list[tuple[str, str]]:
    """`headers` with their names in the case they were given (``Stripe-Signature``, as
    the provider sends it; httpx's `multi_items` would lowercase them, and a receiver
    reading headers case-sensitively would then fail only under test)."""
    encoding = headers.encoding
    return [(name.decode(encoding), value.decode(encoding)) for name, value in headers.raw]


def _http_version(version: aiohttp.HttpVersion | None) -> bytes:
    if version == aiohttp.HttpVersion11 or version is None:
        return b"HTTP/1.1"
    return f"HTTP/{version.major}.{version.minor}".encode()


#: The headers aiohttp's request would add of its own (`ClientRequest.update_auto_headers`):
#: its ``DEFAULT_HEADERS`` and ``User-Agent``.
_AUTO_HEADERS = frozenset(istr(name) for name in (*aiohttp.ClientRequest.DEFAULT_HEADERS, "User-Agent"))
#: `NO_AUTO_HEADERS` as the session hands it to each request, and as each request keeps it
#: (`_Request`): made once, never changed.
_NO_AUTO = frozenset(istr(name) for name in NO_AUTO_HEADERS)
_SKIPPED: CIMultiDict[None] = CIMultiDict((name, None) for name in sorted(NO_AUTO_HEADERS))
#: True when `NO_AUTO_HEADERS` skips every header aiohttp adds of its own, and its request
#: keeps its skip set where `_Request` puts it (``_skip_auto_headers``, read through the
#: ``skip_auto_headers`` property: aiohttp 3.10 on).
_SKIPS_EVERY_AUTO_HEADER = (_AUTO_HEADERS <= _NO_AUTO and "_skip_auto_headers" in vars(aiohttp.ClientRequest)
                            and isinstance(vars(aiohttp.ClientRequest).get("skip_auto_headers"), property))


#: Bytes of a request body `_Request.send` writes in the sending task at most: below
#: aiohttp's own write buffer limit (`StreamWriter.write`'s ``LIMIT``, 64 KiB), so the
#: headers and the body go to the socket's transport without waiting for it to drain.
INLINE_BODY_BYTES = 32 * 1024
#: True when `_Request.send` may write a small body in the sending task: on Python before
#: 3.12, where aiohttp starts a task per request to write the body (3.12 on, it starts it
#: eagerly, which writes it at once as here), and on an aiohttp whose request and
#: response `send` makes as `_Request.send` does (the response told that the request was
#: sent by its ``writer=None`` and given the ``stream_writer``; an upload tracker per
#: request: aiohttp 3.14).
_INLINE_SEND = (sys.version_info < (3, 12)
                and "stream_writer" in inspect.signature(aiohttp.ClientResponse.__init__).parameters
                and "_upload_tracker" in vars(aiohttp.ClientRequest)
                and callable(getattr(aiohttp.ClientRequest, "write_bytes", None))
                and callable(getattr(StreamWriter, "write_headers", None)))


class _Request(aiohttp.ClientRequest):
    """aiohttp's request, told once which of its own headers to skip: every one it would
    add (`NO_AUTO_HEADERS` covers them all), so it adds none and keeps the one skip set
    made at import, where aiohttp's builds a multidict of the session's skip set, and a
    copy of the request's headers, for every request. The request goes out the same
    (``Content-Type`` is not skipped: a body sent without one still gets aiohttp's).

    A small body in memory is written by the task that sends the request (`send`), not
    by a task of its own as aiohttp does on Python 3.11."""

    def update_auto_headers(self, skip_auto_headers: Any) -> None:
        if _SKIPS_EVERY_AUTO_HEADER and skip_auto_headers == _NO_AUTO:
            self._skip_auto_headers = _SKIPPED
        else:  # another skip set, or an aiohttp that adds more of its own: its way
            super().update_auto_headers(skip_auto_headers)

    async def send(self, conn: Any) -> aiohttp.ClientResponse:
        """aiohttp's `send` for a request whose body is bytes of at most
        `INLINE_BODY_BYTES`, to a connection whose writing is not paused, with nothing
        of aiohttp's it does not do here (traces, compression, chunking, a proxy, an
        ``Expect: 100-continue``, an upload tracker): the same head (``Content-Type``
        and ``Connection`` defaulted as aiohttp does), then aiohttp's own `write_bytes`
        awaited here instead of in a task started for it (one task, its callbacks and a
        turn of the event loop fewer per request); the head and body go out in one write
        as aiohttp's task writes them, and a failure to write is the answer's error as
        there. Any other request is aiohttp's `send`."""
        body = self._body
        protocol = conn.protocol
        if not (_INLINE_SEND and type(body) is BytesPayload and body.size is not None
                and body.size <= INLINE_BODY_BYTES and self._continue is None and not self._traces
                and not self.compress and self.chunked is None and self.proxy is None
                and self._upload_tracker is None and self.method != "CONNECT"
                and protocol is not None and not protocol.writing_paused):
            return await super().send(conn)
        writer = StreamWriter(protocol, self.loop)
        headers = self.headers
        method = self.method
        skipped = self._skip_auto_headers
        if (method in self.POST_METHODS and (skipped is None or hdrs.CONTENT_TYPE not in skipped)
                and hdrs.CONTENT_TYPE not in headers):
            headers[hdrs.CONTENT_TYPE] = "application/octet-stream"
        version = self.version
        if hdrs.CONNECTION not in headers:
            if conn._connector.force_close:
                if version == aiohttp.HttpVersion11:
                    headers[hdrs.CONNECTION] = "close"
            elif version == aiohttp.HttpVersion10:
                headers[hdrs.CONNECTION] = "keep-alive"
        await writer.write_headers(f"{method} {self.url.raw_path_qs} HTTP/{version.major}.{version.minor}", headers)
        await self.write_bytes(writer, conn, self._get_content_length())
        response = self.response_class(
            method, self.original_url, writer=None, continue100=None, timer=self._timer,
            request_info=self.request_info, traces=self._traces, loop=self.loop, session=self._session,
            stream_writer=writer)
        self.response = response  # type: ignore[assignment]  # aiohttp's class attribute is None until sent
        return response


#: aiohttp's own `connect`, which `_Connector.connect` extends.
_tcp_connect = aiohttp.TCPConnector.connect


class _Connector(aiohttp.TCPConnector):
    """A TCP connector whose connections note what the current exchange needs (`_Protocol`)
    and that reports "connection ready" to the current exchange's trace."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # aiohttp's own factory makes a ResponseHandler; ours, the subclass that notes bytes
        self._factory = cast("functools.partial[ResponseHandler]", functools.partial(_Protocol, loop=self._loop))

    async def connect(self, req: Any, *args: Any, **kwargs: Any) -> Any:
        connection = await _tcp_connect(self, req, *args, **kwargs)  # TCPConnector's, without a super() object
        current = _CURRENT.get()
        if current is not None:
            protocol = connection.protocol
            if isinstance(protocol, _Protocol):
                current.reused = protocol.used
                protocol.used = True
                protocol.exchange = current
            current.answered = False
            if current.start:
                del current.start[:]
            try:
                current.connected_now()
                if current.trace is not None:
                    await current.trace(CONNECTED_EVENT, {"request": current.request})
            except BaseException:
                connection.close()
                raise
        return connection


def _stale(exc: BaseException, current: WireExchange) -> bool:
    """True when `exc` ended a request on a reused connection before any byte of an answer:
    the receiver had closed the idle connection, nothing reached a handler."""
    if not current.reused or current.answered:
        return False
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return True
    return getattr(exc, "errno", None) in _STALE_ERRNOS


#: `ResponseHandler.set_response_params`'s keywords `_direct_request` passes, as `ClientSession._request`
#: passes them (aiohttp 3.14; another set: `_request` itself).
_RESPONSE_PARAMS = frozenset({"timer", "skip_payload", "read_until_eof", "auto_decompress", "read_timeout",
                              "read_bufsize", "timeout_ceil_threshold", "max_line_size", "max_field_size",
                              "max_headers"})
#: The session attributes `_direct_request` reads (`_direct_session`).
_SESSION_FIELDS = ("_connector", "_loop", "_version", "_response_class", "_skip_auto_headers", "_auto_decompress",
                   "_read_bufsize", "_max_line_size", "_max_field_size", "_max_headers", "_trace_configs",
                   "_middlewares", "_default_headers", "_default_auth", "_default_proxy", "_base_url",
                   "_raise_for_status", "_cookie_jar", "_trust_env")
#: True when aiohttp's session request path is the one `_direct_request` follows (aiohttp 3.14's).
_DIRECT = (set(inspect.signature(ResponseHandler.set_response_params).parameters) - {"self"} == _RESPONSE_PARAMS
           and "_upload_tracker" in vars(aiohttp.ClientRequest) and hasattr(aiohttp, "ConnectionTimeoutError"))


def _direct_session(session: aiohttp.ClientSession) -> bool:
    """True when `_direct_request` sends for `session` what its `_request` would: a session
    as `AiohttpTransport` makes them (no default headers, auth, proxy, base URL, traces,
    middlewares or status check; cookies never kept; ``Content-Type`` the only header of
    aiohttp's own it may add) on an aiohttp whose request path `_direct_request` follows."""
    if not _DIRECT or not all(hasattr(session, name) for name in _SESSION_FIELDS):
        return False
    return (not session._default_headers and session._default_auth is None and session._default_proxy is None
            and session._base_url is None and not session._trace_configs and not session._middlewares
            and session._raise_for_status is False and isinstance(session._cookie_jar, aiohttp.DummyCookieJar)
            and not session._trust_env and session._skip_auto_headers == _NO_AUTO)


def _direct_url(url: URL) -> bool:
    """True when `_direct_request` may send to `url`: HTTP(S), a host, no credentials, no fragment."""
    return (url.scheme in ("http", "https") and bool(url.raw_host) and url.raw_user is None
            and url.raw_password is None and not url.raw_fragment)


async def _direct_request(session: aiohttp.ClientSession, method: str, url: URL,
                          headers: Sequence[tuple[str, str]], data: bytes | None, timeout: aiohttp.ClientTimeout,
                          sni: str | None) -> aiohttp.ClientResponse:
    """``session._request(method, url, headers=headers, data=data, allow_redirects=False,
    timeout=timeout, server_hostname=sni)``, for what `AiohttpTransport.open` checks first:
    a session `_direct_session` accepts, a URL `_direct_url` accepts, a POST (a method
    aiohttp never resends by itself), no total timeout, and no header name given twice,
    whatever its case (`_names_distinct`). The steps of `_request` that do something
    there, in its order, without those that do nothing there (the session's default
    headers merged into a copy of `headers`, which the request copies again; the redirect
    loop; an empty cookie jar read; a total-timeout handle; trace and middleware lists):
    the same request (`_Request`, given the headers `_request` would give it), connection
    (the connector's, under `timeout`: the connect timeouts bound it as there), answer
    parser settings (the session's line, field, header and buffer limits; the read
    timeout), errors (a connect timeout as `ConnectionTimeoutError`, an OSError as
    `ClientOSError`, aiohttp's own as they are), and the body's payload closed at the end."""
    if session.closed:
        raise RuntimeError("Session is closed")
    connector = session._connector
    assert connector is not None
    timer = TimerNoop()
    req = _Request(method, url, headers=headers, skip_auto_headers=session._skip_auto_headers, data=data,
                   version=session._version, loop=session._loop, response_class=session._response_class,
                   timer=timer, session=session, ssl=True, server_hostname=sni, traces=[], trust_env=False)
    try:
        try:
            try:
                conn = await connector.connect(req, traces=[], timeout=timeout)
            except asyncio.TimeoutError as exc:
                raise aiohttp.ConnectionTimeoutError(f"Connection timeout to host {req.url}") from exc
            protocol = conn.protocol
            assert protocol is not None
            protocol.set_response_params(
                timer=timer, skip_payload=req.method in EMPTY_BODY_METHODS, read_until_eof=True,
                auto_decompress=session._auto_decompress, read_timeout=timeout.sock_read,
                read_bufsize=session._read_bufsize, timeout_ceil_threshold=connector._timeout_ceil_threshold,
                max_line_size=session._max_line_size, max_field_size=session._max_field_size,
                max_headers=session._max_headers)
            try:
                resp = await req.send(conn)
                try:
                    await resp.start(conn)
                except BaseException:
                    resp.close()
                    raise
            except BaseException:
                conn.close()
                raise
        except aiohttp.ClientError:
            raise
        except OSError as exc:
            if exc.errno is None and isinstance(exc, asyncio.TimeoutError):
                raise
            raise aiohttp.ClientOSError(*exc.args) from exc
    except BaseException:
        if req._body is not None:
            await req._body.close()
        raise
    if req._body is not None:
        await req._body.close()
    resp._history = ()
    return resp


def _names_distinct(headers: Sequence[tuple[str, str]]) -> bool:
    """True when no two of `headers`' names are the same, whatever their case: `_request`
    merges two names alike but for their case, which `_direct_request` would send both of
    (a name given twice, which both send twice, is left to `_request` too: rare, and one
    set made per request is the whole check)."""
    return len({name.lower() for name, _ in headers}) == len(headers)


class _Body(httpx.AsyncByteStream):
    """An aiohttp answer's body as an httpx byte stream; closing releases the connection
    (aiohttp closes it instead when the body was not read to the end)."""

    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content = self._response.content
        try:
            while chunk := await content.readany():
                yield chunk
        except _MAPPED as exc:
            raise httpx_error(exc) from exc

    async def aclose(self) -> None:
        self._response.release()
        await self._response.wait_for_close()


def _stream(response: aiohttp.ClientResponse) -> httpx.AsyncByteStream:
    """The answer's body: the bytes themselves when the whole body came with the head
    (the connection goes back to the pool at once), else a stream reading it."""
    content = response.content
    if not content.is_eof():
        return _Body(response)
    try:
        body = content.read_nowait()
    except _MAPPED as exc:
        raise httpx_error(exc) from exc
    finally:
        response.release()
    return httpx.ByteStream(body)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx's transport API on one aiohttp session (opened on first use, in the loop).

    Args:
        max_connections: connections open at most (further requests wait for one,
            within the ``pool`` timeout).
        keepalive_s: seconds an idle connection stays in the pool.
    """

    def __init__(self, *, max_connections: int = 64, keepalive_s: float = 5.0) -> None:
        self.max_connections = max_connections
        self.keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self._fresh: aiohttp.ClientSession | None = None
        self._last_url: tuple[object, URL] | None = None
        self._timeouts: dict[tuple[float | None, float | None, float | None], aiohttp.ClientTimeout] = {}
        self._closed = False
        #: Whether `open` sends through `_direct_request` on the session / the fresh session,
        #: and to the URL it was last given (`_direct_url`).
        self._direct = self._fresh_direct = False
        self._direct_checked: URL | None = None
        self._direct_to = False

    def _refuse_when_closed(self) -> None:
        """A closed transport opens no session: a request still under way when it closed (an
        interrupted step's, resumed by the next run of the loop) would otherwise open one that
        nothing closes."""
        if self._closed:
            raise httpx.ConnectError("the transport is closed")

    def _open(self) -> aiohttp.ClientSession:
        self._refuse_when_closed()
        connector = _Connector(limit=self.max_connections, keepalive_timeout=self.keepalive_s)
        self._session = aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(),
                                              auto_decompress=False, trust_env=False,
                                              skip_auto_headers=NO_AUTO_HEADERS, request_class=_Request)
        self._direct = _direct_session(self._session)
        return self._session

    def _fresh_session(self) -> aiohttp.ClientSession:
        """A session whose connections are never pooled (the resend after a stale connection)."""
        if self._fresh is None:
            self._refuse_when_closed()
            connector = _Connector(limit=self.max_connections, force_close=True)
            self._fresh = aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(),
                                                auto_decompress=False, trust_env=False,
                                                skip_auto_headers=NO_AUTO_HEADERS, request_class=_Request)
            self._fresh_direct = _direct_session(self._fresh)
        return self._fresh

    def wire_url(self, url: httpx.URL) -> URL:
        """`url` as aiohttp's URL, as `handle_async_request` sends it."""
        return self._yarl(url)

    def _yarl(self, url: httpx.URL) -> URL:
        """`url` as aiohttp's URL. The last one is kept: a dispatcher sends every attempt
        to one URL, and each `httpx.Request` wraps the same parsed value (`str(url)`
        costs as much as building the rest of the request's headers)."""
        parsed = getattr(url, "_uri_reference", url)
        last = self._last_url
        if last is not None and last[0] is parsed:
            return last[1]
        converted = URL(str(url))
        self._last_url = (parsed, converted)
        return converted

    def _timeout(self, timeout: Mapping[str, float | None] | None) -> aiohttp.ClientTimeout:
        if not timeout:
            timeout = {}
        key = (timeout.get("connect"), timeout.get("read"), timeout.get("pool"))
        converted = self._timeouts.get(key)
        if converted is None:
            if len(self._timeouts) >= 64:
                self._timeouts.clear()
            converted = self._timeouts[key] = aiohttp.ClientTimeout(
                total=None, connect=key[2], sock_connect=key[0], sock_read=key[1])
        return converted

    def client_timeout(self, timeout: Mapping[str, float | None] | None) -> aiohttp.ClientTimeout:
        """httpx's ``timeout`` extension (seconds; see the module docstring) as aiohttp's
        timeout: ``pool`` bounds acquiring a connection, ``connect`` the socket connect,
        ``read`` each read; no total."""
        return self._timeout(timeout)

    async def open(self, method: str, url: URL, headers: Sequence[tuple[str, str]], body: bytes,
                   timeout: aiohttp.ClientTimeout, *, start: bytearray | None = None,
                   trace: Trace | None = None,
                   request: httpx.Request | None = None, sni: str | None = None,
                   exchange: WireExchange | None = None) -> aiohttp.ClientResponse:
        """Send one request; aiohttp's answer once its head came (the engine under
        `handle_async_request`, for a caller that reads aiohttp's answer itself).

        `headers` go as given (names in their case, in order; ``Host`` and
        ``Content-Length`` are added from `url` and `body`); `start` receives the answer's
        first bytes; once the request has its connection, `trace` is awaited with the
        ``trace`` extension's event. With `exchange` (a caller's own `WireExchange`), its
        `start`, `trace` and `request` are used instead, and its `connected_now` is called
        at that moment, before `trace`. A request that met a connection the receiver had
        closed while idle is sent once more on a fresh one (module docstring). Raises
        aiohttp's exceptions as they are (`httpx_error` maps them). The caller releases
        the answer: ``release()``, then ``wait_for_close()`` when its body was not read
        to the end.
        """
        session = self._session or self._open()
        current = exchange if exchange is not None else WireExchange(start, trace, request)
        token = _CURRENT.set(current)
        data = body or None
        if url is not self._direct_checked:  # a dispatcher sends every attempt to one URL object
            self._direct_checked, self._direct_to = url, _direct_url(url)
        direct = (self._direct and self._direct_to and method == "POST" and timeout.total is None
                  and _names_distinct(headers))
        try:
            try:  # the coroutine `session.request` wraps, awaited without its context manager
                if direct:
                    return await _direct_request(session, method, url, headers, data, timeout, sni)
                return await session._request(method, url, headers=headers, data=data, allow_redirects=False,
                                              timeout=timeout, server_hostname=sni)
            except _STALE as exc:
                if not _stale(exc, current):
                    raise
                fresh = self._fresh_session()
                if direct and self._fresh_direct:
                    return await _direct_request(fresh, method, url, headers, data, timeout, sni)
                return await fresh._request(method, url, headers=headers, data=data, allow_redirects=False,
                                            timeout=timeout, server_hostname=sni)
        finally:
            _CURRENT.reset(token)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        extensions = request.extensions
        stream = request.stream  # what a transport sends, as httpx's own transports do
        if isinstance(stream, httpx.SyncByteStream):  # in memory (httpx.ByteStream): no async generator
            body = b"".join(stream)
        else:
            body = b"".join([chunk async for chunk in stream])
        try:
            response = await self.open(
                request.method, self._yarl(request.url), _names_as_given(request.headers), body,
                self._timeout(extensions.get("timeout")), start=extensions.get(ANSWER_START),
                trace=extensions.get("trace"), request=request, sni=extensions.get("sni_hostname"))
        except _MAPPED as exc:
            raise httpx_error(exc) from exc
        return httpx.Response(
            response.status, headers=response.raw_headers, stream=_stream(response), request=request,
            extensions={"http_version": _http_version(response.version),
                        "reason_phrase": (response.reason or "").encode("latin-1", "replace")},
        )

    async def aclose(self) -> None:
        self._closed = True  # first: a request resumed while the sessions close opens none
        for session in (self._session, self._fresh):
            if session is not None:
                await session.close()
        self._session = self._fresh = None


__all__ = ["ANSWER_START", "CONNECTED_EVENT", "MAPPED_ERRORS", "AiohttpTransport", "WireExchange", "httpx_error"]
