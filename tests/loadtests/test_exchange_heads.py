"""The storm's request heads (`loadtests.exchange.request_head`) are the bytes
geventhttpclient's own `HTTPClient._build_request` writes: for every profile's signed
requests, for hosts and ports that change the ``Host`` line, for headers that replace a
default in another case, and with the same ValueError for a field it refuses.

Pure: builds heads only (no connection is opened; gevent is imported, not patched).
"""

from __future__ import annotations

import itertools

import pytest
from geventhttpclient.client import HTTPClient

from hookproof.loadtests.exchange import request_head
from hookproof.loadtests.stories import StoryBook, template_world
from hookproof.simulator.profiles import PROFILES, get_profile

START_US = 1_790_000_000_000_000
NOW = 1_790_000_123


def _requests(name: str, count: int = 12) -> list:
    profile = get_profile(name)
    book = StoryBook(template_world(profile.world, 7, start_us=START_US), profile,
                     lambda e: profile.provider_type(e.type) is not None, stories=2)
    secret = profile.generate_secret(1)
    return [profile.request(item.envelope, [secret], NOW) for item in itertools.islice(book.stream(), count)
            if item.envelope is not None]


def _clients() -> list[HTTPClient]:
    return [HTTPClient("127.0.0.1", 8080), HTTPClient("localhost", 80), HTTPClient("::1", 9000),
            HTTPClient("127.0.0.1", 8080, headers={"User-Agent": "custom", "X-Team": "a"})]


@pytest.mark.parametrize("name", sorted(n for n in PROFILES if n != "generic-hmac"))
def test_every_profile_request_head_is_the_clients_own(name: str) -> None:
    requests = _requests(name)
    assert requests
    for client in _clients():
        for uri in ("/webhooks", "/hooks/in?source=a%20b"):
            for r in requests:
                want = client._build_request(r.method, uri, body=r.body, headers=r.headers, chunked=False)
                assert request_head(client, r.method, uri, r.headers, r.body) == want


@pytest.mark.parametrize("headers,body,method", [
    ({"user-agent": "lower", "content-type": "a/b"}, b"{}", "POST"),  # replaces the default, in its case
    ({"Host": "example.test", "Content-Length": "2"}, b"{}", "POST"),  # given: not added
    ({}, b"", "POST"),  # no body: Content-Length 0
    ({}, b"", "GET"),  # no body, no Content-Length
    ({"X-A": "1", "x-a": "2"}, b"x", "PUT"),  # the same field twice: the last value, the first's place
    ({"Transfer-Encoding": "chunked"}, b"x", "POST"),  # left to the client
    ({"X-Tab": "a\tb é"}, b"x", "POST"),
    ({"X-%d": "%s 100%", "X-B": "%(x)s"}, b"x", "POST"),  # a "%" in a field or value is written as is
])
def test_edge_heads_are_the_clients_own(headers: dict[str, str], body: bytes, method: str) -> None:
    for client in _clients():
        want = client._build_request(method, "/w", body=body, headers=headers, chunked=False)
        assert request_head(client, method, "/w", headers, body) == want


@pytest.mark.parametrize("headers,uri,method", [
    ({"Bad Name": "x"}, "/w", "POST"),
    ({"X-Bad": "line\r\nInjected: 1"}, "/w", "POST"),
    ({}, "/w x", "POST"),
    ({}, "/w", "PO ST"),
])
def test_refused_heads_raise_as_the_client_does(headers: dict[str, str], uri: str, method: str) -> None:
    client = HTTPClient("127.0.0.1", 8080)
    with pytest.raises(ValueError) as theirs:
        client._build_request(method, uri, body=b"x", headers=headers, chunked=False)
    with pytest.raises(ValueError) as ours:
        request_head(client, method, uri, headers, b"x")
    assert str(ours.value) == str(theirs.value)


def test_a_bad_value_after_good_ones_under_the_same_field_still_raises() -> None:
    """A value is checked again unless it is the very string checked last under its field."""
    client = HTTPClient("127.0.0.1", 8080)
    good = {"X-Sig": "t=1,v1=00"}
    for _ in range(2):  # the same string twice: written as the client writes it
        assert request_head(client, "POST", "/w", good, b"x") == client._build_request(
            "POST", "/w", body=b"x", headers=good, chunked=False)
    with pytest.raises(ValueError, match="invalid value for header field 'X-Sig'"):
        request_head(client, "POST", "/w", {"X-Sig": "t=1\r\nInjected: 1"}, b"x")
    assert request_head(client, "POST", "/w", good, b"x") == client._build_request(
        "POST", "/w", body=b"x", headers=good, chunked=False)
