"""Every sender sends exactly its profile's headers, and none of its HTTP library's own.

A real Stripe delivery carries ``Content-Type: application/json; charset=utf-8``,
``Cache-Control: no-cache``, ``User-Agent: Stripe/1.0 (+https://stripe.com/docs/webhooks)``,
``Accept: */*; q=0.5, application/xml`` and ``Stripe-Signature`` (a receiver's logged WSGI
environ of one), and no ``Accept-Encoding``; GitHub's Hookshot sends ``Accept: */*``
(docs.github.com, "Example webhook delivery"). aiohttp (``Accept``, ``Accept-Encoding``) and
httpx (``Accept``, ``Accept-Encoding``, ``Connection``) add their own unless told not to.
Captured by a real HTTP server on 127.0.0.1: `hookproof send` and the dispatcher (certify,
explore, replay), the dispatcher's byte-synchronised HTTP/1.1 bursts, the httpx client
`make_client` builds, and an in-process app; each request's headers are the profile's, plus
``Host`` and ``Content-Length``, which the transport frames.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hookproof.send import SendOptions, send
from hookproof.simulator.delivery import Dispatcher, History, Target
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import PROFILES, get_profile
from hookproof.simulator.world import emit_events, new_world
from tests.simulator.test_user_agent import Captured, captured, through_a_client_and_an_app  # noqa: F401 (the fixture)

#: The framing headers every transport adds.
FRAMING = {"host", "content-length"}
#: What a real Stripe delivery carries besides its signature, in its order.
STRIPE = [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-cache"),
          ("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"), ("Accept", "*/*; q=0.5, application/xml")]
#: The profiles a burst of the default event can be made for without settings.
NAMES = sorted(set(PROFILES) - {"generic-hmac"})


def _sent(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers of a captured request, without the transport's framing, names lowercased."""
    return [(name.lower(), value) for name, value in headers if name.lower() not in FRAMING]


def _expected(profile: Any, request: Any) -> list[tuple[str, str]]:
    return sorted((name.lower(), value) for name, value in request.headers.items())


def test_stripe_s_request_headers_are_a_real_delivery_s() -> None:
    profile = get_profile("stripe")
    (event,) = emit_events(new_world(profile.world, 3), profile.default_event)
    pairs = profile.request_headers(profile.envelope(event), [profile.generate_secret(3)], 1_790_000_000)
    assert pairs is not None
    assert pairs[:-1] == STRIPE and pairs[-1][0] == "Stripe-Signature"
    assert ("Accept", "*/*") in get_profile("github").envelope(
        emit_events(new_world(get_profile("github").world, 3), get_profile("github").default_event)[0]).headers.items()


@pytest.mark.parametrize("name", NAMES)
def test_send_the_dispatcher_and_a_burst_send_exactly_the_profile_s_headers(captured: tuple[Captured, str],  # noqa: F811
                                                                           name: str) -> None:
    server, url = captured
    profile = get_profile(name)
    secret = profile.generate_secret(5)
    attempts = send(SendOptions(profile=profile, url=url, seed=5), [secret])
    assert [a.status for a in attempts] == [200]
    history = History()
    events = emit_events(new_world(profile.world, 6), profile.default_event)

    async def burst() -> None:
        async with Dispatcher(Target(url=url), profile, [secret], history) as d:
            await d.run(schedule(events, FaultPlan()))  # one attempt, as certify sends it
            await d.run(schedule(events, FaultPlan(copies=2, concurrency=2)), race=True)  # byte-synchronised

    asyncio.run(burst())
    assert len(server.requests) == 4
    for headers in server.requests:
        names = [n for n, _ in _sent(headers)]
        assert "accept-encoding" not in names and "connection" not in names, headers
        assert sorted({n for n, _ in headers if n.lower() in FRAMING}, key=str.lower) == ["Content-Length", "Host"]
    # the headers the profile signs and sends, the signature's value aside (each attempt signs anew)
    envelope = profile.envelope(events[0])
    own = profile.request_headers(envelope, [secret], 1_790_000_000) or list(
        profile.request(envelope, [secret], 1_790_000_000).headers.items())
    expected = sorted(n.lower() for n, _ in own)
    assert [sorted(n for n, _ in _sent(h)) for h in server.requests] == [expected] * 4
    if name == "stripe":
        assert all([(n, v) for n, v in h if n.lower() != "stripe-signature" and n.lower() not in FRAMING] == STRIPE
                   for h in server.requests)


@pytest.mark.parametrize("name", ["stripe", "github"])
def test_an_httpx_client_and_an_in_process_app_get_exactly_the_profile_s_headers(
        captured: tuple[Captured, str], name: str) -> None:  # noqa: F811
    server, url = captured
    request, seen = through_a_client_and_an_app(url, name)
    expected = _expected(get_profile(name), request)
    assert [sorted(_sent(h)) for h in [*server.requests, *seen]] == [expected] * 2


@pytest.mark.parametrize("name", ["stripe", "github"])
def test_a_storm_sender_sends_exactly_the_profile_s_headers(captured: tuple[Captured, str],  # noqa: F811
                                                            name: str) -> None:
    """The storm's senders POST through geventhttpclient's pooled client as `storm_user` takes
    it (its own User-Agent discarded): the profile's headers, and the framing alone."""
    from geventhttpclient.client import HTTPClientPool
    from geventhttpclient.url import URL as GeventURL

    from hookproof.loadtests.exchange import exchange

    server, url = captured
    profile = get_profile(name)
    (event,) = emit_events(new_world(profile.world, 8), profile.default_event)
    request = profile.request(profile.envelope(event), [profile.generate_secret(8)], 1_790_000_000)
    gurl = GeventURL(url)
    client = HTTPClientPool().get_client(gurl)
    client.default_headers.discard("User-Agent")
    try:
        observed = exchange(client, gurl.request_uri, request, read_cap_bytes=1024, timeout_s=5.0)
    finally:
        client.close()
    assert observed is not None and len(server.requests) == 1
    assert sorted(_sent(server.requests[0])) == _expected(profile, request)


@pytest.mark.parametrize("mode", ["h1-last-byte", "h2-single-packet"])
def test_a_burst_sends_exactly_the_profile_s_headers_over_http1_and_h2(mode: str) -> None:
    """A byte-synchronised burst, HTTP/1.1 last-byte and HTTP/2 single-packet (to hypercorn,
    which speaks h2c): each request carries the profile's headers, with ``Host`` (``:authority``
    over HTTP/2) and ``Content-Length`` the race frames."""
    from hookproof.simulator.delivery.race import race
    from hookproof.simulator.delivery.race_io import RaceRequest
    from tests.simulator.test_race import HypercornThread

    seen: list[list[tuple[str, str]]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":  # not the server's readiness probe
            seen.append([(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]])
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    profile = get_profile("stripe")
    (event,) = emit_events(new_world(profile.world, 9), profile.default_event)
    request = profile.request(profile.envelope(event), [profile.generate_secret(9)], 1_790_000_000)
    server = HypercornThread(app).start()
    try:
        burst = [RaceRequest("POST", "/webhooks", dict(request.headers), request.body)] * 2
        answers = asyncio.run(race(server.url + "/webhooks", burst, mode=mode, timeout_s=5.0))  # type: ignore[arg-type]
    finally:
        server.stop()
    assert [a.status for a in answers] == [200, 200]
    assert [sorted(_sent(h)) for h in seen] == [_expected(profile, request)] * 2
