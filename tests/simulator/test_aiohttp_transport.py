"""The own httpx transport over aiohttp, against raw servers on 127.0.0.1: what goes on
the wire, the ``trace`` and ``timeout`` extensions, and every aiohttp error mapped to
httpx's (and, through the dispatcher's translation, to the right completion)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import socket
import struct
import sys
from typing import AsyncIterator, Awaitable, Callable

import aiohttp
import httpx
import pytest
from aiohttp import http_exceptions
from yarl import URL

from hookproof.simulator.delivery import aiohttp_transport
from hookproof.simulator.delivery.aiohttp_transport import (
    _ERRORS,
    CONNECTED_EVENT,
    NO_AUTO_HEADERS,
    AiohttpTransport,
    WireExchange,
    httpx_error,
)
from hookproof.simulator.delivery.attempt_core import Observed, grade
from hookproof.simulator.delivery.dispatcher import translate_error as translate
from hookproof.simulator.profiles import get_profile
from tests.support import free_port

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[str]:
    """`handler` served on 127.0.0.1 in the test's loop; yields the base URL."""
    connections: list[asyncio.StreamWriter] = []

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        with contextlib.suppress(ConnectionError):
            await handler(reader, writer)

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for w in connections:
            w.close()
        await server.wait_closed()


@pytest.fixture
async def transport() -> AsyncIterator[AiohttpTransport]:
    """The transport under test, closed after the test."""
    opened = AiohttpTransport()
    try:
        yield opened
    finally:
        await opened.aclose()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request's head and body (by Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return head + await reader.readexactly(length)


def answering(answer: bytes, seen: list[bytes] | None = None) -> Handler:
    """A keep-alive server giving every request `answer`."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                request = await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            if seen is not None:
                seen.append(request)
            writer.write(answer)
            await writer.drain()
    return handle


def translate_error(exc: BaseException, start: bytes = b"", status: int | None = None) -> "Answer":
    """What the dispatcher records for `exc`: whether the request was sent, and the reason."""
    observed = translate(exc, start=start, status=status)
    return Answer(observed, grade(observed, get_profile("stripe")).reason)


class Answer:
    def __init__(self, observed: Observed, error: str | None) -> None:
        self.request_sent = observed.request_sent
        self.error = error


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


def post(url: str, body: bytes = b'{"id":"evt_1"}', **extensions: object) -> httpx.Request:
    return httpx.Request("POST", url, headers={"Content-Type": "application/json"}, stream=httpx.ByteStream(body),
                         extensions=extensions)


async def read_all(response: httpx.Response) -> bytes:
    try:
        return b"".join([chunk async for chunk in response.stream])
    finally:
        await response.aclose()


async def test_a_request_goes_out_as_sent_with_host_and_length_from_url_and_body(transport: AiohttpTransport) -> None:
    seen: list[bytes] = []
    async with serving(answering(OK, seen)) as base:
        response = await transport.handle_async_request(post(base + "/webhooks?token=abc", b"0123456789"))
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain"
        assert response.extensions["http_version"] == b"HTTP/1.1"
        assert response.extensions["reason_phrase"] == b"OK"
        assert await read_all(response) == b"ok"
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /webhooks?token=abc HTTP/1.1"
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    assert headers[b"host"] == base.removeprefix("http://").encode()
    assert headers[b"content-length"] == b"10"
    assert headers[b"content-type"] == b"application/json"
    assert body == b"0123456789"


async def test_header_names_go_out_in_the_case_they_were_given(transport: AiohttpTransport) -> None:
    """As the provider sends them (``Stripe-Signature``), not lowercased."""
    seen: list[bytes] = []
    request = httpx.Request("POST", "http://x/", headers={"Stripe-Signature": "t=1,v1=ab", "X-GitHub-Event": "ping",
                                                          "content-type": "application/json"},
                            stream=httpx.ByteStream(b"{}"))
    async with serving(answering(OK, seen)) as base:
        request.url = httpx.URL(base + "/webhooks")
        await read_all(await transport.handle_async_request(request))
    names = {line.partition(b":")[0] for line in seen[0].partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]}
    assert {b"Stripe-Signature", b"X-GitHub-Event", b"content-type"} <= names


@pytest.mark.parametrize("headers", [
    [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-cache"),
     ("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"), ("Accept", "*/*; q=0.5, application/xml"),
     ("Stripe-Signature", "t=1,v1=ab")],
    [("X-GitHub-Event", "push"), ("accept", "*/*")],
    [("Host", "other.test"), ("X-Event", "push")],
    [],
])
async def test_a_request_carries_no_header_of_aiohttps_own_and_goes_out_as_aiohttps_request_sends_it(
        headers: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The own request class skips every header aiohttp would add of its own (``Accept``,
    ``Accept-Encoding``, ``User-Agent``) with one skip set made once; the bytes on the wire
    are those aiohttp's own request class sends with the session's skip set, ``Content-Type``
    still aiohttp's for a request without one."""
    seen: list[bytes] = []
    skipped: list[object] = []
    own = aiohttp_transport._Request.update_auto_headers

    def noting(request: aiohttp.ClientRequest, skip: object) -> None:
        own(request, skip)
        skipped.append(request._skip_auto_headers)

    async with serving(answering(OK, seen)) as base:
        url = URL(base + "/webhooks?a=1")
        for update in (noting, aiohttp.ClientRequest.update_auto_headers):
            monkeypatch.setattr(aiohttp_transport._Request, "update_auto_headers", update)
            sender = AiohttpTransport()
            try:
                response = await sender.open("POST", url, headers, b'{"id": "evt_1"}', aiohttp.ClientTimeout())
                response.release()
            finally:
                await sender.aclose()
    assert skipped == [aiohttp_transport._SKIPPED]
    assert skipped[0] is aiohttp_transport._SKIPPED
    assert list(aiohttp_transport._SKIPPED) == sorted(NO_AUTO_HEADERS)
    assert seen[0] == seen[1]
    head = seen[0].partition(b"\r\n\r\n")[0].split(b"\r\n")
    names = [line.partition(b":")[0] for line in head[1:]]
    given = {name.lower() for name, _ in headers}
    assert names[0] == b"Host"
    assert [n.decode() for n in names[1:]] == [name for name, _ in headers if name != "Host"] + [
        "Content-Length", *(["Content-Type"] if "content-type" not in given else [])]
    assert not {"accept-encoding"} & {n.decode().lower() for n in names}
    assert ("accept" in {n.decode().lower() for n in names}) == ("accept" in given)


async def test_trace_reports_the_connection_once_per_request_fresh_or_pooled(transport: AiohttpTransport) -> None:
    events: list[str] = []

    async def trace(event: str, info: object) -> None:
        events.append(event)

    async with serving(answering(OK)) as base:
        for _ in range(3):  # the first opens a connection, the others reuse it
            await read_all(await transport.handle_async_request(post(base, trace=trace)))
    assert events == [CONNECTED_EVENT] * 3


class _Noting(WireExchange):
    """An exchange noting each moment its request had its connection."""

    __slots__ = ("noted",)

    def __init__(self, trace: Callable[[str, object], Awaitable[None]]) -> None:
        super().__init__(bytearray(), trace)
        self.noted: list[str] = []

    def connected_now(self) -> None:
        self.noted.append("connected")


async def test_a_callers_exchange_is_told_of_its_connection_and_gets_the_answers_first_bytes(
        transport: AiohttpTransport) -> None:
    exchanges: list[_Noting] = []

    async with serving(answering(OK)) as base:
        for _ in range(2):  # a fresh connection, then a pooled one
            exchange = _Noting(lambda event, info: _note(exchange, event))
            exchanges.append(exchange)
            response = await transport.open("POST", transport.wire_url(httpx.URL(base)), [("Content-Type", "text/plain")],
                                            b"{}", transport.client_timeout({}), exchange=exchange)
            assert response.status == 200 and response.content.read_nowait() == b"ok"
            response.release()
    for exchange in exchanges:
        assert exchange.noted == ["connected", CONNECTED_EVENT]
        assert bytes(exchange.start) == OK
        assert exchange.answered
    assert [e.reused for e in exchanges] == [False, True]


async def _note(exchange: _Noting, event: str) -> None:
    exchange.noted.append(event)


async def test_a_body_arriving_after_the_head_is_streamed_and_the_connection_reused(
        transport: AiohttpTransport) -> None:
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while True:
            try:
                await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(b"def")
            await writer.drain()

    async with serving(handle) as base:
        first = await read_all(await transport.handle_async_request(post(base)))
        second = await read_all(await transport.handle_async_request(post(base)))
    assert first == second == b"abcdef"
    assert connections == 1


async def test_redirects_are_answers_and_cookies_are_neither_kept_nor_sent(transport: AiohttpTransport) -> None:
    seen: list[bytes] = []
    redirect = (b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\nSet-Cookie: session=1\r\n"
                b"Content-Length: 0\r\n\r\n")
    async with serving(answering(redirect, seen)) as base:
        for _ in range(2):
            response = await transport.handle_async_request(post(base + "/webhooks"))
            assert response.status_code == 307
            await read_all(response)
    assert len(seen) == 2 and all(b"/elsewhere" not in s and b"cookie" not in s.lower() for s in seen)


async def test_refused_is_a_connect_error_and_the_attempt_fails(transport: AiohttpTransport) -> None:
    with pytest.raises(httpx.ConnectError) as caught:
        await transport.handle_async_request(post(f"http://127.0.0.1:{free_port()}/"))
    answer = translate_error(caught.value)
    assert (answer.error, answer.request_sent) == ("connection refused: nothing listens there", False)


async def test_silence_after_the_request_is_a_read_timeout_and_unknown(transport: AiohttpTransport) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(5)

    async with serving(silent) as base:
        with pytest.raises(httpx.ReadTimeout) as caught:
            await transport.handle_async_request(post(base, timeout={"connect": 1.0, "read": 0.2, "pool": 1.0}))
    answer = translate_error(caught.value)
    assert (answer.error, answer.request_sent) == ("no answer within the sender timeout (sender timeout)", True)


async def _start_a_100_byte_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Read the request, then send the head of a 100-byte answer and its first 3 bytes."""
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
    await writer.drain()


async def test_a_stalled_body_is_a_read_timeout_while_reading(transport: AiohttpTransport) -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _start_a_100_byte_answer(reader, writer)
        await asyncio.sleep(5)

    async with serving(stall) as base:
        response = await transport.handle_async_request(post(base, timeout={"read": 0.2}))
        with pytest.raises(httpx.ReadTimeout):
            await read_all(response)


def _reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()


async def test_a_reset_after_the_request_is_unknown(transport: AiohttpTransport) -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        _reset(writer)

    async with serving(reset) as base:
        with pytest.raises(httpx.TransportError) as caught:
            await transport.handle_async_request(post(base))
    answer = translate_error(caught.value)
    assert answer.request_sent is True
    assert "reset" in (answer.error or "") or "closed the connection" in (answer.error or "")


async def test_a_reset_in_the_middle_of_the_body_is_a_read_error(transport: AiohttpTransport) -> None:
    async def reset_mid_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _start_a_100_byte_answer(reader, writer)
        await asyncio.sleep(0.05)
        _reset(writer)

    async with serving(reset_mid_body) as base:
        response = await transport.handle_async_request(post(base))
        with pytest.raises(httpx.ReadError) as caught:
            await read_all(response)
    answer = translate_error(caught.value, status=200)
    assert answer.request_sent is True
    assert answer.error == "answered 200 but the connection was reset while the answer's body was being read"


async def test_garbage_is_a_protocol_error(transport: AiohttpTransport) -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"\x00\x01 not http at all\r\n\r\n")
        await writer.drain()
        writer.close()

    async with serving(garbage) as base:
        with pytest.raises(httpx.RemoteProtocolError) as caught:
            await transport.handle_async_request(post(base))
    assert translate_error(caught.value).error == "the answer was not valid HTTP"
    assert translate_error(caught.value, b"\x00\x01 not http at all\r\n\r\n").error == (
        "the answer was not valid HTTP: its first bytes are '\\x00\\x01 not http at a', not an HTTP status line")


def _aiohttp_errors() -> list[type[BaseException]]:
    exported = [getattr(aiohttp, name) for name in aiohttp.__all__]
    found = [c for c in exported if inspect.isclass(c) and issubclass(c, aiohttp.ClientError)]
    return [*found, http_exceptions.HttpProcessingError, http_exceptions.BadStatusLine, ConnectionResetError,
            TimeoutError, OSError]


@pytest.mark.parametrize("error", _aiohttp_errors(), ids=lambda c: c.__name__)
def test_every_aiohttp_error_maps_to_an_httpx_transport_error(error: type[BaseException]) -> None:
    assert any(issubclass(error, source) for source, _ in _ERRORS), f"{error.__name__} is not mapped"


def test_the_error_table_puts_the_specific_before_the_general() -> None:
    sources = [source for source, _ in _ERRORS]
    for i, earlier in enumerate(sources):
        for later in sources[i + 1:]:
            assert not issubclass(later, earlier), f"{later.__name__} is shadowed by {earlier.__name__}"


@pytest.mark.parametrize(("error", "expected"), [
    (aiohttp.ConnectionTimeoutError("connect"), httpx.ConnectTimeout),
    (aiohttp.SocketTimeoutError("read"), httpx.ReadTimeout),
    (aiohttp.ServerDisconnectedError(), httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError("broken"), httpx.ReadError),
    (aiohttp.ClientOSError(104, "reset"), httpx.ReadError),
    (http_exceptions.BadStatusLine("garbage"), httpx.RemoteProtocolError),
    (aiohttp.InvalidURL("nope"), httpx.UnsupportedProtocol),
])
def test_each_error_becomes_its_httpx_counterpart(error: BaseException, expected: type[httpx.TransportError]) -> None:
    mapped = httpx_error(error)
    assert type(mapped) is expected and str(mapped)


async def test_a_url_client_from_make_client_does_not_follow_redirects() -> None:
    from hookproof.simulator.delivery import Target, make_client

    redirect = b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"
    async with serving(answering(redirect)) as base:
        async with make_client(Target(url=base + "/webhooks")) as client:
            response = await client.post(base + "/webhooks", content=b"{}")
    assert response.status_code == 307


def test_an_error_quoting_undecodable_bytes_reads_as_text() -> None:
    """An exception whose text holds undecodable bytes (lone surrogates) is recorded with
    "?" in their place, so the error can be stored and written anywhere."""
    answer = translate_error(OSError("line \udcff\udcfe from the receiver"))
    assert answer.error == "the connection broke after sending (line ?? from the receiver)"


async def test_a_closed_transport_opens_no_session_for_a_request_resumed_after_it_closed() -> None:
    """An interrupted explore step's delivery, resumed when the loop next ran (to close the
    session), opened a fresh aiohttp session after the transport had closed its own: "Unclosed
    client session" at exit. A closed transport refuses to open one."""
    transport = AiohttpTransport()
    async with serving(answering(OK)) as base:
        response = await transport.handle_async_request(post(base + "/webhooks"))
        assert await read_all(response) == b"ok"
        await transport.aclose()
        with pytest.raises(httpx.ConnectError, match="the transport is closed"):
            await transport.handle_async_request(post(base + "/webhooks"))
        with pytest.raises(httpx.ConnectError, match="the transport is closed"):
            transport._fresh_session()
    assert transport._session is None and transport._fresh is None


#: Header sets a provider's request may carry: a profile's own, a name given twice, a
#: ``Host`` of its own, two names alike but for their case (aiohttp's session merges
#: those: `open` leaves them to it), and none at all.
_HEADER_SETS = [
    [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-cache"),
     ("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"), ("Accept", "*/*; q=0.5, application/xml"),
     ("Stripe-Signature", "t=1,v1=ab")],
    [("Content-Type", "application/json"), ("X-Tag", "one"), ("X-Tag", "two")],
    [("Host", "example.test"), ("Content-Type", "application/json")],
    [("X-Tag", "one"), ("x-tag", "two")],
    [],
]
#: Bodies: none, small (written by the sending task), past `INLINE_BODY_BYTES` (aiohttp's task).
_BODIES = [b"", b'{"id": "evt_1"}' * 150, b"x" * (aiohttp_transport.INLINE_BODY_BYTES + 1)]


async def _sent_both_ways(url: URL, headers: list[tuple[str, str]], body: bytes,
                          monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bytes]]:
    """`headers` and `body` POSTed through `open` as it is, then through aiohttp's own path
    (its session's `_request`, its request's `send` writing the body in a task of its own):
    each answer's status and body."""
    answers = []
    for own in (True, False):
        monkeypatch.setattr(aiohttp_transport, "_INLINE_SEND", own and aiohttp_transport._INLINE_SEND)
        sender = AiohttpTransport()
        try:
            sender._open()
            sender._direct = own and sender._direct
            response = await sender.open("POST", url, headers, body, aiohttp.ClientTimeout(total=None, connect=5))
            answers.append((response.status, await response.read()))
            response.release()
        finally:
            await sender.aclose()
    return answers


@pytest.mark.parametrize("headers", _HEADER_SETS, ids=["profile", "twice", "host", "case", "none"])
@pytest.mark.parametrize("body", _BODIES, ids=["empty", "small", "large"])
async def test_open_sends_the_bytes_aiohttps_own_request_path_sends(
        headers: list[tuple[str, str]], body: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """`open`'s direct path (`_direct_request`, `_Request.send` writing a small body in the
    sending task) puts on the wire, byte for byte, what aiohttp's session and request send,
    and reads the same answer."""
    seen: list[bytes] = []
    async with serving(answering(OK, seen)) as base:
        answers = await _sent_both_ways(URL(base + "/webhooks?a=1"), headers, body, monkeypatch)
    assert answers == [(200, b"ok"), (200, b"ok")]
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[0].endswith(b"\r\n\r\n" + body)


def _closing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Awaitable[None]:
    async def handle() -> None:
        await read_request(reader)
        writer.close()
    return handle()


def _garbling(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Awaitable[None]:
    async def handle() -> None:
        await read_request(reader)
        writer.write(b"\x00\x01 not http at all\r\n\r\n")
        await writer.drain()
        writer.close()
    return handle()


def _resetting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Awaitable[None]:
    async def handle() -> None:
        await read_request(reader)
        _reset(writer)
    return handle()


@pytest.mark.parametrize("handler", [None, _closing, _garbling, _resetting], ids=["refused", "closed", "garbage", "reset"])
async def test_open_fails_as_aiohttps_own_request_path_fails(handler: Handler | None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct path raises what aiohttp's own path raises for a refused connection, a
    close without an answer, an answer that is not HTTP and a reset: the same exception
    type and text, mapped to the same httpx error."""
    raised: list[BaseException] = []

    async def both(url: URL) -> None:
        for own in (True, False):
            monkeypatch.setattr(aiohttp_transport, "_INLINE_SEND", own and aiohttp_transport._INLINE_SEND)
            sender = AiohttpTransport()
            try:
                sender._open()
                sender._direct = own and sender._direct
                with pytest.raises(aiohttp_transport.MAPPED_ERRORS) as caught:
                    await sender.open("POST", url, [("Content-Type", "application/json")], b"{}",
                                      aiohttp.ClientTimeout(total=None, connect=5))
                raised.append(caught.value)
            finally:
                await sender.aclose()

    if handler is None:
        await both(URL(f"http://127.0.0.1:{free_port()}/"))
    else:
        async with serving(handler) as base:
            await both(URL(base))
    own, theirs = raised
    assert type(own) is type(theirs)
    assert str(own) == str(theirs)
    assert type(httpx_error(own)) is type(httpx_error(theirs))


async def test_a_small_post_starts_no_task_and_a_large_one_aiohttps(transport: AiohttpTransport) -> None:
    """With the installed aiohttp, `open` sends a POST through `_direct_request`, and on
    Python before 3.12 a body of at most `INLINE_BODY_BYTES` is written by the sending task
    (aiohttp's `send` starts a task to write it; on 3.12 on, it starts that task eagerly);
    a larger body goes through aiohttp's `send` and its task."""
    assert aiohttp_transport._DIRECT, "aiohttp's request path changed: review _direct_request against it"
    started: list[object] = []
    loop = asyncio.get_running_loop()
    loop.set_task_factory(lambda loop, coro: started.append(coro) or asyncio.Task(coro, loop=loop))
    try:
        async with serving(answering(OK)) as base:
            url = URL(base)
            for body in (b"x" * aiohttp_transport.INLINE_BODY_BYTES, b"x" * (aiohttp_transport.INLINE_BODY_BYTES + 1)):
                await transport.open("POST", url, [], body, aiohttp.ClientTimeout(total=None))  # connected
                before = len(started)
                response = await transport.open("POST", url, [], body, aiohttp.ClientTimeout(total=None))
                assert await response.read() == b"ok"
                response.release()
                started[before:] = [getattr(coro, "__qualname__", "") for coro in started[before:]]
                if body == b"x" * aiohttp_transport.INLINE_BODY_BYTES and aiohttp_transport._INLINE_SEND:
                    assert started[before:] == []
                else:
                    assert started[before:] == ["ClientRequest.write_bytes"]
    finally:
        loop.set_task_factory(None)
    assert transport._direct
    assert aiohttp_transport._INLINE_SEND == (sys.version_info < (3, 12))


def test_names_given_twice_in_any_case_are_left_to_aiohttps_session() -> None:
    assert aiohttp_transport._names_distinct([("X-Tag", "1"), ("Other", "3")])
    assert not aiohttp_transport._names_distinct([("X-Tag", "1"), ("x-tag", "2")])
    assert not aiohttp_transport._names_distinct([("X-Tag", "1"), ("X-Tag", "2"), ("Other", "3")])
    assert aiohttp_transport._names_distinct([])


@pytest.mark.parametrize("url", ["http://user:secret@127.0.0.1:1/", "http://127.0.0.1:1/#part", "ws://127.0.0.1:1/"])
def test_a_url_with_credentials_a_fragment_or_another_scheme_is_left_to_aiohttps_session(url: str) -> None:
    assert not aiohttp_transport._direct_url(URL(url))
    assert aiohttp_transport._direct_url(URL("http://127.0.0.1:1/webhooks?a=1"))
