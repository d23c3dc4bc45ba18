"""Targets and the httpx clients that reach them: the seam for in-process testing.

A `Target` is a URL (sent through httpx's API over aiohttp, `aiohttp_transport`) or an
in-process ASGI or WSGI app (httpx's own `ASGITransport`, and `WSGITransport` run in a
worker thread so a threaded WSGI app sees real concurrency).
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlsplit

import httpx

from hookproof.simulator.errors import TargetError

#: Base URL given to in-process apps (never resolved; httpx routes it to the app).
IN_PROCESS_BASE = "http://receiver.test"


@dataclass(frozen=True)
class Target:
    """Where deliveries go: `url` (absolute http(s) URL), or `app` plus `path`.

    Raises TargetError for a URL that is not absolute http(s) or when both or neither
    of `url` and `app` are given.
    """

    url: str | None = None
    app: Any = None
    path: str = "/webhooks"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.app is None):
            raise TargetError("a target needs exactly one of a URL or an in-process app")
        if self.url is not None:
            problem = url_problem(self.url)
            if problem is not None:
                raise TargetError(f"target URL: {problem}", target=self.url)

    @property
    def endpoint(self) -> str:
        """The absolute URL requests are sent to."""
        return self.url if self.url is not None else IN_PROCESS_BASE + self.path

    @property
    def in_process(self) -> bool:
        return self.app is not None

    @property
    def kind(self) -> str:
        """``"url"``, ``"asgi"`` or ``"wsgi"``."""
        if self.app is None:
            return "url"
        return "asgi" if is_asgi(self.app) else "wsgi"

    def is_loopback(self) -> bool:
        """True for in-process apps and URLs whose host is a loopback address or localhost."""
        if self.url is None:
            return True
        host = urlsplit(self.url).hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def describe(self) -> str:
        if self.url is not None:
            return self.url
        return f"in-process {self.kind.upper()} app {getattr(self.app, '__name__', type(self.app).__name__)}"


def url_problem(url: str) -> str | None:
    """What is wrong with `url` as a delivery target, in a few words (None: nothing).

    The one check of a receiver URL, for the config file and the flags alike: an
    absolute http(s) URL with a host, no blanks in the host, a port from 1 to 65535
    when one is given, and a URL httpx can send to.
    """
    bad = f"must be an absolute http(s) URL, got {url!r}"
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return bad
    if parts.scheme not in ("http", "https") or not parts.hostname or not url.lower().startswith(parts.scheme + "://"):
        return bad
    if any(c.isspace() or not c.isprintable() for c in parts.netloc):
        return f"the host part of {url!r} has a blank or a control character"
    try:
        port = parts.port  # None when the URL names no port
    except ValueError:  # not a number, or past 65535
        port = 0
    if port == 0:
        return f"the port in {url!r} is not a number from 1 to 65535"
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"not a URL httpx can send to ({exc}): {url!r}"
    return None


def is_asgi(app: Any) -> bool:
    """True when `app` is an ASGI callable (async ``__call__(scope, receive, send)``)."""
    if inspect.iscoroutinefunction(app):
        return True
    call = getattr(type(app), "__call__", None)
    if call is not None and inspect.iscoroutinefunction(call):
        return True
    return hasattr(app, "router") and hasattr(app, "middleware_stack")


class ThreadedWSGITransport(httpx.AsyncBaseTransport):
    """httpx's `WSGITransport`, each request run in a worker thread."""

    def __init__(self, app: Any) -> None:
        self._inner = httpx.WSGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        sync_request = httpx.Request(request.method, request.url, headers=request.headers, content=body)
        response = await asyncio.to_thread(self._inner.handle_request, sync_request)
        content = await asyncio.to_thread(response.read)
        return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(content),
                              request=request)


def make_client(target: Target, *, connect_timeout_s: float = 5.0, max_connections: int = 64,
                transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An httpx client for `target` that never follows redirects.

    URLs go over `AiohttpTransport` (httpx's API on aiohttp's engine: the default httpx
    transport falls far behind at the concurrency deliveries need; see
    bench/dispatcher_throughput.py). In-process apps go over `in_process_transport(app)`,
    or over `transport` when one is given (the caller keeps it to send through directly,
    `in_process_request`).
    """
    timeout = httpx.Timeout(30.0, connect=connect_timeout_s)
    if target.app is None:
        from hookproof.simulator.delivery.aiohttp_transport import AiohttpTransport

        client = httpx.AsyncClient(transport=AiohttpTransport(max_connections=max_connections), timeout=timeout,
                                   follow_redirects=False, trust_env=False)
    else:
        transport = transport if transport is not None else in_process_transport(target.app)
        client = httpx.AsyncClient(transport=transport, base_url=IN_PROCESS_BASE, timeout=timeout,
                                   follow_redirects=False)
    # httpx's own defaults (User-Agent python-httpx/…, Accept, Accept-Encoding, Connection): only a profile's
    # headers are sent
    for name in ("User-Agent", "Accept", "Accept-Encoding", "Connection"):
        del client.headers[name]
    return client


def in_process_transport(app: Any) -> httpx.AsyncBaseTransport:
    """The transport an in-process `app` is reached through: httpx's `ASGITransport` (an
    exception in the app answers 500 instead of raising) or `ThreadedWSGITransport`."""
    if is_asgi(app):
        return httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return ThreadedWSGITransport(app)


def in_process_request(client: httpx.AsyncClient, method: str, url: httpx.URL, headers: Mapping[str, str],
                       body: bytes, extensions: dict[str, Any]) -> httpx.Request:
    """The request `client` hands its in-process transport for these arguments (its default
    headers under `headers`, then ``Host`` and ``Content-Length`` as httpx adds them), built
    without the client's send path: the dispatcher sends it to the transport itself. A
    provider keeps no cookies, so none are sent (the client's jar is never filled: its
    send path, which fills it from answers, is not taken). The client's send path (auth and
    redirect flows, the cookie jar, the response's stream wrapped again) was about two
    thirds of an exchange with a small app.

    The headers are merged as ``Headers.update`` merges them (every default whose name,
    in any case, `headers` gives is dropped; `headers` follow in their order), in one
    pass over each list instead of a lookup and a removal per given header.

    A request with a body, whose merged headers name none of ``Host``, ``Content-Length``
    and ``Transfer-Encoding``, to a URL with a host (every webhook attempt), is given the
    list httpx's `Request` would make (``Host`` first, the merged headers, then
    ``Content-Length``) and the body as its stream, read: the same request, without
    httpx encoding the body, looking the two headers up and normalizing the list twice
    (about half of this function's time). Any other request is built by httpx itself."""
    given = httpx.Headers(headers).raw
    names = {name.lower() for name, _ in given}
    merged = [(name, value) for name, value in client.headers.raw if name.lower() not in names]
    merged += given
    if body and type(body) is bytes and url.host and not _AUTO_HEADERS.intersection(
            name.lower() for name, _ in merged):
        request = httpx.Request(method, url, headers=[(b"Host", url.netloc), *merged,
                                                      (b"Content-Length", str(len(body)).encode("ascii"))],
                                stream=httpx.ByteStream(body), extensions=extensions)
        request.read()  # `content` is there, as when httpx encodes the body
        return request
    return httpx.Request(method, url, headers=merged, content=body, extensions=extensions)


#: The headers httpx's `Request` adds or leaves out by the body and the URL (lower-case).
_AUTO_HEADERS: frozenset[bytes] = frozenset({b"host", b"content-length", b"transfer-encoding"})
