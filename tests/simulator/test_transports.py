"""`simulator.delivery.transports`: the one check of a receiver URL (`url_problem`, `Target`), and
the request an in-process app is handed (`in_process_request`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from hookproof.simulator.delivery import Target, url_problem
from hookproof.simulator.delivery.transports import in_process_request, in_process_transport, make_client
from hookproof.simulator.errors import TargetError
from tests.support import read_body


@pytest.mark.parametrize("url, problem", [
    ("http://127.0.0.1:8000/webhooks", None),
    ("https://hooks.example.com/w", None),
    ("http://[::1]:8080/w", None),
    ("http://user:pw@127.0.0.1:65535/w", None),
    ("http://127.0.0.1:abc/w", "the port in 'http://127.0.0.1:abc/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:0/w", "the port in 'http://127.0.0.1:0/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:99999/w", "the port in 'http://127.0.0.1:99999/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:-1/w", "the port in 'http://127.0.0.1:-1/w' is not a number from 1 to 65535"),
    ("http://h:80:90/w", "the port in 'http://h:80:90/w' is not a number from 1 to 65535"),
    ("ftp://h/w", "must be an absolute http(s) URL, got 'ftp://h/w'"),
    ("http:/h/w", "must be an absolute http(s) URL, got 'http:/h/w'"),
    ("http://user@/w", "must be an absolute http(s) URL, got 'http://user@/w'"),
    ("http://[::1/w", "must be an absolute http(s) URL, got 'http://[::1/w'"),
    ("http://exa mple.com/w", "the host part of 'http://exa mple.com/w' has a blank or a control character"),
])
def test_url_problem_says_what_is_wrong(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


@pytest.mark.parametrize("url", ["http://127.0.0.1:abc/w", "http://127.0.0.1:0/w", "http://127.0.0.1:99999/w"])
def test_a_target_refuses_a_url_httpx_could_not_send_to(url: str) -> None:
    with pytest.raises(TargetError, match="port"):
        Target(url=url)


def test_an_in_process_app_is_handed_the_request_the_client_would_send() -> None:
    """Through the client's send path and through the transport directly, the app sees the
    same method, path, query, headers (names, values, order) and body."""
    seen: list[tuple[Any, ...]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_body(receive)
        seen.append((scope["method"], scope["path"], scope["query_string"], list(scope["headers"]), body))
        await send({"type": "http.response.start", "status": 201, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"made"})

    target = Target(app=app)
    headers = {"Content-Type": "application/json", "User-Agent": "Stripe/1.0", "Stripe-Signature": "t=1,v1=ab"}
    body = b'{"id": "evt_1"}'

    async def both() -> list[bytes]:
        transport = in_process_transport(app)
        client = make_client(target, transport=transport)
        answers = []
        async with client.stream("POST", target.endpoint, params={"a": "1"}, headers=headers, content=body) as r:
            answers.append(await r.aread())
        url = httpx.URL(target.endpoint).copy_merge_params({"a": "1"})
        response = await transport.handle_async_request(in_process_request(client, "POST", url, headers, body, {}))
        answers.append(await response.aread())
        assert response.status_code == 201
        await client.aclose()
        return answers

    assert asyncio.run(both()) == [b"made", b"made"]
    assert len(seen) == 2 and seen[0] == seen[1]
    names = [name for name, _ in seen[0][3]]
    # the request's own headers and the framing, none of httpx's defaults (Accept, Accept-Encoding, Connection)
    assert names[0] == b"host" and b"content-length" in names
    assert {b"accept", b"accept-encoding", b"connection"}.isdisjoint(names)


@pytest.mark.parametrize("headers", [
    {"Content-Type": "application/json", "User-Agent": "Stripe/1.0", "Stripe-Signature": "t=1,v1=ab"},
    {"user-agent": "GitHub-Hookshot/abc", "ACCEPT": "*/*; q=0.5", "X-GitHub-Event": "push"},
    {"Accept-Encoding": "identity", "Connection": "close", "X-Shopify-Hmac-Sha256": "abc="},
    {},
])
def test_the_in_process_request_merges_headers_as_httpx_does(headers: dict[str, str]) -> None:
    """Defaults the request names (in any case) are dropped, the request's follow in order:
    exactly the headers ``Headers.update`` gives, Host and Content-Length as httpx adds them."""
    client = make_client(Target(app=lambda scope, receive, send: None))
    url = httpx.URL("http://hookproof.invalid/webhooks")
    expected = httpx.Headers(client.headers)
    expected.update(headers)
    want = httpx.Request("POST", url, headers=expected, content=b"{}")
    got = in_process_request(client, "POST", url, headers, b"{}", {})
    assert got.headers.raw == want.headers.raw
    assert [name for name, _ in got.headers.raw][0] == b"Host"


@pytest.mark.parametrize("body", [b'{"id": "evt_1"}', b""])
@pytest.mark.parametrize("headers", [
    {"Content-Type": "application/json", "User-Agent": "Stripe/1.0", "Stripe-Signature": "t=1,v1=ab"},
    {"Host": "other.test", "X-Event": "push"},
    {"content-length": "99", "X-Event": "push"},
    {"Transfer-Encoding": "chunked"},
    {},
])
@pytest.mark.parametrize("query", [None, {"a": "1"}])
def test_the_in_process_request_is_the_one_httpx_builds(headers: dict[str, str], body: bytes,
                                                        query: dict[str, str] | None) -> None:
    """Method, URL, headers (names, values, order), body, stream and extensions are those of
    the request httpx builds from the merged headers and the body, with a body or without,
    whether the request names Host, Content-Length or Transfer-Encoding or not."""
    client = make_client(Target(app=lambda scope, receive, send: None))
    url = httpx.URL("http://hookproof.invalid/webhooks")
    url = url.copy_merge_params(query) if query else url
    expected = httpx.Headers(client.headers)
    expected.update(headers)
    want = httpx.Request("POST", url, headers=expected, content=body, extensions={"trace": None})
    got = in_process_request(client, "POST", url, headers, body, {"trace": None})
    assert (got.method, got.url, got.headers.raw, got.content, got.extensions) == \
        (want.method, want.url, want.headers.raw, want.content, want.extensions)
    assert b"".join(got.stream) == b"".join(want.stream) == body  # type: ignore[arg-type]
    assert isinstance(got.stream, httpx.AsyncByteStream) and isinstance(got.stream, httpx.SyncByteStream)
